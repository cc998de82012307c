import DisplayText
import TerminalKit

/// The REPL pane: the output's last lines, each wrapped to the pane (a long refusal or conflict
/// message is read whole; a line past ``lineRows`` rows ends in `…`), scrolled back by `scroll`
/// lines, and the input line under them with the cursor kept in view.
struct ReplPane: CursorWidget {
    let title: String
    let output: [String]
    /// How many lines the output is scrolled back; 0 follows the end.
    let scroll: Int
    let prompt: String
    let input: [Character]
    let cursor: Int
    /// The style of each input character (a statement's syntax).
    let styles: [Style]
    let focused: Bool
    let theme: Theme

    /// The most rows one line of output wraps to.
    static let lineRows = 8

    /// Draws the pane; returns where the terminal's cursor goes (in the input line).
    func draw(_ area: Rect, _ buffer: inout Buffer) -> (x: Int, y: Int)? {
        theme.paneBlock(title, focused: focused).render(area, &buffer)
        let inner = Block.inner(area)
        guard inner.height >= 1 else { return nil }
        drawOutput(area, inner, &buffer)
        let y = inner.maxY - 1
        buffer.put(prompt, x: inner.x, y: y, style: theme.dim)
        let start = inputStart(width: inner.width - DisplayText.width(of: prompt) - 1)
        var x = inner.x + DisplayText.width(of: prompt)
        var cursorX = x
        for (i, ch) in input.enumerated().dropFirst(start) {
            if i == cursor { cursorX = x }
            if x + DisplayText.width(of: ch) > inner.maxX { break }
            x += buffer.put(String(ch), x: x, y: y, style: i < styles.count ? styles[i] : .plain)
        }
        if cursor >= input.count { cursorX = x }
        return (min(cursorX, inner.maxX - 1), y)
    }

    /// The output's rows above the input line, and the scroll marker on the bottom border.
    private func drawOutput(_ area: Rect, _ inner: Rect, _ buffer: inout Buffer) {
        let height = inner.height - 1
        let scroll = min(self.scroll, max(0, output.count - height))
        var rows: [(text: String, isError: Bool)] = []
        var linesShown = 0
        let shown = output.dropLast(scroll)
        // Scrolled back all the way, the pane shows the first lines from the top.
        let fromTop = scroll > 0 && scroll >= output.count - height
        for line in fromTop ? Array(shown) : shown.reversed() where rows.count < height {
            let isError = line.hasPrefix("error:") || line.contains("^")
            let wrapped = DisplayText.wrap(line, width: inner.width, maxRows: Self.lineRows, atWords: true).map { (text: $0, isError: isError) }
            if fromTop { rows += wrapped } else { rows.insert(contentsOf: wrapped, at: 0) }
            linesShown += 1
        }
        rows = fromTop ? Array(rows.prefix(height)) : Array(rows.suffix(height))
        if scroll > 0 {
            buffer.put(" ↑ \(fromTop ? 0 : output.count - linesShown - scroll) more · ↓ \(scroll) more (PgUp/PgDn) ", x: area.x + 2, y: area.maxY - 1,
                       style: theme.header, maxWidth: max(0, area.width - 4))
        }
        for (i, row) in rows.enumerated() {
            buffer.put(row.text, x: inner.x, y: inner.y + i, style: row.isError ? theme.error : .plain, maxWidth: inner.width)
        }
    }

    /// The first input character shown: back from the cursor while it fits in `available`
    /// cells (linear in what is shown, whatever the line's length).
    private func inputStart(width available: Int) -> Int {
        var start = cursor, used = 0
        while start > 0 {
            let w = DisplayText.width(of: String(input[start - 1]))
            if used + w > available { break }
            used += w
            start -= 1
        }
        return start
    }
}
