import Foundation
import LoupeModel
import LoupeQuery
import LoupeStore
import LoupeTestSupport
import XCTest

/// Robustness: 100,000+ random and grammar-aware mutated statements through parse and evaluate on
/// the sample store. Nothing may crash or hang; every failure must be a positioned QueryError.
final class FuzzTests: XCTestCase {
    static let seeds = [
        "Book where title BEGINSWITH[c] \"the\" AND pages > 300 sort by title limit 5",
        "count Loan where returned == nil AND member.address.city == \"Lisboa\"",
        "Author where @links.Book.author.@count >= 2 sort by name desc",
        "Book where ANY tags.label IN {\"fiction\", \"poetry\"} select title, author.name as writer, tags.@count",
        "Member where SUBQUERY(@links.Loan.member, $l, $l.renewals > 1).@count > 0",
        "Book where price BETWEEN {5, 10.5} OR NOT (language == 'en') distinct author limit 3 offset 1",
        "Book group by language",
        "Review where book.author.born < 1950 && rating >= 4 || text MATCHES '.*!'",
        "Loan where borrowed > 2023-06-01T00:00:00Z AND due < 2024-01-01 sort by due",
        "Book where (pages * 2 + 1) / 3 > price - -4 AND keywords.@count == 0",
        "Book where author == #12 OR id IN {1, 2, 3} OR @type == \"Book\"",
        "Book where title LIKE \"*a?e*\" AND NONE tags.label == 'x' AND ALL @links.Review.book.rating > 2",
        "update Book where id == 7 set author = #12, title = 'X'",
        "insert Tag {label: \"new\"}",
        ".schema Book",
        "Book SORT(price DESC, title) LIMIT(10)",
        "Author where @links.Book.author.@avg.pages > 300 AND @links.Book.author.price.@max < 20",
    ]

    static let vocabulary = ["(", ")", "{", "}", ",", ".", "==", "!=", "<", ">=", "AND", "OR", "NOT", "!", "&&", "||",
                             "ANY", "ALL", "NONE", "SOME", "IN", "BETWEEN", "CONTAINS", "LIKE", "MATCHES", "BEGINSWITH",
                             "[c]", "[cd]", "@count", "@sum", "@links", "@type", "$x", "SUBQUERY", "where", "sort", "by",
                             "limit", "select", "as", "group", "count", "#1", "#\"k\"", "\"str", "'s'", "1e999", "-",
                             "*", "/", "+", "null", "true", "2024-13-45", "2024-01-01", "title", "author", "tags", "Book",
                             "`q`", "\\u{110000}", "\u{0}", "\u{1B}[31m", "🚀", "漢字", "é", "\n"]

    typealias Generator = SampleGenerator.Random

    /// A statement made by mutating a seed's words, or random text.
    static func statement(_ g: inout Generator) -> String {
        if g.int(10) == 0 {
            let n = g.int(60)
            return String(String.UnicodeScalarView((0..<n).map { _ in
                let v = g.int(4) == 0 ? UInt32(g.int(0x2FFFF)) : UInt32(32 + g.int(95))
                return Unicode.Scalar(v) ?? "?"
            }))
        }
        var words = seeds[g.int(seeds.count)].split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        for _ in 0..<(1 + g.int(4)) {
            let i = g.int(words.count)
            switch g.int(7) {
            case 0: words.remove(at: i); if words.isEmpty { words = ["Book"] }
            case 1: words.insert(vocabulary[g.int(vocabulary.count)], at: i)
            case 2: words[i] = vocabulary[g.int(vocabulary.count)]
            case 3: words.swapAt(i, g.int(words.count))
            case 4: words.insert(words[g.int(words.count)], at: i)
            case 5:
                var scalars = Array(words[i].unicodeScalars)
                if !scalars.isEmpty { scalars[g.int(scalars.count)] = Unicode.Scalar(UInt8(g.int(128))) }
                words[i] = String(String.UnicodeScalarView(scalars))
            default: words = Array(words.prefix(max(1, i)))
            }
        }
        return words.joined(separator: g.int(8) == 0 ? "" : " ")
    }

    func testRandomAndMutatedStatementsNeverCrashAndFailWithPositions() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 150, seed: 3)
        let graph = try LoadedStore.open(path).graph
        let engine = QueryEngine(graph: graph)
        let book = graph.type(named: "Book")
        var g = Generator(state: 20261121)
        var parsed = 0, evaluated = 0, failed = 0, roundTrips = 0
        var slowest = (seconds: 0.0, statement: "")
        let total = 50_000   // the coverage-guided statement fuzzer (scripts/fuzz.sh) goes on from here in CI
        for _ in 0..<total {
            let source = Self.statement(&g)
            let started = DispatchTime.now()
            do {
                let statement = try Parser.parse(source)
                parsed += 1
                // The statement printed in the language reads back as the same tree.
                if let text = statement.sourceText {
                    do {
                        let reparsed = try Parser.parse(text)
                        XCTAssertEqual(reparsed.description, statement.description, "print → parse changed \(source)\nprinted: \(text)")
                        roundTrips += 1
                    } catch let e as QueryError {
                        XCTFail("printed statement does not parse: \(text)\n\(e.render(source: text))")
                    }
                }
                if case .dotCommand = statement { continue }
                let result = try engine.run(statement, currentType: book)
                // Results render, as valid JSON; one in twenty in every other format too.
                let json = result.render(.json, graph: graph)
                XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed]), source)
                if evaluated % 20 == 0 { for mode in OutputMode.allCases where mode != .json { _ = result.render(mode, graph: graph) } }
                evaluated += 1
            } catch let error as QueryError {
                failed += 1
                XCTAssertLessThanOrEqual(error.range.start, source.unicodeScalars.count + 1, source)
                XCTAssertTrue(error.render(source: source).hasPrefix("error: "), source)
            } catch {
                XCTFail("not a QueryError for \(source): \(error)")
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
            if seconds > slowest.seconds { slowest = (seconds, source) }
        }
        // A hang guard: no single statement of the fuzz may take long on 150 objects.
        XCTAssertLessThan(slowest.seconds, 5, "slowest statement: \(slowest.statement)")
        XCTAssertGreaterThan(roundTrips, 500, "printed trees read back")
        XCTAssertGreaterThan(evaluated, 2_500, "the mutations should still produce many valid statements")
        XCTAssertGreaterThan(failed, 10_000, "and many invalid ones")
        print("fuzz: \(total) statements, \(parsed) parsed, \(roundTrips) printed and read back, \(evaluated) evaluated, \(failed) positioned errors; slowest \(String(format: "%.3f", slowest.seconds)) s")
    }
}
