import Foundation
import LoupeModel
import LoupeQuery
import LoupeStore

/// Answers a statement over Persist's layout stored in PostgreSQL with PostgreSQL itself, when
/// the documents are `jsonb` and the keys integers: an object is a `by_type` row, an attribute a
/// member of its document (`json->>'name'`), a relation step a join through `relations` to the
/// `by_type` row it points at (rows that point at nothing drop out, as a load drops them), a
/// backlink the same join the other way.
///
/// Each member is translated by what it holds over its whole type (one pass over the documents
/// per statement, with the schema): only numbers → `numeric`, only booleans → `boolean`, only
/// text → text (with the NFC and ASCII conditions ``PostgresPushdown`` sets for text), only
/// Persist dates at UTC (`yyyy-MM-dd HH:mm:ss Z`) → that text, which orders as its dates do. A
/// member of mixed kinds, nested values, text that looks like a date in another zone, keys that
/// are not integers, or `json`/text documents: nil, and the caller loads the database. The
/// objects a statement returns are read by key and built as a load builds them (attributes in the
/// load's order).
enum PostgresPersistPushdown {
    /// What one member holds over one type's documents.
    struct Fact: Sendable {
        var numbers = 0, fractional = 0, strings = 0, persistLike = 0, utcDates = 0, booleans = 0, nulls = 0, nested = 0
        var notNFC = false, notASCII = false

        /// The kinds a load reads of these values.
        var kinds: ValueKind {
            var k = ValueKind()
            if numbers > fractional { k.insert(.integer) }
            if fractional > 0 { k.insert(.double) }
            if strings > persistLike { k.insert(.string) }
            if persistLike > 0 { k.insert(.date) }
            if booleans > 0 { k.insert(.bool) }
            if nested > 0 { k.formUnion([.array, .object]) }
            if nulls > 0 { k.insert(.null) }
            return k
        }
    }

    /// One relation of one source type as a whole load finds it: to-many when one object has
    /// several rows of it (or `loupe_relation_kinds` says so), and the types its rows point at.
    struct Shape: Sendable {
        var toMany = false
        var targets = Set<String>()
    }

    /// What translating statements over one state of the database needs: the schema as a whole
    /// load finds it, as a graph and by type, and what each member holds.
    struct Prepared: Sendable {
        let types: [PersistRows.TypeSchema]
        let facts: [Int: [String: Fact]]
        let graph: ObjectGraph

        /// The statement's translation on `c`.
        func translation(_ c: PostgresConnection) -> PostgresPersistTranslation {
            PostgresPersistTranslation(schema: graph, types: types, facts: facts, connection: c)
        }
    }

    /// True when SQL joins the database's rows as a load reads them: documents `jsonb`, keys
    /// integers, and no row without a key, a type or a relation name (columns declared `NOT NULL`
    /// need no look).
    static func isTranslatable(_ c: PostgresConnection) throws -> Bool {
        let layout = try PostgresPersistCommit.Layout.read(c)
        guard layout.type("by_type.json") == "jsonb", layout.isInteger("by_type.id"), layout.isInteger("relations.from_id"),
              layout.isInteger("relations.to_id") else { return false }
        let required = ["by_type.id", "by_type.type_name", "relations.from_id", "relations.to_id", "relations.relation"]
        if required.allSatisfy(layout.notNull.contains) { return true }
        // Rows the load would read otherwise than SQL joins them: missing keys, types or names.
        let incomplete = try c.query("""
            SELECT EXISTS (SELECT 1 FROM "public"."by_type" WHERE "id" IS NULL OR "type_name" IS NULL)
                OR EXISTS (SELECT 1 FROM "public"."relations" WHERE "from_id" IS NULL OR "to_id" IS NULL OR "relation" IS NULL)
            """).rows.first?.first
        return incomplete == "f"
    }

    /// The schema and facts statements are translated with (inside the caller's snapshot), or nil
    /// when the database's layout is not one SQL answers as a load does (``isTranslatable(_:)``).
    static func prepare(_ c: PostgresConnection) throws -> Prepared? {
        guard try isTranslatable(c) else { return nil }
        let (types, facts) = try schema(c)
        return Prepared(types: types, facts: facts, graph: PersistRows.schemaGraph(types))
    }

    static func run(_ statement: LoupeQuery.Statement, connection c: PostgresConnection) throws -> (QueryResult, ObjectGraph)? {
        guard let prepared = try prepare(c) else { return nil }
        // Names, quantifiers and the rest of the engine's own checks, as it reports them.
        _ = try QueryEngine(graph: prepared.graph).run(statement)
        return try prepared.translation(c).answer(statement)
    }

    /// A document's members that are objects' attributes: none when it is not a JSON object.
    private static let objectsOnly = #"CASE WHEN jsonb_typeof(b."json") = 'object' THEN b."json" ELSE '{}'::jsonb END"#

    /// What every member of every type's documents holds, by type name and member: one pass over
    /// the documents.
    static func facts(_ c: PostgresConnection) throws -> [String: [String: Fact]] {
        try facts(c, from: #"FROM "public"."by_type" b, jsonb_each(\#(objectsOnly)) k"#, [])
    }

    /// What the members `names` of type `type`'s documents hold over the whole type (a member no
    /// document holds is absent): one pass over that type's documents.
    static func facts(_ c: PostgresConnection, type: String, names: Set<String>) throws -> [String: Fact] {
        // A bound JSON array of the names (text cannot hold NUL, nor can a document's key). A
        // document that is no object holds no member (`->` gives NULL).
        let list = names.filter { !$0.contains("\u{0}") }.sorted()
        guard !list.isEmpty, let json = String(data: try JSONSerialization.data(withJSONObject: list), encoding: .utf8) else { return [:] }
        return try facts(c, from: """
            FROM "public"."by_type" b CROSS JOIN LATERAL (SELECT n.key, b."json" -> n.key AS value FROM jsonb_array_elements_text($2::jsonb) n(key)) k
            WHERE b."type_name" = $1::text AND k.value IS NOT NULL
            """, [type, json])[type] ?? [:]
    }

    /// Facts per type name and member from `source`, which names documents `b` and members `k`
    /// (`key`, `value`).
    private static func facts(_ c: PostgresConnection, from source: String, _ parameters: [String?]) throws -> [String: [String: Fact]] {
        var facts: [String: [String: Fact]] = [:]
        for row in try c.query("""
            SELECT b."type_name"::text, k.key, jsonb_typeof(k.value), count(*),
                count(*) FILTER (WHERE jsonb_typeof(k.value) = 'number' AND k.value::text ~ '[.eE]'),
                count(*) FILTER (WHERE jsonb_typeof(k.value) = 'string' AND octet_length(k.value #>> '{}') IN (21, 26)
                                 AND k.value #>> '{}' ~ '^.{4}-.{2}-.{2} .{2}:.{2}:.{2} (Z|[+-].{2}:.{2})$'),
                count(*) FILTER (WHERE jsonb_typeof(k.value) = 'string'
                                 AND k.value #>> '{}' ~ '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01]) ([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9] Z$'),
                coalesce(bool_or(jsonb_typeof(k.value) = 'string' AND (k.value #>> '{}') IS NOT NFC NORMALIZED), false),
                coalesce(bool_or(jsonb_typeof(k.value) = 'string' AND (k.value #>> '{}') ~ '[^\\x01-\\x7F]'), false)
            \(source) GROUP BY 1, 2, 3
            """, parameters).rows {
            guard let type = row[0], let key = row[1], let n = Int(row[3] ?? "") else { continue }
            var fact = facts[type]?[key] ?? Fact()
            switch row[2] {
            case "number": fact.numbers += n; fact.fractional += Int(row[4] ?? "") ?? n
            case "string":
                fact.strings += n
                fact.persistLike += Int(row[5] ?? "") ?? n
                fact.utcDates += Int(row[6] ?? "") ?? 0
                fact.notNFC = fact.notNFC || row[7] == "t"
                fact.notASCII = fact.notASCII || row[8] == "t"
            case "boolean": fact.booleans += n
            case "null": fact.nulls += n
            default: fact.nested += n
            }
            facts[type, default: [:]][key] = fact
        }
        return facts
    }

    /// Every relation name the rows use: one pass over the relation rows.
    static func relationNames(_ c: PostgresConnection) throws -> Set<String> {
        Set(try c.query(#"SELECT DISTINCT "relation"::text FROM "public"."relations""#).rows.compactMap { $0[0] })
    }

    /// Every relation as a whole load finds it, by source type name and name: every row whose two
    /// ends are objects (one pass over the relation rows, joined to both ends), with the kinds
    /// `loupe_relation_kinds` records and the relations it declares without rows.
    static func relationShapes(_ c: PostgresConnection) throws -> [String: [String: Shape]] {
        var shapes: [String: [String: Shape]] = [:]
        for row in try c.query("""
            SELECT st, relation, tt, max(n) FROM (
                SELECT s."type_name"::text AS st, r."relation"::text AS relation, t."type_name"::text AS tt, count(*) OVER (PARTITION BY r."from_id", r."relation") AS n
                FROM "public"."relations" r JOIN "public"."by_type" s ON s."id" = r."from_id" JOIN "public"."by_type" t ON t."id" = r."to_id") x
            GROUP BY 1, 2, 3
            """).rows {
            guard let source = row[0], let name = row[1], let target = row[2] else { continue }
            shapes[source, default: [:]][name, default: Shape()].targets.insert(target)
            if Int(row[3] ?? "") ?? 0 > 1 { shapes[source, default: [:]][name, default: Shape()].toMany = true }
        }
        // What Loupe recorded of each relation's kind, and relations it declared without rows.
        for kind in try PostgresPersist.relationKinds(c) {
            shapes[kind.type, default: [:]][kind.relation, default: Shape()].toMany = shapes[kind.type]?[kind.relation]?.toMany == true || kind.toMany
        }
        return shapes
    }

    /// The store's schema as a whole load finds it: types in order of their first object, each
    /// with its attributes in the load's order and their kinds, and its relations (to-many when
    /// one object has several rows of a name, or `loupe_relation_kinds` says so); with what each
    /// member holds.
    static func schema(_ c: PostgresConnection) throws -> ([PersistRows.TypeSchema], [Int: [String: Fact]]) {
        let names = try c.query(#"SELECT "type_name" FROM "public"."by_type" GROUP BY "type_name" ORDER BY min("id")"#).rows.compactMap { $0[0] }
        let index = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        let found = try facts(c)
        // Attribute order: each type's first documents, then keys in order of first appearance.
        var later: [Int: [String]] = [:]
        for row in try c.query("""
            SELECT "type_name", key FROM (
                SELECT DISTINCT ON (b."type_name", k.key) b."type_name", k.key, b."id", k.ord
                FROM "public"."by_type" b, jsonb_each(\(objectsOnly)) WITH ORDINALITY k(key, value, ord)
                ORDER BY b."type_name", k.key, b."id", k.ord) f
            ORDER BY "type_name", "id", ord
            """).rows {
            if let type = row[0].flatMap({ index[$0] }), let key = row[1] { later[type, default: []].append(key) }
        }
        let shapes = try relationShapes(c)
        var types: [PersistRows.TypeSchema] = []
        for (t, name) in names.enumerated() {
            let sample = try c.query(#"SELECT "json"::text FROM "public"."by_type" WHERE "type_name" = $1 AND jsonb_typeof("json") = 'object' ORDER BY "id" LIMIT \#(PersistRows.sampleSize)"#,
                                     [name]).rows.compactMap { $0[0] }
            let attributes = PersistRows.attributeOrder(sample: sample, later: later[t] ?? [])
            types.append(PersistRows.TypeSchema(name: name, attributes: attributes, kinds: (found[name] ?? [:]).mapValues(\.kinds),
                                                relations: relations(shapes[name] ?? [:], index: index)))
        }
        return (types, Dictionary(uniqueKeysWithValues: names.enumerated().map { ($0, found[$1] ?? [:]) }))
    }

    /// A type's relations as its schema lists them (by name; targets as positions by `index`).
    static func relations(_ shapes: [String: Shape], index: [String: Int]) -> [(name: String, toMany: Bool, targets: [Int])] {
        shapes.sorted { $0.key < $1.key }.map { (name: $0.key, toMany: $0.value.toMany, targets: $0.value.targets.compactMap { index[$0] }.sorted()) }
    }
}

/// A statement over Persist's layout in PostgreSQL as SQL (see ``PostgresPersistPushdown``).
final class PostgresPersistTranslation: PostgresTranslation {
    let types: [PersistRows.TypeSchema]
    let facts: [Int: [String: PostgresPersistPushdown.Fact]]
    private let byType = #""public"."by_type""#, relations = #""public"."relations""#

    init(schema: ObjectGraph, types: [PersistRows.TypeSchema], facts: [Int: [String: PostgresPersistPushdown.Fact]], connection: PostgresConnection) {
        self.types = types
        self.facts = facts
        super.init(schema: schema, described: [], connection: connection)
    }

    /// Text conditions from the pass over the documents (no query of their own).
    override func textIs(_ t: Int, _ column: String, ascii: Bool) throws -> Bool {
        guard let f = facts[t]?[column] else { return true }
        return !f.notNFC && !(ascii && f.notASCII)
    }

    /// Member `name` of the document under `alias` (of type `type`), by what it holds.
    private func member(_ name: String, of type: Int, alias: String) -> Operand? {
        let f = facts[type]?[name] ?? PostgresPersistPushdown.Fact()
        guard f.nested == 0 else { return nil }
        let text = "(\(alias).\"json\" ->> \(bind(name, as: "text")))"
        switch (f.numbers, f.strings, f.booleans) {
        case (0, 0, 0): return Operand(sql: text, kind: .other, column: (type, name))
        case (_, 0, 0): return Operand(sql: "\(text)::numeric", kind: .number, column: (type, name))
        case (0, 0, _): return Operand(sql: "\(text)::boolean", kind: .boolean, column: (type, name))
        case (0, _, 0) where f.persistLike == 0: return Operand(sql: text, kind: .text, column: (type, name))
        case (0, _, 0) where f.utcDates == f.strings: return Operand(sql: text, kind: .persistDate, column: (type, name))
        default: return nil
        }
    }

    /// A member that holds only numbers (and nulls) over its whole type, as an operand of
    /// arithmetic: all integers (no `.`, `e` or `E` in their text) as `bigint`s, all written
    /// with a fraction or an exponent as the doubles the reader reads; a count or a key as it is. A
    /// member mixing the two is nil (the engine computes each value by its own kind), as is an
    /// integer past `bigint`'s range (the cast raises, and the statement gives way).
    override func arithmeticOperand(_ v: Operand) -> (sql: String, floating: Bool)? {
        if v.isCount || v.column?.name == "\u{0}id" { return (v.sql, false) }   // a count, a key (`by_type.id`, a bigint)
        guard v.kind == .number, let (t, name) = v.column, let f = facts[t]?[name], f.numbers > 0 else { return nil }
        if f.fractional == 0 { return ("\(v.sql)::int8", false) }
        if f.fractional == f.numbers { return ("\(v.sql)::float8", true) }
        return nil
    }

    override func path(_ p: Path, _ start: Scope) throws -> Translated? {
        guard let (origin, steps) = origin(of: p, at: start) else { return nil }
        var current = origin
        let fromRoot = current.alias == "a0"
        var first: String?, correlation = "", joins: [String] = []
        /// The first hop's near end and the condition on its relation's name.
        var firstEdge = (near: "", named: "")
        var toMany = 0, toOneAfterMany = 0
        var value: Operand?
        /// One hop: relation rows `edge` (their `near` end at the object at hand) and the objects
        /// of type `type` at their `far` end.
        func enter(_ type: Int, relation name: String, near: String, far: String, many: Bool) {
            let edge = newAlias(), target = newAlias()
            let named = "\(edge).\"relation\" = \(bind(name, as: "text"))"
            let on = "\(edge).\"\(near)\" = \(current.alias).\"id\" AND \(named)"
            let pair = "\(relations) \(edge) JOIN \(byType) \(target) ON \(target).\"id\" = \(edge).\"\(far)\" AND \(target).\"type_name\" = \(bind(types[type].name, as: "text"))"
            if first == nil {
                (first, correlation) = (pair, on)
                firstEdge = ("\(edge).\"\(near)\"", named)
            } else {
                joins.append("\(many ? "JOIN" : "LEFT JOIN") (\(pair)) ON \(on)")
            }
            if many { toMany += 1 } else if toMany > 0 { toOneAfterMany += 1 }
            current = Scope(alias: target, type: type)
        }
        for (i, step) in steps.enumerated() {
            let isLast = i == steps.count - 1
            let type = schema.types[current.type]
            switch step {
            case .name(let name):
                let attribute = type.attribute(named: name.text), relation = type.relation(named: name.text)
                guard attribute == nil || relation == nil else { return nil }
                if let a = attribute {
                    guard isLast, let operand = member(type.attributes[a].name, of: current.type, alias: current.alias) else { return nil }
                    value = operand
                } else if let r = relation {
                    let column = type.relations[r]
                    guard column.targetTypes.count == 1 else { return nil }
                    enter(column.targetTypes[0], relation: column.name, near: "from_id", far: "to_id", many: column.isToMany)
                } else {
                    return nil
                }
            case .links(let typeName, let relationName):
                guard let source = schema.type(named: typeName.text), let r = source.relation(named: relationName.text),
                      source.relations[r].targetTypes.contains(current.type) else { return nil }
                enter(source.index, relation: source.relations[r].name, near: "to_id", far: "from_id", many: true)
            case .id:
                guard isLast else { return nil }
                value = Operand(sql: "\(current.alias).\"id\"", kind: .number, column: (current.type, "\u{0}id"))
            case .variable, .type:
                return nil
            }
        }
        // A value through to-one hops from the statement's own rows: joined onto them (a to-one
        // relation has one row from an object at most, and its target is one object), so that
        // PostgreSQL plans one join rather than a lookup per row.
        if fromRoot, toMany == 0, p.aggregate == nil, let value, let first {
            joinOntoRoot("(\(first))", on: correlation, joins)
            return .scalar(value)
        }
        // An aggregate of each of the statement's objects: computed once for all of them.
        if fromRoot, toMany == 1, toOneAfterMany == 0, let aggregate = p.aggregate, let first {
            let tables = "FROM \(first)" + joins.map { " " + $0 }.joined()
            return try groupedOntoRoot(aggregate, of: value, tables: tables, key: firstEdge.near, filter: firstEdge.named, rootKey: "a0.\"id\"").map(Translated.scalar)
        }
        let from = first.map { "FROM \($0)" + joins.map { " " + $0 }.joined() + " WHERE \(correlation)" }
        return try walked(p, from: from, toMany: toMany, toOneAfterMany: toOneAfterMany, value: value, element: current)
    }

    /// Persist's keys are its integer ids.
    override func integerKey(_ type: Int) -> String? { "a0.\"id\"" }

    override func root(_ type: Int) -> (table: String, filter: String, keys: [String])? {
        (byType, "a0.\"type_name\" = \(bind(types[type].name, as: "text")) AND ", ["a0.\"id\""])
    }

    /// A member's text as the load reads it: numbers as integers when they have no fraction or
    /// exponent, Persist's dates as dates.
    override func value(_ text: String?, of operand: Operand, type oid: UInt32) -> Value {
        guard let text else { return .null }
        switch operand.kind {
        case .number: return Int64(text).map(Value.int) ?? Double(text).map(Value.double) ?? .null
        case .boolean: return .bool(text == "true" || text == "t")
        case .text: return .string(text)
        case .persistDate: return DateText.parse(text).map(Value.date) ?? .string(text)
        default: return PostgresDatabase.value(text, type: oid)
        }
    }

    override func objects(of type: Int, keys: [[String?]], types oids: [UInt32]) throws -> (ObjectGraph, [ObjectRef])? {
        let ids = keys.compactMap { $0.first ?? nil }
        var documents: [String: String?] = [:]
        for chunk in ids.chunked(1_000) {
            let sql = #"SELECT "id"::text, "json"::text FROM "public"."by_type" WHERE "id" IN ("# + chunk.indices.map { "$\($0 - chunk.startIndex + 1)::bigint" }.joined(separator: ", ") + ")"
            for row in try connection.query(sql, Array(chunk)).rows { if let id = row[0] { documents[id] = row[1] } }
        }
        let rows = ids.compactMap { id in Int64(id).map { (id: ObjectID.int($0), json: documents[id] ?? nil) } }
        let graph = PersistRows.objects(type: type, of: types, documents: rows)
        let table = graph.types[type]
        return (graph, rows.compactMap { graph.ref(type: table, id: $0.id) })
    }
}
