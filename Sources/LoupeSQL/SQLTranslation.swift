import Foundation
import GRDB
import LoupeModel
import LoupeQuery
import LoupeStore

/// One statement's predicates and paths as SQL over a relational file's tables.
///
/// SQL does the structure: rows, joins along foreign keys, backlinks as correlated `EXISTS` and
/// `count(*)`; what values mean stays the engine's (``PredicateTranslation``). Anything whose exact meaning SQL cannot reproduce (arithmetic not compared with a number, paths that end
/// on objects, collections whose multiplicity would differ, names a load would resolve otherwise)
/// makes the translation return nil, and the caller answers in memory instead.
final class SQLTranslation: PredicateTranslation {
    let layout: RelationalLayout

    init(layout: RelationalLayout, db: Database, facts: FileFacts = FileFacts()) {
        self.layout = layout
        super.init(graph: layout.graph, db: db, facts: facts)
    }

    override func convert(_ cell: DatabaseValue, _ conversion: Conversion) -> Value {
        if case .cell(let type, let attribute) = conversion { return layout.value(cell, type: type, attribute: attribute) }
        return super.convert(cell, conversion)
    }

    /// `MATCH` asked of the table's module: its rows by rowid. The query is checked first (a
    /// query the module cannot read is the user's error, said as the engine says it, never
    /// SQLite's error about SQL Loupe wrote).
    override func fullText(_ c: Comparison, _ scope: Scope) throws -> String? {
        let target = try FullTextTarget(c, on: graph.types[scope.type])
        guard let rowid = layout.tables[scope.type]?.rowid else { return nil }
        let table = graph.types[scope.type].name.rawValue
        if case .failure(let refusal) = try RelationalFormat.VirtualTables.rowids(db, table: table, column: target.column, query: target.query, firstOnly: true) {
            throw target.refusal(refusal)
        }
        return "\(scope.alias).\(rowid) IN (\(RelationalFormat.VirtualTables.matchingSQL(table: table, column: target.column, query: target.query)))"
    }

    /// `alias.column` for a type's key, or nil when the key is not one column or the rowid.
    private func key(_ type: Int, alias: String) -> String? {
        switch graph.types[type].keyPolicy {
        case .column(let name, _) where layout.joined(type) != nil: return "\(alias).\(SQL.identifier(name))"
        case .rowid: return layout.tables[type].map { "\(alias).\($0.rowid)" }
        default: return nil
        }
    }

    /// ``PredicateTranslation/keyLookup(_:key:)`` on the rows of `type` under `alias`, when its
    /// key is always an integer (its rowid), or ``PredicateTranslation/textKeyLookup(_:key:)``
    /// when it is one column of text affinity; empty otherwise.
    func keyLookup(_ predicate: LoupeQuery.Predicate?, _ type: Int, alias: String) -> String {
        guard let key = key(type, alias: alias) else { return "" }
        if integerKeyed(type) { return keyLookup(predicate, key: key) }
        guard case .column(let name, _) = graph.types[type].keyPolicy, layout.textAffinity(type, name) else { return "" }
        return textKeyLookup(predicate, key: key)
    }

    // MARK: Keys

    /// SQL true when the foreign key value `f` names the object whose key is `k`, for a relation
    /// that ``keysMatchExactly(_:source:)`` cleared: equal numbers (integers and reals by
    /// value), equal text byte for byte, equal blobs. A plain `=` first, so an index on either
    /// serves (it compares text by the key column's collation: `NOCASE` would pair `poetry`
    /// with `Poetry`, which a load does not link), then the same `=` by bytes.
    func keyMatch(_ k: String, _ f: String) -> String {
        "\(k) = \(f) AND \(k) = \(f) COLLATE BINARY AND (typeof(\(k)) = typeof(\(f)) OR (typeof(\(k)) IN ('integer', 'real') AND typeof(\(f)) IN ('integer', 'real')))"
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
        guard let targetTable = layout.joined(fk.targetType), let k = key(fk.targetType, alias: SQL.identifier(targetTable.name)) else { return false }
        return try partMatchesExactly(source: source, column: fk.attribute, target: fk.targetType, targetSQL: k)
    }

    /// The same for a foreign key of several columns, part by part, when its parts name the
    /// target's primary key (so that at most one row matches, as a load links one).
    private func keysMatchExactly(_ key: CompositeKey, source: Int) throws -> Bool {
        guard graph.types[key.targetType].keyPolicy.keyColumns == key.targetColumns, let targetTable = layout.joined(key.targetType) else { return false }
        return try zip(key.columns, key.targetColumns).allSatisfy { column, targetColumn in
            try partMatchesExactly(source: source, column: column, target: key.targetType, targetSQL: "\(SQL.identifier(targetTable.name)).\(SQL.identifier(targetColumn))")
        }
    }

    /// SQL true when the composite foreign key `key` of the row under `source` names the row
    /// under `target` (``keyMatch(_:_:)`` part by part).
    private func compositeMatch(_ key: CompositeKey, target: String, source: String) -> String {
        zip(key.columns, key.targetColumns).map { keyMatch("\(target).\(SQL.identifier($1))", "\(source).\(SQL.identifier($0))") }.joined(separator: " AND ")
    }

    /// ``keysMatchExactly(_:source:)`` for one column of type `source` against the target's
    /// column `targetSQL` (qualified by the target table's name).
    private func partMatchesExactly(source: Int, column: String, target: Int, targetSQL k: String) throws -> Bool {
        guard let sourceTable = layout.joined(source), let targetTable = layout.joined(target),
              let fkColumn = sourceTable.columns.first(where: { $0.name == column }), !fkColumn.isDate else { return false }
        let id = "\(source)/\(column)→\(target)/\(k)"
        if let known = relationChecks[id] { return known }
        func exists(_ table: String, _ condition: String) throws -> Bool { try facts.exists(db, table: table, where: condition) }
        let f = SQL.identifier(column)
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
    /// A column that is not a date column (whose numbers are dates) holds the engine's numbers as
    /// SQL's; one that holds nothing but numbers (and NULL), as its facts say, is compared without
    /// a `typeof` test.
    override func plainNumber(_ value: Operand) -> (sql: String, onlyNumbers: Bool)? {
        if isNeverNull(value) { return (value.sql, true) }
        guard case .cell(let type, let attribute) = value.conversion, !(layout.joined(type)?.columns[attribute].isDate ?? true) else { return nil }
        return (value.sql, cellKinds(value)?.isSubset(of: ["integer", "real", "null"]) ?? false)
    }

    /// The storage classes a plain (not date) column under `value` holds, a fact; nil for
    /// anything else.
    private func cellKinds(_ value: Operand) -> Set<String>? {
        guard case .cell(let type, let attribute) = value.conversion, value.sql.hasSuffix("." + SQL.identifier(graph.types[type].attributes[attribute].name)),
              let table = layout.joined(type), !table.columns[attribute].isDate else { return nil }
        return try? kinds(of: table.columns[attribute].name, in: table.name)
    }

    /// The keys of rows that are always integers (a rowid, an `INTEGER PRIMARY KEY`), as SQL
    /// names them in this statement.
    private var integerKeys: Set<String> = []

    override func isNeverNull(_ value: Operand) -> Bool {
        switch value.conversion {
        case .key: return integerKeys.contains(value.sql)
        case .cell: return cellKinds(value).map { !$0.isEmpty && $0.isSubset(of: ["integer", "real"]) } ?? false
        default: return false
        }
    }

    override func numberAgainstText(_ c: Comparison, _ scope: Scope) throws -> Bool {
        guard [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual].contains(c.op),
              case .path(let path) = c.lhs, path.aggregate == nil, path.steps.count == 1, case .name(let name) = path.steps[0],
              case .literal(.string, _) = c.rhs else { return false }
        let type = graph.types[scope.type]
        guard let a = type.attribute(named: name.text), let table = layout.joined(scope.type) else { return false }
        if table.columns[a].isDate { return true }
        let kinds = try kinds(of: table.columns[a].name, in: table.name)
        return kinds.isSubset(of: ["integer", "real", "null"]) && kinds.contains { $0 != "null" }
    }
    /// A path from `scope`'s row: a scalar (attributes through to-one relations, or an aggregate
    /// of a collection) or a collection (through backlinks).
    override func path(_ p: Path, _ start: Scope) throws -> Translated? {
        guard let (origin, steps) = self.start(of: p, at: start) else { return nil }
        var current = origin
        var hops = Hops()
        var value: Operand?
        // A path that is one backlink into an integer-keyed row: its count as a GROUP BY.
        var backlinkGroups: ((String) -> String)?
        // The to-one hops so far, while every one is keyed by integers (nil once one is not).
        var integerHops: [(from: String, foreignKey: String, table: String, alias: String, key: String)]? = []

        func enter(_ type: Int, on condition: (String) -> String?, toManyStep: Bool) -> Bool {
            guard let table = layout.joined(type) else { return decline(.relationsWithoutRowid) ?? false }
            let alias = newAlias()
            guard let on = condition(alias) else { return false }
            hops.enter("\(SQL.identifier(table.name)) \(alias)", on: on, toManyStep: toManyStep)
            current = Scope(alias: alias, type: type)
            return true
        }

        for (i, step) in steps.enumerated() {
            let isLast = i == steps.count - 1
            let type = graph.types[current.type]
            switch step {
            case .name(let name):
                let attribute = type.attribute(named: name.text), relation = type.relation(named: name.text)
                if isLast, let a = attribute, let table = layout.joined(current.type) {
                    value = Operand(sql: "\(current.alias).\(SQL.identifier(table.columns[a].name))", conversion: .cell(type: current.type, attribute: a))
                } else if let r = relation, let key = type.relations[r].compositeKey {
                    // Through a foreign key of several columns: a join on every part.
                    guard !type.relations[r].isToMany else { return nil }
                    guard try keysMatchExactly(key, source: current.type) else { return decline(.affinityKeys) }
                    let from = current
                    guard enter(key.targetType, on: { alias in self.compositeMatch(key, target: alias, source: from.alias) }, toManyStep: false) else { return nil }
                    integerHops = nil
                } else if let r = relation {
                    let column = type.relations[r]
                    guard !column.isToMany, let fk = column.foreignKey, fk.targetAttribute == nil else { return nil }
                    guard try keysMatchExactly(fk, source: current.type) else { return decline(.affinityKeys) }
                    let from = current
                    guard enter(fk.targetType, on: { alias in
                        self.key(fk.targetType, alias: alias).map { self.keyMatch($0, "\(from.alias).\(SQL.identifier(fk.attribute))") }
                    }, toManyStep: false) else { return nil }
                    if hops.toMany == 0, integerKeyed(fk.targetType), let table = layout.joined(fk.targetType), let k = key(fk.targetType, alias: current.alias) {
                        integerHops?.append((from.alias, SQL.identifier(fk.attribute), SQL.identifier(table.name), current.alias, k))
                    } else {
                        integerHops = nil
                    }
                } else {
                    return nil
                }
            case .links(let typeName, let relationName):
                if let source = graph.type(named: typeName.text), let r = source.relation(named: relationName.text),
                   let key = source.relations[r].compositeKey, key.targetType == current.type {
                    guard try keysMatchExactly(key, source: source.index) else { return decline(.affinityKeys) }
                    let target = current
                    guard enter(source.index, on: { alias in self.compositeMatch(key, target: target.alias, source: alias) }, toManyStep: true) else { return nil }
                    continue
                }
                guard let source = graph.type(named: typeName.text), let r = source.relation(named: relationName.text),
                      let s = graph.types.firstIndex(where: { $0.name == source.name }),
                      let fk = source.relations[r].foreignKey, fk.targetAttribute == nil, fk.targetType == current.type,
                      let targetKey = key(current.type, alias: current.alias) else { return nil }
                guard try keysMatchExactly(fk, source: s) else { return decline(.affinityKeys) }
                guard enter(s, on: { alias in self.keyMatch(targetKey, "\(alias).\(SQL.identifier(fk.attribute))") }, toManyStep: true) else { return nil }
                if steps.count == 1, integerKeyed(fk.targetType), let table = layout.joined(s) {
                    let alias = current.alias
                    let column = "\(alias).\(SQL.identifier(fk.attribute))"
                    backlinkGroups = { having in
                        "\(targetKey) IN (SELECT \(column) FROM \(SQL.identifier(table.name)) \(alias) WHERE typeof(\(column)) IN ('integer', 'real') GROUP BY \(column) HAVING \(having))"
                    }
                }
            case .id:
                guard isLast, let k = key(current.type, alias: current.alias) else { return nil }
                if integerKeyed(current.type) { integerKeys.insert(k) }
                value = Operand(sql: k, conversion: .key)
            case .variable, .type:
                return nil
            }
        }
        var reaches: ((String) -> String)?
        if hops.toMany == 0, let integerHops, !integerHops.isEmpty {
            reaches = { condition in
                var inner = condition
                for hop in integerHops.reversed() {
                    inner = "typeof(\(hop.from).\(hop.foreignKey)) IN ('integer', 'real') AND \(hop.from).\(hop.foreignKey) IN (SELECT \(hop.key) FROM \(hop.table) \(hop.alias) WHERE \(inner))"
                }
                return inner
            }
        }
        return walked(p, from: hops.from, toMany: hops.toMany, toOneAfterMany: hops.toOneAfterMany, value: value, element: current,
                      countGroups: backlinkGroups, reaches: reaches)
    }
}
