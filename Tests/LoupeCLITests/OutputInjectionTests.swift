import Foundation
import LoupeTestSupport
import XCTest

/// Every byte Loupe writes to a terminal is data, never a control sequence, and no credential is
/// ever printed: every subcommand with hostile arguments, edit previews of hostile names and
/// values (REPL and `loupe query`), and PostgreSQL URLs with a password in each spelling libpq
/// reads. The hostile texts are ``HostileFiles/names`` and ``HostileEdits/texts(seed:count:)``.
final class OutputInjectionTests: XCTestCase {
    /// The hostile texts an argument is made of: control sequences, line breaks, bidi overrides.
    static let hostile = HostileFiles.names.filter { $0.unicodeScalars.contains { $0.value < 0x20 || $0.properties.generalCategory == .format } }
        + ["x\nError: forged", "\u{9B}31m", "\u{85}next"]

    private func check(_ arguments: [String], stdin: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> LoupeBinary.Run {
        let run = try LoupeBinary.run(arguments, stdin: stdin, timeout: 60)
        XCTAssertFalse(run.crashed || run.timedOut, "\(arguments.debugDescription): \(run)", file: file, line: line)
        XCTAssertFalse(run.stdout.hasTerminalControl, "stdout of \(arguments.debugDescription): \(run.stdout.prefix(400).debugDescription)", file: file, line: line)
        XCTAssertFalse(run.stderr.hasTerminalControl, "stderr of \(arguments.debugDescription): \(run.stderr.prefix(400).debugDescription)", file: file, line: line)
        let errorLines = run.stderr.split(separator: "\n").filter { $0.hasPrefix("Error:") }
        XCTAssertLessThanOrEqual(errorLines.count, 1, "one Error: line, never a forged second: \(run.stderr.debugDescription)", file: file, line: line)
        return run
    }

    func testUsageMistakesQuoteTheirArgumentsEscaped() throws {
        let path = try HostileFiles.hostileNames()
        for (i, text) in Self.hostile.enumerated() {
            let command = ["types", "schema", "show", "query", "repl", "index", "diff", "watch"][i % 8]
            for arguments in [[command, path, "--format", text], [command, path, "--as", text], [command, path, "--bogus" + text],
                              ["query", path, "t", "--engine", text], ["query", path, "t", "--memory-budget", text],
                              [command, path, "extra" + text, "more" + text], [text + "types", path]] {
                let run = try check(arguments)
                XCTAssertNotEqual(run.status, 0, "\(arguments.debugDescription) is a mistake")
            }
            // A path that holds the text: one escaped line.
            let missing = try check(["types", "/nonexistent/" + text + ".sqlite"])
            XCTAssertEqual(missing.status, 1)
            XCTAssertEqual(missing.stderr.split(separator: "\n").count, 1, missing.stderr.debugDescription)
        }
        let folder = try Shared.temporaryPath("x")
        let sample = try check(["sample", (folder as NSString).deletingLastPathComponent + "/s\u{1B}]0;t\u{7}\nError: forged.sqlite", "--objects", "20"])
        XCTAssertEqual(sample.status, 0, sample.description)
    }

    func testAFileNamedLikeAnOptionIsRefusedWithAHint() throws {
        let folder = (try Shared.temporaryPath("x") as NSString).deletingLastPathComponent
        let path = try HostileEdits.textTable(rows: 2)
        let dashed = folder + "/-dash.sqlite"
        try FileManager.default.copyItem(atPath: path, toPath: dashed)
        let cwd = FileManager.default.currentDirectoryPath
        XCTAssertTrue(FileManager.default.changeCurrentDirectoryPath(folder))
        defer { _ = FileManager.default.changeCurrentDirectoryPath(cwd) }
        let run = try check(["types", "-dash.sqlite"])
        XCTAssertEqual(run.status, 64, run.description)
        XCTAssertTrue(run.stderr.contains("goes after `--` (loupe types -- -dash.sqlite)"), run.stderr)
        let after = try check(["types", "--", "-dash.sqlite"])
        XCTAssertEqual(after.status, 0, after.description)
    }

    func testEditPreviewsShowHostileNamesAndValuesEscaped() throws {
        let path = try HostileFiles.hostileNames()
        let values = HostileEdits.texts(seed: 9, count: 8) + Self.hostile
        for (i, table) in HostileFiles.names.prefix(8).enumerated() {
            let name = "`" + table.replacingOccurrences(of: "`", with: "``") + "`"
            let column = "`" + HostileFiles.names[(i + 3) % HostileFiles.names.count].replacingOccurrences(of: "`", with: "``") + "`"
            let value = HostileEdits.literal(values[i % values.count])
            let update = "update \(name) set \(column) = \(value)"
            _ = try check(["repl", path], stdin: [update, ".changes", ".undo", ".redo", ".changes", ".rollback"].joined(separator: "\n") + "\n")
            _ = try check(["query", path, update])
        }
    }

    func testPostgresCredentialsAreNeverPrinted() throws {
        let secret = "s3cr3tPW"
        let urls = ["postgres://me:\(secret)@127.0.0.1:1/db", "postgresql://me@127.0.0.1:1/db?password=\(secret)",
                    "postgres://127.0.0.1:1/db?%70assword=\(secret)", "postgres://127.0.0.1:1/db?sslmode=disable&sslpassword=\(secret)",
                    "postgres://127.0.0.1:1/db?passfile=/tmp/\(secret)", "postgres://127.0.0.1:1/db?sslkey=/tmp/\(secret)&password=\(secret)",
                    "postgres://me:\(secret)@127.0.0.1:1,127.0.0.2:1/db?connect_timeout=1"]
        for url in urls {
            for arguments in [["types", url], ["schema", url], ["query", url, "count t"], ["repl", url]] {
                let run = try check(arguments, stdin: "")
                XCTAssertFalse((run.stdout + run.stderr).contains(secret), "\(arguments): \(run)")
                XCTAssertNotEqual(run.status, 0)
            }
        }
    }

    /// `loupe index` with a cache folder it cannot make or write says which folder and why, in
    /// one line (never Foundation's error domain and code), and writes nothing.
    func testIndexNamesACacheFolderItCannotUse() throws {
        let store = try Shared.temporaryPath("store.sqlite")
        XCTAssertEqual(try LoupeBinary.run(["sample", store, "--objects", "50"]).status, 0)
        let blocker = try Shared.temporaryPath("not-a-folder")
        XCTAssertTrue(FileManager.default.createFile(atPath: blocker, contents: Data("x".utf8)))
        for folder in [blocker + "/cache", "/proc/loupe-cache"] {
            let run = try LoupeBinary.run(["index", store], environment: ["LOUPE_CACHE_DIR": folder])
            XCTAssertNotEqual(run.status, 0, run.description)
            XCTAssertTrue(run.stderr.contains(folder) && run.stderr.contains("LOUPE_CACHE_DIR"), run.stderr)
            XCTAssertFalse(run.stderr.contains("NSCocoaErrorDomain") || run.stderr.contains("Code="), run.stderr)
            XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, run.stderr)
        }
    }

    /// A stored backslash escape (`\u{1B}`, six characters) and the character it names are shown
    /// apart wherever escapes are shown (table, line and markdown output, CSV to a terminal's
    /// modes): the text's backslashes are doubled, and JSON keeps its own escaping.
    func testStoredEscapesAreToldApartFromEscapedCharacters() throws {
        let path = try HostileFiles.make("backslashes.sqlite") { db in
            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT)")
            try db.execute(sql: "INSERT INTO t VALUES (1, ?), (2, ?), (3, ?), (4, ?)", arguments: ["\\u{1B}", "\u{1B}", "\\n", "\n"])
        }
        for format in ["table", "line", "markdown"] {
            let run = try check(["query", path, "t", "--format", format])
            XCTAssertTrue(run.stdout.contains("\\\\u{1B}") && run.stdout.contains("\\u{1B}"), "\(format): \(run.stdout)")
            XCTAssertEqual(run.stdout.components(separatedBy: "\\\\u{1B}").count - 1, 1, "\(format): the stored escape, doubled, once")
            XCTAssertEqual(run.stdout.components(separatedBy: "\\\\n").count - 1, 1, "\(format): \(run.stdout)")
        }
        let json = try check(["query", path, "t", "--format", "json"])
        XCTAssertTrue(json.stdout.contains(#""s": "\\u{1B}""#) && json.stdout.contains(#""s": "\u001b""#), json.stdout)
    }
}
