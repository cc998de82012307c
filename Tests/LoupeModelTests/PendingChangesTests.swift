import Foundation
@testable import LoupeModel
import XCTest

/// `PendingChanges` and the `ChangeSet` under it, directly: random steps of sets, inserts,
/// deletions and undo/redo against a dictionary model of what the graph must then hold, over a
/// small graph built here (no store, no engine).
final class PendingChangesTests: XCTestCase {
    /// A graph of `count` `Note` objects, keys 1…count, `n` = the key and `s` = "s<key>".
    static func notes(_ count: Int) -> ObjectGraph {
        let builder = GraphBuilder(formatName: "test")
        let t = builder.type("Note", keyPolicy: .column("id", autoIncrements: true))
        let n = builder.attribute("n", of: t), s = builder.attribute("s", of: t)
        for k in 1...count {
            let ref = builder.addObject(type: t, id: .int(Int64(k)))
            builder.set(.int(Int64(k)), type: t, row: Int(ref.row), attribute: n)
            builder.set(.string("s\(k)"), type: t, row: Int(ref.row), attribute: s)
        }
        return builder.finish()
    }

    static func note(_ k: Int) -> ObjectIdentity { ObjectIdentity(type: TypeName("Note"), id: .int(Int64(k))) }

    /// What the graph holds of `Note`: key → (n, s), live objects only.
    static func contents(_ graph: ObjectGraph) -> [Int: [Value]] {
        guard let t = graph.type(named: "Note") else { return [:] }
        var out: [Int: [Value]] = [:]
        for row in 0..<t.count where t.isLive(row) {
            guard case .int(let k) = t.ids[row] else { continue }
            out[Int(k)] = [t.value(row: row, named: "n"), t.value(row: row, named: "s")]
        }
        return out
    }

    func testRandomStepsUndoAndRedoMatchAModel() throws {
        for seed in 1...6 as ClosedRange<UInt64> {
            var random = SplitMix(seed)
            let base = Self.notes(12)
            var pending = PendingChanges(base: base)
            var history: [[Int: [Value]]] = [Self.contents(base)]   // the model after each active step
            var redoable: [[Int: [Value]]] = []
            var nextKey = 100
            for round in 0..<80 {
                var model = history.last!
                let live = model.keys.sorted()
                let roll = random.next(10)
                if roll == 8, let _ = pending.undo() {
                    redoable.append(history.removeLast())
                    XCTAssertEqual(Self.contents(pending.graph), history.last!, "seed \(seed) round \(round): undo")
                    continue
                }
                if roll == 9, let _ = pending.redo() {
                    history.append(redoable.removeLast())
                    XCTAssertEqual(Self.contents(pending.graph), history.last!, "seed \(seed) round \(round): redo")
                    continue
                }
                var edits: [Edit] = []
                switch roll {
                case 0...3 where !live.isEmpty:
                    let k = live[random.next(live.count)], v = Value.int(Int64(random.next(1000)))
                    edits = [.set(Self.note(k), attribute: "n", value: v)]
                    model[k]![0] = v
                case 4...5:
                    nextKey += 1
                    edits = [.insert(Self.note(nextKey), values: ["n": .int(Int64(nextKey)), "s": .string("new")])]
                    model[nextKey] = [.int(Int64(nextKey)), .string("new")]
                case 6...7 where !live.isEmpty:
                    let k = live[random.next(live.count)]
                    edits = [.remove(Self.note(k))]
                    model[k] = nil
                default: continue
                }
                try pending.stage(EditStep(label: "step \(round)", edits: edits))
                history.append(model)
                redoable = []
                XCTAssertEqual(Self.contents(pending.graph), model, "seed \(seed) round \(round)")
                XCTAssertEqual(pending.active.count, history.count - 1)
                XCTAssertFalse(pending.canRedo, "a new step drops what could be redone")
            }
            // The change set counts what differs from the base, object by object.
            let final = history.last!, first = history.first!
            let added = final.keys.filter { first[$0] == nil }.count
            let deleted = first.keys.filter { final[$0] == nil }.count
            let changed = final.keys.filter { first[$0] != nil && first[$0] != final[$0] }.count
            let counts = pending.changes.counts
            XCTAssertEqual(counts.added, added, "seed \(seed)")
            XCTAssertEqual(counts.deleted, deleted, "seed \(seed)")
            XCTAssertEqual(counts.changed, changed, "seed \(seed)")
            // Rolling back leaves the base.
            pending.rollback()
            XCTAssertTrue(pending.isEmpty)
            XCTAssertEqual(Self.contents(pending.graph), first)
        }
    }

    func testAStepThatNamesAMissingObjectIsRefusedAndStagesNothing() throws {
        var pending = PendingChanges(base: Self.notes(3))
        try pending.stage(EditStep(label: "delete 2", edits: [.remove(Self.note(2))]))
        let before = Self.contents(pending.graph)
        XCTAssertThrowsError(try pending.stage(EditStep(label: "set 2", edits: [.set(Self.note(2), attribute: "n", value: .int(5))])))
        XCTAssertThrowsError(try pending.stage(EditStep(label: "insert 1", edits: [.insert(Self.note(1), values: ["n": .int(1)])])))
        XCTAssertEqual(Self.contents(pending.graph), before)
        XCTAssertEqual(pending.active.count, 1)
    }

    /// A small seeded generator (SplitMix64).
    struct SplitMix {
        var state: UInt64
        init(_ seed: UInt64) { state = seed }
        mutating func next(_ n: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(n))
        }
    }
}
