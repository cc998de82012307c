import Foundation
import Synchronization
import GRDB
import LoupeModel
import LoupeQuery
import LoupeStore

/// One statement's predicates and paths as SQL over a Core Data store's tables
/// (``CoreDataLayout``): an entity's objects are its rows of its table (a hierarchy shares its
/// root's) whose `Z_ENT` is the entity's, to-one relationships join on the column holding the
/// target's `Z_PK`, to-many ones on the inverse column or through the join table, and backlinks
/// the other way. SQL does the structure; what values mean stays the engine's
/// (``PredicateTranslation``).
///
/// The engine resolves a name on each object by the object's own type, and a relationship
/// reaches any object of its destination's table; so a step from a row that may be one of
/// several entities resolves the name on each, and translates only when they agree on where it
/// is stored (the entities lacking it read null, as in the engine). Whatever could differ makes
/// the translation return nil, and the caller answers in memory.
final class CoreDataTranslation: PredicateTranslation, RowTranslation {
    let layout: CoreDataLayout
    /// The types a row under an alias may be an object of (the root's: its type alone).
    private var aliasTypes: [String: [Int]] = [:]
    /// The table under an alias.
    private var aliasTables: [String: String] = [:]

    /// `facts`: what the checks of the store's values found (``FileFacts``), kept by the caller
    /// across statements over one state of the store.
    init(layout: CoreDataLayout, db: Database, facts: FileFacts) {
        self.layout = layout
        super.init(graph: layout.graph, db: db, facts: facts)
    }

    /// The condition under which a row of an entity table (`alias`: `x1.`) is an object of one of
    /// `types`, as a load reads it; `1` when `types` are all the table's entities and every row
    /// of it is an object of one (its `Z_ENT` an integer naming one: checked once per table), so
    /// that SQLite reads an index alone where one serves rather than every row it names.
    func objects(_ alias: String, _ types: [Int]) -> String {
        let condition = layout.objectCondition(alias, types: types)
        guard let table = types.first.flatMap({ layout.types[$0]?.table }), let all = layout.types(inTable: table), Set(all) == Set(types) else { return condition }
        let entities = all.compactMap { layout.types[$0]?.entity }.map(String.init).joined(separator: ", ")
        let stray = (try? facts.exists(db, table: table, where: "NOT (typeof(Z_ENT) = 'integer' AND Z_ENT IN (\(entities)))")) ?? true
        return stray ? condition : "1"
    }

    override func convert(_ cell: DatabaseValue, _ conversion: Conversion) -> Value {
        if case .cell(let t, let a) = conversion, let column = layout.types[t]?.columns[a] { return layout.value(cell, kind: column.kind) }
        return super.convert(cell, conversion)
    }

    // MARK: RowTranslation

    /// A type's objects as a fetch request reads them: an entity's rows of its table, and its
    /// subentities' (which share it), listed as the engine lists a family, each entity's in
    /// `Z_PK` order. An answer names the entity asked; its keys may be its subentities' objects
    /// (`Z_PK` is the table's key: one row each).
    func rows(of t: Int) -> (name: String, rowid: String, condition: String?, order: String)? {
        let family = graph.family(of: graph.types[t])
        guard let rows = layout.types[t], family.allSatisfy({ layout.types[$0]?.table == rows.table }) else { return nil }
        aliasTypes["a0"] = family
        aliasTables["a0"] = rows.table
        let entities = family.compactMap { layout.types[$0]?.entity }
        let order = entities.count == 1 ? "a0.Z_PK"
            : "CASE a0.Z_ENT " + entities.enumerated().map { "WHEN \($1) THEN \($0) " }.joined() + "END, a0.Z_PK"
        return (rows.table, "Z_PK", objects("a0.", family), order)
    }

    func plainColumn(_ conversion: Conversion) -> (table: String, column: String)? {
        guard case .cell(let t, let a) = conversion, let rows = layout.types[t], let column = rows.columns[a], column.kind == .plain else { return nil }
        return (rows.table, column.name)
    }

    func keyLookup(_ predicate: LoupeQuery.Predicate?, _ type: Int, alias: String) -> String {
        layout.types[type] == nil ? "" : keyLookup(predicate, key: "\(alias).Z_PK")
    }

    func integerKeyed(_ type: Int) -> Bool { layout.types[type] != nil }

    func keys(ofRowids rowids: [Int64], type t: Int, _ db: Database) throws -> [ObjectID] { rowids.map(ObjectID.int) }

    // MARK: Values

    override func plainNumber(_ value: Operand) -> (sql: String, onlyNumbers: Bool)? {
        guard plainColumn(value.conversion) != nil else { return nil }
        return (value.sql, false)
    }

    /// As over a relational file: a one-step comparison of a column holding only numbers (or
    /// dates, or booleans) with text, which the engine refuses for the values' kinds.
    override func numberAgainstText(_ c: Comparison, _ scope: Scope) throws -> Bool {
        guard [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual].contains(c.op),
              case .path(let path) = c.lhs, path.aggregate == nil, path.steps.count == 1, case .name(let name) = path.steps[0],
              case .literal(.string, _) = c.rhs else { return false }
        let types = aliasTypes[scope.alias] ?? [scope.type]
        for t in types {
            guard let a = graph.types[t].attribute(named: name.text), let rows = layout.types[t], let column = rows.columns[a] else { continue }
            if column.kind != .plain && column.kind != .uuid { return true }
            let list = try facts.scalar(db, sql: "SELECT group_concat(DISTINCT typeof(\(SQL.identifier(column.name)))) FROM \(SQL.identifier(rows.table)) WHERE \(layout.objectCondition("", types: [t]))")
            let kinds = Set((String.fromDatabaseValue(list) ?? "").split(separator: ",").map(String.init))
            if kinds.isSubset(of: ["integer", "real", "null"]) && kinds.contains(where: { $0 != "null" }) { return true }
        }
        return false
    }

    // MARK: Paths

    /// What a name is on a row that may be any of `types`: a column, a relationship's storage,
    /// and the condition on the row's `Z_ENT` that it is one of the types that have it (nil:
    /// all have it). Nil when the types disagree, or the name is nothing on any of them.
    private enum Resolved {
        case column(name: String, conversion: Conversion, only: String?)
        case link(CoreDataLayout.Link, toMany: Bool, only: String?)
    }

    private func resolve(_ name: String, isLast: Bool, on types: [Int], alias: String) -> Resolved? {
        var columns: [(t: Int, a: Int, column: String, kind: CoreDataLayout.Kind)] = []
        var links: [(t: Int, link: CoreDataLayout.Link, toMany: Bool)] = []
        for t in types {
            let type = graph.types[t]
            guard let rows = layout.types[t] else { return nil }
            let attribute = type.attribute(named: name), relation = type.relation(named: name)
            if let a = attribute, isLast || relation == nil {
                // An attribute no column holds reads null, as a type without it does.
                if let column = rows.columns[a] { columns.append((t, a, column.name, column.kind)) }
            } else if let r = relation {
                guard let link = rows.links[r] else { return nil }
                links.append((t, link, type.relations[r].isToMany))
            }
        }
        func only(_ having: [Int]) -> String? {
            having.count == types.count ? nil : "\(alias).Z_ENT IN (\(having.compactMap { layout.types[$0]?.entity }.map(String.init).joined(separator: ", ")))"
        }
        if let first = columns.first, links.isEmpty {
            guard columns.allSatisfy({ $0.column == first.column && $0.kind == first.kind }) else { return nil }
            return .column(name: first.column, conversion: .cell(type: first.t, attribute: first.a), only: only(columns.map(\.t)))
        }
        if let first = links.first, columns.isEmpty {
            guard links.allSatisfy({ $0.link == first.link && $0.toMany == first.toMany }) else { return nil }
            return .link(first.link, toMany: first.toMany, only: only(links.map(\.t)))
        }
        return nil
    }

    /// How the rows at the far end of a step are found from the row at hand.
    fileprivate enum Edge {
        /// A column of the row at hand holds the far row's `Z_PK`.
        case nearColumn(String)
        /// A column of the far row holds the `Z_PK` of the row at hand.
        case farColumn(String)
        /// Rows of a join table: `near` holds the `Z_PK` of the row at hand, `far` the far row's.
        case join(table: String, near: String, far: String)
    }

    /// `typeof(x) IN ('integer', 'real') AND`: a value a load reads as a key (a whole real too).
    private func numeric(_ x: String) -> String { "typeof(\(x)) IN ('integer', 'real')" }

    override func path(_ p: Path, _ start: Scope) throws -> Translated? {
        guard let (origin, steps) = self.start(of: p, at: start) else { return nil }
        var current = origin
        var chain = Hops()
        var value: Operand?
        // The to-one hops so far, for a condition on the last row as nested `IN` subqueries.
        var hops: [(from: String, column: String, only: String?, table: String, alias: String, objects: String)]? = []
        // A path that is one to-many step from the row at hand (every type of which has it): its
        // count as the keys of a `GROUP BY` of the elements by the column naming that row.
        var countGroups: ((String) -> String)?
        /// `here.Z_PK IN (SELECT <key> FROM <rows> GROUP BY <key> HAVING …)`, for `countGroups`.
        func groups(_ here: String, key: String, rows: String) -> (String) -> String {
            { having in "\(here).Z_PK IN (SELECT \(key) FROM \(rows) GROUP BY \(key) HAVING \(having))" }
        }

        func enter(_ table: String, types: [Int], on condition: (String) -> String, toManyStep: Bool) -> String {
            let alias = newAlias()
            let on = condition(alias) + " AND " + objects("\(alias).", types)
            chain.enter("\(SQL.identifier(table)) \(alias)", on: on, toManyStep: toManyStep)
            aliasTypes[alias] = types
            aliasTables[alias] = table
            current = Scope(alias: alias, type: types[0])
            return alias
        }
        func and(_ condition: String?) -> String { condition.map { "\($0) AND " } ?? "" }
        /// Enters the objects of `types` in `table` that `edge` reaches from `here` (`only`: the
        /// condition on `here`'s entity); with `countable`, their count is also a `GROUP BY`.
        func follow(_ edge: Edge, from here: String, only: String?, to table: String, types: [Int], toManyStep: Bool, countable: Bool) -> String {
            switch edge {
            case .nearColumn(let column):
                let fk = "\(here).\(SQL.identifier(column))"
                return enter(table, types: types, on: { "\(and(only))\(self.numeric(fk)) AND \($0).Z_PK = \(fk)" }, toManyStep: toManyStep)
            case .farColumn(let column):
                let alias = enter(table, types: types, on: {
                    let fk = "\($0).\(SQL.identifier(column))"
                    return "\(and(only))\(self.numeric(fk)) AND \(fk) = \(here).Z_PK"
                }, toManyStep: toManyStep)
                if countable {
                    let fk = "\(alias).\(SQL.identifier(column))"
                    countGroups = groups(here, key: fk, rows: "\(SQL.identifier(table)) \(alias) WHERE \(numeric(fk)) AND \(objects("\(alias).", types))")
                }
                return alias
            case .join(let joinTable, let nearColumn, let farColumn):
                let j = newAlias()
                let (near, far) = ("\(j).\(SQL.identifier(nearColumn))", "\(j).\(SQL.identifier(farColumn))")
                let alias = enter(table, types: types, on: {
                    "\(and(only))\($0).Z_PK IN (SELECT \(far) FROM \(SQL.identifier(joinTable)) \(j) WHERE \(self.numeric(near)) AND \(near) = \(here).Z_PK AND \(self.numeric(far)))"
                }, toManyStep: toManyStep)
                if countable {
                    countGroups = groups(here, key: "near", rows: joinGroups(joinTable, j, near: near, far: far, farTable: table, alias: alias, types: types))
                }
                return alias
            }
        }

        for (i, step) in steps.enumerated() {
            let isLast = i == steps.count - 1
            let here = current.alias
            let types = aliasTypes[here] ?? [current.type]
            switch step {
            case .name(let name):
                guard let resolved = resolve(name.text, isLast: isLast, on: types, alias: here) else { return nil }
                switch resolved {
                case .column(let column, let conversion, let only):
                    guard isLast else { return nil }
                    let cell = "\(here).\(SQL.identifier(column))"
                    value = Operand(sql: only.map { "CASE WHEN \($0) THEN \(cell) END" } ?? cell, conversion: conversion)
                case .link(let link, let isToMany, let only):
                    guard let targets = layout.types(inTable: link.targetTable) else { return nil }
                    if case .toOne = link { guard !isToMany else { return nil } } else { guard isToMany else { return nil } }
                    let alias = follow(link.forward, from: here, only: only, to: link.targetTable, types: targets, toManyStep: isToMany,
                                     countable: steps.count == 1 && only == nil)
                    if case .toOne(let column, let table) = link, chain.toMany == 0 {
                        hops?.append((here, SQL.identifier(column), only, SQL.identifier(table), alias, objects("\(alias).", targets)))
                    } else {
                        hops = nil
                    }
                }
            case .links(let typeName, let relationName):
                // The relation of the type and of every type that inherits it, as the engine reads them.
                guard let source = graph.type(named: typeName.text), let r = source.relation(named: relationName.text) else { return nil }
                let relation = source.relations[r].name
                let members = graph.family(of: source).compactMap { m in graph.types[m].relation(named: relation).map { (m, $0) } }
                guard let (m0, r0) = members.first, let rows = layout.types[m0], let link = rows.links[r0],
                      members.allSatisfy({ layout.types[$0.0]?.links[$0.1] == link && layout.types[$0.0]?.table == rows.table }),
                      aliasTables[here] == link.targetTable else { return nil }
                _ = follow(link.backward, from: here, only: nil, to: rows.table, types: members.map(\.0), toManyStep: true, countable: steps.count == 1)
                hops = nil
            case .id:
                guard isLast else { return nil }
                value = Operand(sql: "\(here).Z_PK", conversion: .key)
            case .variable, .type:
                return nil
            }
        }
        var reaches: ((String) -> String)?
        if chain.toMany == 0, let hops, !hops.isEmpty {
            reaches = { condition in
                var inner = condition
                for hop in hops.reversed() {
                    let fk = "\(hop.from).\(hop.column)"
                    inner = "\(and(hop.only))\(self.numeric(fk)) AND \(fk) IN (SELECT \(hop.alias).Z_PK FROM \(hop.table) \(hop.alias) WHERE \(hop.objects) AND \(inner))"
                }
                return inner
            }
        }
        return walked(p, from: chain.from, toMany: chain.toMany, toOneAfterMany: chain.toOneAfterMany, value: value, element: current,
                      countGroups: countGroups, reaches: reaches)
    }

    /// The edges of join table `joinTable` (under alias `j`) as rows `near` (the column naming
    /// the row at hand) once per object at the `far` end that is an object of `types` in
    /// `farTable` (a row repeated, or a key written as a whole real beside its integer, counts
    /// once, as a load links it once).
    private func joinGroups(_ joinTable: String, _ j: String, near: String, far: String, farTable: String, alias: String, types: [Int]) -> String {
        return "(SELECT DISTINCT CAST(\(near) AS INTEGER) AS near, \(alias).Z_PK FROM \(SQL.identifier(joinTable)) \(j) JOIN \(SQL.identifier(farTable)) \(alias)"
            + " ON \(alias).Z_PK = \(far) WHERE \(numeric(near)) AND \(near) = CAST(\(near) AS INTEGER) AND \(numeric(far)) AND \(objects("\(alias).", types)))"
    }
}

/// Answers a statement with SQLite over a Core Data store, without loading it: paged mode's
/// ``QuerySource`` for Core Data stores, and `loupe query`'s over one too large to load. The
/// filter runs in SQL (``CoreDataTranslation``); `sort`, `distinct`, `limit`, `select` and
/// `group by` as over a relational file (``Plan``); objects are answered by key (`Z_PK`), those
/// of a statement on an entity with subentities under its name (see ``CoreDataTranslation/rows(of:)``).
/// What the translation leaves out answers nil.
public final class CoreDataQuerySource: QuerySource, Sendable {
    public let file: StoreFile
    public let layout: CoreDataLayout
    /// What the checks of the store's values found (which tables hold objects only, the kinds
    /// a column holds), once per state of the file (``FileFacts``).
    private let facts: FileFacts

    public init(file: StoreFile, layout: CoreDataLayout) {
        self.file = file
        self.layout = layout
        facts = FileFacts(file: file)
    }

    /// SQL over the store `pages` reads, with the layout of the schema it read at open.
    public convenience init(pages: CoreDataPages) throws { self.init(file: pages.file, layout: try pages.layout()) }

    /// What a ``PagedStoreHost``-style host answers statements with over a state of the store.
    @Sendable public static func following(_ pages: CoreDataPages, previous: (any QuerySource)?, after reach: ChangeReach?) -> (any QuerySource)? {
        try? CoreDataQuerySource(pages: pages)
    }

    public func answer(_ statement: LoupeQuery.Statement, isCancelled: @escaping @Sendable () -> Bool) throws -> SourceAnswer? {
        guard statement.pushdownRoot != nil else { return nil }
        // Every name, kind and quantifier error, exactly as the engine reports them.
        _ = try QueryEngine(graph: layout.graph).run(statement)
        let layout = self.layout
        do {
            return try file.readInterruptibly(isCancelled: isCancelled) { db -> SourceAnswer? in
                defer { facts.save() }
                return try Plan.run(statement, CoreDataTranslation(layout: layout, db: db, facts: facts)) { try $0.answer(db) }
            }
        } catch let error as StoreError where error.path == nil {
            throw error.located(at: file.path)
        }
    }
}

private extension CoreDataLayout.Link {
    /// From a source row to its targets.
    var forward: CoreDataTranslation.Edge {
        switch self {
        case .toOne(let column, _): return .nearColumn(column)
        case .inverse(let column, _): return .farColumn(column)
        case .join(let table, let source, let destination, _): return .join(table: table, near: source, far: destination)
        }
    }

    /// From a target row to its sources (a backlink).
    var backward: CoreDataTranslation.Edge {
        switch self {
        case .toOne(let column, _): return .farColumn(column)
        case .inverse(let column, _): return .nearColumn(column)
        case .join(let table, let source, let destination, _): return .join(table: table, near: destination, far: source)
        }
    }
}
