import Foundation
import LoupeModel
import LoupeQuery

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
    /// Commits seen while edits were pending (the views were not read again).
    public internal(set) var heldBack = 0

    /// How long a commit's marks stay.
    static let markSeconds = 4.0

    /// True while the last commit's marks are shown.
    var isMarking: Bool { Date().timeIntervalSince(markedAt) < Self.markSeconds && (!added.isEmpty || !changed.isEmpty) }
}

/// What one live reload found between the graph shown and the store read again.
struct LiveChanges: Sendable {
    var added: Set<ObjectIdentity> = []
    /// The attributes and relations changed, by object.
    var changed: [ObjectIdentity: Set<String>] = [:]
    var removed = 0

    /// The objects added, changed (and what of them) and removed between `old` and `new`.
    init(from old: ObjectGraph, to new: ObjectGraph) throws {
        try StoreDiff(GraphDiffSide(old), GraphDiffSide(new)).run { event in
            guard case .change(let change) = event else { return }
            let identity = ObjectIdentity(type: TypeName(change.type), id: change.key)
            switch change.kind {
            case .added: added.insert(identity)
            case .removed: removed += 1
            case .changed: changed[identity] = Set(change.attributes.map(\.name) + change.relations.map(\.name))
            }
        }
    }

    var isEmpty: Bool { added.isEmpty && changed.isEmpty && removed == 0 }
}

extension Browser {
    /// Tells the browser its store's file moved (another process committed: the executable
    /// watches the file's stamp). A loaded store with no pending edits is read again off the UI
    /// thread and every view refreshed in place (the selection kept by key); with pending edits
    /// nothing is read, the status line says how many commits wait (the commit checks its edits
    /// against them, never overwriting them silently). Paged mode reads the store page by page
    /// already: nothing to do.
    public func storeChangedOnDisk() {
        guard pages == nil, graph != nil, let host, let path = storePath else { return }
        if live == nil { live = LiveState() }
        if let session, !session.pending.isEmpty {
            live?.heldBack += 1
            message = "the store changed on disk (\(live!.heldBack.counting("commit"))): your pending edits are kept and checked against it when committed"
            return
        }
        guard running == nil, let old = graph else { liveRefreshWaiting = true; return }
        let task = RunningTask(line: ".reload", isLoad: true, verb: "refreshing")
        start(task) {
            // Read and compared off the UI thread: a large store's diff takes a while.
            task.finish(.refreshed(path, Result {
                let new = try host.load(path: path, progress: { done, total in task.report(done, total) })
                return (new, try LiveChanges(from: old, to: new))
            }))
        }
    }

    /// Applies a live reload: the new graph adopted in every view, what the commit changed
    /// marked, the commit counted.
    func finishLiveReload(_ result: Result<(graph: ObjectGraph, changes: LiveChanges), any Error>, session: ReplSession, path: String) {
        guard case .success(let (_, changes)) = result else {
            if case .failure(let error) = result { message = "cannot read the store again: \(error)" }
            return
        }
        _ = session.finishLoad(path: path, result.map(\.graph))
        adopt(session.engine.graph, remap: true)
        guard !changes.isEmpty else { return }
        live?.commits += 1
        live?.added = changes.added
        live?.changed = changes.changed
        live?.markedAt = Date()
        message = "commit \(live?.commits ?? 0) from another process: +\(changes.added.count) ~\(changes.changed.count) −\(changes.removed)"
    }

    /// True when the last commit's marks just faded (the screen is drawn again without them).
    public func liveMarksFaded() -> Bool {
        guard let live, !live.added.isEmpty || !live.changed.isEmpty, !live.isMarking else { return false }
        self.live?.added = []
        self.live?.changed = [:]
        return true
    }

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
