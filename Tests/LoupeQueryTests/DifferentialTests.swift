import Foundation
import GRDB
import LoupeModel
import LoupePostgres
@testable import LoupeQuery
import LoupeSQL
import LoupeStore
import LoupeTestSupport
import XCTest

/// The engines against each other on statements made at random from a store's own schema and
/// values: the in-memory engine over the loaded graph is the reference; SQL over the file (where
/// it translates a statement exactly) and the chunked engine over the file (where it plans one,
/// the filter's parts through relations asked of SQL) must give the same answer or the same
/// error. Statements mix attributes of every kind, to-one and to-many paths, backlinks,
/// quantifiers, aggregates, `SUBQUERY`, arithmetic, string operators with options, `IN`,
/// `BETWEEN`, null, `AND`/`OR`/`NOT`, and every statement form with sorts, limits and columns.
/// Seeded: a failure names the statement, and the same run makes it again.
final class DifferentialTests: XCTestCase {

    func testChinookStatementsAreAnsweredAlikeByEveryEngine() throws {
        try compareRelational("realdata/chinook/Chinook_Sqlite.sqlite", seed: Self.seed ?? 101, count: Self.count ?? 250)
    }

    func testPersistStatementsAreAnsweredAlikeByEveryEngine() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 2_500, seed: 77)
        let pages = try PersistPages.open(try StoreFile.openForReading(path))
        try compare(path: path, pages: pages, sql: PersistQuerySource(pages: pages), seed: Self.seed ?? 202, count: Self.count ?? 250)
    }

    /// Northwind (w3schools' copy): other key and column shapes, dates as text, money as reals.
    func testNorthwindStatementsAreAnsweredAlikeByEveryEngine() throws {
        try compareRelational("realdata/northwind/northwind_w3schools.db3", seed: Self.seed ?? 505, count: Self.count ?? 150)
    }

    /// ``compare(path:pages:sql:seed:count:sqlAnswers:file:line:)`` over a copy of the shared
    /// plain SQLite file at `shared`, read a page at a time and by SQL over the file.
    func compareRelational(_ shared: String, seed: UInt64, count: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        try compareRelational(path: try Shared.copy(shared), seed: seed, count: count, file: file, line: line)
    }

    /// The same over the plain SQLite file at `path`.
    func compareRelational(path: String, seed: UInt64, count: Int, sqlAnswers: Bool = true, first: [String] = [], large: Bool = false,
                           file: StaticString = #filePath, line: UInt = #line) throws {
        let pages = try RelationalPages.open(try StoreFile.openForReading(path))
        try compare(graph: try LoadedStore.open(path).graph, pages: pages, sql: RelationalQuerySource(pages: pages), seed: seed, count: count,
                    sqlAnswers: sqlAnswers, first: first, large: large, file: file, line: line)
    }

    /// Chinook without its foreign keys declared: the relations a load infers from the `XId`
    /// columns, found over the file, joined by SQL and followed by the chunks as the load links them.
    func testUndeclaredChinookStatementsAreAnsweredAlikeByEveryEngine() throws {
        try compareRelational(path: try HostileFiles.undeclaredChinook(), seed: Self.seed ?? 707, count: Self.count ?? 150)
    }

    /// Loosely typed tables (untyped columns mixing integers with equal reals, text and blobs),
    /// `WITHOUT ROWID` tables, keys of every kind, names needing quotes, a view
    /// (``HostileFiles/untypedRelational(seed:)``).
    func testUntypedTablesAreAnsweredAlikeByEveryEngine() throws {
        try compareRelational(path: try HostileFiles.untypedRelational(seed: 3), seed: Self.seed ?? 1_010, count: Self.count ?? 200,
                              first: ["loose where y != nil group by x", "kv where (k < \"α8\" AND v != nil) group by v"])
    }

    /// Relations inferred through affinity twins, whole reals and a second candidate table (SQL
    /// declines statements through keys that match only by affinity; the chunks answer the rest).
    func testAwkwardUndeclaredStatementsAreAnsweredAlikeByEveryEngine() throws {
        try compareRelational(path: try HostileFiles.awkwardUndeclared(), seed: Self.seed ?? 808, count: Self.count ?? 150)
    }

    /// A Persist store with awkward rows: dangling edges, documents that do not parse or are not
    /// objects, names stored as bytes, keys that need escaping, types named alike but for case.
    func testAwkwardPersistRowsAreAnsweredAlikeByEveryEngine() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 1_200, seed: 79)
        try HostileFiles.addAwkwardPersistRows(path)
        let pages = try PersistPages.open(try StoreFile.openForReading(path))
        // (SQL declines every statement here: relation rows name a relation in bytes, which SQL
        // would join otherwise than a load; the chunks answer what reads no relation.)
        try compare(path: path, pages: pages, sql: PersistQuerySource(pages: pages), seed: Self.seed ?? 606, count: Self.count ?? 150, sqlAnswers: false)
    }

    /// The same over PostgreSQL: Chinook copied into a server, PostgreSQL's own answers and the
    /// chunks' (its parts through relations asked of PostgreSQL) against the engine over its load.
    func testChinookInPostgresIsAnsweredAlikeByEveryEngine() throws {
        let url = try PostgresServer.database(copying: try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite"), named: "differential")
        let pages = try PostgresPages.open(url: url)
        try compare(graph: try PostgresDatabase.load(url: url).graph, pages: pages, sql: PostgresQuerySource(pages: pages), seed: Self.seed ?? 303, count: Self.count ?? 200)
    }

    /// PostgreSQL's awkward values the same way: NaN and infinities in floats and `numeric`
    /// (PostgreSQL orders NaN above every number), `numeric` past a double's digits, integers
    /// past 2^53 and at `bigint`'s ends, `real`, dates, timestamps with and without a zone,
    /// times, `char(n)` keys, `jsonb`, arrays, a self reference, a composite key and a table
    /// without a key.
    func testAwkwardPostgresValuesAreAnsweredAlikeByEveryEngine() throws {
        let url = try PostgresServer.freshDatabase("differential_awkward")
        XCTAssertEqual(try PostgresServer.psql(url, """
            SET client_min_messages = warning;
            CREATE TABLE "Kind"(code char(3) PRIMARY KEY, label varchar(20), rank int2);
            CREATE TABLE thing(
              id bigint PRIMARY KEY, name text, n numeric, f float8, r real, born date, at timestamptz, local timestamp, t time,
              ok boolean, big bigint, kind char(3) REFERENCES "Kind"(code), parent bigint REFERENCES thing(id), doc jsonb, nums int[], "count" int, "select" text);
            CREATE TABLE part(thing_id bigint REFERENCES thing(id), seq int, weight numeric(10,3), note text, PRIMARY KEY(thing_id, seq));
            CREATE TABLE tagmap(tag text, thing_id bigint REFERENCES thing(id), score float8);
            INSERT INTO "Kind" VALUES ('a', 'Alpha', 1), ('B', 'beta', 2), ('ÿ', 'Ÿ', NULL), ('ab', '', 3), ('10', 'ten', 10);
            INSERT INTO thing
            SELECT i,
              (ARRAY['Ann','bob','Çelik','','ANN','zoë','a b','O''Brien',NULL,'日本','Bob','10','9.5'])[1 + (i*7) % 13],
              (ARRAY[1.5, 2, -0, 12345678901234567890.123, NULL, 'NaN', 3.000, 1e-20, 7]::numeric[])[1 + (i*5) % 9],
              (ARRAY[1.5, 2, -0.0, 1e300, NULL, 'NaN', 'Infinity', '-Infinity', 0.1]::float8[])[1 + (i*3) % 9],
              (ARRAY[1.5, 2.25, NULL, 0.1, 16777217]::real[])[1 + i % 5],
              CASE WHEN i % 4 = 0 THEN NULL ELSE date '2020-01-01' + i * 11 END,
              CASE WHEN i % 5 = 0 THEN NULL ELSE timestamptz '2021-03-04 05:06:07.123456+02' + i * interval '37 hours' END,
              CASE WHEN i % 6 = 0 THEN NULL ELSE timestamp '1999-12-31 23:59:59' + i * interval '1 day 1 second' END,
              CASE WHEN i % 3 = 0 THEN NULL ELSE time '10:00' + i * interval '7 minutes' END,
              CASE i % 3 WHEN 0 THEN NULL WHEN 1 THEN true ELSE false END,
              (ARRAY[9223372036854775807, -9223372036854775808, 0, NULL, 9007199254740993]::bigint[])[1 + i % 5],
              (ARRAY['a','B','ÿ','ab','10',NULL])[1 + i % 6],
              CASE WHEN i > 3 AND i % 4 <> 0 THEN i / 3 ELSE NULL END,
              (ARRAY['{"a":1,"b":[1,2,{"c":"x"}]}', '[1,"two",null]', '"str"', '3.0', 'null', NULL, '{"a":{"deep":true}}', '{"a":2.5}']::jsonb[])[1 + i % 8],
              CASE WHEN i % 4 = 0 THEN NULL WHEN i % 4 = 1 THEN '{}'::int[] ELSE ARRAY[i % 7, NULL, i % 3] END,
              i % 9, (ARRAY['x','y',NULL])[1 + i % 3]
            FROM generate_series(1, 140) i;
            INSERT INTO part SELECT 1 + (i * 13) % 140, i % 4, (i * 1.0375)::numeric(10,3), (ARRAY['n1', NULL, 'Ñ'])[1 + i % 3] FROM generate_series(1, 300) i ON CONFLICT DO NOTHING;
            INSERT INTO tagmap SELECT (ARRAY['red','Red','blue',NULL])[1 + i % 4], CASE WHEN i % 10 = 0 THEN NULL ELSE 1 + (i * 17) % 140 END, CASE WHEN i % 7 = 0 THEN 'NaN' ELSE i / 3.0 END FROM generate_series(1, 200) i;
            """), 0)
        let pages = try PostgresPages.open(url: url)
        try compare(graph: try PostgresDatabase.load(url: url).graph, pages: pages, sql: PostgresQuerySource(pages: pages), seed: Self.seed ?? 909, count: Self.count ?? 200,
                    first: ["count tagmap where score > 52.666666666666664", "count thing where n > 7", "tagmap where thing.n >= 0 group by tag",
                            "count thing where n == 12345678901234567890", "thing where n >= 1.2345678901234567e+19 sort by parent.local desc, id",
                            "count thing where big > 9007199254740992.0", "thing where parent.big == -9223372036854775808 sort by `id` desc, id",
                            "thing where parent.n >= 0 sort by local, id distinct kind.label"])
    }

    /// Persist's layout in PostgreSQL (`jsonb` documents, integer keys) the same way.
    func testPersistInPostgresIsAnsweredAlikeByEveryEngine() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 1_500, seed: 78)
        let url = try PostgresServer.persistDatabase(copying: path, named: "differential_persist", documentType: "jsonb")
        let pages = try PostgresPersistPages.open(url: url)
        try compare(graph: try PostgresDatabase.load(url: url).graph, pages: pages, sql: PostgresPersistQuerySource(pages: pages), seed: Self.seed ?? 404, count: Self.count ?? 200)
    }

    /// The kind of store `pages` reads (what the planner plans by).
    static func kind(of pages: PageSource) -> StoreKind {
        switch pages {
        case is PersistPages: return .persist
        case is RelationalPages: return .relational
        case is CoreDataPages: return .coreData
        case is PostgresPersistPages: return .postgresPersist
        case is PostgresPages: return .postgres
        default: return .document
        }
    }

    /// The fuzzer, for a bounded time (`LOUPE_FUZZ_SECONDS`, 15 by default; CI runs it): stores
    /// made from new seeds each day — loosely typed relational files (mixed kinds in one
    /// column, huge integers, ±infinity, text and composite keys, `WITHOUT ROWID`, dangling
    /// references) and Persist files with awkward rows — and statements that now and then pass
    /// a dialect's limits, answered by every engine and by the plan. A failure names the seed
    /// and the statement: add the statement to a `first:` list above, where it stays.
    func testRandomStoresForABoundedTime() throws {
        let seconds = ProcessInfo.processInfo.environment["LOUPE_FUZZ_SECONDS"].flatMap(Double.init) ?? 10
        let day = UInt64(Date().timeIntervalSince1970 / 86_400)
        let start = Date()
        var seed = Self.seed ?? day * 1_000
        while Date().timeIntervalSince(start) < seconds {
            if seed % 2 == 0 {
                try compareRelational(path: try HostileFiles.untypedRelational(seed: seed), seed: seed, count: 60, sqlAnswers: false, large: true)
            } else {
                let path = try Shared.temporaryPath()
                try SampleGenerator.generate(path: path, objects: 400, seed: seed)
                try HostileFiles.addAwkwardPersistRows(path)
                let pages = try PersistPages.open(try StoreFile.openForReading(path))
                try compare(graph: try LoadedStore.open(path).graph, pages: pages, sql: PersistQuerySource(pages: pages), seed: seed, count: 60, sqlAnswers: false, large: true)
            }
            seed += 1
        }
    }

    /// Another seed and count to explore with (`LOUPE_DIFF_SEED`, `LOUPE_DIFF_COUNT`: a long run
    /// is `LOUPE_DIFF_COUNT=2000`); CI runs the fixed ones, sized for its 12-minute budget.
    static let seed = ProcessInfo.processInfo.environment["LOUPE_DIFF_SEED"].flatMap(UInt64.init)
    static let count = ProcessInfo.processInfo.environment["LOUPE_DIFF_COUNT"].flatMap(Int.init)

    /// Runs `count` statements made from `seed` through each engine; fails on the first few
    /// differences (each with its statement). `sqlAnswers`: SQL answers a third of them or more.
    func compare(path: String, pages: PageSource, sql: QuerySource, seed: UInt64, count: Int, sqlAnswers: Bool = true,
                 file: StaticString = #filePath, line: UInt = #line) throws {
        try compare(graph: try LoadedStore.open(path).graph, pages: pages, sql: sql, seed: seed, count: count, sqlAnswers: sqlAnswers, file: file, line: line)
    }

    /// The same with the store's loaded `graph` as the reference; `first`: statements to run
    /// before the made ones (cases found by earlier runs).
    func compare(graph: ObjectGraph, pages: PageSource, sql: QuerySource, seed: UInt64, count: Int, sqlAnswers: Bool = true,
                 first: [String] = [], large: Bool = false, file: StaticString = #filePath, line: UInt = #line) throws {
        var maker = StatementMaker(graph: graph, seed: seed)
        maker.large = large
        let kind = Self.kind(of: pages)
        var failures = 0, bySQL = 0, inChunks = 0, errors = 0, planned = 0
        for i in 0..<(first.count + count) where failures < 5 {
            let text = i < first.count ? first[i] : maker.statement()
            let statement: LoupeQuery.Statement
            do { statement = try Parser.parse(text) } catch {
                XCTFail("made a statement that does not parse: \(text) (\(error))", file: file, line: line)
                failures += 1
                continue
            }
            let expected: String
            do { expected = PersistPushdownTests.describe(try QueryEngine(graph: graph).run(statement), graph) } catch let error as QueryError {
                expected = "error: \(error.message)"
                errors += 1
            }
            // The plan, as paged mode runs it: the engine's answer, or declines with reasons.
            do {
                let steps = StoreSteps(source: sql, pages: pages, schema: nil, kind: kind, isCancelled: { false })
                if case .answered(let found, _, _) = try Planner.plan(statement, PlanSituation(kind: kind, paged: true)).run(steps) {
                    planned += 1
                    let got = PersistPushdownTests.describe(found)
                    if got != expected {
                        failures += 1
                        XCTFail("the plan differs on: \(text.prefix(2000))\n memory: \(expected.prefix(600))\n plan:   \(got.prefix(600))", file: file, line: line)
                    }
                }
            } catch let error as QueryError {
                if "error: \(error.message)" != expected {
                    failures += 1
                    XCTFail("the plan fails otherwise on: \(text.prefix(2000))\n memory: \(expected.prefix(600))\n plan:   \(error.message)", file: file, line: line)
                }
            } catch let refusal as PlanRefusal {
                XCTAssertFalse(refusal.declines.isEmpty || refusal.declines.contains { $0.why.isEmpty }, "\(refusal)", file: file, line: line)
            }
            // Each engine alone, within the dialect's limits (past them only the plan asks).
            if let dialect = kind.dialect, StatementSize(statement).beyond(.of(dialect)) != nil { continue }
            // SQL over the file, where it translates the statement.
            var got: String?
            do { got = try sql.answer(statement, isCancelled: { false }).map(PersistPushdownTests.describe) } catch let error as QueryError {
                got = "error: \(error.message)"
            }
            if let got {
                bySQL += 1
                if got != expected {
                    failures += 1
                    XCTFail("SQL differs on: \(text)\n memory: \(expected.prefix(600))\n sql:    \(got.prefix(600))", file: file, line: line)
                }
            }
            // The chunked engine, where it plans the statement and SQL says its parts through relations.
            if let plan = try ChunkedAnswer.plan(statement, over: pages, chunkSize: 500) {
                var chunked: String?
                do {
                    chunked = PersistPushdownTests.describe(try plan.answer(statement, over: pages, relationParts: { try sql.answer($0, isCancelled: { false }) }))
                } catch let error as QueryError {
                    chunked = "error: \(error.message)"
                } catch is RelationPartUnanswered {}
                if let chunked {
                    inChunks += 1
                    if chunked != expected {
                        failures += 1
                        XCTFail("chunks differ on: \(text)\n memory: \(expected.prefix(600))\n chunks: \(chunked.prefix(600))", file: file, line: line)
                    }
                }
            }
        }
        if Self.seed != nil || large { print("seed \(seed): \(count) statements (\(errors) errors), \(bySQL) answered by SQL, \(inChunks) in chunks, \(planned) by the plan") }
        // Most statements reach each engine (the comparison is not vacuous).
        if sqlAnswers { XCTAssertGreaterThan(bySQL, count / 3, "SQL answered \(bySQL) of \(count)", file: file, line: line) }
        XCTAssertGreaterThan(inChunks, count / 5, "the chunks answered \(inChunks) of \(count)", file: file, line: line)
        XCTAssertLessThan(errors, count / 10, "\(errors) of \(count) statements were errors", file: file, line: line)
    }
}

/// Statements made at random from a graph's types, attributes, relations, backlinks and values.
struct StatementMaker {
    let graph: ObjectGraph
    var random: SampleGenerator.Random
    /// Values seen per type and attribute (a sample of each column).
    var samples: [String: [Value]] = [:]
    /// True to make, now and then, statements larger than a dialect takes (``largePredicate(_:)``);
    /// off, the fixed seeds make the statements they always made.
    var large = false

    init(graph: ObjectGraph, seed: UInt64) {
        self.graph = graph
        random = SampleGenerator.Random(state: seed)
    }

    mutating func int(_ n: Int) -> Int { random.int(n) }
    mutating func pick<T>(_ items: [T]) -> T { items[int(items.count)] }
    mutating func chance(_ oneIn: Int) -> Bool { int(oneIn) == 0 }

    /// One statement over a type with objects.
    mutating func statement() -> String {
        let types = graph.types.filter { $0.count > 0 }
        let type = pick(types)
        let name = quoted(type.name.rawValue)
        let filter = chance(6) ? "" : " where " + predicate(type, depth: 0)
        switch int(6) {
        case 0: return "count \(name)\(filter)"
        case 1:
            guard let key = chance(4) ? toManyPath(type) : scalarPath(type, hops: 1) else { return "count \(name)\(filter)" }
            return "\(name)\(filter) group by \(key)" + (chance(2) ? " limit \(1 + int(5))" : "")
        case 2:
            let columns = (0..<(1 + int(3))).compactMap { _ in chance(4) ? arithmetic(type) : chance(5) ? collectionCount(type) : scalarPath(type, hops: 1) }
            let limit = chance(2) ? " limit \(int(20))" + (chance(3) ? " offset \(int(10))" : "") : ""
            return "\(name)\(filter)\(sort(type))\(limit) select " + (columns.isEmpty ? "id" : columns.joined(separator: ", "))
        default:
            let limit = chance(2) ? " limit \(int(30))" + (chance(3) ? " offset \(int(10))" : "") : ""
            let distinct = chance(8) ? (scalarPath(type, hops: 1).map { " distinct \($0)" } ?? "") : ""
            return "\(name)\(filter)\(sort(type))\(distinct)\(limit)"
        }
    }

    /// ` sort by …, id` (ties broken by key, so every engine's order is one), or nothing.
    mutating func sort(_ type: TypeTable) -> String {
        guard chance(2), let key = scalarPath(type, hops: chance(3) ? 1 : 0) else { return "" }
        return " sort by \(key)\(chance(2) ? " desc" : ""), id"
    }

    mutating func predicate(_ type: TypeTable, depth: Int) -> String {
        if large, depth == 0, chance(10) { return largePredicate(type) }
        if depth < 2, chance(3) {
            let a = predicate(type, depth: depth + 1), b = predicate(type, depth: depth + 1)
            switch int(3) {
            case 0: return "(\(a) AND \(b))"
            case 1: return "(\(a) OR \(b))"
            default: return "NOT (\(a))"
            }
        }
        switch int(10) {
        case 0, 1, 2: return attributeTest(type, prefix: "")
        case 3, 4: return toOneTest(type) ?? attributeTest(type, prefix: "")
        case 5: return toManyTest(type) ?? attributeTest(type, prefix: "")
        case 6: return backlinkTest(type) ?? attributeTest(type, prefix: "")
        case 7: return arithmetic(type).map { "\($0) > \(int(300))" } ?? attributeTest(type, prefix: "")
        case 8:
            let key = { (maker: inout StatementMaker) in type.ids.isEmpty ? "1" : maker.literal(maker.pick(type.ids).value) }
            if chance(3) { return "id IN {\((0..<int(4)).map { _ in key(&self) }.joined(separator: ", "))}" }
            return "id \(pick(["<", ">=", "!=", "=="])) \(key(&self))"
        default:
            switch int(4) {
            case 0: return "@type == \(literal(.string(chance(2) ? type.name.rawValue : pick(graph.types).name.rawValue)))"
            case 1: return twoPaths(type) ?? attributeTest(type, prefix: "")
            case 2: return matches(type) ?? attributeTest(type, prefix: "")
            default: return attributeTest(type, prefix: "")
            }
        }
    }

    /// A predicate near or past a dialect's limits: a chain of 300–900 tests under one OR or
    /// AND, or a path through 5–9 to-one relations (where the schema has them, a cycle).
    mutating func largePredicate(_ type: TypeTable) -> String {
        if chance(2) {
            var prefix = "", here = type, hops = 0
            while hops < 5 + int(5), let relation = here.relations.filter({ !$0.isToMany && $0.targetTypes.count == 1 }).randomElement(using: &random) {
                prefix += quoted(relation.name) + "."
                here = graph.types[relation.targetTypes[0]]
                hops += 1
            }
            if hops >= 3 { return attributeTest(here, prefix: prefix) }
        }
        let tests = (0..<(300 + int(600))).map { _ in attributeTest(type, prefix: "") }
        return "(" + tests.joined(separator: chance(2) ? " OR " : " AND ") + ")"
    }

    /// A test of one of `type`'s attributes (`prefix` is the path to it).
    mutating func attributeTest(_ type: TypeTable, prefix: String) -> String {
        let scalars = type.attributes.filter { !$0.kinds.intersection([.integer, .double, .string, .bool, .date]).isEmpty && $0.kinds.isDisjoint(with: [.array, .object]) }
        guard !scalars.isEmpty else { return "TRUEPREDICATE" }
        let column = pick(scalars)
        let path = prefix + quoted(column.name)
        let value = sample(type, column.name)
        if chance(8) { return "\(path) \(pick(["==", "!="])) nil" }
        switch value {
        case .string(let s):
            let options = pick(["", "[c]", "[d]", "[cd]"])
            let part = s.isEmpty ? s : String(s.prefix(1 + int(max(1, s.count))))
            switch int(7) {
            case 0: return "\(path) BEGINSWITH\(options) \(literal(.string(part)))"
            case 1: return "\(path) CONTAINS\(options) \(literal(.string(String(part.suffix(2)))))"
            case 2: return "\(path) ENDSWITH\(options) \(literal(.string(String(s.suffix(2)))))"
            case 3: return "\(path) LIKE\(options) \(literal(.string("*" + String(part.suffix(1)) + "*")))"
            case 4: return "\(path) IN {\(literal(value)), \(literal(sample(type, column.name)))}"
            default: return "\(path) \(pick(["==", "!=", "<", ">=", "==[c]"])) \(literal(value))"
            }
        case .int, .double, .date:
            if chance(5) { return "\(path) BETWEEN {\(literal(value)), \(literal(sample(type, column.name)))}" }
            return "\(path) \(pick(["==", "!=", "<", "<=", ">", ">="])) \(literal(value))"
        case .bool(let b): return chance(2) || path.hasPrefix("$") || prefix.contains(".") ? "\(path) == \(b)" : path
        default: return "\(path) \(pick(["==", "!="])) nil"
        }
    }

    /// A test through a to-one relation (one or two hops).
    mutating func toOneTest(_ type: TypeTable) -> String? {
        let toOne = type.relations.filter { !$0.isToMany && $0.targetTypes.count == 1 }
        guard !toOne.isEmpty else { return nil }
        let relation = pick(toOne)
        let target = graph.types[relation.targetTypes[0]]
        if chance(4), let next = target.relations.first(where: { !$0.isToMany && $0.targetTypes.count == 1 }) {
            return attributeTest(graph.types[next.targetTypes[0]], prefix: quoted(relation.name) + "." + quoted(next.name) + ".")
        }
        if chance(6) { return "\(quoted(relation.name)) \(pick(["==", "!="])) nil" }
        return attributeTest(target, prefix: quoted(relation.name) + ".")
    }

    /// A test through a to-many relation: a quantifier, a count, an aggregate or a SUBQUERY.
    mutating func toManyTest(_ type: TypeTable) -> String? {
        let toMany = type.relations.filter { $0.isToMany && $0.targetTypes.count == 1 }
        guard !toMany.isEmpty else { return nil }
        let relation = pick(toMany)
        let target = graph.types[relation.targetTypes[0]]
        let name = quoted(relation.name)
        switch int(4) {
        case 0: return "\(name).@count \(pick(["==", ">", "<"])) \(int(4))"
        case 1:
            let test = attributeTest(target, prefix: "$x.")
            return "SUBQUERY(\(name), $x, \(test)).@count > 0"
        case 2:
            guard let number = target.attributes.first(where: { !$0.kinds.isDisjoint(with: [.integer, .double]) && $0.kinds.isSubset(of: [.integer, .double, .null]) }) else { return nil }
            return "\(name).@\(pick(["sum", "avg", "min", "max"])).\(quoted(number.name)) > \(literal(sample(target, number.name)))"
        default:
            return pick(["ANY ", "ALL ", "NONE ", ""]) + attributeTest(target, prefix: name + ".")
        }
    }

    /// A test through a backlink: its count, or a quantified test of its sources.
    mutating func backlinkTest(_ type: TypeTable) -> String? {
        var links: [(TypeTable, RelationColumn)] = []
        for source in graph.types {
            for relation in source.relations where relation.targetTypes == [type.index] { links.append((source, relation)) }
        }
        guard !links.isEmpty else { return nil }
        let (source, relation) = pick(links)
        let link = "@links.\(quoted(source.name.rawValue)).\(quoted(relation.name))"
        if chance(2) { return "\(link).@count \(pick(["==", ">", ">="])) \(int(3))" }
        return pick(["ANY ", "NONE ", ""]) + attributeTest(source, prefix: link + ".")
    }

    /// `a * 2 + b`-like arithmetic over `type`'s numeric attributes (nil when it has none).
    mutating func arithmetic(_ type: TypeTable) -> String? {
        let numbers = type.attributes.filter { !$0.kinds.isDisjoint(with: [.integer, .double]) && $0.kinds.isSubset(of: [.integer, .double, .null]) }
        guard !numbers.isEmpty else { return nil }
        let a = quoted(pick(numbers).name)
        return "\(a) \(pick(["*", "+", "-", "/"])) \(chance(2) ? String(1 + int(4)) : quoted(pick(numbers).name))"
    }

    /// Two paths compared: an attribute with another of the same kinds, here or across a to-one relation.
    mutating func twoPaths(_ type: TypeTable) -> String? {
        guard let a = type.attributes.filter({ $0.kinds.isDisjoint(with: [.array, .object, .data]) }).randomElement(using: &random) else { return nil }
        var others: [String] = type.attributes.filter { $0.name != a.name && !$0.kinds.subtracting(.null).isDisjoint(with: a.kinds.subtracting(.null)) }.map { quoted($0.name) }
        for relation in type.relations where !relation.isToMany && relation.targetTypes.count == 1 {
            let target = graph.types[relation.targetTypes[0]]
            others += target.attributes.filter { !$0.kinds.subtracting(.null).isDisjoint(with: a.kinds.subtracting(.null)) && $0.kinds.isDisjoint(with: [.array, .object]) }
                .map { quoted(relation.name) + "." + quoted($0.name) }
        }
        guard !others.isEmpty else { return nil }
        return "\(quoted(a.name)) \(pick(["==", "!=", "<", ">="])) \(pick(others))"
    }

    /// A full-string regular expression on a text attribute: a sample's first letters, then anything.
    mutating func matches(_ type: TypeTable) -> String? {
        guard let column = type.attributes.filter({ $0.kinds.contains(.string) && $0.kinds.isDisjoint(with: [.array, .object]) }).randomElement(using: &random),
              case .string(let s) = sample(type, column.name) else { return nil }
        let start = String(s.prefix(1 + int(2))).unicodeScalars.map { $0.properties.isAlphabetic || $0.properties.numericType != nil ? String($0) : "." }.joined()
        return "\(quoted(column.name)) MATCHES\(pick(["", "[c]"])) \(literal(.string(start + ".*")))"
    }

    /// A path through a to-many relation or a backlink to its targets' attribute (a group key).
    mutating func toManyPath(_ type: TypeTable) -> String? {
        guard let relation = type.relations.filter({ $0.isToMany && $0.targetTypes.count == 1 }).randomElement(using: &random),
              let column = graph.types[relation.targetTypes[0]].attributes.filter({ $0.kinds.isDisjoint(with: [.array, .object]) }).randomElement(using: &random)
        else { return scalarPath(type, hops: 1) }
        return quoted(relation.name) + "." + quoted(column.name)
    }

    /// A collection's count as a column: a to-many relation's or a backlink's.
    mutating func collectionCount(_ type: TypeTable) -> String? {
        if chance(2), let relation = type.relations.filter({ $0.isToMany }).randomElement(using: &random) { return quoted(relation.name) + ".@count" }
        for source in graph.types.shuffled(using: &random) {
            if let relation = source.relations.first(where: { $0.targetTypes == [type.index] }) {
                return "@links.\(quoted(source.name.rawValue)).\(quoted(relation.name)).@count"
            }
        }
        return nil
    }

    /// A path to a single value: an attribute of the type or of a to-one relation's target.
    mutating func scalarPath(_ type: TypeTable, hops: Int) -> String? {
        let scalars = { (t: TypeTable) in t.attributes.filter { $0.kinds.isDisjoint(with: [.array, .object]) } }
        if hops > 0, chance(2), let relation = type.relations.filter({ !$0.isToMany && $0.targetTypes.count == 1 }).randomElement(using: &random) {
            let target = graph.types[relation.targetTypes[0]]
            if let column = scalars(target).randomElement(using: &random) { return quoted(relation.name) + "." + quoted(column.name) }
        }
        return scalars(type).randomElement(using: &random).map { quoted($0.name) }
    }

    /// A value `attribute` holds in some object of `type` (null when none is seen).
    mutating func sample(_ type: TypeTable, _ attribute: String) -> Value {
        let key = type.name.rawValue + "\u{0}" + attribute
        if samples[key] == nil {
            let text = "\(quoted(type.name.rawValue)) where \(quoted(attribute)) != nil limit 200 select \(quoted(attribute))"
            if case .projection(_, let rows, _)? = try? QueryEngine(graph: graph).run(text) { samples[key] = rows.map { $0[0] } } else { samples[key] = [] }
        }
        let values = samples[key]!
        return values.isEmpty ? .null : pick(values)
    }

    /// A name as a path step: backquoted unless a plain identifier that is no keyword.
    func quoted(_ name: String) -> String {
        let plain = name.first.map { $0.isLetter || $0 == "_" } == true && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } && name.allSatisfy(\.isASCII)
        let keywords: Set<String> = ["and", "or", "not", "where", "sort", "by", "limit", "offset", "select", "as", "group", "distinct", "in", "like", "matches",
                                     "contains", "beginswith", "endswith", "between", "any", "all", "none", "some", "true", "false", "null", "nil", "count",
                                     "id", "asc", "desc", "ascending", "descending", "subquery", "truepredicate", "falsepredicate", "update", "insert", "delete", "set"]
        return plain && !keywords.contains(name.lowercased()) ? name : "`" + name.replacingOccurrences(of: "`", with: "") + "`"
    }

    /// A value as a literal of the language.
    func literal(_ value: Value) -> String {
        switch value {
        case .null: return "nil"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return d.isFinite ? String(d) : "0"
        case .string(let s):
            var out = "\""
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += "\\u{\(String(scalar.value, radix: 16))}"
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        case .date(let d):
            let formatter = ISO8601DateFormatter()
            return formatter.string(from: d)
        default: return "nil"
        }
    }
}
