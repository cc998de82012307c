import Foundation
import GRDB
import LoupeStore
import LoupeTestSupport
import XCTest

/// The built `loupe` binary, run as a user would, compared by its output and exit status.
final class CLITests: XCTestCase {
    /// `.build/…/debug/loupe`, beside the test bundle.
    static var binary: URL {
        _ = LoupeBinary.cacheDirectory   // never the user's ~/.cache
        var dir = Bundle.main.bundleURL
        if dir.pathExtension == "xctest" { dir.deleteLastPathComponent() }
        for candidate in [dir, Bundle(for: CLITests.self).bundleURL.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("loupe")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return dir.appendingPathComponent("loupe")
    }

    struct Run { let status: Int32; let stdout: String; let stderr: String }

    @discardableResult
    func loupe(_ arguments: [String], stdin: String? = nil) throws -> Run {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = arguments
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    /// A Core Data store whose whole load is over the memory budget is read a page at a time:
    /// `schema` from its windows, statements on an entity's own attributes by the engine a chunk
    /// at a time and paths through relationships by SQL (the loaded answers), the REPL and the
    /// browser in paged mode; what needs the whole graph, and edits of its read-only entities,
    /// are refused as such.
    func testACoreDataStoreOverTheBudgetIsReadAPageAtATime() throws {
        let path = try Shared.copy("realdata/coredata/apple_recipes/Recipes.sqlite")
        let loaded = try loupe(["schema", path]), paged = try loupe(["schema", path, "--memory-budget", "1K"])
        XCTAssertEqual(paged.status, 0, paged.stderr)
        XCTAssertTrue(paged.stdout.hasPrefix("Recipes.sqlite: Core Data store, 4 types, 50 objects (over the 1 KB memory budget: read a page at a time)"), paged.stdout)
        XCTAssertEqual(paged.stdout.split(separator: "\n").dropFirst(), loaded.stdout.split(separator: "\n").dropFirst())
        for statement in ["Ingredient where name CONTAINS[c] \"sugar\" sort by amount", "count Recipe where overview != nil",
                          "Ingredient group by amount limit 3", "RecipeType sort by name desc select name",
                          "Ingredient where recipe.name BEGINSWITH \"C\" sort by name select name, recipe.name",
                          "Recipe where @links.Ingredient.recipe.@count > 3 select name, @links.Ingredient.recipe.@count", "Recipe group by type.name",
                          "Ingredient where recipe == nil", "count Ingredient where recipe IN {#1, #2}"] {
            let whole = try loupe(["query", path, statement, "--format", "json"])
            let chunked = try loupe(["query", path, statement, "--format", "json", "--memory-budget", "1K"])
            XCTAssertEqual(chunked.status, 0, chunked.stderr)
            XCTAssertEqual(chunked.stdout, whole.stdout, statement)
        }
        let through = try loupe(["query", path, "Ingredient where recipe < #3", "--memory-budget", "1K"])
        XCTAssertEqual(through.status, 1)
        XCTAssertTrue(through.stderr.contains("over the 1 KB memory budget, and SQL cannot answer this statement exactly over a Core Data store (SQLite over Core Data's Z tables leaves objects compared otherwise than with keys, ")
                      && through.stderr.contains("and the chunks cannot answer it (SQL cannot answer the part of the filter through relations (recipe < #3))"), through.stderr)
        let edit = "update Recipe where name == \"Chocolate Cake\" set name = \"x\""
        let refused = try loupe(["query", path, edit, "--memory-budget", "1K"]), refusedLoaded = try loupe(["query", path, edit])
        XCTAssertEqual(refused.status, 2)
        XCTAssertEqual(refused.stderr, refusedLoaded.stderr)
        XCTAssertTrue(refused.stderr.contains("Recipe is read-only"), refused.stderr)
        let lines = "count Ingredient\nIngredient where name BEGINSWITH \"S\" select name\n"
        let repl = try loupe(["repl", path, "--memory-budget", "1K"], stdin: lines)
        XCTAssertEqual(repl.status, 0, repl.stderr)
        XCTAssertEqual(repl.stdout, try loupe(["repl", path], stdin: lines).stdout)
        let script = try Shared.temporaryPath("follow.play")
        try "j l l <Enter>".write(toFile: script, atomically: true, encoding: .utf8)
        let browsed = try loupe(["browse", path, "--play", script, "--memory-budget", "1K", "--size", "120x24"])
        let whole = try loupe(["browse", path, "--play", script, "--size", "120x24"])
        XCTAssertTrue(browsed.stdout.split(separator: "\n").last?.contains("paged · a whole load") == true, browsed.stdout)
        XCTAssertEqual(browsed.stdout.split(separator: "\n").dropLast(), whole.stdout.split(separator: "\n").dropLast())
    }

    /// A Persist member whose name's bytes are no UTF-8 reads with U+FFFD in their place, which a
    /// JSON path would name instead of the bytes: SQL over the file leaves it to the engine, and
    /// the answer over the budget is the loaded one (found by the file fuzzer).
    func testAMemberNamedByBytesThatAreNoUTF8IsAnsweredAsLoaded() throws {
        let path = try HostileFiles.make("bytes.sqlite") { db in
            try HostileFiles.persistSchema(db)
            try db.execute(sql: #"INSERT INTO by_type VALUES (1, 'Publisher', CAST(X'7B226E616DC1223A2250656E6775696E227D' AS TEXT)), (2, 'Publisher', '{"name": "Gallimard"}'), (3, 'Book', '{"title": "A"}'), (4, 'Book', '{"title": "B"}')"#)
            try db.execute(sql: "INSERT INTO relations VALUES (3, 1, 'publisher'), (4, 2, 'publisher')")
        }
        let statement = "count Book where publisher.`nam\u{FFFD}` != nil"
        let loaded = try loupe(["query", path, statement])
        XCTAssertEqual(loaded.stdout, "1\n", loaded.stderr)
        for options in [["--memory-budget", "1K"], ["--engine", "sql"]] {
            let over = try loupe(["query", path, statement] + options)
            XCTAssertEqual(over.stdout, loaded.stdout, "\(options): \(over.stderr)")
        }
    }

    /// A plain file with a `WITHOUT ROWID` table over the budget: paths into it and backlinks
    /// from it are SQL's (the loaded answers), chunks answer its own columns, and a statement
    /// on it that reads relations is refused in one line saying why, nothing loaded.
    func testATableWithoutARowidOverTheBudget() throws {
        let path = try HostileFiles.make("without-rowid.sqlite") { db in
            try db.execute(sql: """
                CREATE TABLE author (code TEXT PRIMARY KEY, name TEXT) WITHOUT ROWID;
                CREATE TABLE book (id INTEGER PRIMARY KEY, title TEXT, author TEXT REFERENCES author(code));
                INSERT INTO author VALUES ('b2', 'Bob'), ('a1', 'Ann');
                INSERT INTO book VALUES (1, 'X', 'a1'), (2, 'Y', 'b2'), (3, 'Z', 'a1');
                """)
        }
        for statement in ["count book where author.name == \"Ann\"", "book where author.name BEGINSWITH \"B\" select title, author.name",
                          "author where name != \"Bob\""] {
            let over = try loupe(["query", path, statement, "--format", "json", "--memory-budget", "1K"])
            XCTAssertEqual(over.status, 0, over.stderr)
            XCTAssertEqual(over.stdout, try loupe(["query", path, statement, "--format", "json"]).stdout, statement)
        }
        let refused = try loupe(["query", path, "author where @links.book.author.@count > 1", "--memory-budget", "1K"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("relations read from a view or a table without a rowid"), refused.stderr)
    }

    func testConformanceThroughTheCommandLine() throws {
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let url = Shared.root.appendingPathComponent("conformance/chinook.tsv")
        var count = 0
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        for line in lines {
            let parts = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3 else { XCTFail("malformed conformance line: \(line)"); continue }
            let run = try loupe(["query", chinook, parts[0], "--format", "json"])
            XCTAssertEqual(run.status, 0, parts[0] + run.stderr)
            let got = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8), options: [.fragmentsAllowed])
            let expected = try JSONSerialization.jsonObject(with: Data(parts[2].utf8), options: [.fragmentsAllowed]) as! NSObject
            switch parts[1] {
            case "ids": XCTAssertEqual((got as! [[String: Any]]).map { $0["id"] as! NSNumber } as NSArray, expected, parts[0])
            case "idset":
                XCTAssertEqual(Set((got as! [[String: Any]]).map { $0["id"] as! NSNumber }), Set(expected as! [NSNumber]), parts[0])
            default: XCTAssertEqual(got as! NSObject, expected, parts[0])
            }
            count += 1
        }
        XCTAssertEqual(count, lines.count, "every case ran")
        XCTAssertGreaterThanOrEqual(count, 26)
    }

    func testTypesCountsEqualSQLCounts() throws {
        // Chinook: one type per table, each with the table's count(*), computed here by SQL.
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let expected = try DatabaseQueue(path: chinook).read { db in
            try Dictionary(uniqueKeysWithValues: String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
                .map { ($0, try Int.fetchOne(db, sql: "SELECT count(*) FROM \"\($0)\"")!) })
        }
        let run = try loupe(["types", chinook, "--format", "json"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let items = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as! [[String: Any]]
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: items.map { ($0["name"] as! String, $0["count"] as! Int) }), expected)
        // Persist: one type per type_name, with its count of by_type rows.
        let persist = try Shared.copy("fixtures/seed-formats/persist.sqlite")
        let persistExpected = try DatabaseQueue(path: persist).read { db in
            try Dictionary(uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT type_name, count(*) FROM by_type GROUP BY type_name").map { ($0[0] as String, $0[1] as Int) })
        }
        let persistRun = try loupe(["types", persist, "--format", "json"])
        let persistItems = try JSONSerialization.jsonObject(with: Data(persistRun.stdout.utf8)) as! [[String: Any]]
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: persistItems.map { ($0["name"] as! String, $0["count"] as! Int) }), persistExpected)
    }

    /// `loupe types` reads the catalog without loading the graph: it must list what a load
    /// finds, in the same order, on every kind of store.
    func testTypesFromTheCatalogEqualTheLoadedGraph() throws {
        let sample = try Shared.temporaryPath("indexed.sqlite")
        try SampleGenerator.generate(path: sample, objects: 500, seed: 4)   // with Loupe's type_name index
        let files = [sample, try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite"), try Shared.copy("realdata/northwind/northwind_w3schools.db3"),
                     try Shared.copy("realdata/coredata/apple_recipes/Recipes.sqlite"), try Shared.copy("fixtures/seed-formats/persist.sqlite"),
                     try Shared.copy("fixtures/seed-formats/swiftserialization.sqlite"), try HostileFiles.oddTypeNames()]
        for file in files {
            let graph = try LoadedStore.open(file).graph
            let run = try loupe(["types", file, "--format", "json"])
            XCTAssertEqual(run.status, 0, run.stderr)
            let items = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as! [[String: Any]]
            XCTAssertEqual(items.map { "\($0["name"]!) \($0["count"]!)" }, graph.types.map { "\($0.name.rawValue) \($0.count)" }, file)
        }
    }

    /// The benches check that Loupe and SQLite gave one answer before they print a ratio.
    func testBenchesCompareAnswersWithSQLite() throws {
        let sample = try Shared.temporaryPath("bench.sqlite")
        try SampleGenerator.generate(path: sample, objects: 2_000, seed: 11)
        let query = try loupe(["bench", "query", sample, "--runs", "1"])
        XCTAssertEqual(query.status, 0, query.stdout + query.stderr)
        // Five questions, in memory, one-shot and through the SQL engine, each answer checked.
        XCTAssertEqual(query.stdout.components(separatedBy: "   yes").count - 1, 15, query.stdout)
        XCTAssertTrue(query.stdout.contains("SQL engine (loupe query --engine sql) over the indexed relational copy"), query.stdout)
        XCTAssertFalse(query.stdout.contains(" NO"), query.stdout)
        let before = Shared.fingerprint(sample)
        let edit = try loupe(["bench", "edit", sample])
        XCTAssertEqual(edit.status, 0, edit.stdout + edit.stderr)
        XCTAssertTrue(edit.stdout.contains("same values in both:    yes"), edit.stdout)
        let pagedEdit = try loupe(["bench", "edit", sample, "--paged", "--below", "20"])
        XCTAssertEqual(pagedEdit.status, 0, pagedEdit.stdout + pagedEdit.stderr)
        XCTAssertTrue(pagedEdit.stdout.contains("same values in both:    yes"), pagedEdit.stdout)
        XCTAssertFalse(pagedEdit.stdout.contains("objects changed:        loupe 0,"), pagedEdit.stdout)
        XCTAssertEqual(Shared.fingerprint(sample), before, "the bench edits copies, never the store")
        // Paged mode's bench, on a Persist store and on a plain SQLite file of the same library:
        // the five questions answered over the file and one in chunks, each checked against
        // sqlite3's answer.
        let relational = try Shared.fixture("make_relational_library.py", "library-relational.sqlite", ["--rows", "21000"])
        for (path, baseline) in [(sample, "json_extract"), (relational, "indexed SQL")] {
            let paged = try loupe(["bench", "paged", path, "--pages", "20", "--follows", "10"])
            XCTAssertEqual(paged.status, 0, paged.stdout + paged.stderr)
            XCTAssertEqual(paged.stdout.components(separatedBy: "   yes").count - 1, 6, paged.stdout)
            XCTAssertTrue(paged.stdout.contains("in chunks (arithmetic)"), paged.stdout)
            XCTAssertTrue(paged.stdout.contains("next session   sqlite3 \(baseline)"), paged.stdout)
            XCTAssertTrue(paged.stdout.contains("peak memory:"), paged.stdout)
        }
    }

    func testBadInputIsOneLineAndNonZero() throws {
        let missing = try loupe(["types", "/nonexistent/file.sqlite"])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertEqual(missing.stderr, "Error: cannot open '/nonexistent/file.sqlite': no such file\n")
        let text = try Shared.temporaryPath("notes.txt")
        try Data("plain text".utf8).write(to: URL(fileURLWithPath: text))
        let notDB = try loupe(["schema", text])
        XCTAssertNotEqual(notDB.status, 0)
        XCTAssertEqual(notDB.stderr, "Error: cannot open '\(text)': not a SQLite database\n")
        XCTAssertEqual(try String(contentsOfFile: text, encoding: .utf8), "plain text")

        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let before = FileManager.default.contents(atPath: chinook)
        let bad = try loupe(["query", chinook, "Track where Nmae == 'x'"])
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.stderr.hasPrefix("error: unknown attribute 'Nmae' on Track\n --> 1:13\n"), bad.stderr)
        XCTAssertEqual(bad.stdout, "")
        XCTAssertEqual(FileManager.default.contents(atPath: chinook), before)
        let unknownType = try loupe(["show", chinook, "Trak", "1"])
        XCTAssertNotEqual(unknownType.status, 0)
        XCTAssertTrue(unknownType.stderr.contains("did you mean 'Track'?"), unknownType.stderr)
    }

    /// `--as` and `--no-inferred-relations` on the command line: a framework store by model names,
    /// its raw tables on demand, a forced format refused with one line, inference switched off;
    /// a Couchbase Lite folder opens as a store.
    func testQueryEngines() throws {
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        for statement in ["Track where Album.Artist.Name == \"AC/DC\" sort by Name limit 4", "count Track where @links.InvoiceLine.Track.@count == 0",
                          "Customer group by SupportRep.LastName", "Album where @links.Track.Album.Milliseconds.@sum > 5000000 select Title, Artist.Name"] {
            for format in ["json", "table", "csv"] {
                let sql = try loupe(["query", chinook, statement, "--engine", "sql", "--format", format])
                let memory = try loupe(["query", chinook, statement, "--engine", "memory", "--format", format])
                XCTAssertEqual(sql.status, 0, sql.stderr)
                XCTAssertEqual(sql.stdout, memory.stdout, "\(statement) as \(format)")
            }
        }
        // What SQL cannot say exactly (arithmetic on both sides, where SQL's NULL would stand for
        // the engine's NaN too): refused with --engine sql, answered in memory by auto.
        let arithmetic = "count Track where Milliseconds / 1000 > Milliseconds / 2000 + 300"
        let refused = try loupe(["query", chinook, arithmetic, "--engine", "sql"])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("SQL cannot answer this statement exactly"), refused.stderr)
        XCTAssertEqual(try loupe(["query", chinook, arithmetic]).stdout, "260\n")
        // A Persist store and a Core Data store: answered by SQL over the file; a framework
        // store SQL does not read (PersistDB) is not.
        let library = try Shared.copyFromCheckout("sample-data/library.sqlite")
        let persist = try loupe(["query", library, "count Book where author.born < 1950", "--engine", "sql"])
        XCTAssertEqual(persist.status, 0, persist.stderr)
        XCTAssertEqual(persist.stdout, try loupe(["query", library, "count Book where author.born < 1950", "--engine", "memory"]).stdout)
        let recipes = try Shared.copy("realdata/coredata/apple_recipes/Recipes.sqlite")
        for statement in ["count Recipe", "count Ingredient where recipe.name BEGINSWITH \"C\"", "Recipe where type.name != nil sort by name select name, type.name"] {
            let sql = try loupe(["query", recipes, statement, "--engine", "sql", "--format", "json"])
            XCTAssertEqual(sql.status, 0, sql.stderr)
            XCTAssertEqual(sql.stdout, try loupe(["query", recipes, statement, "--engine", "memory", "--format", "json"]).stdout, statement)
        }
        // A parent entity's objects include its subentities', printed as theirs.
        let notes = try Shared.fixture("make_coredata_fixture.py", "notes.sqlite")
        for statement in ["Item where folder.name != nil sort by title", "Note where id > 2"] {
            for format in ["json", "csv"] {
                let sql = try loupe(["query", notes, statement, "--engine", "sql", "--format", format])
                XCTAssertEqual(sql.status, 0, sql.stderr)
                XCTAssertEqual(sql.stdout, try loupe(["query", notes, statement, "--engine", "memory", "--format", format]).stdout, statement)
            }
        }
        // A Note's body and a Sketch's are two columns.
        let twoColumns = try loupe(["query", notes, "count Item where body != nil", "--engine", "sql"])
        XCTAssertNotEqual(twoColumns.status, 0)
        XCTAssertTrue(twoColumns.stderr.contains("SQL cannot answer this statement exactly over a Core Data store ("), twoColumns.stderr)
        XCTAssertEqual(try loupe(["query", notes, "count Folder where nme == 1", "--engine", "sql"]).status, 2)
        let persistDB = try loupe(["query", try Shared.copy("fixtures/seed-formats/persistdb.sqlite"), "count Book", "--engine", "sql"])
        XCTAssertNotEqual(persistDB.status, 0)
        XCTAssertTrue(persistDB.stderr.contains("a document store has no SQL that answers statements (SQL answers over a Persist file, a relational SQLite file, a Core Data store, a PostgreSQL database and Persist's layout in PostgreSQL)"), persistDB.stderr)
        // A misspelt name reads the same from either engine.
        let misspelt = try loupe(["query", chinook, "Track where Nmae == 1", "--engine", "sql"])
        XCTAssertEqual(misspelt.status, 2)
        XCTAssertEqual(misspelt.stderr, try loupe(["query", chinook, "Track where Nmae == 1", "--engine", "memory"]).stderr)
        XCTAssertNotEqual(try loupe(["query", chinook, "delete Track where TrackId == 1", "--engine", "sql", "--commit"]).status, 0)
    }

    /// `loupe … postgres://…`: the same commands on a PostgreSQL database holding Chinook, with the
    /// SQLite file's answers; edits previewed and written; a bad address is one line, exit 1.
    /// A PostgreSQL database whose whole load is over the memory budget is never loaded: the REPL
    /// and `loupe query` answer statements in PostgreSQL (printing what the loaded REPL prints),
    /// and refuse with one line what needs the whole graph; edits are staged over the rows they
    /// name and written in one transaction; the browser pages it.
    func testPostgresOverTheBudget() throws {
        let sqlite = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let url = try PostgresServer.database(copying: sqlite, named: "budget")
        // (`MATCHES` is answered by the engine a chunk of rows at a time: PostgreSQL does not say it as the engine means it.)
        let statements = "count Genre\nTrack where Album.Artist.Name == \"AC/DC\" sort by Name limit 3\nCustomer group by Country limit 4\n"
            + "Invoice where Customer.Country == \"USA\" AND Total > 15 select InvoiceId, Total\nTrack where Nmae == 1\n"
            + "count Track where Milliseconds / 1000 > 600\nTrack where Milliseconds / 1000 > 1500 limit 2 offset 1\nCustomer where Email MATCHES \".*@gmail\\\\.com\"\n"
            + "Track where Milliseconds / 1000 > 1500 sort by Name desc limit 3 select Name, Milliseconds / 60000 as minutes\n"
            + "Track where Bytes / 1000000 > 300 group by Composer\n"
            + "Track where Album.Artist.Name == \"Iron Maiden\" AND Milliseconds / 1000 > 400 sort by Name limit 3 select Name\n"
        for format in ["table", "json"] {
            let loaded = try loupe(["repl", url, "--format", format], stdin: statements)
            let over = try loupe(["repl", url, "--format", format, "--memory-budget", "1K"], stdin: statements)
            XCTAssertEqual(over.stdout, loaded.stdout, format)
            XCTAssertEqual(over.stderr, loaded.stderr, format)
            XCTAssertEqual(over.status, loaded.status, format)
        }
        let refusals = try loupe(["repl", url, "--memory-budget", "1K"],
                                 stdin: ".types\nTrack where Album.Title MATCHES \"A.*\" sort by Name\nupdate Genre where GenreId == 1 set Name = \"x\"\n.changes\n.rollback\n.quit\n")
        XCTAssertTrue(refusals.stdout.contains("Track") && refusals.stdout.contains("3503"), refusals.stdout)
        XCTAssertTrue(refusals.stderr.contains("this one needs the whole graph"), refusals.stderr)
        // Edits are staged over the rows they name, read by key, and shown before anything is written.
        XCTAssertTrue(refusals.stdout.contains(#"UPDATE "public"."Genre" SET "Name" = 'x' WHERE "GenreId" = 1;"#), refusals.stdout)
        XCTAssertEqual(refusals.status, 1)
        let pushed = try loupe(["query", url, "Customer group by Country limit 4", "--memory-budget", "1K"])
        XCTAssertEqual(pushed.stdout, try loupe(["query", url, "Customer group by Country limit 4"]).stdout)
        for statement in ["count Track where Milliseconds / 1000 > 600", "Track where Milliseconds / 1000 > 1500 limit 2 offset 1",
                          "Track where Milliseconds / 1000 > 600 sort by Name",
                          "count Track where ANY @links.PlaylistTrack.Track.Playlist.Name == \"Music\" AND Bytes / Milliseconds > 40",
                          // Past bigint's range on the server (the engine goes on in doubles): the chunks answer it.
                          "count Track where Bytes * Bytes * Bytes > 1e26", "Customer where Email MATCHES \".*@gmail\\\\.com\" select Email"] {
            let chunked = try loupe(["query", url, statement, "--memory-budget", "1K", "--format", "json"])
            XCTAssertEqual(chunked.stdout, try loupe(["query", url, statement, "--format", "json"]).stdout, statement)
            XCTAssertEqual(chunked.status, 0, chunked.stderr)
        }
        let refused = try loupe(["query", url, "Track where Album.Title MATCHES \"A.*\" sort by Name", "--memory-budget", "1K"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("is over the 1 KB memory budget"), refused.stderr)
        let name = "Genre where GenreId == 1 select Name"
        let shown = try loupe(["query", url, "update Genre where GenreId == 1 set Name = \"x\"", "--memory-budget", "1K"])
        XCTAssertTrue(shown.stdout.contains("nothing written: run again with --commit"), shown.stdout)
        XCTAssertEqual(try loupe(["query", url, name, "--format", "csv"]).stdout, "Name\r\nRock\r\n", "nothing was written")
        // Committed in one transaction, from `loupe query` and from the REPL.
        let written = try loupe(["query", url, "update Genre where GenreId == 1 set Name = \"Rock & Roll\"", "--memory-budget", "1K", "--commit"])
        XCTAssertTrue(written.stdout.contains("committed: 0 added, 1 changed, 0 deleted"), written.stdout + written.stderr)
        XCTAssertEqual(try loupe(["query", url, name, "--format", "csv"]).stdout, "Name\r\nRock & Roll\r\n")
        let repl = try loupe(["repl", url, "--memory-budget", "1K"], stdin: """
            update Genre where GenreId == 1 set Name = "Rock"
            insert Genre { GenreId: 26, Name: "Polka" }
            delete Genre where GenreId == 26
            insert Genre { GenreId: 27, Name: "Ska" }
            .commit
            count Genre
            delete Genre where GenreId == 27
            .commit

            """)
        XCTAssertEqual(repl.status, 0, repl.stderr)
        XCTAssertTrue(repl.stdout.contains("committed: 1 added, 1 changed, 0 deleted") && repl.stdout.contains("\n26\n"), repl.stdout)
        XCTAssertEqual(try loupe(["query", url, name, "--format", "csv"]).stdout, "Name\r\nRock\r\n")
        XCTAssertEqual(try loupe(["query", url, "count Genre"]).stdout, "25\n")
        // The browser pages it, and says so.
        let script = try Shared.temporaryPath("budget.play")
        try "j\n:count Track where Album.Artist.Name == \"AC/DC\"\n".write(toFile: script, atomically: true, encoding: .utf8)
        let browsed = try loupe(["browse", url, "--play", script, "--memory-budget", "1K", "--size", "120x30"])
        XCTAssertEqual(browsed.status, 0, browsed.stderr)
        XCTAssertTrue(browsed.stdout.contains("paged · a whole load (≈"), browsed.stdout)
        XCTAssertTrue(browsed.stdout.contains("│18 "), browsed.stdout)
        XCTAssertTrue(browsed.stdout.hasPrefix(" Album › Album #2"), browsed.stdout)
    }

    func testPostgresOnTheCommandLine() throws {
        let sqlite = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let url = try PostgresServer.database(copying: sqlite, named: "cli")
        for statement in ["Track where Album.Artist.Name == \"AC/DC\" sort by Name limit 3", "Customer group by Country limit 4",
                          "count Invoice where Customer.Country == \"USA\" AND Total > 10"] {
            let postgres = try loupe(["query", url, statement, "--format", "json"])
            XCTAssertEqual(postgres.status, 0, postgres.stderr)
            XCTAssertEqual(postgres.stdout, try loupe(["query", sqlite, statement, "--format", "json"]).stdout, statement)
        }
        let types = try loupe(["types", url, "--format", "json"])
        XCTAssertTrue(types.stdout.contains("{\"name\": \"Track\", \"count\": 3503}"), types.stdout)
        let show = try loupe(["show", url, "Album", "1"])
        XCTAssertTrue(show.stdout.contains("Artist    → Artist #1"), show.stdout)
        let schema = try loupe(["schema", url])
        XCTAssertTrue(schema.stdout.hasPrefix("postgresql://") && schema.stdout.contains("PostgreSQL store, 11 types, 15607 objects"), schema.stdout)
        let repl = try loupe(["repl", url], stdin: "count Genre\n.quit\n")
        XCTAssertEqual(repl.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "25", repl.stderr)
        // Edits: shown, then written with --commit in one transaction; views stay read-only.
        let preview = try loupe(["query", url, "update Genre where GenreId == 1 set Name = \"Rock'n'Roll\""])
        XCTAssertEqual(preview.status, 0, preview.stderr)
        XCTAssertTrue(preview.stdout.contains(#"UPDATE "public"."Genre" SET "Name" = 'Rock''n''Roll' WHERE "GenreId" = 1;"#), preview.stdout)
        XCTAssertTrue(preview.stdout.contains("nothing written"), preview.stdout)
        XCTAssertEqual(try loupe(["query", url, "Genre where GenreId == 1 select Name", "--format", "csv"]).stdout, "Name\r\nRock\r\n")
        let edit = try loupe(["query", url, "update Genre where GenreId == 1 set Name = \"Rock'n'Roll\"", "--commit"])
        XCTAssertEqual(edit.status, 0, edit.stderr)
        XCTAssertTrue(edit.stdout.contains("committed: 0 added, 1 changed, 0 deleted (1 statement"), edit.stdout)
        XCTAssertEqual(try loupe(["query", url, "Genre where GenreId == 1 select Name", "--format", "csv"]).stdout, "Name\r\nRock'n'Roll\r\n")
        // The browser commits to PostgreSQL the same way (Ctrl-S shows the writes, Enter writes them).
        let script = try Shared.temporaryPath("commit.play")
        try ":update Genre where GenreId == 2 set Name = \"Jazzy\"\n<Esc>\n<C-s>\n<Enter>\n".write(toFile: script, atomically: true, encoding: .utf8)
        let browsed = try loupe(["browse", url, "--play", script, "--size", "120x40"])
        XCTAssertEqual(browsed.status, 0, browsed.stderr)
        XCTAssertTrue(browsed.stdout.contains("committed: 0 added, 1 changed"), browsed.stdout)
        XCTAssertEqual(try loupe(["query", url, "Genre where GenreId == 2 select Name", "--format", "csv"]).stdout, "Name\r\nJazzy\r\n")
        let refusedDelete = try loupe(["query", url, "delete Genre where GenreId == 1", "--commit"])
        XCTAssertEqual(refusedDelete.status, 2, refusedDelete.stdout)
        XCTAssertTrue(refusedDelete.stderr.contains("cannot delete"), refusedDelete.stderr)
        let unreachable = try loupe(["query", "postgresql://someone:s3cret@127.0.0.1:1/nothing", "count Track"])
        XCTAssertEqual(unreachable.status, 1)
        XCTAssertTrue(unreachable.stderr.hasPrefix("Error: cannot read 'postgresql://someone@127.0.0.1:1/nothing': "), unreachable.stderr)
        XCTAssertFalse(unreachable.stderr.contains("s3cret"))
    }

    /// `loupe query postgres://…` on Persist's layout in PostgreSQL (`jsonb`): the file's answers,
    /// an edit previewed as Persist's document rewrite and written with `--commit`.
    func testPersistLayoutInPostgresOnTheCommandLine() throws {
        let sqlite = try Shared.temporaryPath("library.sqlite")
        XCTAssertEqual(try loupe(["sample", sqlite, "--objects", "1200"]).status, 0)
        let url = try PostgresServer.persistDatabase(copying: sqlite, named: "cli_persist", documentType: "jsonb")
        for statement in ["count Loan where book.author.born < 1920", "Book group by language limit 3",
                          "Author where @links.Book.author.@count > 2 sort by name, id limit 4 select name, born"] {
            let postgres = try loupe(["query", url, statement, "--format", "json"])
            XCTAssertEqual(postgres.status, 0, postgres.stderr)
            XCTAssertEqual(postgres.stdout, try loupe(["query", sqlite, statement, "--format", "json"]).stdout, statement)
        }
        let first = try loupe(["query", url, "Book sort by id limit 1 select id", "--format", "csv"]).stdout
        let id = try XCTUnwrap(first.split(separator: "\r\n").last.map(String.init))
        let edit = try loupe(["query", url, "update Book where id == \(id) set pages = 4321", "--commit"])
        XCTAssertEqual(edit.status, 0, edit.stderr)
        XCTAssertTrue(edit.stdout.contains(#"UPDATE "public"."by_type" SET "json" = "#) && edit.stdout.contains("committed: 0 added, 1 changed"), edit.stdout)
        XCTAssertEqual(try loupe(["query", url, "Book where id == \(id) select pages", "--format", "csv"]).stdout, "pages\r\n4321\r\n")
        // Over the memory budget: read a page at a time, answered and edited as when loaded.
        try assertReplOverTheBudgetAnswersAsLoaded(url, script: """
            count Book
            Author where @links.Book.author.@count > 2 sort by name, id limit 4 select name, born
            update Book where id == \(id) set pages = 99, note = "new"
            .changes
            .rollback

            """)
        let keys = try Shared.temporaryPath("keys.play")
        try "<S-Tab> j j j <Tab>\n".write(toFile: keys, atomically: true, encoding: .utf8)
        let browsed = try loupe([url, "--memory-budget", "1K", "--play", keys, "--size", "120x30"])
        XCTAssertEqual(browsed.status, 0, browsed.stderr)
        XCTAssertTrue(browsed.stdout.contains("┌ Book (") && browsed.stdout.contains("paged · a whole load"), browsed.stdout)
        for statement in ["count Loan where book.author.born < 1920", "Author where @links.Book.author.@count > 2 sort by name, id limit 4",
                          "Book where pages > 300 sort by title, id limit 3 select title, author.name",
                          // Arithmetic on members of integers: PostgreSQL (a member mixing kinds, or `MATCHES`: the engine a chunk of documents at a time).
                          "count Book where pages * 2 > 700", "Book where pages * 2 > 700 limit 3 offset 1", "Book where pages * 2 > 10 sort by title, id limit 5",
                          "Book where pages * 2 > 700 sort by pages desc, id select title, pages / 10 as tens", "Book where pages * 2 > 700 group by language",
                          "count Book where author.born < 1950 AND pages * 2 > 700", "Book where @links.Loan.book.@count > 1 AND pages * 2 > 700 sort by title, id limit 3",
                          "Book where author.born * 2 > 10 sort by title", "count Book where author == nil OR pages * 2 > 1990",
                          // Through relations beside `MATCHES`: PostgreSQL answers those parts, the chunks the rest.
                          "count Book where author.born < 1950 AND title MATCHES \".*e.*\"", "Book where @links.Loan.book.@count > 1 AND title MATCHES \"[A-M].*\" sort by title, id limit 3"] {
            // (Compared with the database loaded: `jsonb` keeps a document's members in its own order.)
            let paged = try loupe(["query", url, statement, "--format", "json", "--memory-budget", "1K"])
            XCTAssertEqual(paged.status, 0, paged.stderr)
            XCTAssertEqual(paged.stdout, try loupe(["query", url, statement, "--format", "json", "--engine", "memory"]).stdout, statement)
        }
        let refused = try loupe(["query", url, "Book where author.name MATCHES \"A.*\" sort by title", "--memory-budget", "1K"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("SQL cannot answer this statement exactly over Persist's layout in PostgreSQL (PostgreSQL over Persist's layout in PostgreSQL leaves documents other than jsonb, members of mixed kinds"), refused.stderr)
        let arithmetic = try loupe(["repl", url, "--memory-budget", "1K"], stdin: "Book where author.name MATCHES \"A.*\" sort by title\n")
        XCTAssertTrue(arithmetic.stderr.contains("this one needs the whole graph"), arithmetic.stderr)
        // Keys that are not integers: not paged; the browser says so, the REPL answers what it can.
        let textKeys = try PostgresServer.persistDatabase(copying: sqlite, named: "cli_persist_text", documentType: "jsonb", idType: "text")
        let unpaged = try loupe([textKeys, "--memory-budget", "1K", "--play", keys])
        XCTAssertEqual(unpaged.status, 1)
        XCTAssertTrue(unpaged.stderr.contains("paged mode reads Persist's layout keyed by integers (by_type.id is text); raise --memory-budget to load it whole"), unpaged.stderr)
        let statementwise = try loupe(["repl", textKeys, "--memory-budget", "1K"],
                                      stdin: "update Book where pages > 10 set pages = 1\n.mode csv\n.types\ncount Book where pages > 100\n.schema Book\n")
        XCTAssertTrue(statementwise.stderr.contains("keyed otherwise than by integers is edited in a loaded session"), statementwise.stderr)
        XCTAssertTrue(statementwise.stdout.hasPrefix("type,count\r\nPublisher,"), statementwise.stdout)
        XCTAssertTrue(statementwise.stderr.contains("PostgreSQL answers statements over Persist's layout when its keys are integers and its documents jsonb (by_type.id here is not an integer)"), statementwise.stderr)
        let query = try loupe(["query", textKeys, "count Book where pages > 100", "--memory-budget", "1K"])
        XCTAssertTrue(query.stderr.contains("memory budget, and SQL cannot answer this statement exactly over Persist's layout in PostgreSQL (PostgreSQL answers statements over Persist's layout when its keys are integers"), query.stderr)
        XCTAssertTrue(statementwise.stderr.contains("this REPL answers statements and .help, .mode, .once, .output, .quit, .timer, .types; reopen with a larger --memory-budget for .schema"), statementwise.stderr)
        let over = try loupe(["query", url, "update Book where id == \(id) set pages = 1234", "--commit", "--memory-budget", "1K"])
        XCTAssertEqual(over.status, 0, over.stderr)
        XCTAssertTrue(over.stdout.contains("committed: 0 added, 1 changed"), over.stdout)
        XCTAssertEqual(try loupe(["query", url, "Book where id == \(id) select pages", "--format", "csv"]).stdout, "pages\r\n1234\r\n")
    }

    /// A filter naming keys outright (`id == k`, `id IN {…}`, alone or beside other tests under an
    /// AND) is answered by SQLite reading those rows by the key, not the whole table: the SQL
    /// `LOUPE_SQL_TRACE` prints is planned as a search by the integer key, on a plain file and
    /// on a Persist file, and the answers are the engine's over the load.
    func testFiltersNamingKeysReadThoseRowsByTheKey() throws {
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let persist = try Shared.temporaryPath()
        try SampleGenerator.generate(path: persist, objects: 2_000, seed: 5)
        // Text keys, one spelt with the Kelvin sign the engine finds equal to K.
        let textKeys = try Shared.temporaryPath()
        try DatabaseQueue(path: textKeys).write { db in
            try db.execute(sql: """
                CREATE TABLE Code (code TEXT PRIMARY KEY, label TEXT);
                INSERT INTO Code VALUES ('K1', 'a'), ('\u{212A}2', 'b'), ('x;"y', 'c'), ('z', 'd'), ('é', 'e');
                CREATE TABLE Use (n INTEGER PRIMARY KEY, code TEXT REFERENCES Code(code));
                INSERT INTO Use VALUES (1, 'K1'), (2, 'z');
                """)
        }
        for (path, statement) in [
            (chinook, "Track where id IN {3, 7, 3.5, 2e0} AND Milliseconds > 1 select Name"),
            (chinook, "Track where id == 12 sort by Name"),
            (persist, "Book where (id == 40 OR id == 41 OR pages > 0) AND id IN {40, 41, 1999} select id, title"),
            (persist, "Book where id IN {} select id"),
            (textKeys, "Code where id IN {\"K2\", \"x;\\\"y\", \"q\"} AND label != nil select label"),
            (textKeys, "Code where id == \"z\" sort by label"),
        ] {
            let run = try LoupeBinary.run(["query", path, statement, "--engine", "sql", "--format", "csv"], environment: ["LOUPE_SQL_TRACE": "1"])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertEqual(run.stdout, try loupe(["query", path, statement, "--engine", "memory", "--format", "csv"]).stdout, statement)
            let sql = try XCTUnwrap(run.stderr.split(separator: "\n").last.map(String.init), statement)
            let parameters = Set(sql.matches(of: /\?(\d+)/).compactMap { Int($0.output.1) }).max() ?? 0
            let plan = try DatabaseQueue(path: path).read { db -> [String] in
                db.add(function: DatabaseFunction("loupe_test", argumentCount: nil, pure: true) { _ in true })
                return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: StatementArguments(Array(repeating: DatabaseValue.null, count: parameters)))
                    .map { $0["detail"] as String }
            }
            XCTAssertTrue(plan.contains { $0.hasPrefix("SEARCH a0 ") && ($0.contains("rowid=?") || $0.contains("(code=?)")) }, "\(statement): \(plan)")
            XCTAssertFalse(plan.contains { $0.hasPrefix("SCAN a0") }, "\(statement): \(plan)")
        }
    }

    /// A statement whose first clause is a limit is stopped by SQLite at the limit (rows come in
    /// rowid order, as the engine lists them), unless a MATCHES in it could fail on a later row,
    /// as it would in the engine; the answers are the engine's over the load.
    func testALimitFirstStopsSQLiteAtTheLimit() throws {
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        for (statement, limit) in [
            ("Track limit 2", "LIMIT 2 OFFSET 0"),
            ("Track where Milliseconds > 300000 limit 3 offset 2 select Name, Milliseconds", "LIMIT 3 OFFSET 2"),
            ("Track where Composer != nil limit 4 sort by Name desc", "LIMIT 4 OFFSET 0"),
            ("Track where Milliseconds > 300000 limit 5 distinct AlbumId limit 2", "LIMIT 5 OFFSET 0"),
            ("Track where Name MATCHES 'A.*' limit 2", nil),
            ("Track where Name MATCHES 'A.*' sort by Milliseconds limit 2", nil),
        ] {
            let run = try LoupeBinary.run(["query", chinook, statement, "--engine", "sql", "--format", "csv"], environment: ["LOUPE_SQL_TRACE": "1"])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertEqual(run.stdout, try loupe(["query", chinook, statement, "--engine", "memory", "--format", "csv"]).stdout, statement)
            let sql = try XCTUnwrap(run.stderr.split(separator: "\n").last.map(String.init), statement)
            if let limit { XCTAssertTrue(sql.hasSuffix(limit), "\(statement): \(sql)") } else { XCTAssertFalse(sql.contains("LIMIT"), "\(statement): \(sql)") }
        }
    }

    func testReadOptionsOnTheCommandLine() throws {
        let recipes = try Shared.copy("realdata/coredata/apple_recipes/Recipes.sqlite")
        let modelNames = try loupe(["types", recipes])
        XCTAssertEqual(modelNames.status, 0, modelNames.stderr)
        XCTAssertTrue(modelNames.stdout.contains("RecipeType"), modelNames.stdout)
        XCTAssertFalse(modelNames.stdout.contains("ZRECIPE"), modelNames.stdout)
        let raw = try loupe(["types", recipes, "--as", "sqlite"])
        XCTAssertTrue(raw.stdout.contains("ZRECIPE") && raw.stdout.contains("Z_PRIMARYKEY"), raw.stdout)
        let refused = try loupe(["types", try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite"), "--as", "coredata"])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("not laid out as a Core Data store"), refused.stderr)
        let bad = try loupe(["types", recipes, "--as", "nosuch"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("one of: persist, coredata"), bad.stderr)

        let path = try Shared.temporaryPath("undeclared.sqlite")
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: """
                CREATE TABLE Customer (Id TEXT PRIMARY KEY, Country TEXT);
                CREATE TABLE "Order" (Id INTEGER PRIMARY KEY, CustomerId TEXT);
                INSERT INTO Customer VALUES ('A', 'Germany'), ('B', 'Peru');
                INSERT INTO "Order" VALUES (1, 'A'), (2, 'B'), (3, 'A');
                """)
        }
        let inferred = try loupe(["query", path, "count Order where Customer.Country == \"Germany\""])
        XCTAssertEqual(inferred.stdout, "2\n", inferred.stderr)
        let off = try loupe(["query", path, "count Order where Customer.Country == \"Germany\"", "--no-inferred-relations"])
        XCTAssertEqual(off.status, 2, "without inference there is no relation named Customer")
        XCTAssertTrue(off.stderr.contains("unknown attribute 'Customer' on Order"), off.stderr)

        let folder = try Shared.temporaryPath("bundle")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let bundle = folder + "/ios140_iosdb.cblite2"
        try FileManager.default.copyItem(atPath: Shared.root.appendingPathComponent("realdata/couchbase/ios140_iosdb.cblite2").path, toPath: bundle)
        let couchbase = try loupe(["query", bundle, "doc select id, number", "--format", "json"])
        XCTAssertEqual(couchbase.status, 0, couchbase.stderr)
        XCTAssertTrue(couchbase.stdout.contains("\"doc1\""), couchbase.stdout)
    }

    func testShowSchemaAndFormats() throws {
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let show = try loupe(["show", chinook, "Album", "1"])
        XCTAssertTrue(show.stdout.contains("Title     For Those About To Rock We Salute You"), show.stdout)
        XCTAssertTrue(show.stdout.contains("Artist    → Artist #1"), show.stdout)
        XCTAssertTrue(show.stdout.contains("Track.Album  [10]"), show.stdout)
        let schema = try loupe(["schema", chinook, "Employee"])
        XCTAssertTrue(schema.stdout.contains("ReportsTo   → Employee  to-one"), schema.stdout)
        XCTAssertTrue(schema.stdout.contains("@links.Employee.ReportsTo"), schema.stdout)
        let csv = try loupe(["query", chinook, "Genre where GenreId <= 2 select Name", "--format", "csv"])
        XCTAssertEqual(csv.stdout, "Name\r\nRock\r\nJazz\r\n")
        let ndjson = try loupe(["query", chinook, "Genre where GenreId <= 2", "--format", "ndjson"])
        XCTAssertEqual(ndjson.stdout, "{\"id\": 1, \"type\": \"Genre\", \"GenreId\": 1, \"Name\": \"Rock\"}\n{\"id\": 2, \"type\": \"Genre\", \"GenreId\": 2, \"Name\": \"Jazz\"}\n")
        let count = try loupe(["query", chinook, "count Genre", "--format", "json"])
        XCTAssertEqual(count.stdout, "25\n")
    }

    /// On a Persist store, `schema` and `show` after a whole load print what a load prints,
    /// without one (the schema cache), and a store changed since is loaded again.
    func testSchemaAndShowOnAPersistStoreUseTheLastLoad() throws {
        let path = try Shared.temporaryPath("cached.sqlite")
        let uncached = ["LOUPE_CACHE_DIR": "off"]
        try LoupeBinary.run(["sample", path, "--objects", "2000", "--seed", "3"], environment: uncached)
        let book = try DatabaseQueue(path: path).read { try Int64.fetchOne($0, sql: "SELECT min(id) FROM by_type WHERE type_name = 'Book'")! }
        let schema = try LoupeBinary.run(["schema", path], environment: uncached)
        let show = try LoupeBinary.run(["show", path, "book", "\(book)"], environment: uncached)
        XCTAssertEqual(schema.status, 0, schema.description)
        XCTAssertTrue(show.stdout.hasPrefix("Book #\(book)\n"), show.description)
        /// The stores the test cache holds an entry for.
        func cachedPaths() -> [String] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: LoupeBinary.cacheDirectory)) ?? []
            return names.compactMap { name in
                guard let data = FileManager.default.contents(atPath: LoupeBinary.cacheDirectory + "/" + name),
                      let entry = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
                return entry["path"] as? String
            }
        }
        let real = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        XCTAssertFalse(cachedPaths().contains(real), "LOUPE_CACHE_DIR=off writes nothing")
        _ = try LoupeBinary.run(["query", path, "count Loan where book.pages > 100"])   // a whole load
        XCTAssertTrue(cachedPaths().contains(real), "the load left an entry")
        for _ in 0..<2 {
            XCTAssertEqual(try LoupeBinary.run(["schema", path]).stdout, schema.stdout)
            XCTAssertEqual(try LoupeBinary.run(["schema", path, "BOOK"]).stdout, try LoupeBinary.run(["schema", path, "Book"], environment: uncached).stdout)
            XCTAssertEqual(try LoupeBinary.run(["show", path, "book", "\(book)"]).stdout, show.stdout)
        }
        XCTAssertEqual(try LoupeBinary.run(["types", path]).stdout, try LoupeBinary.run(["types", path], environment: uncached).stdout)
        // Read as another format (`--as sqlite`: the raw tables), the cache of the Persist reading is never used.
        for arguments in [["schema", path, "--as", "sqlite"], ["types", path, "--as", "sqlite"], ["show", path, "by_type", "\(book)", "--as", "sqlite"],
                          ["query", path, "count by_type where type_name == \"Book\"", "--as", "sqlite"], ["query", path, "count Book", "--as", "sqlite"]] {
            let raw = try LoupeBinary.run(arguments)
            XCTAssertEqual(raw.stdout, try LoupeBinary.run(arguments, environment: uncached).stdout, arguments.joined(separator: " "))
            XCTAssertEqual(raw.stderr, try LoupeBinary.run(arguments, environment: uncached).stderr, arguments.joined(separator: " "))
        }
        // One-shot statements read only what their names reach, with the same answers.
        for statement in ["count Loan where book.author.born < 1920", "Book where @links.Loan.book.@count >= 3 group by language",
                          "Loan where book.tags.label CONTAINS \"a\" sort by due desc, id limit 4 select book.title, member.name",
                          "Author where @links.Book.author.@count > 4", "count Book where titel > 3"] {
            for format in ["json", "table"] {
                let cached = try LoupeBinary.run(["query", path, statement, "--format", format])
                let loaded = try LoupeBinary.run(["query", path, statement, "--format", format], environment: uncached)
                XCTAssertEqual(cached.stdout, loaded.stdout, statement)
                XCTAssertEqual(cached.stderr, loaded.stderr, statement)
                XCTAssertEqual(cached.status, loaded.status, statement)
            }
        }
        let missing = try LoupeBinary.run(["show", path, "Book", "99999999"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.stderr, "Error: no Book has id 99999999\n")
        // A commit (by anything) makes the entry stale: the next `show` loads and sees it.
        let update = try LoupeBinary.run(["query", path, "update Book where id == \(book) set pages = 4242", "--commit"])
        XCTAssertEqual(update.status, 0, update.description)
        let after = try LoupeBinary.run(["show", path, "Book", "\(book)"])
        XCTAssertTrue(after.stdout.contains("pages      4242"), after.stdout)
        XCTAssertEqual(after.stdout, try LoupeBinary.run(["show", path, "Book", "\(book)"], environment: uncached).stdout)
    }

    /// A misspelled command names the one meant; `.help .commit` takes the dot.
    func testMisspelledCommandsSuggestTheRightOne() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let typo = try LoupeBinary.run(["tpyes", path])
        XCTAssertNotEqual(typo.status, 0, typo.description)
        XCTAssertTrue(typo.stderr.contains("unknown command 'tpyes'; did you mean 'types'?"), typo.stderr)
        let help = try LoupeBinary.run(["repl", path], stdin: ".help .commit\n.help commit\n")
        XCTAssertEqual(help.status, 0, help.description)
        XCTAssertEqual(help.stdout.components(separatedBy: ".commit").count - 1, 2, help.stdout)
    }

    func testReplReadsStatementsFromStandardInput() throws {
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let out = try Shared.temporaryPath("once.json")
        let script = """
            .mode json
            count Genre
            Genre where Nme == 'x'
            .once \(out)
            Genre where GenreId == 1 select Name
            .sch MediaType
            .mo
            .bogus
            .timer maybe
            .quit
            count Track
            """
        let run = try loupe(["repl", chinook], stdin: script)
        XCTAssertEqual(run.status, 1, "errors in a script make the exit status non-zero")
        XCTAssertTrue(run.stdout.hasPrefix("25\nMediaType — 5 objects"), run.stdout)
        XCTAssertTrue(run.stdout.contains("current output mode: json"), run.stdout)
        XCTAssertFalse(run.stdout.contains("3503"), ".quit stops reading")
        XCTAssertTrue(run.stderr.contains("did you mean 'Name'?"), run.stderr)
        XCTAssertTrue(run.stderr.contains("unknown command '.bogus'"), run.stderr)
        XCTAssertTrue(run.stderr.contains("bad argument 'maybe'\nUsage: .timer on|off"), run.stderr)
        XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8), "[{\"Name\": \"Rock\"}]\n")
    }

    func testSampleCommandAndBrowseWithoutTerminal() throws {
        let path = try Shared.temporaryPath()
        let run = try loupe(["sample", path, "--objects", "500", "--seed", "2"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.hasPrefix("wrote \(path): 500 objects in 7 types"), run.stdout)
        let again = try loupe(["sample", path, "--objects", "500"])
        XCTAssertNotEqual(again.status, 0, "never overwrites")
        let browse = try loupe([path])
        XCTAssertNotEqual(browse.status, 0)
        XCTAssertTrue(browse.stderr.contains("not a terminal"), browse.stderr)
    }

    /// The output formats statement `index` of a list is compared in, engine against engine:
    /// one each, in turn, and all three for the first two. The rows are the engine's, and the
    /// formatting one code for both, so more would compare the same thing again.
    static func formats(forStatement index: Int) -> [String] {
        let formats = ["table", "json", "csv"]
        return index < 2 ? formats : [formats[index % 3]]
    }

    /// `--paged`, or a whole load over `--memory-budget`, browses a Persist store a window at a
    /// time: the same screen as the loaded graph (the status line says which mode), the file
    /// untouched; other formats and bad sizes are refused in one line.
    /// `loupe query` on a Persist file over the memory budget (or with --engine sql): SQLite answers
    /// over the file, in every format, what the loaded graph answers; what does not translate
    /// says so; the file is never written.
    func testQueriesOverTheBudgetArePushedDown() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 2_000, seed: 19)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let statements = ["count Loan where book.author.born < 1930", "Book where @links.Loan.book.@count >= 2 sort by title limit 8",
                          "Loan sort by book.pages desc, id limit 5 select book.title, member.name, renewals", "Loan group by book.language",
                          "Member where name BEGINSWITH[c] \"a\"", "count Book where titel > 3"]
        for (i, statement) in statements.enumerated() {
            for format in Self.formats(forStatement: i) {
                let loaded = try loupe(["query", path, statement, "--format", format, "--engine", "memory"])
                for options in [["--memory-budget", "1K"], ["--engine", "sql"]] {
                    let pushed = try loupe(["query", path, statement, "--format", format] + options)
                    XCTAssertEqual(pushed.status, loaded.status, "\(statement) \(options)")
                    XCTAssertEqual(pushed.stdout, loaded.stdout, "\(statement) \(format) \(options)")
                    XCTAssertEqual(pushed.stderr, loaded.stderr, "\(statement) \(format) \(options)")
                }
            }
        }
        // What SQL does not say (paths into nested values, arithmetic), on one type's own
        // attributes, is answered by the engine a chunk of objects at a time.
        let chunked = ["Member where address.city == \"Lisboa\"", "count Book where pages / 100 > 3", "Book where pages * 2 > 900 limit 3 offset 2",
                       "Member where address.city == \"Lisboa\" limit 0", "count Book where pages / nmae > 1",
                       "Member where address.city == \"Lisboa\" sort by name", "Book where pages / 100 > 3 sort by price desc, id limit 4 select title, pages / 100 as hundreds",
                       "Member where address.city != nil group by address.city limit 3", "Book where pages * 2 > 900 sort by titel",
                       // Filters through relations beside that: SQL answers those parts, the chunks the rest.
                       "Book where author.born < 1950 AND pages * 2 > 700 sort by title, id limit 4 select title, pages",
                       "count Member where @links.Loan.member.@count > 3 OR address.city == \"Lisboa\""]
        for statement in chunked {
            let loaded = try loupe(["query", path, statement, "--format", "json", "--engine", "memory"])
            let over = try loupe(["query", path, statement, "--format", "json", "--memory-budget", "1K"])
            XCTAssertEqual(over.stdout, loaded.stdout, statement)
            XCTAssertEqual(over.stderr, loaded.stderr, statement)
            XCTAssertEqual(over.status, loaded.status, statement)
        }
        // `loupe repl` over the budget: each statement answered the same way, as the loaded REPL prints it.
        let script = (statements + chunked).joined(separator: "\n") + "\n"
        try assertReplOverTheBudgetAnswersAsLoaded(path, script: script)
        let types = try loupe(["repl", path, "--memory-budget", "1K"], stdin: ".types\nLoan where member.address.city == \"Lisboa\"\n.quit\n")
        XCTAssertTrue(types.stdout.contains("Loan"), types.stdout)
        XCTAssertTrue(types.stderr.contains("this one needs the whole graph"), types.stderr)
        XCTAssertEqual(types.status, 1)
        let nested = try loupe(["query", path, "Loan where member.address.city == \"Lisboa\"", "--memory-budget", "1K"])
        XCTAssertEqual(nested.status, 1)
        XCTAssertTrue(nested.stderr.contains("over the 1 KB memory budget, and SQL cannot answer this statement exactly"), nested.stderr)
        let sql = try loupe(["query", path, "Member where address.city == \"Lisboa\"", "--engine", "sql"])
        XCTAssertEqual(sql.status, 1)
        XCTAssertTrue(sql.stderr.contains("SQL cannot answer this statement exactly over a Persist file (SQLite over Persist's by_type and relations tables leaves paths into nested values, "), sql.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, "querying never writes")
    }

    /// `loupe index`: Loupe's relation index and the orders named, built in the cache (never in
    /// the file); sorts over the budget then print what the loaded graph prints; names that are
    /// not the store's, other formats and a cache that is off are one clear error each.
    func testIndexCommandKeepsOrdersForSorts() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 3_000, seed: 23)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let cache = ["LOUPE_CACHE_DIR": NSTemporaryDirectory() + "loupe-index-\(UUID().uuidString)"]
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let relations = try LoupeBinary.run(["index", path], environment: cache)
        XCTAssertTrue(relations.stdout.hasPrefix("relation index built in "), relations.stdout + relations.stderr)
        let built = try LoupeBinary.run(["index", path, "Book.price", "book.title", "Member.joined"], environment: cache)
        XCTAssertEqual(built.status, 0, built.stderr)
        let lines = built.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "relation index: built")
        XCTAssertTrue(lines.contains { $0.hasPrefix("order of Book.title kept in ") }, built.stdout)
        XCTAssertEqual(lines.suffix(2), ["orders kept for Book: price, title", "orders kept for Member: joined"])
        for statement in ["Book sort by price desc, title, id limit 30", "Book where pages > 400 sort by title select title, price", "Member sort by joined desc, id"] {
            let loaded = try LoupeBinary.run(["query", path, statement, "--format", "json", "--engine", "memory"], environment: cache)
            let paged = try LoupeBinary.run(["query", path, statement, "--format", "json", "--memory-budget", "1K"], environment: cache)
            XCTAssertEqual(paged.stdout, loaded.stdout, statement)
            XCTAssertEqual(paged.status, 0, paged.stderr)
        }
        let again = try LoupeBinary.run(["index", path], environment: cache)
        XCTAssertEqual(again.stdout, "relation index: built\norders kept for Book: price, title\norders kept for Member: joined\n")
        for (arguments, environment, message) in [
            (["index", path, "Bok.price"], cache, "Error: Bok.price names no type of the store as TYPE.ATTRIBUTE; did you mean Book?\n"),
            (["index", path, "Book.prise"], cache, "Error: cannot keep the order of Book.prise: unknown attribute 'prise' on Book — did you mean 'price'?\n"),
            (["index", chinook], cache, "Error: loupe index builds Loupe's indexes of Persist stores; \(chinook) is read through its own indexes (CREATE INDEX)\n"),
            (["index", path], ["LOUPE_CACHE_DIR": "off"], "Error: Loupe's cache is off (LOUPE_CACHE_DIR=off): there is no place for an index\n"),
        ] {
            let failed = try LoupeBinary.run(arguments, environment: environment)
            XCTAssertEqual(failed.status, 1, arguments.joined(separator: " "))
            XCTAssertEqual(failed.stderr, message)
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, "indexing never writes the store")
    }

    /// `loupe repl` on `path` over a 1 KB budget prints, statement by statement, what the
    /// loaded REPL prints for `script` (output, errors, exit status).
    private func assertReplOverTheBudgetAnswersAsLoaded(_ path: String, script: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let loadedRepl = try loupe(["repl", path, "--format", "json"], stdin: script)
        let pagedRepl = try loupe(["repl", path, "--format", "json", "--memory-budget", "1K"], stdin: script)
        XCTAssertEqual(pagedRepl.stdout, loadedRepl.stdout, file: file, line: line)
        XCTAssertEqual(pagedRepl.stderr, loadedRepl.stderr, file: file, line: line)
        XCTAssertEqual(pagedRepl.status, loadedRepl.status, file: file, line: line)
    }

    /// The REPL's dot-commands over the memory budget: `.mode`, `.once`, `.output`, `.types` and
    /// `.schema` do what they do in the loaded REPL (a type of no more than 1,000 objects is
    /// described exactly as after a load, a larger one from its first 1,000 objects, saying so);
    /// `.help` lists what is there; `.open` is refused in one line. `loupe schema` over the budget
    /// reads the same way, never the whole store.
    func testDotCommandsOverTheBudget() throws {
        for (path, small, large) in [(try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite"), "Genre", "Track"),
                                     (try { let p = try Shared.temporaryPath(); try SampleGenerator.generate(path: p, objects: 3_000, seed: 5); return p }(), "Tag", "Loan")] {
            let once = try Shared.temporaryPath("once.txt"), output = try Shared.temporaryPath("output.txt")
            let script = """
                .mode csv
                count \(small)
                .once \(once)
                \(small) limit 3
                .mode json
                .output \(output)
                .types
                \(small) limit 2
                .output
                .schema \(small)
                .schema \(small.lowercased())x

                """
            let loaded = try loupe(["repl", path], stdin: script)
            let loadedFiles = try [once, output].map { try String(contentsOfFile: $0, encoding: .utf8) }
            let over = try loupe(["repl", path, "--memory-budget", "1K"], stdin: script)
            XCTAssertEqual(over.stdout, loaded.stdout, path)
            XCTAssertEqual(over.stderr, loaded.stderr, path)
            XCTAssertEqual(over.status, loaded.status, path)
            XCTAssertEqual(try [once, output].map { try String(contentsOfFile: $0, encoding: .utf8) }, loadedFiles, path)
            XCTAssertTrue(loadedFiles[1].contains("\"count\": ") && loadedFiles[0].hasPrefix("id,"), loadedFiles.joined())

            let help = try loupe(["repl", path, "--memory-budget", "1K"], stdin: ".help\n.schema \(large)\n.open \(path)\n")
            XCTAssertTrue(help.stdout.contains(".schema [Type]") && help.stdout.contains(".mode table|line") && !help.stdout.contains(".open FILE"), help.stdout)
            XCTAssertTrue(help.stdout.contains("objects (attributes as its first 1000 have them)"), help.stdout)
            XCTAssertTrue(help.stdout.contains("in 1000 of first 1000"), help.stdout)
            XCTAssertEqual(help.stderr, "error: .open is not available over the memory budget; leave (.quit) and run `loupe repl FILE`\n")
            XCTAssertEqual(help.status, 1)

            let schema = try loupe(["schema", path, small, "--memory-budget", "1K"])
            XCTAssertEqual(schema.stdout, try loupe(["schema", path, small]).stdout, path)
            let whole = try loupe(["schema", path, "--memory-budget", "1K"])
            if large == "Loan" {
                // A Persist store loaded before: the load's schema, kept in the cache, is exact.
                XCTAssertEqual(whole.stdout, try loupe(["schema", path]).stdout)
            } else {
                XCTAssertTrue(whole.stdout.contains("memory budget: read a page at a time)\n\n"), whole.stdout)
                XCTAssertTrue(whole.stdout.contains("\(large) — ") && whole.stdout.contains(" objects (attributes as its first 1000 have them)"), whole.stdout)
            }
            let misspelt = try loupe(["schema", path, small + "x", "--memory-budget", "1K"])
            XCTAssertEqual(misspelt.stderr, "Error: unknown type '\(small)x' (did you mean '\(small)'?)\n")
        }
    }

    /// `loupe query` and `loupe repl` on a plain SQLite file over the memory budget: SQLite answers
    /// over the file, printing what the loaded graph prints, and the engine a chunk of rows at a
    /// time what SQL does not say on a table's own columns; what neither answers is refused
    /// instead of loading; the file is never written.
    func testRelationalFilesOverTheBudget() throws {
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let statements = ["count Track where Album.Artist.Name BEGINSWITH \"A\"", "Album where @links.Track.Album.@count > 20 sort by Title",
                          "Track where Milliseconds > 1500000 sort by Name select Name, Milliseconds", "InvoiceLine group by Track.Genre.Name",
                          "Customer where Country == \"Brazil\"", "count Track where Nmae == 1",
                          // Answered a chunk of rows at a time (SQL does not say them), views too.
                          "count Track where Milliseconds / 1000 > 600", "Track where Milliseconds / 1000 > 1500 limit 2 offset 1",
                          "count LongTracks", "LongTracks where Milliseconds > 1500000", "LongTracks limit 3 offset 100",
                          "Track where Milliseconds / 1000 > 1500 sort by Name", "LongTracks sort by Milliseconds desc limit 3 select Name, Milliseconds / 60000 as minutes",
                          "LongTracks where Milliseconds > 1000000 group by Name limit 2",
                          // Filters through relations beside arithmetic: SQL answers those parts, the chunks the rest.
                          "count Track where Album.Artist.Name BEGINSWITH \"A\" AND Milliseconds / 1000 > 300",
                          "Track where NOT (Genre.Name == \"Rock\") AND UnitPrice * 100 > 98 group by MediaTypeId"]
        try DatabaseQueue(path: chinook).write { db in
            try db.execute(sql: "CREATE VIEW LongTracks AS SELECT Name, Milliseconds FROM Track WHERE Milliseconds > 300000")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: chinook))
        for (i, statement) in statements.enumerated() {
            for format in Self.formats(forStatement: i) {
                let loaded = try loupe(["query", chinook, statement, "--format", format, "--engine", "memory"])
                let over = try loupe(["query", chinook, statement, "--format", format, "--memory-budget", "1K"])
                XCTAssertEqual(over.status, loaded.status, statement)
                XCTAssertEqual(over.stdout, loaded.stdout, "\(statement) \(format)")
                XCTAssertEqual(over.stderr, loaded.stderr, "\(statement) \(format)")
            }
        }
        let script = statements.joined(separator: "\n") + "\n"
        try assertReplOverTheBudgetAnswersAsLoaded(chinook, script: script)
        let refusals = try loupe(["repl", chinook, "--memory-budget", "1K"],
                                 stdin: ".types\nTrack where Album.AlbumId / 2 > Milliseconds / 10000 sort by Name\n.quit\n")
        XCTAssertTrue(refusals.stdout.contains("PlaylistTrack  8715"), refusals.stdout)
        XCTAssertTrue(refusals.stderr.contains("this one needs the whole graph"), refusals.stderr)
        XCTAssertEqual(refusals.status, 1)
        let arithmetic = try loupe(["query", chinook, "Track where Album.AlbumId / 2 > Milliseconds / 10000 sort by Name", "--memory-budget", "1K"])
        XCTAssertEqual(arithmetic.status, 1)
        XCTAssertTrue(arithmetic.stderr.contains("over the 1 KB memory budget, and SQL cannot answer this statement exactly"), arithmetic.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: chinook)), before, "querying never writes")
    }

    /// `loupe repl` and `loupe query` over the budget edit a plain SQLite file as loaded ones do:
    /// the same replies (staged counts, refusals, `.changes`' writes, the commit's counts) and
    /// the same rows written; without `--commit` nothing is.
    func testRelationalEditsOverTheBudget() throws {
        let original = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let (loadedPath, pagedPath) = try Shared.twoCopies(of: original)
        let script = """
            update Track where TrackId <= 3 set Name = "Renamed", Composer = nil
            insert Artist {Name: "New Artist"}
            insert Album {Title: "New Album", Artist: #1}
            count Track where Name == "Renamed"
            Artist where ArtistId > 274
            delete Album where AlbumId == 1
            delete InvoiceLine where InvoiceId == 2
            .changes
            .undo
            .changes
            .commit
            Artist where Name == "New Artist"
            update Track where TrackId == 5 set Album = #3
            .commit
            Track where TrackId == 5 select Name, AlbumId

            """
        func timeless(_ text: String) -> String { text.replacingOccurrences(of: #", [0-9.]+ s\)"#, with: ")", options: .regularExpression) }
        let loaded = try loupe(["repl", loadedPath], stdin: script)
        let paged = try loupe(["repl", pagedPath, "--memory-budget", "1K"], stdin: script)
        XCTAssertEqual(timeless(paged.stdout), timeless(loaded.stdout))
        XCTAssertEqual(paged.stderr, loaded.stderr)
        XCTAssertEqual(paged.status, loaded.status)
        XCTAssertEqual(paged.stdout.components(separatedBy: "committed:").count, 3, paged.stdout)
        XCTAssertTrue(paged.stderr.contains("cannot delete: 10 references"), paged.stderr)
        XCTAssertEqual(try Shared.tableRows(pagedPath), try Shared.tableRows(loadedPath), "the two REPLs wrote the same rows")
        XCTAssertNotEqual(try Shared.tableRows(pagedPath), try Shared.tableRows(original))
        // One statement: shown, written only with --commit, the rows a loaded commit writes.
        let statement = "update Customer where Country == \"Brazil\" set Company = \"BR\", Fax = nil"
        let shown = try loupe(["query", pagedPath, statement, "--memory-budget", "1K"])
        XCTAssertEqual(shown.status, 0, shown.stderr)
        XCTAssertTrue(shown.stdout.contains("UPDATE \"Customer\" SET"), shown.stdout)
        XCTAssertTrue(shown.stdout.contains("nothing written"), shown.stdout)
        XCTAssertEqual(try Shared.tableRows(pagedPath), try Shared.tableRows(loadedPath), "nothing written without --commit")
        let over = try loupe(["query", pagedPath, statement, "--memory-budget", "1K", "--commit"])
        let whole = try loupe(["query", loadedPath, statement, "--commit"])
        XCTAssertEqual(timeless(over.stdout), timeless(whole.stdout))
        XCTAssertEqual(over.status, 0, over.stderr)
        XCTAssertEqual(try Shared.tableRows(pagedPath), try Shared.tableRows(loadedPath), "the two commits wrote the same rows")
    }

    /// `loupe repl` over the budget edits as the loaded REPL does: the same script prints the same
    /// replies (staged counts, `.changes`' steps, the commit's counts) and leaves the same rows.
    func testTheReplOverTheBudgetEdits() throws {
        let original = try Shared.temporaryPath()
        try SampleGenerator.generate(path: original, objects: 1_500, seed: 23)
        let (loadedPath, pagedPath) = try Shared.twoCopies(of: original)
        let (book, tag) = (try Self.firstID("Book", in: original), try Self.firstID("Tag", in: original))
        let script = """
            update Book where pages > 450 set pages = 450, checked = true
            delete Loan where renewals >= 2
            insert Tag {name: "new-tag"}
            count Book where checked == true
            count Loan where renewals >= 2
            Tag where name == "new-tag"
            Book where pages == 450 AND title BEGINSWITH "S"
            Loan group by renewals
            Book where pages == 450 group by language sort by count desc limit 3
            Book where pages >= 440 sort by pages desc, title limit 6 select title, pages, checked
            Tag sort by name desc limit 3
            update Book where id == \(book) set tags += #\(tag)
            .undo
            .redo
            update Book where id == \(book + 1) set author = nil
            .changes
            .commit
            count Tag where name == "new-tag"
            update Member where name BEGINSWITH "A" set name = "Anon"
            .rollback
            .changes
            update Book where author.born < 1960 set pages = 1
            update Book where title BEGINSWITH "S" set pages = 2
            .commit
            update Loan where book.author.born < 1950 AND renewals * 2 > 1 set renewals = 0
            update Book where pages * 2 > 800 set pages = 400
            .changes
            .commit

            """
        let loaded = try loupe(["repl", loadedPath], stdin: script)
        let paged = try loupe(["repl", pagedPath, "--memory-budget", "1K"], stdin: script)
        // The writes a preview lists are the same rows in the same words, up to the commit's time.
        func timeless(_ text: String) -> String { text.replacingOccurrences(of: #", [0-9.]+ s\)"#, with: ")", options: .regularExpression) }
        XCTAssertEqual(timeless(paged.stdout), timeless(loaded.stdout))
        XCTAssertEqual(paged.stderr, loaded.stderr)
        XCTAssertEqual(paged.status, loaded.status)
        XCTAssertEqual(paged.stdout.components(separatedBy: "committed:").count, 4, paged.stdout)
        XCTAssertFalse(paged.stdout.contains("nothing staged"), paged.stdout)
        XCTAssertTrue(try Shared.persistRows(pagedPath) == Shared.persistRows(loadedPath), "the two REPLs wrote the same rows")
        XCTAssertFalse(try Shared.persistRows(pagedPath) == Shared.persistRows(original))
    }

    /// `loupe query` with an edit over the budget: the same writes shown, nothing written without
    /// `--commit`, the same rows with it, as over the loaded graph.
    func testOneShotEditsOverTheBudget() throws {
        let original = try Shared.temporaryPath()
        try SampleGenerator.generate(path: original, objects: 1_000, seed: 29)
        let book = try Self.firstID("Book", in: original)
        let statements = ["update Book where pages > 800 set pages = 800", "delete Loan where renewals >= 2",
                          "insert Tag {name: \"one-shot\"}", "update Book where id == \(book) set author = nil", "update Book where pages > 5000 set pages = 1",
                          // A where SQL does not say whole: the chunks find its objects.
                          "update Book where author.born < 1950 AND pages / 2 > 300 set pages = 600"]
        func timeless(_ text: String) -> String { text.replacingOccurrences(of: #", [0-9.]+ s\)"#, with: ")", options: .regularExpression) }
        for statement in statements {
            for commit in [false, true] {
                let (loadedPath, pagedPath) = try Shared.twoCopies(of: original)
                let options = commit ? ["--commit"] : []
                let loaded = try loupe(["query", loadedPath, statement] + options)
                let paged = try loupe(["query", pagedPath, statement, "--memory-budget", "1K"] + options)
                XCTAssertEqual(timeless(paged.stdout), timeless(loaded.stdout), statement)
                XCTAssertEqual(paged.stderr, loaded.stderr, statement)
                XCTAssertEqual(paged.status, loaded.status, statement)
                XCTAssertTrue(try Shared.persistRows(pagedPath) == Shared.persistRows(loadedPath), "\(statement) \(options)")
                if !commit { XCTAssertTrue(try Shared.persistRows(pagedPath) == Shared.persistRows(original), "nothing written: \(statement)") }
            }
        }
    }

    static func firstID(_ type: String, in path: String) throws -> Int64 {
        try DatabaseQueue(path: path).read { try Int64.fetchOne($0, sql: "SELECT min(id) FROM by_type WHERE type_name = ?", arguments: [type])! }
    }

    func testPagedModeOnTheCommandLine() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 2_000, seed: 9)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let script = try Shared.temporaryPath("walk.play")
        try "<s-tab>\njjj\n<tab>\n<end>\n<pgup>\nkk\n<tab>\n<enter>\n<tab>\n<s-tab>\n<enter>\n".write(toFile: script, atomically: true, encoding: .utf8)
        let whole = try loupe(["browse", path, "--play", script, "--size", "120x30"])
        XCTAssertEqual(whole.status, 0, whole.stderr)
        for options in [["--paged"], ["--memory-budget", "1K"]] {
            let paged = try loupe(["browse", path, "--play", script, "--size", "120x30"] + options)
            XCTAssertEqual(paged.status, 0, paged.stderr)
            let (a, b) = (whole.stdout.split(separator: "\n"), paged.stdout.split(separator: "\n"))
            XCTAssertEqual(a.dropLast(), b.dropLast(), "\(options)")
            XCTAssertTrue(b.last?.contains("paged · ") == true || b.last?.hasSuffix(" paged") == true, String(b.last ?? ""))
            if options[0] == "--memory-budget" { XCTAssertTrue(b.last?.contains("over the 1 KB memory budget") == true, String(b.last ?? "")) }
        }
        // Under the budget, the store loads whole.
        let loaded = try loupe(["browse", path, "--play", script, "--size", "120x30", "--memory-budget", "4G"])
        XCTAssertEqual(loaded.stdout, whole.stdout)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, "browsing never writes")
        // A plain SQLite file pages too: the loaded screens, the status line says so.
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let chinookBefore = try Data(contentsOf: URL(fileURLWithPath: chinook))
        let chinookWhole = try loupe(["browse", chinook, "--play", script, "--size", "160x30"])
        for options in [["--paged"], ["--memory-budget", "1K"]] {
            let paged = try loupe(["browse", chinook, "--play", script, "--size", "160x30"] + options)
            XCTAssertEqual(paged.status, 0, paged.stderr)
            XCTAssertEqual(paged.stdout.split(separator: "\n").dropLast(), chinookWhole.stdout.split(separator: "\n").dropLast(), "\(options)")
            let status = String(paged.stdout.split(separator: "\n").last ?? "")
            XCTAssertTrue(status.contains("paged · ") && !status.contains("read-only"), status)
            if options[0] == "--memory-budget" { XCTAssertTrue(status.contains("over the 1 KB memory budget"), status) }
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: chinook)), chinookBefore, "browsing never writes")
        // Other formats load whole over the budget (the status line says so); --paged refuses them.
        let persistDB = try Shared.copy("fixtures/seed-formats/persistdb.sqlite")
        let refused = try loupe(["browse", persistDB, "--paged", "--play", script])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("--paged reads Persist stores, plain SQLite files and Core Data stores; "), refused.stderr)
        let over = try loupe(["browse", persistDB, "--memory-budget", "1K", "--play", script, "--size", "160x20"])
        XCTAssertEqual(over.status, 0, over.stderr)
        XCTAssertTrue(over.stdout.split(separator: "\n").last?.contains("over the 1 KB budget") == true, over.stdout)
        XCTAssertTrue(over.stdout.split(separator: "\n").last?.contains("loaded whole") == true, over.stdout)
        // Keys that are not integers: paged mode cannot find pages by key; over the budget the
        // store loads whole, and --paged says why.
        let textKeys = try Shared.temporaryPath()
        let queue = try DatabaseQueue(path: textKeys)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE by_type (id TEXT PRIMARY KEY NOT NULL, type_name TEXT NOT NULL, json TEXT NOT NULL);
                CREATE TABLE relations (from_id TEXT NOT NULL, to_id TEXT NOT NULL, relation TEXT NOT NULL);
                INSERT INTO by_type VALUES ('a', 'A', '{"x": 1}'), ('7', 'A', '{"x": 2}');
                """)
        }
        try queue.close()
        let textWhole = try loupe(["browse", textKeys, "--play", script, "--size", "120x30"])
        let textBudget = try loupe(["browse", textKeys, "--play", script, "--size", "120x30", "--memory-budget", "1K"])
        XCTAssertEqual(textBudget.status, 0, textBudget.stderr)
        XCTAssertEqual(textBudget.stdout.split(separator: "\n").dropLast(), textWhole.stdout.split(separator: "\n").dropLast())
        XCTAssertTrue(textBudget.stdout.split(separator: "\n").last?.contains("loaded whole") == true, textBudget.stdout)
        let textPaged = try loupe(["browse", textKeys, "--paged", "--play", script])
        XCTAssertEqual(textPaged.status, 1)
        XCTAssertTrue(textPaged.stderr.contains("paged mode reads Persist stores keyed by integers"), textPaged.stderr)
        let badSize = try loupe(["browse", path, "--memory-budget", "lots"])
        XCTAssertNotEqual(badSize.status, 0)
        XCTAssertTrue(badSize.stderr.contains("memory-budget"), badSize.stderr)
    }

    /// `loupe --version` prints the version alone and exits 0, as a Unix tool does.
    func testVersion() throws {
        let run = try loupe(["--version"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertNotNil(run.stdout.range(of: #"^\d+\.\d+\.\d+\n$"#, options: .regularExpression), run.stdout)
    }

    /// `loupe` alone opens the sample from any folder, the binary installed away from the
    /// checkout (as scripts/bootstrap.sh installs it), from the data folder beside it.
    func testTheSampleIsFoundFromAnyFolder() throws {
        let home = (try Shared.temporaryPath("home") as NSString).deletingLastPathComponent
        let installed = home + "/bin/loupe"
        try FileManager.default.createDirectory(atPath: home + "/bin", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: home + "/.local/share/loupe", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: LoupeBinary.url.path, toPath: installed)
        let script = home + "/keys.play"
        try "j\n".write(toFile: script, atomically: true, encoding: .utf8)
        func run(_ environment: [String: String]) throws -> (status: Int32, out: String, err: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: installed)
            process.arguments = ["--play", script, "--size", "80x24"]
            process.currentDirectoryURL = URL(fileURLWithPath: "/")
            process.environment = ["HOME": home, "PATH": "/usr/bin:/bin"].merging(environment) { $1 }
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
        }
        let missing = try run([:])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.err.contains("bootstrap.sh installs it in \(home)/.local/share/loupe"), missing.err)
        try FileManager.default.copyItem(atPath: Shared.checkout.appendingPathComponent("sample-data/library.sqlite").path,
                                         toPath: home + "/.local/share/loupe/library.sqlite")
        let found = try run([:])
        XCTAssertEqual(found.status, 0, found.err)
        XCTAssertTrue(found.out.contains("Publisher") && found.out.contains("Book"), found.out)
    }
}
