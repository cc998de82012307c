import Foundation
import LoupeModel

/// What a statement answers.
public enum QueryResult: Sendable {
    /// Objects, in result order (a query without `select`).
    case objects(type: TypeTable?, refs: [ObjectRef])
    /// A `select` projection: one row per object, the columns as named.
    case projection(columns: [String], rows: [[Value]], refs: [ObjectRef])
    /// A `count`.
    case count(Int)
    /// A `group by` frequency table, most frequent first, ties by key, with the objects it counted.
    case groups(key: String, rows: [(key: Value, count: Int)], objects: [ObjectRef])
    /// Text from a dot-command.
    case message(String)
}

/// Runs statements over one loaded graph, entirely in memory.
public final class QueryEngine: Sendable {
    public let graph: ObjectGraph

    public init(graph: ObjectGraph) { self.graph = graph }

    /// Parses and runs one statement. `currentType` is the type a bare predicate filters;
    /// `cancellation` stops it between objects (the statement then throws ``QueryError/cancelled``).
    public func run(_ source: String, currentType: TypeTable? = nil, cancellation: Cancellation? = nil) throws -> QueryResult {
        try run(try Parser.parse(source), currentType: currentType, cancellation: cancellation)
    }

    /// Runs a parsed statement.
    public func run(_ statement: Statement, currentType: TypeTable? = nil, cancellation: Cancellation? = nil) throws -> QueryResult {
        try run(statement, currentType: currentType, cancellation: cancellation, decided: [])
    }

    /// Runs a parsed statement, the parts of its filter in `decided` taken as said there, not
    /// evaluated.
    func run(_ statement: Statement, currentType: TypeTable? = nil, cancellation: Cancellation? = nil, decided: [DecidedPredicate]) throws -> QueryResult {
        let compiler = Compiler(graph: graph, decided: decided)
        let run = Run(compiler: compiler, cancellation: cancellation)
        switch statement {
        case .count(let typeName, let predicate):
            let type = try compiler.resolveType(typeName)
            return .count(try filter(type, predicate, run).count)
        case .query(let query):
            let (type, refs) = try select(query, currentType: currentType, run)
            guard let projection = query.projection else { return .objects(type: type, refs: refs) }
            let columns = try projection.map { try compiler.expression($0.expression, on: graph.family(of: type)) }
            let env = run.environment()
            var rows: [[Value]] = []
            rows.reserveCapacity(refs.count)
            for (i, ref) in refs.enumerated() {
                if i & 255 == 0 { try env.check() }
                rows.append(columns.map { $0.evaluate(.reference(ref), env).value })
            }
            try env.check()
            return .projection(columns: ResultTable.distinctNames(projection.map(\.name)), rows: rows, refs: refs)
        case .group(let query, let by):
            var base = query
            base.clauses = []
            let (type, refs) = try select(base, currentType: currentType, run)
            let key = try compiler.compilePath(by, on: graph.family(of: type))
            let rows = Self.groupClauses(try frequencyTable(refs, key: key, env: run.environment(), eachElement: true), query.clauses)
            return .groups(key: by.description, rows: rows, objects: refs)
        case .mutation(let m):
            // The engine only reads: a session stages mutations (``Editor``, ``PendingChanges``).
            throw QueryError("a mutation is not a query", at: mutationRange(m),
                             hint: "update, insert and delete are staged by a session: `loupe repl`, the browser's REPL, or `loupe query … --commit`")
        case .dotCommand(let name, _, let range):
            throw QueryError("'.\(name)' is not a query", at: range, hint: "dot-commands run in the REPL")
        }
    }

    /// What one statement's evaluation shares: the compiler (its variables' slots) and the
    /// user's cancellation; each loop gets a fresh ``Environment`` from it.
    struct Run {
        let compiler: Compiler
        let cancellation: Cancellation?
        func environment() -> Environment { Environment(slots: compiler.slotCount, cancellation: cancellation) }
    }

    /// Counts the values of `key` over `refs`: most frequent first, ties by value; references count
    /// as their keys. With `eachElement`, a collection counts each of its elements (`group by`).
    private func frequencyTable(_ refs: [ObjectRef], key: Compiler.CompiledPath, env: Environment,
                                eachElement: Bool) throws -> [(key: Value, count: Int)] {
        var counts: [Value: Int] = [:]
        for (i, ref) in refs.enumerated() {
            if i & 1023 == 0 { try env.check() }
            let operand = key.evaluate(.reference(ref), env)
            for k in (eachElement && key.isCollection ? operand.elements : [operand.value]) {
                counts[normalizedKey(k), default: 0] += 1
            }
        }
        try env.check()
        return Self.ranked(counts)
    }

    /// Counts as frequency table rows: most frequent first, ties by key; keys `sort by` ranks
    /// alike (the integer 5 and the real 5.0, two groups) integer first, so that every engine
    /// gives one order whatever order its counts came in.
    static func ranked(_ counts: [Value: Int]) -> [(key: Value, count: Int)] {
        counts.map { (key: $0.key, count: $0.value) }.sorted {
            if $0.count != $1.count { return $0.count > $1.count }
            switch ValueSemantics.sortOrder($0.key, $1.key) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame:
                if case .int = $0.key, case .double = $1.key { return true }
                if case .double = $0.key, case .int = $1.key { return false }
                return ValueFormatter.json($0.key) < ValueFormatter.json($1.key)
            }
        }
    }

    /// References become their keys so that results print without the graph.
    private func normalizedKey(_ v: Value) -> Value {
        if case .reference(let r) = v { return graph.id(of: r).value }
        return v
    }

    private func mutationRange(_ m: Mutation) -> SourceRange {
        switch m {
        case .update(let t, _, _), .insert(let t, _), .delete(let t, _): return t.range
        }
    }

    /// The objects a query selects, after its filter and clauses.
    private func select(_ query: Query, currentType: TypeTable?, _ run: Run) throws -> (TypeTable, [ObjectRef]) {
        let compiler = run.compiler
        let type: TypeTable
        if let name = query.type {
            type = try compiler.resolveType(name)
        } else if let currentType {
            type = currentType
        } else {
            throw QueryError("a bare predicate needs a type", at: SourceRange(0, 1), hint: "start with a type, like `Book where …`")
        }
        var refs = try filter(type, query.predicate, run)
        for clause in query.clauses {
            switch clause {
            case .sort(let keys): refs = try sort(refs, keys, type: type, run)
            case .distinct(let paths):
                let compiled = try paths.map { try compiler.compilePath($0, on: graph.family(of: type)) }
                let env = run.environment()
                var seen = Set<[Value]>()
                refs = refs.filter { ref in seen.insert(compiled.map { $0.evaluate(.reference(ref), env).value }).inserted }
                try env.check()
            case .limit(let n, let offset):
                refs = Array(refs.dropFirst(offset).prefix(n))
            }
        }
        return (type, refs)
    }

    /// The live objects of `type`, in store order, that satisfy `predicate`. Stops with an error
    /// when the user cancels or a compiled function failed (a regular expression that gave up).
    /// A type with subtypes (Core Data's subentities) includes their objects, after its own.
    func filter(_ type: TypeTable, _ predicate: Predicate?, _ run: Run) throws -> [ObjectRef] {
        guard let predicate else { return graph.liveRefs(of: type) }
        let family = graph.family(of: type)
        let test = try run.compiler.predicate(predicate, on: family)
        let env = run.environment()
        var out: [ObjectRef] = []
        for member in family {
            let table = graph.types[member]
            let t = Int32(member)
            let removed = table.removed
            for row in 0..<table.count {
                if row & 255 == 0, env.shouldStop { break }
                if !removed.isEmpty, removed.contains(row) { continue }
                let ref = ObjectRef(type: t, row: Int32(row))
                if test(.reference(ref), env) { out.append(ref) }
            }
        }
        try env.check()
        return out
    }

    /// Sorts stably by several keys; null first ascending.
    private func sort(_ refs: [ObjectRef], _ keys: [SortKey], type: TypeTable, _ run: Run) throws -> [ObjectRef] {
        let compiled = try keys.map { try run.compiler.compilePath($0.path, on: graph.family(of: type)) }
        let env = run.environment()
        let columns: [[Value]] = compiled.map { key in refs.map { key.evaluate(.reference($0), env).value } }
        try env.check()
        return Self.sortOrder(columns: columns, ascending: keys.map(\.ascending)).map { refs[$0] }
    }
}

/// Sort keys as integers.
enum SortKeys {
    /// Each value's rank among the column's distinct values in QUERY.md's order (null first,
    /// numbers numerically across int and double, strings by Unicode scalars), reversed for a
    /// descending key. Values that order the same share a rank.
    static func denseRanks(_ column: [Value], ascending: Bool) -> (ranks: [Int32], distinct: Int) {
        if let strings = stringRanks(column, ascending: ascending) { return strings }
        if let integers = integerRanks(column, ascending: ascending) { return integers }
        if let numbers = numberRanks(column, ascending: ascending) { return numbers }
        var codes = [Int32](repeating: 0, count: column.count)
        var index: [ExactValue: Int32] = [:]
        var uniques: [Value] = []
        for (i, v) in column.enumerated() {
            if let c = index[ExactValue(v)] { codes[i] = c; continue }
            let c = Int32(uniques.count)
            index[ExactValue(v)] = c
            uniques.append(v)
            codes[i] = c
        }
        // Arrays, objects and data order by their JSON text: made once per value, not per comparison.
        var texts = [String?](repeating: nil, count: uniques.count)
        func text(_ i: Int) -> String {
            if let known = texts[i] { return known }
            let made = ValueFormatter.json(uniques[i])
            texts[i] = made
            return made
        }
        func order(_ a: Int, _ b: Int) -> ComparisonResult { ValueSemantics.sortOrder(uniques[a], uniques[b]) { (text(a), text(b)) } }
        let sorted = uniques.indices.sorted { order($0, $1) == .orderedAscending }
        var rankOfCode = [Int32](repeating: 0, count: uniques.count)
        var rank: Int32 = 0
        for (n, code) in sorted.enumerated() {
            if n > 0, order(sorted[n - 1], code) != .orderedSame { rank += 1 }
            rankOfCode[code] = rank
        }
        let distinct = uniques.isEmpty ? 0 : Int(rank) + 1
        for i in codes.indices {
            let r = rankOfCode[Int(codes[i])]
            codes[i] = ascending ? r : Int32(distinct - 1) - r
        }
        return (codes, distinct)
    }

    /// Ranks of a column of strings and nulls (the common case for text), hashed and compared as
    /// strings rather than as values: nulls first, then UTF-8 byte order (Unicode scalar order).
    static func stringRanks(_ column: [Value], ascending: Bool) -> (ranks: [Int32], distinct: Int)? {
        var codes = [Int32](repeating: -1, count: column.count)
        var index: [ExactValue: Int32] = [:]
        index.reserveCapacity(min(column.count, 1 << 16))
        var uniques: [String] = []
        var hasNull = false
        for (i, v) in column.enumerated() {
            switch v {
            case .string(let s):
                if let c = index[ExactValue(v)] { codes[i] = c; continue }
                let c = Int32(uniques.count)
                index[ExactValue(v)] = c
                uniques.append(s)
                codes[i] = c
            case .null: hasNull = true
            default: return nil
            }
        }
        let order = uniques.indices.sorted { ValueSemantics.compareScalars(uniques[$0], uniques[$1]) == .orderedAscending }
        var rankOfCode = [Int32](repeating: 0, count: uniques.count)
        let base: Int32 = hasNull ? 1 : 0
        for (rank, code) in order.enumerated() { rankOfCode[code] = base + Int32(rank) }
        let distinct = uniques.count + Int(base)
        for i in codes.indices {
            let r = codes[i] < 0 ? 0 : rankOfCode[Int(codes[i])]
            codes[i] = ascending ? r : Int32(distinct - 1) - r
        }
        return (codes, distinct)
    }
}

/// A value as sort keys tell values apart: a string by its UTF-8 bytes (Swift's `String`
/// equality is canonical equivalence, under which two spellings that QUERY.md's order — Unicode
/// scalars — puts apart would share a rank), anything else as `Value` compares it.
struct ExactValue: Hashable {
    let value: Value
    init(_ value: Value) { self.value = value }

    static func == (a: ExactValue, b: ExactValue) -> Bool {
        if case .string(let x) = a.value, case .string(let y) = b.value { return ValueSemantics.compareScalars(x, y) == .orderedSame }
        return a.value == b.value
    }

    func hash(into hasher: inout Hasher) {
        guard case .string(var text) = value else { return hasher.combine(value) }
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

extension SortKeys {
    /// Ranks of a column of integers and nulls (keys, counts, years), the row positions sorted by
    /// value without hashing: nulls first, then numeric order.
    static func integerRanks(_ column: [Value], ascending: Bool) -> (ranks: [Int32], distinct: Int)? {
        var numbers = [Int64](repeating: 0, count: column.count)
        var hasNull = false
        for (i, v) in column.enumerated() {
            switch v {
            case .int(let n): numbers[i] = n
            case .null: hasNull = true
            default: return nil
            }
        }
        let isNull: (Int) -> Bool = { hasNull && column[$0].isNull }
        let order = column.indices.sorted { a, b in
            let na = isNull(a), nb = isNull(b)
            return na != nb ? na : (!na && numbers[a] < numbers[b])
        }
        var ranks = [Int32](repeating: 0, count: column.count)
        var rank: Int32 = -1
        for (n, i) in order.enumerated() {
            if n == 0 || isNull(order[n - 1]) != isNull(i) || (!isNull(i) && numbers[order[n - 1]] != numbers[i]) { rank += 1 }
            ranks[i] = rank
        }
        let distinct = Int(rank) + 1
        if !ascending { for i in ranks.indices { ranks[i] = Int32(distinct - 1) - ranks[i] } }
        return (ranks, distinct)
    }
}

extension SortKeys {
    /// Ranks of a column of numbers, dates and nulls (prices, timestamps), each as one double:
    /// nulls first, numbers, then dates, as ``ValueSemantics/sortOrder(_:_:)`` orders them. Nil
    /// for any other value, NaN, or an integer a double does not hold exactly (integers compare
    /// exactly among themselves, numerically with doubles).
    static func numberRanks(_ column: [Value], ascending: Bool) -> (ranks: [Int32], distinct: Int)? {
        var classes = [UInt8](repeating: 0, count: column.count)
        var numbers = [Double](repeating: 0, count: column.count)
        for (i, v) in column.enumerated() {
            switch v {
            case .null: continue
            case .int(let n) where Int64(exactly: Double(n)) == n: (classes[i], numbers[i]) = (1, Double(n))
            case .double(let d) where !d.isNaN: (classes[i], numbers[i]) = (1, d)
            case .date(let d): (classes[i], numbers[i]) = (2, d.timeIntervalSinceReferenceDate)
            default: return nil
            }
        }
        let order = column.indices.sorted { a, b in classes[a] != classes[b] ? classes[a] < classes[b] : numbers[a] < numbers[b] }
        var ranks = [Int32](repeating: 0, count: column.count)
        var rank: Int32 = -1
        for (n, i) in order.enumerated() {
            if n == 0 || classes[order[n - 1]] != classes[i] || numbers[order[n - 1]] != numbers[i] { rank += 1 }
            ranks[i] = rank
        }
        let distinct = Int(rank) + 1
        if !ascending { for i in ranks.indices { ranks[i] = Int32(distinct - 1) - ranks[i] } }
        return (ranks, distinct)
    }
}

/// A stable sort (Swift's `sort` is stable in practice but not documented so).
func stableSorted<T>(_ items: [T], by less: (T, T) -> Bool) -> [T] {
    let indexed = items.enumerated().map { ($0.offset, $0.element) }
    return indexed.sorted { a, b in less(a.1, b.1) || (!less(b.1, a.1) && a.0 < b.0) }.map(\.1)
}

extension QueryEngine {
    /// A path naming one column: `id`, `@type`, or an attribute or relation name.
    private func columnPath(_ column: String) -> Path { .column(column) }

    private func typesOf(_ refs: [ObjectRef]) -> [Int] { Array(Set(refs.map { Int($0.type) })).sorted() }

    /// The objects stably sorted by one column (null first ascending), as `sort by` sorts.
    public func sorted(_ refs: [ObjectRef], by column: String, ascending: Bool) throws -> [ObjectRef] {
        let compiler = Compiler(graph: graph)
        let key = try compiler.compilePath(columnPath(column), on: typesOf(refs))
        let env = Environment(slots: 0)
        let values = refs.map { key.evaluate(.reference($0), env).value }
        try env.check()
        let ranked = SortKeys.denseRanks(values, ascending: ascending).ranks
        return Array(0..<refs.count).sorted { ranked[$0] != ranked[$1] ? ranked[$0] < ranked[$1] : $0 < $1 }.map { refs[$0] }
    }

    /// The frequency table of one column over some objects: most frequent first, ties by value.
    /// How many of `refs` each value of `path` has, as `group by` counts them (a collection counts
    /// each of its elements).
    public func groupCounts(_ refs: [ObjectRef], by path: Path) throws -> [Value: Int] {
        let key = try Compiler(graph: graph).compilePath(path, on: typesOf(refs))
        var counts: [Value: Int] = [:]
        for row in try frequencyTable(refs, key: key, env: Environment(slots: 0), eachElement: true) { counts[row.key] = row.count }
        return counts
    }

    public func frequencies(_ refs: [ObjectRef], of column: String) throws -> [(key: Value, count: Int)] {
        let compiler = Compiler(graph: graph)
        let key = try compiler.compilePath(columnPath(column), on: typesOf(refs))
        return try frequencyTable(refs, key: key, env: Environment(slots: 0), eachElement: false)
    }

    /// The objects whose column equals `value` (a frequency table row opened).
    public func filtered(_ refs: [ObjectRef], column: String, equals value: Value) throws -> [ObjectRef] {
        let compiler = Compiler(graph: graph)
        let key = try compiler.compilePath(columnPath(column), on: typesOf(refs))
        let env = Environment(slots: 0)
        return refs.filter { ref in
            var v = key.evaluate(.reference(ref), env).value
            if case .reference(let r) = v { v = graph.id(of: r).value }
            return Self.opens(v, row: value, graph: graph)
        }
    }

    /// True when an object whose column holds `value` (references already their keys) is among
    /// those a frequency table's row keyed `key` stands for.
    public static func opens(_ value: Value, row key: Value, graph: ObjectGraph) -> Bool {
        value == key || ValueSemantics.equal(value, key, [], graph: graph)
    }
}

/// The words of the language, for completion and colouring.
public enum Keywords {
    public static let all = ["where", "sort", "by", "asc", "ascending", "desc", "descending", "distinct", "limit", "offset",
                             "select", "as", "group", "count", "update", "insert", "delete", "set", "AND", "OR", "NOT",
                             "ANY", "SOME", "ALL", "NONE", "IN", "BETWEEN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE",
                             "MATCHES", "SUBQUERY", "TRUEPREDICATE", "FALSEPREDICATE", "true", "false", "null", "nil",
                             "@count", "@size", "@sum", "@avg", "@min", "@max", "@links", "@type"]
    /// True for a keyword (case-insensitive).
    public static func contains(_ word: String) -> Bool { all.contains { $0.caseInsensitiveCompare(word) == .orderedSame } }
}
