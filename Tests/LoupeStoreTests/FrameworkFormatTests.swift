import Foundation
import GRDB
import LoupeModel
@testable import LoupeStore
import LoupeTestSupport
import XCTest

/// Stores written by frameworks, read as the framework presents them: Core Data / SwiftData,
/// SwiftSerialization, PersistDB, Couchbase Lite (dali), Persist's dates in other zones, and
/// relational files without declared foreign keys. Every count and relation is checked against
/// SQL written by hand over the same file.
final class FrameworkFormatTests: XCTestCase {
    override func tearDown() {
        ReadOptions.current = ReadOptions()
        super.tearDown()
    }

    // MARK: Helpers


    private func sql<T>(_ path: String, _ body: (Database) throws -> T) throws -> T {
        var config = Configuration()
        config.readonly = true
        return try DatabaseQueue(path: path, configuration: config).read(body)
    }

    /// The values of `path` for every object of `type` (and its subtypes), by key, through the query engine's path semantics.
    private func targets(_ graph: ObjectGraph, _ type: String, _ relation: String) throws -> [ObjectID: [ObjectID]] {
        let table = try XCTUnwrap(graph.type(named: type), type)
        var out: [ObjectID: [ObjectID]] = [:]
        for ref in graph.liveRefs(of: table) {
            let t = graph.table(ref)
            guard let r = t.relation(named: relation) else { continue }
            out[graph.id(of: ref)] = t.relations[r].targets(of: Int(ref.row)).map { graph.id(of: $0) }
        }
        return out
    }

    /// Pairs `(a, b)` from SQL as an adjacency map of keys.
    private func pairs(_ path: String, _ query: String) throws -> [ObjectID: [ObjectID]] {
        var out: [ObjectID: [ObjectID]] = [:]
        for row in try sql(path, { try Row.fetchAll($0, sql: query) }) {
            out[.int(row[0] as Int64), default: []].append(.int(row[1] as Int64))
        }
        return out
    }

    private func nonEmpty(_ m: [ObjectID: [ObjectID]]) -> [ObjectID: [ObjectID]] { m.filter { !$0.value.isEmpty } }

    private func value(_ graph: ObjectGraph, _ type: String, _ id: ObjectID, _ attribute: String) throws -> Value {
        let table = try XCTUnwrap(graph.type(named: type))
        let ref = try XCTUnwrap(graph.ref(type: table, id: id), "\(type) #\(id)")
        let a = try XCTUnwrap(table.attribute(named: attribute), "\(type).\(attribute)")
        return table.value(row: Int(ref.row), attribute: a)
    }

    // MARK: Core Data

    /// Every Core Data store in Tests/Fixtures and the generated ones: one type per entity with its count per
    /// `Z_ENT`, no bookkeeping tables or columns.
    func testCoreDataEntitiesCountPerZENTAndHideBookkeeping() throws {
        var stores = try ["apple_recipes/Recipes.sqlite", "bnr_coredatastack/TestModel.sqlite", "plaso/Accounts3.sqlite",
                          "restkit_twitter/RKSeedDatabase.sqlite", "surfjournal/SurfJournalModel.sqlite"].map { try Shared.copy("realdata/coredata/" + $0) }
        stores += [try Shared.fixture("make_coredata_fixture.py", "notes.sqlite"), try Shared.fixture("make_coredata_fixture.py", "plain.sqlite", ["--no-model-cache"]),
                   try Shared.fixture("make_coredata_fixture.py", "wal.sqlite", ["--wal"])]
        for path in stores {
            let store = try LoadedStore.open(path)
            XCTAssertEqual(store.format.name, "Core Data", path)
            let expected: [String: Int] = try sql(path) { db in
                var out: [String: Int] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY") {
                    var root: (Int64, String) = (row[0], row[1])
                    var sup: Int64 = row[2]
                    while sup != 0, let parent = try Row.fetchOne(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_ENT = ?", arguments: [sup]) {
                        root = (parent[0], parent[1]); sup = parent[2]
                    }
                    out[row[1]] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \("Z" + root.1.uppercased()) WHERE Z_ENT = ?", arguments: [row[0] as Int64])
                }
                return out
            }
            XCTAssertEqual(Dictionary(uniqueKeysWithValues: store.graph.types.map { ($0.name.rawValue, $0.count) }), expected, path)
            let catalog = try LoadedStore.catalog(try StoreFile.openForReading(path)).types
            XCTAssertEqual(Dictionary(uniqueKeysWithValues: catalog.map { ($0.name, $0.count) }), expected, "the catalog counts as the load does: \(path)")
            for t in store.graph.types {
                for a in t.attributes {
                    XCTAssertFalse(a.name.hasPrefix("Z_") || a.name == "Z_PK" || a.name.uppercased() == a.name && a.name.hasPrefix("Z"), "\(t.name).\(a.name) in \(path)")
                }
            }
        }
    }

    /// Accounts3 carries a model cache: names in their model case, to-one, to-many inverses and
    /// many-to-many join tables equal to SQL joins, dates and booleans typed by the model.
    func testCoreDataModelCacheGivesNamesTypesAndRelations() throws {
        let path = try Shared.copy("realdata/coredata/plaso/Accounts3.sqlite")
        let graph = try LoadedStore.open(path).graph
        let account = try XCTUnwrap(graph.type(named: "Account"))
        XCTAssertNotNil(account.attributeIndex["accountDescription"], "model case kept")
        XCTAssertNil(account.attribute(named: "Z_OPT"))
        XCTAssertEqual(try targets(graph, "Account", "accountType"), nonEmpty(try pairs(path, "SELECT Z_PK, ZACCOUNTTYPE FROM ZACCOUNT WHERE ZACCOUNTTYPE IS NOT NULL")))
        XCTAssertEqual(nonEmpty(try targets(graph, "AccountType", "accounts")),
                       try pairs(path, "SELECT ZACCOUNTTYPE, Z_PK FROM ZACCOUNT WHERE ZACCOUNTTYPE IS NOT NULL ORDER BY ZACCOUNTTYPE, Z_PK"))
        XCTAssertEqual(nonEmpty(try targets(graph, "Account", "enabledDataclasses")),
                       try pairs(path, "SELECT Z_2ENABLEDACCOUNTS, Z_7ENABLEDDATACLASSES FROM Z_2ENABLEDDATACLASSES ORDER BY 1, 2"))
        XCTAssertEqual(nonEmpty(try targets(graph, "Dataclass", "enabledAccounts")),
                       try pairs(path, "SELECT Z_7ENABLEDDATACLASSES, Z_2ENABLEDACCOUNTS FROM Z_2ENABLEDDATACLASSES ORDER BY 1, 2"))
        XCTAssertEqual(nonEmpty(try targets(graph, "Account", "childAccounts")),
                       try pairs(path, "SELECT ZPARENTACCOUNT, Z_PK FROM ZACCOUNT WHERE ZPARENTACCOUNT IS NOT NULL ORDER BY 1, 2"))
        let active = try XCTUnwrap(account.attribute(named: "active"))
        XCTAssertEqual(account.attributes[active].kinds.subtracting(.null), .bool)
        let date = try XCTUnwrap(account.attribute(named: "date"))
        XCTAssertEqual(account.attributes[date].kinds.subtracting(.null), .date)
        // Backlinks follow: an account type's accounts are also its backlinks.
        let someType = try XCTUnwrap(graph.types.first { $0.name.rawValue == "AccountType" })
        let ref = try XCTUnwrap(graph.liveRefs(of: someType).first { graph.backlinks(of: $0).contains { $0.key == "Account.accountType" } })
        guard case .int(let key) = graph.id(of: ref) else { return XCTFail("Z_PK is an integer") }
        let expected = try sql(path) { try Int.fetchOne($0, sql: "SELECT count(*) FROM ZACCOUNT WHERE ZACCOUNTTYPE = ?", arguments: [key]) }
        XCTAssertEqual(graph.backlinks(of: ref).first { $0.key == "Account.accountType" }?.sources.count, expected)
        let many = try LoadedStore.open(try Shared.copy("realdata/coredata/bnr_coredatastack/TestModel.sqlite")).graph
        XCTAssertEqual(many.type(named: "Author")?.relation(named: "books").map { many.type(named: "Author")!.relations[$0].isToMany }, true)
        XCTAssertEqual(many.type(named: "Book")?.relations.map(\.name), ["authors"])
    }

    /// Without a model cache (Recipes, RestKit's tweets): names from the columns, to-one relations
    /// from indexed key columns, equal to SQL joins, marked inferred and explained by a note.
    func testCoreDataWithoutModelCacheInfersNamesAndRelations() throws {
        let recipes = try Shared.copy("realdata/coredata/apple_recipes/Recipes.sqlite")
        let graph = try LoadedStore.open(recipes).graph
        let recipe = try XCTUnwrap(graph.type(named: "Recipe"))
        XCTAssertEqual(recipe.attributes.map(\.name), ["preptime", "name", "instructions", "overview", "thumbnailimage"])
        XCTAssertFalse(recipe.lineage.notes.isEmpty)
        XCTAssertTrue(recipe.relations.allSatisfy(\.isInferred))
        XCTAssertEqual(try targets(graph, "Recipe", "type"), nonEmpty(try pairs(recipes, "SELECT Z_PK, ZTYPE FROM ZRECIPE WHERE ZTYPE IS NOT NULL")))
        XCTAssertEqual(graph.types[recipe.relations[try XCTUnwrap(recipe.relation(named: "type"))].targetTypes[0]].name.rawValue, "RecipeType")
        XCTAssertEqual(nonEmpty(try targets(graph, "Ingredient", "recipe")), try pairs(recipes, "SELECT Z_PK, ZRECIPE FROM ZINGREDIENT WHERE ZRECIPE IS NOT NULL"))
        XCTAssertTrue(graph.schemaText(of: recipe).contains("(inferred)"))
        XCTAssertTrue(graph.schemaText(of: recipe).contains("no model cache"))

        let tweets = try Shared.copy("realdata/coredata/restkit_twitter/RKSeedDatabase.sqlite")
        let twitter = try LoadedStore.open(tweets).graph
        XCTAssertEqual(try targets(twitter, "Tweet", "user"), nonEmpty(try pairs(tweets, "SELECT Z_PK, ZUSER FROM ZTWEET WHERE ZUSER IS NOT NULL")))
    }

    /// The fixture: three levels of inheritance in one table, numbered columns, ordered to-many,
    /// many-to-many and a self-referential many-to-many, UUIDs, booleans, dates; a parent entity's
    /// query includes its subentities.
    func testCoreDataInheritanceOrderedAndManyToMany() throws {
        let path = try Shared.fixture("make_coredata_fixture.py", "notes.sqlite")
        let graph = try LoadedStore.open(path).graph
        let item = try XCTUnwrap(graph.type(named: "Item")), note = try XCTUnwrap(graph.type(named: "Note"))
        let checklist = try XCTUnwrap(graph.type(named: "ChecklistNote")), sketch = try XCTUnwrap(graph.type(named: "Sketch"))
        XCTAssertEqual(Set(graph.family(of: item)), [item.index, note.index, checklist.index, sketch.index])
        XCTAssertEqual(Set(graph.family(of: note)), [note.index, checklist.index])
        XCTAssertEqual(checklist.lineage.supertype, note.index)
        XCTAssertEqual(graph.liveRefs(of: item).count, try sql(path) { try Int.fetchOne($0, sql: "SELECT count(*) FROM ZITEM") })
        XCTAssertEqual(checklist.attributes.map(\.name), ["createdAt", "title", "identifier", "isPinned", "body", "doneCount"],
                       "inherited attributes first, then its own")
        XCTAssertNil(item.attribute(named: "doneCount"), "a parent does not show its subentities' attributes")
        // `body` is ZBODY for notes and ZBODY1 for sketches.
        XCTAssertEqual(try value(graph, "Note", .int(2), "body"), .string("milk, eggs"))
        XCTAssertEqual(try value(graph, "Sketch", .int(6), "body"), .data(Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x30, 0x30, 0x30, 0x30])))
        XCTAssertEqual(try value(graph, "Note", .int(2), "isPinned"), .bool(true))
        XCTAssertEqual(try value(graph, "Folder", .int(1), "itemCount"), .int(3), "a derived attribute is an attribute")
        XCTAssertEqual(try value(graph, "Item", .int(1), "identifier"), .string("00001234-5678-0000-4000-800000000001"))
        XCTAssertEqual(try value(graph, "Item", .int(1), "createdAt"), .date(Date(timeIntervalSinceReferenceDate: 694224000)))
        // Ordered to-many in Z_FOK_ order; to-one to an entity hierarchy; many-to-many both sides.
        XCTAssertEqual(try targets(graph, "Note", "attachments")[.int(3)], [.int(3), .int(2), .int(4)])
        XCTAssertEqual(nonEmpty(try targets(graph, "Item", "folder")), try pairs(path, "SELECT Z_PK, ZFOLDER FROM ZITEM WHERE ZFOLDER IS NOT NULL"))
        XCTAssertEqual(nonEmpty(try targets(graph, "Folder", "items")), try pairs(path, "SELECT ZFOLDER, Z_PK FROM ZITEM WHERE ZFOLDER IS NOT NULL ORDER BY 1, 2"))
        XCTAssertEqual(nonEmpty(try targets(graph, "Item", "tags")), try pairs(path, "SELECT Z_3ITEMS, Z_7TAGS FROM Z_3TAGS ORDER BY 1, 2"))
        XCTAssertEqual(nonEmpty(try targets(graph, "Tag", "items")), try pairs(path, "SELECT Z_7TAGS, Z_3ITEMS FROM Z_3TAGS ORDER BY 1, 2"))
        XCTAssertEqual(nonEmpty(try targets(graph, "Tag", "broader")), try pairs(path, "SELECT Z_7NARROWER, Z_7BROADER FROM Z_7BROADER ORDER BY 1, 2"))
        XCTAssertEqual(nonEmpty(try targets(graph, "Tag", "narrower")), try pairs(path, "SELECT Z_7BROADER, Z_7NARROWER FROM Z_7BROADER ORDER BY 1, 2"))
        XCTAssertEqual(nonEmpty(try targets(graph, "Tag", "related")), [.int(1): [.int(2)], .int(2): [.int(1)], .int(3): [.int(5)], .int(5): [.int(3)]],
                       "a relationship that is its own inverse reads both ways")
        XCTAssertFalse(graph.types.contains { ["ATRANSACTION", "ACHANGE", "Z_3TAGS", "Z_PRIMARYKEY", "Z_MODELCACHE"].contains($0.name.rawValue) })
        let tweet = try LoadedStore.open(try Shared.copy("realdata/coredata/restkit_twitter/RKSeedDatabase.sqlite")).graph.type(named: "Tweet")
        XCTAssertEqual(tweet?.relation(named: "ZUSER"), tweet?.relation(named: "user"), "the stored column's name reaches the relation")
    }

    /// Without the model cache, the same fixture still splits by entity and finds the join tables.
    func testCoreDataFixtureWithoutModelCache() throws {
        let path = try Shared.fixture("make_coredata_fixture.py", "plain.sqlite", ["--no-model-cache"])
        let graph = try LoadedStore.open(path).graph
        XCTAssertEqual(graph.type(named: "ChecklistNote")?.attributes.map(\.name), ["createdat", "title", "identifier", "ispinned", "body", "donecount"])
        XCTAssertEqual(try value(graph, "Item", .int(1), "identifier"), .string("00001234-5678-0000-4000-800000000001"), "a 16-byte identifier is a UUID")
        XCTAssertEqual(nonEmpty(try targets(graph, "Item", "tags")), try pairs(path, "SELECT Z_3ITEMS, Z_7TAGS FROM Z_3TAGS ORDER BY 1, 2"))
        XCTAssertEqual(nonEmpty(try targets(graph, "Item", "folder")), try pairs(path, "SELECT Z_PK, ZFOLDER FROM ZITEM WHERE ZFOLDER IS NOT NULL"))
        XCTAssertEqual(nonEmpty(try targets(graph, "Attachment", "note")), try pairs(path, "SELECT Z_PK, ZNOTE FROM ZATTACHMENT WHERE ZNOTE IS NOT NULL"))
        XCTAssertEqual(nonEmpty(try targets(graph, "Tag", "related")), [.int(1): [.int(2)], .int(2): [.int(1)], .int(3): [.int(5)], .int(5): [.int(3)]])
    }

    /// A store shaped like Core Data but damaged: loads with warnings, never an error or a trap.
    func testDamagedCoreDataStoresLoadWithWarnings() throws {
        let path = try Shared.temporaryPath("damaged.sqlite")
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: """
                CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
                CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
                INSERT INTO Z_PRIMARYKEY VALUES (1, 'Foo', 0, 1), (2, 'Self', 2, 0), (3, NULL, 0, 0), (6, 'Loop', 7, 0), (7, 'Loop2', 6, 0);
                CREATE TABLE ZFOO (id INTEGER, name TEXT);
                INSERT INTO ZFOO VALUES (1, 'no Core Data columns');
                CREATE TABLE ZLOOP (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZX INTEGER, ZOTHER INTEGER);
                CREATE INDEX ZLOOP_ZOTHER_INDEX ON ZLOOP (ZOTHER);
                INSERT INTO ZLOOP VALUES (1, 6, 1, 1, 99), (2, 7, 1, 2, NULL), (3, 42, 1, 3, NULL);
                CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
                INSERT INTO Z_MODELCACHE VALUES (x'0102030405');
                """)
        }
        let store = try LoadedStore.open(path)
        XCTAssertEqual(store.format.name, "Core Data")
        XCTAssertEqual(store.graph.type(named: "Loop")?.count, 1)
        XCTAssertEqual(store.graph.type(named: "Loop2")?.count, 1)
        XCTAssertEqual(store.graph.type(named: "ZFOO")?.count, 1, "a table without Core Data's columns is read as a plain table")
        let warnings = store.warnings.joined(separator: "\n")
        for expected in ["model cache", "loop", "Foo", "1 row names no entity"] { XCTAssertTrue(warnings.contains(expected), warnings) }
    }

    /// A table or an index named with a double quote (GRDB spells such a name into its pragmas
    /// without doubling the quote): a Core Data store that holds one loads, the table read as a
    /// plain one.
    func testCoreDataStoreWithQuotedNamesLoads() throws {
        let path = try Shared.copy("realdata/coredata/apple_recipes/Recipes.sqlite")
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: #"CREATE TABLE "we""ird" (Z_PK INTEGER PRIMARY KEY, "x""y" TEXT); CREATE INDEX "i""x" ON "we""ird" ("x""y"); INSERT INTO "we""ird" VALUES (1, 'a')"#)
        }
        let store = try LoadedStore.open(path)
        XCTAssertEqual(store.format.name, "Core Data")
        XCTAssertEqual(store.graph.type(named: "Recipe")?.count, 7)
        XCTAssertEqual(store.graph.type(named: "we\"ird")?.attributes.map(\.name), ["Z_PK", "x\"y"])
    }

    /// `--as sqlite` shows the raw tables of a framework store; forcing a format a file is not in is refused.
    func testForcedFormats() throws {
        let path = try Shared.copy("realdata/coredata/apple_recipes/Recipes.sqlite")
        ReadOptions.current = ReadOptions(format: RelationalFormat.self)
        XCTAssertNotNil(try LoadedStore.open(path).graph.type(named: "ZRECIPE"))
        ReadOptions.current = ReadOptions(format: CoreDataFormat.self)
        XCTAssertThrowsError(try LoadedStore.open(try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite"))) { error in
            XCTAssertTrue("\(error)".contains("not laid out as a Core Data store"), "\(error)")
        }
    }

    // MARK: Seed libraries

    func testSwiftSerializationClassesAttributesAndNestedObjects() throws {
        let path = try Shared.copy("fixtures/seed-formats/swiftserialization.sqlite")
        let store = try LoadedStore.open(path)
        XCTAssertEqual(store.format.name, "SwiftSerialization")
        let expected = try sql(path) { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT objectName, count(*) FROM record GROUP BY 1").map { ($0[0] as String, $0[1] as Int) })
        }
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: store.graph.types.map { ($0.name.rawValue, $0.count) }), expected)
        let graph = store.graph
        let student = try XCTUnwrap(graph.type(named: "Student"))
        XCTAssertNil(student.attribute(named: "object"), "the class-name key is the type, not an attribute")
        XCTAssertEqual(try value(graph, "Teacher", .string("teacher-1"), "lastName"), .string("Kob"))
        let createdAt = try XCTUnwrap(student.attribute(named: "createdAt"))
        XCTAssertEqual(student.attributes[createdAt].kinds.subtracting(.null), .date)
        // A key path into embedded objects answers what SQL's JSON functions answer.
        let byPath = Set(student.liveRows.filter { row in
            if case .object(let t) = student.value(row: row, named: "teacher"), t["lastName"] == .string("Kob") { return true }
            return false
        }.map { student.ids[$0] })
        let bySQL = Set(try sql(path) { try String.fetchAll($0, sql: "SELECT id FROM record WHERE objectName = 'Student' AND json_extract(data, '$.teacher.lastName') = 'Kob'") }.map { ObjectID.string($0) })
        XCTAssertEqual(byPath, bySQL)
        XCTAssertFalse(bySQL.isEmpty)
    }

    func testPersistDBModelsDatesAndRelations() throws {
        let path = try Shared.copy("fixtures/seed-formats/persistdb.sqlite")
        let store = try LoadedStore.open(path)
        XCTAssertEqual(store.format.name, "PersistDB")
        let graph = store.graph
        func stringPairs(_ query: String) throws -> [ObjectID: [ObjectID]] {
            var out: [ObjectID: [ObjectID]] = [:]
            for row in try sql(path, { try Row.fetchAll($0, sql: query) }) {
                out[(row[0] as DatabaseValue).objectID!, default: []].append((row[1] as DatabaseValue).objectID!)
            }
            return out
        }
        XCTAssertEqual(nonEmpty(try targets(graph, "Homework", "student")), try stringPairs("SELECT h.id, p.id FROM Homework h JOIN Person p ON p.id = h.student"))
        XCTAssertEqual(nonEmpty(try targets(graph, "Person", "teacher")), try stringPairs("SELECT p.id, t.id FROM Person p JOIN Teacher t ON t.id = p.teacher"))
        XCTAssertEqual(nonEmpty(try targets(graph, "Book", "author")), try stringPairs("SELECT b.id, a.id FROM Book b JOIN Author a ON a.id = b.author"))
        let person = try XCTUnwrap(graph.type(named: "Person"))
        let first = try XCTUnwrap(graph.liveRefs(of: person).first)
        let seconds = try sql(path) { try Double.fetchOne($0, sql: "SELECT birthday FROM Person WHERE id = ?", arguments: [graph.id(of: first).value.description]) }
        XCTAssertEqual(person.value(row: Int(first.row), named: "birthday"), .date(Date(timeIntervalSinceReferenceDate: try XCTUnwrap(seconds))))
        XCTAssertEqual(person.value(row: Int(first.row), named: "name").kind, .string)
        let teacher = try XCTUnwrap(graph.type(named: "Teacher"))
        XCTAssertEqual(teacher.attributes[try XCTUnwrap(teacher.attribute(named: "salary"))].kinds.subtracting(.null), .double, "a REAL that is not named like a date stays a number")
        // Backlinks are PersistDB's to-many properties.
        let ann = try XCTUnwrap(graph.liveRefs(of: person).first { person.value(row: Int($0.row), named: "name") == .string("Ann") })
        let homework = try sql(path) { try Int.fetchOne($0, sql: "SELECT count(*) FROM Homework h JOIN Person p ON p.id = h.student WHERE p.name = 'Ann'") }
        XCTAssertEqual(graph.backlinks(of: ann).first { $0.key == "Homework.student" }?.sources.count, homework)
    }

    func testCouchbaseLiteRealBundle() throws {
        let folder = try Shared.temporaryPath("copy")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let bundle = folder + "/ios140_iosdb.cblite2"
        try FileManager.default.copyItem(atPath: Shared.root.appendingPathComponent("realdata/couchbase/ios140_iosdb.cblite2").path, toPath: bundle)
        let store = try LoadedStore.open(bundle)
        XCTAssertEqual(store.format.name, "Couchbase Lite")
        let expected = try sql(bundle + "/db.sqlite3") { try Int.fetchOne($0, sql: "SELECT count(DISTINCT doc_id) FROM revs WHERE current = 1 AND deleted = 0") }
        XCTAssertEqual(store.graph.objectCount, expected)
        let doc = try XCTUnwrap(store.graph.type(named: "doc"))
        let attachments = doc.value(row: 0, named: "_attachments")
        guard case .object(let o) = attachments, case .object(let info)? = o["attach1"] else { return XCTFail("\(attachments)") }
        XCTAssertEqual(info["length"], .int(7))
        XCTAssertEqual(doc.value(row: 0, named: "date").kind, .date)
    }

    func testDaliLayoutReferencesRevisionsAndAttachments() throws {
        let bundle = try Shared.fixture("make_dali_fixture.py", "shapes.cblite2")
        let graph = try LoadedStore.open(bundle).graph
        XCTAssertEqual(graph.types.map(\.name.rawValue), ["Square", "Circle", "VennDiagram", "Node", "Picture"])
        XCTAssertEqual(graph.type(named: "Square")?.count, 2, "the deleted square is hidden")
        XCTAssertEqual(try value(graph, "Circle", .string("A1B2C3D4-0000-4000-8000-000000000010"), "colour"), .string("winning"),
                       "the higher of two conflicting revisions wins")
        XCTAssertEqual(try value(graph, "VennDiagram", .string("A1B2C3D4-0000-4000-8000-00000000000D"), "title"), .string("Shapes and circles"),
                       "only the current revision shows")
        XCTAssertEqual(try targets(graph, "VennDiagram", "left")[.string("A1B2C3D4-0000-4000-8000-00000000000D")], [.string("A1B2C3D4-0000-4000-8000-00000000000A")])
        XCTAssertEqual(try targets(graph, "VennDiagram", "members")[.string("A1B2C3D4-0000-4000-8000-00000000000D")]?.count, 3)
        let circle = try XCTUnwrap(graph.ref(id: .string("A1B2C3D4-0000-4000-8000-00000000000C")))
        XCTAssertEqual(Set(graph.backlinks(of: circle).map(\.key)), ["VennDiagram.right", "VennDiagram.members", "Node.outEdges", "Picture.shape"])
        XCTAssertEqual(try value(graph, "Circle", .string("A1B2C3D4-0000-4000-8000-00000000000C"), "createdAt").kind, .date)
        guard case .object(let a) = try value(graph, "Picture", .string("picture-1"), "_attachments"), case .object(let thumb)? = a["thumb.png"] else {
            return XCTFail("no attachment")
        }
        XCTAssertEqual(thumb["length"], .int(7))
    }

    /// Persist dates written in a zone other than UTC (`2010-01-01 08:00:00 -04:00`) are dates.
    func testPersistDatesWithAnOffsetAreDates() throws {
        let out = try Shared.temporaryPath("persist-tz.sqlite")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Shared.root.appendingPathComponent("fixtures/seed-formats/make_persist_fixture.py").path, "-o", out, "--tz-minutes", "-240"]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let graph = try LoadedStore.open(out).graph
        let person = try XCTUnwrap(graph.type(named: "Person"))
        let stored = try sql(out) { try String.fetchOne($0, sql: "SELECT json_extract(json, '$.birthday') FROM by_type WHERE type_name = 'Person' ORDER BY id LIMIT 1") }
        XCTAssertTrue(stored?.hasSuffix("-04:00") ?? false, "\(stored ?? "")")
        XCTAssertEqual(person.value(row: 0, named: "birthday"), .date(try XCTUnwrap(DateText.parse(try XCTUnwrap(stored)))))
        XCTAssertEqual(person.attributes[try XCTUnwrap(person.attribute(named: "birthday"))].kinds.subtracting(.null), .date)
    }

    // MARK: Relational files without declared foreign keys

    private func undeclaredNorthwind() throws -> String {
        let path = try Shared.temporaryPath("northwind.sqlite")
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: """
                CREATE TABLE Customer (Id TEXT PRIMARY KEY, CompanyName TEXT);
                CREATE TABLE Category (Id INTEGER PRIMARY KEY, CategoryName TEXT);
                CREATE TABLE Product (Id INTEGER PRIMARY KEY, ProductName TEXT, CategoryId INTEGER, SupplierId INTEGER);
                CREATE TABLE "Order" (Id INTEGER PRIMARY KEY, CustomerId TEXT, EmployeeId INTEGER);
                CREATE TABLE OrderDetail (Id TEXT PRIMARY KEY, OrderId INTEGER, ProductId INTEGER, Quantity INTEGER);
                CREATE TABLE Employee (Id INTEGER PRIMARY KEY, LastName TEXT, ReportsTo INTEGER);
                CREATE TABLE Shipment (id INTEGER PRIMARY KEY, order_id INTEGER, category_id INTEGER, declared INTEGER REFERENCES Category(Id));
                INSERT INTO Customer VALUES ('ALFKI', 'Alfreds'), ('ANATR', 'Ana Trujillo');
                INSERT INTO Category VALUES (1, 'Beverages'), (2, 'Condiments');
                INSERT INTO Product VALUES (1, 'Chai', 1, 77), (2, 'Syrup', 2, 77), (3, 'Nothing', NULL, NULL);
                INSERT INTO "Order" VALUES (10248, 'ALFKI', 5), (10249, 'ANATR', 5), (10250, 'ALFKI', NULL);
                INSERT INTO OrderDetail VALUES ('10248/1', 10248, 1, 12), ('10248/2', 10248, 2, 10), ('10249/1', 10249, 1, 5);
                INSERT INTO Employee VALUES (5, 'Buchanan', NULL);
                INSERT INTO Shipment VALUES (1, 10248, 3, NULL);
                """)
        }
        return path
    }

    func testUndeclaredForeignKeysAreInferredFromNamesAndValues() throws {
        let path = try undeclaredNorthwind()
        let graph = try LoadedStore.open(path).graph
        XCTAssertEqual(try targets(graph, "Order", "Customer").filter { !$0.value.isEmpty },
                       [.int(10248): [.string("ALFKI")], .int(10249): [.string("ANATR")], .int(10250): [.string("ALFKI")]])
        XCTAssertEqual(nonEmpty(try targets(graph, "OrderDetail", "Order")), [.string("10248/1"): [.int(10248)], .string("10248/2"): [.int(10248)], .string("10249/1"): [.int(10249)]])
        XCTAssertEqual(nonEmpty(try targets(graph, "Product", "Category")).count, 2)
        XCTAssertEqual(nonEmpty(try targets(graph, "Order", "Employee")).count, 2, "`EmployeeId` → `Employee`")
        XCTAssertEqual(nonEmpty(try targets(graph, "Shipment", "order")).count, 1, "`order_id` → `Order`")
        let product = try XCTUnwrap(graph.type(named: "Product"))
        XCTAssertNil(product.relation(named: "Supplier"), "no Supplier table: not a relation")
        let shipment = try XCTUnwrap(graph.type(named: "Shipment"))
        XCTAssertNil(shipment.relation(named: "category"), "a value no Category has: not a relation")
        let declared = try XCTUnwrap(shipment.relation(named: "declared"))
        XCTAssertFalse(shipment.relations[declared].isInferred)
        XCTAssertEqual(graph.types[shipment.relations[declared].targetTypes.first ?? -1].name.rawValue, "Category",
                       "a declared key whose column is all NULL still points at its table")
        let order = try XCTUnwrap(graph.type(named: "Order"))
        XCTAssertTrue(order.relations[try XCTUnwrap(order.relation(named: "Customer"))].isInferred)
        XCTAssertTrue(graph.schemaText(of: order).contains("Customer    → Customer  to-one  (also CustomerId)  (inferred)"), graph.schemaText(of: order))
        ReadOptions.current = ReadOptions(infersRelations: false)
        XCTAssertTrue(try LoadedStore.open(path).graph.types.allSatisfy { $0.relations.allSatisfy { !$0.isInferred } })
    }
}

extension FrameworkFormatTests {
    /// Damaged model caches (bytes flipped, cut, repeated in a real compiled model, its trailer
    /// rewritten) decode to a model or to nil, never a trap (Foundation's own reader trapped on
    /// some of these; ``BinaryPropertyList`` checks every offset, count and reference).
    func testDamagedModelCachesNeverTrap() throws {
        let path = try Shared.copy("realdata/coredata/plaso/Accounts3.sqlite")
        let blob = try XCTUnwrap(try DatabaseQueue(path: path).read { try Data.fetchOne($0, sql: "SELECT Z_CONTENT FROM Z_MODELCACHE") })
        let archive = try XCTUnwrap(CoreDataModel.inflate(blob, limit: 1 << 24))
        XCTAssertNotNil(CoreDataModel.decode(archive: archive))
        // The reader sees the list Foundation sees, on an intact list.
        let mine = try XCTUnwrap(BinaryPropertyList.parse([UInt8](archive)) as? [String: Any])
        let foundation = try XCTUnwrap(try PropertyListSerialization.propertyList(from: archive, format: nil) as? [String: Any])
        XCTAssertEqual(Set(mine.keys), Set(foundation.keys))
        XCTAssertEqual((mine["$objects"] as? [Any])?.count, (foundation["$objects"] as? [Any])?.count)
        XCTAssertEqual(mine["$archiver"] as? String, "NSKeyedArchiver")
        // A fixed sequence (SplitMix64), so that a failure names its round; the last 32 bytes (the
        // trailer: sizes, counts, offsets) are hit as often as the rest.
        var state: UInt64 = 0x5EED_C0DE
        func next(_ bound: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(bound))
        }
        for round in 0..<4000 {
            var bytes = [UInt8](archive)
            switch round % 4 {
            case 0: for _ in 0..<(1 + round % 8) { bytes[8 + next(bytes.count - 8)] = UInt8(next(256)) }
            case 1: bytes = Array(bytes.prefix(8 + next(bytes.count - 8)))
            case 2: for _ in 0..<(1 + round % 3) { bytes[bytes.count - 32 + next(32)] = UInt8(next(256)) }
            default:
                let at = 8 + next(bytes.count - 8)
                bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + 64)], at: at)
            }
            // A model that still decodes names entities from the original.
            if let model = CoreDataModel.decode(archive: Data(bytes)) { XCTAssertFalse(model.entities.isEmpty) }
            _ = CoreDataModel.inflate(Data(bytes), limit: 1 << 20)
        }
    }
}
