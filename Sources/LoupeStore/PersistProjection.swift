import Foundation
import GRDB
import LoupeModel

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
    /// and backlinks come out in the load's order. Two connections read on one snapshot: the
    /// documents on one, the relation rows on the other.
    ///
    /// Nil, and the caller loads, when there is no fresh entry, `type` names no type, or the file
    /// does not match the entry.
    public static func projected(_ file: StoreFile, type: String, names: Set<String>, linkTypes: Set<String>,
                                 listsObjects: Bool) throws -> ObjectGraph? {
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
        let plan = reads, wanted = relationNames
        let snapshot = try file.readOnSnapshot(workers: 2) { worker, db -> Projection.Part in
            worker == 0 ? .objects(try readObjects(db, plan)) : .edges(try readEdges(db, names: wanted))
        }
        guard snapshot.stamp == entry.stamp else { return nil }
        var objects: [Projection.TypeObjects?] = [], edges = Projection.Edges()
        for part in snapshot.results {
            switch part {
            case .objects(let o): objects = o
            case .edges(let e): edges = e
            }
        }
        // Objects, in key order; a type whose count is not the cached one is not the cached file.
        for (t, read) in plan.enumerated() where read.needed {
            guard let typeObjects = objects[t], typeObjects.ids.count == entry.types[t].count else { return nil }
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

    /// Each needed type's keys in order, with the named attributes' values, read as the load
    /// reads documents (a document that does not parse, or is not an object, has no attributes).
    private static func readObjects(_ db: Database, _ plan: [Projection.TypeRead]) throws -> [Projection.TypeObjects?] {
        var out = [Projection.TypeObjects?](repeating: nil, count: plan.count)
        for (t, read) in plan.enumerated() where read.needed {
            var objects = Projection.TypeObjects(values: Array(repeating: [], count: read.keys.count))
            if read.keys.isEmpty {
                objects.ids = try Int64.fetchAll(db, sql: "SELECT id FROM by_type WHERE type_name = ? ORDER BY id", arguments: [read.name])
            } else {
                let slots = Dictionary(read.keys.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
                let keyBytes = read.keys.map { Array($0.utf8) }
                /// The slot of a member's key: its bytes compared with the few keys read, or its decoded text.
                func slot(_ raw: UnsafeBufferPointer<UInt8>, _ decoded: String?) -> Int? {
                    if let decoded { return slots[decoded] }
                    return keyBytes.firstIndex { $0.elementsEqual(raw) }.flatMap { slots[read.keys[$0]] }
                }
                let statement = try db.makeStatement(sql: "SELECT id, json FROM by_type WHERE type_name = ? ORDER BY id")
                let cursor = try Row.fetchCursor(statement, arguments: [read.name])
                let columns = ColumnReader(statement)
                var members: [(Int, Value)] = []
                while let row = try cursor.next() {
                    guard let id = columns.int64(0) else { return out }   // not an integer key: not the cached file
                    let r = objects.ids.count
                    objects.ids.append(id)
                    members.removeAll(keepingCapacity: true)
                    let parsed: Bool? = try row.withUnsafeData(atIndex: 1) { data in
                        guard let data else { return false }
                        return data.withUnsafeBytes { raw in
                            try? JSONReader.forEachMember(bytes: raw.bindMemory(to: UInt8.self), wants: { slot($0, $1) != nil }) { key, decoded, value in
                                if let s = slot(key, decoded) { members.append((s, value)) }
                            }
                        }
                    }
                    guard parsed == true else { continue }
                    for (slot, value) in members { objects.values[slot].append((r, value)) }
                }
            }
            out[t] = objects
        }
        return out
    }

    /// The relation rows named `names` (and any whose name is not stored as text, checked by
    /// its text), in rowid order; rows whose ends are not both integers are left out (a store
    /// with such rows has no cache entry).
    private static func readEdges(_ db: Database, names: Set<String>) throws -> Projection.Edges {
        var edges = Projection.Edges()
        guard !names.isEmpty else { return edges }
        let list = names.sorted()
        let statement = try db.makeStatement(sql: """
            SELECT from_id, to_id, relation FROM relations
            WHERE relation IN (\(list.map { _ in "?" }.joined(separator: ", "))) OR typeof(relation) != 'text' ORDER BY rowid
            """)
        let cursor = try Row.fetchCursor(statement, arguments: StatementArguments(list))
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
    }

    /// Relation rows: their ends and names.
    struct Edges: Sendable {
        var from: [Int64] = []
        var to: [Int64] = []
        var name: [Int32] = []
        var names: [String] = []
    }

    enum Part: Sendable {
        case objects([TypeObjects?])
        case edges(Edges)
    }
}
