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
        let next = pages.afterCommit(countChanges: Self.countChanges(pending))
        state.withLock { $0 = State(pages: next, source: PostgresQuerySource(pages: next)) }
        return (next.schema, report.summary)
    }

    /// The objects `pending` adds and deletes, by type name (an object staged new and then
    /// deleted was never written): how a commit of it moves the catalog's counts.
    static func countChanges(_ pending: PendingChanges) -> [String: Int] {
        var moved: [String: Int] = [:]
        for ref in pending.changes.touched {
            let inserted = pending.changes.isInserted(ref), removed = pending.changes.isRemoved(ref)
            guard inserted != removed else { continue }
            moved[pending.graph.table(ref).name.rawValue, default: 0] += inserted ? 1 : -1
        }
        return moved
    }
}

/// Persist's layout in PostgreSQL answered by PostgreSQL itself (``PostgresPersistPushdown``'s
/// translation), objects by key: paged mode's ``QuerySource`` for such a database too large to
/// load. The schema and what each member holds over its type are read by the first statement
/// (one pass over the documents) and kept for the session; a database whose documents are not
/// `jsonb` (or whose rows lack keys, types or names) answers nil, as does what does not
/// translate exactly (the caller says it needs the whole graph).
public final class PostgresPersistQuerySource: QuerySource, Sendable {
    private enum Facts: Sendable {
        case unread
        case untranslatable
        case read(PostgresPersistPushdown.Prepared)
    }
    public let pages: PostgresPersistPages
    private let facts = Mutex<Facts>(.unread)

    public init(pages: PostgresPersistPages) { self.pages = pages }

    public func answer(_ statement: LoupeQuery.Statement, isCancelled: @escaping @Sendable () -> Bool) throws -> SourceAnswer? {
        guard statement.pushdownRoot != nil else { return nil }
        return try pages.read { c in
            c.isCancelled = isCancelled
            defer { c.isCancelled = nil }
            guard let prepared = try prepared(c) else { return nil }
            // Names, quantifiers and the rest of the engine's own checks, as it reports them.
            _ = try QueryEngine(graph: prepared.graph).run(statement)
            return try prepared.translation(c).sourceAnswer(statement)
        }
    }

    /// The kept schema and facts, read on `c` the first time.
    private func prepared(_ c: PostgresConnection) throws -> PostgresPersistPushdown.Prepared? {
        switch facts.withLock({ $0 }) {
        case .read(let prepared): return prepared
        case .untranslatable: return nil
        case .unread:
            let prepared = try PostgresPersistPushdown.prepare(c)
            facts.withLock { $0 = prepared.map(Facts.read) ?? .untranslatable }
            return prepared
        }
    }
}

/// Persist's layout in PostgreSQL under a paged session: previews and commits the pending
/// changes (over their edit base, ``PagedChanges``) through ``PostgresPersistCommit``, the writer
/// a loaded session commits with (one transaction, every object the changes touch compared with
/// what the session read of it); then carries the catalog forward with the counts the commit
/// moved and the attributes it added.
public final class PostgresPersistPagedHost: PagedSessionHost, Sendable {
    private struct State {
        var pages: PostgresPersistPages
        var source: PostgresPersistQuerySource
    }
    private let state: Mutex<State>
    /// The database's URL (with its password, to connect; never shown).
    private let url: String

    public init(pages: PostgresPersistPages) {
        url = pages.url
        state = Mutex(State(pages: pages, source: PostgresPersistQuerySource(pages: pages)))
    }

    public var pages: PostgresPersistPages { state.withLock { $0.pages } }

    public var pagedStore: (pages: PageSource, querySource: (any QuerySource)?) {
        state.withLock { ($0.pages, $0.source) }
    }

    public func reopen() throws {
        let pages = try PostgresPersistPages.open(url: url, edgesPerObject: state.withLock { $0.pages.edgesPerObject })
        state.withLock { $0 = State(pages: pages, source: PostgresPersistQuerySource(pages: pages)) }
    }

    /// `.reload`: the catalog read again; the graph returned is the new edit base's (empty).
    public func load(path: String, progress: ProgressReport?) throws -> ObjectGraph {
        try reopen()
        return pages.emptyWindow
    }

    public func preview(_ pending: PendingChanges, maxLines: Int) throws -> String {
        try PostgresPersistCommit.preview(pending, url: url, maxLines: maxLines)
    }

    public func commit(_ pending: PendingChanges, progress: ProgressReport?) throws -> (graph: ObjectGraph, summary: String) {
        let report = try PostgresPersistCommit.commit(pending, url: url)
        var newAttributes: [String: [String]] = [:]
        for (t, names) in pending.changes.newAttributes { newAttributes[pending.base.types[t].name.rawValue] = names }
        let next = pages.afterCommit(countChanges: PostgresPagedHost.countChanges(pending), newAttributes: newAttributes)
        state.withLock { $0 = State(pages: next, source: PostgresPersistQuerySource(pages: next)) }
        return (next.emptyWindow, report.summary)
    }
}
