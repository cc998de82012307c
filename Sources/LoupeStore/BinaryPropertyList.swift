import Foundation

/// A reader of binary property lists (`bplist00`), for the model caches of Core Data stores.
///
/// Foundation's reader on Linux traps on some damaged lists (found by mutating a real model
/// cache: a set holding a dictionary crashed while bridging), and a store's cache is data from a
/// file, so it must only ever fail to read. Every offset, count and reference is checked against
/// the bytes; nesting and the number of values made are bounded, so cycles and huge counts end in
/// nil. Values come out as Swift values: dictionaries keyed by strings, arrays (sets too),
/// strings, `Int`, `Double`, `Bool`, `Data`, ``BinaryPropertyList/null``, and archive UIDs as
/// `[uidKey: Int]` dictionaries (the `CF$UID` shape of XML lists).
enum BinaryPropertyList {
    /// The key a UID is written under.
    static let uidKey = "CF$UID"
    /// A `null` value (`$null` is a string in archives; this is the plist's own null marker).
    struct Null {}
    static let null = Null()

    /// The list's top value, or nil when the bytes are not a well-formed binary property list.
    static func parse(_ bytes: [UInt8]) -> Any? {
        var reader = Reader(bytes)
        return reader.top()
    }

    private struct Reader {
        let b: [UInt8]
        var offsets: [Int] = []
        var refSize = 1
        /// Values still allowed to be made (a list cannot expand without end through shared references).
        var budget = 1_000_000
        static let maximumDepth = 64

        init(_ bytes: [UInt8]) { b = bytes }

        /// A big-endian unsigned integer of `size` bytes at `at`, or nil past the end.
        func uint(_ at: Int, _ size: Int) -> Int? {
            guard size >= 1, size <= 8, at >= 0, at <= b.count - size else { return nil }
            var v: UInt64 = 0
            for k in 0..<size { v = v << 8 | UInt64(b[at + k]) }
            return v > UInt64(Int.max) ? nil : Int(v)
        }

        mutating func top() -> Any? {
            guard b.count >= 40, b.starts(with: Array("bplist00".utf8)) else { return nil }
            let trailer = b.count - 32
            let offsetSize = Int(b[trailer + 6])
            refSize = Int(b[trailer + 7])
            guard (1...8).contains(offsetSize), (1...8).contains(refSize),
                  let count = uint(trailer + 8, 8), let top = uint(trailer + 16, 8), let table = uint(trailer + 24, 8),
                  count > 0, count <= trailer, top < count, table >= 8, table <= trailer,
                  count <= (trailer - table) / offsetSize else { return nil }
            offsets.reserveCapacity(count)
            for i in 0..<count {
                guard let o = uint(table + i * offsetSize, offsetSize), o >= 8, o < table else { return nil }
                offsets.append(o)
            }
            return object(top, depth: 0)
        }

        /// The count stored after a marker whose low nibble is `info` (0xF: an integer follows),
        /// and where the contents start.
        func count(_ info: Int, after at: Int) -> (count: Int, start: Int)? {
            if info != 0xF { return (info, at) }
            guard at < b.count, b[at] >> 4 == 0x1 else { return nil }
            let size = 1 << Int(b[at] & 0xF)
            guard let n = uint(at + 1, min(size, 8)) else { return nil }
            return (n, at + 1 + size)
        }

        mutating func object(_ index: Int, depth: Int) -> Any? {
            guard index >= 0, index < offsets.count, depth < Reader.maximumDepth, budget > 0 else { return nil }
            budget -= 1
            let at = offsets[index]
            let marker = b[at]
            let info = Int(marker & 0xF)
            switch marker >> 4 {
            case 0x0:
                switch info {
                case 0x0: return BinaryPropertyList.null
                case 0x8: return false
                case 0x9: return true
                default: return nil
                }
            case 0x1:
                let size = 1 << info
                guard size <= 16, at + 1 + size <= b.count else { return nil }
                // 8-byte integers are signed; 16-byte ones keep their low 8 bytes.
                var v: UInt64 = 0
                for k in max(0, size - 8)..<size { v = v << 8 | UInt64(b[at + 1 + k]) }
                return size >= 8 ? Int(Int64(bitPattern: v)) : Int(v)
            case 0x2, 0x3:
                let size = marker >> 4 == 0x3 ? 8 : 1 << info
                guard size == 4 || size == 8, let bits = unsigned(at + 1, size) else { return nil }
                return size == 4 ? Double(Float(bitPattern: UInt32(truncatingIfNeeded: bits))) : Double(bitPattern: bits)
            case 0x4, 0x5, 0x6:
                guard let (n, start) = count(info, after: at + 1) else { return nil }
                let length: (partialValue: Int, overflow: Bool) = marker >> 4 == 0x6 ? n.multipliedReportingOverflow(by: 2) : (n, false)
                guard !length.overflow, start >= 0, length.partialValue <= b.count - start else { return nil }
                let slice = b[start..<(start + length.partialValue)]
                switch marker >> 4 {
                case 0x4: return Data(slice)
                case 0x5: return String(decoding: slice, as: UTF8.self)
                default:
                    var units: [UInt16] = []
                    units.reserveCapacity(n)
                    var k = start
                    while k < start + length.partialValue { units.append(UInt16(b[k]) << 8 | UInt16(b[k + 1])); k += 2 }
                    return String(decoding: units, as: UTF16.self)
                }
            case 0x8:
                guard let uid = uint(at + 1, info + 1) else { return nil }
                return [BinaryPropertyList.uidKey: uid]
            case 0xA, 0xC, 0xD:
                guard let (n, start) = count(info, after: at + 1) else { return nil }
                let entries: (partialValue: Int, overflow: Bool) = marker >> 4 == 0xD ? n.multipliedReportingOverflow(by: 2) : (n, false)
                guard !entries.overflow, entries.partialValue <= (b.count - start) / refSize, n <= budget else { return nil }
                var refs: [Int] = []
                refs.reserveCapacity(entries.partialValue)
                for k in 0..<entries.partialValue {
                    guard let r = uint(start + k * refSize, refSize) else { return nil }
                    refs.append(r)
                }
                if marker >> 4 != 0xD {
                    var items: [Any] = []
                    for r in refs { guard let v = object(r, depth: depth + 1) else { return nil }; items.append(v) }
                    return items
                }
                var dictionary: [String: Any] = [:]
                for k in 0..<n {
                    guard let key = object(refs[k], depth: depth + 1) as? String, let value = object(refs[n + k], depth: depth + 1) else { return nil }
                    dictionary[key] = value
                }
                return dictionary
            default:
                return nil
            }
        }

        /// A big-endian integer of up to 8 bytes read without the `Int` range check (float bits).
        func unsigned(_ at: Int, _ size: Int) -> UInt64? {
            guard size >= 1, size <= 8, at >= 0, at <= b.count - size else { return nil }
            var v: UInt64 = 0
            for k in 0..<size { v = v << 8 | UInt64(b[at + k]) }
            return v
        }
    }
}
