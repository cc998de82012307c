import Foundation
import GRDB
import LoupeHost
import LoupeModel
import LoupeQuery
import LoupeSQL
import LoupeStore
import LoupeTestSupport
import XCTest

/// The hardening issue's data-loss classes, each over cases ``HostileEdits`` makes: what is
/// committed reads back equal (through SQLite's own functions and Loupe's readers), bookkeeping
/// is never written, keys are never reused, and a failed commit leaves the file as it was.
final class EditHardeningTests: XCTestCase {
    private let sessions = EditingSessions()
    private func open(_ path: String) throws -> ReplSession { try sessions.open(path) }

    @discardableResult
    private func ok(_ session: ReplSession, _ line: String, file: StaticString = #filePath, line number: UInt = #line) -> String {
        let reply = session.execute(line)
        XCTAssertNil(reply.error, "\(line) → \(reply.error ?? "")", file: file, line: number)
        return reply.output
    }

    private func refused(_ session: ReplSession, _ line: String, file: StaticString = #filePath, line number: UInt = #line) -> String {
        let before = session.pending.steps.count
        let reply = session.execute(line)
        XCTAssertNotNil(reply.error, "\(line) should be refused; answered \(reply.output)", file: file, line: number)
        XCTAssertEqual(session.pending.steps.count, before, "a refused statement stages nothing", file: file, line: number)
        return reply.error ?? ""
    }

    private static func hex(_ s: String) -> String { s.utf8.map { String(format: "%02X", $0) }.joined() }

    // MARK: Text holding NUL

    func testTextHoldingNULIsCommittedWholeToRelationalFiles() throws {
        let texts = HostileEdits.texts(seed: 46, count: 40)
        let path = try HostileEdits.textTable(rows: texts.count)
        let session = try open(path)
        for (i, text) in texts.enumerated() {
            let literal = HostileEdits.literal(text)
            ok(session, "update t where id == \(i + 1) set s = \(literal), u = \(literal)")
        }
        XCTAssertTrue(ok(session, ".commit").hasPrefix("committed: 0 added, \(texts.count) changed"))
        // SQLite's own view of the bytes: the whole text, as text.
        let stored = try DatabaseQueue(path: path).read { db in
            try Row.fetchAll(db, sql: "SELECT id, hex(s), typeof(s), hex(u), typeof(u) FROM t ORDER BY id")
        }
        for (i, text) in texts.enumerated() {
            XCTAssertEqual(stored[i][1] as String, Self.hex(text), "row \(i + 1)")
            XCTAssertEqual(stored[i][2] as String, "text")
            XCTAssertEqual(stored[i][3] as String, Self.hex(text))
            XCTAssertEqual(stored[i][4] as String, "text")
        }
        // Loupe's load reads every text back whole.
        let graph = try LoadedStore.open(path).graph
        let t = try XCTUnwrap(graph.type(named: "t"))
        for (i, text) in texts.enumerated() {
            let ref = try XCTUnwrap(graph.ref(type: t, id: .int(Int64(i + 1))))
            XCTAssertEqual(t.value(row: Int(ref.row), named: "s"), .string(text), "row \(i + 1)")
        }
        // And SQL over the file finds each by its whole value, as the loaded engine does.
        let file = try StoreFile.openForReading(path)
        for (i, text) in texts.prefix(12).enumerated() {
            for test in ["s == \(HostileEdits.literal(text))", "u == \(HostileEdits.literal(text))", "s BEGINSWITH \(HostileEdits.literal(String(text.prefix(2))))"] {
                let statement = "t where \(test) select id"
                let sql = try XCTUnwrap(try SQLPushdown.run(try Parser.parse(statement), file: file), statement)
                XCTAssertEqual(sql.result.render(.json, graph: sql.graph), try QueryEngine(graph: graph).run(statement).render(.json, graph: graph), "row \(i + 1): \(test)")
            }
        }
    }

    func testTextHoldingNULIsCommittedWholeToPersistFiles() throws {
        let texts = HostileEdits.texts(seed: 47, count: 20)
        let path = try HostileEdits.persistNotes(rows: texts.count)
        let session = try open(path)
        for (i, text) in texts.enumerated() { ok(session, "update Note where id == \(i + 1) set text = \(HostileEdits.literal(text))") }
        XCTAssertTrue(ok(session, ".commit").hasPrefix("committed: 0 added, \(texts.count) changed"))
        // The documents as JSON says (SQLite's json_extract itself stops at an escaped NUL).
        let stored = try DatabaseQueue(path: path).read { db in try String.fetchAll(db, sql: "SELECT json FROM by_type ORDER BY id") }
        for (i, text) in texts.enumerated() {
            let document = try JSONSerialization.jsonObject(with: Data(stored[i].utf8)) as? [String: Any]
            XCTAssertEqual(document?["text"] as? String, text, "Note #\(i + 1)")
        }
        let graph = try LoadedStore.open(path).graph
        let note = try XCTUnwrap(graph.type(named: "Note"))
        for (i, text) in texts.enumerated() {
            let ref = try XCTUnwrap(graph.ref(type: note, id: .int(Int64(i + 1))))
            XCTAssertEqual(note.value(row: Int(ref.row), named: "text"), .string(text))
        }
    }

    // MARK: Every value kind

    /// What an edit of every value kind stages is what the file holds after the commit: read
    /// back by a new load and by SQLite itself (the storage class of each cell), on a plain
    /// file and, through its JSON, on a Persist store.
    func testEveryValueKindReadsBackAsStaged() throws {
        let literals = HostileEdits.valueLiterals(seed: 3)
        let relational = try HostileEdits.valueKindTable(rows: literals.count)
        let persist = try HostileEdits.persistNotes(rows: literals.count)
        for (path, type) in [(relational, "v"), (persist, "Note")] {
            let session = try open(path)
            // (A Persist member keeps one kind of value: each literal has a member of its own there.)
            func member(_ k: Int) -> String { type == "v" ? literals[k].column : literals[k].column + "\(k)" }
            for (k, item) in literals.enumerated() { ok(session, "update \(type) where id == \(k + 1) set \(member(k)) = \(item.literal)") }
            let staged = session.pending.graph
            XCTAssertTrue(ok(session, ".commit").hasPrefix("committed: 0 added, "), path)
            let loaded = try LoadedStore.open(path).graph
            let (a, b) = (try XCTUnwrap(staged.type(named: type)), try XCTUnwrap(loaded.type(named: type)))
            for (k, item) in literals.enumerated() {
                let refA = try XCTUnwrap(staged.ref(type: a, id: .int(Int64(k + 1)))), refB = try XCTUnwrap(loaded.ref(type: b, id: .int(Int64(k + 1))))
                let was = a.value(row: Int(refA.row), named: member(k)), now = b.value(row: Int(refB.row), named: member(k))
                XCTAssertTrue(was == now || (was.isNull && now.isNull), "\(type).\(item.column) = \(item.literal): staged \(was), read back \(now)")
            }
        }
        // A date with a fraction of a second: kept by a plain file's text, refused by Persist
        // (its writer keeps seconds), never committed without it.
        let plain = try open(relational), document = try open(persist)
        ok(plain, "update v where id == 1 set d = 2024-02-29T12:00:00.123Z")
        XCTAssertTrue(ok(plain, ".commit").hasPrefix("committed:"))
        XCTAssertEqual(try DatabaseQueue(path: relational).read { db in try String.fetchOne(db, sql: "SELECT d FROM v WHERE id = 1") }, "2024-02-29 12:00:00.123")
        XCTAssertTrue(refused(document, "update Note where id == 1 set when = 2024-02-29T12:00:00.123Z").contains("fraction of a second"))
        // SQLite's own view of the plain file: each cell in the storage class its column's value wants.
        let classes = try DatabaseQueue(path: relational).read { db in
            try Row.fetchAll(db, sql: "SELECT typeof(i), typeof(r), typeof(s), typeof(d), typeof(u) FROM v ORDER BY id")
        }
        for (k, item) in literals.enumerated() where item.literal != "nil" {
            let expected: String
            switch item.column {
            case "i": expected = "integer"
            case "r": expected = "real"
            case "s", "d": expected = "text"
            case "u": expected = item.literal.hasPrefix("\"") ? "text" : item.literal.contains(".") || item.literal.contains("e") ? "real" : "integer"
            default: continue
            }
            let index = ["i", "r", "s", "d", "u"].firstIndex(of: item.column)!
            XCTAssertEqual(classes[k][index] as String, expected, "\(item.column) = \(item.literal)")
        }
    }

    // MARK: Virtual tables

    func testVirtualTablesAreReadOnlyAndTheirShadowTablesHidden() throws {
        let path = try HostileEdits.virtualTables(rows: 6)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let session = try open(path)
        let graph = session.pending.graph
        for m in HostileEdits.virtualModules {
            let t = try XCTUnwrap(graph.type(named: m.table), "the virtual table \(m.table) is listed")
            XCTAssertEqual(t.liveCount, 6, "\(m.table)'s rows are read")
            XCTAssertNotNil(t.readOnlyReason)
            for shadow in m.shadows { XCTAssertNil(graph.type(named: shadow), "\(shadow) is bookkeeping, hidden") }
            let error = refused(session, "delete \(m.table) where id == 1")
            XCTAssertTrue(error.contains("virtual table"), error)
            for shadow in m.shadows {
                _ = refused(session, "delete \(shadow)")
            }
        }
        // A user's table named like a shadow table stays the user's.
        ok(session, "update docs5_notes where id == 1 set note = \"kept\"")
        XCTAssertTrue(ok(session, ".commit").hasPrefix("committed:"))
        // FTS's own check fails on an index whose shadow tables were written behind its back.
        let checks = try DatabaseQueue(path: path).write { db -> [String] in
            try ["docs5", "docs4", "docs3"].map { t in
                try db.execute(sql: "INSERT INTO \(t)(\(t)) VALUES ('integrity-check')")
                return t
            } + [try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? ""]
        }
        XCTAssertEqual(checks.last, "ok")
        XCTAssertNotEqual(before, try Data(contentsOf: URL(fileURLWithPath: path)), "the user's table was written")
    }

    // MARK: Encodings

    /// A database in UTF-16 (either byte order) reads as SQLite reads it: every table, name,
    /// value, relation and view; and an edit commits in the file's encoding.
    func testUTF16DatabasesReadAndCommit() throws {
        for bigEndian in [false, true] {
            let path = try HostileEdits.utf16(bigEndian: bigEndian)
            let session = try open(path)
            let graph = session.pending.graph
            XCTAssertEqual(Set(graph.types.map(\.name.rawValue)), ["Café", "Börse🚀", "Übersicht"], "bigEndian \(bigEndian)")
            XCTAssertEqual(graph.type(named: "Café")?.liveCount, 3)
            XCTAssertEqual(ok(session, "count `Börse🚀` where `café_id`.`名前` == \"東京\"").trimmingCharacters(in: .whitespacesAndNewlines), "2")
            XCTAssertEqual(ok(session, "count `Übersicht`").trimmingCharacters(in: .whitespacesAndNewlines), "3")
            ok(session, "update `Café` where id == 2 set note = \"𝄞 \\0 written\"")
            XCTAssertTrue(ok(session, ".commit").hasPrefix("committed: 0 added, 1 changed"))
            let (note, encoding) = try DatabaseQueue(path: path).read { db in
                (try String.fetchOne(db, sql: #"SELECT hex(note) FROM "Café" WHERE id = 2"#), try String.fetchOne(db, sql: "PRAGMA encoding"))
            }
            // The text as the file holds it, in its byte order (the NUL kept).
            let units = "𝄞 \u{0} written".utf16.flatMap { u in bigEndian ? [UInt8(u >> 8), UInt8(u & 0xFF)] : [UInt8(u & 0xFF), UInt8(u >> 8)] }
            XCTAssertEqual(note, units.map { String(format: "%02X", $0) }.joined())
            XCTAssertEqual(encoding, bigEndian ? "UTF-16be" : "UTF-16le")
        }
    }

    // MARK: Keys

    func testAutoincrementKeysAreNeverReused() throws {
        for (kept, deleted) in [(3, 1), (10, 5), (1, 40)] {
            let path = try HostileEdits.autoincrement(kept: kept, deleted: deleted)
            let session = try open(path)
            ok(session, "insert seq { name: \"new\" }")
            ok(session, "insert plain { name: \"new\" }")
            ok(session, ".commit")
            let (seqKey, plainKey) = try DatabaseQueue(path: path).read { db in
                (try Int.fetchOne(db, sql: "SELECT id FROM seq WHERE name = 'new'"), try Int.fetchOne(db, sql: "SELECT id FROM plain WHERE name = 'new'"))
            }
            // SQLite's rules: above every key the sequence handed out; above the largest row.
            XCTAssertEqual(seqKey, kept + deleted + 1, "AUTOINCREMENT after \(deleted) deleted")
            XCTAssertEqual(plainKey, kept + 1, "INTEGER PRIMARY KEY reuses as SQLite does")
        }
    }

    /// Persist's ids are `by_type`'s rowids: declared AUTOINCREMENT, a deleted largest id is
    /// never given again (SQLite's sequence, as Persist's own inserts would follow it).
    func testPersistIdsFollowTheSequenceOfAnAutoincrementTable() throws {
        let path = try HostileFiles.make("persist-seq.sqlite") { db in
            try db.execute(sql: #"CREATE TABLE "by_type" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "type_name" TEXT NOT NULL, "json" TEXT NOT NULL)"#)
            try db.execute(sql: #"CREATE TABLE "relations" ("from_id" INTEGER NOT NULL, "to_id" INTEGER NOT NULL, "relation" TEXT NOT NULL)"#)
            for i in 1...6 { try db.execute(sql: "INSERT INTO by_type(type_name, json) VALUES ('Note', ?)", arguments: [#"{"n":\#(i)}"#]) }
            try db.execute(sql: "DELETE FROM by_type WHERE id > 4")
        }
        let session = try open(path)
        ok(session, "insert Note { n: 99 }")
        ok(session, ".commit")
        let id = try DatabaseQueue(path: path).read { db in try Int.fetchOne(db, sql: "SELECT id FROM by_type WHERE json LIKE '%99%'") }
        XCTAssertEqual(id, 7)
    }

    // MARK: Dates

    func testDateShapedLiteralsOutsideTheYearsAreErrorsNeverArithmetic() throws {
        let path = try HostileFiles.make("dates.sqlite") { db in
            try db.execute(sql: "CREATE TABLE e(id INTEGER PRIMARY KEY, d DATE, n INTEGER); INSERT INTO e VALUES (1, '2020-01-01', 5)")
        }
        let session = try open(path)
        for literal in ["99999-01-01", "123456-12-31", "999-01-01", "10000-01-01T00:00:00Z", "0-01-01"] {
            for line in ["update e set d = \(literal)", "update e set n = \(literal)", "e where d < \(literal)"] {
                let error = refused(session, line)
                XCTAssertTrue(error.contains("invalid date"), "\(line) → \(error)")
            }
        }
        // Arithmetic with spaces is still arithmetic.
        XCTAssertEqual(ok(session, "count e where n == 9 - 2 - 2").trimmingCharacters(in: .whitespacesAndNewlines), "1")
    }

    // MARK: Relation targets

    func testPersistRelationsTakeOnlyTheirTargetsTypes() throws {
        let path = try HostileFiles.make("school.sqlite") { db in
            try HostileFiles.persistSchema(db)
            try db.execute(sql: """
                INSERT INTO by_type VALUES (1, 'Teacher', '{"name":"Ada"}'), (2, 'Teacher', '{"name":"Bo"}'),
                    (3, 'Homework', '{"title":"sums"}'), (4, 'Student', '{"name":"Cy"}'), (5, 'Student', '{"name":"Di"}');
                INSERT INTO relations VALUES (4, 1, 'teacher'), (5, 2, 'teacher'), (4, 3, 'homework');
                """)
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let session = try open(path)
        for line in ["update Student where id == 4 set teacher = #3",
                     "update Student where id == 4 set homework = #1"] {
            let error = refused(session, line)
            XCTAssertTrue(error.contains("is not a"), "\(line) → \(error)")
        }
        ok(session, "update Student where id == 4 set teacher = #2")
        XCTAssertEqual(ok(session, "count Student where teacher.name == \"Bo\"").trimmingCharacters(in: .whitespacesAndNewlines), "2")
        XCTAssertEqual(before, try Data(contentsOf: URL(fileURLWithPath: path)), "nothing is written before .commit")
    }

    // MARK: Reloading

    /// `.reload` after another process took the key a pending insert was given: the insert is
    /// staged again with the next free key (the store assigned it, so any free one is as good);
    /// an insert whose key was given is dropped, and said so.
    func testReloadGivesAPendingInsertTheNextFreeKey() throws {
        for (theirs, ours) in [(1, 1), (3, 2)] {
            let path = try HostileEdits.autoincrement(kept: 2, deleted: 0)
            let session = try open(path)
            for i in 1...ours { ok(session, "insert seq { name: \"mine\(i)\" }") }
            ok(session, "insert plain { id: 3, name: \"given\" }")
            try DatabaseQueue(path: path).write { db in
                for i in 1...theirs {
                    try db.execute(sql: "INSERT INTO seq(name) VALUES (?)", arguments: ["theirs\(i)"])
                }
                try db.execute(sql: "INSERT INTO plain VALUES (3, 'theirs')")
            }
            let reloaded = ok(session, ".reload")
            XCTAssertTrue(reloaded.contains("given the next free key"), reloaded)
            XCTAssertTrue(reloaded.contains("insert plain { id: 3"), "the insert whose key was given is named as dropped: \(reloaded)")
            XCTAssertTrue(ok(session, ".commit").hasPrefix("committed: \(ours) added"))
            let names = try DatabaseQueue(path: path).read { db in try String.fetchAll(db, sql: "SELECT name FROM seq ORDER BY id") }
            XCTAssertEqual(names, ["n1", "n2"] + (1...theirs).map { "theirs\($0)" } + (1...ours).map { "mine\($0)" })
        }
    }

    // MARK: Staged changes without the file

    /// What is staged lives in memory: `.changes` lists it (each step as the statement that made
    /// it) when the file is renamed, deleted or locked, and a commit once it is back still works.
    func testChangesAreListedWhenTheFileIsGone() throws {
        let path = try HostileEdits.textTable(rows: 3)
        let session = try open(path)
        ok(session, "update t where id == 2 set s = \"kept\"")
        ok(session, "insert t { id: 9, s: \"new\" }")
        let moved = path + ".moved"
        try FileManager.default.moveItem(atPath: path, toPath: moved)
        let listed = ok(session, ".changes")
        XCTAssertTrue(listed.contains("update t where id == 2 set s = \"kept\"") && listed.contains("insert t { id: 9, s: \"new\" }"), listed)
        XCTAssertTrue(listed.contains("cannot be read from the file now"), listed)
        XCTAssertNotNil(session.execute(".commit").error, "no file, no commit")
        XCTAssertEqual(session.pending.active.count, 2, "nothing staged is lost")
        try FileManager.default.moveItem(atPath: moved, toPath: path)
        XCTAssertTrue(ok(session, ".commit").hasPrefix("committed: 1 added, 1 changed"))
    }

    // MARK: A full disk

    /// A commit that meets a full disk leaves the file byte for byte as it was, says so, and a
    /// retry once there is room is not mistaken for another process's write. The disk is a small
    /// tmpfs (root, as CI runs) filled to leave `room` KiB, for several sizes of room.
    func testACommitOnAFullDiskLeavesTheFileAsItWasAndCanBeRetried() throws {
        guard let disk = try ScratchDisk.mount(size: "24m") else { throw XCTSkip("needs root to mount a small tmpfs (CI runs as root)") }
        for room in [1_000, 4_000, 9_000] {
            let path = disk.folder + "/store.sqlite"
            disk.empty()
            for suffix in ["", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT)")
                for i in 1...3000 { try db.execute(sql: "INSERT INTO t VALUES (?, ?)", arguments: [i, String(repeating: "x", count: 900)]) }
            }
            try queue.close()
            disk.fill(leaving: room * 1024)
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let session = try open(path)
            ok(session, "update t set s = \"\(String(repeating: "z", count: 3000))\"")
            let failed = session.execute(".commit")
            let message = try XCTUnwrap(failed.error, "room \(room) KiB: the commit must fail")
            XCTAssertTrue(message.contains("disk is full") && message.contains("as it was"), message)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, "room \(room) KiB: the file is byte for byte as it was")
            XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-journal"), "no journal is left beside the file")
            XCTAssertEqual(session.pending.changes.counts.changed, 3000, "the edits stay pending")
            disk.empty()
            XCTAssertTrue(ok(session, ".commit").hasPrefix("committed: 0 added, 3000 changed"), "room \(room) KiB: the retry commits")
            let written = try DatabaseQueue(path: path).read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t WHERE length(s) = 3000") }
            XCTAssertEqual(written, 3000)
        }
    }
}

/// The hardening issue's reading classes: statements whose cost must grow with the data, not
/// with their nesting, and answers that must not depend on how a member's kinds mix.
final class ReadHardeningTests: XCTestCase {
    /// Nested SUBQUERYs over objects that share their neighbours: each inner SUBQUERY is
    /// answered once per distinct input, and `.@count > 0` stops at the first match. Depth 6 with
    /// 8 neighbours each is 8⁶ ≈ 262,000 paths per object for a naive evaluation (minutes); the
    /// answer is checked against the adjacency.
    func testNestedSubqueriesAreAnsweredOncePerInput() throws {
        let (path, next) = try HostileGraphs.sharedNeighbours(nodes: 400, fanOut: 8)
        let graph = try LoadedStore.open(path).graph
        for (depth, threshold) in [(1, 390), (3, 399), (6, 399)] {
            let statement = HostileGraphs.nestedSubquery(depth: depth, threshold: threshold)
            let rows = try JSONSerialization.jsonObject(with: Data(try QueryEngine(graph: graph).run(statement).render(.json, graph: graph).utf8)) as? [[String: Any]]
            XCTAssertEqual(rows?.compactMap { $0["v"] as? Int }.sorted(), HostileGraphs.reachingAbove(next, depth: depth, threshold: threshold), statement)
        }
        // The count itself (no early stop) agrees with the adjacency too.
        let counted = try QueryEngine(graph: graph).run("Node where v == 1 select SUBQUERY(next, $a, SUBQUERY($a.next, $b, $b.v > 200).@count >= 2).@count")
        XCTAssertTrue(counted.render(.json, graph: graph).contains("\(next[1]!.filter { a in next[a]!.filter { $0 > 200 }.count >= 2 }.count)"))
    }

    /// Smaller reading traps: a key past 64 bits says so; a type whose name differs from the one
    /// typed only by control characters is suggested; completion offers names that need
    /// backticks in backticks.
    func testSmallerReadingTraps() throws {
        let path = try HostileFiles.hostileNames()
        let graph = try LoadedStore.open(path).graph
        let engine = QueryEngine(graph: graph)
        XCTAssertThrowsError(try engine.run("`plain` where id == #123456789012345678901234567890")) { error in
            XCTAssertTrue("\(error)".contains("out of range"), "\(error)")
        }
        for (typed, meant) in [("`title]0;pwned`", "title\u{1B}]0;pwned\u{7}"), ("`title\\u{1B}]0;pwned\\u{7}`", "title\u{1B}]0;pwned\u{7}"), ("`zerowidth`", "zero\u{200B}width")] {
            XCTAssertThrowsError(try engine.run(typed)) { error in
                let message = (error as? QueryError)?.render(source: typed) ?? "\(error)"
                XCTAssertTrue(message.contains("did you mean"), "\(typed): \(message)")
                XCTAssertTrue((error as? QueryError)?.hint?.contains(meant) ?? false, "\(typed): \(message)")
            }
        }
        let offered = Completion.complete("two", cursor: 3, graph: graph, currentType: nil).candidates
        XCTAssertTrue(offered.contains("`two words`"), "\(offered)")
        let columns = Completion.complete("plain where two", cursor: 15, graph: graph, currentType: nil).candidates
        XCTAssertTrue(columns.contains("`two words`"), "\(columns)")
    }

    /// `== nil` and `!= nil` mean the same in a member whatever else it holds in other objects
    /// (an array, an object, text): null and missing are nil, everything else is not.
    func testNilMeansTheSameWhateverKindsAMemberMixes() throws {
        for seed in 1...4 as ClosedRange<UInt64> {
            let (path, picks) = try HostileGraphs.mixedMember(objects: 60, seed: seed)
            let graph = try LoadedStore.open(path).graph
            func keys(_ statement: String) throws -> [Int] {
                let rows = try JSONSerialization.jsonObject(with: Data(try QueryEngine(graph: graph).run(statement).render(.json, graph: graph).utf8)) as? [[String: Any]]
                return (rows ?? []).compactMap { $0["k"] as? Int }.sorted()
            }
            // The engine's rule: an array is ANY of its elements; anything else is itself, null
            // and missing alike (what this test is for: a member that is an array elsewhere).
            func values(_ pick: String?) -> [String] {
                guard let pick else { return ["null"] }
                guard pick.hasPrefix("[") else { return [pick] }
                return pick.dropFirst().dropLast().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            }
            func matching(_ test: (String) -> Bool) -> [Int] { picks.filter { values($0.value).contains(where: test) }.keys.sorted() }
            XCTAssertEqual(try keys("A where m == nil select k"), matching { $0 == "null" }, "seed \(seed)")
            XCTAssertEqual(try keys("A where m != nil select k"), matching { $0 != "null" }, "seed \(seed)")
            XCTAssertEqual(try keys("A where m == 5 select k"), matching { $0 == "5" }, "seed \(seed)")
            XCTAssertTrue(Set(picks.filter { $0.value == nil || $0.value == "null" }.keys).isSubset(of: Set(try keys("A where m == nil select k"))))
        }
    }
}
