import Foundation
import CSQLiteTuning
import GRDB
import LoupeModel

/// A loaded table as its foreign keys see it (a relational file's, a PostgreSQL database's).
public struct KeyedTable: Sendable {
    public let name: String
    /// Its type's index in the builder.
    public let type: Int
    public let columns: [String]
    public let keyColumns: [String]
    public let foreignKeys: [DeclaredForeignKey]
    /// Foreign keys of several columns (SQLite files; none read from PostgreSQL yet).
    public let compositeForeignKeys: [DeclaredCompositeKey]

    public init(name: String, type: Int, columns: [String], keyColumns: [String], foreignKeys: [DeclaredForeignKey],
                compositeForeignKeys: [DeclaredCompositeKey] = []) {
        self.name = name
        self.type = type
        self.columns = columns
        self.keyColumns = keyColumns
        self.foreignKeys = foreignKeys
        self.compositeForeignKeys = compositeForeignKeys
    }
}

/// A foreign key of several columns as a schema declares it: the columns, the table they
/// reference and its columns they name (nil each: that table's primary key, in its order).
public struct DeclaredCompositeKey: Sendable {
    public let columns: [String]
    public let table: String
    public let targets: [String?]
}

/// A single-column foreign key as a schema declares it: the column, the table it references and
/// the referenced column (nil: that table's primary key).
public struct DeclaredForeignKey: Sendable {
    public let column: String
    public let table: String
    public let target: String?
    public let onDelete: DeleteAction

    public init(column: String, table: String, target: String?, onDelete: DeleteAction) {
        self.column = column
        self.table = table
        self.target = target
        self.onDelete = onDelete
    }
}

/// Any SQLite file read as an object graph (Chinook, Northwind, an app's GRDB database, a Core Data
/// store read table by table).
///
/// Each table is a type and each row an object. Its key (``ObjectID``) is the single-column primary
/// key, the values of a composite (or `WITHOUT ROWID`) key in key order, else the rowid; a table
/// whose primary key holds NULLs, or text that is not UTF-8 (or holds a NUL), is keyed by rowid
/// (a `WITHOUT ROWID` table with such text by position, read-only). Each column is an attribute,
/// generated columns included. Each declared single-column foreign key is also a to-one
/// relation, named after the column without a trailing `Id`, `ID` or `_id` (when the rest is not
/// empty and names no other column) and reachable under the column's own name too; it points at
/// its declared table even when every value is NULL. Views are read-only types keyed by row
/// number. In columns declared `DATE`, `DATETIME` or `TIMESTAMP`, text that reads as an ISO date
/// is a date, and so is a number between the years 1 and 9999: seconds since 2001 in a Core Data
/// store (one with a `Z_METADATA` table), Unix seconds anywhere else.
///
/// Names are never spliced into SQL unquoted: introspection binds them as arguments of SQLite's
/// pragma functions, and reads quote them with ``SQL/identifier(_:)``.
public enum RelationalFormat: StoreFormat {
    public static let name = "SQLite"

    public static func matches(_ db: Database) throws -> Bool { true }

    public static func catalog(_ db: Database) throws -> [(name: String, count: Int)] {
        try sourceNames(db).map { source in
            (source.name, (try? Int.fetchOne(db, sql: "SELECT count(*) FROM \(SQL.identifier(source.name))")) ?? 0)
        }
    }

    /// What a load warns of the catalog: the tables and views it leaves out for names SQL cannot
    /// name (``namesThatDoNotReadBack(_:)``).
    public static func catalogWarnings(_ db: Database) throws -> [String] {
        try namesThatDoNotReadBack(db).map { "\($0): its name is not UTF-8 (or holds a NUL), which SQL cannot name; left out" }
    }

    /// Tables (then views) in schema order, without SQLite's own, without the shadow tables of
    /// virtual tables (``VirtualTables``), and without those whose name does not read back
    /// (``namesThatDoNotReadBack(_:)``). A virtual table is listed as a view is: read, never written.
    static func sourceNames(_ db: Database) throws -> [(name: String, isView: Bool, sql: String)] {
        let shadows = try VirtualTables.shadowTables(db)
        let encoding = try TextEncoding(db)
        return try schemaRows(db).compactMap { row in
            let sql = (row[2] as DatabaseValue).lenientText ?? ""
            guard readsBack(row[3], encoding), let name = (row[0] as DatabaseValue).lenientText, !shadows.contains(name) else { return nil }
            return (name, (row[1] as DatabaseValue).lenientText == "view" || VirtualTables.module(sql) != nil, sql)
        }
    }

    /// The tables and views whose name is not UTF-8 (or holds a NUL), as shown: SQLite hands such
    /// a name over repaired or cut short, and SQL written with it names another table, or none,
    /// so they are left out of what Loupe reads (a load warns of each).
    static func namesThatDoNotReadBack(_ db: Database) throws -> [String] {
        let encoding = try TextEncoding(db)
        return try schemaRows(db).compactMap { row in readsBack(row[3], encoding) ? nil : (row[0] as DatabaseValue).lenientText }
    }

    /// `name, type, sql, CAST(name AS BLOB)` of every table and view but SQLite's own.
    private static func schemaRows(_ db: Database) throws -> [Row] {
        try Row.fetchAll(db, sql: """
            SELECT name, type, sql, CAST(name AS BLOB) FROM sqlite_master
            WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
            ORDER BY CASE type WHEN 'table' THEN 0 ELSE 1 END, rowid
            """)
    }

    /// True when `bytes` (a name read as a BLOB, so in the database's `encoding`) reads back as it
    /// is stored: UTF-8 (or UTF-16 with its surrogates paired) without a NUL. NULL reads back (as nothing).
    static func readsBack(_ bytes: DatabaseValue, _ encoding: TextEncoding) -> Bool {
        guard case .blob(let data) = bytes.storage else { return true }
        switch encoding {
        case .utf8: return !data.contains(0) && String(validating: data, as: UTF8.self) != nil
        case .utf16le, .utf16be:
            guard data.count % 2 == 0 else { return false }
            let bytes = Array(data)
            let units = stride(from: 0, to: bytes.count, by: 2).map { i in
                encoding == .utf16le ? UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8 : UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1])
            }
            return !units.contains(0) && String(validating: units, as: UTF16.self) != nil
        }
    }

    /// How a database holds its text (`PRAGMA encoding`), and so what `CAST(text AS BLOB)` gives.
    enum TextEncoding: Int32 {
        case utf8 = 1, utf16le = 2, utf16be = 3

        /// The encoding of `db`'s main database.
        init(_ db: Database) throws {
            switch try String.fetchOne(db, sql: "PRAGMA encoding")?.uppercased() {
            case "UTF-16LE": self = .utf16le
            case "UTF-16BE": self = .utf16be
            default: self = .utf8
            }
        }
    }

    /// What the loader learned about one table before reading its rows.
    struct Source: Sendable {
        let name: String
        let isView: Bool
        let columns: [ColumnInfo]
        let keyColumns: [String]
        let hasRowID: Bool
        let foreignKeys: [(column: String, table: String, target: String?, onDelete: DeleteAction)]
        /// Columns left out because SQL cannot name them (their names, as shown): the table is
        /// read without them, and not edited (a write would leave them as they are unseen).
        var unnamedColumns: [String] = []
        /// Why the table is never written although it is a table: a virtual table, or perhaps
        /// the shadow table of one (``VirtualTables/refusal(_:name:)``).
        var writeRefusal: String? = nil
        /// The app's collations (not SQLite's) the table orders text by, read through an
        /// emulation (``Collations``).
        var foreignCollations: [String] = []
        /// Foreign keys of several columns (``DeclaredCompositeKey``).
        var compositeForeignKeys: [DeclaredCompositeKey] = []
        /// The module of a full-text table (``VirtualTables/fullTextModule(_:name:)``): keyed by
        /// rowid, searched with `MATCH`.
        var fullTextModule: String? = nil

        /// The table as its foreign keys see it, read into type `t`.
        func keyed(as t: Int) -> KeyedTable {
            KeyedTable(name: name, type: t, columns: columns.map(\.name), keyColumns: keyColumns,
                       foreignKeys: foreignKeys.map { DeclaredForeignKey(column: $0.column, table: $0.table, target: $0.target, onDelete: $0.onDelete) },
                       compositeForeignKeys: compositeForeignKeys)
        }
    }

    struct ColumnInfo: Sendable {
        let name: String
        let storage: ColumnStorage
        var isDate: Bool {
            let t = storage.declaredType.uppercased()
            return t.contains("DATE") || t.contains("TIMESTAMP")
        }
    }

    /// The columns, key, rowid and foreign keys of one table or view, read through pragma
    /// functions with the name bound as an argument.
    static func describe(_ db: Database, name: String, isView: Bool) throws -> Source {
        let info = try Row.fetchAll(db, sql: #"SELECT name, type, "notnull", dflt_value, pk, hidden, CAST(name AS BLOB) FROM pragma_table_xinfo(?)"#, arguments: [name])
        var columns: [ColumnInfo] = []
        var keys: [(Int64, String)] = []
        var unnamed: [String] = []
        var keyUnnamed = false
        let encoding = try TextEncoding(db)
        for row in info {
            let hidden = (row[5] as DatabaseValue).lenientInt ?? 0
            if hidden == 1 { continue }   // a virtual table's hidden column
            guard let column = (row[0] as DatabaseValue).lenientText else { continue }
            let pk = (row[4] as DatabaseValue).lenientInt ?? 0
            // A column SQL cannot name (its name does not read back) is left out.
            guard readsBack(row[6], encoding) else {
                unnamed.append(column)
                keyUnnamed = keyUnnamed || pk > 0
                continue
            }
            if pk > 0 { keys.append((pk, column)) }
            columns.append(ColumnInfo(name: column, storage: ColumnStorage(
                declaredType: (row[1] as DatabaseValue).lenientText ?? "", isPrimaryKey: pk > 0,
                notNull: (row[2] as DatabaseValue).lenientBool, isGenerated: hidden == 2 || hidden == 3,
                defaultSQL: (row[3] as DatabaseValue).lenientText)))
        }
        var fks: [(String, String, String?, DeleteAction)] = []
        var composites: [DeclaredCompositeKey] = []
        var withoutRowID = false
        if !isView {
            let list = try Row.fetchAll(db, sql: #"""
                SELECT id, "table", "from", "to", on_delete, CAST("table" AS BLOB), CAST("from" AS BLOB), CAST("to" AS BLOB)
                FROM pragma_foreign_key_list(?) ORDER BY id, seq
                """#, arguments: [name])
            let byID = Dictionary(grouping: list, by: { ($0[0] as DatabaseValue).lenientInt ?? -1 })
            for id in byID.keys.sorted() where byID[id]!.count > 1 {
                let parts = byID[id]!
                guard parts.allSatisfy({ readsBack($0[5], encoding) && readsBack($0[6], encoding) && readsBack($0[7], encoding) }),
                      let table = (parts[0][1] as DatabaseValue).lenientText else { continue }
                let columns = parts.compactMap { ($0[2] as DatabaseValue).lenientText }
                guard columns.count == parts.count else { continue }
                composites.append(DeclaredCompositeKey(columns: columns, table: table, targets: parts.map { ($0[3] as DatabaseValue).lenientText }))
            }
            for id in byID.keys.sorted() where byID[id]!.count == 1 {
                let fk = byID[id]![0]
                guard readsBack(fk[5], encoding), readsBack(fk[6], encoding), readsBack(fk[7], encoding) else { continue }
                guard let from = (fk[2] as DatabaseValue).lenientText, let table = (fk[1] as DatabaseValue).lenientText else { continue }
                let action = DeleteAction(rawValue: ((fk[4] as DatabaseValue).lenientText ?? "").uppercased()) ?? .noAction
                fks.append((from, table, (fk[3] as DatabaseValue).lenientText, action))
            }
            withoutRowID = try Row.fetchOne(db, sql: "SELECT wr FROM pragma_table_list(?) WHERE schema = 'main'", arguments: [name])
                .map { ($0[0] as DatabaseValue).lenientBool } ?? false
        }
        let collations = try Collations.foreign(db, table: name)
        let fullText = isView ? try VirtualTables.fullTextModule(db, name: name) : nil
        // A write checks a foreign key through the key of the table it references.
        let referenced = try fks.compactMap { fk in try Collations.foreign(db, table: fk.1).first.map { (fk.1, $0) } }
        return Source(name: name, isView: isView, columns: columns, keyColumns: keyUnnamed ? [] : keys.sorted { $0.0 < $1.0 }.map(\.1),
                      hasRowID: fullText != nil || !isView && !withoutRowID, foreignKeys: fks, unnamedColumns: unnamed,
                      writeRefusal: try VirtualTables.refusal(db, name: name) ?? Collations.refusal(name, collations, referenced: referenced),
                      foreignCollations: collations, compositeForeignKeys: composites, fullTextModule: fullText)
    }

    public static func load(_ file: StoreFile, progress: LoadProgress?) throws -> LoadedGraph {
        try load(file, progress: progress, only: nil)
    }

    public static func load(_ file: StoreFile, progress: LoadProgress?, onlyTypes: Set<String>) throws -> LoadedGraph {
        try load(file, progress: progress, only: onlyTypes)
    }

    /// The names a relation may have: each declared foreign key's relation and column, and for
    /// every column named like a key (`CustomerId`), the relation inference could make of it.
    public static func relationNames(_ db: Database) throws -> Set<String>? {
        var names = Set<String>()
        for entry in try sourceNames(db) where !entry.isView {
            let source = try describe(db, name: entry.name, isView: false)
            let columns = Set(source.columns.map(\.name))
            for column in source.columns where source.foreignKeys.contains(where: { $0.column == column.name }) || !targetNames(forKeyColumn: column.name).isEmpty {
                names.insert(column.name)
                names.insert(relationName(for: column.name, otherColumns: columns))
            }
            for key in source.compositeForeignKeys { names.formUnion(compositeRelationNames(key)) }
        }
        return names
    }

    /// The first rows of one table or view, with their columns (no relations).
    public static func firstPage(_ file: StoreFile, type: String, limit: Int) throws -> ObjectGraph? {
        try file.read { db in
            guard let entry = try sourceNames(db).first(where: { $0.name == type }) else { return nil }
            let builder = GraphBuilder(formatName: name)
            var warnings: [String] = []
            _ = try loadRows(db, source: try describe(db, name: entry.name, isView: entry.isView), builder: builder, epoch: 0,
                             readOnlyReason: try frameworkReadOnlyReason(db), limit: limit, warnings: &warnings)
            return builder.finish()
        }
    }

    private static func load(_ file: StoreFile, progress: LoadProgress?, only: Set<String>?) throws -> LoadedGraph {
        let (results, stamp) = try file.readOnSnapshot(workers: 1) { _, db in try load(db, progress: progress, only: only) }
        var loaded = results[0]
        loaded.stamp = stamp
        return loaded
    }

    /// Loads every table and view, or only those named in `only` (then without relations); with
    /// `schemaOnly`, no row at all: the types, attributes and declared relations a load would make,
    /// and the relations `inferring` names, given the tables and their types (a cached list, or
    /// found over the file by ``inferredKeys(_:loaded:builder:epoch:file:)``).
    static func load(_ db: Database, progress: LoadProgress?, only: Set<String>?, schemaOnly: Bool = false,
                     inferring: ((_ loaded: [(Source, Int)], _ builder: GraphBuilder) throws -> [InferredKey])? = nil) throws -> LoadedGraph {
        let builder = GraphBuilder(formatName: name)
        var warnings: [String] = []
        var sources: [Source] = []
        if only == nil { warnings += try catalogWarnings(db) }
        for entry in try sourceNames(db) where only?.contains(entry.name) ?? true {
            do {
                sources.append(try describe(db, name: entry.name, isView: entry.isView))
            } catch {
                warnings.append("\(entry.name): cannot read its columns (\(StoreError.from(error, path: nil).reason)); left out")
            }
        }
        let epoch = try db.tableExists("Z_METADATA") ? DateText.referenceDateOffset : 0
        let frameworkReason = try frameworkReadOnlyReason(db)
        var total = 0
        if !schemaOnly {
            for s in sources { total += (try? Int.fetchOne(db, sql: "SELECT count(*) FROM \(SQL.identifier(s.name))")) ?? 0 }
        }
        var done = 0
        progress?(0, total)

        var loaded: [(Source, Int)] = []
        for source in sources {
            do {
                let t = try loadRows(db, source: source, builder: builder, epoch: epoch, readOnlyReason: frameworkReason,
                                     limit: schemaOnly ? 0 : nil, warnings: &warnings)
                loaded.append((source, t))
                done += builder.count(of: t)
            } catch {
                warnings.append("\(source.name): cannot read its rows (\(StoreError.from(error, path: nil).reason))")
            }
            progress?(done, total)
        }

        if only != nil { return LoadedGraph(graph: builder.finish(), warnings: warnings) }
        // Foreign keys become relations once every table is loaded.
        let tables = loaded.map { source, t in source.keyed(as: t) }
        linkForeignKeys(builder, tables, warnings: &warnings)
        if schemaOnly, let inferring { linkInferred(builder, tables, try inferring(loaded, builder)) }
        if ReadOptions.current.infersRelations && !schemaOnly {
            inferRelations(builder, loaded: loaded) { column, source in
                guard !source.foreignKeys.contains(where: { $0.column == column.name }), source.keyColumns != [column.name] else { return [] }
                return targetNames(forKeyColumn: column.name)
            }
        }
        return LoadedGraph(graph: builder.finish(), warnings: warnings)
    }

    /// Makes each declared single-column foreign key a to-one relation (named by
    /// ``relationName(for:otherColumns:)``, reachable under the column's name too) with an edge
    /// for every value that names a row of the target (its key, or the referenced column), once
    /// every table's rows are in `builder`; values that name nothing are counted in a warning.
    public static func linkForeignKeys(_ builder: GraphBuilder, _ tables: [KeyedTable], warnings: inout [String]) {
        let typeByName = Dictionary(tables.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let typeByLowerName = Dictionary(tables.map { ($0.name.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })
        for source in tables {
            let t = source.type
            let columnNames = Set(source.columns)
            for fk in source.foreignKeys {
                guard let target = typeByName[fk.table] ?? typeByLowerName[fk.table.lowercased()] else {
                    warnings.append("\(source.name).\(fk.column): refers to missing table \(fk.table)")
                    continue
                }
                let tt = target.type
                guard let a = builder.existingAttribute(fk.column, of: t) else { continue }
                let relationName = relationName(for: fk.column, otherColumns: columnNames)
                let aliases = relationName == fk.column ? [] : [fk.column]
                // The referenced column: as declared, else the target's primary key.
                let targetColumn = fk.target ?? (target.keyColumns.count == 1 ? target.keyColumns[0] : nil)
                let referencesKey: Bool
                if let targetColumn, case .column(let key, _) = builder.keyPolicy(of: tt) { referencesKey = key == targetColumn }
                else { referencesKey = targetColumn == nil && builder.keyPolicy(of: tt) != .rowNumber }
                let foreignKey = ForeignKey(attribute: fk.column, targetType: tt, targetAttribute: referencesKey ? nil : targetColumn,
                                            onDelete: fk.onDelete)
                let r = builder.relation(relationName, of: t, aliases: aliases, foreignKey: foreignKey, declaredTargets: [tt])
                let index = builder.keyIndex(type: tt, attribute: referencesKey ? nil : targetColumn.flatMap { builder.existingAttribute($0, of: tt) })
                var unresolved = 0
                let values = builder.column(type: t, attribute: a)
                for (row, v) in values.enumerated() where !v.isNull {
                    if let to = index.row(for: v) {
                        builder.addEdge(from: ObjectRef(type: t, row: row), relation: r, to: ObjectRef(type: tt, row: to))
                    } else { unresolved += 1 }
                }
                if unresolved > 0 { warnings.append("\(source.name).\(fk.column): \(unresolved) values match no \(target.name)") }
            }
            for key in source.compositeForeignKeys {
                guard let target = typeByName[key.table] ?? typeByLowerName[key.table.lowercased()] else {
                    warnings.append("\(source.name).(\(key.columns.joined(separator: ", "))): refers to missing table \(key.table)")
                    continue
                }
                linkComposite(builder, source, key, target, warnings: &warnings)
            }
        }
    }

    /// The names a composite foreign key's relation takes, the first free one: its table's, its
    /// columns' joined by `_`, its table's with `_ref`.
    static func compositeRelationNames(_ key: DeclaredCompositeKey) -> [String] {
        [key.table, key.columns.joined(separator: "_"), key.table + "_ref"]
    }

    /// Makes composite foreign key `key` of `source` a to-one relation into `target`
    /// (``CompositeKey``), named after the target table (else after its columns joined by `_`),
    /// with an edge for every row whose parts name a target row; rows naming none are counted
    /// in a warning (broken links, which `schema` counts too).
    static func linkComposite(_ builder: GraphBuilder, _ source: KeyedTable, _ key: DeclaredCompositeKey, _ target: KeyedTable, warnings: inout [String]) {
        let targetColumns = key.targets.allSatisfy({ $0 == nil }) && target.keyColumns.count == key.columns.count
            ? target.keyColumns : key.targets.compactMap { $0 }
        let t = source.type, tt = target.type
        /// The attributes of `type` named `names`, when it has every one.
        func attributes(_ names: [String], of type: Int) -> [Int]? {
            let found = names.compactMap { builder.existingAttribute($0, of: type) }
            return found.count == names.count ? found : nil
        }
        guard targetColumns.count == key.columns.count, let sourceAttributes = attributes(key.columns, of: t),
              let targetAttributes = attributes(targetColumns, of: tt) else { return }
        let taken = Set(source.columns).union(builder.relationNames(of: t))
        let name = compositeRelationNames(key).first { !taken.contains($0) } ?? target.name + "_ref"
        let r = builder.relation(name, of: t, declaredTargets: [tt])
        let composite = CompositeKey(columns: key.columns, targetType: tt, targetColumns: targetColumns)
        builder.setCompositeKey(composite, relation: r, of: t)
        let sourceValues = sourceAttributes.map { builder.column(type: t, attribute: $0) }
        let (from, to) = CompositeKey.edges(source: sourceValues, target: targetAttributes.map { builder.column(type: tt, attribute: $0) }, targetType: tt)
        builder.addEdges(type: t, relation: r, fromRows: from, to: to)
        let named = (0..<builder.count(of: t)).filter { row in CompositeKey.key(sourceValues.map { $0[row] }) != nil }.count
        if named > from.count {
            warnings.append("\(source.name).(\(key.columns.joined(separator: ", "))): \(named - from.count) values match no \(target.name)")
        }
    }

    /// `CustomerId`, `customer_id`, `CUSTOMERID` → the tables it may name: `Customer`,
    /// `Customers`, `Customeres`, (`Category` →) `Categories`; empty when the column is not named
    /// like a key.
    static func targetNames(forKeyColumn column: String) -> [String] {
        var base: String?
        for suffix in ["_id", "_ID", "Id", "ID", "_Id"] where column.hasSuffix(suffix) && column.count > suffix.count {
            base = String(column.dropLast(suffix.count))
            break
        }
        guard var stem = base else { return [] }
        if stem.hasSuffix("_") { stem.removeLast() }
        guard !stem.isEmpty else { return [] }
        var names = [stem, stem + "s", stem + "es"]
        if stem.lowercased().hasSuffix("y") { names.append(String(stem.dropLast()) + "ies") }
        if stem.contains("_") { names += names.map { $0.replacingOccurrences(of: "_", with: "") } }
        return names
    }

    /// Adds the relations a file does not declare: for each column `candidates` names target
    /// tables for (in order of preference), the first such table (matched case-insensitively)
    /// whose key holds nearly every non-null value of the column (``InferenceTolerance``: the
    /// others are broken links, which `schema` counts) becomes a to-one relation, marked
    /// inferred, named by `relationName`. When `uniqueOnly` says so for a column, it must be the
    /// only candidate that holds them all. A column with no values is left alone.
    static func inferRelations(_ builder: GraphBuilder, loaded: [(Source, Int)],
                               relationName: (_ column: String, _ otherColumns: Set<String>) -> String = relationName(for:otherColumns:),
                               strayShare: Double = InferenceTolerance.strayShare,
                               candidates: (_ column: ColumnInfo, _ source: Source) -> [String],
                               uniqueOnly: (_ column: ColumnInfo, _ source: Source) -> Bool = { _, _ in false }) {
        let typeByLowerName = Dictionary(loaded.map { ($0.0.name.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })
        var keyIndexes: [Int: KeyIndex] = [:]
        for (source, t) in loaded where !source.isView {
            let columnNames = Set(source.columns.map(\.name))
            for column in source.columns {
                let names = candidates(column, source)
                guard !names.isEmpty, let a = builder.existingAttribute(column.name, of: t) else { continue }
                let values = builder.column(type: t, attribute: a)
                guard values.contains(where: { !$0.isNull }) else { continue }
                // Each candidate within the tolerance with its stray values; the fewest win (the
                // first of equals), one holding every value at once.
                var holding: [(type: Int, index: KeyIndex, stray: Int)] = []
                for name in names {
                    guard let (target, tt) = typeByLowerName[name.lowercased()], !target.isView,
                          builder.keyPolicy(of: tt) != .rowNumber, target.keyColumns.count <= 1 else { continue }
                    let index = keyIndexes[tt] ?? builder.keyIndex(type: tt, attribute: nil)
                    keyIndexes[tt] = index
                    var resolved = 0, stray = 0
                    for v in values where !v.isNull { if index.row(for: v) != nil { resolved += 1 } else { stray += 1 } }
                    guard InferenceTolerance.allows(stray: stray, of: resolved + stray, share: strayShare) else { continue }
                    holding.append((tt, index, stray))
                    if stray == 0 && (!uniqueOnly(column, source) || holding.count > 1) { break }
                }
                if uniqueOnly(column, source), holding.count != 1 { continue }
                guard let (tt, index, _) = holding.min(by: { $0.stray < $1.stray }) else { continue }
                addInferredRelation(builder, type: t, attribute: a, column: column.name, name: relationName(column.name, columnNames), target: tt, index: index)
            }
        }
    }

    /// `AlbumId` → `Album` when the rest is not empty and names no other column; else the column's name.
    static func relationName(for column: String, otherColumns: Set<String>) -> String {
        for suffix in ["_id", "Id", "ID"] where column.hasSuffix(suffix) && column.count > suffix.count {
            let base = String(column.dropLast(suffix.count))
            if !otherColumns.contains(base) { return base }
        }
        return column
    }

    /// Reads one table's rows into a new type and returns the type's index.
    /// Why a file written by a framework is read-only (its tables hold bookkeeping that editing
    /// them as plain tables would break), or nil for a plain relational file.
    static func frameworkReadOnlyReason(_ db: Database) throws -> String? {
        if try db.tableExists("Z_METADATA") && db.tableExists("Z_PRIMARYKEY") {
            return "a Core Data store: Loupe does not write Core Data's bookkeeping (Z_OPT, Z_MAX) yet, so it does not edit it"
        }
        if try db.tableExists("revs") && db.tableExists("docs") && db.tableExists("localdocs") {
            return "a Couchbase Lite database: its documents are revisions that only Couchbase Lite writes"
        }
        if let columns = try db.columnNames(of: "record"), Set(["id", "objectName", "data"]).isSubset(of: columns) {
            return "a SwiftSerialization store: Loupe does not write its JSON records yet"
        }
        return nil
    }

    /// Which rows of a table a window of paged mode reads (``RelationalPages``), beside `rowids`.
    struct WindowRead {
        /// The key policy the file's layout found (no check for NULL keys again).
        var policy: KeyPolicy
        /// Only the rows meeting this SQL condition, with its arguments (instead of `rowids`).
        var condition: (sql: String, arguments: [DatabaseValue])? = nil
        /// Rows skipped first (a view's rows by position: ordinals count on from it).
        var offset = 0
        /// Rows read with their key and `sparseColumns` only (the other attributes null): the
        /// sources of a window's backlinks, which it shows by count.
        var sparse: Set<Int64> = []
        var sparseColumns: Set<String> = []
    }

    static func loadRows(_ db: Database, source: Source, builder: GraphBuilder, epoch: Double, readOnlyReason: String?,
                         dateColumns: Set<String>? = nil, limit: Int? = nil, rowids: [Int64]? = nil, window: WindowRead? = nil,
                         warnings: inout [String]) throws -> Int {
        var keyColumns = source.keyColumns
        var policy: KeyPolicy
        if let window {
            policy = window.policy
            keyColumns = policy.keyColumns
        } else if source.isView, !source.hasRowID {
            policy = .rowNumber
        } else if keyColumns.count == 1 {
            let declared = source.columns.first { $0.name == keyColumns[0] }?.storage.declaredType.uppercased() ?? ""
            policy = .column(keyColumns[0], autoIncrements: source.hasRowID && declared == "INTEGER")
        } else if keyColumns.count > 1 {
            policy = .columns(keyColumns)
        } else {
            // (A table without a rowid has a key, unless SQL cannot name a column of it.)
            policy = source.hasRowID ? .rowid : .rowNumber
        }
        // An `INTEGER PRIMARY KEY` that is the rowid holds integers only: neither check below
        // can find anything in it (each reads the whole table).
        let keyIsRowid = try window == nil && !keyColumns.isEmpty && (try keyAliasesRowid(db, source))
        // A rowid table whose primary key holds NULLs (SQLite allows it) cannot be keyed by it.
        if window == nil, source.hasRowID, !keyColumns.isEmpty, !keyIsRowid {
            let nullCheck = keyColumns.map { "\(SQL.identifier($0)) IS NULL" }.joined(separator: " OR ")
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(SQL.identifier(source.name)) WHERE \(nullCheck))") ?? false {
                warnings.append("\(source.name): its primary key holds NULLs; its rows are keyed by rowid")
                policy = .rowid
                keyColumns = []
            }
        }
        // A key holding text that does not read back (not UTF-8, or with a NUL: SQLite hands it
        // over repaired or cut short) would name no row, or another row, in a lookup or a write.
        var keyDoesNotReadBack = false
        if window == nil, !keyColumns.isEmpty, !keyIsRowid, try holdsTextThatDoesNotReadBack(db, table: source.name, columns: keyColumns) {
            keyDoesNotReadBack = true
            warnings.append(source.hasRowID ? "\(source.name): its primary key holds text that is not UTF-8 (or holds a NUL); its rows are keyed by rowid"
                                            : "\(source.name): its primary key holds text that is not UTF-8 (or holds a NUL); its rows are listed by position and never edited")
            policy = source.hasRowID ? .rowid : .rowNumber
            keyColumns = []
        }
        // Columns named rowid, _rowid_ and oid all at once hide the rowid: such a table is
        // listed by row number and never edited.
        let rowidName = source.hasRowID ? SQL.rowidName(columns: source.columns.map(\.name)) : nil
        var readOnly = source.writeRefusal ?? (source.isView ? TypeTable.viewReason(source.name) : readOnlyReason)
        if source.hasRowID, rowidName == nil, keyColumns.isEmpty {
            policy = .rowNumber
            readOnly = readOnly ?? "\(source.name) has columns named rowid, _rowid_ and oid, which hide its rowid; its rows cannot be told apart for a write"
        }
        if !source.unnamedColumns.isEmpty {
            let names = source.unnamedColumns.map { "\"\($0)\"" }.joined(separator: ", ")
            readOnly = readOnly ?? "\(source.name) has columns whose names are not UTF-8 (\(names)), which SQL cannot name; a write would leave them unseen"
            if window == nil, rowids == nil {
                warnings.append("\(source.name): columns whose names are not UTF-8 (\(names)) are left out; the table is read-only")
            }
        }
        if keyDoesNotReadBack, !source.hasRowID {
            readOnly = readOnly ?? "\(source.name)'s primary key holds text that is not UTF-8 (or holds a NUL), which no write could name; its rows cannot be told apart for a write"
        }
        let t = builder.type(source.name, readOnlyReason: readOnly, keyPolicy: policy)
        if let module = source.fullTextModule, let path = try String.fetchOne(db, sql: "SELECT file FROM pragma_database_list WHERE name = 'main'"), !path.isEmpty {
            builder.setFullText(VirtualTables.search(path: path, table: source.name, module: module, columns: source.columns.map(\.name)), type: t)
        }
        if window == nil { for note in Collations.notes(source.foreignCollations) { builder.note(note, type: t) } }
        switch policy {
        case .rowid, .column(_, autoIncrements: true): builder.setKeyFloor(try SQLiteSequence.value(db, table: source.name), type: t)
        default: break
        }
        // The rowid comes first when it is the key, or when sparse rows are told apart by it.
        let sparse = window?.sparse ?? []
        let selectRowID = rowidName != nil && (keyColumns.isEmpty || !sparse.isEmpty)
        let columnList = source.columns.map { SQL.identifier($0.name) }.joined(separator: ", ")
        // Only the rows with these rowids (bound as one JSON array), when asked.
        // (A table whose rowid cannot be reached gives no row when rows are asked for by rowid.)
        var only = rowids == nil ? "" : rowidName != nil ? " WHERE \(rowidName!) IN (SELECT value FROM json_each(?))" : " WHERE 0"
        if let condition = window?.condition { only = " WHERE " + condition.sql }
        let skipped = window?.offset ?? 0
        let sql = "SELECT \(selectRowID ? rowidName! + (columnList.isEmpty ? "" : ", ") : "")\(columnList) FROM \(SQL.identifier(source.name))"
            + only + (rowidName.map { " ORDER BY \($0)" } ?? "")
            + (limit.map { " LIMIT \($0)" } ?? (skipped > 0 ? " LIMIT -1" : "")) + (skipped > 0 ? " OFFSET \(skipped)" : "")
        let slots = source.columns.map { builder.attribute($0.name, of: t, storage: source.isView ? nil : $0.storage) }
        let dates = source.columns.map { dateColumns?.contains($0.name) ?? $0.isDate }
        let decoder = RowDecoder(selectsRowID: selectRowID, keyed: !keyColumns.isEmpty,
                                 keyIndexes: keyColumns.compactMap { k in source.columns.firstIndex { $0.name == k } },
                                 dates: dates, epoch: epoch)
        var numericDates = Array(repeating: false, count: dates.count)
        var arguments: StatementArguments = rowids == nil || rowidName == nil ? [] : ["[" + rowids!.map(String.init).joined(separator: ",") + "]"]
        if let condition = window?.condition { arguments = StatementArguments(condition.arguments) }
        let sparseSlots = Set(source.columns.indices.filter { window?.sparseColumns.contains(source.columns[$0].name) ?? false })
        // Cells are read through the statement's columns directly (a `Row` subscript costs most
        // of a microsecond, and a table can hold tens of millions of cells).
        let statement = try db.makeStatement(sql: sql)
        try statement.setArguments(arguments)
        let cursor = try Row.fetchCursor(statement)
        let reader = ColumnReader(statement)
        var ordinal = Int64(skipped)
        while try cursor.next() != nil {
            ordinal += 1
            let ref = builder.addObject(type: t, id: decoder.id(reader, ordinal: ordinal))
            let isSparse = !sparse.isEmpty && sparse.contains(reader.int64(0) ?? 0)
            for (i, slot) in slots.enumerated() {
                if isSparse && !sparseSlots.contains(i) { continue }
                let raw = decoder.raw(reader, i)
                if dates[i], case .double = raw.storage { numericDates[i] = true }
                if dates[i], case .int64 = raw.storage { numericDates[i] = true }
                builder.set(decoder.value(raw, i), type: t, row: Int(ref.row), attribute: slot)
            }
        }
        // How each date column holds its dates: numbers (seconds since the store's epoch) or text.
        if !source.isView {
            for (i, slot) in slots.enumerated() where dates[i] {
                var storage = source.columns[i].storage
                storage.dateEncoding = numericDates[i] ? (epoch == DateText.referenceDateOffset ? .referenceSeconds : .unixSeconds) : .text
                builder.setStorage(storage, type: t, attribute: slot)
            }
        }
        return t
    }

    /// True when `source`'s key is its one column declared `INTEGER PRIMARY KEY`, which SQLite
    /// makes the rowid under another name (not one declared `INTEGER PRIMARY KEY DESC`, which it
    /// keeps apart): a column that holds integers only, never NULL.
    static func keyAliasesRowid(_ db: Database, _ source: Source) throws -> Bool {
        guard source.hasRowID, !source.isView, source.keyColumns.count == 1,
              source.columns.first(where: { $0.name == source.keyColumns[0] })?.storage.declaredType.uppercased() == "INTEGER" else { return false }
        let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [source.name])
        return sql.map { $0.range(of: #"PRIMARY\s+KEY\s+DESC"#, options: [.regularExpression, .caseInsensitive]) == nil } ?? false
    }

    /// True when one of `columns` of table `table` holds, in some row, text that does not read
    /// back as it is stored: bytes that are not UTF-8 (SQLite hands them over repaired, each bad
    /// byte as U+FFFD) or a NUL (the text is cut short at it). One pass over the key's index,
    /// checked by `loupe_reads_back` (CSQLiteTuning), about as fast as a `count(*)`.
    static func holdsTextThatDoesNotReadBack(_ db: Database, table: String, columns: [String]) throws -> Bool {
        // (Should adding it fail, the statement below fails with SQLite's message.)
        _ = loupe_sqlite_add_reads_back(db.sqliteConnection, try TextEncoding(db).rawValue)
        let text = columns.map { "NOT loupe_reads_back(\(SQL.identifier($0)))" }
        return try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(SQL.identifier(table)) WHERE \(text.joined(separator: " OR ")))") ?? false
    }

    /// Seconds since an epoch given in Unix time, as a date when it falls in the years 1–9999.
    static func date(seconds: Double, epoch: Double) -> Date? {
        guard seconds.isFinite else { return nil }
        let date = epoch == DateText.referenceDateOffset ? Date(timeIntervalSinceReferenceDate: seconds) : Date(timeIntervalSince1970: seconds + epoch)
        return DateText.isRepresentable(date) ? date : nil
    }

    /// A SQLite value as a model value; ISO text, and seconds since `epoch` (in Unix time), in a
    /// date column become dates. Never traps, whatever the value.
    public static func value(_ v: DatabaseValue, isDate: Bool, epoch: Double) -> Value {
        switch v.storage {
        case .null: return .null
        case .int64(let i): return isDate ? (date(seconds: Double(i), epoch: epoch).map(Value.date) ?? .int(i)) : .int(i)
        case .double(let d): return isDate ? (date(seconds: d, epoch: epoch).map(Value.date) ?? .double(d)) : .double(d)
        case .string(let s):
            if isDate, let d = DateText.parse(s) { return .date(d) }
            return .string(s)
        case .blob(let b): return .data(b)
        }
    }
}

