import Foundation
import GRDB
import LoupeHost
import LoupeModel
import LoupeQuery
import LoupeStore
import LoupeTestSupport
import XCTest

/// Editing through the REPL session, committed to real files: every mutation kind on relational
/// and Persist stores, checked by reading the files back with SQL (and the format's own reader),
/// refusals that stage nothing, external changes, and undo/redo against a simple model.
final class EditingTests: XCTestCase {
    // MARK: Helpers

    /// A session over the store at `path`, with a host that previews and commits.
    func open(_ path: String) throws -> ReplSession { try sessions.open(path) }
    private let sessions = EditingSessions()

    @discardableResult
    func ok(_ session: ReplSession, _ line: String, file: StaticString = #filePath, line number: UInt = #line) -> String {
        let reply = session.execute(line)
        XCTAssertNil(reply.error, "\(line) → \(reply.error ?? "")", file: file, line: number)
        return reply.output
    }

    /// Runs a line that must be refused without staging anything; returns the message.
    @discardableResult
    func refused(_ session: ReplSession, _ line: String, file: StaticString = #filePath, line number: UInt = #line) -> String {
        let before = session.pending.steps.count
        let reply = session.execute(line)
        XCTAssertNotNil(reply.error, "\(line) should be refused; answered \(reply.output)", file: file, line: number)
        XCTAssertEqual(session.pending.steps.count, before, "a refused statement stages nothing", file: file, line: number)
        return reply.error ?? ""
    }

    /// Every table of a file, rows as text (each value with its storage class), sorted: two files
    /// with equal dumps hold the same data.
    func dump(_ path: String, skipping: Set<String> = []) throws -> [String: [String]] {
        try DatabaseQueue(path: path).read { db in
            var out: [String: [String]] = [:]
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            where !skipping.contains(table) {
                let rows = try Row.fetchAll(db, sql: "SELECT * FROM \(table.quotedDatabaseIdentifier)")
                out[table] = rows.map { row in row.databaseValues.map { v -> String in
                    switch v.storage {
                    case .null: return "NULL"
                    case .int64(let i): return "i\(i)"
                    case .double(let d): return "r\(d)"
                    case .string(let s): return "t'\(s)'"
                    case .blob(let b): return "b\(b.base64EncodedString())"
                    }
                }.joined(separator: "|") }.sorted()
            }
            return out
        }
    }

    func sql(_ path: String, _ statements: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { try $0.execute(sql: statements) }
        try queue.close()
    }

    func integrity(_ path: String) throws -> (ok: String, foreignKeys: Int) {
        try DatabaseQueue(path: path).read { db in
            (try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "", try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").count)
        }
    }

    // MARK: Relational files

    /// Chinook: the same changes made through Loupe and by hand with SQL leave identical files.
    func testChinookEditsMatchTheSameChangesMadeWithSQL() throws {
        let viaLoupe = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let viaSQL = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let session = try open(viaLoupe)
        XCTAssertTrue(ok(session, #"update Artist where ArtistId == 1 set Name = "AC/DC ⚡ 'live'""#).hasPrefix("staged: 1 object"))
        ok(session, "update Album where AlbumId == 4 set Artist = #2")
        ok(session, #"insert Genre { Name: "Polka" }"#)
        XCTAssertTrue(ok(session, "update Track where Milliseconds < 100000 set UnitPrice = UnitPrice * 2").hasPrefix("staged: 58 objects"))
        ok(session, "delete InvoiceLine where InvoiceLineId == 1")
        ok(session, "delete Playlist where PlaylistId == 2")
        let message = refused(session, "delete Artist where ArtistId == 1")
        XCTAssertTrue(message.contains("Album #1.Artist → Artist #1"), message)

        // Staged values are seen by queries before the commit.
        XCTAssertEqual(ok(session, ".mode json") + ok(session, "count Genre"), "26\n")
        XCTAssertEqual(ok(session, "Album where Artist.ArtistId == 2 select AlbumId"), "[{\"AlbumId\": 2},\n {\"AlbumId\": 3},\n {\"AlbumId\": 4}]\n")
        XCTAssertEqual(ok(session, "count Playlist"), "17\n")

        let changes = ok(session, ".changes")
        for expected in [
            #"pending: 1 added, 60 changed, 2 deleted in 6 steps:"#,
            #"  1. update Artist where ArtistId == 1 set Name = "AC/DC ⚡ 'live'"  (1 object)"#,
            #"UPDATE "Artist" SET "Name" = 'AC/DC ⚡ ''live''' WHERE "ArtistId" = 1;"#,
            #"UPDATE "Album" SET "ArtistId" = 2 WHERE "AlbumId" = 4;"#,
            #"INSERT INTO "Genre" ("GenreId", "Name") VALUES (26, 'Polka');"#,
            #"DELETE FROM "InvoiceLine" WHERE "InvoiceLineId" = 1;"#,
            #"DELETE FROM "Playlist" WHERE "PlaylistId" = 2;"#,
        ] { XCTAssertTrue(changes.contains(expected), "missing \(expected) in\n\(changes)") }
        XCTAssertEqual(Shared.fingerprint(viaLoupe), Shared.fingerprint(try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")),
                       "staging and previewing write nothing")

        XCTAssertTrue(ok(session, ".commit").hasPrefix("committed: 1 added, 60 changed, 2 deleted"))
        XCTAssertTrue(session.pending.isEmpty)
        XCTAssertEqual(ok(session, "count Genre"), "26\n", "the session now reads the committed file")

        try sql(viaSQL, """
            UPDATE Artist SET Name = 'AC/DC ⚡ ''live''' WHERE ArtistId = 1;
            UPDATE Album SET ArtistId = 2 WHERE AlbumId = 4;
            INSERT INTO Genre (GenreId, Name) VALUES (26, 'Polka');
            UPDATE Track SET UnitPrice = UnitPrice * 2 WHERE Milliseconds < 100000;
            DELETE FROM InvoiceLine WHERE InvoiceLineId = 1;
            DELETE FROM Playlist WHERE PlaylistId = 2;
            """)
        XCTAssertEqual(try dump(viaLoupe), try dump(viaSQL))
        XCTAssertEqual(try integrity(viaLoupe).ok, "ok")
    }

    /// A schema with every kind of key and every `ON DELETE` action.
    func makeRelationalStore() throws -> String {
        let path = try Shared.temporaryPath("shop.sqlite")
        try sql(path, """
            CREATE TABLE parent (id INTEGER PRIMARY KEY, name TEXT NOT NULL, born DATE, score REAL,
                                 upper TEXT GENERATED ALWAYS AS (upper(name)) VIRTUAL);
            CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id) ON DELETE CASCADE, note TEXT);
            CREATE TABLE pet (id INTEGER PRIMARY KEY, owner INTEGER REFERENCES parent(id) ON DELETE SET NULL, name TEXT);
            CREATE TABLE toy (id INTEGER PRIMARY KEY, child_id INTEGER NOT NULL REFERENCES child(id) ON DELETE RESTRICT, label TEXT);
            CREATE TABLE loan (book TEXT NOT NULL, member INTEGER NOT NULL, due DATE, PRIMARY KEY (book, member)) WITHOUT ROWID;
            CREATE TABLE log (message TEXT, at REAL);
            INSERT INTO parent (id, name, born, score) VALUES (1, 'Ann', '1990-04-01', 1.5), (2, 'Bo', NULL, NULL), (3, 'Cy', '2001-12-31', 3);
            INSERT INTO child VALUES (10, 1, 'a1'), (11, 1, 'a2'), (12, 2, 'b1'), (13, 3, 'c1');
            INSERT INTO pet VALUES (20, 1, 'Rex'), (21, 2, 'Tom');
            INSERT INTO toy VALUES (30, 13, 'ball');
            INSERT INTO loan VALUES ('dune', 1, '2026-01-01'), ('dune', 2, NULL), ('emma', 1, '2026-02-01');
            INSERT INTO log VALUES ('start', 0.5), ('again', 1.5);
            """)
        return path
    }

    func testOnDeleteActionsKeysAndTablesWithoutKeys() throws {
        let path = try makeRelationalStore()
        let expected = try Shared.temporaryPath("expected.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: expected)
        let session = try open(path)

        // Cascade and set null follow the declared actions; the step touches every object involved.
        // Staging says what the deletion does beyond the object named.
        XCTAssertEqual(ok(session, "delete parent where id == 1").components(separatedBy: " (pending").first, "staged: 4 objects; also deletes 2 child; sets 1 pet.owner to NULL")
        let restricted = refused(session, "delete parent where id == 3")
        XCTAssertTrue(restricted.contains("toy #30"), restricted)
        // Composite keys and WITHOUT ROWID tables are keyed by every key column.
        ok(session, #"update loan where book == "dune" and member == 2 set due = 2026-03-01"#)
        ok(session, #"delete loan where book == "emma""#)
        ok(session, #"insert loan { book: "odd", member: 3 }"#)
        // A table without a declared key is keyed by the rowid it had at load.
        ok(session, #"update log where message == "again" set at = 2.25"#)
        ok(session, #"insert log { message: "added" }"#)
        ok(session, #"delete log where message == "start""#)
        // An INTEGER PRIMARY KEY is assigned as SQLite would (max + 1).
        ok(session, #"insert parent { name: "Di", born: 1999-09-09 }"#)
        ok(session, #"update pet where id == 21 set owner = #4"#)

        let changes = ok(session, ".changes")
        for expected in [
            #"UPDATE "pet" SET "owner" = NULL WHERE "id" = 20;"#,
            #"DELETE FROM "child" WHERE "id" = 10;"#,
            #"UPDATE "loan" SET "due" = '2026-03-01' WHERE "book" = 'dune' AND "member" = 2;"#,
            #"INSERT INTO "parent" ("id", "name", "born") VALUES (4, 'Di', '1999-09-09');"#,
            #"DELETE FROM "log" WHERE rowid = 1;"#,
            #"INSERT INTO "log" (rowid, "message") VALUES (3, 'added');"#,
        ] { XCTAssertTrue(changes.contains(expected), "missing \(expected) in\n\(changes)") }
        XCTAssertTrue(ok(session, ".commit").hasPrefix("committed:"))

        try sql(expected, """
            UPDATE pet SET owner = NULL WHERE id = 20;
            DELETE FROM child WHERE parent_id = 1;
            DELETE FROM parent WHERE id = 1;
            UPDATE loan SET due = '2026-03-01' WHERE book = 'dune' AND member = 2;
            DELETE FROM loan WHERE book = 'emma';
            INSERT INTO loan (book, member) VALUES ('odd', 3);
            UPDATE log SET at = 2.25 WHERE message = 'again';
            INSERT INTO log (rowid, message) VALUES (3, 'added');
            DELETE FROM log WHERE message = 'start';
            INSERT INTO parent (id, name, born) VALUES (4, 'Di', '1999-09-09');
            UPDATE pet SET owner = 4 WHERE id = 21;
            """)
        XCTAssertEqual(try dump(path), try dump(expected))
        let rowids = try DatabaseQueue(path: path).read { try Int64.fetchAll($0, sql: "SELECT rowid FROM log ORDER BY rowid") }
        XCTAssertEqual(rowids, [2, 3], "rows keep their rowids; a new row takes the next one")
        XCTAssertEqual(try integrity(path).ok, "ok")
        XCTAssertEqual(try integrity(path).foreignKeys, 0)
    }

    func testValuesThatBreakTheSchemaAreRefusedWithTheReason() throws {
        let session = try open(try makeRelationalStore())
        let cases: [(String, String)] = [
            (#"update child where id == 10 set note = 5"#, "TEXT"),
            (#"update child where id == 10 set parent_id = "ten""#, "ten"),
            (#"update child where id == 10 set parent_id = 77"#, "77"),
            (#"update parent where id == 1 set score = "high""#, "REAL"),
            (#"update parent where id == 1 set name = nil"#, "NOT NULL"),
            (#"update parent where id == 1 set upper = "X""#, "generated"),
            (#"update parent where id == 1 set id = 9"#, "key"),
            (#"update parent where id == 1 set nickname = "A""#, "nickname"),
            (#"update parent where id == 1 set born = "yesterday""#, "date"),
            (#"insert parent { born: 2000-01-01 }"#, "name"),
            (#"insert parent { id: 2, name: "Dup" }"#, "2"),
            (#"update pet where id == 20 set owner = #99"#, "99"),
            (#"update pet where id == 20 set owner += #2"#, "to-one"),
            (#"insert loan { book: "x" }"#, "member"),
        ]
        for (line, reason) in cases {
            let message = refused(session, line)
            XCTAssertTrue(message.contains(reason), "\(line): expected the reason to mention \(reason): \(message)")
        }
        XCTAssertTrue(session.pending.isEmpty)
        XCTAssertEqual(ok(session, ".changes"), "no pending changes\n")
        // Steps that cancel out leave nothing to write, and `.changes` says so.
        _ = ok(session, #"insert parent { id: 50, name: "Brief" }"#)
        _ = ok(session, "delete parent where id == 50")
        XCTAssertTrue(ok(session, ".changes").hasSuffix("\n.commit writes nothing: the pending steps cancel out\n"), ok(session, ".changes"))
    }

    // MARK: Persist files

    func testPersistEditsFollowPersistsConventionsAndHistory() throws {
        let path = try Shared.copy("fixtures/seed-formats/persist.sqlite")
        let before = try DatabaseQueue(path: path).read { db in
            (ops: try Int.fetchOne(db, sql: "SELECT count(*) FROM operations")!,
             txs: try Int.fetchOne(db, sql: "SELECT count(*) FROM undo_transactions")!,
             current: try Int64.fetchOne(db, sql: "SELECT id FROM operations WHERE current")!,
             maxID: try Int64.fetchOne(db, sql: "SELECT max(id) FROM by_type")!,
             teacherOfAnn: try Int64.fetchOne(db, sql: "SELECT to_id FROM relations WHERE from_id = 1 AND relation = 'teacher'")!,
             otherTeacher: try Int64.fetchOne(db, sql: "SELECT id FROM by_type WHERE type_name = 'Teacher' AND id != (SELECT to_id FROM relations WHERE from_id = 1 AND relation = 'teacher') LIMIT 1")!,
             homework: try Int64.fetchAll(db, sql: "SELECT to_id FROM relations WHERE from_id = 1 AND relation = 'homework' ORDER BY rowid"),
             json: try String.fetchOne(db, sql: "SELECT json FROM by_type WHERE id = 1")!)
        }
        let session = try open(path)
        ok(session, #"update Person where id == 1 set nickname = "Annie", birthday = 2010-01-02T12:00:00Z"#)
        ok(session, "update Person where id == 1 set teacher = #\(before.otherTeacher)")
        ok(session, "update Person where id == 1 set homework -= #\(before.homework[0])")
        ok(session, #"insert Homework { answers: "new", due: 2024-02-01T09:00:00Z, grade: 7 }"#)
        ok(session, "update Person where id == 1 set homework += #\(before.maxID + 1)")
        // A Persist relation has no foreign key: the deletion says which links go with the object.
        XCTAssertEqual(ok(session, "delete Homework where id == \(before.homework[1])").components(separatedBy: " (pending").first,
                       "staged: 1 object; unlinks 1 Person.homework link")
        let changes = ok(session, ".changes")
        XCTAssertTrue(changes.contains("json before:"), changes)
        XCTAssertTrue(changes.contains("Persist's undo history"), changes)
        XCTAssertTrue(ok(session, ".commit").hasPrefix("committed: 1 added, 1 changed, 1 deleted"))

        let after = try DatabaseQueue(path: path)
        try after.read { db in
            let json = try String.fetchOne(db, sql: "SELECT json FROM by_type WHERE id = 1")!
            // Persist's writer: pretty printed, `"key" : value`, `\/`, its date format and the file's offset.
            XCTAssertTrue(json.contains(#""nickname" : "Annie""#), json)
            XCTAssertTrue(json.contains(#""birthday" : "2010-01-02 12:00:00 Z""#), json)
            XCTAssertTrue(json.contains(#""street" : "10 Elm St\/Apt 0""#), "untouched members keep their text: \(json)")
            XCTAssertEqual(json.components(separatedBy: "\n").count, before.json.components(separatedBy: "\n").count)
            let newJSON = try String.fetchOne(db, sql: "SELECT json FROM by_type WHERE id = ?", arguments: [before.maxID + 1])
            XCTAssertEqual(newJSON, "{\n  \"answers\" : \"new\",\n  \"due\" : \"2024-02-01 09:00:00 Z\",\n  \"grade\" : 7\n}")
            XCTAssertEqual(try String.fetchOne(db, sql: "SELECT type_name FROM by_type WHERE id = ?", arguments: [before.maxID + 1]), "Homework")
            // Relation rows: the new teacher, the homework list without the removed and deleted ones, with the new one.
            XCTAssertEqual(try Int64.fetchAll(db, sql: "SELECT to_id FROM relations WHERE from_id = 1 AND relation = 'teacher'"), [before.otherTeacher])
            let homework = try Int64.fetchAll(db, sql: "SELECT to_id FROM relations WHERE from_id = 1 AND relation = 'homework'")
            XCTAssertEqual(Set(homework), Set(before.homework.dropFirst(2) + [before.maxID + 1]))
            XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT count(*) FROM relations WHERE to_id = ? OR from_id = ?",
                                            arguments: [before.homework[1], before.homework[1]]), 0, "a deletion removes every relation row that touches it")
            XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT count(*) FROM by_type WHERE id = ?", arguments: [before.homework[1]]), 0)
            XCTAssertNotNil(try Int.fetchOne(db, sql: "SELECT id FROM by_type WHERE id = ?", arguments: [before.homework[0]]), "-= removes the link, not the object")

            // History: one operation per object changed, linked from the old current one, one undo transaction.
            let ops = try Row.fetchAll(db, sql: "SELECT id, operation_type, current, next_operation FROM operations WHERE id > ? ORDER BY id", arguments: [before.current])
            XCTAssertEqual(ops.map { $0[1] as String }.sorted(), ["create", "delete", "update"])
            XCTAssertEqual(try Int64.fetchOne(db, sql: "SELECT next_operation FROM operations WHERE id = ?", arguments: [before.current]), ops[0][0])
            XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT count(*) FROM operations WHERE current"), 1)
            XCTAssertEqual(ops.last?[2], 1)
            XCTAssertEqual(ops.last?[3], -1)
            for (op, next) in zip(ops, ops.dropFirst()) { XCTAssertEqual(op[3] as Int64, next[0] as Int64) }
            let tx = try Row.fetchOne(db, sql: "SELECT undo_operation_start, undo_operation_end, current, next_undo_transaction FROM undo_transactions ORDER BY id DESC LIMIT 1")!
            XCTAssertEqual(tx[0], before.current)
            XCTAssertEqual(tx[1] as Int64, ops.last?[0])
            XCTAssertEqual(tx[2], 1)
            XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT count(*) FROM undo_transactions"), before.txs + 1)
            XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT count(*) FROM undo_transactions WHERE current"), 1)
            let history = try Row.fetchAll(db, sql: "SELECT by_type_id, before_json, after_json FROM by_type_history WHERE operation_id > ? ORDER BY operation_id", arguments: [before.current])
            XCTAssertEqual(history.count, 3)
            let byObject = Dictionary(uniqueKeysWithValues: history.map { ($0[0] as Int64, ($0[1] as String, $0[2] as String)) })
            XCTAssertEqual(byObject[1]?.0, before.json)
            XCTAssertEqual(byObject[1]?.1, json)
            XCTAssertEqual(byObject[before.maxID + 1]?.0, "", "a creation has no document before")
            XCTAssertEqual(byObject[before.maxID + 1]?.1, newJSON)
            XCTAssertEqual(byObject[before.homework[1]]?.1, "", "a deletion has no document after")
            XCTAssertFalse(byObject[before.homework[1]]?.0.isEmpty ?? true)
            // The person's relation rows as its operation left them: the rows now, and the link
            // to the homework deleted by a later operation of the same commit.
            let personOperation = try Int64.fetchOne(db, sql: "SELECT operation_id FROM by_type_history WHERE by_type_id = 1 AND operation_id > ?", arguments: [before.current])
            let snapshot = try Row.fetchAll(db, sql: "SELECT from_id, to_id, relation FROM relations_history_after WHERE operation_id = ?", arguments: [personOperation])
                .map { "\($0[0] as Int64)-\($0[1] as Int64)-\($0[2] as String)" }
            let now = try Row.fetchAll(db, sql: "SELECT from_id, to_id, relation FROM relations WHERE from_id = 1 OR to_id = 1")
                .map { "\($0[0] as Int64)-\($0[1] as Int64)-\($0[2] as String)" }
            // (the deletion may come first: operations go type by type)
            XCTAssertTrue(Set(now).isSubset(of: snapshot) && Set(snapshot).isSubset(of: now + ["1-\(before.homework[1])-homework"]), "\(snapshot) \(now)")
        }
        try after.close()

        // The real reader sees exactly the changes.
        let reread = try open(path)
        ok(reread, ".mode json")
        XCTAssertEqual(ok(reread, "Person where id == 1 select nickname, teacher.id, homework.@count"),
                       #"[{"nickname": "Annie", "teacher.id": \#(before.otherTeacher), "homework.@count": \#(before.homework.count - 1)}]"# + "\n")
        XCTAssertEqual(try integrity(path).ok, "ok")
    }

    /// A commit after `.changes` writes the preview's plan when the changes are the ones it
    /// planned; a step staged after the preview makes the commit plan again (both steps land).
    func testACommitReusesThePreviewOnlyForTheSameChanges() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 800, seed: 9)
        let session = try open(path)
        ok(session, "update Book set price = 10")
        ok(session, ".changes")
        ok(session, "update Book where id == 196 set pages = 4321")
        ok(session, ".commit")
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        try queue.read { db in
            XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT count(*) FROM by_type WHERE type_name = 'Book' AND json_extract(json, '$.price') != 10"), 0)
            XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT json_extract(json, '$.pages') FROM by_type WHERE id = 196"), 4321)
        }
        // And the plain case: preview, commit, the same result.
        let again = try open(path)
        ok(again, "update Book set price = 12")
        ok(again, ".changes")
        ok(again, ".commit")
        try queue.read { db in
            XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT count(*) FROM by_type WHERE type_name = 'Book' AND json_extract(json, '$.price') != 12"), 0)
            XCTAssertEqual(try String.fetchOne(db, sql: "PRAGMA integrity_check"), "ok")
        }
    }

    /// A preview of many objects shows the first ones and says how many more: its text stays
    /// small whatever the size of the change.
    func testAPreviewOfManyObjectsIsBounded() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 4000, seed: 3)
        let session = try open(path)
        ok(session, "update Book set price = 3")
        let text = try session.changesText()
        XCTAssertLessThan(text.split(separator: "\n").count, 420, "about 400 lines of writes at most")
        XCTAssertTrue(text.range(of: #"… and \d+ more objects \(\d+ statements\), written the same way"#, options: .regularExpression) != nil, text.suffix(300).description)
    }

    func testSampleStoreEditsRoundTrip() throws {
        let path = try Shared.copyFromCheckout("sample-data/library.sqlite")
        func prices() throws -> [Int64: Double] {
            try DatabaseQueue(path: path).read { db in
                Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT id, json_extract(json, '$.price') FROM by_type WHERE type_name = 'Book'")
                    .map { ($0[0] as Int64, $0[1] as Double) })
            }
        }
        let before = try prices()
        let session = try open(path)
        XCTAssertTrue(ok(session, "update Book set price = price * 2").hasPrefix("staged: 750 objects"))
        ok(session, #"insert Tag { name: "new-tag" }"#)
        let reviews = ok(session, "delete Review where rating == 1")
        XCTAssertTrue(reviews.hasPrefix("staged:"), reviews)
        XCTAssertTrue(ok(session, ".commit").hasPrefix("committed:"))
        XCTAssertEqual(try prices(), before.mapValues { $0 * 2 })
        let reread = try open(path)
        ok(reread, ".mode json")
        XCTAssertEqual(ok(reread, "count Review where rating == 1"), "0\n")
        XCTAssertEqual(ok(reread, #"count Tag where name == "new-tag""#), "1\n")
        XCTAssertEqual(try integrity(path).ok, "ok")
    }

    // MARK: Safety

    func testAnotherWriterRefusesTheCommitAndTheEditsStay() throws {
        let path = try makeRelationalStore()
        let session = try open(path)
        ok(session, #"update pet where id == 20 set name = "Rexy""#)

        // Another process changes an object that is not edited: the file changed, nothing is written.
        try sql(path, "UPDATE pet SET name = 'Tommy' WHERE id = 21")
        var print = Shared.fingerprint(path)
        var reply = session.execute(".commit")
        XCTAssertTrue(reply.error?.contains("another process wrote to the file") ?? false, reply.error ?? reply.output)
        XCTAssertEqual(Shared.fingerprint(path), print)
        XCTAssertEqual(session.pending.active.count, 1, "the edits stay pending")

        // Another process changes the edited object itself: the message names it.
        try sql(path, "UPDATE pet SET name = 'Rex II' WHERE id = 20")
        print = Shared.fingerprint(path)
        reply = session.execute(".commit")
        XCTAssertTrue(reply.error?.contains("pet #20") ?? false, reply.error ?? reply.output)
        XCTAssertEqual(Shared.fingerprint(path), print)

        // Reloading keeps the staged edits over the new content; then the commit goes through.
        ok(session, ".reload")
        XCTAssertEqual(session.pending.active.count, 1)
        XCTAssertTrue(ok(session, ".commit").hasPrefix("committed: 0 added, 1 changed"))
        let names = try DatabaseQueue(path: path).read { try String.fetchAll($0, sql: "SELECT name FROM pet ORDER BY id") }
        XCTAssertEqual(names, ["Rexy", "Tommy"])
    }

    /// A key holding text that is not UTF-8 (or a NUL) comes back from SQLite repaired or cut
    /// short, and so names another row, or none: such a table is keyed by rowid (without a rowid,
    /// by position, read-only), and a write reaches the row it was staged on. A write that
    /// changes no row (here a trigger skips it) refuses the commit instead of reporting it done.
    func testKeysThatDoNotReadBackNeverNameAnotherRow() throws {
        let path = try Shared.temporaryPath("keys.sqlite")
        try sql(path, """
            CREATE TABLE r(k TEXT PRIMARY KEY, v);
            INSERT INTO r VALUES (CAST(x'98' AS TEXT), 1), (CAST(x'EFBFBD' AS TEXT), 2), (CAST(x'610062' AS TEXT), 3);
            CREATE TABLE w(a TEXT, b, v, PRIMARY KEY (a, b)) WITHOUT ROWID;
            INSERT INTO w VALUES (CAST(x'977C62' AS TEXT), 1, 'x'), ('a', 'b|1', 'y');
            CREATE TABLE fine(k TEXT PRIMARY KEY, v);
            INSERT INTO fine VALUES ('é', 1), (CAST(x'F09F9880' AS TEXT), 2), (x'97', 3);
            CREATE TABLE guarded(id INTEGER PRIMARY KEY, v);
            INSERT INTO guarded VALUES (1, 'kept');
            CREATE TRIGGER keep BEFORE UPDATE ON guarded BEGIN SELECT RAISE(IGNORE); END;
            """)
        let session = try open(path)
        XCTAssertEqual(ok(session, "r select id").split(separator: "\n").dropFirst(2), ["1", "2", "3"])
        XCTAssertEqual(ok(session, "w select id").split(separator: "\n").dropFirst(2), ["1", "2"])
        XCTAssertTrue(refused(session, "update w set v = 'z'").contains("not UTF-8"))
        // Keys that read back as they are stored stay keys: UTF-8 text, a blob.
        XCTAssertEqual(ok(session, "fine select id"), "id\n---------\né\n😀\n<1 bytes>\n")

        // The row whose key SQLite repairs to U+FFFD, beside a row whose key is U+FFFD.
        ok(session, "update r where v == 1 set v = 9")
        XCTAssertTrue(ok(session, ".changes").contains(#"UPDATE "r" SET "v" = 9 WHERE rowid = 1;"#))
        XCTAssertTrue(ok(session, ".commit").hasPrefix("committed: 0 added, 1 changed"))
        let values = try DatabaseQueue(path: path).read { try Row.fetchAll($0, sql: "SELECT hex(k), v FROM r ORDER BY rowid").map { "\($0[0] as String)=\($0[1] as Int)" } }
        XCTAssertEqual(values, ["98=9", "EFBFBD=2", "610062=3"])

        ok(session, "update guarded set v = 'changed'")
        let print = Shared.fingerprint(path)
        let reply = session.execute(".commit")
        XCTAssertTrue(reply.error?.contains("changed 0 rows, not the 1 its key names") ?? false, reply.error ?? reply.output)
        XCTAssertEqual(Shared.fingerprint(path), print)
        XCTAssertEqual(session.pending.active.count, 1, "the edits stay pending")
    }

    /// A Persist document holding bytes that are not UTF-8 comes back from SQLite repaired:
    /// rewriting it would change members nobody edited, so its commit is refused and the file
    /// left as it was; other objects' edits go through.
    func testPersistDocumentsThatDoNotReadBackAreNotRewritten() throws {
        let path = try Shared.temporaryPath("bytes.sqlite")
        try sql(path, """
            CREATE TABLE by_type (id INTEGER PRIMARY KEY NOT NULL, type_name TEXT NOT NULL, json TEXT NOT NULL);
            CREATE TABLE relations (from_id INTEGER NOT NULL, to_id INTEGER NOT NULL, relation TEXT NOT NULL);
            INSERT INTO by_type VALUES (1, 'Note', CAST(x'7B226E97223A312C2274223A2261227D' AS TEXT)), (2, 'Note', '{"t":"b"}');
            """)
        let session = try open(path)
        ok(session, #"update Note where id == 1 set t = "z""#)
        let print = Shared.fingerprint(path)
        let reply = session.execute(".commit")
        XCTAssertTrue(reply.error?.contains("Note #1: its document or type name in the file is not UTF-8") ?? false, reply.error ?? reply.output)
        XCTAssertEqual(Shared.fingerprint(path), print)
        ok(session, ".rollback")
        ok(session, #"update Note where id == 2 set t = "z""#)
        XCTAssertTrue(ok(session, ".commit").hasPrefix("committed: 0 added, 1 changed"))
        let documents = try DatabaseQueue(path: path).read { try String.fetchAll($0, sql: "SELECT hex(json) FROM by_type ORDER BY id") }
        XCTAssertEqual(documents, ["7B226E97223A312C2274223A2261227D", Data(#"{"t":"z"}"#.utf8).map { String(format: "%02X", $0) }.joined()])
    }

    func testALockedFileKeepsTheEditsPending() throws {
        let path = try makeRelationalStore()
        let session = try open(path)
        ok(session, #"update pet where id == 20 set name = "Rexy""#)
        // Another connection holds the write lock while the commit tries (and waits its 3 s).
        let other = try DatabaseQueue(path: path)
        let locked = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        Thread {
            try? other.inTransaction(.immediate) { _ in locked.signal(); release.wait(); return .rollback }
            done.signal()
        }.start()
        locked.wait()
        let reply = session.execute(".commit")
        release.signal()
        done.wait()
        try other.close()
        XCTAssertTrue(reply.error?.contains("another process is writing") ?? false, reply.error ?? reply.output)
        XCTAssertEqual(session.pending.active.count, 1)
        XCTAssertTrue(ok(session, ".commit").hasPrefix("committed:"))
    }

    func testRollbackAndQuitGuardLeaveTheFileAsItWas() throws {
        let path = try makeRelationalStore()
        let print = Shared.fingerprint(path)
        let session = try open(path)
        ok(session, "delete parent where id == 2")
        ok(session, #"insert log { message: "x" }"#)
        _ = ok(session, ".changes")
        let warning = session.execute(".quit")
        XCTAssertFalse(session.wantsQuit, "the first .quit with pending changes asks")
        XCTAssertEqual(warning.error, "error: pending: 1 added, 1 changed, 2 deleted in 2 steps. .commit writes them, .rollback drops them; .quit again leaves without writing them")
        XCTAssertTrue(refused(session, ".open \(path)").contains("pending"))
        ok(session, ".rollback")
        XCTAssertTrue(session.pending.isEmpty)
        XCTAssertEqual(ok(session, "count parent"), "3\n")
        ok(session, ".quit")
        XCTAssertTrue(session.wantsQuit)
        XCTAssertEqual(Shared.fingerprint(path), print, "browsing, staging, previewing and rolling back write nothing")
    }

    func testFrameworkStoresAreReadOnlyAndSayWhy() throws {
        for file in ["fixtures/seed-formats/swiftserialization.sqlite", "fixtures/seed-formats/persistdb.sqlite",
                     "realdata/coredata/apple_recipes/Recipes.sqlite", "realdata/coredata/plaso/Accounts3.sqlite",
                     "realdata/couchbase/ios140_iosdb.cblite2"] {
            let session = try open(try Shared.copy(file))
            guard let type = session.engine.graph.types.first else { continue }
            let message = refused(session, "delete \(type.name.rawValue)")
            XCTAssertTrue(message.contains("read-only"), message)
        }
    }

    // MARK: Undo and redo

    /// Random sequences of edits, undos and redos, checked after every step against a model: a
    /// stack of states where a new edit drops what could be redone.
    func testRandomEditUndoRedoSequencesMatchAModel() throws {
        var generator = SampleGenerator.Random(state: 0x10_0FE)
        for _ in 0..<12 {
            let path = try Shared.temporaryPath("model.sqlite")
            try sql(path, """
                CREATE TABLE item (id INTEGER PRIMARY KEY, v INTEGER NOT NULL);
                INSERT INTO item VALUES (1, 10), (2, 20), (3, 30);
                """)
            let session = try open(path)
            var states: [[Int64: Int64]] = [[1: 10, 2: 20, 3: 30]]
            var cursor = 0
            for _ in 0..<40 {
                var state = states[cursor]
                let roll = Int.random(in: 0..<10, using: &generator)
                if roll < 2 {
                    let reply = session.execute(".undo")
                    XCTAssertNil(reply.error)
                    if cursor > 0 { cursor -= 1 } else { XCTAssertEqual(reply.output, "nothing to undo\n") }
                } else if roll < 4 {
                    let reply = session.execute(".redo")
                    XCTAssertNil(reply.error)
                    if cursor < states.count - 1 { cursor += 1 } else { XCTAssertEqual(reply.output, "nothing to redo\n") }
                } else {
                    let line: String
                    switch roll {
                    case 4, 5:
                        guard let id = state.keys.randomElement(using: &generator) else { continue }
                        let v = Int64.random(in: 0..<100, using: &generator)
                        line = "update item where id == \(id) set v = \(v)"
                        state[id] = v
                    case 6:
                        let v = Int64.random(in: 0..<100, using: &generator)
                        line = "update item where v < 50 set v = v + \(v)"
                        for (k, old) in state where old < 50 { state[k] = old + v }
                    case 7, 8:
                        let v = Int64.random(in: 0..<100, using: &generator)
                        line = "insert item { v: \(v) }"
                        // The next key: one more than any key this history has held (deleted
                        // ones included, so a staged delete and insert never share a key).
                        state[(states[...cursor].flatMap(\.keys).max() ?? 0) + 1] = v
                    default:
                        guard let id = state.keys.randomElement(using: &generator) else { continue }
                        line = "delete item where id == \(id)"
                        state[id] = nil
                    }
                    let reply = session.execute(line)
                    XCTAssertNil(reply.error, "\(line): \(reply.error ?? "")")
                    if state == states[cursor] {
                        XCTAssertEqual(reply.output, "nothing staged: no object changes\n", line)
                    } else {
                        states.removeSubrange((cursor + 1)...)
                        states.append(state)
                        cursor += 1
                    }
                }
                XCTAssertEqual(contents(session), states[cursor], "after \(session.pending.active.map(\.label))")
            }
            // What is committed is the model's current state.
            let reply = session.execute(".commit")
            if cursor > 0 { XCTAssertNil(reply.error, reply.error ?? "") }
            let stored = try DatabaseQueue(path: path).read { db in
                Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT id, v FROM item").map { ($0[0] as Int64, $0[1] as Int64) })
            }
            XCTAssertEqual(stored, states[cursor])
        }
    }

    private func contents(_ session: ReplSession) -> [Int64: Int64] {
        let graph = session.engine.graph
        guard let type = graph.type(named: "item") else { return [:] }
        var out: [Int64: Int64] = [:]
        for row in type.liveRows {
            guard case .int(let id) = graph.id(of: ObjectRef(type: Int(graph.types.firstIndex { $0 === type } ?? 0), row: row)),
                  case .int(let v) = type.value(row: row, named: "v") else { continue }
            out[id] = v
        }
        return out
    }
}
