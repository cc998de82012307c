import DisplayText
import Foundation
@testable import LoupeBrowser
import LoupeModel
import LoupeStore
import LoupeTestSupport
import TerminalKit
import XCTest

/// The browser as a daily tool: small terminals, long values, the REPL's scrollback, breadcrumbs.
extension BrowserTests {
    func testGoldenScreensAt80x24And120x40() throws {
        try assertGolden(try screen(try Self.chinook, "", width: 80, height: 24), "chinook-80x24")
        try assertGolden(try screen(try Self.chinook, "<Tab>", width: 80, height: 24), "chinook-80x24-detail")
        try assertGolden(try screen(try Self.sample, "<S-Tab> j j j <Tab> j", width: 120, height: 40), "sample-120x40")
    }

    func testAt80x24TwoPanesKeepTheRecordsReadable() throws {
        let s = try screen(try Self.chinook, "", width: 80, height: 24)
        XCTAssertTrue(s.text.contains("PlaylistTrack 8715") || s.text.contains("PlaylistTr… 8715"), s.text)
        XCTAssertTrue(s.text.contains("For Those About To Rock We Salute You"), "titles are not squeezed: \(s.text)")
        let detail = try screen(try Self.chinook, "<Tab>", width: 80, height: 24)
        XCTAssertTrue(detail.text.contains("Album #1 ─"), "focusing the detail pane shows it: \(detail.text)")
        for line in s.lines { XCTAssertLessThanOrEqual(DisplayText.width(of: line), 80, line) }
    }

    func testHelpScrollsOnASmallScreen() throws {
        let b = browser(try Self.chinook)
        let first = b.play(try PlayScript.parse("?"), width: 80, height: 24)
        XCTAssertTrue(first.text.contains("j/k PgUp/PgDn scroll"), first.text)
        XCTAssertFalse(first.text.contains("redraw the screen"), "the end is below: \(first.text)")
        let end = b.play(try PlayScript.parse("<PgDn> <PgDn> <PgDn> <PgDn> <PgDn> <PgDn> <PgDn> <PgDn>"), width: 80, height: 24)
        XCTAssertTrue(end.text.contains("redraw the screen"), end.text)
        // Long summaries go on below under their column, broken between words, never cut.
        XCTAssertTrue(first.text.contains("move to the column on the left ") && first.text.contains("(scrolls)"), first.text)
        let closed = b.play(try PlayScript.parse("x"), width: 80, height: 24)
        XCTAssertFalse(closed.text.contains("Help"), closed.text)
    }

    func testTheWholeValueOfACellOrAttribute() throws {
        let builder = GraphBuilder(formatName: "test")
        let t = builder.type("Note")
        let body = builder.attribute("body", of: t), meta = builder.attribute("meta", of: t), blob = builder.attribute("blob", of: t)
        let ref = builder.addObject(type: t, id: .int(1))
        let long = (1...60).map { "line \($0) of a long note, \(String(repeating: "word ", count: 12))" }.joined(separator: "\n")
        builder.set(.string(long), type: t, row: Int(ref.row), attribute: body)
        builder.set(.object(NestedObject([("author", .string("Zoë")), ("tags", .array([.string("a"), .string("b\u{1B}[31m")]))])),
                    type: t, row: Int(ref.row), attribute: meta)
        builder.set(.data(Data((0..<40).map { UInt8($0) })), type: t, row: Int(ref.row), attribute: blob)
        let b = browser(builder.finish())
        let text = b.play(try PlayScript.parse("l V"), width: 100, height: 30)
        XCTAssertTrue(text.text.contains("Note #1.body — text,"), text.text)
        XCTAssertTrue(text.text.contains("line 1 of a long note"), text.text)
        let scrolled = b.play(try PlayScript.parse("<PgDn> <PgDn>"), width: 100, height: 30)
        XCTAssertTrue(scrolled.text.contains("line 21 of a long note"), scrolled.text)
        _ = b.play(try PlayScript.parse("<Esc>"), width: 100, height: 30)
        let nested = b.play(try PlayScript.parse("l V"), width: 100, height: 30)
        XCTAssertTrue(nested.text.contains("author: Zoë"), nested.text)
        XCTAssertTrue(nested.text.contains("  [1] b\\u{1B}[31m"), "nested values indented, escapes shown: \(nested.text)")
        XCTAssertFalse(nested.text.hasTerminalControl)
        _ = b.play(try PlayScript.parse("<Esc>"), width: 100, height: 30)
        let data = b.play(try PlayScript.parse("l V"), width: 100, height: 30)
        XCTAssertTrue(data.text.contains("data, 40 bytes"), data.text)
        XCTAssertTrue(data.text.contains("00000010  10 11 12 13"), data.text)
    }

    func testAColumnToggledWideShowsItsWholeText() throws {
        let b = browser(try Self.chinook)
        let capped = b.play(try PlayScript.parse("<S-Tab> G <Tab>\nl l l l l"), width: 120, height: 30)
        XCTAssertFalse(capped.text.contains("Angus Young, Malcolm Young, Brian Johnson "), capped.text)
        let wide = b.play(try PlayScript.parse("_"), width: 120, height: 30)
        XCTAssertTrue(wide.text.contains("Angus Young, Malcolm Young, Brian Johnson"), wide.text)
        let back = b.play(try PlayScript.parse("_"), width: 120, height: 30)
        XCTAssertFalse(back.text.contains("Angus Young, Malcolm Young, Brian Johnson "), "back to the default width: \(back.text)")
    }

    func testTheReplScrollsBackAndZooms() throws {
        let b = browser(try Self.chinook)
        let help = b.play(try PlayScript.parse(":.help"), width: 100, height: 30)
        XCTAssertFalse(help.text.contains(".changes"), "the top of .help is above the pane: \(help.text)")
        let back = b.play(try PlayScript.parse("<PgUp> <PgUp> <PgUp> <PgUp> <PgUp> <PgUp> <PgUp> <PgUp>"), width: 100, height: 30)
        XCTAssertTrue(back.text.contains("more (PgUp/PgDn)"), back.text)
        XCTAssertTrue(back.text.contains("loupe> .help"), back.text)
        // `z` on the REPL (reached with Tab from the detail pane) gives it the whole screen.
        b.perform(.focusRepl)
        b.perform(.zoomPane)
        var buffer = Buffer(width: 100, height: 30)
        b.render(into: &buffer)
        XCTAssertFalse(buffer.text.contains("Types"), "the REPL alone: \(buffer.text)")
        XCTAssertTrue(buffer.text.contains(".changes"), "the whole of .help fits: \(buffer.text)")
    }

    /// `V` on text ends a line at every line break (U+2028 too, never shown as `\u{2028}`) and
    /// wraps at words.
    func testTheValueViewBreaksLinesAndWrapsAtWords() {
        var lines: [String] = []
        Browser.valueLines(.string("first line\u{2028}second line\r\nthird " + String(repeating: "word ", count: 12)), indent: "", width: 24, into: &lines)
        XCTAssertEqual(lines, ["first line", "second line", "third word word word ", "word word word word ", "word word word word ", "word "])
    }

    /// A line of REPL output longer than the pane wraps, so a long refusal or message is read
    /// whole, never cut at the pane's edge with `…`.
    func testLongReplLinesWrapInsteadOfBeingCut() throws {
        let b = browser(try Self.chinook)
        let needle = String(repeating: "abcdefghij", count: 12) + "THE-TAIL"
        let s = b.play(try PlayScript.parse(":count Track where Name == \"\(needle)\""), width: 80, height: 24)
        let rows = s.lines.filter { $0.contains("abcdefghij") }
        XCTAssertGreaterThan(rows.count, 1, "the echoed statement wraps: \(s.text)")
        let joined = s.lines.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "│")) }.joined()
        XCTAssertTrue(joined.contains(needle + "\""), "all of it is on screen, in order: \(s.text)")
    }

    func testBreadcrumbsKeepTheCurrentPlace() throws {
        let s = try screen(try Self.chinook, ":Track where Album.Artist.Name == \"AC/DC\" AND Milliseconds > 100000 AND Name CONTAINS \"a\"\n<Esc>\nj j <Enter>", width: 80, height: 24)
        let crumb = s.lines[0]
        XCTAssertTrue(crumb.contains("Track where Album.Artist.Name == \"AC/DC… › Track #"), "long steps are shortened, the current place shows: \(crumb)")
    }
}

extension BrowserTests {
    /// Choosing another type keeps the views left behind: Backspace at the root returns to them.
    func testChoosingATypeKeepsEarlierViewsForBackspace() throws {
        let b = browser(try Self.chinook)
        _ = b.play(try PlayScript.parse(":Track where Milliseconds > 1500000\n<Esc>"), width: 100, height: 30)
        let other = b.play(try PlayScript.parse("<S-Tab> j j <Tab>"), width: 100, height: 30)
        XCTAssertTrue(other.lines[0].hasPrefix(" Customer"), other.lines[0])
        let back = b.play(try PlayScript.parse("<Backspace>"), width: 100, height: 30)
        XCTAssertTrue(back.text.contains("Track where Milliseconds > 1500000"), back.text)
    }

    /// `/` searches the focused pane: in the types pane, type names.
    func testSearchInTheTypesPane() throws {
        let s = try screen(try Self.chinook, "<S-Tab>\n/invoicel", width: 100, height: 30)
        XCTAssertTrue(s.lines[0].hasPrefix(" InvoiceLine"), s.lines[0])
        XCTAssertTrue(s.text.contains("InvoiceLine (2240)"), s.text)
    }
}

extension BrowserTests {
    /// A long backlink name is cut, never its count.
    func testBacklinkCountsSurviveANarrowDetailPane() throws {
        let s = try screen(try Self.chinook, "<S-Tab> G <Tab>", width: 100, height: 30)
        XCTAssertTrue(s.text.contains("← [1] @links.InvoiceLine.Tr…"), s.text)
    }
}

extension BrowserTests {
    /// Backspace after opening an object from the graph returns to the graph; h/l move in it.
    func testBackFromTheGraphReturnsToIt() throws {
        let b = browser(try Self.chinook)
        let graphScreen = b.play(try PlayScript.parse("j j v h"), width: 120, height: 30)
        let opened = b.play(try PlayScript.parse("<Enter>"), width: 120, height: 30)
        XCTAssertNotEqual(opened.text, graphScreen.text)
        let back = b.play(try PlayScript.parse("<Backspace>"), width: 120, height: 30)
        let diff = zip(Self.golden(back).split(separator: "\n"), Self.golden(graphScreen).split(separator: "\n")).filter { $0 != $1 }.prefix(6).map { "\($0)\n\($1)" }.joined(separator: "\n--\n")
        XCTAssertEqual(Self.golden(back), Self.golden(graphScreen), "the graph as it was: \(diff)")
        let moved = b.play(try PlayScript.parse("l"), width: 120, height: 30)
        XCTAssertNotEqual(Self.golden(moved), Self.golden(graphScreen), "l moves the graph's selection to the right (styles differ)")
        XCTAssertTrue(moved.text.contains("Graph of Album #3"), moved.text)
        let left = b.play(try PlayScript.parse("h"), width: 120, height: 30)
        XCTAssertEqual(Self.golden(left), Self.golden(graphScreen))
    }
}

extension BrowserTests {
    /// A to-one relation is a column of the records, showing its target's label; `e` there
    /// opens the picker.
    func testRelationColumnsShowTheirTargetsLabel() throws {
        let b = browser(try Self.sample)
        let s = b.play(try PlayScript.parse("<S-Tab> j j j <Tab>\nG l l l l l l l l l l l l"), width: 140, height: 20)
        XCTAssertTrue(s.text.contains("author") && s.text.contains("publisher"), s.text)
        XCTAssertTrue(s.text.range(of: #"Author #\d+ \S"#, options: .regularExpression) != nil, "a label, not only an id: \(s.text)")
        let picker = b.play(try PlayScript.parse("h e"), width: 140, height: 20)
        XCTAssertTrue(picker.text.contains(".author — Enter sets"), picker.text)
    }
}

extension BrowserTests {
    /// The graph's stems end in corners and join the box with a proper junction; at 3 hops a
    /// branch does not lead back to the object the graph is of.
    func testGraphJunctionsAndNoWayBack() throws {
        let s = try screen(try Self.chinook, "j j v + +", width: 120, height: 30)
        XCTAssertTrue(s.text.contains("Track.Album (3) ─────────────────────────┐"), "the top branch turns down: \(s.text)")
        XCTAssertTrue(s.text.contains("└─│ Album #3 │─┘"), s.text)
        XCTAssertFalse(s.text.contains("    Album (1)"), "Track #3's way back to Album #3 is not a branch: \(s.text)")
        XCTAssertFalse(s.text.contains("├─│") || s.text.contains("│─┤"), s.text)
    }
}

extension BrowserTests {
    /// Scrolled sideways, the key column stays; a graph group's count survives a narrow column.
    func testTheKeyColumnStaysAndGraphCountsSurvive() throws {
        let s = try screen(try Self.sample, "<S-Tab> j j j <Tab>\nl l l l l l l l l l l l", width: 140, height: 20)
        XCTAssertTrue(s.text.range(of: #"│\d+ +Author #\d+"#, options: .regularExpression) != nil, "the id beside the last columns: \(s.text)")
        XCTAssertEqual(GraphView.fitKeepingCount("@links.PlaylistTrack.Track (3290)", width: 20), "@links.Playl… (3290)")
        XCTAssertEqual(GraphView.fitKeepingCount("Artist (1)", width: 20), "Artist (1)")
    }
}

extension BrowserTests {
    /// Several candidates are listed on the status line and the list goes once typing goes on.
    func testCompletionListsCandidatesThenClears() throws {
        let b = browser(try Self.chinook)
        let listed = b.play(try PlayScript.parse("<Colon> T r a c k <Space> w h e r e <Space> A l <Tab>"), width: 120, height: 30)
        XCTAssertTrue(listed.lines.last!.contains("AlbumId") && listed.lines.last!.contains("Album"), listed.lines.last!)
        XCTAssertTrue(listed.text.contains("loupe> Track where Al"), listed.text)
        let typed = b.play(try PlayScript.parse("b"), width: 120, height: 30)
        XCTAssertFalse(typed.lines.last!.contains("AlbumId"), typed.lines.last!)
    }
}

extension BrowserTests {
    /// `.timer on` shows each statement's time in the browser's REPL too.
    func testTimerShowsQueryTimesInTheBrowser() throws {
        let s = try screen(try Self.chinook, ":.timer on\n> Genre where GenreId < 5", width: 100, height: 30)
        XCTAssertTrue(s.text.contains("4 objects"), s.text)
        XCTAssertTrue(s.text.range(of: #"Run Time: \d+\.\d{3} ms"#, options: .regularExpression) != nil, s.text)
    }
}

extension BrowserTests {
    /// A value of one long line reads to its end in the value view: it is wrapped there.
    func testALongSingleLineValueReadsToItsEnd() throws {
        let builder = GraphBuilder(formatName: "test")
        let t = builder.type("Note")
        let body = builder.attribute("body", of: t)
        let ref = builder.addObject(type: t, id: .int(1))
        let text = (1...400).map { "w\($0)" }.joined(separator: " ") + " THE-END"
        builder.set(.string(text), type: t, row: Int(ref.row), attribute: body)
        let b = browser(builder.finish())
        _ = b.play(try PlayScript.parse("l V"), width: 100, height: 30)
        let end = b.play(try PlayScript.parse("<PgDn> <PgDn> <PgDn>"), width: 100, height: 30)
        XCTAssertTrue(end.text.contains("THE-END"), end.text)
    }
}

/// The first rows on screen while the whole graph loads.
final class FirstPageTests: XCTestCase {
    /// A page of the first type is shown and browsable before the load ends; the whole graph then
    /// replaces it on the same row; other types, statements and edits wait for it, saying so.
    func testFirstPageIsBrowsableWhileLoadingAndTheLoadKeepsTheRow() throws {
        for path in [try Shared.copyFromCheckout("sample-data/library.sqlite"), try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")] {
            let file = try StoreFile.openForReading(path)
            let (format, types) = try LoadedStore.catalog(file)
            let page = try XCTUnwrap(try LoadedStore.firstPage(file, limit: 40), path)
            let full = try LoadedStore.open(path).graph
            let first = full.types[0]
            XCTAssertEqual(page.types.map(\.name), [first.name])
            XCTAssertEqual(page.types[0].ids, Array(first.ids.prefix(40)), "the page is the type's first rows in load order")
            XCTAssertEqual(page.types[0].attributes.map(\.name), first.attributes.map(\.name), "and has its columns in load order")
            for a in page.types[0].attributes.indices {
                XCTAssertEqual(Array(page.types[0].attributes[a].values), Array(first.attributes[a].values.prefix(40)), "\(path) \(first.attributes[a].name)")
            }

            let browser = Browser(fileLabel: "f.sqlite", formatName: format.name, theme: .monochrome)
            browser.pendingTypes = types
            browser.progress = (0, 1000)
            browser.attachPreview(page)
            var screen = browser.play(try PlayScript.parse("j j j"), width: 120, height: 30).text
            XCTAssertTrue(screen.contains("(first \(min(40, first.count))"), screen)
            XCTAssertTrue(screen.contains("loading)"), screen)
            XCTAssertEqual(browser.stack.last?.selection, 3)
            browser.run("count \(first.name.rawValue)")
            XCTAssertTrue(browser.message.contains("run when the whole store is read"), browser.message)
            browser.attach(full)
            XCTAssertFalse(browser.isPreview)
            XCTAssertEqual(browser.stack.last?.selection, 3, "the row the user is on is kept")
            // The statement typed while loading runs now (at once without a background runner).
            let after = browser.play(try PlayScript.parse(""), width: 120, height: 30).text
            XCTAssertTrue(after.contains("count \(first.name.rawValue)"), after)
            XCTAssertEqual(browser.stack.last?.count, first.count)
            screen = browser.play(try PlayScript.parse(""), width: 120, height: 30).text
            XCTAssertFalse(screen.contains("loading)"), screen)
            XCTAssertTrue(screen.contains("(\(first.count))"), screen)
        }
    }
}

extension BrowserTests {
    /// `s`/`S` mark the column sorted by in its header (`▲` ascending, `▼` descending), loaded
    /// and in frequency tables; `M` lists the status line's messages, newest last, whole.
    func testTheSortedColumnIsMarkedAndMessagesAreKept() throws {
        let b = browser(try Self.chinook)
        let sorted = b.play(try PlayScript.parse("<Tab> l S"), width: 120, height: 30)
        XCTAssertTrue(sorted.lines[2].contains("Title▼") && !sorted.lines[2].contains("AlbumId▼"), sorted.lines[2])
        XCTAssertTrue(sorted.lines[3].contains("[1997] Black Light Syndrome"), "by UTF-8: [ after Z: \(sorted.lines[3])")
        let again = b.play(try PlayScript.parse("s"), width: 120, height: 30)
        XCTAssertTrue(again.lines[2].contains("Title▲"), again.lines[2])
        let counted = b.play(try PlayScript.parse("F l S"), width: 120, height: 30)
        XCTAssertTrue(counted.lines[2].contains("count▼") && !counted.lines[2].contains("Title▼"), counted.lines[2])
        let log = b.play(try PlayScript.parse("M"), width: 120, height: 30)
        XCTAssertTrue(log.text.contains("Messages — "), log.text)
        let order = ["sorted by Title descending", "sorted by Title ascending"].map { needle in log.lines.firstIndex { $0.contains(needle) } }
        XCTAssertNotNil(order[0], log.text)
        XCTAssertNotNil(order[1], log.text)
        if let first = order[0], let second = order[1] { XCTAssertLessThan(first, second, "newest last") }
        let closed = b.play(try PlayScript.parse("<Esc>"), width: 120, height: 30)
        XCTAssertFalse(closed.text.contains("Messages — "), closed.text)
    }
}

extension BrowserTests {
    /// After `/text`, the cells holding it are marked (as `n`/`N` find them, ignoring case);
    /// the others keep their own styles.
    func testCellsHoldingTheSearchedTextAreMarked() throws {
        let b = Browser(fileLabel: "Chinook_Sqlite.sqlite", formatName: "SQLite", theme: .color)
        b.attach(try Self.chinook)
        let screen = b.play(try PlayScript.parse("<Tab>\n/rock"), width: 120, height: 30)
        func style(of text: String) -> Style? {
            for y in 0..<screen.height {
                guard let range = screen.lines[y].range(of: text) else { continue }
                let x = DisplayText.width(of: String(screen.lines[y][..<range.lowerBound]))
                return screen[x, y].style
            }
            return nil
        }
        // The search selected "Let There Be Rock"; the first row holds "Rock" too.
        XCTAssertEqual(style(of: "For Those About To Rock"), Theme.color.match, screen.text)
        XCTAssertNotEqual(style(of: "Big Ones"), Theme.color.match, screen.text)
    }
}

extension BrowserTests {
    /// In the graph, `j`/`k` move along one side (relations on the right, backlinks on the left)
    /// and `h`/`l` go to the other; an object opened from a node is named once in the breadcrumb.
    func testGraphKeysFollowItsSidesAndANodeIsNamedOnce() throws {
        let b = browser(try Self.chinook)
        _ = b.play(try PlayScript.parse("j j v +"), width: 120, height: 30)
        let nodes = b.graphNodes()
        XCTAssertEqual(nodes[b.graphSelection].text, "Artist (1)", "the first relation, on the right")
        b.handle(.key(.character("j")))
        XCTAssertEqual(nodes[b.graphSelection].text, "Artist #2 Accept", "down the right side: its target")
        b.handle(.key(.character("j")))
        XCTAssertEqual(nodes[b.graphSelection].text, "Artist #2 Accept", "the right side ends there; j does not cross to the left")
        b.handle(.key(.character("h")))
        XCTAssertEqual(nodes[b.graphSelection].text, "Track.Album (3)", "h: the backlinks on the left")
        b.handle(.key(.character("h")))
        XCTAssertEqual(nodes[b.graphSelection].text, "Track.Album (3)")
        b.handle(.key(.character("l")))
        XCTAssertEqual(nodes[b.graphSelection].text, "Artist (1)", "l: back to the relations")
        b.handle(.key(.character("j")))
        let opened = b.play(try PlayScript.parse("<Enter>"), width: 120, height: 30)
        XCTAssertEqual(opened.lines[0].trimmingCharacters(in: .whitespaces), "Album › Album #3 › Artist #2")
    }
}
