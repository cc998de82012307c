import Foundation
import LoupeModel

/// A statement the engine answers over a store read a chunk of objects at a time, for what a
/// ``QuerySource`` cannot say in SQL over a store too large to load (arithmetic, a view, a table
/// without a rowid, `MATCHES` on PostgreSQL…): `count T [where …]`, and `T [where …] [limit n
/// [offset m]]`, whose paths read only `T`'s own attributes (nested keys after one are the
/// value's own) and no relation or backlink. Each chunk is a graph of the store's schema holding
/// a few thousand of `T`'s objects with every attribute kind the whole type has, so paths
/// compile as over the loaded graph and the engine's answers are its answers over the load.
/// The browser's paged mode, `loupe query` and `loupe repl` over the memory budget use it.
public struct ChunkedAnswer: Sendable {
    /// The type's index in the source's catalog, and its name there.
    public let type: Int
    public let typeName: String
    /// Every name the statement's paths use.
    let names: Set<String>
    /// True for a query (its objects are the answer), false for a count.
    let listsObjects: Bool
    /// A query's `limit n offset m` (the chunks stop once they hold `m + n` objects).
    let limit: (count: Int, offset: Int)?
    /// Objects read per chunk.
    public static let chunkSize = 4_096

    /// The plan for `statement` over `source`, whose types and relations `schema` holds (a graph
    /// of the store's schema: types, attributes and relations, no objects); nil for any other
    /// statement.
    public init?(_ statement: Statement, source: PageSource, schema: ObjectGraph) {
        var limit: (Int, Int)?
        switch statement {
        case .count: listsObjects = false
        case .query(let q) where q.type != nil && q.projection == nil:
            switch q.clauses.count {
            case 0: break
            case 1: guard case .limit(let n, let offset) = q.clauses[0] else { return nil }; limit = (n, offset)
            default: return nil
            }
            listsObjects = true
        default: return nil
        }
        // The names only: a store that lists its types before counting them is not made to count
        // them here (the browser plans on its UI thread).
        let catalog = source.listedTypes.map(\.name)
        guard let reads = statement.namesRead, reads.linkTypes.isEmpty,
              let t = catalog.firstIndex(of: reads.type.text) ?? Self.onlyMatch(catalog, reads.type.text),
              let table = schema.type(named: catalog[t]),
              !reads.names.contains(where: { name in table.relations.contains { $0.name.caseInsensitiveCompare(name) == .orderedSame } })
        else { return nil }
        type = t
        typeName = catalog[t]
        names = reads.names
        self.limit = limit
    }

    /// The plan for `statement` over `source`, its schema read from the store (a window of no
    /// objects); nil when the statement is not one the chunks answer.
    public static func plan(_ statement: Statement, over source: PageSource) throws -> ChunkedAnswer? {
        guard statement.namesRead != nil else { return nil }
        return ChunkedAnswer(statement, source: source, schema: try source.window(keys: [], of: nil).graph)
    }

    /// The answer: first the kinds each name holds over the whole type (paths compile on them,
    /// as over the loaded graph), then the objects `chunkSize` at a time through the engine, in
    /// the source's key order. `progress` is told how many objects were read of how many;
    /// `isCancelled` stops the reading, and `CancellationError` is thrown. An error of the
    /// engine's is thrown as it is.
    public func answer(_ statement: Statement, over source: PageSource, progress: (Int, Int) -> Void = { _, _ in },
                       isCancelled: () -> Bool = { false }) throws -> SourceAnswer {
        let kinds = try source.kinds(type: type, names: names)
        let total = source.catalog[type].count
        let wanted = limit.map { $0.offset + $0.count }
        var count = 0, keys: [ObjectID] = [], read = 0
        var failure: QueryError?   // kept as it is (the store's reader would wrap it)
        if wanted == 0 { return .objects(typeName: typeName, keys: []) }
        try source.forEachChunk(type: type, size: Self.chunkSize, kinds: kinds) { chunk in
            do {
                switch try QueryEngine(graph: chunk).run(statement.withoutClauses) {
                case .count(let n): count += n
                case .objects(_, let refs): keys += refs.map { chunk.id(of: $0) }
                default: break
                }
            } catch let error as QueryError {
                failure = error
                return false
            }
            read += chunk.types[type].count
            progress(read, total)
            if let wanted, keys.count >= wanted { return false }
            return !isCancelled()
        }
        if let failure { throw failure }
        if isCancelled() { throw CancellationError() }
        guard listsObjects else { return .count(count) }
        if let limit { keys = Array(keys.dropFirst(limit.offset).prefix(limit.count)) }
        return .objects(typeName: typeName, keys: keys)
    }

    /// The only name among `names` equal to `name` ignoring case.
    public static func onlyMatch(_ names: [String], _ name: String) -> Int? {
        let matches = names.indices.filter { names[$0].caseInsensitiveCompare(name) == .orderedSame }
        return matches.count == 1 ? matches[0] : nil
    }
}

extension Statement {
    /// The statement without a query's clauses (each chunk is filtered whole; the limit is
    /// applied to the chunks' objects together).
    var withoutClauses: Statement {
        guard case .query(var q) = self, !q.clauses.isEmpty else { return self }
        q.clauses = []
        return .query(q)
    }
}
