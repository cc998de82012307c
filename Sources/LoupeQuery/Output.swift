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

extension QueryResult {
    /// The result as a table: objects as `id`, `type` and every attribute of their type.
    public func table(graph: ObjectGraph, includeType: Bool) -> ResultTable {
        switch self {
        case .objects(let type, let refs):
            let attributes = type?.attributes.map(\.name) ?? []
            let columns = ["id"] + (includeType ? ["type"] : []) + attributes
            let rows: [[Value]] = refs.map { ref in
                let table = graph.table(ref)
                var row: [Value] = [graph.id(of: ref).value]
                if includeType { row.append(.string(table.name.rawValue)) }
                for a in table.attributes.indices { row.append(table.value(row: Int(ref.row), attribute: a)) }
                return row
            }
            return ResultTable(columns: columns, rows: rows)
        case .projection(let columns, let rows, _):
            return ResultTable(columns: columns, rows: rows.map { $0.map { keys($0, graph) } })
        case .count(let n):
            return ResultTable(columns: ["count"], rows: [[.int(Int64(n))]])
        case .groups(_, let rows, _):
            return ResultTable(columns: ["key", "count"], rows: rows.map { [keys($0.key, graph), .int(Int64($0.count))] })
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
            return table(graph: graph, includeType: false).render(mode, toTerminal: toTerminal)
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
