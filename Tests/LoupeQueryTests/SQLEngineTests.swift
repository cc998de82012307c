import Foundation
import GRDB
import LoupeModel
import LoupeQuery
import LoupeSQL
import LoupeStore
import LoupeTestSupport
import XCTest

/// The SQL engine (``SQLPushdown``) against the in-memory engine on a file built to make them
/// disagree: mixed kinds in one column, dates as ISO text, Unix numbers, garbage and out-of-range
/// numbers, keys held as text or real in an untyped foreign key, dangling references, Unicode
/// that case folding and canonical equivalence treat specially, a text primary key, a primary key
/// with a NULL. Hundreds of generated statements: every one SQL answers must print the same JSON
/// as the engine, every error must read the same, and most must translate.
final class SQLEngineTests: XCTestCase {
    static func makeFile() throws -> String {
        try HostileFiles.make("sql-engine.sqlite") { db in
            try db.execute(sql: """
                CREATE TABLE author (id INTEGER PRIMARY KEY, name TEXT, born INTEGER, country, joined DATE);
                CREATE TABLE book (id INTEGER PRIMARY KEY, title TEXT, pages, price REAL, author_id INTEGER REFERENCES author(id),
                                   editor REFERENCES author(id), published DATETIME, tag BLOB);
                CREATE TABLE loan (code TEXT PRIMARY KEY, book_ref INTEGER REFERENCES book(id), member TEXT, due TIMESTAMP);
                INSERT INTO author VALUES (1, 'Ann', 1950, 'UK', '2001-02-03'), (2, 'Émile', 1890, 'FR', 1600000000),
                    (3, 'ÉMILE', NULL, NULL, 'not a date'), (4, 'e\u{301}mile', 1890.0, 'fr', 253402300800000),
                    (5, 'Kelvin', 2000, 'uk', '2020-01-01T10:00:00Z'), (6, '', -5, '', NULL), (7, 'straße', 1920, 'DE', '1999-12-31 23:00:00 +02:00');
                INSERT INTO book VALUES
                    (1, 'The Sea', 300, 9.5, 1, 2, '2020-01-02', x'00ff'),
                    (2, 'the sea', '300', 10, 1, '2', '2020-01-02T00:00:00Z', NULL),
                    (3, 'Über', 1.5, NULL, 2, 2.0, 1580000000, 'text tag'),
                    (4, 'A*B?', NULL, 7.25, 999, 'x', 'soon', 7),
                    (5, 'love story', 120, 7.25, NULL, NULL, NULL, NULL),
                    (6, 'Love Story', x'01', 3, 3, 3, 1e15, NULL),
                    (7, 'kelvin', 500, 20, 5, ' 5', '2019-06-01 12:00:00 Z', NULL),
                    (8, 'Straße', -1, 0, 7, 7, '1999-01-01', NULL),
                    (9, 'ends in e\u{301}', 250, 12.5, 4, 4, '2001-01-01', NULL);
                INSERT INTO loan VALUES ('a', 1, 'Zoe', '2024-01-01'), ('b', 1, 'Yan', NULL), ('c', 2, 'Zoe', '2024-02-01'),
                    ('d', 3, NULL, 1700000000), ('e', 777, 'Xi', 'later'), (NULL, 7, 'Wu', '2023-01-01'), ('f', 7, 'Zoe', '2023-06-01'),
                    ('g', 7, 'zoe', '2022-01-01');
                """.replacingOccurrences(of: "\\u{301}", with: "\u{301}"))
        }
    }

    /// A deterministic generator (the same statements every run).
    struct Generator {
        var state: UInt64
        mutating func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
        mutating func pick<T>(_ items: [T]) -> T { items[next(items.count)] }
    }

    static let bookScalars = ["pages", "price", "title", "published", "tag", "id", "author.name", "author.born", "author.joined",
                              "editor.name", "editor.country", "author.id", "editor.born", "author_id", "editor",
                              "@links.Loan.book_ref.@count", "@links.Loan.book_ref.due.@max", "@links.Loan.book_ref.member.@min",
                              "author.@links.book.author_id.@count", "author.@links.book.author_id.pages.@sum",
                              "@links.Loan.book_ref.due.@avg", "SUBQUERY(@links.Loan.book_ref, $l, $l.member ==[c] \"zoe\").@count"]
    static let bookCollections = ["@links.Loan.book_ref.member", "@links.Loan.book_ref.due", "author.@links.book.author_id.title",
                                  "@links.Loan.book_ref.code"]
    static let literals = ["300", "\"300\"", "1.5", "-5", "0", "null", "\"\"", "\"the sea\"", "\"É\"", "\"e\"", "\"zoe\"", "\"Zoe\"",
                           "2020-01-02", "2001-01-01T00:00:00Z", "true", "\"straße\"", "1890", "7.25", "\"2020-01-02\"", "{1, 2, \"300\"}",
                           "{\"Zoe\", \"Yan\"}", "\"*e*\"", "\"e\u{301}mile\""]
    static let operators = ["==", "!=", "<", "<=", ">", ">=", "==[c]", "!=[cd]", "BEGINSWITH", "BEGINSWITH[c]", "ENDSWITH[d]", "CONTAINS",
                            "CONTAINS[c]", "LIKE", "LIKE[c]", "MATCHES", "IN"]

    static func atom(_ g: inout Generator) -> String {
        switch g.next(7) {
        case 0, 1, 2:
            let op = g.pick(operators)
            var literal = g.pick(literals)
            if op == "MATCHES" { literal = g.pick(["\".*e.*\"", "\"[A-Z].*\"", "\"(\"", "\"300\""]) }
            return "\(g.pick(bookScalars)) \(op) \(literal)"
        case 3:
            return "\(g.pick(["", "ANY ", "ALL ", "NONE "]))\(g.pick(bookCollections)) \(g.pick(operators)) \(g.pick(literals))"
        case 4:
            return "\(g.pick(bookScalars)) BETWEEN {\(g.pick(["0", "1.5", "2000-01-01", "\"a\""])), \(g.pick(["300", "9.5", "2030-01-01", "\"z\""]))}"
        case 5:
            return "\(g.pick(["5", "\"the sea\"", "2020-01-02"])) \(g.pick(["<", "==", ">="])) \(g.pick(bookScalars))"
        default:
            return "\(g.pick(bookScalars)) \(g.pick(["==", "<", "!="])) \(g.pick(bookScalars))"
        }
    }

    static func predicate(_ g: inout Generator, depth: Int = 0) -> String {
        if depth > 1 { return atom(&g) }
        switch g.next(5) {
        case 0: return "(\(predicate(&g, depth: depth + 1)) AND \(predicate(&g, depth: depth + 1)))"
        case 1: return "(\(predicate(&g, depth: depth + 1)) OR \(predicate(&g, depth: depth + 1)))"
        case 2: return "NOT (\(predicate(&g, depth: depth + 1)))"
        default: return atom(&g)
        }
    }

    static func statement(_ g: inout Generator) -> String {
        let p = predicate(&g)
        switch g.next(6) {
        case 0: return "count book where \(p)"
        case 1: return "book where \(p) sort by \(g.pick(bookScalars.filter { !$0.hasPrefix("SUBQUERY") }))\(g.pick(["", " desc"])), id limit \(g.pick(["3", "100"]))"
        case 2: return "book where \(p) select title, \(g.pick(bookScalars)), \(g.pick(bookScalars)) as other"
        case 3: return "book where \(p) group by \(g.pick(["author.name", "pages", "editor.country", "published"]))"
        case 4: return "book where \(p) distinct \(g.pick(["author.name", "price"])) sort by title"
        default: return "book where \(p)"
        }
    }

    /// The engine's answer or error, as text.
    static func memory(_ statement: String, _ graph: ObjectGraph) -> String {
        do { return try QueryEngine(graph: graph).run(statement).render(.json, graph: graph) } catch { return "error: \(error)" }
    }

    func testGeneratedStatementsAgreeWithTheEngine() throws {
        let path = try Self.makeFile()
        let graph = try LoadedStore.open(path).graph
        let file = try StoreFile.openForReading(path)
        // More statements, or another seed, from the environment (a longer local run).
        let environment = ProcessInfo.processInfo.environment
        var g = Generator(state: UInt64(environment["LOUPE_SQL_SEED"] ?? "") ?? 42)
        let target = Int(environment["LOUPE_SQL_STATEMENTS"] ?? "") ?? 600
        var translated = 0, total = 0, errors = 0
        var seen = Set<String>()
        while total < target {
            let statement = Self.statement(&g)
            guard seen.insert(statement).inserted else { continue }
            total += 1
            let expected = Self.memory(statement, graph)
            let parsed: LoupeQuery.Statement
            do { parsed = try Parser.parse(statement) } catch { XCTFail("does not parse: \(statement)"); continue }
            do {
                guard let (result, resultGraph) = try SQLPushdown.run(parsed, file: file) else { continue }
                translated += 1
                XCTAssertEqual(result.render(.json, graph: resultGraph), expected, statement)
            } catch {
                errors += 1
                XCTAssertEqual("error: \(error)", expected, statement)
            }
        }
        XCTAssertGreaterThan(translated, total / 2, "most statements translate (\(translated) of \(total), \(errors) errors)")
        print("SQL engine: \(translated) of \(total) generated statements translated, \(errors) errors equal to the engine's")
    }

    /// A key that is always an integer compared with a number is SQL's own comparison (a rowid
    /// range, no engine test per row), with the engine's answers.
    func testIntegerKeyRangesArePlainSQL() throws {
        let path = try Self.makeFile()
        let graph = try LoadedStore.open(path).graph
        let file = try StoreFile.openForReading(path)
        for statement in ["count book where id <= 3", "book where id > 2 sort by title", "count book where id != 2", "book where id >= 2.5 AND id < 5",
                          "count book where NOT (id > 4)", "count author where id BETWEEN {2, 5}"] {
            SQLTrace.start()
            let answer = try XCTUnwrap(try SQLPushdown.run(try Parser.parse(statement), file: file), statement)
            let sent = SQLTrace.stop().joined(separator: "\n")
            XCTAssertEqual(answer.0.render(.json, graph: answer.1), Self.memory(statement, graph), statement)
            XCTAssertFalse(sent.contains("loupe_test"), "\(statement): \(sent)")
            XCTAssertTrue(sent.contains(#"a0."id" "#), "\(statement): \(sent)")
        }
        // A column of numbers and NULLs (its kinds a fact) is compared without a typeof test;
        // one that also holds text keeps it.
        for (statement, form) in [("count author where born > 1900", #"coalesce(a0."born" > "#), ("count author where NOT (born < 1950)", #"coalesce(a0."born" < "#),
                                  ("count book where pages > 100", #"typeof(a0."pages") IN"#)] {
            SQLTrace.start()
            let answer = try XCTUnwrap(try SQLPushdown.run(try Parser.parse(statement), file: file), statement)
            let sent = SQLTrace.stop().joined(separator: "\n")
            XCTAssertEqual(answer.0.render(.json, graph: answer.1), Self.memory(statement, graph), statement)
            XCTAssertTrue(sent.contains(form), "\(statement): \(sent)")
        }
    }

    /// What a plan needs to know of a column (here: whether `title` holds text outside ASCII,
    /// for a sort) is computed once per state of the file and kept in Loupe's cache: the next
    /// process reads it back; a change to the file makes it computed again.
    func testColumnFactsAreKeptUntilTheFileChanges() throws {
        let cache = ScratchCache()
        defer { cache.restore() }
        let path = try Self.makeFile()
        let first = FileFacts(file: try StoreFile.openForReading(path))
        let sql = "SELECT random()"
        let value = try StoreFile.openForReading(path).read { try first.scalar($0, sql: sql) }
        first.save()
        let again = FileFacts(file: try StoreFile.openForReading(path))
        XCTAssertEqual(try StoreFile.openForReading(path).read { try again.scalar($0, sql: sql) }, value, "read back, not computed again")
        try DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE book SET title = 'x' WHERE id = 1") }
        let changed = FileFacts(file: try StoreFile.openForReading(path))
        XCTAssertNotEqual(try StoreFile.openForReading(path).read { try changed.scalar($0, sql: sql) }, value, "the file changed: computed again")
        // A statement's facts are kept by the plan itself.
        _ = try SQLPushdown.run(try Parser.parse("book sort by title limit 2"), file: try StoreFile.openForReading(path))
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: cache.path).contains { $0.hasPrefix("sqlfacts-") })
    }

    /// Arithmetic compared with a number is answered in SQL as the engine computes it: integers
    /// until they overflow, then doubles; `/` as doubles, null for a zero divisor; values that
    /// are no number to the engine (text that spells one, blobs, dates) null; infinities and the
    /// NaN they make (null in SQL) failing or passing each comparison as NaN does.
    func testArithmeticComparedWithANumberIsTheEngines() throws {
        let path = try Shared.temporaryPath()
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: """
                CREATE TABLE v (id INTEGER PRIMARY KEY, x, y REAL, d DATE, owner INTEGER REFERENCES v(id));
                INSERT INTO v (x, y, d, owner) VALUES (3, 0.5, '2020-01-02', NULL), (-7, -2.25, 1000, 1), ('12', 4, NULL, 2), (x'0102', NULL, NULL, 1),
                  (NULL, 0, NULL, 3), (9223372036854775807, 9e999, NULL, 4), (-9223372036854775808, -9e999, NULL, 6), (0, 1e308, NULL, 7),
                  (4503599627370497, 3.0, NULL, 1), (2.5, 2, NULL, 9);
                """)
        }
        let graph = try LoadedStore.open(path).graph
        let file = try StoreFile.openForReading(path)
        let tests = ["x * 2 > 5", "x * 2 <= 5", "x + 1 > 0", "x + 9007199254740991 > 0", "x - 1 < 0", "x * x > 1000", "x / 2 == 1.5", "x / 0 > -1", "x / 0 != 3",
                     "-x > 6", "-x < -1000", "0 - x > 0", "x * y > 1", "y * 0 != 1", "y * 0 == 0", "y - y < 1", "y * 10 > 1e15", "y / y == 1", "x / y >= 1",
                     "x + y * 2 - 1 > 2", "(x + 1) * (y - 1) != 0", "x * 1 == 12", "owner.x * 2 > 5", "owner.owner.y * 3 < 0", "x * \"a\" > 1",
                     "x * true > 0", "x / 3 * 3 == 1", "y * 1e308 > 0"]
        for test in tests {
            let statement = "v where \(test) select id"
            let answer = try XCTUnwrap(try SQLPushdown.run(try Parser.parse(statement), file: file), statement)
            XCTAssertEqual(answer.result.render(.json, graph: answer.graph), Self.memory(statement, graph), statement)
        }
        // Left to the engine: a date column (its numbers may be dates or not, value by value),
        // arithmetic beside a path, beside nil, or beyond the numbers a double holds exactly.
        for test in ["d * 1 > 0", "x * 2 > y", "x * 2 == nil", "y * 10 > 1e300"] {
            XCTAssertNil(try SQLPushdown.run(try Parser.parse("v where \(test)"), file: file), test)
        }
    }

    /// Objects compared with keys (`Album == #3`, `Album != nil`, `ANY @links.Track.Album IN
    /// {#5, 6}`) are their keys compared, in SQL, with the engine's answers; comparisons a key's
    /// value could answer otherwise than an object (ordered, with options, with a boolean, a
    /// name that is also an attribute, one text on `IN`'s right) are left as they are.
    func testObjectsComparedWithKeys() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let graph = try LoadedStore.open(path).graph
        let file = try StoreFile.openForReading(path)
        for statement in ["count Track where Album == #3", "count Track where Album == 3.0", "count Track where Album != #3", "count Track where Album == nil",
                          "count Track where Album != nil", "Track where Album IN {#3, #4, 5, \"x\", nil} sort by Name limit 5 select Name",
                          "count Album where ANY @links.Track.Album == #5", "count Album where NONE @links.Track.Album IN {#5, #6, #7}",
                          "count Playlist where ANY @links.PlaylistTrack.Playlist.Track == #3", "Customer where SupportRep == #3 AND Country == \"USA\" select LastName",
                          "count Invoice where Customer.SupportRep != #4", "count Track where Album.Artist == #22 OR Genre == #7"] {
            let answer = try XCTUnwrap(try SQLPushdown.run(try Parser.parse(statement), file: file), statement)
            XCTAssertEqual(answer.result.render(.json, graph: answer.graph), Self.memory(statement, graph), statement)
            XCTAssertNotEqual(Self.memory(statement, graph), "0", "\(statement) finds something")
        }
        let track = try XCTUnwrap(graph.type(named: "Track")).index, employee = try XCTUnwrap(graph.type(named: "Employee")).index
        func rewritten(_ predicate: String, on type: Int) throws -> String {
            guard case .query(let q) = try Parser.parse("T where \(predicate)") else { XCTFail(predicate); return "" }
            return try XCTUnwrap(q.predicate).comparingKeys(from: type, in: graph).description
        }
        XCTAssertEqual(try rewritten("Album == #3 AND ANY @links.PlaylistTrack.Track IN {1, 2}", on: track),
                       "((Album.id == #3) AND (ANY @links.PlaylistTrack.Track.id IN {1, 2}))")
        for kept in ["Album < #3", "Album ==[c] \"x\"", "Album == true", "Album IN \"3\"", "Album == 2020-01-01", "Album.Title == \"x\"",
                     "SUBQUERY(@links.PlaylistTrack.Track, $p, $p.Playlist == #1).@count > 0"] {
            XCTAssertEqual(try rewritten(kept, on: track), try rewritten(kept, on: -1), kept)
        }
        // `ReportsTo` is an attribute and a relation: the engine reads a last name as the attribute.
        XCTAssertEqual(try rewritten("ReportsTo == 2", on: employee), "(ReportsTo == 2)")
    }

    /// The file is never written by answering, and the hand-picked corners agree.
    func testCornersAndReadOnly() throws {
        let path = try Self.makeFile()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let graph = try LoadedStore.open(path).graph
        let file = try StoreFile.openForReading(path)
        for statement in ["count loan", "loan sort by due", "loan sort by member desc, code limit 3", "loan sort by member limit 2 offset 1", "loan where book_ref.title BEGINSWITH[c] \"the\"", "count author where @links.book.author_id.@count > 1",
                          "author where ALL @links.book.author_id.pages > 100 sort by name", "author where NONE @links.book.author_id.title CONTAINS \"e\"",
                          "book where author.@links.book.author_id.@count == 2 sort by id desc select id, author.name",
                          "book where title ==[cd] \"uber\"", "book where title == \"ends in é\"",
                          "count book where pages MATCHES \"(a+)+\"", "book group by author.joined", "book where tag == nil select title"] {
            let parsed = try Parser.parse(statement)
            let answer = try XCTUnwrap(try SQLPushdown.run(parsed, file: file), statement)
            XCTAssertEqual(answer.result.render(.json, graph: answer.graph), Self.memory(statement, graph), statement)
        }
        // Left to the engine: arithmetic on both sides (SQL's NULL would stand for the engine's
        // NaN too), a path ending on an object ordered, a bare predicate, and a relation whose keys
        // match only by affinity (`editor` holds the text "2" for the key 2).
        for statement in ["book where pages * 2 > pages + 100", "book where pages * 2 == nil", "book where author < #1", "pages > 3", "book where editor.name ==[c] \"émile\"",
                          "count author where @links.book.editor.@count > 1"] {
            XCTAssertNil(try SQLPushdown.run(try Parser.parse(statement), file: file), statement)
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
    }

    /// Tables without a rowid (`WITHOUT ROWID`, keyed by text, by a composite key, by a key
    /// declared `DESC` or `COLLATE NOCASE`) are stepped into along their keys — a to-one path's
    /// far end, a backlink's rows — as a load links them (byte for byte, whatever the key's
    /// collation); statements on them (whose rows SQL cannot hand over by rowid) are left to the
    /// engine. A `NOCASE` column sorts and groups by bytes, as in the engine.
    func testPathsIntoTablesWithoutARowid() throws {
        let path = try Shared.temporaryPath()
        var unchecked = Configuration()
        unchecked.foreignKeysEnabled = false   // a key naming no row ('zz') is kept, as files keep them
        try DatabaseQueue(path: path, configuration: unchecked).write { db in
            try db.execute(sql: """
                CREATE TABLE author (code TEXT PRIMARY KEY, name TEXT) WITHOUT ROWID;
                CREATE TABLE genre (name TEXT PRIMARY KEY COLLATE NOCASE, rank INTEGER) WITHOUT ROWID;
                CREATE TABLE book (id INTEGER PRIMARY KEY, title TEXT, author TEXT REFERENCES author(code), genre TEXT REFERENCES genre(name), pages INTEGER,
                                   shelf TEXT COLLATE NOCASE);
                CREATE INDEX book_shelf ON book (shelf);
                CREATE TABLE tag (book INTEGER REFERENCES book(id), label TEXT, weight REAL, PRIMARY KEY (book DESC, label)) WITHOUT ROWID;
                CREATE TABLE review (id INTEGER PRIMARY KEY, book INTEGER REFERENCES book(id), stars INTEGER);
                INSERT INTO author VALUES ('b2', 'Bob'), ('a1', 'Ann'), ('c3', 'Cy');
                INSERT INTO genre VALUES ('Poetry', 1), ('crime', 2);
                INSERT INTO book VALUES (1, 'X', 'a1', 'poetry', 100, 'b'), (2, 'Y', 'b2', 'Crime', 250, 'A'), (3, 'Z', 'a1', NULL, 80, 'a'), (4, 'W', 'zz', 'crime', 40, 'B');
                INSERT INTO tag VALUES (1, 'red', 0.5), (1, 'blue', 2), (3, 'red', 1), (2, 'green', NULL);
                INSERT INTO review VALUES (1, 1, 5), (2, 1, 3), (3, 4, 1);
                """)
        }
        let graph = try LoadedStore.open(path).graph
        let file = try StoreFile.openForReading(path)
        for statement in ["count book where author.name == \"Ann\"", "book where author.name BEGINSWITH \"B\" select title, author.name",
                          "book sort by author.name, title select title, author.name, genre.rank", "book group by author.name",
                          "book where @links.tag.book.@count > 0 select title, @links.tag.book.@count, @links.tag.book.@sum.weight",
                          "book where ANY @links.tag.book.label == \"red\" select title", "book where NONE @links.tag.book.weight > 1 select title",
                          "review where book.author.name == \"Ann\" select stars, book.title", "book where genre.rank == 2 select title",
                          "book where SUBQUERY(@links.tag.book, $t, $t.label != \"red\").@count > 0 select title",
                          // A column's collation does not change the engine's order or groups (text by bytes).
                          "book sort by shelf select title, shelf", "book sort by shelf desc limit 2 select title", "book group by shelf"] {
            let answer = try XCTUnwrap(try SQLPushdown.run(try Parser.parse(statement), file: file), statement)
            XCTAssertEqual(answer.result.render(.json, graph: answer.graph), Self.memory(statement, graph), statement)
        }
        for statement in ["author where @links.book.author.@count > 1", "tag where book.title == \"X\"", "count author"] {
            XCTAssertNil(try SQLPushdown.run(try Parser.parse(statement), file: file), statement)
        }
    }

    /// `loupe show` by indexed lookups (``RelationalFormat/neighbourhood(_:type:ids:)``) prints
    /// what the loaded graph prints, for objects of every Chinook table and every object of the
    /// hostile file (text-spelled and dangling keys, a NULL primary key, a text primary key), and
    /// of files that declare no foreign keys (the relations a load infers, found over the file).
    /// Tables with composite keys are left to a load.
    func testShowByLookupsEqualsTheLoadedGraph() throws {
        for path in [try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite"), try Self.makeFile(),
                     try HostileFiles.undeclaredChinook(), try HostileFiles.awkwardUndeclared()] {
            let graph = try LoadedStore.open(path).graph
            var compared = 0
            for type in graph.types {
                if case .columns = type.keyPolicy { continue }   // composite keys: `show` loads
                let rows = type.count <= 30 ? Array(0..<type.count) : Array(0..<15) + Array(type.count - 5..<type.count)
                for row in rows {
                    let ref = ObjectRef(type: Int32(type.index), row: Int32(row))
                    let id = graph.id(of: ref)
                    guard let (small, found) = try LoadedStore.neighbourhood(path, type: type.name.rawValue, ids: [id]) else {
                        XCTFail("\(type.name) declined"); continue
                    }
                    let smallRef = try XCTUnwrap(found, "\(type.name) #\(id)")
                    XCTAssertEqual(small.describe(smallRef), graph.describe(ref), "\(type.name) #\(id)")
                    compared += 1
                }
            }
            XCTAssertGreaterThan(compared, 20)
        }
    }
}
