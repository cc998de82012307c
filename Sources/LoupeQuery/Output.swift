import DisplayText
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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
        let sink = OutputSink()
        write(mode, toTerminal: toTerminal, to: sink)
        return sink.text
    }

    /// Writes the table in `mode` to `sink`, row by row (a sink on a file descriptor streams it).
    public func write(_ mode: OutputMode, toTerminal: Bool = false, to sink: OutputSink) {
        let rows = self.rows
        Self.write(columns: columns, rowCount: rows.count, cell: { r, c in c < rows[r].count ? rows[r][c] : .null },
                   mode, toTerminal: toTerminal, to: sink)
    }

    /// Writes rows whose values are read one cell at a time (`cell(row, column)`, called from
    /// several threads at once, so it must only read): a materialised table, or a query's objects
    /// read from the graph as they are written, without a table of values in between.
    static func write(columns: [String], rowCount: Int, cell: @escaping @Sendable (Int, Int) -> Value,
                      _ mode: OutputMode, toTerminal: Bool, to sink: OutputSink) {
        var writer = RowWriter(columns: columns, mode: mode, toTerminal: toTerminal, sink: sink)
        writer.write(rowCount: rowCount, cell: cell)
        writer.finish()
    }

    /// Rows written in parts as they are read, for a result too large to hold at once: what the
    /// parts make together is what one part of all the rows makes, except in `table` mode, where
    /// the first part sets the columns' widths (the header is written before the rest is read)
    /// and a wider cell later pushes the rest of its line right.
    public struct RowWriter {
        let columns: [String]
        let mode: OutputMode
        let toTerminal: Bool
        let sink: OutputSink
        /// Rows written so far.
        public private(set) var written = 0
        private var started = false
        /// `table`: the columns' widths, set by the first part.
        private var widths: [Int]?

        public init(columns: [String], mode: OutputMode, toTerminal: Bool, sink: OutputSink) {
            self.columns = columns
            self.mode = mode
            self.toTerminal = toTerminal
            self.sink = sink
        }

        /// Writes `rowCount` more rows, the header first when none is written yet.
        public mutating func write(rowCount: Int, cell: @escaping @Sendable (Int, Int) -> Value) {
            let width = columns.count
            let offset = written
            if mode != .table { begin() }
            switch mode {
            case .json:
                let keys = ResultTable.jsonKeys(columns)
                sink.writeRows(count: rowCount) { r, out in
                    if r + offset > 0 { out += ",\n " }
                    ResultTable.writeJSONObject(keys, row: r, cell, to: &out)
                }
            case .ndjson:
                let keys = ResultTable.jsonKeys(columns)
                sink.writeRows(count: rowCount) { r, out in
                    ResultTable.writeJSONObject(keys, row: r, cell, to: &out)
                    out += "\n"
                }
            case .csv:
                let toTerminal = toTerminal
                sink.writeRows(count: rowCount) { r, out in
                    for c in 0..<width {
                        if c > 0 { out += "," }
                        switch cell(r, c) {
                        case .null: break
                        // (A number's text never needs quotes.)
                        case .int(let i): out += String(i)
                        case .double(let d): out += ValueFormatter.number(d)
                        case let v: out += ResultTable.csvField(toTerminal ? DisplayText.escaped(ValueFormatter.shown(v)) : ValueFormatter.plain(v))
                        }
                    }
                    out += "\r\n"
                }
            case .markdown:
                for r in 0..<rowCount { sink.write("| " + (0..<width).map { Self.markdownCell(ValueFormatter.shown(cell(r, $0))) }.joined(separator: " | ") + " |\n") }
            case .line:
                let names = columns.map(DisplayText.escaped)
                let nameWidth = names.map { DisplayText.width(of: $0) }.max() ?? 0
                for r in 0..<rowCount {
                    if r + offset > 0 { sink.write("\n") }
                    for (c, name) in names.enumerated() {
                        sink.spaces(nameWidth - DisplayText.width(of: name))
                        sink.write(name)
                        sink.write(" = ")
                        sink.write(DisplayText.escaped(ValueFormatter.shown(cell(r, c))))
                        sink.write("\n")
                    }
                }
            case .table:
                widths = TextTable.write(columns: columns, rowCount: rowCount, cell: { r, c in ValueFormatter.shown(cell(r, c)) }, to: sink, widths: widths)
                started = true
            }
            written += rowCount
        }

        /// Ends the output (the header alone when no row was written).
        public mutating func finish() {
            if mode == .table, !started { write(rowCount: 0, cell: { _, _ in .null }) }
            begin()
            if mode == .json { sink.write("]\n") }
        }

        /// A name or value in a Markdown table: escaped for the terminal, its `|` escaped too.
        private static func markdownCell(_ s: String) -> String { DisplayText.escaped(s).replacingOccurrences(of: "|", with: "\\|") }

        /// The header, once.
        private mutating func begin() {
            guard !started else { return }
            started = true
            switch mode {
            case .json: sink.write("[")
            case .csv:
                for (i, c) in columns.enumerated() { if i > 0 { sink.write(",") }; sink.write(ResultTable.csvField(toTerminal ? DisplayText.escaped(c) : c)) }
                sink.write("\r\n")
            case .markdown:
                sink.write("| " + columns.map(Self.markdownCell).joined(separator: " | ") + " |\n")
                sink.write("|" + columns.map { _ in " --- |" }.joined() + "\n")
            case .ndjson, .line, .table: break
            }
        }
    }

    /// Each column's JSON key with what comes before it in an object (`{"id": `, `, "title": `).
    private static func jsonKeys(_ columns: [String]) -> [String] {
        columns.enumerated().map { i, c in
            var key = i == 0 ? "{" : ", "
            ValueFormatter.writeJSONString(c, to: &key)
            return key + ": "
        }
    }

    /// Appends row `row` as one JSON object, its keys made by ``jsonKeys(_:)``.
    private static func writeJSONObject(_ keys: [String], row: Int, _ cell: (Int, Int) -> Value, to out: inout String) {
        if keys.isEmpty { out += "{" }
        for (i, key) in keys.enumerated() {
            out += key
            ValueFormatter.writeJSON(cell(row, i), to: &out)
        }
        out += "}"
    }

    /// RFC 4180: quoted when it holds a comma, quote, CR or LF; quotes doubled.
    private static func csvField(_ s: String) -> String {
        guard s.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 10 || $0 == 13 }) else { return s }
        var quoted: [UInt8] = [UInt8(ascii: "\"")]
        quoted.reserveCapacity(s.utf8.count + 8)
        for b in s.utf8 {
            quoted.append(b)
            if b == UInt8(ascii: "\"") { quoted.append(b) }
        }
        quoted.append(UInt8(ascii: "\""))
        return String(decoding: quoted, as: UTF8.self)
    }
}

/// An aligned text table for people: a header, a rule, and cells cut at a maximum width. Names
/// and values are escaped and measured by ``DisplayText``.
public enum TextTable {
    public static let maximumCellWidth = 60

    public static func render(columns: [String], rows: [[String]]) -> String {
        let sink = OutputSink()
        write(columns: columns, rowCount: rows.count, cell: { r, c in c < rows[r].count ? rows[r][c] : "" }, to: sink)
        return sink.text
    }

    /// The cut cells of a run of rows: their bytes in one arena (no string per cell kept), where
    /// each ends, its width, and each column's widest cell.
    private struct Block {
        var arena: [UInt8] = []
        var ends: [Int] = []
        var widths: [Int32] = []
        var columnWidths: [Int]
    }

    /// Writes the table: the cells (`cell(row, column)`, called from several threads at once,
    /// so it must only read) are cut and measured once, in blocks formatted in parallel, then
    /// written line by line with trailing spaces left out. With `fixed` widths (a later part of
    /// a table written in parts), only the rows are written, padded to those widths (a wider
    /// cell pushes the rest of its line right). Returns the columns' widths.
    @discardableResult
    public static func write(columns: [String], rowCount: Int, cell: @escaping @Sendable (Int, Int) -> String, to sink: OutputSink,
                             widths fixed: [Int]? = nil) -> [Int] {
        let header = columns.map { DisplayText.fit($0, width: maximumCellWidth) }
        var widths = fixed ?? header.map { DisplayText.width(of: $0) }
        let n = columns.count
        let blockCount = rowCount < 4096 ? 1 : min(64, ProcessInfo.processInfo.activeProcessorCount * 4)
        let perBlock = (rowCount + blockCount - 1) / max(blockCount, 1)
        var blocks = [Block](repeating: Block(columnWidths: Array(repeating: 0, count: n)), count: blockCount)
        blocks.withUnsafeMutableBufferPointer { out in
            nonisolated(unsafe) let base = out.baseAddress!
            DispatchQueue.concurrentPerform(iterations: blockCount) { b in
                var block = Block(columnWidths: Array(repeating: 0, count: n))
                let rows = (b * perBlock) ..< min(rowCount, (b + 1) * perBlock)
                block.arena.reserveCapacity(rows.count * n * 12)
                block.ends.reserveCapacity(rows.count * n)
                block.widths.reserveCapacity(rows.count * n)
                for r in rows {
                    for c in 0..<n {
                        var (text, w) = DisplayText.fitted(cell(r, c), width: maximumCellWidth)
                        text.withUTF8 { block.arena.append(contentsOf: $0) }
                        block.ends.append(block.arena.count)
                        block.widths.append(Int32(w))
                        if w > block.columnWidths[c] { block.columnWidths[c] = w }
                    }
                }
                (base + b).initialize(to: block)   // each iteration writes only its own slot
            }
        }
        if fixed == nil { for block in blocks { for c in 0..<n { widths[c] = max(widths[c], block.columnWidths[c]) } } }
        let columnWidths = widths
        /// Appends one line per row of `block`, cells padded to their column's width, trailing
        /// spaces left out.
        @Sendable func lines(_ block: Block, into out: inout [UInt8]) {
            block.arena.withUnsafeBufferPointer { all in
                var start = 0
                var pending = 0   // spaces owed before the next non-empty cell (none at the end of a line)
                for k in 0..<block.ends.count {
                    let i = k % n
                    if i > 0 { pending += 2 }
                    if block.ends[k] > start {
                        if pending > 0 { out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: pending)) }
                        pending = 0
                        out.append(contentsOf: UnsafeBufferPointer(rebasing: all[start..<block.ends[k]]))
                    }
                    pending += max(0, columnWidths[i] - Int(block.widths[k]))
                    start = block.ends[k]
                    if i == n - 1 { pending = 0; out.append(UInt8(ascii: "\n")) }
                }
            }
        }
        if fixed == nil {
            var headerBlock = Block(columnWidths: [])
            for h in header {
                var h = h
                h.withUTF8 { headerBlock.arena.append(contentsOf: $0) }
                headerBlock.ends.append(headerBlock.arena.count)
                headerBlock.widths.append(Int32(DisplayText.width(of: h)))
            }
            var headerLine: [UInt8] = []
            if n > 0 { lines(headerBlock, into: &headerLine) } else { headerLine = [UInt8(ascii: "\n")] }
            sink.write(bytes: headerLine)
            sink.write(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n")
        }
        guard n > 0 else { return widths }
        // The lines of a few blocks at a time, made in parallel and written in order; each block's
        // cells are let go once its lines are written.
        let wave = max(1, ProcessInfo.processInfo.activeProcessorCount)
        var first = 0
        while first < blocks.count {
            let last = min(blocks.count, first + wave)
            var made = [[UInt8]](repeating: [], count: last - first)
            let source = blocks
            made.withUnsafeMutableBufferPointer { out in
                nonisolated(unsafe) let base = out.baseAddress!
                let from = first
                DispatchQueue.concurrentPerform(iterations: out.count) { i in
                    var text: [UInt8] = []
                    text.reserveCapacity(source[from + i].arena.count * 2)
                    lines(source[from + i], into: &text)
                    base[i] = text   // each iteration writes only its own slot
                }
            }
            for b in first..<last { blocks[b] = Block(columnWidths: []) }
            for text in made { sink.write(bytes: text) }
            first = last
        }
        return widths
    }
}

/// Bytes on their way out: appended in place, and written to a file descriptor a megabyte at a
/// time when it has one (`loupe query` streams its output), else kept for ``text``.
public final class OutputSink {
    private var buffer: [UInt8] = []
    private let fd: Int32?
    /// Set when the descriptor refused a write (a closed pipe): later writes are dropped.
    public private(set) var failed = false
    /// True once bytes were handed to the descriptor: what is written can no longer be taken back.
    public private(set) var hasFlushed = false
    private static let chunk = 1 << 20

    public init(fd: Int32? = nil) {
        self.fd = fd
        buffer.reserveCapacity(fd == nil ? 4096 : OutputSink.chunk + 4096)
    }

    @inline(__always)
    public func write(_ s: String) {
        var s = s
        s.withUTF8 { buffer.append(contentsOf: $0) }
        if fd != nil, buffer.count >= OutputSink.chunk { flush() }
    }

    /// Raw UTF-8 bytes.
    public func write(bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if fd != nil, buffer.count >= OutputSink.chunk { flush() }
    }

    /// Raw UTF-8 bytes.
    @inline(__always)
    public func write(bytes: UnsafeBufferPointer<UInt8>) {
        buffer.append(contentsOf: bytes)
        if fd != nil, buffer.count >= OutputSink.chunk { flush() }
    }

    /// `n` spaces (none when `n` ≤ 0).
    @inline(__always)
    public func spaces(_ n: Int) {
        if n > 0 { buffer.append(contentsOf: repeatElement(UInt8(ascii: " "), count: n)) }
    }

    /// Writes what is buffered to the descriptor (nothing without one).
    public func flush() {
        guard let fd, !buffer.isEmpty else { return }
        defer { buffer.removeAll(keepingCapacity: true) }
        hasFlushed = true
        guard !failed else { return }
        buffer.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Platform.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    failed = true
                    return
                }
                offset += n
            }
        }
    }

    /// Writes `count` rows in order, row `i` appended to a text by `row(i, &text)`. Large results
    /// are made in waves of blocks formatted in parallel (`row` is called from several threads at
    /// once, so it must only read), each wave written before the next is made: the output streams
    /// and memory stays bounded.
    public func writeRows(count: Int, _ row: @escaping @Sendable (Int, inout String) -> Void) {
        guard count >= 4096 else {
            var text = ""
            for i in 0..<count { row(i, &text) }
            write(text)
            return
        }
        let blocks = ProcessInfo.processInfo.activeProcessorCount * 2
        let perBlock = 2048
        var start = 0
        while start < count {
            let end = min(count, start + blocks * perBlock)
            var made = [String](repeating: "", count: (end - start + perBlock - 1) / perBlock)
            made.withUnsafeMutableBufferPointer { out in
                nonisolated(unsafe) let base = out.baseAddress!
                let first = start
                DispatchQueue.concurrentPerform(iterations: out.count) { b in
                    var text = ""
                    text.reserveCapacity(perBlock * 128)
                    for i in (first + b * perBlock) ..< min(end, first + (b + 1) * perBlock) { row(i, &text) }
                    base[b] = text   // each iteration writes only its own slot
                }
            }
            for text in made { write(text) }
            start = end
        }
    }

    /// Everything written, as text (for a sink without a descriptor).
    public var text: String { String(decoding: buffer, as: UTF8.self) }
}

extension ResultTable {
    /// What `.types` prints in `mode`: each type's name and object count, in the order given
    /// (line mode prints the table, which already gives each type a line).
    public static func typeCounts(_ types: [(name: String, count: Int)], mode: OutputMode) -> String {
        ResultTable(columns: ["type", "count"], rows: types.map { [.string($0.name), .int(Int64($0.count))] }).render(mode == .line ? .table : mode)
    }

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
            let (columns, cell) = Self.objectCells(type: type, refs: refs, graph: graph, includeType: includeType)
            return ResultTable(columns: columns, rows: refs.indices.map { r in columns.indices.map { cell(r, $0) } })
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

    /// Objects' columns, and each cell read from the graph when it is asked for: one type shows
    /// its attributes (or `attributes`, when given); several show every attribute of any, in
    /// order of first appearance.
    private static func objectCells(type: TypeTable?, refs: [ObjectRef], graph: ObjectGraph, includeType: Bool, attributes: [String]? = nil)
        -> (columns: [String], cell: @Sendable (Int, Int) -> Value) {
        var attributeNames = attributes ?? type?.attributes.map(\.name) ?? []
        var keyColumn: String?
        if let type, case .column(let key, _) = type.keyPolicy { keyColumn = key }
        let present = Set(refs.map { Int($0.type) }).sorted()
        if type == nil {
            var seen = Set<String>()
            for t in present {
                for a in graph.types[t].attributes where seen.insert(a.name).inserted { attributeNames.append(a.name) }
            }
        }
        let (columns, shown) = ResultTable.objectColumns(attributes: attributeNames, keyColumn: keyColumn, includeType: includeType)
        // Where each shown attribute sits in each type present, looked up once per type.
        var slots = [[Int?]](repeating: [], count: graph.types.count)
        for t in present {
            let table = graph.types[t]
            slots[t] = shown.map { name in table.attribute(named: name).flatMap { table.attributes[$0].name == name ? $0 : nil } }
        }
        let own = includeType ? 2 : 1
        let cell: @Sendable (Int, Int) -> Value = { [slots] r, c in
            let ref = refs[r]
            let table = graph.types[Int(ref.type)]
            if c == 0 { return table.ids[Int(ref.row)].value }
            if c < own { return .string(table.name.rawValue) }
            return slots[Int(ref.type)][c - own].map { table.value(row: Int(ref.row), attribute: $0) } ?? .null
        }
        return (columns, cell)
    }

    /// The result printed in `mode`, as `loupe query` and the REPL print it: a count as a bare
    /// number in JSON, groups as `{"key": …, "count": n}` objects.
    public func render(_ mode: OutputMode, graph: ObjectGraph, toTerminal: Bool = false) -> String {
        let sink = OutputSink()
        write(mode, graph: graph, toTerminal: toTerminal, to: sink)
        return sink.text
    }

    /// Writes the result as ``render(_:graph:toTerminal:)`` prints it, to `sink`.
    public func write(_ mode: OutputMode, graph: ObjectGraph, toTerminal: Bool = false, to sink: OutputSink) {
        switch self {
        case .count(let n) where mode == .json || mode == .ndjson || mode == .table || mode == .line: sink.write("\(n)\n")
        case .message(let text): sink.write(text.hasSuffix("\n") || text.isEmpty ? text : text + "\n")
        case .objects(let type, let refs):
            // Read from the graph as written: no table of values is built first.
            let includeType = mode == .json || mode == .ndjson
            let (columns, cell) = Self.objectCells(type: type, refs: refs, graph: graph, includeType: includeType)
            ResultTable.write(columns: columns, rowCount: refs.count, cell: cell, mode, toTerminal: toTerminal, to: sink)
        default:
            let forHumans = mode == .table || mode == .line || mode == .markdown
            table(graph: graph, includeType: false, forHumans: forHumans).write(mode, toTerminal: toTerminal, to: sink)
        }
    }

    /// One type's objects written in parts as they are read, for a result too large to hold at
    /// once (`loupe query` over a store read a page at a time): each part from a graph of its
    /// own, all under the same columns — `id` (and `type` in JSON), then `attributes`, the names
    /// the parts' graphs hold together, in the order one graph of them all would hold them.
    /// Together the parts print what ``write(_:graph:toTerminal:to:)`` prints for them all (in
    /// `table` mode, aligned to the first part's widths: see ``ResultTable/RowWriter``).
    public struct ObjectsWriter {
        private var rows: ResultTable.RowWriter
        private let attributes: [String]
        private let includeType: Bool
        private let keyColumn: String?

        public init(attributes: [String], keyColumn: String?, mode: OutputMode, toTerminal: Bool, to sink: OutputSink) {
            includeType = mode == .json || mode == .ndjson
            self.attributes = attributes
            self.keyColumn = keyColumn
            let columns = ResultTable.objectColumns(attributes: attributes, keyColumn: keyColumn, includeType: includeType).names
            rows = ResultTable.RowWriter(columns: columns, mode: mode, toTerminal: toTerminal, sink: sink)
        }

        /// Writes the objects `refs` of `type`, read from `graph`.
        public mutating func write(type: TypeTable, refs: [ObjectRef], graph: ObjectGraph) {
            let (_, cell) = QueryResult.objectCells(type: type, refs: refs, graph: graph, includeType: includeType, attributes: attributes)
            rows.write(rowCount: refs.count, cell: cell)
        }

        /// Writes objects of type `typeName` given as their keys and their values, one array per
        /// attribute of `attributes` (in that order), with no graph: what a store read row by row
        /// gives (printed exactly as ``write(type:refs:graph:)`` prints the same objects).
        public mutating func write(typeName: String, ids: [ObjectID], values: [[Value]]) {
            precondition(values.count == attributes.count && values.allSatisfy { $0.count == ids.count }, "one value per object and attribute")
            let shown = ResultTable.objectColumns(attributes: attributes, keyColumn: keyColumn, includeType: includeType).attributes
            let slots = shown.map { name in attributes.firstIndex(of: name)! }
            let own = includeType ? 2 : 1
            rows.write(rowCount: ids.count) { r, c in
                if c == 0 { return ids[r].value }
                if c < own { return .string(typeName) }
                return values[slots[c - own]][r]
            }
        }

        /// Ends the output (the header alone when no object was written).
        public mutating func finish() { rows.finish() }
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
