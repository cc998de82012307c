import Foundation
import GRDB
import LoupeTestSupport
import XCTest

/// Reading a WAL store while another process writes to it and checkpoints: every read must be one
/// consistent snapshot (never "malformed", never a state no transaction committed), and the reader
/// must not change a byte of the files. The writer is this test executable run again with
/// `LOUPE_TEST_WRITER` set, so that it is a separate process, as an app writing the store would be.
final class ConcurrentWriterTests: XCTestCase {
    /// The writer's side. Every transaction adds an `A` object, a `B` object and the relation row
    /// from one to the other (so a snapshot has every A related), and a checkpoint restarts the
    /// WAL every 40 transactions.
    func testWriterProcess() throws {
        guard let path = ProcessInfo.processInfo.environment["LOUPE_TEST_WRITER"] else { return }
        let seconds = Double(ProcessInfo.processInfo.environment["LOUPE_TEST_SECONDS"] ?? "5") ?? 5
        let queue = try DatabaseQueue(path: path)
        let end = Date().addingTimeInterval(seconds)
        var n = 1_000
        while Date() < end {
            try queue.write { db in
                try db.execute(sql: #"INSERT INTO by_type VALUES (?, 'A', '{"n": 1}'), (?, 'B', '{"n": 2}')"#, arguments: [n, n + 1])
                try db.execute(sql: "INSERT INTO relations VALUES (?, ?, 'r')", arguments: [n, n + 1])
            }
            n += 2
            if n % 80 == 0 { try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") } }
        }
    }

    func testReadsAreConsistentSnapshotsWhileAnotherProcessWrites() throws {
        guard ProcessInfo.processInfo.environment["LOUPE_TEST_WRITER"] == nil else { return }
        let path = try Shared.temporaryPath("live.sqlite")
        let setup = try DatabaseQueue(path: path)
        try setup.writeWithoutTransaction { db in
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: #"CREATE TABLE "by_type" ("id" INTEGER PRIMARY KEY NOT NULL, "type_name" TEXT NOT NULL, "json" TEXT NOT NULL)"#)
            try db.execute(sql: #"CREATE TABLE "relations" ("from_id" INTEGER NOT NULL, "to_id" INTEGER NOT NULL, "relation" TEXT NOT NULL)"#)
        }
        try setup.close()
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0])
        writer.arguments = ["LoupeCLITests.ConcurrentWriterTests/testWriterProcess"]
        writer.environment = ProcessInfo.processInfo.environment.merging(["LOUPE_TEST_WRITER": path, "LOUPE_TEST_SECONDS": "6"]) { $1 }
        writer.standardOutput = FileHandle.nullDevice
        writer.standardError = FileHandle.nullDevice
        try writer.run()
        defer { writer.terminate() }
        Thread.sleep(forTimeInterval: 0.3)
        var runs = 0, failures: [String] = []
        let end = Date().addingTimeInterval(4.5)
        while Date() < end {
            // Persist: every A has its relation; the count of A and of A with one relation agree.
            let persist = try LoupeBinary.run(["query", path, "A select r.@count"], timeout: 30)
            if persist.status != 0 {
                failures.append(persist.stderr)
            } else if persist.stdout.split(separator: "\n").dropFirst(2).contains(where: { $0 != "1" }) {
                failures.append("torn: an A without its relation")
            }
            runs += 1
        }
        writer.waitUntilExit()
        XCTAssertGreaterThan(runs, 5)
        XCTAssertEqual(failures, [], "\(failures.count) of \(runs) reads failed or were torn")
    }
}
