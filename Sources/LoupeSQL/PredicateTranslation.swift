import Foundation
import GRDB
import LoupeModel
import LoupeQuery
import LoupeStore

/// One statement's predicates as SQL, whatever the tables look like: `AND`/`OR`/`NOT`, tests,
/// quantifiers over collections, `SUBQUERY(…).@count` and aggregates; a layout's subclass says what
/// a path is in its tables (``path(_:_:)``) and how a cell becomes the value the engine holds
/// (``convert(_:_:)``).
///
/// What values mean stays the engine's: every comparison is a call of `loupe_test(k, …)`, which
/// converts the cells as a load converts them and asks a ``ValueTest`` compiled by the engine's own
/// compiler, and `@sum @avg @min @max` are `loupe_aggregate(k, …)` over the engine's aggregation.
/// A test never answers NULL, so `NOT` and SQL's three-valued logic never disagree with the
/// engine. Whatever does not translate exactly makes the translation return nil, and the caller
/// answers some other way (in memory).
class PredicateTranslation {
    let graph: ObjectGraph
    /// `loupe_test(k, …)`: the k-th test, given its arguments (the cells after `k`).
    private(set) var tests: [([DatabaseValue]) -> Bool] = []
    /// The compiled tests, checked after the statement ran (a regular expression that gave up).
    private(set) var valueTests: [ValueTest] = []
    /// `loupe_aggregate(k, v)`: the k-th aggregate and how it reads its cells.
    var aggregates: [(aggregate: Aggregate, convert: (DatabaseValue) -> Value)] = []
    /// Aggregated values, by the handle `loupe_aggregate` answers with.
    var aggregated: [Value] = []
    /// The file, for the checks that read values (the kinds a column holds).
    let db: Database
    /// Those checks' answers, computed once per state of the file (``FileFacts``).
    let facts: FileFacts
    var aliasCount = 0
    var variables: [String: Scope] = [:]
    /// What stopped the translation, when it knows (a relation whose keys match only by
    /// SQLite's affinity, a hop into a view): the reason a refusal gives, as data.
    var declined: [SQLConstruct] = []

    /// Records why the translation gives up here, and gives up (nil).
    func decline<T>(_ construct: SQLConstruct) -> T? {
        if !declined.contains(construct) { declined.append(construct) }
        return nil
    }

    init(graph: ObjectGraph, db: Database, facts: FileFacts = FileFacts()) {
        self.graph = graph
        self.db = db
        self.facts = facts
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
        /// A member of a JSON document (a Persist object's attribute): the document's text in SQL.
        case member(name: String)
        /// A number or text SQLite's `json_extract` read from a document, as the engine holds it.
        case json
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
        /// True for arithmetic SQL computed (``arithmetic(_:_:)``): an integer, a real or NULL,
        /// where NULL also stands for the engine's NaN, so it is exact only compared in plain SQL
        /// with a number (where NaN and null both fail `<`, `==`, … and both pass `!=`).
        var computed = false
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

    /// The value the engine holds for a cell read in SQL (a layout's subclass reads its own cells).
    func convert(_ cell: DatabaseValue, _ conversion: Conversion) -> Value {
        switch conversion {
        case .key: return cell.objectID?.value ?? .null
        case .integer: return Int64.fromDatabaseValue(cell).map(Value.int) ?? .null
        case .aggregated:
            guard let i = Int.fromDatabaseValue(cell) else { return .null }
            if i < 0, aggregates.indices.contains(-1 - i) { return ValueTest.aggregate(aggregates[-1 - i].aggregate, []) }
            return aggregated.indices.contains(i) ? aggregated[i] : .null
        case .json:
            switch cell.storage {
            case .int64(let i): return .int(i)
            case .double(let d): return .double(d)
            case .string(let s): return .string(s)
            default: return .null
            }
        case .cell, .member: return .null
        }
    }


    func newAlias() -> String {
        aliasCount += 1
        return "x\(aliasCount)"
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
            guard let lo = ValueTest.constant(low), let hi = ValueTest.constant(high) else { return nil }
            let test = try ValueTest(between: low, high, at: range)
            // Between two numbers: two plain comparisons, when each can be one.
            let numbers = [lo, hi].allSatisfy(Self.comparesPlainly)
            return try quantified(q, e, scope, test: test, elementTest: test, right: nil, plain: !numbers ? nil : { value in
                // (Both or neither: the value and the bounds are what each decides on.)
                guard let a = self.numericComparison(value, .greaterOrEqual, lo), let b = self.numericComparison(value, .lessOrEqual, hi) else { return nil }
                return "(\(a)) AND (\(b))"
            })
        case .comparison(let c):
            return try comparison(c, scope)
        case .constant, .and, .or, .not:
            return nil   // written by `Predicate.sql`
        }
    }

    private func comparison(_ c: Comparison, _ scope: Scope) throws -> String? {
        if c.op == .fullText { return try fullText(c, scope) }
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

    /// A `MATCH` on a full-text table, as SQL (nil: this layout has none; the engine says why).
    func fullText(_ c: Comparison, _ scope: Scope) throws -> String? { nil }

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
        func callSQL(_ value: Operand, _ t: ValueTest) -> String? {
            // Through integer-keyed to-one relations, a test false on NULL (a missing target) is
            // the outer row reaching a row where it holds: a semi-join (the test runs once per
            // row at the far end, not once per outer row).
            if let (inner, conversion, reaches) = value.semiJoin, right == nil, !t(.null) {
                return callSQL(Operand(sql: inner, conversion: conversion), t).map { "(\(reaches($0)))" }
            }
            // The count of one backlink: the keys of the groups whose count meets the test, or,
            // when a count of zero meets it, every key but those whose count does not.
            if let groups = value.countGroups, right == nil, let having = plain?(Operand(sql: "count(*)", conversion: .integer)) {
                return t(.int(0)) ? "(NOT (\(groups("NOT (\(having))"))))" : "(\(groups(having)))"
            }
            if let sql = plain?(value) { return "(\(sql))" }
            // (Computed arithmetic reads NaN as NULL, which an engine test would tell apart.)
            guard !value.computed, right?.computed != true else { return nil }
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
            guard let each = callSQL(value, elementTest) else { return nil }
            switch q ?? .any {
            case .any: return "EXISTS (SELECT 1 \(collection.from) AND \(each))"
            case .all: return "NOT EXISTS (SELECT 1 \(collection.from) AND NOT \(each))"
            case .noneOf: return "NOT EXISTS (SELECT 1 \(collection.from) AND \(each))"
            }
        }
    }

    /// Values bound to the SQL as `?n` (never spliced into its text).
    var arguments: [DatabaseValue] = []

    /// Binds a value and returns its placeholder. Text holding a NUL is bound as its bytes and
    /// cast back to text: GRDB binds text as a C string, which SQLite would cut short at the NUL.
    func bind(_ value: DatabaseValue) -> String {
        if case .string(let text) = value.storage, text.utf8.contains(0) {
            arguments.append(Data(text.utf8).databaseValue)
            return "CAST(?\(arguments.count) AS TEXT)"
        }
        arguments.append(value)
        return "?\(arguments.count)"
    }

    /// ` AND key IN (…)` over the integer keys `predicate` names outright
    /// (``LoupeQuery/Predicate/integerKeysNamed``), for `key`, SQL for a key that is always an
    /// integer (a rowid): SQLite then reads those rows by the key, and the filter still tests
    /// each whole. Empty when the filter names no such keys. The keys are bound as one JSON
    /// array, however many there are.
    func keyLookup(_ predicate: LoupeQuery.Predicate?, key: String) -> String {
        guard let keys = predicate?.integerKeysNamed else { return "" }
        return keyLookup(list: "[" + keys.map(String.init).joined(separator: ",") + "]", key: key)
    }

    /// The same over the text keys `predicate` names (``LoupeQuery/Predicate/textKeysNamed``),
    /// for a key column of text affinity (its values are text, or blobs no text equals).
    func textKeyLookup(_ predicate: LoupeQuery.Predicate?, key: String) -> String {
        guard let keys = predicate?.textKeysNamed, let data = try? JSONSerialization.data(withJSONObject: keys),
              let list = String(data: data, encoding: .utf8) else { return "" }
        return keyLookup(list: list, key: key)
    }

    private func keyLookup(list: String, key: String) -> String {
        " AND \(key) IN (SELECT value FROM json_each(\(bind(list.databaseValue))))"
    }

    /// `value op number` in plain SQL, exactly as the engine compares: only numbers compare with a
    /// number (text, blobs and NULL never do, so `!=` holds for them), integers and reals by
    /// value. Nil unless the value is a count or a cell the layout reads as a plain number
    /// (``plainNumber(_:)``), and the number is below 2^53 in size (where integer and double
    /// comparisons agree).
    func numericComparison(_ value: Operand, _ op: ComparisonOperator, _ constant: Value) -> String? {
        let number: DatabaseValue
        switch constant {
        case .int(let i) where Self.comparesPlainly(constant): number = i.databaseValue
        case .double(let d) where Self.comparesPlainly(constant): number = d.databaseValue
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
        case _ where value.computed: comparison = "coalesce(\(value.sql) \(sqlOperator) \(bind(number)), 0)"
        default:
            guard let plain = plainNumber(value) else { return nil }
            // A value that is a number or NULL: SQL's comparison, NULL read as false.
            // A value never NULL (an integer key): the bare comparison, so that a rowid range serves.
            comparison = plain.onlyNumbers ? (isNeverNull(value) ? "\(plain.sql) \(sqlOperator) \(bind(number))" : "coalesce(\(plain.sql) \(sqlOperator) \(bind(number)), 0)")
                : "typeof(\(plain.sql)) IN ('integer', 'real') AND \(plain.sql) \(sqlOperator) \(bind(number))"
        }
        return op == .notEqual ? "NOT (\(comparison))" : comparison
    }

    /// True for a number SQL compares as the engine does: below 2^53 in size (where integer and
    /// double comparisons agree), finite.
    static func comparesPlainly(_ constant: Value) -> Bool {
        switch constant {
        case .int(let i): return i.magnitude < 1 << 53
        case .double(let d): return d.isFinite && d.magnitude < 9_007_199_254_740_992
        default: return false
        }
    }

    /// The SQL whose value is the cell's as a plain number when it holds one (an integer or a real
    /// there is the number the engine holds; anything else is no number to the engine either), and
    /// whether it only ever holds numbers or NULL; nil when the layout cannot say so in SQL.
    func plainNumber(_ value: Operand) -> (sql: String, onlyNumbers: Bool)? { nil }

    /// True when the value is never NULL in SQL (a rowid, an integer primary key).
    func isNeverNull(_ value: Operand) -> Bool { false }

    /// The storage classes column `column` of `table` holds (`integer`, `text`, `null`…), a fact.
    func kinds(of column: String, in table: String) throws -> Set<String> {
        let list = try facts.scalar(db, sql: "SELECT group_concat(DISTINCT typeof(\(SQL.identifier(column)))) FROM \(SQL.identifier(table))")
        return Set((String.fromDatabaseValue(list) ?? "").split(separator: ",").map(String.init))
    }

    /// True when column `column` of `table` holds a blob or text outside printable ASCII, a fact.
    func holdsBlobsOrNonASCII(_ column: String, in table: String) throws -> Bool {
        let c = SQL.identifier(column)
        return try facts.exists(db, table: table, where: "typeof(\(c)) = 'blob' OR (typeof(\(c)) = 'text' AND \(c) GLOB '*[^ -~]*')")
    }

    /// Registers a test and returns the head of its call, `loupe_test(k, ` (the caller appends the
    /// arguments and the closing parenthesis).
    private func call(_ test: @escaping ([DatabaseValue]) -> Bool) -> String {
        tests.append(test)
        return "loupe_test(\(tests.count - 1), "
    }

    /// True when the engine would refuse the comparison for the values' kinds (`pages > "abc"` on
    /// numbers), which SQL cannot see: the caller then leaves it to the engine.
    func numberAgainstText(_ c: Comparison, _ scope: Scope) throws -> Bool { false }

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
        case .arithmetic, .negate:
            return try arithmetic(e, scope).map { .scalar(Operand(sql: $0, conversion: .json, computed: true)) }
        default: return nil
        }
    }

    /// SQL whose value is the engine's arithmetic on `e` (``Arithmetic``) when that is a number,
    /// and NULL when it is null or NaN; nil when it does not translate exactly. Each operand is
    /// its number or NULL (a value that is no number to the engine is no number here: text
    /// SQLite would read as a number is NULL); SQLite then computes as the engine does: integers
    /// stay integers until `+ - *` overflow, then both sides as doubles; `/` on doubles, NULL
    /// for a zero divisor; `-x` as `0 - x` (the smallest integer becomes a double).
    func arithmetic(_ e: LoupeQuery.Expression, _ scope: Scope) throws -> String? {
        switch e {
        case .arithmetic(let op, let a, let b, _):
            guard let x = try arithmetic(a, scope), let y = try arithmetic(b, scope) else { return nil }
            switch op {
            case .add: return "(\(x) + \(y))"
            case .subtract: return "(\(x) - \(y))"
            case .multiply: return "(\(x) * \(y))"
            case .divide: return "(CAST(\(x) AS REAL) / \(y))"
            }
        case .negate(let inner, _):
            return try arithmetic(inner, scope).map { "(0 - \($0))" }
        case .literal:
            switch ValueTest.constant(e) {
            case .int(let i)?: return bind(i.databaseValue)
            case .double(let d)? where d.isFinite: return bind(d.databaseValue)
            case .double?, nil: return nil
            case _?: return "NULL"   // not a number: the engine's arithmetic gives null
            }
        case .path:
            guard case .scalar(let operand)? = try translate(e, scope) else { return nil }
            if operand.computed { return operand.sql }
            if case .integer = operand.conversion { return operand.sql }
            guard let plain = plainNumber(operand) else { return nil }
            return plain.onlyNumbers ? plain.sql : "(CASE WHEN typeof(\(plain.sql)) IN ('integer', 'real') THEN \(plain.sql) END)"
        default:
            return nil
        }
    }
    /// A path from `scope`'s row: a scalar or a collection, or nil (the layout's subclass).
    func path(_ p: Path, _ start: Scope) throws -> Translated? { nil }

    /// The values a statement reads per matching row beside its key: each sort key and distinct
    /// path, then each projected column, in clause order; or the group key. Nil when one of them
    /// is not one value in SQL.
    func clauseOperands(_ statement: LoupeQuery.Statement, _ scope: Scope) throws -> [Operand]? {
        var operands: [Operand] = []
        func scalar(_ e: LoupeQuery.Expression) throws -> Bool {
            guard case .scalar(let operand)? = try translate(e, scope) else { return false }
            operands.append(operand)
            return true
        }
        switch statement {
        case .query(let q):
            for clause in q.clauses {
                switch clause {
                case .sort(let keys): for k in keys { guard try scalar(.path(k.path)) else { return nil } }
                case .distinct(let paths): for p in paths { guard try scalar(.path(p)) else { return nil } }
                case .limit: break
                }
            }
            for column in q.projection ?? [] { guard try scalar(column.expression) else { return nil } }
        case .group(_, let by):
            guard try scalar(.path(by)) else { return nil }
        default: break
        }
        return operands
    }

    /// Where a path starts: the row at hand, or the object a `SUBQUERY` variable stands for (nil
    /// for a variable not bound here), and the steps after it.
    func start(of p: Path, at scope: Scope) -> (Scope, ArraySlice<Step>)? {
        guard case .variable(let name)? = p.steps.first else { return (scope, p.steps[...]) }
        guard let bound = variables[name.text] else { return nil }
        return (bound, p.steps.dropFirst())
    }

    /// The tables a path's hops enter, in order: the first correlated to the row at hand (its
    /// condition is the `WHERE`), each next one joined (`JOIN` for a to-many step, `LEFT JOIN`
    /// for a to-one one, which may find no row), and how many of them are to-many steps.
    struct Hops {
        private var first: String?
        private var correlation = ""
        private var joins: [String] = []
        /// The to-many steps, and the to-one steps after the first to-many one.
        private(set) var toMany = 0, toOneAfterMany = 0

        /// Enters `rows` (a quoted table and its alias, or a join of several: `grouped`, in
        /// parentheses once joined), those where `on` holds.
        mutating func enter(_ rows: String, on: String, toManyStep: Bool, grouped: Bool = false) {
            if first == nil {
                first = rows
                correlation = on
            } else {
                joins.append("\(toManyStep ? "JOIN" : "LEFT JOIN") \(grouped ? "(\(rows))" : rows) ON \(on)")
            }
            if toManyStep { toMany += 1 } else if toMany > 0 { toOneAfterMany += 1 }
        }

        /// `FROM … WHERE <correlation>`, or nil when no hop was entered.
        var from: String? { first.map { "FROM \($0)" + joins.map { " " + $0 }.joined() + " WHERE \(correlation)" } }
    }

    /// A path whose steps a layout walked, as a value or a collection: `from` the hops' tables (nil
    /// when the path stays on the row at hand), `toMany` the to-many steps among them and
    /// `toOneAfterMany` the to-one steps after the first to-many one, `value` the last step's
    /// value (nil when the path ends on objects), `element` where it ends. `countGroups` is the
    /// `GROUP BY` form of a count of one to-many step; `reaches`, given a condition on the last
    /// table, the condition that the row at hand reaches a row where it holds (to-one hops only).
    func walked(_ p: Path, from: String?, toMany: Int, toOneAfterMany: Int, value: Operand?, element: Scope,
                countGroups: ((String) -> String)?, reaches: ((String) -> String)?) -> Translated? {
        if let aggregate = p.aggregate {
            guard let from, toMany > 0 else { return nil }
            // Objects reached twice count once in the engine: only one to-many step counts exactly.
            let exact = toMany == 1 && toOneAfterMany == 0
            switch aggregate {
            case .count:
                guard exact else { return nil }
                var operand = Operand(sql: "(SELECT count(*) \(from))", conversion: .integer)
                operand.countGroups = countGroups
                return .scalar(operand)
            case .sum, .avg, .min, .max:
                guard let value, exact || aggregate == .min || aggregate == .max else { return nil }
                switch value.conversion {
                case .cell, .member, .json: break
                case .key, .integer, .aggregated: return nil
                }
                let convert = value.conversion
                aggregates.append((aggregate, { [unowned self] cell in self.convert(cell, convert) }))
                let k = aggregates.count - 1
                return .scalar(Operand(sql: "coalesce((SELECT loupe_aggregate(\(k), \(value.sql)) \(from)), \(-1 - k))", conversion: .aggregated))
            }
        }
        // No hop: an attribute or the key of the row at hand.
        guard let from else { return value.map(Translated.scalar) }
        if toMany == 0 {
            // To-one hops: at most one row; none (a missing target) reads as NULL, as in the engine.
            guard let value else { return nil }
            var operand = Operand(sql: "(SELECT \(value.sql) \(from))", conversion: value.conversion)
            if let reaches { operand.semiJoin = (value.sql, value.conversion, reaches) }
            return .scalar(operand)
        }
        return .collection(Collection(from: from, value: value, element: value == nil ? element : nil,
                                      exactMultiplicity: toMany == 1 && toOneAfterMany == 0))
    }
}
