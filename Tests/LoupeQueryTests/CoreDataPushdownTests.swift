import Foundation
import GRDB
import LoupeModel
import LoupeQuery
import LoupeSQL
import LoupeStore
import LoupeTestSupport
import XCTest

/// Statements over a Core Data store answered by SQLite (``CoreDataQuerySource``: paged mode's
/// and `loupe query`'s over a store too large to load) against the engine over the loaded graph:
/// paths through to-one columns, to-many inverses and join tables, backlinks, entities sharing
/// their root's table (and statements on a parent entity, which read its subentities' objects), aggregates and `SUBQUERY` give the same counts, keys in the same order,
/// rows and groups; what SQL cannot say exactly answers nil; the store is never written.
final class CoreDataPushdownTests: XCTestCase {
    /// Every statement SQL answers, and answers as the loaded engine does.
    func assertAnsweredAsLoaded(_ statements: [String], path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let graph = try LoadedStore.open(path).graph
        let source = try CoreDataQuerySource(pages: try CoreDataPages.open(try StoreFile.openForReading(path)))
        for text in statements { try PersistPushdownTests.assertAnswered(text, by: source, as: graph, file: file, line: line) }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, "the store is never written", file: file, line: line)
    }

    /// Each statement SQL leaves to the engine (nil, not an answer that could differ).
    func assertLeftToTheEngine(_ statements: [String], path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let source = try CoreDataQuerySource(pages: try CoreDataPages.open(try StoreFile.openForReading(path)))
        for text in statements {
            XCTAssertNil(try source.answer(try Parser.parse(text), isCancelled: { false }), text, file: file, line: line)
        }
    }

    static let fixtureStatements = [
        // To-one columns, from a table whose rows are several entities (Item's hierarchy).
        "count Attachment where note.title BEGINSWITH 'G'",
        "Attachment where note.folder.name != nil select fileName, note.title, note.folder.name",
        "Attachment where note.createdAt > '2020-01-01' select fileName, note.isPinned",
        "Attachment where note.identifier != nil sort by fileName desc select fileName, note.identifier",
        "Attachment where note.id == 2 select fileName",
        "Attachment sort by note.title, fileName select fileName",
        "Sketch where folder.parent.name == nil select title",
        "Folder group by parent.name",
        "Folder where parent.name == 'Projects' sort by name select name, itemCount",
        // To-many inverses (ordered too) and join tables, aggregates, SUBQUERY.
        "count Folder where ANY items.title CONTAINS 'e'",
        "Folder where items.@count > 0 select name, items.@count",
        "Folder where children.@count == 0 sort by name select name, parent.name",
        "Folder where items.@max.createdAt != nil select name, items.@max.createdAt",
        "Folder where ALL items.title != 'Groceries' select name",
        "Folder where NONE children.name == 'Archive' select name",
        "ChecklistNote where attachments.@count > 0 select title, attachments.@count, attachments.@sum.byteCount",
        "count Tag where items.@count >= 2",
        "Tag where ANY items.tags.name == 'work' select name",
        "Tag where SUBQUERY(items, $i, $i.title CONTAINS 'e' AND $i.folder.name != nil).@count > 0 select name",
        "Tag where ANY narrower.name != nil select name",
        "Tag where broader.@count > 1 select name",
        // Backlinks, of a type and of a parent entity (its subentities' links too).
        "Folder where @links.Note.folder.@count > 0 select name",
        "Folder where @links.Item.folder.@count >= 2 select name",
        "Tag where @links.Item.tags.@count > 0 select name",
        "Tag where @links.Note.tags.@count > 0 select name",
        "Tag where @links.ChecklistNote.tags.@count > 0 select name",
        "Tag where @links.Tag.broader.@count > 0 select name",
        "Attachment where byteCount * 2 > 100 select fileName",
        // Objects compared with keys: their keys compared.
        "Folder where parent == nil", "count Item where folder == nil", "Note where folder == #1 select title", "count Folder where ANY children == #2",
        "Attachment where note IN {#2, #3, 4} select fileName", "Note where ANY tags IN {#1, #2} select title", "count Tag where ANY @links.Item.tags != #1",
        // A parent entity's statements read its subentities' objects too, listed entity by
        // entity; a name some of them lack reads null on the others.
        "count Item", "Note where title != nil", "count Item where folder.name BEGINSWITH 'I'",
        "Item sort by title", "Item sort by createdAt desc limit 3", "Item where tags.@count > 0 select title, tags.@count",
        "Item group by folder.name", "Item where isPinned == true", "Item where doneCount > 0 select title, doneCount",
        "Note where attachments.@count > 0 sort by title select title, attachments.@count",
        "Item where ANY tags.name == 'work' select title", "Item where @links.Attachment.note.@count > 0",
        "Item sort by folder.name, title select title, folder.name", "Item limit 2", "Note where id > 3",
        // Errors read as the engine's.
        "Attachment where note.nosuch == 1",
    ]

    /// The fixture's relationships of every kind, over SQL as over the loaded graph.
    func testPathsThroughRelationshipsAnswerAsLoaded() throws {
        let path = try Shared.fixture("make_coredata_fixture.py", "notes.sqlite")
        try assertAnsweredAsLoaded(Self.fixtureStatements, path: path)
        try assertLeftToTheEngine([
            "Tag where related.@count > 0",                           // a relationship that is its own inverse: two columns
            "Tag where @links.Tag.related.@count > 0",
            "Tag where broader.name == 'home' select broader.name",   // a projected collection
            "Folder where ANY items.body != nil",                     // a Note's body and a Sketch's in two columns
            "Item where body != nil",
        ], path: path)
    }

    /// A damaged copy of the fixture: keys stored as text, reals (whole and not), blobs, keys that
    /// name no row, rows whose entity is a real or no entity at all, join rows naming no row, a
    /// table whose `Z_PK` is not its rowid. SQL reads the edges a load reads, or leaves the
    /// statement to the engine.
    func testADamagedStoreAnswersAsLoaded() throws {
        let path = try Shared.fixture("make_coredata_fixture.py", "notes.sqlite")
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: """
                CREATE TABLE ZATTACHMENT2 (Z_PK INTEGER PRIMARY KEY, Z_ENT, Z_OPT, ZBYTECOUNT, ZNOTE, Z_FOK_NOTE, ZFILENAME);
                INSERT INTO ZATTACHMENT2 SELECT * FROM ZATTACHMENT;
                DROP TABLE ZATTACHMENT;
                ALTER TABLE ZATTACHMENT2 RENAME TO ZATTACHMENT;
                UPDATE ZATTACHMENT SET ZNOTE = '2' WHERE Z_PK = 1;
                UPDATE ZATTACHMENT SET ZNOTE = 3.0 WHERE Z_PK = 2;
                UPDATE ZATTACHMENT SET ZNOTE = 3.5 WHERE Z_PK = 3;
                UPDATE ZATTACHMENT SET ZNOTE = 99 WHERE Z_PK = 4;
                INSERT INTO ZATTACHMENT VALUES (6, 1.0, 1, 10, x'04', 1, 'blob key'), (7, 1.0, 1, 20, 4.0, 2, 'real entity'),
                                               (8, 42, 1, 30, 4, 3, 'no entity'), (9, '1', 1, 40, 4, 4, 'text entity');
                CREATE TABLE Z_3TAGS2 (Z_3ITEMS, Z_7TAGS);
                INSERT INTO Z_3TAGS2 SELECT * FROM Z_3TAGS;
                INSERT INTO Z_3TAGS2 SELECT * FROM Z_3TAGS;
                INSERT INTO Z_3TAGS2 VALUES ('5', 3), (5, '3'), (5.0, 4.0), (99, 3), (5, 99), (x'05', 3), (5, 3.5), (20, 3);
                INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZFOLDER, ZTITLE) VALUES (20, 42, 1, 1, 'no entity');
                INSERT INTO ZATTACHMENT VALUES (10, 1, 1, 50, 20, 5, 'to no entity');
                DROP TABLE Z_3TAGS;
                ALTER TABLE Z_3TAGS2 RENAME TO Z_3TAGS;
                CREATE TABLE ZFOLDER2 (Z_PK INTEGER PRIMARY KEY, Z_ENT, Z_OPT, ZITEMCOUNT, ZPARENT, ZNAME);
                INSERT INTO ZFOLDER2 SELECT * FROM ZFOLDER;
                DROP TABLE ZFOLDER;
                ALTER TABLE ZFOLDER2 RENAME TO ZFOLDER;
                UPDATE ZFOLDER SET ZPARENT = '1' WHERE Z_PK = 4;
                INSERT INTO ZFOLDER VALUES (9, 2.0, 1, 0, 2.0, 'real parent'), (10, 2, 1, 0, 10, 'its own parent');
                """)
        }
        try assertAnsweredAsLoaded([
            "Attachment where note.title != nil select fileName, note.title",
            "Attachment sort by fileName select fileName, note.title, note.folder.name, note.tags.@count",
            "Attachment group by note.title",
            "Tag sort by name select name, items.@count, @links.Item.tags.@count",
            "Folder sort by name select name, parent.name, children.@count, items.@count",
            "Attachment sort by fileName select fileName, @links.Note.attachments.@count, @links.ChecklistNote.attachments.@count",
            "ChecklistNote where attachments.@count > 0 select title, attachments.@count",
            "ChecklistNote where ANY attachments.fileName != nil select title",
            "Tag where items.@count > 0 select name, items.@count",
            "Tag where @links.Item.tags.@count > 1 select name",
            "Tag where SUBQUERY(items, $i, $i.tags.@count > 1).@count > 0 select name",
            "Folder where parent.name != nil select name, parent.name",
            "Folder where children.@count > 0 select name, children.@count",
            "Folder where @links.Folder.parent.@count > 0 select name",
            // Counts as GROUP BY, the zero count too.
            "Tag where items.@count < 2 select name", "Tag where items.@count == 1 select name",
            "Tag where @links.Item.tags.@count != 1 select name", "Tag where @links.Item.tags.@count == 2 select name",
            "Folder where @links.Folder.parent.@count == 0 select name", "Folder where children.@count == 1 select name",
            "ChecklistNote where attachments.@count == 0 select title",
            // A row naming no entity is no object of the hierarchy.
            "count Item", "Item sort by title select title, folder.name", "Note where tags.@count > 0 select title",
        ], path: path)
        // Z_PK that is not the table's rowid (a duplicate, a text key): left to the engine.
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: """
                CREATE TABLE ZTAG2 (Z_PK, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR);
                INSERT INTO ZTAG2 SELECT * FROM ZTAG;
                INSERT INTO ZTAG2 VALUES (2, 7, 1, 'twin'), ('3', 7, 1, 'text key');
                DROP TABLE ZTAG;
                ALTER TABLE ZTAG2 RENAME TO ZTAG;
                """)
        }
        try assertLeftToTheEngine(["count Tag", "Folder where ANY items.tags.name == 'work'"], path: path)
    }

    /// The real Core Data stores: each type's relationships and backlinks, over SQL as loaded.
    func testRealStoresAnswerAsLoaded() throws {
        var answered = 0
        for relative in ["realdata/coredata/apple_recipes/Recipes.sqlite", "realdata/coredata/bnr_coredatastack/TestModel.sqlite",
                         "realdata/coredata/restkit_twitter/RKSeedDatabase.sqlite", "realdata/coredata/surfjournal/SurfJournalModel.sqlite"] {
            let path = try Shared.copy(relative)
            let graph = try LoadedStore.open(path).graph
            var statements: [String] = []
            for type in graph.types where graph.family(of: type).count == 1 {
                let t = "`\(type.name.rawValue)`"
                let a = type.attributes.first.map { "`\($0.name)`" } ?? "id"
                for relation in type.relations {
                    let r = "`\(relation.name)`"
                    guard let target = relation.targetTypes.first, let b = graph.types[target].attributes.first.map({ "`\($0.name)`" }) else { continue }
                    statements += relation.isToMany
                        ? ["count \(t) where \(r).@count > 1", "\(t) where ANY \(r).\(b) != nil sort by \(a) limit 5 select \(a), \(r).@count"]
                        : ["count \(t) where \(r).\(b) != nil", "\(t) where \(r).\(b) != nil sort by \(r).\(b), \(a) select \(a), \(r).\(b)"]
                    if graph.family(of: graph.types[target]).count == 1 {
                        statements.append("`\(graph.types[target].name.rawValue)` where @links.\(t).\(r).@count >= 1 select \(b)")
                    }
                }
            }
            try assertAnsweredAsLoaded(statements, path: path)
            answered += statements.count
        }
        XCTAssertGreaterThan(answered, 20)
    }
}
