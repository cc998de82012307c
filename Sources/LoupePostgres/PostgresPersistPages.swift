import Foundation
import LoupeModel
import LoupeStore

/// Persist's layout stored in PostgreSQL read a page at a time (the browser's paged mode), as
/// ``PersistPages`` reads a Persist file: the catalog once (a `GROUP BY` over `by_type`), the
/// keys of a type by position (keyset paging in key order), and windows of objects by key, each
/// a small graph with the objects' documents, the relation rows from and to them (at most
/// ``edgesPerObject`` of each relation from an object and as many to it, in the order a load
/// reads them: `relations.id` when the table has one, else its physical order), and the objects
/// at their other ends (documents for the first targets of relations, so that a relation cell
/// shows its target's name). Windows are built by ``PersistRows/window(_:keys:types:)``, the
/// builder a file's windows use, from the documents as text (`json::text`, what a load reads).
///
/// The schema is a sample's: each type's attributes from its first documents in key order, its
/// relations from those objects' relation rows, with the kinds `loupe_relation_kinds` records; a
/// window adds what its own documents and rows show beyond it. Pages are found by key, so
/// `by_type.id` and the two ends of `relations` must be integers. Every read is one read-only
/// snapshot on a connection of a ``PostgresPool``, every value a bound parameter.
public final class PostgresPersistPages: PageSource, Sendable {
    /// One type as the catalog gives it: its stored name (nil: the rows without one, which a load
    /// calls `(no type)`), its object count.
    struct PagedType: Sendable {
        let name: String
        let stored: String?
        let count: Int
    }

    let pool: PostgresPool
    public let server: String
    let types: [PagedType]
    /// The sampled schema windows are built over (no kinds: a window's values give them).
    let schema: [PersistRows.TypeSchema]
    /// At most this many relation rows of each relation from one object, and as many to it, are
    /// read into a window; the window says which objects were cut.
    public let edgesPerObject: Int
    /// True when `relations` has indexes leading with `from_id` and with `to_id`: without them,
    /// each window scans the relation rows.
    public let hasRelationIndexes: Bool
    /// True when an index of `by_type` leads with `type_name` then `id`: without it, a type's
    /// first keys (its sample, a far jump) are found by walking every object in key order.
    public let hasTypeIndex: Bool
    /// Why Loupe does not write this database (Persist's undo history kept beside it), or nil.
    public let readOnlyReason: String?
    /// The expression that orders relation rows as a load reads them, and the same as a number.
    private let rowOrder: (sql: String, number: String)
    /// `type_name` as compared with a bound name.
    private let typeColumn: String

    /// The database's URL (with its password, to connect again; never shown).
    public var url: String { pool.url }

    init(pool: PostgresPool, server: String, types: [PagedType], schema: [PersistRows.TypeSchema], edgesPerObject: Int,
         hasRelationIndexes: Bool, hasTypeIndex: Bool, readOnlyReason: String?, rowOrder: (sql: String, number: String), typeColumn: String) {
        self.pool = pool
        self.server = server
        self.types = types
        self.schema = schema
        self.edgesPerObject = max(1, edgesPerObject)
        self.hasRelationIndexes = hasRelationIndexes
        self.hasTypeIndex = hasTypeIndex
        self.readOnlyReason = readOnlyReason
        self.rowOrder = rowOrder
        self.typeColumn = typeColumn
    }

    /// What the status line and `.types` call this format.
    public static let formatName = PostgresPersist.formatName

    /// How the refusal of a store whose keys are not integers begins.
    public static let unkeyedRefusal = "paged mode reads Persist's layout keyed by integers"

    /// True when `error` is ``open(url:edgesPerObject:)``'s refusal of a store whose keys are
    /// not integers (which is then loaded whole, or answered statement by statement).
    public static func refusesUnkeyed(_ error: any Error) -> Bool {
        (error as? PostgresError)?.reason.hasPrefix(unkeyedRefusal) == true
    }

    /// Connects to `url` and reads the catalog and a sample of each type. Throws what connecting
    /// throws, when the database does not hold Persist's layout, and when its keys are not
    /// integers (such a store must be loaded whole).
    public static func open(url: String, edgesPerObject: Int = 2_000) throws -> PostgresPersistPages {
        let connection = try PostgresConnection(url: url)
        let pool = PostgresPool(url: url, connection: connection)
        return try pool.read { c in
            guard try PostgresPersist.isPersist(c) else {
                throw PostgresError(server: c.server, reason: "this database does not hold Persist's layout (by_type and relations in public)")
            }
            let layout = try PostgresPersistCommit.Layout.read(c)
            for column in ["by_type.id", "relations.from_id", "relations.to_id"] where !layout.isInteger(column) {
                throw PostgresError(server: c.server, reason: "\(unkeyedRefusal) (\(column) is \(layout.type(column))); raise --memory-budget to load it whole")
            }
            let typeType = layout.type("by_type.type_name")
            let typeColumn = typeType == "text" || typeType.hasPrefix("character") ? #"b."type_name""# : #"b."type_name"::text"#
            let rowOrder = layout.types["relations.id"] != nil ? (#"r."id""#, #"r."id"::bigint"#)
                : (#"r."ctid""#, #"((r."ctid"::text::point)[0]::bigint * 65536 + (r."ctid"::text::point)[1]::bigint)"#)
            // Counted from the type index alone where it can be (keys never null); ordered by
            // each type's first key when sampled.
            let keyed = try c.query(#"SELECT a.attnotnull FROM pg_attribute a WHERE a.attrelid = '"public"."by_type"'::regclass AND a.attname = 'id'"#).rows.first?.first == "t"
            let count = keyed ? "count(*)" : #"count(b."id")"#
            let types = try c.query("""
                SELECT \(typeColumn), \(count) FROM "public"."by_type" b GROUP BY 1 HAVING \(count) > 0
                """).rows.map { row in PagedType(name: row[0] ?? "(no type)", stored: row[0], count: Int(row[1] ?? "") ?? 0) }
            guard Set(types.map(\.name)).count == types.count else {
                throw PostgresError(server: c.server, reason: "by_type names a type `(no type)` and has rows without a type; raise --memory-budget to load it whole")
            }
            var leading = Set<String>()
            for row in try c.query("""
                SELECT c.relname || '.' || a.attname, b.attname FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
                JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
                LEFT JOIN pg_attribute b ON b.attrelid = i.indrelid AND i.indnatts > 1 AND b.attnum = i.indkey[1]
                WHERE n.nspname = 'public' AND c.relname IN ('by_type', 'relations')
                """).rows {
                if let name = row[0] { leading.insert(name + (row[1].map { "," + $0 } ?? "")) }
            }
            let pages = PostgresPersistPages(pool: pool, server: c.server, types: types, schema: [], edgesPerObject: edgesPerObject,
                                             hasRelationIndexes: ["from_id", "to_id"].allSatisfy { c in leading.contains { $0 == "relations.\(c)" || $0.hasPrefix("relations.\(c),") } },
                                             hasTypeIndex: leading.contains("by_type.type_name,id"), readOnlyReason: PostgresPersistCommit.refusal(layout),
                                             rowOrder: rowOrder, typeColumn: typeColumn)
            return try pages.sampled(c)
        }
    }

    /// The same reader with the schema from a sample (see the type's comment).
    private func sampled(_ c: PostgresConnection) throws -> PostgresPersistPages {
        // The keys first (from an index on (type_name, id) alone, where there is one), then their documents.
        let samples = try types.indices.map { t in
            var parameters: [String?] = []
            let ids = try c.query(#"SELECT b."id" FROM "public"."by_type" b WHERE \#(matches(t, &parameters)) ORDER BY b."id" LIMIT \#(PersistPages.sampleDocuments)"#,
                                  parameters).rows.compactMap { $0[0].flatMap { Int64($0) } }
            var documents: [Int64: String?] = [:]
            for row in try c.query(#"SELECT b."id", b."json"::text FROM "public"."by_type" b WHERE b."id" = ANY($1::bigint[])"#, [Self.keyArray(ids)]).rows {
                if let id = row[0].flatMap({ Int64($0) }) { documents[id] = row[1] }
            }
            return ids.map { (id: $0, json: documents[$0] ?? nil) }
        }
        // Types in order of their first key, as a load finds them.
        let order = types.indices.sorted { (samples[$0].first?.id ?? .max, $0) < (samples[$1].first?.id ?? .max, $1) }
        let types = order.map { self.types[$0] }
        var attributes: [[String]] = [], sampled: [Int64: Int] = [:]
        for (position, t) in order.enumerated() {
            for row in samples[t] { sampled[row.id] = position }
            attributes.append(PersistRows.attributeOrder(sample: samples[t].compactMap(\.json), later: []))
        }
        let index = Dictionary(types.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
        let relationRows = try c.query("""
            SELECT r."from_id", r."relation", \(typeColumn.replacingOccurrences(of: "b.", with: "t.")) FROM "public"."relations" r
            JOIN "public"."by_type" t ON t."id" = r."to_id" WHERE r."from_id" = ANY($1::bigint[]) ORDER BY \(rowOrder.sql)
            """, [Self.keyArray(sampled.keys.sorted())]).rows
        let relations = PersistRows.sampledRelations(relationRows.compactMap { row in
            row[0].flatMap { Int64($0) }.map { ($0, row[1] ?? "", index[row[2] ?? "(no type)"]) }
        }, sampled: sampled, kinds: try PostgresPersist.relationKinds(c), types: index, count: types.count)
        let schema = types.indices.map { PersistRows.TypeSchema(name: types[$0].name, attributes: attributes[$0], kinds: [:], relations: relations[$0]) }
        return PostgresPersistPages(pool: pool, server: server, types: types, schema: schema, edgesPerObject: edgesPerObject, hasRelationIndexes: hasRelationIndexes,
                                    hasTypeIndex: hasTypeIndex, readOnlyReason: readOnlyReason, rowOrder: rowOrder, typeColumn: typeColumn)
    }

    /// The same database with the object counts a commit moved (`countChanges`, by type name) and
    /// the attributes it added (`newAttributes`, by type name).
    public func afterCommit(countChanges: [String: Int], newAttributes: [String: [String]]) -> PostgresPersistPages {
        let moved = types.map { PagedType(name: $0.name, stored: $0.stored, count: max(0, $0.count + (countChanges[$0.name] ?? 0))) }
        let schema = self.schema.map { type in
            PersistRows.TypeSchema(name: type.name, attributes: type.attributes + (newAttributes[type.name] ?? []).filter { !type.attributes.contains($0) },
                                   kinds: type.kinds, relations: type.relations)
        }
        return PostgresPersistPages(pool: pool, server: server, types: moved, schema: schema, edgesPerObject: edgesPerObject, hasRelationIndexes: hasRelationIndexes,
                                    hasTypeIndex: hasTypeIndex, readOnlyReason: readOnlyReason, rowOrder: rowOrder, typeColumn: typeColumn)
    }

    /// The condition on `b` that selects type `t`'s rows with keys, its name appended to `parameters`.
    private func matches(_ t: Int, _ parameters: inout [String?]) -> String {
        guard let stored = types[t].stored else { return #"b."type_name" IS NULL AND b."id" IS NOT NULL"# }
        parameters.append(stored)
        return "\(typeColumn) = $\(parameters.count) AND b.\"id\" IS NOT NULL"
    }

    /// Runs `body` in one read-only snapshot on a connection of the pool.
    func read<T>(_ body: (PostgresConnection) throws -> T) throws -> T { try pool.read(body) }

    public var catalog: [(name: String, count: Int)] { types.map { ($0.name, $0.count) } }

    /// A window of no objects: the schema as paged mode's edit base starts from.
    public var emptyWindow: ObjectGraph {
        PersistRows.window(PersistRows.WindowRows(), keys: [], types: schema).graph.readOnly(because: readOnlyReason, formatName: PostgresPersist.formatName)
    }

    public var notes: [String] {
        ["schema from a sample"]
            + (hasRelationIndexes ? [] : ["no index on relations.from_id and .to_id: each page scans the relation rows"])
            + (hasTypeIndex ? [] : ["no index on by_type (type_name, id): opening and far jumps in a type walk the keys before it"])
    }

    // MARK: Keys

    public func keys(type t: Int, range: Range<Int>, near: (start: Int, keys: [ObjectID])?) throws -> [ObjectID] {
        let range = max(0, range.lowerBound) ..< min(types[t].count, range.upperBound)
        guard !range.isEmpty else { return [] }
        let known = near.map { (start: $0.start, keys: $0.keys.filter { $0.integer != nil }) }
        guard let anchor = KeysetAnchor.ranked(for: range, count: types[t].count, near: known?.keys.count == near?.keys.count ? known : nil).first else { return [] }
        var parameters: [String?] = []
        let condition = matches(t, &parameters)
        func after(_ key: ObjectID?, _ op: String) -> String {
            guard let i = key?.integer else { return "" }
            parameters.append(String(i))
            return " AND b.\"id\" \(op) $\(parameters.count)::bigint"
        }
        switch anchor {
        case .forward(let from, let key):
            let sql = #"SELECT b."id" FROM "public"."by_type" b WHERE \#(condition)\#(after(key, ">=")) ORDER BY b."id" LIMIT \#(range.count) OFFSET \#(range.lowerBound - from)"#
            return try read { try $0.query(sql, parameters).rows.compactMap { $0[0].flatMap { Int64($0) }.map(ObjectID.int) } }
        case .backward(let below, let key):
            let sql = #"SELECT b."id" FROM "public"."by_type" b WHERE \#(condition)\#(after(key, "<")) ORDER BY b."id" DESC LIMIT \#(range.count) OFFSET \#(below - range.upperBound)"#
            return try read { try $0.query(sql, parameters).rows.compactMap { $0[0].flatMap { Int64($0) }.map(ObjectID.int) } }.reversed()
        }
    }

    // MARK: Windows

    /// Persist's keys are store-wide: the type is not needed to find them.
    public func window(keys: [ObjectID], of type: String?) throws -> ObjectWindow {
        let keys = keys.compactMap(\.integer)
        return try read { try window($0, keys: keys) }
    }

    /// Persist's keys are store-wide: each object is read by its key, whatever type it names.
    public func window(objects: [ObjectIdentity]) throws -> ObjectWindow { try window(keys: objects.map(\.id), of: nil) }

    /// A window holds every relation row to an object up to its cut: none is left unfollowed.
    public func unfollowedReferences(to object: ObjectIdentity) throws -> [String] { [] }

    /// The window of `keys` (see the type's comment).
    private func window(_ c: PostgresConnection, keys: [Int64]) throws -> ObjectWindow {
        var read = PersistRows.WindowRows()
        func readDocuments(_ ids: [Int64]) throws {
            guard !ids.isEmpty else { return }
            for row in try c.query(#"SELECT b."id", \#(typeColumn), b."json"::text FROM "public"."by_type" b WHERE b."id" = ANY($1::bigint[])"#,
                                   [Self.keyArray(ids)]).rows {
                guard let id = row[0].flatMap({ Int64($0) }) else { continue }
                read.documents[id] = (row[1] ?? "(no type)", row[2].flatMap { PersistRows.members(of: $0) } ?? [])
            }
        }
        try readDocuments(Array(Set(keys)).sorted())
        let present = read.documents.keys.sorted()
        var edges: [Int64: (from: Int64, to: Int64, relation: String)] = [:]
        if !present.isEmpty {
            // Outgoing: each relation's first rows per object (so that no relation of an object
            // with many edges is left without its targets); incoming: the first rows per object.
            for (column, partition) in [("from_id", #"r."from_id", r."relation""#), ("to_id", #"r."to_id""#)] {
                for row in try c.query("""
                    SELECT o, "from_id", "to_id", "relation", n, total FROM (
                        SELECT \(rowOrder.number) AS o, r."from_id", r."to_id", r."relation",
                            row_number() OVER (PARTITION BY \(partition) ORDER BY \(rowOrder.sql)) AS n, count(*) OVER (PARTITION BY \(partition)) AS total
                        FROM "public"."relations" r WHERE r."\(column)" = ANY($1::bigint[])) x
                    WHERE n <= $2::bigint
                    """, [Self.keyArray(present), String(edgesPerObject)]).rows {
                    guard let order = row[0].flatMap({ Int64($0) }), let from = row[1].flatMap({ Int64($0) }), let to = row[2].flatMap({ Int64($0) }) else { continue }
                    edges[order] = (from, to, row[3] ?? "")
                    if Int(row[5] ?? "") ?? 0 > edgesPerObject { read.cut.insert(column == "from_id" ? from : to) }
                }
            }
        }
        read.edges = edges.sorted { $0.key < $1.key }.map(\.value)
        // The far ends: targets' documents (labels), the rest by type only.
        try readDocuments(Array(read.unreadTargets.prefix(PersistPages.targetDocuments)))
        let untyped = read.untyped
        if !untyped.isEmpty {
            for row in try c.query(#"SELECT b."id", \#(typeColumn) FROM "public"."by_type" b WHERE b."id" = ANY($1::bigint[])"#, [Self.keyArray(untyped)]).rows {
                if let id = row[0].flatMap({ Int64($0) }) { read.others[id] = row[1] ?? "(no type)" }
            }
        }
        let window = PersistRows.window(read, keys: keys, types: schema)
        return ObjectWindow(graph: window.graph.readOnly(because: readOnlyReason, formatName: PostgresPersist.formatName), refs: window.refs, cut: window.cut)
    }

    /// Integer keys as one bound `bigint[]` parameter.
    static func keyArray(_ keys: [Int64]) -> String { "{" + keys.map(String.init).joined(separator: ",") + "}" }

    // MARK: Links of a cut object

    public func linkTotals(of object: ObjectIdentity) throws -> [ObjectWindow.Link: Int] {
        guard let key = object.id.integer else { return [:] }
        var out: [ObjectWindow.Link: Int] = [:]
        try read { c in
            for (column, other, outgoing) in [("from_id", "to_id", true), ("to_id", "from_id", false)] {
                for row in try c.query("""
                    SELECT \(typeColumn), r."relation", count(*) FROM "public"."relations" r JOIN "public"."by_type" b ON b."id" = r."\(other)"
                    WHERE r."\(column)" = $1::bigint GROUP BY 1, 2
                    """, [String(key)]).rows {
                    out[ObjectWindow.Link(relation: row[1] ?? "", outgoing: outgoing, sourceType: row[0] ?? "(no type)"), default: 0] += Int(row[2] ?? "") ?? 0
                }
            }
        }
        return out
    }

    /// The keys at the other end of one link of `object`, positions `range` in the order a load
    /// gives them: a relation's targets in row order, backlinks' sources in key order.
    public func linkKeys(of object: ObjectIdentity, link: ObjectWindow.Link, range: Range<Int>) throws -> [ObjectID] {
        guard let key = object.id.integer, !range.isEmpty else { return [] }
        let sql: String, parameters: [String?]
        if link.outgoing {
            sql = """
                SELECT r."to_id" FROM "public"."relations" r JOIN "public"."by_type" b ON b."id" = r."to_id"
                WHERE r."from_id" = $1::bigint AND r."relation" = $2 ORDER BY \(rowOrder.sql) LIMIT \(range.count) OFFSET \(range.lowerBound)
                """
            parameters = [String(key), link.relation]
        } else {
            let type = link.sourceType == "(no type)" && !types.contains { $0.stored == "(no type)" } ? nil : link.sourceType
            sql = """
                SELECT r."from_id" FROM "public"."relations" r JOIN "public"."by_type" b ON b."id" = r."from_id"
                WHERE r."to_id" = $1::bigint AND r."relation" = $2 AND \(type == nil ? #"b."type_name" IS NULL"# : "\(typeColumn) = $3")
                ORDER BY r."from_id", \(rowOrder.sql) LIMIT \(range.count) OFFSET \(range.lowerBound)
                """
            parameters = [String(key), link.relation] + (type.map { [$0] } ?? [])
        }
        return try read { try $0.query(sql, parameters).rows.compactMap { $0[0].flatMap { Int64($0) }.map(ObjectID.int) } }
    }

    // MARK: Whole types

    /// Calls `body` with each document of type `t` in key order, a batch at a time, until it returns false.
    private func forEachDocument(type t: Int, _ body: (Int64, String?) throws -> Bool) throws {
        var parameters: [String?] = []
        let sql = #"SELECT b."id", b."json"::text FROM "public"."by_type" b WHERE \#(matches(t, &parameters)) ORDER BY b."id""#
        try read { c in
            try c.forEachBatch(sql, parameters) { rows in
                for row in rows.rows {
                    guard let id = row[0].flatMap({ Int64($0) }) else { continue }
                    if try !body(id, row[1]) { return false }
                }
                return true
            }
        }
    }

    public func forEachValue(type t: Int, attribute: String?, _ body: (ObjectID, Value) throws -> Bool) throws {
        try forEachDocument(type: t) { id, json in
            // The key itself, or the member's last value as a load keeps it (null when absent).
            guard let attribute else { return try body(.int(id), .int(id)) }
            return try body(.int(id), json.flatMap { PersistRows.members(of: $0) }?.last { $0.0 == attribute }?.1 ?? .null)
        }
    }

    public func kinds(type t: Int, names: Set<String>) throws -> [String: ValueKind] {
        var kinds: [String: ValueKind] = [:]
        try forEachDocument(type: t) { _, json in
            for (name, value) in json.flatMap({ PersistRows.members(of: $0) }) ?? [] where names.contains(name) { kinds[name, default: []].insert(value.kind) }
            return true
        }
        return kinds
    }

    public func forEachChunk(type t: Int, size: Int, kinds: [String: ValueKind], names: Set<String>?, _ body: (ObjectGraph) throws -> Bool) throws {
        var schema = self.schema
        schema[t] = PersistRows.TypeSchema(name: schema[t].name, attributes: schema[t].attributes + kinds.keys.sorted().filter { !schema[t].attributes.contains($0) },
                                           kinds: kinds, relations: schema[t].relations)
        var chunk: [(id: ObjectID, json: String?)] = []
        var going = true
        let wants = names.map(PersistFormat.wants(named:))
        try forEachDocument(type: t) { id, json in
            chunk.append((.int(id), json))
            guard chunk.count == size else { return true }
            defer { chunk.removeAll(keepingCapacity: true) }
            going = try body(PersistRows.objects(type: t, of: schema, documents: chunk, wants: wants))
            return going
        }
        if going, !chunk.isEmpty { _ = try body(PersistRows.objects(type: t, of: schema, documents: chunk, wants: wants)) }
    }

    public func objects(type t: Int, keys: [ObjectID]) throws -> ObjectGraph {
        let ids = keys.compactMap(\.integer)
        var documents: [Int64: String?] = [:]
        if !ids.isEmpty {
            try read { c in
                for row in try c.query(#"SELECT b."id", b."json"::text FROM "public"."by_type" b WHERE b."id" = ANY($1::bigint[])"#, [Self.keyArray(ids)]).rows {
                    if let id = row[0].flatMap({ Int64($0) }) { documents[id] = row[1] }
                }
            }
        }
        return PersistRows.objects(type: t, of: schema, documents: ids.map { (.int($0), documents[$0] ?? nil) })
    }

    /// Documents may hold members the sampled schema lacks: read, a part at a time.
    public func attributeNames(type t: Int, keys: [ObjectID]) throws -> [String] {
        try attributeNamesReadingObjects(type: t, keys: keys)
    }

    /// Persist's keys are store-wide: the largest of any type, whatever `type` names.
    public func maximumIntegerKey(type: Int?) throws -> Int64 {
        try read { c in
            let text = try c.query(#"SELECT max("id") FROM "public"."by_type""#).rows.first?.first ?? nil
            return text.flatMap { Int64($0) } ?? 0
        }
    }

    // MARK: Indexes

    /// Indexes in a database are its owner's to make: Loupe builds none there.
    public var offersRelationIndex: Bool { false }
    public var relationIndexBuilt: Bool { false }
    public func buildRelationIndex(progress: @escaping @Sendable (Int, Int) -> Void, isCancelled: @escaping @Sendable () -> Bool) throws {
        throw PostgresError(server: server, reason: "Loupe builds no index in a PostgreSQL database")
    }
}

extension ObjectID {
    /// The key as an integer, when it is one.
    var integer: Int64? { if case .int(let i) = self { return i } else { return nil } }
}
