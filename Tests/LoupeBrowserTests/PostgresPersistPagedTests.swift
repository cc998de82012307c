import Foundation
import LoupeBrowser
import LoupeModel
import LoupePostgres
import LoupeQuery
import LoupeStore
import LoupeTestSupport
import TerminalKit
import XCTest

/// Paged mode over Persist's layout stored in PostgreSQL (``PostgresPersistPages``) against the
/// whole graph a load of the same database gives: the same keys give the same screens.
final class PostgresPersistPagedTests: XCTestCase {
    /// A generated library copied into PostgreSQL with `documentType` documents, with rows made
    /// to be awkward added: a document that is not an object, one member repeated (kept by
    /// `json` only), a relation row to nothing, an object with many backlinks and one with many
    /// targets of one relation, a type whose first object comes late.
    static func library(_ name: String, documentType: String, relationKey: String? = "bigserial", indexes: Bool = false) throws -> String {
        let path = try Shared.temporaryPath("\(name).sqlite")
        try SampleGenerator.generate(path: path, objects: 1500, seed: 7)
        let url = try PostgresServer.persistDatabase(copying: path, named: name, documentType: documentType, relationKey: relationKey)
        var script = """
            INSERT INTO by_type VALUES (900001, 'Author', '[1, 2]'), (900002, 'Author', '{"name": "twice", "name": "again", "born": 1901}'),
                                       (900003, 'Shelf', '{"label": "late", "at": "2020-01-02 03:04:05 Z"}');
            INSERT INTO relations (from_id, to_id, relation) VALUES (900003, 123456789, 'holds'), (900003, 900002, 'keeper');

            """
        for i in 0..<40 { script += "INSERT INTO relations (from_id, to_id, relation) VALUES (900003, \(i + 10), 'holds'), (\(i + 10), 900002, 'shelvedBy');\n" }
        if indexes {
            script += "CREATE INDEX ON relations (from_id); CREATE INDEX ON relations (to_id); CREATE INDEX ON by_type (type_name);\n"
        }
        XCTAssertEqual(try PostgresServer.psql(url, script), 0)
        return url
    }

    func testPersistLayoutPagesAsItLoads() throws {
        for (documentType, relationKey, indexes) in [("jsonb", "bigserial", false), ("json", nil, true)] as [(String, String?, Bool)] {
            let url = try Self.library("persist_paged_\(documentType)", documentType: documentType, relationKey: relationKey, indexes: indexes)
            let graph = try PostgresDatabase.load(url: url).graph
            let pages = try PostgresPersistPages.open(url: url)
            XCTAssertEqual(pages.catalog.map(\.name), graph.types.map(\.name.rawValue), documentType)
            XCTAssertEqual(pages.catalog.map(\.count), graph.types.map(\.count), documentType)
            XCTAssertEqual(pages.notes, ["schema from a sample"] + (indexes ? [] : [
                "no index on relations.from_id and .to_id: each page scans the relation rows",
                "no index on by_type.type_name: a far jump in a type walks the keys before it"]), documentType)
            for seed in UInt64(1)...5 {
                try walk(graph: graph, pages: try PostgresPersistPages.open(url: url, edgesPerObject: Int(seed % 3) * 4 + 1), seed: seed, count: 120, windowRows: 30)
            }
            try walk(graph: graph, pages: pages, seed: 11, count: 150, windowRows: 200)
            // Every type's keys at any positions, paged from any window, are its keys in the load's order.
            var rng = SampleGenerator.Random(state: 5)
            for (t, type) in graph.types.enumerated() where type.count > 0 {
                let all = (0..<type.count).map { graph.id(of: ObjectRef(type: t, row: $0)) }
                for _ in 0..<8 {
                    let a = Int(rng.next() % UInt64(type.count)), n = Int(rng.next() % 30)
                    let b = Int(rng.next() % UInt64(type.count)), m = Int(rng.next() % 30) + 1
                    let near = (start: b, keys: Array(all[b..<min(type.count, b + m)]))
                    XCTAssertEqual(try pages.keys(type: t, range: a..<a + n, near: near), Array(all[a..<min(type.count, a + n)]), "\(documentType) \(type.name)")
                }
            }
        }
    }
}
