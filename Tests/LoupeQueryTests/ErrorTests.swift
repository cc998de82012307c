import LoupeModel
import LoupeQuery
import LoupeStore
import LoupeTestSupport
import XCTest

/// Error messages for the common mistakes, pinned in their caret form.
final class ErrorTests: XCTestCase {
    static let chinook = Result { try LoadedStore.open(try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")).graph }

    func render(_ source: String) -> String {
        do {
            _ = try QueryEngine(graph: try Self.chinook.get()).run(source)
            return "no error"
        } catch let e as QueryError {
            return e.render(source: source)
        } catch { return "\(error)" }
    }

    func testAClauseAfterSelectSaysWhereClausesGo() {
        XCTAssertEqual(render("Genre select Name limit 3"), """
            error: unexpected 'limit'
             --> 1:19
              |
            1 | Genre select Name limit 3
              |                   ^^^^^ clauses go in this order, each once: Type [where …] [sort by …] [distinct …] [limit N] [select …], or Type [where …] group by … [limit N]
            """)
        XCTAssertTrue(render("Genre sort by nope").contains("did you mean 'Name'?"))
    }

    func testANumberComparedWithTextIsAnError() {
        XCTAssertEqual(render("count Track where Milliseconds > \"abc\""), """
            error: cannot compare a number with text
             --> 1:34
              |
            1 | count Track where Milliseconds > "abc"
              |                                  ^^^^^ `Milliseconds` holds numbers
            """)
        XCTAssertTrue(render("Track where Milliseconds == \"300\"").contains("write the number without quotes: 300"))
        XCTAssertEqual(render("count Track where Name > \"M\""), "no error", "text with text compares")
    }

    func testUnknownNamesSuggest() {
        XCTAssertEqual(render("Track where Nmae BEGINSWITH \"Harry\""), """
            error: unknown attribute 'Nmae' on Track
             --> 1:13
              |
            1 | Track where Nmae BEGINSWITH "Harry"
              |             ^^^^ did you mean 'Name'?
            """)
        XCTAssertEqual(render("Trak where Name == 'x'"), """
            error: unknown type 'Trak'
             --> 1:1
              |
            1 | Trak where Name == 'x'
              | ^^^^ did you mean 'Track'?
            """)
        XCTAssertTrue(render("Track where Album.Titel == 'x'").contains("unknown attribute 'Titel' on Album"))
        XCTAssertTrue(render("Artist where @links.Albun.Artist.@count > 1").contains("did you mean 'Album'?"))
        XCTAssertTrue(render("Artist where @links.Album.Artsit.@count > 1").contains("unknown relation 'Artsit' on Album"))
    }

    func testSyntaxMistakes() {
        XCTAssertEqual(render("Track where Name == \"Love"), """
            error: unclosed string
             --> 1:21
              |
            1 | Track where Name == "Love
              |                     ^^^^^ add a closing "
            """)
        XCTAssertEqual(render("Track where Milliseconds >"), """
            error: unexpected end of statement
             --> 1:27
              |
            1 | Track where Milliseconds >
              |                           ^ expected a value after >
            """)
        XCTAssertTrue(render("Track where (Name == 'a'").contains("expected ')'"))
        XCTAssertTrue(render("Track where Name == 'a' Name").contains("unexpected 'Name'"))
        XCTAssertTrue(render("Track where Name ==[x] 'a'").contains("use [c], [d] or [cd]"))
        XCTAssertTrue(render("Track where Name ~ 'a'").contains("unexpected character '~'"))
        XCTAssertTrue(render("Track where Name MATCHES '('").contains("invalid regular expression"))
        XCTAssertTrue(render("").contains("empty statement"))
    }

    func testWrongQuantifierUse() {
        XCTAssertEqual(render("Track where ANY Name == 'x'"), """
            error: ANY needs a collection on its left
             --> 1:17
              |
            1 | Track where ANY Name == 'x'
              |                 ^^^^ the left side is a single value; drop ANY or use a to-many path
            """)
        XCTAssertTrue(render("Track where ALL Name").contains("ALL needs a comparison"))
        XCTAssertEqual(render("Album where ANY @links.Track.Album.Milliseconds > 1"), "no error")
    }

    func testBarePredicateWithoutTypeAndMutations() {
        XCTAssertTrue(render("Milliseconds > 1").contains("a bare predicate needs a type"))
        XCTAssertTrue(render("delete Track where TrackId == 1").contains("a mutation is not a query"))
    }

    func testDeepNestingIsAnErrorNotACrash() {
        let deep = String(repeating: "(", count: 10_000) + "a == 1" + String(repeating: ")", count: 10_000)
        XCTAssertTrue(render("Track where " + deep).contains("nested too deeply"))
        let nots = String(repeating: "NOT ", count: 10_000) + "a == 1"
        XCTAssertTrue(render("Track where " + nots).contains("nested too deeply"))
        let minus = "Track where " + String(repeating: "-", count: 10_000) + "1 == 1"
        XCTAssertTrue(render(minus).contains("nested too deeply"))
        let chain = "Track where " + Array(repeating: "Milliseconds > 1", count: 1000).joined(separator: " AND ")
        XCTAssertEqual(render(chain), "no error", "long flat chains are fine")
    }
}
