import Foundation
import GRDB
import GRDBSQLite
import LoupeModel
import Synchronization

/// The native format: jimbokun/Persist's tables, which Loupe reads and writes.
///
/// - `by_type(id INTEGER PRIMARY KEY, type_name TEXT, json TEXT)`: one row per object; `id` is
///   global across types; `json` holds the encoded properties, relations never among them, `nil`
///   omitted, dates as `yyyy-MM-dd HH:mm:ss ZZZZZ` strings. Keys are kept as stored: a file
///   whose ids are text (UUIDs, `"007"`) keeps them as text, and its relations still resolve.
/// - `relations(from_id, to_id, relation)`: one row per edge; a to-many's order is rowid order.
/// - Persist's later undo/redo tables (`operations`, `by_type_history`, …) may be there; Loupe
///   reads past them and keeps them as they are.
/// - Loupe adds, when it writes, indexes (on `relations`, and on `by_type.type_name`) and its own
///   `loupe_relation_kinds` table, which records which relations are to-many (Persist cannot tell
///   a to-many of one target from a to-one).
///
/// Loading reads each document's JSON text in place and parses it once with ``JSONReader``
/// (iterative, so any nesting costs heap, not stack); a sample of each type's documents, split by
/// SQLite's `json_each`, gives the columns their order (a type's usual keys first, as stored), and
/// keys the sample missed get columns as they appear. Two connections read in parallel, the types'
/// documents and the relations shared between them by estimated cost.
public enum PersistFormat: StoreFormat {
    public static let name = "Persist"

    public static func matches(_ db: Database) throws -> Bool {
        guard let objects = try db.columnNames(of: "by_type"), let relations = try db.columnNames(of: "relations") else {
            return false
        }
        return Set(["id", "type_name", "json"]).isSubset(of: objects)
            && Set(["from_id", "to_id", "relation"]).isSubset(of: relations)
    }

    /// With Loupe's index on `type_name`, the names come from a skip-scan of the index (one seek per
    /// type) and the counts are left unknown (-1) for the load to fill in; without it, one scan.
    public static func catalog(_ db: Database) throws -> [(name: String, count: Int)] {
        let indexed = try Row.fetchAll(db, sql: "SELECT name FROM pragma_index_list('by_type')")
            .contains { ($0[0] as DatabaseValue).lenientText == "loupe_by_type_type" }
        guard indexed else { return try storedTypes(db).map { ($0.name, $0.count) } }
        let names = try DatabaseValue.fetchAll(db, sql: """
            WITH RECURSIVE t(name) AS (
              SELECT min(type_name) FROM by_type
              UNION ALL SELECT (SELECT min(type_name) FROM by_type WHERE type_name > t.name) FROM t WHERE t.name IS NOT NULL)
            SELECT name FROM t WHERE name IS NOT NULL
            """)
        let first = try names.map { try DatabaseValue.fetchOne(db, sql: "SELECT min(id) FROM by_type WHERE type_name = ?", arguments: [$0])?.objectID ?? .int(0) }
        return zip(names, first).sorted { $0.1 < $1.1 }.map { (typeName(of: $0.0), -1) }
    }

    /// Every type with its count: one `GROUP BY` over `by_type` (0.1 s at a million objects).
    public static func countedCatalog(_ db: Database) throws -> [(name: String, count: Int)] {
        try storedTypes(db).map { ($0.name, $0.count) }
    }

    /// The type name a stored `type_name` shows as: its text (a BLOB decoded as UTF-8), or
    /// `(no type)` for NULL.
    static func typeName(of stored: DatabaseValue) -> String { stored.lenientText ?? "(no type)" }

    /// Every stored `type_name` with its count, in order of the type's first object.
    static func storedTypes(_ db: Database) throws -> [TypeInfo] {
        try Row.fetchAll(db, sql: "SELECT type_name, CAST(type_name AS BLOB), count(*), min(id) FROM by_type GROUP BY type_name ORDER BY min(id)").map { row in
            var info = TypeInfo(row, count: (row[2] as DatabaseValue).lenientInt.map(Int.init) ?? 0)
            // (Keys that are not integers are left alone: a foreign writer's text ids.)
            if case .int64(let first) = (row[3] as DatabaseValue).storage { info.firstID = first }
            return info
        }
    }

    /// One stored type as the catalog sees it before its documents are read.
    struct TypeInfo: Sendable {
        /// The type a row of `type_name` (column 0) and `CAST(type_name AS BLOB)` (column 1) names,
        /// with `count` objects. Text that is not UTF-8 comes back repaired, and the repaired text
        /// would find no row: such a name is matched by its bytes (``matches``).
        init(_ row: Row, count: Int) {
            var stored = row[0] as DatabaseValue
            var byBytes = false
            if case .string = stored.storage, case .blob(let bytes) = (row[1] as DatabaseValue).storage, String(validating: bytes, as: UTF8.self) == nil {
                stored = bytes.databaseValue
                byBytes = true
            }
            self.init(name: PersistFormat.typeName(of: row[0]), stored: stored, count: count, storedAsBytes: byBytes)
        }

        /// The name the type shows as.
        let name: String
        /// The `type_name` as stored (text, or whatever a foreign writer left there), bound as is;
        /// for text that is not UTF-8, its bytes.
        let stored: DatabaseValue
        let count: Int
        /// True when `stored` holds the bytes of a text name that is not UTF-8.
        var storedAsBytes = false
        /// The type's smallest integer `id`, when the catalog read it (a sample of its first
        /// documents then starts there instead of scanning from the store's first row).
        var firstID: Int64?
        /// Keys holding scalars in the sample, in order of first appearance.
        var scalarKeys: [String] = []
        /// Keys holding arrays or objects in the sample.
        var nestedKeys: [String] = []

        /// The condition that selects the type's rows, with `stored` bound to its `?`.
        var matches: String { storedAsBytes ? "type_name IS CAST(? AS TEXT)" : "type_name IS ?" }

        init(name: String, stored: DatabaseValue, count: Int, storedAsBytes: Bool = false) {
            self.name = name
            self.stored = stored
            self.count = count
            self.storedAsBytes = storedAsBytes
        }
    }

    /// Loupe's own record of relation cardinalities.
    static let relationKindsTable = "loupe_relation_kinds"

    /// How many documents of each type are split with `json_each` to learn its keys.
    static let sampleSize = 64

    /// The stack each loader thread gets: nested values are built without recursion, but freeing
    /// and comparing a 2,000-level value recurses, and a dispatch worker's 512 KB is not enough.
    static let loaderStackSize = 64 << 20

    /// Types with at least this many objects are read in two halves by id, one per reader.
    static let splitSize = 50_000

    public static func load(_ file: StoreFile, progress: LoadProgress?) throws -> LoadedGraph {
        try load(file, progress: progress, only: nil)
    }

    public static func load(_ file: StoreFile, progress: LoadProgress?, onlyTypes: Set<String>) throws -> LoadedGraph {
        try load(file, progress: progress, only: onlyTypes)
    }

    /// The first `limit` objects of one type in id order, with their attributes (no relations),
    /// read while the whole graph loads. Columns come in the order the load gives them when the
    /// page is at least the load's sample (scalar keys first, then nested ones, as first seen).
    public static func firstPage(_ file: StoreFile, type: String, limit: Int) throws -> ObjectGraph? {
        try file.read { db in
            let builder = GraphBuilder(formatName: name)
            let t = builder.type(type, keyPolicy: .globalInteger)
            // The load's column order (``KeyOrder``).
            var order = KeyOrder()
            var rows: [[(String, Value)]] = []
            let cursor = try Row.fetchCursor(db, sql: "SELECT id, json FROM by_type WHERE type_name = ? ORDER BY id LIMIT ?", arguments: [type, limit])
            while let row = try cursor.next() {
                builder.addObject(type: t, id: (row[0] as DatabaseValue).objectID ?? .int(0))
                let members = members(row, at: 1)
                order.add(members)
                rows.append(members ?? [])
            }
            let slots = Dictionary(order.order.map { ($0, builder.attribute($0, of: t)) }, uniquingKeysWith: { a, _ in a })
            for (r, members) in rows.enumerated() {
                for (key, value) in members { builder.set(value, type: t, row: r, attribute: slots[key]!) }
            }
            return builder.finish()
        }
    }

    /// Every relation name: one pass over the relation rows' names (0.16 s at two million rows).
    public static func relationNames(_ db: Database) throws -> Set<String>? {
        Set(try DatabaseValue.fetchAll(db, sql: "SELECT DISTINCT relation FROM relations").compactMap(\.lenientText))
    }

    /// Loads every type, or only those named in `only` (then no relation is read).
    private static func load(_ file: StoreFile, progress: LoadProgress?, only: Set<String>?) throws -> LoadedGraph {
        var clock = PhaseClock()
        // Two connections on one snapshot of the file. The first reads the catalog and plans the
        // work: each type's documents, and the relations, largest first to the less busy reader
        // (a document costs about one unit per key, a relation row about one unit, measured on
        // the sample); the second waits for the plan. Then both read their share in parallel.
        var plan = Plan(readers: 2)
        let read = { @Sendable (plan: Plan, worker: Int, db: Database) throws -> [(Int, ReaderOutput)] in
            let work: Plan.Work
            if worker == 0 {
                work = try plan.publish {
                    let started = DispatchTime.now()
                    var warnings: [String] = []
                    let (types, kinds) = try readCatalog(db, only: only, warnings: &warnings)
                    let relationRows = try Int.fetchOne(db, sql: "SELECT max(rowid) FROM relations") ?? 0
                    // Items: a type's documents (2t), or its two halves by id (2t, 2t + 1) when
                    // it is large enough for two readers to share.
                    var items: [(work: Int, weight: Int)] = []
                    var boundaries: [DatabaseValue?] = Array(repeating: nil, count: types.count)
                    let perDocument = types.map { $0.scalarKeys.count + $0.nestedKeys.count * 3 + 1 }
                    let totalWeight = types.indices.reduce(only == nil ? relationRows : 0) { $0 + types[$1].count * perDocument[$1] }
                    for t in types.indices {
                        let perDocument = perDocument[t]
                        // Only a type that would leave the other reader idle is split (splitting
                        // costs a seek for the middle id and a merge of the halves).
                        if plan.readers > 1, types[t].count >= splitSize, types[t].count * perDocument * plan.readers > totalWeight,
                           let middle = try DatabaseValue.fetchOne(db, sql: "SELECT id FROM by_type WHERE \(types[t].matches) ORDER BY id LIMIT 1 OFFSET ?",
                                                                   arguments: [types[t].stored, types[t].count / 2]) {
                            boundaries[t] = middle
                            items.append((2 * t, types[t].count / 2 * perDocument))
                            items.append((2 * t + 1, (types[t].count - types[t].count / 2) * perDocument))
                        } else {
                            items.append((2 * t, types[t].count * perDocument))
                        }
                    }
                    // The relations in halves by rowid (-1: the first, -2: the second), so that
                    // each reader can take one and the two stay balanced.
                    if only == nil {
                        items.append((-1, relationRows / 2))
                        if plan.readers == 1 { items.append((-2, relationRows - relationRows / 2)) }   // else the second reader's first
                    }
                    // Largest first; each reader takes the next item when it is free (estimates
                    // of the cost differ by type; taking turns balances whatever they are).
                    let order = items.sorted(by: { $0.weight > $1.weight }).map(\.work)
                    let total = types.reduce(0) { $0 + $1.count }
                    progress?(0, total)
                    return Plan.Work(types: types, kinds: kinds, order: order, boundaries: boundaries, warnings: warnings,
                                     counter: ProgressCounter(total: total, report: progress),
                                     catalogSeconds: Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9,
                                     relationMidpoint: Int64(relationRows / 2))
                }
                var done: [(Int, ReaderOutput)] = []
                while let item = work.take() { done.append(try readItem(item, work: work, db: db)) }
                return done
            }
            // The other readers start on the second half of the relations (which needs no
            // catalog) while the first reads the catalog, then take turns with it.
            var done: [(Int, ReaderOutput)] = []
            if worker == 1, only == nil {
                let midpoint = Int64((try Int.fetchOne(db, sql: "SELECT max(rowid) FROM relations") ?? 0) / 2)
                done.append((-2, .relations(try readRelations(db, half: 1, of: midpoint))))
            }
            work = try plan.wait()
            while let item = work.take() { done.append(try readItem(item, work: work, db: db)) }
            return done
        }
        /// One item of the plan: a type's documents (or one half of them), or a half of the relations.
        @Sendable func readItem(_ item: Int, work: Plan.Work, db: Database) throws -> (Int, ReaderOutput) {
            if item < 0 { return (item, .relations(try readRelations(db, half: -item - 1, of: work.relationMidpoint))) }
            let t = item / 2
            return (item, .documents(try readDocuments(db, type: work.types[t], half: work.boundaries[t].map { (item % 2, $0) },
                                                       counter: work.counter)))
        }
        var snapshot: (results: [[(Int, ReaderOutput)]], stamp: FileStamp)
        do {
            let twoReaders = plan
            snapshot = try file.readOnSnapshot(workers: 2, stackSize: loaderStackSize) { worker, db in try read(twoReaders, worker, db) }
        } catch let e as StoreError where e.kind == .busy {
            // A writer commits between any two reads: one connection reads everything in one transaction.
            plan = Plan(readers: 1)
            let oneReader = plan
            snapshot = try file.readOnSnapshot(workers: 1, stackSize: loaderStackSize) { worker, db in try read(oneReader, worker, db) }
        }
        let (results, stamp) = snapshot
        let work = try plan.wait()
        let types = work.types, declaredKinds = work.kinds, total = work.counter.total
        var warnings = work.warnings
        clock.lap("types, sampled keys, documents and relations (\(plan.readers) readers; catalog \(String(format: "%.3f", work.catalogSeconds)) s)")
        var parts: [[TypeDocuments?]] = Array(repeating: [nil, nil], count: types.count)
        var halves: [RawEdges?] = [nil, nil]
        for (item, output) in results.joined() {
            switch output {
            case .relations(let list): halves[-item - 1] = list
            case .documents(let d): parts[item / 2][item % 2] = d
            }
        }
        var documents: [TypeDocuments?] = parts.map { halves in
            guard var first = halves[0] else { return nil }
            if let second = halves[1] { first.append(second) }
            return first
        }
        parts.removeAll()

        // Objects and columns into the graph; then the keys the sample did not cover.
        let builder = GraphBuilder(formatName: name)
        var invalid = 0, notObjects = 0
        var simpleKeys = true
        // Persist's ids are `by_type`'s rowids: SQLite's rule, above every id its sequence gave
        // when the table is declared AUTOINCREMENT (a new object's id is above every type's floor).
        let idFloor = (try? file.read { db in try SQLiteSequence.value(db, table: "by_type") }) ?? 0
        for (t, info) in types.enumerated() {
            guard var result = documents[t] else { continue }
            documents[t] = nil
            let type = builder.type(info.name, keyPolicy: .globalInteger)
            builder.setKeyFloor(idFloor, type: type)
            let firstRow = builder.count(of: type)   // two stored names may show as one type
            if firstRow != 0 || !result.ids.allSatisfy({ if case .int = $0 { return true } else { return false } }) { simpleKeys = false }
            builder.addObjects(type: type, ids: result.ids)
            if firstRow == 0 {
                for (slot, key) in result.keys.enumerated() {
                    let a = builder.attribute(key, of: type)
                    // Taken out of the documents, so that it goes once the builder holds it compactly.
                    var column = result.columns[slot]
                    result.columns[slot] = ColumnValues()
                    if column.count > result.ids.count { column.removeLast(column.count - result.ids.count) }
                    builder.setColumn(type: type, attribute: a, values: column, kinds: result.kinds[slot], presentCount: result.present[slot])
                }
            } else {
                for (slot, key) in result.keys.enumerated() {
                    let a = builder.attribute(key, of: type)
                    for (row, v) in result.columns[slot].prefix(result.ids.count).enumerated() where !v.isNull {
                        builder.set(v, type: type, row: firstRow + row, attribute: a)
                    }
                }
            }
            invalid += result.invalid
            notObjects += result.notObjects
        }
        documents.removeAll()
        if notObjects > 0 { warnings.append("\(notObjects) documents are not JSON objects; they show no attributes") }
        if invalid > 0 { warnings.append("\(invalid.counting("object")) \(invalid == 1 ? "has JSON that does not parse; it shows" : "have JSON that does not parse; they show") no attributes") }
        clock.lap("columns into the graph")

        // Relations, in rowid order, under the kinds Loupe recorded.
        let lookup = IDLookup(builder: builder)
        // Per type, per relation name (its global number): the builder's relation and its edges.
        var perRelation: [[(relation: Int, from: [Int32], to: [ObjectRef])?]] = Array(repeating: [], count: builder.typeCount)
        var names: [String] = [], nameIndex: [String: Int32] = [:]
        var dangling = 0
        for h in halves.indices {
            guard let edges = halves[h] else { continue }
            halves[h] = nil
            // Each half numbers its relation names itself: one numbering for both.
            let global: [Int32] = edges.names.map { name in
                if let known = nameIndex[name] { return known }
                names.append(name)
                nameIndex[name] = Int32(names.count - 1)
                return Int32(names.count - 1)
            }
            dangling += edges.dangling
            let allIntegers = edges.otherKeys.isEmpty
            if !allIntegers { simpleKeys = false }
            for i in 0..<edges.from.count {
                let from: ObjectRef?, to: ObjectRef?
                if allIntegers {
                    (from, to) = (lookup.ref(int: edges.from[i]), lookup.ref(int: edges.to[i]))
                } else {
                    let (fromKey, toKey) = edges.keys(i)
                    (from, to) = (lookup.ref(fromKey), lookup.ref(toKey))
                }
                guard let from, let to else { dangling += 1; continue }
                let t = Int(from.type), n = Int(global[Int(edges.name[i])])
                if n >= perRelation[t].count { perRelation[t].append(contentsOf: repeatElement(nil, count: n + 1 - perRelation[t].count)) }
                if perRelation[t][n] == nil {
                    let relation = names[n]
                    let r = builder.relation(relation, of: t, foreignKey: nil, toMany: declaredKinds[builder.typeName(t) + "\u{0}" + relation] ?? false)
                    perRelation[t][n] = (r, [], [])
                }
                perRelation[t][n]!.from.append(from.row)
                perRelation[t][n]!.to.append(to)
            }
        }
        for (t, relations) in perRelation.enumerated() {
            for case let list? in relations { builder.addEdges(type: t, relation: list.relation, fromRows: list.from, to: list.to) }
        }
        // Relations Loupe declared but with no edges yet still belong to the schema.
        for (key, toMany) in declaredKinds.sorted(by: { $0.key < $1.key }) {
            let parts = key.split(separator: "\u{0}", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2, let t = builder.existingType(parts[0]) else { continue }
            builder.relation(parts[1], of: t, toMany: toMany)
        }
        if dangling > 0 { warnings.append("\(dangling) relation rows point at objects that do not exist; they were skipped") }
        clock.lap("edges into the graph")
        let graph = builder.finish()
        clock.lap("adjacency and backlink tables")
        progress?(total, total)
        var loaded = LoadedGraph(graph: graph, warnings: warnings)
        loaded.timings = clock.timings
        loaded.stamp = stamp
        loaded.simpleKeys = simpleKeys && only == nil
        return loaded
    }

    /// The load's plan, made by the first reader and waited for by the second.
    private final class Plan: Sendable {
        /// How many connections share the work.
        let readers: Int
        init(readers: Int) { self.readers = readers }

        final class Work: Sendable {
            let types: [TypeInfo]
            let kinds: [String: Bool]
            /// The items (a type's index, or -1/-2 for a half of the relations), largest first.
            let order: [Int]
            /// The next item not yet taken.
            let next: Mutex<Int>
            /// For each type read in two halves, the first id of the second.
            let boundaries: [DatabaseValue?]
            let warnings: [String]
            let counter: ProgressCounter
            let catalogSeconds: Double
            /// The last rowid of the first half of the relations.
            let relationMidpoint: Int64

            init(types: [TypeInfo], kinds: [String: Bool], order: [Int], boundaries: [DatabaseValue?], warnings: [String],
                 counter: ProgressCounter, catalogSeconds: Double, relationMidpoint: Int64) {
                self.types = types
                self.kinds = kinds
                self.order = order
                self.next = Mutex(0)
                self.boundaries = boundaries
                self.warnings = warnings
                self.counter = counter
                self.catalogSeconds = catalogSeconds
                self.relationMidpoint = relationMidpoint
            }

            /// The next item for a free reader, or nil when all are taken.
            func take() -> Int? {
                next.withLock { i in
                    guard i < order.count else { return nil }
                    defer { i += 1 }
                    return order[i]
                }
            }
        }
        private let result = Mutex<Result<Work, any Error>?>(nil)
        private let ready = DispatchSemaphore(value: 0)

        /// Makes the plan and lets the waiting reader go on (with the plan or its failure).
        func publish(_ make: () throws -> Work) throws -> Work {
            let made = Result { try make() }
            result.withLock { $0 = made }
            ready.signal()
            return try made.get()
        }

        /// The plan, once published.
        func wait() throws -> Work {
            if let done = result.withLock({ $0 }) { return try done.get() }
            ready.wait()
            ready.signal()   // for a later waiter
            return try result.withLock { $0 }!.get()
        }
    }

    /// What one piece of a reader's work produced.
    private enum ReaderOutput: Sendable {
        case documents(TypeDocuments)
        case relations(RawEdges)
    }

    /// Types in order of their first object, a sample of each type's keys, and Loupe's relation kinds.
    private static func readCatalog(_ db: Database, only: Set<String>?, warnings: inout [String]) throws -> ([TypeInfo], [String: Bool]) {
        var types = try storedTypes(db)
        if let only { types = types.filter { only.contains($0.name) } }
        for t in types.indices {
            // A sample of the type's documents that are JSON objects, split one by one (a
            // malformed document never reaches json_each).
            let sample = try DatabaseValue.fetchAll(db, sql: """
                SELECT id FROM by_type WHERE \(types[t].matches) AND json_valid(json) AND json_type(json) = 'object'
                ORDER BY id LIMIT \(sampleSize)
                """, arguments: [types[t].stored])
            var seen = Set<String>(), nested = Set<String>()
            var keys: [String] = []
            for id in sample {
                for row in try Row.fetchAll(db, sql: "SELECT key, type FROM json_each((SELECT json FROM by_type WHERE id IS ?)) ORDER BY id",
                                            arguments: [id]) {
                    guard let key = (row[0] as DatabaseValue).lenientText else { continue }
                    let type = (row[1] as DatabaseValue).lenientText ?? ""
                    // Keys that a JSON path cannot spell safely are left to the leftover pass.
                    if key.contains("\"") || key.contains("\\") { continue }
                    if seen.insert(key).inserted { keys.append(key) }
                    if type == "array" || type == "object" { nested.insert(key) }
                }
            }
            types[t].scalarKeys = keys.filter { !nested.contains($0) }
            types[t].nestedKeys = keys.filter { nested.contains($0) }
        }
        var kinds: [String: Bool] = [:]
        if try db.tableExists(relationKindsTable) {
            for row in try Row.fetchAll(db, sql: "SELECT type_name, relation, to_many FROM \(relationKindsTable)") {
                guard let type = (row[0] as DatabaseValue).lenientText, let relation = (row[1] as DatabaseValue).lenientText else {
                    warnings.append("\(relationKindsTable): a row without a type or relation name was skipped")
                    continue
                }
                kinds[type + "\u{0}" + relation] = (row[2] as DatabaseValue).lenientBool
            }
        }
        return (types, kinds)
    }

    /// One type's documents, split into columns, read by one thread.
    private struct TypeDocuments: Sendable {
        var ids: [ObjectID] = []
        private(set) var keys: [String]
        /// Each key's values: held as the first value's kind from the start (``ColumnValues``).
        var columns: [ColumnValues]
        var kinds: [ValueKind]
        var present: [Int]
        /// Documents whose JSON does not parse.
        var invalid = 0
        /// Documents that parse but are not JSON objects (or are NULL).
        var notObjects = 0
        private let capacity: Int

        init(keys: [String], capacity: Int) {
            self.keys = keys
            self.capacity = capacity
            columns = keys.map { _ in ColumnValues(nulls: capacity) }
            kinds = Array(repeating: [], count: keys.count)
            present = Array(repeating: 0, count: keys.count)
        }

        /// A column for a key the sample did not see; returns its slot.
        mutating func addKey(_ key: String) -> Int {
            keys.append(key)
            columns.append(ColumnValues(nulls: capacity))
            kinds.append([])
            present.append(0)
            return keys.count - 1
        }

        /// Appends the rows of `other` (the documents after these), its keys merged into these.
        mutating func append(_ other: TypeDocuments) {
            let n = ids.count, m = other.ids.count
            for slot in columns.indices where columns[slot].count > n { columns[slot].removeLast(columns[slot].count - n) }
            var slotOf = Dictionary(keys.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
            var extended = Array(repeating: false, count: keys.count)
            for (o, key) in other.keys.enumerated() {
                let slot: Int
                if let known = slotOf[key] { slot = known } else {
                    keys.append(key)
                    columns.append(ColumnValues(nulls: n))
                    kinds.append([])
                    present.append(0)
                    extended.append(false)
                    slot = keys.count - 1
                    slotOf[key] = slot
                }
                var theirs = other.columns[o]
                if theirs.count > m { theirs.removeLast(theirs.count - m) }
                columns[slot].append(theirs)
                kinds[slot].formUnion(other.kinds[o])
                present[slot] += other.present[o]
                extended[slot] = true
            }
            for slot in columns.indices where !extended[slot] { columns[slot].append(ColumnValues(nulls: m)) }
            ids.append(contentsOf: other.ids)
            invalid += other.invalid
            notObjects += other.notObjects
        }

        /// Removes the columns from `slot` on (keys only a document that did not parse named).
        mutating func dropKeys(from slot: Int) {
            guard slot < keys.count else { return }
            keys.removeLast(keys.count - slot)
            columns.removeLast(columns.count - slot)
            kinds.removeLast(kinds.count - slot)
            present.removeLast(present.count - slot)
        }

        /// Takes back what a document that did not parse set, latest first.
        mutating func undo(row: Int, _ touched: [(slot: Int, kinds: ValueKind)]) {
            for (slot, kinds) in touched.reversed() {
                columns[slot][row] = .null
                self.kinds[slot] = kinds
                present[slot] -= 1
            }
        }

        /// Sets one value and counts it for schema inference.
        @inline(__always)
        mutating func set(_ value: Value, row: Int, slot: Int) {
            columns[slot][row] = value
            kinds[slot].insert(value.kind)
            present[slot] += 1
        }
    }

    /// One type's documents, in id order: each JSON text is read in place (no copy) and parsed
    /// once by ``JSONReader``, its members going to the columns of the sampled keys, or to new
    /// columns for keys the sample did not see. A document that does not parse, or is not an
    /// object, is an object without attributes (counted for the load's warnings).
    private static func readDocuments(_ db: Database, type info: TypeInfo, half: (part: Int, boundary: DatabaseValue)?,
                                      counter: ProgressCounter) throws -> TypeDocuments {
        let capacity = half.map { $0.part == 0 ? info.count / 2 : info.count - info.count / 2 } ?? info.count
        var result = TypeDocuments(keys: info.scalarKeys + info.nestedKeys, capacity: capacity)
        var slotByKey = Dictionary(result.keys.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        var keyBytes = result.keys.map { Array($0.utf8) }
        let range = half.map { $0.part == 0 ? " AND id < ?" : " AND id >= ?" } ?? ""
        let statement = try db.makeStatement(sql: "SELECT id, json FROM by_type WHERE \(info.matches)\(range) ORDER BY id")
        let cursor = try Row.fetchCursor(statement, arguments: [info.stored] + (half.map { [$0.boundary] } ?? []))
        let columns = ColumnReader(statement)
        result.ids.reserveCapacity(capacity)
        // A document's members wait here until the whole document has parsed.
        // The columns a document has set so far, with their kinds before it: undone if the
        // document turns out not to parse (its members are set as they are read, never copied).
        var touched: [(slot: Int, kinds: ValueKind)] = []
        while let row = try cursor.next() {
            let r = result.ids.count
            guard r < capacity else { break }   // rows added since the count: read next time
            result.ids.append(columns.value(0).objectID ?? .int(0))
            touched.removeAll(keepingCapacity: true)
            let keysBefore = result.keys.count
            let outcome: Bool? = try row.withUnsafeData(atIndex: 1) { data in
                guard let data else { return false }
                return data.withUnsafeBytes { raw in
                    var expected = 0
                    return try? JSONReader.forEachMember(bytes: raw.bindMemory(to: UInt8.self)) { key, decoded, value in
                        // Members usually come in the sampled order: compare bytes with the next
                        // slot's key before hashing.
                        let slot: Int
                        if decoded == nil, expected < keyBytes.count, keyBytes[expected].elementsEqual(key) { slot = expected }
                        else {
                            let text = decoded ?? PersistFormat.repairedKey(key)
                            if let known = slotByKey[text] { slot = known } else {
                                slot = result.addKey(text)
                                slotByKey[text] = slot
                                keyBytes.append(Array(text.utf8))
                            }
                        }
                        expected = slot + 1
                        touched.append((slot, result.kinds[slot]))
                        result.set(value, row: r, slot: slot)
                    }
                }
            }
            switch outcome {
            case true?: break
            case false?: result.notObjects += 1
            case nil:
                result.invalid += 1
                result.undo(row: r, touched)
                // Keys only that document named are not the type's.
                for key in result.keys[keysBefore...] { slotByKey[key] = nil }
                keyBytes.removeLast(keyBytes.count - keysBefore)
                result.dropKeys(from: keysBefore)
            }
            if result.ids.count & 0x3FFF == 0 { counter.add(0x4000) }
        }
        return result
    }

    /// Every relation row, in rowid order, as stored keys.
    ///
    /// Keys are 8-byte integers in the arrays (a million-edge file is all integers); the rare row
    /// whose key is anything else keeps its keys in `otherKeys`, by row.
    private struct RawEdges: Sendable {
        var names: [String] = []
        var from: [Int64] = []
        var to: [Int64] = []
        var name: [Int32] = []
        var otherKeys: [Int: (from: ObjectID, to: ObjectID)] = [:]
        var dangling = 0

        /// The keys of row `i`.
        @inline(__always) func keys(_ i: Int) -> (from: ObjectID, to: ObjectID) {
            if !otherKeys.isEmpty, let other = otherKeys[i] { return other }
            return (.int(from[i]), .int(to[i]))
        }
    }

    /// One half of the relation rows (`half` 0: rowids up to `midpoint`; 1: the rest), in rowid order.
    private static func readRelations(_ db: Database, half: Int, of midpoint: Int64) throws -> RawEdges {
        var list = RawEdges()
        var nameIndex: [String: Int32] = [:]
        let statement = try db.makeStatement(sql: "SELECT from_id, to_id, relation FROM relations WHERE \(half == 0 ? "rowid <= ?" : "rowid > ?") ORDER BY rowid")
        let cursor = try Row.fetchCursor(statement, arguments: [midpoint])
        let columns = ColumnReader(statement)
        var lastName = "", lastIndex: Int32 = -1
        while try cursor.next() != nil {
            let fromValue = columns.value(0), toValue = columns.value(1)
            let fromInt: Int64, toInt: Int64
            if case .int64(let f) = fromValue.storage, case .int64(let t) = toValue.storage {
                fromInt = f
                toInt = t
            } else {
                guard let from = fromValue.objectID, let to = toValue.objectID else { list.dangling += 1; continue }
                list.otherKeys[list.from.count] = (from, to)
                fromInt = 0
                toInt = 0
            }
            let name = columns.string(2) ?? (columns.value(2).lenientText ?? "")
            if lastIndex < 0 || name != lastName {
                if let known = nameIndex[name] { lastIndex = known } else {
                    lastIndex = Int32(list.names.count)
                    nameIndex[name] = lastIndex
                    list.names.append(name)
                }
                lastName = name
            }
            list.from.append(fromInt)
            list.to.append(toInt)
            list.name.append(lastIndex)
        }
        return list
    }
}

/// Reads the current row of a statement column by column through GRDB's `StatementColumnConvertible`
/// decoders. `Row`'s subscripts go through a type-erased generic path that costs about 0.8 µs a
/// value, which is most of a million-object load; these cost a few nanoseconds.
public struct ColumnReader {
    private let statement: SQLiteStatement

    public init(_ statement: Statement) { self.statement = statement.sqliteStatement }

    /// The column as text, nil for NULL.
    @inline(__always) public func string(_ index: Int32) -> String? {
        sqlite3_column_type(statement, index) == SQLITE_NULL ? nil : ExactText.column(statement, index)
    }
    /// The column as an integer, nil for NULL.
    @inline(__always) public func int64(_ index: Int32) -> Int64? { Int64?.fromStatement(statement, atUncheckedIndex: index) ?? nil }
    /// The column as a database value (for atoms of any kind).
    @inline(__always) public func value(_ index: Int32) -> DatabaseValue {
        sqlite3_column_type(statement, index) == SQLITE_TEXT ? ExactText.column(statement, index).databaseValue
            : DatabaseValue(sqliteStatement: statement, index: index)
    }
}

/// Finds an object by its global Persist key: a direct table when integer keys are dense, else a
/// dictionary; text keys (and keys that match only with SQLite's affinity leniency) by dictionary.
struct IDLookup {
    private var base: Int64 = 0
    /// Dense integer keys: `(type + 1) << 32 | row`, 0 for none (8 bytes a key, so that the
    /// random reads of a large store's edges stay within fewer pages).
    private var dense: [UInt64] = []
    private var sparse: [ObjectID: ObjectRef] = [:]

    init(builder: GraphBuilder) {
        var minID = Int64.max, maxID = Int64.min, integers = 0, others = 0
        for t in 0..<builder.typeCount {
            for id in builder.ids(of: t) {
                if case .int(let i) = id { minID = min(minID, i); maxID = max(maxID, i); integers += 1 } else { others += 1 }
            }
        }
        // The span of the integer keys, when it neither overflows nor is much larger than their count.
        let (span, overflow) = maxID.subtractingReportingOverflow(minID)
        let useDense = integers > 0 && !overflow && span < Int64(integers) * 4 + 1024
        if useDense {
            base = minID
            dense = Array(repeating: 0, count: Int(span) + 1)
        }
        sparse.reserveCapacity(useDense ? others : integers + others)
        for t in 0..<builder.typeCount {
            for (row, id) in builder.ids(of: t).enumerated() {
                if useDense, case .int(let i) = id {
                    if dense[Int(i - base)] == 0 { dense[Int(i - base)] = UInt64(t + 1) << 32 | UInt64(row) }
                } else if sparse[id] == nil {
                    sparse[id] = ObjectRef(type: t, row: row)
                }
            }
        }
    }

    /// The object with the integer key `i`, by the dense table when it covers it.
    @inline(__always)
    func ref(int i: Int64) -> ObjectRef? {
        if !dense.isEmpty {
            let (offset, overflow) = i.subtractingReportingOverflow(base)
            if !overflow, offset >= 0, offset < Int64(dense.count) {
                let packed = dense[Int(offset)]
                if packed != 0 { return ObjectRef(type: Int32(packed >> 32) - 1, row: Int32(truncatingIfNeeded: packed)) }
            }
        }
        return ref(.int(i))
    }

    private func exact(_ id: ObjectID) -> ObjectRef? {
        if !dense.isEmpty, case .int(let i) = id {
            let (offset, overflow) = i.subtractingReportingOverflow(base)
            if !overflow, offset >= 0, offset < Int64(dense.count) {
                let packed = dense[Int(offset)]
                return packed == 0 ? nil : ObjectRef(type: Int32(packed >> 32) - 1, row: Int32(truncatingIfNeeded: packed))
            }
            return sparse[id]
        }
        return sparse[id]
    }

    func ref(_ id: ObjectID) -> ObjectRef? {
        if let r = exact(id) { return r }
        return id.affinityAlternative.flatMap(exact)
    }
}

/// Counts objects read by several threads and reports now and then.
final class ProgressCounter: Sendable {
    private let done = Mutex(0)
    let total: Int
    private let report: LoadProgress?

    init(total: Int, report: LoadProgress?) {
        self.total = total
        self.report = report
    }

    func add(_ n: Int) {
        guard let report else { return }
        let now = done.withLock { $0 += n; return $0 }
        report(min(now, total), total)
    }
}

/// JSON text as SQLite returns it, read into model values.
enum JSONText {
    /// A string, or a date when it is in Persist's date form.
    @inline(__always)
    static func text(_ s: String) -> Value {
        if PersistDates.isPersistDate(s), let date = DateText.parse(s) { return .date(date) }
        return .string(s)
    }
}

/// Persist's date strings: `yyyy-MM-dd HH:mm:ss Z` (21 bytes) or `yyyy-MM-dd HH:mm:ss ±HH:mm`
/// (26 bytes), the forms `DateFormatter` writes with `ZZZZZ` at UTC and elsewhere.
enum PersistDates {
    /// True for text in exactly the form Persist's DateFormatter writes.
    static func isPersistDate(_ s: String) -> Bool {
        guard s.utf8.count == 21 || s.utf8.count == 26 else { return false }
        var s = s
        return s.withUTF8 { isPersistDate($0) }
    }

    /// As ``isPersistDate(_:)``, on UTF-8 bytes.
    @inline(__always)
    static func isPersistDate(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard b.count == 21 || b.count == 26 else { return false }
        return b[4] == 45 && b[7] == 45 && b[10] == 32 && b[13] == 58 && b[16] == 58 && b[19] == 32
            && (b.count == 21 ? b[20] == 90 : (b[20] == 43 || b[20] == 45) && b[23] == 58)
    }
}
