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
/// - Loupe adds, when it writes, indexes on `relations` and its own `loupe_relation_kinds` table
///   that records which relations are to-many (Persist cannot tell a to-many of one from a to-one).
///
/// Loading leaves JSON parsing to SQLite (`json_tree`), which splits a million documents several
/// times faster than Foundation can parse them; Swift only assembles the values.
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

    public static func load(_ db: Database, progress: LoadProgress?) throws -> LoadedGraph {
        let builder = GraphBuilder(formatName: name)
        var warnings: [String] = []
        let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM by_type") ?? 0

        // Pass 1: every object, in id order, so that ids can be found by binary search.
        var ids: [Int64] = []
        var refs: [ObjectRef] = []
        ids.reserveCapacity(total)
        refs.reserveCapacity(total)
        var typeIndex: [String: Int] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT type_name, count(*) FROM by_type GROUP BY type_name ORDER BY min(id)") {
            let name: String = row[0] ?? ""
            let t = builder.type(name)
            typeIndex[name] = t
            builder.reserve(row[1], of: t)
        }
        let objects = try Row.fetchCursor(db, sql: "SELECT id, type_name FROM by_type ORDER BY id")
        var lastName = ""
        var lastType = -1
        while let row = try objects.next() {
            let id: Int64 = row[0]
            let name: String = row[1] ?? ""
            if name != lastName || lastType < 0 { lastType = typeIndex[name] ?? builder.type(name); lastName = name }
            ids.append(id)
            refs.append(builder.addObject(type: lastType, id: .int(id)))
        }
        progress?(0, total)

        // Pass 2: every document, split by SQLite into its nodes in document order.
        try loadDocuments(db, builder: builder, ids: ids, refs: refs, total: total, progress: progress, warnings: &warnings)

        // Pass 3: relations, in rowid order.
        var declaredToMany = Set<String>()
        if try db.tableExists(relationKindsTable) {
            for row in try Row.fetchAll(db, sql: "SELECT type_name, relation FROM \(relationKindsTable) WHERE to_many") {
                declaredToMany.insert("\(row[0] as String? ?? "")\u{0}\(row[1] as String? ?? "")")
            }
        }
        func lookup(_ id: Int64) -> ObjectRef? {
            var lo = 0, hi = ids.count
            while lo < hi {
                let mid = (lo + hi) >> 1
                if ids[mid] < id { lo = mid + 1 } else { hi = mid }
            }
            return lo < ids.count && ids[lo] == id ? refs[lo] : nil
        }
        var relationIndex: [[String: Int]] = Array(repeating: [:], count: builder.typeCount)
        var dangling = 0
        let edges = try Row.fetchCursor(db, sql: "SELECT from_id, to_id, relation FROM relations ORDER BY rowid")
        while let row = try edges.next() {
            guard let fromID = row[0] as Int64?, let toID = row[1] as Int64?,
                  let from = lookup(fromID), let to = lookup(toID) else { dangling += 1; continue }
            let name: String = row[2] ?? ""
            let t = Int(from.type)
            let r: Int
            if let known = relationIndex[t][name] { r = known } else {
                let typeName = builder.typeName(t)
                r = builder.relation(name, of: t, toMany: declaredToMany.contains("\(typeName)\u{0}\(name)"))
                relationIndex[t][name] = r
            }
            builder.addEdge(from: from, relation: r, to: to)
        }
        // Relations declared by Loupe but with no edges yet still belong to the schema.
        if try db.tableExists(relationKindsTable) {
            for row in try Row.fetchAll(db, sql: "SELECT type_name, relation, to_many FROM \(relationKindsTable)") {
                let typeName: String = row[0] ?? ""
                guard let t = typeIndex[typeName] else { continue }
                _ = builder.relation(row[1] ?? "", of: t, toMany: row[2] ?? false)
            }
        }
        if dangling > 0 { warnings.append("\(dangling) relation rows point at objects that do not exist; they were skipped") }
        progress?(total, total)
        return LoadedGraph(graph: builder.finish(), warnings: warnings)
    }

    /// Reads every `by_type.json` through `json_tree` and sets the objects' attributes.
    private static func loadDocuments(_ db: Database, builder: GraphBuilder, ids: [Int64], refs: [ObjectRef],
                                      total: Int, progress: LoadProgress?, warnings: inout [String]) throws {
        // Columns: object id, node id, parent node id, key (text or array index), node type, atom.
        let sql = """
            SELECT b.id, j.id, j.parent, j.key, j.type, j.atom
            FROM by_type b, json_tree(b.json) j
            WHERE json_valid(b.json)
            ORDER BY b.id
            """
        let cursor = try Row.fetchCursor(db, sql: sql)
        var position = 0          // index into ids/refs of the current object
        var currentID: Int64? = nil
        var current = ObjectRef(type: 0, row: 0)
        // Objects of one type usually list their keys in the same order: remember, per type, the
        // key and slot seen at each position, and hash a key only when the guess is wrong.
        var lastKeys: [[String]] = Array(repeating: [], count: builder.typeCount)
        var lastSlots: [[Int]] = Array(repeating: [], count: builder.typeCount)
        var memberIndex = 0
        var stack: [Container] = []
        var seen = 0
        var notObjects = 0

        func topLevelSlot(_ key: String) -> Int {
            let t = Int(current.type), m = memberIndex
            memberIndex += 1
            if m < lastKeys[t].count {
                if lastKeys[t][m] == key { return lastSlots[t][m] }
                let slot = builder.attribute(key, of: t)
                lastKeys[t][m] = key
                lastSlots[t][m] = slot
                return slot
            }
            let slot = builder.attribute(key, of: t)
            lastKeys[t].append(key)
            lastSlots[t].append(slot)
            return slot
        }

        func finishContainers(downTo parent: Int64?) {
            while let top = stack.last, top.node != parent {
                stack.removeLast()
                if stack.isEmpty { break }
                if stack.count == 1 {
                    builder.set(top.value, type: Int(current.type), row: Int(current.row), attribute: top.slot)
                } else {
                    stack[stack.count - 1].append(key: top.key, top.value)
                }
            }
        }

        while let row = try cursor.next() {
            let objectID: Int64 = row[0]
            if objectID != currentID {
                finishContainers(downTo: nil)
                stack.removeAll(keepingCapacity: true)
                while position < ids.count, ids[position] != objectID { position += 1 }
                guard position < ids.count else { break }
                current = refs[position]
                currentID = objectID
                memberIndex = 0
                seen += 1
                if seen & 0xFFFF == 0 { progress?(seen, total) }
            }
            let node: Int64 = row[1]
            let type: String = row[4]
            guard let parent = row[2] as Int64? else {
                // The root: an object (the usual case); anything else has no attributes to show.
                if type != "object" { notObjects += 1 }
                stack.append(Container(node: node, key: nil, slot: -1, isArray: false))
                continue
            }
            finishContainers(downTo: parent)
            guard !stack.isEmpty else { continue }
            let keyValue: DatabaseValue = row[3]
            let key = String.fromDatabaseValue(keyValue)
            let isTopLevel = stack.count == 1
            let slot = isTopLevel ? topLevelSlot(key ?? "") : -1
            switch type {
            case "object": stack.append(Container(node: node, key: key, slot: slot, isArray: false))
            case "array": stack.append(Container(node: node, key: key, slot: slot, isArray: true))
            default:
                let value = scalar(type: type, atom: row[5])
                if isTopLevel {
                    builder.set(value, type: Int(current.type), row: Int(current.row), attribute: slot)
                } else {
                    stack[stack.count - 1].append(key: key, value)
                }
            }
        }
        finishContainers(downTo: nil)
        if notObjects > 0 { warnings.append("\(notObjects) documents are not JSON objects; they show no attributes") }
        let broken = try Int.fetchOne(db, sql: "SELECT count(*) FROM by_type WHERE NOT json_valid(json)") ?? 0
        if broken > 0 { warnings.append("\(broken) objects have JSON that does not parse; they show no attributes") }
    }

    /// A JSON scalar as a value; strings in Persist's date form become dates.
    @inline(__always)
    static func scalar(type: String, atom: DatabaseValue) -> Value {
        switch atom.storage {
        case .null: return .null
        case .int64(let i):
            if type == "true" { return .bool(true) }
            if type == "false" { return .bool(false) }
            return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return PersistDates.isPersistDate(s) ? (DateText.parse(s).map(Value.date) ?? .string(s)) : .string(s)
        case .blob(let b): return .data(b)
        }
    }

    /// A JSON array or object under construction while its nodes arrive.
    private struct Container {
        let node: Int64
        let key: String?
        /// The attribute slot of a top-level member.
        let slot: Int
        let isArray: Bool
        var items: [Value] = []
        var members: [(key: String, value: Value)] = []

        init(node: Int64, key: String?, slot: Int, isArray: Bool) {
            self.node = node
            self.key = key
            self.slot = slot
            self.isArray = isArray
        }

        mutating func append(key: String?, _ value: Value) {
            if isArray { items.append(value) } else { members.append((key ?? "", value)) }
        }

        var value: Value { isArray ? .array(items) : .object(NestedObject(members)) }
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
