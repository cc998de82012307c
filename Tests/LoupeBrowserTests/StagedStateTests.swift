import Foundation
@testable import LoupeBrowser
import LoupeModel
import LoupeQuery
import TerminalKit
import XCTest

/// Staged state reads as what it is, never as data loss.
extension BrowserTests {
    /// A book marked for deletion still shows its author, publisher and tags (the links go when
    /// the deletion is written), and the records title counts as the types pane does, the row
    /// to delete said apart.
    func testAnObjectMarkedForDeletionKeepsItsLinksAndTheTitleCountsApart() throws {
        let graph = try Self.sample
        let b = browser(graph)
        guard let bookType = graph.types.firstIndex(where: { $0.name.rawValue == "Book" }) else { return XCTFail("Book") }
        let books = graph.types[bookType]
        let author = try XCTUnwrap(books.relation(named: "author").map { books.relations[$0].targets(of: 0).first })
        b.handle(.key(.backTab))
        for _ in 0..<bookType { b.handle(.key(.character("j"))) }
        b.handle(.key(.tab))
        b.handle(.key(.character("d")))
        let screen = b.play([], width: 160, height: 40)
        XCTAssertTrue(screen.text.contains("Book (\(books.count - 1) + 1 to delete)"), screen.text)
        XCTAssertTrue(screen.text.contains("→ author  " + Sheet.label(try XCTUnwrap(author), in: graph)), screen.text)
        XCTAssertFalse(screen.lines.contains { $0.contains("→ author  ∅") }, screen.text)
        XCTAssertTrue(screen.text.contains("\(books.count - 1)") && screen.lines.contains { $0.contains("│Book ") && $0.contains(" \(books.count - 1)│") }, screen.text)
        // Undone, the title is the type's count again.
        b.handle(.key(.character("U")))
        XCTAssertTrue(b.play([], width: 160, height: 40).text.contains("Book (\(books.count))"))
    }
}
