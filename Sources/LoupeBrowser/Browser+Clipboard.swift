import DisplayText
import Foundation
import LoupeModel
import LoupeQuery

/// What the browser asks of the terminal it runs on, which only its host can do: put text on
/// the clipboard, or lend the terminal to an editor. The host takes them after each key
/// (``Browser/takeRequests()``); tests read them the same way.
public enum TerminalRequest: Equatable, Sendable {
    /// Text for the clipboard (the ncurses backend writes OSC 52, which terminals forward over
    /// SSH, and tmux with `set-clipboard on`).
    case copy(String)
    /// A value to edit in `$VISUAL`/`$EDITOR`; the host calls ``Browser/finishExternalEdit(_:text:)``.
    case edit(ExternalEdit)
}

/// One value handed to an external editor: its text, and the cell it goes back into.
public struct ExternalEdit: Equatable, Sendable {
    public let text: String
    /// `Book #3.title`, for the file's name and messages.
    public let title: String
    let ref: ObjectRef
    let attribute: String
}

/// `y` copies the selected value, `Y` the selected row as one line of JSON; `E` edits the
/// selected value in an external editor and stages what it saves.
extension Browser {
    /// The requests made since the last call, oldest first.
    public func takeRequests() -> [TerminalRequest] {
        defer { requests = [] }
        return requests
    }

    /// The selected cell's (records) or attribute's (detail) value, with its place: `Book #3.title`.
    func selectedValue() -> (title: String, value: Value)? {
        guard let graph else { return nil }
        if focus == .detail, let ref = selectedObject {
            let items = detailItems()
            guard detailSelection < items.count, case .attribute(let a) = items[detailSelection] else { return nil }
            let table = graph.table(ref)
            return ("\(graph.label(of: ref)).\(table.attributes[a].name)", table.value(row: Int(ref.row), attribute: a))
        }
        guard let sheet = current, sheet.count > 0 else { return nil }
        let columns = sheet.columns(graph: graph)
        guard sheet.column < columns.count else { return nil }
        let place = sheet.ref(at: sheet.selection).map { graph.label(of: $0) } ?? "row \(sheet.selection + 1)"
        return ("\(place).\(columns[sheet.column])", sheet.value(row: sheet.selection, column: sheet.column, graph: graph))
    }

    /// `y`: the selected value's text on the clipboard (text as it is, dates in ISO 8601,
    /// nested values as JSON).
    func copySelectedValue() {
        guard let (title, value) = selectedValue() else { message = "y copies a value: select a cell or an attribute"; return }
        let text: String
        switch value {
        case .array, .object: text = ValueFormatter.json(value)
        default: text = value.isNull ? "" : Browser.editableText(value)
        }
        requests.append(.copy(text))
        message = "copied \(title) (\(text.count.counting("character")))"
    }

    /// `Y`: the selected row as one line of JSON (as `--format ndjson` writes it) on the clipboard.
    func copySelectedRow() {
        guard let graph, let sheet = current, sheet.count > 0 else { message = "Y copies a row: select one"; return }
        let row = sheet.selection
        let result: QueryResult
        switch sheet.content {
        case .objects, .paged:
            guard let ref = sheet.ref(at: row) else { return }
            result = .objects(type: graph.table(ref), refs: [ref])
        case .projection(let columns, let rows, _):
            result = .projection(columns: columns, rows: [rows[row]], refs: [])
        case .frequency(let column, let rows, _):
            result = .groups(key: column, rows: [rows[row]], objects: [])
        case .pagedFrequency(let table):
            result = .groups(key: table.column, rows: [table.rows[row]], objects: [])
        }
        let json = result.render(.ndjson, graph: graph).trimmingCharacters(in: .newlines)
        requests.append(.copy(json))
        message = "copied row \(row + 1) as JSON (\(json.count.counting("character")))"
    }

    /// `E`: the selected value in `$VISUAL`/`$EDITOR` (the host runs it and calls
    /// ``finishExternalEdit(_:text:)``); a relation is picked with `e`.
    func editSelectedExternally() {
        guard let graph, let target = selectedEditTarget() else { return }
        guard case .attribute(let ref, let attribute) = target else { message = "E edits a value; e picks a relation's target"; return }
        let value = graph.table(ref).value(row: Int(ref.row), named: attribute)
        requests.append(.edit(ExternalEdit(text: value.isNull ? "" : Browser.editableText(value), title: "\(graph.label(of: ref)).\(attribute)",
                                           ref: ref, attribute: attribute)))
    }

    /// What the editor saved for `edit` (nil: it failed or was left without saving): staged as
    /// the cell editor stages it when it changed; refused, it stays in the cell editor to fix.
    public func finishExternalEdit(_ edit: ExternalEdit, text: String?) {
        guard let text else { message = "not changed: the editor did not save"; return }
        guard text != edit.text else { message = "not changed"; return }
        guard graph != nil else { return }
        previousFocus = focus
        inputMode = .editValue(edit.ref, attribute: edit.attribute)
        focus = .repl
        submitEdit(text, ref: edit.ref, attribute: edit.attribute)
    }
}
