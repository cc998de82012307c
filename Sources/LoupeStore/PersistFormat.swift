import Foundation
import GRDB
import LoupeModel

/// The native format: jimbokun/Persist's tables, which Loupe reads and writes.
///
/// - `by_type(id INTEGER PRIMARY KEY, type_name TEXT, json TEXT)`: one row per object; `id` is
///   global across types; `json` holds the encoded properties, relations never among them, `nil`
///   omitted, dates as `yyyy-MM-dd HH:mm:ss ZZZZZ` strings.
/// - `relations(from_id, to_id, relation)`: one row per edge; a to-many's order is rowid order.
/// - Persist's later undo/redo tables (`operations`, `by_type_history`, …) may be there; Loupe
///   reads past them and keeps them as they are.
/// - Loupe adds, when it writes, indexes (on `relations`, and on `by_type.type_name`) and its own
///   `loupe_relation_kinds` table, which records which relations are to-many (Persist cannot tell
///   a to-many of one target from a to-one).
///
/// Loading leaves JSON parsing to SQLite, which splits documents several times faster than
/// Foundation parses them. For each type, one statement extracts every scalar key seen in a sample
/// of its documents (`json -> '$."key"'`, one parse per document) and `json_remove` of the sampled
/// keys returns whatever else a document holds, so no key is ever missed; keys that hold arrays or
/// objects are split by `json_tree` and assembled here. Two connections read in parallel, the
/// types' documents and the relations shared between them by estimated cost.
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
        let indexed = try Row.fetchAll(db, sql: "PRAGMA index_list(by_type)").contains { ($0["name"] as String?) == "loupe_by_type_type" }
        guard indexed else {
            return try Row.fetchAll(db, sql: "SELECT type_name, count(*) FROM by_type GROUP BY type_name ORDER BY min(id)").map { ($0[0] ?? "", $0[1]) }
        }
        let names = try String.fetchAll(db, sql: """
            WITH RECURSIVE t(name) AS (
              SELECT min(type_name) FROM by_type
              UNION ALL SELECT (SELECT min(type_name) FROM by_type WHERE type_name > t.name) FROM t WHERE t.name IS NOT NULL)
            SELECT name FROM t WHERE name IS NOT NULL
            """)
        let first = try names.map { try Int64.fetchOne(db, sql: "SELECT min(id) FROM by_type WHERE type_name = ?", arguments: [$0]) ?? 0 }
        return zip(names, first).sorted { $0.1 < $1.1 }.map { ($0.0, -1) }
    }

    /// Loupe's own record of relation cardinalities.
    static let relationKindsTable = "loupe_relation_kinds"

    /// How many documents of each type are split with `json_each` to learn its keys.
    static let sampleSize = 64

    /// One stored type as the catalog sees it before its documents are read.
    private struct TypeInfo {
        let name: String
        let count: Int
        /// Keys holding scalars in the sample, in order of first appearance.
        var scalarKeys: [String] = []
        /// Keys holding arrays or objects in the sample.
        var nestedKeys: [String] = []
    }

    public static func load(_ file: StoreFile, progress: LoadProgress?) throws -> LoadedGraph {
        var clock = PhaseClock()
        var (types, declaredKinds) = try file.read { db in try readCatalog(db) }
        let total = types.reduce(0) { $0 + $1.count }
        progress?(0, total)
        let counter = ProgressCounter(total: total, report: progress)
        clock.lap("types and sampled keys")

        // Two readers, one per core, share the work: each type's documents, and the relations,
        // largest first to the less busy reader. A document costs about one unit per key, a
        // relation row about one unit (measured on the sample).
        let relationRows = try file.read { try Int.fetchOne($0, sql: "SELECT max(rowid) FROM relations") } ?? 0
        var items: [(work: Int, weight: Int)] = types.indices.map { ($0, types[$0].count * (types[$0].scalarKeys.count + types[$0].nestedKeys.count * 3 + 1)) }
        items.append((-1, relationRows))   // -1: the relations
        var groups: [[Int]] = [[], []]
        var weight = [0, 0]
        for item in items.sorted(by: { $0.weight > $1.weight }) {
            let g = weight[0] <= weight[1] ? 0 : 1
            groups[g].append(item.work)
            weight[g] += item.weight
        }
        var documents: [TypeDocuments?] = Array(repeating: nil, count: types.count)
        var edges = RawEdges()
        var failures: [Error] = []
        let lock = NSLock()
        let catalog = types
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            do {
                let reader = try file.makeReader()
                try reader.read { db in
                    for work in groups[worker] {
                        if work < 0 {
                            let list = try readRelations(db)
                            lock.lock(); edges = list; lock.unlock()
                        } else {
                            let result = try readDocuments(db, type: catalog[work], counter: counter)
                            lock.lock(); documents[work] = result; lock.unlock()
                        }
                    }
                }
            } catch {
                lock.lock(); failures.append(error); lock.unlock()
            }
        }
        if let failure = failures.first { throw failure }
        clock.lap("documents and relations (2 readers)")

        // Objects and columns into the graph; then the keys the sample did not cover.
        let builder = GraphBuilder(formatName: name)
        var warnings: [String] = []
        var invalid = 0, notObjects = 0
        for (t, info) in types.enumerated() {
            guard let result = documents[t] else { continue }
            documents[t] = nil
            let type = builder.type(info.name)
            builder.addObjects(type: type, ids: result.ids.map { .int($0) })
            for (slot, key) in result.keys.enumerated() {
                let a = builder.attribute(key, of: type)
                var column = result.columns[slot]
                if column.count > result.ids.count { column.removeLast(column.count - result.ids.count) }
                builder.setColumn(type: type, attribute: a, values: column, kinds: result.kinds[slot], presentCount: result.present[slot])
            }
            for (row, text) in result.leftovers {
                guard case .object(let members)? = try? JSONText.parse(text) else { notObjects += 1; continue }
                for (key, value) in members.members {
                    builder.set(value, type: type, row: row, attribute: builder.attribute(key, of: type))
                }
            }
            invalid += result.invalid
        }
        documents.removeAll()
        if notObjects > 0 { warnings.append("\(notObjects) documents are not JSON objects; they show no attributes") }
        if invalid > 0 { warnings.append("\(invalid) objects have JSON that does not parse; they show no attributes") }
        clock.lap("columns into the graph")

        // Relations, in rowid order, under the kinds Loupe recorded.
        let lookup = IDLookup(builder: builder)
        var perRelation: [[Int32: (relation: Int, from: [Int32], to: [ObjectRef])]] = Array(repeating: [:], count: builder.typeCount)
        for i in 0..<edges.from.count {
            guard let from = lookup.ref(edges.from[i]), let to = lookup.ref(edges.to[i]) else { edges.dangling += 1; continue }
            let t = Int(from.type), n = edges.name[i]
            if perRelation[t][n] == nil {
                let relation = edges.names[Int(n)]
                let r = builder.relation(relation, of: t, toMany: declaredKinds[builder.typeName(t) + "\u{0}" + relation] ?? false)
                perRelation[t][n] = (r, [], [])
            }
            perRelation[t][n]!.from.append(from.row)
            perRelation[t][n]!.to.append(to)
        }
        for (t, relations) in perRelation.enumerated() {
            for (_, list) in relations { builder.addEdges(type: t, relation: list.relation, fromRows: list.from, to: list.to) }
        }
        // Relations Loupe declared but with no edges yet still belong to the schema.
        for (key, toMany) in declaredKinds {
            let parts = key.split(separator: "\u{0}", maxSplits: 1).map(String.init)
            guard parts.count == 2, let t = (0..<builder.typeCount).first(where: { builder.typeName($0) == parts[0] }) else { continue }
            builder.relation(parts[1], of: t, toMany: toMany)
        }
        declaredKinds = [:]
        if edges.dangling > 0 { warnings.append("\(edges.dangling) relation rows point at objects that do not exist; they were skipped") }
        clock.lap("edges into the graph")
        let graph = builder.finish()
        clock.lap("adjacency and backlink tables")
        progress?(total, total)
        var loaded = LoadedGraph(graph: graph, warnings: warnings)
        loaded.timings = clock.timings
        return loaded
    }

    /// Types in order of their first object, a sample of each type's keys, and Loupe's relation kinds.
    private static func readCatalog(_ db: Database) throws -> ([TypeInfo], [String: Bool]) {
        var types: [TypeInfo] = []
        for row in try Row.fetchAll(db, sql: "SELECT type_name, count(*) FROM by_type GROUP BY type_name ORDER BY min(id)") {
            types.append(TypeInfo(name: row[0] ?? "", count: row[1]))
        }
        for t in types.indices {
            let sample = try Int64.fetchAll(db, sql: "SELECT id FROM by_type WHERE type_name = ? ORDER BY id LIMIT \(sampleSize)",
                                            arguments: [types[t].name])
            guard !sample.isEmpty else { continue }
            var seen = Set<String>(), nested = Set<String>()
            var keys: [String] = []
            for row in try Row.fetchAll(db, sql: """
                SELECT j.key, j.type FROM by_type b, json_each(b.json) j
                WHERE b.id IN (\(sample.map(String.init).joined(separator: ","))) AND json_valid(b.json) AND json_type(b.json) = 'object'
                ORDER BY b.id, j.id
                """) {
                let key: String = row[0]
                let type: String = row[1]
                // Keys that a JSON path cannot spell safely are left to the leftover pass.
                if key.contains("\"") || key.contains("\\") { continue }
                if seen.insert(key).inserted { keys.append(key) }
                if type == "array" || type == "object" { nested.insert(key) }
            }
            types[t].scalarKeys = keys.filter { !nested.contains($0) }
            types[t].nestedKeys = keys.filter { nested.contains($0) }
        }
        var kinds: [String: Bool] = [:]
        if try db.tableExists(relationKindsTable) {
            for row in try Row.fetchAll(db, sql: "SELECT type_name, relation, to_many FROM \(relationKindsTable)") {
                kinds[(row[0] as String? ?? "") + "\u{0}" + (row[1] as String? ?? "")] = row[2] ?? false
            }
        }
        return (types, kinds)
    }

    /// One type's documents, split into columns, read by one thread.
    private struct TypeDocuments {
        var ids: [Int64] = []
        let keys: [String]
        var columns: [[Value]]
        var kinds: [ValueKind]
        var present: [Int]
        /// Rows whose documents hold more than the sampled keys (or are not objects), with that rest.
        var leftovers: [(row: Int, json: String)] = []
        /// Documents whose JSON does not parse.
        var invalid = 0

        init(keys: [String], capacity: Int) {
            self.keys = keys
            columns = keys.map { _ in Array(repeating: .null, count: capacity) }
            kinds = Array(repeating: [], count: keys.count)
            present = Array(repeating: 0, count: keys.count)
        }

        /// Merges objects without attributes into the rows, keeping id order.
        mutating func insertEmptyRows(ids extra: [Int64]) {
            guard !extra.isEmpty else { return }
            invalid += extra.count
            var merged: [Int64] = [], sources: [Int?] = []
            var i = 0, j = 0
            while i < ids.count || j < extra.count {
                if j == extra.count || (i < ids.count && ids[i] < extra[j]) { merged.append(ids[i]); sources.append(i); i += 1 }
                else { merged.append(extra[j]); sources.append(nil); j += 1 }
            }
            var newRow = Array(repeating: 0, count: ids.count)
            for (row, source) in sources.enumerated() { if let source { newRow[source] = row } }
            columns = columns.map { old in
                var column = [Value](repeating: .null, count: merged.count)
                for (source, row) in newRow.enumerated() { column[row] = old[source] }
                return column
            }
            leftovers = leftovers.map { (newRow[$0.row], $0.json) }
            ids = merged
        }

        /// Sets one value and counts it for schema inference.
        @inline(__always)
        mutating func set(_ value: Value, row: Int, slot: Int) {
            columns[slot][row] = value
            kinds[slot].insert(value.kind)
            present[slot] += 1
        }
    }

    /// `'$."key"'`: an SQL literal holding a JSON path to one top-level key.
    private static func path(_ key: String) -> String { "'$.\"" + key.replacingOccurrences(of: "'", with: "''") + "\"'" }

    /// `json_remove(json, p1, …)`, nested so that no call takes more than SQLite's argument limit.
    private static func removal(_ paths: [String]) -> String {
        var expression = "json"
        var rest = paths[...]
        while !rest.isEmpty {
            let chunk = rest.prefix(100)
            rest = rest.dropFirst(100)
            expression = "json_remove(\(expression), \(chunk.joined(separator: ", ")))"
        }
        return expression
    }

    private static func readDocuments(_ db: Database, type info: TypeInfo, counter: ProgressCounter) throws -> TypeDocuments {
        let keys = info.scalarKeys + info.nestedKeys
        var result = TypeDocuments(keys: keys, capacity: info.count)
        // Every sampled key and the rest, one statement, one parse per document. (Guarding each
        // extraction with the validity test instead of filtering made SQLite three times slower.)
        let paths = keys.map(path)
        let extracts = paths.map { "json -> \($0)" }
        let rest = "nullif(\(paths.isEmpty ? "json_remove(json)" : removal(paths)), '{}')"
        let sql = "SELECT id, \((extracts + [rest]).joined(separator: ", ")) FROM by_type WHERE type_name = ? AND json_valid(json) ORDER BY id"
        let statement = try db.makeStatement(sql: sql)
        let cursor = try Row.fetchCursor(statement, arguments: [info.name])
        let columns = ColumnReader(statement)
        result.ids.reserveCapacity(info.count)
        // Arrays and objects are gathered as JSON texts and split by SQLite in one go afterwards.
        var nested = NestedBatch()
        let restColumn = Int32(keys.count + 1)
        while try cursor.next() != nil {
            let row = result.ids.count
            guard row < info.count else { break }   // rows added since the count: read next time
            result.ids.append(columns.int64(0) ?? 0)
            for slot in 0..<keys.count {
                guard let text = columns.string(Int32(slot + 1)) else { continue }   // the key is missing
                if let first = text.utf8.first, first == UInt8(ascii: "[") || first == UInt8(ascii: "{") {
                    nested.add(text, row: row, slot: slot)
                } else {
                    result.set(JSONText.value(text), row: row, slot: slot)
                }
            }
            if let leftover = columns.string(restColumn) { result.leftovers.append((row, leftover)) }
            if result.ids.count & 0x3FFF == 0 { counter.add(0x4000) }
        }
        try nested.split(db) { row, slot, value in result.set(value, row: row, slot: slot) }
        if result.ids.count < info.count {
            // Documents that do not parse are objects too, with no attributes, in their id order.
            let broken = try Int64.fetchAll(db, sql: "SELECT id FROM by_type WHERE type_name = ? AND NOT json_valid(json) ORDER BY id",
                                            arguments: [info.name])
            result.insertEmptyRows(ids: Array(broken.prefix(info.count - result.ids.count)))
        }
        return result
    }

    /// Nested JSON values waiting to be split: all of them become one JSON array, which one
    /// `json_tree` call splits, so each is parsed by SQLite once and never by Foundation.
    private struct NestedBatch {
        private var text = "["
        private var places: [(row: Int, slot: Int)] = []

        mutating func add(_ json: String, row: Int, slot: Int) {
            if !places.isEmpty { text += "," }
            text += json
            places.append((row, slot))
        }

        func split(_ db: Database, store: (Int, Int, Value) -> Void) throws {
            guard !places.isEmpty else { return }
            let statement = try db.makeStatement(sql: "SELECT id, parent, key, type, atom FROM json_tree(?) ORDER BY id")
            let cursor = try Row.fetchCursor(statement, arguments: [text + "]"])
            let columns = ColumnReader(statement)
            guard try cursor.next() != nil, let root = columns.int64(0) else { return }   // the outer array itself
            var index = -1
            var stack: [NestedContainer] = []
            func finish(downTo parent: Int64) {
                while let top = stack.last, top.node != parent {
                    stack.removeLast()
                    if stack.isEmpty { store(places[index].row, places[index].slot, top.value) }
                    else { stack[stack.count - 1].append(key: top.key, top.value) }
                }
            }
            while try cursor.next() != nil {
                let node = columns.int64(0) ?? 0
                let parent = columns.int64(1) ?? root
                finish(downTo: parent)
                if parent == root { index += 1; guard index < places.count else { return } }
                let key = columns.string(2)
                let kind = columns.string(3) ?? ""
                if kind == "array" || kind == "object" {
                    stack.append(NestedContainer(node: node, key: parent == root ? nil : key, isArray: kind == "array"))
                } else {
                    let value = JSONText.scalar(type: kind, atom: columns.value(4))
                    if stack.isEmpty { store(places[index].row, places[index].slot, value) }
                    else { stack[stack.count - 1].append(key: key, value) }
                }
            }
            finish(downTo: root)
        }
    }

    /// A JSON array or object under construction while its nodes arrive.
    private struct NestedContainer {
        let node: Int64
        let key: String?
        let isArray: Bool
        var items: [Value] = []
        var members: [(key: String, value: Value)] = []

        init(node: Int64, key: String?, isArray: Bool) {
            self.node = node
            self.key = key
            self.isArray = isArray
        }

        mutating func append(key: String?, _ value: Value) {
            if isArray { items.append(value) } else { members.append((key ?? "", value)) }
        }

        var value: Value { isArray ? .array(items) : .object(NestedObject(members)) }
    }

    /// Every relation row, in rowid order, as stored keys.
    private struct RawEdges {
        var names: [String] = []
        var from: [Int64] = []
        var to: [Int64] = []
        var name: [Int32] = []
        var dangling = 0
    }

    private static func readRelations(_ db: Database) throws -> RawEdges {
        var list = RawEdges()
        var nameIndex: [String: Int32] = [:]
        let statement = try db.makeStatement(sql: "SELECT from_id, to_id, relation FROM relations ORDER BY rowid")
        let cursor = try Row.fetchCursor(statement)
        let columns = ColumnReader(statement)
        var lastName = "", lastIndex: Int32 = -1
        while try cursor.next() != nil {
            guard let from = columns.int64(0), let to = columns.int64(1) else { list.dangling += 1; continue }
            let name = columns.string(2) ?? ""
            if lastIndex < 0 || name != lastName {
                if let known = nameIndex[name] { lastIndex = known } else {
                    lastIndex = Int32(list.names.count)
                    nameIndex[name] = lastIndex
                    list.names.append(name)
                }
                lastName = name
            }
            list.from.append(from)
            list.to.append(to)
            list.name.append(lastIndex)
        }
        return list
    }
}

/// Reads the current row of a statement column by column through GRDB's `StatementColumnConvertible`
/// decoders. `Row`'s subscripts go through a type-erased generic path that costs about 0.8 µs a
/// value, which is most of a million-object load; these cost a few nanoseconds.
struct ColumnReader {
    private let statement: SQLiteStatement

    init(_ statement: Statement) { self.statement = statement.sqliteStatement }

    /// The column as text, nil for NULL.
    @inline(__always) func string(_ index: Int32) -> String? { String?.fromStatement(statement, atUncheckedIndex: index) ?? nil }
    /// The column as an integer, nil for NULL.
    @inline(__always) func int64(_ index: Int32) -> Int64? { Int64?.fromStatement(statement, atUncheckedIndex: index) ?? nil }
    /// The column as a database value (for atoms of any kind).
    @inline(__always) func value(_ index: Int32) -> DatabaseValue { DatabaseValue(sqliteStatement: statement, index: index) }
}

/// Finds an object by its global Persist key: a direct table when keys are dense, else a dictionary.
private struct IDLookup {
    private var base: Int64 = 0
    private var dense: [ObjectRef?] = []
    private var sparse: [Int64: ObjectRef] = [:]

    init(builder: GraphBuilder) {
        var minID = Int64.max, maxID = Int64.min, count = 0
        for t in 0..<builder.typeCount {
            for id in builder.ids(of: t) { if case .int(let i) = id { minID = min(minID, i); maxID = max(maxID, i); count += 1 } }
        }
        guard count > 0 else { return }
        if maxID - minID < Int64(count) * 4 + 1024 {
            base = minID
            dense = Array(repeating: nil, count: Int(maxID - minID + 1))
            for t in 0..<builder.typeCount {
                for (row, id) in builder.ids(of: t).enumerated() {
                    if case .int(let i) = id, dense[Int(i - minID)] == nil { dense[Int(i - minID)] = ObjectRef(type: t, row: row) }
                }
            }
        } else {
            for t in 0..<builder.typeCount {
                for (row, id) in builder.ids(of: t).enumerated() {
                    if case .int(let i) = id, sparse[i] == nil { sparse[i] = ObjectRef(type: t, row: row) }
                }
            }
        }
    }

    func ref(_ id: Int64) -> ObjectRef? {
        if !dense.isEmpty {
            let i = id - base
            return i >= 0 && i < Int64(dense.count) ? dense[Int(i)] : nil
        }
        return sparse[id]
    }
}

/// Counts objects read by several threads and reports now and then.
final class ProgressCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var done = 0
    private let total: Int
    private let report: LoadProgress?

    init(total: Int, report: LoadProgress?) {
        self.total = total
        self.report = report
    }

    func add(_ n: Int) {
        guard let report else { return }
        lock.lock()
        done += n
        let now = done
        lock.unlock()
        report(min(now, total), total)
    }
}

/// JSON text as SQLite returns it, read into model values.
enum JSONText {
    /// The value of the JSON text of a scalar (what `->` returns): read directly; strings with
    /// escapes, and any array or object, go through Foundation's parser. Strings in Persist's date
    /// form become dates.
    static func value(_ text: String) -> Value {
        var text = text
        return text.withUTF8 { bytes -> Value in
            guard let first = bytes.first else { return .null }
            switch first {
            case UInt8(ascii: "\""):
                guard bytes.count >= 2 else { return .string(String(decoding: bytes, as: UTF8.self)) }
                let inner = UnsafeBufferPointer(rebasing: bytes[1..<(bytes.count - 1)])
                // Dates are read from the bytes, without making a string first.
                if PersistDates.isPersistDate(inner), let date = DateText.parse(bytes: inner) { return .date(date) }
                if inner.contains(UInt8(ascii: "\\")) {
                    let unescaped = (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) as? String
                    return JSONText.text(unescaped ?? String(decoding: inner, as: UTF8.self))
                }
                return .string(String(decoding: inner, as: UTF8.self))
            case UInt8(ascii: "t"): return .bool(true)
            case UInt8(ascii: "f"): return .bool(false)
            case UInt8(ascii: "n"): return .null
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                return (try? parse(String(decoding: bytes, as: UTF8.self))) ?? .string(String(decoding: bytes, as: UTF8.self))
            default:
                if let i = integer(bytes) { return .int(i) }
                let s = String(decoding: bytes, as: UTF8.self)
                return Double(s).map(Value.double) ?? .string(s)
            }
        }
    }

    /// A JSON integer read from its digits (nil when it is not one or does not fit).
    @inline(__always)
    private static func integer(_ b: UnsafeBufferPointer<UInt8>) -> Int64? {
        var i = 0, negative = false
        if b.first == UInt8(ascii: "-") { negative = true; i = 1 }
        guard i < b.count, b.count - i <= 18 else { return nil }
        var v: Int64 = 0
        while i < b.count {
            let c = b[i]
            guard c >= 48, c <= 57 else { return nil }
            v = v * 10 + Int64(c - 48)
            i += 1
        }
        return negative ? -v : v
    }

    /// A JSON scalar as `json_tree` reports it: its type name and its SQL atom.
    static func scalar(type: String, atom: DatabaseValue) -> Value {
        switch atom.storage {
        case .null: return .null
        case .int64(let i):
            if type == "true" { return .bool(true) }
            if type == "false" { return .bool(false) }
            return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return JSONText.text(s)
        case .blob(let b): return .data(b)
        }
    }

    /// A string, or a date when it is in Persist's date form.
    @inline(__always)
    static func text(_ s: String) -> Value {
        if PersistDates.isPersistDate(s), let date = DateText.parse(s) { return .date(date) }
        return .string(s)
    }

    /// Any JSON text, through Foundation's parser (the rare path: leftovers and escaped strings).
    static func parse(_ text: String) throws -> Value {
        JSONValue.from(try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]), dates: true)
    }
}

/// Persist's date strings: `yyyy-MM-dd HH:mm:ss Z` or `yyyy-MM-dd HH:mm:ss ±HH:mm`.
enum PersistDates {
    /// True for text in exactly the form Persist's DateFormatter writes.
    static func isPersistDate(_ s: String) -> Bool {
        guard s.utf8.count == 21 || s.utf8.count == 25 else { return false }
        var s = s
        return s.withUTF8 { isPersistDate($0) }
    }

    /// As ``isPersistDate(_:)``, on UTF-8 bytes.
    @inline(__always)
    static func isPersistDate(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard b.count == 21 || b.count == 25 else { return false }
        return b[4] == 45 && b[7] == 45 && b[10] == 32 && b[13] == 58 && b[16] == 58 && b[19] == 32
            && (b.count == 21 ? b[20] == 90 : (b[20] == 43 || b[20] == 45) && b[23] == 58)
    }
}
