import DisplayText
import TerminalKit

/// The detail pane: the selected object's attributes, then its relations and backlinks, one
/// line each; the selected item highlighted while the pane has the focus.
struct DetailPane: Widget {
    struct Line {
        let text: String
        let style: Style
        /// The item the line selects (an attribute, relation or backlink), nil for a heading.
        let item: Int?
    }
    let title: String
    let lines: [Line]
    let selection: Int
    /// The first line shown (``ScrollWindow``).
    let top: Int
    let focused: Bool
    let theme: Theme

    func render(_ area: Rect, _ buffer: inout Buffer) {
        theme.paneBlock(title, focused: focused).render(area, &buffer)
        let inner = Block.inner(area)
        guard inner.height > 0, inner.width > 4 else { return }
        for (i, line) in lines.enumerated().dropFirst(top).prefix(inner.height) {
            let y = inner.y + i - top
            var style = line.style
            if let item = line.item, item == selection, focused {
                style = theme.selection
                buffer.fill(Rect(x: inner.x, y: y, width: inner.width, height: 1), style: style)
            }
            buffer.put(DisplayText.fit(line.text, width: inner.width), x: inner.x, y: y, style: style, maxWidth: inner.width)
        }
    }

    /// The line showing `item`, to keep in view.
    static func line(of item: Int, in lines: [Line]) -> Int? { lines.firstIndex { $0.item == item } }
}
