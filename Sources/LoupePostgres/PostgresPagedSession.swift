import Foundation
import LoupeModel
import LoupeQuery
import LoupeStore
import Synchronization

/// A PostgreSQL database's statements answered by PostgreSQL itself (``PostgresPushdown``'s
/// translation), objects by key: paged mode's ``QuerySource`` for a database too large to load.
/// What does not translate exactly gives nil (the caller says it needs the whole graph).
public final class PostgresQuerySource: QuerySource, Sendable {
    public let pages: PostgresPages
    public init(pages: PostgresPages) { self.pages = pages }

    public func answer(_ statement: LoupeQuery.Statement, isCancelled: @escaping @Sendable () -> Bool) throws -> SourceAnswer? {
        guard statement.pushdownRoot != nil else { return nil }
        // Names, quantifiers and the rest of the engine's own checks, as it reports them.
        _ = try QueryEngine(graph: pages.schema).run(statement)
        return try pages.read { c in
            c.isCancelled = isCancelled
            defer { c.isCancelled = nil }
            return try PostgresTranslation(schema: pages.schema, described: pages.described, connection: c).sourceAnswer(statement)
        }
    }
}

/// The database under a paged session (browsed or in the REPL a page at a time): previews and
/// commits the pending changes (over their edit base, ``PagedChanges``) through
/// ``PostgresCommit`` in one transaction, every row they touch checked against what the session
/// read of it; then carries the catalog forward with the counts the commit moved.
public final class PostgresPagedHost: PagedSessionHost, Sendable {
    private struct State {
        var pages: PostgresPages
        var source: PostgresQuerySource
    }
    private let state: Mutex<State>
    /// The database's URL (with its password, to connect; never shown).
    private let url: String

    public init(pages: PostgresPages) {
        url = pages.url
        state = Mutex(State(pages: pages, source: PostgresQuerySource(pages: pages)))
    }

    public var pages: PostgresPages { state.withLock { $0.pages } }

    public var pagedStore: (pages: PageSource, querySource: (any QuerySource)?) {
        state.withLock { ($0.pages, $0.source) }
    }

    public func reopen() throws {
        let pages = try PostgresPages.open(url: url, edgesPerObject: state.withLock { $0.pages.edgesPerObject })
        state.withLock { $0 = State(pages: pages, source: PostgresQuerySource(pages: pages)) }
    }

    /// `.reload`: the catalog read again; the graph returned is the new edit base's (empty).
    public func load(path: String, progress: ProgressReport?) throws -> ObjectGraph {
        try reopen()
        return pages.schema
    }

    public func preview(_ pending: PendingChanges, maxLines: Int) throws -> String {
        try PostgresCommit.preview(pending, url: url).description(maxLines: maxLines)
    }

    public func commit(_ pending: PendingChanges, progress: ProgressReport?) throws -> (graph: ObjectGraph, summary: String) {
        let report = try PostgresCommit.commit(pending, url: url)
        // Rows added and deleted, by table (an object staged new and then deleted was never written).
        var moved: [String: Int] = [:]
        for ref in pending.changes.touched {
            let inserted = pending.changes.isInserted(ref), removed = pending.changes.isRemoved(ref)
            guard inserted != removed else { continue }
            moved[pending.graph.table(ref).name.rawValue, default: 0] += inserted ? 1 : -1
        }
        let next = pages.afterCommit(countChanges: moved)
        state.withLock { $0 = State(pages: next, source: PostgresQuerySource(pages: next)) }
        return (next.schema, report.summary)
    }
}
