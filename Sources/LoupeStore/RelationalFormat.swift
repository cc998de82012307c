import Foundation
import GRDB
import LoupeModel

/// Any SQLite file read as an object graph (Chinook, Northwind, an app's GRDB database, a Core Data
/// store read table by table).
///
/// Each table is a type and each row an object whose key is the single-column primary key, else
/// the rowid (a `WITHOUT ROWID` table with a composite key uses the key's values joined by `|`).
/// Each column is an attribute. Each declared single-column foreign key is also a to-one relation,
/// named after the column without a trailing `Id`, `ID` or `_id` (when the rest is not empty and
/// names no other column) and reachable under the column's own name too. Views are read-only types
/// keyed by row number. In columns declared `DATE`, `DATETIME` or `TIMESTAMP`, text that reads as
/// an ISO date is a date, and so is a number: seconds since 2001 in a Core Data store (one with a
/// `Z_METADATA` table), Unix seconds anywhere else.
public enum RelationalFormat: StoreFormat {
    public static let name = "SQLite"

    public static func matches(_ db: Database) throws -> Bool { true }

    public static func catalog(_ db: Database) throws -> [(name: String, count: Int)] {
        let names = try String.fetchAll(db, sql: """
            SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
            AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY CASE type WHEN 'table' THEN 0 ELSE 1 END, rowid
            """)
        return names.map { ($0, (try? Int.fetchOne(db, sql: "SELECT count(*) FROM \($0.quotedDatabaseIdentifier)")) ?? 0) }
    }

    /// What the loader learned about one table before reading its rows.
    private struct Source {
        let name: String
        let isView: Bool
        let columns: [ColumnInfo]
        let keyColumns: [String]
        let hasRowID: Bool
        let foreignKeys: [(column: String, table: String, target: String?)]
    }

    private struct ColumnInfo {
        let name: String
        let declaredType: String
        let isPrimaryKey: Bool
        var isDate: Bool {
            let t = declaredType.uppercased()
            return t.contains("DATE") || t.contains("TIMESTAMP")
        }
    }

    public static func load(_ file: StoreFile, progress: LoadProgress?) throws -> LoadedGraph {
        try file.read { db in try load(db, progress: progress) }
    }

    private static func load(_ db: Database, progress: LoadProgress?) throws -> LoadedGraph {
        let builder = GraphBuilder(formatName: name)
        var warnings: [String] = []
        let masterRows = try Row.fetchAll(db, sql: """
            SELECT name, type, sql FROM sqlite_master
            WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
            ORDER BY CASE type WHEN 'table' THEN 0 ELSE 1 END, rowid
            """)
        var sources: [Source] = []
        for row in masterRows {
            let name: String = row[0]
            let isView = (row[1] as String) == "view"
            let sql: String = row[2] ?? ""
            if sql.uppercased().hasPrefix("CREATE VIRTUAL TABLE") { continue }
            do {
                let info = try Row.fetchAll(db, sql: "PRAGMA table_info(\(name.quotedDatabaseIdentifier))")
                let columns = info.map { ColumnInfo(name: $0["name"], declaredType: $0["type"] ?? "", isPrimaryKey: ($0["pk"] as Int? ?? 0) > 0) }
                let keys = info.filter { ($0["pk"] as Int? ?? 0) > 0 }.sorted { ($0["pk"] as Int) < ($1["pk"] as Int) }.map { $0["name"] as String }
                var fks: [(String, String, String?)] = []
                if !isView {
                    let list = try Row.fetchAll(db, sql: "PRAGMA foreign_key_list(\(name.quotedDatabaseIdentifier))")
                    let byID = Dictionary(grouping: list, by: { $0["id"] as Int })
                    for id in byID.keys.sorted() where byID[id]!.count == 1 {
                        let fk = byID[id]![0]
                        fks.append((fk["from"], fk["table"], fk["to"]))
                    }
                }
                let withoutRowID = sql.range(of: "WITHOUT\\s+ROWID", options: [.regularExpression, .caseInsensitive]) != nil
                sources.append(Source(name: name, isView: isView, columns: columns, keyColumns: keys,
                                      hasRowID: !isView && !withoutRowID, foreignKeys: fks))
            } catch {
                warnings.append("\(name): cannot read its columns (\(StoreError.from(error, path: nil).reason)); left out")
            }
        }
        let epoch = try db.tableExists("Z_METADATA") ? DateText.referenceDateOffset : 0
        var total = 0
        for s in sources { total += (try? Int.fetchOne(db, sql: "SELECT count(*) FROM \(s.name.quotedDatabaseIdentifier)")) ?? 0 }
        var done = 0
        progress?(0, total)

        var loaded: [(Source, Int)] = []
        for source in sources {
            let t = builder.type(source.name, isReadOnly: source.isView)
            do {
                try loadRows(db, source: source, type: t, builder: builder, epoch: epoch)
                loaded.append((source, t))
            } catch {
                warnings.append("\(source.name): cannot read its rows (\(StoreError.from(error, path: nil).reason))")
            }
            done += builder.count(of: t)
            progress?(done, total)
        }

        // Foreign keys become relations once every table is loaded.
        let typeByName = Dictionary(loaded.map { ($0.0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let typeByLowerName = Dictionary(loaded.map { ($0.0.name.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })
        for (source, t) in loaded {
            let columnNames = Set(source.columns.map(\.name))
            for fk in source.foreignKeys {
                guard let (target, tt) = typeByName[fk.table] ?? typeByLowerName[fk.table.lowercased()] else {
                    warnings.append("\(source.name).\(fk.column): refers to missing table \(fk.table)")
                    continue
                }
                let name = relationName(for: fk.column, otherColumns: columnNames)
                let aliases = name == fk.column ? [] : [fk.column]
                let r = builder.relation(name, of: t, aliases: aliases, foreignKeyAttribute: fk.column)
                guard let a = builder.existingAttribute(fk.column, of: t) else { continue }
                let targetColumn = fk.target ?? (target.keyColumns.count == 1 ? target.keyColumns[0] : nil)
                let lookup = builder.keyLookup(type: tt, attribute: targetColumn.flatMap { builder.existingAttribute($0, of: tt) },
                                               isKey: targetColumn == nil || target.keyColumns == [targetColumn!])
                var unresolved = 0
                for row in 0..<builder.count(of: t) {
                    let v = builder.value(type: t, row: row, attribute: a)
                    if v.isNull { continue }
                    if let to = lookup(v) {
                        builder.addEdge(from: ObjectRef(type: t, row: row), relation: r, to: ObjectRef(type: tt, row: to))
                    } else { unresolved += 1 }
                }
                if unresolved > 0 { warnings.append("\(source.name).\(fk.column): \(unresolved) values match no \(target.name)") }
            }
        }
        return LoadedGraph(graph: builder.finish(), warnings: warnings)
    }

    /// `AlbumId` → `Album` when the rest is not empty and names no other column; else the column's name.
    static func relationName(for column: String, otherColumns: Set<String>) -> String {
        for suffix in ["_id", "Id", "ID"] where column.hasSuffix(suffix) && column.count > suffix.count {
            let base = String(column.dropLast(suffix.count))
            if !otherColumns.contains(base) { return base }
        }
        return column
    }

    private static func loadRows(_ db: Database, source: Source, type t: Int, builder: GraphBuilder, epoch: Double) throws {
        let singleKey = source.keyColumns.count == 1 ? source.keyColumns[0] : nil
        let selectRowID = singleKey == nil && source.hasRowID
        let columnList = source.columns.map { $0.name.quotedDatabaseIdentifier }.joined(separator: ", ")
        let sql = "SELECT \(selectRowID ? "_rowid_, " : "")\(columnList) FROM \(source.name.quotedDatabaseIdentifier)"
            + (source.hasRowID ? " ORDER BY _rowid_" : "")
        let slots = source.columns.map { builder.attribute($0.name, of: t, declaredType: $0.declaredType, isPrimaryKey: $0.isPrimaryKey) }
        let offset = selectRowID ? 1 : 0
        let keyIndexes = source.keyColumns.compactMap { k in source.columns.firstIndex { $0.name == k } }
        let dates = source.columns.map(\.isDate)
        let cursor = try Row.fetchCursor(db, sql: sql)
        var ordinal: Int64 = 0
        while let row = try cursor.next() {
            ordinal += 1
            let id: ObjectID
            if selectRowID {
                id = .int(row[0])
            } else if singleKey != nil, let k = keyIndexes.first {
                id = objectID(row[k + offset] as DatabaseValue) ?? .int(ordinal)
            } else if !keyIndexes.isEmpty {
                id = .string(keyIndexes.map { ValueFormatter.plain(value(row[$0 + offset] as DatabaseValue, isDate: false, epoch: epoch)) }.joined(separator: "|"))
            } else {
                id = .int(ordinal)
            }
            let ref = builder.addObject(type: t, id: id)
            for (i, slot) in slots.enumerated() {
                builder.set(value(row[i + offset] as DatabaseValue, isDate: dates[i], epoch: epoch), type: t, row: Int(ref.row), attribute: slot)
            }
        }
    }

    private static func objectID(_ v: DatabaseValue) -> ObjectID? {
        switch v.storage {
        case .int64(let i): return .int(i)
        case .string(let s): return .string(s)
        case .double(let d): return d == d.rounded() ? .int(Int64(d)) : .string(String(d))
        case .blob(let b): return .string(b.map { String(format: "%02X", $0) }.joined())
        case .null: return nil
        }
    }

    /// Seconds since an epoch given in Unix time, exactly (Foundation keeps dates relative to 2001).
    private static func date(seconds: Double, epoch: Double) -> Date {
        epoch == DateText.referenceDateOffset ? Date(timeIntervalSinceReferenceDate: seconds) : Date(timeIntervalSince1970: seconds + epoch)
    }

    /// A SQLite value as a model value; ISO text, and seconds since `epoch` (in Unix time), in a
    /// date column become dates.
    static func value(_ v: DatabaseValue, isDate: Bool, epoch: Double) -> Value {
        switch v.storage {
        case .null: return .null
        case .int64(let i): return isDate ? .date(date(seconds: Double(i), epoch: epoch)) : .int(i)
        case .double(let d): return isDate && d.isFinite ? .date(date(seconds: d, epoch: epoch)) : .double(d)
        case .string(let s):
            if isDate, let d = DateText.parse(s) { return .date(d) }
            return .string(s)
        case .blob(let b): return .data(b)
        }
    }
}

extension GraphBuilder {
    /// A function from a foreign key's value to the row it refers to in `type`: through the id
    /// index when the key is the target's key, else through an index of the target attribute.
    func keyLookup(type: Int, attribute: Int?, isKey: Bool) -> (Value) -> Int? {
        var index: [Value: Int] = [:]
        if isKey {
            for row in 0..<count(of: type) where index[idValue(type: type, row: row)] == nil {
                index[idValue(type: type, row: row)] = row
            }
        } else if let attribute {
            for row in 0..<count(of: type) {
                let v = value(type: type, row: row, attribute: attribute)
                if index[v] == nil { index[v] = row }
            }
        }
        return { v in
            if let row = index[v] { return row }
            // Affinity mismatches: text "1" against integer 1, and back.
            switch v {
            case .string(let s): if let i = Int64(s) { return index[.int(i)] }
            case .int(let i): return index[.string(String(i))]
            case .double(let d): if d == d.rounded() { return index[.int(Int64(d))] }
            default: break
            }
            return nil
        }
    }
}
