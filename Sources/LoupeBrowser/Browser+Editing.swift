import DisplayText
import Foundation
import LoupeModel
import LoupeQuery
import TerminalKit

/// Editing in the browser: `e` edits the selected cell or attribute in place (or a relation,
/// through a picker), `a` adds an object, `d` marks one for deletion, `U`/`R` undo and redo,
/// `Ctrl-S` shows the exact writes and commits them. Every action is one step of the session's
/// pending changes, labelled by the statement it stands for; nothing is written before a commit.
extension Browser {
    /// A searchable list of the objects a relation can point at, to set a to-one (or clear it)
    /// or to add and remove a to-many's targets.
    struct Picker {
        /// What a pick sets: a relation of an object (staged at once), or a field of the add form.
        enum Target { case relation(owner: ObjectRef, name: String), formField(Int) }
        let target: Target
        /// What the title names: `Album #1.Artist`, `New Album.ArtistId`.
        let title: String
        let toMany: Bool
        let candidates: [ObjectRef]
        var current: Set<ObjectRef>
        var filter = ""
        var visible: [ObjectRef?] = []   // nil: "(none)", which clears a to-one
        var selection = 0
        var top = 0
    }

    /// A question over the screen: the commit preview, the quit guard, a value, the conflicts
    /// with another process's commit.
    struct Dialog {
        enum Purpose: Equatable { case commit, quit, value, conflicts, compare(ObjectIdentity), log }
        let purpose: Purpose
        let title: String
        let lines: [String]
        let choices: String
        var top = 0
    }

    /// The pending changes, when any are staged.
    var pendingChanges: PendingChanges? {
        guard let pending = session?.pending, !pending.isEmpty else { return nil }
        return pending
    }

    // MARK: Staging

    /// Stages a step and shows the staged graph; a refusal becomes the message, nothing staged.
    func stage(_ step: EditStep) {
        if pages != nil { stagePaged(step); return }
        guard let session else { return }
        var pending = session.pending
        do { try pending.stage(step) } catch {
            message = "not staged: \(error)"
            return
        }
        session.replacePending(pending)
        adopt(pending.graph, remap: false)
        message = "staged: \(step.label)" + (step.effects.map { " (\($0))" } ?? "") + " · \(session.pendingSummary)"
    }

    /// `U` and `R`: one step back or forward.
    func undoOrRedo(_ undo: Bool) {
        guard let session else { return }
        var pending = session.pending
        guard let step = undo ? pending.undo() : pending.redo() else {
            message = undo ? "nothing to undo" : "nothing to redo"
            return
        }
        session.replacePending(pending)
        if pages != nil { pagedChanges?.adopt(pending); refreshPagedViews() } else { adopt(pending.graph, remap: false) }
        message = "\(undo ? "undone" : "redone"): \(step.label)"
    }

    /// The type of the object an edit names, or why it cannot be edited.
    private func editable(_ ref: ObjectRef) -> TypeTable? {
        guard let graph else { return nil }
        let table = graph.table(ref)
        if let reason = table.readOnlyReason { message = "\(table.name) is read-only: \(reason)"; return nil }
        if !table.isLive(Int(ref.row)) { message = "\(graph.label(of: ref)) is marked for deletion (U undoes)"; return nil }
        return table
    }

    /// `where id == 12` for a statement that names one object.
    func whereClause(_ ref: ObjectRef) -> String {
        guard let graph else { return "" }
        return "where id == " + Browser.sourceLiteral(graph.id(of: ref).value)
    }

    /// A value written as a literal of the language (for step labels).
    static func sourceLiteral(_ value: Value) -> String {
        switch value {
        case .null: return "nil"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return ValueFormatter.number(d)
        case .string(let s): return "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n") + "\""
        case .date(let d): return DateText.iso(d)
        case .array(let items): return "{" + items.map(sourceLiteral).joined(separator: ", ") + "}"
        default: return ValueFormatter.json(value)
        }
    }

    // MARK: e, a, d

    /// What `e` and `E` edit: the selected cell's or detail item's attribute, or a relation.
    enum EditTarget {
        case attribute(ObjectRef, String)
        case relation(ObjectRef, RelationColumn)
    }

    /// The selected cell's or detail item's edit target; nil (with the reason on the status
    /// line) when there is none: no object, a read-only type, a key, a backlink, a generated column.
    func selectedEditTarget() -> EditTarget? {
        guard let graph, let ref = selectedObject else { message = "no object selected"; return nil }
        guard let table = editable(ref) else { return nil }
        var attribute: String
        if focus == .detail {
            let items = detailItems()
            guard detailSelection < items.count else { return nil }
            switch items[detailSelection] {
            case .attribute(let a): attribute = table.attributes[a].name
            case .link(let link):
                guard let r = link.relation else { message = "a backlink changes from the other side: open it and edit there"; return nil }
                return .relation(ref, table.relations[r])
            }
        } else if let sheet = current, sheet.showsObjects {
            let columns = sheet.columns(graph: graph)
            guard sheet.column < columns.count else { return nil }
            let name = columns[sheet.column]
            if name == "id" || name == "@type" { message = "the key cannot be edited: it is the object's identity"; return nil }
            // A relation column: choose its target.
            if table.attributeIndex[name] == nil, let r = table.relation(named: name) { return .relation(ref, table.relations[r]) }
            attribute = name
        } else {
            message = "e edits the cells of objects"
            return nil
        }
        if let a = table.attributeIndex[attribute], table.attributes[a].storage?.isGenerated == true {
            message = "\(attribute) is a generated column"
            return nil
        }
        return .attribute(ref, attribute)
    }

    /// `e`: the selected value in the cell editor, or a relation's picker.
    func editSelected() {
        guard let graph, let target = selectedEditTarget() else { return }
        switch target {
        case .relation(let ref, let relation): openPicker(ref, relation)
        case .attribute(let ref, let attribute):
            let value = graph.table(ref).value(row: Int(ref.row), named: attribute)
            inputMode = .editValue(ref, attribute: attribute)
            editor.set(value.isNull ? "" : Browser.editableText(value))
            focus = .repl
        }
    }

    /// A value as the line editor shows it for editing.
    static func editableText(_ value: Value) -> String {
        switch value {
        case .date(let d): return DateText.iso(d)
        case .string(let s): return s
        default: return ValueFormatter.plain(value)
        }
    }

    /// Enter in the cell editor: the text read as the column's kind, staged, or refused with the reason.
    func submitEdit(_ text: String, ref: ObjectRef, attribute: String) {
        guard let graph else { return }
        if pages != nil { submitPagedEdit(text, ref: ref, attribute: attribute); return }
        do {
            let value = try Editor(graph: graph).typedValue(text, for: ref, attribute: attribute)
            let label = "update \(graph.table(ref).name) \(whereClause(ref)) set \(attribute) = \(Browser.sourceLiteral(value))"
            stage(EditStep(label: label, edits: [.set(graph.identity(of: ref), attribute: attribute, value: value)]))
            inputMode = .statement
            focus = previousFocus
        } catch let error as QueryError {
            // Refused: the editor stays open with the text, the reason on the status line.
            editor.set(text)
            message = "refused: \(error.message)" + (error.hint.map { " — \($0)" } ?? "")
        } catch {
            editor.set(text)
            message = "refused: \(error)"
        }
    }

    /// `d`: marks the selected object for deletion (following declared ON DELETE actions).
    func deleteSelected() {
        guard let graph, let ref = selectedObject else { message = "no object selected"; return }
        guard let table = editable(ref) else { return }
        do {
            stage(try Editor(graph: graph).deletionStep([ref], label: "delete \(table.name) \(whereClause(ref))"))
        } catch let error as QueryError {
            message = "not deleted: \(error.message)" + (error.hint.map { " — \($0)" } ?? "")
        } catch { message = "not deleted: \(error)" }
    }

    /// The type the records pane shows.
    var currentType: TypeTable? {
        if case .objects(let type?, _)? = current?.content { return type }
        if case .paged(let rows)? = current?.content { return rows.type }
        return nil
    }

    // MARK: The relation picker

    func openPicker(_ ref: ObjectRef, _ relation: RelationColumn) {
        guard let graph else { return }
        if pages != nil {
            // The candidates are every object of the target types: a store too large to load.
            message = "paged mode: set \(relation.name) at the REPL (update \(graph.table(ref).name) \(whereClause(ref)) set \(relation.name) = #key)"
            return
        }
        let types = relation.foreignKey.map { [$0.targetType] } ?? relation.targetTypes
        guard !types.isEmpty else { message = "\(relation.name) has no known target type yet: set it at the REPL (update … set \(relation.name) = #key)"; return }
        let candidates = types.flatMap { t in graph.types[t].liveRows.map { ObjectRef(type: t, row: $0) } }
        var picker = Picker(target: .relation(owner: ref, name: relation.name), title: "\(graph.label(of: ref)).\(relation.name)",
                            toMany: relation.isToMany, candidates: candidates, current: Set(relation.targets(of: Int(ref.row))))
        filterPicker(&picker)
        self.picker = picker
    }

    func filterPicker(_ picker: inout Picker) {
        guard let graph else { return }
        let needle = picker.filter.lowercased()
        var visible: [ObjectRef?] = []
        // The current targets first, then the others.
        let ordered = picker.candidates.filter { picker.current.contains($0) } + picker.candidates.filter { !picker.current.contains($0) }
        for ref in ordered where needle.isEmpty || objectLabel(ref).lowercased().contains(needle) || "\(graph.id(of: ref))" == needle {
            visible.append(ref)
        }
        // "(none)" clears a to-one: first while nothing is typed, after the matches once a
        // filter is (so that typing a name and Enter picks the first match, as fzf does).
        if !picker.toMany { if needle.isEmpty { visible.insert(nil, at: 0) } else { visible.append(nil) } }
        picker.visible = visible
        picker.selection = min(picker.selection, max(0, visible.count - 1))
    }

    /// `Author #89 Zoë Ito`: an object's label with its first text attribute.
    func objectLabel(_ ref: ObjectRef) -> String {
        guard let graph else { return "" }
        return Sheet.label(ref, in: graph)
    }

    /// Stages `chosen` as `owner`'s `relation` (added or removed from a to-many); true when the
    /// picker stays open (a to-many one, to add or remove more).
    private func pick(_ chosen: ObjectRef?, for relation: String, of owner: ObjectRef, graph: ObjectGraph, picker: inout Picker) -> Bool {
        let table = graph.table(owner)
        let name = table.name.rawValue
        let statement: String
        var targets: [ObjectRef]
        if picker.toMany {
            guard let chosen else { return true }
            let current = Array(table.relations[table.relation(named: relation)!].targets(of: Int(owner.row)))
            if current.contains(chosen) {
                targets = current.filter { $0 != chosen }
                statement = "update \(name) \(whereClause(owner)) set \(relation) -= #\(graph.id(of: chosen))"
            } else {
                targets = current + [chosen]
                statement = "update \(name) \(whereClause(owner)) set \(relation) += #\(graph.id(of: chosen))"
            }
        } else {
            targets = chosen.map { [$0] } ?? []
            statement = "update \(name) \(whereClause(owner)) set \(relation) = " + (chosen.map { "#\(graph.id(of: $0))" } ?? "nil")
        }
        do {
            stage(try relationStep(owner, relation: relation, targets: targets, label: statement))
        } catch let error as QueryError {
            message = "not staged: \(error.message)" + (error.hint.map { " — \($0)" } ?? "")
        } catch { message = "not staged: \(error)" }
        guard picker.toMany, let session else { return false }
        let now = session.engine.graph.table(owner)
        picker.current = Set(now.relation(named: relation).map { now.relations[$0].targets(of: Int(owner.row)) } ?? [])
        filterPicker(&picker)
        return true
    }

    func handlePickerKey(_ key: Key) {
        guard var picker, let graph else { return }
        let page = 10
        switch key {
        case .escape, .control("c"): self.picker = nil; return
        case .up: picker.selection = max(0, picker.selection - 1)
        case .down: picker.selection = min(max(0, picker.visible.count - 1), picker.selection + 1)
        case .pageUp: picker.selection = max(0, picker.selection - page)
        case .pageDown: picker.selection = min(max(0, picker.visible.count - 1), picker.selection + page)
        case .backspace:
            if !picker.filter.isEmpty { picker.filter.removeLast(); filterPicker(&picker) }
        case .character(let c):
            picker.filter.append(c)
            picker.selection = 0
            filterPicker(&picker)
        case .enter:
            guard picker.selection < picker.visible.count else { return }
            let chosen = picker.visible[picker.selection]
            switch picker.target {
            case .formField(let field):
                fillFormField(field, with: chosen)
                self.picker = nil
                return
            case .relation(let owner, let relation):
                guard pick(chosen, for: relation, of: owner, graph: graph, picker: &picker) else { self.picker = nil; return }
            }
        default: break
        }
        let height = max(1, layout.pickerBody.height)
        if picker.selection < picker.top { picker.top = picker.selection }
        if picker.selection >= picker.top + height { picker.top = picker.selection - height + 1 }
        self.picker = picker
    }

    /// The step that sets a relation's targets, through the editor (which writes a foreign key's
    /// column for relational files).
    func relationStep(_ owner: ObjectRef, relation: String, targets: [ObjectRef], label: String) throws -> EditStep {
        guard let graph else { throw QueryError("no store", at: SourceRange(0, 0)) }
        let table = graph.table(owner)
        guard let r = table.relation(named: relation) else { throw QueryError("no relation \(relation)", at: SourceRange(0, 0)) }
        if let fk = table.relations[r].foreignKey {
            let value: Value
            if let target = targets.first {
                value = fk.targetAttribute.map { graph.table(target).value(row: Int(target.row), named: $0) } ?? graph.id(of: target).value
            } else {
                value = .null
            }
            let checked = try Editor(graph: graph).typedValue(value.isNull ? "nil" : Browser.editableText(value), for: owner, attribute: fk.attribute)
            return EditStep(label: label, edits: [.set(graph.identity(of: owner), attribute: fk.attribute, value: checked)])
        }
        return EditStep(label: label, edits: [.link(graph.identity(of: owner), relation: table.relations[r].name, targets: targets.map(graph.identity(of:)))])
    }

    // MARK: Commit and quit

    /// `Ctrl-S`: the pending steps and their exact writes, then Enter commits.
    /// The preview reads the file (250k documents take about a second): it runs off the UI
    /// thread like a statement, and the dialog opens when it is ready.
    func showCommitPreview() {
        guard let session else { return }
        guard !session.pending.isEmpty else { message = "no pending changes"; return }
        if live?.incoming != nil { showConflicts(); return }
        let summary = session.changesSummaryLines()
        guard let host else {
            showPreviewDialog(summary)
            return
        }
        let pending = session.pending
        let task = RunningTask(line: "preview", isLoad: false)
        start(task) {
            task.finish(.previewed(summary, Result { try host.preview(pending, maxLines: ReplSession.previewLines) }))
        }
    }

    /// Opens the commit dialog on the steps and, when a host previewed them, their writes.
    func showPreviewDialog(_ summary: [String], writes: String? = nil) {
        guard let session else { return }
        let lines = summary + (writes.map { ReplSession.writesLines($0, committedBy: "Enter") } ?? [])
        dialog = Dialog(purpose: .commit, title: "Commit — \(session.pendingSummary)", lines: lines,
                        choices: "Enter commits · Esc returns · PgUp/PgDn scroll")
    }

    /// Quitting with pending changes asks first: commit, discard, or stay.
    /// Returns true when the browser may quit now.
    @discardableResult
    public func requestQuit() -> Bool {
        guard let session, !session.pending.isEmpty else { wantsQuit = true; return true }
        dialog = Dialog(purpose: .quit, title: "\(session.pendingSummary)",
                        lines: ["Quit with changes that are not written?", "",
                                "  c  commit them, then quit", "  d  discard them and quit", "  Esc  stay"],
                        choices: "c commit · d discard · Esc stay")
        return false
    }

    func handleDialogKey(_ key: Key) {
        guard var dialog else { return }
        if dialog.purpose == .conflicts { handleConflictKey(key); return }
        switch (dialog.purpose, key) {
        case (_, .escape), (_, .control("c")), (.quit, .character("s")), (.value, .enter), (.value, .character("q")), (.value, .character("V")),
             (.compare, .enter), (.compare, .character("q")), (.log, .enter), (.log, .character("q")), (.log, .character("M")):
            self.dialog = nil
        case (.compare(let object), .character("o")):
            openCompared(object)
        case (_, .pageDown), (_, .down), (_, .character("j")):
            dialog.top = min(max(0, dialog.lines.count - 1), dialog.top + (key == .pageDown ? 10 : 1))
            self.dialog = dialog
        case (_, .pageUp), (_, .up), (_, .character("k")):
            dialog.top = max(0, dialog.top - (key == .pageUp ? 10 : 1))
            self.dialog = dialog
        case (.commit, .enter), (.quit, .character("c")):
            let quitting = dialog.purpose == .quit
            self.dialog = nil
            guard let session else { return }
            replOutput.append("loupe> .commit")
            quitAfterCommit = quitting
            commit(session.pending, line: ".commit")
        case (.quit, .character("d")):
            self.dialog = nil
            wantsQuit = true
        default: break
        }
    }
}
