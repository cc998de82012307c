import DisplayText
import Foundation
import LoupeBrowser
import LoupeHost
import LoupeModel
import LoupeQuery
import LoupeStore
import TerminalKit
import LoupeTestSupport
import XCTest

/// The browser, screen by screen, without a terminal: play scripts drive it and screens are
/// compared as text, whole (golden files; `LOUPE_UPDATE_GOLDEN=1 swift test` rewrites them) or by
/// the lines that matter.
final class BrowserTests: XCTestCase {
    /// Loaded once; a missing file fails the tests that need it, not the whole run.
    static let chinookGraph = Result { try LoadedStore.open(try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")).graph }
    static let sampleGraph = Result { () throws -> ObjectGraph in
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 400, seed: 5)
        return try LoadedStore.open(path).graph
    }
    static var chinook: ObjectGraph { get throws { try chinookGraph.get() } }
    static var sample: ObjectGraph { get throws { try sampleGraph.get() } }

    func browser(_ graph: ObjectGraph, theme: Theme = .color) -> Browser {
        let b = Browser(fileLabel: "test.sqlite", formatName: graph.formatName, theme: theme)
        b.attach(graph)
        return b
    }

    func screen(_ graph: ObjectGraph, _ script: String, width: Int = 100, height: Int = 30) throws -> Buffer {
        browser(graph).play(try PlayScript.parse(script), width: width, height: height)
    }

    /// A screen as golden text: its lines, then one line of style letters per row (`.` for the
    /// plain style) and the legend of the letters, so colours and attributes are compared too.
    static func golden(_ buffer: Buffer) -> String {
        var letters: [Style: Character] = [:]
        var legend: [String] = []
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        func describe(_ s: Style) -> String {
            var parts: [String] = []
            if s.foreground != .default { parts.append("fg \(s.foreground)") }
            if s.background != .default { parts.append("bg \(s.background)") }
            for (on, name) in [(s.bold, "bold"), (s.underline, "underline"), (s.reverse, "reverse"), (s.dim, "dim")] where on { parts.append(name) }
            return parts.joined(separator: ", ")
        }
        var rows: [String] = []
        for y in 0..<buffer.height {
            var row = ""
            for x in 0..<buffer.width {
                let style = buffer[x, y].style
                if style == .plain { row.append("."); continue }
                if letters[style] == nil {
                    let letter = alphabet[min(letters.count, alphabet.count - 1)]
                    letters[style] = letter
                    legend.append("\(letter) = \(describe(style))")
                }
                row.append(letters[style]!)
            }
            rows.append(row)
        }
        return buffer.text + "\n--- styles ---\n" + legend.joined(separator: "\n") + "\n" + rows.joined(separator: "\n") + "\n"
    }

    /// Compares a screen (text and styles) with `Golden/<name>.txt`. A screen that differs, or
    /// has no golden yet, is written beside it as `<name>.txt.new` and fails until someone reviews
    /// it and renames it (`LOUPE_UPDATE_GOLDEN=1` writes the goldens themselves, for a reviewed
    /// change of many screens).
    func assertGolden(_ buffer: Buffer, _ name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let url = URL(fileURLWithPath: "\(#filePath)").deletingLastPathComponent().appendingPathComponent("Golden/\(name).txt")
        let text = Self.golden(buffer)
        if ProcessInfo.processInfo.environment["LOUPE_UPDATE_GOLDEN"] != nil {
            try text.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        let candidate = url.appendingPathExtension("new")
        guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
            try text.write(to: candidate, atomically: true, encoding: .utf8)
            XCTFail("no golden screen \(name): wrote \(candidate.lastPathComponent) to review", file: file, line: line)
            return
        }
        if text == expected { try? FileManager.default.removeItem(at: candidate); return }
        try text.write(to: candidate, atomically: true, encoding: .utf8)
        XCTAssertEqual(text, expected, "screen \(name) differs: the new one is \(candidate.lastPathComponent)", file: file, line: line)
    }

    func testFirstScreenOfChinook() throws {
        try assertGolden(try screen(try Self.chinook, ""), "chinook-start")
    }

    func testFirstScreenOfTheSampleStore() throws {
        // Book (the fourth type in store order), second row: attributes and relations in the detail pane.
        let s = try screen(try Self.sample, "<S-Tab> j j j <Tab> j")
        try assertGolden(s, "sample-book")
        XCTAssertTrue(s.text.contains("→ author  Author #"), s.text)
        XCTAssertTrue(s.lines.last?.contains(" · Persist · ") ?? false, "the status line names the format: \(s.lines.last ?? "")")
    }

    func testFollowRelationAndBacklink() throws {
        // Album #3 → detail → Artist relation → Artist #2 → its backlink list of albums.
        let s = try screen(try Self.chinook, "j j <Enter> <Enter>\n<Down> <Enter>")
        try assertGolden(s, "chinook-follow")
        XCTAssertTrue(s.lines[0].contains("Album › Album #3 › Artist › Artist #2 › @links Album.Artist"), s.lines[0])
        XCTAssertTrue(s.text.contains("Balls to the Wall") && s.text.contains("Restless and Wild"))
        // Backspace goes back along the stack.
        let back = try screen(try Self.chinook, "j j <Enter> <Enter>\n<Down> <Enter>\n<Backspace> <Backspace>")
        XCTAssertTrue(back.lines[0].hasPrefix(" Album › Album #3"), back.lines[0])
    }

    func testQueryAtColonReplacesRecordsAndBarePredicateFilters() throws {
        let s = try screen(try Self.chinook, ":Track where Album.Artist.Name == \"AC/DC\" sort by Name")
        XCTAssertTrue(s.lines[1].contains(" (18) ─"), "the records title counts the answer: \(s.lines[1])")
        XCTAssertTrue(s.text.contains("18 objects"))
        let bare = try screen(try Self.chinook, "<S-Tab> G <Tab>\n:Milliseconds > 1500000")
        XCTAssertTrue(bare.lines[0].contains("Milliseconds > 1500000"), bare.lines[0])
        XCTAssertTrue(bare.text.contains("170 objects"), "the bare predicate filters Track to its 170 long tracks: \(bare.text)")
        let error = try screen(try Self.chinook, ":Track where Nmae == 'x'")
        XCTAssertTrue(error.text.contains("error: unknown attribute 'Nmae' on Track"), error.text)
        XCTAssertTrue(error.text.contains("^^^^ did you mean 'Name'?"), error.text)
    }

    func testFrequencyTableAndFilterByValue() throws {
        // Track, the GenreId column (5th), frequency table, then the rows with the top value.
        let s = try screen(try Self.chinook, "<S-Tab> G <Tab>\nl l l l F")
        XCTAssertTrue(s.lines[0].contains("F GenreId"), s.lines[0])
        XCTAssertTrue(s.lines.contains { $0.contains("│      1  1297 37.0 ■") }, "GenreId 1 leads with 1297 tracks, 37.0 %: \(s.text)")
        let filtered = try screen(try Self.chinook, "<S-Tab> G <Tab>\nl l l l F <Enter>")
        XCTAssertTrue(filtered.text.contains("GenreId = 1 (1297)"), filtered.text)
    }

    func testSearchAndSort() throws {
        let s = try screen(try Self.chinook, "/jagged")
        XCTAssertTrue(s.text.contains("row 6/347"), s.text)
        let next = try screen(try Self.chinook, "/black\nn")
        XCTAssertTrue(next.text.contains("row 17/347"), next.text)
        let sorted = try screen(try Self.chinook, "l S")
        XCTAssertTrue(sorted.lines[3].contains("[1997] Black Light"), "descending by Unicode scalars: '[' after 'Z'")
        XCTAssertTrue(sorted.lines[4].contains("Zooropa"), sorted.lines[4])
        let ascending = try screen(try Self.chinook, "l s")
        XCTAssertTrue(ascending.lines[3].contains("...And Justice For All"), ascending.lines[3])
    }

    func testHelpIsGeneratedFromTheKeyMap() throws {
        // Every command and key, on the help's pages (it scrolls where it is longer than the screen).
        let b = browser(try Self.chinook)
        var text = b.play(try PlayScript.parse("?"), width: 120, height: 45).text
        for _ in 0..<3 { text += b.play(try PlayScript.parse("<PgDn>"), width: 120, height: 45).text }
        for command in Command.allCases { XCTAssertTrue(text.contains(command.rawValue), command.rawValue) }
        for binding in KeyMap.bindings { XCTAssertTrue(text.contains(binding.name), binding.name) }
        let closed = try screen(try Self.chinook, "? x")
        XCTAssertFalse(closed.text.contains("Help"))
    }

    func testGraphView() throws {
        let s = try screen(try Self.chinook, "j j v", width: 120, height: 30)
        try assertGolden(s, "chinook-graph")
        XCTAssertTrue(s.text.contains("Graph of Album #3"))
        XCTAssertTrue(s.text.contains("Artist (1)") && s.text.contains("Track.Album (3)"), s.text)
        let hops = try screen(try Self.chinook, "j j v + +", width: 120, height: 30)
        XCTAssertTrue(hops.text.contains("3 hops") && hops.text.contains("Track #"), hops.text)
        // Enter opens the selected node: the Artist relation.
        let opened = try screen(try Self.chinook, "j j v <Enter>", width: 120, height: 30)
        XCTAssertTrue(opened.lines[0].contains("Album #3 › Artist"), opened.lines[0])
    }

    func testUnicodeWidthsAndEscapedData() throws {
        let b = GraphBuilder(formatName: "test")
        let t = b.type("Note")
        for (i, text) in ["漢字とかな", "emoji 🚀 here", "e\u{301}cole", "bell\u{7}\u{1B}[31mred\u{1B}[0m", "line\nbreak",
                          "bidi\u{202E}gnp.exe", "zero\u{200B}width", "👨\u{200D}👩\u{200D}👧", "plain ascii"].enumerated() {
            let ref = b.addObject(type: t, id: .int(Int64(i + 1)))
            b.set(.string(text), type: t, row: Int(ref.row), attribute: b.attribute("text", of: t))
        }
        let graph = b.finish()
        let s = browser(graph).play(try PlayScript.parse("j j j"), width: 100, height: 20)
        XCTAssertFalse(s.text.hasTerminalControl, "no control, bidi or zero-width character reaches the screen")
        XCTAssertTrue(s.text.contains("\\u{1B}[31mred"), s.text)
        XCTAssertTrue(s.text.contains("line\\nbreak"), s.text)
        XCTAssertTrue(s.text.contains("bidi\\u{202E}gnp.exe") && s.text.contains("zero\\u{200B}width"), s.text)
        XCTAssertTrue(s.text.contains("👨\\u{200D}👩"), "a joiner is shown escaped between its parts: \(s.text)")
        // Every border sits in the same column on every row, whatever the row's characters:
        // compare each data row's border columns with the plain ASCII row's.
        func borderColumns(_ y: Int) -> [Int] { (0..<s.width).filter { s[$0, y].text == "│" } }
        let plain = try XCTUnwrap((0..<s.height).first { s.lines[$0].contains("plain ascii") })
        let dataRows = (0..<s.height).filter { y in ["漢字", "🚀", "cole", "bell", "line", "bidi", "zero", "👨"].contains { s.lines[y].contains($0) } }
        XCTAssertEqual(dataRows.count, 9, "eight records and the selected one in the detail pane: \(s.text)")
        for y in dataRows { XCTAssertEqual(borderColumns(y), borderColumns(plain), "row \(y): \(s.lines[y])") }
        // And the text of a row never runs past its width, cell by cell.
        for y in 0..<s.height { XCTAssertLessThanOrEqual(DisplayText.width(of: s.lines[y]), 100, s.lines[y]) }
        XCTAssertEqual(DisplayText.width(of: "漢字"), 4)
        XCTAssertEqual(DisplayText.width(of: "🚀"), 2)
        XCTAssertEqual(DisplayText.width(of: "e\u{301}cole"), 5)
    }

    func testResizeAndTinyScreens() throws {
        let b = browser(try Self.sample)
        for (w, h) in [(200, 60), (80, 24), (60, 16), (30, 10), (20, 8)] {
            var buffer = Buffer(width: w, height: h)
            b.render(into: &buffer)
            // The breadcrumb on top, the status line at the bottom, nothing past the right edge.
            XCTAssertTrue(buffer.lines[0].contains("Publisher"), "\(w)x\(h): \(buffer.lines[0])")
            // The status line keeps the row at least (whole parts are left out when narrow).
            XCTAssertTrue(buffer.lines[h - 1].contains("row 1/3"), "\(w)x\(h): \(buffer.lines[h - 1])")
            for line in buffer.lines { XCTAssertLessThanOrEqual(DisplayText.width(of: line), w) }
        }
        var tiny = Buffer(width: 5, height: 3)
        b.render(into: &tiny)
        XCTAssertEqual(tiny.lines[0], "Loupe", "too small a screen says so, cut to its width")
        let s = try screen(try Self.sample, "j\nresize 70x20\nj")
        XCTAssertEqual(s.lines.count, 20)
        XCTAssertTrue(s.lines[19].contains("row 3/"), "the status line follows the new size: \(s.lines[19])")
    }

    func testMouseSelectsAndScrolls() throws {
        let s = try screen(try Self.chinook, "click 40 6")
        XCTAssertTrue(s.text.contains("row 4/347"), s.text)
        let wheel = try screen(try Self.chinook, "wheel down 40 6")
        XCTAssertTrue(wheel.text.contains("row 4/347"), wheel.text)
        let types = try screen(try Self.chinook, "click 3 3")
        XCTAssertTrue(types.lines[0].contains("Artist"), types.lines[0])
    }

    func testNoColorUsesAttributesOnly() throws {
        let b = browser(try Self.chinook, theme: Theme.fromEnvironment(["NO_COLOR": "1"]))
        var buffer = Buffer(width: 100, height: 30)
        b.render(into: &buffer)
        XCTAssertTrue(buffer.cells.allSatisfy { $0.style.foreground == .default && $0.style.background == .default })
        XCTAssertTrue(buffer.cells.contains { $0.style.reverse })
    }

    func testTheTerminalReceivesExactlyTheChangedCells() throws {
        // Frames drawn through Terminal's diff onto a test backend equal frames rendered whole,
        // after every step of a session; an unchanged frame sends nothing.
        let b = browser(try Self.chinook)
        let backend = TestBackend(width: 100, height: 30)
        let terminal = Terminal(backend: backend)
        var sent: [Int] = []
        final class Counting: Backend {
            let inner: TestBackend
            var cells = 0
            init(_ inner: TestBackend) { self.inner = inner }
            var size: (width: Int, height: Int) { inner.size }
            func draw(_ changes: [(x: Int, y: Int, cell: Cell)], cursor: (x: Int, y: Int)?) { cells += changes.count; inner.draw(changes, cursor: cursor) }
            func nextEvent(timeout: Int) -> Event? { nil }
            func copyToClipboard(_ text: String) { inner.copyToClipboard(text) }
            func suspend(_ body: () -> Void) { inner.suspend(body) }
        }
        let counting = Counting(backend)
        let diffed = Terminal(backend: counting)
        _ = terminal
        for step in try PlayScript.parse("j j <Tab> <Enter>\n<Backspace> l s\n:Genre where GenreId < 4\n?\nx") {
            if case .event(let e) = step { b.handle(e) }
            counting.cells = 0
            diffed.draw { b.render(into: &$0) }
            sent.append(counting.cells)
            var whole = Buffer(width: 100, height: 30)
            b.render(into: &whole)
            XCTAssertEqual(backend.buffer, whole)
        }
        counting.cells = 0
        diffed.draw { b.render(into: &$0) }
        XCTAssertEqual(counting.cells, 0, "an unchanged frame sends no cell")
        XCTAssertEqual(sent.first, 100 * 30, "the first frame is sent whole")
        XCTAssertTrue(sent.dropFirst().contains { $0 > 0 && $0 < 100 * 30 }, "later frames send only what changed: \(sent)")
    }

    /// Holds background work until the test lets it run.
    final class HeldRunner: BackgroundRunner {
        var held: [@Sendable () -> Void] = []
        func start(_ work: @escaping @Sendable () -> Void) { held.append(work) }
        func release() { let works = held; held = []; for w in works { w() } }
    }

    func testStatementsRunOffTheUIThreadAndCtrlCCancelsThem() throws {
        let b = browser(try Self.chinook)
        let runner = HeldRunner()
        b.background = runner
        var buffer = Buffer(width: 100, height: 30)
        for step in try PlayScript.parse(":Track where Name MATCHES \"(a+)+b\"") { if case .event(let e) = step { b.handle(e) } }
        XCTAssertTrue(b.isBusy)
        b.render(into: &buffer)
        XCTAssertTrue(buffer.lines[29].contains("running") && buffer.lines[29].contains("Ctrl-C cancels"), buffer.lines[29])
        // The browser stays usable while the statement runs; another statement waits its turn.
        b.handle(.key(.escape)); b.handle(.key(.character("j")))
        b.render(into: &buffer)
        XCTAssertTrue(buffer.text.contains("row 2/347"), buffer.text)
        b.run("count Genre")
        XCTAssertEqual(b.message, "queued: 1 statement after the running one (Ctrl-C cancels)")
        b.handle(.key(.control("c")))
        runner.release()
        XCTAssertTrue(b.collect())
        XCTAssertFalse(b.isBusy)
        b.render(into: &buffer)
        XCTAssertTrue(buffer.text.contains("error: cancelled"), buffer.text)
        XCTAssertFalse(b.wantsQuit, "Ctrl-C cancelled the statement, it did not quit")
        b.run("count Genre")
        runner.release()
        b.collect()
        XCTAssertEqual(b.replOutput.last, "25")
    }

    func testOpenLoadsOffTheUIThread() throws {
        let b = browser(try Self.chinook)
        let host = Host()
        b.host = host
        let runner = HeldRunner()
        b.background = runner
        let sample = try Shared.temporaryPath("other.sqlite")
        try SampleGenerator.generate(path: sample, objects: 100, seed: 1)
        b.run(".open \(sample)")
        var buffer = Buffer(width: 100, height: 30)
        b.render(into: &buffer)
        XCTAssertTrue(buffer.lines[29].contains(" · loading … (Ctrl-C cancels) · "), buffer.lines[29])
        XCTAssertTrue(buffer.lines.contains { $0.contains("│Album") && $0.contains("347│") }, "the old store stays on screen while the new one loads: \(buffer.text)")
        runner.release()
        b.collect()
        b.render(into: &buffer)
        XCTAssertTrue(buffer.text.contains("other.sqlite · Persist · 7 types · 100 objects"), buffer.text)
    }

    func testQuitAtTheRoot() throws {
        let b = browser(try Self.chinook)
        _ = b.play(try PlayScript.parse(":Genre\n<Esc>\nq"), width: 100, height: 30)
        XCTAssertFalse(b.wantsQuit, "q first closes the query's view")
        _ = b.play(try PlayScript.parse("q"), width: 100, height: 30)
        XCTAssertTrue(b.wantsQuit)
    }

    /// Statements typed one after another stay at the REPL: a result shows in the records pane
    /// without taking the keyboard (`q`, `s` or letters typed next are text, not browser keys).
    func testTheReplKeepsTheKeyboardAcrossStatements() throws {
        let b = browser(try Self.chinook)
        let counted = b.play(try PlayScript.parse(":Genre where GenreId < 3\n> count Genre"), width: 100, height: 30)
        XCTAssertTrue(counted.text.contains("loupe> count Genre"), counted.text)
        XCTAssertTrue(counted.text.contains("│25 "), counted.text)
        let s = b.play(try PlayScript.parse("> Genre where GenreId < 5 sort by Name\n> q"), width: 100, height: 30)
        XCTAssertFalse(b.wantsQuit, "q typed at the REPL is text")
        XCTAssertTrue(s.text.contains(" › Genre where GenreId < 5 sort by Name › "), s.text)
        XCTAssertTrue(s.text.contains("error: unknown type 'q'"), s.text)
        let left = b.play(try PlayScript.parse("<Esc>\nq"), width: 100, height: 30)
        XCTAssertFalse(b.wantsQuit, "after Esc, q closes the query's view first")
        XCTAssertFalse(left.text.contains("(4)"), left.text)
    }

    func testFramesReadOnlyTheVisibleRowsOfALargeType() throws {
        let builder = GraphBuilder(formatName: "test")
        let t = builder.type("Big")
        let a = builder.attribute("text", of: t)
        for i in 0..<200_000 {
            let ref = builder.addObject(type: t, id: .int(Int64(i)))
            builder.set(.string("value \(i)"), type: t, row: Int(ref.row), attribute: a)
        }
        let b = browser(builder.finish())
        var buffer = Buffer(width: 120, height: 40)
        b.render(into: &buffer)
        XCTAssertLessThanOrEqual(b.rowsReadLastFrame, 40, "a frame reads the rows it shows, not the type")
        b.perform(.goBottom)
        b.render(into: &buffer)
        XCTAssertLessThanOrEqual(b.rowsReadLastFrame, 40)
        XCTAssertTrue(buffer.text.contains("value 199999"), buffer.text)
    }

    /// The executable's host: loads, previews and commits.
    typealias Host = StoreHost

    func testOpenAnotherStoreFromTheRepl() throws {
        let host = Host()
        let b = browser(try Self.chinook)
        b.host = host
        let sample = try Shared.temporaryPath("other.sqlite")
        try SampleGenerator.generate(path: sample, objects: 100, seed: 1)
        let s = b.play(try PlayScript.parse(":.open \(sample)"), width: 100, height: 30)
        XCTAssertTrue(s.text.contains("other.sqlite · Persist · 7 types · 100 objects"), s.text)
        XCTAssertTrue(s.text.contains("Publisher"), s.text)
    }

    func testLineEditingHistoryAndCompletion() throws {
        var e = LineEditor(history: ["Genre", "Album"])
        e.insert("Track where Name")
        e.killWord()
        XCTAssertEqual(e.text, "Track where ")
        e.home(); e.killToEnd()
        XCTAssertEqual(e.text, "")
        e.insert("abc"); e.left(); e.killToStart()
        XCTAssertEqual(e.text, "c")
        e.historyBack(); XCTAssertEqual(e.text, "Album")
        e.historyBack(); XCTAssertEqual(e.text, "Genre")
        e.historyForward(); XCTAssertEqual(e.text, "Album")
        e.historyForward(); XCTAssertEqual(e.text, "")
        let s = try screen(try Self.chinook, "<Colon> T r a <Tab> <Space> w h <Tab> <Space> M i l <Tab>")
        XCTAssertTrue(s.text.contains("loupe> Track where Milliseconds"), s.text)
        let dot = try screen(try Self.chinook, "<Colon> . s c h <Tab>")
        XCTAssertTrue(dot.text.contains("loupe> .schema"), dot.text)
    }
}

extension BrowserTests {
    /// Enter goes one level deeper and q, Backspace and Esc come back one: Enter then q on a
    /// record returns to the list, never quits; q at the root quits; a followed list opens on
    /// its rows.
    func testEnterThenQGoesBackOneLevelAndNeverQuits() throws {
        let graph = try Self.chinook
        for back in [Key.character("q"), .backspace, .escape] {
            let browser = Browser(fileLabel: "Chinook.sqlite", formatName: "SQLite", theme: .monochrome)
            browser.attach(graph)
            if browser.focus == .types { browser.handle(.key(.tab)) }
            XCTAssertTrue(browser.handle(.key(.enter)))
            XCTAssertEqual(browser.focus, .detail)
            XCTAssertTrue(browser.handle(.key(back)), "\(back) on a record's detail goes back, never quits")
            XCTAssertEqual(browser.focus, .records)
            XCTAssertEqual(browser.stack.count, 1)
            if back == .character("q") { XCTAssertFalse(browser.handle(.key(back)), "q at the root quits") }
        }
        let browser = Browser(fileLabel: "Chinook.sqlite", formatName: "SQLite", theme: .monochrome)
        browser.attach(graph)
        if browser.focus == .types { browser.handle(.key(.tab)) }
        for key: Key in [.enter, .enter] { browser.handle(.key(key)) }   // Album #1's detail, then its Artist
        XCTAssertEqual(browser.stack.count, 2)
        XCTAssertEqual(browser.focus, .detail, "one object opens on its detail")
        for key: Key in [.down, .enter] { browser.handle(.key(key)) }   // the artist's albums
        XCTAssertEqual(browser.stack.count, 3)
        XCTAssertEqual(browser.focus, .records, "a list opens on its rows")
        for _ in 0..<2 { XCTAssertTrue(browser.handle(.key(.character("q")))) }
        XCTAssertEqual(browser.stack.count, 1)
    }
}
