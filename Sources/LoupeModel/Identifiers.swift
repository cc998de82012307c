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

/// The key of an object in its store, exactly as stored: two objects have the same `ObjectID`
/// only when their stored keys are the same value.
///
/// - `int`: an integer key (`by_type.id`, a rowid, an INTEGER PRIMARY KEY); also a REAL key that
///   holds a whole number in the 64-bit range, so that a foreign key stored as `3.0` finds key `3`.
/// - `double`: any other REAL key (`1.5`, `1e300`, infinities).
/// - `string`: a text key (a UUID, `"007"`, kept as written).
/// - `data`: a BLOB key.
/// - `composite`: the values of a key of several columns, in key order (never joined into one
///   text, so `('a', 'b|1')` and `('a|b', 1)` stay apart).
public enum ObjectID: Hashable, Comparable, Sendable, CustomStringConvertible {
    case int(Int64)
    case double(Double)
    case string(String)
    case data(Data)
    case composite([ObjectID])

    /// `42`, `"5A1F…"`, `1.5`, `x'00FF'`, `(1, "a")`: the form a `#` reference takes after the `#`.
    public var description: String {
        switch self {
        case .int(let i): return String(i)
        case .double(let d): return ValueFormatter.number(d)
        case .string(let s):
            return "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        case .data(let d): return "x'" + d.map { String(format: "%02X", $0) }.joined() + "'"
        case .composite(let parts): return "(" + parts.map(\.description).joined(separator: ", ") + ")"
        }
    }

    /// The key as a value, for `id` in queries and output (a composite key is an array).
    public var value: Value {
        switch self {
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .data(let d): return .data(d)
        case .composite(let parts): return .array(parts.map(\.value))
        }
    }

    /// The key a value stands for when it is used as one (a foreign key's value, a `#` literal),
    /// or nil for null and for values that cannot be keys. Never traps: a REAL outside the 64-bit
    /// range stays a double.
    public init?(keyValue v: Value) {
        switch v {
        case .int(let i): self = .int(i)
        case .double(let d): self = ObjectID.number(d)
        case .decimal(let d): self = Int64(d.text).map(ObjectID.int) ?? .string(d.text)   // its digits, as its store reads them back
        case .string(let s): self = .string(s)
        case .data(let d): self = .data(d)
        case .bool(let b): self = .int(b ? 1 : 0)
        case .array(let items):
            var parts: [ObjectID] = []
            for item in items { guard let p = ObjectID(keyValue: item) else { return nil }; parts.append(p) }
            self = .composite(parts)
        case .null, .date, .object, .reference: return nil
        }
    }

    /// A REAL key: an integer when it is a whole number that fits, else the double itself.
    public static func number(_ d: Double) -> ObjectID {
        if d.isFinite, d == d.rounded(), d >= -9.223372036854775e18, d < 9.223372036854775e18 { return .int(Int64(d)) }
        return .double(d)
    }

    /// The keys a text typed by a person may mean, most literal first: the text itself, then the
    /// integer or number it spells, then (for `[…]`) the composite key its JSON array gives:
    /// `loupe show FILE Album 1`, `… Teacher 007`, `… t 1e300`, `… pair '["a", 1]'`.
    public static func candidates(typed text: String) -> [ObjectID] {
        var out: [ObjectID] = [.string(text)]
        if let i = Int64(text) { out.append(.int(i)) } else if let d = Double(text) { out.append(ObjectID.number(d)) }
        if text.hasPrefix("["), let parts = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [Any] {
            let ids: [ObjectID] = parts.compactMap { part in
                switch part {
                case let s as String: return .string(s)
                case let n as NSNumber:
                    let d = n.doubleValue
                    return String(cString: n.objCType) == "d" ? ObjectID.number(d) : .int(n.int64Value)
                default: return nil
                }
            }
            if ids.count == parts.count { out.append(.composite(ids)) }
        }
        return out
    }

    /// The same key read with SQLite's affinity leniency: text that spells an integer and an
    /// integer match each other (`"7"` and `7`), as a foreign key compared by SQLite would.
    public var affinityAlternative: ObjectID? {
        switch self {
        case .string(let s): return Int64(s).map(ObjectID.int)
        case .int(let i): return .string(String(i))
        default: return nil
        }
    }

    /// SQLite's order of keys (what `ORDER BY` on the key column gives): numbers by value, then
    /// text by bytes (Unicode scalars), then blobs by bytes; composites part by part, after all others.
    public static func < (a: ObjectID, b: ObjectID) -> Bool {
        func rank(_ x: ObjectID) -> Int {
            switch x { case .int, .double: return 0; case .string: return 1; case .data: return 2; case .composite: return 3 }
        }
        switch (a, b) {
        case let (.int(x), .int(y)): return x < y
        case let (.double(x), .double(y)): return x < y
        case let (.int(x), .double(y)): return Double(x) < y
        case let (.double(x), .int(y)): return x < Double(y)
        case let (.string(x), .string(y)): return x.utf8.lexicographicallyPrecedes(y.utf8)
        case let (.data(x), .data(y)): return x.lexicographicallyPrecedes(y)
        case let (.composite(x), .composite(y)): return x.lexicographicallyPrecedes(y)
        default: return rank(a) < rank(b)
        }
    }
}

/// A handle on one object of a loaded graph: its type's index and its row within that type.
///
/// Handles are only meaningful for the graph that made them (and the staged graphs built on it,
/// which only ever append rows); they are what relation tables store, so following a relation is
/// an array read, never a lookup. An object's lasting identity is its ``ObjectIdentity``.
public struct ObjectRef: Hashable, Sendable, Comparable {
    public var type: Int32
    public var row: Int32
    @inlinable public init(type: Int32, row: Int32) { self.type = type; self.row = row }
    @inlinable public init(type: Int, row: Int) { self.type = Int32(type); self.row = Int32(row) }
    public static func < (a: ObjectRef, b: ObjectRef) -> Bool { (a.type, a.row) < (b.type, b.row) }
}

/// An object's identity across loads and staged changes: its type's name and its key. Views keep
/// these to find their objects again after a commit or a reload.
public struct ObjectIdentity: Hashable, Sendable, CustomStringConvertible {
    public let type: TypeName
    public let id: ObjectID
    public init(type: TypeName, id: ObjectID) { self.type = type; self.id = id }
    /// `Book #12`.
    public var description: String { "\(type) #\(id)" }
}
