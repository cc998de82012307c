import Foundation
import LoupeModel

/// Persist's documents as its writer writes them, for the documents Loupe changes.
///
/// Persist encodes with `JSONEncoder` and `.prettyPrinted`: two-space indentation, `"key" : value`,
/// `/` escaped as `\/`, an empty array as `[\n\n  ]`, `188.0` as `188`, nil optionals left out,
/// dates as `yyyy-MM-dd HH:mm:ss ZZZZZ` in the device's time zone. Loupe's own library writes the
/// same values compactly. A rewritten document keeps its own style and the exact text of every
/// member that does not change; only changed members are encoded again, new ones appended.
enum PersistJSON {
    /// How a file's documents are written.
    struct Style: Sendable, Equatable {
        var pretty: Bool
        var escapesSlash: Bool
        /// The UTC offset, in minutes, dates are written with (0 writes `Z`).
        var dateOffsetMinutes: Int

        /// Persist's own style at UTC.
        static let persist = Style(pretty: true, escapesSlash: true, dateOffsetMinutes: 0)
        /// Loupe's library style.
        static let compact = Style(pretty: false, escapesSlash: false, dateOffsetMinutes: 0)
    }

    /// The style of a document: pretty when it has line breaks; the offset of the first Persist
    /// date in it (else `fallback`'s).
    static func style(of text: String, fallback: Style) -> Style {
        var style = fallback
        // One pass over the bytes (`String.contains` would go through Foundation's search).
        var newline = false, slash = false, escapedSlash = false, previous: UInt8 = 0
        for byte in text.utf8 {
            if byte == 0x0A { newline = true }
            if byte == UInt8(ascii: "/") { slash = true; if previous == UInt8(ascii: "\\") { escapedSlash = true } }
            previous = byte
        }
        style.pretty = newline
        style.escapesSlash = newline ? !slash || escapedSlash : escapedSlash
        if let offset = dateOffset(in: text) { style.dateOffsetMinutes = offset }
        return style
    }

    /// The UTC offset of the first Persist date string in a text, in minutes.
    static func dateOffset(in text: String) -> Int? {
        var text = text
        return text.withUTF8 { bytes -> Int? in
            var i = 0
            while i + 22 < bytes.count {
                // "yyyy-MM-dd HH:mm:ss Z" or "… ±HH:mm", inside quotes
                if bytes[i] == UInt8(ascii: "\"") {
                    for length in [21, 26] where i + 1 + length < bytes.count && bytes[i + 1 + length] == UInt8(ascii: "\"") {
                        let slice = UnsafeBufferPointer(rebasing: bytes[(i + 1)..<(i + 1 + length)])
                        guard PersistDates.isPersistDate(slice) else { continue }
                        if length == 21 { return 0 }
                        let sign = slice[20] == UInt8(ascii: "-") ? -1 : 1
                        let h = Int(slice[21] - 48) * 10 + Int(slice[22] - 48), m = Int(slice[24] - 48) * 10 + Int(slice[25] - 48)
                        return sign * (h * 60 + m)
                    }
                }
                i += 1
            }
            return nil
        }
    }

    /// The byte ranges of a JSON object's top-level members: each key's text inside its quotes
    /// (escapes not decoded) and its value's exact text; nil when the text is not an object.
    /// (Nested values are skipped by bracket matching, strings respected: no recursion, any depth.)
    static func memberRanges(_ b: UnsafeBufferPointer<UInt8>) -> [(key: Range<Int>, value: Range<Int>)]? {
        var i = 0
        func space() { while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 } }
        func skipString() -> Bool {
            guard i < b.count, b[i] == UInt8(ascii: "\"") else { return false }
            i += 1
            while i < b.count, b[i] != UInt8(ascii: "\"") { i += b[i] == UInt8(ascii: "\\") ? 2 : 1 }
            guard i < b.count else { return false }
            i += 1
            return true
        }
        func skipValue() -> Bool {
            guard i < b.count else { return false }
            if b[i] == UInt8(ascii: "\"") { return skipString() }
            if b[i] == UInt8(ascii: "{") || b[i] == UInt8(ascii: "[") {
                var depth = 0
                while i < b.count {
                    switch b[i] {
                    case UInt8(ascii: "\""): if !skipString() { return false }; continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1; if depth == 0 { i += 1; return true }
                    default: break
                    }
                    i += 1
                }
                return false
            }
            scalar: while i < b.count {
                switch b[i] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09: break scalar
                default: i += 1
                }
            }
            return true
        }
        space()
        guard i < b.count, b[i] == UInt8(ascii: "{") else { return nil }
        i += 1
        var out: [(key: Range<Int>, value: Range<Int>)] = []
        space()
        if i < b.count, b[i] == UInt8(ascii: "}") { return out }
        while true {
            space()
            let keyStart = i
            guard skipString() else { return nil }
            let key = (keyStart + 1)..<(i - 1)
            space()
            guard i < b.count, b[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            space()
            let valueStart = i
            guard skipValue() else { return nil }
            out.append((key, valueStart..<i))
            space()
            guard i < b.count else { return nil }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            if b[i] == UInt8(ascii: "}") { return out }
            return nil
        }
    }

    /// The top-level members of a JSON object, keys decoded and values as their exact text; nil
    /// when the text is not an object.
    static func members(_ text: String) -> [(key: String, raw: String)]? {
        var text = text
        return text.withUTF8 { b -> [(key: String, raw: String)]? in
            guard let ranges = memberRanges(b) else { return nil }
            var out: [(key: String, raw: String)] = []
            out.reserveCapacity(ranges.count)
            for (keyRange, valueRange) in ranges {
                let keyBytes = UnsafeBufferPointer(rebasing: b[keyRange])
                let key: String
                if !keyBytes.contains(UInt8(ascii: "\\")) {
                    key = String(decoding: keyBytes, as: UTF8.self)   // nothing escaped: the bytes are the key
                } else {
                    let quoted = UnsafeBufferPointer(rebasing: b[(keyRange.lowerBound - 1)..<(keyRange.upperBound + 1)])
                    guard case .string(let decoded)? = try? JSONReader.parse(String(decoding: quoted, as: UTF8.self), persistDates: false) else { return nil }
                    key = decoded
                }
                out.append((key, String(decoding: UnsafeBufferPointer(rebasing: b[valueRange]), as: UTF8.self)))
            }
            return out
        }
    }

    /// `original` with the values of members it has replaced in place, every other byte kept;
    /// nil when that is not the whole change (a member removed or added, an escaped key).
    static func splicingValues(_ original: String, changes: [(key: String, value: Value)], style: Style) -> String? {
        guard !changes.contains(where: { $0.value.isNull }) else { return nil }
        var text = original
        return text.withUTF8 { b -> String? in
            guard let ranges = memberRanges(b) else { return nil }
            var replacements: [(range: Range<Int>, text: String)] = []
            for change in changes {
                var key = change.key
                let found = key.withUTF8 { k in
                    ranges.last { range in range.key.count == k.count && memcmp(b.baseAddress! + range.key.lowerBound, k.baseAddress!, k.count) == 0 }
                }
                guard let found, !UnsafeBufferPointer(rebasing: b[found.key]).contains(UInt8(ascii: "\\")) else { return nil }
                replacements.append((found.value, encode(change.value, style: style, indent: 1)))
            }
            replacements.sort { $0.range.lowerBound < $1.range.lowerBound }
            var out = [UInt8]()
            out.reserveCapacity(b.count + replacements.reduce(0) { $0 + $1.text.utf8.count })
            var at = 0
            for (range, value) in replacements where range.lowerBound >= at {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: b[at..<range.lowerBound]))
                out.append(contentsOf: value.utf8)
                at = range.upperBound
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: b[at...]))
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// `original` with `changes` applied (a null removes the key, as Persist leaves nil out),
    /// other members kept as written; or a new document of `changes` (in order) when there is none.
    static func rewrite(_ original: String?, changes: [(key: String, value: Value)], style: Style) -> String {
        if let original, let spliced = splicingValues(original, changes: changes, style: style) { return spliced }
        var members = original.flatMap(members) ?? []
        for (key, value) in changes {
            let index = members.firstIndex { $0.key == key }
            if value.isNull {
                if let index { members.remove(at: index) }
            } else if let index {
                members[index].raw = encode(value, style: style, indent: 1)
            } else {
                members.append((key, encode(value, style: style, indent: 1)))
            }
        }
        return document(members, style: style)
    }

    /// An object's text from members whose values are already encoded at indent level 1.
    static func document(_ members: [(key: String, raw: String)], style: Style) -> String {
        if members.isEmpty { return style.pretty ? "{\n\n}" : "{}" }
        if style.pretty {
            return "{\n" + members.map { "  " + string($0.key, style) + " : " + $0.raw }.joined(separator: ",\n") + "\n}"
        }
        return "{" + members.map { string($0.key, style) + ":" + $0.raw }.joined(separator: ",") + "}"
    }

    /// One value as JSON in the style, at nesting level `indent` (for pretty line breaks).
    static func encode(_ value: Value, style: Style, indent: Int) -> String {
        let pad = String(repeating: "  ", count: indent), inner = String(repeating: "  ", count: indent + 1)
        switch value {
        case .null, .reference: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d):
            if d.isFinite, d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }   // Swift writes 188.0 as 188
            return d.isFinite ? "\(d)" : "null"
        case .decimal(let d): return d.text
        case .string(let s): return string(s, style)
        case .date(let d): return string(DateText.persist(d, offsetMinutes: style.dateOffsetMinutes), style)
        case .data(let d): return string(d.base64EncodedString(), style)
        case .array(let items):
            if items.isEmpty { return style.pretty ? "[\n\n" + pad + "]" : "[]" }
            if style.pretty {
                return "[\n" + items.map { inner + encode($0, style: style, indent: indent + 1) }.joined(separator: ",\n") + "\n" + pad + "]"
            }
            return "[" + items.map { encode($0, style: style, indent: indent + 1) }.joined(separator: ",") + "]"
        case .object(let o):
            let present = o.members.filter { !$0.value.isNull }
            if present.isEmpty { return style.pretty ? "{\n\n" + pad + "}" : "{}" }
            if style.pretty {
                return "{\n" + present.map { inner + string($0.key, style) + " : " + encode($0.value, style: style, indent: indent + 1) }
                    .joined(separator: ",\n") + "\n" + pad + "}"
            }
            return "{" + present.map { string($0.key, style) + ":" + encode($0.value, style: style, indent: indent + 1) }.joined(separator: ",") + "}"
        }
    }

    /// A JSON string as JSONEncoder writes it: quotes, backslashes and control characters
    /// escaped, `/` as `\/` in Persist's style, everything else as it is.
    static func string(_ s: String, _ style: Style) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "/": out += style.escapesSlash ? "\\/" : "/"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{8}": out += "\\b"
            case "\u{C}": out += "\\f"
            default:
                if u.value < 0x20 { out += String(format: "\\u%04x", u.value) } else { out.unicodeScalars.append(u) }
            }
        }
        return out + "\""
    }
}
