import GRDB
import LoupeBrowser
import LoupeHost
import LoupeTestSupport
import TerminalKit
import XCTest

/// Live mode: another process commits to the loaded file; the browser reads it again in place,
/// says what the commit added, changed and deleted, counts the commits on the status line, and
/// with edits pending reads nothing (they are checked at commit).
final class LiveBrowserTests: XCTestCase {
    /// A browser on a private copy of Chinook, loaded through the executable's host, on `Album`.
    private func chinook() throws -> (Browser, String, StoreHost) {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let host = StoreHost()
        let graph = try host.load(path: path, progress: nil)
        let b = Browser(fileLabel: "Chinook_Sqlite.sqlite", formatName: graph.formatName, theme: .color)
        b.host = host
        b.storePath = path
        b.attach(graph)
        return (b, path, host)
    }

    private func commit(_ path: String, _ sql: String) throws {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false   // as an app's own writes may
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.write { try $0.execute(sql: sql) }
        try queue.close()
    }

    func testAnotherProcessesCommitIsShownInPlaceAndMarked() throws {
        let (b, path, host) = try chinook()
        let before = b.play(try PlayScript.parse("<Tab>"), width: 110, height: 24)   // Album #1 selected
        XCTAssertTrue(before.text.contains("Album          347"), before.text)
        try commit(path, "UPDATE Album SET Title = 'Live title' WHERE AlbumId = 2; INSERT INTO Album VALUES (348, 'Brand new', 1); DELETE FROM Album WHERE AlbumId = 1")
        b.storeChangedOnDisk()
        let after = b.play([], width: 110, height: 24)
        XCTAssertTrue(after.text.contains("live · 1 commit"), after.text)
        XCTAssertTrue(after.text.contains("commit 1 from another process: +1 ~1 −1"), after.text)
        XCTAssertTrue(after.text.contains("Album          347"), "the types pane counts the new state (−1 +1): \(after.text)")
        XCTAssertTrue(after.text.contains("Live title"), after.text)
        XCTAssertFalse(after.text.contains("For Those About To Rock"), "the deleted album is gone")
        // The selected object was deleted: the selection moves to the next (Album #2, row 1).
        XCTAssertTrue(after.text.contains("row 1/347") && after.text.contains("Album #2"), after.text)
        // A commit that changes nothing shown (a checkpoint) counts nothing.
        b.storeChangedOnDisk()
        XCTAssertTrue(b.play([], width: 110, height: 24).text.contains("live · 1 commit"))
        withExtendedLifetime(host) {}
    }

    func testPendingEditsHoldTheViewsBack() throws {
        let (b, path, host) = try chinook()
        b.run("update Album where AlbumId == 3 set Title = \"Mine\"")
        try commit(path, "UPDATE Album SET Title = 'Theirs' WHERE AlbumId = 4")
        b.storeChangedOnDisk()
        let screen = b.play(try PlayScript.parse("<Tab>"), width: 140, height: 24)
        XCTAssertTrue(screen.text.contains("(1 not shown: edits pending)"), screen.text)
        XCTAssertTrue(screen.text.contains("Mine"), "the pending edit is kept: \(screen.text)")
        XCTAssertFalse(screen.text.contains("Theirs"), "nothing was read again under the pending edits")
        withExtendedLifetime(host) {}
    }
}
