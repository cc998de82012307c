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
