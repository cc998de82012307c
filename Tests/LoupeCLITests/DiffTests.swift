import Foundation
import GRDB
import LoupeStore
import LoupeTestSupport
import XCTest

/// `loupe diff A B`: hand-made pairs with every kind of change (attributes, to-one and to-many
/// relations, order, objects added and removed, a type only one side has), matching by an
/// attribute, random pairs whose differences are computed in SQL, a Persist file against its copy
/// in PostgreSQL, and the exit statuses (0 same, 1 different, 2 trouble).
final class DiffTests: XCTestCase {
    func testHandMadePairShowsEveryKindOfChange() throws {
        let a = try Shared.copyFromCheckout("sample-data/library.sqlite")
        // Member 981 favourites two books (264, then 301).
        try Self.queue(a).write { try $0.execute(sql: "INSERT INTO relations VALUES (981, 301, 'favorites')") }
        let b = try Shared.temporaryPath("library-b.sqlite")
        try FileManager.default.copyItem(atPath: a, toPath: b)
        XCTAssertEqual(try diff([a, b]).status, 0)
        for statement in ["update Book where id == 200 set pages = 1, author = #164", "insert Tag { label: \"new tag\" }", "delete Loan where id == 1900"] {
            XCTAssertEqual(try LoupeBinary.run(["query", b, statement, "--commit"]).status, 0, statement)
        }
        let queue = try DatabaseQueue(path: b)
        try queue.write { db in
            // Member 964 favourites another book; member 981's two favourites swap places.
            try db.execute(sql: "INSERT INTO relations VALUES (964, 300, 'favorites')")
            try db.execute(sql: "DELETE FROM relations WHERE from_id = 981 AND to_id = 264; INSERT INTO relations VALUES (981, 264, 'favorites')")
        }
        try queue.close()
        let run = try diff([a, b, "Book", "Tag", "Loan", "Member"])
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(run.stdout, """
            ~ Book #200  pages: 892 → 1; author: Author #129 → Author #164
            Book: 0 added, 0 removed, 1 changed of 750 in both (750 in A, 750 in B)
            + Tag #3001  label: "new tag"
            Tag: 1 added, 0 removed, 0 changed of 30 in both (30 in A, 31 in B)
            − Loan #1900  borrowed: "2022-08-04T00:00:00Z"; due: "2022-08-25T00:00:00Z"; returned: "2022-09-01T00:00:00Z"; renewals: 2; book: Book #514; member: Member #1209
            Loan: 0 added, 1 removed, 0 changed of 1199 in both (1200 in A, 1199 in B)
            ~ Member #964  favorites: +Book #300
            ~ Member #981  favorites: same targets, another order
            Member: 0 added, 0 removed, 2 changed of 300 in both (300 in A, 300 in B)
            differ: 4 of 4 types; 1 added, 1 removed, 3 changed (2279 in both compared)

            """)
        // NDJSON: a line per change, then the summary; JSON: one document of the same.
        let ndjson = try diff([a, b, "Member", "--format", "ndjson"])
        let lines = try ndjson.stdout.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        XCTAssertEqual(lines.count, 3)
        XCTAssertEqual(lines[1]["key"] as? Int, 981)
        XCTAssertEqual(((lines[1]["relations"] as? [String: Any])?["favorites"] as? [String: Any])?["reordered"] as? Bool, true)
        XCTAssertEqual((lines[2]["summary"] as? [String: Any])?["changed"] as? Int, 2)
        let json = try JSONSerialization.jsonObject(with: Data(try diff([a, b, "--format", "json"]).stdout.utf8)) as! [String: Any]
        let types = json["types"] as! [[String: Any]]
        XCTAssertEqual(types.map { $0["type"] as! String }, ["Publisher", "Tag", "Author", "Book", "Member", "Loan", "Review"])
        XCTAssertEqual(types.map { ($0["changes"] as! [Any]).count }, [0, 1, 0, 1, 2, 1, 0])
        XCTAssertEqual((json["summary"] as! [String: Any])["same"] as? Bool, false)
    }

    func testMatchingByAnAttributeAndTrouble() throws {
        let a = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let b = try Shared.temporaryPath("chinook-b.sqlite")
        try FileManager.default.copyItem(atPath: a, toPath: b)
        // Genres renumbered, one renamed: by key every genre changes; by name one is added, one removed.
        let queue = try Self.queue(b)
        try queue.write { db in
            try db.execute(sql: "UPDATE Genre SET GenreId = GenreId + 100; UPDATE Track SET GenreId = GenreId + 100")
            try db.execute(sql: "UPDATE Genre SET Name = 'Rock and Roll' WHERE Name = 'Rock'")
        }
        try queue.close()
        let byName = try diff([a, b, "Genre", "--by", "Genre.Name"])
        XCTAssertEqual(byName.status, 1, byName.stderr)
        XCTAssertEqual(byName.stdout.split(separator: "\n").filter { $0.hasPrefix("~") }.count, 24, byName.stdout)
        XCTAssertTrue(byName.stdout.contains("~ Genre #2 (#102 in B)  GenreId: 2 → 102\n"), byName.stdout)
        XCTAssertTrue(byName.stdout.contains("− Genre #1  GenreId: 1; Name: \"Rock\"\n"), byName.stdout)
        XCTAssertTrue(byName.stdout.contains("+ Genre #101  GenreId: 101; Name: \"Rock and Roll\"\n"), byName.stdout)
        XCTAssertTrue(try diff([a, b, "Genre"]).stdout.hasSuffix("differ: 1 of 1 type; 25 added, 25 removed, 0 changed (0 in both compared)\n"))
        // Trouble exits 2 with one line: a type neither has, an attribute that is not unique, a missing store, usage.
        for (arguments, message) in [([a, b, "Genra"], "Error: neither store has a type 'Genra' (did you mean 'Genre'?)\n"),
                                     ([a, b, "Employee", "--by", "Employee.ReportsTo"], "Error: Employee #1 in A has no ReportsTo to be matched by\n"),
                                     ([a, b, "Track", "--by", "Milliseconds"], "Error: Track.Milliseconds does not single out objects in A: #6 and #73 both hold 205662\n"),
                                     ([a, "/nonexistent.sqlite"], "Error: cannot open '/nonexistent.sqlite': no such file\n")] {
            let run = try diff(arguments)
            XCTAssertEqual(run.status, 2, arguments.description)
            XCTAssertTrue(run.stderr.hasSuffix(message), run.stderr)
        }
        XCTAssertEqual(try diff([a]).status, 2)
        XCTAssertEqual(try diff([a, b, "--format", "csv"]).status, 2)
    }

    /// Hostile names and values (control sequences, line breaks, bidi overrides) are shown escaped.
    func testHostileNamesAndValuesPrintEscaped() throws {
        let a = try HostileFiles.hostileNames()
        let b = try Shared.temporaryPath("names-b.sqlite")
        try FileManager.default.copyItem(atPath: a, toPath: b)
        try Self.queue(b).write { db in
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") {
                try db.execute(sql: "UPDATE \(HostileFiles.q(table)) SET id = id + 100")
            }
        }
        for format in ["table", "json", "ndjson"] {
            let run = try diff([a, b, "--format", format])   // checked free of terminal controls
            XCTAssertEqual(run.status, 1, run.stderr)
        }
    }

    /// Random inserts, updates and deletes on a relational file; the changes `loupe diff` lists
    /// are those SQL finds comparing the two files' rows.
    func testRandomPairsAgreeWithSQL() throws {
        let a = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        for seed in 1 ... 3 {
            let b = try Shared.temporaryPath("chinook-random-\(seed).sqlite")
            try? FileManager.default.removeItem(atPath: b)
            try FileManager.default.copyItem(atPath: a, toPath: b)
            var rng = SampleGenerator.Random(state: UInt64(seed))
            let queue = try Self.queue(b)
            try queue.write { db in
                for _ in 0 ..< 40 {
                    let id = Int(rng.next() % 3600)
                    switch rng.next() % 4 {
                    case 0: try db.execute(sql: "DELETE FROM Track WHERE TrackId = ?", arguments: [id])
                    case 1: try db.execute(sql: "UPDATE Track SET Name = Name || '!' WHERE TrackId = ?", arguments: [id])
                    case 2: try db.execute(sql: "UPDATE Track SET AlbumId = ? WHERE TrackId = ?", arguments: [Int(rng.next() % 347) + 1, id])
                    default: try db.execute(sql: "INSERT OR IGNORE INTO Track (TrackId, Name, MediaTypeId, Milliseconds, UnitPrice) VALUES (?, 'new', 1, 1, 0.99)", arguments: [id + 4000])
                    }
                }
            }
            let expected = try queue.read { db -> [String: Set<Int>] in
                try db.execute(sql: "ATTACH DATABASE ? AS a", arguments: [a])
                func ids(_ sql: String) throws -> Set<Int> { Set(try Int.fetchAll(db, sql: sql)) }
                return ["added": try ids("SELECT TrackId FROM main.Track EXCEPT SELECT TrackId FROM a.Track"),
                        "removed": try ids("SELECT TrackId FROM a.Track EXCEPT SELECT TrackId FROM main.Track"),
                        "changed": try ids("SELECT TrackId FROM (SELECT * FROM main.Track EXCEPT SELECT * FROM a.Track) WHERE TrackId IN (SELECT TrackId FROM a.Track)")]
            }
            try queue.close()
            let run = try diff([a, b, "Track", "--format", "ndjson"])
            XCTAssertEqual(run.status, expected.values.allSatisfy(\.isEmpty) ? 0 : 1, run.stderr)
            var found: [String: Set<Int>] = ["added": [], "removed": [], "changed": []]
            for line in run.stdout.split(separator: "\n").dropLast() {
                let change = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
                found[change["change"] as! String]!.insert(change["key"] as! Int)
            }
            XCTAssertEqual(found, expected, "seed \(seed)")
        }
    }

    /// A Persist file and its copy in PostgreSQL are the same graph; a change on one side shows.
    func testAPersistFileAgainstItsCopyInPostgreSQL() throws {
        let url: String
        do { url = try PostgresServer.url() } catch { throw XCTSkip("no PostgreSQL server: \(error)") }
        _ = url
        let a = try Shared.copyFromCheckout("sample-data/library.sqlite")
        let database = try PostgresServer.persistDatabase(copying: a, named: "loupe_diff_persist", documentType: "jsonb")
        let same = try diff([a, database])
        XCTAssertEqual(same.status, 0, same.stdout + same.stderr)
        XCTAssertTrue(same.stdout.hasSuffix("same: 7 types, 3000 objects compared\n"), same.stdout)
        XCTAssertEqual(try PostgresServer.psql(database, "UPDATE by_type SET json = jsonb_set(json, '{pages}', '1') WHERE id = 200"), 0)
        let changed = try diff([a, database, "Book"])
        XCTAssertEqual(changed.status, 1)
        XCTAssertEqual(changed.stdout.split(separator: "\n").first, "~ Book #200  pages: 892 → 1")
        XCTAssertFalse(changed.stdout.contains("postgres@") || changed.stderr.contains("password"))
    }

    /// A connection to `path` that leaves foreign keys unchecked (as an app's own writes may).
    private static func queue(_ path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    private func diff(_ arguments: [String]) throws -> LoupeBinary.Run {
        let run = try LoupeBinary.run(["diff"] + arguments, timeout: 120)
        XCTAssertFalse(run.crashed || run.timedOut, run.description)
        XCTAssertFalse(run.stdout.hasTerminalControl || run.stderr.hasTerminalControl)
        return run
    }
}
