import Foundation
import LoupeBrowser
import LoupeModel
import LoupePostgres
import LoupeQuery
import LoupeStore
import LoupeTestSupport
import TerminalKit
import XCTest

/// Paged mode over a PostgreSQL database (``PostgresPages``, ``PostgresQuerySource``,
/// ``PostgresPagedHost``) against the whole graph a load of the same database gives: the same
/// keys give the same screens, statements the same answers, and edits staged over windows are
/// written as a loaded session writes them.
final class PostgresPagedTests: XCTestCase {
    /// Tables made to be awkward: text keys that need quoting in an array literal, a composite
    /// key, a self-reference, a foreign key naming a unique column that is not the key, a table in
    /// another schema, a keyless table, a view, names that need quoting, many backlinks to one row.
    static func awkwardDatabase(_ name: String) throws -> String {
        let url = try PostgresServer.freshDatabase(name)
        var script = """
            SET client_min_messages = warning;
            CREATE TABLE "we""ird" (code text PRIMARY KEY, label text, n numeric(6,2));
            INSERT INTO "we""ird" VALUES ('a"b', 'quote', 1.5), ('c\\d', 'backslash', NULL), ('{x,y}', 'braces', 2), ('NULL', 'the word', 3),
                                         (' sp ', 'spaces', 4), ('é', 'accent', 5), ('', 'empty', 6);
            CREATE TABLE person (id integer PRIMARY KEY, name text NOT NULL, boss integer REFERENCES person(id), tag text REFERENCES "we""ird"(code),
                                 born date, meta jsonb);
            CREATE TABLE badge (id bigint PRIMARY KEY, serial text UNIQUE NOT NULL, holder integer REFERENCES person(id));
            CREATE TABLE note (id integer PRIMARY KEY, about text REFERENCES badge(serial), "per son" integer REFERENCES person(id), body text);
            CREATE TABLE pair (a integer, b text, v integer, who integer REFERENCES person(id), PRIMARY KEY (a, b));
            CREATE SCHEMA other;
            CREATE TABLE other.thing (id integer PRIMARY KEY, owner integer REFERENCES person(id), label text);
            CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
            CREATE TABLE daily (day date PRIMARY KEY, note text);
            CREATE TABLE loose (line text, v integer, mood mood, token uuid, marks integer[], who integer REFERENCES person(id), day date REFERENCES daily(day));
            INSERT INTO daily VALUES ('2024-03-01', 'march'), ('2023-12-31', 'new year''s eve'), ('2024-01-15', 'nothing');
            CREATE VIEW bossy AS SELECT id, name FROM person WHERE boss IS NULL;
            INSERT INTO person VALUES (1, 'Ada', NULL, 'a"b', '1815-12-10', '{"k": [1, 2]}');

            """
        let tags = ["a\"b", "c\\d", "{x,y}", "NULL", " sp ", "é", ""]
        for i in 2...60 {
            let tag = i % 5 == 0 ? "NULL" : "'" + tags[i % tags.count].replacingOccurrences(of: "'", with: "''") + "'"
            script += "INSERT INTO person VALUES (\(i), 'person \(i)', \(i < 40 ? "1" : String(i / 2)), \(tag), \(i % 3 == 0 ? "NULL" : "'2000-01-\(String(format: "%02d", i % 28 + 1))'"), NULL);\n"
        }
        for i in 1...25 { script += "INSERT INTO badge VALUES (\(i * 7), 'S-\(i)', \(i % 4 == 0 ? "NULL" : String(i % 9 + 1)));\n" }
        for i in 1...40 { script += "INSERT INTO note VALUES (\(i), \(i % 6 == 0 ? "NULL" : "'S-\(i % 5 + 1)'"), \(i % 3 + 1), 'note \(i)');\n" }
        for i in 1...30 { script += "INSERT INTO pair VALUES (\(i % 4), '\(["x", "y,z", "q\\\"r"][i % 3])\(i)', \(i), \(i % 7 + 1));\n" }
        for i in 1...12 { script += "INSERT INTO other.thing VALUES (\(i), \(i % 2 + 1), 'thing \(i)');\n" }
        for i in 1...9 {
            let mood = i % 4 == 0 ? "NULL" : "'\(["sad", "ok", "happy"][i % 3])'"
            let day = ["'2024-03-01'", "'2023-12-31'", "NULL"][i % 3]
            script += "INSERT INTO loose VALUES ('line \(i)', \(i), \(mood), '\(String(repeating: String(10 - i), count: 8))-0000-4000-8000-00000000000\(i)', '{\(i % 3),\(i)}', \(i % 4 == 1 ? "NULL" : String(i % 3 + 1)), \(day));\n"
        }
        XCTAssertEqual(try PostgresServer.psql(url, script), 0)
        return url
    }

    func testChinookPagedScreensAreTheLoadedGraphs() throws {
        let url = try PostgresServer.database(copying: try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite"), named: "paged_chinook")
        let graph = try PostgresDatabase.load(url: url).graph
        for seed in UInt64(1)...4 {
            try walk(graph: graph, pages: try PostgresPages.open(url: url, edgesPerObject: Int(seed % 3) * 5 + 1), seed: seed, count: 120, windowRows: 40)
        }
        try walk(graph: graph, pages: try PostgresPages.open(url: url), seed: 9, count: 120, windowRows: 300)
    }

    /// The tables are listed without their row counts, read off the UI thread while the first
    /// screen is drawn (see ``assertFirstScreenWaitsForNoCount(graph:open:)``).
    func testTheFirstScreenDoesNotWaitForTheCounts() throws {
        let url = try PostgresServer.database(copying: try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite"), named: "paged_chinook")
        try assertFirstScreenWaitsForNoCount(graph: try PostgresDatabase.load(url: url).graph) { try PostgresPages.open(url: url) }
    }

    func testAwkwardTablesPageAsTheyLoad() throws {
        let url = try Self.awkwardDatabase("paged_awkward")
        let graph = try PostgresDatabase.load(url: url).graph
        let pages = try PostgresPages.open(url: url)
        XCTAssertEqual(pages.catalog.map(\.name), graph.types.map(\.name.rawValue))
        XCTAssertEqual(pages.catalog.map(\.count), graph.types.map(\.count))
        XCTAssertEqual(pages.notes.first, "loose keyed by row number (no primary key, or a date key): a window with their links reads the whole table")
        XCTAssertEqual(pages.notes.last, "no index on note.about, badge.holder, loose.who…: their backlinks scan the table")
        for seed in UInt64(1)...8 {
            try walk(graph: graph, pages: try PostgresPages.open(url: url, edgesPerObject: Int(seed % 4) * 3 + 1), seed: seed, count: 150, windowRows: 20)
        }
        // Every type's keys at any positions, paged from any window, are its keys in the load's order.
        assertKeysByPosition(graph: graph, pages: pages, seed: 3, rounds: 15, length: 20, withoutNear: true)
        // A window's objects are the loaded graph's, values and links alike.
        let person = try XCTUnwrap(graph.type(named: "person"))
        let window = try pages.window(keys: [.int(1), .int(41), .int(999)], of: "person")
        XCTAssertNil(window.refs[2])
        for (i, id) in [ObjectID.int(1), .int(41)].enumerated() {
            let ref = try XCTUnwrap(window.refs[i])
            let loaded = try XCTUnwrap(graph.ref(type: person, id: id))
            XCTAssertEqual(window.graph.describe(ref), graph.describe(loaded), "\(id)")
        }
        // Rows of a table without a key, numbered as a load numbers them, with what they name
        // (person 1 above has two of them among its backlinks).
        let rows = try pages.window(keys: [.int(3), .int(7), .int(8)], of: "loose")
        for (i, id) in [ObjectID.int(3), .int(7), .int(8)].enumerated() {
            XCTAssertEqual(rows.graph.describe(try XCTUnwrap(rows.refs[i])), graph.describe(try XCTUnwrap(graph.ref(type: try XCTUnwrap(graph.type(named: "loose")), id: id))))
        }
        // Statements over text, composite and date keys, and through a key that is not the
        // target's: the loaded browser's answers (a date key's rows are listed a chunk at a time).
        let source = PostgresQuerySource(pages: pages)
        for statement in ["daily where note BEGINSWITH \"n\"", "daily where id == 2", "count loose where id > 3", "count daily where day > 2024-01-01", "pair where v > 10 sort by v desc limit 8",
                          "`we\"ird` where n > 1 sort by n desc", "person where tag.label == \"quote\" sort by name",
                          "note where about.holder.name == \"person 2\"", "person where @links.badge.holder.@count > 1 sort by name desc",
                          "badge where @links.note.about.@count > 1 select serial, holder.name"] {
            assertSameAnswer(statement, graph: graph, pages: pages, querySource: source, lines: Self.comparedLines(statement))
        }
        // A view, a table without a key and one keyed by dates are their rows numbered as a load
        // numbers them; uuids, enums and arrays compare as the text a load reads: all SQL.
        for statement in ["daily where note == \"march\"", "bossy where name BEGINSWITH \"A\"", "loose where mood == \"ok\"",
                          "loose where token BEGINSWITH \"4\" OR mood == nil sort by token desc", "count loose where marks CONTAINS \",3\"",
                          "loose where v > 2 sort by mood desc, line limit 3 offset 1 select line, mood, token, marks", "loose group by mood",
                          "count daily where day > 2024-01-01 AND note != nil"] {
            XCTAssertNotNil(try source.answer(try Parser.parse(statement), isCancelled: { false }), statement)
            assertSameAnswer(statement, graph: graph, pages: pages, querySource: source, lines: Self.comparedLines(statement))
        }
        // `F` on text (quotes, accents, the empty string), numeric, date, JSON and key columns,
        // counted by the server or value by value: the loaded browser's tables, and Enter's rows.
        // (An enum, a uuid and an array are grouped by the server as their text.)
        let loose = try XCTUnwrap(pages.catalog.firstIndex { $0.name == "loose" })
        XCTAssertEqual(try pages.frequencies(type: loose, attribute: "mood", limit: 10, isCancelled: { false }),
                       [.string("sad"): 3, .string("happy"): 2, .string("ok"): 2, .null: 2])
        for column in ["token", "marks"] { XCTAssertEqual(try pages.frequencies(type: loose, attribute: column, limit: 10, isCancelled: { false })?.count, 9) }
        for (typeName, columns) in [("we\"ird", 0...2), ("person", 3...5), ("daily", 0...1), ("loose", 2...4)] {
            let t = try XCTUnwrap(pages.catalog.firstIndex { $0.name == typeName })
            for column in columns {
                let whole = Browser(fileLabel: "db", formatName: "PostgreSQL", theme: .monochrome)
                whole.attach(graph)
                let paged = Browser(fileLabel: "db", formatName: "PostgreSQL", theme: .monochrome)
                paged.attachPaged(pages, querySource: source)
                let keys: [Key] = [.backTab] + Array(repeating: .character("j"), count: t) + [.tab]
                    + Array(repeating: .character("l"), count: column) + [.character("F"), .character("j"), .enter, .character("j")]
                XCTAssertTrue(assertSameScreens(whole, paged, keys: keys, "F on \(typeName) column \(column)"))
                // `s`/`S` sort the table on the server, as the loaded browser sorts it.
                try assertSameSort(graph: graph, pages: pages, querySource: source, type: t, column: column, "sort \(typeName) column \(column)")
            }
        }
        // A cut row's links come from the server: totals and keys in key order.
        let cut = try PostgresPages.open(url: url, edgesPerObject: 3)
        let ada = ObjectIdentity(type: TypeName("person"), id: .int(1))
        XCTAssertTrue(try cut.window(keys: [.int(1)], of: "person").cut.contains(ada))
        let bosses = ObjectWindow.Link(relation: "boss", outgoing: false, sourceType: "person")
        XCTAssertEqual(try cut.linkTotals(of: ada)[bosses], 38)
        XCTAssertEqual(try cut.linkKeys(of: ada, link: bosses, range: 5..<9), [.int(7), .int(8), .int(9), .int(10)])
    }

    /// Connections the server drops between reads (a restart, an idle timeout) are replaced: the
    /// next window and statement read as before. A server that is gone is one clear error.
    func testDroppedConnectionsAreReplaced() throws {
        let url = try Self.awkwardDatabase("paged_dropped")
        let pages = try PostgresPages.open(url: url, edgesPerObject: 3)
        let source = PostgresQuerySource(pages: pages)
        func ada() throws -> String {
            let window = try pages.window(keys: [.int(1), .int(2)], of: "person")
            return window.graph.describe(try XCTUnwrap(window.refs[0]))
        }
        let before = try ada()
        guard case .count(let n)? = try source.answer(try Parser.parse("count person where boss.name == \"Ada\""), isCancelled: { false }) else { return XCTFail("a count") }
        let other = try PostgresConnection(url: url)
        // Every other backend is ended; Loupe's are counted (the one of psql that made the
        // database may not have finished ending yet on a loaded machine).
        let killed = try other.query("""
            SELECT count(*) FILTER (WHERE application_name = 'loupe') FROM (SELECT application_name, pg_terminate_backend(pid)
              FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()) t
            """)
        XCTAssertEqual(killed.rows.first?.first, "1", "the pages' one pooled connection")
        XCTAssertEqual(try ada(), before)
        guard case .count(let again)? = try source.answer(try Parser.parse("count person where boss.name == \"Ada\""), isCancelled: { false }) else { return XCTFail("a count") }
        XCTAssertEqual(again, n)
        XCTAssertEqual(n, 38)
        // A database dropped under the session: one error that names the server, not a crash.
        let name = try XCTUnwrap(other.query("SELECT current_database()").rows.first?.first ?? nil)
        withExtendedLifetime(other) {}
        XCTAssertEqual(try PostgresServer.psql(try PostgresServer.url(), "DROP DATABASE \(name) WITH (FORCE);"), 0)
        XCTAssertThrowsError(try pages.window(keys: [.int(3)], of: "person")) { error in
            XCTAssertTrue("\(error)".hasPrefix("cannot read 'postgresql://"), "\(error)")
            XCTAssertTrue("\(error)".contains(name), "\(error)")
        }
    }

    /// Ctrl-C reaches the server: a statement whose cancellation check turns true is cancelled
    /// there (`PQcancel`) within moments, and the connection goes on serving the next one.
    func testAStatementIsCancelledOnTheServer() throws {
        let c = try PostgresConnection(url: try PostgresServer.url())
        let start = Date()
        c.isCancelled = { Date().timeIntervalSince(start) > 0.3 }
        XCTAssertThrowsError(try c.query("SELECT pg_sleep(20)")) { error in XCTAssertEqual("\(error)", "\(QueryError.cancelled)") }
        XCTAssertLessThan(Date().timeIntervalSince(start), 5)
        c.isCancelled = { false }
        XCTAssertEqual(try c.query("SELECT 41 + 1").rows.first?.first, "42")
        c.isCancelled = nil
        XCTAssertEqual(try c.query("SELECT $1::int * 2", ["21"]).rows.first?.first, "42")
    }

    /// Statements in paged mode are answered by PostgreSQL (paths, backlinks, aggregates, sorts,
    /// projections, groups), or on a table's own attributes a chunk at a time when they do not
    /// translate: the loaded browser's screen and answer each time.
    func testStatementsAreAnsweredByTheServer() throws {
        let url = try PostgresServer.database(copying: try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite"), named: "paged_statements")
        let graph = try PostgresDatabase.load(url: url).graph
        let pages = try PostgresPages.open(url: url)
        let source = PostgresQuerySource(pages: pages)
        for statement in [
            "count Track where Milliseconds > 300000", "Track where Album.Artist.Name == \"Iron Maiden\" sort by Name",
            "Album where @links.Track.Album.@count > 20", "InvoiceLine group by Track.Genre.Name", "Invoice where Total > 10 limit 5",
            "Customer sort by Country, LastName select FirstName, LastName, Country", "Employee where ReportsTo.ReportsTo == nil",
            "Track where Nmae == 1", "Track where Milliseconds / 1000 > 600", "Track where Album.AlbumId * 2 > 100", "count Track where Album == #3",
            "Genre where SUBQUERY(@links.Track.Genre, $t, $t.Milliseconds > 400000).@count > 5 sort by Name",
        ] {
            assertSameAnswer(statement, graph: graph, pages: pages, querySource: source, lines: Self.comparedLines(statement))
        }
        // What neither the server nor a chunk at a time can answer needs the whole graph, and says so.
        assertNeedsWholeGraph("Track where Album.Title MATCHES \"A.*\"", pages: pages, querySource: source)
        // `F` counts a column over the table: the loaded browser's table; Enter opens the same rows.
        let whole = Browser(fileLabel: "db", formatName: "PostgreSQL", theme: .monochrome)
        whole.attach(graph)
        let counted = Browser(fileLabel: "db", formatName: "PostgreSQL", theme: .monochrome)
        counted.attachPaged(pages, querySource: source)
        let keys: [Key] = [.backTab, .character("j"), .character("j"), .tab, .character("l"), .character("l"), .character("F"), .character("j"), .enter, .character("j")]
        XCTAssertTrue(assertSameScreens(whole, counted, keys: keys, "F over Album"))
    }
}

/// Editing a PostgreSQL database in paged mode against editing it loaded: the same statements
/// and keys on two copies stage the same changes, and their commits leave the same rows; a row
/// another session changed after the window read it refuses the commit and keeps the edits.
final class PostgresPagedEditingTests: XCTestCase {
    /// Every table's rows as text, table by table, in the order of their text.
    func rows(_ url: String) throws -> [String] {
        let c = try PostgresConnection(url: url)
        let tables = try c.query("SELECT quote_ident(table_name) FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1")
        return try tables.rows.flatMap { row in
            [row[0]!] + (try c.query("SELECT t::text FROM \(row[0]!) t ORDER BY 1").rows.map { $0[0] ?? "" })
        }
    }

    func testChinookEditsInPagedModeCommitWhatLoadedEditsCommit() throws {
        let sqlite = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let loadedURL = try PostgresServer.database(copying: sqlite, named: "edit_loaded")
        let pagedURL = try PostgresServer.database(copying: sqlite, named: "edit_paged")
        let original = try rows(pagedURL)
        let statements = [
            "update Track where Milliseconds > 1500000 set Composer = \"Long\"",
            "update Customer where Country == \"Brazil\" set Fax = nil, Company = \"BR\"",
            "insert Artist {ArtistId: 276, Name: \"Loupe Band\"}",
            "insert Album {AlbumId: 348, Title: \"Loupe Live\", Artist: #276}",
            "insert Genre {GenreId: 25, Name: \"Dup\"}",                 // refused: the key is stored (not yet read)
            "update Album where AlbumId == 5 set Artist = #3",
            "update Track where TrackId <= 5 set UnitPrice = UnitPrice + 1",
            "delete InvoiceLine where InvoiceId == 1",
            "delete Invoice where InvoiceId == 1",
            "delete Track where TrackId == 1",                            // refused: playlists and invoice lines refer to it
            "delete PlaylistTrack where PlaylistId == 18",
            "update Genre where GenreId == 1 set Name = \"'); DROP TABLE \\\"Genre\\\"; --\"",
            ".undo", ".redo", ".undo", ".redo",
        ]
        let (loaded, loadedHost) = try loadedBrowser(postgres: loadedURL)
        let (paged, pagedHost) = pagedBrowser(postgres: try PostgresPages.open(url: pagedURL))
        assertSameStaging(statements, loaded: loaded, paged: paged)
        XCTAssertTrue(paged.replOutput.contains { $0.contains("Genre #25 exists already") }, paged.replOutput.joined(separator: "\n"))
        paged.run(".changes")
        loaded.run(".changes")
        XCTAssertEqual(paged.replOutput.suffix(30), loaded.replOutput.suffix(30))
        XCTAssertEqual(try rows(pagedURL), original, "nothing is written before the commit")
        loaded.run(".commit")
        paged.run(".commit")
        XCTAssertEqual(lastReply(paged), lastReply(loaded))
        XCTAssertTrue(lastReply(paged).hasPrefix("committed:"), lastReply(paged))
        XCTAssertEqual(try rows(pagedURL), try rows(loadedURL))
        XCTAssertNotEqual(try rows(pagedURL), original)
        // The catalog follows the commit: one artist and one album more, one invoice fewer.
        let catalog = Dictionary(uniqueKeysWithValues: pagedHost.pages.catalog.map { ($0.name, $0.count) })
        XCTAssertEqual([catalog["Artist"], catalog["Album"], catalog["Invoice"]], [276, 348, 411])
        withExtendedLifetime((loadedHost, pagedHost)) {}
    }

    func testAChangedRowRefusesTheCommitAndKeepsTheEdits() throws {
        let url = try PostgresServer.database(copying: try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite"), named: "edit_conflict")
        let (paged, host) = pagedBrowser(postgres: try PostgresPages.open(url: url))
        paged.run("update Genre where GenreId == 2 set Name = \"Jazz!\"")
        XCTAssertEqual(pendingPart(paged), "pending +0 ~1 -0")
        let other = try PostgresConnection(url: url)
        _ = try other.query("BEGIN READ WRITE")
        XCTAssertEqual(try other.execute("UPDATE \"Genre\" SET \"Name\" = 'Cool Jazz' WHERE \"GenreId\" = 2"), 1)
        _ = try other.query("COMMIT")
        paged.run(".commit")
        XCTAssertTrue(paged.replOutput.joined(separator: "\n").contains("Genre #2.Name is Cool Jazz in the database, Jazz when loaded"), paged.replOutput.suffix(3).joined(separator: "\n"))
        XCTAssertEqual(pendingPart(paged), "pending +0 ~1 -0", "the edits stay pending")
        XCTAssertEqual(try other.query("SELECT \"Name\" FROM \"Genre\" WHERE \"GenreId\" = 2").rows.first?.first, "Cool Jazz")
        // Reloaded, the edit applies to the row as it is now and commits.
        paged.run(".reload")
        paged.run(".commit")
        XCTAssertTrue(lastReply(paged).hasPrefix("committed: 0 added, 1 changed"), paged.replOutput.suffix(3).joined(separator: "\n"))
        XCTAssertEqual(try other.query("SELECT \"Name\" FROM \"Genre\" WHERE \"GenreId\" = 2").rows.first?.first, "Jazz!")
        withExtendedLifetime(host) {}
    }
}
