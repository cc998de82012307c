import Foundation
import LoupeTestSupport
import XCTest

/// The real binary on a real (tmux) terminal: open, navigate, follow a relation and a backlink,
/// run a query, open help, resize, quit; the database file unchanged afterwards.
final class TmuxTests: XCTestCase {
    private var socket = "loupe-test-\(UUID().uuidString.prefix(8))"

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") || which("tmux") != nil else {
            throw XCTSkip("tmux is not installed")
        }
    }

    override func tearDown() { _ = try? tmux(["kill-server"]) }

    private func which(_ tool: String) -> String? {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/\(tool)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs tmux on the test's own server through `system(3)`, output to a file. (Foundation's
    /// `Process` waits on a descriptor that the tmux server inherits and keeps, so it never returns
    /// from the command that starts the server.)
    @discardableResult
    private func tmux(_ arguments: [String], output: Bool = false) throws -> String {
        let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent("\(socket)-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: outputFile) }
        let quoted = (["tmux", "-L", socket] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        _ = system(quoted.joined(separator: " ") + " </dev/null >'\(outputFile.path)' 2>/dev/null")
        return output ? ((try? String(contentsOf: outputFile, encoding: .utf8)) ?? "") : ""
    }

    private func screen() throws -> String { try tmux(["capture-pane", "-t", "main", "-p"], output: true) }

    /// Waits until the screen shows `text` (or fails after `seconds`).
    @discardableResult
    private func waitFor(_ text: String, seconds: Double = 10, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        var last = ""
        while Date() < deadline {
            last = try screen()
            if last.contains(text) { return last }
            Thread.sleep(forTimeInterval: 0.1)
        }
        XCTFail("screen never showed \(text):\n\(last)", file: file, line: line)
        return last
    }

    private func keys(_ keys: String...) throws { try tmux(["send-keys", "-t", "main"] + keys) }

    private func start(_ path: String, width: Int = 120, height: Int = 35) throws {
        let command = "TERM=tmux-256color \(CLITests.binary.path) '\(path)'; echo LOUPE-EXIT=$?; sleep 60"
        try tmux(["new-session", "-d", "-s", "main", "-x", "\(width)", "-y", "\(height)", command])
    }

    func testChinookNavigateQueryHelpResizeQuit() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let before = FileManager.default.contents(atPath: path)
        try start(path)
        try waitFor("PlaylistTrack 8715")
        try waitFor("Album (347)")
        // Select Album #3, follow its Artist relation, then the artist's backlink to its albums.
        try keys("j", "j")
        try waitFor("Album › Album #3")
        try keys("Tab", "Enter")
        try waitFor("Album #3 › Artist › Artist #2")
        try keys("Enter")
        let backlink = try waitFor("@links Album.Artist")
        XCTAssertTrue(backlink.contains("Balls to the Wall"), backlink)
        // Back along the stack.
        try keys("BSpace", "BSpace")
        try waitFor("(347)")
        // A query at ':'.
        try keys(":", "Track where Album.Artist.Name == \"AC/DC\"", "Enter")
        try waitFor("18 objects")
        try keys("Escape")
        // Help, then any key closes it.
        try keys("?")
        try waitFor("show-help")
        try keys("x")
        // Resize: the status line follows the new size.
        try tmux(["resize-window", "-t", "main", "-x", "90", "-y", "25"])
        let resized = try waitFor("row 1/18")
        XCTAssertTrue(resized.split(separator: "\n").allSatisfy { $0.count <= 90 }, resized)
        // q closes the query view, then quits at the root; the terminal is given back.
        try keys("q")
        try waitFor("(347)")
        try keys("q")
        try waitFor("LOUPE-EXIT=0")
        XCTAssertEqual(FileManager.default.contents(atPath: path), before, "browsing never writes to the file")
    }

    func testBundledSampleOpensAndCtrlCRestoresTheTerminal() throws {
        let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("sample-data/library.sqlite").path
        let copy = try Shared.temporaryPath()
        try FileManager.default.copyItem(atPath: sample, toPath: copy)
        try start(copy, width: 100, height: 30)
        try waitFor("Publisher")
        try waitFor("Persist")
        try keys("C-c")
        try waitFor("LOUPE-EXIT=0")
    }
}
