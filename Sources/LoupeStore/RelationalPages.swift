import Foundation
import GRDB
import LoupeModel

/// A plain relational SQLite file read a page at a time (the browser's paged mode), for a file
/// larger than the memory a whole load may take: the catalog once, the keys of a table by
/// position (keyset paging by rowid, the order a load reads rows in), and windows of rows by key,
/// each a small graph with every table of the file (as a load names them), the rows asked for,
/// the rows their foreign keys name, and the rows whose foreign keys name them (the first
/// ``edgesPerObject`` of each relation per row, in rowid order; a row with more is *cut*, and its
/// links' totals and keys come from the file when shown or followed).
///
/// Rows are found by indexed lookups that fetch a superset of what a load would link (every
/// spelling a load accepts: the value, its affinity twin, text that reads as the integer); the
/// relations of a window are then linked by ``RelationalFormat/linkForeignKeys(_:_:warnings:)``,
/// the code a load links with, so a window's links are the loaded graph's. The sources of a
/// window's backlinks are read with their keys and foreign keys only (the browser shows them by
/// count). Tables without a reachable rowid (`WITHOUT ROWID` tables, views) are paged by position;
/// relations from or to them are not followed in paged mode (``notes`` says so). In a file that
/// does not declare them, the relations a load would infer from the rows (undeclared `XId`
/// columns) are found over the file at open (``inferred``, kept in Loupe's cache for the file as
/// it is) and linked in each window as declared ones are. Reading never writes.
public final class RelationalPages: PageSource, Sendable {

    public let file: StoreFile
    /// The file's types, attributes and relations (declared, and inferred in a file that declares
    /// none) with no objects, as a load names them.
    public let layout: RelationalLayout
    /// Per type (by index): what a load read of its table.
    let sources: [RelationalFormat.Source]
    /// Per type: its row count, read when first needed (``countTypes()``), not at open.
    let counted: TypeCounts
    /// Per type: the columns that lead an index of the table (a lookup by them is a seek).
    let indexedColumns: [Set<String>]
    /// Why a framework file is read-only, as a load says it (nil for a plain file).
    let readOnlyReason: String?
    /// At most this many rows of each relation to a row are read into a window.
    public let edgesPerObject: Int
    /// The file's stamp when it was opened.
    public let openedStamp: FileStamp
    /// The relations a load would infer from the rows, in the load's order (see
    /// ``RelationalFormat/inferredKeys(_:loaded:builder:epoch:file:)``); ``layout`` has them.
    public let inferred: [InferredKey]

    public var catalog: [(name: String, count: Int)] {
        let counts = (try? counts()) ?? Array(repeating: 0, count: layout.graph.types.count)
        return zip(layout.graph.types, counts).map { ($0.name.rawValue, $1) }
    }

    public var listedTypes: [(name: String, count: Int?)] { counted.listed(layout.graph.types.map(\.name.rawValue)) }

    public func countTypes() throws { try counts() }

    /// Each table's row count, read first when not yet done: on a connection of its own (the
    /// windows read on the file's meanwhile), once.
    @discardableResult
    func counts() throws -> [Int] {
        try counted.counts {
            try file.readOnOwnConnection { db in
                sources.map { (try? Int.fetchOne(db, sql: "SELECT count(*) FROM \(SQL.identifier($0.name))")) ?? 0 }
            }
        }
    }

    /// How many rows from a known key ``keys(type:range:near:)`` steps over before it waits for
    /// the table's count instead (to read from its other end when nearer).
    static let uncountedReach = 10_000

    public var notes: [String] {
        var notes: [String] = []
        let unpaged = layout.graph.types.filter { layout.tables[$0.index] == nil }.map(\.name.rawValue)
        if !unpaged.isEmpty { notes.append("no rowid in \(unpaged.joined(separator: ", ")): paged by position, their relations not followed") }
        let unindexed = incoming.flatMap { $0 }.filter { !indexedColumns[$0.source].contains($0.column) }
        if !unindexed.isEmpty {
            let names = unindexed.map { "\(sources[$0.source].name).\($0.column)" }
            notes.append("no index on \(names.prefix(3).joined(separator: ", "))\(names.count > 3 ? "…" : ""): their backlinks scan the table")
        }
        if file.stamp() != openedStamp { notes.append("the file changed since it was opened: reopen it to see it as it is") }
        return notes
    }

    /// A declared foreign key between two tables paged by rowid, seen from its target.
    struct Incoming: Sendable {
        /// The type holding the foreign key, its column, and the target's column it names (nil: the key).
        let source: Int
        let column: String
        let relation: String
        let targetColumn: String?
    }
    /// Per type: the foreign keys that point at it.
    let incoming: [[Incoming]]
    /// Per type: the foreign keys of several columns that point at it.
    let compositeIncoming: [[CompositeIncoming]]

    init(file: StoreFile, layout: RelationalLayout, sources: [RelationalFormat.Source], counts: [Int]?, indexedColumns: [Set<String>],
         readOnlyReason: String?, edgesPerObject: Int, stamp: FileStamp, inferred: [InferredKey]) {
        self.file = file
        self.layout = layout
        self.sources = sources
        self.counted = TypeCounts(counts)
        self.indexedColumns = indexedColumns
        self.readOnlyReason = readOnlyReason
        self.edgesPerObject = max(1, edgesPerObject)
        self.openedStamp = stamp
        self.inferred = inferred
        var incoming: [[Incoming]] = Array(repeating: [], count: layout.graph.types.count)
        for source in layout.graph.types where layout.tables[source.index] != nil {
            for relation in source.relations {
                guard let fk = relation.foreignKey, layout.tables[fk.targetType] != nil else { continue }
                incoming[fk.targetType].append(Incoming(source: source.index, column: fk.attribute, relation: relation.name, targetColumn: fk.targetAttribute))
            }
        }
        self.incoming = incoming
        compositeIncoming = Self.compositeIncoming(layout)
    }

    /// Opens `file` for paging: its tables and views and their declared relations (the row counts
    /// are read when first needed: a first screen does not wait for a table of millions). Throws
    /// when the file is not a plain relational one (a framework store reads through its format).
    public static func open(_ file: StoreFile, edgesPerObject: Int = 2_000) throws -> RelationalPages {
        let stamp = file.stamp()
        return try file.read { db in
            guard try StoreFormats.detect(db, path: file.path) == RelationalFormat.self else {
                throw StoreError(.missingTable, path: file.path, reason: "paged mode reads Persist stores and plain SQLite files")
            }
            var described: [String: RelationalFormat.Source] = [:]
            let names = try RelationalFormat.sourceNames(db)
            for entry in names {
                described[entry.name] = try? RelationalFormat.describe(db, name: entry.name, isView: entry.isView)
            }
            // Relations a load would infer: as kept for the file as it is, else found now.
            let (layout, inferred) = try RelationalFormat.layout(db, sources: described, file: file, inferred: nil)
            if described.count == names.count {
                // Every source read as a statement's SQL plan reads them: the plans lay it out no more.
                for asked in [nil, inferred] { LayoutMemo.keep((layout, inferred), path: file.path, stamp: stamp, inferred: asked) }
            }
            var sources: [RelationalFormat.Source] = []
            var indexed: [Set<String>] = []
            for type in layout.graph.types {
                guard let source = described[type.name.rawValue] else {
                    throw StoreError(.unreadable, path: file.path, typeName: type.name.rawValue, reason: "its columns cannot be read")
                }
                sources.append(source)
                var columns = Set<String>()
                if !source.isView {
                    columns = try db.columnsLeadingIndexes(on: source.name)
                    // The rowid and its alias (an INTEGER PRIMARY KEY) are the table's own order.
                    if case .column(let k, true) = type.keyPolicy { columns.insert(k) }
                }
                indexed.append(columns)
            }
            return RelationalPages(file: file, layout: layout, sources: sources, counts: nil, indexedColumns: indexed,
                                   readOnlyReason: try RelationalFormat.frameworkReadOnlyReason(db), edgesPerObject: edgesPerObject, stamp: stamp,
                                   inferred: inferred)
        }
    }

    // MARK: Keys and rows

    /// The SQL that reaches type `t`'s rowid (nil: paged by position).
    private func rowid(_ t: Int) -> String? { layout.tables[t]?.rowid }

    /// The rowid of type `t`'s row with key `key`, or nil.
    private func rowid(of key: ObjectID, type t: Int, _ db: Database) throws -> Int64? {
        guard let rowidName = rowid(t) else { return nil }
        let columns = layout.keyColumns(t)
        if columns.isEmpty || layout.tables[t]?.keyIsRowid == true { if case .int(let i) = key { return i } else { return nil } }
        let parts: [ObjectID]
        if case .composite(let p) = key { parts = p } else { parts = [key] }
        guard parts.count == columns.count else { return nil }
        let condition = columns.map { "\(SQL.identifier($0)) = ?" }.joined(separator: " AND ")
        return try Int64.fetchOne(db.cachedStatement(sql: "SELECT \(rowidName) FROM \(SQL.identifier(sources[t].name)) WHERE \(condition) ORDER BY \(rowidName) LIMIT 1"),
                                  arguments: StatementArguments(parts.map(\.databaseValue)))
    }

    /// While the table is not counted (``countTypes()``), positions a few pages from its first
    /// row or from `near` are read from there (fewer keys come back past the end); a range
    /// farther away, or of a table paged by position, waits for the count.
    public func keys(type t: Int, range: Range<Int>, near: (start: Int, keys: [ObjectID])?) throws -> [ObjectID] {
        let asked = max(0, range.lowerBound) ..< max(0, range.upperBound)
        var count = counted.known?[t]
        let uncounted = count == nil && rowid(t) != nil ? KeysetAnchor.uncounted(for: asked, near: near, reach: Self.uncountedReach) : nil
        if count == nil, uncounted == nil { count = try counts()[t] }
        let range = asked.clamped(to: 0..<(count ?? .max))
        guard !range.isEmpty else { return [] }
        let table = SQL.identifier(sources[t].name)
        guard let rowidName = rowid(t) else {
            // By position: a view's rows are numbered; a table without a rowid is read in its own order.
            if layout.keyColumns(t).isEmpty { return range.map { .int(Int64($0 + 1)) } }
            return try file.read { db in
                let rows = try Row.fetchAll(db, sql: "SELECT NULL, \(layout.keyColumns(t).map(SQL.identifier).joined(separator: ", ")) FROM \(table) LIMIT ? OFFSET ?",
                                            arguments: [range.count, range.lowerBound])
                return rows.enumerated().map { layout.key($1, type: t, ordinal: Int64(range.lowerBound + $0 + 1)) }
            }
        }
        // Uncounted: from the anchor near the range, else (its key gone) from the first row.
        let ranked = uncounted.map { [$0, .forward(from: 0, key: nil)] } ?? KeysetAnchor.ranked(for: range, count: count ?? .max, near: near)
        let selection = layout.keySelection(t, rowid: rowidName)
        return try file.read { db in
            for anchor in ranked {
                switch anchor {
                case .forward(let from, let anchorKey):
                    var condition = "", arguments: [DatabaseValueConvertible?] = []
                    if let anchorKey {
                        guard let r = try rowid(of: anchorKey, type: t, db) else { continue }   // gone: another anchor
                        condition = " WHERE \(rowidName) >= ?"
                        arguments.append(r)
                    }
                    let rows = try Row.fetchAll(db, sql: "SELECT \(selection) FROM \(table)\(condition) ORDER BY \(rowidName) LIMIT ? OFFSET ?",
                                                arguments: StatementArguments(arguments + [range.count, range.lowerBound - from]))
                    return rows.enumerated().map { layout.key($1, type: t, ordinal: Int64(range.lowerBound + $0 + 1)) }
                case .backward(let below, let anchorKey):
                    var condition = "", arguments: [DatabaseValueConvertible?] = []
                    if let anchorKey {
                        guard let r = try rowid(of: anchorKey, type: t, db) else { continue }
                        condition = " WHERE \(rowidName) < ?"
                        arguments.append(r)
                    }
                    let rows = try Row.fetchAll(db, sql: "SELECT \(selection) FROM \(table)\(condition) ORDER BY \(rowidName) DESC LIMIT ? OFFSET ?",
                                                arguments: StatementArguments(arguments + [range.count, below - range.upperBound])).reversed()
                    return rows.enumerated().map { layout.key($1, type: t, ordinal: Int64(range.lowerBound + $0 + 1)) }
                }
            }
            return []
        }
    }

    /// The rowids of type `t`'s rows whose column `column` (nil: the key) may hold a key value
    /// naming `id` — a superset of what a load links: the value, its affinity twin, and in a
    /// column without numeric affinity, text that reads as the integer — with the cell, in rowid
    /// order, at most `limit` (nil: all). Through an index when one leads with the column, else
    /// one pass over the table.
    func candidates(_ t: Int, column: String?, naming id: ObjectID, limit: Int? = nil, _ db: Database) throws -> [(rowid: Int64, cell: DatabaseValue)] {
        guard let rowidName = rowid(t) else { return [] }
        let expression: String
        if let column { expression = SQL.identifier(column) } else {
            let columns = layout.keyColumns(t)
            guard columns.count <= 1 else { return [] }   // a composite key is named by no single value
            expression = columns.first.map(SQL.identifier) ?? rowidName
        }
        guard let (condition, bound) = layout.namingCondition(expression, type: t, column: column ?? layout.keyColumns(t).first, naming: id) else { return [] }
        let sql = "SELECT \(rowidName), \(expression) FROM \(SQL.identifier(sources[t].name)) WHERE \(condition) ORDER BY \(rowidName)" + (limit.map { " LIMIT \($0)" } ?? "")
        return try Row.fetchAll(db.cachedStatement(sql: sql), arguments: StatementArguments(bound)).map { ($0[0], $0[1]) }
    }

    /// The key value a cell of type `t`'s column holds, as a load reads it (a date column's text may be a date).
    private func keyValue(_ cell: DatabaseValue, type t: Int, column: String) -> ObjectID? {
        guard let a = sources[t].columns.firstIndex(where: { $0.name == column }) else { return cell.objectID }
        return ObjectID(keyValue: layout.value(cell, type: t, attribute: a))
    }

    // MARK: Windows

    public func window(keys: [ObjectID], of typeName: String?) throws -> ObjectWindow {
        try file.read { db in
            guard !keys.isEmpty else { return ObjectWindow(graph: try read(db, full: [:], sparse: [:], roots: nil), refs: []) }
            guard let typeName, let t = layout.graph.types.firstIndex(where: { $0.name.rawValue == typeName }) else {
                throw StoreError(.unreadable, path: file.path, reason: "paged mode reads a table's rows by the table's name")
            }
            return try window(db, roots: [(t, keys)])
        }
    }

    /// Rows of several tables, each with what is around it, in one graph. The rows of at most one
    /// table without a rowid (read by key or position, with no relations followed) may be among
    /// them.
    public func window(objects: [ObjectIdentity]) throws -> ObjectWindow {
        var byType: [Int: [ObjectID]] = [:]
        for object in objects {
            guard let t = layout.graph.types.firstIndex(where: { $0.name == object.type }) else { continue }
            byType[t, default: []].append(object.id)
        }
        let positional = byType.keys.filter { rowid($0) == nil }
        guard positional.count <= 1 else {
            throw StoreError(.unreadable, path: file.path, reason: "paged mode reads the rows of one table without a rowid at a time (" + positional.map { sources[$0].name }.sorted().joined(separator: ", ") + ")")
        }
        return try file.read { db in
            let read = try window(db, roots: byType.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
            return ObjectWindow(graph: read.graph, refs: objects.map { read.graph.ref($0) }, cut: read.cut)
        }
    }

    /// The window of the rows `keys` of each type in `roots` (see the type's comment); `refs`
    /// are the first type's.
    private func window(_ db: Database, roots groups: [(type: Int, keys: [ObjectID])]) throws -> ObjectWindow {
        var full: [Int: Set<Int64>] = [:], sparse: [Int: Set<Int64>] = [:]
        var cut = Set<ObjectIdentity>()
        var positional: (type: Int, keys: [ObjectID])?
        for (t, keys) in groups {
            if rowid(t) == nil { positional = (t, keys) } else { try gather(db, type: t, keys: keys, full: &full, sparse: &sparse, cut: &cut) }
        }
        let graph = try read(db, full: full, sparse: sparse, roots: positional)
        let first = groups.first.map { g in g.keys.map { graph.ref(type: graph.types[g.type], id: $0) } } ?? []
        return ObjectWindow(graph: graph, refs: first, cut: cut)
    }

    /// Adds to `full` and `sparse` the rows a window of type `t`'s rows `keys` reads (by rowid,
    /// per type), and to `cut` the rows with more backlinks than it reads.
    private func gather(_ db: Database, type t: Int, keys: [ObjectID], full: inout [Int: Set<Int64>], sparse: inout [Int: Set<Int64>], cut: inout Set<ObjectIdentity>) throws {
        guard let rowidName = rowid(t) else { return }
        var roots: [Int64] = []
        for key in keys { if let r = try rowid(of: key, type: t, db) { roots.append(r) } }
        full[t, default: []].formUnion(roots)
        let table = SQL.identifier(sources[t].name)
        let list = "[" + roots.map(String.init).joined(separator: ",") + "]"
        /// Each root row's cells of `columns` (by rowid).
        func cells(_ columns: [String]) throws -> [(rowid: Int64, cells: [DatabaseValue])] {
            try Row.fetchAll(db, sql: "SELECT \(([rowidName] + columns.map(SQL.identifier)).joined(separator: ", ")) FROM \(table) WHERE \(rowidName) IN (SELECT value FROM json_each(?))",
                             arguments: [list]).map { row in (row[0], columns.indices.map { row[$0 + 1] as DatabaseValue }) }
        }
        // What the roots' foreign keys name: every row such a value may name.
        for relation in layout.graph.types[t].relations {
            guard let fk = relation.foreignKey, layout.tables[fk.targetType] != nil else { continue }
            for (_, cell) in try cells([fk.attribute]) {
                guard let id = keyValue(cell[0], type: t, column: fk.attribute) else { continue }
                full[fk.targetType, default: []].formUnion(try candidates(fk.targetType, column: fk.targetAttribute, naming: id, db).map(\.rowid))
            }
        }
        // What names the roots: each foreign key's first rows in rowid order, per root.
        let rootKeys = Dictionary(try cells(layout.keyColumns(t)).map { ($0.rowid, $0.cells) }, uniquingKeysWith: { a, _ in a })
        var keysOfRoots: [Int64: ObjectID] = [:]
        for root in roots { keysOfRoots[root] = try keyOfRoot(root, rootKeys[root] ?? [], type: t) }
        try gatherComposite(db, type: t, roots: roots, keys: keysOfRoots, full: &full, sparse: &sparse, cut: &cut)
        for link in incoming[t] {
            let values = link.targetColumn == nil ? [] : try cells([link.targetColumn!])
            let named: [(root: Int64, id: ObjectID)] = try roots.compactMap { root in
                if let column = link.targetColumn {
                    guard let cell = values.first(where: { $0.rowid == root })?.cells[0], let id = keyValue(cell, type: t, column: column) else { return nil }
                    return (root, id)
                }
                return try keyOfRoot(root, rootKeys[root] ?? [], type: t).map { (root, $0) }
            }
            if link.targetColumn != nil {
                // A referenced column may repeat a value: the first row holding it is the one named.
                for (_, id) in named { full[t, default: []].formUnion(try candidates(t, column: link.targetColumn, naming: id, db).map(\.rowid)) }
            }
            let sourcesByRoot = try linkSources(link, naming: named, limit: edgesPerObject + 1, db)
            for (root, id) in named {
                let found = sourcesByRoot[root] ?? []
                if found.count > edgesPerObject, let key = rootKeys[root].flatMap({ try? keyOfRoot(root, $0, type: t) }) {
                    cut.insert(ObjectIdentity(type: layout.graph.types[t].name, id: key))
                }
                for source in found.prefix(edgesPerObject) {
                    sparse[link.source, default: []].insert(source.rowid)
                    // A value that names the root only through its affinity twin: the rows it
                    // may name exactly are read too, so that the link is made as a load makes it.
                    if let value = keyValue(source.cell, type: link.source, column: link.column), value != id {
                        full[t, default: []].formUnion(try candidates(t, column: link.targetColumn, naming: value, db).map(\.rowid))
                    }
                }
            }
        }
    }

    /// The key of a root row from its key cells, as a load makes it (the rowid when the type has
    /// no key columns; a composite key, which only a referenced column's value can name).
    private func keyOfRoot(_ rowid: Int64, _ cells: [DatabaseValue], type t: Int) throws -> ObjectID? {
        let columns = layout.keyColumns(t)
        if columns.isEmpty { return .int(rowid) }
        if columns.count == 1 { return cells.first?.objectID }
        return .composite(cells.map { $0.objectID ?? .string("") })
    }

    /// The rows of `link.source` whose foreign key may name each of `named`'s values (a superset,
    /// in rowid order), at most `limit` per root: by an index on the column, else in one pass.
    func linkSources(_ link: Incoming, naming named: [(root: Int64, id: ObjectID)], limit: Int?, _ db: Database) throws -> [Int64: [(rowid: Int64, cell: DatabaseValue)]] {
        var out: [Int64: [(rowid: Int64, cell: DatabaseValue)]] = [:]
        if indexedColumns[link.source].contains(link.column) || named.count == 1 {
            for (root, id) in named { out[root] = try candidates(link.source, column: link.column, naming: id, limit: limit, db) }
            return out
        }
        // No index: one pass over the column, each value matched as a load matches it.
        guard let rowidName = rowid(link.source) else { return [:] }
        var roots: [ObjectID: [Int64]] = [:]
        for (root, id) in named { roots[id, default: []].append(root) }
        let column = SQL.identifier(link.column)
        let cursor = try Row.fetchCursor(db, sql: "SELECT \(rowidName), \(column) FROM \(SQL.identifier(sources[link.source].name)) WHERE \(column) IS NOT NULL ORDER BY \(rowidName)")
        while let row = try cursor.next() {
            let cell = row[1] as DatabaseValue
            guard let value = keyValue(cell, type: link.source, column: link.column) else { continue }
            for id in [value] + (value.affinityAlternative.map { [$0] } ?? []) {
                for root in roots[id] ?? [] where limit.map({ (out[root]?.count ?? 0) < $0 }) ?? true {
                    if out[root]?.last?.rowid != row[0] as Int64 { out[root, default: []].append((row[0], cell)) }
                }
            }
        }
        return out
    }

    /// A graph with every type of the file, holding the rows `full` (whole) and `sparse` (keys
    /// and foreign keys only) of each type, in rowid order, linked as a load links them; with
    /// `roots`, type `roots.type`'s rows by key or position (a type paged by position).
    private func read(_ db: Database, full: [Int: Set<Int64>], sparse: [Int: Set<Int64>], roots: (type: Int, keys: [ObjectID])?) throws -> ObjectGraph {
        let builder = GraphBuilder(formatName: RelationalFormat.name)
        var warnings: [String] = []
        var tables: [KeyedTable] = []
        for (t, source) in sources.enumerated() {
            let fullRows = full[t] ?? [], sparseRows = (sparse[t] ?? []).subtracting(fullRows)
            var read = RelationalFormat.WindowRead(policy: layout.graph.types[t].keyPolicy)
            read.sparse = sparseRows
            read.sparseColumns = Set(layout.keyColumns(t) + layout.graph.types[t].relations.compactMap { $0.foreignKey?.attribute } + compositeColumns(of: t))
            var rowids: [Int64]? = (fullRows.union(sparseRows)).sorted()
            var limit: Int?
            if let roots, roots.type == t {
                rowids = nil
                if layout.keyColumns(t).isEmpty {
                    // Rows by position: one run from the first to the last asked for.
                    let positions = roots.keys.compactMap { key -> Int64? in if case .int(let i) = key { return i } else { return nil } }
                    if let low = positions.min(), let high = positions.max(), low >= 1 {
                        read.offset = Int(low - 1)
                        limit = Int(high - low + 1)
                    } else { limit = 0 }
                } else {
                    let parts = roots.keys.map { key -> [ObjectID] in if case .composite(let p) = key { return p } else { return [key] } }
                        .filter { $0.count == layout.keyColumns(t).count && $0.allSatisfy(\.isScalar) }
                    let one = "(" + layout.keyColumns(t).map { "\(SQL.identifier($0)) = ?" }.joined(separator: " AND ") + ")"
                    read.condition = (parts.isEmpty ? "0" : parts.map { _ in one }.joined(separator: " OR "), parts.flatMap { $0.map(\.databaseValue) })
                }
            }
            let index = try RelationalFormat.loadRows(db, source: source, builder: builder, epoch: layout.epoch, readOnlyReason: readOnlyReason,
                                                      limit: limit, rowids: rowids, window: read, warnings: &warnings)
            tables.append(source.keyed(as: index))
        }
        RelationalFormat.linkForeignKeys(builder, tables, warnings: &warnings)
        RelationalFormat.linkInferred(builder, tables, inferred)
        return builder.finish()
    }

    // MARK: Links of a cut row

    /// The row a key value names in type `t` as a load's key index finds it: the first row (in
    /// rowid order) whose key (or `column`'s value) is the value itself, else the first whose key
    /// is its affinity twin.
    private func rowNamed(by id: ObjectID, in t: Int, column: String?, _ db: Database) throws -> Int64? {
        let found = try candidates(t, column: column, naming: id, db)
        func keyOf(_ c: (rowid: Int64, cell: DatabaseValue)) -> ObjectID? {
            if let column { return keyValue(c.cell, type: t, column: column) }
            return layout.keyColumns(t).isEmpty ? .int(c.rowid) : c.cell.objectID
        }
        if let exact = found.first(where: { keyOf($0) == id }) { return exact.rowid }
        guard let twin = id.affinityAlternative else { return nil }
        return found.first { keyOf($0) == twin }?.rowid
    }

    /// The rows of `link` that name the root row `root` (whose key or referenced value is `id`),
    /// exactly as a load links them, in rowid order.
    private func exactSources(_ link: Incoming, root: Int64, id: ObjectID, target t: Int, _ db: Database) throws -> [(rowid: Int64, cell: DatabaseValue)] {
        // A repeated referenced value names its first row only.
        if link.targetColumn != nil, try rowNamed(by: id, in: t, column: link.targetColumn, db) != root { return [] }
        var twins: [ObjectID: Bool] = [:]
        return try (linkSources(link, naming: [(root, id)], limit: nil, db)[root] ?? []).filter { source in
            guard let value = keyValue(source.cell, type: link.source, column: link.column) else { return false }
            if value == id { return true }
            // Through the affinity twin only when no row is named by the value itself.
            if let known = twins[value] { return known }
            let named = try rowNamed(by: value, in: t, column: link.targetColumn, db) == root
            twins[value] = named
            return named
        }
    }

    /// Type `t`'s row with key `key`, and the type: nil when it is not stored, or not paged by rowid.
    private func root(_ object: ObjectIdentity, _ db: Database) throws -> (type: Int, rowid: Int64)? {
        guard let t = layout.graph.types.firstIndex(where: { $0.name == object.type }), layout.tables[t] != nil,
              let r = try rowid(of: object.id, type: t, db) else { return nil }
        return (t, r)
    }

    /// The value of the root's `column` that a foreign key names it by (nil: its key).
    private func rootValue(_ root: (type: Int, rowid: Int64), column: String?, key: ObjectID, _ db: Database) throws -> ObjectID? {
        guard let column, let rowidName = rowid(root.type) else { return key }
        let cell = try DatabaseValue.fetchOne(db, sql: "SELECT \(SQL.identifier(column)) FROM \(SQL.identifier(sources[root.type].name)) WHERE \(rowidName) = ?",
                                              arguments: [root.rowid]) ?? .null
        return keyValue(cell, type: root.type, column: column)
    }

    public func linkTotals(of object: ObjectIdentity) throws -> [ObjectWindow.Link: Int] {
        try file.read { db in
            guard let root = try root(object, db) else { return [:] }
            var out: [ObjectWindow.Link: Int] = [:]
            for relation in layout.graph.types[root.type].relations {
                out[ObjectWindow.Link(relation: relation.name, outgoing: true, sourceType: nil)] = try target(of: root, relation: relation, db) == nil ? 0 : 1
            }
            for link in incoming[root.type] {
                guard let id = try rootValue(root, column: link.targetColumn, key: object.id, db) else { continue }
                let n = try exactSources(link, root: root.rowid, id: id, target: root.type, db).count
                if n > 0 { out[ObjectWindow.Link(relation: link.relation, outgoing: false, sourceType: sources[link.source].name), default: 0] += n }
            }
            for link in compositeIncoming[root.type] {
                let n = try compositeSources(link, root: root, db).count
                if n > 0 { out[ObjectWindow.Link(relation: link.relation, outgoing: false, sourceType: sources[link.source].name), default: 0] += n }
            }
            return out
        }
    }

    /// The row a to-one relation of the root names (its type and key), or nil.
    private func target(of root: (type: Int, rowid: Int64), relation: RelationColumn, _ db: Database) throws -> ObjectID? {
        if let key = relation.compositeKey {
            guard layout.tables[key.targetType] != nil, let named = try compositeTarget(of: root, key: key, db) else { return nil }
            return try layout.keys(ofRowids: [named], type: key.targetType, db).first
        }
        guard let fk = relation.foreignKey, layout.tables[fk.targetType] != nil, let rowidName = rowid(root.type) else { return nil }
        let cell = try DatabaseValue.fetchOne(db, sql: "SELECT \(SQL.identifier(fk.attribute)) FROM \(SQL.identifier(sources[root.type].name)) WHERE \(rowidName) = ?",
                                              arguments: [root.rowid]) ?? .null
        guard let value = keyValue(cell, type: root.type, column: fk.attribute),
              let named = try rowNamed(by: value, in: fk.targetType, column: fk.targetAttribute, db) else { return nil }
        return try layout.keys(ofRowids: [named], type: fk.targetType, db).first
    }

    public func linkKeys(of object: ObjectIdentity, link: ObjectWindow.Link, range: Range<Int>) throws -> [ObjectID] {
        try file.read { db in
            guard let root = try root(object, db), !range.isEmpty else { return [] }
            if link.outgoing {
                guard range.lowerBound == 0, let relation = layout.graph.types[root.type].relations.first(where: { $0.name == link.relation }),
                      let target = try target(of: root, relation: relation, db) else { return [] }
                return [target]
            }
            var rowids: [Int64] = []
            for incoming in incoming[root.type] where incoming.relation == link.relation && sources[incoming.source].name == link.sourceType {
                guard let id = try rootValue(root, column: incoming.targetColumn, key: object.id, db) else { continue }
                rowids += try exactSources(incoming, root: root.rowid, id: id, target: root.type, db).map(\.rowid)
                let slice = Array(rowids[min(rowids.count, range.lowerBound) ..< min(rowids.count, range.upperBound)])
                return try layout.keys(ofRowids: slice, type: incoming.source, db)
            }
            for incoming in compositeIncoming[root.type] where incoming.relation == link.relation && sources[incoming.source].name == link.sourceType {
                let rowids = try compositeSources(incoming, root: root, db)
                let slice = Array(rowids[min(rowids.count, range.lowerBound) ..< min(rowids.count, range.upperBound)])
                return try layout.keys(ofRowids: slice, type: incoming.source, db)
            }
            return []
        }
    }

    // MARK: Whole types

    /// `SELECT <rowid or NULL>, <key columns>, <columns>` over type `t` in the load's order.
    private func scan(_ t: Int, columns: [String], _ db: Database, _ body: (ObjectID, [DatabaseValue]) throws -> Bool) throws {
        let keys = layout.keyColumns(t)
        let order = rowid(t).map { " ORDER BY \($0)" } ?? ""
        let selection = ([rowid(t) ?? "NULL"] + keys.map(SQL.identifier) + columns.map(SQL.identifier)).joined(separator: ", ")
        let cursor = try Row.fetchCursor(db, sql: "SELECT \(selection) FROM \(SQL.identifier(sources[t].name))\(order)")
        var ordinal: Int64 = 0
        while let row = try cursor.next() {
            ordinal += 1
            let id = layout.key(row, type: t, ordinal: ordinal)
            if try !body(id, columns.indices.map { row[1 + keys.count + $0] as DatabaseValue }) { return }
        }
    }

    public func forEachValue(type t: Int, attribute: String?, _ body: (ObjectID, Value) throws -> Bool) throws {
        let a = attribute.flatMap { name in sources[t].columns.firstIndex { $0.name == name } }
        try file.read { db in
            try scan(t, columns: a.map { [sources[t].columns[$0].name] } ?? [], db) { id, cells in
                try body(id, a.map { layout.value(cells[0], type: t, attribute: $0) } ?? id.value)
            }
        }
    }

    public func kinds(type t: Int, names: Set<String>) throws -> [String: ValueKind] {
        let columns = sources[t].columns.indices.filter { names.contains(sources[t].columns[$0].name) }
        var kinds = [ValueKind](repeating: [], count: columns.count)
        try file.read { db in
            try scan(t, columns: columns.map { sources[t].columns[$0].name }, db) { _, cells in
                for (i, a) in columns.enumerated() { kinds[i].formUnion(layout.value(cells[i], type: t, attribute: a).kind) }
                return true
            }
        }
        // A table's columns are attributes of every row: a name is there when the table has rows.
        return Dictionary(uniqueKeysWithValues: columns.enumerated().filter { !kinds[$0.offset].isEmpty }.map { (sources[t].columns[$0.element].name, kinds[$0.offset]) })
    }

    public func forEachChunk(type t: Int, size: Int, kinds: [String: ValueKind], names: Set<String>?, _ body: (ObjectGraph) throws -> Bool) throws {
        try forEachChunk(type: t, size: size, kinds: kinds, names: names, from: nil, below: nil, body)
    }

    /// The rowids at positions `count * i / parts` of a table whose keys are its rowids (found
    /// by the table's own b-tree); none for other types, read in one go.
    public func chunkSplits(type t: Int, parts: Int) throws -> [ObjectID] {
        guard let table = layout.tables[t], table.keyIsRowid else { return [] }
        let count = try counts()[t]
        return try file.read { db in
            try (1..<max(1, parts)).compactMap { i in
                try Int64.fetchOne(db, sql: "SELECT \(table.rowid) FROM \(SQL.identifier(table.name)) ORDER BY \(table.rowid) LIMIT 1 OFFSET ?",
                                   arguments: [count * i / parts]).map(ObjectID.int)
            }
        }
    }

    public func forEachChunk(type t: Int, size: Int, kinds: [String: ValueKind], names: Set<String>?, from: ObjectID?, below: ObjectID?,
                             _ body: (ObjectGraph) throws -> Bool) throws {
        // Bounds are the rowids ``chunkSplits(type:parts:)`` gave (keys that are rowids).
        precondition((from == nil && below == nil) || layout.tables[t]?.keyIsRowid == true, "only a table keyed by its rowid is read in parts")
        try file.readOnOwnConnection { db in
            func finished(_ builder: GraphBuilder) -> ObjectGraph {
                for (name, kind) in kinds { if let a = builder.existingAttribute(name, of: t) { builder.addKinds(kind, type: t, attribute: a) } }
                return builder.finish()
            }
            guard let rowidName = rowid(t) else {
                // By position: each chunk's OFFSET steps over every row before it again, so a
                // long view is read in at most about 32 chunks (of at most 262,144 rows: a 10M
                // row view is 38 reads, not 2,442), `size` rows at a time for a short one.
                var position = 0
                let count = try counts()[t]
                let step = max(size, min(262_144, count / 32))
                while position < count {
                    guard try body(finished(try chunk(db, type: t, rows: .positions(offset: position, limit: step)))) else { return }
                    position += step
                }
                return
            }
            // By rowid, from the last one read (keyset), within the part's bounds.
            var last = Int64.min
            let bounds = (from?.integerKey.map { " AND \(rowidName) >= \($0)" } ?? "") + (below?.integerKey.map { " AND \(rowidName) < \($0)" } ?? "")
            while true {
                let rowids = try Int64.fetchAll(db, sql: "SELECT \(rowidName) FROM \(SQL.identifier(sources[t].name)) WHERE \(rowidName) > ?\(bounds) ORDER BY \(rowidName) LIMIT ?",
                                                arguments: [last, size])
                guard let next = rowids.last else { return }
                guard try body(finished(try chunk(db, type: t, rows: .rowids(rowids)))) else { return }
                last = next
            }
        }
    }

    /// Which rows of a type ``chunk(_:type:rows:)`` reads.
    private enum ChunkRows {
        case rowids([Int64])
        case keys([ObjectID])
        case positions(offset: Int, limit: Int)
    }

    /// A builder with every type of the file and type `t`'s rows `rows` (no relations' rows).
    private func chunk(_ db: Database, type t: Int, rows: ChunkRows) throws -> GraphBuilder {
        var warnings: [String] = []
        let builder = GraphBuilder(formatName: RelationalFormat.name)
        for (u, source) in sources.enumerated() {
            var read = RelationalFormat.WindowRead(policy: layout.graph.types[u].keyPolicy)
            var limit: Int?
            var rowids: [Int64]? = []
            if u == t {
                switch rows {
                case .rowids(let r): rowids = r
                case .keys(let keys) where rowid(t) != nil:
                    rowids = try keys.compactMap { try rowid(of: $0, type: t, db) }.sorted()
                case .keys(let keys) where layout.keyColumns(t).isEmpty:
                    // Row numbers (a view): runs of positions, each read from its first to its
                    // last (a gap of a few rows is read rather than split), all but the last here.
                    rowids = nil
                    let runs = Self.runs(of: keys.compactMap { key -> Int64? in if case .int(let i) = key, i >= 1 { return i } else { return nil } })
                    for run in runs.dropLast() {
                        var part = read
                        part.offset = Int(run.lowerBound - 1)
                        _ = try RelationalFormat.loadRows(db, source: source, builder: builder, epoch: layout.epoch, readOnlyReason: readOnlyReason,
                                                          limit: run.count, rowids: nil, window: part, warnings: &warnings)
                    }
                    read.offset = Int((runs.last?.lowerBound ?? 1) - 1)
                    limit = runs.last?.count ?? 0
                case .keys(let keys):
                    rowids = nil
                    let one = "(" + layout.keyColumns(t).map { "\(SQL.identifier($0)) = ?" }.joined(separator: " AND ") + ")"
                    let parts = keys.map { key -> [ObjectID] in if case .composite(let p) = key { return p } else { return [key] } }
                        .filter { $0.count == layout.keyColumns(t).count && $0.allSatisfy(\.isScalar) }
                    read.condition = (parts.isEmpty ? "0" : parts.map { _ in one }.joined(separator: " OR "), parts.flatMap { $0.map(\.databaseValue) })
                case .positions(let offset, let count):
                    rowids = nil
                    read.offset = offset
                    limit = count
                }
            }
            _ = try RelationalFormat.loadRows(db, source: source, builder: builder, epoch: layout.epoch, readOnlyReason: readOnlyReason,
                                              limit: limit, rowids: rowids, window: read, warnings: &warnings)
        }
        return builder
    }

    /// Sorted runs covering `positions`: positions fewer than 64 apart share a run.
    static func runs(of positions: [Int64]) -> [ClosedRange<Int64>] {
        var runs: [ClosedRange<Int64>] = []
        for p in Set(positions).sorted() {
            if let last = runs.last, p - last.upperBound < 64 { runs[runs.count - 1] = last.lowerBound ... p } else { runs.append(p ... p) }
        }
        return runs
    }

    /// The rows `keys` of type `t` as a load holds them, in the table's order (find them by key).
    public func objects(type t: Int, keys: [ObjectID]) throws -> ObjectGraph {
        try file.read { db in try chunk(db, type: t, rows: .keys(keys)).finish() }
    }

    /// SQLite alone reading what `windows` windows of `rows` rows of type `t` hold, from its
    /// first row (the baseline `loupe bench paged` prints): the rows, the rows their foreign keys
    /// name, and the rows whose foreign keys name them, with no graph built. Returns rows read.
    public func readWindowsPlainly(type t: Int, windows: Int, rows: Int) throws -> Int {
        guard let rowidName = rowid(t) else { return 0 }
        let table = SQL.identifier(sources[t].name)
        return try file.read { db in
            var last = Int64.min, n = 0
            for _ in 0..<windows {
                let page = try Row.fetchAll(db, sql: "SELECT \(rowidName), * FROM \(table) WHERE \(rowidName) > ? ORDER BY \(rowidName) LIMIT ?", arguments: [last, rows])
                guard let end = page.last?[0] as Int64? else { break }
                last = end
                let list = "[" + page.map { String($0[0] as Int64) }.joined(separator: ",") + "]"
                n += page.count
                for relation in layout.graph.types[t].relations {
                    guard let fk = relation.foreignKey, let target = layout.tables[fk.targetType] else { continue }
                    let column = fk.targetAttribute.map(SQL.identifier) ?? layout.keyColumns(fk.targetType).first.map(SQL.identifier) ?? target.rowid
                    n += try Row.fetchAll(db, sql: "SELECT * FROM \(SQL.identifier(target.name)) WHERE \(column) IN (SELECT \(SQL.identifier(fk.attribute)) FROM \(table) WHERE \(rowidName) IN (SELECT value FROM json_each(?)))",
                                          arguments: [list]).count
                }
                for link in incoming[t] {
                    let named = link.targetColumn.map(SQL.identifier) ?? layout.keyColumns(t).first.map(SQL.identifier) ?? rowidName
                    n += try Row.fetchAll(db, sql: "SELECT rowid, \(SQL.identifier(link.column)) FROM \(SQL.identifier(sources[link.source].name)) WHERE \(SQL.identifier(link.column)) IN (SELECT \(named) FROM \(table) WHERE \(rowidName) IN (SELECT value FROM json_each(?)))",
                                          arguments: [list]).count
                }
            }
            return n
        }
    }

    /// The declared foreign keys into `object`'s table from or to a table without a rowid (a
    /// window does not follow them) that some row's value may name it by.
    public func unfollowedReferences(to object: ObjectIdentity) throws -> [String] {
        guard let t = layout.graph.types.firstIndex(where: { $0.name == object.type }) else { return [] }
        let unfollowed = layout.graph.types.flatMap { source in
            source.relations.compactMap { relation -> (source: TypeTable, relation: RelationColumn, fk: LoupeModel.ForeignKey)? in
                guard let fk = relation.foreignKey, fk.targetType == t, layout.tables[source.index] == nil || layout.tables[t] == nil else { return nil }
                return (source, relation, fk)
            }
        }
        // Most files have none: nothing to read (a deletion asks this of every row it deletes).
        guard !unfollowed.isEmpty else { return [] }
        var found: [String] = []
        try file.read { db in
            for (source, relation, fk) in unfollowed {
                // The value the key names the object by: its key, or the referenced column's.
                var id = object.id
                if let column = fk.targetAttribute {
                    let columns = layout.keyColumns(t)
                    let parts: [ObjectID]
                    if case .composite(let p) = object.id { parts = p } else { parts = [object.id] }
                    let condition = columns.isEmpty ? (rowid(t).map { "\($0) = ?" } ?? "0") : columns.map { "\(SQL.identifier($0)) = ?" }.joined(separator: " AND ")
                    let cell = try DatabaseValue.fetchOne(db, sql: "SELECT \(SQL.identifier(column)) FROM \(SQL.identifier(sources[t].name)) WHERE \(condition) LIMIT 1",
                                                          arguments: StatementArguments(parts.map(\.databaseValue))) ?? .null
                    guard let value = keyValue(cell, type: t, column: column) else { continue }
                    id = value
                }
                guard let (condition, bound) = layout.namingCondition(SQL.identifier(fk.attribute), type: source.index, column: fk.attribute, naming: id) else { continue }
                if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(SQL.identifier(sources[source.index].name)) WHERE \(condition))", arguments: StatementArguments(bound)) == true {
                    found.append("\(source.name).\(relation.name)")
                }
            }
        }
        return found
    }

    /// Relational keys are per table: the largest rowid of type `type`'s table, which SQLite
    /// assigns new rows (and an `INTEGER PRIMARY KEY`) as max + 1; 0 for `type` nil and a table
    /// without a rowid, whose keys are given.
    public func maximumIntegerKey(type t: Int?) throws -> Int64 {
        guard let t, let rowidName = rowid(t) else { return 0 }
        return try file.read { db in
            max(try Int64.fetchOne(db, sql: "SELECT max(\(rowidName)) FROM \(SQL.identifier(sources[t].name))") ?? 0,
                try SQLiteSequence.value(db, table: sources[t].name))
        }
    }

    public var offersRelationIndex: Bool { false }
    public var relationIndexBuilt: Bool { false }
    public func buildRelationIndex(progress: @escaping @Sendable (Int, Int) -> Void, isCancelled: @escaping @Sendable () -> Bool) throws {
        throw StoreError(.unreadable, path: file.path, reason: "Loupe's relation index is for Persist stores; this file's own indexes serve its relations")
    }
}
