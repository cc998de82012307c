import Foundation
import GRDB
import LoupeModel

/// Persist's layout held somewhere other than a SQLite file (a PostgreSQL database's `by_type`
/// and `relations` tables), read with Persist's own loader so that it means exactly what the same
/// rows mean in a file: the rows are written, as they are, into a private temporary file in
/// Persist's layout (keys keep their kind: integers stay integers, text stays text), loaded by
/// ``PersistFormat``, and the file removed.
public enum PersistRows {
    /// One object's row: its key (an integer or text), type name and JSON document.
    public struct Object: Sendable {
        public let id: Key?
        public let typeName: String?
        public let json: String?
        public init(id: Key?, typeName: String?, json: String?) { (self.id, self.typeName, self.json) = (id, typeName, json) }
    }

    /// One relation row, in the order the relation's targets keep.
    public struct Edge: Sendable {
        public let from: Key?
        public let to: Key?
        public let relation: String?
        public init(from: Key?, to: Key?, relation: String?) { (self.from, self.to, self.relation) = (from, to, relation) }
    }

    /// A key as stored.
    public enum Key: Sendable {
        case int(Int64)
        case text(String)
        var databaseValue: DatabaseValue {
            switch self {
            case .int(let i): return i.databaseValue
            case .text(let s): return s.databaseValue
            }
        }
    }

    /// The graph the rows make, as Persist's loader reads them; `kinds` are Loupe's recorded
    /// relation cardinalities (`loupe_relation_kinds`: type, relation, to-many), if the store
    /// has them.
    public static func load(objects: [Object], edges: [Edge], kinds: [(type: String, relation: String, toMany: Bool)]) throws -> LoadedGraph {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-rows-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/store.sqlite"
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            // Columns without declared types: every value keeps the kind it was given.
            try db.execute(sql: "CREATE TABLE by_type (id, type_name, json)")
            try db.execute(sql: "CREATE TABLE relations (from_id, to_id, relation)")
            try db.execute(sql: "CREATE TABLE \(PersistFormat.relationKindsTable) (type_name TEXT NOT NULL, relation TEXT NOT NULL, to_many INTEGER NOT NULL, PRIMARY KEY (type_name, relation))")
            let object = try db.makeStatement(sql: "INSERT INTO by_type VALUES (?, ?, ?)")
            for o in objects { try object.execute(arguments: [o.id?.databaseValue ?? .null, o.typeName, o.json]) }
            let edge = try db.makeStatement(sql: "INSERT INTO relations VALUES (?, ?, ?)")
            for e in edges { try edge.execute(arguments: [e.from?.databaseValue ?? .null, e.to?.databaseValue ?? .null, e.relation]) }
            let kind = try db.makeStatement(sql: "INSERT OR REPLACE INTO \(PersistFormat.relationKindsTable) VALUES (?, ?, ?)")
            for k in kinds { try kind.execute(arguments: [k.type, k.relation, k.toMany]) }
            try db.execute(sql: "CREATE INDEX rows_type ON by_type (type_name)")
        }
        try queue.close()
        return try PersistFormat.load(try StoreFile.openForReading(path), progress: nil)
    }
}

/// Persist's schema and objects as a whole load makes them, from rows read elsewhere (a
/// PostgreSQL database answering a statement itself): what printing the statement's objects and
/// compiling it need, without the whole graph.
extension PersistRows {
    /// How many of a type's first documents decide its attributes' order (``attributeOrder(sample:later:)``).
    public static var sampleSize: Int { PersistFormat.sampleSize }

    /// One type of the store: its name, its attributes in the load's order
    /// (``attributeOrder(sample:later:)``), the kinds each holds over the whole type, and its
    /// relations (targets as positions among the types).
    public struct TypeSchema: Sendable {
        public let name: String
        public let attributes: [String]
        public let kinds: [String: ValueKind]
        public let relations: [(name: String, toMany: Bool, targets: [Int])]
        public init(name: String, attributes: [String], kinds: [String: ValueKind], relations: [(name: String, toMany: Bool, targets: [Int])]) {
            (self.name, self.attributes, self.kinds, self.relations) = (name, attributes, kinds, relations)
        }
    }

    /// The order a load gives a type's attributes: keys of `sample` (the type's first documents
    /// that are objects, in key order) as ``PersistFormat/KeyOrder`` orders them, then `later`
    /// (every key in order of the first document that holds it, then its place there) that the
    /// sample did not hold.
    public static func attributeOrder(sample: [String], later: [String]) -> [String] {
        var order = PersistFormat.KeyOrder()
        for text in sample { order.add(members(of: text)) }
        var keys = order.order
        var seen = Set(keys)
        for key in later where seen.insert(key).inserted { keys.append(key) }
        return keys
    }

    /// The schema as a graph with no objects.
    public static func schemaGraph(_ types: [TypeSchema]) -> ObjectGraph {
        schemaBuilder(types).finish()
    }

    /// The objects `documents` (key and JSON text, in the order wanted) of type `type`, in a graph
    /// with the schema `types` (no relations filled): what printing a statement's objects reads.
    public static func objects(type: Int, of types: [TypeSchema], documents: [(id: ObjectID, json: String?)],
                               wants: ((UnsafeBufferPointer<UInt8>, String?) -> Bool)? = nil) -> ObjectGraph {
        let builder = schemaBuilder(types)
        for (id, json) in documents {
            let ref = builder.addObject(type: type, id: id)
            for (name, value) in json.flatMap({ members(of: $0, wants: wants) }) ?? [] {
                builder.set(value, type: type, row: Int(ref.row), attribute: builder.attribute(name, of: type))
            }
        }
        return builder.finish()
    }

    private static func schemaBuilder(_ types: [TypeSchema]) -> GraphBuilder {
        let builder = PersistFormat.schemaBuilder(types.map { ($0.name, $0.attributes, $0.relations) })
        for (t, type) in types.enumerated() {
            for (name, kind) in type.kinds { builder.addKinds(kind, type: t, attribute: builder.attribute(name, of: t)) }
        }
        return builder
    }

    /// A document's members as the load reads them; nil when it is not a JSON object.
    public static func members(of text: String, wants: ((UnsafeBufferPointer<UInt8>, String?) -> Bool)? = nil) -> [(String, Value)]? {
        var text = text
        var members: [(String, Value)] = []
        let isObject = text.withUTF8 { bytes in
            (try? JSONReader.forEachMember(bytes: bytes, wants: wants) { key, decoded, value in
                members.append((decoded ?? PersistFormat.repairedKey(key), value))
            }) ?? false
        }
        return isObject ? members : nil
    }
}

/// A window of a Persist store as a graph, from the rows a paged reader read (``PersistPages``
/// from a file, a PostgreSQL database's pages from its tables): one builder, so that windows
/// from either mean what a load of the same rows means.
extension PersistRows {
    /// What a window read: the documents of its objects and of the first targets of their
    /// relations, the types of the other objects at the far ends, and the relation rows.
    public struct WindowRows {
        /// Each object read with its document: its type's name and its members as the load reads them.
        public var documents: [Int64: (typeName: String, members: [(String, Value)])] = [:]
        /// Objects at the far end of a relation row read without their document: their type's name.
        public var others: [Int64: String] = [:]
        /// The relation rows from and to the window's objects, in row order, each once.
        public var edges: [(from: Int64, to: Int64, relation: String)] = []
        /// The objects with more relation rows than the window holds.
        public var cut: Set<Int64> = []
        public init() {}

        /// The far ends of the edges from objects read with their documents that were not read
        /// themselves, in key order: the first of these get their documents read (labels).
        public var unreadTargets: [Int64] {
            Array(Set(edges.filter { documents[$0.from] != nil && documents[$0.to] == nil }.map(\.to))).sorted()
        }

        /// The ends of edges neither read with a document nor typed yet.
        public var untyped: [Int64] {
            Array(Set(edges.flatMap { [$0.from, $0.to] }).filter { documents[$0] == nil && others[$0] == nil }).sorted()
        }
    }

    /// The window of `keys` (refs in that order) over the schema `types`: every object read, in
    /// key order within its type (a type the schema lacks is added, keyed store-wide), their
    /// members, and the edges whose two ends were read (a row to an object not stored is left
    /// out, as a load leaves it).
    public static func window(_ rows: WindowRows, keys: [Int64], types: [TypeSchema]) -> ObjectWindow {
        let builder = schemaBuilder(types)
        func typeIndex(_ name: String) -> Int { builder.existingType(name) ?? builder.type(name, keyPolicy: .globalInteger) }
        var refs: [Int64: ObjectRef] = [:]
        let everyone = rows.documents.mapValues(\.typeName).merging(rows.others) { a, _ in a }
        for (key, name) in everyone.sorted(by: { $0.key < $1.key }) { refs[key] = builder.addObject(type: typeIndex(name), id: .int(key)) }
        for (key, document) in rows.documents {
            guard let ref = refs[key] else { continue }
            let t = Int(ref.type)
            for (name, value) in document.members { builder.set(value, type: t, row: Int(ref.row), attribute: builder.attribute(name, of: t)) }
        }
        for edge in rows.edges {
            guard let from = refs[edge.from], let to = refs[edge.to] else { continue }
            builder.addEdge(from: from, relation: builder.relation(edge.relation, of: Int(from.type)), to: to)
        }
        let graph = builder.finish()
        return ObjectWindow(graph: graph, refs: keys.map { refs[$0] }, cut: Set(rows.cut.compactMap { refs[$0].map(graph.identity(of:)) }))
    }
}

extension PersistRows {
    /// The relations a sample of a store shows, per source type (of `count`, positions by name in
    /// `types`), in order of first appearance: from `rows` (the sampled objects' relation rows in
    /// row order, each with the position of its target's type; nil for a row to an object not
    /// stored, left out as a load leaves it), to-many where one object has several rows of a name,
    /// the targets' types; then `kinds` (Loupe's recorded cardinalities, `loupe_relation_kinds`)
    /// decide to-many and add the relations no sampled object has.
    public static func sampledRelations(_ rows: [(from: Int64, relation: String, target: Int?)], sampled: [Int64: Int],
                                        kinds: [(type: String, relation: String, toMany: Bool)], types: [String: Int],
                                        count: Int) -> [[(name: String, toMany: Bool, targets: [Int])]] {
        var relations: [[(name: String, toMany: Bool, targets: Set<Int>)]] = Array(repeating: [], count: count)
        var seen = Set<String>()
        for row in rows {
            guard let s = sampled[row.from], let target = row.target else { continue }
            let i = relations[s].firstIndex { $0.name == row.relation } ?? {
                relations[s].append((row.relation, false, []))
                return relations[s].count - 1
            }()
            if !seen.insert("\(row.from)\u{0}\(row.relation)").inserted { relations[s][i].toMany = true }
            relations[s][i].targets.insert(target)
        }
        for kind in kinds {
            guard let s = types[kind.type] else { continue }
            if let i = relations[s].firstIndex(where: { $0.name == kind.relation }) { relations[s][i].toMany = kind.toMany } else { relations[s].append((kind.relation, kind.toMany, [])) }
        }
        return relations.map { $0.map { ($0.name, $0.toMany, $0.targets.sorted()) } }
    }
}
