import Foundation
import LoupeModel
import LoupeQuery
import LoupeStore
import Synchronization

/// A PostgreSQL database read a page at a time (the browser's paged mode), for a database larger
/// than the memory a whole load may take, as ``RelationalPages`` reads a SQLite file: the catalog
/// once (types, attributes and relations exactly as ``PostgresDatabase`` loads them, with row
/// counts), the keys of a table by position (keyset paging in primary-key order, the order a load
/// reads), and windows of rows by key, each a small graph with every table of the database, the
/// rows asked for, the rows their foreign keys name, and the rows whose foreign keys name them
/// (the first ``edgesPerObject`` of each relation per row, in key order; a row with more is
/// *cut*, and its links' totals and keys come from the server when shown or followed). A
/// window's relations are linked by ``RelationalFormat/linkForeignKeys(_:_:warnings:)``, the code
/// a load links with, so its links are the loaded graph's.
///
/// Views, tables without a primary key and tables keyed by a date are paged by position (as a
/// load numbers their rows: tables in their physical order, `ctid`, or their key's); relations
/// from or to such a table are followed through its rows numbered by `row_number()`, which
/// reads the whole table (``notes`` says so). Every call reads in
/// one read-only snapshot on a connection of a small pool (one per thread at work), every value a
/// bound parameter; the pool's connections are closed with the object.
public final class PostgresPages: PageSource, Sendable {

    /// The database's URL (with its password, to connect; never shown) and its address without it.
    public let url: String
    public let server: String
    /// Every readable table and view, as a load describes them (type `i` is `described[i]`).
    let described: [PostgresDatabase.Described]
    /// The database's types, attributes and relations with no rows (a window's empty graph).
    public let schema: ObjectGraph
    /// Each table's row count once read (``counts()``: the catalog lists the tables without
    /// them, so that a first screen does not wait for a count of every row).
    let counted: TypeCounts
    /// Per type: the columns that lead an index of the table (a lookup by them is a seek).
    let indexedColumns: [Set<String>]
    /// At most this many rows of each relation to a row are read into a window.
    public let edgesPerObject: Int
    let pool: PostgresPool

    /// A declared foreign key between two tables paged by key, seen from its target.
    struct Incoming: Sendable {
        /// The type holding the foreign key, its column, its relation's name, and the target's
        /// column it names (the target's key when nil).
        let source: Int
        let column: String
        let relation: String
        let targetColumn: String
    }
    /// Per type: the foreign keys that point at it.
    let incoming: [[Incoming]]
    /// Per type: how SQL reaches its rows by key (``PostgresDatabase/keyedByNumber(_:)``: the
    /// rows of a type a load numbers keyed by their numbers); nil for a type whose keys a load
    /// makes otherwise (a composite key with a date), whose relations are not followed.
    let reached: [PostgresDatabase.Described?]

    init(url: String, server: String, described: [PostgresDatabase.Described], schema: ObjectGraph, counts: [Int]?, indexedColumns: [Set<String>],
         edgesPerObject: Int, pool: PostgresPool) {
        self.url = url
        self.pool = pool
        self.server = server
        self.described = described
        self.schema = schema
        self.counted = TypeCounts(counts)
        self.indexedColumns = indexedColumns
        self.edgesPerObject = max(1, edgesPerObject)
        let reached = described.map { d in PostgresPages.pagedByKey(d) || PostgresDatabase.isNumbered(d) ? PostgresDatabase.keyedByNumber(d) : nil }
        self.reached = reached
        var incoming: [[Incoming]] = Array(repeating: [], count: described.count)
        for source in schema.types {
            for relation in source.relations {
                guard let fk = relation.foreignKey else { continue }
                let target = described[fk.targetType]
                guard reached[source.index] != nil, reached[fk.targetType] != nil,
                      let column = fk.targetAttribute ?? (target.keys.count == 1 ? target.keys[0] : nil),
                      PostgresPages.isKeyValue(target, column) else { continue }
                incoming[fk.targetType].append(Incoming(source: source.index, column: fk.attribute, relation: relation.name, targetColumn: column))
            }
        }
        self.incoming = incoming
    }

    /// Connects to `url` and reads its catalog: every readable table and view, its columns,
    /// key and foreign keys (the row counts are read when first needed: ``countTypes()``). Throws what connecting throws, and for Persist's layout
    /// (its types live in its documents: a relational reading would show two tables).
    public static func open(url: String, edgesPerObject: Int = 2_000) throws -> PostgresPages {
        let connection = try PostgresConnection(url: url)
        let (described, indexed) = try connection.snapshot { () throws -> ([PostgresDatabase.Described], [Set<String>]) in
            if try PostgresPersist.isPersist(connection) {
                throw PostgresError(server: connection.server, reason: "paged mode reads tables; this database holds Persist's layout, which `loupe repl` and `loupe query` answer in PostgreSQL without loading it (raise --memory-budget to browse it)")
            }
            let described = try PostgresDatabase.describeAll(connection)
            var leading: [String: Set<String>] = [:]
            for row in try connection.query("""
                SELECT i.indrelid::text, a.attname FROM pg_index i
                JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
                """).rows {
                if let oid = row[0], let column = row[1] { leading[oid, default: []].insert(column) }
            }
            return (described, described.map { leading[$0.relation.oid] ?? [] })
        }
        return PostgresPages(url: url, server: connection.server, described: described, schema: PostgresDatabase.schemaGraph(described), counts: nil,
                             indexedColumns: indexed, edgesPerObject: edgesPerObject, pool: PostgresPool(url: url, connection: connection))
    }

    /// True for a table with a primary key a load keys its rows by: paged by key, its relations followed.
    static func pagedByKey(_ d: PostgresDatabase.Described) -> Bool { !d.relation.isView && !d.keys.isEmpty && keysAreValues(d) }

    /// The same database with the row counts a commit moved (`countChanges`, by type name).
    /// (Tables not counted yet stay so: the new state's counts are read when needed.)
    public func afterCommit(countChanges: [String: Int]) -> PostgresPages {
        let moved = counted.known.map { counts in zip(described, counts).map { d, n in max(0, n + (countChanges[d.relation.name] ?? 0)) } }
        return PostgresPages(url: url, server: server, described: described, schema: schema, counts: moved, indexedColumns: indexedColumns,
                             edgesPerObject: edgesPerObject, pool: pool)
    }

    // MARK: Connections

    /// Runs `body` in one read-only snapshot on a connection of the pool (``PostgresPool/read(_:)``).
    func read<T>(_ body: (PostgresConnection) throws -> T) throws -> T { try pool.read(body) }

    /// Counts the tables first when not yet done (0 for each when that read fails: the windows
    /// then say why).
    public var catalog: [(name: String, count: Int)] {
        let counts = (try? counts()) ?? described.map { _ in 0 }
        return zip(described, counts).map { ($0.relation.name, $1) }
    }

    public var listedTypes: [(name: String, count: Int?)] { counted.listed(described.map(\.relation.name)) }

    public func countTypes() throws { try counts() }

    /// Each table's row count, read first when not yet done: in one snapshot on a connection of
    /// the pool (the windows read on others meanwhile), once.
    @discardableResult
    func counts() throws -> [Int] {
        try counted.counts {
            try read { c in
                try described.map { d in try c.query("SELECT count(*) FROM \(d.relation.sqlName)").rows.first?.first.flatMap { $0.flatMap { Int($0) } } ?? 0 }
            }
        }
    }

    /// How many rows from a known key ``keys(type:range:near:)`` steps over before it waits for
    /// the table's count instead (to read from its other end when nearer).
    static let uncountedReach = 10_000

    public var notes: [String] {
        var notes: [String] = []
        let unfollowed = described.indices.filter { reached[$0] == nil }.map { described[$0].relation.name }
        if !unfollowed.isEmpty {
            notes.append("\(unfollowed.prefix(3).joined(separator: ", "))\(unfollowed.count > 3 ? "…" : "") paged by position (a composite key with a date): their relations not followed")
        }
        // Tables a load numbers, with relations: each window numbers them whole.
        let numbered = described.indices.filter { t in
            !Self.pagedByKey(described[t]) && reached[t] != nil && (!incoming[t].isEmpty || incoming.joined().contains { $0.source == t })
        }.map { described[$0].relation.name }
        if !numbered.isEmpty {
            notes.append("\(numbered.prefix(3).joined(separator: ", "))\(numbered.count > 3 ? "…" : "") keyed by row number (no primary key, or a date key): a window with their links reads the whole table")
        }
        let unindexed = incoming.flatMap { $0 }.filter { !indexedColumns[$0.source].contains($0.column) }
        if !unindexed.isEmpty {
            let names = unindexed.map { "\(described[$0.source].relation.name).\($0.column)" }
            notes.append("no index on \(names.prefix(3).joined(separator: ", "))\(names.count > 3 ? "…" : ""): their backlinks scan the table")
        }
        return notes
    }

    func index(of name: String) -> Int? { described.firstIndex { $0.relation.name == name } }

    // MARK: SQL pieces

    /// A PostgreSQL array literal of `items` (`{"a","b\"c"}`), bound as one parameter.
    static func arrayLiteral(_ items: [String?]) -> String {
        // Byte by byte: tens of thousands of keys per statement (Foundation's replacing is slow).
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(items.count * 12 + 2)
        for (i, item) in items.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            guard let item else { out.append(contentsOf: "NULL".utf8); continue }
            out.append(UInt8(ascii: "\""))
            for b in item.utf8 {
                if b == UInt8(ascii: "\\") || b == UInt8(ascii: "\"") { out.append(UInt8(ascii: "\\")) }
                out.append(b)
            }
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// The declared type of `column` of `d`, as `format_type` names it.
    static func columnType(_ d: PostgresDatabase.Described, _ column: String) -> String {
        d.columns.first { $0.name == column }?.type ?? "text"
    }

    /// `alias`'s key (the table's own columns when nil) is one of `ids` (`"k" = ANY($n::type[])`,
    /// or the key columns' tuple in an `unnest` of one array per column), the arrays appended to
    /// `parameters`. A key that no row of the table can have (of another kind than its column's
    /// values, out of the column's range: a string an edit names as a key) is left out rather than
    /// sent, so that PostgreSQL never refuses one; a column of a type Loupe reads as text
    /// (`uuid`, enums, `inet`…) is compared as the text it reads.
    static func keyIn(_ d: PostgresDatabase.Described, alias: String?, _ ids: [ObjectID], _ parameters: inout [String?]) -> String {
        let types = d.keys.map { columnType(d, $0) }
        let parts = ids.compactMap { id -> [String]? in
            let parts: [ObjectID]
            if case .composite(let p) = id { parts = p } else { parts = [id] }
            guard parts.count == types.count else { return nil }
            var texts: [String] = []
            for (part, type) in zip(parts, types) {
                guard let text = keyText(part, type: type) else { return nil }
                texts.append(text)
            }
            return texts
        }
        guard !parts.isEmpty else { return "false" }
        let prefix = alias.map { $0 + "." } ?? ""
        var columns: [String] = [], arrays: [String] = []
        for (i, k) in d.keys.enumerated() {
            parameters.append(arrayLiteral(parts.map { $0[i] }))
            let typed = comparesTyped(types[i])
            columns.append(prefix + SQL.identifier(k) + (typed ? "" : "::text"))
            arrays.append("$\(parameters.count)::\(typed ? types[i] : "text")[]")
        }
        if d.keys.count == 1 { return "\(columns[0]) = ANY(\(arrays[0]))" }
        return "(" + columns.joined(separator: ", ") + ") IN (SELECT * FROM unnest(\(arrays.joined(separator: ", "))))"
    }

    /// True for the types a key is compared in as itself (through the column's index); the others
    /// are compared as text.
    static func comparesTyped(_ type: String) -> Bool {
        ["smallint", "integer", "bigint", "oid", "real", "double precision", "boolean", "bytea", "text", "name", "uuid"].contains(type)
            || type.hasPrefix("numeric") || type.hasPrefix("character")
    }

    /// True when `s` is a uuid as PostgreSQL writes one: 8-4-4-4-12 lowercase hex digits.
    static func isWrittenUUID(_ s: String) -> Bool {
        let bytes = Array(s.utf8)
        guard bytes.count == 36 else { return false }
        return bytes.enumerated().allSatisfy { i, b in
            [8, 13, 18, 23].contains(i) ? b == UInt8(ascii: "-") : (48...57).contains(b) || (97...102).contains(b)
        }
    }

    /// The values each integer type holds.
    private static let ranges: [String: ClosedRange<Int64>] = ["smallint": Int64(Int16.min)...Int64(Int16.max), "integer": Int64(Int32.min)...Int64(Int32.max),
                                                               "bigint": Int64.min...Int64.max, "oid": 0...Int64(UInt32.max)]

    /// A key part as the text PostgreSQL reads for a key column of `type`, or nil when no value of
    /// the column is that key (as a load makes keys: integers, numbers, text, bytes).
    static func keyText(_ part: ObjectID, type: String) -> String? {
        switch (part, type) {
        case (.int(let i), _) where ranges[type] != nil: return ranges[type]!.contains(i) ? String(i) : nil
        case (_, _) where ranges[type] != nil: return nil
        case (.int(let i), "boolean"): return i == 0 || i == 1 ? String(i) : nil
        case (_, "boolean"): return nil
        case (.int, _) where isFloating(type), (.double, _) where isFloating(type): return PostgresCommit.keyText(part)
        case (_, _) where isFloating(type): return nil
        case (.data, "bytea"): return PostgresCommit.keyText(part)
        case (_, "bytea"), (.data, _): return nil
        // A uuid's text as PostgreSQL writes it (lowercase, hyphenated); any other spelling is no
        // key a load made (PostgreSQL would read `{…}` or capitals as a uuid, and match a row).
        case (.string(let s), "uuid"): return isWrittenUUID(s) ? s : nil
        case (_, "uuid"): return nil
        case (.string(let s), _): return s.utf8.contains(0) ? nil : s
        default: return nil
        }
    }

    /// True for a column type whose values a load reads as numbers with a fraction.
    private static func isFloating(_ type: String) -> Bool { type == "real" || type == "double precision" || type.hasPrefix("numeric") }

    /// True when a load keys the table's rows by its key columns' values (their values become
    /// keys: not dates or JSON, which a load numbers instead).
    static func keysAreValues(_ d: PostgresDatabase.Described) -> Bool {
        d.keys.allSatisfy { isKeyValue(d, $0) }
    }

    /// True when `d`'s `column` holds values a load makes keys of (not dates or JSON): a
    /// foreign key naming such a column links rows in a load.
    static func isKeyValue(_ d: PostgresDatabase.Described, _ column: String) -> Bool {
        let type = columnType(d, column)
        return type != "date" && !type.hasPrefix("timestamp") && type != "json" && type != "jsonb"
    }

    /// `alias`'s key columns, each `alias."k"`, comma-separated.
    static func keyList(_ d: PostgresDatabase.Described, alias: String, descending: Bool = false) -> String {
        d.keys.map { "\(alias).\(SQL.identifier($0))" + (descending ? " DESC" : "") }.joined(separator: ", ")
    }

    /// The rows' keys, each row's `d.keys.count` values from column `from` on (a table paged by
    /// key: every key is one a load makes).
    static func keys(_ rows: PostgresConnection.Rows, from: Int = 0, of d: PostgresDatabase.Described) -> [ObjectID] {
        let width = d.keys.count
        return rows.rows.compactMap { PostgresDatabase.key($0[from..<from + width], types: rows.types[from..<from + width]) }
    }

    /// The order rows of a type paged by position are read in: a load's (its key's, for a key a
    /// load numbers), else a table's physical order.
    static func positionOrder(_ d: PostgresDatabase.Described) -> String {
        d.relation.isView ? "" : d.keys.isEmpty ? " ORDER BY ctid" : " ORDER BY " + d.keys.map(SQL.identifier).joined(separator: ", ")
    }

    // MARK: Keys

    /// While the table is not counted (``countTypes()``), positions a few pages from its first key
    /// or from `near` are read from there (fewer keys come back past the end); a range farther
    /// away, or of a table paged by position, waits for the count.
    public func keys(type t: Int, range: Range<Int>, near: (start: Int, keys: [ObjectID])?) throws -> [ObjectID] {
        let d = described[t]
        let asked = max(0, range.lowerBound) ..< max(0, range.upperBound)
        var count = counted.known?[t]
        let uncounted = count == nil && Self.pagedByKey(d) ? KeysetAnchor.uncounted(for: asked, near: near, reach: Self.uncountedReach) : nil
        if count == nil, uncounted == nil { count = try counts()[t] }
        let range = asked.clamped(to: 0..<(count ?? .max))
        guard !range.isEmpty else { return [] }
        guard Self.pagedByKey(d) else { return range.map { .int(Int64($0 + 1)) } }
        guard let anchor = uncounted ?? KeysetAnchor.ranked(for: range, count: count ?? .max, near: near).first else { return [] }
        var parameters: [String?] = []
        /// `(x."k1", …) op ($1::type, …)` for the anchor's key.
        func condition(_ key: ObjectID?, _ op: String) -> String {
            guard let key else { return "" }
            let parts = PostgresCommit.keyParameters(key)
            guard parts.count == d.keys.count else { return "" }
            let bound = d.keys.enumerated().map { i, k in parameters.append(parts[i]); return "$\(parameters.count)::\(Self.columnType(d, k))" }
            return " WHERE (\(Self.keyList(d, alias: "x"))) \(op) (\(bound.joined(separator: ", ")))"
        }
        let sql: String, backward: Bool
        switch anchor {
        case .forward(let from, let key):
            let c = condition(key, ">=")
            sql = "SELECT \(Self.keyList(d, alias: "x")) FROM \(d.relation.sqlName) x\(c) ORDER BY \(Self.keyList(d, alias: "x")) LIMIT \(range.count) OFFSET \(range.lowerBound - from)"
            backward = false
        case .backward(let below, let key):
            let c = condition(key, "<")
            sql = "SELECT \(Self.keyList(d, alias: "x")) FROM \(d.relation.sqlName) x\(c) ORDER BY \(Self.keyList(d, alias: "x", descending: true)) LIMIT \(range.count) OFFSET \(below - range.upperBound)"
            backward = true
        }
        let keys = try read { c in Self.keys(try c.query(sql, parameters), of: d) }
        return backward ? keys.reversed() : keys
    }

    // MARK: Windows

    public func window(keys: [ObjectID], of typeName: String?) throws -> ObjectWindow {
        guard !keys.isEmpty else { return ObjectWindow(graph: schema, refs: []) }
        guard let typeName, let t = index(of: typeName) else {
            throw PostgresError(server: server, reason: "paged mode reads a table's rows by the table's name")
        }
        return try read { c in try window(c, roots: [(t, keys)]) }
    }

    public func window(objects: [ObjectIdentity]) throws -> ObjectWindow {
        var byType: [Int: [ObjectID]] = [:]
        for object in objects {
            guard let t = index(of: object.type.rawValue) else { continue }
            byType[t, default: []].append(object.id)
        }
        let positional = byType.keys.filter { reached[$0] == nil }
        guard positional.count <= 1 else {
            throw PostgresError(server: server, reason: "paged mode reads the rows of one table without a primary key at a time ("
                                + positional.map { described[$0].relation.name }.sorted().joined(separator: ", ") + ")")
        }
        guard !objects.isEmpty else { return ObjectWindow(graph: schema, refs: []) }
        return try read { c in
            let read = try window(c, roots: byType.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
            return ObjectWindow(graph: read.graph, refs: objects.map { read.graph.ref($0) }, cut: read.cut)
        }
    }

    /// The window of the rows `keys` of each type in `roots` (see the type's comment); `refs`
    /// are the first type's.
    private func window(_ c: PostgresConnection, roots groups: [(type: Int, keys: [ObjectID])]) throws -> ObjectWindow {
        var full: [Int: [ObjectID]] = [:], sparse: [Int: [ObjectID]] = [:]
        var cut = Set<ObjectIdentity>()
        var positional: (type: Int, keys: [ObjectID])?
        for (t, keys) in groups {
            if reached[t] != nil { try gather(c, type: t, keys: keys, full: &full, sparse: &sparse, cut: &cut) } else { positional = (t, keys) }
        }
        let graph = try rows(c, full: full, sparse: sparse, positional: positional)
        let first = groups.first.map { g in g.keys.map { graph.ref(type: graph.types[g.type], id: $0) } } ?? []
        return ObjectWindow(graph: graph, refs: first, cut: cut)
    }

    /// Adds to `full` and `sparse` the keys a window of type `t`'s rows `keys` reads (per type),
    /// and to `cut` the rows with more backlinks than it reads.
    private func gather(_ c: PostgresConnection, type t: Int, keys: [ObjectID], full: inout [Int: [ObjectID]], sparse: inout [Int: [ObjectID]],
                        cut: inout Set<ObjectIdentity>) throws {
        guard let d = reached[t] else { return }
        full[t, default: []] += keys
        // What the roots' foreign keys name.
        for relation in schema.types[t].relations {
            guard let (target, column) = outgoing(relation, of: t), let dt = reached[target] else { continue }
            var parameters: [String?] = []
            let roots = Self.keyIn(d, alias: "x", keys, &parameters)
            let found = try c.query("SELECT \(Self.keyList(dt, alias: "y")) FROM \(dt.relation.sqlName) y JOIN \(d.relation.sqlName) x ON y.\(SQL.identifier(column)) = x.\(SQL.identifier(relation.foreignKey!.attribute)) WHERE \(roots)", parameters)
            full[target, default: []] += Self.keys(found, of: dt)
        }
        // What names the roots: each foreign key's first rows in key order, per root.
        for link in incoming[t] {
            guard let ds = reached[link.source] else { continue }
            var parameters: [String?] = []
            let roots = Self.keyIn(d, alias: "r", keys, &parameters)
            let rootColumns = d.keys.indices.map { "r\($0)" }, sourceColumns = ds.keys.indices.map { "s\($0)" }
            let inner = "SELECT " + (zip(d.keys, rootColumns).map { "r.\(SQL.identifier($0)) AS \($1)" } + zip(ds.keys, sourceColumns).map { "x.\(SQL.identifier($0)) AS \($1)" }).joined(separator: ", ")
                + ", row_number() OVER (PARTITION BY \(Self.keyList(d, alias: "r")) ORDER BY \(Self.keyList(ds, alias: "x"))) AS n"
                + " FROM \(d.relation.sqlName) r JOIN \(ds.relation.sqlName) x ON x.\(SQL.identifier(link.column)) = r.\(SQL.identifier(link.targetColumn)) WHERE \(roots)"
            let found = try c.query("SELECT \((rootColumns + sourceColumns).joined(separator: ", ")) FROM (\(inner)) q WHERE q.n <= \(edgesPerObject + 1)", parameters)
            let rootKeys = Self.keys(found, of: d), sourceKeys = Self.keys(found, from: d.keys.count, of: ds)
            var perRoot: [ObjectID: Int] = [:]
            for (root, source) in zip(rootKeys, sourceKeys) {
                perRoot[root, default: 0] += 1
                if perRoot[root]! <= edgesPerObject { sparse[link.source, default: []].append(source) }
                else { cut.insert(ObjectIdentity(type: schema.types[t].name, id: root)) }
            }
        }
    }

    /// A to-one relation's target type and the column of it the foreign key names, when both
    /// ends are reached by key (nil: not followed).
    private func outgoing(_ relation: RelationColumn, of t: Int) -> (type: Int, column: String)? {
        guard let fk = relation.foreignKey, reached[t] != nil, reached[fk.targetType] != nil else { return nil }
        let dt = described[fk.targetType]
        guard let column = fk.targetAttribute ?? (dt.keys.count == 1 ? dt.keys[0] : nil), Self.isKeyValue(dt, column) else { return nil }
        return (fk.targetType, column)
    }

    /// A graph with every type of the database holding the rows `full` (whole) and `sparse`
    /// (keys and foreign keys only) of each type, linked as a load links them; with
    /// `positional`, that type's rows by position (their keys are row numbers).
    private func rows(_ c: PostgresConnection, full: [Int: [ObjectID]], sparse: [Int: [ObjectID]], positional: (type: Int, keys: [ObjectID])?) throws -> ObjectGraph {
        let builder = GraphBuilder(formatName: PostgresDatabase.formatName)
        let tables = PostgresDatabase.addTypes(described, to: builder)
        for (t, d) in described.enumerated() {
            // Whole and thin rows in one pass, in key order (the order a load links them in).
            let whole = Set(full[t] ?? []), thin = Set(sparse[t] ?? []).subtracting(whole)
            if !Self.pagedByKey(d), !whole.isEmpty || !thin.isEmpty {
                // Rows a load numbers, by their numbers (read whole).
                try Self.readRows(c, d, type: t, into: builder, numbered: whole.union(thin))
            } else if !whole.isEmpty || !thin.isEmpty {
                var parameters: [String?] = []
                let wholeRows = Self.keyIn(d, alias: nil, Array(whole), &parameters), thinRows = Self.keyIn(d, alias: nil, Array(thin), &parameters)
                try PostgresDatabase.readRows(c, d, type: t, into: builder, condition: "\(wholeRows) OR \(thinRows)", parameters: parameters,
                                              thin: thin.isEmpty ? nil : (thinRows, Set(d.foreignKeys.map(\.column))))
            }
            if let positional, positional.type == t {
                try Self.readRows(c, d, type: t, into: builder, numbered: Set(positional.keys))
            }
        }
        var warnings: [String] = []
        RelationalFormat.linkForeignKeys(builder, tables, warnings: &warnings)
        return builder.finish()
    }

    /// Reads the rows numbered `keys` of `d` (a type paged by position: the `.int` keys are row
    /// numbers) into type `t`: a run of numbers (a page) by `OFFSET` in the load's order, which
    /// stops there; scattered numbers (a statement's answer, a window's backlinks) by number,
    /// over the table numbered whole.
    static func readRows(_ c: PostgresConnection, _ d: PostgresDatabase.Described, type t: Int, into builder: GraphBuilder, numbered keys: Set<ObjectID>) throws {
        let positions = keys.compactMap { key -> Int64? in if case .int(let i) = key, i >= 1 { return i } else { return nil } }.sorted()
        guard let low = positions.first, let high = positions.last else { return }
        if high - low + 1 == positions.count || !PostgresDatabase.isNumbered(d) {
            try PostgresDatabase.readRows(c, d, type: t, into: builder, tail: positionOrder(d) + " LIMIT \(high - low + 1) OFFSET \(low - 1)", firstOrdinal: Int(low - 1))
        } else {
            try PostgresDatabase.readRows(c, d, type: t, into: builder, positions: positions)
        }
    }

    // MARK: Links of a cut row

    public func linkTotals(of object: ObjectIdentity) throws -> [ObjectWindow.Link: Int] {
        guard let t = index(of: object.type.rawValue), let d = reached[t] else { return [:] }
        return try read { c in
            var out: [ObjectWindow.Link: Int] = [:]
            for relation in schema.types[t].relations {
                out[ObjectWindow.Link(relation: relation.name, outgoing: true, sourceType: nil)] = try target(c, of: object.id, type: t, relation: relation) == nil ? 0 : 1
            }
            for link in incoming[t] {
                guard let ds = reached[link.source] else { continue }
                var parameters: [String?] = []
                let root = Self.keyIn(d, alias: "r", [object.id], &parameters)
                let n = try c.query("SELECT count(*) FROM \(ds.relation.sqlName) x JOIN \(d.relation.sqlName) r ON x.\(SQL.identifier(link.column)) = r.\(SQL.identifier(link.targetColumn)) WHERE \(root)",
                                    parameters).rows.first?.first.flatMap { $0.flatMap { Int($0) } } ?? 0
                if n > 0 { out[ObjectWindow.Link(relation: link.relation, outgoing: false, sourceType: ds.relation.name), default: 0] += n }
            }
            return out
        }
    }

    /// The key of the row a to-one relation of type `t`'s row `id` names, or nil.
    private func target(_ c: PostgresConnection, of id: ObjectID, type t: Int, relation: RelationColumn) throws -> ObjectID? {
        guard let (target, column) = outgoing(relation, of: t), let d = reached[t], let dt = reached[target] else { return nil }
        var parameters: [String?] = []
        let root = Self.keyIn(d, alias: "x", [id], &parameters)
        let found = try c.query("SELECT \(Self.keyList(dt, alias: "y")) FROM \(dt.relation.sqlName) y JOIN \(d.relation.sqlName) x ON y.\(SQL.identifier(column)) = x.\(SQL.identifier(relation.foreignKey!.attribute)) WHERE \(root) ORDER BY \(Self.keyList(dt, alias: "y")) LIMIT 1", parameters)
        return Self.keys(found, of: dt).first
    }

    public func linkKeys(of object: ObjectIdentity, link: ObjectWindow.Link, range: Range<Int>) throws -> [ObjectID] {
        guard let t = index(of: object.type.rawValue), let d = reached[t], !range.isEmpty else { return [] }
        return try read { c in
            if link.outgoing {
                guard range.lowerBound == 0, let relation = schema.types[t].relations.first(where: { $0.name == link.relation }),
                      let target = try target(c, of: object.id, type: t, relation: relation) else { return [] }
                return [target]
            }
            guard let incoming = incoming[t].first(where: { $0.relation == link.relation && described[$0.source].relation.name == link.sourceType }),
                  let ds = reached[incoming.source] else { return [] }
            var parameters: [String?] = []
            let root = Self.keyIn(d, alias: "r", [object.id], &parameters)
            let found = try c.query("SELECT \(Self.keyList(ds, alias: "x")) FROM \(ds.relation.sqlName) x JOIN \(d.relation.sqlName) r ON x.\(SQL.identifier(incoming.column)) = r.\(SQL.identifier(incoming.targetColumn)) WHERE \(root) ORDER BY \(Self.keyList(ds, alias: "x")) LIMIT \(range.count) OFFSET \(range.lowerBound)", parameters)
            return Self.keys(found, of: ds)
        }
    }

    // MARK: Whole types

    /// Type `t`'s rows in the load's order (`SELECT <key columns>, <columns>`), through a cursor:
    /// `body` gets each row's key and its values of `columns`, until it returns false.
    private func scan(_ c: PostgresConnection, type t: Int, columns: [String], _ body: (ObjectID, [Value]) throws -> Bool) throws {
        let d = described[t]
        let keys = Self.pagedByKey(d) ? d.keys : []
        let selection = (keys + columns).map(SQL.identifier)
        let order = keys.isEmpty ? Self.positionOrder(d) : " ORDER BY " + keys.map(SQL.identifier).joined(separator: ", ")
        var ordinal: Int64 = 0
        try c.forEachBatch("SELECT \(selection.isEmpty ? "NULL" : selection.joined(separator: ", ")) FROM \(d.relation.sqlName)\(order)") { batch in
            for row in batch.rows {
                ordinal += 1
                let id = keys.isEmpty ? .int(ordinal) : PostgresDatabase.key(row[0..<keys.count], types: batch.types[0..<keys.count]) ?? .int(ordinal)
                let values = columns.indices.map { PostgresDatabase.value(row[keys.count + $0], type: batch.types[keys.count + $0]) }
                if try !body(id, values) { return false }
            }
            return true
        }
    }

    public func forEachValue(type t: Int, attribute: String?, _ body: (ObjectID, Value) throws -> Bool) throws {
        let column = attribute.flatMap { name in described[t].columns.first { $0.name == name }?.name }
        try read { c in
            try scan(c, type: t, columns: column.map { [$0] } ?? []) { id, values in try body(id, column == nil ? id.value : values[0]) }
        }
    }

    /// A column's values counted by `GROUP BY` on the server, where PostgreSQL's grouping cannot
    /// join two values Loupe tells apart or part two it holds equal: integers, booleans, floating
    /// and `numeric` numbers (values it groups have one number), dates and timestamps, bytes, and
    /// text under a deterministic collation, and what a load reads as its text (uuids, enums,
    /// arrays…: ``PostgresDatabase/readsAsItsText(_:)``) grouped as that text; nil for the key and
    /// other types (`citext`, `json`…).
    public func frequencies(type t: Int, attribute: String?, limit: Int, isCancelled: @escaping @Sendable () -> Bool) throws -> [Value: Int]? {
        let d = described[t]
        guard let attribute, let declared = d.columns.first(where: { $0.name == attribute }) else { return nil }
        if PostgresDatabase.readsAsItsText(declared.base), ![25, 1043].contains(declared.base) {
            return try read { c in try groups(c, "\(SQL.identifier(attribute))::text", of: d, limit: limit, isCancelled: isCancelled) }
        }
        let column = SQL.identifier(attribute)
        return try read { c in
            let kind = try c.query("""
                SELECT a.atttypid::text, coalesce(l.collisdeterministic, true) FROM pg_attribute a LEFT JOIN pg_collation l ON l.oid = a.attcollation
                WHERE a.attrelid = $1::oid AND a.attname = $2
                """, [d.relation.oid, attribute]).rows.first
            guard let oid = kind?[0].flatMap({ UInt32($0) }), kind?[1] == "t",
                  [16, 20, 21, 23, 26, 700, 701, 1700, 1082, 1114, 1184, 17, 25, 1043, 1042].contains(oid) else { return nil }
            return try groups(c, column, of: d, limit: limit, isCancelled: isCancelled)
        }
    }

    /// The values of `expression` over `d`'s rows counted by `GROUP BY` (values Loupe holds
    /// equal joined), nil past `limit` groups.
    private func groups(_ c: PostgresConnection, _ expression: String, of d: PostgresDatabase.Described, limit: Int,
                        isCancelled: @escaping @Sendable () -> Bool) throws -> [Value: Int]? {
        c.isCancelled = isCancelled
        defer { c.isCancelled = nil }
        let groups = try c.query("SELECT \(expression), count(*) FROM \(d.relation.sqlName) GROUP BY 1 LIMIT \(limit + 1)")
        // (Past the limit, groups Loupe would join may be among those not read: counted value by value.)
        guard groups.rows.count <= limit else { return nil }
        var counts: [Value: Int] = [:]
        for row in groups.rows { counts[PostgresDatabase.value(row[0], type: groups.types[0]), default: 0] += Int(row[1] ?? "") ?? 0 }
        return counts
    }

    public func kinds(type t: Int, names: Set<String>) throws -> [String: ValueKind] {
        let d = described[t]
        let columns = d.columns.map(\.name).filter(names.contains)
        guard !columns.isEmpty else { return [:] }
        return try read { c in
            // The column's type decides a value's kind, except for dates (`infinity` is text),
            // bytes and JSON, which are read as a load reads them.
            let types = try c.query("SELECT \(columns.map(SQL.identifier).joined(separator: ", ")) FROM \(d.relation.sqlName) LIMIT 0").types
            let fixed: [ValueKind?] = types.map { oid in
                switch oid {
                case 16: return .bool
                case 20, 21, 23, 26: return .integer
                case 700, 701, 1700: return .double
                case 1082, 1114, 1184, 17, 114, 3802: return nil
                default: return .string
                }
            }
            var kinds = [ValueKind](repeating: [], count: columns.count)
            let presence = try c.query("SELECT " + columns.map { "bool_or(\(SQL.identifier($0)) IS NULL), bool_or(\(SQL.identifier($0)) IS NOT NULL)" }.joined(separator: ", ")
                                       + " FROM \(d.relation.sqlName)").rows.first ?? []
            for i in columns.indices where fixed[i] != nil {
                if presence[2 * i] == "t" { kinds[i].insert(.null) }
                if presence[2 * i + 1] == "t" { kinds[i].insert(fixed[i]!) }
            }
            let scanned = columns.indices.filter { fixed[$0] == nil }
            if !scanned.isEmpty {
                try scan(c, type: t, columns: scanned.map { columns[$0] }) { _, values in
                    for (j, i) in scanned.enumerated() { kinds[i].insert(values[j].kind) }
                    return true
                }
            }
            // A table's columns are attributes of every row: a name is there when the table has rows.
            return Dictionary(uniqueKeysWithValues: columns.indices.filter { !kinds[$0].isEmpty }.map { (columns[$0], kinds[$0]) })
        }
    }

    public func forEachChunk(type t: Int, size: Int, kinds: [String: ValueKind], names: Set<String>?, _ body: (ObjectGraph) throws -> Bool) throws {
        let d = described[t]
        let names = d.columns.map(\.name)
        try read { c in
            var builder = GraphBuilder(formatName: PostgresDatabase.formatName)
            _ = PostgresDatabase.addTypes(described, to: builder)
            var rows = 0
            func flush() throws -> Bool {
                for (name, kind) in kinds { if let a = builder.existingAttribute(name, of: t) { builder.addKinds(kind, type: t, attribute: a) } }
                let graph = builder.finish()
                builder = GraphBuilder(formatName: PostgresDatabase.formatName)
                _ = PostgresDatabase.addTypes(described, to: builder)
                rows = 0
                return try body(graph)
            }
            var stopped = false
            try scan(c, type: t, columns: names) { id, values in
                let ref = builder.addObject(type: t, id: id)
                for (i, name) in names.enumerated() { builder.set(values[i], type: t, row: Int(ref.row), attribute: builder.existingAttribute(name, of: t)!) }
                rows += 1
                if rows >= max(1, size) { stopped = try !flush() }
                return !stopped
            }
            if rows > 0, !stopped { _ = try flush() }
        }
    }

    public func objects(type t: Int, keys: [ObjectID]) throws -> ObjectGraph {
        let d = described[t]
        return try read { c in
            let builder = GraphBuilder(formatName: PostgresDatabase.formatName)
            _ = PostgresDatabase.addTypes(described, to: builder)
            if Self.pagedByKey(d) {
                var parameters: [String?] = []
                let condition = Self.keyIn(d, alias: nil, keys, &parameters)
                try PostgresDatabase.readRows(c, d, type: t, into: builder, condition: condition, parameters: parameters)
            } else {
                try Self.readRows(c, d, type: t, into: builder, numbered: Set(keys))
            }
            return builder.finish()
        }
    }

    /// PostgreSQL assigns keys by their columns' defaults (sequences), never as max + 1: a new
    /// row's key is given.
    public func maximumIntegerKey(type: Int?) throws -> Int64 { 0 }

    /// The declared foreign keys into `object`'s table from tables whose relations windows do
    /// not follow (a composite key with a date) that some row uses to name it.
    public func unfollowedReferences(to object: ObjectIdentity) throws -> [String] {
        guard let t = index(of: object.type.rawValue), Self.pagedByKey(described[t]) else { return [] }
        let d = described[t]
        let unfollowed = schema.types.flatMap { source in
            source.relations.compactMap { relation -> (source: Int, relation: RelationColumn)? in
                guard let fk = relation.foreignKey, fk.targetType == t, reached[source.index] == nil else { return nil }
                return (source.index, relation)
            }
        }
        guard !unfollowed.isEmpty else { return [] }
        return try read { c in
            var found: [String] = []
            for (s, relation) in unfollowed {
                let fk = relation.foreignKey!, ds = described[s]
                let column = fk.targetAttribute ?? (d.keys.count == 1 ? d.keys[0] : nil)
                guard let column else { continue }
                var parameters: [String?] = []
                let root = Self.keyIn(d, alias: "r", [object.id], &parameters)
                let exists = try c.query("SELECT EXISTS (SELECT 1 FROM \(ds.relation.sqlName) x JOIN \(d.relation.sqlName) r ON x.\(SQL.identifier(fk.attribute)) = r.\(SQL.identifier(column)) WHERE \(root))", parameters)
                if exists.rows.first?.first == "t" { found.append("\(ds.relation.name).\(relation.name)") }
            }
            return found
        }
    }

    public var offersRelationIndex: Bool { false }
    public var relationIndexBuilt: Bool { false }
    public func buildRelationIndex(progress: @escaping @Sendable (Int, Int) -> Void, isCancelled: @escaping @Sendable () -> Bool) throws {
        throw PostgresError(server: server, reason: "Loupe's relation index is for Persist files; the database's own indexes serve its relations")
    }
}
