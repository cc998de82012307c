import Foundation
import LoupeModel
import LoupeQuery
import LoupeStore

/// Answers a statement with PostgreSQL itself, without loading the database: predicates, paths
/// along foreign keys, backlinks, counts, sums and averages, sort and limit become one SQL query
/// with bound parameters; the result's objects are then read by key, as a load reads them.
///
/// PostgreSQL cannot call back into Loupe, so only what its typed columns mean exactly as the
/// engine means it is translated: numbers with numbers, booleans with booleans, dates and
/// timestamps with date literals (timestamps without a zone are UTC, as the engine reads them),
/// text with text when the column's text is in NFC (the engine compares text by canonical
/// equivalence, PostgreSQL by bytes: on NFC text they agree; `[c]`, `BEGINSWITH`, `ENDSWITH` and
/// `CONTAINS` need ASCII text), `LIKE` (both match Unicode scalars), `IN` lists, `BETWEEN`, null
/// tests, `ANY`/`ALL`/`NONE` over backlinks, `SUBQUERY(…).@count`, and ordering with `NULLS
/// FIRST` and the `C` collation, ties in key order, and arithmetic compared with numbers
/// (``PostgresTranslation/arithmetic(_:_:)``; where the server's range ends before the engine's,
/// the statement gives way). Anything else (`MATCHES`, comparisons of two paths, arithmetic
/// projected or beside nil, projections of sums) returns nil and the caller answers it another
/// way (a load, or the chunks over the budget).
/// The data checks (NFC, ASCII) are queries of their own, run once per column.
public enum PostgresPushdown {
    /// The result and the graph its objects live in, or nil (see above).
    public static func run(_ statement: LoupeQuery.Statement, url: String) throws -> (result: QueryResult, graph: ObjectGraph)? {
        try withTranslation(statement, url: url, persist: { try PostgresPersistPushdown.run(statement, connection: $0) }) { try $0.answer(statement) }
    }

    /// Writes the statement's result to `sink` in `mode` as ``run(_:url:)``'s result prints, a
    /// table's objects read `partSize` at a time, each part written and let go (memory holds a
    /// part, never the answer); false, with nothing written, when it does not translate.
    public static func write(_ statement: LoupeQuery.Statement, url: String, mode: OutputMode, toTerminal: Bool, to sink: OutputSink,
                             partSize: Int = SourceAnswer.partSize) throws -> Bool {
        try withTranslation(statement, url: url, persist: { connection -> Bool? in
            guard let (result, graph) = try PostgresPersistPushdown.run(statement, connection: connection) else { return nil }
            result.write(mode, graph: graph, toTerminal: toTerminal, to: sink)
            return true
        }) { try $0.write(statement, mode: mode, toTerminal: toTerminal, to: sink, partSize: partSize) ? true : nil } ?? false
    }

    /// Runs `body` in one snapshot of the database at `url`, on the statement's translation over
    /// its tables after the engine's own checks of the statement (names, quantifiers, as it
    /// reports them), or `persist` on the connection when the database holds Persist's layout (a
    /// graph of documents, not of tables); nil when the statement names no type to answer.
    private static func withTranslation<T>(_ statement: LoupeQuery.Statement, url: String, persist: (PostgresConnection) throws -> T?,
                                           _ body: (PostgresTranslation) throws -> T?) throws -> T? {
        guard statement.pushdownRoot != nil else { return nil }
        let connection = try PostgresConnection(url: url)
        return try connection.snapshot { () throws -> T? in
            if try PostgresPersist.isPersist(connection) { return try persist(connection) }
            let described = try PostgresDatabase.describeAll(connection)
            let schema = PostgresDatabase.schemaGraph(described)
            _ = try QueryEngine(graph: schema).run(statement)
            return try body(PostgresTranslation(schema: schema, described: described, connection: connection))
        }
    }
}

/// One statement as PostgreSQL SQL (see ``PostgresPushdown``): over tables, paths along foreign
/// keys; ``PostgresPersistTranslation`` reads Persist's layout through the same predicates.
class PostgresTranslation {
    let schema: ObjectGraph
    let described: [PostgresDatabase.Described]
    let connection: PostgresConnection
    private(set) var parameters: [String?] = []
    private var aliasCount = 0
    /// `LEFT JOIN`s onto the statement's rows (`a0`) that its to-one paths from them read
    /// through: a foreign key names one row at most, so a join adds no row, and PostgreSQL plans
    /// it as one join rather than a lookup per row (a correlated subquery).
    private(set) var rootJoins: [String] = []
    private var variables: [String: Scope] = [:]
    private var checks: [String: Bool] = [:]

    init(schema: ObjectGraph, described: [PostgresDatabase.Described], connection: PostgresConnection) {
        self.schema = schema
        self.described = described
        self.connection = connection
    }

    struct Scope { let alias: String; let type: Int }

    /// What a column holds, as far as comparisons go (`persistDate`: Persist's date text at
    /// UTC, `yyyy-MM-dd HH:mm:ss Z`, which orders as its dates do).
    enum Kind { case number, floating, text, boolean, timestamp, timestampWithZone, date, persistDate, other }

    /// A value in SQL: a column of a type (nil for a count) and its kind.
    struct Operand {
        let sql: String
        let kind: Kind
        let column: (type: Int, name: String)?
        /// True for a count of a collection (a projection may show it).
        var isCount = false
        /// True for arithmetic (``arithmetic(_:_:)``): a number or NULL, where NULL also stands
        /// for the engine's NaN, so it is exact only compared with numbers.
        var computed = false
    }

    /// A collection: rows from `from` (ending in a `WHERE` with the correlation), each an element.
    struct Collection {
        let from: String
        let value: Operand?
        let element: Scope?
        let exact: Bool
    }

    enum Translated { case scalar(Operand), collection(Collection) }

    func bind(_ text: String?, as type: String) -> String {
        parameters.append(text)
        return "$\(parameters.count)::\(type)"
    }

    func newAlias() -> String { aliasCount += 1; return "x\(aliasCount)" }

    private func table(_ t: Int) -> PostgresDatabase.Described? {
        described.first { $0.relation.name == schema.types[t].name.rawValue }
    }

    /// Type `t`'s column `name` as the catalog describes it, with its declared type lowercased.
    private func declared(_ t: Int, _ name: String) -> (type: String, base: UInt32)? {
        table(t)?.columns.first { $0.name == name }.map { ($0.type.lowercased(), $0.base) }
    }

    func kind(_ t: Int, _ column: String) -> Kind {
        guard let type = declared(t, column)?.type else { return .other }
        if ["smallint", "integer", "bigint", "oid"].contains(type) { return .number }
        if type.hasPrefix("numeric") { return Self.isWideNumeric(type) ? .floating : .number }
        if type == "real" || type == "double precision" { return .floating }
        if type == "text" || type.hasPrefix("character varying") { return .text }
        if type == "boolean" { return .boolean }
        if type == "timestamp without time zone" || type.hasPrefix("timestamp(") && !type.contains("with time zone") { return .timestamp }
        if type.hasPrefix("timestamp") && type.contains("with time zone") { return .timestampWithZone }
        if type == "date" { return .date }
        return readsAsText(t, column) ? .text : .other
    }

    /// True when type `t`'s `column` is not text but is read as the text PostgreSQL writes it
    /// (a uuid, an enum, an array, …: ``PostgresDatabase/readsAsItsText(_:)``): SQL reads it
    /// as `column::text`, which is that text.
    func readsAsText(_ t: Int, _ column: String) -> Bool {
        guard let (type, base) = declared(t, column) else { return false }
        return !(type == "text" || type.hasPrefix("character varying")) && PostgresDatabase.readsAsItsText(base)
    }

    /// ` AND key = ANY($n::bigint[])` over the integer keys `predicate` names outright
    /// (``LoupeQuery/Predicate/integerKeysNamed``), when `type`'s rows (`a0`) are keyed by one
    /// integer column (``integerKey(_:)``): PostgreSQL then reads those rows by the key's index,
    /// and the filter still tests each whole. Empty otherwise.
    func keyLookup(_ predicate: LoupeQuery.Predicate?, _ type: Int) -> String {
        if let keys = predicate?.integerKeysNamed, let key = integerKey(type) {
            return " AND \(key) = ANY(\(bind(PostgresPersistPages.keyArray(keys), as: "bigint[]")))"
        }
        // Text keys (``LoupeQuery/Predicate/textKeysNamed``) of a text column.
        guard let keys = predicate?.textKeysNamed, let key = self.key(type), let column = declared(type, key),
              column.type == "text" || column.type.hasPrefix("character varying") else { return "" }
        return " AND a0.\(SQL.identifier(key)) = ANY(\(bind(PostgresPages.arrayLiteral(keys), as: "text[]")))"
    }

    /// SQL for the key of `type`'s rows under `a0` when it is one integer column; nil otherwise.
    func integerKey(_ type: Int) -> String? {
        guard let k = key(type), let column = declared(type, k), ["smallint", "integer", "bigint"].contains(column.type) else { return nil }
        return "a0.\(SQL.identifier(k))"
    }

    /// The single key column of a type (nil for views, composite keys and tables without one).
    private func key(_ t: Int) -> String? {
        if case .column(let k, _) = schema.types[t].keyPolicy { return k }
        return nil
    }

    /// True when every text of the column is in NFC (and, with `ascii`, ASCII), checked once.
    func textIs(_ t: Int, _ column: String, ascii: Bool) throws -> Bool {
        guard let d = table(t) else { return false }
        let id = "\(t)/\(column)/\(ascii)"
        if let known = checks[id] { return known }
        let c = SQL.identifier(column) + (readsAsText(t, column) ? "::text" : "")
        let condition = ascii ? "\(c) ~ '[^\\x01-\\x7F]'" : "\(c) IS NOT NFC NORMALIZED"
        let found = try connection.query("SELECT EXISTS (SELECT 1 FROM \(d.relation.sqlName) WHERE \(condition))").rows.first?.first ?? nil
        let ok = found == "f"
        checks[id] = ok
        return ok
    }

    // MARK: Paths

    /// Where a path starts (the row at hand, or the element a SUBQUERY variable names) and the
    /// steps from there; nil for a variable not in scope.
    func origin(of p: Path, at start: Scope) -> (Scope, ArraySlice<LoupeQuery.Step>)? {
        if case .variable(let name)? = p.steps.first {
            guard let bound = variables[name.text] else { return nil }
            return (bound, p.steps.dropFirst())
        }
        return (start, p.steps[...])
    }

    func path(_ p: Path, _ start: Scope) throws -> Translated? {
        guard let (origin, steps) = origin(of: p, at: start) else { return nil }
        var current = origin
        let fromRoot = current.alias == "a0"
        if fromRoot, let counted = try backlinkCount(p, steps, at: origin) { return counted }
        var first: String?, correlation = "", joins: [String] = []
        var toMany = 0, toOneAfterMany = 0
        var value: Operand?
        for (i, step) in steps.enumerated() {
            let isLast = i == steps.count - 1
            let type = schema.types[current.type]
            switch step {
            case .name(let name):
                let attribute = type.attribute(named: name.text), relation = type.relation(named: name.text)
                if isLast, let a = attribute {
                    let column = type.attributes[a].name
                    value = Operand(sql: columnSQL(current, column), kind: kind(current.type, column), column: (current.type, column))
                } else if let r = relation {
                    // The column the foreign key names: the target's key, or a unique column
                    // (PostgreSQL's foreign keys name one row at most, as a load links them).
                    guard let fk = type.relations[r].foreignKey, let targetColumn = fk.targetAttribute ?? key(fk.targetType),
                          let target = table(fk.targetType) else { return nil }
                    let alias = newAlias(), from = current
                    let on = "\(alias).\(SQL.identifier(targetColumn)) = \(from.alias).\(SQL.identifier(fk.attribute))"
                    if first == nil { first = "\(target.relation.sqlName) \(alias)"; correlation = on } else { joins.append("LEFT JOIN \(target.relation.sqlName) \(alias) ON \(on)") }
                    if toMany > 0 { toOneAfterMany += 1 }
                    current = Scope(alias: alias, type: fk.targetType)
                } else {
                    return nil
                }
            case .links(let typeName, let relationName):
                guard let source = schema.type(named: typeName.text), let r = source.relation(named: relationName.text),
                      let fk = source.relations[r].foreignKey, fk.targetType == current.type,
                      let targetColumn = fk.targetAttribute ?? key(current.type), let s = table(source.index) else { return nil }
                let alias = newAlias()
                let on = "\(alias).\(SQL.identifier(fk.attribute)) = \(current.alias).\(SQL.identifier(targetColumn))"
                if first == nil { first = "\(s.relation.sqlName) \(alias)"; correlation = on } else { joins.append("JOIN \(s.relation.sqlName) \(alias) ON \(on)") }
                toMany += 1
                current = Scope(alias: alias, type: source.index)
            case .id:
                // (A type a load numbers has its rows' numbers as keys, not its key column's values.)
                guard isLast, let k = key(current.type), let d = table(current.type), !PostgresDatabase.isNumbered(d) else { return nil }
                value = Operand(sql: columnSQL(current, k), kind: kind(current.type, k), column: (current.type, k))
            case .variable, .type:
                return nil
            }
        }
        // A value through to-one hops from the statement's own rows: joined onto them.
        if fromRoot, toMany == 0, p.aggregate == nil, let value, let first {
            joinOntoRoot(first, on: correlation, joins)
            return .scalar(value)
        }
        let from = first.map { "FROM \($0)" + joins.map { " " + $0 }.joined() + " WHERE \(correlation)" }
        return try walked(p, from: from, toMany: toMany, toOneAfterMany: toOneAfterMany, value: value, element: current)
    }

    /// `@links.Source.relation.@count` of the statement's own rows as one grouped join: each
    /// key's count read from `SELECT fk, count(*) … GROUP BY fk` joined onto the rows (0 where
    /// none), where a correlated `(SELECT count(*) …)` per row cost one scan of the source table
    /// per row without an index on its foreign key (over 20 s on a million rows). Nil for any
    /// other path.
    private func backlinkCount(_ p: Path, _ steps: ArraySlice<LoupeQuery.Step>, at root: Scope) throws -> Translated? {
        guard p.aggregate == .count, steps.count == 1, case .links(let typeName, let relationName) = steps.first!,
              let source = schema.type(named: typeName.text), let r = source.relation(named: relationName.text),
              let fk = source.relations[r].foreignKey, fk.targetType == root.type,
              let targetColumn = fk.targetAttribute ?? key(root.type), let s = table(source.index) else { return nil }
        let alias = newAlias()
        let column = SQL.identifier(fk.attribute)
        rootJoins.append("LEFT JOIN (SELECT \(column) AS k, count(*) AS n FROM \(s.relation.sqlName) WHERE \(column) IS NOT NULL GROUP BY \(column)) \(alias) ON \(alias).k = a0.\(SQL.identifier(targetColumn))")
        return .scalar(Operand(sql: "coalesce(\(alias).n, 0)", kind: .number, column: nil, isCount: true))
    }

    /// A column of the row at `scope` as the engine reads it: a `real` as the double its text
    /// spells (a load reads `1.1`, not the float's 1.100000023841858), the others as they are.
    private func columnSQL(_ scope: Scope, _ column: String) -> String {
        let sql = "\(scope.alias).\(SQL.identifier(column))"
        if readsAsText(scope.type, column) { return "(\(sql)::text)" }
        guard let type = declared(scope.type, column)?.type else { return sql }
        if type == "real" { return "(\(sql)::text::float8)" }
        // The double a load reads (PostgreSQL converts through the text, as the load does).
        return Self.isWideNumeric(type) ? "(\(sql)::float8)" : sql
    }

    /// True for a `numeric` column whose values may have more than 15 significant digits (no
    /// precision declared, or more): a load reads each as the nearest double, so two values
    /// PostgreSQL tells apart (or a value and a literal) can be one double to the engine. Such
    /// a column is compared as `::float8`. Up to 15 digits, distinct values are distinct doubles
    /// and order as them, so the column is compared as it is (and its index serves).
    static func isWideNumeric(_ declaredType: String) -> Bool {
        guard declaredType.hasPrefix("numeric") else { return false }
        guard let open = declaredType.firstIndex(of: "("),
              let precision = Int(declaredType[declaredType.index(after: open)...].prefix { $0.isNumber }) else { return true }
        return precision > 15
    }

    /// True when the operand may hold NaN (a float, or `numeric`), which PostgreSQL orders
    /// above every number and the engine with none.
    private func mayHoldNaN(_ v: Operand) -> Bool {
        if v.kind == .floating { return true }
        guard let (t, name) = v.column else { return false }
        return declared(t, name)?.type.hasPrefix("numeric") ?? false
    }

    /// Joins what a path's to-one hops from the statement's own rows (`a0`) reach onto those
    /// rows: `first` on `correlation`, then `joins`. Each hop names one row at most, so no row
    /// is added.
    func joinOntoRoot(_ first: String, on correlation: String, _ joins: [String]) {
        rootJoins.append("LEFT JOIN \(first) ON \(correlation)")
        rootJoins += joins
    }

    /// An aggregate over a to-many walk's elements (`value`, nil for the objects themselves) as
    /// a select-list expression over its rows, and what it gives (its `sql` unused); nil when
    /// SQL does not aggregate those values as the engine does.
    func aggregated(_ aggregate: Aggregate, of value: Operand?) throws -> (select: String, result: Operand)? {
        switch aggregate {
        case .count: return ("count(*)", Operand(sql: "", kind: .number, column: nil, isCount: true))
        // The engine adds the decimals numbers are written as, exactly (``DecimalSum``), as
        // `sum(numeric)` does; a float's sum in PostgreSQL is binary, so it is left to the engine.
        case .sum:
            guard let value, value.kind == .number else { return nil }
            return ("coalesce(sum(\(value.sql)), 0)", Operand(sql: "", kind: value.kind, column: nil))
        case .avg:
            guard let value, value.kind == .number else { return nil }
            // Divided with 40 decimal places (the engine divides with 38 digits): the same double.
            let exact = "(sum(\(value.sql))::numeric * 1.\(String(repeating: "0", count: 40)))"
            return ("(\(exact) / nullif(count(\(value.sql)), 0))::float8", Operand(sql: "", kind: .floating, column: nil))
        case .min, .max:
            guard let value, [.number, .floating, .timestamp, .timestampWithZone, .date, .text].contains(value.kind) else { return nil }
            if value.kind == .text { guard let column = value.column, try textIs(column.type, column.name, ascii: false) else { return nil } }
            let collate = value.kind == .text ? " COLLATE \"C\"" : ""
            return ("\(aggregate == .min ? "min" : "max")(\(value.sql)\(collate))", Operand(sql: "", kind: value.kind, column: value.column))
        }
    }

    /// An aggregate over each of the statement's own rows' elements of one to-many hop, computed
    /// once for all of them (`GROUP BY` the hop's near end, `key`, over `tables` filtered by
    /// `filter`) and joined onto them by `rootKey`: PostgreSQL plans a lookup per row for the
    /// correlated form. Rows with no element get what the engine gives an empty collection (0
    /// for counts and sums, null otherwise).
    func groupedOntoRoot(_ aggregate: Aggregate, of value: Operand?, tables: String, key: String, filter: String, rootKey: String) throws -> Operand? {
        guard let (select, result) = try aggregated(aggregate, of: value) else { return nil }
        let alias = newAlias()
        rootJoins.append("LEFT JOIN (SELECT \(key) AS k, \(select) AS v \(tables) WHERE \(filter) GROUP BY 1) \(alias) ON \(alias).k = \(rootKey)")
        let sql = aggregate == .count || aggregate == .sum ? "coalesce(\(alias).v, 0)" : "\(alias).v"
        return Operand(sql: sql, kind: result.kind, column: result.column, isCount: result.isCount)
    }

    /// A path walked: `from` the tables its hops join (nil when it stays on the row at hand),
    /// how many of them are to-many and how many to-one hops follow one, the value it ends on
    /// (nil for objects), the objects it ends on. Applies its aggregate; a to-many walk is a
    /// collection, else a scalar.
    func walked(_ p: Path, from: String?, toMany: Int, toOneAfterMany: Int, value: Operand?, element current: Scope) throws -> Translated? {
        if let aggregate = p.aggregate {
            guard let from, toMany == 1, toOneAfterMany == 0, let (select, operand) = try aggregated(aggregate, of: value) else { return nil }
            return .scalar(Operand(sql: "(SELECT \(select) \(from))", kind: operand.kind, column: operand.column, isCount: operand.isCount))
        }
        guard let from else { return value.map(Translated.scalar) }
        if toMany == 0 {
            guard let value else { return nil }
            return .scalar(Operand(sql: "(SELECT \(value.sql) \(from))", kind: value.kind, column: value.column))
        }
        return .collection(Collection(from: from, value: value, element: value == nil ? current : nil, exact: toMany == 1 && toOneAfterMany == 0))
    }

    func expression(_ e: LoupeQuery.Expression, _ scope: Scope) throws -> Translated? {
        switch e {
        case .path(let p): return try path(p, scope)
        case .subqueryCount(let collectionPath, let variable, let inner, _):
            guard case .collection(let c)? = try path(collectionPath, scope), c.exact, let element = c.element else { return nil }
            variables[variable] = element
            defer { variables[variable] = nil }
            guard let condition = try predicate(inner, element) else { return nil }
            return .scalar(Operand(sql: "(SELECT count(*) \(c.from) AND (\(condition)))", kind: .number, column: nil, isCount: true))
        case .arithmetic, .negate:
            guard let (sql, floating) = try arithmetic(e, scope) else { return nil }
            computes = true
            // NaN as NULL: PostgreSQL orders NaN above every number and equal to itself, the
            // engine with none; NULL fails and passes each comparison with a number as NaN does.
            return .scalar(Operand(sql: floating ? "NULLIF(\(sql), 'NaN'::float8)" : sql, kind: floating ? .floating : .number, column: nil, computed: true))
        default: return nil
        }
    }

    /// True once a statement's SQL computes arithmetic, which PostgreSQL may refuse (a value out
    /// of range) where the engine computes on: its query then gives way (``rows(_:)``).
    private(set) var computes = false

    /// SQL whose value is the engine's arithmetic on `e` (``LoupeQuery/Arithmetic``), and
    /// whether it is a double (else a `bigint`); nil when it does not translate. Integers stay
    /// `bigint`s, each operand its number or NULL; `/` divides doubles, NULL for a zero divisor;
    /// a double operand makes the result a double. Where the engine goes on past PostgreSQL's
    /// range (an integer overflow, where it turns to doubles; a double overflowing to infinity
    /// or underflowing to zero) the server raises an error, and the statement is answered
    /// without this translation.
    func arithmetic(_ e: LoupeQuery.Expression, _ scope: Scope) throws -> (sql: String, floating: Bool)? {
        switch e {
        case .arithmetic(let op, let a, let b, _):
            guard let x = try arithmetic(a, scope), let y = try arithmetic(b, scope) else { return nil }
            switch op {
            case .add: return ("(\(x.sql) + \(y.sql))", x.floating || y.floating)
            case .subtract: return ("(\(x.sql) - \(y.sql))", x.floating || y.floating)
            case .multiply: return ("(\(x.sql) * \(y.sql))", x.floating || y.floating)
            case .divide: return ("(\(x.sql)::float8 / NULLIF(\(y.sql)::float8, 0))", true)
            }
        case .negate(let inner, _):
            return try arithmetic(inner, scope).map { ("(- \($0.sql))", $0.floating) }
        case .literal:
            switch ValueTest.constant(e) {
            case .int(let i)?: return (bind(String(i), as: "int8"), false)
            case .double(let d)? where d.isFinite: return (bind(String(d), as: "float8"), true)
            case .double?, nil: return nil
            case _?: return ("NULL::int8", false)   // not a number: the engine's arithmetic gives null
            }
        case .path:
            guard case .scalar(let v)? = try expression(e, scope) else { return nil }
            return arithmeticOperand(v)
        default:
            return nil
        }
    }

    /// A value as an operand of arithmetic: a count, or a column of a type whose every value
    /// is a number the engine holds (integers as `bigint`, `numeric` and floats as the doubles
    /// a load reads); nil otherwise.
    func arithmeticOperand(_ v: Operand) -> (sql: String, floating: Bool)? {
        if v.isCount { return (v.sql, false) }
        guard let (t, name) = v.column, let type = declared(t, name)?.type else { return nil }
        if ["smallint", "integer", "bigint", "oid"].contains(type) { return ("\(v.sql)::int8", false) }
        if type == "real" || type == "double precision" || type.hasPrefix("numeric") { return ("\(v.sql)::float8", true) }
        return nil
    }

    // MARK: Predicates

    /// A condition that is never NULL (so `NOT` means the engine's not), or nil.
    func predicate(_ p: LoupeQuery.Predicate, _ scope: Scope) throws -> String? {
        try p.sql(truth: "true", falsehood: "false") { try self.leaf($0, scope) }
    }

    private func leaf(_ p: LoupeQuery.Predicate, _ scope: Scope) throws -> String? {
        switch p {
        case .truthy: return nil
        case .between(let q, let e, let low, let high, _):
            guard let lo = ValueTest.constant(low), let hi = ValueTest.constant(high) else { return nil }
            return try quantified(q, e, scope) { v in
                guard let a = try self.literal(lo, for: v), let b = try self.literal(hi, for: v) else { return nil }
                return "coalesce(\(v.sql) >= \(a) AND \(v.sql) <= \(b)\(self.readsAsDate(v)), false)"
            }
        case .comparison(let c):
            guard let constant = ValueTest.constant(c.rhs), ValueTest.constant(c.lhs) == nil else { return nil }
            return try quantified(c.quantifier, c.lhs, scope) { v in try self.comparison(v, c, constant) }
        case .constant, .and, .or, .not:
            return nil   // written by `Predicate.sql`
        }
    }

    /// On a single value, the test; on a collection, `EXISTS` for ANY (the default), `NOT
    /// EXISTS … NOT` for ALL, `NOT EXISTS` for NONE.
    private func quantified(_ q: Quantifier?, _ e: LoupeQuery.Expression, _ scope: Scope, _ test: (Operand) throws -> String?) throws -> String? {
        switch try expression(e, scope) {
        case .scalar(let v)?:
            guard q == nil else { return nil }
            return try test(v)
        case .collection(let c)?:
            guard let v = c.value, let each = try test(v) else { return nil }
            switch q ?? .any {
            case .any: return "EXISTS (SELECT 1 \(c.from) AND (\(each)))"
            case .all: return "NOT EXISTS (SELECT 1 \(c.from) AND NOT (\(each)))"
            case .noneOf: return "NOT EXISTS (SELECT 1 \(c.from) AND (\(each)))"
            }
        case nil: return nil
        }
    }

    /// A literal as a parameter of the operand's kind, or nil when the kinds do not meet exactly.
    private func literal(_ value: Value, for v: Operand) throws -> String? {
        switch (value, v.kind) {
        // An integer computed against a double: compared as doubles, as the engine compares them.
        case (.double(let d), .number) where v.computed && d.isFinite: return bind(String(d), as: "float8")
        case (.int(let i), .number): return bind(String(i), as: "numeric")
        // Beyond 2^53 the engine compares an integer as the nearest double (2^53 + 1 equals
        // 2^53), where PostgreSQL compares exactly: left to the engine.
        case (.double(let d), .number) where d.isFinite && abs(d) < 0x1p53: return bind(String(d), as: "numeric")
        case (.int(let i), .floating): return bind(String(i), as: "float8")
        case (.double(let d), .floating) where d.isFinite: return bind(String(d), as: "float8")
        case (.bool(let b), .boolean): return bind(b ? "true" : "false", as: "boolean")
        case (.date(let d), .timestamp), (.date(let d), .date): return "(" + bind(DateText.iso(d), as: "timestamptz") + " AT TIME ZONE 'UTC')"
        case (.date(let d), .timestampWithZone): return bind(DateText.iso(d), as: "timestamptz")
        case (.date(let d), .persistDate):
            // Persist writes whole seconds; a literal between two seconds has no text of that form.
            let text = DateText.persist(d)
            guard d.timeIntervalSince1970.rounded(.down) == d.timeIntervalSince1970, text.utf8.count == 21, text.first != "-" else { return nil }
            return bind(text, as: "text")
        case (.string(let s), .text):
            // Both sides in NFC: canonical equivalence is then byte equality.
            guard Array(s.precomposedStringWithCanonicalMapping.unicodeScalars) == Array(s.unicodeScalars), let column = v.column,
                  try textIs(column.type, column.name, ascii: false) else { return nil }
            return bind(s, as: "text")
        default: return nil
        }
    }

    /// True when the engine finds no value of this kind equal to the literal, nor ordered with it
    /// (text and numbers, dates and numbers, booleans and text…): the comparison's answer is then
    /// known without reading a row.
    private func unrelated(_ kind: Kind, _ literal: Value) -> Bool {
        switch (kind, literal) {
        case (.text, .int), (.text, .double), (.text, .bool),
             (.timestamp, .int), (.timestamp, .double), (.timestamp, .bool), (.timestamp, .string),
             (.timestampWithZone, .int), (.timestampWithZone, .double), (.timestampWithZone, .bool), (.timestampWithZone, .string),
             (.date, .int), (.date, .double), (.date, .bool), (.date, .string),
             (.persistDate, .int), (.persistDate, .double), (.persistDate, .bool), (.persistDate, .string),
             (.number, .date), (.floating, .date), (.floating, .bool), (.boolean, .string), (.boolean, .date), (.boolean, .double):
            // (A date column against text parses the text in the engine: not constant, unless
            // it is no date at all.)
            if case .string(let s) = literal, kind != .text, kind != .boolean { return DateText.parse(s) == nil }
            return true
        default:
            return false
        }
    }

    /// ` AND …` keeping a date or timestamp column's test to the values a load reads as dates:
    /// `infinity`, `-infinity` and years outside 1–9999 are read as text (``DateText/parse(_:)``),
    /// which no date equals or orders with; empty for other kinds.
    private func readsAsDate(_ v: Operand) -> String {
        switch v.kind {
        case .timestampWithZone: return " AND \(v.sql) >= '0001-01-01 00:00:00+00'::timestamptz AND \(v.sql) < '10000-01-01 00:00:00+00'::timestamptz"
        case .timestamp: return " AND \(v.sql) >= '0001-01-01'::timestamp AND \(v.sql) < '10000-01-01'::timestamp"
        case .date: return " AND \(v.sql) >= '0001-01-01'::date AND \(v.sql) < '10000-01-01'::date"
        default: return ""
        }
    }

    /// A known answer that still names the operand, so the parameters its SQL binds stay in
    /// the statement (PostgreSQL refuses a parameter the text does not use).
    private func known(_ answer: Bool, _ v: Operand) -> String {
        answer ? "(true OR \(v.sql) IS NULL)" : "(false AND \(v.sql) IS NULL)"
    }

    private func comparison(_ v: Operand, _ c: Comparison, _ constant: Value) throws -> String? {
        if v.computed {
            // Arithmetic only against numbers: its NULL also stands for NaN, which null, text
            // or a date would tell apart.
            func isNumber(_ value: Value) -> Bool { if case .int = value { return true }; if case .double = value { return true }; return false }
            switch constant {
            case .array(let items) where c.op == .in && items.allSatisfy(isNumber): break
            case _ where isNumber(constant) && c.op != .in: break
            default: return nil
            }
        }
        if case .null = constant {
            switch c.op {
            case .equal: return "\(v.sql) IS NULL"
            case .notEqual: return "\(v.sql) IS NOT NULL"
            case .less, .lessOrEqual, .greater, .greaterOrEqual, .beginsWith, .endsWith, .like: return known(false, v)   // nothing orders with null
            default: return nil
            }
        }
        if v.kind != .other, unrelated(v.kind, constant), c.op != .in, c.op != .contains, c.op != .matches {
            return known(c.op == .notEqual, v)
        }
        let ascii = c.options.contains(.caseInsensitive)
        if c.options.contains(.diacriticInsensitive) { return nil }
        func asciiText() throws -> Bool {
            guard v.kind == .text, let column = v.column, case .string(let s) = constant, s.unicodeScalars.allSatisfy({ $0.value < 128 && $0.value > 0 }) else { return false }
            return try textIs(column.type, column.name, ascii: true)
        }
        let lhs = ascii ? "lower(\(v.sql))" : v.sql
        switch c.op {
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
            if ascii { guard try asciiText() else { return nil } }
            guard let lit = ascii ? bind(constant.stringValue?.lowercased(), as: "text") : try literal(constant, for: v) else { return nil }
            let op = ["==": "=", "!=": "=", "<": "<", "<=": "<=", ">": ">", ">=": ">="][c.op.rawValue]!
            let collate = v.kind == .text || v.kind == .persistDate ? " COLLATE \"C\"" : ""
            // NaN is above every number to PostgreSQL, and neither above nor below to the engine.
            let notNaN = (c.op == .greater || c.op == .greaterOrEqual) && mayHoldNaN(v) ? " AND \(lhs) <> 'NaN'" : ""
            let test = "coalesce(\(lhs)\(collate) \(op) \(lit)\(notNaN)\(readsAsDate(v)), false)"
            return c.op == .notEqual ? "NOT \(test)" : test
        case .beginsWith, .endsWith, .contains:
            guard try asciiText(), case .string(let s) = constant else { return nil }
            let lit = bind(ascii ? s.lowercased() : s, as: "text")
            switch c.op {
            case .beginsWith: return "coalesce(starts_with(\(lhs), \(lit)), false)"
            case .endsWith: return "coalesce(right(\(lhs), length(\(lit))) = \(lit), false)"
            default: return "coalesce(strpos(\(lhs), \(lit)) > 0, false)"
            }
        case .like:
            guard v.kind == .text, case .string(let pattern) = constant else { return nil }
            if ascii { guard try asciiText() else { return nil } }
            var sqlPattern = ""
            for ch in (ascii ? pattern.lowercased() : pattern).unicodeScalars {
                switch ch {
                case "*": sqlPattern += "%"
                case "?": sqlPattern += "_"
                case "%", "_", "\\": sqlPattern += "\\" + String(ch)
                default: sqlPattern.unicodeScalars.append(ch)
                }
            }
            return "coalesce(\(lhs) LIKE \(bind(sqlPattern, as: "text")) ESCAPE '\\', false)"
        case .in:
            guard case .array(let items) = constant, items.count != 1 || v.kind != .text, !ascii else { return nil }
            var literals: [String] = []
            for item in items {
                if v.kind != .other, unrelated(v.kind, item) { continue }   // never equal
                guard let l = try literal(item, for: v) else { return nil }
                literals.append(l)
            }
            if literals.isEmpty { return "false" }
            return "coalesce(\(v.sql) IN (\(literals.joined(separator: ", ")))\(readsAsDate(v)), false)"
        case .matches, .fullText:
            return nil
        }
    }

    // MARK: Statements

    /// The rows a statement over `type` reads: the table (aliased `a0`), a condition they meet
    /// before the statement's (empty, or ending in `AND `), and their key columns. A type a load
    /// numbers (a view, a table without a primary key or keyed by a date) is its rows numbered
    /// in the order a load reads them (``PostgresDatabase/numbered(_:)``), keyed by that number.
    func root(_ type: Int) -> (table: String, filter: String, keys: [String])? {
        guard let root = table(type) else { return nil }
        if PostgresDatabase.isNumbered(root) {
            let (from, position) = PostgresDatabase.numbered(root)
            return (from, "", ["a0.\(SQL.identifier(position))"])
        }
        return (root.relation.sqlName, "", root.keys.map { "a0.\(SQL.identifier($0))" })
    }

    /// A value a query read, as the engine holds it: by the column's type.
    func value(_ text: String?, of operand: Operand, type oid: UInt32) -> Value {
        PostgresDatabase.value(text, type: oid)
    }

    /// The objects of `type` whose keys are `keys` (each row the key's columns as text, of types
    /// `oids`), read as a load reads them, in a graph of their own, in that order.
    func objects(of type: Int, keys: [[String?]], types oids: [UInt32]) throws -> (ObjectGraph, [ObjectRef])? {
        guard let root = table(type) else { return nil }
        let builder = GraphBuilder(formatName: PostgresDatabase.formatName)
        let t = PostgresDatabase.addType(root, to: builder)
        if PostgresDatabase.isNumbered(root) {
            let positions = keys.compactMap { $0.first.flatMap { $0.flatMap { Int64($0) } } }
            try PostgresDatabase.readRows(connection, root, type: t, into: builder, positions: positions)
            let graph = builder.finish()
            return (graph, positions.compactMap { graph.ref(type: graph.types[0], id: .int($0)) })
        }
        let keyValues = keys.map { row in root.keys.indices.map { PostgresDatabase.value(row[$0], type: oids[$0]) } }
        if !keyValues.isEmpty {
            // Keys as one array parameter per key column, typed as the column (any number of
            // keys: a parameter per key would stop at PostgreSQL's 65,535).
            var keyParameters: [String?] = []
            var columns: [String] = [], arrays: [String] = []
            for (i, k) in root.keys.enumerated() {
                keyParameters.append(PostgresPages.arrayLiteral(keys.map { $0[i] }))
                columns.append(SQL.identifier(k))
                arrays.append("$\(i + 1)::\(root.columns.first { $0.name == k }?.type ?? "text")[]")
            }
            let condition = root.keys.count == 1 ? "\(columns[0]) = ANY(\(arrays[0]))"
                : "(\(columns.joined(separator: ", "))) IN (SELECT * FROM unnest(\(arrays.joined(separator: ", "))))"
            try PostgresDatabase.readRows(connection, root, type: t, into: builder, condition: condition, parameters: keyParameters)
        }
        let graph = builder.finish()
        let refs = keyValues.compactMap { values -> ObjectRef? in
            let id: ObjectID? = values.count == 1 ? ObjectID(keyValue: values[0]) : .composite(values.map { ObjectID(keyValue: $0) ?? .string("") })
            return id.flatMap { graph.ref(type: graph.types[0], id: $0) }
        }
        return (graph, refs)
    }

    /// A statement's answer as SQL gives it: objects and projected rows with their keys as
    /// PostgreSQL wrote them (text, with the key columns' type OIDs).
    enum Answered {
        case count(Int)
        case groups(key: String, rows: [(key: Value, count: Int)], total: Int)
        case projection(columns: [String], rows: [[Value]], keys: [[String?]], keyTypes: [UInt32])
        case objects(type: Int, keys: [[String?]], keyTypes: [UInt32])
    }

    /// The statement's answer with its objects read by key as a load reads them, or nil.
    func answer(_ statement: LoupeQuery.Statement) throws -> (QueryResult, ObjectGraph)? {
        try result(of: try answered(statement))
    }

    /// The result of what ``answered(_:)`` gave, its objects read by key.
    private func result(of answered: Answered?) throws -> (QueryResult, ObjectGraph)? {
        let empty = GraphBuilder(formatName: "").finish()
        switch answered {
        case nil: return nil
        case .count(let n)?: return (.count(n), empty)
        case .groups(let key, let rows, _)?: return (.groups(key: key, rows: rows, objects: []), empty)
        case .projection(let columns, let rows, _, _)?: return (.projection(columns: columns, rows: rows, refs: []), empty)
        case .objects(let type, let keys, let keyTypes)?:
            guard let (graph, refs) = try objects(of: type, keys: keys, types: keyTypes),
                  let table = graph.type(named: schema.types[type].name.rawValue) else { return nil }
            return (.objects(type: table, refs: refs), graph)
        }
    }

    /// Writes the statement's result as ``answer(_:)``'s prints, its objects read `partSize` at a
    /// time, each part written and let go; false, with nothing written, when it does not translate.
    func write(_ statement: LoupeQuery.Statement, mode: OutputMode, toTerminal: Bool, to sink: OutputSink, partSize: Int) throws -> Bool {
        let answered = try answered(statement)
        guard case .objects(let type, let keys, let keyTypes)? = answered, keys.count > partSize, table(type) != nil else {
            guard let (result, graph) = try result(of: answered) else { return false }
            result.write(mode, graph: graph, toTerminal: toTerminal, to: sink)
            return true
        }
        let attributes = schema.types[type].attributes.map(\.name)
        var keyColumn: String?
        if case .column(let key, _) = schema.types[type].keyPolicy { keyColumn = key }
        var writer = QueryResult.ObjectsWriter(attributes: attributes, keyColumn: keyColumn, mode: mode, toTerminal: toTerminal, to: sink)
        for start in stride(from: 0, to: keys.count, by: partSize) {
            // Never nil: the type's table was found above.
            guard let (graph, refs) = try objects(of: type, keys: Array(keys[start ..< min(keys.count, start + partSize)]), types: keyTypes),
                  let table = graph.type(named: schema.types[type].name.rawValue) else { continue }
            writer.write(type: table, refs: refs, graph: graph)
        }
        writer.finish()
        return true
    }

    /// The statement's answer with its objects as keys (paged mode reads them a page at a
    /// time), or nil — also when a key is a value a load does not key by (a date: a load
    /// numbers such rows instead).
    func sourceAnswer(_ statement: LoupeQuery.Statement) throws -> SourceAnswer? {
        func ids(_ keys: [[String?]], _ types: [UInt32]) -> [ObjectID]? {
            var out: [ObjectID] = []
            out.reserveCapacity(keys.count)
            for row in keys {
                guard let id = PostgresDatabase.key(row, types: types) else { return nil }
                out.append(id)
            }
            return out
        }
        switch try answered(statement) {
        case nil: return nil
        case .count(let n)?: return .count(n)
        case .groups(let key, let rows, let total)?: return .groups(key: key, rows: rows, total: total)
        case .projection(let columns, let rows, let keys, let keyTypes)?:
            return ids(keys, keyTypes).map { .projection(columns: columns, rows: rows, keys: $0) }
        case .objects(let type, let keys, let keyTypes)?:
            return ids(keys, keyTypes).map { .objects(typeName: schema.types[type].name.rawValue, keys: $0) }
        }
    }

    /// The rows of one of the statement's queries; nil when it computes arithmetic
    /// (``computes``) and the server found a value out of its range, where the engine computes
    /// on: a savepoint takes the error back, and the statement is answered without this
    /// translation (by the chunks over the budget, by a load under it).
    private func rows(_ sql: String) throws -> PostgresConnection.Rows? {
        guard computes else { return try connection.query(sql, parameters) }
        _ = try connection.query("SAVEPOINT loupe_arithmetic")
        do {
            let rows = try connection.query(sql, parameters)
            _ = try connection.query("RELEASE SAVEPOINT loupe_arithmetic")
            return rows
        } catch let error as PostgresError where error.isArithmeticRange {
            _ = try connection.query("ROLLBACK TO SAVEPOINT loupe_arithmetic")
            return nil
        }
    }

    private func answered(_ statement: LoupeQuery.Statement) throws -> Answered? {
        guard let (name, predicate) = statement.pushdownRoot, let type = schema.type(named: name.text), let root = root(type.index) else { return nil }
        let scope = Scope(alias: "a0", type: type.index)
        let condition = try predicate.map { try self.predicate($0.comparingKeys(from: type.index, in: schema), scope) } ?? "true"
        guard let condition else { return nil }
        /// The rows' `FROM … WHERE`, with the joins the statement's to-one paths made so far.
        // The condition in parentheses: an `OR` in it must not reach past the root's filter (Persist's type).
        let lookup = keyLookup(predicate, type.index)
        var from: String { "FROM \(root.table) a0" + rootJoins.map { " " + $0 }.joined() + " WHERE \(root.filter)(\(condition))\(lookup)" }
        let keyOrder = root.keys
        switch statement {
        case .count:
            guard let rows = try rows("SELECT count(*) \(from)") else { return nil }
            let n = rows.rows.first?.first.flatMap { $0.flatMap { Int($0) } } ?? 0
            return .count(n)
        case .group(let q, let by):
            guard case .scalar(let key)? = try path(by, scope) else { return nil }
            guard let result = try rows("SELECT \(key.sql) \(from) ORDER BY \(keyOrder.joined(separator: ", "))") else { return nil }
            let keys = result.rows.map { [value($0[0], of: key, type: result.types[0])] }
            return .groups(key: by.description, rows: QueryEngine.groupClauses(QueryEngine.frequencyRows(keys), q.clauses), total: keys.count)
        case .query(let q):
            // Clauses SQL says exactly: a sort (first), then a limit.
            var order = keyOrder, limit = ""
            for (i, clause) in q.clauses.enumerated() {
                switch clause {
                case .sort(let keys) where i == 0:
                    var terms: [String] = []
                    for k in keys {
                        guard case .scalar(let v)? = try path(k.path, scope), v.kind != .other else { return nil }
                        if v.kind == .text { guard let column = v.column, try textIs(column.type, column.name, ascii: false) else { return nil } }
                        terms.append(v.sql + (v.kind == .text || v.kind == .persistDate ? " COLLATE \"C\"" : "") + (k.ascending ? " ASC NULLS FIRST" : " DESC NULLS LAST"))
                    }
                    order = terms + keyOrder
                case .limit(let n, let offset) where i == q.clauses.count - 1:
                    limit = " LIMIT \(n) OFFSET \(offset)"
                default:
                    return nil
                }
            }
            var columns = root.keys
            var projected: [Operand] = []
            for column in q.projection ?? [] {
                guard case .scalar(let v)? = try expression(column.expression, scope), v.column != nil || v.isCount else { return nil }
                projected.append(v)
                columns.append(v.sql)
            }
            guard let result = try rows("SELECT \(columns.joined(separator: ", ")) \(from) ORDER BY \(order.joined(separator: ", "))\(limit)") else { return nil }
            let width = root.keys.count
            if let projection = q.projection {
                let rows = result.rows.map { row in projected.indices.map { value(row[width + $0], of: projected[$0], type: result.types[width + $0]) } }
                return .projection(columns: ResultTable.distinctNames(projection.map(\.name)), rows: rows,
                                   keys: result.rows.map { Array($0.prefix(width)) }, keyTypes: Array(result.types.prefix(width)))
            }
            return .objects(type: type.index, keys: result.rows.map { Array($0.prefix(width)) }, keyTypes: Array(result.types.prefix(width)))
        default:
            return nil
        }
    }
}

private extension Value {
    var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
}
