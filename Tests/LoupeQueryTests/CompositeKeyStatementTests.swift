import Foundation
import LoupeModel
@testable import LoupeQuery
import LoupeSQL
import LoupeStore
import LoupeTestSupport
import XCTest

/// Statements through a foreign key of several columns (`(artist, album) → album(artist,
/// title)`), both ways, over the budget as over a load: SQL joins on every part where its `=`
/// links what a load links (the parts name the target's primary key, and no value matches only
/// by affinity), and every engine answers as the in-memory engine does.
extension DifferentialTests {
    static let compositeKeyStatements = [
        "count track where artist_album.year > 1990",
        "album where @links.track.artist_album.@count >= 2",
        "track where artist_album.title == \"One\" sort by id select name",
        "count album where ANY @links.track.artist_album.name == \"t4\"",
        "count album where @links.track.artist_album.@count == 0",
        "track sort by artist_album.year desc, id select name, artist_album.year",
        "album where @links.track.artist_album.@count > 0 group by artist",
    ]

    func testStatementsThroughACompositeKeyAreAnsweredAlikeByEveryEngine() throws {
        let path = try AppStoreShapes.compositeForeignKey()
        let pages = try RelationalPages.open(try StoreFile.openForReading(path))
        let sql = RelationalQuerySource(pages: pages)
        let graph = try LoadedStore.open(path).graph
        for text in Self.compositeKeyStatements {
            let statement = try Parser.parse(text)
            let expected = PersistPushdownTests.describe(try QueryEngine(graph: graph).run(statement), graph)
            let answer = try XCTUnwrap(try sql.answer(statement, isCancelled: { false }), "SQL answers \(text)")
            XCTAssertEqual(PersistPushdownTests.describe(answer), expected, text)
        }
        try compare(graph: graph, pages: pages, sql: sql, seed: 31, count: 120, first: Self.compositeKeyStatements)
    }
}
