import Foundation
import LoupeBrowser
import LoupeHost
import LoupeModel
import LoupePostgres
import LoupeQuery
import LoupeSQL
import LoupeStore
import LoupeTestSupport
import XCTest

/// `.schema` and `loupe schema` over the memory budget (``PageSource/schemaText(type:schema:sampleSize:)``):
/// a type read no further than its first objects. When those are all of its objects, the text is
/// the whole load's, character for character; when they are not, it says how many it read.
final class PagedSchemaTests: XCTestCase {
    /// Every type's paged schema, with a sample larger than any type, against the loaded graph's.
    func assertSchemasAreTheLoadedOnes(_ graph: ObjectGraph, _ pages: PageSource, _ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let schema = try pages.window(keys: [], of: nil).graph
        XCTAssertEqual(pages.catalog.map(\.name), graph.types.map(\.name.rawValue), label, file: file, line: line)
        for type in graph.types {
            // Broken links are counted by SQL where its `=` pairs keys as a load does; elsewhere
            // the relation says they are not counted (and a store that counts none says nothing).
            var loaded = graph.schemaText(of: type)
            if let counts = try pages.brokenLinkCounts(type: type.index) {
                for (r, relation) in type.relations.enumerated() where !relation.isToMany && counts[r] == nil {
                    let line = try XCTUnwrap(loaded.split(separator: "\n").first { $0.hasPrefix("    \(relation.name) ") && $0.contains("→") })
                    let uncounted = line.replacingOccurrences(of: #"  \(\d+ broken links?: keys naming no [^)]*\)"#, with: "", options: .regularExpression)
                        + ObjectGraph.brokenLinksNotCounted
                    loaded = loaded.replacingOccurrences(of: line, with: uncounted)
                }
            } else {
                loaded = loaded.replacingOccurrences(of: #"  \(\d+ broken links?: keys naming no [^)]*\)"#, with: "", options: .regularExpression)
            }
            XCTAssertEqual(try pages.schemaText(type: type.index, schema: schema, sampleSize: 1_000_000), loaded,
                           "\(label): \(type.name)", file: file, line: line)
        }
    }

    func testRelationalFilesDescribeTheirTablesAsALoadDoes() throws {
        for path in [try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite"), try Shared.copy("realdata/northwind/northwind_w3schools.db3"),
                     try HostileFiles.awkwardRelational(), try HostileFiles.hostileNames()] {
            try assertSchemasAreTheLoadedOnes(try LoadedStore.open(path).graph, try RelationalPages.open(try StoreFile.openForReading(path)), path)
        }
    }

    func testPersistStoresDescribeTheirTypesAsALoadDoes() throws {
        for awkward in [false, true] {
            let path = try Shared.temporaryPath()
            try SampleGenerator.generate(path: path, objects: 900, seed: 3)
            if awkward { try HostileFiles.addAwkwardPersistRows(path) }
            // Opened before a load (its schema from a sample), and after (the load's schema kept in the cache).
            let cache = ScratchCache()
            defer { cache.restore() }
            let sampled = try PersistPages.open(try StoreFile.openForReading(path))
            let graph = try LoadedStore.open(path).graph
            try assertSchemasAreTheLoadedOnes(graph, sampled, "awkward: \(awkward), sampled")
            try assertSchemasAreTheLoadedOnes(graph, try PersistPages.open(try StoreFile.openForReading(path)), "awkward: \(awkward), after a load")
        }
    }

    /// A sample smaller than the type: its first line and each attribute's say how many objects it read.
    func testASampleSaysHowManyObjectsItRead() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let pages = try RelationalPages.open(try StoreFile.openForReading(path))
        let schema = try pages.window(keys: [], of: nil).graph
        let track = try XCTUnwrap(schema.type(named: "Track"))
        let text = try pages.schemaText(type: track.index, schema: schema, sampleSize: 25)
        let lines = text.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "Track — 3503 objects (attributes as its first 25 have them)")
        XCTAssertTrue(lines.contains("    Composer      string  [NVARCHAR(220)]  in 25 of first 25"), text)
        XCTAssertTrue(lines.contains("    Album         → Album  to-one  (also AlbumId)"), text)
        XCTAssertTrue(lines.contains("    @links.InvoiceLine.Track"), text)
    }

    /// The browser's REPL in paged mode runs `.types` and `.schema` over the store (off the UI
    /// thread) and `.mode`, `.timer` and a command's `.help` as the loaded browser does: the same
    /// lines (but the prompt's echo); `.help` lists what paged mode runs; what it does not run says so.
    func testTheBrowsersReplDescribesAPagedStoreAsALoadedOne() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let (loaded, _) = try loadedBrowser(path, formatName: "SQLite")
        let pages = try RelationalPages.open(try StoreFile.openForReading(path))
        let (paged, _) = pagedBrowser(pages, path: path, formatName: "SQLite", querySource: RelationalQuerySource(file: pages.file), following: RelationalQuerySource.following)
        for line in [".types", ".schema Genre", ".mode json", ".types", ".schema genre", ".schema Genr", ".schema Genre Album", ".help mode", ".timer on", ".mode"] {
            for browser in [loaded, paged] {
                browser.run(line)
                while browser.isBusy { _ = browser.collect() }
            }
            // (The loaded browser echoes no prompt before a dot-command's error; paged mode echoes every line.)
            XCTAssertEqual(paged.replOutput.filter { !$0.hasPrefix("loupe> ") }, loaded.replOutput.filter { !$0.hasPrefix("loupe> ") }, line)
        }
        paged.run(".help")
        XCTAssertTrue(paged.replOutput.contains { $0.hasPrefix(".schema [Type]") } && !paged.replOutput.contains { $0.hasPrefix(".open") }, paged.replOutput.joined(separator: "\n"))
        paged.run(".output x.txt")
        XCTAssertTrue(paged.replOutput.last?.hasPrefix("error: paged mode answers counts, queries, groups, edits and .changes, .commit, .explain, .help, .mode") == true, paged.replOutput.last ?? "")
        paged.run(".schema Track")
        while paged.isBusy { _ = paged.collect() }
        XCTAssertTrue(paged.replOutput.contains("Track — 3503 objects (attributes as its first 1000 have them)"), paged.replOutput.joined(separator: "\n"))
    }

    func testPostgresDatabasesDescribeTheirTypesAsALoadDoes() throws {
        let chinook = try PostgresServer.database(copying: try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite"), named: "paged_chinook")
        try assertSchemasAreTheLoadedOnes(try PostgresDatabase.load(url: chinook).graph, try PostgresPages.open(url: chinook), "chinook")
        let persist = try PostgresPersistPagedTests.library("persist_paged_schema", documentType: "jsonb")
        try assertSchemasAreTheLoadedOnes(try PostgresDatabase.load(url: persist).graph, try PostgresPersistPages.open(url: persist), "persist")
    }
}
