import DisplayText

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
    /// used. Text is escaped and measured by ``DisplayText`` (control and format characters shown
    /// as escapes, never as they are); a wide character that does not fit is replaced by a space.
    @discardableResult
    public mutating func put(_ text: String, x: Int, y: Int, style: Style = .plain, maxWidth: Int? = nil) -> Int {
        guard y >= 0, y < height else { return 0 }
        let limit = min(maxWidth ?? Int.max, width - x)
        guard limit > 0 else { return 0 }
        var used = 0
        // DisplayText escapes what must not reach the terminal and stops once the row is full.
        DisplayText.forEachCell(text, limit: Int.max) { ch, w in
            if used + w > limit {
                if used < limit { self[x + used, y] = Cell(" ", style: style); used += 1 }
                return false
            }
            if x + used >= 0 { self[x + used, y] = Cell(String(ch), style: style) }
            if w == 2 { self[x + used + 1, y] = Cell("", style: style) }
            used += w
            return true
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
