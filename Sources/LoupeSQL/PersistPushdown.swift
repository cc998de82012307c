import Foundation
import GRDB
import LoupeModel
import LoupeQuery
import LoupeStore
import Synchronization

/// Answers statements with SQLite over a Persist file read a page at a time (``PersistPages``),
/// without loading it: the ``QuerySource`` of paged mode. Filters, paths through relations and
/// backlinks, counts and aggregates over them and `SUBQUERY` run in SQL (``PersistTranslation``);
/// `sort`, `distinct`, `limit`, `select` and `group by` run over the matching objects' values
/// with the engine's orderings; objects come back as keys.
///
/// Answers and errors are the engine's over the whole store: the statement is first compiled by
/// the engine over a schema that is exact for what it reads — the store's relations as a whole
/// load finds them (read once over every relation row, then kept), and the kinds every attribute
/// it reads holds over its whole type (read once per attribute, then kept). Nil, and the caller
/// answers otherwise, for what does not translate exactly (nested paths, arithmetic, relations to
/// several types) and for stores whose rows SQL would join otherwise than a load.
public final class PersistQuerySource: QuerySource, Sendable {
    public let pages: PersistPages
    private struct Known {
        /// The store's relations, once read (`.some(nil)`: they cannot be joined exactly).
        var relations: [RelationShape]??
        /// Every relation name the rows use (lowercased), once read.
        var relationNames: Set<String>?
        /// Per type, the kinds of the names read so far (a name no object holds is absent) and
        /// which names were read.
        var kinds: [Int: [String: ValueKind]] = [:]
        var scanned: [Int: Set<String>] = [:]
        /// Per type, the names SQLite's `json_extract` reads as the load does.
        var plain: [Int: Set<String>] = [:]
    }
    private let known = Mutex(Known())

    /// At least this many objects of a statement's type are read on two connections at once.
    let parallelObjects: Int

    /// A source over `pages`; a statement over a type of at least `parallelObjects` objects
    /// reads its rows in two halves at once (``twoHalves(_:_:isCancelled:_:)``).
    public init(pages: PersistPages, parallelObjects: Int = 200_000) {
        self.pages = pages
        self.parallelObjects = parallelObjects
    }

    /// What a ``PagedStoreHost``-style host answers statements with over a state of the store: a
    /// new source, or after a commit the previous one carried forward (``carried(to:after:)``).
    @Sendable public static func following(_ pages: PersistPages, previous: (any QuerySource)?, after reach: ChangeReach?) -> (any QuerySource)? {
        guard let previous = previous as? PersistQuerySource, let reach else { return PersistQuerySource(pages: pages) }
        return previous.carried(to: pages, after: reach)
    }

    /// A source over `pages`, the store as this session's commit left it, keeping what this one
    /// read of the whole store where the commit (`reach`) cannot have changed it: the store's
    /// relations when no relation row changed, each attribute's kinds unless its values changed
    /// or its type gained or lost objects. (Types keep their catalog positions across a commit.)
    public func carried(to pages: PersistPages, after reach: ChangeReach) -> PersistQuerySource {
        let next = PersistQuerySource(pages: pages, parallelObjects: parallelObjects)
        let names = self.pages.catalog.map(\.name)
        next.known.withLock { k in
            known.withLock { old in
                if !reach.relations {
                    k.relations = old.relations
                    k.relationNames = old.relationNames
                }
                for (t, scanned) in old.scanned where t < names.count {
                    let kept = scanned.filter { reach.keeps(type: names[t], attribute: $0) }
                    k.scanned[t] = kept
                    k.kinds[t] = old.kinds[t]?.filter { kept.contains($0.key) }
                    k.plain[t] = old.plain[t]?.filter { kept.contains($0) }
                }
            }
        }
        return next
    }

    public func answer(_ statement: LoupeQuery.Statement, isCancelled: @escaping @Sendable () -> Bool) throws -> SourceAnswer? {
        try answer(statement, declaring: [:], isCancelled: isCancelled)
    }

    public func answer(_ statement: LoupeQuery.Statement, declaring attributes: [String: Set<String>],
                       isCancelled: @escaping @Sendable () -> Bool) throws -> SourceAnswer? {
        // The state the statement starts from: ranks kept for sorts are read only if made at it.
        let stamp = pages.file.stamp()
        return try withPlan(statement, declaring: attributes, isCancelled: isCancelled) { plan, whole, db, translation in
            if let ranked = try rankedSort(plan, db, stamp: stamp, isCancelled: isCancelled) {
                for test in whole.valueTests { try test.check() }
                return plan.answer(ranked)
            }
            if let halves = try twoHalves(plan, whole, isCancelled: isCancelled, translation) { return plan.answer(halves) }
            let answer = try plan.execute(db, isCancelled: isCancelled)
            for test in whole.valueTests { try test.check() }
            return answer
        }
    }

    /// Runs `body` with the plan of `statement` over the store (SQL and what runs over its rows),
    /// its translation, the connection it was made on (one snapshot) and a maker of translations
    /// for more connections; nil when the statement does not translate exactly. Names, kinds and
    /// quantifiers are checked first, as the engine checks them over the whole store.
    private func withPlan<R>(_ statement: LoupeQuery.Statement, declaring attributes: [String: Set<String>], isCancelled: @escaping @Sendable () -> Bool,
                             _ body: (PersistPlan, PersistTranslation, Database, @escaping @Sendable (Database, String) -> PersistTranslation) throws -> R?) throws -> R? {
        guard statement.pushdownRoot != nil, statement.namesRead != nil else { return nil }
        return try pages.withStatementConnection(isCancelled: isCancelled) { db, relationTable -> R? in
            // The kinds of what the statement reads, over each whole type.
            func scan(_ reads: [Int: Set<String>]) throws {
                for (t, names) in reads {
                    let missing = names.subtracting(known.withLock { $0.scanned[t] ?? [] })
                    guard !missing.isEmpty else { continue }
                    let found = try pages.attributeFacts(type: t, names: missing, isCancelled: isCancelled)
                    known.withLock { k in
                        k.scanned[t, default: []].formUnion(missing)
                        k.kinds[t, default: [:]].merge(found.kinds) { $0.union($1) }
                        k.plain[t, default: []].formUnion(found.plain)
                    }
                }
            }
            let relations: [RelationShape]
            if known.withLock({ $0.relations == nil }), try readsOnlyAttributes(statement, db, relationTable, scan) {
                relations = []   // no relation can matter to it: the store's are not read
            } else {
                guard let exact = try self.relations(db, relationTable) else { return nil }
                relations = exact
                try scan(AttributeReads.of(statement, in: pages.schemaGraph(relations: relations, kinds: [:])))
            }
            var kinds = known.withLock { $0.kinds }
            let plain = known.withLock { $0.plain }
            for (typeName, names) in attributes {
                guard let t = pages.catalog.firstIndex(where: { $0.name == typeName }) else { continue }
                for name in names where kinds[t]?[name] == nil { kinds[t, default: [:]][name] = [] }
            }
            let schema = pages.schemaGraph(relations: relations, kinds: kinds)
            // Every name, kind and quantifier error, exactly as the engine reports them.
            _ = try QueryEngine(graph: schema).run(statement)
            let exclusive = Set(relations.filter(\.exclusive).map { "\($0.source)\u{0}\($0.name)" })
            let store = pages
            /// The translation of the statement over one connection (each connection its own).
            let translation = { @Sendable (db: Database, relationTable: String) -> PersistTranslation in
                let translation = PersistTranslation(graph: schema, db: db, pages: store, relationTable: relationTable, plain: plain, exclusive: exclusive,
                                                     typedRows: relationTable != "relations" && store.sideIndexKnowsTypes)
                SQLPushdown.register(translation, in: db)
                return translation
            }
            let whole = translation(db, relationTable)
            defer { AggregateRegistry.current.withLock { $0 = nil } }
            guard let plan = try PersistPlan(statement, whole) else { return nil }
            // Asked to stop while the schema was read: nothing more is read.
            if isCancelled() { throw StoreError(.unreadable, path: pages.file.path, reason: "cancelled") }
            return try body(plan, whole, db, translation)
        }
    }

    /// (Empty when Loupe's cache is off: building one then says why it cannot.)
    public func sortIndexes(typeName: String) -> Set<String>? {
        SortIndex.attributes(for: pages.file, type: typeName)
    }

    /// Reads every value of `attribute` over `typeName` as the engine reads it (the statement
    /// `Type sort by attribute`, compiled over the whole store, its rows read in key order, in two
    /// halves at once over a large type), ranks them in `sort by`'s order and keeps the ranks in
    /// Loupe's cache (``SortIndex``) with the file's stamp from before the read: a file changed
    /// meanwhile keeps nothing.
    public func buildSortIndex(typeName: String, attribute written: String, isCancelled: @escaping @Sendable () -> Bool) throws {
        let stamp = pages.file.stamp()
        // The attribute as the schema spells it (an order is found by that name).
        let known = pages.types.first { $0.name == typeName }?.attributes ?? []
        let spelled = known.filter { $0.caseInsensitiveCompare(written) == .orderedSame }
        let attribute = known.contains(written) ? written : spelled.count == 1 ? spelled[0] : written
        let name = Name(text: typeName, range: SourceRange(0, 0))
        let statement = LoupeQuery.Statement.query(Query(type: name, clauses: [.sort([SortKey(path: .column(attribute), ascending: true)])]))
        let read = try withPlan(statement, declaring: [:], isCancelled: isCancelled) { plan, whole, db, translation -> PersistPlan.Rows in
            let rows = try twoHalves(plan, whole, sorted: false, isCancelled: isCancelled, translation) ?? plan.rows(db, isCancelled: isCancelled)
            for test in whole.valueTests { try test.check() }
            return rows
        }
        guard let read, read.values.count == 1 else {
            throw StoreError(.unreadable, path: pages.file.path, reason: "SQL cannot read \(typeName).\(attribute) as a load does, so its order is not kept")
        }
        if isCancelled() { throw StoreError(.unreadable, path: pages.file.path, reason: "cancelled") }
        let (ranks, distinct) = QueryEngine.sortRanks(read.values[0])
        try pages.keepOrder(SortIndex.Ranks(keys: read.keys, ranks: ranks, distinct: distinct), stamp: stamp, type: typeName, attribute: attribute)
    }

    /// The rows of a query whose first clause sorts only by attributes of its type whose order
    /// Loupe keeps (``SortIndex``, made at `stamp`, the state the statement started from) and
    /// by `id`: the matching keys read in key order (with the operands after the sort), each
    /// one's ranks found by walking the kept keys beside them, and sorted by those integers. Nil
    /// when a key is anything else, an order is not kept for that state, or a matching key is
    /// not among the kept ones.
    private func rankedSort(_ plan: PersistPlan, _ db: Database, stamp: FileStamp, isCancelled: () -> Bool) throws -> PersistPlan.Rows? {
        guard let (_, sortKeys) = plan.firstSort, let type = plan.translation.graph.type(named: plan.typeName) else { return nil }
        // Per key: the attribute whose ranks it reads, or nil for `id`.
        var attributes: [String?] = []
        for key in sortKeys {
            guard key.path.aggregate == nil, key.path.steps.count == 1 else { return nil }
            switch key.path.steps[0] {
            case .id: attributes.append(nil)
            case .name(let name):
                guard type.relation(named: name.text) == nil, let a = type.attribute(named: name.text) else { return nil }
                attributes.append(type.attributes[a].name)
            default: return nil
            }
        }
        guard attributes.contains(where: { $0 != nil }), file(stamp) else { return nil }
        var kept: [String: SortIndex.Ranks] = [:]
        for case let attribute? in attributes where kept[attribute] == nil {
            guard let ranks = SortIndex.ranks(for: pages.file, stamp: stamp, type: plan.typeName, attribute: attribute) else { return nil }
            kept[attribute] = ranks
        }
        let rows = try plan.rows(db, skippingSortKeys: true, sortKeysOnly: plan.readsKeptRowsAlone, isCancelled: isCancelled)
        // The statement read the state the ranks were made at: nobody committed since `stamp`.
        guard file(stamp) else { return nil }
        let count = rows.keys.count
        var ranked: [(ranks: [Int32], distinct: Int)] = []
        for (key, attribute) in zip(sortKeys, attributes) {
            var column = [Int32](repeating: 0, count: count)
            var distinct = count
            if let attribute, let order = kept[attribute] {
                var j = 0
                for (i, k) in rows.keys.enumerated() {
                    while j < order.keys.count, order.keys[j] < k { j += 1 }
                    guard j < order.keys.count, order.keys[j] == k else { return nil }
                    column[i] = order.ranks[j]
                }
                distinct = order.distinct
            } else {
                for i in 0..<count { column[i] = Int32(truncatingIfNeeded: i) }
                guard count <= Int(Int32.max) else { return nil }
            }
            if !key.ascending { for i in 0..<count { column[i] = Int32(distinct - 1) - column[i] } }
            ranked.append((column, max(distinct, 1)))
            if isCancelled() { throw DatabaseError(resultCode: .SQLITE_INTERRUPT) }
        }
        let order = Array(QueryEngine.sortOrder(ranked: ranked).prefix(plan.sortedEnough))
        return try plan.keeping(order, of: rows, db, isCancelled: isCancelled).inOrder(sorted: sortKeys.count)
    }

    /// True when the store is still as `stamp` describes it.
    private func file(_ stamp: FileStamp) -> Bool { pages.file.stamp() == stamp }

    /// The matching rows of `plan`, read in two halves of its type's keys on two connections at
    /// once (one snapshot; each half with its own translation), then joined in key order, or for
    /// a query whose first clause sorts, each half sorted on its own connection and the two
    /// merged (a whole sort here, in Swift, which two cores do faster than SQLite's sorter; a
    /// sort a `limit` cuts short by SQL where it can, which stops reading early): over a type of
    /// at least ``parallelObjects`` objects, when the machine has two cores and the statement
    /// has no aggregate (their values are collected through one registry). Nil: read on one
    /// connection.
    private func twoHalves(_ plan: PersistPlan, _ whole: PersistTranslation, sorted: Bool = true, isCancelled: @escaping @Sendable () -> Bool,
                           _ translation: @escaping @Sendable (Database, String) -> PersistTranslation) throws -> PersistPlan.Rows? {
        let count = pages.catalog[plan.root].count
        // (A filter naming keys reads those rows by the key: no half is worth a connection.)
        guard whole.aggregates.isEmpty, count >= parallelObjects, ProcessInfo.processInfo.activeProcessorCount >= 2,
              plan.statement.pushdownRoot?.predicate?.keysNamed == nil,
              case .int(let middle)? = (try? pages.chunkSplits(type: plan.root, parts: 2))?.first else { return nil }
        let statement = plan.statement
        let halves: [PersistPlan.Rows]
        do {
            halves = try pages.withStatementConnections(workers: 2, isCancelled: isCancelled) { worker, db, relationTable in
                let translation = translation(db, relationTable)
                guard let half = try PersistPlan(statement, translation, keys: worker == 0 ? .below(middle) : .from(middle)) else {
                    throw StoreError(.unreadable, reason: "a half of the statement did not translate as the whole did")
                }
                let rows = half.firstSort == nil || !sorted ? try half.rows(db, isCancelled: isCancelled)
                    : try half.sortedRows(db, sqlOrders: half.sortedEnough != .max, isCancelled: isCancelled)
                for test in translation.valueTests { try test.check() }
                return rows
            }
        } catch let error as StoreError where error.kind == .busy {
            return nil   // another process commits without pause: one connection, one snapshot
        }
        if let (_, sortKeys) = plan.firstSort, sorted {
            guard halves.count == 2 else { return nil }
            return PersistPlan.Rows(merging: halves[0], halves[1], ascending: sortKeys.map(\.ascending), limit: plan.sortedEnough)
        }
        return PersistPlan.Rows(joining: halves)
    }

    /// True when the statement's relations cannot matter to its answer or its errors, so that the
    /// store's relations need not be read first (a pass over every relation row): no name it uses
    /// is any relation's name (those are read once: one pass over the names alone), and every
    /// name its paths start with is an attribute of its type that some object holds (so no error
    /// suggests a relation). `scan` reads the kinds of those attributes.
    private func readsOnlyAttributes(_ statement: LoupeQuery.Statement, _ db: Database, _ relationTable: String,
                                     _ scan: ([Int: Set<String>]) throws -> Void) throws -> Bool {
        guard let names = statement.namesRead, names.linkTypes.isEmpty else { return false }
        let relationNames: Set<String>
        if let kept = known.withLock({ $0.relationNames }) { relationNames = kept } else {
            relationNames = try pages.relationNames(on: db, relationTable: relationTable)
            known.withLock { $0.relationNames = relationNames }
        }
        guard names.names.allSatisfy({ !relationNames.contains($0.lowercased()) }) else { return false }
        let attributesOnly = pages.schemaGraph(relations: [], kinds: [:])
        guard let root = attributesOnly.type(named: names.type.text) else { return false }
        let reads = AttributeReads.of(statement, in: attributesOnly)
        try scan(reads)
        let found = known.withLock { $0.kinds[root.index] ?? [:] }
        let schema = pages.schemaGraph(relations: [], kinds: [root.index: found])
        let type = schema.types[root.index]
        return (reads[root.index] ?? []).allSatisfy { name in
            type.attribute(named: name).map { found[type.attributes[$0].name] != nil } ?? false
        }
    }

    /// The store's relations as a whole load finds them, read once.
    private func relations(_ db: Database, _ relationTable: String) throws -> [RelationShape]? {
        if let kept = known.withLock({ $0.relations }) { return kept }
        let read = try pages.exactRelations(on: db, relationTable: relationTable)
        known.withLock { $0.relations = .some(read) }
        return read
    }
}

/// A statement over a Persist file as SQL plus what runs over its rows in Swift.
struct PersistPlan {
    let statement: LoupeQuery.Statement
    let translation: PersistTranslation
    let root: Int
    let typeName: String
    /// The rows of the statement's type that match: `FROM by_type a0 WHERE …`.
    let from: String
    /// Values read per matching object: sort keys, distinct paths and projected columns in
    /// clause order, or the group key.
    let operands: [PredicateTranslation.Operand]

    /// The part of the type's keys a plan reads (a half, on one of two connections).
    enum Keys { case all, below(Int64), from(Int64) }

    init?(_ statement: LoupeQuery.Statement, _ translation: PersistTranslation, keys: Keys = .all) throws {
        self.statement = statement
        self.translation = translation
        guard let (name, predicate) = statement.pushdownRoot, let type = translation.graph.type(named: name.text) else { return nil }
        root = type.index
        typeName = type.name.rawValue
        let scope = PredicateTranslation.Scope(alias: "a0", type: root)
        translation.rootKeys = keys
        var condition = "1"
        if let predicate {
            guard let sql = try translation.predicate(predicate.comparingKeys(from: root, in: translation.graph), scope) else { return nil }
            condition = sql
        }
        from = "FROM by_type a0 WHERE \(translation.isType(root, "a0")) AND (\(condition))\(translation.rootKeyCondition("a0.id"))\(translation.keyLookup(predicate, key: "a0.id"))"
        guard let operands = try translation.clauseOperands(statement, scope) else { return nil }
        self.operands = operands
    }

    /// The statement's arguments (the half's bound among them).
    private var arguments: StatementArguments { StatementArguments(translation.arguments) }

    /// The query's first clause when it sorts: the query and its keys (the first operands).
    var firstSort: (Query, [SortKey])? {
        guard case .query(let q) = statement, case .sort(let sortKeys)? = q.clauses.first else { return nil }
        return (q, sortKeys)
    }

    /// How many of the sorted objects the clauses after the sort can keep: a `limit` right after
    /// it keeps its count past its offset; anything else, all.
    var sortedEnough: Int {
        guard case .query(let q) = statement, q.clauses.count > 1, case .limit(let n, let offset) = q.clauses[1] else { return .max }
        return n + offset
    }

    /// The matching objects: their count, and their keys and operand values in key order (a
    /// query) or how many have each group key (a `group by`); for ``sortedRows(_:isCancelled:)``,
    /// in the first sort's order.
    struct Rows: Sendable {
        var count = 0
        var keys: [Int64] = []
        var values: [[Value]]
        var groups: [Value: Int] = [:]
        /// For rows sorted here (``sortedRows(_:isCancelled:)``): where each sorted row's values
        /// are in `values`, left in key order (`keys` is sorted); nil when `values` is in order.
        var order: [Int]?

        /// The rows with `values` in order (the first `sorted` columns, a sort's own, left empty
        /// when they need moving: nothing reads them once the rows are in order).
        func inOrder(sorted: Int) -> Rows {
            guard let order else { return self }
            var rows = self
            rows.order = nil
            rows.values = values.indices.map { c in c < sorted ? [] : order.map { values[c][$0] } }
            return rows
        }

        /// Parts read over consecutive ranges of keys, as one (each part's arrays freed as it is taken).
        init(joining parts: [Rows]) {
            var parts = parts
            self = parts.isEmpty ? Rows(operands: 0) : parts.removeFirst()
            while !parts.isEmpty {
                let part = parts.removeFirst()
                count += part.count
                keys += part.keys
                for c in values.indices { values[c] += part.values[c] }
                groups.merge(part.groups, uniquingKeysWith: +)
            }
        }

        /// Two parts each in the order of a sort by `ascending.count` keys (their first
        /// columns), the first part's keys all below the second's, as one in that order: ties go
        /// to the first part (the engine breaks them by key), and at most `limit` rows are kept.
        /// The sort's own columns are left empty (nothing reads them once the rows are in order).
        init(merging first: Rows, _ second: Rows, ascending: [Bool], limit: Int) {
            let total = min(first.keys.count + second.keys.count, limit)
            self.init(operands: first.values.count)
            let sorted = ascending.count, later = sorted..<values.count
            keys.reserveCapacity(total)
            for c in later { values[c].reserveCapacity(total) }
            // Each part's rows in order, as positions in its values (read without copying a part).
            let (aKeys, bKeys) = (first.keys, second.keys)
            let aRows = first.order ?? Array(aKeys.indices), bRows = second.order ?? Array(bKeys.indices)
            let (aValues, bValues) = (first.values, second.values)
            var i = 0, j = 0
            while keys.count < total {
                var fromSecond = i == aKeys.count
                if !fromSecond, j < bKeys.count {
                    let (a, b) = (aRows[i], bRows[j])
                    for c in 0..<sorted {
                        let o = ValueSemantics.sortOrder(aValues[c][a], bValues[c][b])
                        if o == .orderedSame { continue }
                        fromSecond = ascending[c] ? o == .orderedDescending : o == .orderedAscending
                        break
                    }
                }
                if fromSecond {
                    keys.append(bKeys[j])
                    for c in later { values[c].append(bValues[c][bRows[j]]) }
                    j += 1
                } else {
                    keys.append(aKeys[i])
                    for c in later { values[c].append(aValues[c][aRows[i]]) }
                    i += 1
                }
            }
            count = keys.count
        }

        init(operands: Int) { values = Array(repeating: [], count: operands) }
    }

    /// The plan's rows from `SELECT a0.id, <operands> FROM … ORDER BY <order>` (the operands in
    /// `range`; with `keys`, only the matching objects among those), a row at a time: the cursor,
    /// and a reader of the current row's key and operand values.
    private func select(_ db: Database, orderBy order: String, operands range: Range<Int>? = nil, keys: [Int64]? = nil) throws -> (RowCursor, OperandColumns) {
        var columns = OperandColumns(Array(operands[range ?? operands.indices]))
        var bound = translation.arguments
        var only = ""
        if let keys {
            bound.append(("[" + keys.map(String.init).joined(separator: ",") + "]").databaseValue)
            only = " AND a0.id IN (SELECT value FROM json_each(?\(bound.count)))"
        }
        let sql = "SELECT \((["a0.id"] + columns.sql).joined(separator: ", ")) \(from)\(only) ORDER BY \(order)"
        let selected = try db.makeStatement(sql: sql)
        columns.reader = ColumnReader(selected)
        // Values bound by operands left out are past the statement's last placeholder: unbound.
        selected.setUncheckedArguments(StatementArguments(bound))
        return (try Row.fetchCursor(selected), columns)
    }

    /// The matching objects in key order with their operands' values (``Rows``); with
    /// `skippingSortKeys`, the first sort's own columns are left empty (not read); with
    /// `sortKeysOnly`, every column after them is (see ``keeping(_:of:_:isCancelled:)``).
    func rows(_ db: Database, skippingSortKeys: Bool = false, sortKeysOnly: Bool = false, isCancelled: () -> Bool) throws -> Rows {
        var rows = Rows(operands: operands.count)
        if case .count = statement {
            rows.count = try Int.fetchOne(db, sql: "SELECT count(*) \(from)", arguments: arguments) ?? 0
            return rows
        }
        let sorted = firstSort?.1.count ?? 0
        let first = skippingSortKeys ? sorted : 0
        var (cursor, columns) = try select(db, orderBy: "a0.id", operands: first..<(sortKeysOnly ? sorted : operands.count))
        // A group's keys are counted as they come (its rows are not kept).
        var isGroup = false
        if case .group = statement { isGroup = true }
        while let row = try cursor.next() {
            rows.count += 1
            if isGroup {
                columns.read(row, translation) { _, value in rows.groups[value, default: 0] += 1 }
            } else {
                rows.keys.append(columns.key)
                columns.read(row, translation) { i, value in rows.values[first + i].append(value) }
            }
            if rows.count % 4_096 == 0, isCancelled() { throw DatabaseError(resultCode: .SQLITE_INTERRUPT) }
        }
        return rows
    }

    func execute(_ db: Database, isCancelled: () -> Bool) throws -> SourceAnswer {
        if let (_, sortKeys) = firstSort { return answer(try sortedRows(db, isCancelled: isCancelled).inOrder(sorted: sortKeys.count)) }
        return answer(try rows(db, isCancelled: isCancelled))
    }

    /// The answer over the matching objects `rows` (from ``rows(_:isCancelled:)``, or for a query
    /// whose first clause sorts, in its order: ``sortedRows(_:isCancelled:)``).
    func answer(_ rows: Rows) -> SourceAnswer {
        let (keys, values) = (rows.keys, rows.values)
        switch statement {
        case .count:
            return .count(rows.count)
        case .group(let q, let by):
            return .groups(key: by.description, rows: QueryEngine.groupClauses(QueryEngine.frequencyRows(counts: rows.groups), q.clauses), total: rows.count)
        case .query(let q):
            let (order, next) = QueryEngine.applyClauses(q.clauses, values: values, count: keys.count, sortedFirst: firstSort != nil)
            if let projection = q.projection {
                let rows = order.map { i in (next..<next + projection.count).map { values[$0][i] } }
                return .projection(columns: ResultTable.distinctNames(projection.map(\.name)), rows: rows, keys: order.map { .int(keys[$0]) })
            }
            return .objects(typeName: typeName, keys: order.map { .int(keys[$0]) })
        default:
            return .count(keys.count)
        }
    }

    /// True when a `limit` right after the first sort keeps fewer rows than a large type holds and
    /// columns come after the sort's own (a projection, `distinct` paths): those are then read
    /// only for the rows the limit keeps (``keeping(_:of:_:isCancelled:)``), as the engine
    /// evaluates them only over those (a `select title` after `sort by price limit 3` read and
    /// parsed every document of the type for three rows).
    var readsKeptRowsAlone: Bool {
        guard let (_, sortKeys) = firstSort else { return false }
        return sortedEnough <= 50_000 && operands.count > sortKeys.count
    }

    /// `rows` (in key order, read with `sortKeysOnly` when ``readsKeptRowsAlone``) cut to `order`,
    /// the positions of the rows kept in the sort's order: in that order, with the operands after
    /// the sort's own either moved into it or, when unread, read for those rows by their keys.
    func keeping(_ order: [Int], of rows: Rows, _ db: Database, isCancelled: () -> Bool) throws -> Rows {
        var kept = rows
        kept.keys = order.map { rows.keys[$0] }
        kept.count = kept.keys.count
        guard readsKeptRowsAlone, let (_, sortKeys) = firstSort else {
            kept.order = order
            return kept
        }
        let later = sortKeys.count..<operands.count
        var (cursor, columns) = try select(db, orderBy: "a0.id", operands: later, keys: kept.keys)
        var byKey: [Int64: [Value]] = [:]
        while let row = try cursor.next() {
            var values: [Value] = []
            columns.read(row, translation) { _, value in values.append(value) }
            byKey[columns.key] = values
            if byKey.count % 4_096 == 0, isCancelled() { throw DatabaseError(resultCode: .SQLITE_INTERRUPT) }
        }
        // Read on the snapshot that matched them, every kept row is there.
        let found = try kept.keys.map { key -> [Value] in
            guard let values = byKey[key] else { throw StoreError(.unreadable, reason: "a sorted row was not found again by its key") }
            return values
        }
        kept.order = nil
        // The sort's own columns (when read) in order too: two halves' rows are merged by them.
        kept.values = operands.indices.map { c in
            later.contains(c) ? found.map { $0[c - later.lowerBound] } : rows.values[c].isEmpty ? [] : order.map { rows.values[c][$0] }
        }
        return kept
    }

    /// The matching objects of a query whose first clause sorts, in that sort's order, with
    /// every operand's values; at most ``sortedEnough`` of them. Where SQLite orders the first
    /// keys as the engine does, SQL sorts by them (then by key, the engine's order for ties),
    /// rows come in runs that agree on them, and each run is sorted by the other keys as it
    /// ends: only one run is sorted here at a time, and reading stops at the first run's end that
    /// reaches the limit. Otherwise (or unless `sqlOrders`) the rows are read in key order and
    /// sorted here.
    func sortedRows(_ db: Database, sqlOrders: Bool = true, isCancelled: () -> Bool) throws -> Rows {
        guard let (_, sortKeys) = firstSort else { return try rows(db, isCancelled: isCancelled) }
        let enough = sortedEnough
        let ascending = sortKeys.map(\.ascending)
        guard sqlOrders, let prefix = sortKeys.indices.firstIndex(where: { !translation.ordersInSQL(operands[$0]) }) ?? Optional(sortKeys.count), prefix > 0 else {
            let sorted = try rows(db, sortKeysOnly: readsKeptRowsAlone, isCancelled: isCancelled)
            let order = Array(QueryEngine.sortOrder(columns: Array(sorted.values[0..<sortKeys.count]), ascending: ascending).prefix(enough))
            return try keeping(order, of: sorted, db, isCancelled: isCancelled)
        }
        let orderBy = (0..<prefix).map { operands[$0].sql + (ascending[$0] ? "" : " DESC") } + ["a0.id"]
        var (cursor, columns) = try select(db, orderBy: orderBy.joined(separator: ", "))
        var sorted = Rows(operands: operands.count)
        var runKeys: [Int64] = [], runPrefix: [DatabaseValue] = [], run: [[Value]] = Array(repeating: [], count: operands.count)
        func finishRun() {
            guard !runKeys.isEmpty else { return }
            let order = prefix < sortKeys.count
                ? QueryEngine.sortOrder(columns: Array(run[prefix..<sortKeys.count]), ascending: Array(ascending[prefix...])) : Array(runKeys.indices)
            for i in order {
                sorted.keys.append(runKeys[i])
                for c in run.indices { sorted.values[c].append(run[c][i]) }
            }
            runKeys.removeAll(keepingCapacity: true)
            for c in run.indices { run[c].removeAll(keepingCapacity: true) }
        }
        var read = 0
        while let row = try cursor.next() {
            let cells = (0..<prefix).map { columns.cell(of: $0) }
            if !runKeys.isEmpty, !zip(cells, runPrefix).allSatisfy(Self.sortsEqual) {
                finishRun()
                if sorted.keys.count >= enough { break }
            }
            if runKeys.isEmpty { runPrefix = cells }
            runKeys.append(columns.key)
            columns.read(row, translation) { i, value in run[i].append(value) }
            read += 1
            if read % 4_096 == 0, isCancelled() { throw DatabaseError(resultCode: .SQLITE_INTERRUPT) }
        }
        finishRun()
        if sorted.keys.count > enough {
            sorted.keys.removeLast(sorted.keys.count - enough)
            for c in sorted.values.indices { sorted.values[c].removeLast(sorted.values[c].count - enough) }
        }
        sorted.count = sorted.keys.count
        return sorted
    }

    /// True when SQLite's `ORDER BY` puts two sort values level: equal numbers (an integer and a
    /// real by value), or two NULLs.
    static func sortsEqual(_ a: DatabaseValue, _ b: DatabaseValue) -> Bool {
        switch (a.storage, b.storage) {
        case (.null, .null): return true
        case let (.int64(x), .int64(y)): return x == y
        case let (.double(x), .double(y)): return x == y
        case let (.int64(x), .double(y)), let (.double(y), .int64(x)): return Double(x) == y && Int64(exactly: y) == x
        default: return false
        }
    }
}

/// How a plan reads its operands from its rows: the `SELECT` list after the key (each operand's
/// SQL once: operands reading members of one document share its column, and the members are
/// read in one pass over it, ``DocumentMembers``) and each operand's place in it.
struct OperandColumns {
    /// The expressions selected after the key, in order.
    let sql: [String]
    /// Reads the current row's cells; set once the statement is made.
    var reader: ColumnReader?
    private enum Source { case cell(column: Int32, conversion: PredicateTranslation.Conversion), member(document: Int, slot: Int) }
    private let sources: [Source]
    /// Per document column: its position in the row and the members read from it.
    private let documents: [(column: Int32, members: DocumentMembers)]
    /// One buffer per document column: the current row's members.
    private var memberValues: [[Value]]

    init(_ operands: [PredicateTranslation.Operand]) {
        var sql: [String] = [], sources: [Source] = []
        var documentNames: [String: [String]] = [:], documentOrder: [String] = []
        for operand in operands {
            if case .member(let name) = operand.conversion {
                if documentNames[operand.sql] == nil { documentOrder.append(operand.sql) }
                documentNames[operand.sql, default: []].append(name)
                sources.append(.member(document: documentOrder.firstIndex(of: operand.sql)!, slot: documentNames[operand.sql]!.count - 1))
            } else {
                sources.append(.cell(column: Int32(sql.count + 1), conversion: operand.conversion))
                sql.append(operand.sql)
            }
        }
        documents = documentOrder.map { document in
            sql.append(document)
            return (Int32(sql.count), DocumentMembers(documentNames[document]!))
        }
        memberValues = documents.map { Array(repeating: .null, count: $0.members.names.count) }
        self.sql = sql
        self.sources = sources
    }

    /// The current row's key (column 0).
    var key: Int64 { reader?.int64(0) ?? 0 }

    /// The cell an operand read in SQL (not a document's member) holds in the current row.
    func cell(of operand: Int) -> DatabaseValue {
        guard case .cell(let column, _) = sources[operand], let reader else { return .null }
        return reader.value(column)
    }

    /// Each operand's value in the current row (`row`, the cursor's), in operand order.
    mutating func read(_ row: Row, _ translation: PersistTranslation, _ each: (Int, Value) -> Void) {
        guard let reader else { return }
        for d in documents.indices { documents[d].members.values(row, at: Int(documents[d].column), into: &memberValues[d]) }
        for (i, source) in sources.enumerated() {
            switch source {
            case .cell(let column, let conversion): each(i, translation.convert(reader.value(column), conversion))
            case .member(let document, let slot): each(i, memberValues[document][slot])
            }
        }
    }
}
