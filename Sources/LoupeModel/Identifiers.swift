import Foundation

/// The name of a stored type (a Persist `type_name`, a table, a Core Data entity).
public struct TypeName: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The name as the store spells it.
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
    public static func < (a: TypeName, b: TypeName) -> Bool { a.rawValue < b.rawValue }
}

/// The key of an object in its store: an integer (`by_type.id`, a rowid) or a string (a UUID column).
public enum ObjectID: Hashable, Comparable, Sendable, CustomStringConvertible {
    case int(Int64)
    case string(String)

    /// `42` or `"5A1F…"`: the form a `#` reference literal takes after the `#`.
    public var description: String {
        switch self {
        case .int(let i): return String(i)
        case .string(let s): return "\"" + s + "\""
        }
    }

    /// The key as a value, for `id` in queries and output.
    public var value: Value {
        switch self {
        case .int(let i): return .int(i)
        case .string(let s): return .string(s)
        }
    }

    /// Integers order before strings; integers numerically, strings by Unicode scalars.
    public static func < (a: ObjectID, b: ObjectID) -> Bool {
        switch (a, b) {
        case let (.int(x), .int(y)): return x < y
        case let (.string(x), .string(y)): return x.unicodeScalars.lexicographicallyPrecedes(y.unicodeScalars)
        case (.int, .string): return true
        case (.string, .int): return false
        }
    }
}

/// A handle on one object of a loaded graph: its type's index and its row within that type.
///
/// Handles are only meaningful for the graph that made them; they are what relation tables store,
/// so following a relation is an array read, never a lookup.
public struct ObjectRef: Hashable, Sendable, Comparable {
    public var type: Int32
    public var row: Int32
    @inlinable public init(type: Int32, row: Int32) { self.type = type; self.row = row }
    @inlinable public init(type: Int, row: Int) { self.type = Int32(type); self.row = Int32(row) }
    public static func < (a: ObjectRef, b: ObjectRef) -> Bool { (a.type, a.row) < (b.type, b.row) }
}
