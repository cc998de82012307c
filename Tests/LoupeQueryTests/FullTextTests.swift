import Foundation
import GRDB
import LoupeModel
@testable import LoupeQuery
import LoupeSQL
import LoupeStore
import LoupeTestSupport
import XCTest

/// `MATCH` on SQLite's full-text tables (FTS3, FTS4, FTS5): every engine — the in-memory engine
/// over a load, SQL over the file, the plan as paged mode runs it — gives the rows SQLite's own
/// `MATCH` gives (its tokenizer, its query syntax), and a query the module refuses is the same
/// one-line error from each, never SQLite's error about SQL Loupe wrote.
final class FullTextTests: XCTestCase {
    private static let queries = ["sea", "sea ship", "sea OR gull", "\"storm tide\"", "s*", "t1*", "harbour AND gull"]

    func testMatchIsAnsweredAsTheModuleAnswersItByEveryEngine() throws {
        let path = try HostileEdits.virtualTables(rows: 40, seed: 9)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let graph = try LoadedStore.open(path).graph
        let pages = try RelationalPages.open(try StoreFile.openForReading(path))
        let sql = RelationalQuerySource(pages: pages)
        let sqlite = try DatabaseQueue(path: path, configuration: { var c = Configuration(); c.readonly = true; return c }())
        var answeredBySQL = 0, matchedSome = 0
        for table in ["docs5", "docs4", "docs3"] {
            XCTAssertEqual(graph.type(named: table)?.keyPolicy, .rowid, "\(table)'s rows are keyed by rowid")
            for column in ["body", "title", table] {
                for query in Self.queries {
                    let rowids = try sqlite.read { db in
                        try Int64.fetchAll(db, sql: "SELECT rowid FROM \(table) WHERE \(column) MATCH ? ORDER BY rowid", arguments: [query])
                    }
                    if !rowids.isEmpty { matchedSome += 1 }
                    let text = "\(table) where \(column) MATCH '\(query)' sort by id"
                    let statement = try Parser.parse(text)
                    let expected = "\(table): " + rowids.map(String.init).joined(separator: " ")
                    XCTAssertEqual(PersistPushdownTests.describe(try QueryEngine(graph: graph).run(statement), graph), expected, "memory: \(text)")
                    if let answer = try sql.answer(statement, isCancelled: { false }) {
                        answeredBySQL += 1
                        XCTAssertEqual(PersistPushdownTests.describe(answer), expected, "SQL: \(text)")
                    }
                    let steps = StoreSteps(source: sql, pages: pages, schema: nil, kind: .relational, isCancelled: { false })
                    guard case .answered(let planned, _, _) = try Planner.plan(statement, PlanSituation(kind: .relational, paged: true)).run(steps) else {
                        XCTFail("paged mode's plan answers \(text)"); continue
                    }
                    XCTAssertEqual(PersistPushdownTests.describe(planned), expected, "paged: \(text)")
                }
            }
        }
        XCTAssertEqual(answeredBySQL, 3 * 3 * Self.queries.count, "SQL answers every MATCH over the file")
        XCTAssertGreaterThan(matchedSome, 3 * 3 * Self.queries.count / 2, "most queries match rows (the comparison is not vacuous)")
        // MATCH combined with the rest of the language, in SQL and in memory alike.
        let combined = try Parser.parse("count docs5 where body MATCH 'sea' and not (title MATCH 't1*') and title != 't2'")
        let n = try sqlite.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM docs5 WHERE rowid IN (SELECT rowid FROM docs5 WHERE body MATCH 'sea') AND rowid NOT IN (SELECT rowid FROM docs5 WHERE title MATCH 't1*') AND title != 't2'")
        }
        XCTAssertEqual(PersistPushdownTests.describe(try QueryEngine(graph: graph).run(combined), graph), "count \(n ?? -1)")
        XCTAssertEqual(try sql.answer(combined, isCancelled: { false }).map(PersistPushdownTests.describe), "count \(n ?? -1)")
        try sqlite.close()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, "searching never writes")
    }

    /// What a user gets wrong is said the same way by the in-memory engine and by SQL: a query
    /// the module refuses (in its words), MATCH on a table that is not full-text, a column the
    /// table lacks, something other than a column on the left.
    func testMistakesAreOneLineErrorsFromEveryEngine() throws {
        let path = try HostileEdits.virtualTables(rows: 5)
        let graph = try LoadedStore.open(path).graph
        let sql = RelationalQuerySource(pages: try RelationalPages.open(try StoreFile.openForReading(path)))
        let cases = [
            ("count docs5 where body MATCH 'sea AND'", "fts5 refused the full-text query: fts5: syntax error near \"\""),
            ("count docs5_notes where note MATCH 'sea'", "docs5_notes is not a full-text table"),
            ("count docs4 where nothing MATCH 'sea'", "docs4 has no column nothing"),
            ("count docs3 where id MATCH 'sea'", "MATCH takes a column of a full-text table on its left"),
            ("count docs5 where body MATCH 3", "MATCH takes the query as text"),
        ]
        for (text, message) in cases {
            let statement = try Parser.parse(text)
            XCTAssertThrowsError(try QueryEngine(graph: graph).run(statement), text) { XCTAssertEqual(($0 as? QueryError)?.message, message, text) }
            do {
                let answer = try sql.answer(statement, isCancelled: { false })
                XCTAssertNil(answer, "SQL either declines or says the same: \(text)")
            } catch let error as QueryError {
                XCTAssertEqual(error.message, message, "SQL: \(text)")
            }
        }
    }
}
