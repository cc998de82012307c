import Foundation
import LoupeModel

/// Reads JSON text into model values without recursion, so nesting as deep as SQLite accepts
/// (2,000 levels) and deeper costs heap, never stack. Foundation's parser stops at 512 levels,
/// which would drop documents SQLite calls valid.
///
/// Numbers read as SQLite's JSON functions report them: digits without a fraction or exponent
/// that fit in 64 bits are integers, everything else a double. Object members keep their order.
/// With `persistDates`, strings in Persist's date forms become dates.
public enum JSONReader {
    /// A parse failure: what was wrong and at which byte.
    struct Failure: Error, CustomStringConvertible {
        let offset: Int
        let reason: String
        var description: String { "\(reason) at byte \(offset)" }
    }

    /// The deepest nesting read; deeper input is refused (a bound on memory per document).
    static let maximumDepth = 10_000

    private enum Frame {
        case array([Value])
        case object([(key: String, value: Value)], key: String?)
    }

    public static func parse(_ text: String, persistDates: Bool = true) throws -> Value {
        var text = text
        return try text.withUTF8 { try parse(bytes: $0, persistDates: persistDates) }
    }

    static func parse(bytes b: UnsafeBufferPointer<UInt8>, persistDates: Bool = true) throws -> Value {
        var scanner = Scanner(b, persistDates: persistDates)
        let value = try scanner.value()
        scanner.skipSpace()
        guard scanner.i == b.count else { throw scanner.fail("text after the value") }
        return value
    }

    /// Reads a document that should be an object member by member, without building the object:
    /// `body` gets each key (its UTF-8 bytes as stored, or the decoded text when it has escapes)
    /// and value, in order. Returns false, having called `body` for nothing, when the document is
    /// valid JSON but not an object; throws when it is not valid JSON (after `body` may have seen
    /// some members: callers keep them aside until this returns). With `wants`, the value of a
    /// member it declines is checked but not built (no string, date or number is made), and
    /// `body` does not see it: what parses, and what fails, is the same either way. `body` is
    /// called for a member right after `wants` accepted it, before `wants` sees the next.
    static func forEachMember(bytes b: UnsafeBufferPointer<UInt8>, persistDates: Bool = true,
                              wants: ((_ key: UnsafeBufferPointer<UInt8>, _ decoded: String?) -> Bool)? = nil,
                              _ body: (_ key: UnsafeBufferPointer<UInt8>, _ decoded: String?, _ value: Value) -> Void) throws -> Bool {
        var scanner = Scanner(b, persistDates: persistDates)
        scanner.skipSpace()
        guard scanner.i < b.count, b[scanner.i] == UInt8(ascii: "{") else {
            _ = try parse(bytes: b, persistDates: persistDates)
            return false
        }
        scanner.i += 1
        scanner.skipSpace()
        if scanner.i < b.count, b[scanner.i] == UInt8(ascii: "}") {
            scanner.i += 1
        } else {
            while true {
                scanner.skipSpace()
                guard scanner.i < b.count, b[scanner.i] == UInt8(ascii: "\"") else { throw scanner.fail("expected a key") }
                let (raw, decoded) = try scanner.keyBytes()
                scanner.skipSpace()
                guard scanner.i < b.count, b[scanner.i] == UInt8(ascii: ":") else { throw scanner.fail("expected ':'") }
                scanner.i += 1
                if let wants, !wants(raw, decoded) {
                    try scanner.skipValue()
                } else {
                    body(raw, decoded, try scanner.value())
                }
                scanner.skipSpace()
                guard scanner.i < b.count else { throw scanner.fail("unexpected end") }
                if b[scanner.i] == UInt8(ascii: ",") { scanner.i += 1; continue }
                guard b[scanner.i] == UInt8(ascii: "}") else { throw scanner.fail("expected ',' or a closing bracket") }
                scanner.i += 1
                break
            }
        }
        scanner.skipSpace()
        guard scanner.i == b.count else { throw scanner.fail("text after the value") }
        return true
    }

    /// The reading position over one JSON text and the readers of its tokens.
    private struct Scanner {
        let b: UnsafeBufferPointer<UInt8>
        let n: Int
        let persistDates: Bool
        var i = 0

        init(_ b: UnsafeBufferPointer<UInt8>, persistDates: Bool) {
            self.b = b
            self.n = b.count
            self.persistDates = persistDates
        }

        func fail(_ reason: String) -> Failure { Failure(offset: i, reason: reason) }

        @inline(__always)
        mutating func skipSpace() { while i < n, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 } }

        /// A key: its raw bytes, and its decoded text when it holds escapes. `b[i]` is the quote.
        mutating func keyBytes() throws -> (UnsafeBufferPointer<UInt8>, String?) {
            let start = i + 1
            var j = start
            var plain = true
            while j < n, b[j] != UInt8(ascii: "\"") {
                if b[j] == UInt8(ascii: "\\") { plain = false; j += 2; continue }
                if b[j] < 0x20 { i = j; throw fail("control character in a string") }
                j += 1
            }
            guard j < n else { i = j; throw fail("unclosed string") }
            if plain {
                i = j + 1
                return (UnsafeBufferPointer(rebasing: b[start..<j]), nil)
            }
            let decoded = try string()
            return (UnsafeBufferPointer(rebasing: b[start..<(i - 1)]), decoded)
        }

        /// Checks one value from `b[i]` on (after any space) as ``value()`` would read it, without
        /// building scalars; arrays and objects are read in full (rare in a document's members).
        mutating func skipValue() throws {
            skipSpace()
            guard i < n else { throw fail("unexpected end") }
            switch b[i] {
            case UInt8(ascii: "\""): try skipString()
            case UInt8(ascii: "t"): _ = try word("true", .null)
            case UInt8(ascii: "f"): _ = try word("false", .null)
            case UInt8(ascii: "n"): _ = try word("null", .null)
            case UInt8(ascii: "-"), 48...57: _ = try number()
            default: _ = try value()   // a container, or the failure value() reports
            }
        }

        /// Checks a string as ``string()`` reads it: a plain one is scanned, one with escapes is
        /// decoded (its escapes are what can fail).
        mutating func skipString() throws {
            let start = i
            i += 1
            while i < n, b[i] != UInt8(ascii: "\"") {
                if b[i] == UInt8(ascii: "\\") { i = start; _ = try string(); return }
                if b[i] < 0x20 { throw fail("control character in a string") }
                i += 1
            }
            guard i < n else { throw fail("unclosed string") }
            i += 1
        }

        mutating func string() throws -> String {
            // b[i] is the opening quote.
            i += 1
            let start = i
            var plain = true
            while i < n, b[i] != UInt8(ascii: "\"") {
                if b[i] == UInt8(ascii: "\\") { plain = false; i += 2; continue }
                if b[i] < 0x20 { throw fail("control character in a string") }
                i += 1
            }
            guard i < n else { throw fail("unclosed string") }
            defer { i += 1 }
            if plain { return String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self) }
            var out = [UInt8]()
            out.reserveCapacity(i - start)
            var j = start
            let end = i
            func hex4(_ at: Int) throws -> UInt32 {
                guard at + 4 <= end else { throw Failure(offset: at, reason: "bad \\u escape") }
                var v: UInt32 = 0
                for k in at..<(at + 4) {
                    let c = b[k]
                    let d: UInt8
                    switch c {
                    case 48...57: d = c - 48
                    case 65...70: d = c - 55
                    case 97...102: d = c - 87
                    default: throw Failure(offset: k, reason: "bad \\u escape")
                    }
                    v = v << 4 | UInt32(d)
                }
                return v
            }
            while j < end {
                let c = b[j]
                guard c == UInt8(ascii: "\\") else { out.append(c); j += 1; continue }
                guard j + 1 < end else { throw Failure(offset: j, reason: "bad escape") }
                let e = b[j + 1]
                j += 2
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4(j)
                    j += 4
                    if (0xD800..<0xDC00).contains(scalar), j + 6 <= end, b[j] == UInt8(ascii: "\\"), b[j + 1] == UInt8(ascii: "u") {
                        let low = try hex4(j + 2)
                        if (0xDC00..<0xE000).contains(low) {
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                            j += 6
                        }
                    }
                    let u = Unicode.Scalar(scalar) ?? "\u{FFFD}"   // a lone surrogate
                    out.append(contentsOf: Array(String(u).utf8))
                default: throw Failure(offset: j - 1, reason: "bad escape")
                }
            }
            return String(decoding: out, as: UTF8.self)
        }

        /// A number as SQLite's JSON functions read it: digits without a fraction or exponent
        /// that fit in 64 bits are an integer (read from the bytes), anything else a double.
        mutating func number() throws -> Value {
            let start = i
            var negative = false
            if i < n, b[i] == UInt8(ascii: "-") { negative = true; i += 1 }
            var isInteger = true
            var v: Int64 = 0
            var overflow = false
            while i < n {
                let c = b[i]
                if c >= 48 && c <= 57 {
                    if isInteger, !overflow {
                        let (m, o1) = v.multipliedReportingOverflow(by: 10)
                        let (a, o2) = negative ? m.subtractingReportingOverflow(Int64(c - 48)) : m.addingReportingOverflow(Int64(c - 48))
                        if o1 || o2 { overflow = true } else { v = a }
                    }
                    i += 1
                    continue
                }
                if c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") || c == UInt8(ascii: "+") || c == UInt8(ascii: "-") {
                    isInteger = false; i += 1; continue
                }
                break
            }
            let digits = i - start - (negative ? 1 : 0)
            if isInteger, !overflow, digits > 0 { return .int(v) }
            let text = String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)
            if isInteger, let w = Int64(text) { return .int(w) }
            guard let d = Double(text) else { throw Failure(offset: start, reason: "bad number") }
            return .double(d)
        }

        @inline(__always)
        mutating func word(_ w: StaticString, _ v: Value) throws -> Value {
            let count = w.utf8CodeUnitCount
            guard i + count <= n else { throw fail("unexpected character") }
            let p = w.utf8Start
            for k in 0..<count where b[i + k] != p[k] { throw fail("unexpected character") }
            i += count
            return v
        }

        /// One whole value from `b[i]` on (after any space), arrays and objects read without recursion.
        mutating func value() throws -> Value {
            var stack: [Frame] = []
            // What the next token may be.
            enum State { case value, firstValueOrClose, firstKeyOrClose, key, afterValue }
            var state = State.value
            while true {
                skipSpace()
                guard i < n else { throw fail("unexpected end") }
                let c = b[i]
                var completed: Value?
                switch state {
                case .firstValueOrClose where c == UInt8(ascii: "]"), .afterValue where c == UInt8(ascii: "]"):
                    guard case .array(let items)? = stack.popLast() else { throw fail("unexpected ']'") }
                    i += 1
                    completed = .array(items)
                case .firstKeyOrClose where c == UInt8(ascii: "}"), .afterValue where c == UInt8(ascii: "}"):
                    guard case .object(let members, _)? = stack.popLast() else { throw fail("unexpected '}'") }
                    i += 1
                    completed = .object(NestedObject(members))
                case .afterValue:
                    guard c == UInt8(ascii: ",") else { throw fail("expected ',' or a closing bracket") }
                    i += 1
                    if case .object? = stack.last { state = .key } else { state = .value }
                    continue
                case .firstKeyOrClose, .key:
                    guard c == UInt8(ascii: "\""), case .object(let members, _)? = stack.popLast() else { throw fail("expected a key") }
                    let key = try string()
                    skipSpace()
                    guard i < n, b[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                    i += 1
                    stack.append(.object(members, key: key))
                    state = .value
                    continue
                case .value, .firstValueOrClose:
                    switch c {
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        guard stack.count < maximumDepth else { throw fail("nested deeper than \(maximumDepth) levels") }
                        i += 1
                        stack.append(c == UInt8(ascii: "{") ? .object([], key: nil) : .array([]))
                        state = c == UInt8(ascii: "{") ? .firstKeyOrClose : .firstValueOrClose
                        continue
                    case UInt8(ascii: "\""):
                        let s = try string()
                        completed = persistDates ? JSONText.text(s) : .string(s)
                    case UInt8(ascii: "t"): completed = try word("true", .bool(true))
                    case UInt8(ascii: "f"): completed = try word("false", .bool(false))
                    case UInt8(ascii: "n"): completed = try word("null", .null)
                    case UInt8(ascii: "-"), 48...57: completed = try number()
                    default: throw fail("unexpected character")
                    }
                }
                // A value is complete: into the container on top, or it is the whole value.
                guard let value = completed else { continue }
                switch stack.popLast() {
                case nil:
                    return value
                case .array(var items)?:
                    items.append(value)
                    stack.append(.array(items))
                case .object(var members, let key)?:
                    members.append((key ?? "", value))
                    stack.append(.object(members, key: nil))
                }
                state = .afterValue
            }
        }
    }
}
