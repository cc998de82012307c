import Foundation
import LoupeModel
import Synchronization

/// A statement the engine answers over a store read a chunk of objects at a time, for what a
/// ``QuerySource`` cannot say in SQL over a store too large to load (arithmetic, a view, a table
/// without a rowid, `MATCHES` on PostgreSQL…): `count T [where …]`, `T [where …] [clauses]
/// [select …]` and `T [where …] group by … [clauses]`, whose paths read only `T`'s own
/// attributes (nested keys after one are the value's own). Each
/// chunk is a graph of the store's schema holding a few thousand of `T`'s objects with every
/// attribute kind the whole type has, so paths compile as over the loaded graph; the engine
/// filters each chunk, keeps each candidate's key with the values its clauses and projection
/// read, and the clauses run over all candidates together at the end, so the answers are the
/// engine's answers over the load. What is held is one value per clause path and column per
/// candidate (not the objects); a limit after the sorts and a distinct keeps only the
/// candidates that can still make it, and a limit first stops the reading. Groups are counted
/// chunk by chunk and the counts added. What reads relations or backlinks is asked of SQL: the
/// filter's parts over the whole type, once (``relationParts``); sort keys, distinct paths,
/// columns and a group path for each chunk's candidates, by their keys (``sqlColumns``).
/// The browser's paged mode, `loupe query` and `loupe repl` over the memory budget use it.
public struct ChunkedAnswer: Sendable {
    /// The type's index in the source's catalog, and its name there.
    public let type: Int
    public let typeName: String
    /// Every name the statement's paths use, but for the filter's parts through relations.
    private(set) var names: Set<String> = []
    /// The largest parts of the filter (under its ANDs, ORs and NOTs) that read a relation or
    /// backlink: the chunks hold none, so SQL answers each over the whole type, once, before the
    /// chunks are read (``answer(_:over:relationParts:progress:isCancelled:)``), and the engine
    /// takes each object's outcome from those answers. Empty when the filter reads none.
    public private(set) var relationParts: [Predicate] = []
    /// The sort keys, distinct paths and columns that read a relation or backlink, by their place
    /// among a query's candidate columns (sort keys and distinct paths in clause order, then the
    /// projection's columns): SQL gives their values for each chunk's candidates, by key.
    private(set) var sqlColumns: [(index: Int, expression: Expression)] = []
    /// True when a group's path reads a relation or backlink: SQL groups each chunk's candidates.
    private(set) var groupsBySQL = false
    /// Objects read per chunk (``standardChunkSize`` unless a test asks for smaller chunks).
    let chunkSize: Int
    /// A type of at least this many chunks is read in two parts at once, on two cores.
    static let splitChunks = 48
    /// Objects read per chunk in paged mode and over the budget: few enough that a chunk's graph
    /// is small, enough that each read of the store serves thousands.
    public static let standardChunkSize = 4_096

    /// The plan for `statement` over `source`, whose types and relations `schema` holds (a graph
    /// of the store's schema: types, attributes and relations, no objects); nil for a statement
    /// without ``Statement/namesRead`` (a bare predicate, a mutation, a dot-command). What reads
    /// relations or backlinks (``relationParts``, ``sqlColumns``) is answered by SQL when the plan runs.
    public init?(_ statement: Statement, source: PageSource, schema: ObjectGraph, chunkSize: Int = standardChunkSize) {
        // The names only: a store that lists its types before counting them is not made to count
        // them here (the browser plans on its UI thread).
        let catalog = source.listedTypes.map(\.name)
        guard let reads = statement.namesRead,
              let t = catalog.firstIndex(of: reads.type.text) ?? Self.onlyMatch(catalog, reads.type.text),
              let table = schema.type(named: catalog[t]),
              // A type with subtypes (a Core Data entity with subentities) is asked of its
              // subtypes' objects too, which the type's chunks do not hold.
              schema.family(of: table).count == 1
        else { return nil }
        type = t
        typeName = catalog[t]
        relationNames = table.relations.map(\.name)
        typeRead = reads.type
        self.chunkSize = max(1, chunkSize)
        let predicate = statement.filter
        relationParts = predicate.map(relationParts(of:)) ?? []
        // What the chunks read: the statement with each comparison through relations taken as
        // true (not only the parts asked first: one SQL cannot say whole is asked part by part,
        // and what it mixed with then runs over the chunks).
        guard let local = Statement.count(type: typeRead, predicate: predicate.map { Self.replacing(leafParts(of: $0), in: $0) }).namesRead,
              !leaves(local) else { return nil }
        names = local.names
        // The clauses' paths and the columns: those on the type's own attributes are read by
        // the chunks, the others asked of SQL.
        var expressions: [Expression] = []
        switch statement {
        case .query(let query):
            for clause in query.clauses {
                switch clause {
                case .sort(let keys): expressions += keys.map { .path($0.path) }
                case .distinct(let paths): expressions += paths.map(Expression.path)
                case .limit: break
                }
            }
            expressions += (query.projection ?? []).map(\.expression)
        case .group(_, let by):
            guard let read = namesRead(of: .path(by)), !leaves(read) else { groupsBySQL = true; break }
            names.formUnion(read.names)
        default:
            break
        }
        for (index, expression) in expressions.enumerated() {
            if let read = namesRead(of: expression), !leaves(read) { names.formUnion(read.names) } else { sqlColumns.append((index, expression)) }
        }
    }

    /// What `expression` reads from the type's objects (nil when it names an object by key).
    private func namesRead(of expression: Expression) -> NamesRead? {
        Statement.query(Query(type: typeRead, projection: [Column(expression: expression, alias: nil, name: "")])).namesRead
    }

    /// The type's relations' names (a path starting with one, or naming one anywhere, leaves the type).
    private let relationNames: [String]
    /// The type as the statement names it.
    private let typeRead: Name

    /// True when `reads` reach past the type's own attributes: a relation's name (anywhere in a
    /// path, as a nested key could be named so too) or an `@links` step.
    private func leaves(_ reads: NamesRead) -> Bool {
        !reads.linkTypes.isEmpty || reads.names.contains { name in relationNames.contains { $0.caseInsensitiveCompare(name) == .orderedSame } }
    }

    /// True when `predicate` reads a relation or backlink (or names an object by key).
    private func reaches(_ predicate: Predicate) -> Bool {
        Statement.count(type: typeRead, predicate: predicate).namesRead.map(leaves) ?? true
    }

    /// The largest parts of `predicate` that read relations: one whose every part does is one
    /// part (SQL answers it in one statement), as is a NOT of one; under an AND or OR that
    /// mixes them with parts on the type's own attributes, those that do, each split the same way.
    func relationParts(of predicate: Predicate) -> [Predicate] {
        guard reaches(predicate) else { return [] }
        switch predicate {
        case .and(let parts), .or(let parts):
            let reaching = parts.filter(reaches)
            return reaching.count == parts.count ? [predicate] : reaching.flatMap(relationParts(of:))
        case .not(let inner):
            let split = relationParts(of: inner)
            return split == [inner] ? [predicate] : split
        default:
            return [predicate]
        }
    }

    /// The smallest parts of `predicate` that read relations: its comparisons (and other tests
    /// that are no AND, OR or NOT) that do.
    func leafParts(of predicate: Predicate) -> [Predicate] {
        guard reaches(predicate) else { return [] }
        switch predicate {
        case .and(let parts), .or(let parts): return parts.flatMap(leafParts(of:))
        case .not(let inner): return leafParts(of: inner)
        default: return [predicate]
        }
    }

    /// `predicate` with each of `parts` taken as true (what the chunks' own reading leaves of it).
    static func replacing(_ parts: [Predicate], in predicate: Predicate) -> Predicate {
        if parts.contains(predicate) { return .constant(true) }
        switch predicate {
        case .and(let ps): return .and(ps.map { replacing(parts, in: $0) })
        case .or(let ps): return .or(ps.map { replacing(parts, in: $0) })
        case .not(let p): return .not(replacing(parts, in: p))
        default: return predicate
        }
    }

    /// The plan for `statement` over `source`, its schema read from the store (a window of no
    /// objects); nil when the statement is not one the chunks answer.
    public static func plan(_ statement: Statement, over source: PageSource, chunkSize: Int = standardChunkSize) throws -> ChunkedAnswer? {
        guard statement.namesRead != nil else { return nil }
        return ChunkedAnswer(statement, source: source, schema: try source.window(keys: [], of: nil).graph, chunkSize: chunkSize)
    }

    /// The answer: first the filter's ``relationParts``, each asked of `sql` (the store's
    /// ``QuerySource``) over the whole type, then the kinds each name holds over the whole type
    /// (paths compile on them, as over the loaded graph), then the objects `chunkSize` at a time
    /// through the engine, in the source's key order. `progress` is told how many objects were
    /// read of how many; `isCancelled` stops the reading, and `CancellationError` is thrown. An
    /// error of the engine's is thrown as it is; a part through relations `sql` cannot answer (or
    /// none given) throws ``RelationPartUnanswered``.
    public func answer(_ statement: Statement, over source: PageSource, relationParts sql: ((Statement) throws -> SourceAnswer?)? = nil,
                       progress: (Int, Int) -> Void = { _, _ in }, isCancelled: () -> Bool = { false }) throws -> SourceAnswer {
        var passing: [(Predicate, KeySet)] = []
        for part in relationParts {
            guard let sql else { throw RelationPartUnanswered(part: part) }
            passing += try decide(part, sql)
            if isCancelled() { throw CancellationError() }
        }
        // What SQL gives each chunk's candidates, asked first of none: names the store lacks are
        // the same errors as over the load, and what SQL cannot say is refused before any reading.
        if groupsBySQL || !sqlColumns.isEmpty {
            guard let sql else { throw RelationPartUnanswered(statement: statement) }
            _ = try askSQL(statement, keys: [], sql)
        }
        let kinds = try source.kinds(type: type, names: names)
        let total = source.catalog[type].count
        // A large type is read in parts at once, one per core (two), unless a limit comes first
        // (it stops the reading early, in key order).
        var limitFirst = false
        if case .query(let q) = statement, case .limit? = q.clauses.first { limitFirst = true }
        let splits = !limitFirst && total >= Self.splitChunks * chunkSize && ProcessInfo.processInfo.activeProcessorCount >= 2
            ? try source.chunkSplits(type: type, parts: 2) : []
        let bounds = zip([nil] + splits, splits.map(Optional.some) + [nil]).map { (from: $0, below: $1) }
        /// Reads the chunks into one `Part` per range of keys (`bounds`), the ranges at once,
        /// each on a thread of its own but the first (on this one): each chunk to `body` with the
        /// decisions on the filter's parts through relations for its objects (false stops its
        /// range), until the last, a failure or a cancellation. The parts come in key order.
        func eachChunk<Part>(_ empty: Part, _ body: @escaping (inout Part, ObjectGraph, [DecidedPredicate]) throws -> Bool) throws -> [Part] {
            let read = Mutex(0), stop = Mutex(false)
            /// One range's part; `report` is told how many objects all ranges have read after
            /// each of its chunks.
            func readPart(_ range: (from: ObjectID?, below: ObjectID?), report: (Int) -> Void) throws -> Part {
                var part = empty
                var failure: QueryError?   // kept as it is (the store's reader would wrap it)
                try source.forEachChunk(type: type, size: chunkSize, kinds: kinds, names: names, from: range.from, below: range.below) { chunk in
                    let ids = chunk.types[type].ids
                    let decided = passing.map { part, keys in DecidedPredicate(predicate: part) { keys.contains(ids[Int($0.row)]) } }
                    do {
                        guard try body(&part, chunk, decided) else { return false }
                    } catch let error as QueryError {
                        failure = error
                        return false
                    }
                    let n = read.withLock { $0 += chunk.types[type].count; return $0 }
                    report(n)
                    return !stop.withLock { $0 }
                }
                if let failure { throw failure }
                return part
            }
            func report(_ n: Int) {
                progress(n, total)
                if isCancelled() { stop.withLock { $0 = true } }
            }
            var results: [Result<Part, any Error>] = []
            if bounds.count == 1 {
                results = [Result { try readPart(bounds[0], report: { report($0) }) }]
            } else {
                let reader = Unchecked(readPart), finished = DispatchSemaphore(value: 0)
                var first: Result<Part, any Error>?
                let others = try ParallelWork.run(workers: bounds.count - 1, stackSize: 64 << 20, { worker in
                    let result = Result { try reader.value(bounds[worker + 1], { _ in }) }
                    if case .failure = result { stop.withLock { $0 = true } }
                    finished.signal()
                    return Unchecked(result)
                }, coordinate: {
                    let result = Result { try readPart(bounds[0], report: { report($0) }) }
                    if case .failure = result { stop.withLock { $0 = true } }
                    first = result
                    // The others' progress, and a cancellation, while they finish.
                    for _ in bounds.indices.dropFirst() {
                        while finished.wait(timeout: .now() + 0.1) == .timedOut { report(read.withLock { $0 }) }
                    }
                })
                report(read.withLock { $0 })
                results = [first!] + others.map(\.value)
            }
            if isCancelled() { throw CancellationError() }
            return try results.map { try $0.get() }
        }
        switch statement {
        case .count:
            let counts = try eachChunk(0) { count, chunk, decided in
                if case .count(let n) = try QueryEngine(graph: chunk).run(statement, decided: decided) { count += n }
                return true
            }
            return .count(counts.reduce(0, +))
        case .group(let query, let by):
            var base = query
            base.clauses = []
            let parts = try eachChunk((counts: [Value: Int](), counted: 0)) { part, chunk, decided in
                if groupsBySQL, let sql {
                    let refs = try QueryEngine(graph: chunk).candidates(base, decided: decided).refs
                    guard !refs.isEmpty else { return true }
                    guard case .groups(_, let rows, _) = try askSQL(statement, keys: refs.map { chunk.id(of: $0) }, sql) else { return true }
                    for row in rows { part.counts[row.key, default: 0] += row.count }
                    part.counted += refs.count
                    return true
                }
                guard case .groups(_, let rows, let objects) = try QueryEngine(graph: chunk).run(.group(base, by: by), decided: decided) else { return true }
                for row in rows { part.counts[row.key, default: 0] += row.count }
                part.counted += objects.count
                return true
            }
            let counts = parts.dropFirst().reduce(parts[0].counts) { all, part in all.merging(part.counts, uniquingKeysWith: +) }
            return .groups(key: by.description, rows: QueryEngine.groupClauses(QueryEngine.ranked(counts), query.clauses),
                           total: parts.reduce(0) { $0 + $1.counted })
        case .query(let query):
            let empty = Candidates(clauses: query.clauses, projection: query.projection?.count ?? 0, chunkSize: chunkSize)
            if empty.wanted == 0 {
                guard let projection = query.projection else { return .objects(typeName: typeName, keys: []) }
                return .projection(columns: ResultTable.distinctNames(projection.map(\.name)), rows: [], keys: [])
            }
            let elsewhere = Set(sqlColumns.map(\.index))
            let parts = try eachChunk(empty) { candidates, chunk, decided in
                var found = try QueryEngine(graph: chunk).candidates(query, decided: decided, elsewhere: elsewhere)
                let keys = found.refs.map { chunk.id(of: $0) }
                if let sql, !elsewhere.isEmpty, !keys.isEmpty {
                    guard case .projection(_, let rows, let answered) = try askSQL(statement, keys: keys, sql) else { return true }
                    var row: [ObjectID: Int] = [:]
                    for (i, key) in answered.enumerated() { row[key] = i }
                    for (c, (index, _)) in sqlColumns.enumerated() {
                        found.columns[index] = try keys.map { key in
                            guard let i = row[key] else { throw QueryError("object \(key) of \(typeName) left the store while it was read", at: SourceRange(0, 0)) }
                            return rows[i][c]
                        }
                    }
                }
                candidates.append(keys: keys, columns: found.columns)
                return candidates.wanted.map { candidates.keys.count < $0 } ?? true
            }
            // The later parts' candidates come after the first's, as their keys do.
            var candidates = parts[0]
            for part in parts.dropFirst() { candidates.append(keys: part.keys, columns: part.columns) }
            let (order, next) = QueryEngine.applyClauses(query.clauses, values: candidates.columns, count: candidates.keys.count)
            let keys = order.map { candidates.keys[$0] }
            guard let projection = query.projection else { return .objects(typeName: typeName, keys: keys) }
            let rows = order.map { i in candidates.columns[next...].map { $0[i] } }
            return .projection(columns: ResultTable.distinctNames(projection.map(\.name)), rows: rows, keys: keys)
        default:
            throw QueryError("the chunks answer counts, queries and groups", at: SourceRange(0, 0))
        }
    }

    /// What SQL says of the objects `keys` for `statement`: a group's frequency table of them, or
    /// a query's ``sqlColumns`` for each, as a projection keyed by object (in no given order).
    /// Throws ``RelationPartUnanswered`` when SQL cannot say it.
    func askSQL(_ statement: Statement, keys: [ObjectID], _ sql: (Statement) throws -> SourceAnswer?) throws -> SourceAnswer {
        let range = typeRead.range
        var literals: [Expression] = []
        for key in keys {
            switch key {
            case .int(let i): literals.append(.literal(.integer(i), range))
            case .string(let text): literals.append(.literal(.string(text), range))
            case .double(let d): literals.append(.literal(.decimal(d), range))
            case .data, .composite: throw RelationPartUnanswered(statement: statement)   // no literal names them
            }
        }
        let named = Predicate.comparison(Comparison(lhs: .path(Path(steps: [.id], aggregate: nil, range: range)), op: .in, rhs: .list(literals, range), range: range))
        let type = Name(text: typeName, range: range)
        let asked: Statement
        if groupsBySQL, case .group(_, let by) = statement {
            asked = .group(Query(type: type, predicate: named), by: by)
        } else {
            asked = .query(Query(type: type, predicate: named, projection: sqlColumns.map { Column(expression: $0.expression, alias: nil, name: "\($0.expression)") }))
        }
        guard let answer = try sql(asked) else { throw RelationPartUnanswered(statement: statement) }
        return answer
    }

    /// A query's candidates over the chunks read so far: each one's key and the values its
    /// clauses and projection read (one column per sort key and distinct path, in clause order,
    /// then the projection's), in store order or, once pruned, in the clauses' order.
    struct Candidates {
        let chunkSize: Int
        private(set) var keys: [ObjectID] = []
        private(set) var columns: [[Value]]
        /// A first clause's `limit n offset m`: the candidates it keeps are the first `m + n`
        /// (nil without one).
        let wanted: Int?
        /// With one limit, last, after sorts and at most one distinct right before it: those
        /// clauses with the limit keeping its offset's rows too. Applied to the candidates so
        /// far, they keep every one the clauses over all of them can keep, in an order the
        /// clauses over them and later chunks' candidates do not change (a later candidate of a
        /// distinct's row cut here comes after that row, so it is cut too).
        let pruning: [Clause]?

        init(clauses: [Clause], projection: Int, chunkSize: Int) {
            self.chunkSize = chunkSize
            let width = clauses.reduce(0) { n, clause in
                switch clause {
                case .sort(let keys): return n + keys.count
                case .distinct(let paths): return n + paths.count
                case .limit: return n
                }
            }
            columns = Array(repeating: [], count: width + projection)
            if case .limit(let n, let offset)? = clauses.first { wanted = Self.sum(n, offset) } else { wanted = nil }
            pruning = Self.pruning(clauses)
        }

        /// The clauses that prune (see ``pruning``), nil when pruning could change the answer
        /// (a distinct before a sort keeps the first of its rows in one order, the limit in
        /// another: a row it cut would let a later one of the same values in).
        static func pruning(_ clauses: [Clause]) -> [Clause]? {
            guard clauses.count > 1, case .limit(let n, let offset)? = clauses.last else { return nil }
            let before = clauses.dropLast()
            let distincts = before.indices.filter { if case .distinct = before[$0] { return true } else { return false } }
            guard !before.contains(where: { if case .limit = $0 { return true } else { return false } }), distincts.count <= 1,
                  distincts.allSatisfy({ $0 == before.endIndex - 1 }) else { return nil }
            return Array(before) + [.limit(sum(n, offset), offset: 0)]
        }

        static func sum(_ a: Int, _ b: Int) -> Int {
            let (s, overflow) = a.addingReportingOverflow(b)
            return overflow ? Int.max : s
        }

        /// Adds one chunk's candidates (their columns laid out as ``columns``), then prunes once
        /// they are twice what the limit keeps and a chunk more.
        mutating func append(keys more: [ObjectID], columns chunk: [[Value]]) {
            keys += more
            for c in columns.indices { columns[c] += chunk[c] }
            guard let pruning, case .limit(let keep, _)? = pruning.last,
                  keys.count >= Self.sum(Self.sum(keep, keep), chunkSize) else { return }
            let (order, _) = QueryEngine.applyClauses(pruning, values: columns, count: keys.count)
            keys = order.map { keys[$0] }
            columns = columns.map { column in order.map { column[$0] } }
        }
    }

    /// ``answer(_:over:relationParts:progress:isCancelled:)`` with the filter's parts through
    /// relations asked of `sql` (none given: such a part is refused), `declaring` the attributes
    /// staged edits name (they read as null, as in the staged graph).
    public func answer(_ statement: Statement, over source: PageSource, sql: (any QuerySource)?, declaring: [String: Set<String>] = [:],
                       progress: (Int, Int) -> Void = { _, _ in }, isCancelled: @escaping @Sendable () -> Bool) throws -> SourceAnswer {
        try answer(statement, over: source, relationParts: sql.map { sql in { try sql.answer($0, declaring: declaring, isCancelled: isCancelled) } },
                   progress: progress, isCancelled: isCancelled)
    }

    /// The keys of the type's objects that pass `part` (one of ``relationParts``, or a part of
    /// one SQL could not say whole), said by `sql` over the whole type, as the engine's
    /// decisions: a part SQL cannot say is split as ``relationParts(of:)`` splits a filter (its
    /// own parts through relations, each asked alone); one that cannot be split is refused
    /// (``RelationPartUnanswered``).
    func decide(_ part: Predicate, _ sql: (Statement) throws -> SourceAnswer?) throws -> [(Predicate, KeySet)] {
        let asked = Statement.query(Query(type: Name(text: typeName, range: typeRead.range), predicate: part))
        if case .objects(_, let keys)? = try sql(asked) { return [(part, KeySet(keys))] }
        let inner: [Predicate]
        switch part {
        case .and(let parts), .or(let parts): inner = parts.filter(reaches).flatMap(relationParts(of:))
        case .not(let p): inner = relationParts(of: p)
        default: inner = []
        }
        guard !inner.isEmpty, inner != [part] else { throw RelationPartUnanswered(part: part) }
        return try inner.flatMap { try decide($0, sql) }
    }

    /// The keys one part of a filter passes, for membership tests a chunk's objects at a time:
    /// integer keys sorted (8 bytes each), others in a set.
    struct KeySet {
        private let integers: [Int64]
        private let others: Set<ObjectID>

        init(_ keys: [ObjectID]) {
            var integers: [Int64] = [], others = Set<ObjectID>()
            integers.reserveCapacity(keys.count)
            for key in keys {
                if case .int(let i) = key { integers.append(i) } else { others.insert(key) }
            }
            integers.sort()
            self.integers = integers
            self.others = others
        }

        func contains(_ key: ObjectID) -> Bool {
            guard case .int(let i) = key else { return others.contains(key) }
            var low = 0, high = integers.count
            while low < high {
                let mid = (low + high) / 2
                if integers[mid] < i { low = mid + 1 } else { high = mid }
            }
            return low < integers.count && integers[low] == i
        }
    }

    /// The only name among `names` equal to `name` ignoring case.
    public static func onlyMatch(_ names: [String], _ name: String) -> Int? {
        let matches = names.indices.filter { names[$0].caseInsensitiveCompare(name) == .orderedSame }
        return matches.count == 1 ? matches[0] : nil
    }
}

/// A part of a filter through relations that SQL cannot say over the store (nor each of its
/// own parts through relations): the chunks, which hold no relations, cannot answer the
/// statement. Callers refuse it as they refuse a statement no plan answers.
public struct RelationPartUnanswered: Error, CustomStringConvertible {
    public let description: String

    /// A part of the filter.
    init(part: Predicate) { description = "SQL cannot answer the part of the filter through relations \(part)" }

    /// The sort keys, distinct paths, columns or group path through relations of `statement`.
    init(statement: Statement) {
        let what: String
        switch statement {
        case .group(_, let by): what = "the group path through relations \(by)"
        default: what = "the sort keys, distinct paths or columns through relations"
        }
        description = "SQL cannot give \(what) for the objects the engine selects"
    }
}

extension Statement {
    /// The filter of a query, count or group (nil for others, and when it has none).
    var filter: Predicate? {
        switch self {
        case .count(_, let p): return p
        case .query(let q), .group(let q, _): return q.predicate
        case .mutation, .dotCommand: return nil
        }
    }

    /// The statement with its filter (of a query, count or group) replaced by `predicate`.
    func replacingFilter(_ predicate: Predicate?) -> Statement {
        switch self {
        case .count(let t, _): return .count(type: t, predicate: predicate)
        case .query(var q):
            q.predicate = predicate
            return .query(q)
        case .group(var q, let by):
            q.predicate = predicate
            return .group(q, by: by)
        case .mutation, .dotCommand: return self
        }
    }
}

extension QueryEngine {
    /// A query's objects after its filter alone, in store order, and the values its clauses
    /// order and trim them by (one column per sort key and distinct path, in clause order), then
    /// its projection's columns: the columns ``applyClauses(_:values:count:sortedFirst:limitedSecond:)``
    /// reads, evaluated and compiled in the order ``run(_:currentType:cancellation:)`` evaluates
    /// them (so the same error comes first). Parts of the filter in `decided` are taken as said there;
    /// the columns at `elsewhere` are not read here (their caller's: nulls).
    func candidates(_ query: Query, decided: [DecidedPredicate] = [], elsewhere: Set<Int> = []) throws -> (refs: [ObjectRef], columns: [[Value]]) {
        let compiler = Compiler(graph: graph, decided: decided)
        let run = Run(compiler: compiler, cancellation: nil)
        guard let name = query.type else { throw QueryError("a bare predicate needs a type", at: SourceRange(0, 1)) }
        let type = try compiler.resolveType(name)
        let family = graph.family(of: type)
        let refs = try filter(type, query.predicate, run)
        let env = run.environment()
        var columns: [[Value]] = []
        for clause in query.clauses {
            let paths: [Path]
            switch clause {
            case .sort(let keys): paths = keys.map(\.path)
            case .distinct(let list): paths = list
            case .limit: continue
            }
            for path in paths {
                guard !elsewhere.contains(columns.count) else { columns.append(Array(repeating: .null, count: refs.count)); continue }
                let compiled = try compiler.compilePath(path, on: family)
                columns.append(refs.map { compiled.evaluate(.reference($0), env).value })
            }
        }
        for column in query.projection ?? [] {
            guard !elsewhere.contains(columns.count) else { columns.append(Array(repeating: .null, count: refs.count)); continue }
            let compiled = try compiler.expression(column.expression, on: family)
            columns.append(refs.map { compiled.evaluate(.reference($0), env).value })
        }
        try env.check()
        return (refs, columns)
    }
}

/// A value handed to another thread while its owner waits for it: a chunk reader and what it
/// calls, and what it read, which are not `Sendable`.
private final class Unchecked<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
