import DisplayText

/// Something drawn into an area of a buffer from the value it is: a widget holds what it shows
/// (computed before the frame), reads nothing else and changes nothing but the buffer, so a
/// screen is a function of the values its widgets were made from.
public protocol Widget {
    /// Draws into `area` of `buffer`.
    func render(_ area: Rect, _ buffer: inout Buffer)
}

/// A widget with a text field in it: drawing it also says where the terminal's cursor goes.
public protocol CursorWidget: Widget {
    /// Draws into `area` of `buffer`; returns where the cursor goes, if anywhere.
    func draw(_ area: Rect, _ buffer: inout Buffer) -> (x: Int, y: Int)?
}

extension CursorWidget {
    public func render(_ area: Rect, _ buffer: inout Buffer) { _ = draw(area, &buffer) }
}

/// A bordered box with a title over its top border; what is inside is left as it is.
public struct Block: Widget, Sendable {
    public var title: String
    public var style: Style
    public var titleStyle: Style

    public init(title: String, style: Style = .plain, titleStyle: Style = Style(bold: true)) {
        self.title = title
        self.style = style
        self.titleStyle = titleStyle
    }

    public func render(_ area: Rect, _ buffer: inout Buffer) {
        guard area.width >= 2, area.height >= 2 else { return }
        buffer.put(Border.topLeft + String(repeating: Border.horizontal, count: area.width - 2) + Border.topRight, x: area.x, y: area.y, style: style)
        for y in (area.y + 1)..<(area.maxY - 1) {
            buffer.put(Border.vertical, x: area.x, y: y, style: style)
            buffer.put(Border.vertical, x: area.maxX - 1, y: y, style: style)
        }
        buffer.put(Border.bottomLeft + String(repeating: Border.horizontal, count: area.width - 2) + Border.bottomRight, x: area.x, y: area.maxY - 1, style: style)
        // A title too long for the border ends in `…`, never cut without a sign.
        if !title.isEmpty, area.width > 4 {
            buffer.put(" " + DisplayText.fit(title, width: area.width - 4) + " ", x: area.x + 1, y: area.y, style: titleStyle, maxWidth: area.width - 2)
        }
    }

    /// The area inside the border.
    public static func inner(_ area: Rect) -> Rect {
        area.width >= 2 && area.height >= 2 ? area.inset(1) : Rect(x: area.x, y: area.y, width: 0, height: 0)
    }
}

extension Rect {
    /// A `width` × `height` rectangle centred in this one.
    public func centered(width: Int, height: Int) -> Rect {
        Rect(x: x + (self.width - width) / 2, y: y + (self.height - height) / 2, width: width, height: height)
    }
}

/// Which line of a list shows first so that a selected line stays in view.
public enum ScrollWindow {
    /// The first line shown: `top` moved as little as needed for `selection` to be among the
    /// `height` lines shown, and no further down than a full last page of `count` lines allows.
    public static func top(_ top: Int, keeping selection: Int?, height: Int, count: Int) -> Int {
        guard height > 0 else { return 0 }
        var top = top
        if let selection {
            if selection < top { top = selection }
            if selection >= top + height { top = selection - height + 1 }
        }
        return max(0, min(top, max(0, count - height)))
    }
}
