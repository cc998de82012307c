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

/// Paged mode over Core Data stores (``CoreDataPages``) against the whole graph: the same keys in
/// a browser on the loaded graph and in one reading the store a window at a time give the same
/// screens — entities sharing their root's table, to-one columns, to-many inverses (ordered too),
/// join tables both ways, a relationship that is its own inverse, objects cut at a few edges.
final class CoreDataPagedTests: XCTestCase {
    func coreData(_ file: StoreFile, _ edges: Int) throws -> PageSource { try CoreDataPages.open(file, edgesPerObject: edges) }

    static let realStores = ["realdata/coredata/apple_recipes/Recipes.sqlite", "realdata/coredata/bnr_coredatastack/TestModel.sqlite",
                             "realdata/coredata/plaso/Accounts3.sqlite", "realdata/coredata/restkit_twitter/RKSeedDatabase.sqlite",
                             "realdata/coredata/surfjournal/SurfJournalModel.sqlite"]

    func testRealStoresPageAsTheyLoad() throws {
        for store in Self.realStores {
            let path = try Shared.copy(store)
            for seed in UInt64(1)...3 {
                try walk(path, seed: seed, count: 120, edgesPerObject: Int(seed % 3) * 2 + 1, windowRows: 20, open: coreData)
            }
            try walk(path, seed: 7, count: 120, edgesPerObject: 2_000, windowRows: 300, open: coreData)
        }
    }

    /// Inheritance in one table, numbered columns, an ordered to-many, many-to-many and a
    /// self-referential many-to-many, with the model cache and without it.
    func testInheritanceOrderedAndManyToManyPageAsTheyLoad() throws {
        for path in [try Shared.fixture("make_coredata_fixture.py", "notes.sqlite"),
                     try Shared.fixture("make_coredata_fixture.py", "plain.sqlite", ["--no-model-cache"])] {
            for seed in UInt64(1)...6 {
                try walk(path, seed: seed, count: 150, edgesPerObject: Int(seed % 3) + 1, windowRows: 3, open: coreData)
            }
            try walk(path, seed: 11, count: 150, edgesPerObject: 2_000, windowRows: 300, open: coreData)
        }
    }

    /// A store without the indexes Core Data keeps on its to-one columns and join tables: each
    /// window reads every root's first edges of such a relationship in one pass (numbered per
    /// root), the status line names the columns, and the screens are the loaded graph's.
    func testAStoreWithoutItsIndexesPagesAsItLoads() throws {
        let path = try Shared.fixture("make_coredata_fixture.py", "unindexed.sqlite")
        try DatabaseQueue(path: path).write { db in
            for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL") {
                try db.execute(sql: "DROP INDEX \(name)")
            }
        }
        let pages = try CoreDataPages.open(try StoreFile.openForReading(path))
        XCTAssertEqual(pages.notes, ["no index on ZATTACHMENT.ZNOTE, ZFOLDER.ZPARENT, ZITEM.ZFOLDER…: windows read each in one pass"])
        for seed in UInt64(1)...4 {
            try walk(path, seed: seed, count: 150, edgesPerObject: Int(seed % 3) + 1, windowRows: 3, open: coreData)
        }
    }

    /// An object cut at one edge per relationship: its links' totals and keys come from the file,
    /// as many and in the order the loaded graph links them, either way.
    func testLinksOfACutObjectAreTheLoadedGraphs() throws {
        let path = try Shared.fixture("make_coredata_fixture.py", "notes.sqlite")
        let graph = try LoadedStore.open(path).graph
        let pages = try CoreDataPages.open(try StoreFile.openForReading(path), edgesPerObject: 1)
        var checked = 0
        for type in graph.types {
            for row in 0..<type.count {
                let ref = ObjectRef(type: type.index, row: row)
                let object = ObjectIdentity(type: type.name, id: graph.id(of: ref))
                let totals = try pages.linkTotals(of: object)
                for relation in type.relations {
                    let link = ObjectWindow.Link(relation: relation.name, outgoing: true, sourceType: nil)
                    let expected = relation.targets(of: row).map { graph.id(of: $0) }
                    // A relationship's targets are counted by their type.
                    XCTAssertEqual(totals.filter { $0.key.relation == relation.name && $0.key.outgoing }.values.reduce(0, +), expected.count, "\(object) \(relation.name)")
                    XCTAssertEqual(try pages.linkKeys(of: object, link: link, range: 0..<100), expected, "\(object) \(relation.name)")
                    // A page from the middle, as a followed link scrolls.
                    XCTAssertEqual(try pages.linkKeys(of: object, link: link, range: 1..<3), Array(expected.dropFirst().prefix(2)), "\(object) \(relation.name) 1..<3")
                    checked += expected.count
                }
                for group in graph.backlinks(of: ref) {
                    let (source, relation, count) = (group.sourceType.rawValue, group.relation, group.sources.count)
                    let link = ObjectWindow.Link(relation: relation, outgoing: false, sourceType: source)
                    XCTAssertEqual(totals[link], count, "\(object) @links.\(source).\(relation)")
                    let sources = group.sources.map { graph.id(of: $0) }
                    XCTAssertEqual(try pages.linkKeys(of: object, link: link, range: 0..<100), sources, "\(object) @links.\(source).\(relation)")
                    XCTAssertEqual(try pages.linkKeys(of: object, link: link, range: 1..<2), Array(sources.dropFirst().prefix(1)), "\(object) @links.\(source).\(relation)")
                }
            }
        }
        XCTAssertGreaterThan(checked, 10)
        let window = try pages.window(keys: [.int(3)], of: "Note")
        XCTAssertTrue(window.cut.contains(ObjectIdentity(type: "Note", id: .int(3))), "three attachments, one read")
    }

    /// Keys by position, from any window, before the entities are counted and after: the
    /// load's keys in its order (an entity's objects among its table's rows).
    func testKeysByPositionBeforeAndAfterCounting() throws {
        for path in [try Shared.fixture("make_coredata_fixture.py", "notes.sqlite"), try Shared.copy(Self.realStores[0])] {
            let graph = try LoadedStore.open(path).graph
            let pages = try CoreDataPages.open(try StoreFile.openForReading(path))
            XCTAssertTrue(pages.listedTypes.allSatisfy { $0.count == nil }, path)
            assertKeysByPosition(graph: graph, pages: pages, seed: 3, rounds: 12, length: 8, withoutNear: true, label: "uncounted")
            try pages.countTypes()
            XCTAssertEqual(pages.listedTypes.map(\.count), graph.types.map(\.count), path)
            XCTAssertEqual(pages.catalog.map(\.name), graph.types.map(\.name.rawValue))
            assertKeysByPosition(graph: graph, pages: pages, seed: 4, rounds: 12, length: 8, withoutNear: true, label: "counted")
        }
    }

    /// Statements on an entity's own attributes are answered by the engine a chunk of objects
    /// at a time, and paths through relationships and statements on a parent entity by SQL over
    /// the store (``CoreDataQuerySource``): the loaded browser's screen and answer; what neither
    /// says needs the whole graph.
    func testStatementsAreAnsweredByChunksAndBySQL() throws {
        let path = try Shared.fixture("make_coredata_fixture.py", "notes.sqlite")
        let graph = try LoadedStore.open(path).graph
        let pages = try CoreDataPages.open(try StoreFile.openForReading(path))
        for statement in ["count ChecklistNote", "count Sketch where title != nil", "Tag where name CONTAINS[c] \"o\" sort by name desc",
                          "ChecklistNote sort by doneCount", "Folder group by name", "Tag select name sort by name limit 3",
                          "Attachment sort by byteCount desc"] {
            assertSameAnswer(statement, graph: graph, pages: pages, querySource: nil, lines: Self.comparedLines(statement))
        }
        let source = try CoreDataQuerySource(pages: pages)
        for statement in ["Sketch where folder.name == \"Home\"", "Attachment where note.folder.name != nil sort by fileName desc",
                          "Folder where items.@count > 0 select name, items.@count", "Tag where @links.Item.tags.@count > 0",
                          "Attachment group by note.title"] {
            XCTAssertNotNil(try source.answer(try Parser.parse(statement), isCancelled: { false }), statement)
            assertSameAnswer(statement, graph: graph, pages: pages, querySource: source, lines: Self.comparedLines(statement))
        }
        let paged = Browser(fileLabel: "store", formatName: "paged", theme: .monochrome)
        paged.attachPaged(pages, querySource: nil)
        paged.run("Sketch where folder.name == \"Home\"")
        XCTAssertTrue(paged.replOutput.last?.contains("this one needs the whole graph: SQL cannot answer this statement exactly over a Persist file") == true, paged.replOutput.last ?? "")
        // A parent entity's statement reads its subentities' objects too: SQL answers it (its
        // chunks, of the entity's own objects, do not), the rows shown as their own entities'.
        for statement in ["count Item", "Note where isPinned == true", "Item where folder.name == \"Inbox\" sort by title",
                          "Item sort by createdAt desc", "Note select title, attachments.@count", "Item group by folder.name"] {
            XCTAssertNotNil(try source.answer(try Parser.parse(statement), isCancelled: { false }), statement)
            assertSameAnswer(statement, graph: graph, pages: pages, querySource: source, lines: Self.comparedLines(statement))
        }
        paged.attachPaged(pages, querySource: source)
        paged.storeKind = .coreData
        // A Note's body and a Sketch's are two columns: the part of the filter through `items` is not SQL's.
        // `.explain` shows the plan in paged mode too: which engine answered, and why one declined.
        paged.run(".explain count Item where folder.name == \"Inbox\"")
        XCTAssertTrue(paged.replOutput.contains("├─ SQLite over Core Data's Z tables: answered"), paged.replOutput.suffix(8).joined(separator: "\n"))
        XCTAssertTrue(paged.replOutput.contains { $0.hasPrefix("├─ sql: SELECT count(*) FROM ") }, paged.replOutput.suffix(8).joined(separator: "\n"))
        paged.run("Folder where ANY items.body != nil")
        XCTAssertEqual(paged.replOutput.last?.hasSuffix("and the chunks cannot answer it (SQL cannot answer the part of the filter through relations (ANY items.body != null)) (reopen with a larger --memory-budget)"), true,
                       paged.replOutput.last ?? "")
    }

    /// A damaged store (a model cache that does not inflate, superentities in a loop, an entity
    /// without its table, keys stored as text, reals, blobs and NULL, rows naming no entity, a
    /// to-one column holding text): paged mode reads the objects a load reads, by the same keys,
    /// and browsing it never traps.
    func testADamagedStoreReadsAsItLoads() throws {
        let path = try Shared.temporaryPath("damaged.sqlite")
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: """
                CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
                CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
                INSERT INTO Z_PRIMARYKEY VALUES (1, 'Foo', 0, 1), (6, 'Loop', 7, 0), (7, 'Loop2', 6, 0), (8, 'Txt', 0, 0), (9, 'Ref', 0, 0);
                CREATE TABLE ZLOOP (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZX INTEGER, ZOTHER INTEGER);
                CREATE INDEX ZLOOP_ZOTHER_INDEX ON ZLOOP (ZOTHER);
                INSERT INTO ZLOOP VALUES (1, 6, 1, 1, 99), (2, 7, 1, 2, 3), (3, 42, 1, 3, NULL), (4, '7', 1, 4, 3), (5, 9, 1, 5, NULL);
                CREATE TABLE ZTXT (Z_PK, Z_ENT, Z_OPT INTEGER, ZNAME TEXT);
                INSERT INTO ZTXT VALUES ('a', 8, 1, 'x'), (NULL, 8, 1, 'y'), (3, 8, 1, 'z'), ('4', 8, 1, 'w'), (2.5, 8, 1, 'real'), (6.0, 8, 1, 'six'),
                                        (x'00', 8, 1, 'blob'), (7, 'eight', 1, 'text entity'), (8, 8.0, 1, 'real entity');
                CREATE TABLE ZREF (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTXT INTEGER, ZNAME TEXT);
                CREATE INDEX ZREF_ZTXT_INDEX ON ZREF (ZTXT);
                INSERT INTO ZREF VALUES (1, 9, 1, 3, 'r1'), (2, 9, 1, 'a', 'r2'), (3, 9, 1, 6, 'r3'), (4, 'nine', 1, 3, 'bad ent'), (5, 9, 1, 8, 'r5');
                CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
                INSERT INTO Z_MODELCACHE VALUES (x'0102030405');
                """)
        }
        let graph = try LoadedStore.open(path).graph
        let pages = try CoreDataPages.open(try StoreFile.openForReading(path))
        try pages.countTypes()
        XCTAssertTrue(pages.notes.isEmpty, "\(pages.notes)")
        // `loupe types` counts the objects a load reads, not every row naming the entity.
        let catalog = try DatabaseQueue(path: path).read { try CoreDataFormat.catalog($0) }
        XCTAssertEqual(catalog.map(\.count), catalog.map { graph.type(named: $0.name)?.count ?? -1 })
        XCTAssertEqual(catalog.first { $0.name == "Txt" }?.count, 3)
        for (t, entry) in pages.catalog.enumerated() {
            let type = try XCTUnwrap(graph.type(named: entry.name))
            XCTAssertEqual(entry.count, type.count, entry.name)
            let keys = (0..<type.count).map { graph.id(of: ObjectRef(type: type.index, row: $0)) }
            XCTAssertEqual(try pages.keys(type: t, range: 0..<100, near: nil), keys, entry.name)
            let window = try pages.window(keys: keys, of: entry.name)
            for (key, ref) in zip(keys, window.refs) {
                let loaded = try XCTUnwrap(graph.ref(type: type, id: key))
                XCTAssertEqual(window.graph.describe(try XCTUnwrap(ref)), graph.describe(loaded), "\(entry.name) #\(key)")
                _ = try pages.linkTotals(of: ObjectIdentity(type: type.name, id: key))
            }
        }
        XCTAssertEqual(try pages.keys(type: try XCTUnwrap(pages.catalog.firstIndex { $0.name == "Txt" }), range: 0..<10, near: nil), [.int(3), .int(6), .int(8)])
        let browser = Browser(fileLabel: "damaged.sqlite", formatName: "Core Data", theme: .monochrome)
        browser.attachPaged(try CoreDataPages.open(try StoreFile.openForReading(path), edgesPerObject: 1), reason: "test")
        var rng = SampleGenerator.Random(state: 5)
        for _ in 0..<200 {
            browser.handle(.key(PagedBrowsingTests.keys[Int(rng.next() % UInt64(PagedBrowsingTests.keys.count))]))
            var buffer = Buffer(width: 100, height: 24)
            browser.render(into: &buffer)
        }
    }
}
