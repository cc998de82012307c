import Foundation
import GRDB
import LoupeHost
import LoupeModel
import LoupeQuery
import LoupeStore
import LoupeTestSupport
import XCTest

/// Random edits, undo, redo and commits against a model of the file, with faults injected at
/// commits: a full disk, another process holding the write lock, the file replaced by another.
/// After every commit the file holds exactly what the model says: all of the pending changes
/// after a commit that succeeded, none after one that failed, which also keeps them pending.
final class EditFaultFuzzTests: XCTestCase {
    /// One row of `t(id INTEGER PRIMARY KEY, s TEXT, n INTEGER)`.
    struct Row: Equatable { var s: String; var n: Int }
    typealias Model = [Int: Row]
    enum Step { case set(Int, Row), insert(Int, Row), delete(Int) }
    enum Fault: CaseIterable { case none, fullDisk, locked, replaced }

    private let sessions = EditingSessions()

    static func apply(_ steps: ArraySlice<Step>, to model: Model) -> Model {
        var m = model
        for step in steps {
            switch step {
            case .set(let id, let row), .insert(let id, let row): m[id] = row
            case .delete(let id): m[id] = nil
            }
        }
        return m
    }

    static func read(_ path: String) throws -> Model {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            var m: Model = [:]
            for row in try GRDB.Row.fetchAll(db, sql: "SELECT id, hex(s), n FROM t") {
                // The stored bytes exactly (a NUL included), from SQLite's hex of them.
                let hex = Array((row[1] as String).utf8)
                let bytes = stride(from: 0, to: hex.count, by: 2).map { UInt8(String(decoding: hex[$0...$0 + 1], as: UTF8.self), radix: 16)! }
                m[row[0]] = Row(s: String(decoding: bytes, as: UTF8.self), n: row[2])
            }
            return m
        }
    }

    func testRandomEditsAndCommitsUnderFaultsMatchTheModel() throws {
        // A small disk of its own when the test may mount one (root, as CI runs); without it the
        // full-disk fault is left out and the others run.
        let disk = try ScratchDisk.mount(size: "4m")
        let ownDisk = disk != nil
        let folder = try disk?.folder ?? { let f = try Shared.temporaryPath("disk"); try FileManager.default.createDirectory(atPath: f, withIntermediateDirectories: true); return f }()
        let path = folder + "/store.sqlite"
        var committed: Model = [:]
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT, n INTEGER)")
            for i in 1...20 {
                try db.execute(sql: "INSERT INTO t VALUES (?, ?, ?)", arguments: [i, "row \(i)", i])
                committed[i] = Row(s: "row \(i)", n: i)
            }
        }
        try queue.close()
        var random = SampleGenerator.Random(state: UInt64(ProcessInfo.processInfo.environment["LOUPE_FUZZ_SEED"].flatMap(UInt64.init) ?? 46))
        let texts = HostileEdits.texts(seed: 5, count: 30)
        var session = try sessions.open(path)
        var steps: [Step] = [], cursor = 0, nextKey = 1000, locks = 0
        var injected: [Fault: Int] = [:]
        for round in 0..<160 {
            let pending = Self.apply(steps[..<cursor], to: committed)
            let live = pending.keys.sorted()
            let text = texts[random.int(texts.count)], n = random.int(1000) - 500
            switch random.int(10) {
            case 0...3 where !live.isEmpty:
                let id = live[random.int(live.count)]
                XCTAssertNil(session.execute("update t where id == \(id) set s = \(HostileEdits.literal(text)), n = \(n)").error)
                steps.removeSubrange(cursor...); steps.append(.set(id, Row(s: text, n: n))); cursor += 1
            case 4:
                nextKey += 1
                XCTAssertNil(session.execute("insert t { id: \(nextKey), s: \(HostileEdits.literal(text)), n: \(n) }").error)
                steps.removeSubrange(cursor...); steps.append(.insert(nextKey, Row(s: text, n: n))); cursor += 1
            case 5 where !live.isEmpty:
                let id = live[random.int(live.count)]
                XCTAssertNil(session.execute("delete t where id == \(id)").error)
                steps.removeSubrange(cursor...); steps.append(.delete(id)); cursor += 1
            case 6 where cursor > 0:
                XCTAssertNil(session.execute(".undo").error); cursor -= 1
            case 7 where cursor < steps.count:
                XCTAssertNil(session.execute(".redo").error); cursor += 1
            default:
                guard cursor > 0 else { continue }
                var fault = Fault.allCases[random.int(Fault.allCases.count)]
                if fault == .fullDisk && !ownDisk { fault = .none }
                if fault == .locked && locks >= 3 { fault = .none }   // each waits out the busy timeout (3 s)
                let before = try Data(contentsOf: URL(fileURLWithPath: path))
                var holder: DatabaseQueue?
                switch fault {
                case .none: break
                case .fullDisk:
                    disk?.fill(leaving: 2048)
                case .locked:
                    locks += 1
                    var config = Configuration()
                    config.allowsUnsafeTransactions = true   // the lock outlives the call, as another program's would
                    holder = try DatabaseQueue(path: path, configuration: config)
                    try holder!.writeWithoutTransaction { try $0.execute(sql: "BEGIN IMMEDIATE") }
                case .replaced:
                    // Another program writes a new file and renames it over the old one.
                    let other = path + ".new"
                    try before.write(to: URL(fileURLWithPath: other))
                    try DatabaseQueue(path: other).write { db in try db.execute(sql: "UPDATE t SET n = n + 1 WHERE id = (SELECT min(id) FROM t)") }
                    XCTAssertEqual(rename(other, path), 0)
                }
                injected[fault, default: 0] += 1
                let reply = session.execute(".commit")
                try? holder?.writeWithoutTransaction { try $0.execute(sql: "ROLLBACK") }
                try? holder?.close()
                disk?.empty()
                let onDisk = try Self.read(path)
                if reply.error == nil {
                    XCTAssertEqual(fault, .none, "round \(round): a commit under \(fault) must not claim success")
                    committed = Self.apply(steps[..<cursor], to: committed)
                    steps = []; cursor = 0
                    XCTAssertEqual(onDisk, committed, "round \(round): the file holds what was committed")
                } else {
                    XCTAssertNotEqual(fault, .none, "round \(round): \(reply.error!)")
                    if fault != .replaced {
                        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, "round \(round): a failed commit (\(fault)) leaves the file byte for byte")
                    }
                    XCTAssertEqual(session.pending.active.count, cursor, "round \(round): the edits stay pending")
                    if fault == .replaced {
                        // The user reloads: the pending edits are staged again over the new file.
                        committed = onDisk
                        let reloaded = session.execute(".reload")
                        XCTAssertNil(reloaded.error, "round \(round)")
                        if reloaded.output.contains("dropped") {
                            // (An edit of a row the other program deleted; not made here.)
                            XCTFail("round \(round): \(reloaded.output)")
                        }
                    }
                }
                if round % 40 == 39 { session = try sessions.open(path); steps = []; cursor = 0; committed = try Self.read(path) }
            }
        }
        // Every fault was met (the full disk where this run had a disk of its own).
        for fault in Fault.allCases where fault != .fullDisk || ownDisk {
            XCTAssertGreaterThan(injected[fault] ?? 0, 0, "\(fault) was never injected: \(injected)")
        }
    }
}
