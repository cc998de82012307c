import Foundation
import GRDB
import LoupeModel

extension RelationalFormat {
    /// How a load turns one row of a `SELECT [rowid,] columns…` into an object: its key (a
    /// rowid, a key column, several, or its place in the read) and each column's value. The
    /// one reading of a row shared by ``loadRows(_:source:builder:epoch:readOnlyReason:dateColumns:limit:rowids:window:warnings:)``
    /// and ``rowValues(_:table:rowids:policy:)``, so that a row printed without a graph is the row a load holds.
    struct RowDecoder {
        /// True when the statement selects the rowid first.
        let selectsRowID: Bool
        /// True when the rows are keyed by columns (`keyIndexes` are those found among them).
        let keyed: Bool
        /// The key columns' places among the table's columns.
        let keyIndexes: [Int]
        /// Which columns hold dates, and the epoch of numeric ones.
        let dates: [Bool]
        let epoch: Double

        /// Where column `i` of the table is in the statement.
        @inline(__always) func place(_ i: Int) -> Int32 { Int32(i + (selectsRowID ? 1 : 0)) }

        /// The row's key; `ordinal` is its place in the read, counted from 1.
        func id(_ reader: ColumnReader, ordinal: Int64) -> ObjectID {
            guard keyed else { return selectsRowID ? reader.value(0).objectID ?? .int(ordinal) : .int(ordinal) }
            if keyIndexes.count == 1 { return reader.value(place(keyIndexes[0])).objectID ?? .int(ordinal) }
            if !keyIndexes.isEmpty { return .composite(keyIndexes.map { reader.value(place($0)).objectID ?? .string("") }) }
            return .int(ordinal)
        }

        /// Column `i`'s value as stored, and as the model holds it.
        @inline(__always) func raw(_ reader: ColumnReader, _ i: Int) -> DatabaseValue { reader.value(place(i)) }
        @inline(__always) func value(_ raw: DatabaseValue, _ i: Int) -> Value { RelationalFormat.value(raw, isDate: dates[i], epoch: epoch) }
    }

    /// The rows of `table` with these rowids, each its key and its columns' values exactly as
    /// ``objects(_:table:rowids:everyRow:policy:)`` holds them, but with no graph built: what
    /// printing a large answer reads (the values go straight to the writer). Rows come in the
    /// order of `rowids`; `policy` is the key policy the file's layout
    /// found. A rowid that gives no row, or gives several, means the table is damaged: thrown,
    /// as a load of those rows throws. Call inside the read that chose the rowids.
    public static func rowValues(_ db: Database, table: String, rowids: [Int64], policy: KeyPolicy) throws -> (ids: [ObjectID], columns: [[Value]]) {
        let (source, rowid) = try rowidSource(db, table: table)
        // (Most answers come in rowid order already: no set and no sort for them.)
        let inOrder = zip(rowids, rowids.dropFirst()).allSatisfy { $0 < $1 }
        let wanted = inOrder ? rowids : Set(rowids).sorted()
        guard !wanted.isEmpty else { return ([], source.columns.map { _ in [] }) }
        let only = rowidCondition(rowid, wanted: wanted)
        let columnList = ([rowid] + source.columns.map { SQL.identifier($0.name) }).joined(separator: ", ")
        let statement = try db.makeStatement(sql: "SELECT \(columnList) FROM \(SQL.identifier(table)) WHERE \(only.sql) ORDER BY \(rowid)")
        try statement.setArguments(StatementArguments(only.arguments))
        let decoder = RowDecoder(selectsRowID: true, keyed: !policy.keyColumns.isEmpty,
                                 keyIndexes: policy.keyColumns.compactMap { k in source.columns.firstIndex { $0.name == k } },
                                 dates: source.columns.map(\.isDate),
                                 epoch: try db.tableExists("Z_METADATA") ? DateText.referenceDateOffset : 0)
        var ids: [ObjectID] = [], columns = source.columns.map { _ -> [Value] in [] }
        ids.reserveCapacity(wanted.count)
        for c in columns.indices { columns[c].reserveCapacity(wanted.count) }
        let cursor = try Row.fetchCursor(statement)
        let reader = ColumnReader(statement)
        var n = 0
        while try cursor.next() != nil {
            // Rows come in rowid order, one for each rowid asked for.
            guard n < wanted.count, reader.int64(0) == wanted[n] else { break }
            n += 1
            ids.append(decoder.id(reader, ordinal: Int64(n)))
            for c in columns.indices { columns[c].append(decoder.value(decoder.raw(reader, c), c)) }
        }
        guard n == wanted.count, try cursor.next() == nil else {
            throw StoreError(.notADatabase, path: nil, reason: "the database is corrupt (table \(table) does not give back the rows its rowids name)")
        }
        guard wanted != rowids else { return (ids, columns) }
        // In the order asked for (a sorted answer).
        let place = Dictionary(uniqueKeysWithValues: wanted.enumerated().map { ($1, $0) })
        let order = rowids.map { place[$0]! }
        return (order.map { ids[$0] }, columns.map { column in order.map { column[$0] } })
    }

    /// The table or view `table` as a load reads it, and the name its rowid is read by; thrown
    /// when there is no such table or its rowid cannot be reached.
    static func rowidSource(_ db: Database, table: String) throws -> (source: Source, rowid: String) {
        guard let entry = try sourceNames(db).first(where: { $0.name == table }) else {
            throw StoreError(.unreadable, path: nil, reason: "no table \(table)")
        }
        let source = try describe(db, name: entry.name, isView: entry.isView)
        guard let rowid = SQL.rowidName(columns: source.columns.map(\.name)) else {
            throw StoreError(.unreadable, path: nil, reason: "\(table) has no reachable rowid")
        }
        return (source, rowid)
    }

    /// The condition that picks the rows with rowids `wanted` (sorted, distinct, not empty): a
    /// run of consecutive rowids (a key range, a part of a whole table) as a range, with no list
    /// for SQLite to index first (`isRun`); any other set as a list.
    static func rowidCondition(_ rowid: String, wanted: [Int64]) -> (sql: String, arguments: [DatabaseValue], isRun: Bool) {
        guard wanted.count > 1, wanted[wanted.count - 1] - wanted[0] + 1 == Int64(wanted.count) else {
            return ("\(rowid) IN (SELECT value FROM json_each(?))", ["[" + wanted.map(String.init).joined(separator: ",") + "]"].map(\.databaseValue), false)
        }
        return ("\(rowid) BETWEEN ? AND ?", [wanted[0].databaseValue, wanted[wanted.count - 1].databaseValue], true)
    }
}
