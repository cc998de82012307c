import Foundation
import LoupeTestSupport
import XCTest

/// The hostile inputs of the hardening issue, each made by ``HostileFiles``, run through the real
/// binary. Every run must end by itself (no hang), with an exit status (no crash), print nothing a
/// terminal would act on, and leave the file as it was.
final class HostileInputTests: XCTestCase {
    /// Runs `loupe` and checks what every run must satisfy; returns the run for specific checks.
    @discardableResult
    func loupe(_ arguments: [String], stdin: String? = nil, file: String? = nil, timeout: Double = 30,
               sourceFile: StaticString = #filePath, line: UInt = #line) throws -> LoupeBinary.Run {
        let before = file.map(Shared.fingerprint)
        let run = try LoupeBinary.run(arguments, stdin: stdin, timeout: timeout)
        XCTAssertFalse(run.crashed, "crashed: \(arguments)\n\(run)", file: sourceFile, line: line)
        XCTAssertFalse(run.timedOut, "hung: \(arguments)", file: sourceFile, line: line)
        XCTAssertFalse(run.stdout.hasTerminalControl, "control characters on stdout: \(arguments)\n\(run.stdout.prefix(500).debugDescription)", file: sourceFile, line: line)
        XCTAssertFalse(run.stderr.hasTerminalControl, "control characters on stderr: \(arguments)\n\(run.stderr.prefix(500).debugDescription)", file: sourceFile, line: line)
        if let file, let before { XCTAssertEqual(Shared.fingerprint(file), before, "\(file) was changed by \(arguments)", file: sourceFile, line: line) }
        return run
    }

    func json(_ run: LoupeBinary.Run, file: StaticString = #filePath, line: UInt = #line) throws -> Any {
        XCTAssertEqual(run.status, 0, run.description, file: file, line: line)
        return try JSONSerialization.jsonObject(with: Data(run.stdout.utf8), options: [.fragmentsAllowed])
    }

    func testPersistIDsAtBothEndsOfTheRange() throws {
        let path = try HostileFiles.persistFarApartIDs()
        let types = try loupe(["types", path], file: path)
        XCTAssertEqual(types.status, 0, types.description)
        let rows = try json(try loupe(["query", path, "A where b.n == 2 select n, b.a.n", "--format", "json"], file: path)) as? [[String: Any]]
        XCTAssertEqual(rows?.count, 1)
        XCTAssertEqual(rows?.first?["b.a.n"] as? Int, 3)
        let show = try loupe(["show", path, "B", "9223372036854775807"], file: path)
        XCTAssertTrue(show.stdout.contains("→ A #-9223372036854775808"), show.description)
    }

    func testRealKeysOfAnySize() throws {
        let path = try HostileFiles.realKeys()
        let rows = try json(try loupe(["query", path, "u sort by id select id, t.v", "--format", "json"], file: path)) as? [[String: Any]]
        XCTAssertEqual(rows?.map { $0["t.v"] as? String ?? "null" }, ["big", "inf", "three", "half", "null"])
        let count = try loupe(["query", path, "count t", "--format", "json"], file: path)
        XCTAssertEqual(count.stdout, "5\n")
        let show = try loupe(["show", path, "t", "1e300"], file: path)
        XCTAssertTrue(show.stdout.contains("big"), show.description)
    }

    func testDatesNoCalendarReachesStayNumbersAndImpossibleDaysAreNotDates() throws {
        let path = try HostileFiles.hugeDates()
        let rows = try json(try loupe(["query", path, "d sort by id", "--format", "json"], file: path)) as? [[String: Any]]
        XCTAssertEqual(rows?[0]["at"] as? Int64, Int64.max)
        XCTAssertEqual(rows?[0]["ts"] as? Double, 1e20)
        XCTAssertEqual(rows?[2]["at"] as? String, "2024-02-30", "an impossible day stays text")
        XCTAssertEqual(rows?[2]["ts"] as? String, "2023-02-29")
        XCTAssertEqual(rows?[2]["dt"] as? String, "2024-02-29T00:00:00Z", "29 February 2024 is a date")
        XCTAssertEqual(rows?[3]["ts"] as? String, "2023-11-14T22:13:20Z")
        let table = try loupe(["query", path, "d"], file: path)
        XCTAssertEqual(table.status, 0, table.description)
    }

    func testTypeNamesOfAnyStorageAndOddRelationKinds() throws {
        let path = try HostileFiles.oddTypeNames()
        let types = try json(try loupe(["types", path, "--format", "json"], file: path)) as? [[String: Any]]
        let counts = Dictionary(uniqueKeysWithValues: (types ?? []).map { ($0["name"] as! String, $0["count"] as! Int) })
        XCTAssertEqual(counts["Book"], 2, "a BLOB 'Book' and a text 'Book' are one type: \(counts)")
        XCTAssertEqual(counts["42"], 1)
        XCTAssertEqual(counts["(no type)"], 1)
        XCTAssertEqual(counts["x'FF00'"], 1)
        XCTAssertEqual(counts["Text"], 1)
        XCTAssertEqual(try loupe(["schema", path], file: path).status, 0)
    }

    func testNamesOfEveryCharacterClassAreQuotedAndEscaped() throws {
        let path = try HostileFiles.hostileNames()
        let types = try loupe(["types", path, "--format", "json"], file: path, timeout: 20)
        let list = try json(types) as? [[String: Any]]
        XCTAssertEqual(list?.count, HostileFiles.names.count + 1)
        XCTAssertEqual(Set((list ?? []).map { $0["name"] as! String }), Set(HostileFiles.names + ["child"]), "every table read under its own name")
        XCTAssertTrue((list ?? []).allSatisfy { $0["count"] as? Int == 1 }, "\(list ?? [])")
        for command in [["types", path], ["schema", path], ["show", path, "we\"ird", "2"], ["query", path, "plain", "--format", "line"],
                        ["query", path, "plain"], ["query", path, "plain", "--format", "markdown"], ["query", path, "pla"]] {
            try loupe(command, file: path, timeout: 20)
        }
        // Every column of every table reads its own stored value: no crafted name ran as SQL
        // (which would show a fake value, or another column's), and JSON keeps names and values
        // intact (control characters escaped as \u sequences).
        for table in HostileFiles.names where !table.contains("`") {   // a quoted name in the language cannot hold a backtick
            let rows = try json(try loupe(["query", path, "`\(table)`", "--format", "json"], file: path)) as? [[String: Any]]
            XCTAssertEqual(rows?.count, 1, table.debugDescription)
            for name in HostileFiles.names {
                XCTAssertEqual(rows?.first?[name] as? String, "v\u{1B}]0;title\u{7}" + name, "\(table.debugDescription).\(name.debugDescription)")
            }
        }
        // A foreign key whose column holds a quote is a relation like any other.
        let child = try json(try loupe(["query", path, "child select `we\"ird`.id", "--format", "json"], file: path)) as? [[String: Any]]
        XCTAssertEqual(child?.first?.values.first as? Int, 2)
    }

    func testNonRegularFilesAreRefusedAtOnce() throws {
        let fifo = try HostileFiles.fifo()
        let run = try loupe(["types", fifo], timeout: 10)
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("is a FIFO"), run.stderr)
        let loop = try HostileFiles.symlinkLoop()
        let looped = try loupe(["types", loop], timeout: 10)
        XCTAssertEqual(looped.status, 1)
        XCTAssertTrue(looped.stderr.contains("symbolic links"), looped.stderr)
    }

    func testHotJournalIsExplained() throws {
        let path = try HostileFiles.hotJournal()
        let run = try loupe(["types", path], file: path)
        XCTAssertEqual(run.status, 1, run.description)
        XCTAssertTrue(run.stderr.contains("interrupted transaction") && run.stderr.contains("sqlite3"), run.stderr)
    }

    func testCatastrophicRegularExpressionsGiveUpWithAnError() throws {
        let path = try HostileFiles.regexTrap()
        let started = Date()
        let trap = try loupe(["query", path, "count words where w MATCHES \"(a+)+$\""], file: path)
        XCTAssertEqual(trap.status, 2, trap.description)
        XCTAssertTrue(trap.stderr.contains("MATCHES gave up"), trap.stderr)
        let alternation = try loupe(["query", path, "count words where w MATCHES \"(a|a)*c|.*\""], file: path)
        XCTAssertEqual(alternation.status, 2, "giving up is an error, never a silent partial count: \(alternation)")
        XCTAssertLessThan(Date().timeIntervalSince(started), 20, "a budget, not minutes")
        let fine = try loupe(["query", path, "count words where w MATCHES \"a+!\""], file: path)
        XCTAssertEqual(fine.stdout, "100\n")
    }

    func testPathsThroughToManyRelationsDoNotMultiply() throws {
        let path = try HostileFiles.hub(edges: 3000)
        let rows = try json(try loupe(["query", path, "Hub select edges.back.@count, edges.@count", "--format", "json"], file: path, timeout: 30)) as? [[String: Any]]
        XCTAssertEqual(rows?.first?["edges.back.@count"] as? Int, 1, "each object reached once")
        XCTAssertEqual(rows?.first?["edges.@count"] as? Int, 3000)
    }

    func testTextIDsStayAsWrittenAndTheirRelationsResolve() throws {
        let path = try HostileFiles.persistTextIDs()
        let rows = try json(try loupe(["query", path, "Person sort by name select id, name, teacher.name, friend.name", "--format", "json"], file: path)) as? [[String: Any]]
        XCTAssertEqual(rows?.map { $0["id"] as? String }, ["5A1F3C2E-0000-4000-8000-000000000001", "abc"])
        XCTAssertEqual(rows?.map { $0["teacher.name"] as? String }, ["Bond", "Seven"])
        XCTAssertEqual(rows?.last?["friend.name"] as? String, "Ann")
        let show = try loupe(["show", path, "Teacher", "007"], file: path)
        XCTAssertTrue(show.stdout.contains("Bond"), show.description)
    }

    func testCompositeKeysGeneratedColumnsAndClashingNames() throws {
        let path = try HostileFiles.keysAndColumns()
        let pair = try json(try loupe(["query", path, "pair", "--format", "json"], file: path)) as? [[String: Any]]
        XCTAssertEqual(pair?.count, 3)
        XCTAssertEqual(Set((pair ?? []).map { "\($0["id"]!)" }).count, 3, "composite keys never collide: \(pair ?? [])")
        XCTAssertEqual(pair?.first { $0["v"] as? String == "first" }?["id"] as? [AnyHashable], ["a", "b|1"])
        let pair2 = try json(try loupe(["query", path, "pair2", "--format", "json"], file: path)) as? [[String: Any]]
        XCTAssertEqual(Set((pair2 ?? []).map { "\($0["id"]!)" }).count, 2)
        let gen = try json(try loupe(["query", path, "gen select x, doubled, tripled", "--format", "json"], file: path)) as? [[String: Any]]
        XCTAssertEqual(gen?.map { $0["tripled"] as? Int }, [3, 6], "generated columns are read")
        XCTAssertEqual(gen?.map { $0["doubled"] as? Int }, [2, 4])
        let clash = try loupe(["query", path, "clash", "--format", "json"], file: path)
        XCTAssertEqual(clash.stdout, "[{\"id\": 1, \"type\": \"clash\", \"pk\": 1, \"attribute.id\": \"not the key\", \"attribute.type\": \"not the type\"}]\n")
        let keyed = try loupe(["query", path, "keyed", "--format", "json"], file: path)
        XCTAssertEqual(keyed.stdout, "[{\"id\": 5, \"type\": \"keyed\", \"name\": \"five\"}]\n", "the key column is not repeated")
        let blob = try json(try loupe(["query", path, "blobkey", "--format", "json"], file: path)) as? [[String: Any]]
        XCTAssertEqual(blob?.count, 2)
        let repeated = try loupe(["query", path, "keyed select name, name", "--format", "json"], file: path)
        XCTAssertEqual(repeated.stdout, "[{\"name\": \"five\", \"name#2\": \"five\"}]\n")
    }

    /// Names that are not UTF-8 come back from SQLite repaired, and SQL written with them names
    /// another table or column, or none: such a table is left out and such a column too (its
    /// table then read-only), each said, never a table shown empty or a write that misses.
    func testNamesThatAreNotUTF8AreLeftOutAndSaid() throws {
        let path = try HostileFiles.namesNotUTF8()
        let print = Shared.fingerprint(path)
        let good = try loupe(["query", path, "good select id, t_id", "--format", "json"], file: path)
        XCTAssertEqual(good.stdout, "[{\"id\": 1, \"t_id\": 1}]\n", good.description)
        let types = try loupe(["types", path], file: path)
        XCTAssertEqual(types.stdout.split(separator: "\n").dropFirst(2).map { $0.split(separator: " ")[0] }, ["w", "k", "good"])
        // What SQL answers (no load) says what a load says first, as do `loupe types`.
        for run in [good, types] {
            XCTAssertTrue(run.stderr.hasPrefix("warning: t\u{FFFD}x: its name is not UTF-8"), run.stderr)
        }
        let loaded = try loupe(["query", path, "good select id, t_id", "--format", "json", "--engine", "memory"], file: path)
        XCTAssertEqual(good.stderr, loaded.stderr)
        XCTAssertEqual(try loupe(["query", path, "w select id, ok", "--format", "json"], file: path).stdout, "[{\"id\": 1, \"ok\": 5}]\n")
        XCTAssertEqual(try loupe(["query", path, "k select id, v", "--format", "json"], file: path).stdout, "[{\"id\": 1, \"v\": 1},\n {\"id\": 2, \"v\": 2}]\n")
        for budget in ["1KB", "8GB"] {
            XCTAssertEqual(try loupe(["query", path, "count k where v * 2 > 2", "--memory-budget", budget], file: path).stdout, "1\n", budget)
        }
        // A load says what it left out; edits of the tables missing a column are refused.
        let edit = try loupe(["repl", path], stdin: "update w set ok = 6\nupdate k set v = 3\n.commit\n", file: path)
        XCTAssertTrue(edit.stderr.contains("t\u{FFFD}x: its name is not UTF-8"), edit.stderr)
        XCTAssertTrue(edit.stderr.contains("w: columns whose names are not UTF-8 (\"c\u{FFFD}\") are left out"), edit.stderr)
        XCTAssertTrue(edit.stderr.contains("error: w is read-only") && edit.stderr.contains("error: k is read-only"), edit.description)
        XCTAssertEqual(Shared.fingerprint(path), print)
    }

    func testDeeplyNestedJSONIsReadNotDropped() throws {
        let path = try HostileFiles.deepJSON()
        let types = try loupe(["types", path, "--format", "json"], file: path)
        XCTAssertFalse(types.stderr.contains("not JSON objects"), types.stderr)
        let rows = try json(types) as? [[String: Any]]
        XCTAssertEqual(rows?.first?["count"] as? Int, 75)
        XCTAssertEqual(try loupe(["query", path, "count Deep where d >= 1000 AND v.@count == 1", "--format", "json"], file: path).stdout, "4\n")
        XCTAssertEqual(try loupe(["query", path, "count Deep where rare != nil", "--format", "json"], file: path).stdout, "1\n")
        XCTAssertEqual(try loupe(["query", path, "Deep where d == 3000", "--format", "json"], file: path).status, 0)
    }

    func testStatementsNestedTooDeeplyAreErrors() throws {
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let chain = Array(repeating: "1", count: 999).joined(separator: "+")
        let statements = [
            "count Track where " + String(repeating: "(", count: 30) + chain + String(repeating: ")+" + chain, count: 29) + ") > 0",
            "count Track where " + String(repeating: "(", count: 100_000) + "1",
            "count Track where " + String(repeating: "NOT ", count: 100_000) + "1 == 1",
            "count Track where " + String(repeating: "-", count: 100_000) + "1 == 1",
            "count Track where Name IN " + String(repeating: "{", count: 100_000),
        ]
        let run = try loupe(["repl", chinook], stdin: statements.joined(separator: "\n") + "\ncount Track where (\(chain)) > 0\n", file: chinook)
        XCTAssertEqual(run.stderr.components(separatedBy: "statement nested too deeply").count - 1, statements.count, run.stderr.prefix(3000).description)
        XCTAssertTrue(run.stdout.hasSuffix("3503\n"), "a 999-operand chain still evaluates: \(run.stdout.suffix(200))")
    }

    func testPathsThroughAttributesAreErrors() throws {
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let run = try loupe(["query", chinook, "count Track where Milliseconds.Name == \"x\""], file: chinook)
        XCTAssertEqual(run.status, 2)
        XCTAssertTrue(run.stderr.contains("'Milliseconds' is an attribute of Track, not a relation"), run.stderr)
    }

    func testOutputNeverGoesToTheStoreOrItsCompanions() throws {
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let link = URL(fileURLWithPath: chinook).deletingLastPathComponent().appendingPathComponent("alias.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: chinook)
        let folder = URL(fileURLWithPath: chinook).deletingLastPathComponent().path
        let script = [".output \(chinook)", ".once \(chinook)-wal", ".once \(chinook)-journal", ".output \(link)",
                      ".output \(folder)/../\(URL(fileURLWithPath: folder).lastPathComponent)/Chinook_Sqlite.sqlite", "count Genre"].joined(separator: "\n")
        let run = try loupe(["repl", chinook], stdin: script, file: chinook)
        XCTAssertEqual(run.stderr.components(separatedBy: "is the open store").count - 1, 5, run.stderr)
        XCTAssertEqual(run.stdout, "25\n")
    }

    func testAWALFileWithoutSharedMemoryIsReadFromACopyThatIsRemoved() throws {
        let path = try HostileFiles.walWithoutSharedMemory()
        let run = try loupe(["query", path, "count t", "--format", "json"], file: path)
        XCTAssertEqual(run.stdout, "50\n")
        XCTAssertEqual(leftoverCopies(), [], "no private copy is left behind")
    }

    /// Private copies of this user's temp folder that belong to no running process.
    func leftoverCopies() -> [String] {
        let temp = FileManager.default.temporaryDirectory.path
        return ((try? FileManager.default.contentsOfDirectory(atPath: temp)) ?? []).filter { name in
            guard name.hasPrefix("loupe-copy-"), let pid = Int32(name.dropFirst("loupe-copy-".count).prefix { $0 != "-" }) else { return false }
            return kill(pid, 0) != 0
        }
    }

    func testTheCopyIsRemovedWhenTheProcessIsTerminated() throws {
        // A large WAL file without -shm: read from a private copy while it loads; SIGTERM then.
        let path = try HostileFiles.walWithoutSharedMemory(rows: 400_000)
        let process = try LoupeBinary.start(["repl", path])
        let mine = "loupe-copy-\(process.processIdentifier)-"
        let temp = FileManager.default.temporaryDirectory.path
        let deadline = Date().addingTimeInterval(20)
        var sawCopy = false
        while Date() < deadline, process.isRunning {
            if try FileManager.default.contentsOfDirectory(atPath: temp).contains(where: { $0.hasPrefix(mine) }) { sawCopy = true; break }
            Thread.sleep(forTimeInterval: 0.005)
        }
        XCTAssertTrue(sawCopy, "the file is read from a private copy")
        process.terminate()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .uncaughtSignal, "SIGTERM ends the process as SIGTERM does")
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: temp).contains { $0.hasPrefix(mine) }, "the copy went with the process")
    }

    func testInterruptCancelsTheRunningStatementInTheREPL() throws {
        let path = try HostileFiles.slowRows()
        let process = Process()
        process.executableURL = LoupeBinary.url
        process.arguments = ["repl", path]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(Data("count words where w MATCHES \"(a+)+b\"\n".utf8))
        Thread.sleep(forTimeInterval: 1.0)
        kill(process.processIdentifier, SIGINT)
        input.fileHandleForWriting.write(Data("count words\n".utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        let out = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let err = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(err.contains("error: cancelled"), err)
        XCTAssertEqual(out, "400\n", "the REPL goes on after the cancelled statement")
    }

    func testLargeValuesCostWhatIsVisible() throws {
        let path = try HostileFiles.bigValue(megabytes: 50)
        let script = try Shared.temporaryPath("keys.play")
        try "j\nj\nj\nk\n<Tab>\nj\n".write(toFile: script, atomically: true, encoding: .utf8)
        let started = Date()
        let run = try loupe([path, "--play", script, "--size", "120x40"], file: path, timeout: 60)
        XCTAssertEqual(run.status, 0, run.description)
        XCTAssertTrue(run.stdout.contains("abcdefghij"), run.stdout)
        // Loading and copying the value is linear; seven frames of it used to take minutes.
        XCTAssertLessThan(Date().timeIntervalSince(started), 30)
    }
}
