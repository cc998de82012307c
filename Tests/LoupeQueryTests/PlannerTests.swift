import Foundation
import GRDB
import LoupeModel
import LoupeQuery
import LoupeSQL
import LoupeStore
import LoupeTestSupport
import XCTest

/// The planner: which engines a statement is asked of, in which order, and that whatever
/// answers gives the in-memory engine's answer, or every engine declines with a reason.
final class PlannerTests: XCTestCase {
    /// The plan's answer over the Persist file at `path` (SQL over the file, then the load),
    /// with the engine that gave it; the load's answer is the engine's over `graph`.
    private func planned(_ statement: String, path: String, graph: ObjectGraph) throws -> (answer: String, by: PlanEngine) {
        let parsed = try Parser.parse(statement)
        let pages = try PersistPages.open(try StoreFile.openForReading(path))
        let steps = StoreSteps(source: PersistQuerySource(pages: pages), pages: pages, schema: nil, kind: .persist, isCancelled: { false })
        switch try Planner.plan(parsed, PlanSituation(kind: .persist)).run(steps) {
        case .answered(.count(let n), let engine, _): return ("\(n)", engine)
        case .answered(let other, let engine, _): return ("\(other)", engine)
        case .load: return (try engineCount(statement, graph), .memory)
        }
    }

    private func engineCount(_ statement: String, _ graph: ObjectGraph) throws -> String {
        guard case .count(let n) = try QueryEngine(graph: graph).run(statement) else { return "not a count" }
        return "\(n)"
    }

    /// Counts over a Persist file are SQLite's (counting documents beats loading them), with
    /// the engine's answers; what SQL cannot count exactly is left to the load.
    func testCountsOverPersistAreSQLitesWithTheEnginesAnswers() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 3000, seed: 11)
        let graph = try LoadedStore.open(path).graph
        for statement in [
            "count Book", "count Book where pages > 300", "count Book where NOT (pages > 300)", "count Book where pages != 320",
            "count Book where pages == 320 or price <= 12.5", "count Book where pages BETWEEN {100, 400} and not price > 30",
            "count Book where 300 < pages", "count Book where price >= -1", "count book where pages < 200", "count Author where born < 1900",
            "count Book where TRUEPREDICATE", "count Book where FALSEPREDICATE or pages >= 0", "count Book where author.born < 1900",
            "count Book where title == \"x\"", "count Book where pages IN {1, 2}", "count Book where @links.Loan.book.@count > 1",
        ] {
            let (answer, engine) = try planned(statement, path: path, graph: graph)
            XCTAssertEqual(engine, .sql, statement)
            XCTAssertEqual(answer, try engineCount(statement, graph), statement)
        }
        // Names the store lacks are the engine's errors, whoever is asked.
        XCTAssertThrowsError(try planned("count Book where nosuchkey > 3", path: path, graph: graph))
    }

    /// A value of another kind, a document that does not parse, a member spelled twice or with
    /// escapes: SQL's count could differ, and the plan's answer is still the engine's.
    func testAwkwardDocumentsKeepTheEnginesCount() throws {
        for change in [
            "UPDATE by_type SET json = json_set(json, '$.pages', '600') WHERE id = (SELECT min(id) FROM by_type WHERE type_name = 'Book')",
            "UPDATE by_type SET json = '{\"pages\": 7,' WHERE id = (SELECT max(id) FROM by_type WHERE type_name = 'Book')",
            #"UPDATE by_type SET json = '{"title": "Twice", "pages": 999, "pages": 1}' WHERE id = (SELECT min(id) FROM by_type WHERE type_name = 'Book')"#,
            #"UPDATE by_type SET json = '{"title": "Escaped", "p\u0061ges": 999}' WHERE id = (SELECT min(id) FROM by_type WHERE type_name = 'Book')"#,
        ] {
            let path = try Shared.temporaryPath()
            try SampleGenerator.generate(path: path, objects: 500, seed: 3)
            try DatabaseQueue(path: path).write { try $0.execute(sql: change) }
            let graph = try LoadedStore.open(path).graph
            for statement in ["count Book where pages > 300", "count Book where pages > 900", "count Book where pages < 10"] {
                XCTAssertEqual(try planned(statement, path: path, graph: graph).answer, try engineCount(statement, graph), "\(change): \(statement)")
            }
        }
    }

    /// The situations' plans: SQL first over relational files and PostgreSQL, the load first
    /// elsewhere; over the budget SQL then the chunks; `--engine` one engine; a statement past
    /// the dialect's limits never asked of SQL, and the reason kept.
    func testPlansFollowTheSituation() throws {
        let query = try Parser.parse("Book where pages > 3")
        XCTAssertEqual(Planner.plan(query, PlanSituation(kind: .relational)).steps, [.sql, .memory])
        XCTAssertEqual(Planner.plan(query, PlanSituation(kind: .postgres)).steps, [.sql, .memory])
        XCTAssertEqual(Planner.plan(query, PlanSituation(kind: .persist)).steps, [.memory])
        XCTAssertEqual(Planner.plan(query, PlanSituation(kind: .coreData)).steps, [.memory])
        let over = Planner.plan(query, PlanSituation(kind: .persist, overBudget: .overBudget(estimate: 3 << 30, budget: 1 << 30), paged: true))
        XCTAssertEqual(over.steps, [.sql, .chunks])
        XCTAssertEqual(over.declined.map(\.why), ["a whole load (≈ 3.0 GB) is over the 1.0 GB memory budget"])
        XCTAssertEqual(Planner.plan(query, PlanSituation(kind: .coreData, only: .sql)).steps, [.sql])
        XCTAssertEqual(Planner.plan(query, PlanSituation(kind: .relational, only: .memory)).steps, [.memory])
        XCTAssertEqual(Planner.plan(try Parser.parse("update Book set pages = 1"), PlanSituation(kind: .relational)).steps, [.memory])
        let long = try Parser.parse("count Book where " + (0..<401).map { "pages == \($0)" }.joined(separator: " OR "))
        let limited = Planner.plan(long, PlanSituation(kind: .relational))
        XCTAssertEqual(limited.steps, [.memory])
        XCTAssertEqual(limited.declined.map(\.why), ["a chain of 401 tests, past the 400 SQLite takes"])
        XCTAssertEqual(Planner.plan(long, PlanSituation(kind: .postgres)).steps, [.sql, .memory], "PostgreSQL takes longer chains")
        let deep = try Parser.parse("count Employee where ReportsTo.ReportsTo.ReportsTo.ReportsTo.ReportsTo.ReportsTo.ReportsTo.LastName == \"x\"")
        XCTAssertEqual(Planner.plan(deep, PlanSituation(kind: .persist, paged: true)).steps, [.chunks])
        let refusal = PlanRefusal(kind: .relational, declines: Planner.plan(deep, PlanSituation(kind: .relational, only: .sql)).declined)
        XCTAssertEqual(refusal.description, "SQL cannot answer this statement exactly over a relational SQLite file (a path through 7 relations, past the 6 SQLite takes)")
    }

    /// Past SQLite's limits (a chain of 1000 tests, a path through 10 relations) SQL would fail
    /// with "Expression tree is too large" or "parser stack overflow": every such statement is
    /// answered by the engine, over the load or a chunk at a time, or refused with its reason.
    func testStatementsPastSQLitesLimitsAreAnsweredByTheEngine() throws {
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let file = try StoreFile.openForReading(chinook)
        let graph = try LoadedStore.open(chinook).graph
        let pages = try RelationalPages.open(file)
        let steps = StoreSteps(source: RelationalQuerySource(pages: pages), pages: pages, schema: nil, kind: .relational, isCancelled: { false })
        let statements = [200, 401, 1200].map { n in "count Track where " + (0..<n).map { "Milliseconds == \(200_000 + $0)" }.joined(separator: " OR ") }
            + [3, 6, 9, 12].map { n in "count Employee where " + Array(repeating: "ReportsTo", count: n).joined(separator: ".") + ".LastName == \"Adams\"" }
        for statement in statements {
            let expected = try engineCount(statement, graph)
            for situation in [PlanSituation(kind: .relational), PlanSituation(kind: .relational, overBudget: .overBudget(estimate: 2, budget: 1), paged: true)] {
                let plan = Planner.plan(try Parser.parse(statement), situation)
                do {
                    switch try plan.run(steps) {
                    case .answered(.count(let n), _, _): XCTAssertEqual("\(n)", expected, String(statement.prefix(80)))
                    case .answered: XCTFail("not a count")
                    case .load: XCTAssertTrue(plan.steps.contains(.memory))
                    }
                } catch let refusal as PlanRefusal {
                    XCTAssertTrue(situation.paged, "\(statement.prefix(80)): \(refusal)")
                    XCTAssertTrue(refusal.declines.contains { if case .beyondLimit = $0.reason { return true }; return false }, "\(refusal)")
                }
            }
        }
    }

    /// Should SQL still meet a database's limit, the plan takes the error as SQL declining: the
    /// next engine is asked, and the reason kept; other errors stay errors.
    func testADatabaseLimitErrorIsADeclineNotAnAnswer() throws {
        struct Limited: Error, CustomStringConvertible { let description: String }
        struct Steps: PlanSteps {
            let error: Limited
            func sql(_ statement: LoupeQuery.Statement) throws -> Int? { throw error }
            func chunks(_ statement: LoupeQuery.Statement) throws -> Int? { nil }
        }
        let plan = Planner.plan(try Parser.parse("count Track where Milliseconds > 3"), PlanSituation(kind: .relational))
        let limited = Steps(error: Limited(description: "SQLite error in 'x.sqlite': parser stack overflow"))
        guard case .load(let declines) = try plan.run(limited) else { return XCTFail("the load is next") }
        XCTAssertEqual(declines.map(\.why), ["the store failed under SQL (parser stack overflow)"])
        XCTAssertThrowsError(try plan.run(Steps(error: Limited(description: "disk I/O error"))))
    }

    /// What a refusal says is made from the store kind's data, never from prose kept elsewhere.
    func testDeclinesNameWhatTheStatementUses() throws {
        let arithmetic = Decline(.sql, .untranslated(uses: SQLConstructTestSupport.used("count Book where pages * 2 > 3", .persist)), over: .persist)
        XCTAssertEqual(arithmetic.why, "it uses arithmetic, which SQLite over Persist's by_type and relations tables leaves to the in-memory engine")
        let other = Decline(.sql, .untranslated(uses: []), over: .coreData)
        XCTAssertEqual(other.why, "SQLite over Core Data's Z tables leaves " + StoreKind.coreData.leavesText + " to the in-memory engine")
        XCTAssertTrue(StoreKind.allCases.allSatisfy { $0 == .document || !$0.leaves.isEmpty })
    }
}

/// The constructs a statement is seen to use, as a refusal names them.
enum SQLConstructTestSupport {
    static func used(_ statement: String, _ kind: StoreKind) -> [SQLConstruct] {
        guard let parsed = try? Parser.parse(statement) else { return [] }
        // What `QueryPlan.run` records when SQL declines, over a source that declines all.
        let plan = Planner.plan(parsed, PlanSituation(kind: kind, only: .sql))
        guard case .failure(let refusal as PlanRefusal) = Result(catching: { try plan.run(Declining()) }),
              case .untranslated(let uses)? = refusal.declines.last?.reason else { return [] }
        return uses
    }

    struct Declining: PlanSteps {
        func sql(_ statement: LoupeQuery.Statement) throws -> Int? { nil }
        func chunks(_ statement: LoupeQuery.Statement) throws -> Int? { nil }
    }
}

extension PlannerTests {
    /// A statement SQL cannot say declines with the construct that stopped it, as the
    /// translation found it (not the layout's whole list): a relation whose foreign key holds the
    /// text `1` where the key is the integer 1 (a load pairs them; SQL's `=` by bytes does not).
    func testSQLDeclinesWithTheConstructThatStoppedIt() throws {
        let path = try HostileFiles.make("affinity.sqlite") { db in
            try db.execute(sql: """
                CREATE TABLE a (id INTEGER PRIMARY KEY, name TEXT);
                CREATE TABLE b (id INTEGER PRIMARY KEY, a_ref REFERENCES a(id), x INT);
                INSERT INTO a VALUES (1, 'one'), (2, 'two');
                INSERT INTO b VALUES (1, '1', 5), (2, 2, 6), (3, 2, 7);
                """)
        }
        let pages = try RelationalPages.open(try StoreFile.openForReading(path))
        let steps = StoreSteps(source: RelationalQuerySource(pages: pages), pages: pages, schema: nil, kind: .relational, isCancelled: { false })
        let statement = try Parser.parse("count b where a_ref.name == \"two\"")
        XCTAssertThrowsError(try Planner.plan(statement, PlanSituation(kind: .relational, paged: true)).run(steps)) { error in
            let refusal = error as? PlanRefusal
            let sql = refusal?.declines.first { $0.engine == .sql }
            XCTAssertEqual(sql?.reason, .untranslated(uses: [.affinityKeys]), "\(error)")
            XCTAssertTrue(sql?.why.hasPrefix("it uses keys that match only by SQLite's affinity") ?? false, sql?.why ?? "")
        }
        // Where nothing stops it, SQL answers; the engine agrees with the load.
        let plain = try Parser.parse("count b where x > 5")
        guard case .answered(.count(let n), .sql, _) = try Planner.plan(plain, PlanSituation(kind: .relational, paged: true)).run(steps) else { return XCTFail("SQL answers") }
        XCTAssertEqual(n, 2)
    }
}
