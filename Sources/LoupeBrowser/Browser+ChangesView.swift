import DisplayText
import Foundation
import LoupeModel
import LoupeQuery

/// The changes view (`C`, `.changes-since`) and the diff view (`.diff FILE`): one row per object
/// changed, added or deleted — since the store was opened (or marked), or between this store and
/// another — with what changed (attribute by attribute, relation by relation), grouped by type.
/// Enter shows the row's object side by side, both versions; `o` there opens it in the browser.
/// The stores are read off the UI thread, and nothing read becomes what a commit checks against.
extension Browser {
    /// Reads the store again (or `.diff`'s other store) and compares, off the UI thread.
    func listChanges(_ request: ReplSession.ChangesSinceRequest, line: String) {
        guard let session else { return }
        if pages != nil {
            message = "comparing needs the whole store loaded: reopen with a larger --memory-budget, or compare copies with `loupe diff`"
            replOutput.append("error: \(message)")
            return
        }
        let host = self.host, path = storePath, base = session.pending.base
        let task = RunningTask(line: line, isLoad: false, verb: "comparing")
        start(task) {
            task.finish(.changesListed(request, Result {
                let now = try request.readNow(host: host, storePath: path, base: base, progress: { done, total in task.report(done, total) })
                return (now, try request.run(now: now))
            }))
        }
    }

    /// Shows what a comparison found: a view of the changes (or the new mark's line).
    func finishListingChanges(_ request: ReplSession.ChangesSinceRequest, _ result: Result<(now: ObjectGraph, changes: ReplSession.ChangesSince), any Error>,
                              session: ReplSession) {
        guard case .success(let (now, changes)) = result, !request.setsMark else {
            let reply = session.finishChangesSince(request, result)
            show(reply, for: nil)
            message = (reply.error ?? reply.output).split(separator: "\n").first.map(String.init) ?? ""
            return
        }
        replOutput.append(changes.headline)
        message = changes.headline
        guard !changes.changes.isEmpty, let graph else { return }
        var sheet = Browser.changesSheet(changes, graph: graph)
        sheet.comparison = Sheet.Comparison(old: request.mark.graph, new: now, oldLabel: request.other == nil ? "then (\(request.mark.label))" : "this store",
                                            newLabel: changes.otherName ?? "now",
                                            objects: changes.changes.map { ObjectIdentity(type: TypeName($0.type), id: $0.key) })
        push(sheet)
    }

    /// The changes as a view: a row per object (`+`, `~`, `−`; its type; its key; what changed),
    /// each row's object found in `graph` by identity (none for a deleted one).
    static func changesSheet(_ changes: ReplSession.ChangesSince, graph: ObjectGraph) -> Sheet {
        let rows: [[Value]] = changes.changes.map { change in
            [.string(change.sign), .string(change.type), change.key.value, .string(change.detail { $0 })]
        }
        let refs = changes.changes.map { graph.ref(ObjectIdentity(type: TypeName($0.type), id: $0.key)) }
        let crumb = changes.otherName.map { "differences with \($0)" } ?? "changes since \(changes.label)"
        return Sheet(content: .projection(columns: ["", "type", "key", "what changed"], rows: rows, refs: refs), crumb: crumb)
    }

    /// Enter on a row of a changes or diff view: the object's two versions side by side, a line
    /// per attribute and relation, those that differ marked `≠`.
    func showSideBySide(_ comparison: Sheet.Comparison, row: Int) {
        guard row < comparison.objects.count else { return }
        let object = comparison.objects[row]
        let old = comparison.old.ref(object).map { comparison.old.diffObject($0) }
        let new = comparison.new.ref(object).map { comparison.new.diffObject($0) }
        var names: [String] = []
        for name in (old?.names ?? []) + (new?.names ?? []) where !names.contains(name) { names.append(name) }
        func shown(_ side: DiffObject?, _ name: String) -> String { side.map { $0.text(of: name) ?? "" } ?? "—" }
        let nameWidth = min(24, names.map { DisplayText.width(of: $0) }.max() ?? 4)
        let valueWidth = 44
        func line(_ mark: String, _ name: String, _ a: String, _ b: String) -> String {
            mark + " " + DisplayText.pad(DisplayText.fit(name, width: nameWidth), to: nameWidth) + "  "
                + DisplayText.pad(DisplayText.fit(a, width: valueWidth), to: valueWidth) + " │ " + DisplayText.fit(b, width: valueWidth)
        }
        var lines = [line(" ", "", comparison.oldLabel, comparison.newLabel), ""]
        lines += names.map { name in
            let a = shown(old, name), b = shown(new, name)
            return line(old == nil || new == nil || a == b ? " " : "≠", name, a, b)
        }
        if old == nil { lines.append(""); lines.append("added: \(comparison.oldLabel) has no such object") }
        if new == nil { lines.append(""); lines.append("deleted: \(comparison.newLabel) has no such object") }
        dialog = Dialog(purpose: .compare(object), title: "\(object) — side by side", lines: lines, choices: "o opens it here · Esc/Enter close · PgUp/PgDn scroll")
    }

    /// `o` in the side-by-side view: the object in the records and detail panes, when the
    /// browser's store holds it.
    func openCompared(_ object: ObjectIdentity) {
        dialog = nil
        guard let graph, let ref = graph.ref(object) else { message = "\(object) is not in this store now"; return }
        let table = graph.table(ref)
        push(Sheet(content: .objects(type: table, refs: [ref]), crumb: object.description))
        focus = .detail
        detailSelection = initialDetailSelection()
    }
}

extension Sheet {
    /// What a changes or diff view compares: both stores, what each side is called, and the
    /// object of each row (in the rows' order), for the side-by-side view.
    public struct Comparison: Sendable {
        let old: ObjectGraph, new: ObjectGraph
        let oldLabel: String, newLabel: String
        var objects: [ObjectIdentity]
    }
}
