import Foundation
import LoupeStore
import LoupeTestSupport
import XCTest

// The README's library example, verbatim but for the names (which must not clash with the other
// tests' models), so the example stays true.
private final class ReadmeAuthor: Storable {
    var storeID: Int64?
    var name: String
    var books: [ReadmeBook] = []
    init(name: String) { self.name = name }
}

private struct ReadmeBook: Storable {
    var storeID: Int64?
    var title: String
    var published: Date
    var author: Lazy<ReadmeAuthor>?
    static var formerKeys: [String: String] { ["name": "title"] }
}

final class ReadmeExampleTests: XCTestCase {
    func testTheReadmeExampleRuns() throws {
        let store = try ObjectStore(path: try Shared.temporaryPath("library.sqlite"))
        let ursula = ReadmeAuthor(name: "Ursula")
        ursula.books = [ReadmeBook(title: "The Dispossessed", published: .now, author: Lazy(ursula))]
        try store.save(ursula)
        let again = try store.load(ReadmeAuthor.self, id: ursula.storeID!)
        XCTAssertTrue(again === ursula, "the identity map hands back the saved instance while it lives")
        XCTAssertEqual(again.books.first?.title, "The Dispossessed")
        try store.transaction { tx in try tx.delete(ReadmeAuthor.self, id: again.storeID!, cascade: true) }
        XCTAssertEqual(try store.count(ReadmeAuthor.self), 0)
        XCTAssertEqual(try store.count(ReadmeBook.self), 0)
    }
}
