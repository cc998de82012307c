/// A terminal colour: the terminal's default, one of the eight ANSI colours (bright variants
/// included), or an entry of the 256-colour palette.
public enum Color: Hashable, Sendable {
    case `default`
    case black, red, green, yellow, blue, magenta, cyan, white
    case brightBlack, brightRed, brightGreen, brightYellow, brightBlue, brightMagenta, brightCyan, brightWhite
    case indexed(UInt8)

    /// The palette index (0–255), nil for the default colour.
    public var index: Int? {
        switch self {
        case .default: return nil
        case .black: return 0
        case .red: return 1
        case .green: return 2
        case .yellow: return 3
        case .blue: return 4
        case .magenta: return 5
        case .cyan: return 6
        case .white: return 7
        case .brightBlack: return 8
        case .brightRed: return 9
        case .brightGreen: return 10
        case .brightYellow: return 11
        case .brightBlue: return 12
        case .brightMagenta: return 13
        case .brightCyan: return 14
        case .brightWhite: return 15
        case .indexed(let i): return Int(i)
        }
    }
}

/// How a cell looks: colours and attributes.
public struct Style: Hashable, Sendable {
    public var foreground: Color
    public var background: Color
    public var bold: Bool
    public var underline: Bool
    public var reverse: Bool
    public var dim: Bool

    public init(foreground: Color = .default, background: Color = .default, bold: Bool = false,
                underline: Bool = false, reverse: Bool = false, dim: Bool = false) {
        self.foreground = foreground
        self.background = background
        self.bold = bold
        self.underline = underline
        self.reverse = reverse
        self.dim = dim
    }

    public static let plain = Style()
}

/// One screen cell: the text it shows (one grapheme, or empty when it continues a wide one to its
/// left) and its style.
public struct Cell: Hashable, Sendable {
    public var text: String
    public var style: Style
    public init(_ text: String = " ", style: Style = .plain) {
        self.text = text
        self.style = style
    }
    /// True for the right half of a double-width character.
    public var isContinuation: Bool { text.isEmpty }
}

/// A rectangle of cells.
public struct Rect: Hashable, Sendable {
    public var x: Int, y: Int, width: Int, height: Int
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = max(0, width)
        self.height = max(0, height)
    }
    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var isEmpty: Bool { width == 0 || height == 0 }
    /// The rectangle less `n` cells on every side.
    public func inset(_ n: Int) -> Rect { Rect(x: x + n, y: y + n, width: width - 2 * n, height: height - 2 * n) }
}

/// An in-memory screen. Widgets draw here and never touch the terminal; the ``Terminal`` sends
/// only the cells that changed since the last frame to its ``Backend``.
public struct Buffer: Equatable, Sendable {
    public private(set) var width: Int
    public private(set) var height: Int
    public private(set) var cells: [Cell]

    public init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        cells = Array(repeating: Cell(), count: self.width * self.height)
    }

    public var area: Rect { Rect(x: 0, y: 0, width: width, height: height) }

    public subscript(x: Int, y: Int) -> Cell {
        get { cells[y * width + x] }
        set { if x >= 0, y >= 0, x < width, y < height { cells[y * width + x] = newValue } }
    }

    /// Fills a rectangle with blanks in `style`.
    public mutating func fill(_ rect: Rect, style: Style = .plain) {
        for y in max(0, rect.y)..<min(height, rect.maxY) {
            for x in max(0, rect.x)..<min(width, rect.maxX) { cells[y * width + x] = Cell(" ", style: style) }
        }
    }

    /// Writes text from (x, y), clipped to `maxWidth` cells and to the buffer; returns the cells
    /// used. Control characters are written as visible escapes, never as they are; a wide
    /// character that does not fit is replaced by a space.
    @discardableResult
    public mutating func put(_ text: String, x: Int, y: Int, style: Style = .plain, maxWidth: Int? = nil) -> Int {
        guard y >= 0, y < height else { return 0 }
        let limit = min(maxWidth ?? Int.max, width - x)
        guard limit > 0 else { return 0 }
        var used = 0
        for ch in TextWidth.visible(text) {
            let w = TextWidth.of(ch)
            if w == 0 {
                // A combining mark joins the character before it.
                if used > 0, x + used - 1 >= 0 {
                    var i = x + used - 1
                    while i > x, cells[y * width + i].isContinuation { i -= 1 }
                    cells[y * width + i].text += String(ch)
                }
                continue
            }
            if used + w > limit {
                if used < limit { self[x + used, y] = Cell(" ", style: style); used += 1 }
                break
            }
            if x + used >= 0 { self[x + used, y] = Cell(String(ch), style: style) }
            if w == 2 { self[x + used + 1, y] = Cell("", style: style) }
            used += w
        }
        return used
    }

    /// Applies `style` to every cell of a rectangle, keeping the text.
    public mutating func setStyle(_ rect: Rect, _ transform: (inout Style) -> Void) {
        for y in max(0, rect.y)..<min(height, rect.maxY) {
            for x in max(0, rect.x)..<min(width, rect.maxX) { transform(&cells[y * width + x].style) }
        }
    }

    /// The screen as lines of text (trailing spaces removed): what tests compare.
    public var lines: [String] {
        (0..<height).map { y in
            var line = ""
            for x in 0..<width { line += cells[y * width + x].text }
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
    }

    /// The screen as one text, lines joined by newlines.
    public var text: String { lines.joined(separator: "\n") }

    /// The cells that differ from `previous` (all of them when the sizes differ).
    public func changes(since previous: Buffer?) -> [(x: Int, y: Int, cell: Cell)] {
        var out: [(Int, Int, Cell)] = []
        let full = previous == nil || previous!.width != width || previous!.height != height
        for y in 0..<height {
            for x in 0..<width {
                let cell = cells[y * width + x]
                if full || previous!.cells[y * width + x] != cell { out.append((x, y, cell)) }
            }
        }
        return out
    }
}

/// Display width in terminal cells: East Asian wide and emoji characters take 2, combining marks
/// and zero-width characters 0, everything else 1.
public enum TextWidth {
    /// The width of one character (grapheme).
    public static func of(_ ch: Character) -> Int {
        let scalars = ch.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if scalars.contains(where: { $0.value == 0xFE0F }) { return 2 }   // emoji presentation selector
        return of(first)
    }

    /// The width of one scalar.
    public static func of(_ u: Unicode.Scalar) -> Int {
        let v = u.value
        if v == 0 { return 0 }
        switch u.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if (0x1100...0x115F).contains(v) || (0x2E80...0x303E).contains(v) || (0x3041...0x33FF).contains(v)
            || (0x3400...0x4DBF).contains(v) || (0x4E00...0x9FFF).contains(v) || (0xA000...0xA4CF).contains(v)
            || (0xAC00...0xD7A3).contains(v) || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v)
            || (0xFF00...0xFF60).contains(v) || (0xFFE0...0xFFE6).contains(v) || (0x20000...0x3FFFD).contains(v) {
            return 2
        }
        if u.properties.isEmojiPresentation { return 2 }
        return 1
    }

    /// The width of a text as it would be drawn (escapes included).
    public static func of(_ s: String) -> Int { visible(s).reduce(0) { $0 + of($1) } }

    /// The text with every control character (C0, C1, DEL, line and paragraph separators) shown as
    /// an escape: data is data, never a terminal command.
    public static func visible(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: isControl) else { return s }
        var out = String.UnicodeScalarView()
        for u in s.unicodeScalars {
            if isControl(u) {
                let escape: String
                switch u {
                case "\n": escape = "\\n"
                case "\t": escape = "\\t"
                case "\r": escape = "\\r"
                default: escape = "\\u{" + String(u.value, radix: 16, uppercase: true) + "}"
                }
                out.append(contentsOf: escape.unicodeScalars)
            } else {
                out.append(u)
            }
        }
        return String(out)
    }

    static func isControl(_ u: Unicode.Scalar) -> Bool {
        u.value < 0x20 || (u.value >= 0x7F && u.value < 0xA0) || u.value == 0x2028 || u.value == 0x2029
    }

    /// The text cut to at most `width` cells, with `…` when cut.
    public static func truncate(_ s: String, to width: Int) -> String {
        let text = visible(s)
        guard of(text) > width else { return text }
        guard width > 0 else { return "" }
        var out = ""
        var used = 0
        for ch in text {
            let w = of(ch)
            if used + w > width - 1 { break }
            out.append(ch)
            used += w
        }
        return out + "…"
    }

    /// The text padded with spaces (or cut) to exactly `width` cells.
    public static func pad(_ s: String, to width: Int) -> String {
        let t = truncate(s, to: width)
        return t + String(repeating: " ", count: max(0, width - of(t)))
    }
}
