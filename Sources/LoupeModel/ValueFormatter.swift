import DisplayText
import Foundation

/// Renders values as text: plainly for people, and as JSON for scripts.
public enum ValueFormatter {
    /// Strings as they are, dates in ISO 8601, numbers in their shortest form, nested values as JSON,
    /// data as its size, null as `null`.
    public static func plain(_ value: Value) -> String {
        switch value {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return number(d)
        case .decimal(let d): return d.text
        case .string(let s): return s
        case .date(let d): return DateText.iso(d)
        case .data(let d): return "<\(d.count) bytes>"
        case .array, .object: return json(value)
        case .reference(let r): return "#\(r.type):\(r.row)"
        }
    }

    /// A value as shown to people on a terminal, before ``DisplayText`` escapes it: as ``plain(_:)``,
    /// but a text's backslashes doubled, so that a stored `\u{1B}` (six characters, shown
    /// `\\u{1B}`) is never mistaken for an escape character (shown `\u{1B}`). JSON, nested
    /// values and scripts' output keep their own escaping.
    public static func shown(_ value: Value) -> String {
        guard case .string(let s) = value else { return plain(value) }
        return shown(s)
    }

    /// A text as ``shown(_:)`` shows it: its backslashes doubled.
    public static func shown(_ text: String) -> String {
        text.utf8.contains(UInt8(ascii: "\\")) ? text.replacingOccurrences(of: "\\", with: "\\\\") : text
    }

    /// The first `width` cells or so of a text as ``shown(_:)`` shows it, reading no more of it
    /// than that (a 50 MB value costs what its first cells cost).
    public static func shownPrefix(_ text: String, width: Int) -> String {
        shown(String(text.prefix(width + 2)))
    }

    /// The shortest text of a double that reads back to it; integral values keep a `.0`.
    public static func number(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
        return "\(d)"
    }

    /// One JSON text for a value: dates as ISO strings, data as base64, references as null
    /// (a graph-free rendering; callers that know the graph render references as keys first).
    public static func json(_ value: Value) -> String {
        var out = ""
        writeJSON(value, to: &out)
        return out
    }

    /// Appends the JSON text of `value` to `out`.
    public static func writeJSON(_ value: Value, to out: inout String) {
        switch value {
        case .null, .reference: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if d.isFinite { out += (d == d.rounded() && abs(d) < 1e15) ? String(Int64(d)) + ".0" : "\(d)" } else { out += "null" }
        case .decimal(let d): out += d.text
        case .string(let s): writeJSONString(s, to: &out)
        case .date(let d): writeJSONString(DateText.iso(d), to: &out)
        case .data(let d): writeJSONString(d.base64EncodedString(), to: &out)
        case .array(let items):
            out += "["
            for (i, v) in items.enumerated() { if i > 0 { out += ", " }; writeJSON(v, to: &out) }
            out += "]"
        case .object(let o):
            out += "{"
            for (i, m) in o.members.enumerated() {
                if i > 0 { out += ", " }
                writeJSONString(m.key, to: &out); out += ": "; writeJSON(m.value, to: &out)
            }
            out += "}"
        }
    }

    /// Appends a JSON string literal, escaping quotes, backslashes and control characters as JSON
    /// requires, and also, as `\\u` escapes, every scalar ``DisplayText`` would not show as it is
    /// (C1 controls, bidi overrides, zero-width characters): the same data, nothing a terminal
    /// acts on, still valid JSON.
    public static func writeJSONString(_ s: String, to out: inout String) {
        out += "\""
        if s.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            out += s
            out += "\""
            return
        }
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                guard DisplayText.needsEscape(u) else { out.unicodeScalars.append(u); continue }
                if u.value > 0xFFFF {
                    let v = u.value - 0x10000
                    out += String(format: "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF))
                } else {
                    out += String(format: "\\u%04x", u.value)
                }
            }
        }
        out += "\""
    }
}
