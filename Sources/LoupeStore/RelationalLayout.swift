import Foundation
import GRDB
import LoupeModel
import Synchronization

/// What answering statements in SQL over a relational file needs to know of it, read without
/// loading a row: the types, attributes and relations exactly as a load names them (so names
/// resolve as the in-memory engine resolves them), and how each type is reached in SQL.
public struct RelationalLayout: Sendable {
    /// The file's types, attributes and declared relations, with no objects.
    public let graph: ObjectGraph
    /// Per type (by index): its table, or nil when it cannot be read row by row in SQL (a view,
    /// a `WITHOUT ROWID` table, a table whose rowid is hidden by columns of its names).
    public let tables: [Table?]
    /// Per type: a table SQL steps into but does not read row by row (a `WITHOUT ROWID` table, a
    /// table whose rowid is hidden, keyed by its primary key): a path's far end along its key
    /// column, a backlink's rows along theirs. Nil for the types of ``tables`` and for those
    /// whose rows a load lists by position (views, keys that do not read back).
    public let keyedTables: [KeyedTable?]
    /// Seconds between the file's date epoch and Unix time (Core Data's 2001, else 0).
    public let epoch: Double
    /// What a load of the file's schema warns of (tables and columns left out, keys read by
    /// rowid, read-only tables): what an answer read through the layout says first, as a load does.
    public var warnings: [String] = []

    public struct Table: Sendable {
        /// The table's name as the file spells it.
        public let name: String
        /// The name that reaches its rowid (`rowid`, `_rowid_` or `oid`).
        public let rowid: String
        /// Per attribute (by index): the column's name, and whether it reads dates.
        public let columns: [(name: String, isDate: Bool)]
        /// True when each row's key is its rowid: no key column, or an `INTEGER PRIMARY KEY`
        /// that aliases it (not one declared `DESC`, which SQLite keeps apart).
        public var keyIsRowid = false
    }

    /// A table reached by its key column alone (see ``keyedTables``).
    public struct KeyedTable: Sendable {
        /// The table's name as the file spells it.
        public let name: String
        /// Per attribute (by index): the column's name, and whether it reads dates.
        public let columns: [(name: String, isDate: Bool)]
    }

    /// The table a path steps into for type `t`: its table, or its ``keyedTables`` entry.
    public func joined(_ t: Int) -> KeyedTable? {
        tables[t].map { KeyedTable(name: $0.name, columns: $0.columns) } ?? keyedTables[t]
    }

    /// A cell of `type`'s `attribute` as the loaded graph holds it.
    public func value(_ cell: DatabaseValue, type: Int, attribute: Int) -> Value {
        // (Per cell an answer reads: the tables looked up, no ``joined(_:)`` made.)
        RelationalFormat.value(cell, isDate: (tables[type]?.columns[attribute] ?? keyedTables[type]?.columns[attribute])?.isDate ?? false, epoch: epoch)
    }

    /// The key columns of type `t` as its key policy names them (empty: the rowid, or the position).
    public func keyColumns(_ t: Int) -> [String] { graph.types[t].keyPolicy.keyColumns }

    /// True when SQLite gives type `t`'s column `name` (nil: the rowid) numeric affinity: text
    /// left in it never spells a number (SQLite would have stored the number).
    public func numericAffinity(_ t: Int, _ name: String?) -> Bool {
        guard let name else { return true }
        guard let a = graph.types[t].attribute(named: name) else { return false }
        let declared = (graph.types[t].attributes[a].storage?.declaredType ?? "").uppercased()
        if declared.contains("INT") { return true }
        if declared.isEmpty || ["CHAR", "CLOB", "TEXT", "BLOB"].contains(where: declared.contains) { return false }
        return true
    }

    /// True when SQLite gives type `t`'s column `name` text affinity: it holds text (numbers
    /// stored in it become text), or blobs.
    public func textAffinity(_ t: Int, _ name: String) -> Bool {
        guard let a = graph.types[t].attribute(named: name) else { return false }
        let declared = (graph.types[t].attributes[a].storage?.declaredType ?? "").uppercased()
        return !declared.contains("INT") && ["CHAR", "CLOB", "TEXT"].contains(where: declared.contains)
    }

    /// The condition under which `expression` — type `t`'s column `name` (nil: the rowid) — may
    /// hold a key value naming `id`, with its arguments: a superset of what a load links (the
    /// value, its affinity twin, and in a column without numeric affinity text that reads as the
    /// integer, a branch no index serves). Nil when no single value names it (a composite key).
    public func namingCondition(_ expression: String, type t: Int, column name: String?, naming id: ObjectID) -> (sql: String, arguments: [DatabaseValue])? {
        var bound = ([id] + (id.affinityAlternative.map { [$0] } ?? [])).filter(\.isScalar).map(\.databaseValue)
        guard !bound.isEmpty else { return nil }
        var condition = bound.map { _ in "\(expression) = ?" }.joined(separator: " OR ")
        if case .int = id, !numericAffinity(t, name) {
            condition += " OR (typeof(\(expression)) = 'text' AND CAST(\(expression) AS INTEGER) = ?)"
            bound.append(bound[0])
        }
        return (condition, bound)
    }

    /// `rowid, <key columns>` of type `t`, for ``key(_:type:ordinal:)``.
    public func keySelection(_ t: Int, rowid: String) -> String {
        ([rowid] + keyColumns(t).map(SQL.identifier)).joined(separator: ", ")
    }

    /// The key of a row read with ``keySelection(_:rowid:)`` first, as a load makes it (`ordinal`:
    /// the row's position from 1, a key for a row whose key cannot be read).
    public func key(_ row: Row, type t: Int, ordinal: Int64) -> ObjectID {
        let columns = keyColumns(t)
        if columns.isEmpty { return (row[0] as DatabaseValue).objectID ?? .int(ordinal) }
        if columns.count == 1 { return (row[1] as DatabaseValue).objectID ?? .int(ordinal) }
        return .composite(columns.indices.map { (row[1 + $0] as DatabaseValue).objectID ?? .string("") })
    }

    /// The keys of type `t`'s rows `rowids`, in that order (a rowid no row has is left out).
    public func keys(ofRowids rowids: [Int64], type t: Int, _ db: Database) throws -> [ObjectID] {
        guard let table = tables[t] else { return [] }
        // The key is the rowid (an INTEGER PRIMARY KEY, or no key at all): nothing to look up.
        if table.keyIsRowid { return rowids.map(ObjectID.int) }
        var byRowid: [Int64: ObjectID] = [:]
        for chunk in rowids.chunked(30_000) {
            let rows = try Row.fetchAll(db, sql: "SELECT \(keySelection(t, rowid: table.rowid)) FROM \(SQL.identifier(table.name)) WHERE \(table.rowid) IN (SELECT value FROM json_each(?))",
                                        arguments: ["[" + chunk.map(String.init).joined(separator: ",") + "]"])
            for row in rows { byRowid[row[0]] = key(row, type: t, ordinal: row[0]) }
        }
        return rowids.compactMap { byRowid[$0] }
    }
}

extension RelationalFormat {
    /// The layout of a relational file, with the relations a load would infer from its rows:
    /// `inferred` when given (what paged mode found at open), else as kept in Loupe's cache for
    /// `file` as it is, else found over the file now (and kept); and those relations.
    /// A file read again unchanged (the paged reader, then each statement's SQL plan) is laid
    /// out once per process: kept by its path and stamp (``LayoutMemo``).
    public static func layout(_ db: Database, file: StoreFile?, inferred: [InferredKey]? = nil) throws -> (layout: RelationalLayout, inferred: [InferredKey]) {
        let stamp = file?.stamp()
        if let file, let stamp, let kept = LayoutMemo.find(path: file.path, stamp: stamp, inferred: inferred) { return kept }
        var sources: [String: Source] = [:]
        for entry in try sourceNames(db) { sources[entry.name] = try describe(db, name: entry.name, isView: entry.isView) }
        let laidOut = try layout(db, sources: sources, file: file, inferred: inferred)
        if let file, let stamp { LayoutMemo.keep(laidOut, path: file.path, stamp: stamp, inferred: inferred) }
        return laidOut
    }

    /// The same over `sources`.
    static func layout(_ db: Database, sources: [String: Source], file: StoreFile?, inferred known: [InferredKey]?) throws -> (layout: RelationalLayout, inferred: [InferredKey]) {
        guard try mayInferRelations(db, sources: sources) else { return (try layout(db, sources: sources), []) }
        var inferred: [InferredKey] = []
        let stamp = file?.stamp()
        let layout = try layout(db, sources: sources) { loaded, builder in
            if let known {
                inferred = known
            } else if let file, let stamp, let kept = SchemaCache.inferredKeys(for: file, stamp: stamp) {
                inferred = kept
            } else {
                let epoch = try db.tableExists("Z_METADATA") ? DateText.referenceDateOffset : 0
                inferred = try inferredKeys(db, loaded: loaded, builder: builder, epoch: epoch, file: file)
                if let file, let stamp { SchemaCache.saveInferredKeys(inferred, file: file, stamp: stamp) }
            }
            return inferred
        }
        return (layout, inferred)
    }

    /// True when a load of the file would look for relations in its rows: relation inference is on
    /// and a column is named like a key of a table with no declared foreign key.
    static func mayInferRelations(_ db: Database, sources: [String: Source]) throws -> Bool {
        guard ReadOptions.current.infersRelations else { return false }
        let lowered = Set(sources.values.filter { !$0.isView }.map { $0.name.lowercased() })
        for source in sources.values where !source.isView {
            for column in source.columns where !source.foreignKeys.contains(where: { $0.column == column.name }) && source.keyColumns != [column.name] {
                if targetNames(forKeyColumn: column.name).contains(where: { lowered.contains($0.lowercased()) }) { return true }
            }
        }
        return false
    }

    /// The layout with the declared relations, and those `inferring` gives (see
    /// ``load(_:progress:only:schemaOnly:inferring:)``; none: what a load makes with inference off).
    static func layout(_ db: Database, sources: [String: Source],
                       inferring: ((_ loaded: [(Source, Int)], _ builder: GraphBuilder) throws -> [InferredKey])? = nil) throws -> RelationalLayout {
        let loaded = try load(db, progress: nil, only: nil, schemaOnly: true, inferring: inferring)
        let graph = loaded.graph
        let epoch = try db.tableExists("Z_METADATA") ? DateText.referenceDateOffset : 0
        let tables: [RelationalLayout.Table?] = graph.types.map { type in
            guard let source = sources[type.name.rawValue], source.hasRowID, type.keyPolicy != .rowNumber,
                  let rowid = SQL.rowidName(columns: source.columns.map(\.name)),
                  type.attributes.map(\.name) == source.columns.map(\.name) else { return nil }
            var table = RelationalLayout.Table(name: source.name, rowid: rowid, columns: source.columns.map { ($0.name, $0.isDate) })
            switch type.keyPolicy {
            case .rowid: table.keyIsRowid = true
            case .column(_, autoIncrements: true): table.keyIsRowid = (try? keyAliasesRowid(db, source)) ?? false
            default: break
            }
            return table
        }
        let keyedTables: [RelationalLayout.KeyedTable?] = graph.types.map { type in
            guard tables[type.index] == nil, let source = sources[type.name.rawValue], !source.isView, !type.keyPolicy.keyColumns.isEmpty,
                  type.attributes.map(\.name) == source.columns.map(\.name) else { return nil }
            return RelationalLayout.KeyedTable(name: source.name, columns: source.columns.map { ($0.name, $0.isDate) })
        }
        return RelationalLayout(graph: graph, tables: tables, keyedTables: keyedTables, epoch: epoch, warnings: loaded.warnings)
    }

    /// The rows of one table with these rowids, as a graph of that type alone (attributes as a
    /// load reads them), with each rowid's row in it. Call inside the read that chose the rowids.
    /// `everyRow` says the rowids are all the table's: it is then read whole, without a list.
    /// `policy` is the key policy the file's layout found for the table (nil: found again, which
    /// reads the table's key whole).
    public static func objects(_ db: Database, table: String, rowids: [Int64], everyRow: Bool = false,
                               policy: KeyPolicy? = nil) throws -> (graph: ObjectGraph, rows: [Int64: Int32]) {
        // The rows a read by rowid gives, checked first: a damaged table can repeat or lose a
        // rowid, and then no row of the graph could be matched to the rowid asked for.
        let wanted = Set(rowids).sorted()
        let (source, rowid) = try rowidSource(db, table: table)
        let only = rowidCondition(rowid, wanted: wanted)
        // (The load reads a range as a window's condition, which needs the key policy.)
        let isRun = only.isRun && !everyRow && policy != nil
        let found = everyRow
            ? try Int64.fetchAll(db, sql: "SELECT \(rowid) FROM \(SQL.identifier(table)) ORDER BY \(rowid)")
            : try Int64.fetchAll(db, sql: "SELECT \(rowid) FROM \(SQL.identifier(table)) WHERE \(only.sql) ORDER BY \(rowid)", arguments: StatementArguments(only.arguments))
        guard found == wanted else {
            throw StoreError(.notADatabase, path: nil, reason: "the database is corrupt (table \(table) does not give back the rows its rowids name)")
        }
        let builder = GraphBuilder(formatName: name)
        var warnings: [String] = []
        let epoch = try db.tableExists("Z_METADATA") ? DateText.referenceDateOffset : 0
        var window = policy.map { WindowRead(policy: $0) }
        if isRun { window?.condition = (only.sql, only.arguments) }
        let t = try loadRows(db, source: source, builder: builder, epoch: epoch,
                             readOnlyReason: try frameworkReadOnlyReason(db), rowids: everyRow || isRun ? nil : rowids,
                             window: window, warnings: &warnings)
        guard builder.count(of: t) == wanted.count else {
            throw StoreError(.notADatabase, path: nil, reason: "the database is corrupt (table \(table) gave \(builder.count(of: t)) rows for \(wanted.count) rowids)")
        }
        // Rows come in rowid order, one per distinct rowid asked for.
        var rows: [Int64: Int32] = [:]
        for (i, rowid) in wanted.enumerated() { rows[rowid] = Int32(i) }
        return (builder.finish(), rows)
    }
}

extension LoadedStore {
    /// One object and its neighbours read without a load: by indexed lookups in a relational
    /// file (``RelationalFormat/neighbourhood(_:type:ids:)``), by key in a Persist store with a
    /// fresh ``SchemaCache`` entry (``PersistFormat/neighbourhood(_:type:ids:)``); nil for other
    /// formats, or when only a load can tell.
    public static func neighbourhood(_ path: String, type: String, ids: [ObjectID]) throws -> (graph: ObjectGraph, ref: ObjectRef?)? {
        let file = try StoreFile.openForReading(path)
        do {
            let format = ObjectIdentifier(try file.read { try StoreFormats.detect($0, path: path) })
            if format == ObjectIdentifier(PersistFormat.self) { return try PersistFormat.neighbourhood(file, type: type, ids: ids) }
            guard format == ObjectIdentifier(RelationalFormat.self) else { return nil }
            return try file.read { db in try RelationalFormat.neighbourhood(db, file: file, type: type, ids: ids) }
        } catch { throw StoreError.from(error, path: path) }
    }
}

extension RelationalFormat {
    /// One object with what `loupe show` prints of it, read by indexed lookups instead of a load:
    /// its row, the rows its foreign keys name, and the rows whose foreign keys name it, in a
    /// graph with every type of the file (so names, relations and backlink groups come out as a
    /// whole load gives them). Lookups fetch a superset (every spelling a load would accept:
    /// the value, its affinity twin, text that reads as the integer); the relations themselves
    /// are then linked by ``linkForeignKeys(_:_:warnings:)`` exactly as a load links them. `ids`
    /// are the keys the object may have (``ObjectID/candidates(typed:)``). Relations a load would
    /// infer are found over `file` (see ``layout(_:file:inferred:)``) and linked as it links them.
    /// Nil when the type is a view or keyed by row number.
    public static func neighbourhood(_ db: Database, file: StoreFile?, type name: String, ids: [ObjectID]) throws -> (graph: ObjectGraph, ref: ObjectRef?)? {
        let (layout, inferred) = try layout(db, file: file)
        guard let type = layout.graph.type(named: name), let root = layout.tables[type.index] else { return nil }
        let graph = layout.graph
        func keyExpression(_ t: Int) -> String? {
            switch graph.types[t].keyPolicy {
            case .column(let k, _): return SQL.identifier(k)
            case .rowid: return layout.tables[t]?.rowid
            default: return nil
            }
        }
        /// The rowids of `t`'s rows whose `column` may hold `value` (a superset).
        func rowids(_ t: Int, column: String, named columnName: String? = nil, matching value: Value) throws -> [Int64] {
            guard let table = layout.tables[t], let id = ObjectID(keyValue: value),
                  let (condition, bound) = layout.namingCondition(column, type: t, column: columnName, naming: id) else { return [] }
            return try Int64.fetchAll(db, sql: "SELECT \(table.rowid) FROM \(SQL.identifier(table.name)) WHERE \(condition)", arguments: StatementArguments(bound))
        }
        func keyName(_ t: Int) -> String? {
            if case .column(let k, _) = graph.types[t].keyPolicy { return k }
            return nil   // the rowid: integers only
        }
        guard let rootKey = keyExpression(type.index) else { return nil }
        var wanted: [Int: Set<Int64>] = [:]
        for id in ids {
            let value: Value
            switch id {
            case .int(let i): value = .int(i)
            case .double(let d): value = .double(d)
            case .string(let s): value = .string(s)
            case .data(let d): value = .data(d)
            case .composite: continue
            }
            wanted[type.index, default: []].formUnion(try rowids(type.index, column: rootKey, named: keyName(type.index), matching: value))
        }
        let roots = Array(wanted[type.index] ?? [])
        // What the root rows' foreign keys name.
        for relation in type.relations {
            guard let fk = relation.foreignKey, let column = root.columns.firstIndex(where: { $0.name == fk.attribute }) else { continue }
            let targetColumn = fk.targetAttribute.map(SQL.identifier) ?? keyExpression(fk.targetType)
            guard let targetColumn else { return nil }
            let cells = try DatabaseValue.fetchAll(db, sql: "SELECT \(SQL.identifier(fk.attribute)) FROM \(SQL.identifier(root.name)) WHERE \(root.rowid) IN (SELECT value FROM json_each(?))",
                                                   arguments: ["[" + roots.map(String.init).joined(separator: ",") + "]"])
            for cell in cells {
                let value = layout.value(cell, type: type.index, attribute: column)
                wanted[fk.targetType, default: []].formUnion(try rowids(fk.targetType, column: targetColumn, named: fk.targetAttribute ?? keyName(fk.targetType), matching: value))
            }
        }
        // What names the root rows: every relation of every type whose foreign key points here.
        let rootValues: [Value] = try roots.flatMap { rowid -> [Value] in
            let cells = try DatabaseValue.fetchAll(db, sql: "SELECT \(rootKey) FROM \(SQL.identifier(root.name)) WHERE \(root.rowid) = ?", arguments: [rowid])
            return cells.map { $0.objectID?.value ?? .null }
        }
        for source in graph.types {
            for relation in source.relations {
                guard let fk = relation.foreignKey, fk.targetType == type.index else { continue }
                for value in rootValues {
                    if let targetAttribute = fk.targetAttribute {
                        // A key to another column: the sources of whatever that column holds.
                        guard let attribute = root.columns.firstIndex(where: { $0.name == targetAttribute }) else { continue }
                        let cells = try DatabaseValue.fetchAll(db, sql: "SELECT \(SQL.identifier(targetAttribute)) FROM \(SQL.identifier(root.name)) WHERE \(rootKey) = ?", arguments: [value.databaseValueForKey])
                        for cell in cells {
                            wanted[source.index, default: []].formUnion(try rowids(source.index, column: SQL.identifier(fk.attribute), named: fk.attribute,
                                                                                   matching: layout.value(cell, type: type.index, attribute: attribute)))
                        }
                    } else {
                        wanted[source.index, default: []].formUnion(try rowids(source.index, column: SQL.identifier(fk.attribute), named: fk.attribute, matching: value))
                    }
                }
            }
        }
        // Every table in the load's order, each with the rows asked of it (most with none).
        let builder = GraphBuilder(formatName: self.name)
        var warnings: [String] = []
        let readOnly = try frameworkReadOnlyReason(db)
        var tables: [KeyedTable] = []
        for entry in try sourceNames(db) {
            let source = try describe(db, name: entry.name, isView: entry.isView)
            let index = graph.types.firstIndex { $0.name.rawValue == entry.name }
            let t = try loadRows(db, source: source, builder: builder, epoch: layout.epoch, readOnlyReason: readOnly,
                                 rowids: index.flatMap { wanted[$0].map { Array($0).sorted() } } ?? [],
                                 window: index.map { WindowRead(policy: layout.graph.types[$0].keyPolicy) }, warnings: &warnings)
            tables.append(source.keyed(as: t))
        }
        linkForeignKeys(builder, tables, warnings: &warnings)
        linkInferred(builder, tables, inferred)
        let small = builder.finish()
        guard let smallType = small.type(named: type.name.rawValue) else { return nil }
        return (small, ids.lazy.compactMap { small.ref(type: smallType, id: $0) }.first)
    }
}

private extension Value {
    /// A key value bound as SQLite holds it.
    var databaseValueForKey: DatabaseValue {
        switch self {
        case .int(let i): return i.databaseValue
        case .double(let d): return d.databaseValue
        case .string(let s): return s.databaseValue
        case .data(let d): return d.databaseValue
        default: return .null
        }
    }
}

/// The layouts this process read, by file path, stamp and the inferred relations asked for (nil:
/// as a load infers them): a stamp changes at every commit, so a layout kept is the file's as
/// it is. A few files at a time (a test process opens hundreds).
enum LayoutMemo {
    private struct Entry: Sendable {
        let path: String, stamp: FileStamp, inferred: [InferredKey]?
        let laidOut: (layout: RelationalLayout, inferred: [InferredKey])
    }
    private static let entries = Mutex<[Entry]>([])

    static func find(path: String, stamp: FileStamp, inferred: [InferredKey]?) -> (layout: RelationalLayout, inferred: [InferredKey])? {
        entries.withLock { $0.last { $0.path == path && $0.stamp == stamp && $0.inferred == inferred }?.laidOut }
    }

    static func keep(_ laidOut: (layout: RelationalLayout, inferred: [InferredKey]), path: String, stamp: FileStamp, inferred: [InferredKey]?) {
        entries.withLock { entries in
            entries.removeAll { $0.path == path && ($0.stamp != stamp || $0.inferred == inferred) }
            if entries.count >= 8 { entries.removeFirst() }
            entries.append(Entry(path: path, stamp: stamp, inferred: inferred, laidOut: laidOut))
        }
    }
}
