import Foundation
import GRDB
import LoupeModel
@testable import LoupeQuery
import LoupeSQL
import LoupeStore
import LoupeTestSupport
import XCTest

/// The chunked engine (``ChunkedAnswer``: what SQL does not say over a store too large to load,
/// answered a chunk of objects at a time) against the engine over the loaded graph: the same
/// counts, objects in the same order, rows and groups, and the same errors, for statements on
/// a type's own attributes with sorts, distincts, limits, projections and groups in any order,
/// in chunks of the standard size and of a few objects (so that candidates are pruned between
/// chunks).
final class ChunkedAnswerTests: XCTestCase {

    func testPersistStatementsAreTheEngines() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 3_000, seed: 45)
        let pages = try PersistPages.open(try StoreFile.openForReading(path))
        try compare(path, pages, [
            "count Book where pages * 2 > 700", "Book where pages / 3 > 100 limit 4 offset 2",
            "Book where pages * 2 > 700 sort by price desc, title limit 5 offset 3", "Book sort by language distinct language",
            "Book sort by price distinct language limit 3 offset 1", "Book distinct language limit 4",
            "Book where pages * 2 > 700 limit 40 select title, pages * 2 as double", "Book sort by published, id desc limit 9 select title, published",
            "Book where pages * 1 > 100 sort by title", "Book where pages - 1 > 600 distinct inPrint, language select language, inPrint",
            "Book where pages + 0 > 100 group by language", "Book group by language limit 2 offset 1", "Book where pages * 2 > 600 group by pages sort by count desc, key",
            "Book where price * 1 > 20 group by inPrint sort by key desc", "Member sort by joined desc limit 0", "Book sort by title limit 3 offset 100000",
            "Book sort by pages asc distinct pages limit 6 select pages", "Loan sort by renewals desc, due limit 7",
            // Names as written ignoring case (the chunks build only the members a statement names).
            "Book where PAGES * 2 > 700 sort by Price desc, id limit 4 select Title", "count Book where Title.@count * 1 > 0",
            // The engine's errors, from the first chunk.
            "Book sort by titel limit 3", "Book where pages * 2 > 1 select pagez", "Book where pages * 2 > \"x\" group by language",
        ])
    }

    /// Filters that read relations and backlinks beside what SQL cannot say (arithmetic, nested
    /// values, collections' counts): SQL answers the parts through relations over the whole type,
    /// the chunks the rest, under ANDs, ORs and NOTs in any mix.
    func testPersistFiltersThroughRelationsAreTheEngines() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 3_000, seed: 46)
        let pages = try PersistPages.open(try StoreFile.openForReading(path))
        // SQL in two halves on two connections (as over a large type), which read the pages'
        // own connection too while the chunks are read.
        try compare(path, pages, sql: PersistQuerySource(pages: pages, parallelObjects: 100), sizes: [ChunkedAnswer.standardChunkSize, 7], [
            "count Book where author.name BEGINSWITH \"A\" AND pages * 2 > 700",
            "count Book where author.name BEGINSWITH \"A\" OR keywords.@count > 2",
            "Book where NOT (author.name BEGINSWITH \"A\" AND keywords.@count > 2) AND pages * 2 > 900 sort by title limit 5 select title, pages",
            "Book where edition.number > 1 AND (@links.Review.book.@count > 1 OR publisher.name CONTAINS \"e\") sort by price desc limit 7",
            "Book where tags.@count == 2 AND NOT author.name ENDSWITH \"z\" AND price * 2 > 50 group by language",
            "Loan where book.author.born < 1950 AND renewals * 1 > 0 sort by due limit 4 select due, renewals",
            "Book where SUBQUERY(tags, $t, $t.label BEGINSWITH \"s\").@count > 0 AND pages / 2 > 150 distinct language",
            // A part SQL cannot say whole, asked part by part: what it mixed with reads the chunks' attributes.
            "count Loan where (due > 2022-04-06T00:00:00Z OR member.name BEGINSWITH \"A\") OR (member.name == \"x\" OR renewals * 1 > 2)",
            // The engine's errors, from the part it was asked.
            "Book where author.nmae == \"x\" AND pages * 2 > 1",
            // Sort keys, distinct paths, columns and groups through relations: SQL gives them for
            // each chunk's candidates, by key (also when no object passes, and errors the same).
            "Book where pages * 2 > 700 sort by author.name desc, title limit 6 select title, author.name, publisher.name, tags.@count",
            "Book where pages * 2 > 900 sort by @links.Review.book.@count desc, id distinct publisher.name limit 4",
            "Book where price * 2 > 50 group by author.name limit 5", "Book where price * 2 > 50 group by publisher.name",
            "Loan where renewals * 1 > 0 sort by book.author.born, id select book.title, member.name",
            "Book where pages * 2 < 0 sort by author.name select author.name", "Book where pages * 2 > 0 sort by author.nmae",
        ])
    }

    /// Documents whose attributes hold values of several kinds, and nested ones.
    func testMixedKindsAreTheEngines() throws {
        let path = try PersistPushdownTests.awkwardDocuments()
        let pages = try PersistPages.open(try StoreFile.openForReading(path))
        try compare(path, pages, [
            "Clean sort by w desc, v limit 3", "Clean sort by v distinct v limit 2 offset 1", "Clean distinct w select w, v",
            "Thing sort by n desc select n, s, n * 2 as twice", "Dup sort by m limit 3 select n, m", "Clean group by w sort by key desc",
            "Thing where n * 1 != nil sort by s limit 2", "Dup distinct n limit 2",
        ])
    }

    /// A view (which SQL reads by row number) and a table of Chinook.
    func testRelationalStatementsAreTheEngines() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let queue = try DatabaseQueue(path: path)
        try queue.write { try $0.execute(sql: "CREATE VIEW LongTrack AS SELECT Name, Composer, Milliseconds, UnitPrice FROM Track WHERE Milliseconds > 400000") }
        try queue.close()
        let pages = try RelationalPages.open(try StoreFile.openForReading(path))
        try compare(path, pages, sizes: [ChunkedAnswer.standardChunkSize, 97], [
            "Track where Milliseconds / 1000 > 300 sort by Name limit 5", "Track where Milliseconds / 1000 > 300 sort by Composer distinct Composer limit 4 offset 2",
            "Track sort by Bytes desc limit 3 select Name, Bytes / 1024 as kb", "Track where UnitPrice * 100 > 100 group by Composer limit 5",
            "LongTrack sort by Milliseconds desc limit 4", "LongTrack sort by Name distinct Composer", "LongTrack group by UnitPrice",
            "count LongTrack where Milliseconds / 60000 > 10", "LongTrack sort by Composer, Name select Name, Milliseconds / 60000 as minutes",
        ])
        try compare(path, pages, sql: RelationalQuerySource(file: try StoreFile.openForReading(path)), sizes: [ChunkedAnswer.standardChunkSize, 97], [
            "count Track where ANY @links.PlaylistTrack.Track.Playlist.Name == \"Music\" AND Bytes / Milliseconds > 40",
            "Track where Album.Artist.Name BEGINSWITH \"A\" OR Milliseconds / 1000 > 600 sort by Name desc limit 5 select Name",
            "Track where NOT (Genre.Name == \"Rock\") AND UnitPrice * 100 > 98 group by MediaTypeId",
            "Track where Milliseconds / 1000 > 300 sort by Album.Title desc, Name limit 7 select Name, Album.Artist.Name",
            "Track where Milliseconds / 1000 > 400 group by Album.Artist.Name limit 5", "Track where Bytes / Milliseconds > 40 group by Genre.Name",
            "Album where AlbumId / 2 > 150 sort by @links.Track.AlbumId.@count desc, Title distinct Artist.Name select Title, Artist.Name",
        ])
    }

    /// A part through relations SQL cannot say (arithmetic across a relation), or any when no SQL
    /// is given, is refused, never evaluated over chunks that hold no relations; parts are the
    /// largest SQL can be asked whole, and one SQL cannot say whole is asked part by part.
    func testRelationPartsAreAnsweredBySQLOrRefused() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 600, seed: 47)
        let pages = try PersistPages.open(try StoreFile.openForReading(path))
        let sql = PersistQuerySource(pages: pages)
        func parts(_ text: String) throws -> [String] {
            let statement = try Parser.parse(text)
            return try XCTUnwrap(ChunkedAnswer.plan(statement, over: pages)).relationParts.map(\.description)
        }
        XCTAssertEqual(try parts("Book where pages > 3"), [])
        XCTAssertEqual(try parts("Book where author.name == \"a\" AND publisher.name == \"b\" AND pages * 2 > 3").count, 2)
        XCTAssertEqual(try parts("Book where (author.name == \"a\" OR publisher.name == \"b\") AND pages * 2 > 3").count, 1)
        XCTAssertEqual(try parts("Book where NOT (author.name == \"a\" OR publisher.name == \"b\")").count, 1)
        XCTAssertEqual(try parts("Book where NOT (author.name == \"a\" OR pages > 3)").count, 1)
        // Clauses, columns and groups that read relations are SQL's, by the candidates' keys:
        // refused without SQL, and when SQL cannot say them, before any chunk is read.
        for text in ["Book where pages * 2 > 3 select author.name", "Book where pages * 2 > 3 sort by author.name",
                     "Book where pages * 2 > 3 group by publisher.name", "Book where pages * 2 > 3 select title, author.born + pages"] {
            let statement = try Parser.parse(text)
            let plan = try XCTUnwrap(ChunkedAnswer.plan(statement, over: pages), text)
            XCTAssertEqual(plan.names, Set(["pages"] + (text.contains("title") ? ["title"] : [])), text)
            XCTAssertThrowsError(try plan.answer(statement, over: pages), text) { XCTAssertTrue($0 is RelationPartUnanswered, "\($0)") }
            var chunks = 0
            if text.hasSuffix("+ pages") {
                XCTAssertThrowsError(try plan.answer(statement, over: pages, relationParts: { try sql.answer($0, isCancelled: { false }) },
                                                     progress: { _, _ in chunks += 1 }), text) { XCTAssertTrue($0 is RelationPartUnanswered, "\($0)") }
                XCTAssertEqual(chunks, 0)
            }
        }

        let unsayable = try Parser.parse("count Book where author.born + 10 > pages AND pages * 2 > 3")
        let plan = try XCTUnwrap(ChunkedAnswer.plan(unsayable, over: pages))
        XCTAssertThrowsError(try plan.answer(unsayable, over: pages, relationParts: { try sql.answer($0, isCancelled: { false }) })) {
            XCTAssertTrue($0 is RelationPartUnanswered, "\($0)")
        }
        let sayable = try Parser.parse("count Book where author.born > 1950 AND pages * 2 > 3")
        XCTAssertThrowsError(try XCTUnwrap(ChunkedAnswer.plan(sayable, over: pages)).answer(sayable, over: pages)) {
            XCTAssertTrue($0 is RelationPartUnanswered, "\($0)")
        }
        // A part SQL cannot say whole (arithmetic on one side of an AND through relations) is
        // asked part by part: the part it can say is SQL's, and the other is refused.
        let mixed = try Parser.parse("count Book where author.born > 1950 AND author.born + 1 > pages")
        var asked: [String] = []
        XCTAssertThrowsError(try XCTUnwrap(ChunkedAnswer.plan(mixed, over: pages)).answer(mixed, over: pages, relationParts: { part in
            asked.append("\(part)")
            return try sql.answer(part, isCancelled: { false })
        }))
        XCTAssertEqual(asked.count, 3, "\(asked)")
    }

    /// A type of many chunks is read in two parts at once (the compared statements above answer
    /// alike so): progress counts both parts' objects up to the type's count, a cancellation
    /// stops both, and a limit first reads in key order from the start only.
    func testLargeTypesAreReadInTwoPartsWithProgressAndCancellation() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 3_000, seed: 48)
        let pages = try PersistPages.open(try StoreFile.openForReading(path))
        let book = try XCTUnwrap(pages.catalog.firstIndex { $0.name == "Book" })
        let total = pages.catalog[book].count
        XCTAssertEqual(try pages.chunkSplits(type: book, parts: 2).count, 1)
        let statement = try Parser.parse("count Book where pages * 2 > 1")
        let plan = try XCTUnwrap(ChunkedAnswer.plan(statement, over: pages, chunkSize: 5))
        XCTAssertGreaterThanOrEqual(total, ChunkedAnswer.splitChunks * 5)
        var reported: [Int] = []
        guard case .count(let n) = try plan.answer(statement, over: pages, progress: { read, of in XCTAssertEqual(of, total); reported.append(read) }) else { return XCTFail() }
        guard case .count(let expected) = try QueryEngine(graph: try LoadedStore.open(path).graph).run(statement) else { return XCTFail() }
        XCTAssertEqual(n, expected)
        XCTAssertEqual(reported.last, total)
        XCTAssertEqual(reported, reported.sorted())
        var calls = 0, seen = 0
        XCTAssertThrowsError(try plan.answer(statement, over: pages, progress: { read, _ in seen = read }, isCancelled: { calls += 1; return calls > 1 })) {
            XCTAssertTrue($0 is CancellationError, "\($0)")
        }
        XCTAssertLessThan(seen, total)
        let first = try Parser.parse("Book where pages * 2 > 1 limit 3")
        var read = 0
        guard case .objects(_, let keys) = try XCTUnwrap(ChunkedAnswer.plan(first, over: pages, chunkSize: 5)).answer(first, over: pages, progress: { r, _ in read = r }) else { return XCTFail() }
        XCTAssertEqual(keys.count, 3)
        XCTAssertLessThanOrEqual(read, 15)
    }

    /// A large table keyed by its rowid (gaps left by deleted rows included) is read in two parts
    /// split at a rowid, answering as the engine over the load; a table keyed otherwise (text)
    /// and a view are read in one go, with the same answers.
    func testLargeRelationalTablesKeyedByRowidAreReadInTwoParts() throws {
        let path = try Shared.temporaryPath()
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: """
                CREATE TABLE item (id INTEGER PRIMARY KEY, n INTEGER, label TEXT);
                WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 400)
                INSERT INTO item SELECT i * 3, (i * 37) % 101, 'item ' || (i % 7) FROM k;
                DELETE FROM item WHERE id % 9 = 0;
                CREATE TABLE word (w TEXT PRIMARY KEY, n INTEGER);
                INSERT INTO word SELECT 'w' || id, n FROM item;
                CREATE VIEW big AS SELECT n, label FROM item WHERE n > 20;
                """)
        }
        let pages = try RelationalPages.open(try StoreFile.openForReading(path))
        let graph = try LoadedStore.open(path).graph
        let item = try XCTUnwrap(pages.catalog.firstIndex { $0.name == "item" })
        let splits = try pages.chunkSplits(type: item, parts: 2)
        XCTAssertEqual(splits.count, 1)
        let keys = graph.types[item].ids
        XCTAssertEqual(splits.first, keys[keys.count / 2])
        for name in ["word", "big"] { XCTAssertEqual(try pages.chunkSplits(type: try XCTUnwrap(pages.catalog.firstIndex { $0.name == name }), parts: 2), []) }
        try compare(path, pages, sizes: [5, 7], [
            "count item where n * 2 > 60", "item where n * 2 > 60 sort by label desc, n limit 7 select id, n",
            "item where n * 2 > 60 group by label", "item where n - 1 > 90", "word where n * 2 > 60 sort by n limit 4",
            "big where n * 2 > 100 group by label",
        ])
        // Both parts are read whole: progress reaches every row.
        let statement = try Parser.parse("count item where n * 2 > 60")
        var read = 0
        _ = try XCTUnwrap(ChunkedAnswer.plan(statement, over: pages, chunkSize: 5)).answer(statement, over: pages, progress: { r, _ in read = max(read, r) })
        XCTAssertEqual(read, keys.count)
    }

    /// A limit after the sorts (and a distinct right before it) keeps no more candidates than
    /// twice what it keeps and a chunk; a distinct before a sort, or a limit between clauses,
    /// keeps them all (pruning could change the answer).
    func testPruningIsBoundedAndOnlyWhereExact() throws {
        // The language writes `sort by`, `distinct`, `limit` in that order; other orders are
        // other statements' clauses (a paged sort's), so the rule is for any order.
        let a = SortKey(path: .column("a"), ascending: true), b = SortKey(path: .column("b"), ascending: false)
        let c = Clause.distinct([.column("c")])
        let pruning = ChunkedAnswer.Candidates.pruning
        XCTAssertEqual(pruning([.sort([a]), .limit(3, offset: 2)]), [.sort([a]), .limit(5, offset: 0)])
        XCTAssertEqual(pruning([.sort([a]), .sort([b]), c, .limit(3, offset: 0)])?.count, 4)
        XCTAssertNil(pruning([c, .sort([a]), .limit(3, offset: 0)]))
        XCTAssertNil(pruning([.sort([a]), c, .sort([b]), .limit(3, offset: 0)]))
        XCTAssertNil(pruning([.sort([a]), .limit(3, offset: 0), .sort([b])]))
        XCTAssertNil(pruning([.limit(3, offset: 0)]))
        XCTAssertNil(pruning([.sort([a]), .limit(3, offset: 0), .sort([b]), .limit(2, offset: 0)]))
        XCTAssertEqual(pruning([.sort([a]), .limit(Int.max, offset: 9)])?.last, .limit(Int.max, offset: 0))

        guard case .query(let q) = try Parser.parse("T sort by a desc limit 2 offset 1") else { return XCTFail() }
        var candidates = ChunkedAnswer.Candidates(clauses: q.clauses, projection: 0, chunkSize: 4)
        var most = 0
        let value = { (key: Int64) in Value.int(key * 7 % 61) }
        for chunk in 0..<50 {
            let keys = (0..<4).map { Int64(chunk * 4 + $0) }
            candidates.append(keys: keys.map { .int($0) }, columns: [keys.map(value)])
            most = max(most, candidates.keys.count)
        }
        XCTAssertLessThanOrEqual(most, 2 * 3 + 4 + 4)
        let (order, _) = QueryEngine.applyClauses(q.clauses, values: candidates.columns, count: candidates.keys.count)
        // Keys 0..<200 by key * 7 % 61 descending, ties in key order: the second and third.
        let rank = { (key: Int64) -> (Int64, Int64) in (key * 7 % 61, -key) }
        let expected: [ObjectID] = (Int64(0)..<200).sorted { rank($0) > rank($1) }.dropFirst(1).prefix(2).map { .int($0) }
        XCTAssertEqual(order.map { candidates.keys[$0] }, expected)
    }

    /// Each statement over the loaded graph and in chunks of each size: one description.
    /// `sql` answers the filters' parts through relations.
    func compare(_ path: String, _ pages: PageSource, sql: QuerySource? = nil, sizes: [Int] = [ChunkedAnswer.standardChunkSize, 7, 1], _ statements: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let graph = try LoadedStore.open(path).graph
        for text in statements {
            let statement = try Parser.parse(text)
            let expected: String
            do { expected = PersistPushdownTests.describe(try QueryEngine(graph: graph).run(statement), graph) } catch let error as QueryError {
                expected = "error: \(error.render(source: text))"
            }
            for size in sizes {
                guard let plan = try ChunkedAnswer.plan(statement, over: pages, chunkSize: size) else {
                    XCTFail("not planned: \(text)", file: file, line: line)
                    continue
                }
                let got: String
                let parts = sql.map { sql in { (part: LoupeQuery.Statement) in try sql.answer(part, isCancelled: { false }) } }
                do { got = PersistPushdownTests.describe(try plan.answer(statement, over: pages, relationParts: parts)) } catch let error as QueryError {
                    got = "error: \(error.render(source: text))"
                }
                XCTAssertEqual(got, expected, "\(text) (chunks of \(size))", file: file, line: line)
            }
        }
    }
}
