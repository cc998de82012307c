import Foundation
import LoupeQuery
import XCTest

/// The language's help in the app: `.help query`, the README's cheat sheet (the same text), and
/// the hints a first statement meets (SQL out of habit, a clause out of order).
final class QueryHelpTests: XCTestCase {
    func testTheReadmesCheatSheetIsTheOneInTheApp() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../README.md").standardizedFileURL
        let text = try String(contentsOf: readme, encoding: .utf8)
        let start = try XCTUnwrap(text.range(of: "## Query cheat sheet\n\n```text\n"))
        let stop = try XCTUnwrap(text.range(of: "\n```", range: start.upperBound..<text.endIndex))
        XCTAssertEqual(String(text[start.upperBound..<stop.lowerBound]), QueryHelp.cheatSheet, "README.md's cheat sheet differs from QueryHelp.cheatSheet")
        for line in QueryHelp.cheatSheet.split(separator: "\n") {
            let statement = line.components(separatedBy: " -- ").first!.trimmingCharacters(in: .whitespaces)
            XCTAssertNoThrow(try Parser.parse(statement), statement)
        }
    }

    func testSQLAndClausesOutOfOrderGetAHint() {
        for sql in ["SELECT * FROM Book", "select title from Book where pages > 3"] {
            XCTAssertThrowsError(try Parser.parse(sql)) { error in
                let e = error as? QueryError
                XCTAssertEqual(e?.message, "this looks like SQL; a statement here names the type first", sql)
                XCTAssertEqual(e?.hint, "`SELECT * FROM Book WHERE pages > 300` is `Book where pages > 300`; `.help query` shows the language")
            }
        }
        XCTAssertThrowsError(try Parser.parse("Book select title where pages > 3")) { error in
            XCTAssertEqual((error as? QueryError)?.hint, "clauses go in this order, each once: " + QueryHelp.clauseOrder)
        }
        XCTAssertTrue(QueryHelp.clauseOrder.contains("group by"))
        XCTAssertTrue(QueryHelp.text.hasPrefix("A statement names a type first"))
    }
}
