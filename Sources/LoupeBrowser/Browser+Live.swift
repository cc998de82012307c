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
        guard running == nil else { liveRefreshWaiting = true; return }
        let task = RunningTask(line: ".reload", isLoad: true, verb: "refreshing", isLive: true)
        start(task) {
            task.finish(.loaded(path, Result { try host.load(path: path, progress: { done, total in task.report(done, total) }) }))
        }
    }

    /// Applies a live reload: the new graph adopted in every view, the changes since the last
    /// read marked, the commit counted.
    func finishLiveReload(_ result: Result<ObjectGraph, any Error>, session: ReplSession, path: String) {
        guard case .success(let new) = result, let old = graph else {
            if case .failure(let error) = result { message = "cannot read the store again: \(error)" }
            return
        }
        _ = session.finishLoad(path: path, result)
        var added: Set<ObjectIdentity> = [], changed: [ObjectIdentity: Set<String>] = [:], removed = 0
        _ = try? StoreDiff(GraphDiffSide(old), GraphDiffSide(new)).run { event in
            guard case .change(let change) = event else { return }
            let identity = ObjectIdentity(type: TypeName(change.type), id: change.key)
            switch change.kind {
            case .added: added.insert(identity)
            case .removed: removed += 1
            case .changed: changed[identity] = Set(change.attributes.map(\.name) + change.relations.map(\.name))
            }
        }
        adopt(session.engine.graph, remap: true)
        guard !added.isEmpty || !changed.isEmpty || removed > 0 else { return }
        live?.commits += 1
        live?.added = added
        live?.changed = changed
        live?.markedAt = Date()
        message = "commit \(live?.commits ?? 0) from another process: +\(added.count) ~\(changed.count) −\(removed)"
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
