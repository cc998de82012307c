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

/// A PostgreSQL database read a page at a time, as a paged session needs it: opened by URL,
/// answering statements through its own ``QuerySource``, committing through its writer, and
/// carried past a commit without reading the catalog again.
public protocol PostgresPagedDatabase: PageSource, Sendable {
    /// Connects to `url` and reads the catalog.
    static func open(url: String, edgesPerObject: Int) throws -> Self
    /// The database's URL (with its password, to connect; never shown).
    var url: String { get }
    var edgesPerObject: Int { get }
    /// What answers statements over this state of the database.
    func querySource() -> any QuerySource
    /// A window of no objects: the edit base a session starts from.
    var emptyWindow: ObjectGraph { get }
    /// The writes committing `pending` would make, as text of at most about `maxLines` lines.
    func preview(_ pending: PendingChanges, maxLines: Int) throws -> String
    /// Writes `pending` in one transaction (every row or object it touches checked against what
    /// the session read of it).
    func commit(_ pending: PendingChanges) throws -> StoreCommit.Report
    /// The database as `pending`'s commit left it (counts moved, attributes added).
    func afterCommit(_ pending: PendingChanges) -> Self
}

/// The database under a paged session (browsed or in the REPL a page at a time): previews and
/// commits the pending changes (over their edit base, ``PagedChanges``) through the database's
/// writer, in one transaction, every row they touch checked against what the session read of it;
/// then carries the catalog forward with what the commit moved.
public final class PostgresPagedSessionHost<Pages: PostgresPagedDatabase>: PagedSessionHost, Sendable {
    private struct State: Sendable {
        var pages: Pages
        var source: any QuerySource
        init(_ pages: Pages) { (self.pages, self.source) = (pages, pages.querySource()) }
    }
    private let state: Mutex<State>
    /// The database's URL (with its password, to connect; never shown).
    private let url: String

    public init(pages: Pages) {
        url = pages.url
        state = Mutex(State(pages))
    }

    public var pages: Pages { state.withLock { $0.pages } }
    /// What answers statements over the database as it is now.
    public var querySource: any QuerySource { state.withLock { $0.source } }

    public var pagedStore: (pages: PageSource, querySource: (any QuerySource)?) {
        state.withLock { ($0.pages, $0.source) }
    }

    public func reopen() throws {
        let pages = try Pages.open(url: url, edgesPerObject: state.withLock { $0.pages.edgesPerObject })
        state.withLock { $0 = State(pages) }
    }

    /// `.reload`: the catalog read again; the graph returned is the new edit base's (empty).
    public func load(path: String, progress: ProgressReport?) throws -> ObjectGraph {
        try reopen()
        return pages.emptyWindow
    }

    public func preview(_ pending: PendingChanges, maxLines: Int) throws -> String {
        try pages.preview(pending, maxLines: maxLines)
    }

    public func commit(_ pending: PendingChanges, progress: ProgressReport?) throws -> (graph: ObjectGraph, summary: String) {
        let report = try pages.commit(pending)
        let next = pages.afterCommit(pending)
        state.withLock { $0 = State(next) }
        return (next.emptyWindow, report.summary)
    }
}

/// A database's tables in a paged session, committed through ``PostgresCommit``.
public typealias PostgresPagedHost = PostgresPagedSessionHost<PostgresPages>
/// Persist's layout in a paged session, committed through Persist's PostgreSQL writer.
public typealias PostgresPersistPagedHost = PostgresPagedSessionHost<PostgresPersistPages>

extension PostgresPages: PostgresPagedDatabase {
    public func querySource() -> any QuerySource { PostgresQuerySource(pages: self) }
    public var emptyWindow: ObjectGraph { schema }
    public func preview(_ pending: PendingChanges, maxLines: Int) throws -> String {
        try PostgresCommit.preview(pending, url: url).description(maxLines: maxLines)
    }
    public func commit(_ pending: PendingChanges) throws -> StoreCommit.Report { try PostgresCommit.commit(pending, url: url) }
    public func afterCommit(_ pending: PendingChanges) -> PostgresPages { afterCommit(countChanges: pending.countChanges) }
}

extension PostgresPersistPages: PostgresPagedDatabase {
    public func querySource() -> any QuerySource { PostgresPersistQuerySource(pages: self) }
    public func preview(_ pending: PendingChanges, maxLines: Int) throws -> String {
        try PostgresPersistCommit.preview(pending, url: url, maxLines: maxLines)
    }
    public func commit(_ pending: PendingChanges) throws -> StoreCommit.Report { try PostgresPersistCommit.commit(pending, url: url) }
    public func afterCommit(_ pending: PendingChanges) -> PostgresPersistPages {
        var newAttributes: [String: [String]] = [:]
        for (t, names) in pending.changes.newAttributes { newAttributes[pending.base.types[t].name.rawValue] = names }
        return afterCommit(countChanges: pending.countChanges, newAttributes: newAttributes)
    }
}

extension PendingChanges {
    /// The objects the changes add and delete, by type name (an object staged new and then
    /// deleted was never written): how a commit of them moves the catalog's counts.
    var countChanges: [String: Int] {
        var moved: [String: Int] = [:]
        for ref in changes.touched {
            let inserted = changes.isInserted(ref), removed = changes.isRemoved(ref)
            guard inserted != removed else { continue }
            moved[graph.table(ref).name.rawValue, default: 0] += inserted ? 1 : -1
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
