import Foundation
import LoupeStore
import LoupeTestSupport
import XCTest

/// `--explain` and `.explain`: the plan as users read it (which engine answered, the SQL sent,
/// why an engine declined), and the planner's promises seen from the command line: a
/// statement past a dialect's limits is never sent to fail, and every engine gives the
/// in-memory engine's answer or declines with a reason.
final class ExplainTests: XCTestCase {
    private func json(_ run: LoupeBinary.Run, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        XCTAssertEqual(run.status, 0, run.stderr, file: file, line: line)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], run.stdout, file: file, line: line)
    }

    private func steps(_ plan: [String: Any]) -> [(engine: String, outcome: String, reason: String?)] {
        ((plan["steps"] as? [[String: Any]]) ?? []).map { ($0["engine"] as? String ?? "", $0["outcome"] as? String ?? "", $0["reason"] as? String) }
    }

    /// Over a relational file SQLite answers, and the plan shows the SQL it sent, values bound.
    func testExplainShowsTheEngineAndTheSQLSent() throws {
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let before = try Data(contentsOf: URL(fileURLWithPath: chinook))
        let plan = try json(try LoupeBinary.run(["query", chinook, "count Track where Milliseconds > 300000", "--explain", "--format", "json"]))
        XCTAssertEqual(steps(plan).first?.engine, "sql")
        XCTAssertEqual(steps(plan).first?.outcome, "answered")
        XCTAssertEqual(plan["rows"] as? Int, 1)
        let sql = try XCTUnwrap(plan["sql"] as? [String])
        // (Milliseconds holds integers only, a fact kept for the file: SQL's own comparison.)
        XCTAssertEqual(sql.last, #"SELECT count(*) FROM "Track" a0 WHERE (a0."Milliseconds" > 300000)"#)
        let text = try LoupeBinary.run(["query", chinook, "Track where Name BEGINSWITH \"A\" limit 2 select Name", "--explain"])
        XCTAssertEqual(text.status, 0, text.stderr)
        let lines = text.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "plan for Track where Name BEGINSWITH \"A\" limit 2 select Name")
        XCTAssertEqual(lines[1], "├─ store: a relational SQLite file (SQLite)")
        XCTAssertEqual(lines[2], "├─ SQLite over relational tables: answered")
        XCTAssertTrue(lines.last?.hasPrefix("└─ 2 rows in ") == true, text.stdout)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: chinook)), before, "explaining never writes")
    }

    /// Over the budget, what SQL declines is answered a chunk at a time, and the plan says why.
    func testExplainSaysWhySQLDeclined() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 1_000, seed: 4)
        let plan = try json(try LoupeBinary.run(["query", path, "Book where pages * 2 > 300 select title", "--explain", "--format", "json", "--memory-budget", "1K"]))
        let found = steps(plan)
        XCTAssertEqual(found.map(\.engine), ["sql", "chunks", "memory"])
        XCTAssertEqual(found.map(\.outcome), ["declined", "answered", "left out"])
        XCTAssertEqual(found[0].reason, "it uses arithmetic, which SQLite over Persist's by_type and relations tables leaves to the in-memory engine")
        XCTAssertTrue(found[2].reason?.hasSuffix("is over the 1 KB memory budget") == true, "\(found)")
        // An edit is planned, staged nowhere and written nowhere.
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let edit = try LoupeBinary.run(["query", path, "update Book where pages > 100 set pages = 1", "--explain", "--commit"])
        XCTAssertEqual(edit.status, 0, edit.stderr)
        XCTAssertTrue(edit.stdout.contains("the in-memory engine over the loaded graph: answered (staged over the loaded graph, not written)"), edit.stdout)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
    }

    /// Both REPLs explain: over the loaded graph, and a page at a time over the budget.
    func testBothREPLsExplain() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 1_000, seed: 4)
        let loaded = try LoupeBinary.run(["repl", path], stdin: ".explain count Book where pages > 300\n.explain\n")
        XCTAssertTrue(loaded.stdout.hasPrefix("plan for count Book where pages > 300\n├─ store: a Persist file (SQLite), ≈ 250 objects of the type asked\n├─ the in-memory engine over the loaded graph: answered (over the graph loaded in this session)\n└─ 1 row in "),
                      loaded.stdout)
        XCTAssertTrue(loaded.stderr.contains("Usage: .explain STATEMENT"), loaded.stderr)
        let paged = try LoupeBinary.run(["repl", path, "--memory-budget", "1K"], stdin: ".explain count Book where author.name BEGINSWITH \"A\"\n")
        XCTAssertEqual(paged.status, 0, paged.stderr)
        XCTAssertTrue(paged.stdout.contains("├─ SQLite over Persist's by_type and relations tables: answered\n"), paged.stdout)
        XCTAssertTrue(paged.stdout.contains("├─ sql: SELECT count(*) FROM by_type a0 WHERE a0.type_name IS 'Book' AND "), paged.stdout)
    }

    /// Names and values from the statement reach the terminal escaped, in the plan too.
    func testExplainEscapesWhatItShows() throws {
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let run = try LoupeBinary.run(["query", chinook, "count Track where Name == \"\u{1b}[31mred\u{07}\"", "--explain"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertFalse(run.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, run.stdout)
        XCTAssertTrue(run.stdout.contains("\\u{1B}[31mred"), run.stdout)
    }

    /// Past SQLite's limits the statement is not sent: auto answers with the engine, `--engine
    /// sql` refuses with the limit, never with SQLite's "Expression tree is too large" or
    /// "parser stack overflow".
    func testStatementsPastSQLitesLimitsAreNeverSent() throws {
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let long = "count Track where " + (0..<1_200).map { "Milliseconds == \(200_000 + $0)" }.joined(separator: " OR ")
        let deep = "count Employee where " + Array(repeating: "ReportsTo", count: 10).joined(separator: ".") + ".LastName == \"Adams\""
        for (statement, limit) in [(long, "a chain of 1200 tests, past the 400 SQLite takes"), (deep, "a path through 10 relations, past the 6 SQLite takes")] {
            let memory = try LoupeBinary.run(["query", chinook, statement, "--engine", "memory"])
            XCTAssertEqual(memory.status, 0, memory.stderr)
            for budget in [[], ["--memory-budget", "1K"]] {
                let auto = try LoupeBinary.run(["query", chinook, statement] + budget)
                XCTAssertFalse(auto.stderr.contains("SQLite error"), auto.stderr)
                if auto.status == 0 { XCTAssertEqual(auto.stdout, memory.stdout) } else { XCTAssertTrue(auto.stderr.contains(limit), auto.stderr) }
            }
            let sql = try LoupeBinary.run(["query", chinook, statement, "--engine", "sql"])
            XCTAssertEqual(sql.status, 1)
            XCTAssertEqual(sql.stderr, "Error: SQL cannot answer this statement exactly over a relational SQLite file (\(limit)); run it with --engine auto or memory\n")
        }
    }

    /// PostgreSQL's dates and timestamps a load reads as text (`infinity`, years past 9999) are
    /// no dates to the engine: no date equals or orders with them, in SQL as in memory.
    func testPostgresDatesALoadReadsAsTextCompareAsTheEngineCompares() throws {
        let url = try PostgresServer.freshDatabase("explain_infinite_dates")
        XCTAssertEqual(try PostgresServer.psql(url, """
            CREATE TABLE d(id int PRIMARY KEY, day date, at timestamp, atz timestamptz);
            INSERT INTO d VALUES (1, 'infinity', 'infinity', 'infinity'), (2, '294276-01-01', '-infinity', '-infinity'),
              (3, '2020-01-01', '2020-01-01 10:00', '2020-01-01 10:00+00'), (4, '0044-03-15 BC', '12000-01-01', '12000-01-01+00'), (5, NULL, NULL, NULL);
            """), 0)
        for column in ["day", "at", "atz"] {
            for test in ["> 2021-01-01", "< 2021-01-01", "== 2020-01-01", "!= 2020-01-01", "BETWEEN {1900-01-01, 2100-01-01}", "IN {2020-01-01, 1999-01-01}"] {
                let statement = "count d where \(column) \(test)"
                let memory = try LoupeBinary.run(["query", url, statement, "--engine", "memory"])
                XCTAssertEqual(memory.status, 0, memory.stderr)
                for engine in [["--engine", "sql"], ["--memory-budget", "1K"]] {
                    let other = try LoupeBinary.run(["query", url, statement] + engine)
                    XCTAssertEqual(other.stdout, memory.stdout, "\(statement) \(engine): \(other.stderr)")
                }
            }
        }
    }
}
