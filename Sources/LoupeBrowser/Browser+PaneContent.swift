import DisplayText
import Foundation
import LoupeModel
import LoupeQuery
import TerminalKit

/// Each pane's widget, made from the browser's state (``makeFrame(_:)``): what it shows, and
/// the scroll position that keeps the selection in view.
extension Browser {
    /// Where the user is: the sheets of the stack, then the selected object.
    var breadcrumb: Breadcrumb {
        var steps = stack.filter { !$0.isObjectOfRow }.map(\.crumb)
        if let graph, let ref = selectedObject { steps.append(graph.label(of: ref)) }
        return Breadcrumb(steps: steps, theme: theme)
    }

    /// The types pane's rows: each type's count as `count` answers it, a parent entity's own
    /// share beside it (``TypeCount``); the catalog's while previewing or paged.
    var typeCountRows: [TypeCount] {
        let own = isPreview ? pendingTypes : pages != nil ? pagedTypeRows : graph.map { $0.types.map { ($0.name.rawValue, $0.liveCount) } } ?? pendingTypes
        return TypeCount.folded(own, supertype: graph?.supertypeNames ?? [:])
    }

    /// The types pane, scrolled to keep the selected type in view.
    func typesPane(_ area: Rect) -> TypesPane {
        // When every type is read-only (a framework store) the status line says so once instead.
        let allReadOnly = graph?.types.allSatisfy(\.isReadOnly) ?? false
        func marked(_ type: TypeTable) -> String { type.name.rawValue + (type.isReadOnly && !allReadOnly ? " (read-only)" : "") }
        // Paged: the catalog's counts, marked by the window's schema (every type is in it).
        let rows = typeCountRows.map { row in TypesPane.Row(name: graph?.type(named: row.name).map(marked) ?? row.name, count: row.shown) }
        let height = Block.inner(area).height
        if height > 0 { typeTop = ScrollWindow.top(typeTop, keeping: typeSelection, height: height, count: rows.count) }
        return TypesPane(rows: rows, selection: graph != nil ? typeSelection : nil, top: typeTop, focused: focus == .types, theme: theme)
    }

    /// The graph view of the selected object (nil when no object is selected).
    func graphPane() -> GraphPane? {
        guard let graph, let origin = selectedObject else { return nil }
        let nodes = graphNodes()
        graphSelection = max(0, min(graphSelection, nodes.count - 1))
        return GraphPane(title: "Graph of \(graph.label(of: origin)) — \(graphHops) hop\(graphHops == 1 ? "" : "s") (+/- hops, Enter opens, v closes)",
                         label: graph.label(of: origin), nodes: nodes, selection: graphSelection, theme: theme)
    }

    /// The REPL pane: the output, and the input line as the input mode shows it.
    var replPane: ReplPane {
        var title = inputMode == .search && focus == .repl ? "Search" : "REPL (: to type, .help)"
        if case .editValue = inputMode { title = "Edit (Enter stages, Esc cancels; nil for null)" }
        var prompt = inputMode == .search && focus == .repl ? "/" : "loupe> "
        if case .editValue(let ref, let attribute) = inputMode, let graph {
            prompt = DisplayText.fit("\(graph.label(of: ref)).\(attribute) = ", width: max(8, Block.inner(layout.repl).width / 2))
        }
        let chars = editor.characters
        let styles = inputMode == .statement ? highlight(editor.text) : Array(repeating: Style.plain, count: chars.count)
        return ReplPane(title: title, output: replOutput, scroll: replScroll, prompt: prompt, input: chars, cursor: editor.cursor,
                        styles: styles, focused: focus == .repl, theme: theme)
    }

    /// The relation picker over the screen, while it is open: the candidates on screen only.
    func pickerPopup(_ screen: Rect) -> PickerPopup? {
        guard let picker, graph != nil else { return nil }
        let body = PickerPopup.area(in: screen).body
        let shown = Array(picker.visible.enumerated().dropFirst(picker.top).prefix(body.height))
        let rows = shown.map { _, candidate in
            (candidate.map { picker.current.contains($0) ? "✓ " : "  " } ?? "  ") + (candidate.map(objectLabel) ?? "(none: clears the relation)")
        }
        return PickerPopup(title: "\(picker.title) — Enter \(picker.toMany ? "adds or removes" : "sets"), Esc closes",
                           filter: picker.filter, rows: rows, selectedRow: shown.firstIndex { $0.offset == picker.selection },
                           isEmpty: picker.visible.isEmpty, theme: theme)
    }

    /// The detail pane of the selected object: attributes first, then relations and backlinks,
    /// scrolled to keep the selected item in view.
    func detailPane(_ area: Rect) -> DetailPane {
        guard let graph, let ref = selectedObject else {
            return DetailPane(title: "Detail", lines: [], selection: detailSelection, top: 0, focused: focus == .detail, theme: theme)
        }
        let changes = shownChanges
        let state = changes.map { $0.isRemoved(ref) ? " (marked for deletion)" : $0.isInserted(ref) ? " (added)" : "" } ?? ""
        let lines = detailLines(ref, graph: graph, changes: changes)
        let inner = Block.inner(area)
        if inner.height > 0, inner.width > 4 {
            detailTop = ScrollWindow.top(detailTop, keeping: DetailPane.line(of: detailSelection, in: lines), height: inner.height, count: lines.count)
        }
        return DetailPane(title: graph.label(of: ref) + state, lines: lines, selection: detailSelection, top: detailTop, focused: focus == .detail, theme: theme)
    }

    /// The detail pane's lines for `ref`, each with the item it selects.
    private func detailLines(_ ref: ObjectRef, graph: ObjectGraph, changes: ChangeSet?) -> [DetailPane.Line] {
        let table = graph.table(ref)
        var lines: [DetailPane.Line] = []
        let nameWidth = min(16, (table.attributes.map { DisplayText.width(of: $0.name) }.max() ?? 4))
        for (a, attribute) in table.attributes.enumerated() {
            let v = table.value(row: Int(ref.row), attribute: a)
            let changed = changes?.isChanged(ref, attribute: attribute.name) ?? false
            lines.append(DetailPane.Line(text: DisplayText.pad(attribute.name, to: nameWidth) + " " + cellText(v), style: changed ? theme.pendingChanged : cellStyle(v), item: a))
        }
        let relationCount = table.relations.count
        if relationCount > 0 { lines += [DetailPane.Line(text: "", style: .plain, item: nil), DetailPane.Line(text: "relations", style: theme.header, item: nil)] }
        for (i, link) in detailLinks().enumerated() {
            if i == relationCount { lines += [DetailPane.Line(text: "", style: .plain, item: nil), DetailPane.Line(text: "backlinks", style: theme.header, item: nil)] }
            let relinked = i < relationCount && (changes?.isRelinked(ref, relation: link.label) ?? false
                || table.relations[i].foreignKey.map { changes?.isChanged(ref, attribute: $0.attribute) ?? false } ?? false)
            lines.append(DetailPane.Line(text: linkLine(link, index: i, of: ref, table: table, graph: graph), style: relinked ? theme.pendingChanged : theme.relation,
                                         item: table.attributes.count + i))
        }
        return lines
    }

    /// A relation's or backlink's line: `→ label  target`, `⇉ [count] label  types`, `← [count] label`.
    private func linkLine(_ link: DetailLink, index i: Int, of ref: ObjectRef, table: TypeTable, graph: ObjectGraph) -> String {
        let isRelation = i < table.relations.count
        let arrow = isRelation ? (link.toMany ? "⇉ " : "→ ") : "← "
        var text: String
        if !link.toMany {
            let broken = isRelation ? table.brokenLink(row: Int(ref.row), relation: i) : nil
            text = arrow + link.label + "  " + (link.targets.first.map { objectLabel($0) }
                ?? broken.map { "✗ " + cellText($0) + " (broken link: no such object)" } ?? "∅")
        } else if isRelation {
            // The count first, so that cutting a long name never hides it.
            let types = targetTypes(of: link, origin: ref, in: graph).sorted().joined(separator: "|")
            text = arrow + "[\(linkCount(link, origin: ref))] " + link.label + (types.isEmpty ? "" : "  " + types)
        } else {
            text = arrow + "[\(linkCount(link, origin: ref))] " + link.label   // the label names the type
        }
        if isRelation, table.relations[i].isInferred { text += "  (inferred)" }
        return text
    }

    /// The status line: the file, its format and counts, paged mode's notes, the row, running
    /// work, live mode, the pending edits; the message (or the key hint) on the right.
    var statusLine: StatusLine {
        var parts: [StatusLine.Part] = [.init(text: fileLabel, keep: 3), .init(text: formatName, keep: 0)]
        parts += storeStatusParts
        if let running {
            if running.isLoad {
                let p = running.progress
                parts.append(.init(text: "\(running.verb) \(p.map { $0.1 > 0 ? "\($0.0 * 100 / $0.1)%" : "…" } ?? "…") (Ctrl-C cancels)", keep: 9))
            } else {
                parts.append(.init(text: String(format: "running %.1f s (Ctrl-C cancels)", running.elapsed), keep: 9))
            }
        }
        if let live {
            parts.append(.init(text: "live · \(live.commits.counting("commit"))" + (live.conflictsWaiting > 0 ? " · \(live.conflictsWaiting.counting("conflict")) to decide (Ctrl-S)" : ""), keep: 7))
        }
        var hint: String?
        if let changes = pendingChanges {
            let c = changes.changes.counts
            parts.append(.init(text: "pending +\(c.added) ~\(c.changed) -\(c.deleted)", keep: 8))
            hint = "(Ctrl-S commits, U undoes)"
        } else if pages != nil && pagedChanges == nil {
            parts.append(.init(text: "read-only", keep: 4))
        } else if let graph, !graph.types.isEmpty, graph.types.allSatisfy(\.isReadOnly) {
            parts.append(.init(text: "read-only", keep: 4))
        } else {
            parts.append(.init(text: "no pending changes", keep: 4))
        }
        let right = message.isEmpty ? "\(KeyMap.name(of: .showHelp)) help  \(KeyMap.name(of: .quitView)) quit " : DisplayText.escaped(message) + " "
        return StatusLine(parts: parts, hint: hint, right: right, isMessage: !message.isEmpty, theme: theme)
    }

    /// What the status line says of the store: its types and objects (paged: the catalog's,
    /// with paged mode's notes), or the load's progress; and the row.
    private var storeStatusParts: [StatusLine.Part] {
        var parts: [StatusLine.Part] = []
        if let pages {
            // While the store counts its types (the first screen), the counts are not waited for.
            parts.append(.init(text: pendingTypes.count.counting("type"), keep: 1))
            parts.append(.init(text: countingTypes ? "counting objects…" : pendingTypes.reduce(0) { $0 + $1.count }.counting("object"), keep: countingTypes ? 8 : 2))
            parts.append(.init(text: "paged" + (pagedReason.map { " · " + $0 } ?? ""), keep: 7))
            // What paged mode leaves out of this store: said while there is room.
            parts += pages.notes.map { .init(text: DisplayText.escaped($0), keep: 5) }
            if let sheet = current { parts.append(.init(text: "row \(sheet.count == 0 ? 0 : sheet.selection + 1)/\(sheet.isCounted ? String(sheet.count) : "…")", keep: 6)) }
        } else if let graph {
            parts.append(.init(text: graph.types.count.counting("type"), keep: 1))
            parts.append(.init(text: graph.objectCount.counting("object"), keep: 2))
            if let loadNote { parts.append(.init(text: DisplayText.escaped(loadNote), keep: 5)) }
            if let sheet = current { parts.append(.init(text: "row \(sheet.count == 0 ? 0 : sheet.selection + 1)/\(sheet.count)", keep: 6)) }
        } else if let progress {
            parts.append(.init(text: "loading \(progress.total > 0 ? progress.done * 100 / progress.total : 0)%", keep: 9))
        }
        return parts
    }
}
