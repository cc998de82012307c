import Foundation
import GRDB
import LoupeModel
import Synchronization

extension PersistFormat {
    /// The part of a Persist store that a statement naming `names` can read, as a graph with the
    /// whole store's schema (types, attributes, relations, in the load's order, from a fresh
    /// ``SchemaCache`` entry) but only the data those names reach: every object of `type`, of each
    /// type holding an attribute or relation so named, of each target of such a relation and of
    /// each type in `linkTypes`; the values of the attributes so named (all of `type`'s when
    /// `listsObjects`); the edges of the relations so named. Names match ignoring case (a
    /// superset of what the engine resolves).
    ///
    /// What a count, a group or a listing computes from such a graph is what it computes from the
    /// whole one: the engine reads no value, edge or object that no name of the statement leads
    /// to, and every name resolves (or fails, with the same message and suggestions) against the
    /// same schema. Objects are added in key order within each type, edges in relation-row order,
    /// and each document is parsed by the load's reader with the load's rules, so values, lists
    /// and backlinks come out in the load's order. Two connections read on one snapshot, taking
    /// the pieces in turn (a large type's documents in two halves by id).
    ///
    /// Nil, and the caller loads, when there is no fresh entry, `type` names no type, or the file
    /// does not match the entry.
    ///
    /// Types with at least `halvesFrom` objects are read in two halves (the load's split size;
    /// tests make it small).
    public static func projected(_ file: StoreFile, type: String, names: Set<String>, linkTypes: Set<String>,
                                 listsObjects: Bool, halvesFrom: Int = 50_000) throws -> ObjectGraph? {
        guard let entry = SchemaCache.entry(for: file) else { return nil }
        let builder = entry.builder()
        guard let root = builder.finishedTypeIndex(named: type) else { return nil }
        func named(_ name: String, _ among: Set<String>) -> Bool {
            among.contains(name) || among.contains { $0.caseInsensitiveCompare(name) == .orderedSame }
        }
        // Per type: the attributes to read (by position) and whether its objects are needed.
        var reads = [Projection.TypeRead](repeating: .init(), count: entry.types.count)
        reads[root].needed = true
        var relationNames = Set<String>()
        for (t, cached) in entry.types.enumerated() {
            for (a, attribute) in cached.attributes.enumerated() where named(attribute, names) || (listsObjects && t == root) {
                reads[t].attributes.append(a)
                reads[t].needed = true
            }
            for relation in cached.relations where named(relation.name, names) {
                relationNames.insert(relation.name)
                reads[t].needed = true
                for target in relation.targets { reads[target].needed = true }
            }
            if named(cached.name, linkTypes) { reads[t].needed = true }
        }
        for t in reads.indices where reads[t].needed {
            reads[t].name = entry.types[t].name
            reads[t].keys = reads[t].attributes.map { entry.types[t].attributes[$0] }
        }
        // The work, largest first, taken in turn by two readers on one snapshot: each needed
        // type's documents (a large one in two halves by id, so both readers share it) or keys
        // alone, and the relation rows. (Halves are found before the snapshot: if the file changed
        // in between, the snapshot's stamp is not the entry's and the answer is thrown away.)
        var items: [(item: Projection.Item, weight: Int)] = []
        try file.read { db in
            for (t, read) in reads.enumerated() where read.needed {
                let count = entry.types[t].count
                guard !read.keys.isEmpty else { items.append((.objects(type: t, from: nil, below: nil), count / 4)); continue }
                let weight = count * (read.keys.count + 2)
                if count >= max(2, halvesFrom), let middle = try Int64.fetchOne(db, sql: "SELECT id FROM by_type WHERE type_name = ? ORDER BY id LIMIT 1 OFFSET ?",
                                                                       arguments: [read.name, count / 2]) {
                    items += [(.objects(type: t, from: nil, below: middle), weight / 2), (.objects(type: t, from: middle, below: nil), weight / 2)]
                } else {
                    items.append((.objects(type: t, from: nil, below: nil), weight))
                }
            }
            if !relationNames.isEmpty {
                // The relation rows in two halves by rowid.
                let rows = try Int64.fetchOne(db, sql: "SELECT max(rowid) FROM relations") ?? 0
                items += [(.edges(through: rows / 2), Int(rows / 2)), (.edges(after: rows / 2), Int(rows - rows / 2))]
            }
        }
        let plan = reads, wanted = relationNames, order = items.sorted { $0.weight > $1.weight }.map(\.item)
        let next = Mutex(0)
        let snapshot = try file.readOnSnapshot(workers: 2) { _, db -> [(Int, Projection.Part)] in
            var done: [(Int, Projection.Part)] = []
            while let i = next.withLock({ (n: inout Int) -> Int? in defer { n += 1 }; return n < order.count ? n : nil }) {
                switch order[i] {
                case .objects(let t, let from, let below): done.append((i, .objects(try readObjects(db, plan[t], from: from, below: below))))
                case .edges(let through, let after): done.append((i, .edges(try readEdges(db, names: wanted, through: through, after: after))))
                }
            }
            return done
        }
        guard snapshot.stamp == entry.stamp else { return nil }
        var objects = [Projection.TypeObjects?](repeating: nil, count: plan.count), edges = Projection.Edges()
        // Pieces by what they read, then which half: a type's halves in id order, the relation
        // rows' halves in rowid order.
        func position(_ item: Projection.Item) -> (Int, Int) {
            switch item {
            case .objects(let t, let from, _): return (t, from == nil ? 0 : 1)
            case .edges(let through, _): return (-1, through != nil ? 0 : 1)
            }
        }
        for (i, part) in snapshot.results.joined().sorted(by: { position(order[$0.0]) < position(order[$1.0]) }) {
            switch part {
            case .objects(let o):
                guard case .objects(let t, _, _) = order[i] else { continue }
                if objects[t] == nil { objects[t] = o } else { objects[t]!.append(o) }
            case .edges(let e): edges.append(e)
            }
        }
        // Objects, in key order; a type whose count is not the cached one is not the cached file.
        for (t, read) in plan.enumerated() where read.needed {
            guard let typeObjects = objects[t], !typeObjects.unreadable, typeObjects.ids.count == entry.types[t].count else { return nil }
            builder.addObjects(type: t, ids: typeObjects.ids.map(ObjectID.int))
            for (slot, a) in read.attributes.enumerated() {
                for (row, value) in typeObjects.values[slot] { builder.set(value, type: t, row: row, attribute: a) }
            }
        }
        // Edges of the named relations, in rowid order, between objects that exist.
        let lookup = IDLookup(builder: builder)
        // Per type, per relation (by position): the source rows and targets.
        var perRelation = entry.types.map { [(from: [Int32], to: [ObjectRef])](repeating: ([], []), count: $0.relations.count) }
        // Per name read, per type: the relation's position (-1: the type has no such relation).
        let positions: [[Int]] = edges.names.map { name in entry.types.map { $0.relations.firstIndex { $0.name == name } ?? -1 } }
        for i in edges.from.indices {
            guard let from = lookup.ref(int: edges.from[i]), let to = lookup.ref(int: edges.to[i]) else { continue }   // dangling, as loaded
            let r = positions[Int(edges.name[i])][Int(from.type)]
            guard r >= 0 else { return nil }
            perRelation[Int(from.type)][r].from.append(from.row)
            perRelation[Int(from.type)][r].to.append(to)
        }
        for (t, lists) in perRelation.enumerated() {
            for (r, list) in lists.enumerated() where !list.from.isEmpty { builder.addEdges(type: t, relation: r, fromRows: list.from, to: list.to) }
        }
        return builder.finish()
    }

    /// One type's keys in order (those from `from` and below `below`, when given), with the
    /// named attributes' values, read as the load reads documents (a document that does not
    /// parse, or is not an object, has no attributes).
    private static func readObjects(_ db: Database, _ read: Projection.TypeRead, from: Int64?, below: Int64?) throws -> Projection.TypeObjects {
        var objects = Projection.TypeObjects(values: Array(repeating: [], count: read.keys.count))
        let range = (from == nil ? "" : " AND id >= ?") + (below == nil ? "" : " AND id < ?")
        let arguments = StatementArguments([read.name.databaseValue] + [from, below].compactMap { $0?.databaseValue })
        do {
            if read.keys.isEmpty {
                objects.ids = try Int64.fetchAll(db, sql: "SELECT id FROM by_type WHERE type_name = ?\(range) ORDER BY id", arguments: arguments)
            } else {
                let slots = Dictionary(read.keys.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
                let keyBytes = read.keys.map { Array($0.utf8) }
                let slotOfKey = read.keys.map { slots[$0]! }
                let repairs = read.keys.contains { $0.contains("\u{FFFD}") }
                /// The slot of a member's key: its bytes compared with the few keys read, or its
                /// decoded text (a key of invalid UTF-8 as the load repairs it).
                func slot(_ raw: UnsafeBufferPointer<UInt8>, _ decoded: String?) -> Int? {
                    if let decoded { return slots[decoded] }
                    if let i = keyBytes.firstIndex(where: { $0.count == raw.count && $0.elementsEqual(raw) }) { return slotOfKey[i] }
                    return repairs ? slots[PersistFormat.repairedKey(raw)] : nil
                }
                // The slot `wants` found, for the body called next with the same member.
                var wanted = 0
                let statement = try db.makeStatement(sql: "SELECT id, json FROM by_type WHERE type_name = ?\(range) ORDER BY id")
                let cursor = try Row.fetchCursor(statement, arguments: arguments)
                let columns = ColumnReader(statement)
                var members: [(Int, Value)] = []
                while let row = try cursor.next() {
                    guard let id = columns.int64(0) else { objects.unreadable = true; break }   // not an integer key: not the cached file
                    let r = objects.ids.count
                    objects.ids.append(id)
                    members.removeAll(keepingCapacity: true)
                    let parsed: Bool? = try row.withUnsafeData(atIndex: 1) { data in
                        guard let data else { return false }
                        return data.withUnsafeBytes { raw in
                            try? JSONReader.forEachMember(bytes: raw.bindMemory(to: UInt8.self), wants: { key, decoded in
                                guard let s = slot(key, decoded) else { return false }
                                wanted = s
                                return true
                            }) { _, _, value in members.append((wanted, value)) }
                        }
                    }
                    guard parsed == true else { continue }
                    for (slot, value) in members { objects.values[slot].append((r, value)) }
                }
            }
        }
        return objects
    }

    /// The relation rows named `names` (and any whose name is not stored as text, checked by
    /// its text) with rowids up to `through` or after `after`, in rowid order; rows whose ends
    /// are not both integers are left out (a store with such rows has no cache entry).
    private static func readEdges(_ db: Database, names: Set<String>, through: Int64?, after: Int64?) throws -> Projection.Edges {
        var edges = Projection.Edges()
        guard !names.isEmpty else { return edges }
        let list = names.sorted()
        let range = through != nil ? "rowid <= ?" : "rowid > ?"
        let statement = try db.makeStatement(sql: """
            SELECT from_id, to_id, relation FROM relations
            WHERE \(range) AND (relation IN (\(list.map { _ in "?" }.joined(separator: ", "))) OR typeof(relation) != 'text') ORDER BY rowid
            """)
        let cursor = try Row.fetchCursor(statement, arguments: StatementArguments([(through ?? after ?? 0).databaseValue] + list.map(\.databaseValue)))
        let columns = ColumnReader(statement)
        var index: [String: Int32] = [:]
        var lastName = "", last: Int32 = -2   // rows come in runs of one name: hash once a run
        while try cursor.next() != nil {
            guard let from = columns.int64(0), let to = columns.int64(1) else { continue }
            let name = columns.string(2) ?? (columns.value(2).lenientText ?? "")
            if last == -2 || name != lastName {
                if !names.contains(name) { last = -1 } else if let known = index[name] { last = known } else {
                    last = Int32(edges.names.count)
                    index[name] = last
                    edges.names.append(name)
                }
                lastName = name
            }
            guard last >= 0 else { continue }
            edges.from.append(from)
            edges.to.append(to)
            edges.name.append(last)
        }
        return edges
    }
}

/// The pieces of ``PersistFormat/projected(_:type:names:linkTypes:listsObjects:)``.
enum Projection {
    /// What to read of one type.
    struct TypeRead: Sendable {
        var needed = false
        /// The stored type name.
        var name = ""
        /// The attributes to read, by position, and their names.
        var attributes: [Int] = []
        var keys: [String] = []
    }

    /// One type's keys in order and, per attribute read, `(row, value)` for each object that has it.
    struct TypeObjects: Sendable {
        var ids: [Int64] = []
        var values: [[(Int, Value)]]
        /// True when a row did not read as the cache entry says it would.
        var unreadable = false

        /// The objects of `next` (the keys after these) added after these.
        mutating func append(_ next: TypeObjects) {
            let offset = ids.count
            ids += next.ids
            unreadable = unreadable || next.unreadable
            for slot in values.indices { values[slot] += next.values[slot].map { ($0.0 + offset, $0.1) } }
        }
    }

    /// One piece of the readers' work: a type's objects (those from `from`, below `below`), or
    /// the relation rows.
    enum Item: Sendable {
        case objects(type: Int, from: Int64?, below: Int64?)
        /// The relation rows with rowids up to `through`, or after `after`.
        case edges(through: Int64?, after: Int64?)

        static func edges(through: Int64) -> Item { .edges(through: through, after: nil) }
        static func edges(after: Int64) -> Item { .edges(through: nil, after: after) }
    }

    /// Relation rows: their ends and names.
    struct Edges: Sendable {
        var from: [Int64] = []
        var to: [Int64] = []
        var name: [Int32] = []
        var names: [String] = []

        /// The rows of `next` (those after these) added after these, their names numbered as here.
        mutating func append(_ next: Edges) {
            let numbers: [Int32] = next.names.map { name in
                if let n = names.firstIndex(of: name) { return Int32(n) }
                names.append(name)
                return Int32(names.count - 1)
            }
            from += next.from
            to += next.to
            name += next.name.map { numbers[Int($0)] }
        }
    }

    enum Part: Sendable {
        case objects(TypeObjects)
        case edges(Edges)
    }
}
