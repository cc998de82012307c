import Foundation
import LoupeModel
import LoupeQuery
import LoupeStore
import Synchronization

/// The store under a session: loads it (`.open`, `.reload`), previews and commits its pending
/// changes, on any thread. It remembers what it loaded last (the file, its format, its stamp):
/// a commit writes there, checking that nobody wrote since.
public final class StoreHost: SessionHost {
    public init() {}

    private struct Loaded: Sendable {
        let path: String
        let format: any StoreFormat.Type
        let stamp: FileStamp
    }
    private let loaded = Mutex<Loaded?>(nil)

    /// Remembers a store loaded elsewhere (the first load, which shows progress its own way).
    public func adopt(_ store: LoadedStore) {
        loaded.withLock { $0 = Loaded(path: store.path, format: store.format, stamp: store.stamp) }
    }

    public func load(path: String, progress: ProgressReport?) throws -> ObjectGraph {
        try StoreHost.refuseAddress(path)
        let store = try LoadedStore.open(path, progress: progress)
        adopt(store)
        return store.graph
    }

    public func read(path: String, progress: ProgressReport?) throws -> ObjectGraph {
        try StoreHost.refuseAddress(path)
        return try LoadedStore.open(path, progress: progress).graph
    }

    /// A database's address is not a file: said without its credentials (a file's error would
    /// quote the address whole, password and all).
    private static func refuseAddress(_ path: String) throws {
        guard path.contains("://") else { return }
        throw StoreError(.fileNotFound, path: ReplSession.withoutPassword(path),
                         reason: "a database's address, and this session reads files (open it with `loupe URL`; compare it with a file with `loupe diff FILE URL`)")
    }

    private func current() throws -> Loaded {
        guard let store = loaded.withLock({ $0 }) else { throw StoreError(.fileNotFound, reason: "no store is open") }
        return store
    }

    /// The last preview's plan: a commit of the same revision of the changes reuses it.
    private let lastPlan = Mutex<(path: String, plan: WritePlan)?>(nil)

    public func preview(_ pending: PendingChanges, maxLines: Int) throws -> String {
        let store = try current()
        let plan = try StoreCommit.preview(pending, path: store.path, format: store.format)
        lastPlan.withLock { $0 = (store.path, plan) }
        return plan.description(maxLines: maxLines)
    }

    public func commit(_ pending: PendingChanges, progress: ProgressReport?) throws -> (graph: ObjectGraph, summary: String) {
        let store = try current()
        let planned = lastPlan.withLock { last in last.flatMap { $0.path == store.path ? $0.plan : nil } }
        lastPlan.withLock { $0 = nil }
        let report = try StoreCommit.commit(pending, path: store.path, format: store.format, loadedStamp: store.stamp, planned: planned)
        let graph = try load(path: store.path, progress: progress)
        return (graph, report.summary)
    }
}

