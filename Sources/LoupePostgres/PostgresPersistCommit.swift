import Foundation
import LoupeModel
import LoupeStore

/// Writes staged changes into Persist's layout stored in PostgreSQL by the rules a Persist file is
/// written by (``PersistEditPlanner``): a changed object's document rewritten in the store's own
/// style, relation rows deleted and appended for the relations that changed, a deleted object's
/// row and every relation row touching it removed, a new object's row under the key Loupe showed.
///
/// The commit is one `READ WRITE` transaction on a connection of its own (``PostgresCommit``'s).
/// It first locks `by_type` and `relations` against other writers (`SHARE ROW EXCLUSIVE`: readers
/// go on; waiting at most 3 seconds for a writer to finish), then compares every object the
/// changes touch with what was loaded — its document's members, the targets of each relation it
/// rewrites — and checks that every new key is free. Anything another session changed refuses the
/// commit and names the objects; any error PostgreSQL raises rolls everything back. Values are
/// bound parameters, identifiers quoted. When `by_type.id` draws from a sequence, the sequence is
/// moved past the keys written, so the application's next insert does not collide with them.
/// A `relations.id` column, which orders a relation's targets, is filled by its default, else
/// with the next number.
enum PostgresPersistCommit {
    /// One object's writes as PostgreSQL statements.
    struct Unit {
        let edit: PersistEdit
        /// Each statement with its `$n` parameters, its text for people, and whether it must
        /// change exactly one row.
        let statements: [(sql: String, parameters: [String?], display: String, one: Bool)]
    }

    /// The catalog facts the writes depend on.
    struct Layout {
        /// `format_type` of each column of `by_type` and `relations`, by `table.column`.
        var types: [String: String] = [:]
        /// Columns filled by a default or as an identity.
        var defaulted: Set<String> = []
        /// Columns declared `NOT NULL`.
        var notNull: Set<String> = []
        /// The sequence `by_type.id` draws from, if any.
        var sequence: String?
        /// Tables Persist's undo history would need, found in `public`.
        var hasHistory = false

        func type(_ column: String) -> String { types[column] ?? "text" }
        func isInteger(_ column: String) -> Bool { ["integer", "bigint", "smallint"].contains(type(column)) }

        /// A key as read back from `column`'s text.
        func key(_ text: String?, column: String) -> ObjectID? {
            guard let text else { return nil }
            if isInteger(column), let i = Int64(text) { return .int(i) }
            return .string(text)
        }

        static func read(_ c: PostgresConnection) throws -> Layout {
            var layout = Layout()
            for row in try c.query("""
                SELECT c.relname || '.' || a.attname, format_type(a.atttypid, a.atttypmod), d.adbin IS NOT NULL OR a.attidentity <> '', a.attnotnull
                FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
                WHERE n.nspname = 'public' AND c.relname IN ('by_type', 'relations')
                """).rows {
                guard let name = row[0], let type = row[1] else { continue }
                layout.types[name] = type
                if row[2] == "t" { layout.defaulted.insert(name) }
                if row[3] == "t" { layout.notNull.insert(name) }
            }
            layout.sequence = try c.query("SELECT pg_get_serial_sequence('public.by_type', 'id')").rows.first?.first ?? nil
            layout.hasHistory = try c.query("""
                SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = 'public' AND c.relname IN ('operations', 'by_type_history') AND c.relkind IN ('r', 'p')
                """).rows.first?.first == "2"
            return layout
        }
    }

    /// Persist's rows in PostgreSQL, read inside the commit's transaction (or the preview's snapshot).
    struct DatabaseRows: PersistLayoutReading {
        let c: PostgresConnection
        let layout: Layout
        var words: (store: String, writer: String) { ("the database", "another session") }

        func sampleDocuments() throws -> [String] {
            try c.query(#"SELECT "json"::text FROM "public"."by_type" WHERE "json" IS NOT NULL ORDER BY "id" LIMIT 50"#).rows.compactMap { $0[0] }
        }

        func storedRows(_ ids: [ObjectID]) throws -> [ObjectID: (typeName: String?, json: String?)] {
            var out: [ObjectID: (typeName: String?, json: String?)] = [:]
            for chunk in ids.chunked(1_000) {
                let parameters = chunk.map(PostgresCommit.keyText)
                let sql = #"SELECT "id"::text, "type_name"::text, "json"::text FROM "public"."by_type" WHERE "id" IN ("#
                    + parameters.indices.map { "$\($0 + 1)" }.joined(separator: ", ") + ")"
                for row in try c.query(sql, parameters).rows {
                    if let id = layout.key(row[0], column: "by_type.id") { out[id] = (row[1], row[2]) }
                }
            }
            return out
        }

        func isTaken(_ id: ObjectID) throws -> Bool {
            try !c.query(#"SELECT 1 FROM "public"."by_type" WHERE "id" = $1"#, [PostgresCommit.keyText(id)]).rows.isEmpty
        }

        func relationTargets(from id: ObjectID, relation: String) throws -> [ObjectID] {
            let order = layout.types["relations.id"] != nil ? #""id""# : "ctid"
            return try c.query(#"SELECT "to_id"::text FROM "public"."relations" WHERE "from_id" = $1 AND "relation" = $2 ORDER BY "# + order,
                               [PostgresCommit.keyText(id), relation]).rows.compactMap { layout.key($0[0], column: "relations.to_id") }
        }
    }

    /// The statements of every object's writes (see the type's comment).
    static func units(_ edits: [PersistEdit], layout: Layout) -> [Unit] {
        let byType = #""public"."by_type""#, relations = #""public"."relations""#
        func statement(_ sql: String, _ parameters: [String?], _ columns: [String], one: Bool) -> (String, [String?], String, Bool) {
            (sql, parameters, PostgresCommit.display(sql, parameters, types: columns.map(layout.type)), one)
        }
        let relationID = layout.types["relations.id"] != nil && !layout.defaulted.contains("relations.id")
        return edits.map { edit in
            let id = PostgresCommit.keyText(edit.id)
            let statements = edit.writes.flatMap { write -> [(String, [String?], String, Bool)] in
                switch write {
                case .insertObject(let typeName, let json):
                    return [statement(#"INSERT INTO \#(byType) ("id", "type_name", "json") VALUES ($1, $2, $3)"#, [id, typeName, json],
                                      ["by_type.id", "by_type.type_name", "by_type.json"], one: true)]
                case .updateDocument(let json):
                    return [statement(#"UPDATE \#(byType) SET "json" = $1 WHERE "id" = $2"#, [json, id], ["by_type.json", "by_type.id"], one: true)]
                case .deleteObject:
                    return [statement(#"DELETE FROM \#(byType) WHERE "id" = $1"#, [id], ["by_type.id"], one: true),
                            statement(#"DELETE FROM \#(relations) WHERE "from_id" = $1 OR "to_id" = $1"#, [id], ["relations.from_id"], one: false)]
                case .deleteRelation(let name):
                    return [statement(#"DELETE FROM \#(relations) WHERE "from_id" = $1 AND "relation" = $2"#, [id, name],
                                      ["relations.from_id", "relations.relation"], one: false)]
                case .insertRelation(let name, let to):
                    let target = PostgresCommit.keyText(to)
                    let sql = relationID
                        ? #"INSERT INTO \#(relations) ("id", "from_id", "to_id", "relation") SELECT coalesce(max("id"), 0) + 1, $1, $2, $3 FROM \#(relations)"#
                        : #"INSERT INTO \#(relations) ("from_id", "to_id", "relation") VALUES ($1, $2, $3)"#
                    return [statement(sql, [id, target, name], ["relations.from_id", "relations.to_id", "relations.relation"], one: true)]
                }
            }
            return Unit(edit: edit, statements: statements.map { ($0.0, $0.1, $0.2, $0.3) })
        }
    }

    /// Why Loupe does not write this database's Persist layout, or nil when it does.
    static func refusal(_ layout: Layout) -> String? {
        if layout.hasHistory { return "this database keeps Persist's undo history, which Loupe writes in SQLite files only" }
        for column in ["by_type.id", "relations.from_id", "relations.to_id"] where !layout.isInteger(column) && !layout.type(column).hasPrefix("character") && layout.type(column) != "text" {
            return "\(column) is \(layout.type(column)), and Loupe writes Persist's keys as integers or text"
        }
        return nil
    }

    /// The writes committing `pending` would make, as text of at most about `maxLines` lines.
    static func preview(_ pending: PendingChanges, url: String, maxLines: Int) throws -> String {
        let connection = try PostgresConnection(url: url)
        let units = try connection.snapshot { () throws -> [Unit] in
            let layout = try Layout.read(connection)
            if let reason = refusal(layout) { throw PostgresError(server: connection.server, reason: reason) }
            let edits = try PersistEditPlanner.plan(pending, reading: DatabaseRows(c: connection, layout: layout), recordsHistory: false, verify: false).edits
            return self.units(edits, layout: layout)
        }
        var lines: [String] = []
        for (i, unit) in units.enumerated() {
            if lines.count >= maxLines {
                let statements = units[i...].reduce(0) { $0 + $1.statements.count }
                lines.append(WritePlan.remainder(objects: units.count - i, statements: statements))
                break
            }
            lines += unit.edit.lines(statements: unit.statements.map(\.display))
        }
        return lines.joined(separator: "\n")
    }

    /// Writes `pending` into the database at `url` in one transaction (see the type's comment).
    static func commit(_ pending: PendingChanges, url: String) throws -> StoreCommit.Report {
        try PostgresCommit.inWriteTransaction(pending, url: url) { connection in
            _ = try connection.query("SET LOCAL lock_timeout = '3s'")
            do {
                _ = try connection.query(#"LOCK TABLE "public"."by_type", "public"."relations" IN SHARE ROW EXCLUSIVE MODE"#)
            } catch let error as PostgresError where error.code == "55P03" {
                throw PostgresError(server: error.server, reason: "another session is writing to by_type or relations; nothing was written, your edits stay pending: commit again in a moment")
            }
            let layout = try Layout.read(connection)
            if let reason = refusal(layout) { throw PostgresError(server: connection.server, reason: reason) }
            let (edits, conflicts) = try PersistEditPlanner.plan(pending, reading: DatabaseRows(c: connection, layout: layout), recordsHistory: false, verify: true)
            try PostgresCommit.refuse(conflicts, server: connection.server)
            var statements = 0
            for unit in units(edits, layout: layout) {
                for s in unit.statements {
                    if s.one {
                        try PostgresCommit.executeOne(s.sql, s.parameters, display: s.display, on: connection)
                    } else {
                        _ = try connection.execute(s.sql, s.parameters)
                    }
                    statements += 1
                }
            }
            // The sequence behind `by_type.id` past every key now held.
            if let sequence = layout.sequence, layout.isInteger("by_type.id"), edits.contains(where: { $0.kind == .create }) {
                _ = try connection.query("""
                    SELECT setval($1::regclass, greatest((SELECT max("id") FROM "public"."by_type"), pg_sequence_last_value($1::regclass), 1))
                    """, [sequence])
            }
            return statements
        }
    }
}
