import Foundation
import LoupeModel
import LoupeQuery
import LoupeStore
import LoupeTestSupport
import XCTest

/// Every operator, modifier, quantifier and aggregate on a small graph with nulls, missing
/// attributes, mixed kinds, arrays, nested values, dates stored as dates and as text, and relations.
final class SemanticsTests: XCTestCase {
    /// Author #1 Ursula, #2 Émile, #3 山田 (no `born`); Book #10–#13; Review #20–#22.
    static let graph: ObjectGraph = {
        let b = GraphBuilder(formatName: "test")
        let author = b.type("Author"), book = b.type("Book"), review = b.type("Review")
        func object(_ t: Int, _ id: Int64, _ attributes: [(String, Value)]) -> ObjectRef {
            let ref = b.addObject(type: t, id: .int(id))
            for (k, v) in attributes { b.set(v, type: t, row: Int(ref.row), attribute: b.attribute(k, of: t)) }
            return ref
        }
        let date = { (s: String) in Value.date(DateText.parse(s)!) }
        let ursula = object(author, 1, [("name", .string("Ursula")), ("born", .int(1929)), ("country", .string("US"))])
        let emile = object(author, 2, [("name", .string("Émile")), ("born", .double(1840.5)), ("country", .null)])
        _ = object(author, 3, [("name", .string("山田"))])
        let b10 = object(book, 10, [("title", .string("The Dispossessed")), ("pages", .int(387)), ("price", .double(9.99)),
                                    ("published", date("1974-05-01")), ("tags", .array([.string("sf"), .string("classic")])),
                                    ("edition", .object(NestedObject([("number", .int(2))])))])
        let b11 = object(book, 11, [("title", .string("Lathe")), ("pages", .int(184)), ("price", .int(7)),
                                    ("published", .string("1971-10-01")), ("tags", .array([]))])
        let b12 = object(book, 12, [("title", .string("Nana")), ("pages", .null), ("price", .double(12.5)),
                                    ("published", .null), ("tags", .array([.string("classic")]))])
        _ = object(book, 13, [("title", .string("thé vert")), ("pages", .string("many")), ("price", .null)])
        let r20 = object(review, 20, [("rating", .int(5))])
        let r21 = object(review, 21, [("rating", .int(3))])
        let r22 = object(review, 22, [("rating", .int(4))])
        let writtenBy = b.relation("author", of: book)
        b.addEdge(from: b10, relation: writtenBy, to: ursula)
        b.addEdge(from: b11, relation: writtenBy, to: ursula)
        b.addEdge(from: b12, relation: writtenBy, to: emile)
        let reviews = b.relation("reviews", of: book, toMany: true)
        b.addEdge(from: b10, relation: reviews, to: r20)
        b.addEdge(from: b10, relation: reviews, to: r21)
        b.addEdge(from: b12, relation: reviews, to: r22)
        let about = b.relation("book", of: review)
        b.addEdge(from: r20, relation: about, to: b10)
        b.addEdge(from: r21, relation: about, to: b10)
        b.addEdge(from: r22, relation: about, to: b12)
        return b.finish()
    }()

    func ids(_ statement: String) throws -> [Int64] {
        guard case .objects(_, let refs) = try QueryEngine(graph: Self.graph).run(statement) else { XCTFail(statement); return [] }
        return refs.map { if case .int(let i) = Self.graph.id(of: $0) { return i } else { return -1 } }
    }

    func check(_ cases: [(String, [Int64])], file: StaticString = #filePath, line: UInt = #line) {
        for (statement, expected) in cases {
            do {
                let got = try ids(statement)
                XCTAssertEqual(got, expected, statement, file: file, line: line)
            } catch let e as QueryError {
                XCTFail("\(statement): \(e.render(source: statement))", file: file, line: line)
            } catch { XCTFail("\(statement): \(error)", file: file, line: line) }
        }
    }

    func testComparisonsNullsAndMixedKinds() {
        check([
            ("Book where pages > 200", [10]),
            ("Book where pages < 200", [11]),
            ("Book where pages == null", [12]),
            ("Book where pages != nil", [10, 11, 13]),
            ("Author where born == nil", [3]),
            ("Author where country != nil", [1]),
            ("Book where price == 7.0", [11]),
            ("Book where price >= 9.99 AND price <= 12.5", [10, 12]),
            ("Book where price => 12.5 OR price =< 7", [11, 12]),
            ("Book where price <> 7", [10, 12, 13]),
            ("Book where pages > \"100\"", [13]),
            ("Book where title > 5", []),
            ("Book where title < \"M\"", [11]),
            ("Book where title > \"Z\"", [13]),
            ("Book where price BETWEEN {7, 10}", [10, 11]),
            ("Author where born BETWEEN {1800, 1900}", [2]),
            ("Book where NOT (pages > 200)", [11, 12, 13]),
            ("Book where !(pages > 200) && price != nil", [11, 12]),
            ("Book where TRUEPREDICATE", [10, 11, 12, 13]),
            ("Book where FALSEPREDICATE", []),
        ])
    }

    func testStringOperatorsAndModifiers() {
        check([
            ("Book where title BEGINSWITH \"The\"", [10]),
            ("Book where title BEGINSWITH[c] \"the\"", [10]),
            ("Book where title ENDSWITH \"vert\"", [13]),
            ("Book where title CONTAINS \"a\"", [11, 12]),
            ("Book where title CONTAINS[c] \"THE\"", [10, 11]),
            ("Book where title CONTAINS[cd] \"THE\"", [10, 11, 13]),
            ("Book where title ==[c] \"NANA\"", [12]),
            ("Book where title !=[c] \"nana\"", [10, 11, 13]),
            ("Author where name ==[cd] \"emile\"", [2]),
            ("Author where name ==[c] \"emile\"", []),
            ("Book where title LIKE \"N?n*\"", [12]),
            ("Book where title LIKE \"*a*\"", [11, 12]),
            ("Book where title LIKE \"*A*\"", []),
            ("Book where title LIKE[c] \"the*\"", [10]),
            ("Book where title MATCHES \"[A-Z].*\"", [10, 11, 12]),
            ("Book where title MATCHES \"Nan\"", []),
            ("Book where title MATCHES[c] \"nana\"", [12]),
            ("Book where title IN {\"Nana\", \"Lathe\"}", [11, 12]),
            ("Book where title IN[c] {\"nana\"}", [12]),
            // A list of one text is a list (membership, as NSPredicate); a text is a substring test.
            ("Book where title IN {\"Nanas\"}", []),
            ("Book where title IN \"Nanas\"", [12]),
            ("Book where title IN {}", []),
            ("Book where pages IN {null, 184}", [11, 12]),
        ])
    }

    func testCollectionsQuantifiersAndArrays() {
        check([
            ("Book where tags CONTAINS \"classic\"", [10, 12]),
            ("Book where \"classic\" IN tags", [10, 12]),
            ("Book where tags == \"sf\"", [10]),
            ("Book where ANY tags == \"sf\"", [10]),
            ("Book where ALL tags == \"classic\"", [11, 12, 13]),
            ("Book where NONE tags == \"sf\"", [11, 12, 13]),
            ("Book where tags.@count == 0", [11, 13]),
            ("Book where tags.@size >= 1", [10, 12]),
            ("Book where reviews.rating > 4", [10]),
            ("Book where ANY reviews.rating < 4", [10]),
            ("Book where ALL reviews.rating > 3", [11, 12, 13]),
            ("Book where NONE reviews.rating == 3", [11, 12, 13]),
            ("Book where reviews.rating IN {4}", [12]),
            ("Book where edition.number == 2", [10]),
        ])
    }

    func testAggregatesRelationsAndBacklinks() {
        check([
            ("Book where reviews.@count == 2", [10]),
            ("Book where reviews.@sum.rating == 8", [10]),
            ("Book where reviews.rating.@sum == 0", [11, 13]),
            ("Book where reviews.rating.@avg == 4", [10, 12]),
            ("Book where reviews.@max.rating == 5", [10]),
            ("Book where reviews.@min.rating == 4", [12]),
            ("Book where reviews.rating.@avg == nil", [11, 13]),
            ("Book where author.name == \"Ursula\"", [10, 11]),
            ("Book where author == nil", [13]),
            ("Book where author == #1", [10, 11]),
            ("Book where author.born < 1900", [12]),
            ("Review where book.author.name == \"Émile\"", [22]),
            ("Author where @links.Book.author.@count == 0", [3]),
            ("Author where @links.Book.author.@count >= 2", [1]),
            ("Author where ANY @links.Book.author.pages > 300", [1]),
            ("Author where @links.Book.author.reviews.@count == 2", [1]),
            ("Author where @links.Book.author.@sum.pages > 500", [1]),
            ("Book where SUBQUERY(reviews, $r, $r.rating >= 4).@count == 1", [10, 12]),
            ("Author where SUBQUERY(@links.Book.author, $b, SUBQUERY($b.reviews, $r, $r.rating == 3).@count > 0).@count > 0", [1]),
        ])
    }

    func testDatesIdsTypesAndArithmetic() {
        check([
            ("Book where published < 1972-01-01", [11]),
            ("Book where published > 1970-01-01", [10, 11]),
            ("Book where published == 1974-05-01T00:00:00Z", [10]),
            ("Book where published BETWEEN {1971-01-01, 1972-01-01}", [11]),
            ("Book where @type == \"Book\"", [10, 11, 12, 13]),
            ("Book where id == 12", [12]),
            ("Book where id IN {10, 13}", [10, 13]),
            ("Book where id == #13", [13]),
            ("Book where pages * 2 > 700", [10]),
            ("Book where pages + 1 == 185", [11]),
            ("Book where price / 0 == nil", [10, 11, 12, 13]),
            ("Book where pages / 2 == 92", [11]),
            ("Book where -pages < -300", [10]),
            ("Book where (pages - 84) * 2 == 200", [11]),
        ])
    }

    func testSortingDistinctLimit() {
        check([
            ("Book sort by price", [13, 11, 10, 12]),
            ("Book sort by price desc", [12, 10, 11, 13]),
            ("Book sort by author.name, title", [13, 11, 10, 12]),
            ("Book sort by author.name", [13, 10, 11, 12]),
            ("Book SORT(author.name DESCENDING, title ASCENDING)", [12, 11, 10, 13]),
            ("Book distinct author", [10, 12, 13]),
            ("Book DISTINCT(author.name)", [10, 12, 13]),
            ("Book limit 2 offset 1", [11, 12]),
            ("Book LIMIT(1)", [10]),
            ("Book where price != nil sort by price desc limit 2", [12, 10]),
            ("Book sort by pages", [12, 11, 10, 13]),
        ])
    }

    func testCountsGroupsAndProjections() throws {
        let engine = QueryEngine(graph: Self.graph)
        guard case .count(let n) = try engine.run("count Book where pages != nil") else { return XCTFail() }
        XCTAssertEqual(n, 3)
        XCTAssertEqual(try engine.run("Book group by tags").render(.json, graph: Self.graph),
                       "[{\"key\": \"classic\", \"count\": 2},\n {\"key\": \"sf\", \"count\": 1}]\n")
        XCTAssertEqual(try engine.run("Review group by book.title").render(.json, graph: Self.graph),
                       "[{\"key\": \"The Dispossessed\", \"count\": 2},\n {\"key\": \"Nana\", \"count\": 1}]\n")
        XCTAssertEqual(try engine.run("Book group by author").render(.json, graph: Self.graph),
                       "[{\"key\": 1, \"count\": 2},\n {\"key\": null, \"count\": 1},\n {\"key\": 2, \"count\": 1}]\n")
        XCTAssertEqual(try engine.run("Book where id == 10 select title, author.name as writer, reviews.@count, author")
                        .render(.json, graph: Self.graph),
                       "[{\"title\": \"The Dispossessed\", \"writer\": \"Ursula\", \"reviews.@count\": 2, \"author\": 1}]\n")
        XCTAssertEqual(try engine.run("count Book").render(.json, graph: Self.graph), "4\n")
    }

    /// Groups whose keys `sort by` ranks alike (the integer 5 and the real 5.0) come integer
    /// first whatever order the counts were made in: the engines each count in their own order
    /// (a hash table's, which differs from run to run), and must give one answer.
    func testGroupsOfEqualNumbersOfTwoKindsComeInOneOrder() throws {
        var keys: [[Value]] = []
        for k in 1...20 { keys.append(k % 2 == 0 ? [.double(Double(k))] : [.int(Int64(k))]); keys.append(k % 2 == 0 ? [.int(Int64(k))] : [.double(Double(k))]) }
        let rows = QueryEngine.frequencyRows(keys)
        XCTAssertEqual(rows.map { ValueFormatter.json($0.key) }, (1...20).flatMap { ["\($0)", "\($0).0"] })
        XCTAssertEqual(QueryEngine.frequencyRows(keys.reversed()).map(\.key), rows.map(\.key))
    }

    /// NaN is one value to group by, `distinct` and change detection (a value is itself), and
    /// still equals nothing in a statement, as in NSPredicate.
    func testNaNIsOneGroupAndEqualsNothingInAStatement() throws {
        XCTAssertEqual(Value.double(.nan), Value.double(-.nan))
        XCTAssertEqual(Set([Value.double(.nan), .double(.nan), .double(0), .double(-0.0)]).count, 2)
        let rows = QueryEngine.frequencyRows([[.double(.nan)], [.double(1)], [.double(.nan)], [.double(.nan)]])
        XCTAssertEqual(rows.map(\.count), [3, 1])
        XCTAssertTrue(rows[0].key.numeric?.isNaN == true)
        let b = GraphBuilder(formatName: "test")
        let t = b.type("M")
        for (i, v) in [Double.nan, 1, .nan].enumerated() {
            let ref = b.addObject(type: t, id: .int(Int64(i)))
            b.set(.double(v), type: t, row: Int(ref.row), attribute: b.attribute("x", of: t))
        }
        let graph = b.finish()
        let engine = QueryEngine(graph: graph)
        XCTAssertEqual(try engine.run("count M where x == x").render(.json, graph: graph), "1\n")
        XCTAssertEqual(try engine.run("count M where x != 1").render(.json, graph: graph), "2\n")
        XCTAssertEqual(try engine.run("M group by x").render(.csv, graph: graph), "key,count\r\nNaN,2\r\n1.0,1\r\n")
    }

    func testOutputModes() throws {
        let engine = QueryEngine(graph: Self.graph)
        let result = try engine.run("Book where id <= 11 select id, title, tags")
        XCTAssertEqual(result.render(.csv, graph: Self.graph), "id,title,tags\r\n10,The Dispossessed,\"[\"\"sf\"\", \"\"classic\"\"]\"\r\n11,Lathe,[]\r\n")
        XCTAssertEqual(result.render(.ndjson, graph: Self.graph),
                       "{\"id\": 10, \"title\": \"The Dispossessed\", \"tags\": [\"sf\", \"classic\"]}\n{\"id\": 11, \"title\": \"Lathe\", \"tags\": []}\n")
        XCTAssertEqual(result.render(.markdown, graph: Self.graph),
                       "| id | title | tags |\n| --- | --- | --- |\n| 10 | The Dispossessed | [\"sf\", \"classic\"] |\n| 11 | Lathe | [] |\n")
        XCTAssertEqual(result.render(.table, graph: Self.graph),
                       "id  title             tags\n--  ----------------  -----------------\n10  The Dispossessed  [\"sf\", \"classic\"]\n11  Lathe             []\n")
        XCTAssertEqual(try engine.run("Book where id == 11 select title, pages").render(.line, graph: Self.graph), "title = Lathe\npages = 184\n")
        let objects = try engine.run("Book where id == 12").render(.json, graph: Self.graph)
        XCTAssertEqual(objects, "[{\"id\": 12, \"type\": \"Book\", \"title\": \"Nana\", \"pages\": null, \"price\": 12.5, \"published\": null, \"tags\": [\"classic\"], \"edition\": null}]\n")
    }

    /// `sort by` over generated columns (integers, texts, mixed kinds, numbers, nulls; two keys;
    /// every direction) puts rows where a stable sort by QUERY.md's pairwise order puts them: the
    /// rank shortcuts (integers sorted without hashing, texts hashed) change speed, not order.
    /// Texts that Swift calls equal but whose Unicode scalars differ ("é" composed and not) are
    /// two values to the order, never one rank.
    func testSortOrderMatchesPairwiseComparison() {
        var rng = SystemRandomNumberGenerator()
        func column(_ kind: Int, _ n: Int) -> [Value] {
            (0..<n).map { _ in
                if Int.random(in: 0..<6, using: &rng) == 0 { return .null }
                switch kind {
                case 0: return .int(Int64.random(in: -20...20, using: &rng))
                case 1: return .string(["b", "a", "ab", "\u{E9}", "B", "", "e\u{301}"][Int.random(in: 0..<7, using: &rng)])
                case 2: return [Value.double(2.5), .int(2), .double(2), .double(-0.0), .int(0), .double(-1e300)][Int.random(in: 0..<6, using: &rng)]
                default: return [Value.int(3), .double(2.5), .string("x"), .bool(true), .int(-1), .string("e\u{301}"), .string("\u{E9}")][Int.random(in: 0..<7, using: &rng)]
                }
            }
        }
        for round in 0..<256 {
            // Every pair of kinds, at every size, in every pair of directions.
            let n = [0, 1, 7, 300][(round / 16) % 4]
            let columns = [column(round % 4, n), column((round / 4) % 4, n)]
            let ascending = [(round / 64) % 2 == 0, (round / 128) % 2 == 0]
            let expected = Array(0..<n).sorted { a, b in
                for (c, up) in zip(columns, ascending) {
                    let o = ValueSemantics.sortOrder(c[a], c[b])
                    if o != .orderedSame { return up ? o == .orderedAscending : o == .orderedDescending }
                }
                return a < b
            }
            XCTAssertEqual(QueryEngine.sortOrder(columns: columns, ascending: ascending), expected, "round \(round)")
        }
    }

    /// Results large enough to be formatted in parallel blocks print row for row what each row
    /// prints alone, in every machine-read mode, and as an aligned table with the same cells.
    func testLargeResultsPrintAsTheirRows() throws {
        let b = GraphBuilder(formatName: "test")
        let book = b.type("Book")
        let title = b.attribute("title", of: book), pages = b.attribute("pages", of: book), tags = b.attribute("tags", of: book)
        for i in 0..<9_000 {
            let ref = b.addObject(type: book, id: .int(Int64(i)))
            b.set(.string("t,\"\(i % 97)"), type: book, row: Int(ref.row), attribute: title)
            if i % 5 != 0 { b.set(.int(Int64(i * 7 % 1000)), type: book, row: Int(ref.row), attribute: pages) }
            b.set(.array([.string("k\(i % 3)")]), type: book, row: Int(ref.row), attribute: tags)
        }
        let graph = b.finish()
        let engine = QueryEngine(graph: graph)
        let all = try engine.run("Book sort by pages desc, title")
        guard case .objects(let type, let refs) = all else { return XCTFail() }
        let single = refs.map { QueryResult.objects(type: type, refs: [$0]) }
        for mode in [OutputMode.csv, .ndjson] {
            let header = mode == .csv ? "id,title,pages,tags\r\n" : ""
            let rows = single.map { String($0.render(mode, graph: graph).dropFirst(header.count)) }
            XCTAssertEqual(all.render(mode, graph: graph), header + rows.joined(), "\(mode)")
        }
        let json = single.map { $0.render(.json, graph: graph).dropFirst().dropLast(2) }
        XCTAssertEqual(all.render(.json, graph: graph), "[" + json.joined(separator: ",\n ") + "]\n")
        // The table: each column as wide as its widest cell, two spaces between, no trailing space.
        let cells = [["id", "title", "pages", "tags"]] + single.map { r -> [String] in
            let one = r.table(graph: graph, includeType: false).rows[0]
            return one.map { ValueFormatter.plain($0) }
        }
        let widths = (0..<4).map { c in cells.map { $0[c].count }.max()! }
        func line(_ row: [String]) -> String {
            var text = zip(row, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }.joined(separator: "  ")
            while text.hasSuffix(" ") { text.removeLast() }
            return text + "\n"
        }
        let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n"
        XCTAssertEqual(all.render(.table, graph: graph), line(cells[0]) + rule + cells.dropFirst().map(line).joined())
    }
}

/// Completion from the schema at the cursor's place.
final class CompletionTests: XCTestCase {
    static let sample = Result { () throws -> ObjectGraph in
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 300, seed: 2)
        return try LoadedStore.open(path).graph
    }

    func complete(_ text: String) throws -> Completion.Result {
        Completion.complete(text, cursor: text.count, graph: try Self.sample.get(), currentType: nil)
    }

    func testCompletionFollowsTheStatement() throws {
        XCTAssertEqual(try complete("Bo").candidates, ["Book"])
        XCTAssertEqual(try complete("count Au").candidates, ["Author"])
        // Attributes of the statement's type, never type names, and the typed case is the prefix.
        let published = try complete("Book where pu")
        XCTAssertEqual(published.prefix, "pu")
        XCTAssertEqual(published.candidates, ["published", "publisher"])
        XCTAssertEqual(try complete("Book where PU").candidates, ["published", "publisher"])
        // After a dot: the names of the type the path reaches.
        let author = try complete("Book where author.")
        XCTAssertTrue(author.candidates.contains("name") && author.candidates.contains("born"), "\(author.candidates)")
        XCTAssertFalse(author.candidates.contains("title"), "Book's own names are not Author's: \(author.candidates)")
        XCTAssertEqual(try complete("Book where author.c").candidates, ["country"])
        XCTAssertEqual(try complete("Loan where book.author.na").candidates, ["name"])
        // After an attribute, operators; after a value, connectives and clauses.
        XCTAssertTrue(try complete("Book where pages ").candidates.contains("BETWEEN"))
        XCTAssertEqual(try complete("Book where pages > 3 A").candidates, ["AND"])
        XCTAssertTrue(try complete("Book where pages > 3 ").candidates.contains("sort by"))
        XCTAssertEqual(try complete("Book sort by ti").candidates, ["title"])
        XCTAssertEqual(try complete("Book where nosuch.x").candidates, [])
        XCTAssertEqual(try complete(".sch").candidates, [".schema"])
        // A to-many path offers the aggregates too.
        XCTAssertTrue(try complete("Book where tags.@c").candidates.contains("@count"))
    }
}
