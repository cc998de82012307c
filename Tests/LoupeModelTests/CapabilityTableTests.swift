import Foundation
import LoupeModel
import XCTest

/// The capability table in `docs/command-line.md` is the planner's data (``StoreKind``), not
/// prose kept beside it: the page holds exactly ``StoreKind/capabilityTable`` between its
/// markers. On a difference the page as it should be is written beside it (`.new`) to review.
final class CapabilityTableTests: XCTestCase {
    func testTheDocumentedCapabilityTableIsTheGeneratedOne() throws {
        let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/command-line.md").standardizedFileURL
        let text = try String(contentsOf: page, encoding: .utf8)
        let begin = "<!-- capabilities:begin -->\n", end = "<!-- capabilities:end -->"
        let start = try XCTUnwrap(text.range(of: begin)), stop = try XCTUnwrap(text.range(of: end))
        let documented = String(text[start.upperBound..<stop.lowerBound])
        let generated = StoreKind.capabilityTable + "\n"
        if documented != generated {
            let fixed = String(text[..<start.upperBound]) + generated + String(text[stop.lowerBound...])
            try fixed.write(to: page.appendingPathExtension("new"), atomically: true, encoding: .utf8)
        }
        XCTAssertEqual(documented, generated, "the table differs from StoreKind.capabilityTable: see \(page.path).new")
        XCTAssertTrue(StoreKind.capabilityTable.contains("| a Persist file | SQLite over Persist's by_type and relations tables, asked for counts"))
    }
}
