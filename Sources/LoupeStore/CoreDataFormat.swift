import Foundation
import GRDB
import LoupeModel

/// A Core Data or SwiftData store read as its framework presents it: entities by their model
/// names, attributes and relationships by their property names, subentities as types that inherit
/// from their parent entity.
///
/// - Entities come from `Z_PRIMARYKEY` (`Z_ENT`, `Z_NAME`, `Z_SUPER`); a hierarchy shares its root
///   entity's table (`ZROOT`) and each row's `Z_ENT` says which entity it is. Each entity is a type
///   holding only its own rows (`loupe types` counts match `Z_ENT`); a query on a parent entity
///   includes its subentities, as a fetch request does (``TypeLineage``).
/// - Names, types and relationships come from the compiled model in `Z_MODELCACHE` when the store
///   has one (``CoreDataModel``). A property `title` is the column `ZTITLE`, or `ZTITLE1`, `ZTITLE2`
///   … when entities sharing a table each declare one (the column holding the entity's values wins).
/// - Without a model cache the store's own structure is read: attribute names are the columns
///   without their `Z` (lowercased), to-one relations are indexed integer columns whose values are
///   all primary keys of one entity, many-to-many relations are the join tables `Z_<n><NAME>`; the
///   type's notes say the names were inferred, and such relations are marked inferred.
/// - To-one relations are their `Z<NAME>` column, to-many ones the inverse's column (ordered by
///   `Z_FOK_<INVERSE>` when ordered), many-to-many ones their join table (both sides, ordered by
///   its `Z_FOK_` column when there is one). `Z_PK` is the object's id; `Z_ENT`, `Z_OPT`, `Z_FOK_`
///   and the entity columns are hidden, and so are Core Data's own tables (`Z_METADATA`,
///   `Z_MODELCACHE`, join tables, persistent history `ATRANSACTION`/`ACHANGE`/…).
/// - Dates (`TIMESTAMP` columns, and attributes the model declares as dates) are seconds since
///   2001; model booleans are booleans; UUIDs (16-byte values of a UUID attribute, or of a column
///   named like an identifier) read as UUID strings; binary and transformable values stay data.
///
/// Other tables in the file are read as plain relational tables. Everything is read-only.
public enum CoreDataFormat: StoreFormat {
    public static let name = "Core Data"
    static let readOnlyReason = "a Core Data store: Loupe does not write Core Data's bookkeeping (Z_OPT, Z_MAX) yet, so it does not edit it"

    public static func matches(_ db: Database) throws -> Bool {
        guard try db.tableExists("Z_METADATA"), let columns = try db.columnNames(of: "Z_PRIMARYKEY") else { return false }
        return Set(["Z_ENT", "Z_NAME", "Z_SUPER"]).isSubset(of: columns)
    }

    public static func catalog(_ db: Database) throws -> [(name: String, count: Int)] {
        let schema = try CoreDataSchema.read(db, evidence: false)
        let counts = try schema.objectCounts(db)
        var out = schema.entities.map { ($0.name, counts[$0.number] ?? 0) }
        for table in schema.otherTables {
            out.append((table, (try? Int.fetchOne(db, sql: "SELECT count(*) FROM \(SQL.identifier(table))")) ?? 0))
        }
        return out
    }

    public static func supertypes(_ db: Database) throws -> [String: String] {
        let schema = try CoreDataSchema.read(db, evidence: false)
        var out: [String: String] = [:]
        for e in schema.entities { if let s = e.superNumber, let parent = schema.entity(s) { out[e.name] = parent.name } }
        return out
    }

    public static func load(_ file: StoreFile, progress: LoadProgress?) throws -> LoadedGraph {
        let (results, stamp) = try file.readOnSnapshot(workers: 1) { _, db in try load(db, progress: progress) }
        var loaded = results[0]
        loaded.stamp = stamp
        return loaded
    }

    private static func load(_ db: Database, progress: LoadProgress?) throws -> LoadedGraph {
        let schema = try CoreDataSchema.read(db, evidence: true)
        let builder = GraphBuilder(formatName: name)
        var warnings = schema.warnings
        let typeOf = schema.declareTypes(in: builder)

        // Rows, table by table; `rowOf` maps each table's Z_PK to its object.
        var rowOf: [String: [Int64: ObjectRef]] = [:]
        let total = schema.entities.count
        var done = 0
        for table in schema.tables {
            let (map, strays) = try schema.readRows(db, table: table, typeOf: typeOf, builder: builder)
            if strays > 0 { warnings.append("\(table): \(strays.counting("row")) \(strays == 1 ? "names" : "name") no entity of Z_PRIMARYKEY; left out") }
            rowOf[table] = map
            done += schema.entities.filter { $0.table == table }.count
            progress?(done, total)
        }

        try schema.link(db, typeOf: typeOf, rows: rowOf, builder: builder, warnings: &warnings)

        // Tables that belong to no entity and are not Core Data's own: plain relational tables.
        for table in schema.otherTables {
            do {
                let source = try RelationalFormat.describe(db, name: table, isView: false)
                _ = try RelationalFormat.loadRows(db, source: source, builder: builder, epoch: DateText.referenceDateOffset,
                                                  readOnlyReason: readOnlyReason, warnings: &warnings)
            } catch {
                warnings.append("\(table): cannot read its rows (\(StoreError.from(error, path: nil).reason))")
            }
        }
        return LoadedGraph(graph: builder.finish(), warnings: warnings)
    }
}

/// What a Core Data store's tables mean: its entities, which table and columns each one's
/// properties live in, and how each relationship is stored. Built from the model cache when
/// there is one, else inferred from the tables.
struct CoreDataSchema {
    /// How a column's values read (the kinds ``CoreDataLayout`` tells SQL of).
    typealias ValueKind = CoreDataLayout.Kind

    struct Attribute {
        var name: String
        var column: String
        var kind: ValueKind
        var declaredType: String
    }

    struct ToOne {
        var name: String
        var column: String
        var destination: Int64
        var inferred: Bool
    }

    struct ToMany {
        enum Storage {
            /// The destination's rows whose `column` holds the source's Z_PK, ordered by `order`.
            case inverse(column: String, order: String?)
            /// Rows of a join table: `source` holds the source's Z_PK, `destination` the target's.
            case join(table: String, source: String, destination: String, order: String?)
        }
        var name: String
        var destination: Int64
        var storage: Storage
        var inferred: Bool
    }

    struct Entity {
        var number: Int64
        var name: String
        var superNumber: Int64?
        var table: String
        /// Declared on this entity itself (inherited ones come from its superentities).
        var attributes: [Attribute] = []
        var toOnes: [ToOne] = []
        var toManys: [ToMany] = []
    }

    var entities: [Entity] = []
    var model: CoreDataModel?
    /// Each entity table's columns, in table order.
    var columns: [String: [String]] = [:]
    /// Tables of the file that are neither an entity's nor Core Data's own.
    var otherTables: [String] = []
    var warnings: [String] = []
    private var indexByNumber: [Int64: Int] = [:]

    /// The entity tables, in the order of their first entity.
    var tables: [String] {
        var seen = Set<String>()
        return entities.map(\.table).filter { seen.insert($0).inserted }
    }

    func entity(_ number: Int64) -> Entity? { indexByNumber[number].map { entities[$0] } }

    /// The entity and every entity that inherits from it.
    func family(of number: Int64) -> [Int64] {
        var out = [number]
        var i = 0
        while i < out.count {
            let parent = out[i]
            out.append(contentsOf: entities.filter { $0.superNumber == parent && !out.contains($0.number) }.map(\.number))
            i += 1
        }
        return out
    }

    /// The entity and its superentities, root first.
    func lineage(of entity: Entity) -> [Entity] {
        var chain = [entity]
        var seen: Set<Int64> = [entity.number]
        while let s = chain[0].superNumber, let parent = self.entity(s), seen.insert(s).inserted { chain.insert(parent, at: 0) }
        return chain
    }

    func allAttributes(of entity: Entity) -> [Attribute] { lineage(of: entity).flatMap(\.attributes) }
    func allToOnes(of entity: Entity) -> [ToOne] { lineage(of: entity).flatMap(\.toOnes) }
    func allToManys(of entity: Entity) -> [ToMany] { lineage(of: entity).flatMap(\.toManys) }

    /// Declares the store's types in `builder` as a load names them: one per entity in `Z_ENT`
    /// order, each inheriting from its superentity, with its inherited attributes and relations
    /// first. Returns each entity's type index by its `Z_ENT` number (a builder given the same
    /// schema gives the same indexes: paged windows rely on it).
    func declareTypes(in builder: GraphBuilder) -> [Int64: Int] {
        var typeOf: [Int64: Int] = [:]
        for entity in entities {
            let t = builder.type(entity.name, readOnlyReason: CoreDataFormat.readOnlyReason, keyPolicy: .column("Z_PK", autoIncrements: true))
            typeOf[entity.number] = t
            if model == nil {
                builder.note("no model cache: attribute names are the columns without their Z, lowercased; relations inferred from keys and join tables", type: t)
            }
        }
        for entity in entities {
            if let s = entity.superNumber, let st = typeOf[s], let t = typeOf[entity.number] { builder.setSupertype(st, of: t) }
            guard let t = typeOf[entity.number] else { continue }
            for a in allAttributes(of: entity) { _ = builder.attribute(a.name, of: t, storage: ColumnStorage(declaredType: a.declaredType)) }
            for r in allToOnes(of: entity) {
                // The stored column's name (`ZUSER`) reaches the relation too.
                let rel = builder.relation(r.name, of: t, aliases: r.column.caseInsensitiveCompare(r.name) == .orderedSame ? [] : [r.column],
                                           declaredTargets: family(of: r.destination).compactMap { typeOf[$0] })
                if r.inferred { builder.markInferred(relation: rel, of: t) }
            }
            for r in allToManys(of: entity) {
                let rel = builder.relation(r.name, of: t, toMany: true, declaredTargets: family(of: r.destination).compactMap { typeOf[$0] })
                if r.inferred { builder.markInferred(relation: rel, of: t) }
            }
        }
        return typeOf
    }

    /// Reads the rows of entity table `table` that `condition` selects (what follows `WHERE`,
    /// with its arguments; nil: every row) into `builder`, whose types ``declareTypes(in:)``
    /// declared, in `Z_PK` order, with their attributes (no relations). Returns each row's object
    /// by its `Z_PK`, and how many rows named no entity (left out).
    func readRows(_ db: Database, table: String, typeOf: [Int64: Int], builder: GraphBuilder,
                  condition: (sql: String, arguments: StatementArguments)? = nil) throws -> (rows: [Int64: ObjectRef], strays: Int) {
        let columns = self.columns[table] ?? []
        let position = Dictionary(columns.enumerated().map { ($1, $0 + 2) }, uniquingKeysWith: { a, _ in a })
        // Per entity: (attribute slot, column position, kind) to read.
        var plans: [Int64: [(slot: Int, column: Int, kind: ValueKind)]] = [:]
        for entity in entities where entity.table == table {
            guard let t = typeOf[entity.number] else { continue }
            plans[entity.number] = allAttributes(of: entity).compactMap { a in
                guard let c = position[a.column], let slot = builder.existingAttribute(a.name, of: t) else { return nil }
                return (slot, c, a.kind)
            }
        }
        let columnList = (["Z_PK", "Z_ENT"] + columns).map(SQL.identifier).joined(separator: ", ")
        // Values are read through the statement's columns directly (a `Row` subscript costs
        // most of a microsecond, and a store can hold tens of millions of cells).
        let statement = try db.makeStatement(sql: "SELECT \(columnList) FROM \(SQL.identifier(table))\(condition.map { " WHERE " + $0.sql } ?? "") ORDER BY Z_PK")
        let cursor = try Row.fetchCursor(statement, arguments: condition?.arguments ?? StatementArguments())
        let reader = ColumnReader(statement)
        var map: [Int64: ObjectRef] = [:]
        var strays = 0
        while try cursor.next() != nil {
            guard let pk = reader.value(0).lenientInt, let ent = reader.value(1).lenientInt,
                  let t = typeOf[ent], let plan = plans[ent] else { strays += 1; continue }
            let ref = builder.addObject(type: t, id: .int(pk))
            map[pk] = ref
            for p in plan {
                builder.set(Self.value(reader.value(Int32(p.column)), kind: p.kind), type: t, row: Int(ref.row), attribute: p.slot)
            }
        }
        return (map, strays)
    }

    /// Adds the relations' edges between the objects `rows` holds (by table, by `Z_PK`) to
    /// `builder`: to-one columns, to-many inverses (ordered by their `Z_FOK_` column when
    /// ordered), join tables. With `within`, only edges whose two ends `rows` holds are read, by
    /// those keys (a window of a few objects); without, every row of every table is (a load,
    /// which warns of values that match no row).
    func link(_ db: Database, typeOf: [Int64: Int], rows rowOf: [String: [Int64: ObjectRef]], builder: GraphBuilder,
              within: Bool = false, warnings: inout [String]) throws {
        let entityOfType = Dictionary(typeOf.map { ($0.value, $0.key) }, uniquingKeysWith: { a, _ in a })
        /// `AND <column> IN (<the keys of table's objects>)` in a window; nothing in a load.
        func only(_ column: String, of table: String) -> (sql: String, arguments: [DatabaseValueConvertible]) {
            guard within else { return ("", []) }
            return (" AND \(SQL.identifier(column)) IN (SELECT value FROM json_each(?))", [Self.keyList(rowOf[table].map { Array($0.keys) } ?? [])])
        }
        for entity in entities {
            let family = Set(self.family(of: entity.number))
            for r in entity.toOnes {
                guard let target = self.entity(r.destination), let targets = rowOf[target.table] else { continue }
                let sources = only("Z_PK", of: entity.table)
                let sql = "SELECT Z_PK, \(SQL.identifier(r.column)) FROM \(SQL.identifier(entity.table)) WHERE \(SQL.identifier(r.column)) IS NOT NULL AND Z_ENT IN (\(family.map(String.init).joined(separator: ",")))" + sources.sql
                var unresolved = 0
                for row in try Row.fetchAll(db, sql: sql, arguments: StatementArguments(sources.arguments)) {
                    guard let pk = (row[0] as DatabaseValue).lenientInt, let from = rowOf[entity.table]?[pk] else { continue }
                    guard let key = (row[1] as DatabaseValue).lenientInt, let to = targets[key] else { unresolved += 1; continue }
                    builder.addEdge(from: from, relation: builder.relation(r.name, of: Int(from.type)), to: to)
                }
                if unresolved > 0, !within { warnings.append("\(entity.name).\(r.name): \(unresolved) values match no \(target.name)") }
            }
            // A relationship that is its own inverse (`friends`) is read from both columns of its
            // join table; an edge read twice counts once.
            var seen: [String: Set<[Int32]>] = [:]
            for r in entity.toManys {
                guard let target = self.entity(r.destination), let targets = rowOf[target.table], let sources = rowOf[entity.table] else { continue }
                let sql: String
                var arguments: [DatabaseValueConvertible] = []
                switch r.storage {
                case .inverse(let column, let order):
                    let (a, b) = (only(column, of: entity.table), only("Z_PK", of: target.table))
                    sql = "SELECT \(SQL.identifier(column)), Z_PK FROM \(SQL.identifier(target.table)) WHERE \(SQL.identifier(column)) IS NOT NULL\(a.sql)\(b.sql) ORDER BY 1, \(order.map { SQL.identifier($0) + ", " } ?? "")Z_PK"
                    arguments = a.arguments + b.arguments
                case .join(let table, let source, let destination, let order):
                    let (a, b) = (only(source, of: entity.table), only(destination, of: target.table))
                    sql = "SELECT \(SQL.identifier(source)), \(SQL.identifier(destination)) FROM \(SQL.identifier(table)) WHERE 1\(a.sql)\(b.sql) ORDER BY 1, \(order.map { SQL.identifier($0) + ", " } ?? "")2"
                    arguments = a.arguments + b.arguments
                }
                for row in try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)) {
                    guard let a = (row[0] as DatabaseValue).lenientInt, let from = sources[a],
                          let b = (row[1] as DatabaseValue).lenientInt, let to = targets[b],
                          let e = entityOfType[Int(from.type)], family.contains(e),
                          seen[r.name, default: []].insert([from.type, from.row, to.type, to.row]).inserted else { continue }
                    builder.addEdge(from: from, relation: builder.relation(r.name, of: Int(from.type)), to: to)
                }
            }
        }
    }

    /// Each entity's object count by its `Z_ENT`: the rows a load reads as objects (integer keys
    /// and entities, of an entity of that table), one `GROUP BY Z_ENT` per table.
    func objectCounts(_ db: Database) throws -> [Int64: Int] {
        var counts: [Int64: Int] = [:]
        for table in tables {
            let own = Set(entities.filter { $0.table == table }.map(\.number))
            for row in try Row.fetchAll(db, sql: "SELECT Z_ENT, count(*) FROM \(SQL.identifier(table)) WHERE \(CoreDataPages.isObject("")) GROUP BY Z_ENT") {
                if let ent = (row[0] as DatabaseValue).lenientInt, own.contains(ent) { counts[ent, default: 0] += (row[1] as DatabaseValue).lenientInt.map(Int.init) ?? 0 }
            }
        }
        return counts
    }

    /// Keys as the JSON array `json_each` reads (one bound argument, however many keys).
    static func keyList(_ keys: some Collection<Int64>) -> String {
        "[" + keys.map(String.init).joined(separator: ",") + "]"
    }

    /// Core Data's own tables: never shown as types.
    static func isBookkeeping(_ table: String) -> Bool {
        let upper = table.uppercased()
        return upper.hasPrefix("Z_") || ["ATRANSACTION", "ACHANGE", "ATRANSACTIONSTRING", "ACHANGEDATA"].contains(upper)
            || upper.hasPrefix("ANSCK") || upper.hasPrefix("Y_")
    }

    /// Columns that are Core Data's bookkeeping: `Z_PK`, `Z_ENT`, `Z_OPT`, `Z_FOK_…`, `Z<n>_…`.
    static func isBookkeepingColumn(_ column: String) -> Bool {
        let u = Array(column.uppercased().utf8)
        guard u.count >= 2, u[0] == UInt8(ascii: "Z") else { return true }
        return u[1] == UInt8(ascii: "_") || (u[1] >= UInt8(ascii: "0") && u[1] <= UInt8(ascii: "9"))
    }

    /// Reads the schema. With `evidence`, a property with several candidate columns (`ZTITLE`,
    /// `ZTITLE1`) takes the one holding its entity's values; without, the first free one.
    static func read(_ db: Database, evidence: Bool) throws -> CoreDataSchema {
        var schema = CoreDataSchema()
        let rows = try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        var names: [Int64: (String, Int64?)] = [:]
        var order: [Int64] = []
        for row in rows {
            guard let ent = (row[0] as DatabaseValue).lenientInt, let name = (row[1] as DatabaseValue).lenientText, !name.isEmpty else { continue }
            let sup = (row[2] as DatabaseValue).lenientInt.flatMap { $0 > 0 && $0 != ent ? $0 : nil }
            if names[ent] == nil { order.append(ent) }
            names[ent] = (name, sup)
        }
        if let blob = try? Data.fetchOne(db, sql: "SELECT Z_CONTENT FROM Z_MODELCACHE WHERE Z_CONTENT IS NOT NULL LIMIT 1"),
           try db.tableExists("Z_MODELCACHE") {
            schema.model = CoreDataModel.decode(compressed: blob)
            if schema.model == nil { schema.warnings.append("Z_MODELCACHE: cannot read the model cache; names inferred from the tables") }
        }
        // Each entity's table is its root entity's. A chain of superentities that loops back
        // has no root: its entities stand alone.
        func chain(_ ent: Int64) -> (root: Int64, loops: Bool) {
            var e = ent
            var seen: Set<Int64> = [ent]
            while let s = names[e]?.1, names[s] != nil {
                guard seen.insert(s).inserted else { return (ent, true) }
                e = s
            }
            return (e, false)
        }
        for ent in order where chain(ent).loops {
            schema.warnings.append("\(names[ent]!.0): its superentities loop; read as an entity of its own")
            names[ent]!.1 = nil
        }
        func root(_ ent: Int64) -> Int64 { chain(ent).root }
        let tableNames = try RelationalFormat.sourceNames(db).filter { !$0.isView }.map(\.name)
        // Entity tables are those with Core Data's key and entity columns; any other table is
        // read as a plain one.
        var tableByUpper: [String: String] = [:]
        for table in tableNames {
            let columns = Set(try db.columnNames(in: table).map { $0.uppercased() })
            if columns.isSuperset(of: ["Z_PK", "Z_ENT"]), tableByUpper[table.uppercased()] == nil { tableByUpper[table.uppercased()] = table }
        }
        for ent in order {
            let (name, sup) = names[ent]!
            guard let rootName = names[root(ent)]?.0, let table = tableByUpper["Z" + rootName.uppercased()] else {
                // Core Data's own entities (persistent history, CloudKit mirroring) live in
                // `A`-prefixed tables and are not the app's.
                if let rootName = names[root(ent)]?.0, tableByUpper["A" + rootName.uppercased()] != nil { continue }
                schema.warnings.append("\(name): no table Z\(names[root(ent)]?.0.uppercased() ?? ""); left out")
                continue
            }
            schema.indexByNumber[ent] = schema.entities.count
            schema.entities.append(Entity(number: ent, name: name, superNumber: sup.flatMap { names[$0] != nil ? $0 : nil }, table: table))
        }
        for table in schema.tables { schema.columns[table] = try db.columnNames(in: table) }
        let entityTables = Set(schema.tables)
        let ownTables = Set(names.values.map { "A" + $0.0.uppercased() })
        schema.otherTables = tableNames.filter { !entityTables.contains($0) && !isBookkeeping($0) && !ownTables.contains($0.uppercased()) }
        let joins = try JoinTable.all(db, tables: tableNames)
        if let model = schema.model {
            try schema.assignFromModel(model, db: db, joins: joins, evidence: evidence)
        } else {
            try schema.infer(db: db, joins: joins)
        }
        return schema
    }

    /// A join table `Z_<n><NAME>`: two key columns `Z_<a><X>`, `Z_<b><Y>` (column `Z_<b><Y>` holds
    /// the primary keys of entity `b`, the targets of relationship `Y` of entity `a`'s side), and
    /// `Z_FOK_` ordering columns when ordered.
    struct JoinTable {
        struct KeyColumn { var name: String; var entity: Int64; var relationship: String }
        var table: String
        var keys: [KeyColumn]
        var orderColumns: [String]

        static func all(_ db: Database, tables: [String]) throws -> [JoinTable] {
            var out: [JoinTable] = []
            for table in tables where table.uppercased().hasPrefix("Z_") && table.count > 2 && table.dropFirst(2).first?.isNumber == true {
                let columns = try db.columnNames(in: table)
                var keys: [KeyColumn] = []
                var orders: [String] = []
                for c in columns {
                    if c.uppercased().hasPrefix("Z_FOK_") { orders.append(c); continue }
                    guard c.uppercased().hasPrefix("Z_") else { continue }
                    let rest = c.dropFirst(2)
                    let digits = rest.prefix { $0.isASCII && $0.isNumber }
                    guard !digits.isEmpty, let n = Int64(digits), digits.count < rest.count else { continue }
                    keys.append(KeyColumn(name: c, entity: n, relationship: String(rest.dropFirst(digits.count))))
                }
                if keys.count == 2 { out.append(JoinTable(table: table, keys: keys, orderColumns: orders)) }
            }
            return out
        }

        /// The ordering column for targets held in `column`, if the table has one.
        func order(for column: String) -> String? {
            orderColumns.first { $0.uppercased() == "Z_FOK_" + column.uppercased().dropFirst(2) } ?? (orderColumns.count == 1 ? orderColumns[0] : nil)
        }
    }

    // MARK: From the model

    private mutating func assignFromModel(_ model: CoreDataModel, db: Database, joins: [JoinTable], evidence: Bool) throws {
        var claimed: [String: Set<String>] = [:]
        let numberByName = Dictionary(entities.map { ($0.name, $0.number) }, uniquingKeysWith: { a, _ in a })
        // Parents before children, so inherited names claim their columns first.
        let ordered = entities.indices.sorted { lineage(of: entities[$0]).count < lineage(of: entities[$1]).count }
        for i in ordered {
            let entity = entities[i]
            guard let declared = model.entities[entity.name] else {
                warnings.append("\(entity.name): not in the model cache; its own columns are not shown")
                continue
            }
            let inherited = Set(lineage(of: entity).dropLast().flatMap { model.entities[$0.name].map { Array($0.attributes.keys) + Array($0.relationships.keys) } ?? [] })
            let tableColumns = columns[entity.table] ?? []
            // The columns of this entity's own properties, in table order.
            var attributes: [(Int, Attribute)] = []
            for (name, type) in declared.attributes where !inherited.contains(name) {
                guard let column = try pickColumn(for: name, entity: entity, columns: tableColumns, claimed: &claimed, db: db, evidence: evidence) else { continue }
                let kind: ValueKind = type == .date ? .date : type == .bool ? .bool : type == .uuid ? .uuid : .plain
                attributes.append((tableColumns.firstIndex(of: column) ?? 0, Attribute(name: name, column: column, kind: kind, declaredType: Self.declaredType(type))))
            }
            entities[i].attributes = attributes.sorted { $0.0 < $1.0 }.map(\.1)
            var toOnes: [(Int, ToOne)] = []
            for (name, r) in declared.relationships.sorted(by: { $0.key < $1.key }) where !inherited.contains(name) {
                guard let destination = numberByName[r.destination] else { continue }
                if !r.isToMany {
                    guard let column = try pickColumn(for: name, entity: entity, columns: tableColumns, claimed: &claimed, db: db, evidence: evidence) else { continue }
                    toOnes.append((tableColumns.firstIndex(of: column) ?? 0, ToOne(name: name, column: column, destination: destination, inferred: false)))
                    continue
                }
                let inverse = r.inverse.flatMap { model.entities[r.destination]?.relationships[$0] }
                if let inverse, !inverse.isToMany, let target = self.entity(destination) {
                    // One-to-many: the destination's column for the inverse to-one.
                    let candidates = Self.candidates(for: inverse.name, in: columns[target.table] ?? [])
                    guard let column = candidates.first(where: { claimed[target.table]?.contains($0) ?? false }) ?? candidates.first else { continue }
                    let fok = (columns[target.table] ?? []).first { $0.uppercased() == "Z_FOK_" + column.uppercased().dropFirst() }
                    entities[i].toManys.append(ToMany(name: name, destination: destination, storage: .inverse(column: column, order: fok), inferred: false))
                } else if let join = Self.joinTable(joins, relationship: name, inverse: r.inverse, destinationLineage: lineage(of: self.entity(destination)!).map(\.number),
                                                   sourceLineage: lineage(of: entity).map(\.number)) {
                    entities[i].toManys.append(ToMany(name: name, destination: destination, storage: join, inferred: false))
                    if r.inverse == name, case .join(let table, let source, let target, let order) = join {
                        entities[i].toManys.append(ToMany(name: name, destination: destination,
                                                          storage: .join(table: table, source: target, destination: source, order: order), inferred: false))
                    }
                } else {
                    warnings.append("\(entity.name).\(name): no column or join table holds it; left out")
                }
            }
            entities[i].toOnes = toOnes.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    static func declaredType(_ type: CoreDataModel.AttributeType) -> String {
        switch type {
        case .integer: return "Integer"
        case .decimal: return "Decimal"
        case .double: return "Double"
        case .string: return "String"
        case .bool: return "Boolean"
        case .date: return "Date"
        case .binary: return "Binary"
        case .uuid: return "UUID"
        case .uri: return "URI"
        case .transformable: return "Transformable"
        case .objectID: return "ObjectID"
        case .other: return ""
        }
    }

    /// `ZTITLE`, `ZTITLE1`, `ZTITLE2`…: the columns a property `title` may be stored in.
    static func candidates(for property: String, in columns: [String]) -> [String] {
        let base = "Z" + property.uppercased()
        let byUpper = Dictionary(columns.map { ($0.uppercased(), $0) }, uniquingKeysWith: { a, _ in a })
        var out: [String] = []
        if let c = byUpper[base] { out.append(c) }
        var n = 1
        while let c = byUpper[base + String(n)] { out.append(c); n += 1 }
        return out
    }

    private func pickColumn(for property: String, entity: Entity, columns: [String], claimed: inout [String: Set<String>],
                            db: Database, evidence: Bool) throws -> String? {
        let free = Self.candidates(for: property, in: columns).filter { !(claimed[entity.table]?.contains($0) ?? false) }
        guard !free.isEmpty else { return nil }
        var pick = free[0]
        if evidence, free.count > 1 {
            let family = family(of: entity.number).map(String.init).joined(separator: ",")
            for c in free where try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(SQL.identifier(entity.table)) WHERE \(SQL.identifier(c)) IS NOT NULL AND Z_ENT IN (\(family)))") ?? false {
                pick = c
                break
            }
        }
        claimed[entity.table, default: []].insert(pick)
        return pick
    }

    /// The join table of a many-to-many relationship: a key column named after the relationship
    /// holding the destination's keys, the other one the source's.
    static func joinTable(_ joins: [JoinTable], relationship: String, inverse: String?, destinationLineage: [Int64],
                          sourceLineage: [Int64]) -> ToMany.Storage? {
        for join in joins {
            for (d, s) in [(0, 1), (1, 0)] {
                let dest = join.keys[d], source = join.keys[s]
                guard dest.relationship.uppercased() == relationship.uppercased(), destinationLineage.contains(dest.entity),
                      sourceLineage.contains(source.entity) else { continue }
                // The other column is named after the inverse (`Z_7RELATED1` when that name is taken).
                if let inverse {
                    let other = source.relationship.uppercased(), expected = inverse.uppercased()
                    guard other == expected || (other.hasPrefix(expected) && other.dropFirst(expected.count).allSatisfy(\.isNumber)) else { continue }
                }
                return .join(table: join.table, source: source.name, destination: dest.name, order: join.order(for: dest.name))
            }
        }
        return nil
    }

    // MARK: Inferred from the tables

    private mutating func infer(db: Database, joins: [JoinTable]) throws {
        // Primary keys of each entity table, for containment checks.
        var keyCounts: [String: Int] = [:]
        for table in tables { keyCounts[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(SQL.identifier(table))") ?? 0 }
        let entityByUpper = Dictionary(entities.map { ($0.name.uppercased(), $0.number) }, uniquingKeysWith: { a, _ in a })
        for table in tables {
            let members = entities.filter { $0.table == table }
            guard let root = members.first(where: { $0.superNumber == nil || self.entity($0.superNumber!)?.table != table }) ?? members.first else { continue }
            let info = try Row.fetchAll(db, sql: "SELECT name, type FROM pragma_table_info(?)", arguments: [table])
            let indexed = try Self.indexedColumns(db, table: table)
            for row in info {
                guard let column = (row[0] as DatabaseValue).lenientText, !Self.isBookkeepingColumn(column) else { continue }
                let declared = (row[1] as DatabaseValue).lenientText ?? ""
                let property = Self.propertyName(column)
                // Which entity of the table the column belongs to: the lowest one whose rows all
                // values come from (the root when no row has one).
                let owner = try ownerEntity(of: column, table: table, members: members, root: root, db: db)
                guard let i = indexByNumber[owner] else { continue }
                if declared.uppercased() == "INTEGER",
                   let destination = try inferredTarget(of: column, table: table, property: property, indexed: indexed.contains(column),
                                                        entityByUpper: entityByUpper, keyCounts: keyCounts, db: db) {
                    entities[i].toOnes.append(ToOne(name: property, column: column, destination: destination, inferred: true))
                    continue
                }
                let upper = declared.uppercased()
                let kind: ValueKind = upper.contains("TIMESTAMP") || upper.contains("DATE") ? .date
                    : upper == "BLOB" && Self.namesAnIdentifier(property) ? .uuid : .plain
                entities[i].attributes.append(Attribute(name: property, column: column, kind: kind, declaredType: declared))
            }
        }
        for join in joins {
            // Column `Z_<b><Y>` holds b's keys: entity a's relation `y`, and the reverse.
            for (d, s) in [(1, 0), (0, 1)] {
                let dest = join.keys[d], source = join.keys[s]
                guard let i = indexByNumber[source.entity], indexByNumber[dest.entity] != nil else { continue }
                entities[i].toManys.append(ToMany(name: Self.propertyName("Z" + dest.relationship), destination: dest.entity,
                                                  storage: .join(table: join.table, source: source.name, destination: dest.name, order: join.order(for: dest.name)),
                                                  inferred: true))
            }
        }
    }

    /// `ZFIRSTNAME` → `firstname`; `ZTITLE1` → `title` (a numbered column of a shared table).
    static func propertyName(_ column: String) -> String {
        var name = String(column.dropFirst()).lowercased()
        while let last = name.last, last.isASCII, last.isNumber, name.count > 1 { name.removeLast() }
        return name
    }

    static func namesAnIdentifier(_ property: String) -> Bool {
        let p = property.lowercased()
        return p == "id" || p.hasSuffix("uuid") || p.hasSuffix("identifier") || p.hasSuffix("id")
    }

    private static func indexedColumns(_ db: Database, table: String) throws -> Set<String> {
        var out = Set<String>()
        for index in try Row.fetchAll(db, sql: "SELECT name FROM pragma_index_list(?)", arguments: [table]) {
            guard let name = (index[0] as DatabaseValue).lenientText else { continue }
            if let first = try Row.fetchOne(db, sql: "SELECT name FROM pragma_index_info(?) ORDER BY seqno LIMIT 1", arguments: [name]),
               let column = (first[0] as DatabaseValue).lenientText { out.insert(column) }
        }
        return out
    }

    /// The entity a column belongs to when a table holds several: the lowest common ancestor of
    /// the entities of the rows that have a value in it.
    private func ownerEntity(of column: String, table: String, members: [Entity], root: Entity, db: Database) throws -> Int64 {
        guard members.count > 1 else { return root.number }
        let used = try Int64.fetchAll(db, sql: "SELECT DISTINCT Z_ENT FROM \(SQL.identifier(table)) WHERE \(SQL.identifier(column)) IS NOT NULL")
            .filter { indexByNumber[$0] != nil }
        guard var common = used.first.map({ lineage(of: entity($0)!).map(\.number) }) else { return root.number }
        for e in used.dropFirst() {
            let chain = Set(lineage(of: entity(e)!).map(\.number))
            common = common.filter { chain.contains($0) }
        }
        return common.last ?? root.number
    }

    /// The entity an integer column points into: every value is a primary key of its table. An
    /// entity named like the column wins; else, for an indexed column (Core Data indexes its
    /// to-one columns), the smallest table that holds every value.
    private func inferredTarget(of column: String, table: String, property: String, indexed: Bool,
                                entityByUpper: [String: Int64], keyCounts: [String: Int], db: Database) throws -> Int64? {
        func contained(in target: String) throws -> Bool {
            try Bool.fetchOne(db, sql: """
                SELECT EXISTS (SELECT 1 FROM \(SQL.identifier(table)) WHERE \(SQL.identifier(column)) IS NOT NULL)
                   AND NOT EXISTS (SELECT 1 FROM \(SQL.identifier(table)) WHERE \(SQL.identifier(column)) IS NOT NULL
                                   AND \(SQL.identifier(column)) NOT IN (SELECT Z_PK FROM \(SQL.identifier(target))))
                """) ?? false
        }
        if let named = entityByUpper[property.uppercased()], let target = entity(named), try contained(in: target.table) { return named }
        guard indexed else { return nil }
        var best: (Int64, Int)?
        for target in tables where try contained(in: target) {
            let count = keyCounts[target] ?? 0
            guard let root = entities.first(where: { $0.table == target && ($0.superNumber == nil || entity($0.superNumber!)?.table != target) }) else { continue }
            if best == nil || count < best!.1 { best = (root.number, count) }
        }
        return best?.0
    }

    // MARK: Values

    /// A stored value as the model reads it.
    static func value(_ raw: DatabaseValue, kind: ValueKind) -> Value {
        switch (kind, raw.storage) {
        case (.bool, .int64(let i)): return .bool(i != 0)
        case (.uuid, .blob(let b)) where b.count == 16:
            let p = [UInt8](b)
            let u = UUID(uuid: (p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], p[13], p[14], p[15]))
            return .string(u.uuidString)
        default:
            return RelationalFormat.value(raw, isDate: kind == .date, epoch: DateText.referenceDateOffset)
        }
    }
}
