import Foundation

/// One attribute's values by row, held compactly when they are all of one kind.
///
/// A column whose values are all integers, all doubles, all dates, all texts or all booleans
/// (nulls aside) keeps them in an array of that type — 8 bytes a number or date, 16 a text, 1 a
/// boolean, against 24 for a ``Value`` — and its nulls in a bit mask (none when no row is null).
/// A reader fills a column from ``init(nulls:)`` in the kind of its first value; ``compact()``
/// (``GraphBuilder/finish()``) turns what other readers built into the same form. A million-object
/// store holds a few million such cells: a third of their memory, and a path that reads a column
/// at random (`book.pages` from every loan) touches a third of the cache lines. Reading gives the
/// same ``Value`` either way; writing a value of another kind turns the column into an array of
/// values first.
public struct ColumnValues: RandomAccessCollection, Sendable, Equatable {
    @usableFromInline enum Storage: Sendable, Equatable {
        /// `count` rows, every one null (a reader's column before its first value).
        case nulls(Int)
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
    /// `count` null rows, held in no memory until a value is written; the first value written
    /// decides the kind the column is held as.
    public init(nulls count: Int) { storage = .nulls(count) }

    /// Equal when they hold the same values, however they hold them.
    public static func == (a: ColumnValues, b: ColumnValues) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0 == $1 }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public var count: Int {
        switch storage {
        case .nulls(let n): return n
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
            case .nulls: return .null
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
    @inlinable mutating func set(_ value: Value, at row: Int) {
        // Each case binds its arrays, then empties `storage`, so that they are uniquely referenced
        // and written in place (switching over a tuple would keep a second reference alive).
        switch storage {
        case .nulls(let n):
            // The first value: the column takes its kind (every other row null).
            if value.isNull { return }
            let mask = NullMask(allNull: n)
            switch value {
            case .int: storage = .ints(Array(repeating: 0, count: n), mask)
            case .double: storage = .doubles(Array(repeating: 0, count: n), mask)
            case .date: storage = .dates(Array(repeating: 0, count: n), mask)
            case .string: storage = .strings(Array(repeating: "", count: n), mask)
            case .bool: storage = .bools(Array(repeating: false, count: n), mask)
            default: storage = .mixed(Array(repeating: .null, count: n))
            }
            set(value, at: row)
            return
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
            case .mixed, .nulls: break
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

    /// Removes the last `k` rows, keeping how the rest are held.
    public mutating func removeLast(_ k: Int) {
        let n = count - k
        let kept = storage
        storage = .mixed([])
        switch kept {
        case .nulls: storage = .nulls(n)
        case .mixed(var a): a.removeLast(k); storage = .mixed(a)
        case .ints(var a, var m): a.removeLast(k); m.truncate(n); storage = .ints(a, m)
        case .doubles(var a, var m): a.removeLast(k); m.truncate(n); storage = .doubles(a, m)
        case .dates(var a, var m): a.removeLast(k); m.truncate(n); storage = .dates(a, m)
        case .strings(var a, var m): a.removeLast(k); m.truncate(n); storage = .strings(a, m)
        case .bools(var a, var m): a.removeLast(k); m.truncate(n); storage = .bools(a, m)
        }
    }

    /// Adds the rows of `other` after these: held as they are when both hold one kind (or only
    /// nulls), else as an array of values.
    public mutating func append(_ other: ColumnValues) {
        let n = count, m = other.count
        func joined(_ a: NullMask, _ b: NullMask) -> NullMask {
            var mask = a
            mask.truncate(n)
            for row in 0..<m where b.contains(row) { mask.insert(n + row, count: n + m) }
            return mask
        }
        let mine = storage
        storage = .mixed([])
        switch (mine, other.storage) {
        case (.nulls, .nulls): storage = .nulls(n + m); return
        case (.nulls, _):
            // Nulls first: held as the other is, with these rows null.
            var typed = other.withNullsBefore(n)
            swap(&storage, &typed.storage)
            return
        case (.ints(var a, let ma), .ints(let b, let mb)): a += b; storage = .ints(a, joined(ma, mb)); return
        case (.doubles(var a, let ma), .doubles(let b, let mb)): a += b; storage = .doubles(a, joined(ma, mb)); return
        case (.dates(var a, let ma), .dates(let b, let mb)): a += b; storage = .dates(a, joined(ma, mb)); return
        case (.strings(var a, let ma), .strings(let b, let mb)): a += b; storage = .strings(a, joined(ma, mb)); return
        case (.bools(var a, let ma), .bools(let b, let mb)): a += b; storage = .bools(a, joined(ma, mb)); return
        case (_, .nulls):
            storage = mine
            appendNulls(m)
            return
        default:
            storage = mine
            expand()
            append(contentsOf: other)
        }
    }

    /// `count` null rows, then these rows, held as these are.
    func withNullsBefore(_ count: Int) -> ColumnValues {
        guard count > 0 else { return self }
        var out = ColumnValues(nulls: count)
        switch storage {
        case .nulls(let n): out.storage = .nulls(count + n)
        case .mixed(let a): out.storage = .mixed(Array(repeating: .null, count: count) + a)
        case .ints(let a, _): out.storage = .ints(Array(repeating: 0, count: count) + a, shiftedMask(count))
        case .doubles(let a, _): out.storage = .doubles(Array(repeating: 0, count: count) + a, shiftedMask(count))
        case .dates(let a, _): out.storage = .dates(Array(repeating: 0, count: count) + a, shiftedMask(count))
        case .strings(let a, _): out.storage = .strings(Array(repeating: "", count: count) + a, shiftedMask(count))
        case .bools(let a, _): out.storage = .bools(Array(repeating: false, count: count) + a, shiftedMask(count))
        }
        return out
    }

    /// The null mask of `count` null rows followed by these rows.
    private func shiftedMask(_ count: Int) -> NullMask {
        let total = count + self.count
        var mask = NullMask(allNull: count)
        for row in 0..<self.count where self[row].isNull { mask.insert(count + row, count: total) }
        return mask
    }

    /// Adds `k` null rows, keeping how the rows are held.
    mutating func appendNulls(_ k: Int) {
        let n = count
        let kept = storage
        storage = .mixed([])
        func grown(_ m: NullMask) -> NullMask {
            var mask = m
            mask.truncate(n)
            for row in n..<(n + k) { mask.insert(row, count: n + k) }
            return mask
        }
        switch kept {
        case .nulls: storage = .nulls(n + k)
        case .mixed(var a): a += repeatElement(.null, count: k); storage = .mixed(a)
        case .ints(var a, let m): a += repeatElement(0, count: k); storage = .ints(a, grown(m))
        case .doubles(var a, let m): a += repeatElement(0, count: k); storage = .doubles(a, grown(m))
        case .dates(var a, let m): a += repeatElement(0, count: k); storage = .dates(a, grown(m))
        case .strings(var a, let m): a += repeatElement("", count: k); storage = .strings(a, grown(m))
        case .bools(var a, let m): a += repeatElement(false, count: k); storage = .bools(a, grown(m))
        }
    }

    /// Holds the values as an array of ``Value`` again (before rows are added).
    mutating func expand() {
        if case .mixed = storage { return }
        storage = .mixed(Array(self))
    }

    /// Holds the values in an array of their one kind, when they have one (nulls aside), with
    /// no null mask when no row is null (a read then touches the values alone).
    /// `kinds`, when the caller knows them (a loader counts them as it reads), spares a pass.
    public mutating func compact(kinds known: ValueKind? = nil) {
        // A reader's numbers are copied once into an allocation of their final size: a column
        // grown in halves and read at random by paths was measured up to twice slower at 3M
        // objects in its first buffers than in a fresh one.
        let kept = storage
        switch kept {
        case .ints(let a, var m): _ = m.dropIfEmpty(); storage = .mixed([]); storage = .ints(a.withUnsafeBufferPointer { Array($0) }, m); return
        case .doubles(let a, var m): _ = m.dropIfEmpty(); storage = .mixed([]); storage = .doubles(a.withUnsafeBufferPointer { Array($0) }, m); return
        case .dates(let a, var m): _ = m.dropIfEmpty(); storage = .mixed([]); storage = .dates(a.withUnsafeBufferPointer { Array($0) }, m); return
        case .strings(let a, var m): if m.dropIfEmpty() { storage = .mixed([]); storage = .strings(a, m) }; return
        case .bools(let a, var m): if m.dropIfEmpty() { storage = .mixed([]); storage = .bools(a, m) }; return
        case .nulls, .mixed: break
        }
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
        case .double:
            // Exact decimals are doubles in kind but keep their digits: such a column stays values.
            if a.contains(where: { if case .decimal = $0 { return true } else { return false } }) { return }
            storage = .doubles(a.map { if case .double(let d) = $0 { return d } else { return 0 } }, nulls)
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

    @inlinable init() {}

    /// Every one of `count` rows null.
    @inlinable init(allNull count: Int) {
        guard count > 0 else { return }
        words = Array(repeating: ~0, count: (count + 63) >> 6)
        truncate(count)   // no bit beyond the last row
    }

    /// Forgets the rows from `count` on (their bits cleared, the words beyond dropped).
    @inlinable mutating func truncate(_ count: Int) {
        guard !words.isEmpty else { return }
        let needed = (count + 63) >> 6
        if words.count > needed { words.removeLast(words.count - needed) }
        if count & 63 != 0, needed > 0 { words[needed - 1] &= (1 << UInt64(count & 63)) - 1 }
    }

    @inlinable func contains(_ row: Int) -> Bool {
        guard !words.isEmpty else { return false }
        return words[row >> 6] & (1 << UInt64(row & 63)) != 0
    }

    /// Marks `row` null in a column of `count` rows.
    @inlinable mutating func insert(_ row: Int, count: Int) {
        let needed = (max(count, row + 1) + 63) >> 6
        if words.count < needed { words += repeatElement(0, count: needed - words.count) }
        words[row >> 6] |= 1 << UInt64(row & 63)
    }

    /// Drops the words when no row is null; true when it did.
    mutating func dropIfEmpty() -> Bool {
        guard !words.isEmpty, words.allSatisfy({ $0 == 0 }) else { return false }
        words = []
        return true
    }

    /// Marks `row` not null.
    @inlinable mutating func remove(_ row: Int) {
        guard !words.isEmpty else { return }
        words[row >> 6] &= ~(1 << UInt64(row & 63))
    }
}
