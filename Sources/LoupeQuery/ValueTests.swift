import Foundation
import LoupeModel

/// One comparison of the language applied to values handed in one at a time, for evaluators
/// outside the in-memory engine (SQL push-down walks rows and joins in the database and asks this
/// what each value means), so that every engine answers with the engine's own semantics: the
/// comparison is compiled by the same compiler, with its left side (and, when it is not a
/// constant, its right side) replaced by variables set per call.
public final class ValueTest: @unchecked Sendable {
    private let test: CompiledPredicate
    private let environment: Environment
    private let left: Int
    private let right: Int?
    /// True when a call may record a failure ``check()`` throws (a MATCHES whose regular
    /// expression gives up): an evaluator must then test every value the engine would.
    public let mayFail: Bool

    /// `comparison` with each left element as the left side; `rightIsValue` makes the right side a
    /// value handed in too (a path the caller evaluates), else it is compiled as written (a
    /// literal or a list). `elementOfCollection` says the left side ranges over a collection's
    /// elements, where `CONTAINS` without a quantifier means membership (`==` per element).
    public init(_ comparison: Comparison, rightIsValue: Bool, elementOfCollection: Bool) throws {
        let compiler = Compiler(graph: GraphBuilder(formatName: "").finish())
        left = compiler.bind(variable: "\u{1}left")
        right = rightIsValue ? compiler.bind(variable: "\u{1}right") : nil
        var c = comparison
        c.quantifier = nil
        c.lhs = .path(ValueTest.variable("\u{1}left", at: comparison.lhs.range))
        if rightIsValue { c.rhs = .path(ValueTest.variable("\u{1}right", at: comparison.rhs.range)) }
        if elementOfCollection, comparison.op == .contains, comparison.quantifier == nil { c.op = .equal }
        mayFail = c.op == .matches
        test = try compiler.predicate(.comparison(c), on: nil)
        environment = Environment(slots: compiler.slotCount)
    }

    /// `value BETWEEN {low, high}` with constant bounds (as written).
    public init(between low: Expression, _ high: Expression, at range: SourceRange) throws {
        let compiler = Compiler(graph: GraphBuilder(formatName: "").finish())
        left = compiler.bind(variable: "\u{1}left")
        right = nil
        mayFail = false
        test = try compiler.predicate(.between(nil, .path(ValueTest.variable("\u{1}left", at: range)), low: low, high: high, range: range), on: nil)
        environment = Environment(slots: compiler.slotCount)
    }

    /// A bare value used as a condition (`where isActive`).
    public init(truthAt range: SourceRange) throws {
        let compiler = Compiler(graph: GraphBuilder(formatName: "").finish())
        left = compiler.bind(variable: "\u{1}left")
        right = nil
        mayFail = false
        test = try compiler.predicate(.truthy(.path(ValueTest.variable("\u{1}left", at: range))), on: nil)
        environment = Environment(slots: compiler.slotCount)
    }

    private static func variable(_ name: String, at range: SourceRange) -> Path {
        Path(steps: [.variable(Name(text: name, range: range))], aggregate: nil, range: range)
    }

    /// The comparison's answer for one left value (and one right value, when it is handed in).
    public func callAsFunction(_ value: Value, _ other: Value = .null) -> Bool {
        environment.variables[left] = value
        if let right { environment.variables[right] = other }
        return test(.null, environment)
    }

    /// Throws what went wrong while testing (a regular expression that gave up).
    public func check() throws { try environment.check() }

    /// The value of an expression without paths (a literal, a list, a negated number), as the
    /// engine evaluates it (a decimal as its nearest double); nil when it reads an object.
    public static func constant(_ expression: Expression) -> Value? {
        guard !expression.readsObjects else { return nil }
        let compiler = Compiler(graph: GraphBuilder(formatName: "").finish())
        guard let compiled = try? compiler.expression(expression, on: nil) else { return nil }
        let value = compiled.evaluate(.null, Environment(slots: compiler.slotCount)).value
        // A decimal literal compares and computes as its nearest double, in every engine.
        if case .decimal(let d) = value { return .double(d.double) }
        return value
    }

    /// `@count @sum @avg @min @max` over a collection's values, as the engine aggregates them.
    public static func aggregate(_ aggregate: Aggregate, _ values: [Value]) -> Value {
        Aggregation.apply(aggregate, .many(values))
    }
}

extension Expression {
    /// True when evaluating the expression reads an object (a path or a SUBQUERY).
    var readsObjects: Bool {
        switch self {
        case .literal: return false
        case .path, .subqueryCount: return true
        case .list(let items, _): return items.contains(where: \.readsObjects)
        case .arithmetic(_, let a, let b, _): return a.readsObjects || b.readsObjects
        case .negate(let e, _): return e.readsObjects
        }
    }
}

extension QueryEngine {
    /// The order `sort by` puts rows in, given each key's values per row (one column per key):
    /// stable, null first ascending, QUERY.md's order across kinds. Returns row positions.
    public static func sortOrder(columns: [[Value]], ascending: [Bool]) -> [Int] {
        // Each key becomes dense ranks (its distinct values sorted once).
        sortOrder(ranked: zip(columns, ascending).map { SortKeys.denseRanks($0, ascending: $1) })
    }

    /// Each value's dense rank in `sort by`'s ascending order (values that sort level share one)
    /// and how many ranks there are: what ``sortOrder(ranked:)`` sorts by.
    public static func sortRanks(_ column: [Value]) -> (ranks: [Int32], distinct: Int) {
        SortKeys.denseRanks(column, ascending: true)
    }

    /// The order of rows by keys given as dense ranks (one column per key, each reversed already
    /// for a descending key: `distinct - 1 - rank`), ties by position. The ranks are folded into
    /// one integer per row when they fit: the sort then compares integers only.
    public static func sortOrder(ranked: [(ranks: [Int32], distinct: Int)]) -> [Int] {
        let count = ranked.first?.ranks.count ?? 0
        var order = Array(0..<count)
        var width: Double = 1
        for r in ranked { width *= Double(max(r.distinct, 1)) }
        if width < 9e18 {
            var composite = [Int64](repeating: 0, count: count)
            for r in ranked {
                let base = Int64(max(r.distinct, 1))
                for i in composite.indices { composite[i] = composite[i] * base + Int64(r.ranks[i]) }
            }
            let key = composite   // a constant: the comparator reads it without a box
            order.sort { key[$0] != key[$1] ? key[$0] < key[$1] : $0 < $1 }
        } else {
            order.sort { a, b in
                for r in ranked where r.ranks[a] != r.ranks[b] { return r.ranks[a] < r.ranks[b] }
                return a < b
            }
        }
        return order
    }

    /// A `group by` frequency table from each object's key values (one value, or a collection's
    /// elements): most frequent first, ties by key.
    public static func frequencyRows(_ keys: [[Value]]) -> [(key: Value, count: Int)] {
        var counts: [Value: Int] = [:]
        for values in keys { for k in values { counts[k, default: 0] += 1 } }
        return ranked(counts)
    }

    /// A `group by` frequency table from counts per key: most frequent first, ties by key.
    public static func frequencyRows(counts: [Value: Int]) -> [(key: Value, count: Int)] { ranked(counts) }

    /// A frequency table's rows after the group statement's clauses (`sort by key|count`, `limit`).
    public static func groupClauses(_ rows: [(key: Value, count: Int)], _ clauses: [Clause]) -> [(key: Value, count: Int)] {
        var rows = rows
        for clause in clauses {
            switch clause {
            case .limit(let n, let offset): rows = Array(rows.dropFirst(offset).prefix(n))
            case .sort(let keys):
                for k in keys.reversed() {
                    let byCount = k.path.description.lowercased() == "count"
                    rows = stableSorted(rows) { a, b in
                        let o = byCount ? ValueSemantics.sortOrder(.int(Int64(a.count)), .int(Int64(b.count))) : ValueSemantics.sortOrder(a.key, b.key)
                        return k.ascending ? o == .orderedAscending : o == .orderedDescending
                    }
                }
            case .distinct: break
            }
        }
        return rows
    }
}
