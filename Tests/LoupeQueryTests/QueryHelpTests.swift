import Foundation
import LoupeModel
import LoupeQuery
import LoupeStore
import LoupeTestSupport
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

/// `.help TOPIC`: every clause, operator and function has a line and an example, the same as
/// docs/query-language.md's reference table, and every example runs on the bundled sample.
final class QueryHelpTopicTests: XCTestCase {
    static let marker = "<!-- generated from QueryHelp.topics (Sources/LoupeQuery/QueryHelp+Topics.swift); QueryHelpTests checks it -->\n"

    func testTheDocsTableIsTheTopics() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/query-language.md").standardizedFileURL
        let text = try String(contentsOf: url, encoding: .utf8)
        let start = try XCTUnwrap(text.range(of: Self.marker))
        let stop = try XCTUnwrap(text.range(of: "<!-- end of generated table -->", range: start.upperBound..<text.endIndex))
        let table = String(text[start.upperBound..<stop.lowerBound])
        if table != QueryHelp.referenceTable {
            let fixed = text.replacingCharacters(in: start.upperBound..<stop.lowerBound, with: QueryHelp.referenceTable)
            let out = FileManager.default.temporaryDirectory.appendingPathComponent("query-language.md")
            try fixed.write(to: out, atomically: true, encoding: .utf8)
            XCTFail("docs/query-language.md's reference table differs from QueryHelp.topics; the regenerated page is at \(out.path)")
        }
    }

    func testEveryExampleRunsOnTheSample() throws {
        let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../sample-data/library.sqlite").standardizedFileURL.path
        let session = ReplSession(graph: try LoadedStore.open(sample).graph, mode: .csv)
        let notes = try HostileFiles.make("notes.sqlite") { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE Note USING fts5(title, body); INSERT INTO Note VALUES ('a', 'SQLite is fast'), ('b', 'slow')")
        }
        let fullText = ReplSession(graph: try LoadedStore.open(notes).graph, mode: .csv)
        var names = Set<String>()
        for topic in QueryHelp.topics {
            let reply = (topic.needsFullTextTable ? fullText : session).execute(topic.example)
            XCTAssertNil(reply.error, topic.example)
            XCTAssertFalse(reply.output.isEmpty, topic.example)
            // A query's example finds something (a header and at least one row).
            if !["count", "update", "insert", "delete"].contains(where: { topic.example.hasPrefix($0 + " ") }) {
                XCTAssertGreaterThan(reply.output.split(whereSeparator: \.isNewline).count, 1, topic.example)
            }
            for name in topic.names { XCTAssertTrue(names.insert(name.lowercased()).inserted, "\(name) names two topics") }
            XCTAssertEqual(QueryHelp.topic(named: topic.names.last!.uppercased())?.example, topic.example)
        }
        _ = session.execute(".rollback")
    }

    func testHelpNamesATopicOrSaysWhatItTakes() throws {
        let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../sample-data/library.sqlite").standardizedFileURL.path
        let session = ReplSession(graph: try LoadedStore.open(sample).graph, mode: .table)
        XCTAssertEqual(session.execute(".help sort by").output, """
            sort by PATH [asc|desc], …
                orders the objects, stably, nulls first ascending
                e.g. Book sort by price desc, title limit 5

            """)
        XCTAssertEqual(session.execute(".help @SUM").output, QueryHelp.text(of: QueryHelp.topic(named: "@sum")!))
        XCTAssertTrue(session.execute(".help query").output.contains("`.help TOPIC` explains one, with an example: where sort distinct limit select group count"))
        // A dot-command's name is still the command.
        XCTAssertTrue(session.execute(".help commit").output.hasPrefix(".commit"))
        XCTAssertEqual(session.execute(".help frobnicate").error, "bad argument 'frobnicate'\nUsage: .help [command|query|topic]")
    }
}
