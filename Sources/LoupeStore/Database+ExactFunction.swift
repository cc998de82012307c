import Foundation
import GRDB
import GRDBSQLite

/// SQL functions whose arguments are read as SQLite holds them: text by its byte length, so a
/// NUL inside it is kept (GRDB's `DatabaseFunction` reads text as a C string, which ends there).
/// The SQL engines' `loupe_test(k, …)` is one: the engine's comparison of a stored
/// `"x\u{0}y"` must see `"x\u{0}y"`, never `"x"`.
extension Database {
    /// Adds `name` (any number of arguments, deterministic) calling `body` with the arguments
    /// (``ExactText``'s reading) and returning its value to SQLite.
    public func addExactFunction(_ name: String, _ body: @escaping @Sendable ([DatabaseValue]) -> DatabaseValue) {
        let box = Unmanaged.passRetained(ExactFunction(body)).toOpaque()
        sqlite3_create_function_v2(sqliteConnection, name, -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, box, { context, count, arguments in
            guard let context, let data = sqlite3_user_data(context) else { return }
            let function = Unmanaged<ExactFunction>.fromOpaque(data).takeUnretainedValue()
            let values = (0..<Int(count)).map { ExactText.value(arguments![$0]) }
            ExactText.result(function.body(values), context)
        }, nil, nil, { data in
            if let data { Unmanaged<ExactFunction>.fromOpaque(data).release() }
        })
    }
}

/// The Swift body of a function added by ``Database/addExactFunction(_:_:)``.
private final class ExactFunction: @unchecked Sendable {
    let body: @Sendable ([DatabaseValue]) -> DatabaseValue
    init(_ body: @escaping @Sendable ([DatabaseValue]) -> DatabaseValue) { self.body = body }
}

extension ExactText {
    /// An argument of an SQL function as a database value, text read whole.
    static func value(_ value: OpaquePointer?) -> DatabaseValue {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return sqlite3_value_int64(value).databaseValue
        case SQLITE_FLOAT: return sqlite3_value_double(value).databaseValue
        case SQLITE_TEXT:
            let bytes = sqlite3_value_text(value)
            let count = Int(sqlite3_value_bytes(value))
            return (bytes.map { String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self) } ?? "").databaseValue
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(value))
            return (sqlite3_value_blob(value).map { Data(bytes: $0, count: count) } ?? Data()).databaseValue
        default: return .null
        }
    }

    /// Hands `value` to SQLite as a function's result, text by its byte length.
    static func result(_ value: DatabaseValue, _ context: OpaquePointer) {
        switch value.storage {
        case .null: sqlite3_result_null(context)
        case .int64(let i): sqlite3_result_int64(context, i)
        case .double(let d): sqlite3_result_double(context, d)
        case .string(let s):
            var bytes = Array(s.utf8) + [0]
            bytes.withUnsafeMutableBufferPointer { b in
                b.withMemoryRebound(to: CChar.self) { sqlite3_result_text(context, $0.baseAddress, Int32($0.count - 1), transient) }
            }
        case .blob(let data):
            data.withUnsafeBytes { sqlite3_result_blob(context, $0.baseAddress, Int32($0.count), transient) }
        }
    }
}
