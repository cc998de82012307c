import DisplayText
import Foundation
import LoupeModel
import LoupeQuery
import TerminalKit

/// The records pane's content: which of the sheet's columns fit and how wide, and each visible
/// row's cells and markers, from the sheet (paged mode's window read before the frame).
extension Browser {
    func recordsPane(_ area: Rect) -> RecordsPane {
        guard let graph, var sheet = current else {
            return RecordsPane(title: "Records", content: .loading(progress), focused: focus == .records, theme: theme)
        }
        let whole = pendingTypes.first.map(\.count) ?? -1
        let title = isPreview ? "\(DisplayText.fit(sheet.crumb, width: max(8, area.width - 34))) (first \(sheet.count)\(whole > sheet.count ? " of \(whole)" : ""), loading)"
            : "\(DisplayText.fit(sheet.crumb, width: max(8, area.width - 20))) (\(sheet.isCounted ? countText(sheet, graph: graph) : "counting…"))"
        let body = RecordsPane.body(of: area)
        guard body.height >= 1, body.width >= 4 else {
            return RecordsPane(title: title, content: .loading(nil), focused: focus == .records, theme: theme)
        }
        sheet.clamp(height: body.height)
        let table = recordsTable(&sheet, graph: graph, body: body)
        stack[stack.count - 1] = sheet
        return RecordsPane(title: title, content: .table(table), focused: focus == .records, theme: theme)
    }

    /// A sheet's count for its title: a whole type's as the types pane counts it, with the rows
    /// marked for deletion said apart (`749 + 1 to delete`).
    private func countText(_ sheet: Sheet, graph: ObjectGraph) -> String {
        guard pages == nil, sheet.showsWholeType, case .objects(let type?, _) = sheet.content,
              let table = graph.type(named: type.name.rawValue), table.liveCount < sheet.count else { return String(sheet.count) }
        return "\(table.liveCount) + \(sheet.count - table.liveCount) to delete"
    }

    /// The visible part of `sheet` in `body`: the columns that fit (scrolled sideways until the
    /// current one shows, an object's key column kept on the left), then the rows.
    private func recordsTable(_ sheet: inout Sheet, graph: ObjectGraph, body: Rect) -> RecordsPane.Table {
        let columns = sheet.columns(graph: graph)
        let visibleRows = Array(sheet.top..<min(sheet.count, sheet.top + body.height))
        rowsReadLastFrame = visibleRows.count
        // With pending changes, each row starts with a marker readable without colour:
        // `+` added, `~` changed, `-` marked for deletion; so does it while another process's
        // last commit is marked (`+ ~`, and `−` for its deleted rows).
        let changes = shownChanges
        let ghosts = shownGhosts.filter { $0.position >= sheet.top && $0.position <= sheet.top + visibleRows.count }
        let markerWidth = changes == nil && ghosts.isEmpty && live?.isMarking != true ? 0 : 2
        let fit = ColumnFit(sheet: sheet, columns: columns, rows: visibleRows, graph: graph, width: body.width, markerWidth: markerWidth, browser: self)
        let (shown, frozen) = fit.columnsShown(&sheet)
        let headers = shown.map { RecordsPane.Table.Column(header: fit.header($0.column), width: $0.width, isCurrent: $0.column == sheet.column) }
        // More columns to the left: `<` before the first scrolled one (after the fixed key column).
        let moreLeftX = sheet.firstColumn > (frozen == nil ? 0 : 1) ? (frozen.map { body.x + markerWidth + $0.width } ?? body.x) : nil
        let moreRight = shown.last.map { $0.column < columns.count - 1 } ?? false
        var rows = visibleRows.map { recordsRow($0, sheet: sheet, columns: columns, shown: shown, fit: fit, changes: changes, graph: graph) }
        // Rows another process just deleted, where they were (later ones first: positions hold).
        for ghost in ghosts.reversed() {
            let cells = shown.map { c, cw in
                RecordsPane.Table.Cell(text: DisplayText.pad(DisplayText.fit(cellText(ghost.cells[columns[c]] ?? .null), width: cw), to: cw), style: theme.liveDeleted)
            }
            rows.insert(RecordsPane.Table.Row(selected: false, marker: ("−", theme.liveDeleted), cells: cells), at: ghost.position - sheet.top)
        }
        // Past the pane's height: rows off the bottom, unless the selection is among them.
        if rows.count > body.height {
            let extra = rows.count - body.height
            let selected = rows.firstIndex(where: \.selected) ?? 0
            if selected >= body.height { rows.removeFirst(extra) } else { rows.removeLast(extra) }
        }
        return RecordsPane.Table(columns: headers, markerWidth: markerWidth, moreLeftX: moreLeftX, moreRight: moreRight, rows: rows, isEmpty: sheet.count == 0)
    }

    /// One row: its marker (a pending edit's `+ ~ -`, else another process's last commit's
    /// `+ ~` for a few seconds) and each shown cell, styled by what happened to it.
    private func recordsRow(_ row: Int, sheet: Sheet, columns: [String], shown: [(column: Int, width: Int)], fit: ColumnFit, changes: ChangeSet?,
                            graph: ObjectGraph) -> RecordsPane.Table.Row {
        let selected = row == sheet.selection
        let ref = sheet.ref(at: row)
        var rowState: Character = " "
        if let changes, let ref {
            if changes.isRemoved(ref) { rowState = "-" } else if changes.isInserted(ref) { rowState = "+" } else if isChangedRow(ref, changes) { rowState = "~" }
        }
        var marker: (text: String, style: Style)?
        if rowState != " " { marker = (String(rowState), rowState == "-" ? theme.pendingDeleted : rowState == "+" ? theme.pendingAdded : theme.pending) }
        let commitMark = rowState == " " ? ref.flatMap { liveMark($0) } : nil
        if let commitMark { marker = (String(commitMark), theme.live) }
        // Cells holding the last search's text are marked, as `n`/`N` would find them.
        let needle = searchPane == .records ? lastSearch?.lowercased() : nil
        let cells = shown.map { c, cw -> RecordsPane.Table.Cell in
            let v = sheet.value(row: row, column: c, graph: graph)
            let (full, isNumber) = cellText(v, width: cw, caption: fit.caption(row: row, column: c))
            let text = DisplayText.fit(full, width: cw)
            let padded = isNumber ? String(repeating: " ", count: max(0, cw - DisplayText.width(of: text))) + text : DisplayText.pad(text, to: cw)
            var style = selected ? (focus == .records ? theme.selection : theme.selectionUnfocused) : cellStyle(v)
            if !selected {
                if rowState == "-" { style = theme.pendingDeleted }
                else if rowState == "+" { style = theme.pendingAdded }
                else if let changes, let ref, c < columns.count, changes.isChanged(ref, attribute: columns[c]) || changes.isRelinked(ref, relation: columns[c]) { style = theme.pendingChanged }
                else if let commitMark, let ref, c < columns.count, commitMark == "+" || isLiveChanged(ref, column: columns[c]) { style = theme.live }
                else if let needle, !needle.isEmpty, ValueFormatter.plain(v).lowercased().contains(needle) { style = theme.match }
            }
            if selected && c == sheet.column { style.bold = true }
            return RecordsPane.Table.Cell(text: padded, style: style)
        }
        return RecordsPane.Table.Row(selected: selected, marker: marker, cells: cells)
    }

    /// A cell's text in `width` cells (numbers right-aligned): its value's, and beside a foreign
    /// key, where there is room, the `caption` of the object it names (`1 AC/DC`).
    func cellText(_ v: Value, width: Int, caption: String?) -> (text: String, isNumber: Bool) {
        let text = cellText(v)
        guard let caption, DisplayText.width(of: text) + 2 < width else { return (text, v.numeric != nil) }
        return (text + " " + DisplayText.fit(caption, width: 40), false)
    }
}

/// How wide each of a sheet's columns is and which fit: each column's natural width is its
/// header's and its visible cells' (measured up to the pane's width); the default caps it at
/// 40 cells, unless every column fits at its natural width or the column is toggled wide (`_`).
private final class ColumnFit {
    let sheet: Sheet, columns: [String], rows: [Int], graph: ObjectGraph, width: Int, markerWidth: Int
    unowned let browser: Browser
    private var natural: [Int: Int] = [:]
    /// The captions of the objects foreign key cells name, by column and row, read once a frame.
    private var captions: [Int: [Int: String]] = [:]
    /// The columns that are foreign keys of the first visible row's type (their cells get captions).
    private lazy var foreignKeys: Set<Int> = {
        guard sheet.showsObjects, let first = rows.first.flatMap(sheet.ref(at:)) else { return [] }
        let table = graph.table(first)
        return Set(columns.indices.filter { table.relation(heldBy: columns[$0]) != nil })
    }()
    private lazy var allFit = columns.count <= 64 && (0..<columns.count).reduce(markerWidth) { $0 + naturalWidth(of: $1) + 1 } <= width + 1

    init(sheet: Sheet, columns: [String], rows: [Int], graph: ObjectGraph, width: Int, markerWidth: Int, browser: Browser) {
        (self.sheet, self.columns, self.rows, self.graph, self.width, self.markerWidth, self.browser) = (sheet, columns, rows, graph, width, markerWidth, browser)
    }

    /// A column's header: its name, with the sort's mark on the column sorted by.
    func header(_ column: Int) -> String { sheet.sortedBy?.header(columns[column]) ?? columns[column] }

    func naturalWidth(of column: Int) -> Int {
        if let w = natural[column] { return w }
        var w = DisplayText.width(of: DisplayText.fit(header(column), width: width))
        for row in rows {
            w = max(w, DisplayText.width(of: DisplayText.fit(browser.cellText(sheet.value(row: row, column: column, graph: graph)), width: width)))
        }
        natural[column] = max(w, 2)
        return max(w, 2)
    }

    /// A foreign key column's width with the captions of the objects its visible cells name
    /// (`1 AC/DC`): they get what room is left once every column has its own (nil for others).
    func captionedWidth(of column: Int) -> Int? {
        guard foreignKeys.contains(column) else { return nil }
        var w: Int?
        for row in rows {
            guard let caption = caption(row: row, column: column) else { continue }
            let text = browser.cellText(sheet.value(row: row, column: column, graph: graph)) + " " + DisplayText.fit(caption, width: 40)
            w = max(w ?? 0, DisplayText.width(of: DisplayText.fit(text, width: width)))
        }
        return w
    }

    func width(of column: Int) -> Int {
        let w = naturalWidth(of: column)
        if allFit || sheet.wideColumns.contains(column) { return min(w, width - markerWidth) }
        return min(w, max(8, width / 2), 40)
    }

    /// The caption of the object the foreign key cell at `row`, `column` names (read once); nil
    /// for a cell of another column.
    func caption(row: Int, column: Int) -> String? {
        guard foreignKeys.contains(column) else { return nil }
        if let known = captions[column]?[row] { return known.isEmpty ? nil : known }
        let caption = sheet.foreignKeyCaption(row: row, column: columns[column], graph: graph)
        captions[column, default: [:]][row] = caption ?? ""
        return caption
    }

    /// The columns shown, with their widths, scrolling `sheet` sideways until its current
    /// column is among them; scrolled, an object's key column (`id`, or its own key column)
    /// stays fixed on the left (`frozen`), so that every row still says which object it is.
    func columnsShown(_ sheet: inout Sheet) -> (shown: [(column: Int, width: Int)], frozen: (column: Int, width: Int)?) {
        sheet.column = max(0, min(sheet.column, columns.count - 1))
        if sheet.column < sheet.firstColumn { sheet.firstColumn = sheet.column }
        var frozen: (column: Int, width: Int)?
        if sheet.showsObjects, columns.count > 1, sheet.column > 0 { frozen = (0, min(width(of: 0), width / 3)) }
        if frozen != nil, sheet.firstColumn == 0 { sheet.firstColumn = 1 }
        let frozenWidth = frozen.map { $0.width + 1 } ?? 0
        var shown: [(column: Int, width: Int)] = []
        while true {
            shown = []
            var used = markerWidth + frozenWidth
            for c in sheet.firstColumn..<columns.count {
                let cw = width(of: c)
                if used + cw > width && !shown.isEmpty { break }
                shown.append((c, min(cw, width - used)))
                used += cw + 1
            }
            if shown.contains(where: { $0.column == sheet.column }) || sheet.firstColumn >= sheet.column { break }
            sheet.firstColumn += 1
        }
        if let frozen { shown.insert(frozen, at: 0) }
        // Room left over on the right goes to the columns shown cut, left to right.
        if shown.last.map({ $0.column == columns.count - 1 }) ?? false {
            var spare = width - markerWidth - shown.reduce(0) { $0 + $1.width + 1 } + 1
            for i in shown.indices where spare > 0 {
                let grow = min(spare, naturalWidth(of: shown[i].column) - shown[i].width)
                if grow > 0 { shown[i].width += grow; spare -= grow }
            }
            // Then to foreign keys, for the captions of the objects they name.
            for i in shown.indices where spare > 0 {
                guard let captioned = captionedWidth(of: shown[i].column) else { continue }
                let grow = min(spare, captioned - shown[i].width)
                if grow > 0 { shown[i].width += grow; spare -= grow }
            }
        }
        return (shown, frozen)
    }
}
