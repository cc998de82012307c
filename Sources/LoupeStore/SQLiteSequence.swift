import GRDB

/// SQLite's record of the keys an `AUTOINCREMENT` table has handed out (`sqlite_sequence`).
///
/// SQLite gives a new row of such a table a key above both its largest rowid and the largest
/// key it ever gave, so a deleted row's key is never reused. Loupe picks a new object's key the
/// same way (``LoupeModel/TypeTable/keyFloor``), then writes it explicitly; SQLite then moves
/// the sequence past it as it does for any explicit key.
enum SQLiteSequence {
    /// The largest key `table` has handed out by its sequence, or 0 when it has none (not an
    /// `AUTOINCREMENT` table, or a file without `sqlite_sequence`).
    static func value(_ db: Database, table: String) throws -> Int64 {
        guard try db.tableExists("sqlite_sequence") else { return 0 }
        // (The table's `seq` is loosely typed: a file may hold text there; it is read as SQLite would.)
        return try Int64.fetchOne(db, sql: "SELECT CAST(seq AS INTEGER) FROM sqlite_sequence WHERE name = ?", arguments: [table]) ?? 0
    }
}
