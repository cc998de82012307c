import Foundation
import GRDB
import LoupeModel

/// Writes staged changes into a store's file, all or nothing.
///
/// The commit goes to the file itself through SQLite (never by copying a file back), in one
/// `BEGIN IMMEDIATE` transaction with a busy timeout. Inside it, before anything is written:
/// the file must be as it was when loaded (its stamp: size, times, change counter and WAL state);
/// when it is not, every row the changes touch is read back and compared with what was loaded, so
/// that the refusal names the objects another process changed. Then the writes
/// run object by object (in a file with Persist's undo tables, each object is recorded as one
/// operation and the commit as one undo transaction); a relational file's foreign keys are
/// checked, and any violation the writes introduced refuses the commit. Any failure rolls back:
/// nothing is written, and the caller keeps its pending changes. SQLite's journal makes the
/// commit atomic on disk: a process killed at any moment leaves all of it or none of it.
public enum StoreCommit {
    /// What a commit did.
    public struct Report: Sendable {
        public let added: Int
        public let changed: Int
        public let deleted: Int
        public let statements: Int
        public let seconds: Double
        /// The writes to Persist's `relations` table, in order, with the rowid SQLite gave each
        /// inserted row: what a copy of the table (``SideIndex``) repeats to stay the file's.
        public internal(set) var relationWrites: [RelationWrite] = []
        /// How many objects of each type (by name) the commit added (positive) or deleted (negative).
        public internal(set) var countChanges: [String: Int] = [:]
        /// Persist: each object's document before and after the commit (`""`: none), by stored type name.
        public internal(set) var documents: [(typeName: String, before: String, after: String)] = []
        /// The file's stamp just before the writes (as loaded) and just after the commit.
        public internal(set) var stampBefore: FileStamp?
        public internal(set) var stampAfter: FileStamp?
        public var summary: String {
            "committed: \(added) added, \(changed) changed, \(deleted) deleted (\(statements) statement\(statements == 1 ? "" : "s"), \(String(format: "%.3f", seconds)) s)"
        }

        /// What committing `changes` did, with `statements` written in `seconds` (any store's commit).
        public init(_ changes: ChangeSet, statements: Int, seconds: Double) {
            (added, changed, deleted) = changes.counts
            self.statements = statements
            self.seconds = seconds
        }
    }

    /// One statement written to Persist's `relations` table.
    public struct RelationWrite: Sendable {
        public let sql: String
        public let arguments: [DatabaseValue]
        /// The rowid of the row an `INSERT` added.
        public let insertedRowID: Int64?
    }

    /// The writer of a format, or the reason the format is not written.
    static func writer(for format: any StoreFormat.Type) throws -> any ChangeWriter.Type {
        if format == PersistFormat.self { return PersistEditWriter.self }
        if format == RelationalFormat.self { return RelationalWriter.self }
        throw StoreError(.readOnly, reason: "Loupe does not write \(format.name) files yet")
    }

    /// The writes committing `pending` would make, read through a read-only connection.
    public static func preview(_ pending: PendingChanges, path: String, format: any StoreFormat.Type) throws -> WritePlan {
        let writer = try writer(for: format)
        let file = try StoreFile.openForReading(path)
        var plan = try file.read { db in try writer.plan(pending, in: db, verify: false) }
        plan.revision = pending.revision
        return plan
    }

    /// Writes `pending` into the file at `path` (of `format`, loaded when the file had `stamp`).
    /// `planned` is the plan a preview made for this same revision of the changes: when the file
    /// is still as loaded, it is what the writes would be read again to be, and is used as is.
    public static func commit(_ pending: PendingChanges, path: String, format: any StoreFormat.Type, loadedStamp stamp: FileStamp,
                              planned: WritePlan? = nil) throws -> Report {
        _ = StoreFile.configured
        let started = DispatchTime.now()
        let writer = try writer(for: format)
        let (absolute, _) = try StoreFile.checkedHeader(path)
        // Descriptors for the stamp, opened before the write connection and closed after it: a
        // descriptor closed while the connection holds locks would drop them (POSIX).
        let watch = FileWatch(path: absolute)
        defer { withExtendedLifetime(watch) {} }
        var config = Configuration()
        config.busyMode = .timeout(3)
        // The plan spells out every write, cascades included, so SQLite must not add its own:
        // the preview is exactly what is written. `foreign_key_check` then proves the result.
        config.foreignKeysEnabled = false
        config.label = "loupe.commit"
        let queue: DatabaseQueue
        do { queue = try DatabaseQueue(path: absolute, configuration: config) } catch { throw commitError(error, path: path) }
        defer { try? queue.close() }
        var statements = 0
        var relationWrites: [RelationWrite] = []
        var countChanges: [String: Int] = [:]
        var documents: [(typeName: String, before: String, after: String)] = []
        do {
            try queue.inTransaction(.immediate) { db in
                // Holding the write lock: nobody else commits until this transaction ends.
                let changedSinceLoad = !unchanged(FileStamp(path: absolute, watch: watch), since: stamp)
                let reusable = planned.flatMap { $0.revision == pending.revision && !changedSinceLoad ? $0 : nil }
                let plan = try reusable ?? writer.plan(pending, in: db, verify: changedSinceLoad)
                if !plan.conflicts.isEmpty {
                    throw StoreError(.conflict, path: path, reason: "the file changed since it was loaded; nothing was written. Changed: "
                                     + plan.conflicts.prefix(8).joined(separator: "; ") + (plan.conflicts.count > 8 ? "; …" : "")
                                     + ". Reload (your edits stay pending) and commit again")
                }
                if changedSinceLoad {
                    throw StoreError(.conflict, path: path, reason: "another process wrote to the file since it was loaded (none of the objects you changed); nothing was written. Reload (your edits stay pending) and commit again")
                }
                documents = plan.units.compactMap { unit in unit.before.flatMap { before in unit.after.map { (unit.typeName, before, $0) } } }
                let violationsBefore = try foreignKeyViolations(db, plan.checkedTables)
                let history = plan.recordsHistory ? try PersistHistory(db) : nil
                // Many documents rewritten and nothing else done to them (no history to record):
                // one UPDATE over their ids, the new text handed to SQLite by a function — the
                // same rows and bytes as the statements the preview lists, without a round trip
                // through the statement API per row.
                var remaining = plan.units
                if history == nil {
                    let bulk = plan.units.filter { $0.kind == .update && $0.statements.count == 1 && $0.statements[0].sql == WritePlan.documentUpdate }
                    if bulk.count >= 64 {
                        statements += try rewriteDocuments(bulk.map { ($0.statements[0].arguments[1], $0.statements[0].arguments[0]) }, in: db, path: path)
                        let done = Set(bulk.map(\.object))
                        remaining = plan.units.filter { !($0.kind == .update && done.contains($0.object)) }
                    }
                }
                for unit in remaining {
                    try history?.begin(unit, db)
                    switch unit.kind {
                    case .create: countChanges[unit.typeName, default: 0] += 1
                    case .delete: countChanges[unit.typeName, default: 0] -= 1
                    default: break
                    }
                    for statement in unit.statements {
                        try db.cachedStatement(sql: statement.sql).executeExactly(statement.arguments)
                        statements += 1
                        if let expected = statement.changes, db.changesCount != expected {
                            throw StoreError(.conflict, path: path, reason: "\(statement.display) changed \(db.changesCount) row\(db.changesCount == 1 ? "" : "s"), not the \(expected) its key names (\(unit.object)): the file's triggers or its keys do not let the write through as previewed; nothing was written")
                        }
                        if statement.sql.hasPrefix(#"INSERT INTO "relations""#) {
                            relationWrites.append(RelationWrite(sql: statement.sql, arguments: statement.arguments, insertedRowID: db.lastInsertedRowID))
                        } else if statement.sql.hasPrefix(#"DELETE FROM "relations""#) {
                            relationWrites.append(RelationWrite(sql: statement.sql, arguments: statement.arguments, insertedRowID: nil))
                        }
                    }
                    try history?.end(unit, db)
                }
                try history?.finish(db)
                let introduced = try foreignKeyViolations(db, plan.checkedTables).subtracting(violationsBefore)
                if !introduced.isEmpty {
                    throw StoreError(.conflict, path: path, reason: "the changes break foreign keys; nothing was written: "
                                     + introduced.sorted().prefix(8).joined(separator: "; "))
                }
                return .commit
            }
        } catch {
            guard mayHaveWritten(error) else { throw commitError(error, path: path) }
            try? queue.close()
            switch recover(absolute, loaded: stamp, watch: watch) {
            case .restored: throw commitError(error, path: path)
            case .unsure(let state): throw StoreError(.sqlite, path: path, reason: "\(commitError(error, path: path).reason.components(separatedBy: ";").first ?? "the write failed"); \(state)")
            }
        }
        var report = Report(pending.changes, statements: statements, seconds: Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9)
        report.relationWrites = relationWrites
        report.documents = documents
        report.countChanges = countChanges.filter { $0.value != 0 }
        report.stampBefore = stamp
        report.stampAfter = FileStamp(path: absolute, watch: watch)
        return report
    }

    /// A failure of the commit in words that say what the user can do; their edits stay pending.
    static func commitError(_ error: Error, path: String) -> StoreError {
        if let e = error as? StoreError { return e }
        if let e = error as? DatabaseError {
            switch e.resultCode {
            case .SQLITE_BUSY, .SQLITE_LOCKED:
                return StoreError(.locked, path: path, reason: "another process is writing to the file; nothing was written, your edits stay pending: commit again in a moment")
            case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN:
                return StoreError(.readOnly, path: path, reason: "the file (or its folder) cannot be written; nothing was written, your edits stay pending")
            case .SQLITE_FULL:
                return StoreError(.readOnly, path: path, reason: "the disk is full; nothing was written (the file is as it was), your edits stay pending: free space and commit again")
            case .SQLITE_CONSTRAINT:
                return StoreError(.conflict, path: path, reason: "SQLite refused a write (\(e.message ?? "a constraint failed")); nothing was written, your edits stay pending")
            default:
                return StoreError(.sqlite, path: path, reason: "\(e.message ?? "\(e)"); nothing was written, your edits stay pending")
            }
        }
        return StoreError(.sqlite, path: path, reason: "\(error); nothing was written, your edits stay pending")
    }

    /// `PRAGMA foreign_key_check` over some tables, as comparable descriptions.
    static func foreignKeyViolations(_ db: Database, _ tables: Set<String>) throws -> Set<String> {
        var out = Set<String>()
        for table in tables {
            for row in try Row.fetchAll(db, sql: "SELECT * FROM pragma_foreign_key_check(?)", arguments: [table]) {
                let source = (row[0] as DatabaseValue).lenientText ?? table
                let rowid = (row[1] as DatabaseValue).lenientText ?? "?"
                let parent = (row[2] as DatabaseValue).lenientText ?? "?"
                out.insert("\(source) row \(rowid) refers to a \(parent) that does not exist")
            }
        }
        return out
    }
}

/// Persist's undo history (its HEAD layout), extended the way Persist's `saveAll` extends it: each
/// object changed is one `operations` row, linked from the previous current one and made current,
/// with its document before and after in `by_type_history` and its relation rows before and after
/// in `relations_history_before`/`_after`; the whole commit is one `undo_transactions` row.
///
/// The current operation is remembered between objects (Persist finds it with a scan of
/// `operations` each time; the result is the same). The relation snapshots scan `relations`,
/// which Persist leaves without an index, once per object, as Persist's own writes do.
final class PersistHistory {
    /// The current operation when the commit began (0 when there is none).
    let start: Int64
    /// The current operation now.
    private var current: Int64?
    private let hasUndoTransactions: Bool

    init(_ db: Database) throws {
        current = try Int64.fetchOne(db, sql: #"SELECT "id" FROM "operations" WHERE "current" LIMIT 1"#)
        start = current ?? 0
        hasUndoTransactions = try db.tableExists("undo_transactions")
    }

    /// Before an object's writes: its operation, its history row, its relation rows as they are.
    func begin(_ unit: WritePlan.Unit, _ db: Database) throws {
        try db.cachedStatement(sql: #"INSERT INTO "operations" ("operation_type", "current", "next_operation") VALUES (?, 0, -1)"#)
            .execute(arguments: [unit.kind.rawValue])
        let op = db.lastInsertedRowID
        if let current {
            // The first time, every row marked current is unmarked (a file may hold several).
            let sql = current == start
                ? #"UPDATE "operations" SET "current" = 0, "next_operation" = ? WHERE "current""#
                : #"UPDATE "operations" SET "current" = 0, "next_operation" = ? WHERE "id" = \#(current)"#
            try db.cachedStatement(sql: sql).execute(arguments: [op])
        } else if let first = try Int64.fetchOne(db, sql: #"SELECT "id" FROM "operations" ORDER BY "id" LIMIT 1"#), first != op {
            try db.execute(sql: #"UPDATE "operations" SET "current" = 0, "next_operation" = ? WHERE "id" = ?"#, arguments: [op, first])
        }
        try db.cachedStatement(sql: #"UPDATE "operations" SET "current" = 1 WHERE "id" = ?"#).execute(arguments: [op])
        current = op
        try db.cachedStatement(sql: #"INSERT INTO "by_type_history" ("operation_id", "by_type_id", "type_name", "before_json", "after_json") VALUES (?, ?, ?, ?, ?)"#)
            .execute(arguments: [op, unit.persistID ?? .null, unit.typeName, unit.before ?? "", unit.after ?? ""])
        try snapshot(unit, into: "relations_history_before", db)
    }

    /// After an object's writes: its relation rows as they are now.
    func end(_ unit: WritePlan.Unit, _ db: Database) throws {
        try snapshot(unit, into: "relations_history_after", db)
    }

    private func snapshot(_ unit: WritePlan.Unit, into table: String, _ db: Database) throws {
        guard let id = unit.persistID, let current else { return }
        try db.cachedStatement(sql: """
            INSERT INTO \(SQL.identifier(table)) ("operation_id", "from_id", "to_id", "relation")
            SELECT ?, "from_id", "to_id", "relation" FROM "relations" WHERE "from_id" = ? OR "to_id" = ?
            """).execute(arguments: [current, id, id])
    }

    /// The commit as one undo transaction, made current.
    func finish(_ db: Database) throws {
        guard hasUndoTransactions else { return }
        try db.execute(sql: #"INSERT INTO "undo_transactions" ("undo_operation_start", "undo_operation_end", "next_undo_transaction", "current") VALUES (?, ?, -1, 0)"#,
                       arguments: [start, current ?? start])
        let tx = db.lastInsertedRowID
        try db.execute(sql: #"UPDATE "undo_transactions" SET "current" = 0, "next_undo_transaction" = ? WHERE "current""#, arguments: [tx])
        try db.execute(sql: #"UPDATE "undo_transactions" SET "current" = 1 WHERE "id" = ?"#, arguments: [tx])
    }
}

extension StoreCommit {
    /// Writes each `(id, json)` pair's document with one UPDATE; returns how many rows it wrote,
    /// which must be every pair (else a row went missing and the transaction rolls back).
    static func rewriteDocuments(_ pairs: [(id: DatabaseValue, json: DatabaseValue)], in db: Database, path: String) throws -> Int {
        var documents: [Int64: DatabaseValue] = [:]
        documents.reserveCapacity(pairs.count)
        var ids: [String] = []
        ids.reserveCapacity(pairs.count)
        for (id, json) in pairs {
            guard case .int64(let i) = id.storage else {
                // Text ids: the statements one by one.
                for (id, json) in pairs { try db.cachedStatement(sql: WritePlan.documentUpdate).execute(arguments: [json, id]) }
                return pairs.count
            }
            documents[i] = json
            ids.append(String(i))
        }
        let byID = documents
        let function = DatabaseFunction("loupe_document", argumentCount: 1, pure: true) { values in
            guard let id = Int64.fromDatabaseValue(values[0]) else { return nil }
            return byID[id]
        }
        db.add(function: function)
        defer { db.remove(function: function) }
        try db.execute(sql: #"UPDATE "by_type" SET "json" = loupe_document("id") WHERE "id" IN (SELECT value FROM json_each(?))"#,
                       arguments: ["[" + ids.joined(separator: ",") + "]"])
        guard db.changesCount == pairs.count else {
            throw StoreError(.conflict, path: path, reason: "\(pairs.count - db.changesCount) of the objects to update are gone from the file; nothing was written")
        }
        return pairs.count
    }
}

extension FileStamp {
    /// True when the file's content is the same: sizes, times, change counter and WAL header
    /// (not the WAL index, which a connection's own recovery may rewrite without changing data).
    /// A missing `-wal` and an empty one hold the same data: opening a WAL file creates it.
    func sameContent(as other: FileStamp) -> Bool {
        size == other.size && modified == other.modified && inode == other.inode && changeCounter == other.changeCounter
            && walContent == other.walContent
    }

    /// The `-wal`'s size, time and header when it holds any frame; nil when it is missing or empty.
    private var walContent: [Int64]? {
        guard let walSize, walSize > 0 else { return nil }
        return [walSize, walModified ?? -1] + walHeader.map(Int64.init)
    }
}
