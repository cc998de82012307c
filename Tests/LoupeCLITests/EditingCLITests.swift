import Foundation
import GRDB
import LoupeTestSupport
import XCTest

/// Editing from scripts, as CI logs would run it: `loupe query FILE 'update …'` previews and
/// writes only with `--commit`; `loupe repl FILE` reads statements and dot-commands from stdin; a
/// commit that cannot be written (read-only file, a statement SQLite refuses) writes nothing, says
/// why, exits non-zero and keeps the edits pending.
final class EditingCLITests: XCTestCase {
    private func value(_ path: String, _ sql: String) throws -> String? {
        let queue = try DatabaseQueue(path: path, configuration: { var c = Configuration(); c.readonly = true; return c }())
        defer { try? queue.close() }
        return try queue.read { try String.fetchOne($0, sql: sql) }
    }

    func testOneShotUpdatePreviewsAndWritesOnlyWhenAsked() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let before = Shared.fingerprint(path)
        let statement = #"update Artist where ArtistId == 1 set Name = "AC/DC (remastered)""#
        let preview = try LoupeBinary.run(["query", path, statement])
        XCTAssertEqual(preview.status, 0, preview.description)
        XCTAssertTrue(preview.stdout.contains(#"UPDATE "Artist" SET "Name" = 'AC/DC (remastered)' WHERE "ArtistId" = 1;"#), preview.stdout)
        XCTAssertTrue(preview.stdout.contains("nothing written"), preview.stdout)
        XCTAssertEqual(Shared.fingerprint(path), before, "a preview must not change a byte")

        let commit = try LoupeBinary.run(["query", path, statement, "--commit"])
        XCTAssertEqual(commit.status, 0, commit.description)
        XCTAssertTrue(commit.stdout.contains("committed: 0 added, 1 changed, 0 deleted"), commit.stdout)
        XCTAssertEqual(try value(path, "SELECT Name FROM Artist WHERE ArtistId = 1"), "AC/DC (remastered)")
        XCTAssertEqual(try value(path, "PRAGMA integrity_check"), "ok")

        // A statement that changes nothing says so and exits 0; a query with --commit is refused.
        let none = try LoupeBinary.run(["query", path, #"update Artist where ArtistId == -5 set Name = "x""#, "--commit"])
        XCTAssertEqual(none.status, 0, none.description)
        XCTAssertTrue(none.stdout.hasPrefix("nothing staged: no object changes\n"), none.description)
    }

    func testReplScriptStagesUndoesAndCommitsInOneTransaction() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let script = """
            insert Genre { Name: "Polka" }
            update Track where Composer == "AC/DC" set Milliseconds = Milliseconds + 1000
            update Album where AlbumId == 1 set Title = "dropped by undo"
            .undo
            delete Playlist where PlaylistId == 2
            .changes
            .commit
            count Genre where Name == "Polka"
            """
        let run = try LoupeBinary.run(["repl", path], stdin: script + "\n")
        XCTAssertEqual(run.status, 0, run.description)
        XCTAssertTrue(run.stdout.contains(#"INSERT INTO "Genre" ("GenreId", "Name") VALUES (26, 'Polka');"#), run.stdout)
        XCTAssertTrue(run.stdout.contains(#"DELETE FROM "Playlist" WHERE "PlaylistId" = 2;"#), run.stdout)
        XCTAssertTrue(run.stdout.contains(#"undone: update Album where AlbumId == 1 set Title = "dropped by undo""#), run.stdout)
        XCTAssertFalse(run.stdout.contains("SET \"Title\""), "an undone step is not written")
        XCTAssertTrue(run.stdout.contains("committed: 1 added, 8 changed, 1 deleted"), run.stdout)
        XCTAssertEqual(try value(path, "SELECT Name FROM Genre WHERE GenreId = 26"), "Polka")
        XCTAssertEqual(try value(path, "SELECT SUM(Milliseconds) FROM Track WHERE Composer = 'AC/DC'"), "\(2_453_259 + 8_000)")
        XCTAssertEqual(try value(path, "SELECT Title FROM Album WHERE AlbumId = 1"), "For Those About To Rock We Salute You")
        XCTAssertEqual(try value(path, "SELECT COUNT(*) FROM Playlist WHERE PlaylistId = 2"), "0")
    }

    /// A file the user may read but not write: the commit is refused with the reason, the process
    /// exits non-zero, the edits are still listed by `.changes`, and the file is unchanged.
    func testReadOnlyFileRefusesTheCommitAndKeepsTheEdits() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var command = [LoupeBinary.url.path]
        if getuid() == 0 {
            // root writes through any mode bits: run as `nobody`, who may read the folder but not write it.
            guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") else { throw XCTSkip("runuser is not available") }
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
            command = ["/usr/sbin/runuser", "-u", "nobody", "--"] + command
        } else {
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: folder)
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        }
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder) }
        let before = Shared.fingerprint(path)
        let script = "update Artist where ArtistId == 2 set Name = \"changed\"\n.commit\n.changes\n"
        let run = try Self.run(command + ["repl", path], stdin: script)
        XCTAssertNotEqual(run.status, 0, run.output)
        XCTAssertTrue(run.output.contains("cannot be written"), run.output)
        XCTAssertTrue(run.output.contains("edits stay pending"), run.output)
        XCTAssertTrue(run.output.contains(#"UPDATE "Artist" SET "Name" = 'changed' WHERE "ArtistId" = 2;"#), "still listed after the refusal: \(run.output)")
        XCTAssertEqual(Shared.fingerprint(path), before)
    }

    /// A statement SQLite refuses in the middle of the commit (a trigger raising) rolls back the
    /// statements before it: all or nothing.
    func testARefusedStatementRollsBackTheWholeCommit() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let queue = try DatabaseQueue(path: path)
        try queue.write { try $0.execute(sql: "CREATE TRIGGER fixed BEFORE UPDATE ON Genre WHEN NEW.Name = 'Boom' BEGIN SELECT RAISE(ABORT, 'genre names are fixed'); END") }
        try queue.close()
        let before = Shared.fingerprint(path)
        let script = """
            update Artist where ArtistId == 3 set Name = "written first"
            update Genre where GenreId == 1 set Name = "Boom"
            .commit
            """
        let run = try LoupeBinary.run(["repl", path], stdin: script + "\n")
        XCTAssertNotEqual(run.status, 0, run.description)
        XCTAssertTrue(run.stderr.contains("genre names are fixed"), run.stderr)
        XCTAssertTrue(run.stderr.contains("nothing was written"), run.stderr)
        XCTAssertEqual(try value(path, "SELECT Name FROM Artist WHERE ArtistId = 3"), "Aerosmith")
        XCTAssertEqual(Shared.fingerprint(path), before)
    }

    /// Runs a command line (not necessarily `loupe` itself) with stdin; stdout and stderr together.
    private static func run(_ command: [String], stdin: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let output = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = input
        process.currentDirectoryURL = URL(fileURLWithPath: "/")
        try process.run()
        input.fileHandleForWriting.write(Data(stdin.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// `loupe repl` fed by a script ends at the end of its input, within a bounded wait, while
    /// another process holds the write lock — with edits pending, after a refused `.commit`, after
    /// `.rollback`, after only a query — and says what was not written.
    func testEndOfInputEndsTheReplWhileAnotherProcessHoldsTheWriteLock() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let holder = try DatabaseQueue(path: path)
        let locked = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        Thread {
            try? holder.inTransaction(.immediate) { db in
                try db.execute(sql: "UPDATE Genre SET Name = Name")
                locked.signal(); release.wait(); return .rollback
            }
            done.signal()
        }.start()
        locked.wait()
        defer { release.signal(); done.wait(); try? holder.close() }
        let edit = "update Genre where GenreId == 1 set Name = \"x\"\n"
        for (script, unwritten) in [(edit + ".commit\n", true), (edit, true), ("count Genre\n", false), (edit + ".rollback\n", false)] {
            let run = try LoupeBinary.run(["repl", path], stdin: script, timeout: 30)
            XCTAssertFalse(run.timedOut, "\(script): still running 30 s after its input ended")
            XCTAssertEqual(run.stderr.contains("not written (the input ended without .commit)"), unwritten, "\(script): \(run.stderr)")
        }
        XCTAssertEqual(try value(path, "SELECT Name FROM Genre WHERE GenreId = 1"), "Rock")
    }
}
