import CSQLiteTuning
import Foundation
import GRDB

/// Text in and out of SQLite by its byte length, so that a NUL inside a text value survives.
///
/// GRDB binds a string as a C string and reads a text column with `String(cString:)`: both stop
/// at the first U+0000, so `"x\u{0}y"` would be written (and read) as `"x"` while the preview
/// showed it whole. Every write Loupe makes to a SQLite file runs through ``executeExactly(_:)``,
/// and every cell a load or a window reads goes through ``ColumnReader``, which reads the same way.
extension Statement {
    /// Runs the statement with `arguments` bound, each text by its bytes (a NUL inside kept).
    func executeExactly(_ arguments: [DatabaseValue]) throws {
        try setArguments(StatementArguments(arguments))
        for (index, value) in arguments.enumerated() {
            guard case .string(let text) = value.storage, text.utf8.contains(0) else { continue }
            var bytes = Array(text.utf8)
            let code = bytes.withUnsafeMutableBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { chars in
                    loupe_bind_text_bytes(sqliteStatement, Int32(index + 1), chars.baseAddress, Int32(chars.count))
                }
            }
            guard code == 0 else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot bind text value \(index + 1)", sql: sql) }
        }
        // Without arguments, GRDB resets the statement and keeps the bindings made above.
        try execute()
    }
}

/// Whole text values as SQLite holds them (``Statement/executeExactly(_:)`` writes them so).
enum ExactText {
    /// The text of column `index` of `statement`'s current row, read by its byte length; nil when
    /// `known` (what GRDB read) is already whole.
    static func column(_ statement: SQLiteStatement, _ index: Int32, known: String) -> String? {
        var length: Int32 = 0
        guard let bytes = loupe_column_text_bytes(statement, index, &length), Int(length) != known.utf8.count else { return nil }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(length)), as: UTF8.self)
    }
}
