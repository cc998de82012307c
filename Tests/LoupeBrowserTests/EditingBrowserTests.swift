import Foundation
import GRDB
import LoupeBrowser
import LoupeHost
import LoupeModel
import LoupeStore
import LoupeTestSupport
import TerminalKit
import XCTest

/// Editing in the browser, by keys: `e` on a cell, `d` on a row, the relation picker, `a`, `U`/`R`,
/// `Ctrl-S` (preview, then Enter commits) and the quit guard, screen by screen.
extension BrowserTests {
    /// Chinook's Playlist type, row 2 (`Movies`, no tracks) marked for deletion and row 3's name
    /// changed to `Renamed`.
    static let playlistEdits = """
        <S-Tab> j j j j j j j j <Tab>
        j d
        j l e <C-u>
        Renamed
        <Enter>
        """

    /// A browser on a private copy of Chinook, with the executable's host (loads and commits).
    /// The browser holds its host weakly (the executable owns it): keep `host` alive meanwhile.
    func chinookOnDisk(theme: Theme = .color) throws -> (Browser, String, StoreHost) {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let host = StoreHost()
        let graph = try host.load(path: path, progress: nil)
        let b = Browser(fileLabel: "Chinook_Sqlite.sqlite", formatName: graph.formatName, theme: theme)
        b.host = host
        b.attach(graph)
        return (b, path, host)
    }

    private func line(_ screen: Buffer, containing needle: String) -> String {
        screen.text.split(separator: "\n").first { $0.contains(needle) }.map(String.init) ?? ""
    }

    /// The records pane's part of the first line containing `needle` (after the types pane):
    /// its first character is the row's marker.
    private func recordsRow(_ screen: Buffer, containing needle: String) -> String {
        let row = line(screen, containing: needle)
        guard let range = row.range(of: "││") else { return row }
        return String(row[range.upperBound...])
    }

    func testEditsAreMarkedCountedAndUndoneInTheBrowser() throws {
        let b = browser(try Self.chinook)
        let s = b.play(try PlayScript.parse(Self.playlistEdits), width: 100, height: 30)
        XCTAssertTrue(recordsRow(s, containing: "2 Movies").hasPrefix("-"), "a row marked for deletion: \(s.text)")
        XCTAssertTrue(recordsRow(s, containing: "3 Renamed").hasPrefix("~"), "a changed row: \(s.text)")
        XCTAssertTrue(s.text.contains("pending +0 ~1 -1"), s.text)
        XCTAssertTrue(s.text.contains("│Playlist        17│"), "the types pane counts what the commit would leave: \(s.text)")
        try assertGolden(s, "chinook-pending")

        let undone = b.play(try PlayScript.parse("U"), width: 100, height: 30)
        XCTAssertTrue(undone.text.contains("pending +0 ~0 -1"), undone.text)
        XCTAssertTrue(recordsRow(undone, containing: "3 TV Shows").hasPrefix(" "), undone.text)
        let redone = b.play(try PlayScript.parse("R"), width: 100, height: 30)
        XCTAssertTrue(redone.text.contains("pending +0 ~1 -1"), redone.text)

        // Queries see the staged values, as in a transaction.
        // (Playlist 3 was one of two "TV Shows"; the REPL pane's line after the statement is its answer.)
        func answer(_ statement: String) throws -> String? {
            let lines = b.play(try PlayScript.parse(":" + statement), width: 100, height: 30).text.split(separator: "\n").map(String.init)
            guard let echoed = lines.lastIndex(where: { $0.contains("loupe> " + statement) }), echoed + 1 < lines.count else { return nil }
            return lines[echoed + 1].trimmingCharacters(in: CharacterSet(charactersIn: "│ "))
        }
        XCTAssertEqual(try answer("count Playlist where Name == \"Renamed\""), "1")
        XCTAssertEqual(try answer("count Playlist where Name == \"TV Shows\""), "1", "the staged name, not the stored one")

        // Without colour, the markers alone tell the rows apart.
        let mono = Browser(fileLabel: "test.sqlite", formatName: "SQLite", theme: .monochrome)
        mono.attach(try Self.chinook)
        let plain = mono.play(try PlayScript.parse(Self.playlistEdits), width: 100, height: 30)
        XCTAssertTrue(recordsRow(plain, containing: "2 Movies").hasPrefix("-"), plain.text)
    }

    func testAValueOfTheWrongKindIsRefusedAndNothingIsStaged() throws {
        let b = browser(try Self.chinook)
        // Track's Milliseconds is an INTEGER column.
        let s = b.play(try PlayScript.parse("<S-Tab> G <Tab>\nl l l l l l e <C-u>\nlong\n<Enter>"), width: 120, height: 30)
        XCTAssertTrue(s.text.contains("no pending changes"), s.text)
        XCTAssertTrue(s.text.contains("refused: the text \"long\" cannot go into Track.Milliseconds (INTEGER)"), s.text)
        let escaped = b.play(try PlayScript.parse("<Esc>"), width: 120, height: 30)
        XCTAssertFalse(escaped.text.contains("Edit (Enter stages"), "Esc closes the editor: \(escaped.text)")
    }

    func testThePickerSetsAToOneRelationAndAddOpensAForm() throws {
        let b = browser(try Self.chinook)
        let picker = b.play(try PlayScript.parse("<Tab> e\nMetal"), width: 100, height: 24)
        XCTAssertTrue(picker.text.contains("Album #1.Artist — Enter sets"), picker.text)
        XCTAssertTrue(picker.text.contains("Artist #50 Metallica"), picker.text)
        XCTAssertFalse(picker.text.contains("Artist #1 "), "the filter narrows the list: \(picker.text)")
        // Typing a name and Enter picks the first match (fzf's rule), never "(none)".
        let set = b.play(try PlayScript.parse("<Enter>"), width: 100, height: 24)
        XCTAssertTrue(recordsRow(set, containing: "For Those About").hasPrefix("~"), set.text)
        XCTAssertTrue(set.text.contains("→ Artist  Artist #50 Metall"), set.text)
        XCTAssertTrue(set.text.contains("pending +0 ~1 -0"), set.text)

        let added = browser(try Self.chinook).play(try PlayScript.parse("<S-Tab> j j j j <Tab> a"), width: 100, height: 24)
        XCTAssertTrue(added.text.contains("New Genre — Tab next · Ctrl-P picks"), added.text)
        XCTAssertTrue(added.lines.contains { $0.contains("│Name ") && $0.contains("nvarchar(120)") }, added.text)
    }

    func testCommitFromThePreviewWritesTheFile() throws {
        let (b, path, host) = try chinookOnDisk()
        defer { withExtendedLifetime(host) {} }
        _ = b.play(try PlayScript.parse(Self.playlistEdits), width: 100, height: 30)
        let preview = b.play(try PlayScript.parse("<C-s>"), width: 100, height: 30)
        XCTAssertTrue(preview.text.contains("Commit — pending: 0 added, 1 changed, 1 deleted"), preview.text)
        XCTAssertTrue(preview.text.contains("Enter writes, in one transaction:"), "the preview names the key that commits: \(preview.text)")
        XCTAssertTrue(preview.text.contains(#"UPDATE "Playlist" SET "Name" = 'Renamed' WHERE "PlaylistId" = 3;"#), preview.text)
        XCTAssertTrue(preview.text.contains(#"DELETE FROM "Playlist" WHERE "PlaylistId" = 2;"#), preview.text)
        let committed = b.play(try PlayScript.parse("<Enter>"), width: 100, height: 30)
        XCTAssertTrue(committed.text.contains("no pending changes"), committed.text)
        XCTAssertTrue(committed.text.contains("committed"), committed.text)
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        let rows = try queue.read { try Row.fetchAll($0, sql: "SELECT PlaylistId, Name FROM Playlist WHERE PlaylistId IN (2, 3)") }
        XCTAssertEqual(rows.map { "\($0[0] as Int) \($0[1] as String)" }, ["3 Renamed"])
        XCTAssertTrue(recordsRow(committed, containing: "3 Renamed").hasPrefix("         3 Renamed"), "after the commit the row is plain, no marker column: \(committed.text)")
        _ = b.play(try PlayScript.parse("q"), width: 100, height: 30)
        XCTAssertTrue(b.wantsQuit, "nothing pending: q quits at once")
    }

    func testTheQuitGuardAsksAndDiscardingLeavesTheFileAsItWas() throws {
        let (b, path, host) = try chinookOnDisk()
        defer { withExtendedLifetime(host) {} }
        let before = Shared.fingerprint(path)
        _ = b.play(try PlayScript.parse(Self.playlistEdits), width: 100, height: 30)
        let asked = b.play(try PlayScript.parse("q"), width: 100, height: 30)
        XCTAssertTrue(asked.text.contains("Quit with changes that are not written?"), asked.text)
        let summary = try XCTUnwrap(b.session?.pendingSummary)
        XCTAssertTrue(asked.text.contains(" \(summary) "), "the quit guard's title, the pending summary, is whole: \(asked.text)")
        XCTAssertFalse(b.wantsQuit)
        let stayed = b.play(try PlayScript.parse("<Esc>"), width: 100, height: 30)
        XCTAssertFalse(stayed.text.contains("Quit with changes"), stayed.text)
        XCTAssertTrue(stayed.text.contains("pending +0 ~1 -1"), stayed.text)
        XCTAssertFalse(b.wantsQuit)
        // Ctrl-C asks the same question.
        let interrupted = b.play(try PlayScript.parse("<C-c>"), width: 100, height: 30)
        XCTAssertTrue(interrupted.text.contains("Quit with changes that are not written?"), interrupted.text)
        _ = b.play(try PlayScript.parse("d"), width: 100, height: 30)
        XCTAssertTrue(b.wantsQuit)
        XCTAssertEqual(Shared.fingerprint(path), before, "discarding writes nothing")
    }

    func testQuitGuardCanCommitThenQuit() throws {
        let (b, path, host) = try chinookOnDisk()
        defer { withExtendedLifetime(host) {} }
        _ = b.play(try PlayScript.parse(Self.playlistEdits + "\nq c"), width: 100, height: 30)
        XCTAssertTrue(b.wantsQuit)
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        XCTAssertEqual(try queue.read { try String.fetchOne($0, sql: "SELECT Name FROM Playlist WHERE PlaylistId = 3") }, "Renamed")
    }
}
