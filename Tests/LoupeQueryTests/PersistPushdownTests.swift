import Foundation
import GRDB
import LoupeModel
import LoupeQuery
import LoupeSQL
import LoupeStore
import LoupeTestSupport
import XCTest

/// SQL over a Persist file read a page at a time (``PersistQuerySource``) against the engine over
/// the loaded graph: the same answers (and errors) for statements through relations, backlinks,
/// aggregates, `SUBQUERY`, sorts, projections and groups, on stores with and without indexes.
final class PersistPushdownTests: XCTestCase {
    /// Statements the source must answer itself (never nil).
    static let translated = [
        "count Book", "count Book where pages > 500", "count Loan where book.author.born < 1920",
        "count Book where @links.Loan.book.@count >= 3", "Book sort by price desc, title, id", "Book group by language",
        "count Loan where book.pages > 100 AND member.name BEGINSWITH[c] \"a\"", "Loan where returned == nil AND book.inPrint == true",
        "Book where author.country == \"PT\" OR publisher.founded < 1900", "count Book where tags.@count == 0",
        "Book where ANY tags.label == \"poetry\"", "Book where ALL tags.label != \"fiction\"", "Book where NONE tags.label BEGINSWITH \"s\"",
        "count Book where @links.Review.book.@avg.rating >= 4", "Book where @links.Review.book.@max.rating == 5 sort by title limit 10",
        "Author where @links.Book.author.@count > 6", "count Author where @links.Book.author.@sum.pages > 3000",
        "Member where @links.Loan.member.@count == 0", "count Member where favorites.@count >= 2 AND SUBQUERY(favorites, $b, $b.pages > 400).@count > 0",
        "Book where SUBQUERY(@links.Loan.book, $l, $l.renewals > 1 AND $l.member.joined < book.published).@count >= 1",
        "Loan sort by book.title, id limit 25 offset 5", "Book sort by pages desc limit 30 select title, author.name, @links.Loan.book.@count",
        "Loan group by book.language", "Review group by rating", "Book distinct language sort by language",
        "count Loan where book.author.died != nil",
        "Book where title CONTAINS[cd] \"cafe\"", "Member where name MATCHES \".*[ÀÉÖØ].*\"",
        "count Book where price BETWEEN {10, 20}", "Book where language IN {\"en\", \"fr\"} sort by id desc limit 7",
        "Loan where due < borrowed", "count Review where book.author.name LIKE \"*a*\"", "Book where id < 400",
        "count Book where @links.Member.favorites.@count > 0", "Publisher where @links.Book.publisher.@min.pages < 60",
        "count Loan where NOT (book.pages > 300)", "Tag where @links.Book.tags.@count BETWEEN {20, 40}",
        // Sorted by SQL on keys it orders as the engine does, ties by the other keys in runs.
        "Author sort by died desc, name", "Book sort by price, title limit 5", "Loan sort by renewals desc, book.title limit 12 offset 3",
        "Book sort by @links.Loan.book.@count desc, title limit 10", "Book sort by pages limit 5 select title, pages",
        "Book sort by price desc distinct language", "Loan sort by book.author.id, id limit 30", "Author sort by died, born desc limit 40 select name, died, born",
        // Sorted here, then cut by a limit: the columns after the sort read for the rows kept.
        "Loan sort by book.title desc, id limit 8 offset 2 select member.name, due, book.title", "Loan sort by book.author.name, id limit 5 select member.name, book.title",
        // Objects compared with keys: their keys compared.
        "count Book where author IN {#70, #80, #90, #100, 120}", "count Book where publisher == nil", "Book where publisher != #3 sort by id limit 5 select title",
        "count Book where ANY tags == #35", "count Author where ANY @links.Book.author IN {#400, #500, #600, #700}", "count Book where NONE tags IN {#31, #32, #33}",
        "count Loan where book == #1376 OR member == nil", "count Loan where book IN {1830, #856} AND member != nil",
    ]
    /// Statements whose errors must be the engine's.
    static let failing = ["count Book where autho == 1", "Book where Pages > 1 AND titel == 2", "count Book where titel == \"x\"", "Loan where book.pages > \"many\"", "Book where @links.Loan.boook.@count > 1",
                          "Book where title MATCHES \"(\"", "count Loan where book.author.nme == 1"]

    func testAnswersAreTheEngines() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 6_000, seed: 41)
        try compare(path)
    }

    /// Rows read in two halves of the type's keys on two connections at once (as over a large
    /// type), then joined: the same answers and errors.
    func testAnswersReadInTwoHalvesAreTheEngines() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 6_000, seed: 44)
        try compare(path, parallelObjects: 1)
    }

    /// Ctrl-C: a statement asked to stop throws instead of answering, and the source answers the
    /// next one.
    func testCancelledStatementsStop() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 20_000, seed: 43)
        let source = PersistQuerySource(pages: try PersistPages.open(try StoreFile.openForReading(path)))
        XCTAssertThrowsError(try source.answer(try Parser.parse("Book where title CONTAINS \"a\""), isCancelled: { true }))
        guard case .count(let n)? = try source.answer(try Parser.parse("count Book"), isCancelled: { false }) else { return XCTFail("a count") }
        XCTAssertEqual(n, try LoadedStore.open(path).graph.type(named: "Book")?.count)
    }

    /// Persist's own files: no index at all; then a side index in Loupe's cache.
    func testWithoutIndexesThenWithTheSideIndex() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 2_500, seed: 42)
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            for index in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'loupe_%'") {
                try db.execute(sql: "DROP INDEX \(index.quotedDatabaseIdentifier)")
            }
            // Rows that point at nothing, and duplicated edges, as hand-written stores have.
            try db.execute(sql: "INSERT INTO relations SELECT from_id, 99999999, relation FROM relations WHERE rowid % 97 = 0")
            try db.execute(sql: "INSERT INTO relations SELECT from_id, to_id, relation FROM relations WHERE relation = 'tags' AND rowid % 13 = 0")
        }
        try queue.close()
        try compare(path)
        let scratch = ScratchCache()
        defer { scratch.restore() }
        let file = try StoreFile.openForReading(path)
        try PersistPages.open(file).buildRelationIndex(progress: { _, _ in }, isCancelled: { false })
        XCTAssertTrue(try PersistPages.open(file).notes.contains("relation index from Loupe's cache"))
        try compare(path)
        try compare(path, parallelObjects: 1)   // each half's connection attaches the index
    }

    /// Documents SQLite's JSON functions read otherwise than the load (not JSON, not objects,
    /// BLOBs, repeated and escaped member names, lone surrogates, booleans, numbers beside text),
    /// relation rows to nothing and repeated: the answers stay the engine's.
    func testAwkwardDocuments() throws {
        let path = try Self.awkwardDocuments()
        let graph = try LoadedStore.open(path).graph
        let file = try StoreFile.openForReading(path)
        // On one connection, and in two halves at once (each sorted, then merged).
        let sources = [PersistQuerySource(pages: try PersistPages.open(file)), PersistQuerySource(pages: try PersistPages.open(file), parallelObjects: 1)]
        let translated = try compare(Self.awkwardStatements, graph: graph, sources: sources)
        XCTAssertGreaterThan(translated, Self.awkwardStatements.count * 3 / 2)
    }

    /// Orders kept in Loupe's cache (`I` on a column): sorts by kept attributes (and `id`), with
    /// filters, limits and projections after them, give the engine's answers, on awkward
    /// documents (mixed kinds, dates, lone surrogates) and a sample store, on one connection and
    /// in halves; they are read (ranks planted out of order show), only while the file is as
    /// they were made for, and a Loupe commit keeps those of the types it did not write.
    func testSortsReadKeptOrders() throws {
        let scratch = ScratchCache()
        defer { scratch.restore() }
        let awkward = try Self.awkwardDocuments()
        let sample = try Shared.temporaryPath()
        try SampleGenerator.generate(path: sample, objects: 4_000, seed: 45)
        let sampleStatements = [
            "Book sort by price desc, title, id", "Book sort by title", "Book where pages > 300 sort by price, id desc limit 20",
            "Book sort by language, price desc limit 7 offset 3 select title, price, author.name", "Book sort by id desc, price limit 9",
            "Book sort by price desc distinct language", "Member sort by joined desc, name", "Loan sort by due, renewals desc",
            "Book where @links.Loan.book.@count > 2 sort by title desc, id", "Book sort by PRICE, Title limit 5",
            "Book sort by price desc, title, id limit 3 select title, price", "Book where pages > 300 sort by title limit 4 select title, @links.Loan.book.@count",
            "Book sort by language limit 0 select title",
        ]
        for (path, statements, kept) in [(awkward, Self.awkwardStatements, [("Thing", ["n", "s", "b", "d"]), ("Dup", ["n", "m", "s"]), ("Clean", ["v", "w"])]),
                                         (sample, sampleStatements, [("Book", ["price", "title", "language"]), ("Member", ["joined", "name"]),
                                                                     ("Loan", ["due", "renewals"])])] {
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let file = try StoreFile.openForReading(path)
            let builder = PersistQuerySource(pages: try PersistPages.open(file), parallelObjects: 1)
            for (type, attributes) in kept {
                for attribute in attributes { try builder.buildSortIndex(typeName: type, attribute: attribute, isCancelled: { false }) }
                XCTAssertEqual(builder.sortIndexes(typeName: type), Set(attributes))
            }
            let graph = try LoadedStore.open(path).graph
            let sources = [PersistQuerySource(pages: try PersistPages.open(file)), PersistQuerySource(pages: try PersistPages.open(file), parallelObjects: 1)]
            XCTAssertGreaterThan(try compare(statements, graph: graph, sources: sources), statements.count * 3 / 2)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, "the store is never written")
        }
        // What the pass over the documents found of a kept attribute is kept beside its order: a
        // new session reads it there (a planted fact shows), and it is what a pass finds.
        let sampleFile = try StoreFile.openForReading(sample)
        let book = try XCTUnwrap(try PersistPages.open(sampleFile).catalog.firstIndex { $0.name == "Book" })
        let keptFacts = try PersistPages.open(sampleFile).attributeFacts(type: book, names: ["price", "title", "pages"])
        let directory = try XCTUnwrap(SchemaCache.directory.withLock { $0 })
        SchemaCache.directory.withLock { $0 = nil }
        let scanned = try PersistPages.open(sampleFile).attributeFacts(type: book, names: ["price", "title", "pages"])
        SchemaCache.directory.withLock { $0 = directory }
        XCTAssertEqual(keptFacts.kinds, scanned.kinds)
        XCTAssertEqual(keptFacts.plain, scanned.plain)
        // (Each store has an order file of its own: the sample's is the one with books.)
        for order in try FileManager.default.contentsOfDirectory(atPath: directory) where order.hasPrefix("order-") && order.hasSuffix(".sqlite") {
            let planted = try DatabaseQueue(path: directory + "/" + order)
            try planted.write { db in try db.execute(sql: "UPDATE attributes SET counts = '[16, 3]' WHERE type = 'Book' AND attribute = 'price'") }
            try planted.close()
        }
        XCTAssertEqual(try PersistPages.open(sampleFile).attributeFacts(type: book, names: ["price"]).kinds, ["price": .string])
        // Ranks planted in reverse are what a sort by the attribute reads (only then).
        let file = try StoreFile.openForReading(awkward)
        let source = PersistQuerySource(pages: try PersistPages.open(file))
        let sorted = try Parser.parse("Clean sort by w, id")
        guard case .objects(_, let keys)? = try source.answer(sorted, isCancelled: { false }) else { return XCTFail("objects") }
        let ids = keys.compactMap { if case .int(let k) = $0 { return k } else { return nil } }.sorted()
        try SortIndex.keep(SortIndex.Ranks(keys: ids, ranks: ids.indices.map { Int32(ids.count - 1 - $0) }, distinct: ids.count),
                           for: file, stamp: file.stamp(), type: "Clean", attribute: "w")
        guard case .objects(_, let planted)? = try source.answer(sorted, isCancelled: { false }) else { return XCTFail("objects") }
        XCTAssertEqual(planted, ids.reversed().map { .int($0) })
        // Another process writes: the ranks describe another state, and are not read.
        let writer = try DatabaseQueue(path: awkward)
        try writer.write { db in try db.execute(sql: "UPDATE by_type SET json = '{\"v\": 9}' WHERE id = 16") }
        try writer.close()
        XCTAssertEqual(source.sortIndexes(typeName: "Clean"), [])
        guard case .objects(_, let fresh)? = try source.answer(sorted, isCancelled: { false }) else { return XCTFail("objects") }
        XCTAssertEqual(fresh, keys)
        XCTAssertThrowsError(try source.buildSortIndex(typeName: "Clean", attribute: "nothing", isCancelled: { true }))
    }

    static let awkwardStatements = [
        "count Thing where n > 4", "Thing where n == 5", "Thing where n != 5", "Thing sort by n, id", "Thing sort by s, id", "Thing group by n",
        "Thing group by s", "Thing where b == true", "Thing where d > \"2020\"", "Thing where s BEGINSWITH \"x\"",
        "Dup where n > 1", "Dup where m > 1", "Dup sort by m desc, id", "Dup group by s", "Dup where peer.m >= 2", "Dup where peer.peer.n == 3",
        "Clean where v >= 1", "Clean sort by v desc, id", "Clean group by v", "Clean group by w", "Clean where w == \"a\" sort by v",
        "count Clean where items.@count >= 2", "Thing where owner.v > 1", "Clean where ANY items.n > 4", "Clean where @links.Thing.owner.@count > 0",
        "Clean where items.@sum.n > 5", "Clean where items.@max.s == \"xy\"", "Clean sort by id select w, v, items.@count, @links.Thing.owner.@count",
        "Clean sort by w, id", "Clean sort by w desc, v", "Clean sort by v, w desc limit 4", "Clean sort by w limit 3 offset 2 select w, v",
        // Several members of one document read in one pass, one of them twice.
        "Thing sort by b, id select b, s, b, d", "Thing sort by d desc, b select d, b, n", "Dup sort by s, n select n, s, m",
    ]

    /// Each statement answered by each of `sources` (in turn) and by the engine over `graph`: the
    /// same answer or error wherever a source answers. Returns how many answers were compared.
    @discardableResult
    func compare(_ statements: [String], graph: ObjectGraph, sources: [PersistQuerySource], file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        var translated = 0
        for (n, source) in sources.enumerated() {
            for text in statements {
                let statement = try Parser.parse(text)
                let expected: String
                do { expected = Self.describe(try QueryEngine(graph: graph).run(statement), graph) } catch let error as QueryError { expected = "error: \(error.render(source: text))" }
                do {
                    guard let answer = try source.answer(statement, isCancelled: { false }) else { continue }
                    translated += 1
                    XCTAssertEqual(Self.describe(answer), expected, "\(text) (source \(n))", file: file, line: line)
                } catch let error as QueryError { XCTAssertEqual("error: \(error.render(source: text))", expected, text, file: file, line: line) }
            }
        }
        return translated
    }

    /// A store of documents SQLite's JSON functions read otherwise than the load (see
    /// ``testAwkwardDocuments()``).
    static func awkwardDocuments() throws -> String {
        let path = try Shared.temporaryPath()
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE by_type (id INTEGER PRIMARY KEY NOT NULL, type_name TEXT NOT NULL, json TEXT NOT NULL);
                CREATE TABLE relations (from_id INTEGER NOT NULL, to_id INTEGER NOT NULL, relation TEXT NOT NULL);
                """)
            let documents: [(String, String)] = [
                ("Thing", #"{"n": 5, "s": "abc", "b": true, "d": "2024-01-02 03:04:05 Z"}"#), ("Thing", #"{"n": 5.5, "s": "xy", "b": false}"#),
                ("Thing", #"{"n": "7", "s": 3}"#), ("Thing", #"{"n": null}"#), ("Thing", "{not json"), ("Thing", "[1, 2]"),
                ("Thing", #"{"n": 1e2, "s": "é"}"#), ("Thing", #"{"n": 12345678901234567890}"#),
                ("Dup", #"{"n": 1, "n": 9, "m": 1}"#), ("Dup", #"{"\u006e": 4, "m": 2}"#), ("Dup", #"{"n": 3, "s": "a\ud800b", "m": 3.5}"#),
                ("Dup", #"{"n": true, "m": null}"#), ("Dup", #"{"n": 2, "s": "ok", "m": -1}"#),
                ("Clean", #"{"v": 1, "w": "b"}"#), ("Clean", #"{"v": 2.5, "w": "a"}"#), ("Clean", #"{"v": null}"#), ("Clean", "{}"),
                ("Clean", #"{"v": 1e3, "w": "Ä"}"#), ("Clean", #"{"v": 3, "w": "a"}"#),
                // "é" composed and not: one text to Swift's ==, two to the sort order (scalars).
                ("Clean", #"{"v": 3, "w": "\u00e9"}"#), ("Clean", #"{"v": 3.0, "w": "e\u0301"}"#), ("Clean", #"{"v": 2.5, "w": "\u00e9"}"#),
            ]
            for (i, (type, json)) in documents.enumerated() {
                try db.execute(sql: "INSERT INTO by_type VALUES (?, ?, ?)", arguments: [i + 1, type, json])
            }
            try db.execute(sql: "UPDATE by_type SET json = CAST(json AS BLOB) WHERE id = 2")
            // Thing.owner → Clean; Clean.items → Thing (one repeated, one to nothing); Dup.peer → Dup.
            try db.execute(sql: """
                INSERT INTO relations VALUES (1, 14, 'owner'), (2, 15, 'owner'), (3, 14, 'owner'), (7, 18, 'owner'),
                  (14, 1, 'items'), (14, 2, 'items'), (14, 2, 'items'), (15, 3, 'items'), (15, 999, 'items'), (18, 7, 'items'),
                  (9, 10, 'peer'), (10, 11, 'peer'), (11, 13, 'peer')
                """)
        }
        try queue.close()
        return path
    }

    func compare(_ path: String, parallelObjects: Int = 200_000, file: StaticString = #filePath, line: UInt = #line) throws {
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let graph = try LoadedStore.open(path).graph
        let kept = PersistQuerySource(pages: try PersistPages.open(try StoreFile.openForReading(path)), parallelObjects: parallelObjects)
        // Errors first from a source that has read nothing yet (the store's relations are read
        // only when a statement's names could be theirs), then everything from one that keeps
        // what it read.
        for (n, text) in (Self.failing + Self.translated + Self.failing).enumerated() {
            let source = n < Self.failing.count ? PersistQuerySource(pages: try PersistPages.open(try StoreFile.openForReading(path)), parallelObjects: parallelObjects) : kept
            try Self.assertAnswered(text, by: source, as: graph, file: file, line: line)
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, "the file is never written", file: file, line: line)
    }

    /// `text` answered by `source` as the engine answers it over `graph` (the same counts, keys,
    /// rows and groups, or the same error); a statement `source` leaves to the engine fails.
    static func assertAnswered(_ text: String, by source: any QuerySource, as graph: ObjectGraph, file: StaticString = #filePath, line: UInt = #line) throws {
        let statement = try Parser.parse(text)
        let expected: String
        do { expected = describe(try QueryEngine(graph: graph).run(statement), graph) } catch let error as QueryError { expected = "error: \(error.render(source: text))" }
        let got: String
        do {
            guard let answer = try source.answer(statement, isCancelled: { false }) else {
                XCTFail("not translated: \(text)", file: file, line: line)
                return
            }
            got = describe(answer)
        } catch let error as QueryError { got = "error: \(error.render(source: text))" }
        XCTAssertEqual(got, expected, text, file: file, line: line)
    }

    static func describe(_ result: QueryResult, _ graph: ObjectGraph) -> String {
        switch result {
        case .count(let n): return "count \(n)"
        case .objects(let type, let refs): return "\(type?.name.rawValue ?? "-"): " + refs.map { graph.id(of: $0).description }.joined(separator: " ")
        case .projection(let columns, let rows, let refs):
            return columns.joined(separator: "|") + "\n" + rows.map { $0.map(\.description).joined(separator: "|") }.joined(separator: "\n")
                + "\nof " + refs.map { graph.id(of: $0).description }.joined(separator: " ")
        case .groups(let key, let rows, let objects): return key + " of \(objects.count)\n" + rows.map { "\($0.key) \($0.count)" }.joined(separator: "\n")
        case .message(let m): return m
        }
    }

    static func describe(_ answer: SourceAnswer) -> String {
        switch answer {
        case .count(let n): return "count \(n)"
        case .objects(let type, let keys): return "\(type): " + keys.map(\.description).joined(separator: " ")
        case .projection(let columns, let rows, let keys):
            return columns.joined(separator: "|") + "\n" + rows.map { $0.map(\.description).joined(separator: "|") }.joined(separator: "\n")
                + "\nof " + keys.map(\.description).joined(separator: " ")
        case .groups(let key, let rows, let total): return key + " of \(total)\n" + rows.map { "\($0.key) \($0.count)" }.joined(separator: "\n")
        }
    }
}
