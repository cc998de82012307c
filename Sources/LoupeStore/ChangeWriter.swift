import Foundation
import CSQLiteTuning
import GRDB
import LoupeModel

/// The writes that committing staged changes makes, object by object, in order: what `.changes`
/// shows and what the commit runs, in one transaction.
public struct WritePlan: Sendable {
    /// One SQL statement and the values bound to it.
    public struct Statement: Sendable {
        public let sql: String
        public let arguments: [DatabaseValue]
        /// How many rows the statement must change, when its key names them (an `UPDATE` or
        /// `DELETE` of one row by key: 1); any other count refuses the commit, and nothing is
        /// written. Nil: not checked.
        public var changes: Int? = nil

        /// The statement with its values written in place, for people (`.changes`).
        public var display: String {
            var out = ""
            var values = arguments.makeIterator()
            var inString = false, inIdentifier = false
            for ch in sql {
                if ch == "'" && !inIdentifier { inString.toggle() }
                if ch == "\"" && !inString { inIdentifier.toggle() }
                if ch == "?" && !inString && !inIdentifier, let v = values.next() { out += WritePlan.literal(v) } else { out.append(ch) }
            }
            return out + ";"
        }
    }

    /// What happens to one object.
    public enum Kind: String, Sendable { case create, update, delete }

    /// One object's writes (for a file with Persist's history, one operation of its undo log).
    public struct Unit: Sendable {
        public let object: ObjectIdentity
        public let kind: Kind
        public let statements: [Statement]
        /// Persist: the document before and after (`""` when there is none), as its history keeps them.
        public let before: String?
        public let after: String?
        /// Persist: the object's `by_type.id` and `type_name`, for the history tables.
        let persistID: DatabaseValue?
        let typeName: String
    }

    public internal(set) var units: [Unit] = []
    /// The revision of the pending changes the plan was made for (a preview's), if any.
    public internal(set) var revision: UUID?
    /// The statement that rewrites one Persist document: `json` then `id`.
    static let documentUpdate = #"UPDATE "by_type" SET "json" = ? WHERE "id" = ?"#
    /// Objects whose rows no longer hold what was loaded (another process wrote them), in words.
    public internal(set) var conflicts: [String] = []
    /// Tables whose foreign keys are checked before the commit ends (relational files).
    var checkedTables: Set<String> = []
    /// True when the file keeps Persist's undo history (its HEAD layout), which the commit extends.
    public internal(set) var recordsHistory = false

    /// The line that ends a plan cut short: how many objects and statements it leaves out.
    public static func remainder(objects: Int, statements: Int) -> String {
        "… and \(objects) more object\(objects == 1 ? "" : "s") (\(statements) statement\(statements == 1 ? "" : "s")), written the same way"
    }

    /// A value as an SQL literal: `'text'` (quotes doubled), numbers, `X'00FF'`, `NULL`.
    static func literal(_ v: DatabaseValue) -> String {
        switch v.storage {
        case .null: return "NULL"
        case .int64(let i): return String(i)
        case .double(let d): return ValueFormatter.number(d)
        case .string(let s): return "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let b): return "X'" + b.map { String(format: "%02X", $0) }.joined() + "'"
        }
    }

    /// The plan as text: every statement with its values; for Persist documents, the JSON before
    /// and after; and what the undo history gains.
    public var description: String { description(maxLines: .max) }

    /// The plan as text, at most about `maxLines` lines: after them, one line says how many
    /// objects and statements are left out. Only the lines kept are built (a plan of 250k
    /// documents would be hundreds of megabytes of text).
    public func description(maxLines: Int) -> String {
        var lines: [String] = []
        for (index, unit) in units.enumerated() {
            if lines.count >= maxLines {
                let rest = units[index...]
                let statements = rest.reduce(0) { $0 + $1.statements.count }
                lines.append(Self.remainder(objects: rest.count, statements: statements))
                break
            }
            if let before = unit.before, let after = unit.after {
                lines += PersistEdit.lines(object: unit.object, kind: unit.kind, before: before, after: after, statements: unit.statements.map(\.display))
            } else {
                for statement in unit.statements { lines.append(statement.display) }
            }
        }
        if recordsHistory, !units.isEmpty {
            lines.append("and Persist's undo history: \(units.count) operation\(units.count == 1 ? "" : "s") in one undo transaction")
        }
        return lines.joined(separator: "\n")
    }
}

/// A type that turns staged changes into the writes of one on-disk format.
protocol ChangeWriter {
    /// Reads what the writes need from `db` (the commit's transaction, or a read for the preview)
    /// and returns them; with `verify`, also the objects whose rows no longer hold what was loaded
    /// (the commit verifies only when the file's stamp says another process wrote since the load:
    /// an unchanged stamp means every row is as loaded, and checking 250k rows one by one would
    /// cost more than writing them).
    static func plan(_ pending: PendingChanges, in db: Database, verify: Bool) throws -> WritePlan
}

extension ChangeWriter {
    /// The value as SQLite stores it in a column with this storage.
    static func databaseValue(_ value: Value, storage: ColumnStorage?) -> DatabaseValue {
        switch value {
        case .null, .reference: return .null
        case .bool(let b): return (b ? 1 : 0).databaseValue
        case .int(let i): return i.databaseValue
        case .double(let d): return d.databaseValue
        case .decimal(let d): return d.text.databaseValue   // its digits; a REAL column's affinity takes the nearest double
        case .string(let s): return s.databaseValue
        case .data(let d): return d.databaseValue
        case .date(let d):
            switch storage?.dateEncoding {
            case .unixSeconds?: return d.timeIntervalSince1970.databaseValue
            case .referenceSeconds?: return d.timeIntervalSinceReferenceDate.databaseValue
            default:
                let dateOnly = storage?.declaredType.uppercased() == "DATE"
                return DateText.sqlite(d, dateOnly: dateOnly).databaseValue
            }
        case .array, .object: return ValueFormatter.json(value).databaseValue
        }
    }

    /// The columns edits changed on an object, in the type's attribute order, with their indexes.
    static func changedColumns(_ table: TypeTable, _ ref: ObjectRef, _ changes: ChangeSet) -> [(offset: Int, element: AttributeColumn)] {
        changes.changedAttributes(of: ref).compactMap { name in table.attributeIndex[name].map { ($0, table.attributes[$0]) } }
            .sorted { $0.offset < $1.offset }
    }

}

/// Writes a relational file: `UPDATE`, `INSERT` and `DELETE` keyed by the primary key (or the
/// rowid, or every column of a composite key), only the columns that changed, dates in the way
/// each column holds them; each row checked against what was loaded; foreign keys checked by
/// `PRAGMA foreign_key_check` before the commit ends.
enum RelationalWriter: ChangeWriter {
    static func plan(_ pending: PendingChanges, in db: Database, verify: Bool) throws -> WritePlan {
        let base = pending.base, staged = pending.graph, changes = pending.changes
        let epoch = try db.tableExists("Z_METADATA") ? DateText.referenceDateOffset : 0
        var plan = WritePlan()
        for ref in changes.touched {
            let table = staged.table(ref)
            let row = Int(ref.row)
            let isNew = changes.isInserted(ref), isGone = changes.isRemoved(ref)
            if isNew && isGone { continue }
            let identity = staged.identity(of: ref)
            let name = SQL.identifier(table.name.rawValue)
            let (condition, keyArguments) = keyCondition(table, staged.id(of: ref))
            plan.checkedTables.insert(table.name.rawValue)
            if isNew {
                // The columns given (and the key the store assigns into a column).
                let given = changedColumns(table, ref, changes)
                if verify, try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM \(name) WHERE \(condition))"), arguments: StatementArguments(keyArguments)) ?? false {
                    plan.conflicts.append("\(identity) exists in the file already (another process inserted it)")
                }
                var columns = given.map { SQL.identifier($0.element.name) }
                var arguments = given.map { databaseValue(table.value(row: row, attribute: $0.offset), storage: $0.element.storage) }
                if case .rowid = table.keyPolicy {
                    // A rowid table's new row takes the rowid Loupe showed for it.
                    columns.insert(rowidName(table), at: 0)
                    arguments.insert(contentsOf: keyArguments, at: 0)
                }
                let sql = columns.isEmpty
                    ? "INSERT INTO \(name) DEFAULT VALUES"
                    : "INSERT INTO \(name) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
                plan.units.append(WritePlan.Unit(object: identity, kind: .create, statements: [WritePlan.Statement(sql: sql, arguments: arguments)],
                                                 before: nil, after: nil, persistID: nil, typeName: table.name.rawValue))
                continue
            }
            // An existing row: it must still hold what was loaded.
            let baseTable = base.types[table.index]
            if verify { try check(db, baseTable, row: row, identity: identity, condition: condition, keyArguments: keyArguments, epoch: epoch, into: &plan) }
            if isGone {
                plan.units.append(WritePlan.Unit(object: identity, kind: .delete,
                                                 statements: [WritePlan.Statement(sql: "DELETE FROM \(name) WHERE \(condition)", arguments: keyArguments, changes: 1)],
                                                 before: nil, after: nil, persistID: nil, typeName: table.name.rawValue))
                continue
            }
            let set = changedColumns(table, ref, changes)
            guard !set.isEmpty else { continue }
            let sql = "UPDATE \(name) SET " + set.map { SQL.identifier($0.element.name) + " = ?" }.joined(separator: ", ") + " WHERE \(condition)"
            let arguments = set.map { databaseValue(table.value(row: row, attribute: $0.offset), storage: $0.element.storage) }
            plan.units.append(WritePlan.Unit(object: identity, kind: .update, statements: [WritePlan.Statement(sql: sql, arguments: arguments + keyArguments, changes: 1)],
                                             before: nil, after: nil, persistID: nil, typeName: table.name.rawValue))
        }
        // Tables whose foreign keys point into a changed table are checked too (a deleted parent).
        for t in staged.types where t.relations.contains(where: { fk in fk.foreignKey.map { plan.checkedTables.contains(staged.types[$0.targetType].name.rawValue) } ?? false }) {
            plan.checkedTables.insert(t.name.rawValue)
        }
        return plan
    }

    /// `"Key" = ?` (or every key column, or the rowid) and the key's values.
    static func keyCondition(_ table: TypeTable, _ id: ObjectID) -> (String, [DatabaseValue]) {
        switch table.keyPolicy {
        case .column(let name, _): return ("\(SQL.identifier(name)) = ?", [id.databaseValue])
        case .columns(let names):
            guard case .composite(let parts) = id else { return ("0", []) }
            return (names.map { "\(SQL.identifier($0)) = ?" }.joined(separator: " AND "), parts.map(\.databaseValue))
        case .rowid, .globalInteger, .rowNumber: return ("\(rowidName(table)) = ?", [id.databaseValue])
        }
    }

    /// The name that reaches the table's rowid (a column may be called `rowid`).
    static func rowidName(_ table: TypeTable) -> String {
        SQL.rowidName(columns: table.attributes.filter { $0.storage != nil }.map(\.name)) ?? "rowid"
    }

    /// Records a conflict when the row is gone or any column differs from what was loaded.
    private static func check(_ db: Database, _ table: TypeTable, row: Int, identity: ObjectIdentity, condition: String,
                              keyArguments: [DatabaseValue], epoch: Double, into plan: inout WritePlan) throws {
        let columns = table.attributes.filter { $0.storage != nil }
        guard !columns.isEmpty else { return }
        let sql = "SELECT \(columns.map { SQL.identifier($0.name) }.joined(separator: ", ")) FROM \(SQL.identifier(table.name.rawValue)) WHERE \(condition)"
        guard let found = try Row.fetchOne(db.cachedStatement(sql: sql), arguments: StatementArguments(keyArguments)) else {
            plan.conflicts.append("\(identity) was deleted by another process")
            return
        }
        for (i, column) in columns.enumerated() {
            let upper = column.storage!.declaredType.uppercased()
            let isDate = upper.contains("DATE") || upper.contains("TIMESTAMP")
            let now = RelationalFormat.value(found[i] as DatabaseValue, isDate: isDate, epoch: epoch)
            let loaded = table.value(row: row, named: column.name)
            if now != loaded {
                plan.conflicts.append("\(identity).\(column.name) is \(ValueFormatter.plain(now)) in the file, \(ValueFormatter.plain(loaded)) when loaded")
                return
            }
        }
    }
}

/// Writes a Persist file as Persist writes it (``PersistEditPlanner``), each write one SQLite
/// statement: in files with Persist's undo tables, each object is one operation and the commit
/// one undo transaction, as Persist records them.
enum PersistEditWriter: ChangeWriter {
    static func plan(_ pending: PendingChanges, in db: Database, verify: Bool) throws -> WritePlan {
        var plan = WritePlan()
        plan.recordsHistory = try db.tableExists("operations") && db.tableExists("by_type_history")
        let (edits, conflicts) = try PersistEditPlanner.plan(pending, reading: FileRows(db: db), recordsHistory: plan.recordsHistory, verify: verify)
        plan.conflicts = conflicts
        plan.units = edits.map { edit in
            let id = edit.id.databaseValue
            let statements = edit.writes.flatMap { write -> [WritePlan.Statement] in
                switch write {
                case .insertObject(let typeName, let json):
                    return [WritePlan.Statement(sql: #"INSERT INTO "by_type" ("id", "type_name", "json") VALUES (?, ?, ?)"#,
                                                arguments: [id, typeName.databaseValue, json.databaseValue])]
                case .updateDocument(let json):
                    return [WritePlan.Statement(sql: WritePlan.documentUpdate, arguments: [json.databaseValue, id])]
                case .deleteObject:
                    return [WritePlan.Statement(sql: #"DELETE FROM "by_type" WHERE "id" = ?"#, arguments: [id]),
                            WritePlan.Statement(sql: #"DELETE FROM "relations" WHERE "from_id" = ? OR "to_id" = ?"#, arguments: [id, id])]
                case .deleteRelation(let name):
                    return [WritePlan.Statement(sql: #"DELETE FROM "relations" WHERE "from_id" = ? AND "relation" = ?"#, arguments: [id, name.databaseValue])]
                case .insertRelation(let name, let to):
                    return [WritePlan.Statement(sql: #"INSERT INTO "relations" ("from_id", "to_id", "relation") VALUES (?, ?, ?)"#,
                                                arguments: [id, to.databaseValue, name.databaseValue])]
                }
            }
            return WritePlan.Unit(object: edit.object, kind: edit.kind, statements: statements, before: edit.before, after: edit.after,
                                  persistID: id, typeName: edit.typeName)
        }
        return plan
    }

    /// Persist's rows in a SQLite file, read inside the commit's transaction (or the preview's read).
    private struct FileRows: PersistLayoutReading {
        let db: Database
        var words: (store: String, writer: String) { ("the file", "another process") }

        func sampleDocuments() throws -> [String] {
            try String.fetchAll(db, sql: "SELECT json FROM by_type WHERE typeof(json) = 'text' ORDER BY id LIMIT 50")
        }

        /// Many objects: their rows in one statement (the ids passed as one JSON array, SQLite
        /// does the look-ups) rather than one query each.
        func storedRows(_ ids: [ObjectID]) throws -> [ObjectID: (typeName: String?, json: String?)] {
            // (Should adding it fail, the statements below fail with SQLite's message.)
            _ = loupe_sqlite_add_reads_back(db.sqliteConnection, try RelationalFormat.TextEncoding(db).rawValue)
            let readsBack = "loupe_reads_back(type_name) AND loupe_reads_back(json)"
            var out: [ObjectID: (typeName: String?, json: String?)] = [:]
            out.reserveCapacity(ids.count)
            var list: [String] = []
            for id in ids where ids.count >= 64 {
                switch id {
                case .int(let i): list.append(String(i))
                case .string(let text): list.append(ValueFormatter.json(.string(text)))
                default: break
                }
            }
            if list.count == ids.count, !ids.isEmpty {
                let rows = try Row.fetchCursor(db, sql: "SELECT id, type_name, json, \(readsBack) FROM by_type WHERE id IN (SELECT value FROM json_each(?))",
                                               arguments: ["[" + list.joined(separator: ",") + "]"])
                while let row = try rows.next() {
                    guard let id = (row[0] as DatabaseValue).objectID else { continue }
                    try checkReadsBack(row, id: id)
                    out[id] = ((row[1] as DatabaseValue).lenientText, (row[2] as DatabaseValue).lenientText)
                }
                return out
            }
            let statement = try db.cachedStatement(sql: "SELECT id, type_name, json, \(readsBack) FROM by_type WHERE id = ?")
            for id in ids {
                if let row = try Row.fetchOne(statement, arguments: [id.databaseValue]) {
                    try checkReadsBack(row, id: id)
                    out[id] = ((row[1] as DatabaseValue).lenientText, (row[2] as DatabaseValue).lenientText)
                }
            }
            return out
        }

        /// Throws when the row's `type_name` or document is text that does not read back (column
        /// 3 false: not UTF-8, or with a NUL): SQLite hands it over repaired, and the document
        /// rewritten from it (or kept in the history) would change bytes nobody edited.
        private func checkReadsBack(_ row: Row, id: ObjectID) throws {
            guard (row[3] as DatabaseValue).lenientBool else {
                throw StoreError(.unencodable, typeName: (row[1] as DatabaseValue).lenientText ?? "?", objectID: id.description,
                                 reason: "its document or type name in the file is not UTF-8 (or holds a NUL), and rewriting it would change bytes "
                                 + "that were not edited; nothing was written, your edits stay pending (.rollback drops them)")
            }
        }

        func isTaken(_ id: ObjectID) throws -> Bool {
            try DatabaseValue.fetchOne(db.cachedStatement(sql: "SELECT id FROM by_type WHERE id = ?"), arguments: [id.databaseValue]) != nil
        }

        func relationTargets(from id: ObjectID, relation: String) throws -> [ObjectID] {
            try DatabaseValue.fetchAll(db, sql: "SELECT to_id FROM relations WHERE from_id = ? AND relation = ? ORDER BY rowid",
                                       arguments: [id.databaseValue, relation]).compactMap(\.objectID)
        }
    }
}
