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
/// Loading leaves JSON parsing to SQLite: for each type, one statement extracts every key seen in
/// a sample of its documents (`json -> '$."key"'`, one parse per document), and `json_remove` of
/// those keys returns whatever else a document holds, so no key is ever missed. Types are read on
/// two connections in parallel while a third reads the relations.
public enum PersistFormat: StoreFormat {
    public static let name = "Persist"

    public static func matches(_ db: Database) throws -> Bool {
        guard let objects = try db.columnNames(of: "by_type"), let relations = try db.columnNames(of: "relations") else {
            return false
        }
        return Set(["id", "type_name", "json"]).isSubset(of: objects)
            && Set(["from_id", "to_id", "relation"]).isSubset(of: relations)
    }

    /// Loupe's own record of relation cardinalities.
    static let relationKindsTable = "loupe_relation_kinds"

    /// How many documents of each type are split with `json_each` to learn its keys.
    static let sampleSize = 64

    /// What pass 1 learns: every object in id order, and each type's rows and sample keys.
    private struct Catalog {
        var ids: [Int64] = []
        var refs: [ObjectRef] = []
        /// Per type: the ids of its objects in row order.
        var typeIDs: [[Int64]] = []
        /// Per type: the keys seen in its first documents, in order.
        var keys: [[String]] = []
    }

    public static func load(_ file: StoreFile, progress: LoadProgress?) throws -> LoadedGraph {
        let builder = GraphBuilder(formatName: name)
        var warnings: [String] = []
        var clock = PhaseClock()
        let (catalog, declaredKinds, total) = try file.read { db in try readCatalog(db, builder: builder) }
        clock.lap("objects and keys (1 reader)")
        progress?(0, total)
        let counter = ProgressCounter(total: total, report: progress)

        // Types go to two workers, balanced by object count; a third worker reads the relations.
        var groups: [[Int]] = [[], []]
        var load = [0, 0]
        for t in (0..<builder.typeCount).sorted(by: { catalog.typeIDs[$0].count > catalog.typeIDs[$1].count }) {
            let g = load[0] <= load[1] ? 0 : 1
            groups[g].append(t)
            load[g] += catalog.typeIDs[t].count
        }
        var documents: [[TypeDocuments]] = [[], []]
        var edges = EdgeList()
        var failures: [Error] = []
        let lock = NSLock()
        DispatchQueue.concurrentPerform(iterations: 3) { worker in
            do {
                let reader = try file.makeReader()
                try reader.read { db in
                    if worker == 2 {
                        let list = try readRelations(db, catalog: catalog)
                        lock.lock(); edges = list; lock.unlock()
                    } else {
                        var out: [TypeDocuments] = []
                        for t in groups[worker] {
                            out.append(try readDocuments(db, type: t, name: builder.typeName(t), catalog: catalog, counter: counter))
                        }
                        lock.lock(); documents[worker] = out; lock.unlock()
                    }
                }
            } catch {
                lock.lock(); failures.append(error); lock.unlock()
            }
        }
        if let failure = failures.first { throw failure }
        clock.lap("documents and relations (3 readers)")

        // Columns into the graph; then what the sampled keys did not cover.
        var notObjects = 0
        for result in documents.joined() {
            for (slot, key) in result.keys.enumerated() {
                let a = builder.attribute(key, of: result.type)
                builder.setColumn(type: result.type, attribute: a, values: Array(result.columns[slot]),
                                  kinds: result.kinds[slot], presentCount: result.present[slot])
                result.columns[slot].deallocate()
            }
            for (row, text) in result.leftovers {
                guard case .object(let members)? = try? JSONText.parse(text) else { notObjects += 1; continue }
                for (key, value) in members.members {
                    builder.set(value, type: result.type, row: row, attribute: builder.attribute(key, of: result.type))
                }
            }
        }
        clock.lap("columns into the graph")
        if notObjects > 0 { warnings.append("\(notObjects) documents are not JSON objects; they show no attributes") }
        let broken = try file.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM by_type WHERE NOT json_valid(json)") } ?? 0
        if broken > 0 { warnings.append("\(broken) objects have JSON that does not parse; they show no attributes") }

        // Relations, in rowid order, under the kinds Loupe recorded.
        var relationIndex: [[Int32: Int]] = Array(repeating: [:], count: builder.typeCount)
        for i in 0..<edges.from.count {
            let from = edges.from[i], nameIndex = edges.name[i]
            let t = Int(from.type)
            let r: Int
            if let known = relationIndex[t][nameIndex] { r = known } else {
                let relation = edges.names[Int(nameIndex)]
                r = builder.relation(relation, of: t, toMany: declaredKinds[builder.typeName(t) + "\u{0}" + relation] ?? false)
                relationIndex[t][nameIndex] = r
            }
            builder.addEdge(from: from, relation: r, to: edges.to[i])
        }
        // Relations Loupe declared but with no edges yet still belong to the schema.
        for (key, toMany) in declaredKinds {
            let parts = key.split(separator: "\u{0}", maxSplits: 1).map(String.init)
            guard parts.count == 2, let t = (0..<builder.typeCount).first(where: { builder.typeName($0) == parts[0] }) else { continue }
            builder.relation(parts[1], of: t, toMany: toMany)
        }
        if edges.dangling > 0 { warnings.append("\(edges.dangling) relation rows point at objects that do not exist; they were skipped") }
        progress?(total, total)
        clock.lap("edges into the graph")
        let graph = builder.finish()
        clock.lap("adjacency and backlink tables")
        var loaded = LoadedGraph(graph: graph, warnings: warnings)
        loaded.timings = clock.timings
        return loaded
    }

    /// Pass 1: types, objects in id order, a sample of each type's keys, and Loupe's relation kinds.
    private static func readCatalog(_ db: Database, builder: GraphBuilder) throws -> (Catalog, [String: Bool], Int) {
        var catalog = Catalog()
        let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM by_type") ?? 0
        catalog.ids.reserveCapacity(total)
        catalog.refs.reserveCapacity(total)
        var typeIndex: [String: Int] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT type_name, count(*) FROM by_type GROUP BY type_name ORDER BY min(id)") {
            let name: String = row[0] ?? ""
            let t = builder.type(name)
            typeIndex[name] = t
            builder.reserve(row[1], of: t)
            catalog.typeIDs.append([])
            catalog.typeIDs[t].reserveCapacity(row[1])
        }
        let objects = try Row.fetchCursor(db, sql: "SELECT id, type_name FROM by_type ORDER BY id")
        var lastName = "", lastType = -1
        while let row = try objects.next() {
            let id: Int64 = row[0]
            let name: String = row[1] ?? ""
            if lastType < 0 || name != lastName { lastType = typeIndex[name]!; lastName = name }
            catalog.ids.append(id)
            catalog.refs.append(builder.addObject(type: lastType, id: .int(id)))
            catalog.typeIDs[lastType].append(id)
        }
        catalog.keys = Array(repeating: [], count: builder.typeCount)
        for t in 0..<builder.typeCount {
            let sample = catalog.typeIDs[t].prefix(sampleSize)
            guard !sample.isEmpty else { continue }
            var seen = Set<String>()
            let keys = try String.fetchAll(db, sql: """
                SELECT j.key FROM by_type b, json_each(b.json) j
                WHERE b.id IN (\(sample.map(String.init).joined(separator: ","))) AND json_valid(b.json) AND json_type(b.json) = 'object'
                ORDER BY b.id, j.id
                """)
            // Keys that a JSON path cannot spell safely are left to the leftover pass.
            catalog.keys[t] = keys.filter { !$0.contains("\"") && !$0.contains("\\") && seen.insert($0).inserted }
        }
        var kinds: [String: Bool] = [:]
        if try db.tableExists(relationKindsTable) {
            for row in try Row.fetchAll(db, sql: "SELECT type_name, relation, to_many FROM \(relationKindsTable)") {
                kinds[(row[0] as String? ?? "") + "\u{0}" + (row[1] as String? ?? "")] = row[2] ?? false
            }
        }
        return (catalog, kinds, total)
    }

    /// One type's documents, split into columns by SQLite.
    private final class TypeDocuments {
        let type: Int
        let keys: [String]
        var columns: [UnsafeMutableBufferPointer<Value>]
        var kinds: [ValueKind]
        var present: [Int]
        /// Rows whose documents hold more than the sampled keys (or are not objects), with that rest.
        var leftovers: [(row: Int, json: String)] = []

        init(type: Int, keys: [String], count: Int) {
            self.type = type
            self.keys = keys
            columns = keys.map { _ in
                let buffer = UnsafeMutableBufferPointer<Value>.allocate(capacity: count)
                buffer.initialize(repeating: .null)
                return buffer
            }
            kinds = Array(repeating: [], count: keys.count)
            present = Array(repeating: 0, count: keys.count)
        }
    }

    /// `$."key"`: a JSON path to one top-level key.
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

    private static func readDocuments(_ db: Database, type t: Int, name: String, catalog: Catalog,
                                      counter: ProgressCounter) throws -> TypeDocuments {
        let keys = catalog.keys[t]
        let rowIDs = catalog.typeIDs[t]
        let result = TypeDocuments(type: t, keys: keys, count: rowIDs.count)
        let paths = keys.map(path)
        let extracts = paths.map { "json -> \($0)" }
        let rest = keys.isEmpty ? "CASE WHEN json = '{}' THEN NULL ELSE json END" : "nullif(\(removal(paths)), '{}')"
        let sql = "SELECT id, \((extracts + [rest]).joined(separator: ", ")) FROM by_type WHERE type_name = ? AND json_valid(json) ORDER BY id"
        let cursor = try Row.fetchCursor(db, sql: sql, arguments: [name])
        // Locals, not the result's properties, in the loop: no exclusivity checks per value.
        let columns = result.columns
        var kinds = result.kinds
        var present = result.present
        var leftovers: [(row: Int, json: String)] = []
        var row = 0
        let restColumn = keys.count + 1
        var read = 0
        while let r = try cursor.next() {
            let id: Int64 = r[0]
            while row < rowIDs.count, rowIDs[row] != id { row += 1 }
            guard row < rowIDs.count else { break }
            for slot in 0..<keys.count {
                guard let text = r[slot + 1] as String? else { continue }   // the key is missing
                let value = JSONText.value(text)
                columns[slot][row] = value
                kinds[slot].insert(value.kind)
                present[slot] += 1
            }
            if let leftover = r[restColumn] as String? { leftovers.append((row, leftover)) }
            row += 1
            read += 1
            if read & 0x3FFF == 0 { counter.add(0x4000) }
        }
        result.kinds = kinds
        result.present = present
        result.leftovers = leftovers
        return result
    }

    /// Every relation row, in rowid order, as handles.
    private struct EdgeList {
        var names: [String] = []
        var from: [ObjectRef] = []
        var to: [ObjectRef] = []
        var name: [Int32] = []
        var dangling = 0
    }

    private static func readRelations(_ db: Database, catalog: Catalog) throws -> EdgeList {
        func lookup(_ id: Int64) -> ObjectRef? {
            var lo = 0, hi = catalog.ids.count
            while lo < hi {
                let mid = (lo + hi) >> 1
                if catalog.ids[mid] < id { lo = mid + 1 } else { hi = mid }
            }
            return lo < catalog.ids.count && catalog.ids[lo] == id ? catalog.refs[lo] : nil
        }
        var list = EdgeList()
        var nameIndex: [String: Int32] = [:]
        let cursor = try Row.fetchCursor(db, sql: "SELECT from_id, to_id, relation FROM relations ORDER BY rowid")
        var lastName = "", lastIndex: Int32 = -1
        while let row = try cursor.next() {
            guard let fromID = row[0] as Int64?, let toID = row[1] as Int64?, let from = lookup(fromID), let to = lookup(toID) else {
                list.dangling += 1
                continue
            }
            let name: String = row[2] ?? ""
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

/// JSON text as SQLite's `->` returns it, read into model values.
enum JSONText {
    /// The value of one JSON text: scalars are read directly; strings with escapes, arrays and
    /// objects go through Foundation's parser. Strings in Persist's date form become dates.
    static func value(_ text: String) -> Value {
        guard let first = text.utf8.first else { return .null }
        switch first {
        case UInt8(ascii: "\""):
            let inner = text.utf8.dropFirst().dropLast()
            let string: String
            if inner.contains(UInt8(ascii: "\\")) {
                string = (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) as? String ?? String(decoding: inner, as: UTF8.self)
            } else {
                string = String(Substring(inner))
            }
            if PersistDates.isPersistDate(string), let date = DateText.parse(string) { return .date(date) }
            return .string(string)
        case UInt8(ascii: "t"): return .bool(true)
        case UInt8(ascii: "f"): return .bool(false)
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "["), UInt8(ascii: "{"): return (try? parse(text)) ?? .string(text)
        default:
            if let i = Int64(text) { return .int(i) }
            return Double(text).map(Value.double) ?? .string(text)
        }
    }

    /// Any JSON text, through Foundation's parser.
    static func parse(_ text: String) throws -> Value {
        JSONValue.from(try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]), dates: true)
    }
}

/// Persist's date strings: `yyyy-MM-dd HH:mm:ss Z` or `yyyy-MM-dd HH:mm:ss ±HH:mm`.
enum PersistDates {
    /// True for text in exactly the form Persist's DateFormatter writes.
    static func isPersistDate(_ s: String) -> Bool {
        let u = s.utf8
        guard u.count == 21 || u.count == 25 else { return false }
        var s = s
        return s.withUTF8 { b in
            b[4] == 45 && b[7] == 45 && b[10] == 32 && b[13] == 58 && b[16] == 58 && b[19] == 32
                && (b.count == 21 ? b[20] == 90 : (b[20] == 43 || b[20] == 45) && b[23] == 58)
        }
    }
}
