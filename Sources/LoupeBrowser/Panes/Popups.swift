import DisplayText
import TerminalKit

/// The key help over the screen (`?`), scrolled by `top`.
struct HelpPopup: Widget {
    let lines: [String]
    let top: Int
    let theme: Theme

    /// Where it goes on a screen of `screen`'s size.
    static func area(lines: [String], in screen: Rect) -> Rect {
        let w = min(screen.width - 4, (lines.map { DisplayText.width(of: $0) }.max() ?? 40) + 4)
        return screen.centered(width: w, height: min(screen.height - 2, wrapped(lines, width: w - 3).count + 2))
    }

    /// The first line shown: `top` within what scrolling the lines on this screen allows.
    static func top(_ top: Int, lines: [String], in screen: Rect) -> Int {
        let area = area(lines: lines, in: screen)
        return max(0, min(top, wrapped(lines, width: area.width - 3).count - (area.height - 2)))
    }

    /// The lines as shown in `width` cells: one too long goes on below, broken between words —
    /// a key's summary under the summary's column (``KeyMap/helpSummaryColumn``).
    static func wrapped(_ lines: [String], width: Int) -> [String] {
        let indent = KeyMap.helpSummaryColumn
        return lines.flatMap { line -> [String] in
            guard width > 1, DisplayText.width(of: line) > width else { return [line] }
            let isKeyLine = Command(rawValue: String(line.dropFirst(16).prefix(indent - 16)).trimmingCharacters(in: .whitespaces)) != nil
            guard isKeyLine, width - indent >= 12 else { return DisplayText.wrap(line, width: width, maxRows: 50, atWords: true) }
            let rows = DisplayText.wrap(String(line.dropFirst(indent)), width: width - indent, maxRows: 50, atWords: true)
            return rows.enumerated().map { i, row in (i == 0 ? String(line.prefix(indent)) : String(repeating: " ", count: indent)) + row }
        }
    }

    func render(_ screen: Rect, _ buffer: inout Buffer) {
        let area = Self.area(lines: lines, in: screen)
        buffer.fill(area)
        let shown = area.height - 2
        let rows = Self.wrapped(lines, width: area.width - 3)
        let title = rows.count > shown ? "Help \(top + 1)–\(min(rows.count, top + shown)) of \(rows.count) — j/k PgUp/PgDn scroll, any other key closes"
                                       : "Help — any key closes"
        theme.popupBlock(title).render(area, &buffer)
        let inner = Block.inner(area)
        for (i, line) in rows.dropFirst(top).prefix(inner.height).enumerated() {
            buffer.put(" " + line, x: inner.x, y: inner.y + i, maxWidth: inner.width)
        }
    }
}

/// The relation picker: a filter line and the candidates, current targets marked `✓`.
struct PickerPopup: Widget {
    let title: String
    let filter: String
    /// The candidates on screen, each as shown (its mark included).
    let rows: [String]
    /// Which of `rows` is selected, if one of them is.
    let selectedRow: Int?
    /// True when no candidate matches the filter.
    let isEmpty: Bool
    let theme: Theme

    /// Where it goes on a screen of `screen`'s size, and the rows of its candidates.
    static func area(in screen: Rect) -> (area: Rect, body: Rect) {
        let area = screen.centered(width: min(screen.width - 4, 70), height: min(screen.height - 2, 24))
        let inner = Block.inner(area)
        return (area, Rect(x: inner.x, y: inner.y + 1, width: inner.width, height: max(0, inner.height - 1)))
    }

    func render(_ screen: Rect, _ buffer: inout Buffer) {
        let (area, body) = Self.area(in: screen)
        buffer.fill(area)
        theme.popupBlock(title).render(area, &buffer)
        let inner = Block.inner(area)
        guard inner.height >= 2 else { return }
        buffer.put("filter: " + filter, x: inner.x, y: inner.y, style: theme.dim, maxWidth: inner.width)
        for (i, text) in rows.prefix(body.height).enumerated() {
            let style = i == selectedRow ? theme.selection : Style.plain
            if i == selectedRow { buffer.fill(Rect(x: body.x, y: body.y + i, width: body.width, height: 1), style: style) }
            buffer.put(DisplayText.fit(text, width: body.width), x: body.x, y: body.y + i, style: style, maxWidth: body.width)
        }
        if isEmpty { buffer.put("no object matches", x: body.x, y: body.y, style: theme.dim) }
    }
}

/// A dialog (commit preview, quit guard, conflicts): its text, scrolled by line (a long line
/// wraps, up to 8 rows), and its choices on the last line. Only the lines on screen are
/// measured: a preview may hold 250k rows.
struct DialogPopup: Widget {
    let dialog: Browser.Dialog
    let theme: Theme

    func render(_ screen: Rect, _ buffer: inout Buffer) {
        let maxHeight = screen.height - 2
        let visible = dialog.lines.dropFirst(dialog.top).prefix(max(1, maxHeight))
        // As wide as its widest line or its title (the quit guard's title is the pending summary).
        let widest = max(visible.map { DisplayText.width(of: DisplayText.fit($0, width: 200)) }.max() ?? 40,
                         DisplayText.width(of: DisplayText.fit(dialog.title, width: 200)) + 4)
        let w = min(screen.width - 2, max(50, min(116, widest + 2)))
        var rows: [String] = []
        for line in visible {
            rows += DisplayText.wrap(line, width: w - 2, maxRows: 8, atWords: true)
            if rows.count >= maxHeight { break }
        }
        let area = screen.centered(width: w, height: min(maxHeight, max(dialog.lines.count, rows.count) + 3))
        buffer.fill(area)
        theme.popupBlock(dialog.title).render(area, &buffer)
        let inner = Block.inner(area)
        guard inner.height >= 2 else { return }
        for (i, row) in rows.prefix(inner.height - 1).enumerated() {
            buffer.put(row, x: inner.x, y: inner.y + i, maxWidth: inner.width)
        }
        buffer.put(DisplayText.fit(dialog.choices, width: inner.width), x: inner.x, y: inner.maxY - 1, style: theme.header, maxWidth: inner.width)
    }
}
