import Foundation
import LoupeModel
import LoupePostgres
import LoupeQuery
import LoupeStore
import LoupeTestSupport
import XCTest

/// PostgreSQL through libpq against a real server (``PostgresServer``): Chinook copied into it
/// must answer every conformance case as the SQLite file does, and bad addresses, credentials and
/// dropped connections must end in one clear error.
final class PostgresTests: XCTestCase {
    static let chinook: Result<String, Error> = Result {
        try PostgresServer.database(copying: try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite"), named: "chinook")
    }

    func testChinookConformanceOnPostgres() throws {
        let url = try Self.chinook.get()
        let loaded = try PostgresDatabase.load(url: url)
        XCTAssertEqual(loaded.warnings, [])
        let postgres = loaded.graph
        let sqlite = try LoadedStore.open(try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")).graph
        XCTAssertEqual(postgres.types.map(\.name.rawValue).sorted(), sqlite.types.map(\.name.rawValue).sorted())
        for type in sqlite.types {
            let other = try XCTUnwrap(postgres.type(named: type.name.rawValue))
            XCTAssertEqual(other.count, type.count, type.name.rawValue)
            XCTAssertEqual(other.attributes.map(\.name), type.attributes.map(\.name), type.name.rawValue)
            XCTAssertEqual(Set(other.relations.map(\.name)), Set(type.relations.map(\.name)), type.name.rawValue)
        }
        for c in try ConformanceTests.cases().cases {
            let output = try QueryEngine(graph: postgres).run(c.query).render(.json, graph: postgres)
            XCTAssertEqual(try ConformanceTests.normalised(output, kind: c.kind),
                           try ConformanceTests.normalised(c.expected, kind: c.kind, isExpected: true), c.query)
            XCTAssertEqual(output, try QueryEngine(graph: sqlite).run(c.query).render(.json, graph: sqlite), c.query)
        }
    }

    /// Kinds of value keep their kind; schemas other than `public` are prefixed; views are types.
    func testValuesSchemasAndViews() throws {
        let url = try PostgresServer.freshDatabase("kinds")
        XCTAssertEqual(try PostgresServer.psql(url, """
            CREATE SCHEMA shop;
            CREATE TABLE shop.item (sku text PRIMARY KEY, price numeric(8,2), ok boolean, made date, seen timestamptz,
                                    raw bytea, doc jsonb, tags text[], "we""ird" int);
            INSERT INTO shop.item VALUES ('a-1', 9.99, true, '2024-01-31', '2024-01-31 10:20:30+02', '\\x00ff',
                                          '{"size": {"w": 3}, "colors": ["red"]}', '{x,y}', 7), ('b-2', NULL, false, NULL, NULL, NULL, NULL, NULL, NULL);
            CREATE TABLE line (id int PRIMARY KEY, item_sku text REFERENCES shop.item(sku));
            INSERT INTO line VALUES (1, 'a-1'), (2, 'a-1'), (3, NULL);
            CREATE VIEW cheap AS SELECT sku FROM shop.item WHERE price < 10;
            """), 0)
        let graph = try PostgresDatabase.load(url: url).graph
        XCTAssertEqual(graph.types.map(\.name.rawValue), ["line", "shop.item", "cheap"])
        let engine = QueryEngine(graph: graph)
        XCTAssertEqual(try engine.run("count `shop.item` where price == 9.99 AND ok == true AND made == 2024-01-31 AND seen == 2024-01-31T08:20:30Z").render(.json, graph: graph), "1\n")
        XCTAssertEqual(try engine.run("count `shop.item` where doc.size.w == 3 AND doc.colors CONTAINS \"red\"").render(.json, graph: graph), "1\n")
        XCTAssertEqual(try engine.run("`shop.item` where sku == \"a-1\" select raw, tags, `we\"ird` as w").render(.json, graph: graph),
                       "[{\"raw\": \"AP8=\", \"tags\": \"{x,y}\", \"w\": 7}]\n")
        XCTAssertEqual(try engine.run("count line where item_sku.price > 5").render(.json, graph: graph), "2\n")
        XCTAssertEqual(try engine.run("`shop.item` where @links.line.item_sku.@count == 2 select sku").render(.json, graph: graph), "[{\"sku\": \"a-1\"}]\n")
        XCTAssertEqual(try engine.run("count cheap").render(.json, graph: graph), "1\n")
    }

    /// An unreachable port, an unknown database, a wrong user, a dropped connection: one clear
    /// error each (no password in it), quickly, never a crash; and the connection never writes.
    func testFailuresAreClearErrors() throws {
        let server = try PostgresServer.url()
        let start = Date()
        XCTAssertThrowsError(try PostgresConnection(url: "postgresql://someone:s3cret@127.0.0.1:1/nothing")) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix("cannot read 'postgresql://someone@127.0.0.1:1/nothing': "), text)
            XCTAssertFalse(text.contains("s3cret"), text)
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 10)
        XCTAssertThrowsError(try PostgresDatabase.load(url: try PostgresServer.url(database: "no_such_db"))) {
            XCTAssertTrue("\($0)".contains("no_such_db"), "\($0)")
        }
        XCTAssertThrowsError(try PostgresConnection(url: server.replacingOccurrences(of: "postgres@", with: "nobody_here@"))) {
            XCTAssertTrue("\($0)".contains("nobody_here"), "\($0)")
        }
        let connection = try PostgresConnection(url: server)
        XCTAssertThrowsError(try connection.query("CREATE TABLE t_should_not_exist (x int)")) {
            XCTAssertTrue("\($0)".contains("read-only"), "\($0)")
        }
        let pid = try XCTUnwrap(try connection.query("SELECT pg_backend_pid()").rows.first?.first ?? nil)
        let killer = try PostgresConnection(url: server)
        _ = try killer.query("SELECT pg_terminate_backend($1::int)", [pid])
        XCTAssertThrowsError(try connection.query("SELECT 1")) { XCTAssertTrue("\($0)".hasPrefix("cannot read"), "\($0)") }
    }
}
