import TerminalKit
import XCTest

/// The widget contract's pieces, directly: a block, centring, and keeping a selection in view.
final class WidgetTests: XCTestCase {
    func testABlockDrawsItsBorderAndTitleAndLeavesTheInsideAlone() {
        var buffer = Buffer(width: 12, height: 4)
        buffer.put("xxxxxxxxxxxx", x: 0, y: 1)
        Block(title: "Types").render(Rect(x: 1, y: 0, width: 10, height: 4), &buffer)
        XCTAssertEqual(buffer.lines, [" ┌ Types ─┐", "x│xxxxxxxx│x", " │        │", " └────────┘"], "lines end at their last mark")
        XCTAssertEqual(Block.inner(Rect(x: 1, y: 0, width: 10, height: 4)), Rect(x: 2, y: 1, width: 8, height: 2))
        XCTAssertEqual(Block.inner(Rect(x: 3, y: 3, width: 1, height: 9)).width, 0, "too small for a border: nothing inside")
    }

    func testCentredRectangles() {
        XCTAssertEqual(Rect(x: 0, y: 0, width: 80, height: 24).centered(width: 70, height: 10), Rect(x: 5, y: 7, width: 70, height: 10))
        XCTAssertEqual(Rect(x: 10, y: 2, width: 11, height: 5).centered(width: 4, height: 2), Rect(x: 13, y: 3, width: 4, height: 2))
    }

    /// Over every selection, height and starting point: the selection is shown, the window moves
    /// as little as it must, and never past a full last page.
    func testAScrollWindowKeepsTheSelectionInViewAndMovesLeast() {
        for count in 0...12 {
            for height in 1...6 {
                for top in 0...14 {
                    for selection in 0..<max(1, count) where count > 0 {
                        let t = ScrollWindow.top(top, keeping: selection, height: height, count: count)
                        XCTAssertTrue((t..<t + height).contains(selection), "count \(count) height \(height) top \(top) selection \(selection) → \(t)")
                        XCTAssertGreaterThanOrEqual(t, 0)
                        XCTAssertLessThanOrEqual(t, max(0, count - height))
                        if (top..<top + height).contains(selection), top <= max(0, count - height) { XCTAssertEqual(t, top, "already in view: unmoved") }
                    }
                }
            }
        }
        XCTAssertEqual(ScrollWindow.top(9, keeping: nil, height: 5, count: 8), 3, "no selection: clamped to the last page")
        XCTAssertEqual(ScrollWindow.top(4, keeping: 2, height: 0, count: 8), 0)
    }
}
