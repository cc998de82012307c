import DisplayText
import Foundation
import LoupeModel
import LoupeQuery
import TerminalKit

/// `a`: a form for a new object of the current type, one field a line — each attribute with its
/// kind, `NOT NULL` and default shown (a key the store assigns left out), each to-one relation
/// without a foreign key as its target's key. Tab and Down go to the next field, Enter too (on
/// the last it stages), Ctrl-S stages from anywhere, Esc leaves; on a field that names an object
/// (a foreign key, a relation) Ctrl-P opens the picker over the target's objects, as `e` does on a
/// relation. The form stages one `insert`, checked as the REPL checks one; a refusal stays in the
/// form with its reason.
struct AddForm {
    struct Field {
        let name: String
        /// What goes in it: `integer · NOT NULL`, `text · default 'x'`, `→ Author: its key`.
        let note: String
        /// True when the insert is refused without it (NOT NULL without a default).
        let required: Bool
        /// True for a relation: the text is the target's key.
        let isRelation: Bool
        /// The types whose objects Ctrl-P offers (empty: the field names no object).
        var targets: [Int] = []
        /// The target's column a foreign key holds the value of (nil: the target's key).
        var targetColumn: String? = nil
        var text = ""
    }
    let type: Int
    var fields: [Field]
    var selection = 0
    /// Why the last try was refused.
    var error: String?
}

extension Browser {
    /// Opens the form for the current type (refused, with the reason, for a read-only one).
    func openAddForm() {
        guard let graph, let type = currentType else { message = "a adds an object of the type shown"; return }
        if let reason = type.readOnlyReason { message = "\(type.name) is read-only: \(reason)"; return }
        let fields = Self.formFields(type, graph: graph)
        guard !fields.isEmpty else { message = "\(type.name) has no attribute to fill: insert \(type.name) {} at the REPL"; return }
        form = AddForm(type: type.index, fields: fields)
        editor.set("")
    }

    /// A type's fields: its attributes (not a key the store assigns, not a generated column), then
    /// its to-one relations that no attribute holds.
    static func formFields(_ type: TypeTable, graph: ObjectGraph) -> [AddForm.Field] {
        var fields: [AddForm.Field] = []
        for a in type.attributes where a.storage?.isGenerated != true {
            if case .column(let key, true) = type.keyPolicy, key == a.name { continue }
            var parts = [a.storage.map { $0.declaredType.isEmpty ? "any" : $0.declaredType.lowercased() } ?? a.kinds.subtracting(.null).description]
            let required = a.storage.map { $0.notNull && $0.defaultSQL == nil } ?? false
            if let s = a.storage, s.notNull { parts.append("NOT NULL") }
            if let d = a.storage?.defaultSQL { parts.append("default \(d)") }
            let fk = type.relation(heldBy: a.name)?.foreignKey
            if let fk { parts += ["→ \(graph.types[fk.targetType].name)", "Ctrl-P picks"] }
            fields.append(AddForm.Field(name: a.name, note: parts.filter { !$0.isEmpty }.joined(separator: " · "), required: required, isRelation: false,
                                        targets: fk.map { [$0.targetType] } ?? [], targetColumn: fk?.targetAttribute))
        }
        for r in type.relations where !r.isToMany && r.foreignKey == nil && type.attributeIndex[r.name] == nil {
            let targets = r.targetTypes.map { graph.types[$0].name.rawValue }.joined(separator: "|")
            fields.append(AddForm.Field(name: r.name, note: "→ \(targets.isEmpty ? "an object" : targets): its key" + (r.targetTypes.isEmpty ? "" : " · Ctrl-P picks"),
                                        required: false, isRelation: true, targets: r.targetTypes))
        }
        return fields
    }

    /// A key while the form is open.
    func handleFormKey(_ key: Key) {
        guard var form else { return }
        form.fields[form.selection].text = editor.text
        switch key {
        case .escape: self.form = nil; editor.set(""); message = "nothing added"; return
        case .tab, .down: form.selection = (form.selection + 1) % form.fields.count
        case .backTab, .up: form.selection = (form.selection + form.fields.count - 1) % form.fields.count
        case .enter where form.selection < form.fields.count - 1: form.selection += 1
        case .enter, .control("s"): self.form = form; submitForm(); return
        case .control("p"): self.form = form; openFormPicker(); return
        default:
            self.form = form
            _ = editor.handle(key)
            return
        }
        editor.set(form.fields[form.selection].text)
        self.form = form
    }

    /// Ctrl-P on the selected field: the picker over the objects it may name (loaded only: paged
    /// mode has too many to list, and the key is typed).
    func openFormPicker() {
        guard let graph, let form else { return }
        let field = form.fields[form.selection]
        guard !field.targets.isEmpty else { message = "\(field.name) names no object: type its value"; return }
        guard pages == nil else { message = "paged mode: type the key of the \(graph.types[field.targets[0]].name) (the picker lists a loaded store's objects)"; return }
        let candidates = field.targets.flatMap { t in graph.types[t].liveRows.map { ObjectRef(type: t, row: $0) } }
        var picker = Picker(target: .formField(form.selection), title: "New \(graph.types[form.type].name).\(field.name)", toMany: false,
                            candidates: candidates, current: [])
        filterPicker(&picker)
        self.picker = picker
    }

    /// A pick for field `index` of the form: the chosen object's key (or the column its foreign
    /// key holds), as the field is typed; "(none)" empties it.
    func fillFormField(_ index: Int, with chosen: ObjectRef?) {
        guard var form, let graph, form.fields.indices.contains(index) else { return }
        let field = form.fields[index]
        var text = ""
        if let chosen {
            let id = graph.id(of: chosen)
            if field.isRelation { text = id.description }
            else if let column = field.targetColumn { text = Browser.editableText(graph.table(chosen).value(row: Int(chosen.row), named: column)) }
            else { text = Browser.editableText(id.value) }
        }
        form.fields[index].text = text
        if form.selection == index { editor.set(text) }
        self.form = form
    }

    /// Stages the form's insert, or keeps the form open with why it was refused.
    func submitForm() {
        guard let graph, var form else { return }
        let type = graph.types[form.type]
        do {
            let statement = try formStatement(form, type: type, graph: graph)
            if pages != nil {
                // Paged: the store assigns the key and checks it (the window holds a few rows).
                self.form = nil
                editor.set("")
                run(statement)
                return
            }
            guard case .mutation(let mutation) = try Parser.parse(statement) else { return }
            stage(try Editor(graph: graph).step(for: mutation, source: statement))
            self.form = nil
            editor.set("")
        } catch let error as QueryError {
            form.error = error.message + (error.hint.map { " — \($0)" } ?? "")
            self.form = form
        } catch {
            form.error = "\(error)"
            self.form = form
        }
    }

    /// `insert Type { name: value, … }` of the fields filled, each read as its column wants it.
    func formStatement(_ form: AddForm, type: TypeTable, graph: ObjectGraph) throws -> String {
        let editor = Editor(graph: graph)
        var assignments: [String] = []
        for field in form.fields {
            let text = field.text.trimmingCharacters(in: .whitespaces)
            if text.isEmpty {
                if field.required { throw QueryError("\(field.name) is required (NOT NULL, no default)", at: SourceRange(0, 0)) }
                continue
            }
            let value = field.isRelation ? "#" + (text.hasPrefix("#") ? String(text.dropFirst()) : text)
                : Browser.sourceLiteral(try editor.typedValue(text, in: type, attribute: field.name))
            assignments.append("\(SourceSpelling.name(field.name)): \(value)")
        }
        return "insert \(SourceSpelling.name(type.name.rawValue)) { " + assignments.joined(separator: ", ") + " }"
    }

    /// The form over the screen, while it is open.
    var formPopup: FormPopup? {
        guard let form, let graph else { return nil }
        var fields = form.fields
        fields[form.selection].text = editor.text
        return FormPopup(title: "New \(graph.types[form.type].name) — Tab next · Ctrl-P picks · Enter on the last or Ctrl-S stages · Esc leaves",
                         fields: fields, selection: form.selection, cursor: editor.cursor, error: form.error, theme: theme)
    }
}
