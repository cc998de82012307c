import Foundation
import LoupeModel

/// A store that answers statements itself, over its own files, without its graph in memory (SQL
/// over a Persist file larger than memory): the seam beside ``QueryEngine``, which answers over
/// a loaded graph. Answers are the engine's, errors too; a statement the source cannot answer
/// exactly gives nil, and the caller answers it some other way or says why it cannot.
public protocol QuerySource: AnyObject, Sendable {
    /// The statement's answer, or nil (see above). `isCancelled` is polled while it runs; a
    /// cancelled statement throws.
    func answer(_ statement: Statement, isCancelled: @escaping @Sendable () -> Bool) throws -> SourceAnswer?
    /// The same, with `attributes` (by type name) declared as attributes no object of the store
    /// holds yet (staged edits name them): they read as null, as in the staged graph.
    func answer(_ statement: Statement, declaring attributes: [String: Set<String>], isCancelled: @escaping @Sendable () -> Bool) throws -> SourceAnswer?
    /// The same, except that where the source knows why it cannot answer (a relation whose keys
    /// match only by SQLite's affinity) it throws that ``Decline`` instead of returning nil: what
    /// a plan tells the user.
    func answerOrDecline(_ statement: Statement, declaring attributes: [String: Set<String>], isCancelled: @escaping @Sendable () -> Bool) throws -> SourceAnswer?
    /// The attributes of type `typeName` whose order this source keeps in Loupe's cache, fresh
    /// for the store as it is (sorts by them read it); nil when it keeps no such index (a
    /// store's own indexes serve its sorts).
    func sortIndexes(typeName: String) -> Set<String>?
    /// Works out the order of `attribute` over type `typeName` from the store and keeps it in
    /// Loupe's cache (never in the store), off the UI thread; `isCancelled` stops it, keeping
    /// nothing.
    func buildSortIndex(typeName: String, attribute: String, isCancelled: @escaping @Sendable () -> Bool) throws
}

extension QuerySource {
    /// A source whose store's own indexes serve sorts keeps none.
    public func sortIndexes(typeName: String) -> Set<String>? { nil }
    public func buildSortIndex(typeName: String, attribute: String, isCancelled: @escaping @Sendable () -> Bool) throws {
        throw QueryError("this store's own indexes serve its sorts", at: SourceRange(0, 0))
    }

    /// A source that names no reason declines with nil.
    public func answerOrDecline(_ statement: Statement, declaring attributes: [String: Set<String>], isCancelled: @escaping @Sendable () -> Bool) throws -> SourceAnswer? {
        try answer(statement, declaring: attributes, isCancelled: isCancelled)
    }

    /// A source that cannot declare attributes answers only when none are.
    public func answer(_ statement: Statement, declaring attributes: [String: Set<String>], isCancelled: @escaping @Sendable () -> Bool) throws -> SourceAnswer? {
        attributes.isEmpty ? try answer(statement, isCancelled: isCancelled) : nil
    }
}

/// A statement's answer from a ``QuerySource``: objects as their keys (the caller reads them a
/// page at a time), values as they are.
public enum SourceAnswer: Sendable {
    case count(Int)
    case objects(typeName: String, keys: [ObjectID])
    /// A projection's rows, each with the key of the object it was read from.
    case projection(columns: [String], rows: [[Value]], keys: [ObjectID])
    /// A frequency table, and how many objects it counted.
    case groups(key: String, rows: [(key: Value, count: Int)], total: Int)
}

extension QueryEngine {
    /// A query's clauses (`sort`, `distinct`, `limit`) applied in order to rows `0..<count` whose
    /// clause values are `values` (one column per sort key and distinct path, in clause order,
    /// then the projection's columns): the rows' order, and the first column after the clauses'.
    /// `sortedFirst`/`limitedSecond` say the rows already come sorted by the first clause (and
    /// limited by a `limit` right after it), as a database sorted them.
    public static func applyClauses(_ clauses: [Clause], values: [[Value]], count: Int,
                                    sortedFirst: Bool = false, limitedSecond: Bool = false) -> (order: [Int], next: Int) {
        var order = Array(0..<count)
        var next = 0
        for (n, clause) in clauses.enumerated() {
            switch clause {
            case .sort(let keys) where n == 0 && sortedFirst:
                next += keys.count
            case .limit where n == 1 && limitedSecond:
                break
            case .sort(let keys):
                let keyColumns = values[next..<next + keys.count].map { column in order.map { column[$0] } }
                next += keys.count
                order = sortOrder(columns: Array(keyColumns), ascending: keys.map(\.ascending)).map { order[$0] }
            case .distinct(let paths):
                let range = next..<next + paths.count
                next += paths.count
                var seen = Set<[Value]>()
                order = order.filter { i in seen.insert(range.map { values[$0][i] }).inserted }
            case .limit(let n, let offset):
                order = Array(order.dropFirst(offset).prefix(n))
            }
        }
        return (order, next)
    }
}
