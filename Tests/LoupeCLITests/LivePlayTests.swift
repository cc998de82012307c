import Foundation
import GRDB
import LoupeTestSupport
import XCTest

/// `loupe FILE --play SCRIPT` with a `wait` step: the executable looks at the store's file while it
/// waits, as the interactive browser does, so another process's commit meanwhile is on the last
/// screen — refreshed in place, marked and counted on the status line.
final class LivePlayTests: XCTestCase {
    /// The other process's connection waits for Loupe's reads to end, as an app's would
    /// (a commit needs the file to itself for a moment in rollback-journal mode).
    static var writer: Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        return configuration
    }

    func testACommitDuringAWaitIsOnTheLastScreen() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let script = try Shared.temporaryPath("live.play"), marker = script + ".loaded", screen = script + ".txt"
        // `.types` into a file of its own says the store is loaded: the commit comes after it.
        try ":.once \(marker)\n:.types\n<Esc>\n<Tab>\nwait 3\n".write(toFile: script, atomically: true, encoding: .utf8)
        let loupe = try LoupeBinary.start([path, "--play", script, "--size", "140x30", "--output", screen])
        defer { if loupe.isRunning { loupe.terminate() } }
        let started = Date()
        while !FileManager.default.fileExists(atPath: marker), Date().timeIntervalSince(started) < 30 { Thread.sleep(forTimeInterval: 0.05) }
        XCTAssertTrue(FileManager.default.fileExists(atPath: marker), "the browser never loaded the store")
        let queue = try DatabaseQueue(path: path, configuration: Self.writer)
        try queue.write { try $0.execute(sql: "UPDATE Album SET Title = 'Live title' WHERE AlbumId = 2; INSERT INTO Album VALUES (348, 'Brand new', 1)") }
        try queue.close()
        loupe.waitUntilExit()
        XCTAssertEqual(loupe.terminationStatus, 0)
        let text = try String(contentsOfFile: screen, encoding: .utf8)
        XCTAssertTrue(text.contains("live · 1 commit"), text)
        XCTAssertTrue(text.contains("commit 1 from another process: +1 ~1 −0"), text)
        XCTAssertTrue(text.contains("Live title") && text.range(of: "│Album +348│", options: .regularExpression) != nil, text)
        XCTAssertEqual(try PlayScriptCheck.refusal("wait 61"), "play script line 1: use wait SECONDS (0 to 60)")
    }

    /// Paged mode (`--paged`) is live too: the store is opened again, the visible rows and the
    /// types' counts read again, and what the commit did to the rows on screen counted.
    func testPagedModeReadsTheVisibleRowsAndCountsAgain() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let script = try Shared.temporaryPath("live-paged.play"), screen = script + ".txt"
        try "<Tab>\nwait 3\n".write(toFile: script, atomically: true, encoding: .utf8)
        let loupe = try LoupeBinary.start([path, "--paged", "--play", script, "--size", "140x30", "--output", screen])
        defer { if loupe.isRunning { loupe.terminate() } }
        // Paged mode opens the file at once and watches it from then on (paged mode has no `.once`
        // to say so): the commit comes once the process holds the file open.
        let started = Date()
        func holdsFile() -> Bool {
            let fds = "/proc/\(loupe.processIdentifier)/fd"
            return ((try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []).contains {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + $0)) == path
            }
        }
        while !holdsFile(), Date().timeIntervalSince(started) < 30 { Thread.sleep(forTimeInterval: 0.02) }
        Thread.sleep(forTimeInterval: 0.3)
        let queue = try DatabaseQueue(path: path, configuration: Self.writer)
        try queue.write { try $0.execute(sql: "UPDATE Album SET Title = 'Paged live' WHERE AlbumId = 2; INSERT INTO Album VALUES (348, 'Brand new', 1)") }
        try queue.close()
        loupe.waitUntilExit()
        let text = try String(contentsOfFile: screen, encoding: .utf8)
        XCTAssertTrue(text.contains("live · 1 commit"), text)
        XCTAssertTrue(text.contains("commit 1 from another process: +0 ~1 −0 on screen"), text)
        XCTAssertTrue(text.contains("Paged live") && text.range(of: "│Album +348│", options: .regularExpression) != nil, text)
    }
}

/// What `loupe --play` says of a script it refuses.
enum PlayScriptCheck {
    static func refusal(_ script: String) throws -> String {
        let path = try Shared.temporaryPath("bad.play")
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        let run = try LoupeBinary.run([try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite"), "--play", path])
        return run.stderr.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "Error: ", with: "")
    }
}
