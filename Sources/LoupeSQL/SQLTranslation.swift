import Foundation
import GRDB
import LoupeModel
import LoupeQuery
import LoupeStore

/// One statement's predicates and paths as SQL over a relational file's tables.
///
/// SQL does the structure: rows, joins along foreign keys, backlinks as correlated `EXISTS` and
/// `count(*)`. What values mean stays the engine's: every comparison is a call of `loupe_test(k,
/// …)`, which converts the cells as a load converts them and asks a ``ValueTest`` compiled by the
/// engine's own compiler, and `@sum @avg @min @max` are `loupe_aggregate(k, …)` over the engine's
/// aggregation. A test never answers NULL, so `NOT` and SQL's three-valued logic never disagree
/// with the engine. Anything whose exact meaning SQL cannot reproduce (arithmetic, paths that end
/// on objects, collections whose multiplicity would differ, names a load would resolve otherwise)
/// makes the translation return nil, and the caller answers in memory instead.
final class SQLTranslation {
    let layout: RelationalLayout
    var graph: ObjectGraph { layout.graph }
    /// `loupe_test(k, …)`: the k-th test, given its arguments (the cells after `k`).
    private(set) var tests: [([DatabaseValue]) -> Bool] = []
    /// The compiled tests, checked after the statement ran (a regular expression that gave up).
    private(set) var valueTests: [ValueTest] = []
    /// `loupe_aggregate(k, v)`: the k-th aggregate and how it reads its cells.
    private(set) var aggregates: [(aggregate: Aggregate, convert: (DatabaseValue) -> Value)] = []
    /// Aggregated values, by the handle `loupe_aggregate` answers with.
    var aggregated: [Value] = []
    /// The file, for the checks that read values (the kinds a column holds).
    let db: Database
    private var aliasCount = 0
    private var variables: [String: Scope] = [:]

    init(layout: RelationalLayout, db: Database) {
        self.layout = layout
        self.db = db
    }

    /// An object at hand: its table's alias in the SQL and its type.
    struct Scope {
        let alias: String
        let type: Int
    }

    /// How a value read in SQL becomes the value the engine holds.
    enum Conversion {
        /// A cell of a type's attribute.
        case cell(type: Int, attribute: Int)
        /// A type's key column or rowid: the object's `id`.
        case key
        /// A number SQL computed (a count).
        case integer
        /// A handle into ``aggregated``; `-1 - k` for the k-th aggregate of an empty collection.
        case aggregated
    }

    /// A value in SQL and how to read it.
    struct Operand {
        let sql: String
        let conversion: Conversion
        /// For a value reached through to-one relations keyed by integers: the value inside the
        /// last table, and the condition that the outer row reaches a row where a condition on it
        /// holds, as nested uncorrelated `IN` subqueries (SQLite runs each once, with indexes).
        var semiJoin: (inner: String, innerConversion: Conversion, condition: (String) -> String)? = nil
        /// For the count of one backlink into an integer-keyed row: the condition that the row's
        /// key is among the foreign key values whose group's `count(*)` meets a condition.
        var countGroups: ((String) -> String)? = nil
    }

    /// A path that yields a collection: SQL rows from `from` (which ends in a `WHERE` with the
    /// correlation to the outer row, so more conditions join with `AND`), each an element.
    struct Collection {
        let from: String
        /// The element's value; nil when the elements are objects (then `element` is set).
        let value: Operand?
        let element: Scope?
        /// True when the rows are the engine's elements one for one (a count over them is the
        /// engine's count); false when the engine would merge some (objects reached twice).
        let exactMultiplicity: Bool
    }

    enum Translated {
        case scalar(Operand)
        case collection(Collection)
    }

    func convert(_ cell: DatabaseValue, _ conversion: Conversion) -> Value {
        switch conversion {
        case .cell(let type, let attribute): return layout.value(cell, type: type, attribute: attribute)
        case .key: return cell.objectID?.value ?? .null
        case .integer: return Int64.fromDatabaseValue(cell).map(Value.int) ?? .null
        case .aggregated:
            guard let i = Int.fromDatabaseValue(cell) else { return .null }
            if i < 0, aggregates.indices.contains(-1 - i) { return ValueTest.aggregate(aggregates[-1 - i].aggregate, []) }
            return aggregated.indices.contains(i) ? aggregated[i] : .null
        }
    }

    private func newAlias() -> String {
        aliasCount += 1
        return "x\(aliasCount)"
    }

    /// `alias.column` for a type's key, or nil when the key is not one column or the rowid.
    private func key(_ type: Int, alias: String) -> String? {
        guard let table = layout.tables[type] else { return nil }
        switch graph.types[type].keyPolicy {
        case .column(let name, _): return "\(alias).\(SQL.identifier(name))"
        case .rowid: return "\(alias).\(table.rowid)"
        default: return nil
        }
    }

    // MARK: Keys

    /// SQL true when the foreign key value `f` names the object whose key is `k`, for a relation
    /// that ``keysMatchExactly(_:source:)`` cleared: equal numbers (integers and reals by
    /// value), equal text, equal blobs. One `=` between the two, so an index on either serves.
    func keyMatch(_ k: String, _ f: String) -> String {
        "\(k) = \(f) AND (typeof(\(k)) = typeof(\(f)) OR (typeof(\(k)) IN ('integer', 'real') AND typeof(\(f)) IN ('integer', 'real')))"
    }

    private var relationChecks: [String: Bool] = [:]

    /// True when a type's key is always an integer: its rowid, or an `INTEGER PRIMARY KEY`.
    func integerKeyed(_ type: Int) -> Bool {
        switch graph.types[type].keyPolicy {
        case .rowid: return true
        case .column(_, let autoIncrements): return autoIncrements
        default: return false
        }
    }

    /// True when every reference of this relation names its object in SQL (``keyMatch(_:_:)``) as
    /// a load decides it (``KeyIndex``). A load also matches across kinds, as SQLite's affinity
    /// does (the text `5` names the key 5, the integer 5 the text key `5`), and compares text by
    /// Unicode canonical equivalence (`é` written two ways is one key) where SQL compares bytes,
    /// which agree on ASCII. So: the foreign key is no date column (its values read as dates,
    /// which name nothing); no foreign key text spells an integer while keys are numbers, and no
    /// foreign key is a whole number while keys are text; and text keys, if any, are ASCII on both
    /// sides. Checked once per relation, in SQL over the two columns.
    private func keysMatchExactly(_ fk: LoupeModel.ForeignKey, source: Int) throws -> Bool {
        guard let sourceTable = layout.tables[source], let targetTable = layout.tables[fk.targetType],
              let fkColumn = sourceTable.columns.first(where: { $0.name == fk.attribute }), !fkColumn.isDate else { return false }
        let id = "\(source)/\(fk.attribute)"
        if let known = relationChecks[id] { return known }
        func exists(_ table: String, _ condition: String) throws -> Bool {
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(SQL.identifier(table)) WHERE \(condition))") ?? true
        }
        let f = SQL.identifier(fk.attribute)
        let k: String
        switch graph.types[fk.targetType].keyPolicy {
        case .column(let name, _): k = SQL.identifier(name)
        default: k = targetTable.rowid
        }
        let keysAreNumbers = try exists(targetTable.name, "typeof(\(k)) IN ('integer', 'real')")
        let keysAreText = try exists(targetTable.name, "typeof(\(k)) = 'text'")
        var ok = true
        if keysAreNumbers, try exists(sourceTable.name, "typeof(\(f)) = 'text' AND loupe_int_key(\(f)) IS NOT NULL") { ok = false }
        if ok, keysAreText, try exists(sourceTable.name, "typeof(\(f)) IN ('integer', 'real') AND \(f) = CAST(\(f) AS INTEGER)") { ok = false }
        if ok, keysAreText, try exists(targetTable.name, "typeof(\(k)) = 'text' AND \(k) GLOB '*[^ -~]*'")
            || exists(sourceTable.name, "typeof(\(f)) = 'text' AND \(f) GLOB '*[^ -~]*'") { ok = false }
        relationChecks[id] = ok
        return ok
    }

    // MARK: Predicates

    /// The predicate as a SQL condition on `scope`'s row (never NULL), or nil.
    func predicate(_ p: LoupeQuery.Predicate, _ scope: Scope) throws -> String? {
        try p.sql(truth: "1", falsehood: "0") { try self.leaf($0, scope) }
    }

    private func leaf(_ p: LoupeQuery.Predicate, _ scope: Scope) throws -> String? {
        switch p {
        case .truthy(let e):
            return try quantified(nil, e, scope, test: try ValueTest(truthAt: e.range), elementTest: try ValueTest(truthAt: e.range), right: nil)
        case .between(let q, let e, let low, let high, let range):
            guard ValueTest.constant(low) != nil, ValueTest.constant(high) != nil else { return nil }
            let test = try ValueTest(between: low, high, at: range)
            return try quantified(q, e, scope, test: test, elementTest: test, right: nil)
        case .comparison(let c):
            return try comparison(c, scope)
        case .constant, .and, .or, .not:
            return nil   // written by `Predicate.sql`
        }
    }

    private func comparison(_ c: Comparison, _ scope: Scope) throws -> String? {
        guard try !numberAgainstText(c, scope) else { return nil }
        let rightConstant = ValueTest.constant(c.rhs)
        let leftConstant = ValueTest.constant(c.lhs)
        if rightConstant != nil {
            if leftConstant != nil {
                // Two constants: the answer is known now.
                let test = try ValueTest(c, rightIsValue: false, elementOfCollection: false)
                guard case .literal = c.lhs, let value = leftConstant else { return nil }
                return test(value) ? "1" : "0"
            }
            return try quantified(c.quantifier, c.lhs, scope,
                                  test: try ValueTest(c, rightIsValue: false, elementOfCollection: false),
                                  elementTest: try ValueTest(c, rightIsValue: false, elementOfCollection: true), right: nil,
                                  plain: c.options.isEmpty ? { self.numericComparison($0, c.op, rightConstant!) } : nil)
        }
        guard c.op != .in, let right = try translate(c.rhs, scope), case .scalar(let r) = right else { return nil }
        if let leftConstant {
            // `5 < pages`: the constant on the left, the path's value on the right.
            guard case .literal = c.lhs, c.quantifier == nil else { return nil }
            let test = try ValueTest(c, rightIsValue: true, elementOfCollection: false)
            valueTests.append(test)
            return call { [unowned self] cells in test(leftConstant, self.convert(cells[0], r.conversion)) } + "(\(r.sql)))"
        }
        return try quantified(c.quantifier, c.lhs, scope,
                              test: try ValueTest(c, rightIsValue: true, elementOfCollection: false),
                              elementTest: try ValueTest(c, rightIsValue: true, elementOfCollection: true), right: r)
    }

    /// A test of `expression`'s value (with `right`'s, when given): on a single value, one call;
    /// on a collection, `EXISTS` for ANY (the default), `NOT EXISTS … NOT` for ALL, `NOT EXISTS`
    /// for NONE.
    /// `plain`, when given, is the same test in plain SQL for a value when SQL can say it exactly
    /// (no function call per row, and an index on the column serves).
    private func quantified(_ q: Quantifier?, _ expression: LoupeQuery.Expression, _ scope: Scope,
                            test: ValueTest, elementTest: ValueTest, right: Operand?,
                            plain: ((Operand) -> String?)? = nil) throws -> String? {
        guard let left = try translate(expression, scope) else { return nil }
        valueTests += [test, elementTest]
        func callSQL(_ value: Operand, _ t: ValueTest) -> String {
            // Through integer-keyed to-one relations, a test false on NULL (a missing target) is
            // the outer row reaching a row where it holds: a semi-join.
            if let (inner, conversion, reaches) = value.semiJoin, right == nil, !t(.null), let sql = plain?(Operand(sql: inner, conversion: conversion)) { return "(\(reaches(sql)))" }
            // The count of one backlink: the keys of the groups whose count meets the test, or,
            // when a count of zero meets it, every key but those whose count does not.
            if let groups = value.countGroups, right == nil, let having = plain?(Operand(sql: "count(*)", conversion: .integer)) {
                return t(.int(0)) ? "(NOT (\(groups("NOT (\(having))"))))" : "(\(groups(having)))"
            }
            if let sql = plain?(value) { return "(\(sql))" }
            let rightConversion = right?.conversion
            let head = call { [unowned self] cells in
                t(self.convert(cells[0], value.conversion), rightConversion.map { self.convert(cells[1], $0) } ?? .null)
            }
            return head + value.sql + (right.map { ", " + $0.sql } ?? "") + ")"
        }
        switch left {
        case .scalar(let value):
            guard q == nil else { return nil }
            return callSQL(value, test)
        case .collection(let collection):
            guard let value = collection.value else { return nil }
            let each = callSQL(value, elementTest)
            switch q ?? .any {
            case .any: return "EXISTS (SELECT 1 \(collection.from) AND \(each))"
            case .all: return "NOT EXISTS (SELECT 1 \(collection.from) AND NOT \(each))"
            case .noneOf: return "NOT EXISTS (SELECT 1 \(collection.from) AND \(each))"
            }
        }
    }

    /// Values bound to the SQL as `?n` (never spliced into its text).
    private(set) var arguments: [DatabaseValue] = []

    /// Binds a value and returns its placeholder.
    func bind(_ value: DatabaseValue) -> String {
        arguments.append(value)
        return "?\(arguments.count)"
    }

    /// `value op number` in plain SQL, exactly as the engine compares: only numbers compare with a
    /// number (text, blobs and NULL never do, so `!=` holds for them), integers and reals by
    /// value. Nil unless the value is a plain column (not a date column, whose numbers are
    /// dates) or a count, and the number is below 2^53 in size (where integer and double
    /// comparisons agree).
    func numericComparison(_ value: Operand, _ op: ComparisonOperator, _ constant: Value) -> String? {
        let number: DatabaseValue
        switch constant {
        case .int(let i) where i.magnitude < 1 << 53: number = i.databaseValue
        case .double(let d) where d.isFinite && d.magnitude < 9_007_199_254_740_992: number = d.databaseValue
        default: return nil
        }
        let sqlOperator: String
        switch op {
        case .equal, .notEqual: sqlOperator = "="
        case .less: sqlOperator = "<"
        case .lessOrEqual: sqlOperator = "<="
        case .greater: sqlOperator = ">"
        case .greaterOrEqual: sqlOperator = ">="
        default: return nil
        }
        let comparison: String
        switch value.conversion {
        case .integer: comparison = "\(value.sql) \(sqlOperator) \(bind(number))"
        case .cell(let type, let attribute) where !(layout.tables[type]?.columns[attribute].isDate ?? true):
            comparison = "typeof(\(value.sql)) IN ('integer', 'real') AND \(value.sql) \(sqlOperator) \(bind(number))"
        default: return nil
        }
        return op == .notEqual ? "NOT (\(comparison))" : comparison
    }

    /// Registers a test and returns the head of its call, `loupe_test(k, ` (the caller appends the
    /// arguments and the closing parenthesis).
    private func call(_ test: @escaping ([DatabaseValue]) -> Bool) -> String {
        tests.append(test)
        return "loupe_test(\(tests.count - 1), "
    }

    /// `pages > "abc"` on a column holding only numbers is an error in the engine (it reads the
    /// values' kinds); true when that could be the case here, so the caller leaves it to the engine.
    private func numberAgainstText(_ c: Comparison, _ scope: Scope) throws -> Bool {
        guard [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual].contains(c.op),
              case .path(let path) = c.lhs, path.aggregate == nil, path.steps.count == 1, case .name(let name) = path.steps[0],
              case .literal(.string, _) = c.rhs else { return false }
        let type = graph.types[scope.type]
        guard let a = type.attribute(named: name.text), let table = layout.tables[scope.type] else { return false }
        if table.columns[a].isDate { return true }
        let kinds = try String.fetchAll(db, sql: "SELECT DISTINCT typeof(\(SQL.identifier(table.columns[a].name))) FROM \(SQL.identifier(table.name))")
        return Set(kinds).isSubset(of: ["integer", "real", "null"]) && kinds.contains { $0 != "null" }
    }

    // MARK: Expressions and paths

    /// An expression's value in SQL, or nil when it does not translate exactly.
    func translate(_ e: LoupeQuery.Expression, _ scope: Scope) throws -> Translated? {
        switch e {
        case .path(let p): return try path(p, scope)
        case .subqueryCount(let collectionPath, let variable, let inner, _):
            guard case .collection(let collection)? = try path(collectionPath, scope), collection.exactMultiplicity,
                  let element = collection.element else { return nil }
            variables[variable] = element
            defer { variables[variable] = nil }
            guard let condition = try predicate(inner, element) else { return nil }
            return .scalar(Operand(sql: "(SELECT count(*) \(collection.from) AND (\(condition)))", conversion: .integer))
        default: return nil
        }
    }

    /// A path from `scope`'s row: a scalar (attributes through to-one relations, or an aggregate
    /// of a collection) or a collection (through backlinks).
    func path(_ p: Path, _ start: Scope) throws -> Translated? {
        var current = start
        var steps = p.steps[...]
        if case .variable(let name)? = steps.first {
            guard let bound = variables[name.text] else { return nil }
            current = bound
            steps = steps.dropFirst()
        }
        var first: String?       // `"Table" xN` entered from the outer row
        var correlation = ""
        var joins: [String] = []
        var toMany = 0, toOneAfterMany = 0
        var value: Operand?
        // A path that is one backlink into an integer-keyed row: its count as a GROUP BY.
        var backlinkGroups: ((String) -> String)?
        // The to-one hops so far, while every one is keyed by integers (nil once one is not).
        var integerHops: [(from: String, foreignKey: String, table: String, alias: String, key: String)]? = []

        func enter(_ type: Int, on condition: (String) -> String?, toManyStep: Bool) -> Bool {
            guard let table = layout.tables[type] else { return false }
            let alias = newAlias()
            guard let on = condition(alias) else { return false }
            if first == nil {
                first = "\(SQL.identifier(table.name)) \(alias)"
                correlation = on
            } else {
                joins.append("\(toManyStep ? "JOIN" : "LEFT JOIN") \(SQL.identifier(table.name)) \(alias) ON \(on)")
            }
            if toManyStep { toMany += 1 } else if toMany > 0 { toOneAfterMany += 1 }
            current = Scope(alias: alias, type: type)
            return true
        }

        for (i, step) in steps.enumerated() {
            let isLast = i == steps.count - 1
            let type = graph.types[current.type]
            switch step {
            case .name(let name):
                let attribute = type.attribute(named: name.text), relation = type.relation(named: name.text)
                if isLast, let a = attribute, let table = layout.tables[current.type] {
                    value = Operand(sql: "\(current.alias).\(SQL.identifier(table.columns[a].name))", conversion: .cell(type: current.type, attribute: a))
                } else if let r = relation {
                    let column = type.relations[r]
                    guard !column.isToMany, let fk = column.foreignKey, fk.targetAttribute == nil,
                          try keysMatchExactly(fk, source: current.type) else { return nil }
                    let from = current
                    guard enter(fk.targetType, on: { alias in
                        self.key(fk.targetType, alias: alias).map { self.keyMatch($0, "\(from.alias).\(SQL.identifier(fk.attribute))") }
                    }, toManyStep: false) else { return nil }
                    if toMany == 0, integerKeyed(fk.targetType), let table = layout.tables[fk.targetType], let k = key(fk.targetType, alias: current.alias) {
                        integerHops?.append((from.alias, SQL.identifier(fk.attribute), SQL.identifier(table.name), current.alias, k))
                    } else {
                        integerHops = nil
                    }
                } else {
                    return nil
                }
            case .links(let typeName, let relationName):
                guard let source = graph.type(named: typeName.text), let r = source.relation(named: relationName.text),
                      let s = graph.types.firstIndex(where: { $0.name == source.name }),
                      let fk = source.relations[r].foreignKey, fk.targetAttribute == nil, fk.targetType == current.type,
                      let targetKey = key(current.type, alias: current.alias), try keysMatchExactly(fk, source: s) else { return nil }
                guard enter(s, on: { alias in self.keyMatch(targetKey, "\(alias).\(SQL.identifier(fk.attribute))") }, toManyStep: true) else { return nil }
                if steps.count == 1, integerKeyed(fk.targetType), let table = layout.tables[s] {
                    let alias = current.alias
                    let column = "\(alias).\(SQL.identifier(fk.attribute))"
                    backlinkGroups = { having in
                        "\(targetKey) IN (SELECT \(column) FROM \(SQL.identifier(table.name)) \(alias) WHERE typeof(\(column)) IN ('integer', 'real') GROUP BY \(column) HAVING \(having))"
                    }
                }
            case .id:
                guard isLast, let k = key(current.type, alias: current.alias) else { return nil }
                value = Operand(sql: k, conversion: .key)
            case .variable, .type:
                return nil
            }
        }
        let from = first.map { "FROM \($0)" + joins.map { " " + $0 }.joined() + " WHERE \(correlation)" }

        if let aggregate = p.aggregate {
            guard let from, toMany > 0 else { return nil }
            let exact = toMany == 1 && toOneAfterMany == 0
            switch aggregate {
            case .count:
                guard exact else { return nil }
                var operand = Operand(sql: "(SELECT count(*) \(from))", conversion: .integer)
                operand.countGroups = backlinkGroups
                return .scalar(operand)
            case .sum, .avg, .min, .max:
                guard let value, exact || aggregate == .min || aggregate == .max, case .cell = value.conversion else { return nil }
                let convert = value.conversion
                aggregates.append((aggregate, { [unowned self] cell in self.convert(cell, convert) }))
                let k = aggregates.count - 1
                return .scalar(Operand(sql: "coalesce((SELECT loupe_aggregate(\(k), \(value.sql)) \(from)), \(-1 - k))", conversion: .aggregated))
            }
        }
        guard let from else {
            // No hop: an attribute or the key of the row at hand.
            return value.map(Translated.scalar)
        }
        if toMany == 0 {
            // To-one hops: at most one row; none (a missing target) reads as NULL, as in the engine.
            guard let value else { return nil }
            var operand = Operand(sql: "(SELECT \(value.sql) \(from))", conversion: value.conversion)
            if let hops = integerHops, !hops.isEmpty {
                operand.semiJoin = (value.sql, value.conversion, { condition in
                    var inner = condition
                    for hop in hops.reversed() {
                        inner = "typeof(\(hop.from).\(hop.foreignKey)) IN ('integer', 'real') AND \(hop.from).\(hop.foreignKey) IN (SELECT \(hop.key) FROM \(hop.table) \(hop.alias) WHERE \(inner))"
                    }
                    return inner
                })
            }
            return .scalar(operand)
        }
        return .collection(Collection(from: from, value: value, element: value == nil ? current : nil,
                                      exactMultiplicity: toMany == 1 && toOneAfterMany == 0))
    }
}
