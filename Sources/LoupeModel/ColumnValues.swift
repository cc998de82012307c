import Foundation

/// One attribute's values by row, held compactly when they are all of one kind.
///
/// A column as a load builds it is an array of ``Value`` (24 bytes a cell). Once the graph is
/// finished (``compact()``), a column whose values are all integers, all doubles, all dates, all
/// texts or all booleans (nulls aside) keeps them in an array of that type — 8 bytes a number or
/// date, 16 a text, 1 a boolean — and its nulls in a bit mask (none allocated when there are
/// none). A million-object store holds a few million such cells: a third of their memory, and a
/// path that reads a column at random (`book.pages` from every loan) touches a third of the
/// cache lines. Reading gives the same ``Value`` either way; writing a value of another kind turns
/// the column back into an array of values first.
public struct ColumnValues: RandomAccessCollection, Sendable, Equatable {
    @usableFromInline enum Storage: Sendable, Equatable {
        case mixed([Value])
        case ints([Int64], NullMask)
        case doubles([Double], NullMask)
        /// Seconds since the reference date (``Date/timeIntervalSinceReferenceDate``).
        case dates([Double], NullMask)
        case strings([String], NullMask)
        case bools([Bool], NullMask)
    }

    @usableFromInline var storage: Storage

    public init() { storage = .mixed([]) }
    public init(_ values: [Value]) { storage = .mixed(values) }

    /// Equal when they hold the same values, however they hold them.
    public static func == (a: ColumnValues, b: ColumnValues) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0 == $1 }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public var count: Int {
        switch storage {
        case .mixed(let a): return a.count
        case .ints(let a, _): return a.count
        case .doubles(let a, _), .dates(let a, _): return a.count
        case .strings(let a, _): return a.count
        case .bools(let a, _): return a.count
        }
    }

    @inlinable public subscript(row: Int) -> Value {
        get {
            switch storage {
            case .mixed(let a): return a[row]
            case .ints(let a, let nulls): return nulls.contains(row) ? .null : .int(a[row])
            case .doubles(let a, let nulls): return nulls.contains(row) ? .null : .double(a[row])
            case .dates(let a, let nulls): return nulls.contains(row) ? .null : .date(Date(timeIntervalSinceReferenceDate: a[row]))
            case .strings(let a, let nulls): return nulls.contains(row) ? .null : .string(a[row])
            case .bools(let a, let nulls): return nulls.contains(row) ? .null : .bool(a[row])
            }
        }
        set { set(newValue, at: row) }
    }

    /// True when the values are held in an array of one type (for tests and `bench`).
    public var isCompact: Bool { if case .mixed = storage { return false } else { return true } }

    /// Writes `value` at `row`: in place when the column holds its kind (or it is null), else
    /// after turning the column into an array of values.
    @usableFromInline mutating func set(_ value: Value, at row: Int) {
        // Each case binds its arrays, then empties `storage`, so that they are uniquely referenced
        // and written in place (switching over a tuple would keep a second reference alive).
        switch storage {
        case .mixed(var a):
            storage = .mixed([]); a[row] = value; storage = .mixed(a)
            return
        case .ints(var a, var nulls):
            if case .int(let i) = value { storage = .mixed([]); a[row] = i; nulls.remove(row); storage = .ints(a, nulls); return }
        case .doubles(var a, var nulls):
            if case .double(let d) = value { storage = .mixed([]); a[row] = d; nulls.remove(row); storage = .doubles(a, nulls); return }
        case .dates(var a, var nulls):
            if case .date(let d) = value { storage = .mixed([]); a[row] = d.timeIntervalSinceReferenceDate; nulls.remove(row); storage = .dates(a, nulls); return }
        case .strings(var a, var nulls):
            if case .string(let s) = value { storage = .mixed([]); a[row] = s; nulls.remove(row); storage = .strings(a, nulls); return }
        case .bools(var a, var nulls):
            if case .bool(let b) = value { storage = .mixed([]); a[row] = b; nulls.remove(row); storage = .bools(a, nulls); return }
        }
        if value.isNull {
            // A null in a compact column: its bit in the mask.
            let n = count
            switch storage {
            case .ints(let a, var m): storage = .mixed([]); m.insert(row, count: n); storage = .ints(a, m)
            case .doubles(let a, var m): storage = .mixed([]); m.insert(row, count: n); storage = .doubles(a, m)
            case .dates(let a, var m): storage = .mixed([]); m.insert(row, count: n); storage = .dates(a, m)
            case .strings(let a, var m): storage = .mixed([]); m.insert(row, count: n); storage = .strings(a, m)
            case .bools(let a, var m): storage = .mixed([]); m.insert(row, count: n); storage = .bools(a, m)
            case .mixed: break
            }
            return
        }
        // Another kind: an array of values from here on.
        var a = Array(self)
        storage = .mixed([])
        a[row] = value
        storage = .mixed(a)
    }

    /// Adds a value after the last row.
    public mutating func append(_ value: Value) {
        expand()
        guard case .mixed(var a) = storage else { return }
        storage = .mixed([])
        a.append(value)
        storage = .mixed(a)
    }

    /// Adds values after the last row.
    public mutating func append<S: Sequence>(contentsOf values: S) where S.Element == Value {
        expand()
        guard case .mixed(var a) = storage else { return }
        storage = .mixed([])
        a.append(contentsOf: values)
        storage = .mixed(a)
    }

    /// Removes the last `k` rows.
    public mutating func removeLast(_ k: Int) {
        expand()
        guard case .mixed(var a) = storage else { return }
        storage = .mixed([])
        a.removeLast(k)
        storage = .mixed(a)
    }

    /// Holds the values as an array of ``Value`` again (before rows are added).
    mutating func expand() {
        if case .mixed = storage { return }
        storage = .mixed(Array(self))
    }

    /// Holds the values in an array of their one kind, when they have one (nulls aside).
    /// `kinds`, when the caller knows them (a loader counts them as it reads), spares a pass.
    public mutating func compact(kinds known: ValueKind? = nil) {
        guard case .mixed(let a) = storage, !a.isEmpty else { return }
        var kind: ValueKind = []
        var hasNulls = true
        if let known {
            kind = known.subtracting(.null)
            hasNulls = known.contains(.null) || a.contains { $0.isNull }
        } else {
            for v in a where !v.isNull {
                kind.insert(v.kind)
                if kind.rawValue & (kind.rawValue - 1) != 0 { return }   // two kinds: stays as it is
            }
        }
        guard kind.rawValue != 0, kind.rawValue & (kind.rawValue - 1) == 0 else { return }
        var nulls = NullMask()
        if hasNulls { for (row, v) in a.enumerated() where v.isNull { nulls.insert(row, count: a.count) } }
        switch kind {
        case .integer: storage = .ints(a.map { if case .int(let i) = $0 { return i } else { return 0 } }, nulls)
        case .double: storage = .doubles(a.map { if case .double(let d) = $0 { return d } else { return 0 } }, nulls)
        case .date: storage = .dates(a.map { if case .date(let d) = $0 { return d.timeIntervalSinceReferenceDate } else { return 0 } }, nulls)
        case .string: storage = .strings(a.map { if case .string(let s) = $0 { return s } else { return "" } }, nulls)
        case .bool: storage = .bools(a.map { if case .bool(let b) = $0 { return b } else { return false } }, nulls)
        default: return
        }
    }
}

/// Which rows of a compact column are null: one bit a row, no words at all while none is.
@usableFromInline struct NullMask: Sendable, Equatable {
    @usableFromInline var words: [UInt64] = []

    @inlinable func contains(_ row: Int) -> Bool {
        guard !words.isEmpty else { return false }
        return words[row >> 6] & (1 << UInt64(row & 63)) != 0
    }

    /// Marks `row` null in a column of `count` rows.
    mutating func insert(_ row: Int, count: Int) {
        if words.isEmpty { words = Array(repeating: 0, count: (count + 63) >> 6) }
        words[row >> 6] |= 1 << UInt64(row & 63)
    }

    /// Marks `row` not null.
    mutating func remove(_ row: Int) {
        guard !words.isEmpty else { return }
        words[row >> 6] &= ~(1 << UInt64(row & 63))
    }
}
