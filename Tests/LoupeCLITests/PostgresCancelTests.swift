import Foundation
import LoupeStore
import LoupeTestSupport
import XCTest

/// A `loupe` killed (SIGTERM, SIGHUP) while the server runs its statement leaves nothing running
/// on the server: the signal handler asks the server to cancel (libpq's PQcancel) before the
/// process ends. The statement here waits on a lock another session holds, which a server goes on
/// waiting for however long the client has been gone.
final class PostgresCancelTests: XCTestCase {
    /// Runs `psql` on `url` with `arguments`, returning its output (trimmed).
    private func psql(_ url: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        process.arguments = ["-X", "-q", "-t", "-A", url] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Statements of `loupe` still running in `url`'s database (other tests' databases on the same
    /// server run loupes of their own, in parallel).
    private func running(_ url: String) throws -> Int {
        Int(try psql(url, ["-c", "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'loupe' AND state = 'active' AND datname = current_database()"])) ?? -1
    }

    /// Another session holding `t`'s lock, in a transaction, until the returned process ends.
    private func holdLock(_ url: String) throws -> Process {
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        holder.arguments = ["-X", "-q", url, "-c", "BEGIN; LOCK TABLE t IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(60);"]
        holder.standardOutput = FileHandle.nullDevice
        holder.standardError = FileHandle.nullDevice
        try holder.run()
        var waited = 0
        while try psql(url, ["-c", "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 't' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND l.mode = 'AccessExclusiveLock' AND l.granted"]) != "1", waited < 100 {
            usleep(50_000); waited += 1
        }
        return holder
    }

    /// A statement waiting on another session's lock gives up after a bounded wait with a
    /// message that says so: `loupe repl` fed by a script reaches the end of its input, and
    /// `loupe query` exits, instead of waiting as long as the other session holds the lock.
    func testAStatementWaitingOnALockGivesUpAndSaysWhy() throws {
        let url = try PostgresServer.freshDatabase("lockwait")
        XCTAssertEqual(try PostgresServer.psql(url, "CREATE TABLE t (id integer PRIMARY KEY, name text); INSERT INTO t VALUES (1, 'a');"), 0)
        let holder = try holdLock(url)
        defer { holder.terminate(); holder.waitUntilExit() }
        for (arguments, stdin) in [(["repl", url], "count t\n"), (["query", url, "count t"], nil)] as [([String], String?)] {
            let run = try LoupeBinary.run(arguments, stdin: stdin, timeout: 40)
            XCTAssertFalse(run.timedOut, "\(arguments): still waiting on the lock after 40 s")
            XCTAssertNotEqual(run.status, 0)
            XCTAssertTrue(run.stderr.contains("holds a lock"), run.stderr)
        }
    }

    func testAKilledLoupeLeavesNoStatementRunningOnTheServer() throws {
        let url = try PostgresServer.freshDatabase("cancel")
        XCTAssertEqual(try PostgresServer.psql(url, "CREATE TABLE t (id integer PRIMARY KEY, name text); INSERT INTO t SELECT g, 'n' || g FROM generate_series(1, 100) g;"), 0)
        for signal in [SIGTERM, SIGHUP] {
            // Another session holds the table until it is told to stop.
            let holder = try holdLock(url)
            defer { holder.terminate(); holder.waitUntilExit() }
            let loupe = try LoupeBinary.start(["query", url, "t where name == \"n5\""])
            var waited = 0
            while try running(url) == 0, waited < 100 { usleep(50_000); waited += 1 }
            XCTAssertEqual(try running(url), 1, "loupe's statement waits on the lock")
            kill(loupe.processIdentifier, signal)
            loupe.waitUntilExit()
            waited = 0
            while try running(url) > 0, waited < 60 { usleep(50_000); waited += 1 }
            XCTAssertEqual(try running(url), 0, "signal \(signal): the server still runs the statement of a loupe that is gone")
        }
    }

    /// A backlink count compared with a number is one grouped join on the server, never a
    /// correlated count per row (one scan of the source table per row without an index on its
    /// foreign key, which PostgreSQL does not make), and answers as the loaded engine does.
    func testBacklinkCountsAreOneGroupedJoin() throws {
        var random = SampleGenerator.Random(state: 51)
        let sqlite = try HostileFiles.make("backlinks.sqlite") { db in
            try db.execute(sql: "CREATE TABLE owner(id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE pet(id INTEGER PRIMARY KEY, owner_id INTEGER REFERENCES owner(id), name TEXT)")
            for i in 1...300 { try db.execute(sql: "INSERT INTO owner VALUES (?, ?)", arguments: [i, "o\(i)"]) }
            for i in 1...2000 {
                try db.execute(sql: "INSERT INTO pet VALUES (?, ?, ?)", arguments: [i, random.int(10) == 0 ? nil : 1 + random.int(300), "p\(i)"])
            }
        }
        let url = try PostgresServer.database(copying: sqlite, named: "backlinks")
        for statement in ["owner where @links.pet.owner_id.@count > 8 select name", "count owner where @links.pet.owner_id.@count == 0",
                          "owner where @links.pet.owner_id.@count >= 5 AND name BEGINSWITH \"o1\" sort by name limit 5 select name"] {
            let run = try LoupeBinary.run(["query", url, statement, "--format", "json", "--engine", "sql"], environment: ["LOUPE_SQL_TRACE": "1"])
            XCTAssertEqual(run.status, 0, run.description)
            let sent = run.stderr.split(separator: "\n").filter { $0.contains("\"pet\"") }
            XCTAssertFalse(sent.isEmpty, run.stderr)
            XCTAssertTrue(sent.allSatisfy { $0.contains("GROUP BY") && !$0.contains("(SELECT count(*)") }, "\(statement): \(sent)")
            XCTAssertEqual(run.stdout, try LoupeBinary.run(["query", sqlite, statement, "--format", "json", "--engine", "memory"]).stdout, statement)
        }
    }
}
