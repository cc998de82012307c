import Foundation
import GRDB
import LoupeTestSupport
import XCTest

/// `loupe watch FILE`: a writer commits inserts, updates and deletes while it runs (a Persist
/// store and a relational file, in WAL and rollback-journal mode); it prints exactly the committed
/// changes, each within a second, and filters by type and `--where`.
final class WatchTests: XCTestCase {
    func testPrintsEachCommitOfAPersistStoreInWALMode() throws {
        let path = try Shared.copyFromCheckout("sample-data/library.sqlite")
        try DatabaseQueue(path: path).writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = WAL") }
        let lines = try watch(path, ["--format", "ndjson"], commits: [
            "UPDATE by_type SET json = json_set(json, '$.pages', 5) WHERE id = 200",
            "INSERT INTO by_type VALUES (5000, 'Tag', '{\"label\": \"x\"}')",
            "DELETE FROM relations WHERE from_id = 1900; DELETE FROM by_type WHERE id = 1900",
        ])
        let changes = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        XCTAssertEqual(changes.map { $0["commit"] as! Int }, [1, 2, 3])
        XCTAssertEqual(changes.map { "\($0["change"]!) \($0["type"]!) \($0["key"]!)" }, ["changed Book 200", "added Tag 5000", "removed Loan 1900"])
        XCTAssertEqual(((changes[0]["attributes"] as? [String: Any])?["pages"] as? [String: Any])?["b"] as? Int, 5)
    }

    func testRelationalFileInRollbackModeByTypeAndWhere() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let lines = try watch(path, ["Track", "--where", "Milliseconds > 1000000"], commits: [
            "UPDATE Track SET Milliseconds = 2000000 WHERE TrackId = 1",            // now matches
            "UPDATE Track SET Name = 'quiet' WHERE TrackId = 2; UPDATE Genre SET Name = 'x' WHERE GenreId = 1",   // neither shown
            "UPDATE Track SET UnitPrice = 1.99 WHERE TrackId = 1",
        ], expectedCommits: 2)
        XCTAssertEqual(lines.count, 2, lines.description)
        XCTAssertTrue(lines[0].hasSuffix(" [1] ~ Track #1  Milliseconds: 343719 → 2000000"), lines[0])
        XCTAssertTrue(lines[1].hasSuffix(" [2] ~ Track #1  UnitPrice: 0.99 → 1.99"), lines[1])
        // Trouble: one line, no wait.
        let noType = try LoupeBinary.run(["watch", path, "--where", "x > 1"])
        XCTAssertEqual(noType.status, 64)
        let bad = try LoupeBinary.run(["watch", path, "Track", "--where", "Nmae == 1", "--commits", "1"])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.stderr.contains("Nmae"), bad.stderr)
    }

    /// A PostgreSQL database: its server's write position, read once a second, says when to
    /// read it again; each commit prints within two seconds, and the URL's password never does.
    func testPostgresCommitsArePrintedAndThePasswordIsNot() throws {
        let url = try PostgresServer.freshDatabase("watched")
        XCTAssertEqual(try PostgresServer.psql(url, """
            CREATE TABLE genre (id int PRIMARY KEY, name text NOT NULL);
            INSERT INTO genre VALUES (1, 'Rock'), (2, 'Jazz');
            """), 0)
        let withPassword = url.replacingOccurrences(of: "postgresql://postgres@", with: "postgresql://postgres:s3cr3t-word@")
            .replacingOccurrences(of: "postgres://postgres@", with: "postgres://postgres:s3cr3t-word@")
        var said = ""
        let lines = try watch(withPassword, [], commits: [
            "UPDATE genre SET name = 'Jazz & Blues' WHERE id = 2",
            "INSERT INTO genre VALUES (3, 'Polka')",
            "DELETE FROM genre WHERE id = 1",
        ], within: 2.5, execute: { XCTAssertEqual(try PostgresServer.psql(url, $0), 0) }, stderr: { said = $0 })
        XCTAssertEqual(lines.count, 3, lines.description)
        XCTAssertTrue(lines[0].hasSuffix(#" [1] ~ genre #2  name: "Jazz" → "Jazz & Blues""#), lines.description)
        XCTAssertTrue(lines[1].hasSuffix(#" [2] + genre #3  id: 3; name: "Polka""#), lines.description)
        XCTAssertTrue(lines[2].hasSuffix(#" [3] − genre #1  id: 1; name: "Rock""#), lines.description)
        XCTAssertTrue(said.hasPrefix("watching postgres"), said)
        XCTAssertFalse(said.contains("s3cr3t"), said)
    }

    /// Runs `loupe watch path arguments`, commits each statement (a transaction apiece, apart
    /// enough for watch to see each), and returns its output lines once it has seen
    /// `expectedCommits` commits that changed what it watches. When every statement is expected
    /// to print, each must print within a second of its commit.
    private func watch(_ path: String, _ arguments: [String], commits statements: [String], expectedCommits: Int? = nil,
                       within seconds: Double = 1.0, execute: ((String) throws -> Void)? = nil, stderr: ((String) -> Void)? = nil) throws -> [String] {
        let process = Process()
        process.executableURL = LoupeBinary.url
        let expected = expectedCommits ?? statements.count
        process.arguments = ["watch", path] + arguments + ["--commits", "\(expected)", "--interval", "0.1"]
        let out = try Shared.temporaryPath("watch.out"), err = out + ".err"
        for file in [out, err] { XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: nil)) }
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let started = Date()
        while !((try? String(contentsOfFile: err, encoding: .utf8)) ?? "").contains("watching") {
            XCTAssertLessThan(Date().timeIntervalSince(started), 30, "watch did not start")
            guard Date().timeIntervalSince(started) < 30 else { return [] }
            Thread.sleep(forTimeInterval: 0.05)
        }
        stderr?((try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
        let queue = execute == nil ? try DatabaseQueue(path: path) : nil
        for (i, statement) in statements.enumerated() {
            let lines = ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n").count
            if let execute { try execute(statement) } else { try queue?.write { try $0.execute(sql: statement) } }
            // Each commit is printed within `seconds` (when it changes what is watched).
            let committed = Date()
            while Date().timeIntervalSince(committed) < seconds,
                  ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n").count == lines { Thread.sleep(forTimeInterval: 0.02) }
            if expectedCommits == nil {
                XCTAssertLessThan(Date().timeIntervalSince(committed), seconds, "commit \(i + 1) printed within \(seconds) s")
            }
            if i == statements.count - 1 { break }
            Thread.sleep(forTimeInterval: 0.3)
        }
        try queue?.close()
        while process.isRunning && Date().timeIntervalSince(started) < 30 { Thread.sleep(forTimeInterval: 0.05) }
        XCTAssertFalse(process.isRunning, "watch stops after --commits")
        XCTAssertEqual(process.terminationStatus, 0, (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
        return ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }
}
