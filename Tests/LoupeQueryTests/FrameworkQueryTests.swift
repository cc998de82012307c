import Foundation
import GRDB
import LoupeModel
import LoupeQuery
import LoupeStore
import LoupeTestSupport
import XCTest

/// A query across a relation and one across a backlink (or to-many) per framework store, each
/// equal to the same question asked in SQL over the raw tables.
final class FrameworkQueryTests: XCTestCase {

    /// Each `(query, SQL)` pair: Loupe's count over the store equals SQL's over the raw file.
    private func check(_ path: String, sqlFile: String? = nil, _ cases: [(String, String)], file: StaticString = #filePath, line: UInt = #line) throws {
        let graph = try LoadedStore.open(path).graph
        let engine = QueryEngine(graph: graph)
        var config = Configuration()
        config.readonly = true
        let db = try DatabaseQueue(path: sqlFile ?? path, configuration: config)
        for (query, sql) in cases {
            guard case .count(let n) = try engine.run(query) else { XCTFail("not a count: \(query)", file: file, line: line); continue }
            let expected = try db.read { try Int.fetchOne($0, sql: sql) }
            XCTAssertEqual(n, expected, query, file: file, line: line)
        }
    }

    func testCoreDataQueries() throws {
        try check(try Shared.copy("realdata/coredata/apple_recipes/Recipes.sqlite"), [
            (#"count Recipe where type.name == "Dessert""#, "SELECT count(*) FROM ZRECIPE r JOIN ZRECIPETYPE t ON t.Z_PK = r.ZTYPE WHERE t.ZNAME = 'Dessert'"),
            ("count Recipe where @links.Ingredient.recipe.@count > 4", "SELECT count(*) FROM ZRECIPE r WHERE (SELECT count(*) FROM ZINGREDIENT i WHERE i.ZRECIPE = r.Z_PK) > 4"),
        ])
        try check(try Shared.copy("realdata/coredata/plaso/Accounts3.sqlite"), [
            (#"count Account where accountType.identifier CONTAINS "com.apple""#,
             "SELECT count(*) FROM ZACCOUNT a JOIN ZACCOUNTTYPE t ON t.Z_PK = a.ZACCOUNTTYPE WHERE instr(t.ZIDENTIFIER, 'com.apple') > 0"),
            ("count Account where enabledDataclasses.@count > 2",
             "SELECT count(*) FROM ZACCOUNT a WHERE (SELECT count(*) FROM Z_2ENABLEDDATACLASSES j WHERE j.Z_2ENABLEDACCOUNTS = a.Z_PK) > 2"),
            ("count AccountType where accounts.@count > 0", "SELECT count(DISTINCT ZACCOUNTTYPE) FROM ZACCOUNT"),
        ])
        try check(try Shared.copy("realdata/coredata/restkit_twitter/RKSeedDatabase.sqlite"), [
            (#"count Tweet where user.screenName BEGINSWITH "Rest""#, "SELECT count(*) FROM ZTWEET t JOIN ZUSER u ON u.Z_PK = t.ZUSER WHERE substr(u.ZSCREENNAME, 1, 4) = 'Rest'"),
            ("count User where @links.Tweet.user.@count >= 10", "SELECT count(*) FROM ZUSER u WHERE (SELECT count(*) FROM ZTWEET t WHERE t.ZUSER = u.Z_PK) >= 10"),
        ])
        let notes = try Shared.fixture("make_coredata_fixture.py", "notes.sqlite")
        try check(notes, [
            (#"count Item where tags.name == "work""#, "SELECT count(DISTINCT j.Z_3ITEMS) FROM Z_3TAGS j JOIN ZTAG t ON t.Z_PK = j.Z_7TAGS WHERE t.ZNAME = 'work'"),
            (#"count Note where folder.parent.name == "Projects""#,
             "SELECT count(*) FROM ZITEM i JOIN ZFOLDER f ON f.Z_PK = i.ZFOLDER JOIN ZFOLDER p ON p.Z_PK = f.ZPARENT WHERE p.ZNAME = 'Projects' AND i.Z_ENT IN (4, 5)"),
            ("count Folder where items.@count > 1", "SELECT count(*) FROM ZFOLDER f WHERE (SELECT count(*) FROM ZITEM i WHERE i.ZFOLDER = f.Z_PK) > 1"),
            ("count Tag where broader.@count > 0 and related.@count > 0",
             "SELECT count(*) FROM ZTAG t WHERE EXISTS (SELECT 1 FROM Z_7BROADER b WHERE b.Z_7NARROWER = t.Z_PK) AND EXISTS (SELECT 1 FROM Z_7RELATED r WHERE t.Z_PK IN (r.Z_7RELATED, r.Z_7RELATED1))"),
            ("count Item", "SELECT count(*) FROM ZITEM"),
            // A parent entity's backlinks include its subentities' (`Item.tags` is inherited by notes and sketches).
            ("count Tag where @links.Item.tags.@count > 0", "SELECT count(DISTINCT Z_7TAGS) FROM Z_3TAGS"),
            ("count Tag where @links.Note.tags.@count > 0", "SELECT count(DISTINCT j.Z_7TAGS) FROM Z_3TAGS j JOIN ZITEM i ON i.Z_PK = j.Z_3ITEMS WHERE i.Z_ENT IN (4, 5)"),
            ("count Note", "SELECT count(*) FROM ZITEM WHERE Z_ENT IN (4, 5)"),
        ])
    }

    func testSeedLibraryQueries() throws {
        try check(try Shared.copy("fixtures/seed-formats/swiftserialization.sqlite"), [
            (#"count Student where teacher.lastName == "Kob""#, "SELECT count(*) FROM record WHERE objectName = 'Student' AND json_extract(data, '$.teacher.lastName') = 'Kob'"),
            ("count Student where homework.@count >= 3", "SELECT count(*) FROM record WHERE objectName = 'Student' AND json_array_length(data, '$.homework') >= 3"),
        ])
        try check(try Shared.copy("fixtures/seed-formats/persistdb.sqlite"), [
            (#"count Homework where student.teacher.name == "Mr Smith""#,
             "SELECT count(*) FROM Homework h JOIN Person p ON p.id = h.student JOIN Teacher t ON t.id = p.teacher WHERE t.name = 'Mr Smith'"),
            ("count Person where @links.Homework.student.@count == 0", "SELECT count(*) FROM Person p WHERE NOT EXISTS (SELECT 1 FROM Homework h WHERE h.student = p.id)"),
            ("count Author where @links.Book.author.@count > 0", "SELECT count(DISTINCT author) FROM Book"),
        ])
        let bundle = try Shared.fixture("make_dali_fixture.py", "shapes.cblite2")
        let graph = try LoadedStore.open(bundle).graph
        let engine = QueryEngine(graph: graph)
        func count(_ q: String) throws -> Int? { if case .count(let n) = try engine.run(q) { return n } else { return nil } }
        XCTAssertEqual(try count(#"count VennDiagram where left.colour == "red" and right.radius > 1"#), 1)
        XCTAssertEqual(try count("count Circle where @links.VennDiagram.members.@count > 0"), 1)
        XCTAssertEqual(try count(#"count Node where outEdges.colour == "blue""#), 1)
    }

    func testRelationalQueriesThroughInferredKeys() throws {
        let path = try Shared.temporaryPath("undeclared.sqlite")
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: """
                CREATE TABLE Customer (Id TEXT PRIMARY KEY, Country TEXT);
                CREATE TABLE "Order" (Id INTEGER PRIMARY KEY, CustomerId TEXT);
                INSERT INTO Customer VALUES ('ALFKI', 'Germany'), ('ANATR', 'Mexico'), ('BLAUS', 'Germany');
                INSERT INTO "Order" VALUES (1, 'ALFKI'), (2, 'ANATR'), (3, 'BLAUS'), (4, 'ALFKI'), (5, NULL);
                """)
        }
        try check(path, [
            (#"count Order where Customer.Country == "Germany""#, #"SELECT count(*) FROM "Order" o JOIN Customer c ON c.Id = o.CustomerId WHERE c.Country = 'Germany'"#),
            ("count Customer where @links.Order.Customer.@count > 1", #"SELECT count(*) FROM Customer c WHERE (SELECT count(*) FROM "Order" o WHERE o.CustomerId = c.Id) > 1"#),
        ])
    }
}
