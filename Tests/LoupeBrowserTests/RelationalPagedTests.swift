import Foundation
import GRDB
import LoupeBrowser
import LoupeModel
import LoupeQuery
import LoupeSQL
import LoupeStore
import LoupeTestSupport
import TerminalKit
import XCTest

/// Paged mode over plain relational SQLite files (``RelationalPages``) against the whole graph:
/// the same keys in a browser on the loaded graph and in one reading the file a window at a time
/// give the same screens, on real databases and on files made to be awkward.
final class RelationalPagedTests: XCTestCase {
    func relational(_ file: StoreFile, _ edges: Int) throws -> PageSource { try RelationalPages.open(file, edgesPerObject: edges) }

    func testChinookPagedScreensAreTheLoadedGraphs() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        for seed in UInt64(1)...6 {
            try walk(path, seed: seed, count: 150, edgesPerObject: Int(seed % 3) * 5 + 1, windowRows: 40, open: relational)
        }
        try walk(path, seed: 9, count: 150, edgesPerObject: 2_000, windowRows: 300, open: relational)
    }

    /// The tables are listed without their row counts, read off the UI thread while the first
    /// screen is drawn (see ``assertFirstScreenWaitsForNoCount(graph:open:)``).
    func testTheFirstScreenDoesNotWaitForTheCounts() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        try assertFirstScreenWaitsForNoCount(graph: try LoadedStore.open(path).graph) { try RelationalPages.open(try StoreFile.openForReading(path)) }
    }

    /// Keys by position, from any window, before the tables are counted (read from the window or
    /// the first row, fewer past the end) and after: the load's keys in its order; tables without
    /// a rowid (paged by position) count first.
    func testKeysByPositionBeforeAndAfterCounting() throws {
        for path in [try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite"), try HostileFiles.awkwardRelational()] {
            let graph = try LoadedStore.open(path).graph
            let pages = try RelationalPages.open(try StoreFile.openForReading(path))
            XCTAssertTrue(pages.listedTypes.allSatisfy { $0.count == nil }, path)
            assertKeysByPosition(graph: graph, pages: pages, seed: 7, rounds: 12, length: 40, withoutNear: true, label: "uncounted")
            try pages.countTypes()
            XCTAssertEqual(pages.listedTypes.map(\.count), graph.types.map(\.count), path)
            assertKeysByPosition(graph: graph, pages: pages, seed: 8, rounds: 12, length: 40, withoutNear: true, label: "counted")
        }
    }

    func testAwkwardKeysPageAsTheyLoad() throws {
        let path = try HostileFiles.awkwardRelational()
        for seed in UInt64(1)...8 {
            try walk(path, seed: seed, count: 150, edgesPerObject: Int(seed % 4) * 7 + 1, windowRows: 30, open: relational)
        }
    }

    /// Names holding quotes, escapes and SQL (tables, columns, a foreign key's column): the
    /// file's indexes are read with the names bound, and windows page as they load.
    func testHostileNamesPageAsTheyLoad() throws {
        let path = try HostileFiles.hostileNames()
        for seed in UInt64(1)...3 { try walk(path, seed: seed, count: 120, edgesPerObject: Int(seed), windowRows: 30, open: relational) }
    }

    func testNorthwindPagedScreensAreTheLoadedGraphs() throws {
        let path = try Shared.copy("realdata/northwind/northwind_w3schools.db3")
        for seed in UInt64(1)...4 { try walk(path, seed: seed, count: 150, edgesPerObject: Int(seed) * 4, windowRows: 40, open: relational) }
    }

    func pagesAndSQL(_ file: StoreFile) throws -> (PageSource, any QuerySource) {
        let pages = try RelationalPages.open(file)
        return (pages, RelationalQuerySource(pages: pages))
    }

    /// Each type's relations as `name → target (inferred)`, by type.
    func relationShapes(_ graph: ObjectGraph) -> [String] {
        graph.types.map { type in
            type.name.rawValue + ": " + type.relations.map { r in
                "\(r.name) → \(r.targetTypes.map { graph.types[$0].name.rawValue }) via \(r.foreignKey?.attribute ?? "-")\(r.isInferred ? " (inferred)" : "")"
            }.joined(separator: ", ")
        }
    }

    /// Files that declare no foreign keys: paged mode finds over the file, in SQL, the relations
    /// a load infers from the `XId` columns' values (value by value where SQL cannot decide as the
    /// load's key index does), and links its windows by them: the loaded graph's relations,
    /// screens and answers.
    func testUndeclaredRelationsAreInferredAsALoadInfersThem() throws {
        let chinook = try HostileFiles.undeclaredChinook(), awkward = try HostileFiles.awkwardUndeclared()
        let expected: [String: Set<String>] = [
            chinook: ["Album.ArtistId → Artist", "Invoice.CustomerId → Customer", "InvoiceLine.InvoiceId → Invoice", "InvoiceLine.TrackId → Track",
                      "PlaylistTrack.PlaylistId → Playlist", "PlaylistTrack.TrackId → Track", "Track.AlbumId → Album", "Track.MediaTypeId → MediaType",
                      "Track.GenreId → Genre"],
            // Not Visit.TagID (`abc` is no key: Swift does not fold case), nor Log.OwnerId (dates).
            awkward: ["Pet.OwnerId → Owner", "Pet.CodeId → Code", "Pet.TagId → Tag", "Visit.OwnerId → Owner", "Visit.CodeId → Code",
                      "Visit.Tag_Id → Tag", "Bill.OwnerId → Owners"],
        ]
        let twins = try HostileFiles.awkwardUndeclared(unicodeTwins: true)
        for path in [chinook, awkward, twins] {
            let graph = try LoadedStore.open(path).graph
            let pages = try RelationalPages.open(try StoreFile.openForReading(path))
            XCTAssertEqual(Set(pages.inferred.map { "\($0.table).\($0.column) → \($0.target)" }), expected[path] ?? expected[awkward], path)
            XCTAssertEqual(relationShapes(pages.layout.graph), relationShapes(graph), path)
            XCTAssertFalse(pages.notes.contains { $0.contains("not inferred") }, "\(pages.notes)")
        }
        for seed in UInt64(1)...4 {
            try walk(chinook, seed: seed, count: 150, edgesPerObject: Int(seed % 3) * 5 + 1, windowRows: 40, open: relational)
            try walk(awkward, seed: seed, count: 150, edgesPerObject: Int(seed % 4) * 7 + 1, windowRows: 30, open: relational)
        }
        // Statements through inferred relations, answered over the file.
        let graph = try LoadedStore.open(chinook).graph
        for statement in ["Track where Album.Artist.Name BEGINSWITH \"A\" sort by Name", "Album where @links.Track.Album.@count > 20",
                          "InvoiceLine group by Track.Genre.Name", "count Track where ANY @links.PlaylistTrack.Track.Playlist.Name == \"Music\""] {
            try assertSameAnswer(statement, graph: graph, path: chinook, pushedDown: true, lines: Self.comparedLines(statement), open: pagesAndSQL)
        }
    }

    /// What paged mode inferred is kept in Loupe's cache for the file as it is, and decided again
    /// once the file changes: a stray value written since unmakes the relation.
    func testInferredRelationsAreKeptUntilTheFileChanges() throws {
        let cache = ScratchCache()
        defer { cache.restore() }
        let path = try HostileFiles.awkwardUndeclared()
        let first = try RelationalPages.open(try StoreFile.openForReading(path))
        XCTAssertTrue(first.inferred.contains(InferredKey(table: "Pet", column: "CodeId", target: "Code")))
        let kept = try FileManager.default.contentsOfDirectory(atPath: cache.path).filter { $0.hasPrefix("inferred-") }
        XCTAssertEqual(kept.count, 1, "\(kept)")
        XCTAssertEqual(try RelationalPages.open(try StoreFile.openForReading(path)).inferred, first.inferred)
        // (More than one value in ten naming nothing: a few are tolerated as broken links.)
        try DatabaseQueue(path: path).write { db in try db.execute(sql: "UPDATE Pet SET CodeId = 99 WHERE Id % 3 = 0") }
        let after = try RelationalPages.open(try StoreFile.openForReading(path))
        XCTAssertFalse(after.inferred.contains(InferredKey(table: "Pet", column: "CodeId", target: "Code")))
        XCTAssertEqual(relationShapes(after.layout.graph), relationShapes(try LoadedStore.open(path).graph))
    }

    /// Statements in relational paged mode are answered by SQLite over the file (paths, backlinks,
    /// aggregates, sorts, projections, groups), or on a table's own attributes a chunk at a time
    /// when SQL cannot say them exactly: the loaded browser's screen and answer each time; errors
    /// read the same; what needs the whole graph says so.
    func testStatementsAreAnsweredOverTheFile() throws {
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let graph = try LoadedStore.open(chinook).graph
        let statements = [
            "count Track where Milliseconds > 300000", "Track where Album.Artist.Name BEGINSWITH \"A\" sort by Name",
            "Album where @links.Track.Album.@count > 20", "InvoiceLine group by Track.Genre.Name", "Invoice where Total > 10 limit 5",
            "Customer sort by Country, LastName select FirstName, LastName, Country", "Employee where ReportsTo.ReportsTo == nil",
            "Track where Nmae == 1", "count Track where ANY @links.PlaylistTrack.Track.Playlist.Name == \"Music\"",
            "Track where Milliseconds / 1000 > 600",   // arithmetic: SQL declines, the engine answers a chunk at a time
            // … and SQL gives what it reads through relations, for each chunk's rows by key.
            "Track where Milliseconds / 1000 > 600 sort by Album.Title, Name select Name, Album.Artist.Name",
            "Track where Milliseconds / 1000 > 400 group by Genre.Name",
            "Genre where SUBQUERY(@links.Track.Genre, $t, $t.Milliseconds > 400000).@count > 5 sort by Name",
        ]
        for statement in statements {
            try assertSameAnswer(statement, graph: graph, path: chinook, pushedDown: true, lines: Self.comparedLines(statement), open: pagesAndSQL)
        }
        let awkward = try HostileFiles.awkwardRelational()
        let awkwardGraph = try LoadedStore.open(awkward).graph
        for statement in ["Person where parent.name == \"Ada\"", "Note group by person.name", "count Pair where person.boss == nil", "Parent sort by born",
                          "Person where boss.boss.name == \"person 1\"", "Person where @links.Note.person.@count > 2 sort by name desc", "count Setting where value != nil"] {
            try assertSameAnswer(statement, graph: awkwardGraph, path: awkward, pushedDown: true, open: pagesAndSQL)
        }
        // Through relations, what SQL cannot say exactly (arithmetic on both sides; keys that
        // match only by SQLite's affinity, as Person.mixed's and Person.tag's do) needs the whole
        // graph, and says so.
        for (path, statement) in [(chinook, "Track where Album.AlbumId * 2 > Milliseconds / 10000"), (awkward, "count Person where mixed.label BEGINSWITH \"text\""),
                                  (awkward, "Mixed where @links.Person.mixed.@count > 1"), (awkward, "Person where tag.n == 3")] {
            let (pages, source) = try pagesAndSQL(try StoreFile.openForReading(path))
            XCTAssertEqual(assertNeedsWholeGraph(statement, pages: pages, querySource: source).stack.count, 1, statement)
        }
    }

    /// `F` counts a table's column over the file: the loaded browser's table; Enter opens the
    /// same rows.
    func testFrequencyTablesCountTheWholeTable() throws {
        let path = try HostileFiles.awkwardRelational()
        let graph = try LoadedStore.open(path).graph
        for (t, type) in graph.types.enumerated() where type.count > 0 {
            for column in 0...min(3, type.attributes.count) {
                let whole = Browser(fileLabel: "store.sqlite", formatName: "SQLite", theme: .monochrome)
                whole.attach(graph)
                let paged = Browser(fileLabel: "store.sqlite", formatName: "SQLite", theme: .monochrome)
                paged.attachPaged(try RelationalPages.open(try StoreFile.openForReading(path)))
                let keys: [Key] = [.backTab] + Array(repeating: .character("j"), count: t) + [.tab]
                    + Array(repeating: .character("l"), count: column) + [.character("F"), .character("j"), .enter, .character("j")]
                if !assertSameScreens(whole, paged, keys: keys, "\(type.name) column \(column)") { return }
                // `s`/`S` sort the table over the file (SQL), as the loaded browser sorts it.
                let (pages, source) = try pagesAndSQL(try StoreFile.openForReading(path))
                try assertSameSort(graph: graph, pages: pages, querySource: source, type: t, column: column, "sort \(type.name) column \(column)")
                // `I` has nothing to build: the file's own indexes serve it.
                paged.handle(.key(.character("I")))
                XCTAssertEqual(paged.message, "nothing for I to build: this store's own indexes serve paged mode")
            }
        }
    }

    /// Objects a statement lists come back by their keys, also where a key is not the rowid: an
    /// `INTEGER PRIMARY KEY DESC` (which SQLite does not make the rowid), text and composite keys.
    func testStatementsListKeysThatAreNotRowids() throws {
        let path = try HostileFiles.make("keys.sqlite") { db in
            try db.execute(sql: """
                CREATE TABLE Down(id INTEGER PRIMARY KEY DESC, v INTEGER);
                INSERT INTO Down VALUES (100, 3), (50, 1), (7, 2);
                CREATE TABLE Named(code TEXT PRIMARY KEY, v INTEGER);
                INSERT INTO Named VALUES ('b', 2), ('a', 3), ('c', 1);
                CREATE TABLE Pair(a INTEGER, b TEXT, v INTEGER, PRIMARY KEY (a, b));
                INSERT INTO Pair VALUES (2, 'x', 1), (1, 'y', 3), (1, 'x', 2);
                """)
        }
        let file = try StoreFile.openForReading(path)
        let graph = try LoadedStore.open(path).graph
        XCTAssertEqual(try file.read { try RelationalFormat.layout($0, file: file) }.layout.tables.compactMap { $0?.keyIsRowid }, [false, false, false])
        for type in ["Down", "Named", "Pair"] {
            for statement in ["\(type) where v > 1", "\(type) sort by v", "\(type) sort by v desc limit 2", "\(type) sort by v select v"] {
                let parsed = try Parser.parse(statement)
                let expected = try QueryEngine(graph: graph).run(parsed)
                switch (try SQLPushdown.answer(parsed, file: file, isCancelled: { false }), expected) {
                case (.objects(_, let keys)?, .objects(_, let refs)): XCTAssertEqual(keys, refs.map { graph.id(of: $0) }, statement)
                case (.projection(_, let rows, let keys)?, .projection(_, let expectedRows, let refs)):
                    XCTAssertEqual(rows, expectedRows, statement)
                    XCTAssertEqual(keys, refs.map { graph.id(of: $0) }, statement)
                default: XCTFail("\(statement): not answered alike")
                }
            }
        }
    }
}
