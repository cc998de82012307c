import Foundation
import GRDB
import LoupeModel

/// What answering statements in SQL over a relational file needs to know of it, read without
/// loading a row: the types, attributes and relations exactly as a load names them (so names
/// resolve as the in-memory engine resolves them), and how each type is reached in SQL.
public struct RelationalLayout: Sendable {
    /// The file's types, attributes and declared relations, with no objects.
    public let graph: ObjectGraph
    /// Per type (by index): its table, or nil when it cannot be read row by row in SQL (a view,
    /// a `WITHOUT ROWID` table, a table whose rowid is hidden by columns of its names).
    public let tables: [Table?]
    /// Seconds between the file's date epoch and Unix time (Core Data's 2001, else 0).
    public let epoch: Double

    public struct Table: Sendable {
        /// The table's name as the file spells it.
        public let name: String
        /// The name that reaches its rowid (`rowid`, `_rowid_` or `oid`).
        public let rowid: String
        /// Per attribute (by index): the column's name, and whether it reads dates.
        public let columns: [(name: String, isDate: Bool)]
    }

    /// A cell of `type`'s `attribute` as the loaded graph holds it.
    public func value(_ cell: DatabaseValue, type: Int, attribute: Int) -> Value {
        RelationalFormat.value(cell, isDate: tables[type]?.columns[attribute].isDate ?? false, epoch: epoch)
    }
}

extension RelationalFormat {
    /// The layout of a relational file, or nil when a load would add relations that only its rows
    /// can decide (a column named like a key with no declared foreign key, while relation
    /// inference is on): then only a load reads the file as the engine sees it.
    public static func layout(_ db: Database) throws -> RelationalLayout? {
        let entries = try sourceNames(db)
        var sources: [String: Source] = [:]
        for entry in entries { sources[entry.name] = try describe(db, name: entry.name, isView: entry.isView) }
        if ReadOptions.current.infersRelations {
            let lowered = Set(entries.filter { !$0.isView }.map { $0.name.lowercased() })
            for source in sources.values where !source.isView {
                for column in source.columns where !source.foreignKeys.contains(where: { $0.column == column.name }) && source.keyColumns != [column.name] {
                    if targetNames(forKeyColumn: column.name).contains(where: { lowered.contains($0.lowercased()) }) { return nil }
                }
            }
        }
        let graph = try load(db, progress: nil, only: nil, schemaOnly: true).graph
        let epoch = try db.tableExists("Z_METADATA") ? DateText.referenceDateOffset : 0
        let tables: [RelationalLayout.Table?] = graph.types.map { type in
            guard let source = sources[type.name.rawValue], source.hasRowID, type.keyPolicy != .rowNumber,
                  let rowid = SQL.rowidName(columns: source.columns.map(\.name)),
                  type.attributes.map(\.name) == source.columns.map(\.name) else { return nil }
            return RelationalLayout.Table(name: source.name, rowid: rowid, columns: source.columns.map { ($0.name, $0.isDate) })
        }
        return RelationalLayout(graph: graph, tables: tables, epoch: epoch)
    }

    /// The rows of one table with these rowids, as a graph of that type alone (attributes as a
    /// load reads them), with each rowid's row in it. Call inside the read that chose the rowids.
    public static func objects(_ db: Database, table: String, rowids: [Int64]) throws -> (graph: ObjectGraph, rows: [Int64: Int32]) {
        let entry = try sourceNames(db).first { $0.name == table }
        guard let entry else { throw StoreError(.unreadable, path: nil, reason: "no table \(table)") }
        // The rows a read by rowid gives, checked first: a damaged table can repeat or lose a
        // rowid, and then no row of the graph could be matched to the rowid asked for.
        let wanted = Set(rowids).sorted()
        let source = try describe(db, name: entry.name, isView: entry.isView)
        guard let rowid = SQL.rowidName(columns: source.columns.map(\.name)) else {
            throw StoreError(.unreadable, path: nil, reason: "\(table) has no reachable rowid")
        }
        let found = try Int64.fetchAll(db, sql: "SELECT \(rowid) FROM \(SQL.identifier(table)) WHERE \(rowid) IN (SELECT value FROM json_each(?)) ORDER BY \(rowid)",
                                       arguments: ["[" + wanted.map(String.init).joined(separator: ",") + "]"])
        guard found == wanted else {
            throw StoreError(.notADatabase, path: nil, reason: "the database is corrupt (table \(table) does not give back the rows its rowids name)")
        }
        let builder = GraphBuilder(formatName: name)
        var warnings: [String] = []
        let epoch = try db.tableExists("Z_METADATA") ? DateText.referenceDateOffset : 0
        let t = try loadRows(db, source: source, builder: builder, epoch: epoch,
                             readOnlyReason: try frameworkReadOnlyReason(db), rowids: rowids, warnings: &warnings)
        guard builder.count(of: t) == wanted.count else {
            throw StoreError(.notADatabase, path: nil, reason: "the database is corrupt (table \(table) gave \(builder.count(of: t)) rows for \(wanted.count) rowids)")
        }
        // Rows come in rowid order, one per distinct rowid asked for.
        var rows: [Int64: Int32] = [:]
        for (i, rowid) in wanted.enumerated() { rows[rowid] = Int32(i) }
        return (builder.finish(), rows)
    }
}
