import CNcurses
import DisplayText
import NcursesBackend
import TerminalKit
import XCTest

/// The terminal kit's buffer, DisplayText's escapes and widths on generated text, and the ncurses
/// backend's key decoding, each directly (no screen).
final class TerminalKitTests: XCTestCase {
    /// Seeded texts mixing ASCII, wide CJK and emoji, combining marks, controls, format characters.
    static func texts(seed: UInt64, count: Int) -> [String] {
        var state = seed
        func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
        let parts = ["a", "Z", " ", "漢", "字", "🚀", "e\u{301}", "\u{301}", "\u{1B}[31m", "\n", "\t", "\u{7}", "\u{202E}", "\u{200B}", "\u{85}", "ｱ", "\\"]
        return (0..<count).map { _ in (0..<(1 + next(10))).map { _ in parts[next(parts.count)] }.joined() }
    }

    func testEscapingIsCompleteIdempotentAndMeasured() {
        for text in Self.texts(seed: 49, count: 300) {
            let shown = DisplayText.escaped(text)
            XCTAssertFalse(shown.unicodeScalars.contains { DisplayText.needsEscape($0) }, text.debugDescription)
            XCTAssertEqual(DisplayText.escaped(shown), shown, "escaping twice changes nothing")
            XCTAssertEqual(DisplayText.escapedLines(text), text.split(separator: "\n", omittingEmptySubsequences: false).map { DisplayText.escaped(String($0)) }.joined(separator: "\n"))
            XCTAssertEqual(DisplayText.width(of: text), shown.reduce(0) { $0 + DisplayText.width(of: $1) }, "width is the width of what is shown")
            for width in [0, 1, 2, 5, 9] {
                let fitted = DisplayText.fit(text, width: width)
                XCTAssertLessThanOrEqual(DisplayText.width(of: fitted), width, "\(text.debugDescription) fit to \(width)")
                XCTAssertEqual(DisplayText.width(of: DisplayText.pad(text, to: width)), width, "pad is exactly \(width) cells: \(text.debugDescription)")
                XCTAssertEqual(DisplayText.width(of: DisplayText.padLeft(text, to: width)), width)
            }
            for row in DisplayText.wrap(text, width: 6, maxRows: 50) { XCTAssertLessThanOrEqual(DisplayText.width(of: row), 6) }
            let words = DisplayText.wrap(text, width: 6, maxRows: 50, atWords: true)
            for row in words { XCTAssertLessThanOrEqual(DisplayText.width(of: row), 6) }
            XCTAssertEqual(words.joined(), DisplayText.wrap(text, width: 6, maxRows: 50).joined(), "wrapping at words drops nothing: \(text.debugDescription)")
        }
        XCTAssertEqual(DisplayText.wrap("the quick brown fox jumps", width: 12, maxRows: 5, atWords: true), ["the quick ", "brown fox ", "jumps"])
        XCTAssertEqual(DisplayText.wrap("abcdefghijklmnop", width: 6, maxRows: 5, atWords: true), ["abcdef", "ghijkl", "mnop"], "a word longer than a row is cut")
        XCTAssertEqual(DisplayText.width(of: "漢字🚀"), 6)
        XCTAssertEqual(DisplayText.escaped("\u{0}\u{7F}\u{9B}"), "\\u{0}\\u{7F}\\u{9B}")
    }

    func testPutClipsEscapesAndKeepsWideCharactersWhole() {
        var buffer = Buffer(width: 8, height: 2)
        XCTAssertEqual(buffer.put("ab漢字cd", x: 0, y: 0), 8)
        XCTAssertEqual(buffer.lines[0], "ab漢字cd")
        XCTAssertEqual(buffer[2, 0].text, "漢")
        XCTAssertEqual(buffer[3, 0].text, "", "the second cell of a wide character")
        // A wide character that does not fit is a space, never half a character.
        var clipped = Buffer(width: 3, height: 1)
        XCTAssertEqual(clipped.put("ab漢", x: 0, y: 0), 3)
        XCTAssertEqual(clipped.lines[0], "ab")
        XCTAssertEqual(clipped[2, 0].text, " ")
        // Controls never reach a cell as they are.
        var hostile = Buffer(width: 20, height: 1)
        hostile.put("x\u{1B}]0;t\u{7}", x: 0, y: 0)
        XCTAssertEqual(hostile.lines[0], "x\\u{1B}]0;t\\u{7}")
        XCTAssertFalse(hostile.cells.contains { $0.text.unicodeScalars.contains { DisplayText.needsEscape($0) } })
        // Off the buffer: nothing written, nothing trapped.
        XCTAssertEqual(buffer.put("zz", x: 0, y: 5), 0)
        XCTAssertEqual(buffer.put("zz", x: 9, y: 0), 0)
        XCTAssertEqual(buffer.put("zz", x: 0, y: 1, maxWidth: 1), 1)
        XCTAssertEqual(buffer.lines[1], "z")
    }

    func testChangesAreTheCellsThatDiffer() {
        var before = Buffer(width: 10, height: 3)
        before.put("hello", x: 0, y: 0)
        var after = before
        after.put("J", x: 0, y: 0)
        after.put("!", x: 9, y: 2)
        let changes = after.changes(since: before)
        XCTAssertEqual(changes.map { "\($0.x),\($0.y),\($0.cell.text)" }, ["0,0,J", "9,2,!"])
        XCTAssertEqual(after.changes(since: nil).count, 30, "without a previous screen, every cell")
        XCTAssertTrue(after.changes(since: after).isEmpty)
    }

    func testNcursesKeysDecode() {
        XCTAssertEqual(NcursesBackend.key(character: 13), .enter)
        XCTAssertEqual(NcursesBackend.key(character: 10), .enter)
        XCTAssertEqual(NcursesBackend.key(character: 9), .tab)
        XCTAssertEqual(NcursesBackend.key(character: 127), .backspace)
        XCTAssertEqual(NcursesBackend.key(character: 8), .backspace)
        XCTAssertEqual(NcursesBackend.key(character: 27), .escape)
        XCTAssertEqual(NcursesBackend.key(character: 1), .control("a"))
        XCTAssertEqual(NcursesBackend.key(character: 19), .control("s"))
        XCTAssertEqual(NcursesBackend.key(character: 26), .control("z"))
        XCTAssertEqual(NcursesBackend.key(character: 0x6A), .character("j"))
        XCTAssertEqual(NcursesBackend.key(character: 0x6F22), .character("漢"))
        XCTAssertEqual(NcursesBackend.key(character: 0x1F680), .character("🚀"))
        XCTAssertNil(NcursesBackend.key(character: 0xD800), "a lone surrogate is no key")
        XCTAssertNil(NcursesBackend.key(character: 0x110000))
        XCTAssertEqual(NcursesBackend.key(code: KEY_UP), .up)
        XCTAssertEqual(NcursesBackend.key(code: KEY_NPAGE), .pageDown)
        XCTAssertEqual(NcursesBackend.key(code: KEY_PPAGE), .pageUp)
        XCTAssertEqual(NcursesBackend.key(code: KEY_BTAB), .backTab)
        XCTAssertEqual(NcursesBackend.key(code: KEY_DC), .delete)
        XCTAssertEqual(NcursesBackend.key(code: loupe_key_f(5)), .function(5))
        XCTAssertNil(NcursesBackend.key(code: KEY_MOUSE), "the mouse is an event of its own")
    }
}
