import Foundation
import LoupeModel
import LoupePostgres
import LoupeQuery
import LoupeStore
import LoupeTestSupport
import XCTest

/// Edits written to PostgreSQL (``PostgresCommit`` behind ``PostgresHost``) as a REPL session
/// writes them: previewed exactly, written in one transaction with bound values, refused whole
/// when another session changed a row since the load or PostgreSQL rejects a write, the pending
/// changes kept through every refusal.
final class PostgresEditingTests: XCTestCase {
    /// A database of every kind of column an edit can reach, a foreign key, a keyless table, a
    /// view, and names and values that would break SQL built by splicing.
    private func makeDatabase(_ name: String) throws -> String {
        let url = try PostgresServer.freshDatabase(name)
        XCTAssertEqual(try PostgresServer.psql(url, """
            CREATE TABLE author (id integer PRIMARY KEY, name text NOT NULL, born date, meta jsonb, token uuid, photo bytea);
            CREATE TABLE "bo""ok" (id integer PRIMARY KEY, title varchar(40), price numeric(8,2), in_print boolean,
                                   author_id integer REFERENCES author(id), added timestamptz, rating double precision);
            CREATE TABLE log (line text);
            CREATE TABLE shelf (room text, "no$1" integer, label text, PRIMARY KEY (room, "no$1"));
            INSERT INTO shelf VALUES ('A''s', 1, 'first'), ('A''s', 2, 'second');
            CREATE VIEW cheap AS SELECT * FROM "bo""ok" WHERE price < 10;
            INSERT INTO author VALUES (1, 'Ann', '1950-03-04', '{"a": [1, 2]}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\\x00ff'),
                                      (2, 'Bob', NULL, NULL, NULL, NULL);
            INSERT INTO "bo""ok" VALUES (10, 'Sea', 9.5, true, 1, '2024-01-02 03:04:05+00', 4.5), (11, 'Sky', 20, false, 2, NULL, NULL);
            INSERT INTO log VALUES ('x');
            """), 0)
        return url
    }

    /// A REPL session on the database, committing through a PostgreSQL host (kept alive here).
    private func session(_ url: String) throws -> (ReplSession, PostgresHost) {
        let host = PostgresHost(url: url)
        let session = ReplSession(graph: try host.load(path: url, progress: nil), mode: .json)
        session.host = host
        session.storePath = url
        return (session, host)
    }

    /// One query's rows as text, through a connection of its own.
    private func rows(_ url: String, _ sql: String) throws -> [[String?]] {
        try PostgresConnection(url: url).query(sql).rows
    }

    func testEditsAreWrittenInOneTransaction() throws {
        let url = try makeDatabase("edits")
        let (session, host) = try session(url)
        for line in [#"update `bo"ok` where id == 10 set title = "it's $1 \"quoted\"", price = 12.25, author = #2, in_print = false"#,
                     #"insert author { id: 3, name: "Cy'); DROP TABLE log; --", born: 2001-02-03, meta: 42, token: "b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12" }"#,
                     #"insert `bo"ok` { id: 12, title: "New", price: 1.5, author: #3, added: 2020-05-06T07:08:09Z, rating: 0.1 }"#,
                     #"update author where id == 2 set meta = "just text""#,
                     "delete `bo\"ok` where id == 11"] {
            XCTAssertNil(session.execute(line).error, line)
        }
        let changes = session.execute(".changes")
        XCTAssertNil(changes.error)
        // The preview spells every write, values as literals, identifiers quoted.
        for expected in [#"UPDATE "public"."bo""ok" SET "title" = 'it''s $1 "quoted"', "price" = 12.25, "in_print" = '0'::boolean, "author_id" = 2 WHERE "id" = 10;"#,
                         #"INSERT INTO "public"."author" ("id", "name", "born", "meta", "token") VALUES (3, 'Cy''); DROP TABLE log; --', '2001-02-03'::date, '42'::jsonb, 'b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12'::uuid);"#,
                         #"DELETE FROM "public"."bo""ok" WHERE "id" = 11;"#] {
            XCTAssertTrue(changes.output.contains(expected), "\(expected)\nnot in\n\(changes.output)")
        }
        // Parents first: the new author is inserted before the book that names it.
        let insertAuthor = try XCTUnwrap(changes.output.range(of: #"INSERT INTO "public"."author""#))
        let insertBook = try XCTUnwrap(changes.output.range(of: #"INSERT INTO "public"."bo""ok""#))
        XCTAssertLessThan(insertAuthor.lowerBound, insertBook.lowerBound)
        let committed = session.execute(".commit")
        XCTAssertNil(committed.error, committed.error ?? "")
        XCTAssertTrue(committed.output.hasPrefix("committed: 2 added, 2 changed, 1 deleted (5 statements"), committed.output)
        XCTAssertTrue(session.pending.isEmpty)
        XCTAssertEqual(try rows(url, #"SELECT id, title, price::text, in_print::text, author_id, added::text, rating FROM "bo""ok" ORDER BY id"#), [
            ["10", #"it's $1 "quoted""#, "12.25", "false", "2", "2024-01-02 03:04:05+00", "4.5"],
            ["12", "New", "1.50", nil, "3", "2020-05-06 07:08:09+00", "0.1"],
        ])
        XCTAssertEqual(try rows(url, "SELECT id, name, born::text, meta::text, token::text FROM author ORDER BY id"), [
            ["1", "Ann", "1950-03-04", #"{"a": [1, 2]}"#, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"],
            ["2", "Bob", nil, #""just text""#, nil],
            ["3", "Cy'); DROP TABLE log; --", "2001-02-03", "42", "b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12"],
        ])
        XCTAssertEqual(try rows(url, "SELECT line FROM log"), [["x"]])
        // A composite key (text and integer parts, a column named like a placeholder).
        XCTAssertNil(session.execute(#"update shelf where label == "second" set label = "2nd""#).error)
        XCTAssertTrue(session.execute(".changes").output.contains(#"UPDATE "public"."shelf" SET "label" = '2nd' WHERE "room" = 'A''s' AND "no$1" = 2;"#))
        XCTAssertNil(session.execute(".commit").error)
        XCTAssertEqual(try rows(url, #"SELECT room, "no$1", label FROM shelf ORDER BY 2"#), [["A's", "1", "first"], ["A's", "2", "2nd"]])
        // The session reads the database again after the commit.
        XCTAssertEqual(session.execute("count `bo\"ok`").output, "2\n")
        withExtendedLifetime(host) {}
    }

    func testAChangedRowOrARefusedWriteWritesNothingAndKeepsTheEdits() throws {
        let url = try makeDatabase("conflicts")
        let (session, host) = try session(url)
        XCTAssertNil(session.execute(#"update `bo"ok` where id == 11 set title = "Mine""#).error)
        XCTAssertNil(session.execute(#"update `bo"ok` where id == 10 set price = 3"#).error)
        // Another session changes book 10 after the load.
        _ = try PostgresConnection.writing(url, #"UPDATE "bo""ok" SET rating = 1 WHERE id = 10"#)
        let refused = session.execute(".commit")
        let error = try XCTUnwrap(refused.error)
        XCTAssertTrue(error.contains("cannot write to 'postgresql://postgres@"), error)
        XCTAssertTrue(error.contains("the database changed since it was loaded; nothing was written. Changed: bo\"ok #10.rating is 1.0 in the database, 4.5 when loaded"), error)
        XCTAssertFalse(session.pending.isEmpty, "the edits stay pending")
        XCTAssertEqual(try rows(url, #"SELECT title FROM "bo""ok" WHERE id = 11"#), [["Sky"]], "nothing was written")
        // Reloaded, the edits are staged again over what the database holds, and commit.
        XCTAssertTrue(session.execute(".reload").output.hasPrefix("reloaded"))
        XCTAssertNil(session.execute(".commit").error)
        XCTAssertEqual(try rows(url, #"SELECT id, title, price::text, rating FROM "bo""ok" ORDER BY id"#), [["10", "Sea", "3.00", "1"], ["11", "Mine", "20.00", nil]])
        // A write PostgreSQL refuses (the numeric overflows) rolls back the whole commit.
        XCTAssertNil(session.execute(#"update `bo"ok` where id == 11 set title = "Second""#).error)
        XCTAssertNil(session.execute(#"update `bo"ok` where id == 10 set price = 1e300"#).error)
        let overflow = try XCTUnwrap(session.execute(".commit").error)
        XCTAssertTrue(overflow.contains("numeric field overflow") && overflow.contains("nothing was written, your edits stay pending"), overflow)
        XCTAssertEqual(try rows(url, #"SELECT title FROM "bo""ok" WHERE id = 11"#), [["Mine"]])
        XCTAssertFalse(session.pending.isEmpty)
        // A key another session inserted meanwhile.
        XCTAssertNil(session.execute(".rollback").error)
        XCTAssertNil(session.execute(#"insert author { id: 7, name: "Seven" }"#).error)
        _ = try PostgresConnection.writing(url, "INSERT INTO author (id, name) VALUES (7, 'Theirs')")
        let taken = try XCTUnwrap(session.execute(".commit").error)
        XCTAssertTrue(taken.contains("author #7 exists in the database already (another session inserted it)"), taken)
        // A database that cannot be reached at commit time: one clear line, the edits kept.
        XCTAssertNil(session.execute(".rollback").error)
        XCTAssertNil(session.execute(#"update author where id == 2 set name = "Later""#).error)
        let database = try XCTUnwrap(URLComponents(string: url)?.path.dropFirst())
        _ = try PostgresConnection.writing(try PostgresServer.url(), "ALTER DATABASE \(database) ALLOW_CONNECTIONS false", transaction: false)
        let unreachable = try XCTUnwrap(session.execute(".commit").error)
        _ = try PostgresConnection.writing(try PostgresServer.url(), "ALTER DATABASE \(database) ALLOW_CONNECTIONS true", transaction: false)
        XCTAssertTrue(unreachable.hasPrefix("error: cannot write to 'postgresql://") && unreachable.contains("not currently accepting connections")
                      && unreachable.hasSuffix("nothing was written, your edits stay pending"), unreachable)
        XCTAssertFalse(session.pending.isEmpty)
        XCTAssertNil(session.execute(".commit").error)
        XCTAssertEqual(try rows(url, "SELECT name FROM author WHERE id = 2"), [["Later"]])
        // `.open` of another database moves the session (and its commits) there; the password
        // is never shown; a file is not opened from a PostgreSQL session.
        XCTAssertNil(session.execute(".rollback").error)
        let other = try makeDatabase("conflicts_other")
        let withPassword = other.replacingOccurrences(of: "postgres@", with: "postgres:s3cret@")
        let opened = session.execute(".open \(withPassword)")
        XCTAssertNil(opened.error, opened.error ?? "")
        XCTAssertTrue(opened.output.hasPrefix("opened \(other):") && !opened.output.contains("s3cret"), opened.output)
        XCTAssertNil(session.execute(#"update author where id == 2 set name = "Elsewhere""#).error)
        XCTAssertNil(session.execute(".commit").error)
        XCTAssertEqual(try rows(other, "SELECT name FROM author WHERE id = 2"), [["Elsewhere"]])
        XCTAssertEqual(try rows(url, "SELECT name FROM author WHERE id = 2"), [["Later"]])
        let file = session.execute(".open \(try Shared.temporaryPath("x.sqlite"))")
        XCTAssertTrue(file.error?.contains("this session reads a PostgreSQL database") ?? false, file.error ?? "")
        // Views and keyless tables are read-only, with the reason.
        XCTAssertTrue(session.execute(#"update log set line = "y""#).error?.contains("log has no primary key; its rows cannot be told apart for a write") ?? false)
        XCTAssertTrue(session.execute(#"update cheap set title = "y""#).error?.contains("cheap is a view") ?? false)
        withExtendedLifetime(host) {}
    }
}

extension PostgresConnection {
    /// Runs one write as another client would (a connection of its own), in a transaction of its
    /// own or, for statements that cannot run in one, as the session's default allows.
    static func writing(_ url: String, _ sql: String, transaction: Bool = true) throws -> Int {
        let connection = try PostgresConnection(url: url)
        guard transaction else {
            _ = try connection.query("SET default_transaction_read_only = off")
            return try connection.execute(sql)
        }
        _ = try connection.query("BEGIN READ WRITE")
        let n = try connection.execute(sql)
        _ = try connection.query("COMMIT")
        return n
    }
}
