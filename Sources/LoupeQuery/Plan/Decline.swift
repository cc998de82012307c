import Foundation
import LoupeModel

/// An engine that answers a statement, or a part of one.
public enum PlanEngine: String, Sendable, Codable, CaseIterable {
    case sql, chunks, memory

    /// How `explain` and refusals name the engine over a store of `kind`.
    public func title(over kind: StoreKind) -> String {
        switch self {
        case .sql: return "\(kind.dialect?.rawValue ?? "SQL") over \(kind.layout)"
        case .chunks: return "the engine a chunk of objects at a time"
        case .memory: return "the in-memory engine over the loaded graph"
        }
    }
}

/// Why an engine does not answer a statement: data, from which refusals, `explain` and the
/// status line are written (never prose kept beside the code).
public struct Decline: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Reason: Sendable, Hashable {
        /// The statement is larger than the dialect takes: sent, it would fail.
        case beyondLimit(StatementLimit, size: Int, limit: Int, dialect: StoreKind.Dialect)
        /// The translation cannot say the statement with the engine's semantics; `uses`: the
        /// constructs of ``StoreKind/leaves`` the statement is seen to use (empty: not told apart).
        case untranslated(uses: [SQLConstruct])
        /// The store has no SQL (or none could be made over it).
        case noSQL
        /// Persist's layout in PostgreSQL keyed otherwise than by integers (or documents not
        /// `jsonb`): PostgreSQL does not answer over it.
        case unkeyed
        /// A part of the filter, or the clauses, through relations that SQL cannot give the chunks.
        case relationPart(String)
        /// The chunks read one type's own attributes; this statement is not one of those.
        case notChunked
        /// The store does not read a page at a time (its format is read whole).
        case notPaged
        /// A whole load is over the memory budget (bytes).
        case overBudget(estimate: Int64, budget: Int64)
        /// The store is read a page at a time (paged mode), not loaded.
        case notLoaded
        /// Asked for with `--engine` (`memory` leaves SQL out, `sql` the rest).
        case leftOutByChoice
        /// The store failed under SQL (a damaged file): the load reads what it can.
        case failed(String)
        /// Writes need the loaded graph (or the objects read by key), not an answer from SQL.
        case mutation
    }

    public let engine: PlanEngine
    public let reason: Reason
    /// The kind of store, for the words.
    public let kind: StoreKind

    public init(_ engine: PlanEngine, _ reason: Reason, over kind: StoreKind) {
        self.engine = engine
        self.reason = reason
        self.kind = kind
    }

    /// Why, in words: `a chain of 5000 tests, past the 400 SQLite takes`.
    public var why: String {
        switch reason {
        case .beyondLimit(let limit, let size, let most, let dialect):
            return "\(limit.words(size)), past the \(most) \(dialect.rawValue) takes"
        case .untranslated(let uses) where !uses.isEmpty:
            return "it uses \(SQLConstruct.list(uses)), which \(PlanEngine.sql.title(over: kind)) leaves to the in-memory engine"
        case .untranslated:
            return "\(PlanEngine.sql.title(over: kind)) leaves \(kind.leavesText) to the in-memory engine"
        case .noSQL:
            let answered = StoreKind.allCases.filter { $0.dialect != nil }.map(\.title)
            return "\(kind.title) has no SQL that answers statements (SQL answers over \(answered.dropLast().joined(separator: ", ")) and \(answered.last ?? ""))"
        case .unkeyed:
            return "PostgreSQL answers statements over Persist's layout when its keys are integers and its documents jsonb (by_type.id here is not an integer)"
        case .relationPart(let part): return part
        case .notChunked: return "the chunks read one type's own attributes, and this statement reads more"
        case .notPaged: return "\(kind.title) is not read a page at a time"
        case .overBudget(let estimate, let budget):
            return "a whole load (≈ \(ByteCount(estimate))) is over the \(ByteCount(budget)) memory budget"
        case .notLoaded: return "the store is read a page at a time, not loaded"
        case .leftOutByChoice: return "left out by --engine"
        case .failed(let why): return "the store failed under SQL (\(why))"
        case .mutation: return "an edit is staged over the loaded graph or the objects it names, not answered by SQL"
        }
    }

    public var description: String { "\(engine.title(over: kind)): \(why)" }
}

/// A size in bytes as `--memory-budget` writes it (`512 MB`, `2.0 GB`, binary units).
public struct ByteCount: CustomStringConvertible, Sendable {
    public let bytes: Int64
    public init(_ bytes: Int64) { self.bytes = bytes }
    public var description: String {
        bytes >= 1 << 30 ? String(format: "%.1f GB", Double(bytes) / Double(1 << 30)) : bytes >= 1 << 20 ? "\(bytes >> 20) MB" : "\(bytes >> 10) KB"
    }
}
