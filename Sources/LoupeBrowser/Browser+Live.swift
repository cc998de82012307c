import Foundation
import LoupeModel
import LoupeQuery
import TerminalKit

/// What the browser shows of commits another process makes to the loaded store (live mode): the
/// views read the store again in place, objects added and cells changed by a commit are marked for
/// a few seconds, and the status line says the store is live and how many commits were seen.
public struct LiveState: Sendable {
    /// Commits seen since the store was opened (several between two looks count as one).
    public internal(set) var commits = 0
    /// Objects the last commits added, and the attributes and relations they changed, by object.
    var added: Set<ObjectIdentity> = []
    var changed: [ObjectIdentity: Set<String>] = [:]
    /// When the marks were made; they fade after ``LiveState/markSeconds``.
    var markedAt = Date.distantPast
    /// A commit that touched pending edits, waiting for the user to decide each conflict; the
    /// views show the store as it was until then, and nothing is committed.
    var incoming: LiveIncoming?

    /// How many conflicts wait for a choice.
    public var conflictsWaiting: Int { incoming?.conflicts.count ?? 0 }

    /// The rows of the sheet on screen that the last commit deleted, shown where they were
    /// (struck out: dim, marked `−`) until the next key.
    var ghosts: [LiveGhost] = []

    /// How long a commit's marks stay.
    static let markSeconds = 4.0

    /// True while the last commit's marks are shown.
    var isMarking: Bool { Date().timeIntervalSince(markedAt) < Self.markSeconds && (!added.isEmpty || !changed.isEmpty) }
}

/// A row of the sheet on screen that another process's commit deleted: what it showed, and
/// where, so that it stays in view, struck out, until the user moves on.
struct LiveGhost: Sendable {
    /// The sheet's place in the stack (its count then): ghosts show on that sheet only.
    let depth: Int
    /// Its place among the sheet's rows now: before the row that followed it.
    let position: Int
    /// Its cells, by column name, as they were.
    let cells: [String: Value]
}

/// What one live reload found between the graph shown and the store read again.
struct LiveChanges: Sendable {
    var added: Set<ObjectIdentity> = []
    /// The attributes and relations changed, by object.
    var changed: [ObjectIdentity: Set<String>] = [:]
    var removed: Set<ObjectIdentity> = []

    /// The objects added, changed (and what of them) and removed between `old` and `new`.
    init(from old: ObjectGraph, to new: ObjectGraph) throws {
        try StoreDiff(GraphDiffSide(old), GraphDiffSide(new)).run { event in
            guard case .change(let change) = event else { return }
            let identity = ObjectIdentity(type: TypeName(change.type), id: change.key)
            switch change.kind {
            case .added: added.insert(identity)
            case .removed: removed.insert(identity)
            case .changed: changed[identity] = Set(change.attributes.map(\.name) + change.relations.map(\.name))
            }
        }
    }

    var isEmpty: Bool { added.isEmpty && changed.isEmpty && removed.isEmpty }

    /// `+1 ~2 −0`.
    var figures: String { "+\(added.count) ~\(changed.count) −\(removed.count)" }
}

/// A commit read while edits were pending, and the pending edits it touched.
struct LiveIncoming: Sendable {
    let graph: ObjectGraph
    let changes: LiveChanges
    var conflicts: [LiveConflict]
    var selection = 0
}

/// One value both the user (a pending edit) and another process (a commit) changed: the
/// object, the attribute or relation (none: the user deletes what they changed), the value
/// before, the user's and theirs, and the user's choice once made.
struct LiveConflict: Sendable {
    let object: ObjectIdentity
    let name: String?
    let was: String, mine: String, theirs: String
    /// The pending edits the choice keeps or drops, as (step, edit) indices among the steps.
    let edits: [EditAddress]
    var keepsMine: Bool?

    struct EditAddress: Hashable, Sendable { let step: Int, edit: Int }

    /// The conflicts between `pending` (staged over `old`) and the commit that made `new`
    /// (`changes`): an attribute or relation both changed, an object the user deletes that
    /// they changed. Edits of objects they deleted are not choices: staged again, they no
    /// longer apply, and are listed as dropped.
    static func find(_ pending: PendingChanges, _ changes: LiveChanges, old: ObjectGraph, new: ObjectGraph) -> [LiveConflict] {
        var order: [String] = []
        var found: [String: (object: ObjectIdentity, name: String?, mine: String, edits: [EditAddress])] = [:]
        for (s, step) in pending.active.enumerated() {
            for (e, edit) in step.edits.enumerated() {
                guard let touched = changes.changed[edit.object] else { continue }
                let name: String?, mine: String
                switch edit {
                case .set(_, let attribute, let value) where touched.contains(attribute): (name, mine) = (attribute, ValueFormatter.json(value))
                case .link(_, let relation, let targets) where touched.contains(relation): (name, mine) = (relation, targets.map(\.description).joined(separator: ", "))
                case .remove: (name, mine) = (nil, "deleted")
                default: continue
                }
                let key = "\(edit.object)\u{0}\(name ?? "")"
                if found[key] == nil { order.append(key) }
                found[key] = (edit.object, name, mine, (found[key]?.edits ?? []) + [EditAddress(step: s, edit: e)])
            }
        }
        return order.compactMap { found[$0] }.map { f in
            LiveConflict(object: f.object, name: f.name, was: describe(f.object, f.name, in: old), mine: f.mine,
                         theirs: describe(f.object, f.name, in: new), edits: f.edits)
        }
    }

    /// The object's value of `name` in `graph` as a conflict shows it (its whole change, when
    /// `name` is nil: what a deletion would throw away).
    static func describe(_ object: ObjectIdentity, _ name: String?, in graph: ObjectGraph) -> String {
        guard let ref = graph.ref(object) else { return "deleted" }
        let shown = graph.diffObject(ref)
        guard let name else { return shown.attributes.map { "\($0.name): \(ValueFormatter.json($0.value))" }.joined(separator: ", ") }
        return shown.text(of: name) ?? "null"
    }

    /// `conflicts` with the choices `earlier` made for the same values (an earlier look at the
    /// same commit, or the conflicts before the user staged more) where they still stand.
    static func keepingChoices(_ conflicts: [LiveConflict], of earlier: [LiveConflict]) -> [LiveConflict] {
        conflicts.map { c in
            var c = c
            c.keepsMine = earlier.first { $0.object == c.object && $0.name == c.name && $0.theirs == c.theirs && $0.mine == c.mine }?.keepsMine
            return c
        }
    }

    /// `Album #5 · Title: was "A" · yours "B" · theirs "C"`, or for a deletion `Album #5 · you
    /// delete it · they changed it to Title: "C", …`.
    var line: String {
        guard let name else { return "\(object) · you delete it · they changed it: \(theirs)" }
        return "\(object) · \(name): was \(was) · yours \(mine) · theirs \(theirs)"
    }
}

extension Browser {
    /// Tells the browser its store's file moved (another process committed: the executable
    /// watches the file's stamp). A loaded store is read again off the UI thread and compared
    /// with the state its edits were made on; every view is refreshed in place (the selection
    /// kept by key) and pending edits are staged again over it — unless the commit changed what
    /// an edit changes, which is then a conflict the user decides (``LiveConflict``) before the
    /// views move on or anything is committed. In paged mode the store is opened again as
    /// `.reload` opens it: the visible rows and the counts read again, pending edits staged
    /// over it (their rows are checked at commit, as always).
    public func storeChangedOnDisk() {
        if pages != nil, let changes = pagedChanges, host is PagedSessionHost {
            if live == nil { live = LiveState() }
            guard running == nil else { liveRefreshWaiting = true; return }
            live?.commits += 1
            isLiveReopen = true
            reopenPaged(changes)
            return
        }
        guard pages == nil, graph != nil, let host, let path = storePath, let session else { return }
        if live == nil { live = LiveState() }
        guard running == nil else { liveRefreshWaiting = true; return }
        let old = session.pending.base
        let task = RunningTask(line: ".reload", isLoad: true, verb: "refreshing", isLiveRefresh: true)
        start(task) {
            // Read and compared off the UI thread: a large store's diff takes a while.
            task.finish(.refreshed(Result {
                let new = try host.load(path: path, progress: { done, total in task.report(done, total) })
                return (new, try LiveChanges(from: old, to: new))
            }))
        }
    }

    /// Takes a live reload: adopted at once when no pending edit conflicts with it, else the
    /// conflicts are offered (the views wait for the choice).
    func finishLiveReload(_ result: Result<(graph: ObjectGraph, changes: LiveChanges), any Error>, session: ReplSession) {
        guard case .success(let (new, changes)) = result else {
            if case .failure(let error) = result { message = "cannot read the store again: \(error)" }
            return
        }
        if !changes.isEmpty { live?.commits += 1 }
        let conflicts = LiveConflict.find(session.pending, changes, old: session.pending.base, new: new)
        guard conflicts.isEmpty else {
            // Choices already made for the same values (an earlier look at this commit) stand.
            let earlier = live?.incoming?.conflicts ?? []
            live?.incoming = LiveIncoming(graph: new, changes: changes, conflicts: LiveConflict.keepingChoices(conflicts, of: earlier))
            showConflicts()
            return
        }
        adoptIncoming(new, changes, session: session, dropping: [])
    }

    /// Stages the pending edits again over the store read again (without those `dropping`
    /// names: where the user took the other process's value) and shows it, marked.
    func adoptIncoming(_ new: ObjectGraph, _ changes: LiveChanges, session: ReplSession, dropping: Set<LiveConflict.EditAddress>) {
        live?.incoming = nil
        let hadEdits = !session.pending.isEmpty
        if !dropping.isEmpty {
            session.replacePending(session.pending.keeping { !dropping.contains(LiveConflict.EditAddress(step: $0, edit: $1)) })
        }
        let note = session.restage(over: new)
        let ghosts = liveGhosts(removed: changes.removed)
        adopt(session.engine.graph, remap: true)
        guard !changes.isEmpty else { return }
        live?.ghosts = ghosts
        live?.added = changes.added
        live?.changed = changes.changed
        live?.markedAt = Date()
        message = "commit \(live?.commits ?? 0) from another process: \(changes.figures)"
        if hadEdits {
            // What staging again said: kept, or which steps no longer apply.
            message += session.pending.isEmpty && dropping.isEmpty ? "" : note.isEmpty ? "; your pending edits are staged over it" : note
            if note.contains("dropped") { replOutput.append(message) }
        }
    }

    /// Opens the dialog of the conflicts waiting (again: Ctrl-S and `.commit` come here first).
    func showConflicts() {
        guard let incoming = live?.incoming else { return }
        let decided = incoming.conflicts.filter { $0.keepsMine != nil }.count
        var lines = ["Another process committed \(incoming.changes.figures) over values your pending edits change.",
                     "Pick for each: keep yours (m) or take theirs (t). Nothing is written until you commit.", ""]
        for (i, c) in incoming.conflicts.enumerated() {
            let choice = c.keepsMine.map { $0 ? "[yours ]" : "[theirs]" } ?? "[  ?   ]"
            lines.append("\(i == incoming.selection ? "▶" : " ") \(choice) \(c.line)")
        }
        dialog = Dialog(purpose: .conflicts, title: "Conflicts — \(decided) of \(incoming.conflicts.count) decided", lines: lines,
                        choices: "j/k move · m yours · t theirs · M/T all · Enter applies · Esc later",
                        top: max(0, incoming.selection + 3 - 12))
        message = "\(incoming.conflicts.count.counting("conflict")) with another process's commit: decide before committing (Ctrl-S)"
    }

    /// A key in the conflicts dialog.
    func handleConflictKey(_ key: Key) {
        guard var incoming = live?.incoming else { dialog = nil; return }
        switch key {
        case .escape, .control("c"): dialog = nil; return
        case .down, .character("j"): incoming.selection = min(incoming.conflicts.count - 1, incoming.selection + 1)
        case .up, .character("k"): incoming.selection = max(0, incoming.selection - 1)
        case .character("m"), .character("t"):
            guard incoming.conflicts.indices.contains(incoming.selection) else { return }
            incoming.conflicts[incoming.selection].keepsMine = key == .character("m")
            incoming.selection = min(incoming.conflicts.count - 1, incoming.selection + 1)
        case .character("M"), .character("T"):
            for i in incoming.conflicts.indices { incoming.conflicts[i].keepsMine = key == .character("M") }
        case .enter:
            guard let session else { return }
            // Found again over the edits as they are now: the user may have staged, undone or
            // redone since the dialog opened (a new edit of a value they changed is a conflict too).
            incoming.conflicts = LiveConflict.keepingChoices(LiveConflict.find(session.pending, incoming.changes, old: session.pending.base, new: incoming.graph),
                                                             of: incoming.conflicts)
            incoming.selection = min(incoming.selection, max(0, incoming.conflicts.count - 1))
            let undecided = incoming.conflicts.filter { $0.keepsMine == nil }.count
            guard undecided == 0 else {
                live?.incoming = incoming
                showConflicts()
                message = "\(undecided.counting("conflict")) still to decide (m or t)"
                return
            }
            dialog = nil
            let dropping = Set(incoming.conflicts.filter { $0.keepsMine == false }.flatMap(\.edits))
            adoptIncoming(incoming.graph, incoming.changes, session: session, dropping: dropping)
            return
        default: return
        }
        live?.incoming = incoming
        showConflicts()
    }

    /// True when the last commit's marks just faded (the screen is drawn again without them).
    public func liveMarksFaded() -> Bool {
        guard let live, !live.added.isEmpty || !live.changed.isEmpty, !live.isMarking else { return false }
        self.live?.added = []
        self.live?.changed = [:]
        return true
    }

    /// The rows of the visible part of the sheet on screen whose objects are in `removed`, with
    /// their cells as the graph shown holds them, each placed where it will be once the rows
    /// removed before it are gone.
    func liveGhosts(removed: Set<ObjectIdentity>) -> [LiveGhost] {
        guard !removed.isEmpty, let graph, let sheet = current, sheet.showsObjects else { return [] }
        let height = max(1, layout.recordsBody.height)
        let columns = sheet.columns(graph: graph)
        var ghosts: [LiveGhost] = [], gone = 0
        for row in 0..<min(sheet.count, sheet.top + height) {
            guard let ref = sheet.ref(at: row), removed.contains(graph.identity(of: ref)) else { continue }
            if row >= sheet.top {
                let cells = sheet.cells(row: row, columns: columns, graph: graph)
                ghosts.append(LiveGhost(depth: stack.count, position: row - gone, cells: cells))
            }
            gone += 1
        }
        return ghosts
    }

    /// The deleted rows to show on the sheet on screen (none once a key was pressed).
    var shownGhosts: [LiveGhost] { (live?.ghosts ?? []).filter { $0.depth == stack.count } }

    /// How a row of the records pane is marked by the last commit: `+` added, `~` changed.
    func liveMark(_ ref: ObjectRef) -> Character? {
        guard let live, live.isMarking, let graph else { return nil }
        let identity = graph.identity(of: ref)
        if live.added.contains(identity) { return "+" }
        return live.changed[identity] != nil ? "~" : nil
    }

    /// True when the last commit changed `column` of the object at `ref`.
    func isLiveChanged(_ ref: ObjectRef, column: String) -> Bool {
        guard let live, live.isMarking, let graph else { return false }
        return live.changed[graph.identity(of: ref)]?.contains(column) ?? false
    }
}

extension Sheet {
    /// Row `row`'s shown cells by column name (`columns` as the sheet lists them): what a live
    /// refresh compares and keeps of a row.
    func cells(row: Int, columns: [String], graph: ObjectGraph) -> [String: Value] {
        Dictionary(columns.indices.map { (columns[$0], value(row: row, column: $0, graph: graph)) }, uniquingKeysWith: { a, _ in a })
    }
}
