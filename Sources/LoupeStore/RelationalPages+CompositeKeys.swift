import Foundation
import GRDB
import LoupeModel

/// Foreign keys of several columns (`(artist, album) → album(artist, title)`) in paged mode,
/// followed both ways as a load follows them: a window reads, beside its rows, the rows their
/// parts may name and the rows that may name them (SQL's `=`: never fewer than a load matches),
/// and the window's graph links them with the load's own rule (``CompositeKey``); counts and
/// lists of an object's links compare the parts exactly, as a load does.
extension RelationalPages {
    /// A composite foreign key between two tables paged by rowid, seen from its target.
    struct CompositeIncoming: Sendable {
        let source: Int
        let relation: String
        let key: CompositeKey
    }

    /// Per type: the composite foreign keys that point at it, in `layout`.
    static func compositeIncoming(_ layout: RelationalLayout) -> [[CompositeIncoming]] {
        var incoming: [[CompositeIncoming]] = Array(repeating: [], count: layout.graph.types.count)
        for source in layout.graph.types where layout.tables[source.index] != nil {
            for relation in source.relations {
                guard let key = relation.compositeKey, layout.tables[key.targetType] != nil else { continue }
                incoming[key.targetType].append(CompositeIncoming(source: source.index, relation: relation.name, key: key))
            }
        }
        return incoming
    }

    /// The columns of type `t` its composite foreign keys read (a window's sparse rows hold them).
    func compositeColumns(of t: Int) -> [String] {
        layout.graph.types[t].relations.flatMap { $0.compositeKey?.columns ?? [] }
    }

    /// The key a load makes of `cells` (type `t`'s `columns`): nil when a part is NULL.
    private func parts(_ cells: [DatabaseValue], type t: Int, columns: [String]) -> ObjectID? {
        let values = zip(cells, columns).map { cell, column in
            layout.graph.types[t].attributeIndex[column].map { layout.value(cell, type: t, attribute: $0) } ?? .null
        }
        return CompositeKey.key(values)
    }

    /// Type `t`'s rows whose `columns` are `=` to `cells` (a superset of those a load matches),
    /// in rowid order, at most `limit`, each with its parts as a load reads them.
    private func rows(_ t: Int, columns: [String], equalTo cells: [DatabaseValue], limit: Int?, _ db: Database) throws -> [(rowid: Int64, parts: ObjectID?)] {
        guard let rowidName = layout.tables[t]?.rowid, !cells.contains(where: \.isNull) else { return [] }
        let condition = columns.map { "\(SQL.identifier($0)) = ?" }.joined(separator: " AND ")
        let sql = "SELECT \(([rowidName] + columns.map(SQL.identifier)).joined(separator: ", ")) FROM \(SQL.identifier(sources[t].name)) WHERE \(condition) ORDER BY \(rowidName)"
            + (limit.map { " LIMIT \($0)" } ?? "")
        return try Row.fetchAll(db, sql: sql, arguments: StatementArguments(cells)).map { row in
            (row[0], parts(columns.indices.map { row[$0 + 1] as DatabaseValue }, type: t, columns: columns))
        }
    }

    /// Row `rowid`'s cells of `columns` in type `t`.
    private func cells(_ t: Int, rowid: Int64, columns: [String], _ db: Database) throws -> [DatabaseValue] {
        guard let rowidName = layout.tables[t]?.rowid,
              let row = try Row.fetchOne(db, sql: "SELECT \(columns.map(SQL.identifier).joined(separator: ", ")) FROM \(SQL.identifier(sources[t].name)) WHERE \(rowidName) = ?",
                                         arguments: [rowid]) else { return [] }
        return columns.indices.map { row[$0] as DatabaseValue }
    }

    /// Adds to a window of type `t`'s rows `roots` the rows their composite keys may name
    /// (`full`), the rows that may name them (`sparse`: at most ``edgesPerObject`` a root, past
    /// which the root is `cut`), and the root type's rows with the same parts (a load links a
    /// source to the first of them).
    func gatherComposite(_ db: Database, type t: Int, roots: [Int64], keys: [Int64: ObjectID],
                         full: inout [Int: Set<Int64>], sparse: inout [Int: Set<Int64>], cut: inout Set<ObjectIdentity>) throws {
        for relation in layout.graph.types[t].relations {
            guard let key = relation.compositeKey, layout.tables[key.targetType] != nil else { continue }
            for root in roots {
                let named = try cells(t, rowid: root, columns: key.columns, db)
                full[key.targetType, default: []].formUnion(try rows(key.targetType, columns: key.targetColumns, equalTo: named, limit: nil, db).map(\.rowid))
            }
        }
        for link in compositeIncoming[t] {
            for root in roots {
                let held = try cells(t, rowid: root, columns: link.key.targetColumns, db)
                full[t, default: []].formUnion(try rows(t, columns: link.key.targetColumns, equalTo: held, limit: nil, db).map(\.rowid))
                let found = try rows(link.source, columns: link.key.columns, equalTo: held, limit: edgesPerObject + 1, db)
                if found.count > edgesPerObject, let id = keys[root] { cut.insert(ObjectIdentity(type: layout.graph.types[t].name, id: id)) }
                sparse[link.source, default: []].formUnion(found.prefix(edgesPerObject).map(\.rowid))
            }
        }
    }

    /// The rowid of the row `root`'s composite `key` names, as a load links it: the first row
    /// in rowid order whose parts are exactly the root's; nil for none (or a NULL part).
    func compositeTarget(of root: (type: Int, rowid: Int64), key: CompositeKey, _ db: Database) throws -> Int64? {
        let named = try cells(root.type, rowid: root.rowid, columns: key.columns, db)
        guard let wanted = parts(named, type: root.type, columns: key.columns) else { return nil }
        return try rows(key.targetType, columns: key.targetColumns, equalTo: named, limit: nil, db).first { $0.parts == wanted }?.rowid
    }

    /// The rowids of the rows of `link.source` that name `root` as a load links them, in rowid order.
    func compositeSources(_ link: CompositeIncoming, root: (type: Int, rowid: Int64), _ db: Database) throws -> [Int64] {
        let held = try cells(root.type, rowid: root.rowid, columns: link.key.targetColumns, db)
        guard let wanted = parts(held, type: root.type, columns: link.key.targetColumns),
              try rows(root.type, columns: link.key.targetColumns, equalTo: held, limit: nil, db).first(where: { $0.parts == wanted })?.rowid == root.rowid
        else { return [] }   // a later row with the same parts is named by no one
        return try rows(link.source, columns: link.key.columns, equalTo: held, limit: nil, db).filter { $0.parts == wanted }.map(\.rowid)
    }
}

/// Broken links over the file: the rows whose foreign key names no row of its target, counted
/// by SQL where its `=` decides as a load does — no value that names a row only through its
/// affinity twin (the text `5` for the key 5), and text compared byte for byte only where it is
/// ASCII on both sides (a load compares canonical equivalents) — each answer a fact kept under
/// the file's stamp; elsewhere not counted (nil for that relation).
extension RelationalPages {
    public func brokenLinkCounts(type t: Int) throws -> [Int: Int]? {
        guard layout.tables[t] != nil else { return nil }
        let facts = FileFacts(file: file)
        defer { facts.save() }
        return try file.read { db in
            var counts: [Int: Int] = [:]
            for (r, relation) in layout.graph.types[t].relations.enumerated() {
                guard let (pairs, target) = keyPairs(type: t, relation: relation),
                      try pairs.allSatisfy({ try matchesAsALoad(source: t, column: $0.column, target: target, targetColumn: $0.target, facts, db) }) else { continue }
                counts[r] = Int.fromDatabaseValue(try facts.scalar(db, sql: brokenLinkSQL(type: t, pairs: pairs, target: target))) ?? 0
            }
            return counts
        }
    }

    /// The columns of type `t` a to-one `relation` is held by, each with the target's column
    /// it names, and the target; nil when the target is not a table or a part is a date column
    /// (a load reads dates, which name nothing).
    private func keyPairs(type t: Int, relation: RelationColumn) -> ([(column: String, target: String)], Int)? {
        let pairs: [(column: String, target: String)], target: Int
        if let key = relation.compositeKey {
            (pairs, target) = (Array(zip(key.columns, key.targetColumns)), key.targetType)
        } else if let fk = relation.foreignKey, layout.keyColumns(fk.targetType).count <= 1,
                  let k = fk.targetAttribute ?? layout.keyColumns(fk.targetType).first ?? layout.tables[fk.targetType]?.rowid {
            (pairs, target) = ([(fk.attribute, k)], fk.targetType)
        } else {
            return nil
        }
        guard let source = layout.tables[t], layout.tables[target] != nil,
              pairs.allSatisfy({ p in source.columns.first { $0.name == p.column }.map { !$0.isDate } ?? false }) else { return nil }
        return (pairs, target)
    }

    /// True when SQL's `=` between `column` and the target's `targetColumn` pairs exactly the
    /// values a load pairs (facts over both columns).
    private func matchesAsALoad(source t: Int, column: String, target: Int, targetColumn: String, _ facts: FileFacts, _ db: Database) throws -> Bool {
        let (s, tt) = (sources[t].name, sources[target].name), f = SQL.identifier(column), k = SQL.identifier(targetColumn)
        if try facts.exists(db, table: tt, where: "typeof(\(k)) IN ('integer', 'real')"),
           try facts.exists(db, table: s, where: "typeof(\(f)) = 'text' AND \(f) <> '' AND trim(\(f), '+-0123456789') = ''") { return false }
        guard try facts.exists(db, table: tt, where: "typeof(\(k)) = 'text'") else { return true }
        if try facts.exists(db, table: s, where: "typeof(\(f)) IN ('integer', 'real') AND \(f) = CAST(\(f) AS INTEGER)") { return false }
        return try !facts.exists(db, table: tt, where: "typeof(\(k)) = 'text' AND \(k) GLOB '*[^ -~]*'")
            && !facts.exists(db, table: s, where: "typeof(\(f)) = 'text' AND \(f) GLOB '*[^ -~]*'")
    }

    /// `SELECT count(*)` of type `t`'s rows whose parts (`pairs`) are all there and name no row
    /// of `target`: a plain `=` first (an index on the target serves), then the same by bytes.
    private func brokenLinkSQL(type t: Int, pairs: [(column: String, target: String)], target: Int) -> String {
        let matches = pairs.map { p in
            "t.\(SQL.identifier(p.target)) = s.\(SQL.identifier(p.column)) AND t.\(SQL.identifier(p.target)) = s.\(SQL.identifier(p.column)) COLLATE BINARY"
        }.joined(separator: " AND ")
        let present = pairs.map { "s.\(SQL.identifier($0.column)) IS NOT NULL" }.joined(separator: " AND ")
        return "SELECT count(*) FROM \(SQL.identifier(sources[t].name)) s WHERE \(present) AND NOT EXISTS (SELECT 1 FROM \(SQL.identifier(sources[target].name)) t WHERE \(matches))"
    }
}
