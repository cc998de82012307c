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
    /// What answers statements over this state of the database, the one a commit left: keeps
    /// what `previous` read of the database before it, where the commit (`reach`) cannot have
    /// changed it.
    func querySource(carrying previous: any QuerySource, after reach: ChangeReach) -> any QuerySource
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
        init(_ pages: Pages, source: any QuerySource) { (self.pages, self.source) = (pages, source) }
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
        state.withLock { $0 = State(next, source: next.querySource(carrying: $0.source, after: pending.changes.reach)) }
        return (next.emptyWindow, report.summary)
    }
}

/// A database's tables in a paged session, committed through ``PostgresCommit``.
public typealias PostgresPagedHost = PostgresPagedSessionHost<PostgresPages>
/// Persist's layout in a paged session, committed through Persist's PostgreSQL writer.
public typealias PostgresPersistPagedHost = PostgresPagedSessionHost<PostgresPersistPages>

extension PostgresPagedDatabase {
    public func querySource(carrying previous: any QuerySource, after reach: ChangeReach) -> any QuerySource { querySource() }
}

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
    public func querySource(carrying previous: any QuerySource, after reach: ChangeReach) -> any QuerySource {
        (previous as? PostgresPersistQuerySource)?.carried(to: self, after: reach) ?? querySource()
    }
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
/// load. It reads no more of the whole database than a statement needs, and keeps what it read
/// for the session: what each member a statement reads holds over its whole type (one pass over
/// that type's documents per new member), the relation names (one pass over the relation rows)
/// when the statement reads only attributes, else the relations as a whole load finds them (one
/// pass joining the relation rows to both ends). The schema is the sample's (``PostgresPersistPages``)
/// with the attributes and kinds those passes found. A database whose documents are not `jsonb`
/// (or whose rows lack keys, types or names) answers nil, as does what does not translate exactly
/// (the caller says it needs the whole graph).
public final class PostgresPersistQuerySource: QuerySource, Sendable {
    /// What the source has read of the whole database (types by name).
    private struct Known: Sendable {
        var translatable: Bool?
        var relationNames: Set<String>?
        var relations: [String: [String: PostgresPersistPushdown.Shape]]?
        /// Per type, what each member read so far holds (a member no document holds is absent),
        /// and which members were read.
        var facts: [String: [String: PostgresPersistPushdown.Fact]] = [:]
        var scanned: [String: Set<String>] = [:]
    }
    public let pages: PostgresPersistPages
    private let known: Mutex<Known>

    public init(pages: PostgresPersistPages) {
        self.pages = pages
        known = Mutex(Known())
    }

    private init(pages: PostgresPersistPages, known: Known) {
        self.pages = pages
        self.known = Mutex(known)
    }

    /// What the source has read of the whole database so far: whether the relations as a load
    /// finds them, and per type name the members whose facts it read.
    public var wholeReads: (relations: Bool, members: [String: Set<String>]) {
        known.withLock { ($0.relations != nil, $0.scanned) }
    }

    /// A source over `pages`, the database as this session's commit left it, keeping what this
    /// one read where the commit (`reach`) cannot have changed it: the relations when no relation
    /// row changed, each member's facts unless its values changed or its type gained or lost
    /// objects.
    public func carried(to pages: PostgresPersistPages, after reach: ChangeReach) -> PostgresPersistQuerySource {
        var kept = known.withLock { $0 }
        if reach.relations { (kept.relationNames, kept.relations) = (nil, nil) }
        for (type, names) in kept.scanned {
            let still = names.filter { reach.keeps(type: type, attribute: $0) }
            kept.scanned[type] = still
            kept.facts[type] = kept.facts[type]?.filter { still.contains($0.key) }
        }
        return PostgresPersistQuerySource(pages: pages, known: kept)
    }

    public func answer(_ statement: LoupeQuery.Statement, isCancelled: @escaping @Sendable () -> Bool) throws -> SourceAnswer? {
        guard statement.pushdownRoot != nil, statement.namesRead != nil else { return nil }
        return try pages.read { c in
            c.isCancelled = isCancelled
            defer { c.isCancelled = nil }
            if known.withLock({ $0.translatable }) == nil {
                let translatable = try PostgresPersistPushdown.isTranslatable(c)
                known.withLock { $0.translatable = translatable }
            }
            guard known.withLock({ $0.translatable }) == true else { return nil }
            let relations: [String: [String: PostgresPersistPushdown.Shape]]
            if known.withLock({ $0.relations == nil }), try readsOnlyAttributes(statement, c) {
                relations = [:]   // no relation can matter to it: the database's are not read
            } else {
                relations = try self.relations(c)
                try scan(AttributeReads.of(statement, in: schema(relations: relations).graph), c)
            }
            let (graph, types) = schema(relations: relations)
            // Names, quantifiers and the rest of the engine's own checks, as it reports them.
            _ = try QueryEngine(graph: graph).run(statement)
            let facts = known.withLock { k in Dictionary(uniqueKeysWithValues: types.enumerated().map { ($0, k.facts[$1.name] ?? [:]) }) }
            return try PostgresPersistTranslation(schema: graph, types: types, facts: facts, connection: c).sourceAnswer(statement)
        }
    }

    /// The schema statements compile on: the sample's types, each with the attributes found over
    /// the whole type beyond the sample's (by name) and the kinds found, and `relations`.
    private func schema(relations: [String: [String: PostgresPersistPushdown.Shape]]) -> (graph: ObjectGraph, types: [PersistRows.TypeSchema]) {
        let index = Dictionary(pages.schema.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
        let facts = known.withLock { $0.facts }
        let types = pages.schema.map { type in
            let found = facts[type.name] ?? [:]
            return PersistRows.TypeSchema(name: type.name, attributes: type.attributes + found.keys.sorted().filter { !type.attributes.contains($0) },
                                          kinds: found.mapValues(\.kinds), relations: PostgresPersistPushdown.relations(relations[type.name] ?? [:], index: index))
        }
        return (PersistRows.schemaGraph(types), types)
    }

    /// Reads what the members `reads` (by type position) hold over their whole types, where not
    /// read before.
    private func scan(_ reads: [Int: Set<String>], _ c: PostgresConnection) throws {
        for (t, names) in reads.sorted(by: { $0.key < $1.key }) where t < pages.schema.count {
            let type = pages.schema[t].name
            let missing = names.subtracting(known.withLock { $0.scanned[type] ?? [] })
            guard !missing.isEmpty else { continue }
            let found = try PostgresPersistPushdown.facts(c, type: type, names: missing)
            known.withLock { k in
                k.scanned[type, default: []].formUnion(missing)
                k.facts[type, default: [:]].merge(found) { _, new in new }
            }
        }
    }

    /// True when the statement's relations cannot matter to its answer or its errors, so that
    /// the database's relations need not be read first: no name it uses is any relation's name
    /// (those are read once), and every name its paths start with is an attribute of its type
    /// that some object holds (so no error suggests a relation). Reads those attributes' facts.
    private func readsOnlyAttributes(_ statement: LoupeQuery.Statement, _ c: PostgresConnection) throws -> Bool {
        guard let names = statement.namesRead, names.linkTypes.isEmpty else { return false }
        let relationNames: Set<String>
        if let kept = known.withLock({ $0.relationNames }) { relationNames = kept } else {
            relationNames = Set(try PostgresPersistPushdown.relationNames(c).map { $0.lowercased() })
            known.withLock { $0.relationNames = relationNames }
        }
        guard names.names.allSatisfy({ !relationNames.contains($0.lowercased()) }) else { return false }
        let attributesOnly = schema(relations: [:]).graph
        guard let root = attributesOnly.type(named: names.type.text) else { return false }
        let reads = AttributeReads.of(statement, in: attributesOnly)
        try scan(reads, c)
        let found = known.withLock { $0.facts[root.name.rawValue] ?? [:] }
        let type = schema(relations: [:]).graph.types[root.index]
        return (reads[root.index] ?? []).allSatisfy { name in
            type.attribute(named: name).map { found[type.attributes[$0].name] != nil } ?? false
        }
    }

    /// The database's relations as a whole load finds them, read once.
    private func relations(_ c: PostgresConnection) throws -> [String: [String: PostgresPersistPushdown.Shape]] {
        if let kept = known.withLock({ $0.relations }) { return kept }
        let read = try PostgresPersistPushdown.relationShapes(c)
        known.withLock { $0.relations = read }
        return read
    }
}
