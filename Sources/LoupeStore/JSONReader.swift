import Foundation
import LoupeModel

/// Reads JSON text into model values without recursion, so nesting as deep as SQLite accepts
/// (2,000 levels) and deeper costs heap, never stack. Foundation's parser stops at 512 levels,
/// which would drop documents SQLite calls valid.
///
/// Numbers read as SQLite's JSON functions report them: digits without a fraction or exponent
/// that fit in 64 bits are integers, everything else a double. Object members keep their order.
/// With `persistDates`, strings in Persist's date forms become dates.
enum JSONReader {
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

    static func parse(_ text: String, persistDates: Bool = true) throws -> Value {
        var text = text
        return try text.withUTF8 { try parse(bytes: $0, persistDates: persistDates) }
    }

    static func parse(bytes b: UnsafeBufferPointer<UInt8>, persistDates: Bool = true) throws -> Value {
        var i = 0
        let n = b.count
        var stack: [Frame] = []
        func fail(_ reason: String) -> Failure { Failure(offset: i, reason: reason) }
        func skipSpace() { while i < n, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 } }

        func string() throws -> String {
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
            func hex4(_ at: Int) throws -> UInt32 {
                guard at + 4 <= i else { throw Failure(offset: at, reason: "bad \\u escape") }
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
            while j < i {
                let c = b[j]
                guard c == UInt8(ascii: "\\") else { out.append(c); j += 1; continue }
                guard j + 1 < i else { throw Failure(offset: j, reason: "bad escape") }
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
                    if (0xD800..<0xDC00).contains(scalar), j + 6 <= i, b[j] == UInt8(ascii: "\\"), b[j + 1] == UInt8(ascii: "u") {
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

        func number() throws -> Value {
            let start = i
            if i < n, b[i] == UInt8(ascii: "-") { i += 1 }
            var isInteger = true
            while i < n {
                let c = b[i]
                if c >= 48 && c <= 57 { i += 1; continue }
                if c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") || c == UInt8(ascii: "+") || c == UInt8(ascii: "-") {
                    isInteger = false; i += 1; continue
                }
                break
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)
            if isInteger, let v = Int64(text) { return .int(v) }
            guard let d = Double(text) else { throw Failure(offset: start, reason: "bad number") }
            return .double(d)
        }

        func word(_ w: String, _ v: Value) throws -> Value {
            let bytes = Array(w.utf8)
            guard i + bytes.count <= n, Array(b[i..<(i + bytes.count)]) == bytes else { throw fail("unexpected character") }
            i += bytes.count
            return v
        }

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
                guard c == UInt8(ascii: "\""), case .object(let members, _)? = stack.last else { throw fail("expected a key") }
                let key = try string()
                skipSpace()
                guard i < n, b[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                i += 1
                stack[stack.count - 1] = .object(members, key: key)
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
            // A value is complete: into the container on top, or the whole document.
            guard let value = completed else { continue }
            switch stack.popLast() {
            case nil:
                skipSpace()
                guard i == n else { throw fail("text after the value") }
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
