import DisplayText
import Foundation
import LoupeModel
import LoupeQuery
import TerminalKit

extension Browser {
    /// Draws the whole screen into `buffer`; returns where the cursor goes (in the REPL input), if anywhere.
    @discardableResult
    public func render(into buffer: inout Buffer) -> (x: Int, y: Int)? {
        let w = buffer.width, h = buffer.height
        guard w >= 20, h >= 8 else {
            buffer.put("Loupe: the window is too small", x: 0, y: 0, maxWidth: w)
            return nil
        }
        // Room for a caret error (five lines) when the screen allows.
        var replHeight = h >= 30 ? 9 : h >= 24 ? 7 : 4
        // The types pane as wide as its longest name and count (within a sixth to a third of the screen).
        let typesNatural = typeCountRows.map { DisplayText.width(of: DisplayText.fit($0.name, width: 40)) + $0.shown.count + 3 }.max() ?? 16
        var typesWidth = w >= 100 ? min(28, max(16, w / 6, min(typesNatural, w / 4))) : w >= 60 ? min(max(16, typesNatural), w / 3) : 0
        var detailWidth = w >= 100 ? max(30, w * 3 / 10) : w >= 60 ? max(26, w * 2 / 5) : 0
        if w < 100, w >= 60 {
            // Two panes side by side below 100 columns: the focused one and its neighbour, so that
            // the records keep room (at 80×24: types + records, or records + detail).
            if focus == .detail { typesWidth = 0 } else { detailWidth = 0 }
        }
        if zoomed {
            // `z`: the focused pane alone (the REPL with its whole height for scrollback).
            switch focus {
            case .repl: replHeight = h - 2
            case .types: detailWidth = 0; typesWidth = w
            case .records: typesWidth = 0; detailWidth = 0
            case .detail: typesWidth = 0; detailWidth = w
            }
            if focus != .repl { replHeight = min(replHeight, 4) }
        }
        let mainTop = 1, mainBottom = h - 1 - replHeight
        let recordsWidth = max(0, w - typesWidth - detailWidth)
        layout.types = Rect(x: 0, y: mainTop, width: typesWidth, height: mainBottom - mainTop)
        layout.records = Rect(x: typesWidth, y: mainTop, width: recordsWidth, height: mainBottom - mainTop)
        layout.detail = Rect(x: typesWidth + recordsWidth, y: mainTop, width: detailWidth, height: mainBottom - mainTop)
        layout.repl = Rect(x: 0, y: mainBottom, width: w, height: replHeight)

        renderBreadcrumb(&buffer, width: w)
        let hasMain = mainBottom - mainTop >= 3
        if typesWidth > 0, hasMain { renderTypes(&buffer, layout.types) }
        if showsGraph, graph != nil, hasMain {
            renderGraph(&buffer, Rect(x: layout.records.x, y: mainTop, width: recordsWidth + detailWidth, height: mainBottom - mainTop))
        } else if hasMain {
            if recordsWidth > 0 { renderRecords(&buffer, layout.records) }
            if detailWidth > 0 { renderDetail(&buffer, layout.detail) }
        }
        let cursor = renderRepl(&buffer, layout.repl)
        renderStatus(&buffer, y: h - 1, width: w)
        if showsHelp { renderHelp(&buffer) }
        if picker != nil { renderPicker(&buffer) }
        if dialog != nil { renderDialog(&buffer) }
        return focus == .repl && picker == nil && dialog == nil ? cursor : nil
    }

    private func renderBreadcrumb(_ buffer: inout Buffer, width: Int) {
        // Each step shortened (a query's statement to 40 cells), then cut from the left: the
        // current place always shows.
        var parts = stack.filter { !$0.isObjectOfRow }.map { DisplayText.fit($0.crumb, width: 40) }
        if let graph, let ref = selectedObject { parts.append(DisplayText.fit(graph.label(of: ref), width: 40)) }
        let text = parts.isEmpty ? "Loupe" : parts.joined(separator: " › ")
        buffer.put(" " + DisplayText.fitFromEnd(text, width: width - 2), x: 0, y: 0, style: theme.header, maxWidth: width)
    }

    private func paneBlock(_ buffer: inout Buffer, _ area: Rect, _ title: String, _ pane: Pane) -> Rect {
        drawBlock(&buffer, area, title: title, style: focus == pane ? theme.focusedBorder : theme.border,
                  titleStyle: focus == pane ? theme.header : Style(bold: true))
    }

    /// The types pane's rows: each type's count as `count` answers it, a parent entity's own
    /// share beside it (``TypeCount``); the catalog's while previewing or paged.
    var typeCountRows: [TypeCount] {
        let own = isPreview ? pendingTypes : pages != nil ? pagedTypeRows : graph.map { $0.types.map { ($0.name.rawValue, $0.liveCount) } } ?? pendingTypes
        return TypeCount.folded(own, supertype: graph?.supertypeNames ?? [:])
    }

    private func renderTypes(_ buffer: inout Buffer, _ area: Rect) {
        let inner = paneBlock(&buffer, area, "Types", .types)
        layout.typesBody = inner
        // When every type is read-only (a framework store) the status line says so once instead.
        let allReadOnly = graph?.types.allSatisfy(\.isReadOnly) ?? false
        func marked(_ type: TypeTable) -> String { type.name.rawValue + (type.isReadOnly && !allReadOnly ? " (read-only)" : "") }
        // Paged: the catalog's counts, marked by the window's schema (every type is in it).
        let rows = typeCountRows.map { row in (graph?.type(named: row.name).map(marked) ?? row.name, row.shown) }
        guard inner.height > 0 else { return }
        if typeSelection < typeTop { typeTop = typeSelection }
        if typeSelection >= typeTop + inner.height { typeTop = typeSelection - inner.height + 1 }
        for (i, row) in rows.enumerated().dropFirst(typeTop).prefix(inner.height) {
            let y = inner.y + i - typeTop
            let count = row.1
            let name = DisplayText.pad(row.0, to: max(1, inner.width - count.count - 1))
            let selected = i == typeSelection && graph != nil
            let style = selected ? (focus == .types ? theme.selection : theme.selectionUnfocused) : Style.plain
            buffer.put(name + " " + count, x: inner.x, y: y, style: style, maxWidth: inner.width)
        }
    }

    /// The widest a cell's text is ever made (columns are narrower; the full-value view shows more).
    static let cellTextLimit = 200

    /// A cell's text, at most `width` cells: dates, nulls, arrays and nested objects summarised;
    /// escaped by ``DisplayText``. Its cost depends on `width`, never on the value's size.
    func cellText(_ v: Value, width: Int = Browser.cellTextLimit) -> String {
        switch v {
        case .null: return "∅"
        case .date(let d):
            let iso = DateText.iso(d)
            return iso.hasSuffix("T00:00:00Z") ? String(iso.prefix(10)) : iso.replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: "")
        case .array(let items):
            var text = "[\(items.count)] "
            for (i, item) in items.prefix(4).enumerated() {
                if i > 0 { text += ", " }
                text += cellText(item, width: max(1, width - DisplayText.width(of: text)))
                if DisplayText.width(of: text) >= width { break }
            }
            return DisplayText.fit(text + (items.count > 4 ? ", …" : ""), width: width)
        case .object(let o):
            var text = "{"
            for (i, m) in o.members.prefix(3).enumerated() {
                if i > 0 { text += ", " }
                text += DisplayText.fit(m.key, width: 40) + ": " + cellText(m.value, width: max(1, width - DisplayText.width(of: text)))
                if DisplayText.width(of: text) >= width { break }
            }
            return DisplayText.fit(text + (o.members.count > 3 ? ", …}" : "}"), width: width)
        case .data(let d): return "<\(d.count) bytes>"
        case .string(let s): return DisplayText.fit(ValueFormatter.shownPrefix(s, width: width), width: width)
        default: return DisplayText.fit(ValueFormatter.plain(v), width: width)
        }
    }

    func cellStyle(_ v: Value) -> Style {
        switch v {
        case .null: return theme.null
        case .int, .double: return theme.number
        case .date: return theme.date
        case .bool: return theme.keyword
        default: return theme.string
        }
    }

    private func renderRecords(_ buffer: inout Buffer, _ area: Rect) {
        if pages != nil, var sheet = current {
            // Paged: the window holds the rows this frame shows (the pane's body is the area
            // less its border and header).
            let body = max(1, area.height - 3)
            sheet.clamp(height: body)
            stack[stack.count - 1] = sheet
            ensurePagedWindow(span: body)
        }
        guard let graph, var sheet = current else {
            let inner = paneBlock(&buffer, area, "Records", .records)
            if let progress {
                let fraction = progress.total > 0 ? Double(progress.done) / Double(progress.total) : 0
                buffer.put("Loading \(progress.done) of \(progress.total) objects…", x: inner.x + 1, y: inner.y + 1, maxWidth: inner.width - 2)
                buffer.put(progressBar(fraction, width: inner.width - 2), x: inner.x + 1, y: inner.y + 2, style: theme.header, maxWidth: inner.width - 2)
            }
            return
        }
        let whole = pendingTypes.first.map(\.count) ?? -1
        let title = isPreview ? "\(DisplayText.fit(sheet.crumb, width: max(8, area.width - 34))) (first \(sheet.count)\(whole > sheet.count ? " of \(whole)" : ""), loading)"
            : "\(DisplayText.fit(sheet.crumb, width: max(8, area.width - 20))) (\(sheet.isCounted ? String(sheet.count) : "counting…"))"
        let inner = paneBlock(&buffer, area, title, .records)
        guard inner.height >= 2, inner.width >= 4 else { return }
        let bodyHeight = inner.height - 1
        layout.recordsBody = Rect(x: inner.x, y: inner.y + 1, width: inner.width, height: bodyHeight)
        sheet.clamp(height: bodyHeight)
        let columns = sheet.columns(graph: graph)
        let visibleRows = Array(sheet.top..<min(sheet.count, sheet.top + bodyHeight))
        rowsReadLastFrame = visibleRows.count
        // With pending changes, each row starts with a marker readable without colour:
        // `+` added, `~` changed, `-` marked for deletion.
        let changes = shownChanges
        let markerWidth = changes == nil ? 0 : 2
        // Widths from the header and the visible rows only.
        // The natural width of each column (header and visible cells, measured up to the pane's
        // width); the default caps it at 40 cells, unless every column fits at its natural width
        // or the column is toggled wide (`_`).
        var natural: [Int: Int] = [:]
        /// A column's header: its name, with the sort's mark on the column sorted by.
        func header(_ column: Int) -> String { sheet.sortedBy?.header(columns[column]) ?? columns[column] }
        func naturalWidth(of column: Int) -> Int {
            if let w = natural[column] { return w }
            var w = DisplayText.width(of: DisplayText.fit(header(column), width: inner.width))
            for row in visibleRows {
                w = max(w, DisplayText.width(of: DisplayText.fit(cellText(sheet.value(row: row, column: column, graph: graph)), width: inner.width)))
            }
            natural[column] = max(w, 2)
            return max(w, 2)
        }
        let allFit = columns.count <= 64 && (0..<columns.count).reduce(markerWidth) { $0 + naturalWidth(of: $1) + 1 } <= inner.width + 1
        func width(of column: Int) -> Int {
            let w = naturalWidth(of: column)
            if allFit || sheet.wideColumns.contains(column) { return min(w, inner.width - markerWidth) }
            return min(w, max(8, inner.width / 2), 40)
        }
        // Scroll right until the current column is visible.
        sheet.column = max(0, min(sheet.column, columns.count - 1))
        if sheet.column < sheet.firstColumn { sheet.firstColumn = sheet.column }
        // Scrolled sideways, an object's key column (`id`, or its own key column) stays fixed on
        // the left, so that every row still says which object it is.
        var frozen: (column: Int, width: Int)?
        if sheet.showsObjects, columns.count > 1, sheet.column > 0, sheet.firstColumn > 0 || sheet.column > 0 {
            frozen = (0, min(width(of: 0), inner.width / 3))
        }
        if frozen != nil, sheet.firstColumn == 0 { sheet.firstColumn = 1 }
        let frozenWidth = frozen.map { $0.width + 1 } ?? 0
        var shown: [(column: Int, width: Int)] = []
        while true {
            shown = []
            var used = markerWidth + frozenWidth
            for c in sheet.firstColumn..<columns.count {
                let cw = width(of: c)
                if used + cw > inner.width && !shown.isEmpty { break }
                shown.append((c, min(cw, inner.width - used)))
                used += cw + 1
            }
            if shown.contains(where: { $0.column == sheet.column }) || sheet.firstColumn >= sheet.column { break }
            sheet.firstColumn += 1
        }
        if let frozen { shown.insert(frozen, at: 0) }
        // Room left over on the right goes to the columns shown cut, left to right.
        if shown.last.map({ $0.column == columns.count - 1 }) ?? false {
            var spare = inner.width - markerWidth - shown.reduce(0) { $0 + $1.width + 1 } + 1
            for i in shown.indices where spare > 0 {
                let grow = min(spare, naturalWidth(of: shown[i].column) - shown[i].width)
                if grow > 0 { shown[i].width += grow; spare -= grow }
            }
        }
        var x = inner.x + markerWidth
        for (c, cw) in shown {
            var style = theme.header
            if c == sheet.column { style.underline = true }
            buffer.put(DisplayText.pad(header(c), to: cw), x: x, y: inner.y, style: style, maxWidth: cw)
            x += cw + 1
        }
        // More columns to the left: `<` before the first scrolled one (after the fixed key column).
        if sheet.firstColumn > (frozen == nil ? 0 : 1) {
            buffer.put("<", x: frozen == nil ? inner.x : inner.x + markerWidth + frozenWidth - 1, y: inner.y, style: theme.dim)
        }
        if let last = shown.last, last.column < columns.count - 1 { buffer.put(">", x: inner.maxX - 1, y: inner.y, style: theme.dim) }
        for (i, row) in visibleRows.enumerated() {
            let y = inner.y + 1 + i
            let selected = row == sheet.selection
            if selected { buffer.fill(Rect(x: inner.x, y: y, width: inner.width, height: 1), style: focus == .records ? theme.selection : theme.selectionUnfocused) }
            let ref = sheet.ref(at: row)
            var rowState: Character = " "
            if let changes, let ref {
                if changes.isRemoved(ref) { rowState = "-" } else if changes.isInserted(ref) { rowState = "+" }
                else if isChangedRow(ref, changes) { rowState = "~" }
                if rowState != " " {
                    let style = rowState == "-" ? theme.pendingDeleted : rowState == "+" ? theme.pendingAdded : theme.pending
                    buffer.put(String(rowState), x: inner.x, y: y, style: selected ? theme.selection : style)
                }
            }
            // What another process's last commit added or changed (live mode), for a few seconds.
            let commitMark = rowState == " " ? ref.flatMap { liveMark($0) } : nil
            // Cells holding the last search's text are marked, as `n`/`N` would find them.
            let needle = searchPane == .records ? lastSearch?.lowercased() : nil
            if let commitMark { buffer.put(String(commitMark), x: inner.x, y: y, style: selected ? theme.selection : theme.live) }
            x = inner.x + markerWidth
            for (c, cw) in shown {
                let v = sheet.value(row: row, column: c, graph: graph)
                let text = DisplayText.fit(cellText(v), width: cw)
                let numeric = v.numeric != nil
                let padded = numeric ? String(repeating: " ", count: max(0, cw - DisplayText.width(of: text))) + text : DisplayText.pad(text, to: cw)
                var style = selected ? (focus == .records ? theme.selection : theme.selectionUnfocused) : cellStyle(v)
                if !selected {
                    if rowState == "-" { style = theme.pendingDeleted }
                    else if rowState == "+" { style = theme.pendingAdded }
                    else if let changes, let ref, c < columns.count, (changes.isChanged(ref, attribute: columns[c]) || changes.isRelinked(ref, relation: columns[c])) { style = theme.pendingChanged }
                    else if let commitMark, let ref, c < columns.count, commitMark == "+" || isLiveChanged(ref, column: columns[c]) { style = theme.live }
                    else if let needle, !needle.isEmpty, ValueFormatter.plain(v).lowercased().contains(needle) { style = theme.match }
                }
                if selected && c == sheet.column { style.bold = true }
                buffer.put(padded, x: x, y: y, style: style, maxWidth: cw)
                x += cw + 1
            }
        }
        if sheet.count == 0 { buffer.put("(no objects)", x: inner.x + 1, y: inner.y + 1, style: theme.dim) }
        stack[stack.count - 1] = sheet
    }

    /// True when a pending edit changed one of the row's cells or relations.
    func isChangedRow(_ ref: ObjectRef, _ changes: ChangeSet) -> Bool {
        guard let graph else { return false }
        let table = graph.table(ref)
        return table.attributes.contains { changes.isChanged(ref, attribute: $0.name) }
            || table.relations.contains { changes.isRelinked(ref, relation: $0.name) }
    }

    private func renderDetail(_ buffer: inout Buffer, _ area: Rect) {
        guard let graph, let ref = selectedObject else {
            _ = paneBlock(&buffer, area, "Detail", .detail)
            return
        }
        let table = graph.table(ref)
        let changes = shownChanges
        let state = changes.map { $0.isRemoved(ref) ? " (marked for deletion)" : $0.isInserted(ref) ? " (added)" : "" } ?? ""
        let inner = paneBlock(&buffer, area, graph.label(of: ref) + state, .detail)
        layout.detailBody = inner
        guard inner.height > 0, inner.width > 4 else { return }
        // Each line with the item it selects (attributes first, then relations and backlinks).
        var lines: [(text: String, style: Style, item: Int?)] = []
        let nameWidth = min(16, (table.attributes.map { DisplayText.width(of: $0.name) }.max() ?? 4))
        for (a, attribute) in table.attributes.enumerated() {
            let v = table.value(row: Int(ref.row), attribute: a)
            let changed = changes?.isChanged(ref, attribute: attribute.name) ?? false
            lines.append((DisplayText.pad(attribute.name, to: nameWidth) + " " + cellText(v), changed ? theme.pendingChanged : cellStyle(v), a))
        }
        let links = detailLinks()
        let relationCount = table.relations.count
        let first = table.attributes.count
        if relationCount > 0 { lines.append(("", .plain, nil)); lines.append(("relations", theme.header, nil)) }
        for (i, link) in links.enumerated() {
            if i == relationCount { lines.append(("", .plain, nil)); lines.append(("backlinks", theme.header, nil)) }
            let arrow = i < relationCount ? (link.toMany ? "⇉ " : "→ ") : "← "
            var text: String
            if !link.toMany {
                let broken = i < relationCount ? table.brokenLink(row: Int(ref.row), relation: i) : nil
                text = arrow + link.label + "  " + (link.targets.first.map { objectLabel($0) }
                    ?? broken.map { "✗ " + cellText($0) + " (broken link: no such object)" } ?? "∅")
            } else if i < relationCount {
                // The count first, so that cutting a long name never hides it.
                let types = targetTypes(of: link, origin: ref, in: graph).sorted().joined(separator: "|")
                text = arrow + "[\(linkCount(link, origin: ref))] " + link.label + (types.isEmpty ? "" : "  " + types)
            } else {
                text = arrow + "[\(linkCount(link, origin: ref))] " + link.label   // the label names the type
            }
            if i < relationCount, table.relations[i].isInferred { text += "  (inferred)" }
            let relinked = i < relationCount && (changes?.isRelinked(ref, relation: link.label) ?? false
                || table.relations[i].foreignKey.map { changes?.isChanged(ref, attribute: $0.attribute) ?? false } ?? false)
            lines.append((text, relinked ? theme.pendingChanged : theme.relation, first + i))
        }
        // Keep the selected item in view.
        if let selectedLine = lines.firstIndex(where: { $0.item == detailSelection }) {
            if selectedLine < detailTop { detailTop = selectedLine }
            if selectedLine >= detailTop + inner.height { detailTop = selectedLine - inner.height + 1 }
        }
        detailTop = max(0, min(detailTop, max(0, lines.count - inner.height)))
        for (i, line) in lines.enumerated().dropFirst(detailTop).prefix(inner.height) {
            let y = inner.y + i - detailTop
            var style = line.style
            if let item = line.item, item == detailSelection, focus == .detail {
                style = theme.selection
                buffer.fill(Rect(x: inner.x, y: y, width: inner.width, height: 1), style: style)
            }
            buffer.put(DisplayText.fit(line.text, width: inner.width), x: inner.x, y: y, style: style, maxWidth: inner.width)
        }
    }

    /// The most rows one line of REPL output wraps to.
    static let replLineRows = 8

    private func renderRepl(_ buffer: inout Buffer, _ area: Rect) -> (x: Int, y: Int)? {
        var title = inputMode == .search && focus == .repl ? "Search" : "REPL (: to type, .help)"
        if case .editValue = inputMode { title = "Edit (Enter stages, Esc cancels; nil for null)" }
        let inner = paneBlock(&buffer, area, title, .repl)
        guard inner.height >= 1 else { return nil }
        let outputHeight = inner.height - 1
        let scroll = min(replScroll, max(0, replOutput.count - outputHeight))
        // The last lines, each wrapped to the pane (a long refusal or conflict message is read
        // whole; a line past `replLineRows` rows ends in `…`, and `z` gives the pane the screen).
        var rows: [(text: String, isError: Bool)] = []
        var linesShown = 0
        let shown = replOutput.dropLast(scroll)
        // Scrolled back all the way, the pane shows the first lines from the top.
        let fromTop = scroll > 0 && scroll >= replOutput.count - outputHeight
        for line in fromTop ? Array(shown) : shown.reversed() where rows.count < outputHeight {
            let isError = line.hasPrefix("error:") || line.contains("^")
            let wrapped = DisplayText.wrap(line, width: inner.width, maxRows: Self.replLineRows, atWords: true).map { (text: $0, isError: isError) }
            if fromTop { rows += wrapped } else { rows.insert(contentsOf: wrapped, at: 0) }
            linesShown += 1
        }
        rows = fromTop ? Array(rows.prefix(outputHeight)) : Array(rows.suffix(outputHeight))
        if scroll > 0 {
            buffer.put(" ↑ \(fromTop ? 0 : replOutput.count - linesShown - scroll) more · ↓ \(scroll) more (PgUp/PgDn) ", x: area.x + 2, y: area.maxY - 1,
                       style: theme.header, maxWidth: max(0, area.width - 4))
        }
        for (i, row) in rows.enumerated() {
            buffer.put(row.text, x: inner.x, y: inner.y + i, style: row.isError ? theme.error : .plain, maxWidth: inner.width)
        }
        var prompt = inputMode == .search && focus == .repl ? "/" : "loupe> "
        if case .editValue(let ref, let attribute) = inputMode, let graph {
            prompt = DisplayText.fit("\(graph.label(of: ref)).\(attribute) = ", width: max(8, inner.width / 2))
        }
        let y = inner.maxY - 1
        buffer.put(prompt, x: inner.x, y: y, style: theme.dim)
        let available = inner.width - DisplayText.width(of: prompt) - 1
        let chars = editor.characters
        // Scroll the input so the cursor stays visible: walk back from the cursor while it fits
        // (linear in what is shown, whatever the line's length).
        var start = editor.cursor
        var used = 0
        while start > 0 {
            let w = DisplayText.width(of: String(chars[start - 1]))
            if used + w > available { break }
            used += w
            start -= 1
        }
        var x = inner.x + DisplayText.width(of: prompt)
        let styles = inputMode == .statement ? highlight(editor.text) : Array(repeating: Style.plain, count: chars.count)
        var cursorX = x
        for (i, ch) in chars.enumerated().dropFirst(start) {
            if i == editor.cursor { cursorX = x }
            let w = DisplayText.width(of: ch)
            if x + w > inner.maxX { break }
            x += buffer.put(String(ch), x: x, y: y, style: i < styles.count ? styles[i] : .plain)
        }
        if editor.cursor >= chars.count { cursorX = x }
        return (min(cursorX, inner.maxX - 1), y)
    }

    /// Styles for each character of a statement, from its tokens: keywords, strings, numbers,
    /// operators; everything red after a lexing error.
    func highlight(_ text: String) -> [Style] {
        let count = text.count
        var styles = Array(repeating: Style.plain, count: count)
        if text.hasPrefix(".") { for i in 0..<count { styles[i] = theme.keyword }; return styles }
        // Token ranges are in Unicode scalars; map them to characters.
        var characterOfScalar: [Int] = []
        for (i, ch) in text.enumerated() { for _ in ch.unicodeScalars { characterOfScalar.append(i) } }
        characterOfScalar.append(count)
        func paint(_ range: SourceRange, _ style: Style) {
            let a = characterOfScalar[min(range.start, characterOfScalar.count - 1)]
            let b = characterOfScalar[min(range.end, characterOfScalar.count - 1)]
            for i in a..<max(a, b) where i < count { styles[i] = style }
        }
        var lexer = Lexer(text)
        while true {
            do {
                let token = try lexer.next()
                switch token.kind {
                case .end: return styles
                case .identifier(let w): if Keywords.contains(w) { paint(token.range, theme.keyword) }
                case .at: paint(token.range, theme.keyword)
                case .string, .date: paint(token.range, theme.date)
                case .integer, .decimal, .reference: paint(token.range, theme.number)
                case .symbol, .modifier: paint(token.range, theme.relation)
                case .quotedIdentifier, .variable: break
                }
            } catch let error as QueryError {
                paint(SourceRange(error.range.start, text.unicodeScalars.count), theme.error)
                return styles
            } catch { return styles }
        }
    }

    /// The status line: parts joined by `·`, the message or key hint on the right. When the line
    /// is too narrow, whole parts are left out, least useful first (format, type and object
    /// counts, file, hints), never cut mid-word: the row, running work and pending counts stay.
    private func renderStatus(_ buffer: inout Buffer, y: Int, width: Int) {
        buffer.fill(Rect(x: 0, y: y, width: width, height: 1), style: theme.status)
        // (text, priority): higher stays longer.
        var parts: [(text: String, keep: Int)] = [(fileLabel, 3), (formatName, 0)]
        if let pages {
            // While the store counts its types (the first screen), the counts are not waited for.
            parts.append(("\(pendingTypes.count.counting("type"))", 1))
            parts.append((countingTypes ? "counting objects…" : "\((pendingTypes.reduce(0) { $0 + $1.count }).counting("object"))", countingTypes ? 8 : 2))
            parts.append(("paged" + (pagedReason.map { " · " + $0 } ?? ""), 7))
            // What paged mode leaves out of this store: said while there is room (the row and
            // the pending counts stay).
            parts += pages.notes.map { (DisplayText.escaped($0), 5) }
            if let sheet = current { parts.append(("row \(sheet.count == 0 ? 0 : sheet.selection + 1)/\(sheet.isCounted ? String(sheet.count) : "…")", 6)) }
        } else if let graph {
            parts.append(("\(graph.types.count.counting("type"))", 1))
            parts.append(("\(graph.objectCount.counting("object"))", 2))
            if let loadNote { parts.append((DisplayText.escaped(loadNote), 5)) }
            if let sheet = current { parts.append(("row \(sheet.count == 0 ? 0 : sheet.selection + 1)/\(sheet.count)", 6)) }
        } else if let progress {
            parts.append(("loading \(progress.total > 0 ? progress.done * 100 / progress.total : 0)%", 9))
        }
        if let running {
            if running.isLoad {
                let p = running.progress
                parts.append(("\(running.verb) \(p.map { $0.1 > 0 ? "\($0.0 * 100 / $0.1)%" : "…" } ?? "…") (Ctrl-C cancels)", 9))
            } else {
                parts.append((String(format: "running %.1f s (Ctrl-C cancels)", running.elapsed), 9))
            }
        }
        if let live { parts.append(("live · \(live.commits.counting("commit"))" + (live.conflictsWaiting > 0 ? " · \(live.conflictsWaiting.counting("conflict")) to decide (Ctrl-S)" : ""), 7)) }
        var pendingHint: String?
        if let changes = pendingChanges {
            let c = changes.changes.counts
            parts.append(("pending +\(c.added) ~\(c.changed) -\(c.deleted)", 8))
            pendingHint = "(Ctrl-S commits, U undoes)"
        } else if pages != nil && pagedChanges == nil {
            parts.append(("read-only", 4))
        } else if let graph, !graph.types.isEmpty, graph.types.allSatisfy(\.isReadOnly) {
            parts.append(("read-only", 4))
        } else {
            parts.append(("no pending changes", 4))
        }
        let right = message.isEmpty ? "\(KeyMap.name(of: .showHelp)) help  \(KeyMap.name(of: .quitView)) quit " : DisplayText.escaped(message) + " "
        // The message gets at least half the line; the hint only what is left.
        let rightRoom = message.isEmpty ? min(DisplayText.width(of: right), 16) : min(DisplayText.width(of: right), width / 2)
        func text() -> String {
            var t = " " + parts.map(\.text).joined(separator: " · ")
            if let pendingHint { t += " " + pendingHint }
            return t
        }
        while DisplayText.width(of: text()) > width - rightRoom - 1 {
            if pendingHint != nil { pendingHint = nil; continue }
            guard let lowest = parts.indices.filter({ parts[$0].keep < 6 }).min(by: { parts[$0].keep < parts[$1].keep }) else { break }
            parts.remove(at: lowest)
        }
        let used = buffer.put(text(), x: 0, y: y, style: theme.status, maxWidth: width)
        let rw = min(DisplayText.width(of: right), max(0, width - used - 2))
        if rw > 0 { buffer.put(DisplayText.fit(right, width: rw), x: width - rw, y: y, style: theme.status, maxWidth: rw) }
    }

    /// The relation picker: a filter line and the candidates, current targets marked `✓`.
    private func renderPicker(_ buffer: inout Buffer) {
        guard let picker, let graph else { return }
        let w = min(buffer.width - 4, 70), h = min(buffer.height - 2, 24)
        let area = Rect(x: (buffer.width - w) / 2, y: (buffer.height - h) / 2, width: w, height: h)
        buffer.fill(area)
        let title = "\(graph.label(of: picker.owner)).\(picker.relation) — Enter \(picker.toMany ? "adds or removes" : "sets"), Esc closes"
        let inner = drawBlock(&buffer, area, title: title, style: theme.focusedBorder, titleStyle: theme.header)
        guard inner.height >= 2 else { return }
        buffer.put("filter: " + picker.filter, x: inner.x, y: inner.y, style: theme.dim, maxWidth: inner.width)
        let body = Rect(x: inner.x, y: inner.y + 1, width: inner.width, height: inner.height - 1)
        layout.pickerBody = body
        for (i, candidate) in picker.visible.enumerated().dropFirst(picker.top).prefix(body.height) {
            let y = body.y + i - picker.top
            let mark = candidate.map { picker.current.contains($0) ? "✓ " : "  " } ?? "  "
            let text = mark + (candidate.map(objectLabel) ?? "(none: clears the relation)")
            let style = i == picker.selection ? theme.selection : Style.plain
            if i == picker.selection { buffer.fill(Rect(x: body.x, y: y, width: body.width, height: 1), style: style) }
            buffer.put(DisplayText.fit(text, width: body.width), x: body.x, y: y, style: style, maxWidth: body.width)
        }
        if picker.visible.isEmpty { buffer.put("no object matches", x: body.x, y: body.y, style: theme.dim) }
    }

    /// A dialog: its text (scrollable by line; a long line wraps, up to 8 rows) and its choices
    /// on the last line. Only the lines on screen are measured: a preview may hold 250k rows.
    private func renderDialog(_ buffer: inout Buffer) {
        guard let dialog else { return }
        let maxHeight = buffer.height - 2
        let visible = dialog.lines.dropFirst(dialog.top).prefix(max(1, maxHeight))
        // As wide as its widest line or its title (the quit guard's title is the pending summary).
        let widest = max(visible.map { DisplayText.width(of: DisplayText.fit($0, width: 200)) }.max() ?? 40,
                         DisplayText.width(of: DisplayText.fit(dialog.title, width: 200)) + 4)
        let w = min(buffer.width - 2, max(50, min(116, widest + 2)))
        var rows: [String] = []
        for line in visible {
            rows += DisplayText.wrap(line, width: w - 2, maxRows: 8, atWords: true)
            if rows.count >= maxHeight { break }
        }
        let h = min(maxHeight, max(dialog.lines.count, rows.count) + 3)
        let area = Rect(x: (buffer.width - w) / 2, y: (buffer.height - h) / 2, width: w, height: h)
        buffer.fill(area)
        let inner = drawBlock(&buffer, area, title: dialog.title, style: theme.focusedBorder, titleStyle: theme.header)
        guard inner.height >= 2 else { return }
        let textHeight = inner.height - 1
        for (i, row) in rows.prefix(textHeight).enumerated() {
            buffer.put(row, x: inner.x, y: inner.y + i, maxWidth: inner.width)
        }
        buffer.put(DisplayText.fit(dialog.choices, width: inner.width), x: inner.x, y: inner.maxY - 1, style: theme.header, maxWidth: inner.width)
    }

    private func renderHelp(_ buffer: inout Buffer) {
        let lines = KeyMap.helpLines
        let w = min(buffer.width - 4, (lines.map { DisplayText.width(of: $0) }.max() ?? 40) + 4)
        let h = min(buffer.height - 2, lines.count + 2)
        let area = Rect(x: (buffer.width - w) / 2, y: (buffer.height - h) / 2, width: w, height: h)
        buffer.fill(area)
        let scrolls = lines.count > h - 2
        helpTop = max(0, min(helpTop, lines.count - (h - 2)))
        let title = scrolls ? "Help \(helpTop + 1)–\(min(lines.count, helpTop + h - 2)) of \(lines.count) — j/k PgUp/PgDn scroll, any other key closes"
                            : "Help — any key closes"
        let inner = drawBlock(&buffer, area, title: title, style: theme.focusedBorder, titleStyle: theme.header)
        for (i, line) in lines.dropFirst(helpTop).prefix(inner.height).enumerated() {
            buffer.put(" " + line, x: inner.x, y: inner.y + i, maxWidth: inner.width)
        }
    }
}
