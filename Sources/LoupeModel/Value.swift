import Foundation

/// A value held by an object's attribute, as Loupe understands it whatever the store.
///
/// Values are what queries compare and what the browser renders. A relation target is not a value
/// of an attribute; it lives in the graph's relation tables, but a `reference` can appear where a
/// value is computed from a relation (a projection of a to-one relation, a `#id` literal).
public enum Value: Hashable, Sendable {
    /// A stored null, or an attribute an object does not have.
    case null
    /// A boolean.
    case bool(Bool)
    /// A 64-bit integer.
    case int(Int64)
    /// A double-precision number.
    case double(Double)
    /// A decimal with more digits than a double holds, kept exactly (see ``ExactDecimal``).
    case decimal(ExactDecimal)
    /// A text.
    case string(String)
    /// A point in time.
    case date(Date)
    /// Raw bytes (a BLOB column).
    case data(Data)
    /// An ordered list of values (a JSON array, an array attribute).
    case array([Value])
    /// A nested object that is not a relation (a JSON object), keys in stored order.
    case object(NestedObject)
    /// A reference to another object of the graph.
    case reference(ObjectRef)

    /// The kind of this value, for schema inference and for display.
    public var kind: ValueKind {
        switch self {
        case .null: return .null
        case .bool: return .bool
        case .int: return .integer
        case .double, .decimal: return .double
        case .string: return .string
        case .date: return .date
        case .data: return .data
        case .array: return .array
        case .object: return .object
        case .reference: return .reference
        }
    }

    /// `true` for `null`.
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// The value as a double when it is a number (integers widen), else nil.
    @inlinable public var numeric: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .decimal(let d): return d.double
        default: return nil
        }
    }

    /// The same value: the same kind holding the same thing. NaN is the same value as NaN (a
    /// value is itself, as `Hashable` asks: a column's NaNs are one group, one distinct value,
    /// and a NaN written back unchanged is no change). What `==` means in a statement is
    /// `ValueSemantics`' (NaN equals nothing there).
    public static func == (a: Value, b: Value) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.int(x), .int(y)): return x == y
        case let (.double(x), .double(y)): return x == y || (x.isNaN && y.isNaN)
        case let (.decimal(x), .decimal(y)): return x == y
        case let (.string(x), .string(y)): return x == y
        case let (.date(x), .date(y)): return x == y
        case let (.data(x), .data(y)): return x == y
        case let (.array(x), .array(y)): return x == y
        case let (.object(x), .object(y)): return x == y
        case let (.reference(x), .reference(y)): return x == y
        default: return false
        }
    }

    public func hash(into h: inout Hasher) {
        switch self {
        case .null: h.combine(0)
        case .bool(let b): h.combine(1); h.combine(b)
        case .int(let i): h.combine(2); h.combine(i)
        case .double(let d): h.combine(3); if d.isNaN { h.combine(Double.nan.bitPattern) } else { h.combine(d) }
        case .string(let s): h.combine(4); h.combine(s)
        case .date(let d): h.combine(5); h.combine(d)
        case .data(let d): h.combine(6); h.combine(d)
        case .array(let a): h.combine(7); h.combine(a)
        case .object(let o): h.combine(8); h.combine(o)
        case .reference(let r): h.combine(9); h.combine(r)
        case .decimal(let d): h.combine(10); h.combine(d)
        }
    }
}

/// A JSON object nested inside an attribute, with its keys in stored order.
public struct NestedObject: Hashable, Sendable {
    /// The members, in stored order.
    public var members: [(key: String, value: Value)]

    /// Creates a nested object from its members in order.
    public init(_ members: [(key: String, value: Value)]) { self.members = members }

    /// The value under `key`, or nil.
    public subscript(key: String) -> Value? { members.first(where: { $0.key == key })?.value }

    public static func == (a: NestedObject, b: NestedObject) -> Bool {
        a.members.count == b.members.count && zip(a.members, b.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into h: inout Hasher) {
        h.combine(members.count)
        for m in members { h.combine(m.key); h.combine(m.value) }
    }
}

/// The kinds of value, as a bit set so schema inference can record all kinds seen in one word.
public struct ValueKind: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let null = ValueKind(rawValue: 1 << 0)
    public static let bool = ValueKind(rawValue: 1 << 1)
    public static let integer = ValueKind(rawValue: 1 << 2)
    public static let double = ValueKind(rawValue: 1 << 3)
    public static let string = ValueKind(rawValue: 1 << 4)
    public static let date = ValueKind(rawValue: 1 << 5)
    public static let data = ValueKind(rawValue: 1 << 6)
    public static let array = ValueKind(rawValue: 1 << 7)
    public static let object = ValueKind(rawValue: 1 << 8)
    public static let reference = ValueKind(rawValue: 1 << 9)

    private static let names: [(ValueKind, String)] = [
        (.bool, "bool"), (.integer, "integer"), (.double, "double"), (.string, "string"), (.date, "date"),
        (.data, "data"), (.array, "array"), (.object, "object"), (.reference, "reference"), (.null, "null"),
    ]

    /// The kinds in a fixed order, joined by `|`: `integer|null`.
    public var description: String {
        let parts = Self.names.filter { contains($0.0) }.map(\.1)
        return parts.isEmpty ? "none" : parts.joined(separator: "|")
    }
}

extension Value: CustomStringConvertible {
    /// A one-line rendering for people: strings unquoted, dates in ISO 8601, nested values as JSON-ish.
    public var description: String { ValueFormatter.plain(self) }
}
