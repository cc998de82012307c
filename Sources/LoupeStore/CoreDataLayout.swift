import Foundation
import GRDB
import LoupeModel

/// What answering statements in SQL over a Core Data store needs to know of it, read without
/// loading a row: its types exactly as a load declares them, and where each type's attributes
/// and relationships are stored, as a load reads them (``CoreDataSchema/readRows(_:table:typeOf:builder:condition:)``
/// and ``CoreDataSchema/link(_:typeOf:rows:builder:within:warnings:)``).
///
/// A hierarchy of entities shares its root's table, told apart by `Z_ENT`; an object is a row
/// whose `Z_PK` and `Z_ENT` are integers (``objectCondition(_:)``), and a relationship's edge
/// reaches any object of its destination's table. What a load reads in a way one SQL column
/// cannot say — two entities of one name, an attribute or relationship a type reads from two
/// places, a table whose `Z_PK` is not its rowid — is nil here, and a translation leaves it to
/// the engine.
public struct CoreDataLayout: Sendable {
    /// The store's types, attributes and relations, with no objects.
    public let graph: ObjectGraph

    /// How a column's values read: as stored, as Core Data dates (seconds since 2001), as
    /// booleans (integers), as UUIDs (16-byte blobs).
    public enum Kind: Sendable, Equatable { case plain, date, bool, uuid }

    /// Where a relationship's edges are stored.
    public enum Link: Sendable, Equatable {
        /// A column of the source's row holds the target's `Z_PK` (a to-one relationship).
        case toOne(column: String, targetTable: String)
        /// A column of the target's row holds the source's `Z_PK` (a to-many inverse).
        case inverse(column: String, targetTable: String)
        /// Rows of a join table: `source` holds the source's `Z_PK`, `destination` the target's.
        case join(table: String, source: String, destination: String, targetTable: String)

        /// The table whose objects the relationship reaches.
        public var targetTable: String {
            switch self {
            case .toOne(_, let t), .inverse(_, let t), .join(_, _, _, let t): return t
            }
        }
    }

    /// One type's rows and what they hold.
    public struct TypeRows: Sendable {
        /// Its entity's `Z_ENT` number.
        public let entity: Int64
        /// The table its rows live in (its root entity's), whose `Z_PK` is its rowid.
        public let table: String
        /// Per attribute (by index): the column a load reads it from and how; nil when it reads
        /// none (the value is always null).
        public let columns: [(name: String, kind: Kind)?]
        /// Per relation (by index): where its edges are stored; nil when a load reads them from
        /// more than one place, or from none.
        public let links: [Link?]
    }

    /// Per type (by index): its rows, or nil when SQL cannot tell them as a load does.
    public let types: [TypeRows?]

    /// Each entity table's `Z_ENT` numbers, as the schema names them.
    let entitiesByTable: [String: Set<Int64>]

    /// The types whose objects a table holds (its entities'), in type order; nil when one of its
    /// entities has no rows here (see above), or the table holds none.
    public func types(inTable table: String) -> [Int]? {
        let found = types.indices.filter { types[$0]?.table == table }
        guard !found.isEmpty, Set(found.compactMap { types[$0]?.entity }) == entitiesByTable[table] else { return nil }
        return found
    }

    /// A cell of a column of kind `kind` as the loaded graph holds it.
    public func value(_ cell: DatabaseValue, kind: Kind) -> Value {
        CoreDataSchema.value(cell, kind: kind)
    }

    /// The condition under which a row of an entity table (`alias`: `x1.`, or empty) is an
    /// object of one of `types`, as a load reads it.
    public func objectCondition(_ alias: String, types: [Int]) -> String {
        let numbers = types.compactMap { self.types[$0]?.entity }
        return "\(CoreDataPages.isObject(alias)) AND \(alias)Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))"
    }

    init(schema: CoreDataSchema, graph: ObjectGraph, typeOf: [Int64: Int], rowidTables: Set<String>) {
        self.graph = graph
        entitiesByTable = Dictionary(grouping: schema.entities, by: \.table).mapValues { Set($0.map(\.number)) }
        // Two entities of one name are one type, read with two entities' plans: left out.
        var entitiesOfType: [Int: [CoreDataSchema.Entity]] = [:]
        for entity in schema.entities { if let t = typeOf[entity.number] { entitiesOfType[t, default: []].append(entity) } }
        types = graph.types.indices.map { t -> TypeRows? in
            guard let entities = entitiesOfType[t], entities.count == 1, rowidTables.contains(entities[0].table) else { return nil }
            let entity = entities[0]
            let type = graph.types[t]
            let present = Set(schema.columns[entity.table] ?? [])
            // A load sets each attribute from every property of that name in turn: the last one
            // whose column the table has is the value.
            var columns: [(name: String, kind: Kind)?] = Array(repeating: nil, count: type.attributes.count)
            for a in schema.allAttributes(of: entity) where present.contains(a.column) {
                if let slot = type.attributeIndex[a.name] { columns[slot] = (a.column, a.kind) }
            }
            var links: [Link?] = Array(repeating: nil, count: type.relations.count)
            var stores: [String: [Link?]] = [:]
            for r in schema.allToOnes(of: entity) {
                stores[r.name, default: []].append(schema.entity(r.destination).map { .toOne(column: r.column, targetTable: $0.table) })
            }
            for r in schema.allToManys(of: entity) {
                let target = schema.entity(r.destination)
                switch r.storage {
                case .inverse(let column, _):
                    stores[r.name, default: []].append(target.map { .inverse(column: column, targetTable: $0.table) })
                case .join(let table, let source, let destination, _):
                    stores[r.name, default: []].append(target.map { .join(table: table, source: source, destination: destination, targetTable: $0.table) })
                }
            }
            for (name, found) in stores where found.count == 1 {
                if let r = type.relations.firstIndex(where: { $0.name == name }) { links[r] = found[0] }
            }
            return TypeRows(entity: entity.number, table: entity.table, columns: columns, links: links)
        }
    }
}

extension CoreDataPages {
    /// The store's layout for SQL (``CoreDataLayout``), from the schema read at open.
    public func layout() throws -> CoreDataLayout {
        let tables = schema.tables
        let rowidTables = try file.read { db in
            try Set(tables.filter { try db.primaryKey($0).rowIDColumn?.uppercased() == "Z_PK" })
        }
        return CoreDataLayout(schema: schema, graph: graph, typeOf: typeOf, rowidTables: rowidTables)
    }
}
