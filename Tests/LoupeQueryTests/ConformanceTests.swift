import Foundation
import LoupeModel
import LoupeQuery
import LoupeSQL
import LoupeStore
import LoupeTestSupport
import XCTest

/// Tests/Fixtures/conformance/chinook.tsv, case by case, through the engine and its JSON output.
final class ConformanceTests: XCTestCase {
    /// Every case line of the file (comments and blank lines aside), and the ones that do not
    /// have the three tab-separated fields; none may be dropped silently.
    static func cases() throws -> (cases: [(query: String, kind: String, expected: String)], lines: Int, malformed: [String]) {
        let url = Shared.root.appendingPathComponent("conformance/chinook.tsv")
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
            .filter { !$0.hasPrefix("#") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        var cases: [(String, String, String)] = [], malformed: [String] = []
        for line in lines {
            let parts = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            if parts.count == 3 { cases.append((parts[0], parts[1], parts[2])) } else { malformed.append(String(line)) }
        }
        return (cases, lines.count, malformed)
    }

    func testEveryChinookCase() throws {
        let (cases, lines, malformed) = try Self.cases()
        XCTAssertEqual(malformed, [], "every line is a case")
        XCTAssertEqual(cases.count, lines)
        XCTAssertGreaterThanOrEqual(cases.count, 26)
        let graph = try LoadedStore.open(try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")).graph
        let engine = QueryEngine(graph: graph)
        for c in cases {
            let output = try engine.run(c.query).render(.json, graph: graph)
            XCTAssertEqual(try Self.normalised(output, kind: c.kind), try Self.normalised(c.expected, kind: c.kind, isExpected: true), c.query)
        }
    }

    /// Every case again the way a one-shot `loupe query` runs it: a statement that reaches only
    /// one type's attributes loads that type alone (``LoadedStore/open(_:reaching:names:)``), and
    /// must answer exactly as over the whole graph. Some cases must take that path.
    func testEveryChinookCaseThroughTheOneShotPath() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        var partial = 0
        for c in try Self.cases().cases {
            guard let reach = try Parser.parse(c.query).singleTypeReach else { continue }
            let store = try LoadedStore.open(path, reaching: reach.type.text, names: reach.firstNames)
            if store.graph.types.count == 1 { partial += 1 }
            let output = try QueryEngine(graph: store.graph).run(c.query).render(.json, graph: store.graph)
            XCTAssertEqual(try Self.normalised(output, kind: c.kind), try Self.normalised(c.expected, kind: c.kind, isExpected: true), c.query)
        }
        XCTAssertGreaterThan(partial, 3, "attribute-only cases load one type")
    }

    /// Every case through SQLite (``SQLPushdown``), compared with the expected answer and with the
    /// in-memory engine's JSON byte for byte; every case must translate.
    func testEveryChinookCaseThroughSQL() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let graph = try LoadedStore.open(path).graph
        let file = try StoreFile.openForReading(path)
        var declined: [String] = []
        for c in try Self.cases().cases {
            guard let (result, resultGraph) = try SQLPushdown.run(try Parser.parse(c.query), file: file) else { declined.append(c.query); continue }
            let output = result.render(.json, graph: resultGraph)
            XCTAssertEqual(output, try QueryEngine(graph: graph).run(c.query).render(.json, graph: graph), c.query)
            XCTAssertEqual(try Self.normalised(output, kind: c.kind), try Self.normalised(c.expected, kind: c.kind, isExpected: true), c.query)
        }
        XCTAssertEqual(declined, [], "every case translates to SQL")
    }

    /// Every case over Chinook written as a Persist store (`PersistExport`: its tables as types,
    /// its foreign keys as relation rows), answered by SQL over the file as paged mode and
    /// `loupe query` over the memory budget ask it (``PersistQuerySource``), against the engine
    /// over that store loaded: the same counts, keys, rows and groups. Most cases must translate.
    func testEveryChinookCaseThroughSQLOverPersist() throws {
        let chinook = try LoadedStore.open(try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")).graph
        let path = try Shared.temporaryPath()
        try PersistExport.write(chinook, to: path)
        let graph = try LoadedStore.open(path).graph
        let source = PersistQuerySource(pages: try PersistPages.open(try StoreFile.openForReading(path)))
        var translated = 0
        for c in try Self.cases().cases {
            let statement = try Parser.parse(c.query)
            let expected: String
            do { expected = PersistPushdownTests.describe(try QueryEngine(graph: graph).run(statement), graph) } catch let error as QueryError { expected = "error: \(error.render(source: c.query))" }
            do {
                guard let answer = try source.answer(statement, isCancelled: { false }) else { continue }
                translated += 1
                XCTAssertEqual(PersistPushdownTests.describe(answer), expected, c.query)
            } catch let error as QueryError { XCTAssertEqual("error: \(error.render(source: c.query))", expected, c.query) }
        }
        print("SQL over Persist: \(translated) of \(try Self.cases().cases.count) Chinook cases translated")
        XCTAssertGreaterThanOrEqual(translated, try Self.cases().cases.count * 3 / 4)
    }

    /// The same on a Persist file: one-shot answers equal the whole graph's, for statements that
    /// reach one type and for ones that must not (a relation named like an attribute path).
    func testOneShotPathOnPersist() throws {
        let path = try Shared.copyFromCheckout("sample-data/library.sqlite")
        let full = try LoadedStore.open(path).graph
        for statement in ["count Book where pages > 300", "Book sort by price desc, title limit 5 select title, price", "Book group by language",
                          "count Book where author.name BEGINSWITH \"A\"", "Loan where book == nil", "count Member where favorites.@count > 1",
                          "Book where title CONTAINS[c] \"the\" sort by id select id, title, @type"] {
            let reach = try XCTUnwrap(try Parser.parse(statement).singleTypeReach, statement)
            let store = try LoadedStore.open(path, reaching: reach.type.text, names: reach.firstNames)
            let relational = ["author", "book", "favorites"].contains { reach.firstNames.contains($0) }
            XCTAssertEqual(store.graph.types.count == 1, !relational, statement)
            XCTAssertEqual(try QueryEngine(graph: store.graph).run(statement).render(.json, graph: store.graph),
                           try QueryEngine(graph: full).run(statement).render(.json, graph: full), statement)
        }
    }

    /// The comparable form of an answer: ids in order, ids as a set, or the JSON value itself.
    static func normalised(_ json: String, kind: String, isExpected: Bool = false) throws -> NSObject {
        let value = try JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed]) as! NSObject
        guard !isExpected, kind == "ids" || kind == "idset", let rows = value as? [[String: Any]] else {
            if kind == "idset", let ids = value as? [NSNumber] { return ids.sorted { $0.int64Value < $1.int64Value } as NSArray }
            return value
        }
        let ids = rows.map { $0["id"] as! NSNumber }
        return (kind == "idset" ? ids.sorted { $0.int64Value < $1.int64Value } : ids) as NSArray
    }
}
