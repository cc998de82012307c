import GRDB
import LoupeModel
@testable import LoupeStore
import LoupeTestSupport
import XCTest

/// Real apps' stores read exactly: app collations, legacy-quoted views, dangling undeclared
/// keys, entity counts (files from ``AppStoreShapes`` and the Core Data fixture generator).
final class FidelityTests: XCTestCase {
    private func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    func testAnAppCollationIsEmulatedToReadAndItsTablesAreNeverWritten() throws {
        let path = try AppStoreShapes.appCollations()
        let before = try bytes(path)
        let store = try LoadedStore.open(path)
        let counts = Dictionary(uniqueKeysWithValues: store.graph.types.map { ($0.name.rawValue, $0.liveCount) })
        XCTAssertEqual(counts, ["word": 3, "tag": 2, "post": 3, "label": 2, "note": 1])
        XCTAssertEqual(store.warnings, [])
        let file = try StoreFile.openForReading(path)
        XCTAssertEqual(try LoadedStore.catalog(file, counted: true).types.map(\.count), [3, 2, 3, 2, 1], "the catalog counts what a load reads")
        let word = try XCTUnwrap(store.graph.type(named: "word")), label = try XCTUnwrap(store.graph.type(named: "label"))
        XCTAssertEqual(word.lineage.notes, ["collation LOCALIZED is the app's, not SQLite's: Loupe reads it as SQLite's NOCASE (ASCII letters compared without case, other text by its bytes), which may order and match text otherwise than the app"])
        XCTAssertEqual(label.lineage.notes, ["collation APPORDER is the app's, not SQLite's: Loupe reads it as BINARY (text compared by its bytes), which may order and match text otherwise than the app"])
        XCTAssertEqual(word.readOnlyReason, "word orders text by collation LOCALIZED, which only the app that wrote the file has: a write through its key or index could leave it out of order, so Loupe does not edit it")
        XCTAssertEqual(store.graph.type(named: "post")?.readOnlyReason, "post has a foreign key to tag, whose text is ordered by collation LOCALIZED, which only the app that wrote the file has: a write could not check that key, so Loupe does not edit it")
        XCTAssertNotNil(label.readOnlyReason)
        XCTAssertNil(store.graph.type(named: "note")?.readOnlyReason, "a table that uses no app collation stays editable")
        let post = try XCTUnwrap(store.graph.type(named: "post"))
        XCTAssertEqual(post.relations.first?.targets(of: 1).count, 1, "a foreign key into a collated key resolves")
        XCTAssertEqual(try bytes(path), before, "reading never writes")
    }

    func testACollationNameSaysHowItIsEmulated() {
        XCTAssertEqual(RelationalFormat.Collations.foreign(in: #"CREATE TABLE t (a TEXT COLLATE "my coll", b COLLATE nocase, c COLLATE [Loc], d TEXT collate Unicode)"#),
                       ["my coll", "Loc", "Unicode"])
        XCTAssertTrue(RelationalFormat.Collations.emulation("UNICODE").contains("NOCASE"))
        XCTAssertTrue(RelationalFormat.Collations.emulation("PHONEBOOK").contains("BINARY"))
    }

    func testAViewWrittenWithLegacyDoubleQuotedStringsIsRead() throws {
        let store = try LoadedStore.open(try AppStoreShapes.legacyQuotedView())
        XCTAssertEqual(store.warnings, [])
        let view = try XCTUnwrap(store.graph.type(named: "joined"))
        XCTAssertEqual(view.liveRows.map { view.value(row: $0, named: "ab") }, [.string("x|y"), .string("p|q")])
    }

    func testAKeyColumnWithAFewDanglingValuesIsARelationWithBrokenLinks() throws {
        let store = try LoadedStore.open(try AppStoreShapes.danglingKeys())
        let orders = try XCTUnwrap(store.graph.type(named: "Orders"))
        let r = try XCTUnwrap(orders.relation(named: "Customer"))
        XCTAssertTrue(orders.relations[r].isInferred)
        XCTAssertEqual(orders.brokenLinkCount(relation: r), 29)
        XCTAssertEqual(orders.brokenLink(row: 0, relation: r), .string("GONE00"))
        XCTAssertNil(orders.brokenLink(row: 100, relation: r))
        XCTAssertEqual(orders.liveRows.filter { !orders.relations[r].targets(of: $0).isEmpty }.count, 801)
        XCTAssertTrue(store.graph.schemaText(of: orders).contains("Customer    → Customers  to-one  (also CustomerID)  (inferred)  (29 broken links: keys naming no Customers)"),
                      store.graph.schemaText(of: orders))
        let visits = try XCTUnwrap(store.graph.type(named: "Visits"))
        XCTAssertNil(visits.relation(named: "Customer"), "half the values naming nothing is no relation")
    }

    func testTheSchemaOnlyReadInfersWhatALoadInfers() throws {
        let path = try AppStoreShapes.danglingKeys()
        let file = try StoreFile.openForReading(path)
        let keys = try file.read { db -> [InferredKey] in
            var loaded: [(RelationalFormat.Source, Int)] = []
            let builder = GraphBuilder(formatName: "SQLite")
            var warnings: [String] = []
            for entry in try RelationalFormat.sourceNames(db) {
                let source = try RelationalFormat.describe(db, name: entry.name, isView: entry.isView)
                loaded.append((source, try RelationalFormat.loadRows(db, source: source, builder: builder, epoch: 0, readOnlyReason: nil, limit: 0, warnings: &warnings)))
            }
            return try RelationalFormat.inferredKeys(db, loaded: loaded, builder: builder, epoch: 0)
        }
        XCTAssertEqual(keys, [InferredKey(table: "Orders", column: "CustomerID", target: "Customers")])
    }

    func testEntityCountsMeanWhatCountMeansWithTheOwnShareBeside() {
        let folded = TypeCount.folded([("Item", 1), ("Note", 3), ("Checklist", 2), ("Sketch", 1), ("Tag", 5)],
                                      supertype: ["Note": "Item", "Checklist": "Note", "Sketch": "Item"])
        XCTAssertEqual(folded, [TypeCount(name: "Item", count: 7, own: 1), TypeCount(name: "Note", count: 5, own: 3),
                                TypeCount(name: "Checklist", count: 2), TypeCount(name: "Sketch", count: 1), TypeCount(name: "Tag", count: 5)])
        XCTAssertEqual(folded.map(\.shown), ["7 (1 own)", "5 (3 own)", "2", "1", "5"])
        XCTAssertEqual(TypeCount.folded([("A", -1), ("B", 2)], supertype: ["B": "A"]).map(\.shown), ["…", "2"])
        XCTAssertEqual(TypeCount.folded([("A", 1), ("B", 2)], supertype: ["B": "A", "A": "B"]).map(\.count), [3, 3], "a cycle is cut")
    }

    func testCoreDataCountsAgreeWithCount() throws {
        let path = try Shared.fixture("make_coredata_fixture.py", "notes.sqlite")
        let store = try LoadedStore.open(path)
        let file = try StoreFile.openForReading(path)
        let catalog = TypeCount.folded(try LoadedStore.catalog(file).types, supertype: try LoadedStore.supertypes(file))
        XCTAssertEqual(catalog, store.graph.typeCounts, "the catalog and a load agree")
        for type in store.graph.types {
            XCTAssertEqual(catalog.first { $0.name == type.name.rawValue }?.count, store.graph.family(of: type).reduce(0) { $0 + store.graph.types[$1].liveCount })
        }
        XCTAssertTrue(catalog.contains { $0.own != nil }, "the fixture has a parent entity with objects of its own")
    }
}

extension FidelityTests {
    func testACompositeForeignKeyIsARelationBothWays() throws {
        let store = try LoadedStore.open(try AppStoreShapes.compositeForeignKey())
        let graph = store.graph
        let track = try XCTUnwrap(graph.type(named: "track")), album = try XCTUnwrap(graph.type(named: "album"))
        let r = try XCTUnwrap(track.relation(named: "artist_album"), "named by its columns: the table's name is a column's")
        XCTAssertEqual(track.relations[r].compositeKey, CompositeKey(columns: ["artist", "album"], targetType: album.index, targetColumns: ["artist", "title"]))
        func target(_ row: Int) -> String? { track.relations[r].targets(of: row).first.map { graph.label(of: $0) } }
        XCTAssertEqual((0..<6).map(target), [#"album #("A", "One")"#, #"album #("A", "Two")"#, #"album #("B", "One")"#, #"album #("A", "One")"#, nil, nil])
        XCTAssertEqual(track.brokenLink(row: 4, relation: r), .array([.string("B"), .string("Two")]))
        XCTAssertNil(track.brokenLink(row: 5, relation: r), "a key with a NULL part names nothing")
        XCTAssertEqual(track.brokenLinkCount(relation: r), 1)
        XCTAssertEqual(store.warnings, ["track.(artist, album): 1 values match no album"])
        let one = try XCTUnwrap(graph.ref(type: album, id: .composite([.string("A"), .string("One")])))
        XCTAssertEqual(graph.backlinks(of: one).first { $0.key == "track.artist_album" }?.sources.count, 2, "and back")
        let file = try StoreFile.openForReading(AppStoreShapes.compositeForeignKey())
        XCTAssertTrue(try file.read { try RelationalFormat.relationNames($0) }?.contains("artist_album") ?? false,
                      "a one-shot statement knows the name is a relation's")
    }

    /// Paged mode follows a composite foreign key as the load does: a window of tracks holds
    /// the albums they name, a window of albums the tracks naming them; an object's links are
    /// counted and listed exactly (a NULL part or a missing album names nothing).
    func testPagedModeFollowsACompositeForeignKeyBothWays() throws {
        let path = try AppStoreShapes.compositeForeignKey()
        let loaded = try LoadedStore.open(path).graph
        let pages = try RelationalPages.open(try StoreFile.openForReading(path))
        XCTAssertFalse(pages.notes.contains { $0.contains("several columns") }, "\(pages.notes)")
        let tracks = try pages.window(keys: (1...6).map { ObjectID.int($0) }, of: "track")
        let track = try XCTUnwrap(tracks.graph.type(named: "track")), r = try XCTUnwrap(track.relation(named: "artist_album"))
        let labels = tracks.refs.map { ref in ref.flatMap { track.relations[r].targets(of: Int($0.row)).first }.map { tracks.graph.label(of: $0) } }
        XCTAssertEqual(labels, [#"album #("A", "One")"#, #"album #("A", "Two")"#, #"album #("B", "One")"#, #"album #("A", "One")"#, nil, nil])
        let one = ObjectID.composite([.string("A"), .string("One")])
        let albums = try pages.window(keys: [one], of: "album")
        let ref = try XCTUnwrap(albums.refs.first ?? nil)
        let back = albums.graph.backlinks(of: ref).first { $0.key == "track.artist_album" }
        XCTAssertEqual(back?.sources.map { albums.graph.id(of: $0) }, [.int(1), .int(4)], "and back")
        let identity = ObjectIdentity(type: TypeName("album"), id: one)
        let link = ObjectWindow.Link(relation: "artist_album", outgoing: false, sourceType: "track")
        XCTAssertEqual(try pages.linkTotals(of: identity)[link], 2)
        XCTAssertEqual(try pages.linkKeys(of: identity, link: link, range: 0..<10), [.int(1), .int(4)])
        let t5 = ObjectIdentity(type: TypeName("track"), id: .int(5)), t2 = ObjectIdentity(type: TypeName("track"), id: .int(2))
        let out = ObjectWindow.Link(relation: "artist_album", outgoing: true, sourceType: nil)
        XCTAssertEqual(try pages.linkTotals(of: t5)[out], 0, "a key naming no album")
        XCTAssertEqual(try pages.linkKeys(of: t2, link: out, range: 0..<1), [.composite([.string("A"), .string("Two")])])
        // The same links as the load's, for every album.
        let loadedAlbums = try XCTUnwrap(loaded.type(named: "album"))
        for row in 0..<loadedAlbums.count {
            let id = loadedAlbums.ids[row]
            let expected = loaded.backlinks(of: ObjectRef(type: loadedAlbums.index, row: row)).first { $0.key == "track.artist_album" }?.sources.count ?? 0
            XCTAssertEqual(try pages.linkTotals(of: ObjectIdentity(type: TypeName("album"), id: id))[link] ?? 0, expected, "\(id)")
        }
    }

    /// Paged mode counts broken links as a load does (SQL over the file, kept as facts): the
    /// inferred relation's dangling orders, the composite key's missing album, none in Chinook.
    func testPagedSchemaCountsBrokenLinksAsALoadDoes() throws {
        for path in [try AppStoreShapes.danglingKeys(), try AppStoreShapes.compositeForeignKey(), try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")] {
            let loaded = try LoadedStore.open(path).graph
            let pages = try RelationalPages.open(try StoreFile.openForReading(path))
            let schema = try pages.window(keys: [], of: nil).graph
            var seen = 0
            for type in loaded.types {
                let counts = try XCTUnwrap(try pages.brokenLinkCounts(type: type.index), type.name.rawValue)
                for r in type.relations.indices where !type.relations[r].isToMany {
                    XCTAssertEqual(counts[r] ?? 0, type.brokenLinkCount(relation: r), "\(type.name).\(type.relations[r].name) in \(path)")
                    seen += type.brokenLinkCount(relation: r)
                }
                let broken = { (text: String) in text.split(separator: "\n").filter { $0.contains("broken link") } }
                XCTAssertEqual(broken(try pages.schemaText(type: type.index, schema: schema)), broken(loaded.schemaText(of: type)), "\(type.name)")
            }
            XCTAssertEqual(seen, path.contains("dangling") ? 29 : path.contains("composite") ? 1 : 0, path)
        }
    }
}
