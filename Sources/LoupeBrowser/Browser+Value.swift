import DisplayText
import Foundation
import LoupeModel

/// `V`: the whole value of the selected cell (records) or attribute (detail) in a scrollable
/// view — text wrapped as it is (line breaks kept), nested objects and arrays indented one level
/// per line, data as a hex dump with its size. The cost is paid once when the view opens, and
/// bounded: a 50 MB value shows its first 20,000 lines and says how much more there is.
extension Browser {
    /// The most lines the value view builds.
    static let valueViewLineLimit = 20_000

    func viewSelectedValue() {
        guard graph != nil else { return }
        guard let (title, value) = selectedValue() else {
            message = focus == .detail && selectedObject != nil ? "V shows an attribute's value: select one" : "no value selected"
            return
        }
        var lines: [String] = []
        // Text is wrapped here at the view's width, so that a line of any length reads to its end
        // (the dialog itself shows at most a few rows of one line).
        let wrapWidth = max(20, min(112, layout.repl.width - 6))
        Browser.valueLines(value, indent: "", width: wrapWidth, into: &lines)
        if lines.count > Browser.valueViewLineLimit {
            lines.removeLast(lines.count - Browser.valueViewLineLimit)
            lines.append("… the rest is not shown (\(Browser.valueViewLineLimit) lines at most; the title gives the whole size)")
        }
        dialog = Dialog(purpose: .value, title: DisplayText.fit(title, width: 80) + " — " + Browser.valueSummary(value),
                        lines: lines, choices: "Esc closes · PgUp/PgDn scroll")
    }

    /// The kind and size of a value, for the view's title.
    static func valueSummary(_ value: Value) -> String {
        switch value {
        case .string(let s): return "text, \(s.unicodeScalars.count) characters"
        case .data(let d): return "data, \(d.count) bytes"
        case .array(let items): return "array of \(items.count)"
        case .object(let o): return "object of \(o.members.count) members"
        case .null: return "null"
        case .bool: return "bool"
        case .int: return "integer"
        case .double: return "double"
        case .decimal(let d): return "decimal, \(d.significantDigits) digits"
        case .date: return "date"
        case .reference: return "reference"
        }
    }

    /// Appends a value's lines: text split at its line breaks, members and items one per line
    /// with nested ones indented, data as hex, 16 bytes a line. Stops adding once past the limit.
    static func valueLines(_ value: Value, indent: String, width: Int, into lines: inout [String]) {
        guard lines.count <= valueViewLineLimit else { return }
        switch value {
        case .string(let s):
            // Every line break ends a line: LF, CRLF, CR, U+2028, U+2029, NEL (never shown escaped).
            for line in s.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
                let room = valueViewLineLimit + 1 - lines.count
                guard room > 0 else { return }
                let columns = max(8, width - indent.count)
                let rows = line.isEmpty ? [""] : DisplayText.wrap(ValueFormatter.shownPrefix(String(line), width: room * columns), width: columns, maxRows: room, atWords: true)
                lines.append(contentsOf: rows.map { indent + $0 })
            }
        case .data(let d):
            var offset = 0
            for chunk in d.prefix(16 * valueViewLineLimit).chunked(16) {
                let hex = chunk.map { String(format: "%02x", $0) }.joined(separator: " ")
                let ascii = String(chunk.map { $0 >= 0x20 && $0 < 0x7F ? Character(UnicodeScalar($0)) : "." })
                lines.append(indent + String(format: "%08x  ", offset) + hex.padding(toLength: 48, withPad: " ", startingAt: 0) + " " + ascii)
                offset += 16
            }
            if d.count > 16 * valueViewLineLimit { lines.append(indent + "… \(d.count - 16 * valueViewLineLimit) more bytes") }
        case .array(let items):
            if items.isEmpty { lines.append(indent + "[]"); return }
            for (i, item) in items.enumerated() {
                if case .array = item { lines.append(indent + "[\(i)]"); valueLines(item, indent: indent + "  ", width: width, into: &lines) }
                else if case .object = item { lines.append(indent + "[\(i)]"); valueLines(item, indent: indent + "  ", width: width, into: &lines) }
                else { lines.append(indent + "[\(i)] " + ValueFormatter.shown(item)) }
                if lines.count > valueViewLineLimit { return }
            }
        case .object(let o):
            if o.members.isEmpty { lines.append(indent + "{}"); return }
            for m in o.members {
                switch m.value {
                case .array, .object:
                    lines.append(indent + m.key + ":")
                    valueLines(m.value, indent: indent + "  ", width: width, into: &lines)
                default:
                    lines.append(indent + m.key + ": " + ValueFormatter.shown(m.value))
                }
                if lines.count > valueViewLineLimit { return }
            }
        default:
            lines.append(indent + ValueFormatter.shown(value))
        }
    }
}

extension Data {
    /// The bytes in slices of `size`.
    fileprivate func chunked(_ size: Int) -> [Data] {
        stride(from: startIndex, to: endIndex, by: size).map { self[$0..<Swift.min($0 + size, endIndex)] }
    }
}
