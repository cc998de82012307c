import Foundation
import GRDB
import LoupeModel
import LoupeQuery
import LoupeStore

/// One statement's paths as SQL over a Persist file's two tables: an object is a `by_type` row
/// (its attributes the members of its JSON document, read by Loupe's own reader, as a load
/// reads them), an edge a row of the relation table (the file's, or the side index's copy).
///
/// A relation step joins the relation rows from the object and the objects they point at (rows
/// that point at nothing drop out, as a load drops them); a backlink joins the rows to it and
/// the objects they come from. To-one steps from the row at hand become semi-joins (the objects
/// at the far end that pass the test, then the rows that reach them), and the count of one
/// backlink or to-many relation a `GROUP BY` over the relation rows. The graph the translation
/// reads (``PersistPages/schemaGraph(relations:kinds:)``) must be exact for what the statement
/// reads: its relations a whole load's, the kinds of the attributes read over the whole type.
/// Nil for what does not translate exactly: paths into nested values or arrays, relations with
/// several target types, names that are both an attribute and a relation.
final class PersistTranslation: PredicateTranslation {
    let pages: PersistPages
    /// The relation rows' table: `relations` or `loupe_side.relations`.
    let relationTable: String
    /// The reader of each member a path reads, by name.
    private var members: [String: DocumentMember] = [:]
    /// Per type, the members SQLite's `json_extract` reads as the load does
    /// (``PersistPages/attributeFacts(type:names:)``).
    let plain: [Int: Set<String>]
    /// Members read with SQLite's `json_extract`, by the operand's SQL (and for a document, the
    /// member's name): the expression, and whether the member holds only numbers (or nothing).
    private var extracted: [String: (sql: String, onlyNumbers: Bool)] = [:]

    /// The relations (`source type NUL name`) whose rows all come from that type's objects and
    /// point at objects of its one target type (``RelationShape/exclusive``): hops over them
    /// need no join to tell.
    let exclusive: Set<String>
    /// True when the relation rows carry their ends' types (Loupe's relation index): a hop's
    /// rows are then those of its two types, with no object read to tell.
    let typedRows: Bool
    /// The part of the root type's keys (alias `a0`) a plan reads: a half, on one of two
    /// connections, also bounds the first hop of a path's relation rows (the largest set a path
    /// makes), so that each half makes only its own part of it.
    var rootKeys: PersistPlan.Keys = .all
    private var rootBound: String?

    init(graph: ObjectGraph, db: Database, pages: PersistPages, relationTable: String, plain: [Int: Set<String>], exclusive: Set<String>, typedRows: Bool) {
        self.typedRows = typedRows
        self.pages = pages
        self.relationTable = relationTable
        self.plain = plain
        self.exclusive = exclusive
        super.init(graph: graph, db: db)
    }

    /// Arithmetic over documents is left to the chunks: each operand is a `json_extract` per
    /// row, and a statement that sorts its candidates through a relation took 15.3 s in SQL at
    /// 10M objects against 3.1 s in chunks (a count was faster in SQL: 0.65 s against 2.06 s).
    override func arithmetic(_ e: LoupeQuery.Expression, _ scope: Scope) throws -> String? { nil }

    /// A member that holds no booleans (which `json_extract` reads as 0 and 1) and that SQLite
    /// reads as the load does: its numbers are the engine's, anything else is no number to either.
    override func plainNumber(_ value: Operand) -> (sql: String, onlyNumbers: Bool)? {
        if case .member(let name) = value.conversion { return extracted[value.sql + "\u{0}" + name] }
        return extracted[value.sql]
    }

    /// True when SQLite orders the operand's values as `sort by` does: keys and counts (integers
    /// or NULL), members `json_extract` reads that hold only numbers (by value, NULL first).
    func ordersInSQL(_ operand: Operand) -> Bool {
        switch operand.conversion {
        case .key, .integer: return true
        case .json: return extracted[operand.sql]?.onlyNumbers == true
        case .cell, .member, .aggregated: return false
        }
    }

    override func convert(_ cell: DatabaseValue, _ conversion: Conversion) -> Value {
        if case .member(let name) = conversion { return members[name]?.value(in: cell) ?? .null }
        return super.convert(cell, conversion)
    }

    /// ` AND <column> < bound` (or `>=`) for a half of the root type's keys (``rootKeys``), its
    /// bound bound once however often it is used; empty for the whole type.
    func rootKeyCondition(_ column: String) -> String {
        let (op, key): (String, Int64)
        switch rootKeys {
        case .all: return ""
        case .below(let k): (op, key) = ("<", k)
        case .from(let k): (op, key) = (">=", k)
        }
        if rootBound == nil { rootBound = bind(key.databaseValue) }
        return " AND \(column) \(op) \(rootBound!)"
    }

    /// The condition that the `by_type` row under `alias` is of type `type`, its name bound.
    func isType(_ type: Int, _ alias: String) -> String {
        let (sql, argument) = pages.typeCondition(type, alias: alias)
        return sql.replacingOccurrences(of: "?", with: bind(argument))
    }

    /// The count of one to-many step from the object at hand (`outer`) as a `GROUP BY` over the
    /// relation rows (`by`: the column at the object's end): the condition that its key is among
    /// those whose count meets `having`. A name only this step's objects use, with no row to
    /// nothing, is counted from the rows alone; otherwise only rows whose other end is one of the
    /// step's objects count.
    private func groups(of hop: (edge: String, target: String, relation: String, isTarget: String), by: String, other: String,
                        types: (from: Int, to: Int), exclusive: Bool, outer: String) -> (String) -> String {
        let relations = relationTable
        return { [unowned self] having in
            // Rows typed at both ends, or the other end's keys as one set SQLite makes once (from
            // the type's index), not a lookup per row.
            let others = self.typedRows ? self.typed(hop.edge, types)
                : exclusive ? "" : " AND \(hop.edge).\(other) IN (SELECT \(hop.target).id FROM by_type \(hop.target) WHERE \(hop.isTarget))"
            return "\(outer).id IN (SELECT \(hop.edge).\(by) FROM \(relations) \(hop.edge) WHERE \(hop.edge).relation = \(hop.relation)\(others) GROUP BY \(hop.edge).\(by) HAVING \(having))"
        }
    }

    /// ` AND e.from_type = ? AND e.to_type = ?`: the rows of relation rows `edge` between objects of
    /// those two types (Loupe's relation index numbers them; NULL for an object not there).
    private func typed(_ edge: String, _ types: (from: Int, to: Int)) -> String {
        " AND \(edge).from_type = \(bind(Int64(types.from).databaseValue)) AND \(edge).to_type = \(bind(Int64(types.to).databaseValue))"
    }

    override func path(_ p: Path, _ start: Scope) throws -> Translated? {
        guard let (origin, steps) = self.start(of: p, at: start) else { return nil }
        var current = origin
        let relations = relationTable
        var chain = Hops()
        var value: Operand?
        // A path that is one to-many step: its count as a GROUP BY over the relation rows.
        var countGroups: ((String) -> String)?
        // The to-one hops from the outer row while every step so far is one (nil once one is not).
        var hops: [(from: String, edge: String, target: String, relation: String, isTarget: String, types: (from: Int, to: Int), exclusive: Bool)]? = []

        /// Enters one hop: relation rows `edge` (their `near` end at the object at hand) and the
        /// objects `target` at their `far` end.
        func enter(_ type: Int, relation name: String, near: String, far: String, many: Bool) -> (edge: String, target: String, relation: String, isTarget: String) {
            let edge = newAlias(), target = newAlias()
            let relation = bind(name.databaseValue)
            let isTarget = isType(type, target)
            let on = "\(edge).\(near) = \(current.alias).id AND \(edge).relation = \(relation)"
            let pair = "\(relations) \(edge) JOIN by_type \(target) ON \(target).id = \(edge).\(far) AND \(isTarget)"
            chain.enter(pair, on: on, toManyStep: many, grouped: true)
            current = Scope(alias: target, type: type)
            return (edge, target, relation, isTarget)
        }

        for (i, step) in steps.enumerated() {
            let isLast = i == steps.count - 1
            let type = graph.types[current.type]
            switch step {
            case .name(let name):
                let attribute = type.attribute(named: name.text), relation = type.relation(named: name.text)
                guard attribute == nil || relation == nil else { return nil }
                if let a = attribute {
                    // Into a nested value, or a value that is a collection itself: the engine's.
                    let column = type.attributes[a]
                    guard isLast, column.kinds.isDisjoint(with: [.array, .object]) else { return nil }
                    let json = "\(current.alias).json"
                    if plain[current.type]?.contains(column.name) == true, !column.kinds.contains(.bool) {
                        // SQLite reads the member as the load does: its numbers compare in SQL, and
                        // numbers and text (no dates) are read as they are, without Loupe's reader.
                        let sql = "json_extract(\(json), \(SQL.literal(SQL.jsonPath(column.name))))"
                        let onlyNumbers = column.kinds.isSubset(of: [.integer, .double, .null])
                        if column.kinds.isSubset(of: [.integer, .double, .string, .null]) {
                            value = Operand(sql: sql, conversion: .json)
                            extracted[sql] = (sql, onlyNumbers)
                            continue
                        }
                        extracted[json + "\u{0}" + column.name] = (sql, onlyNumbers)
                    }
                    if members[column.name] == nil { members[column.name] = DocumentMember(column.name) }
                    value = Operand(sql: json, conversion: .member(name: column.name))
                } else if let r = relation {
                    let column = type.relations[r]
                    guard column.targetTypes.count == 1 else { return nil }
                    let from = current.alias
                    let hop = enter(column.targetTypes[0], relation: column.name, near: "from_id", far: "to_id", many: column.isToMany)
                    let exclusive = self.exclusive.contains("\(type.index)\u{0}\(column.name)")
                    if column.isToMany {
                        if steps.count == 1 {
                            countGroups = groups(of: hop, by: "from_id", other: "to_id", types: (type.index, column.targetTypes[0]), exclusive: exclusive, outer: from)
                        }
                        hops = nil
                    } else if chain.toMany == 0 {
                        hops?.append((from, hop.edge, hop.target, hop.relation, hop.isTarget, (type.index, column.targetTypes[0]), exclusive))
                    }
                } else {
                    return nil
                }
            case .links(let typeName, let relationName):
                guard let source = graph.type(named: typeName.text), let r = source.relation(named: relationName.text),
                      source.relations[r].targetTypes.contains(current.type) else { return nil }
                let to = current.alias
                let hop = enter(source.index, relation: source.relations[r].name, near: "to_id", far: "from_id", many: true)
                if steps.count == 1 {
                    let exclusive = self.exclusive.contains("\(source.index)\u{0}\(source.relations[r].name)")
                    countGroups = groups(of: hop, by: "to_id", other: "from_id", types: (source.index, type.index), exclusive: exclusive, outer: to)
                }
                hops = nil
            case .id:
                guard isLast else { return nil }
                value = Operand(sql: "\(current.alias).id", conversion: .key)
            case .variable, .type:
                return nil
            }
        }
        var reaches: ((String) -> String)?
        if chain.toMany == 0, let hops, !hops.isEmpty {
            reaches = { [unowned self] condition in
                // The objects at the far end that pass, then hop by hop back, the keys of the
                // objects whose row reaches one: sets SQLite makes once, not per outer row.
                let last = hops[hops.count - 1]
                var reached = "SELECT \(last.target).id FROM by_type \(last.target) WHERE \(last.isTarget) AND (\(condition))"
                for (i, hop) in hops.enumerated().reversed() {
                    let typed = self.typedRows ? self.typed(hop.edge, hop.types) : ""
                    // The first hop from the root's row takes only the rows from the keys the plan reads.
                    let range = i == 0 && hop.from == "a0" ? self.rootKeyCondition("\(hop.edge).from_id") : ""
                    reached = "SELECT \(hop.edge).from_id FROM \(relations) \(hop.edge) WHERE \(hop.edge).relation = \(hop.relation)\(typed)\(range) AND \(hop.edge).to_id IN (\(reached))"
                    // Rows of a name some other type's objects have too, or rows from nothing:
                    // only the keys of this hop's own objects go on.
                    if i > 0, !hop.exclusive, !self.typedRows {
                        let alias = self.newAlias()
                        reached = "SELECT \(alias).id FROM by_type \(alias) WHERE \(self.isType(hop.types.from, alias)) AND \(alias).id IN (\(reached))"
                    }
                }
                return "\(hops[0].from).id IN (\(reached))"
            }
        }
        return walked(p, from: chain.from, toMany: chain.toMany, toOneAfterMany: chain.toOneAfterMany, value: value, element: current,
                      countGroups: countGroups, reaches: reaches)
    }
}
