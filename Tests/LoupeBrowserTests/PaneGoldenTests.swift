import Foundation
@testable import LoupeBrowser
import LoupeModel
import TerminalKit
import XCTest

/// Every pane on its own, at 80×24 and 120×40, against its golden (text and styles): the
/// widgets of one frame of Chinook's browser, each drawn alone in the area the frame gives it.
/// The first state draws the panes every screen has; the others each add a pane over them.
extension BrowserTests {
    static let paneStates: [(name: String, script: String)] = [
        ("browse", "j j <Tab> j"),
        ("graph", "j v"),
        ("help", "?"),
        ("picker", "<Tab> e"),
        ("form", "a"),
        ("commit", "l e <C-u> Retitled <Enter> <C-s>"),
    ]

    func testEveryPaneMatchesItsGoldenAt80x24And120x40() throws {
        for (width, height) in [(80, 24), (120, 40)] {
            var drawn = Set<String>()
            for state in Self.paneStates {
                let b = browser(try Self.chinook)
                _ = b.play(try PlayScript.parse(state.script), width: width, height: height)
                let screen = Rect(x: 0, y: 0, width: width, height: height)
                b.prepareFrame(screen)
                let frame = b.makeFrame(screen)
                var added = 0
                for (area, widget) in frame.widgets {
                    let kind = String(describing: Swift.type(of: widget))
                    guard drawn.insert(kind).inserted else { continue }
                    added += 1
                    var buffer = Buffer(width: width, height: height)
                    if let field = widget as? any CursorWidget { _ = field.draw(area, &buffer) } else { widget.render(area, &buffer) }
                    try assertGolden(buffer, "pane-\(kind)-\(width)x\(height)")
                }
                XCTAssertGreaterThan(added, 0, "state \(state.name) draws a pane of its own at \(width)×\(height)")
            }
            XCTAssertEqual(paneKinds.subtracting(drawn), [], "every pane has a golden at \(width)×\(height)")
        }
    }

    /// The panes the goldens must cover.
    private var paneKinds: Set<String> {
        ["TypesPane", "RecordsPane", "DetailPane", "ReplPane", "StatusLine", "GraphPane", "HelpPopup", "FormPopup", "DialogPopup", "PickerPopup"]
    }
}
