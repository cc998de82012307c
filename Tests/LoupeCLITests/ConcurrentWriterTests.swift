import Foundation
import GRDB
import LoupeTestSupport
import XCTest

/// Reading a WAL store while another process writes to it and checkpoints: every read must be one
/// consistent snapshot (never "malformed", never a state no transaction committed), and the reader
/// must not change a byte of the files. The writer is a separate process (Python's sqlite3), as an
/// app writing the store would be.
final class ConcurrentWriterTests: XCTestCase {
    /// The writer: every transaction adds an `A` object, a `B` object and the relation row from one
    /// to the other (so a snapshot has every A related), and a checkpoint restarts the WAL every
    /// 40 transactions, for `seconds`.
    static let writer = """
        import sqlite3, sys, time
        db = sqlite3.connect(sys.argv[1], isolation_level=None)
        end, n = time.time() + float(sys.argv[2]), 1000
        while time.time() < end:
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT INTO by_type VALUES (?, 'A', '{\\"n\\": 1}'), (?, 'B', '{\\"n\\": 2}')", (n, n + 1))
            db.execute("INSERT INTO relations VALUES (?, ?, 'r')", (n, n + 1))
            db.execute("COMMIT")
            n += 2
            if n % 80 == 0: db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        """

    func testReadsAreConsistentSnapshotsWhileAnotherProcessWrites() throws {
        let path = try Shared.temporaryPath("live.sqlite")
        let setup = try DatabaseQueue(path: path)
        try setup.writeWithoutTransaction { db in
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: #"CREATE TABLE "by_type" ("id" INTEGER PRIMARY KEY NOT NULL, "type_name" TEXT NOT NULL, "json" TEXT NOT NULL)"#)
            try db.execute(sql: #"CREATE TABLE "relations" ("from_id" INTEGER NOT NULL, "to_id" INTEGER NOT NULL, "relation" TEXT NOT NULL)"#)
        }
        try setup.close()
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        writer.arguments = ["python3", "-c", Self.writer, path, "6"]
        writer.standardOutput = FileHandle.nullDevice
        let writerErrors = Pipe()
        writer.standardError = writerErrors
        try writer.run()
        defer { if writer.isRunning { writer.terminate() } }
        Thread.sleep(forTimeInterval: 0.3)
        var runs = 0, failures: [String] = [], counts = Set<Int>()
        let end = Date().addingTimeInterval(4.5)
        while Date() < end {
            // Persist: every A has its relation; the count of A and of A with one relation agree.
            let persist = try LoupeBinary.run(["query", path, "A select r.@count"], timeout: 30)
            if persist.status != 0 {
                failures.append(persist.stderr)
            } else {
                let rows = persist.stdout.split(separator: "\n").dropFirst(2)
                if rows.contains(where: { $0 != "1" }) { failures.append("torn: an A without its relation") }
                counts.insert(rows.count)
            }
            runs += 1
        }
        writer.waitUntilExit()
        XCTAssertEqual(writer.terminationStatus, 0, String(decoding: writerErrors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
        XCTAssertGreaterThan(runs, 5)
        XCTAssertEqual(failures, [], "\(failures.count) of \(runs) reads failed or were torn")
        // The writer wrote while Loupe read: the reads saw the store grow, and it holds what was written.
        XCTAssertGreaterThan(counts.count, 2, "the reads saw \(counts.sorted()) objects: the writer did not write while Loupe read")
        let written = try DatabaseQueue(path: path).read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM relations") ?? 0 }
        XCTAssertGreaterThan(written, counts.max() ?? 0)
    }
}
