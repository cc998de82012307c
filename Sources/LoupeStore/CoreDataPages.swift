import Foundation
import GRDB
import LoupeModel

/// A Core Data or SwiftData store read a page at a time (the browser's paged mode), for a store
/// larger than the memory a whole load may take: its entities as a load names them
/// (``CoreDataFormat``), each entity's objects by position (keyset paging by `Z_PK` among its
/// table's rows of its `Z_ENT`: a hierarchy shares its root's table), and windows of objects by
/// key, each a small graph with every entity as a type, the objects asked for, the objects
/// their relationships reach (to-one columns, to-many inverses, join tables) and the objects
/// whose relationships reach them (at most ``edgesPerObject`` per relationship and object, in
/// the order a load links them; an object with more is *cut*, and its links' totals and keys
/// come from the file when shown or followed).
///
/// Rows are read and linked by the code a load reads and links with
/// (``CoreDataSchema/readRows(_:table:typeOf:builder:condition:)``,
/// ``CoreDataSchema/link(_:typeOf:rows:builder:within:warnings:)``), kept to the rows a window
/// holds, so a window's objects and edges are the loaded graph's. Lookups go through the indexes
/// Core Data keeps on its to-one columns and join tables; rows a load skips (a key or entity
/// that is no integer) are skipped by every query. Statements are answered by SQL over the store
/// (`CoreDataQuerySource`, in LoupeSQL), else by the engine a chunk of objects at a time over an
/// entity's own attributes (``forEachChunk``: its own objects, so not for an entity with
/// subentities, whose objects a fetch reads too); what neither answers needs the whole graph
/// (`StoreKind.coreData.leaves` names it). An answer on an entity with subentities lists theirs by its name: reading
/// its keys (``objects(type:keys:)``, ``window(keys:of:)``) reads each as its own entity's. Tables beside the entities, which a load reads
/// as plain tables, are left out (``notes`` says so). Everything is read-only, as a load's types are.
public final class CoreDataPages: PageSource, Sendable {
    public let file: StoreFile
    /// What the store's tables mean, read at open (the model cache, or the tables' structure).
    let schema: CoreDataSchema
    /// The store's types with no objects, as a load declares them.
    let graph: ObjectGraph
    /// Each entity's type index by its `Z_ENT` number, and each type's entity.
    let typeOf: [Int64: Int]
    let entityOfType: [CoreDataSchema.Entity]
    /// Per type: its object count, read when first needed (``countTypes()``), not at open.
    let counted: TypeCounts
    /// Per table a relationship reads (entity and join tables): the columns that lead an index
    /// (a lookup by them is a seek), `Z_PK` counted in.
    let indexed: [String: Set<String>]
    /// The columns relationships are looked up by that no index leads with (`ZBOOK.ZAUTHOR`):
    /// a window reads each in one pass.
    let unindexed: [String]
    /// At most this many objects of each relationship to an object are read into a window.
    public let edgesPerObject: Int
    /// The file's stamp when it was opened.
    public let openedStamp: FileStamp

    public var catalog: [(name: String, count: Int)] {
        let counts = (try? counts()) ?? Array(repeating: 0, count: graph.types.count)
        return zip(graph.types, counts).map { ($0.name.rawValue, $1) }
    }

    public var listedTypes: [(name: String, count: Int?)] { counted.listed(graph.types.map(\.name.rawValue)) }

    public func countTypes() throws { try counts() }

    /// Each entity's object count (``CoreDataSchema/objectCounts(_:)``), read first when not yet
    /// done, on a connection of its own.
    @discardableResult
    func counts() throws -> [Int] {
        try counted.counts {
            try file.readOnOwnConnection { db in
                let byEntity = try schema.objectCounts(db)
                return entityOfType.map { byEntity[$0.number] ?? 0 }
            }
        }
    }

    public var notes: [String] {
        var notes: [String] = []
        if !schema.otherTables.isEmpty {
            notes.append("tables beside the entities (\(schema.otherTables.prefix(3).joined(separator: ", "))\(schema.otherTables.count > 3 ? "…" : "")) are not read in paged mode")
        }
        if !unindexed.isEmpty {
            notes.append("no index on \(unindexed.prefix(3).joined(separator: ", "))\(unindexed.count > 3 ? "…" : ""): windows read each in one pass")
        }
        if file.stamp() != openedStamp { notes.append("the file changed since it was opened: reopen it to see it as it is") }
        return notes
    }

    init(file: StoreFile, schema: CoreDataSchema, counts: [Int]?, indexed: [String: Set<String>], edgesPerObject: Int, stamp: FileStamp) {
        self.file = file
        self.schema = schema
        self.indexed = indexed
        var lookups: [(table: String, column: String)] = []
        for entity in schema.entities {
            for r in entity.toOnes { lookups.append((entity.table, r.column)) }
            for r in entity.toManys {
                switch r.storage {
                case .inverse(let column, _): if let target = schema.entity(r.destination) { lookups.append((target.table, column)) }
                case .join(let table, let source, let destination, _): lookups += [(table, source), (table, destination)]
                }
            }
        }
        self.unindexed = Set(lookups.filter { indexed[$0.table]?.contains($0.column) != true }.map { "\($0.table).\($0.column)" }).sorted()
        let builder = GraphBuilder(formatName: CoreDataFormat.name)
        let typeOf = schema.declareTypes(in: builder)
        self.graph = builder.finish()
        self.typeOf = typeOf
        // Every type is an entity's (the first of that name, when two share one).
        self.entityOfType = graph.types.indices.map { t in schema.entities.first { typeOf[$0.number] == t } ?? schema.entities[0] }
        self.counted = TypeCounts(counts)
        self.edgesPerObject = max(1, edgesPerObject)
        self.openedStamp = stamp
    }

    /// Opens `file`, a Core Data store, for paging: its schema only (the counts are read when
    /// first needed). Throws for another format, and for a store with no entity.
    public static func open(_ file: StoreFile, edgesPerObject: Int = 2_000) throws -> CoreDataPages {
        let stamp = file.stamp()
        return try file.read { db in
            guard try StoreFormats.detect(db, path: file.path) == CoreDataFormat.self else {
                throw StoreError(.missingTable, path: file.path, reason: "not a Core Data store")
            }
            let schema = try CoreDataSchema.read(db, evidence: true)
            guard !schema.entities.isEmpty else { throw StoreError(.unreadable, path: file.path, reason: "Z_PRIMARYKEY names no entity") }
            var indexed: [String: Set<String>] = [:]
            for table in schema.tables { indexed[table] = try db.columnsLeadingIndexes(on: table).union(["Z_PK"]) }
            for entity in schema.entities {
                for r in entity.toManys { if case .join(let table, _, _, _) = r.storage { indexed[table] = try db.columnsLeadingIndexes(on: table) } }
            }
            return CoreDataPages(file: file, schema: schema, counts: nil, indexed: indexed, edgesPerObject: edgesPerObject, stamp: stamp)
        }
    }

    // MARK: Keys

    /// `Z_PK` of the key `id`, when it is an integer.
    private func pk(_ id: ObjectID) -> Int64? { if case .int(let i) = id { return i } else { return nil } }

    /// `table` quoted, with the condition that keeps its rows of type `t`'s entity.
    private func rows(of t: Int) -> (table: String, entity: String) {
        (SQL.identifier(entityOfType[t].table), "Z_ENT = \(entityOfType[t].number) AND \(Self.isObject(""))")
    }

    /// The condition under which a row of an entity table (`alias`: `s.`, `t.`, or empty) is
    /// an object as a load reads it: its `Z_PK` and `Z_ENT` integers (a load skips other rows of
    /// a damaged store, and so does every query here).
    static func isObject(_ alias: String) -> String {
        "typeof(\(alias)Z_PK) IN ('integer', 'real') AND \(alias)Z_PK = CAST(\(alias)Z_PK AS INTEGER) AND typeof(\(alias)Z_ENT) IN ('integer', 'real') AND \(alias)Z_ENT = CAST(\(alias)Z_ENT AS INTEGER)"
    }

    /// The integers a one-column statement gives (cells that are no integer left out).
    private func integers(_ statement: Statement, _ arguments: StatementArguments) throws -> [Int64] {
        try DatabaseValue.fetchAll(statement, arguments: arguments).compactMap(\.lenientInt)
    }

    /// While the entity is not counted (``countTypes()``), positions a few pages from its first
    /// object or from `near` are read from there; a range farther away waits for the count.
    public func keys(type t: Int, range: Range<Int>, near: (start: Int, keys: [ObjectID])?) throws -> [ObjectID] {
        let asked = max(0, range.lowerBound) ..< max(0, range.upperBound)
        var count = counted.known?[t]
        let uncounted = count == nil ? KeysetAnchor.uncounted(for: asked, near: near, reach: RelationalPages.uncountedReach) : nil
        if count == nil, uncounted == nil { count = try counts()[t] }
        let range = asked.clamped(to: 0..<(count ?? .max))
        guard !range.isEmpty else { return [] }
        let (table, entity) = rows(of: t)
        let ranked = uncounted.map { [$0, .forward(from: 0, key: nil)] } ?? KeysetAnchor.ranked(for: range, count: count ?? .max, near: near)
        return try file.read { db in
            func exists(_ key: Int64) throws -> Bool {
                try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(table) WHERE Z_PK = ? AND \(entity))", arguments: [key]) ?? false
            }
            for anchor in ranked {
                switch anchor {
                case .forward(let from, let anchorKey):
                    var condition = "", arguments: [DatabaseValueConvertible?] = []
                    if let anchorKey {
                        guard let k = pk(anchorKey), try exists(k) else { continue }   // gone: another anchor
                        condition = " AND Z_PK >= ?"
                        arguments.append(k)
                    }
                    return try integers(db.makeStatement(sql: "SELECT Z_PK FROM \(table) WHERE \(entity)\(condition) ORDER BY Z_PK LIMIT ? OFFSET ?"),
                                        StatementArguments(arguments + [range.count, range.lowerBound - from])).map(ObjectID.int)
                case .backward(let below, let anchorKey):
                    var condition = "", arguments: [DatabaseValueConvertible?] = []
                    if let anchorKey {
                        guard let k = pk(anchorKey), try exists(k) else { continue }
                        condition = " AND Z_PK < ?"
                        arguments.append(k)
                    }
                    return try integers(db.makeStatement(sql: "SELECT Z_PK FROM \(table) WHERE \(entity)\(condition) ORDER BY Z_PK DESC LIMIT ? OFFSET ?"),
                                        StatementArguments(arguments + [range.count, below - range.upperBound])).reversed().map(ObjectID.int)
                }
            }
            return []
        }
    }

    // MARK: Windows

    public func window(keys: [ObjectID], of typeName: String?) throws -> ObjectWindow {
        try file.read { db in
            guard !keys.isEmpty else { return ObjectWindow(graph: try read(db, rows: [:]), refs: []) }
            guard let typeName, let t = graph.types.firstIndex(where: { $0.name.rawValue == typeName }) else {
                throw StoreError(.unreadable, path: file.path, reason: "paged mode reads an entity's objects by the entity's name")
            }
            let family = schema.family(of: entityOfType[t].number)
            guard family.count > 1 else { return try window(db, roots: [(t, keys)]) }
            // An answer on an entity with subentities lists theirs too: each key read as the
            // object of the entity its row names (`Z_PK` is the table's key).
            let (table, _) = rows(of: t)
            var byType: [Int: [ObjectID]] = [:]
            let found = try Row.fetchAll(db, sql: "SELECT Z_PK, Z_ENT FROM \(table) WHERE Z_PK IN (SELECT value FROM json_each(?)) AND \(familyCondition(entityOfType[t], column: "Z_ENT")) AND \(Self.isObject(""))",
                                         arguments: [CoreDataSchema.keyList(keys.compactMap(pk))])
            for row in found {
                guard let k = (row[0] as DatabaseValue).lenientInt, let e = (row[1] as DatabaseValue).lenientInt, let m = typeOf[e] else { continue }
                byType[m, default: []].append(.int(k))
            }
            let read = try window(db, roots: byType.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
            return ObjectWindow(graph: read.graph, refs: keys.map { read.graph.ref(inFamilyOf: read.graph.types[t], id: $0) }, cut: read.cut)
        }
    }

    public func window(objects: [ObjectIdentity]) throws -> ObjectWindow {
        var byType: [Int: [ObjectID]] = [:]
        for object in objects {
            guard let t = graph.types.firstIndex(where: { $0.name == object.type }) else { continue }
            byType[t, default: []].append(object.id)
        }
        return try file.read { db in
            let read = try window(db, roots: byType.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
            return ObjectWindow(graph: read.graph, refs: objects.map { read.graph.ref($0) }, cut: read.cut)
        }
    }

    /// The window of the objects `keys` of each type in `roots`; `refs` are the first type's.
    private func window(_ db: Database, roots groups: [(type: Int, keys: [ObjectID])]) throws -> ObjectWindow {
        var wanted: [String: Set<Int64>] = [:]
        var cutKeys: [(type: Int, pk: Int64)] = []
        for (t, keys) in groups {
            cutKeys += try gather(db, type: t, keys: keys.compactMap(pk), into: &wanted).map { (t, $0) }
        }
        let graph = try read(db, rows: wanted)
        let first = groups.first.map { g in g.keys.map { graph.ref(type: graph.types[g.type], id: $0) } } ?? []
        let cut = Set(cutKeys.map { ObjectIdentity(type: graph.types[$0.type].name, id: .int($0.pk)) })
        return ObjectWindow(graph: graph, refs: first, cut: cut)
    }

    /// Every relationship of the store as it links objects: the entity declaring it (its
    /// subentities share it), and the relationship.
    private var relationships: [(entity: CoreDataSchema.Entity, relation: Relationship)] {
        schema.entities.flatMap { e in e.toOnes.map { (e, Relationship.toOne($0)) } + e.toManys.map { (e, Relationship.toMany($0)) } }
    }

    /// A relationship as a window reads it.
    private enum Relationship {
        case toOne(CoreDataSchema.ToOne)
        case toMany(CoreDataSchema.ToMany)
        var name: String {
            switch self {
            case .toOne(let r): return r.name
            case .toMany(let r): return r.name
            }
        }
        var destination: Int64 {
            switch self {
            case .toOne(let r): return r.destination
            case .toMany(let r): return r.destination
            }
        }
    }

    /// `Z_ENT IN (…)` of `entity` and its subentities (the rows a relationship it declares links from).
    private func familyCondition(_ entity: CoreDataSchema.Entity, column: String) -> String {
        "\(column) IN (\(schema.family(of: entity.number).map(String.init).joined(separator: ",")))"
    }

    /// Adds to `wanted` (keys by table) the objects a window of type `t`'s objects `keys` reads:
    /// them, and what each relationship links them to, either way (at most ``edgesPerObject``
    /// per relationship and object). Returns the keys of the objects with more.
    private func gather(_ db: Database, type t: Int, keys: [Int64], into wanted: inout [String: Set<Int64>]) throws -> [Int64] {
        let (table, entity) = rows(of: t)
        let roots = try integers(db.makeStatement(sql: "SELECT Z_PK FROM \(table) WHERE Z_PK IN (SELECT value FROM json_each(?)) AND \(entity)"),
                                 [CoreDataSchema.keyList(keys)])
        let home = entityOfType[t].table
        wanted[home, default: []].formUnion(roots)
        var cut = Set<Int64>()
        for (_, _, q) in edgeQueries(of: t) {
            // Each root's first edges (one more telling it is cut): through the index on the
            // column root by root, else every root's in one pass, numbered per root.
            var edges: [(root: Int64, key: Int64)] = []
            if isIndexed(q) {
                let statement = try db.cachedStatement(sql: "SELECT \(q.key) FROM \(q.from) WHERE \(q.near) = ? AND \(q.condition) ORDER BY \(q.order) LIMIT \(edgesPerObject + 1)")
                for root in roots { edges += try integers(statement, [root]).map { (root, $0) } }
            } else {
                let sql = """
                    SELECT near, key FROM (SELECT \(q.near) AS near, \(q.key) AS key, row_number() OVER (PARTITION BY \(q.near) ORDER BY \(q.order)) AS n
                    FROM \(q.from) WHERE \(q.near) IN (SELECT value FROM json_each(?)) AND \(q.condition)) WHERE n <= \(edgesPerObject + 1)
                    """
                for row in try Row.fetchAll(db, sql: sql, arguments: [CoreDataSchema.keyList(roots)]) {
                    if let a = (row[0] as DatabaseValue).lenientInt, let b = (row[1] as DatabaseValue).lenientInt { edges.append((a, b)) }
                }
            }
            var perRoot: [Int64: Int] = [:]
            for (root, key) in edges {
                perRoot[root, default: 0] += 1
                if perRoot[root]! > edgesPerObject { cut.insert(root) } else { wanted[q.farTable, default: []].insert(key) }
            }
        }
        return cut.sorted()
    }

    /// A graph of the store's types holding the objects `wanted` (keys by table) and the edges
    /// between them, as a load reads and links them.
    private func read(_ db: Database, rows wanted: [String: Set<Int64>]) throws -> ObjectGraph {
        let builder = GraphBuilder(formatName: CoreDataFormat.name)
        let typeOf = schema.declareTypes(in: builder)
        var rowOf: [String: [Int64: ObjectRef]] = [:]
        for table in schema.tables {
            guard let keys = wanted[table], !keys.isEmpty else { continue }
            rowOf[table] = try schema.readRows(db, table: table, typeOf: typeOf, builder: builder,
                                               condition: ("Z_PK IN (SELECT value FROM json_each(?))", [CoreDataSchema.keyList(keys.sorted())])).rows
        }
        var warnings: [String] = []
        try schema.link(db, typeOf: typeOf, rows: rowOf, builder: builder, within: true, warnings: &warnings)
        return builder.finish()
    }

    // MARK: Links of one object

    /// The object's type and key, when it is stored.
    private func root(_ object: ObjectIdentity, _ db: Database) throws -> (type: Int, pk: Int64)? {
        guard let t = graph.types.firstIndex(where: { $0.name == object.type }), let k = pk(object.id) else { return nil }
        let (table, entity) = rows(of: t)
        guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(table) WHERE Z_PK = ? AND \(entity))", arguments: [k]) == true else { return nil }
        return (t, k)
    }

    /// How one relationship's edges from an object are read in SQL, the object's key bound to
    /// `near`: the rows `from` joins, the row at the other end aliased `far` (`s` or `t`, a row
    /// of `farTable`), kept to `filter`, in the order a load links them.
    private struct EdgeQuery {
        let from: String, near: String, far: String, farTable: String, filter: String, order: String
        /// The table and column `near` names, unquoted (whether an index leads with it).
        let nearTable: String, nearColumn: String
        /// The key and the entity of the row at the other end.
        var key: String { "\(far).Z_PK" }
        var entity: String { "\(far).Z_ENT" }
        /// `filter`, with the row at the other end an object as a load reads it.
        var condition: String { "\(filter) AND \(CoreDataPages.isObject(far + "."))" }
    }

    /// The query of `relation`'s edges (declared by `declaring`) from an object in `table`:
    /// outgoing (the object is their source) or incoming; nil when its end is not in `table`.
    private func edgeQuery(_ declaring: CoreDataSchema.Entity, _ relation: Relationship, outgoing: Bool, table: String) -> EdgeQuery? {
        guard let target = schema.entity(relation.destination), (outgoing ? declaring.table : target.table) == table else { return nil }
        let (s, t) = (SQL.identifier(declaring.table), SQL.identifier(target.table))
        let family = familyCondition(declaring, column: "s.Z_ENT")
        switch (relation, outgoing) {
        case (.toOne(let r), true):
            return EdgeQuery(from: "\(s) s JOIN \(t) t ON t.Z_PK = s.\(SQL.identifier(r.column))", near: "s.Z_PK", far: "t", farTable: target.table, filter: family, order: "t.Z_PK", nearTable: declaring.table, nearColumn: "Z_PK")
        case (.toOne(let r), false):
            return EdgeQuery(from: "\(s) s", near: "s.\(SQL.identifier(r.column))", far: "s", farTable: declaring.table, filter: family, order: "s.Z_PK", nearTable: declaring.table, nearColumn: r.column)
        case (.toMany(let r), _):
            switch r.storage {
            case .inverse(let column, let order):
                let c = SQL.identifier(column)
                return outgoing
                    ? EdgeQuery(from: "\(t) t", near: "t.\(c)", far: "t", farTable: target.table, filter: "1", order: "\(order.map { "t." + SQL.identifier($0) + ", " } ?? "")t.Z_PK", nearTable: target.table, nearColumn: column)
                    : EdgeQuery(from: "\(t) t JOIN \(s) s ON s.Z_PK = t.\(c)", near: "t.Z_PK", far: "s", farTable: declaring.table, filter: family, order: "s.Z_PK", nearTable: target.table, nearColumn: "Z_PK")
            case .join(let joinTable, let source, let destination, let order):
                let (near, far) = outgoing ? (SQL.identifier(source), SQL.identifier(destination)) : (SQL.identifier(destination), SQL.identifier(source))
                let ordering = "\(order.map { "j." + SQL.identifier($0) + ", " } ?? "")j.\(far)"
                return outgoing
                    ? EdgeQuery(from: "\(SQL.identifier(joinTable)) j JOIN \(t) t ON t.Z_PK = j.\(far)", near: "j.\(near)", far: "t", farTable: target.table, filter: "1", order: ordering, nearTable: joinTable, nearColumn: outgoing ? source : destination)
                    : EdgeQuery(from: "\(SQL.identifier(joinTable)) j JOIN \(s) s ON s.Z_PK = j.\(far)", near: "j.\(near)", far: "s", farTable: declaring.table, filter: family, order: ordering, nearTable: joinTable, nearColumn: outgoing ? source : destination)
            }
        }
    }

    /// True when an index leads with the column the query looks its edges up by.
    private func isIndexed(_ q: EdgeQuery) -> Bool { indexed[q.nearTable]?.contains(q.nearColumn) == true }

    /// The relationships an object of type `t` has edges of, either way, with their queries.
    private func edgeQueries(of t: Int) -> [(relation: Relationship, outgoing: Bool, query: EdgeQuery)] {
        relationships.flatMap { declaring, relation in
            [true, false].compactMap { outgoing in
                // Outgoing edges start at the object only when its entity has the relationship.
                if outgoing, !schema.family(of: declaring.number).contains(entityOfType[t].number) { return nil }
                return edgeQuery(declaring, relation, outgoing: outgoing, table: entityOfType[t].table).map { (relation, outgoing, $0) }
            }
        }
    }

    /// Counted by SQL, per type at the other end (a relationship's targets by their type too).
    public func linkTotals(of object: ObjectIdentity) throws -> [ObjectWindow.Link: Int] {
        try file.read { db in
            guard let root = try root(object, db) else { return [:] }
            var out: [ObjectWindow.Link: Int] = [:]
            for (relation, outgoing, q) in edgeQueries(of: root.type) {
                // Every relationship is listed, an empty one at 0.
                if outgoing { out[ObjectWindow.Link(relation: relation.name, outgoing: true, sourceType: nil), default: 0] += 0 }
                let sql = "SELECT \(q.entity), count(*) FROM \(q.from) WHERE \(q.near) = ? AND \(q.condition) GROUP BY \(q.entity)"
                for row in try Row.fetchAll(db.cachedStatement(sql: sql), arguments: [root.pk]) {
                    guard let e = (row[0] as DatabaseValue).lenientInt, let t = typeOf[e], let n = (row[1] as DatabaseValue).lenientInt else { continue }
                    out[ObjectWindow.Link(relation: relation.name, outgoing: outgoing, sourceType: graph.types[t].name.rawValue), default: 0] += Int(n)
                }
            }
            return out
        }
    }

    /// A page of the keys, in the order a load links them: SQL steps to the range (of a
    /// relationship's targets of every type; of a backlink's sources of the type it names).
    public func linkKeys(of object: ObjectIdentity, link: ObjectWindow.Link, range: Range<Int>) throws -> [ObjectID] {
        try file.read { db in
            guard let root = try root(object, db), !range.isEmpty else { return [] }
            let entities: [Int64]
            if link.outgoing { entities = Array(typeOf.keys) } else {
                guard let t = graph.types.firstIndex(where: { $0.name.rawValue == link.sourceType }) else { return [] }
                entities = [entityOfType[t].number]
            }
            var keys: [ObjectID] = [], skip = range.lowerBound
            // (A relationship that is its own inverse is read from both of its join table's columns.)
            for (relation, outgoing, q) in edgeQueries(of: root.type) where outgoing == link.outgoing && relation.name == link.relation {
                let wanted = range.count - keys.count
                guard wanted > 0 else { break }
                let kept = "\(q.near) = ? AND \(q.condition) AND \(q.entity) IN (\(entities.map(String.init).joined(separator: ",")))"
                let page = try integers(db.makeStatement(sql: "SELECT \(q.key) FROM \(q.from) WHERE \(kept) ORDER BY \(q.order) LIMIT ? OFFSET ?"),
                                        [root.pk, wanted, skip])
                if page.isEmpty, skip > 0 {
                    skip -= try Int.fetchOne(db, sql: "SELECT count(*) FROM \(q.from) WHERE \(kept)", arguments: [root.pk]) ?? 0
                    skip = max(0, skip)
                } else {
                    skip = 0
                }
                keys += page.map(ObjectID.int)
            }
            return keys
        }
    }

    // MARK: Whole types

    /// Type `t`'s attribute `name` as its table stores it.
    private func attribute(_ t: Int, named name: String) -> CoreDataSchema.Attribute? {
        schema.allAttributes(of: entityOfType[t]).first { $0.name == name }
    }

    /// Calls `body` with each object of type `t` in key order and its cells of `columns`.
    private func scan(_ t: Int, columns: [String], _ db: Database, _ body: (Int64, [DatabaseValue]) throws -> Bool) throws {
        let (table, entity) = rows(of: t)
        let selection = (["Z_PK"] + columns.map(SQL.identifier)).joined(separator: ", ")
        let cursor = try Row.fetchCursor(db, sql: "SELECT \(selection) FROM \(table) WHERE \(entity) ORDER BY Z_PK")
        while let row = try cursor.next() {
            guard let k = (row[0] as DatabaseValue).lenientInt else { continue }
            if try !body(k, columns.indices.map { row[1 + $0] as DatabaseValue }) { return }
        }
    }

    public func forEachValue(type t: Int, attribute name: String?, _ body: (ObjectID, Value) throws -> Bool) throws {
        let a = name.flatMap { attribute(t, named: $0) }
        if name != nil, a == nil {
            // An attribute the entity lacks: null on every object, as in a load.
            return try file.read { db in try scan(t, columns: [], db) { k, _ in try body(.int(k), .null) } }
        }
        try file.read { db in
            try scan(t, columns: a.map { [$0.column] } ?? [], db) { k, cells in
                try body(.int(k), a.map { CoreDataSchema.value(cells[0], kind: $0.kind) } ?? .int(k))
            }
        }
    }

    public func kinds(type t: Int, names: Set<String>) throws -> [String: ValueKind] {
        let attributes = schema.allAttributes(of: entityOfType[t]).filter { names.contains($0.name) }
        var kinds = [ValueKind](repeating: [], count: attributes.count)
        try file.read { db in
            try scan(t, columns: attributes.map(\.column), db) { _, cells in
                for i in attributes.indices { kinds[i].formUnion(CoreDataSchema.value(cells[i], kind: attributes[i].kind).kind) }
                return true
            }
        }
        // An entity's attributes are every object's: a name is there when the entity has objects.
        return Dictionary(attributes.indices.filter { !kinds[$0].isEmpty }.map { (attributes[$0].name, kinds[$0]) }, uniquingKeysWith: { $0.union($1) })
    }

    /// An entity's own objects (a statement over an entity with subentities, which would read
    /// theirs too, is not planned in chunks: ``ChunkedAnswer``).
    public func forEachChunk(type t: Int, size: Int, kinds: [String: ValueKind], names: Set<String>?, _ body: (ObjectGraph) throws -> Bool) throws {
        let (table, entity) = rows(of: t)
        try file.readOnOwnConnection { db in
            var last = Int64.min
            while true {
                let keys = try integers(db.makeStatement(sql: "SELECT Z_PK FROM \(table) WHERE \(entity) AND Z_PK > ? ORDER BY Z_PK LIMIT ?"), [last, max(1, size)])
                guard let next = keys.last else { return }
                guard try body(chunk(db, type: t, keys: keys, kinds: kinds)) else { return }
                last = next
            }
        }
    }

    /// A graph of the store's types holding type `t`'s objects `keys` (no relations), with at
    /// least `kinds` on its attributes.
    private func chunk(_ db: Database, type t: Int, keys: [Int64], kinds: [String: ValueKind] = [:]) throws -> ObjectGraph {
        let builder = GraphBuilder(formatName: CoreDataFormat.name)
        let typeOf = schema.declareTypes(in: builder)
        // The entity's rows, and its subentities' (an answer on it lists theirs too).
        _ = try schema.readRows(db, table: entityOfType[t].table, typeOf: typeOf, builder: builder,
                                condition: ("Z_PK IN (SELECT value FROM json_each(?)) AND \(familyCondition(entityOfType[t], column: "Z_ENT")) AND \(Self.isObject(""))",
                                            [CoreDataSchema.keyList(keys)]))
        for (name, kind) in kinds { if let a = builder.existingAttribute(name, of: t) { builder.addKinds(kind, type: t, attribute: a) } }
        return builder.finish()
    }

    public func objects(type t: Int, keys: [ObjectID]) throws -> ObjectGraph {
        try file.read { db in try chunk(db, type: t, keys: keys.compactMap(pk)) }
    }

    /// The largest `Z_PK` of type `t`'s table (of every entity table for nil).
    public func maximumIntegerKey(type t: Int?) throws -> Int64 {
        let tables = t.map { [entityOfType[$0].table] } ?? schema.tables
        return try file.read { db in
            try tables.map { try DatabaseValue.fetchOne(db, sql: "SELECT max(Z_PK) FROM \(SQL.identifier($0)) WHERE \(Self.isObject(""))")?.lenientInt ?? 0 }.max() ?? 0
        }
    }

    /// Windows follow every relationship: none is left unseen.
    public func unfollowedReferences(to object: ObjectIdentity) throws -> [String] { [] }

    public var offersRelationIndex: Bool { false }
    public var relationIndexBuilt: Bool { false }
    public func buildRelationIndex(progress: @escaping @Sendable (Int, Int) -> Void, isCancelled: @escaping @Sendable () -> Bool) throws {
        throw StoreError(.unreadable, path: file.path, reason: "Loupe's relation index is for Persist stores; Core Data's own indexes serve its relationships")
    }
}

extension CoreDataPages: CommittablePages {
    public static var format: any StoreFormat.Type { CoreDataFormat.self }
    public func reopened() throws -> CoreDataPages { try CoreDataPages.open(file, edgesPerObject: edgesPerObject) }
    /// Core Data stores are read-only (every type says why): no commit reaches one.
    public func afterCommit(_ report: StoreCommit.Report, newAttributes: [String: [String]]) -> CoreDataPages { self }
}
