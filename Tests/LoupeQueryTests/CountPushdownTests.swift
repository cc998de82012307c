import Foundation
import GRDB
import LoupeHost
import LoupeModel
import LoupeQuery
import LoupeStore
import LoupeTestSupport
import XCTest

/// `count T where …` answered by SQLite over a Persist file must equal the engine's answer over
/// the loaded graph, and must decline (nil) whenever they could differ.
final class CountPushdownTests: XCTestCase {
    private func inMemory(_ statement: String, _ graph: ObjectGraph) throws -> Int? {
        if case .count(let n) = try QueryEngine(graph: graph).run(statement) { return n }
        return nil
    }

    func testPushedDownCountsEqualTheEngines() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 3000, seed: 11)
        let graph = try LoadedStore.open(path).graph
        let pushed = [
            "count Book", "count Book where pages > 300", "count Book where NOT (pages > 300)", "count Book where pages != 320",
            "count Book where pages == 320 or price <= 12.5", "count Book where pages BETWEEN {100, 400} and not price > 30",
            "count Book where 300 < pages", "count Book where price >= -1", "count book where pages < 200", "count Author where born < 1900",
            "count Book where TRUEPREDICATE", "count Book where FALSEPREDICATE or pages >= 0",
        ]
        for statement in pushed {
            let answer = try CountPushdown.count(try Parser.parse(statement), file: try StoreFile.openForReading(path))
            XCTAssertNotNil(answer, statement)
            XCTAssertEqual(answer, try inMemory(statement, graph), statement)
        }
        // Declined: a relation, another spelling of a key, text and booleans, paths, unknown keys.
        for statement in ["count Book where author.born < 1900", "count Book where Pages > 300", "count Book where title == \"x\"",
                          "count Book where inPrint == true", "count Book where title > 3", "count Book where nosuchkey > 3",
                          "count Loan where book == nil", "count Book where @links.Loan.book.@count > 1", "Book where pages > 3",
                          "count Book where pages IN {1, 2}"] {
            XCTAssertNil(try CountPushdown.count(try Parser.parse(statement), file: try StoreFile.openForReading(path)), statement)
        }
    }

    /// A value of another kind anywhere in the type makes SQLite's answer differ: declined.
    func testMixedKindsAndUnparsableDocumentsAreDeclined() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 500, seed: 3)
        let db = try DatabaseQueue(path: path)
        let statement = try Parser.parse("count Book where pages > 300")
        XCTAssertNotNil(try CountPushdown.count(statement, file: try StoreFile.openForReading(path)))
        try db.write { try $0.execute(sql: "UPDATE by_type SET json = json_set(json, '$.pages', '600') WHERE id = (SELECT min(id) FROM by_type WHERE type_name = 'Book')") }
        XCTAssertNil(try CountPushdown.count(statement, file: try StoreFile.openForReading(path)), "a page count stored as text")
        try db.write { try $0.execute(sql: "UPDATE by_type SET json = json_set(json, '$.pages', 600) WHERE id = (SELECT min(id) FROM by_type WHERE type_name = 'Book')") }
        XCTAssertNotNil(try CountPushdown.count(statement, file: try StoreFile.openForReading(path)))
        try db.write { try $0.execute(sql: "UPDATE by_type SET json = '{\"pages\": 7,' WHERE id = (SELECT max(id) FROM by_type WHERE type_name = 'Book')") }
        XCTAssertNil(try CountPushdown.count(statement, file: try StoreFile.openForReading(path)), "a document that does not parse")
    }

    /// A member spelled twice (SQLite reads the first, the load keeps the last) or with escapes
    /// (SQLite's paths do not decode them) would be counted otherwise than the engine counts it:
    /// declined, and the statement is answered over the load.
    func testMembersSpelledTwiceOrWithEscapesAreDeclined() throws {
        for (document, pages) in [(#"{"title": "Twice", "pages": 999, "pages": 1}"#, 1), (#"{"title": "Escaped", "p\u0061ges": 999}"#, 999)] {
            let path = try Shared.temporaryPath()
            try SampleGenerator.generate(path: path, objects: 500, seed: 3)
            let statement = try Parser.parse("count Book where pages > 900")
            XCTAssertNotNil(try CountPushdown.count(statement, file: try StoreFile.openForReading(path)))
            try DatabaseQueue(path: path).write { db in
                try db.execute(sql: "UPDATE by_type SET json = ? WHERE id = (SELECT min(id) FROM by_type WHERE type_name = 'Book')", arguments: [document])
            }
            let graph = try LoadedStore.open(path).graph
            XCTAssertEqual(try QueryEngine(graph: graph).run("Book where title == \"\(document.contains("Twice") ? "Twice" : "Escaped")\" select pages").render(.csv, graph: graph),
                           "pages\r\n\(pages)\r\n")
            XCTAssertNil(try CountPushdown.count(statement, file: try StoreFile.openForReading(path)), document)
        }
    }
}
