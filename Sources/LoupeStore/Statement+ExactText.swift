import Foundation
import GRDB
import GRDBSQLite

/// Text in and out of SQLite by its byte length, so that a NUL inside a text value survives.
///
/// GRDB binds a string as a C string and reads a text column with `String(cString:)`: both stop
/// at the first U+0000, so `"x\u{0}y"` would be written (and read) as `"x"` while the preview
/// showed it whole. Every write Loupe makes to a SQLite file runs through ``executeExactly(_:)``,
/// every cell a load or a window reads goes through ``ColumnReader``, which reads the same way,
/// and the SQL engines' functions read their arguments so (``Database/addExactFunction(_:_:)``).
extension Statement {
    /// Runs the statement with `arguments` bound, each text by its bytes (a NUL inside kept).
    func executeExactly(_ arguments: [DatabaseValue]) throws {
        try setArguments(StatementArguments(arguments))
        for (index, value) in arguments.enumerated() {
            guard case .string(let text) = value.storage, text.utf8.contains(0) else { continue }
            var bytes = Array(text.utf8)
            let code = bytes.withUnsafeMutableBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { chars in
                    sqlite3_bind_text(sqliteStatement, Int32(index + 1), chars.baseAddress, Int32(chars.count), ExactText.transient)
                }
            }
            guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot bind text value \(index + 1)", sql: sql) }
        }
        // Without arguments, GRDB resets the statement and keeps the bindings made above.
        try execute()
    }
}

/// Whole text values as SQLite holds them (``Statement/executeExactly(_:)`` writes them so).
enum ExactText {
    /// SQLite's destructor value that makes it copy what it is given.
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Column `index` of `statement`'s current row as text, read by its byte length (a number
    /// as SQLite spells it; "" for an empty blob).
    static func column(_ statement: SQLiteStatement, _ index: Int32) -> String {
        let bytes = sqlite3_column_text(statement, index)
        let count = Int(sqlite3_column_bytes(statement, index))
        return bytes.map { String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self) } ?? ""
    }
}
