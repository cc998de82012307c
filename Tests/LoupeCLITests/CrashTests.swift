import Foundation
import GRDB
import LoupeTestSupport
import XCTest

/// `kill -9` at any moment of a commit leaves a file that passes `PRAGMA integrity_check` and holds
/// all of the commit or none of it. A child `loupe repl` stages 20,001 updates, an insert and 100
/// deletes and commits them; it is killed at a random moment — half the runs at a random time in
/// the whole run, half at a random moment of the commit after SQLite's journal (or WAL) appears.
/// Runs alternate between rollback-journal and WAL files. `LOUPE_CRASH_RUNS` sets the number of
/// runs (16 here, sized for CI; `scripts/crash-test.sh 500` runs hundreds).
final class CrashTests: XCTestCase {
    private static let rows = 20_000
    private static let script = """
        update item set v = v + 1
        insert item { v: -1, tag: "new" }
        delete item where id <= 100
        .commit

        """

    /// The two states a commit may leave: before (nothing) and after (everything).
    private enum Outcome: Equatable { case none, all }

    private func makeStore(_ path: String, wal: Bool) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            if wal { _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") }
            try db.execute(sql: "CREATE TABLE item(id INTEGER PRIMARY KEY, v INTEGER NOT NULL, tag TEXT)")
            try db.execute(sql: """
                WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < \(Self.rows))
                INSERT INTO item SELECT i, 0, 'tag' || i FROM c
                """)
        }
        try queue.close()
    }

    /// Opens the file as the next program would (recovering a hot journal or WAL), checks its
    /// integrity, and says which state it holds; any other state fails the test.
    private func outcome(_ path: String, run: Int) throws -> Outcome? {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db -> Outcome? in
            let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
            XCTAssertEqual(integrity, ["ok"], "run \(run): integrity")
            let row = try Row.fetchOne(db, sql: "SELECT COUNT(*), SUM(v), MIN(id), SUM(tag = 'new') FROM item")!
            let (count, sum, minID, added): (Int, Int, Int, Int) = (row[0], row[1], row[2], row[3])
            if count == Self.rows, sum == 0, minID == 1, added == 0 { return Outcome.none }
            if count == Self.rows - 100 + 1, sum == Self.rows - 100 - 1, minID == 101, added == 1 { return .all }
            XCTFail("run \(run): a state no commit made: count \(count), sum \(sum), min id \(minID), added \(added)")
            return nil
        }
    }

    func testKillDuringCommitLeavesAllOrNothing() throws {
        let runs = Int(ProcessInfo.processInfo.environment["LOUPE_CRASH_RUNS"] ?? "") ?? 16
        let folder = URL(fileURLWithPath: try Shared.temporaryPath()).deletingLastPathComponent()
        var masters: [Bool: String] = [:]
        for wal in [false, true] {
            let path = folder.appendingPathComponent(wal ? "master-wal.sqlite" : "master.sqlite").path
            try makeStore(path, wal: wal)
            masters[wal] = path
        }
        // One run to the end in each mode: the "all" state, how long a run and its commit take.
        let path = folder.appendingPathComponent("store.sqlite").path
        var whole = 0.0, commit = 0.0
        for wal in [false, true] {
            let started = Date()
            try copyStore(masters[wal]!, to: path)
            let full = try LoupeBinary.run(["repl", path], stdin: Self.script)
            XCTAssertEqual(full.status, 0, full.description)
            XCTAssertEqual(try outcome(path, run: 0), .all, "a commit that runs to the end writes everything (\(wal ? "WAL" : "rollback journal"))")
            whole = max(whole, Date().timeIntervalSince(started))
            // "committed: … (20201 statements, 0.689 s)"
            if let seconds = full.stdout.split(separator: " ").last.flatMap({ Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
                commit = max(commit, seconds)
            }
        }
        commit = max(commit, 0.05)

        var generator = SystemRandomNumberGenerator()
        var seen: [Outcome: Int] = [:], killedInsideTheWrite = 0
        for run in 1...runs {
            let wal = run % 2 == 0
            try copyStore(masters[wal]!, to: path)
            let process = try LoupeBinary.start(["repl", path], stdin: Self.script)
            if run % 4 < 2 {
                // Wait for the write to begin (the journal or WAL appears), then a random moment
                // of the commit's length.
                let marker = path + (wal ? "-wal" : "-journal")
                let deadline = Date().addingTimeInterval(whole * 3 + 5)
                while process.isRunning, Date() < deadline, !FileManager.default.fileExists(atPath: marker) { usleep(200) }
                if process.isRunning { killedInsideTheWrite += 1 }
                usleep(UInt32(Double.random(in: 0...(commit * 1.2), using: &generator) * 1_000_000))
            } else {
                usleep(UInt32(Double.random(in: 0...(whole * 1.1), using: &generator) * 1_000_000))
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if let state = try outcome(path, run: run) { seen[state, default: 0] += 1 }
        }
        print("crash test: \(runs) runs, \(killedInsideTheWrite) killed inside the write; none \(seen[.none] ?? 0), all \(seen[.all] ?? 0)")
        XCTAssertGreaterThan(killedInsideTheWrite, 0, "no kill landed inside a commit: the test proves nothing")
    }

    /// A fresh copy of a store (no journal, WAL or shared memory left from the run before).
    private func copyStore(_ source: String, to target: String) throws {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try? FileManager.default.removeItem(atPath: target + suffix)
            if FileManager.default.fileExists(atPath: source + suffix) {
                try FileManager.default.copyItem(atPath: source + suffix, toPath: target + suffix)
            }
        }
    }

    /// The same for a Persist store, through the path that rewrites many documents in one
    /// statement: every book's price set, a relation added, a loan deleted; killed at random
    /// moments (a third of CI's runs); each file holds all of it or none of it.
    func testKillDuringAPersistCommitLeavesAllOrNothing() throws {
        let runs = max(4, (Int(ProcessInfo.processInfo.environment["LOUPE_CRASH_RUNS"] ?? "") ?? 16) / 3)
        let master = try Shared.temporaryPath("persist-master.sqlite")
        try LoupeBinary.run(["sample", master, "--objects", "20000", "--seed", "7"])
        let path = URL(fileURLWithPath: master).deletingLastPathComponent().appendingPathComponent("persist.sqlite").path
        let loanID = try DatabaseQueue(path: master).read { try Int.fetchOne($0, sql: "SELECT max(id) FROM by_type WHERE type_name = 'Loan'") } ?? 0
        let script = "update Book set price = 1.5\ndelete Loan where id == \(loanID)\n.commit\n"
        func state(_ run: Int) throws -> Outcome? {
            let queue = try DatabaseQueue(path: path)
            defer { try? queue.close() }
            return try queue.read { db -> Outcome? in
                XCTAssertEqual(try String.fetchAll(db, sql: "PRAGMA integrity_check"), ["ok"], "run \(run): integrity")
                let books = try Int.fetchOne(db, sql: "SELECT count(*) FROM by_type WHERE type_name = 'Book'")!
                let priced = try Int.fetchOne(db, sql: "SELECT count(*) FROM by_type WHERE type_name = 'Book' AND json_extract(json, '$.price') = 1.5")!
                let loan = try Int.fetchOne(db, sql: "SELECT count(*) FROM by_type WHERE id = ?", arguments: [loanID])!
                if priced == 0, loan == 1 { return Outcome.none }
                if priced == books, loan == 0 { return .all }
                XCTFail("run \(run): a state no commit made: \(priced) of \(books) books priced, loan present \(loan)")
                return nil
            }
        }
        try copyStore(master, to: path)
        let started = Date()
        let full = try LoupeBinary.run(["repl", path], stdin: script)
        XCTAssertEqual(full.status, 0, full.description)
        let whole = Date().timeIntervalSince(started)
        XCTAssertEqual(try state(0), .all)
        var generator = SystemRandomNumberGenerator()
        var seen: [Outcome: Int] = [:]
        for run in 1...runs {
            try copyStore(master, to: path)
            let process = try LoupeBinary.start(["repl", path], stdin: script)
            usleep(UInt32(Double.random(in: (whole * 0.5)...(whole * 1.05), using: &generator) * 1_000_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if let outcome = try state(run) { seen[outcome, default: 0] += 1 }
        }
        print("persist crash test: \(runs) runs; none \(seen[.none] ?? 0), all \(seen[.all] ?? 0)")
    }
}
