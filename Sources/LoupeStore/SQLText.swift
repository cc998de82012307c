import Foundation
import GRDB
import LoupeModel

/// SQL built from names the file holds, safely.
///
/// Every table and column name that reaches SQL text goes through ``identifier(_:)``, which
/// doubles embedded quotes as SQLite requires. (GRDB's `quotedDatabaseIdentifier` only wraps the
/// name in quotes, so a name holding `"` could end the identifier and run SQL of its own; Loupe
/// never uses it, nor GRDB's schema helpers that do, on names read from a file.) Values are never
/// spliced into SQL: they are bound as arguments.
public enum SQL {
    /// `$."key"`: SQLite's JSON path to one top-level member.
    public static func jsonPath(_ key: String) -> String { "$.\"" + key + "\"" }

    /// True when SQLite's JSON paths spell the member exactly: no quote or backslash, and no
    /// U+FFFD, which a key read from bytes that are no UTF-8 holds in their place (the path
    /// would name the replacement character, the document holds the bytes).
    public static func spellsJSONPath(_ key: String) -> Bool { !key.contains("\"") && !key.contains("\\") && !key.contains("\u{FFFD}") }

    /// `"name"`, with every `"` in the name doubled.
    public static func identifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// The name that reaches a table's rowid: `rowid`, `_rowid_` or `oid`, the first that no
    /// column takes (a column named `rowid` hides the rowid behind that name); nil when all three
    /// are columns, and the rowid cannot be reached at all.
    public static func rowidName(columns: [String]) -> String? {
        let taken = Set(columns.map { $0.lowercased() })
        return ["rowid", "_rowid_", "oid"].first { !taken.contains($0) }
    }

    /// `'text'`, with every `'` doubled (for the few places SQLite takes no argument: JSON paths
    /// inside generated SQL are bound where possible).
    public static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}

extension DatabaseValue {
    /// The value as text, whatever its storage: text as it is, a BLOB decoded as UTF-8 (or shown
    /// as hex when it is not UTF-8), numbers as their digits; nil for NULL. Never traps, which
    /// GRDB's `row[i] as String` does on a BLOB or a NULL.
    var lenientText: String? {
        switch storage {
        case .null: return nil
        case .string(let s): return s
        case .int64(let i): return String(i)
        case .double(let d): return ValueFormatter.number(d)
        case .blob(let b): return String(validating: b, as: UTF8.self) ?? ("x'" + b.map { String(format: "%02X", $0) }.joined() + "'")
        }
    }

    /// The value as a stored key, exactly (see ``ObjectID``); nil for NULL.
    public var objectID: ObjectID? {
        switch storage {
        case .null: return nil
        case .int64(let i): return .int(i)
        case .double(let d): return ObjectID.number(d)
        case .string(let s): return .string(s)
        case .blob(let b): return .data(b)
        }
    }

    /// The value as a flag: non-zero numbers and the texts `1`, `true`, `yes` are true.
    var lenientBool: Bool {
        switch storage {
        case .null, .blob: return false
        case .int64(let i): return i != 0
        case .double(let d): return d != 0
        case .string(let s): return ["1", "true", "yes"].contains(s.lowercased())
        }
    }

    /// The value as an integer when it is one (or a whole REAL in range), else nil.
    var lenientInt: Int64? {
        switch storage {
        case .int64(let i): return i
        case .double(let d): if case .int(let i) = ObjectID.number(d) { return i } else { return nil }
        default: return nil
        }
    }
}

extension ObjectID {
    /// The key bound as SQLite holds it (a composite key's parts are bound one by one).
    var databaseValue: DatabaseValue {
        switch self {
        case .int(let i): return i.databaseValue
        case .double(let d): return d.databaseValue
        case .string(let s): return s.databaseValue
        case .data(let d): return d.databaseValue
        case .composite: return .null
        }
    }

    /// True for a key of one column.
    var isScalar: Bool { if case .composite = self { return false } else { return true } }
}
