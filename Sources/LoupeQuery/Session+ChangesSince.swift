import Foundation
import DisplayText
import LoupeModel

/// `.changes-since`: what changed in the store since it was opened, or since `.changes-since
/// mark` marked it — per type (`+added ~changed −deleted`), then per object, attribute by
/// attribute and relation by relation, as `loupe diff` compares two stores (``StoreDiff``).
/// The store is read again for it (another process may have written since), never written.
/// `.diff FILE` is the same comparison between the open store and another one.
extension ReplSession {
    /// The store as it was at a moment `.changes-since` compares with: when it was opened, or
    /// marked (`label` says which, and when).
    public struct ChangesMark: Sendable {
        public let graph: ObjectGraph
        public let label: String

        public init(graph: ObjectGraph, label: String, at date: Date = Date()) {
            self.graph = graph
            let clock = DateFormatter()
            clock.dateFormat = "HH:mm:ss"
            self.label = "\(label) at \(clock.string(from: date))"
        }
    }

    /// One `.changes-since` (the mark to compare with, or a new mark to set) or `.diff FILE`
    /// (the store as loaded compared with FILE).
    public struct ChangesSinceRequest: Sendable {
        public let mark: ChangesMark
        public let setsMark: Bool
        /// `.diff`'s other store.
        public var other: String? = nil

        /// The store to compare the mark with: `.diff`'s other one, else the open store read
        /// again (without a file, the graph as loaded), through `host.read`, which leaves what
        /// a commit checks against as it was.
        public func readNow(host: SessionHost?, storePath: String?, base: ObjectGraph, progress: ProgressReport?) throws -> ObjectGraph {
            guard let path = other ?? storePath else { return base }
            guard let host else { throw QueryError("reading another store is not available here", at: SourceRange(0, 0)) }
            return try host.read(path: path, progress: progress)
        }

        /// The changes from the mark to `now` (the store read again), on any thread.
        public func run(now: ObjectGraph) throws -> ChangesSince {
            guard !setsMark else { return ChangesSince(label: mark.label, summaries: [], changes: []) }
            var changes: [ObjectChange] = []
            let summaries = try StoreDiff(GraphDiffSide(mark.graph), GraphDiffSide(now)).run { event in
                if case .change(let change) = event { changes.append(change) }
            }
            return ChangesSince(label: mark.label, summaries: summaries, changes: changes, other: other)
        }
    }

    /// What changed since a mark: each type's figures and each object's change, in the diff's
    /// order (by type; removed and changed objects in key order, then the added ones).
    public struct ChangesSince: Sendable {
        /// `opened at 09:41:07`.
        public let label: String
        public let summaries: [TypeSummary]
        public let changes: [ObjectChange]
        /// `.diff`'s other store (the comparison is then this store → it).
        public var other: String? = nil
        /// What the other store is called on screen: its file's name (an address's last part,
        /// without credentials).
        public var otherName: String? { other.map { URL(fileURLWithPath: ReplSession.withoutPassword($0)).lastPathComponent } }

        /// `changes since the store was opened at 09:41:07: 3 objects in 2 of 11 types`, or for
        /// `.diff`, `differences from this store to copy.sqlite: …`.
        public var headline: String {
            let types = summaries.filter { !$0.isSame }.count
            let shown = other.map { DisplayText.escaped(ReplSession.withoutPassword($0)) }
            guard !changes.isEmpty || types > 0 else {
                return shown.map { "no differences between this store and \($0)" } ?? "no changes since the store was \(label)"
            }
            return (shown.map { "differences from this store to \($0)" } ?? "changes since the store was \(label)")
                + ": \(changes.count.counting("object")) in \(types) of \(summaries.count.counting("type"))"
        }

        /// The headline, then per type that changed a line of figures and a line per object.
        public var text: String {
            var lines = [headline]
            for summary in summaries where !summary.isSame {
                lines.append(ChangesSince.figures(summary))
                lines += changes.filter { $0.type == summary.name }.map { "  " + $0.line }
            }
            return lines.joined(separator: "\n") + "\n"
        }

        /// `Album: +1 ~2 −0 (347 → 348 objects)`, or a type added or dropped since.
        static func figures(_ s: TypeSummary) -> String {
            let name = DisplayText.escaped(s.name)
            guard let a = s.countA, let b = s.countB else { return "\(name): \(s.countA == nil ? "new type" : "type gone") (\((s.countA ?? s.countB ?? 0).counting("object")))" }
            return "\(name): +\(s.added) ~\(s.changed) −\(s.removed) (\(a) → \(b.counting("object")))"
        }
    }

    /// Takes the outcome of a `.changes-since`: the changes as text, or, for `mark`, the store
    /// read again as the new mark.
    public func finishChangesSince(_ request: ChangesSinceRequest, _ outcome: Result<(now: ObjectGraph, changes: ChangesSince), any Error>) -> Reply {
        switch outcome {
        case .failure(let error): return Reply(output: "", error: "error: \(error)")
        case .success(let (now, changes)):
            guard request.setsMark else {
                do { return try deliver(changes.text) } catch { return Reply(output: "", error: "error: \(error)") }
            }
            changesMark = ChangesMark(graph: now, label: "marked")
            return Reply(output: "marked: .changes-since now lists what changes after the store as it is (\(now.objectCount.counting("object")))\n")
        }
    }
}
