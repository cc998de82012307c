import Foundation
import LoupeModel
import LoupeQuery
import LoupeStore
import Synchronization

/// The store under a paged session (a Persist store, a plain relational file or a Core Data
/// store, whose read-only types refuse edits before they reach it, browsed a page at a time): previews and commits the pending changes (over their edit base,
/// ``PagedChanges``) into the file in one transaction, checked against the file's stamp when it
/// was opened as a loaded session's are; then carries what it knows forward to the file's new
/// state (``CommittablePages/afterCommit(_:newAttributes:)``: the catalog, Loupe's relation
/// index) instead of reading the store again.
public final class PagedStoreHost<Pages: CommittablePages>: PagedSessionHost {
    private struct State {
        var pages: Pages
        var querySource: (any QuerySource)?
        var plan: WritePlan?
    }
    private let state: Mutex<State>
    private let answerer: @Sendable (Pages, _ previous: (any QuerySource)?, ChangeReach?) -> (any QuerySource)?

    /// A host for `pages`; `querySource` makes what answers statements over a state of the store
    /// (after a commit, given the one before and what the commit changed, to keep what still holds).
    public init(pages: Pages, querySource: @escaping @Sendable (Pages, _ previous: (any QuerySource)?, ChangeReach?) -> (any QuerySource)?) {
        answerer = querySource
        state = Mutex(State(pages: pages, querySource: querySource(pages, nil, nil), plan: nil))
    }

    /// The store as it is now (after a commit or ``reopen()``, the file's new state).
    public var pages: Pages { state.withLock { $0.pages } }

    public var pagedStore: (pages: PageSource, querySource: (any QuerySource)?) {
        state.withLock { ($0.pages, $0.querySource) }
    }

    public func reopen() throws {
        let pages = try state.withLock { $0.pages }.reopened()
        let source = answerer(pages, nil, nil)
        state.withLock { $0 = State(pages: pages, querySource: source, plan: nil) }
    }

    /// `.reload`: the store opened again; the graph returned is the new edit base's (empty).
    public func load(path: String, progress: ProgressReport?) throws -> ObjectGraph {
        try reopen()
        return try state.withLock { $0.pages }.window(keys: [] as [ObjectID]).graph
    }

    public func preview(_ pending: PendingChanges, maxLines: Int) throws -> String {
        let pages = state.withLock { $0.pages }
        let plan = try StoreCommit.preview(pending, path: pages.file.path, format: Pages.format)
        state.withLock { $0.plan = plan }
        return plan.description(maxLines: maxLines)
    }

    public func commit(_ pending: PendingChanges, progress: ProgressReport?) throws -> (graph: ObjectGraph, summary: String) {
        let (pages, planned, previous) = state.withLock { s in
            defer { s.plan = nil }
            return (s.pages, s.plan, s.querySource)
        }
        let report = try StoreCommit.commit(pending, path: pages.file.path, format: Pages.format, loadedStamp: pages.openedStamp, planned: planned)
        var newAttributes: [String: [String]] = [:]
        for (t, names) in pending.changes.newAttributes { newAttributes[pending.base.types[t].name.rawValue] = names }
        let next = pages.afterCommit(report, newAttributes: newAttributes)
        let source = answerer(next, previous, pending.changes.reach)
        state.withLock { $0 = State(pages: next, querySource: source, plan: nil) }
        return (try next.window(keys: [] as [ObjectID]).graph, report.summary)
    }
}
