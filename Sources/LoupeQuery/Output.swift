import DisplayText
import Foundation
import LoupeModel

/// How results print: sqlite3's `.mode` names.
public enum OutputMode: String, CaseIterable, Sendable {
    case table, line, json, ndjson, csv, markdown
}

/// A rectangular result: named columns and rows of values (references already turned into keys).
public struct ResultTable: Equatable {
    public var columns: [String]
    public var rows: [[Value]]

    public init(columns: [String], rows: [[Value]]) {
        self.columns = columns
        self.rows = rows
    }

    /// The table as text in `mode`; every mode but `json` ends with a newline per row.
    ///
    /// Formats for people (`table`, `line`, `markdown`) show names and values through
    /// ``DisplayText``'s escaping, always. JSON escapes control characters as JSON requires. CSV
    /// is data for other programs and is written as stored, unless `toTerminal` says it is going
    /// to a terminal, where it is escaped like everything else.
    public func render(_ mode: OutputMode, toTerminal: Bool = false) -> String {
        switch mode {
        case .json: return "[" + rows.map(jsonObject).joined(separator: ",\n ") + "]\n"
        case .ndjson: return rows.map { jsonObject($0) + "\n" }.joined()
        case .csv:
            func field(_ s: String) -> String { csvField(toTerminal ? DisplayText.escaped(s) : s) }
            var out = columns.map(field).joined(separator: ",") + "\r\n"
            for row in rows { out += row.map { field($0.isNull ? "" : ValueFormatter.plain($0)) }.joined(separator: ",") + "\r\n" }
            return out
        case .markdown:
            func cell(_ s: String) -> String { DisplayText.escaped(s).replacingOccurrences(of: "|", with: "\\|") }
            var out = "| " + columns.map(cell).joined(separator: " | ") + " |\n"
            out += "|" + columns.map { _ in " --- |" }.joined() + "\n"
            for row in rows { out += "| " + row.map { cell(ValueFormatter.plain($0)) }.joined(separator: " | ") + " |\n" }
            return out
        case .line:
            let names = columns.map(DisplayText.escaped)
            let width = names.map { DisplayText.width(of: $0) }.max() ?? 0
            return rows.map { row in
                zip(names, row).map { String(repeating: " ", count: width - DisplayText.width(of: $0.0)) + $0.0 + " = " + DisplayText.escaped(ValueFormatter.plain($0.1)) }
                    .joined(separator: "\n") + "\n"
            }.joined(separator: "\n")
        case .table:
            return TextTable.render(columns: columns, rows: rows.map { $0.map { ValueFormatter.plain($0) } })
        }
    }

    private func jsonObject(_ row: [Value]) -> String {
        var s = "{"
        for (i, (c, v)) in zip(columns, row).enumerated() {
            if i > 0 { s += ", " }
            ValueFormatter.writeJSONString(c, to: &s)
            s += ": "
            ValueFormatter.writeJSON(v, to: &s)
        }
        return s + "}"
    }

    /// RFC 4180: quoted when it holds a comma, quote, CR or LF; quotes doubled.
    private func csvField(_ s: String) -> String {
        guard s.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 10 || $0 == 13 }) else { return s }
        return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// An aligned text table for people: a header, a rule, and cells cut at a maximum width. Names
/// and values are escaped and measured by ``DisplayText``.
public enum TextTable {
    public static let maximumCellWidth = 60

    public static func render(columns: [String], rows: [[String]]) -> String {
        let header = columns.map { DisplayText.fit($0, width: maximumCellWidth) }
        let cut = rows.map { $0.map { DisplayText.fit($0, width: maximumCellWidth) } }
        var widths = header.map { DisplayText.width(of: $0) }
        var cellWidths: [[Int]] = []
        cellWidths.reserveCapacity(cut.count)
        for row in cut {
            var ws: [Int] = []
            ws.reserveCapacity(row.count)
            for (i, c) in row.enumerated() {
                let w = DisplayText.width(of: c)
                ws.append(w)
                if i < widths.count { widths[i] = max(widths[i], w) }
            }
            cellWidths.append(ws)
        }
        var out = ""
        func line(_ cells: [String], _ ws: [Int]) {
            var text = ""
            for (i, c) in cells.enumerated() where i < widths.count {
                if i > 0 { text += "  " }
                text += c
                if i < cells.count - 1 { text += String(repeating: " ", count: max(0, widths[i] - ws[i])) }
            }
            while text.utf8.last == UInt8(ascii: " ") { text.removeLast() }
            out += text
            out += "\n"
        }
        line(header, header.map { DisplayText.width(of: $0) })
        out += widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n"
        for (row, ws) in zip(cut, cellWidths) { line(row, ws) }
        return out
    }
}

extension ResultTable {
    /// Column names made distinct, so that a JSON object never repeats a key: a name met again
    /// is written `name#2`, `name#3`, … (`select title, title`).
    public static func distinctNames(_ names: [String]) -> [String] {
        var used = Set<String>()
        return names.map { name in
            var candidate = name
            var n = 1
            while !used.insert(candidate).inserted { n += 1; candidate = "\(name)#\(n)" }
            return candidate
        }
    }

    /// The columns an object shows as: `id` (its key), `type` when asked, then its attributes.
    /// An attribute that is the key itself under the name `id` (a table keyed by an `id` column)
    /// is not repeated; any other attribute named like one of the object's own columns is
    /// written `attribute.id` / `attribute.type`. Returns the names and, for each attribute
    /// column, the attribute's name.
    public static func objectColumns(attributes: [String], keyColumn: String?, includeType: Bool) -> (names: [String], attributes: [String]) {
        let own = ["id"] + (includeType ? ["type"] : [])
        var names = own
        var shown: [String] = []
        for a in attributes {
            if a == "id", keyColumn == "id" { continue }
            names.append(own.contains(a) ? "attribute." + a : a)
            shown.append(a)
        }
        return (distinctNames(names), shown)
    }
}

extension QueryResult {
    /// The result as a table: objects as `id`, `type` and every attribute of their type (see
    /// ``ResultTable/objectColumns(attributes:keyColumn:includeType:)`` for names that clash).
    public func table(graph: ObjectGraph, includeType: Bool, forHumans: Bool = false) -> ResultTable {
        switch self {
        case .objects(let type, let refs):
            // One type: its attributes; several: every attribute of any, in order of first appearance.
            var attributeNames = type?.attributes.map(\.name) ?? []
            var keyColumn: String?
            if let type, case .column(let key, _) = type.keyPolicy { keyColumn = key }
            if type == nil {
                var seen = Set<String>()
                for t in Set(refs.map(\.type)).sorted() {
                    for a in graph.types[Int(t)].attributes where seen.insert(a.name).inserted { attributeNames.append(a.name) }
                }
            }
            let (columns, shown) = ResultTable.objectColumns(attributes: attributeNames, keyColumn: keyColumn, includeType: includeType)
            // Where each shown attribute sits in each type, looked up once per type.
            var positions: [Int32: [Int?]] = [:]
            let rows: [[Value]] = refs.map { ref in
                let table = graph.table(ref)
                let slots = positions[ref.type] ?? {
                    let p = shown.map { name in table.attribute(named: name).flatMap { table.attributes[$0].name == name ? $0 : nil } }
                    positions[ref.type] = p
                    return p
                }()
                var row: [Value] = [graph.id(of: ref).value]
                row.reserveCapacity(slots.count + 2)
                if includeType { row.append(.string(table.name.rawValue)) }
                for slot in slots { row.append(slot.map { table.value(row: Int(ref.row), attribute: $0) } ?? .null) }
                return row
            }
            return ResultTable(columns: columns, rows: rows)
        case .projection(let columns, let rows, _):
            return ResultTable(columns: columns, rows: rows.map { $0.map { keys($0, graph) } })
        case .count(let n):
            return ResultTable(columns: ["count"], rows: [[.int(Int64(n))]])
        case .groups(let key, let rows, _):
            // Headed by the grouped path, as the browser's frequency table is; JSON, NDJSON and
            // CSV keep QUERY.md's `key` (machine-read formats have one fixed shape).
            return ResultTable(columns: [forHumans ? key : "key", "count"], rows: rows.map { [keys($0.key, graph), .int(Int64($0.count))] })
        case .message(let text):
            return ResultTable(columns: ["message"], rows: [[.string(text)]])
        }
    }

    /// The result printed in `mode`, as `loupe query` and the REPL print it: a count as a bare
    /// number in JSON, groups as `{"key": …, "count": n}` objects.
    public func render(_ mode: OutputMode, graph: ObjectGraph, toTerminal: Bool = false) -> String {
        switch self {
        case .count(let n) where mode == .json || mode == .ndjson || mode == .table || mode == .line: return "\(n)\n"
        case .message(let text): return text.hasSuffix("\n") || text.isEmpty ? text : text + "\n"
        case .objects where mode == .json || mode == .ndjson:
            return table(graph: graph, includeType: true).render(mode, toTerminal: toTerminal)
        default:
            let forHumans = mode == .table || mode == .line || mode == .markdown
            return table(graph: graph, includeType: false, forHumans: forHumans).render(mode, toTerminal: toTerminal)
        }
    }

    /// References as their keys; collections element by element.
    private func keys(_ v: Value, _ graph: ObjectGraph) -> Value {
        switch v {
        case .reference(let r): return graph.id(of: r).value
        case .array(let items): return .array(items.map { keys($0, graph) })
        default: return v
        }
    }
}
