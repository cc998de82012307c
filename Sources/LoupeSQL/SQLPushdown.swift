import Foundation
import Synchronization
import GRDB
import LoupeModel
import LoupeQuery
import LoupeStore

/// Answers a statement with SQLite over a relational file, without loading the graph: the second
/// engine behind `loupe query` (the in-memory engine is the first), with the same answers.
///
/// The filter runs in SQL (``SQLTranslation``: joins along foreign keys, backlinks as correlated
/// subqueries, the engine's own value tests as SQL functions); `sort`, `distinct`, `limit`,
/// `select` and `group by` run over the matching rows' values with the engine's orderings; the
/// result's objects are read by rowid, as a load reads them. Names are checked first by the
/// engine itself, over the file's schema with no objects, so errors read the same.
///
/// Relations a load would infer from a file's values (undeclared `XId` columns) are found over
/// the file first (``RelationalFormat/layout(_:file:inferred:)``, kept in Loupe's cache) and
/// joined as declared ones. `run` returns nil, and the caller loads the graph, whenever the answer
/// could differ: files other than plain relational ones, tables without a reachable rowid, and
/// the constructs ``SQLTranslation`` leaves out.
public enum SQLPushdown {
    /// The statement's result and the graph its objects live in, or nil (see above).
    public static func run(_ statement: LoupeQuery.Statement, file: StoreFile) throws -> (result: QueryResult, graph: ObjectGraph)? {
        try withPlan(statement, file: file, isCancelled: nil) { plan, db in try plan.execute(db) }
    }

    /// Writes the statement's result to `sink` in `mode` as ``run(_:file:)``'s result prints, its
    /// objects read `partSize` rows at a time, each part written and let go (memory holds a part,
    /// never the answer: all of a table of millions of rows printed). False, with nothing
    /// written, when it does not translate exactly (see above).
    /// `warn` is given what a load of the file's schema warns of, before anything is written
    /// (a load prints it first).
    /// With `throwingDeclines`, a statement the translation knows why it cannot say throws that
    /// ``Decline`` instead of returning false.
    public static func write(_ statement: LoupeQuery.Statement, file: StoreFile, mode: OutputMode, toTerminal: Bool, to sink: OutputSink,
                             partSize: Int = SourceAnswer.partSize, throwingDeclines: Bool = false, warn: ([String]) -> Void = { _ in }) throws -> Bool {
        try withPlan(statement, file: file, isCancelled: nil, throwingDeclines: throwingDeclines) { plan, db in
            warn(plan.translation.layout.warnings)
            return try plan.write(db, mode: mode, toTerminal: toTerminal, to: sink, partSize: partSize)
        } != nil
    }

    /// The statement's answer as a ``QuerySource`` gives it (objects and projection rows by key,
    /// read by nobody), or nil (see above); `isCancelled` interrupts SQLite mid-statement.
    /// read by nobody), or nil (see above); `isCancelled` interrupts SQLite mid-statement. With
    /// `throwingDeclines`, the ``Decline`` the translation names instead of nil, where it names one.
    public static func answer(_ statement: LoupeQuery.Statement, file: StoreFile, inferred: [InferredKey]? = nil, throwingDeclines: Bool = false,
                              isCancelled: @escaping @Sendable () -> Bool) throws -> SourceAnswer? {
        try withPlan(statement, file: file, inferred: inferred, isCancelled: isCancelled, throwingDeclines: throwingDeclines) { plan, db in try plan.answer(db) }
    }

    /// Checks the statement's names with the engine over the file's layout, translates it, and
    /// runs `body` on the plan (in one read, or on a connection `isCancelled` interrupts); nil
    /// when it does not translate exactly.
    private static func withPlan<T>(_ statement: LoupeQuery.Statement, file: StoreFile, inferred: [InferredKey]? = nil, isCancelled: (@Sendable () -> Bool)?,
                                    throwingDeclines: Bool = false, _ body: (Plan<SQLTranslation>, Database) throws -> T) throws -> T? {
        guard statement.pushdownRoot != nil else { return nil }
        // A statement's own error (a misspelt name) leaves the read as it is; the file's are the store's.
        var declined: [SQLConstruct] = []
        do {
            func work(_ db: Database) throws -> Result<T?, QueryError> {
                guard ObjectIdentifier(try StoreFormats.detect(db, path: file.path)) == ObjectIdentifier(RelationalFormat.self) else { return .success(nil) }
                let layout = try RelationalFormat.layout(db, file: file, inferred: inferred).layout
                do {
                    // Every name, kind and quantifier error, exactly as the engine reports them.
                    _ = try QueryEngine(graph: layout.graph).run(statement)
                    let facts = FileFacts(file: file)
                    defer { facts.save() }
                    let translation = SQLTranslation(layout: layout, db: db, facts: facts)
                    let answer = try Plan.run(statement, translation) { try body($0, db) }
                    if answer == nil { declined = translation.declined }
                    return .success(answer)
                } catch let error as QueryError {
                    return .failure(error)
                }
            }
            let outcome = try isCancelled.map { try file.readInterruptibly(isCancelled: $0, work) } ?? file.read(work)
            let answer = try outcome.get()
            // What stopped the translation, as data, when it knows.
            if answer == nil, throwingDeclines, !declined.isEmpty { throw Decline(.sql, .untranslated(uses: declined), over: .relational) }
            return answer
        } catch let error as StoreError where error.path == nil {
            throw error.located(at: file.path)
        }
    }

    /// `loupe_test(k, …)` and `loupe_aggregate(k, v)` on this connection, for this translation.
    static func register(_ translation: PredicateTranslation, in db: Database) {
        nonisolated(unsafe) let t = translation
        // Its arguments read whole (``Database/addExactFunction(_:_:)``): a text holding a NUL is
        // compared as the engine compares it, not cut short at the NUL.
        db.addExactFunction("loupe_test") { values in
            guard let k = values.first.flatMap(Int.fromDatabaseValue), t.tests.indices.contains(k) else { return false.databaseValue }
            return t.tests[k](Array(values.dropFirst())).databaseValue
        }
        // A text as the integer key it spells for the engine (`Int64(text)`), else NULL.
        db.add(function: DatabaseFunction("loupe_int_key", argumentCount: 1, pure: true) { values in
            String.fromDatabaseValue(values[0]).flatMap { Int64($0) }
        })
        AggregateRegistry.current.withLock { $0 = AggregateRegistry(translation: t) }
        db.add(function: DatabaseFunction("loupe_aggregate", argumentCount: 2, pure: true, aggregate: EngineAggregate.self))
    }
}

/// The translation whose aggregates `loupe_aggregate` computes (SQLite makes aggregate instances
/// itself, with no context of ours; one statement runs at a time).
final class AggregateRegistry: @unchecked Sendable {
    let translation: PredicateTranslation
    init(translation: PredicateTranslation) { self.translation = translation }
    static let current = Mutex<AggregateRegistry?>(nil)
}

/// `loupe_aggregate(k, value)`: collects the values (as the engine reads them) and answers with a
/// handle to the engine's aggregate of them.
struct EngineAggregate: DatabaseAggregate {
    private var k = -1
    private var values: [Value] = []

    init() {}

    mutating func step(_ dbValues: [DatabaseValue]) throws {
        guard let registry = AggregateRegistry.current.withLock({ $0 }), let k = Int.fromDatabaseValue(dbValues[0]),
              registry.translation.aggregates.indices.contains(k) else { return }
        self.k = k
        values.append(registry.translation.aggregates[k].convert(dbValues[1]))
    }

    func finalize() throws -> (any DatabaseValueConvertible)? {
        guard let registry = AggregateRegistry.current.withLock({ $0 }) else { return nil }
        let t = registry.translation
        // No row at all: NULL, which the SQL turns into the handle of the empty aggregate.
        guard t.aggregates.indices.contains(k) else { return nil }
        t.aggregated.append(ValueTest.aggregate(t.aggregates[k].aggregate, values))
        return t.aggregated.count - 1
    }
}

/// What a ``Plan`` needs of a layout's translation beyond predicates: where a type's rows are,
/// which values SQLite orders and groups as the engine does, and the keys of rows.
protocol RowTranslation: PredicateTranslation {
    /// The table holding type `t`'s rows, the name of its rowid, the condition (on alias `a0`)
    /// that keeps the rows that are `t`'s objects (nil: every row is one), and the terms that
    /// order them as the engine lists them (`a0.rowid`; a type with subtypes lists its own
    /// objects, then each subtype's); nil when SQL cannot read the type's rows. Asked once per
    /// plan, before any path is translated (a layout notes there what the rows under `a0` may be).
    func rows(of t: Int) -> (name: String, rowid: String, condition: String?, order: String)?
    /// The table and column a cell conversion reads, when SQLite holds its values as the engine
    /// does (no dates, no booleans or UUIDs read from other kinds): then SQL's order and groups
    /// are the engine's, given the checks ``Plan`` makes of the values.
    func plainColumn(_ conversion: Conversion) -> (table: String, column: String)?
    /// ``PredicateTranslation/keyLookup(_:key:)`` on the rows of `type` under `alias`, or empty.
    func keyLookup(_ predicate: LoupeQuery.Predicate?, _ type: Int, alias: String) -> String
    /// True when a type's key is always an integer that SQL orders as the engine does.
    func integerKeyed(_ type: Int) -> Bool
    /// The keys of type `t`'s rows `rowids`, in that order (a rowid no row has is left out).
    func keys(ofRowids rowids: [Int64], type t: Int, _ db: Database) throws -> [ObjectID]
}

extension SQLTranslation: RowTranslation {
    func rows(of t: Int) -> (name: String, rowid: String, condition: String?, order: String)? {
        layout.tables[t].map { ($0.name, $0.rowid, nil, "a0.\($0.rowid)") }
    }

    func plainColumn(_ conversion: Conversion) -> (table: String, column: String)? {
        guard case .cell(let t, let a) = conversion, let table = layout.tables[t], !table.columns[a].isDate else { return nil }
        return (table.name, table.columns[a].name)
    }

    func keys(ofRowids rowids: [Int64], type t: Int, _ db: Database) throws -> [ObjectID] {
        try layout.keys(ofRowids: rowids, type: t, db)
    }
}

/// A statement as SQL plus what runs over its rows in Swift.
struct Plan<Translation: RowTranslation> {
    let statement: LoupeQuery.Statement
    let translation: Translation
    let root: Int
    /// The root type's table, its rowid, the condition that keeps its objects, and their order.
    let table: (name: String, rowid: String, condition: String?, order: String)
    let condition: String
    /// Values fetched per row beside the rowid: sort keys, distinct paths, projected columns, or
    /// the group key, in the order the clauses use them.
    let operands: [PredicateTranslation.Operand]
    /// `ORDER BY …` when the first clause sorts by columns SQLite orders as the engine does, and
    /// `LIMIT …` when a limit follows it directly (then SQL applies both, and an index serves).
    let sqlOrder: String?
    let sqlLimit: String?
    /// `LIMIT …` when the first clause is a limit and nothing can fail on a later row (no value
    /// test that may record a failure): rows come in rowid order, and SQL stops at the limit.
    let sqlLimitFirst: String?

    init?(_ statement: LoupeQuery.Statement, _ translation: Translation) throws {
        self.statement = statement
        self.translation = translation
        let graph = translation.graph
        guard let (name, predicate) = statement.pushdownRoot, let type = graph.type(named: name.text), let root = graph.types.firstIndex(where: { $0.name == type.name }),
              let table = translation.rows(of: root) else { return nil }
        self.root = root
        self.table = table
        let scope = PredicateTranslation.Scope(alias: "a0", type: root)
        if let predicate {
            guard let sql = try translation.predicate(predicate.comparingKeys(from: root, in: graph), scope) else { return nil }
            let lookup = translation.keyLookup(predicate, root, alias: "a0")
            condition = lookup.isEmpty ? sql : "(\(sql))\(lookup)"
        } else {
            condition = "1"
        }
        guard let operands = try translation.clauseOperands(statement, scope) else { return nil }
        self.operands = operands
        // SQL may stop at a limit only where no row past it could fail a test (a MATCHES giving
        // up on a long text): the engine reads every object before the limit.
        let mayStopAtALimit = !translation.valueTests.contains(where: \.mayFail)
        // Sorting by plain columns of the row (numbers, ASCII text, no blobs, no dates, or an
        // integer key): SQLite's order is the engine's (NULL first, numbers by value, text by
        // bytes: `COLLATE BINARY`, whatever collation the column declares), ties in store order
        // as the engine keeps it.
        var order: String?, limit: String?
        if case .query(let q) = statement, case .sort(let keys)? = q.clauses.first {
            var terms: [String] = []
            for (i, k) in keys.enumerated() {
                let operand = operands[i]
                switch operand.conversion {
                case .cell(let t, _) where t == root:
                    guard let (_, name) = translation.plainColumn(operand.conversion), operand.sql == "a0.\(SQL.identifier(name))" else { break }
                    if try !translation.holdsBlobsOrNonASCII(name, in: table.name) { terms.append(operand.sql + " COLLATE BINARY" + (k.ascending ? "" : " DESC")) }
                case .key where translation.integerKeyed(root):
                    terms.append(operand.sql + (k.ascending ? "" : " DESC"))
                default:
                    break
                }
                if terms.count != i + 1 { break }
            }
            if terms.count == keys.count {
                order = "ORDER BY " + (terms + [table.order]).joined(separator: ", ")
                if q.clauses.count > 1, case .limit(let n, let offset) = q.clauses[1], mayStopAtALimit {
                    limit = "LIMIT \(n) OFFSET \(offset)"
                }
            }
        }
        sqlOrder = order
        sqlLimit = limit
        if case .query(let q) = statement, case .limit(let n, let offset)? = q.clauses.first, mayStopAtALimit {
            sqlLimitFirst = "LIMIT \(n) OFFSET \(offset)"
        } else {
            sqlLimitFirst = nil
        }
    }

    /// True when SQL's `GROUP BY` on this key makes the engine's groups: a plain column (not a
    /// date column) whose values are all integers, all reals, or all ASCII text (with NULLs):
    /// the engine tells the integer 1 from the real 1.0 and groups text by canonical
    /// equivalence, SQL does neither.
    private func groupsExactly(_ key: PredicateTranslation.Operand, _ db: Database) throws -> Bool {
        guard let (keyTable, name) = translation.plainColumn(key.conversion) else { return false }
        let kinds = try translation.kinds(of: name, in: keyTable).subtracting(["null"])
        return try kinds.count <= 1 && kinds.isSubset(of: ["integer", "real", "text"]) && !translation.holdsBlobsOrNonASCII(name, in: keyTable)
    }

    /// What the plan found: a count, groups with how many objects they counted, or rows (by
    /// rowid, in result order) with a projection's values.
    enum Found {
        case count(Int)
        case groups(key: String, rows: [(key: Value, count: Int)], total: Int)
        case projection(columns: [String], rows: [[Value]], rowids: [Int64])
        /// `everyRow`: the rows are all the table's (read it whole rather than by a list).
        case objects(rowids: [Int64], everyRow: Bool)
    }

    /// `body` on the plan of `statement` over `translation` (nil when it does not translate),
    /// with the translation's SQL functions registered on its connection for the while, and
    /// then the failures its value tests recorded thrown.
    static func run<T>(_ statement: LoupeQuery.Statement, _ translation: Translation, _ body: (Plan) throws -> T) throws -> T? {
        SQLPushdown.register(translation, in: translation.db)
        defer { AggregateRegistry.current.withLock { $0 = nil } }
        guard let plan = try Plan(statement, translation) else { return nil }
        let answer = try body(plan)
        for test in translation.valueTests { try test.check() }
        return answer
    }

    /// The answer with objects and projection rows as their keys.
    func answer(_ db: Database) throws -> SourceAnswer {
        switch try find(db) {
        case .count(let n): return .count(n)
        case .groups(let key, let rows, let total): return .groups(key: key, rows: rows, total: total)
        case .projection(let columns, let rows, let rowids):
            let keys = try translation.keys(ofRowids: rowids, type: root, db)
            // A damaged table can lose a row between two reads: then no keys rather than wrong ones.
            return .projection(columns: columns, rows: rows, keys: keys.count == rows.count ? keys : [])
        case .objects(let rowids, _):
            return .objects(typeName: translation.graph.types[root].name.rawValue, keys: try translation.keys(ofRowids: rowids, type: root, db))
        }
    }
}

extension Plan where Translation == SQLTranslation {
    /// The result as the engine gives it, its objects read by rowid as a load reads them.
    func execute(_ db: Database) throws -> (QueryResult, ObjectGraph) {
        try execute(db, try find(db))
    }

    /// The result of what ``find(_:)`` found.
    private func execute(_ db: Database, _ found: Found) throws -> (QueryResult, ObjectGraph) {
        let empty = GraphBuilder(formatName: "").finish()
        switch found {
        case .count(let n): return (.count(n), empty)
        case .groups(let key, let rows, _): return (.groups(key: key, rows: rows, objects: []), empty)
        case .projection(let columns, let rows, _): return (.projection(columns: columns, rows: rows, refs: []), empty)
        case .objects(let chosen, let everyRow):
            let (graph, rows) = try RelationalFormat.objects(db, table: table.name, rowids: chosen, everyRow: everyRow,
                                                                   policy: translation.layout.graph.types[root].keyPolicy)
            guard let type = graph.types.first else { return (.objects(type: nil, refs: []), graph) }
            return (.objects(type: type, refs: chosen.compactMap { rows[$0].map { ObjectRef(type: 0, row: $0) } }), graph)
        }
    }

    /// The result written as ``execute(_:)``'s prints, objects `partSize` rows at a time, after
    /// the statement's value tests passed (nothing is written for a statement that fails).
    func write(_ db: Database, mode: OutputMode, toTerminal: Bool, to sink: OutputSink, partSize: Int) throws {
        let found = try find(db)
        for test in translation.valueTests { try test.check() }
        guard case .objects(let chosen, _) = found, chosen.count > partSize else {
            let (result, graph) = try execute(db, found)
            return result.write(mode, graph: graph, toTerminal: toTerminal, to: sink)
        }
        // Each part's rows go from SQLite to the writer as values, with no graph (a table's
        // attributes are its columns, in order: see ``RelationalLayout``).
        let type = translation.layout.graph.types[root]
        var keyColumn: String?
        if case .column(let key, _) = type.keyPolicy { keyColumn = key }
        var writer = QueryResult.ObjectsWriter(attributes: type.attributes.map(\.name), keyColumn: keyColumn, mode: mode, toTerminal: toTerminal, to: sink)
        for start in stride(from: 0, to: chosen.count, by: partSize) {
            let part = Array(chosen[start ..< min(chosen.count, start + partSize)])
            let (ids, values) = try RelationalFormat.rowValues(db, table: table.name, rowids: part, policy: type.keyPolicy)
            writer.write(typeName: type.name.rawValue, ids: ids, values: values)
        }
        writer.finish()
    }

}

extension Plan {
    func find(_ db: Database) throws -> Found {
        let from = "FROM \(SQL.identifier(table.name)) a0 WHERE \(table.condition.map { "\($0) AND " } ?? "")\(condition)"
        let arguments = StatementArguments(translation.arguments)
        if case .count = statement {
            return .count(try Int.fetchOne(db, sql: "SELECT count(*) \(from)", arguments: arguments) ?? 0)
        }
        if case .group(let q, let by) = statement {
            // A key SQL groups exactly as the engine does (one kind of value, text in ASCII):
            // counted by GROUP BY; otherwise counted here from every row's key.
            if let key = operands.first, try groupsExactly(key, db) {
                var counts: [Value: Int] = [:]
                var total = 0
                // By bytes, as the engine groups ASCII text, whatever collation the column declares.
                let grouped = try Row.fetchAll(db, sql: "SELECT \(key.sql), count(*) \(from) GROUP BY \(key.sql) COLLATE BINARY", arguments: arguments)
                for row in grouped {
                    counts[translation.convert(row[0] as DatabaseValue, key.conversion), default: 0] += row[1] as Int
                    total += row[1] as Int
                }
                return .groups(key: by.description, rows: QueryEngine.groupClauses(QueryEngine.frequencyRows(counts: counts), q.clauses), total: total)
            }
        }
        // When SQL sorts (and limits) and nothing after that reads the rows' values, only the
        // rowids are read: 2.5M books sorted keep no values in memory.
        var operands = operands
        if case .query(let q) = statement, q.projection == nil,
           (sqlOrder != nil && (q.clauses.count == 1 || (q.clauses.count == 2 && sqlLimit != nil))) || (sqlLimitFirst != nil && q.clauses.count == 1) {
            operands = []
        }
        let columns = ["a0.\(table.rowid)"] + operands.map(\.sql)
        var rowids: [Int64] = []
        var values: [[Value]] = Array(repeating: [], count: operands.count)
        let sql = "SELECT \(columns.joined(separator: ", ")) \(from) \(sqlOrder ?? "ORDER BY \(table.order)") \(sqlLimit ?? sqlLimitFirst ?? "")"
        let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        while let row = try cursor.next() {
            rowids.append(row[0])
            for (i, operand) in operands.enumerated() {
                values[i].append(translation.convert(row[i + 1] as DatabaseValue, operand.conversion))
            }
        }
        if case .group(let q, let by) = statement {
            let rows = QueryEngine.groupClauses(QueryEngine.frequencyRows(values[0].map { [$0] }), q.clauses)
            return .groups(key: by.description, rows: rows, total: rowids.count)
        }
        guard case .query(let q) = statement else { return .count(0) }
        // The clauses in order, over row positions.
        let (order, next) = operands.isEmpty && (sqlOrder != nil || sqlLimitFirst != nil) ? (Array(rowids.indices), 0)
            : QueryEngine.applyClauses(sqlLimitFirst != nil ? Array(q.clauses.dropFirst()) : q.clauses, values: values, count: rowids.count,
                                       sortedFirst: sqlOrder != nil, limitedSecond: sqlLimit != nil)
        if let projection = q.projection {
            let rows = order.map { i in (next..<next + projection.count).map { values[$0][i] } }
            return .projection(columns: ResultTable.distinctNames(projection.map(\.name)), rows: rows, rowids: order.map { rowids[$0] })
        }
        let chosen = order.map { rowids[$0] }
        // Every row of the table, reordered: read the table whole rather than by a list of rowids.
        return .objects(rowids: chosen, everyRow: condition == "1" && sqlLimit == nil && sqlLimitFirst == nil && chosen.count == rowids.count)
    }
}

/// A relational file's statements answered by SQLite over the file (``SQLPushdown``), objects by
/// key: paged mode's ``QuerySource`` for plain SQLite files.
public final class RelationalQuerySource: QuerySource, Sendable {
    public let file: StoreFile
    /// The relations a load would infer, as paged mode found them at open (nil: found again, or
    /// as kept in Loupe's cache).
    public let inferred: [InferredKey]?
    public init(file: StoreFile, inferred: [InferredKey]? = nil) {
        self.file = file
        self.inferred = inferred
    }

    /// SQL over the file `pages` reads, with the relations it found a load would infer.
    public convenience init(pages: RelationalPages) { self.init(file: pages.file, inferred: pages.inferred) }

    /// What a ``PagedStoreHost``-style host answers statements with over a state of the file:
    /// SQL over the file as it is (it reads nothing ahead to carry across a commit).
    @Sendable public static func following(_ pages: RelationalPages, previous: (any QuerySource)?, after reach: ChangeReach?) -> (any QuerySource)? {
        RelationalQuerySource(pages: pages)
    }

    public func answer(_ statement: LoupeQuery.Statement, isCancelled: @escaping @Sendable () -> Bool) throws -> SourceAnswer? {
        try SQLPushdown.answer(statement, file: file, inferred: inferred, isCancelled: isCancelled)
    }

    public func answerOrDecline(_ statement: LoupeQuery.Statement, declaring attributes: [String: Set<String>],
                                isCancelled: @escaping @Sendable () -> Bool) throws -> SourceAnswer? {
        guard attributes.isEmpty else { return nil }
        return try SQLPushdown.answer(statement, file: file, inferred: inferred, throwingDeclines: true, isCancelled: isCancelled)
    }
}
