import DisplayText
import TerminalKit

/// The records pane: the current sheet's rows as a table, or the load's progress before there
/// are any. Everything it shows — which columns fit, each cell's text and style, the row
/// markers — is decided before the frame (`Browser+RecordsFrame.swift`); it only places them.
struct RecordsPane: Widget {
    enum Content {
        /// Nothing to show yet; with the load's progress when it is known.
        case loading((done: Int, total: Int)?)
        case table(Table)
    }

    /// The visible part of a sheet.
    struct Table {
        struct Column { let header: String; let width: Int; let isCurrent: Bool }
        struct Cell { let text: String; let style: Style }
        struct Row {
            let selected: Bool
            /// `+ ~ -` for pending edits, `+ ~` for another process's last commit, with its style.
            let marker: (text: String, style: Style)?
            let cells: [Cell]
        }
        let columns: [Column]
        /// Cells before the first column, for the row markers (0 or 2).
        let markerWidth: Int
        /// Where the `<` of columns scrolled off to the left goes (nil when none are).
        let moreLeftX: Int?
        let moreRight: Bool
        let rows: [Row]
        let isEmpty: Bool
    }

    let title: String
    let content: Content
    let focused: Bool
    let theme: Theme

    /// The area of the rows of a table in `area` (the pane less its border and header).
    static func body(of area: Rect) -> Rect {
        let inner = Block.inner(area)
        return Rect(x: inner.x, y: inner.y + 1, width: inner.width, height: max(0, inner.height - 1))
    }

    func render(_ area: Rect, _ buffer: inout Buffer) {
        theme.paneBlock(title, focused: focused).render(area, &buffer)
        let inner = Block.inner(area)
        switch content {
        case .loading(let progress):
            guard let (done, total) = progress else { return }
            let fraction = total > 0 ? Double(done) / Double(total) : 0
            buffer.put("Loading \(done) of \(total) objects…", x: inner.x + 1, y: inner.y + 1, maxWidth: inner.width - 2)
            buffer.put(progressBar(fraction, width: inner.width - 2), x: inner.x + 1, y: inner.y + 2, style: theme.header, maxWidth: inner.width - 2)
        case .table(let table):
            guard inner.height >= 2, inner.width >= 4 else { return }
            draw(table, inner, &buffer)
        }
    }

    private func draw(_ table: Table, _ inner: Rect, _ buffer: inout Buffer) {
        var x = inner.x + table.markerWidth
        for column in table.columns {
            var style = theme.header
            if column.isCurrent { style.underline = true }
            buffer.put(DisplayText.pad(column.header, to: column.width), x: x, y: inner.y, style: style, maxWidth: column.width)
            x += column.width + 1
        }
        if let moreLeftX = table.moreLeftX { buffer.put("<", x: moreLeftX, y: inner.y, style: theme.dim) }
        if table.moreRight { buffer.put(">", x: inner.maxX - 1, y: inner.y, style: theme.dim) }
        for (i, row) in table.rows.enumerated() {
            let y = inner.y + 1 + i
            if row.selected { buffer.fill(Rect(x: inner.x, y: y, width: inner.width, height: 1), style: focused ? theme.selection : theme.selectionUnfocused) }
            if let marker = row.marker { buffer.put(marker.text, x: inner.x, y: y, style: row.selected ? theme.selection : marker.style) }
            x = inner.x + table.markerWidth
            for (cell, column) in zip(row.cells, table.columns) {
                buffer.put(cell.text, x: x, y: y, style: cell.style, maxWidth: column.width)
                x += column.width + 1
            }
        }
        if table.isEmpty { buffer.put("(no objects)", x: inner.x + 1, y: inner.y + 1, style: theme.dim) }
    }
}
