import Foundation
import LoupeStore
import LoupeTestSupport
import XCTest

/// The library example of `docs/library.md`, compiled and run: `LibraryExample.generated.swift`
/// is that example made into a function (its types renamed `Doc…`, its file a parameter), and
/// this test makes it again from the page: when the page changes, the test fails and writes the
/// new file beside the old as `.new` until it replaces it. The example is never copied by hand.
final class DocExampleTests: XCTestCase {
    /// The generated file for the page's first Swift block.
    static func generated(fromPage page: String) -> String? {
        guard let start = page.range(of: "```swift\n"), let end = page.range(of: "\n```", range: start.upperBound..<page.endIndex) else { return nil }
        var declarations: [String] = [], statements: [String] = []
        var inDeclaration = false
        for line in page[start.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("import ") { continue }
            var renamed = line
            for name in ["Author", "Book"] {
                renamed = renamed.replacingOccurrences(of: #"\b\#(name)\b"#, with: "Doc" + name, options: .regularExpression)
            }
            if line.hasPrefix("final class ") || line.hasPrefix("struct ") || line.hasPrefix("class ") { inDeclaration = true }
            if inDeclaration { declarations.append(renamed) } else if !line.isEmpty { statements.append("    " + renamed.replacingOccurrences(of: "\"library.sqlite\"", with: "path")) }
            if line == "}" { inDeclaration = false }
        }
        return """
            // Made by DocExampleTests from docs/library.md's example: edit the page, not this file.
            import Foundation
            import LoupeStore

            \(declarations.joined(separator: "\n"))

            /// The example's statements, over the store at `path`; returns the store.
            func docLibraryExample(path: String) throws -> ObjectStore {
            \(statements.joined(separator: "\n"))
                return store
            }

            """
    }

    func testTheLibraryPageExampleIsTheCompiledOne() throws {
        let page = try String(contentsOf: Shared.checkout.appendingPathComponent("docs/library.md"), encoding: .utf8)
        let expected = try XCTUnwrap(Self.generated(fromPage: page), "docs/library.md has no Swift example")
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("LibraryExample.generated.swift")
        let current = try? String(contentsOf: file, encoding: .utf8)
        if current != expected {
            try expected.write(to: file.appendingPathExtension("new"), atomically: true, encoding: .utf8)
            XCTFail("docs/library.md's example changed: review LibraryExample.generated.swift.new and put it in place")
        }
    }

    func testTheLibraryPageExampleRuns() throws {
        let path = try Shared.temporaryPath("library.sqlite")
        let store = try docLibraryExample(path: path)
        // The example saves a graph, loads it back by id (one instance) and deletes it with its books.
        XCTAssertEqual(try store.count(DocAuthor.self), 0)
        XCTAssertEqual(try store.count(DocBook.self), 0)
        let again = try ObjectStore(path: path)
        let ada = DocAuthor(name: "Ada")
        ada.books = [DocBook(title: "Notes", published: .now, author: Lazy(ada))]
        try again.save(ada)
        let loaded = try again.load(DocAuthor.self, id: ada.storeID!)
        XCTAssertTrue(loaded === ada, "the identity map hands back the saved instance while it lives")
        XCTAssertEqual(loaded.books.first?.title, "Notes")
    }
}
