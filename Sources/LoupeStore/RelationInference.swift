import Foundation
import GRDB
import LoupeModel
import Synchronization

/// A relation a load infers in a file that does not declare it (``RelationalFormat/inferRelations``):
/// `table`'s column `column`, named like a key, whose every value names a row of `target` by
/// its key. Paged mode finds these over the file in SQL (``RelationalFormat/inferredKeys(_:loaded:builder:epoch:file:)``)
/// and links each window's rows by them as a load links its rows.
public struct InferredKey: Codable, Sendable, Hashable {
    public let table: String
    public let column: String
    public let target: String

    public init(table: String, column: String, target: String) {
        self.table = table
        self.column = column
        self.target = target
    }
}

/// How nearly a column's values must name rows of a table for a load to infer a relation from
/// it: real files keep a few rows whose key names a row since deleted (a well-known sample has 29
/// of 830 orders naming missing customers), and a relation that is all-or-nothing would leave the
/// other 801 unlinked. At most one value in ten may name no row (each then a broken link, counted
/// by `schema` and shown in the detail pane), and at least one must name one.
enum InferenceTolerance {
    /// The share of a column's non-null values that may name no row.
    static let strayShare = 0.1

    /// True when `stray` values naming no row, of `total` non-null values, still make a relation.
    static func allows(stray: Int, of total: Int, share: Double = strayShare) -> Bool {
        total > stray && Double(stray) <= Double(total) * share
    }
}

extension RelationalFormat {
    /// The relations a load of the file would infer, decided over the file without loading it:
    /// for each column the load tries (named like a key, not declared a foreign key, not the
    /// table's key, holding some value), in the load's order, the first candidate table whose key
    /// holds nearly every value of the column (``InferenceTolerance``) as the load's key index finds it (the value itself or its
    /// affinity twin, text equal as Swift compares it). `loaded` and `builder` are a schema-only
    /// load's tables and types (each type with its key policy), before it links them.
    ///
    /// Each value is first matched in SQL by an exact, indexed lookup of the same value (same
    /// storage class, same bytes) or of its twin (an integer and its decimal text); the rare
    /// values SQL cannot decide so (reals, dates, text a twin only Swift reads, text equal only
    /// under Unicode equivalence) are decided one by one in Swift, from candidates SQL finds.
    /// A candidate is dropped as soon as its stray values are more than the tolerance allows. With `file` (the file
    /// `db` reads), the columns are decided two at a time, each on a connection of its own.
    static func inferredKeys(_ db: Database, loaded: [(Source, Int)], builder: GraphBuilder, epoch: Double, file: StoreFile? = nil) throws -> [InferredKey] {
        guard ReadOptions.current.infersRelations else { return [] }
        let byLowerName = Dictionary(loaded.map { ($0.0.name.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })
        var columns: [KeyColumn] = []
        for (source, t) in loaded where !source.isView {
            for column in source.columns {
                guard !source.foreignKeys.contains(where: { $0.column == column.name }), source.keyColumns != [column.name],
                      builder.existingAttribute(column.name, of: t) != nil else { continue }
                let targets = targetNames(forKeyColumn: column.name).compactMap { name -> (table: String, key: String)? in
                    guard let (target, tt) = byLowerName[name.lowercased()], !target.isView,
                          builder.keyPolicy(of: tt) != .rowNumber, target.keyColumns.count <= 1,
                          let key = keyExpression(builder.keyPolicy(of: tt), target) else { return nil }
                    return (target.name, key)
                }
                if !targets.isEmpty { columns.append(KeyColumn(source: source, column: column, targets: targets)) }
            }
        }
        guard let file, columns.count > 1 else {
            var decider = KeyColumn.Decider(epoch: epoch)
            return try columns.compactMap { try decider.target(of: $0, db) }
        }
        // Two workers take the columns in turn; the answers stay in the load's order.
        let next = Mutex(0), tried = columns
        let found = try ParallelWork.run(workers: 2, stackSize: 1 << 20) { _ in
            try file.readOnOwnConnection { db in
                var decider = KeyColumn.Decider(epoch: epoch)
                var mine: [(Int, InferredKey)] = []
                while true {
                    let i = next.withLock { n in defer { n += 1 }; return n }
                    guard i < tried.count else { return mine }
                    if let key = try decider.target(of: tried[i], db) { mine.append((i, key)) }
                }
            }
        }
        return found.flatMap { $0 }.sorted { $0.0 < $1.0 }.map { $0.1 }
    }

    /// A column a load tries to infer a relation from, with its candidate tables (in the load's
    /// order of preference) and the SQL naming each one's key.
    struct KeyColumn: Sendable {
        let source: Source
        let column: ColumnInfo
        let targets: [(table: String, key: String)]

        /// Decides columns on one connection, keeping what it read of each target.
        struct Decider {
            let epoch: Double
            /// Per target table: its keys that are text with a character outside ASCII.
            var nonASCIIKeys: [String: Set<String>] = [:]

            init(epoch: Double) { self.epoch = epoch }

            /// The relation the load infers from `column`: the candidate with the fewest values
            /// naming no row (the first of equals), within the tolerance; nil when the column
            /// holds no value, or no candidate holds nearly all.
            mutating func target(of column: KeyColumn, _ db: Database) throws -> InferredKey? {
                let (source, info) = (column.source, column.column)
                guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(SQL.identifier(source.name)) WHERE \(SQL.identifier(info.name)) IS NOT NULL)") == true
                else { return nil }
                var best: (target: String, stray: Int)?
                for (target, key) in column.targets {
                    let stray = try RelationalFormat.strayValues(db, of: source, column: info, target: target, key: key, epoch: epoch, fewerThan: best?.stray) {
                        if let known = nonASCIIKeys[target] { return known }
                        let read = try Set(String.fetchAll(db, sql: """
                            SELECT \(key) FROM \(SQL.identifier(target)) WHERE typeof(\(key)) = 'text' AND length(CAST(\(key) AS BLOB)) != length(\(key))
                            """))
                        nonASCIIKeys[target] = read
                        return read
                    }
                    if let stray, stray < best?.stray ?? Int.max { best = (target, stray) }
                    if best?.stray == 0 { break }
                }
                return best.map { InferredKey(table: source.name, column: info.name, target: $0.target) }
            }
        }
    }

    /// The SQL naming a table's key as `policy` keys its rows: its key column, or its rowid.
    private static func keyExpression(_ policy: KeyPolicy, _ table: Source) -> String? {
        switch policy {
        case .column(let k, _): return SQL.identifier(k)
        case .rowid: return table.hasRowID ? SQL.rowidName(columns: table.columns.map(\.name)) : nil
        default: return nil
        }
    }

    /// How many non-null values of `source`'s `column` name no row of table `target` by its key
    /// (`key`, SQL), as the load's key index finds it; nil as soon as they are more than the
    /// tolerance allows (``InferenceTolerance``), or not fewer than `fewerThan`.
    /// `nonASCIIKeys` gives the target's keys that are text with a character outside ASCII (read
    /// when first needed).
    fileprivate static func strayValues(_ db: Database, of source: Source, column: ColumnInfo, target: String, key: String, epoch: Double,
                                        fewerThan bound: Int?, nonASCIIKeys: () throws -> Set<String>) throws -> Int? {
        let c = "s." + SQL.identifier(column.name), t = SQL.identifier(target)
        // Found exactly by SQL: the same value (same storage class and bytes), an integer's
        // decimal text, or the integer a canonical decimal text spells. Each lookup binds the
        // value without affinity (`+`), so the target's key index serves it.
        let exact = column.isDate ? "0" : """
            (typeof(\(c)) IN ('integer', 'text', 'blob') AND EXISTS (SELECT 1 FROM \(t) k WHERE k.\(key) = +\(c) AND typeof(k.\(key)) = typeof(\(c)) AND CAST(k.\(key) AS BLOB) = CAST(\(c) AS BLOB)))
            OR (typeof(\(c)) = 'integer' AND EXISTS (SELECT 1 FROM \(t) k WHERE k.\(key) = +CAST(\(c) AS TEXT) AND typeof(k.\(key)) = 'text' AND CAST(k.\(key) AS BLOB) = CAST(CAST(\(c) AS TEXT) AS BLOB)))
            OR (typeof(\(c)) = 'text' AND CAST(CAST(\(c) AS INTEGER) AS BLOB) = CAST(\(c) AS BLOB) AND EXISTS (SELECT 1 FROM \(t) k WHERE k.\(key) = +CAST(\(c) AS INTEGER) AND typeof(k.\(key)) = 'integer'))
            """
        let rest = try DatabaseValue.fetchCursor(db, sql: "SELECT \(c) FROM \(SQL.identifier(source.name)) s WHERE \(c) IS NOT NULL AND NOT (\(exact))")
        // The others, each as the load holds it, decided once (a stray counted each time).
        var decided = Set<Value>(), strays = Set<Value>(), stray = 0
        var total: Int?
        func tolerated() throws -> Bool {
            if total == nil { total = try Int.fetchOne(db, sql: "SELECT count(\(c)) FROM \(SQL.identifier(source.name)) s") ?? 0 }
            return InferenceTolerance.allows(stray: stray, of: total!) && stray < bound ?? Int.max
        }
        let lookup = try db.makeStatement(sql: "SELECT \(key) FROM \(t) WHERE \(key) = ?")
        while let cell = try rest.next() {
            let value = RelationalFormat.value(cell, isDate: column.isDate, epoch: epoch)
            if decided.contains(value) { continue }
            if strays.contains(value) {
                stray += 1
                guard try tolerated() else { return nil }
                continue
            }
            var found = false
            if let id = ObjectID(keyValue: value), id.isScalar {
                for wanted in [id] + (id.affinityAlternative.map { [$0] } ?? []) {
                    if try DatabaseValue.fetchAll(lookup, arguments: [wanted.databaseValue]).contains(where: { $0.objectID == wanted }) { found = true; break }
                    if case .string(let text) = wanted, text.utf8.contains(where: { $0 >= 0x80 }), try nonASCIIKeys().contains(text) { found = true; break }
                }
            }
            if found {
                if decided.count < 100_000 { decided.insert(value) }
            } else {
                stray += 1
                if strays.count < 100_000 { strays.insert(value) }
                guard try tolerated() else { return nil }
            }
        }
        return stray   // (each stray was checked against the tolerance as it was counted)
    }

    /// Adds the relations `keys` to `tables` as a load infers them (``inferRelations``), linking
    /// the rows `builder` holds: each value to the target row its key index finds (none when the
    /// row is not among them). A key whose table or column is not there is left out.
    static func linkInferred(_ builder: GraphBuilder, _ tables: [KeyedTable], _ keys: [InferredKey]) {
        let byName = Dictionary(tables.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        var indexes: [Int: KeyIndex] = [:]
        for key in keys {
            guard let source = byName[key.table], let target = byName[key.target],
                  let a = builder.existingAttribute(key.column, of: source.type) else { continue }
            let index = indexes[target.type] ?? builder.keyIndex(type: target.type, attribute: nil)
            indexes[target.type] = index
            addInferredRelation(builder, type: source.type, attribute: a, column: key.column, name: relationName(for: key.column, otherColumns: Set(source.columns)),
                                target: target.type, index: index)
        }
    }

    /// One inferred relation of type `t` from its attribute `a` (column `column`) to type `tt`,
    /// named `name` (reachable under the column's name too), marked inferred, with an edge for
    /// every value `index` finds a row of `tt` for.
    static func addInferredRelation(_ builder: GraphBuilder, type t: Int, attribute a: Int, column: String, name: String, target tt: Int, index: KeyIndex) {
        let foreignKey = ForeignKey(attribute: column, targetType: tt, targetAttribute: nil, onDelete: .noAction, isInferred: true)
        let r = builder.relation(name, of: t, aliases: name == column ? [] : [column], foreignKey: foreignKey, declaredTargets: [tt])
        builder.markInferred(relation: r, of: t)
        for (row, v) in builder.column(type: t, attribute: a).enumerated() where !v.isNull {
            if let to = index.row(for: v) { builder.addEdge(from: ObjectRef(type: t, row: row), relation: r, to: ObjectRef(type: tt, row: to)) }
        }
    }
}
