import Foundation
import LoupeModel
import Synchronization

/// What an expression yields for one object: one value, or a collection (relation targets as
/// references, array elements, values gathered through a to-many step).
enum Operand {
    case one(Value)
    case many([Value])

    /// The elements a quantifier ranges over: a collection's elements, an array's, none for null
    /// (a missing array is an empty collection), else the value itself.
    var elements: [Value] {
        switch self {
        case .one(.array(let items)): return items
        case .one(.null): return []
        case .one(let v): return [v]
        case .many(let vs): return vs
        }
    }

    /// The items a list literal takes from this part: a collection's elements, or the one value.
    var listItems: [Value] {
        switch self {
        case .one(let v): return [v]
        case .many(let vs): return vs
        }
    }

    /// True for a collection or an array value.
    var isCollection: Bool {
        switch self {
        case .many: return true
        case .one(.array): return true
        default: return false
        }
    }

    /// The value when single; a collection as an array value.
    var value: Value {
        switch self {
        case .one(let v): return v
        case .many(let vs): return .array(vs)
        }
    }
}

/// Per-evaluation state: the values of `$variables` by slot, the first failure a compiled
/// function met (compiled predicates answer Bool; a regular expression that gives up, or a path
/// that grows past its bound, records an error here and the engine throws it), and the
/// cancellation the user can trigger. Made afresh for each evaluation, never shared.
final class Environment {
    var variables: [Value]
    /// What each SUBQUERY answered for each distinct input (see ``SubqueryKey``).
    var subqueryAnswers: [SubqueryKey: Int] = [:]
    /// The first error met while evaluating; the engine stops and throws it.
    var failure: QueryError?
    let cancellation: Cancellation?

    init(slots: Int, cancellation: Cancellation? = nil) {
        variables = Array(repeating: .null, count: slots)
        self.cancellation = cancellation
    }

    /// Records the first failure (later ones are consequences of it).
    func fail(_ error: QueryError) { if failure == nil { failure = error } }

    /// True once the user cancelled or something failed: evaluation should stop.
    var shouldStop: Bool { failure != nil || (cancellation?.isCancelled ?? false) }

    /// Throws the recorded failure, or the cancellation, if any.
    func check() throws {
        if let failure { throw failure }
        if cancellation?.isCancelled == true { throw QueryError.cancelled }
    }
}

/// A flag the user sets (Ctrl-C) to stop a running statement; checked between objects and inside
/// regular expression matching. Safe to set from any thread.
public final class Cancellation: Sendable {
    private let flag = Atomic<Bool>(false)
    public init() {}
    /// Asks the statement to stop.
    public func cancel() { flag.store(true, ordering: .relaxed) }
    /// True once ``cancel()`` was called.
    public var isCancelled: Bool { flag.load(ordering: .relaxed) }
}

extension QueryError {
    /// The error a cancelled statement ends with.
    public static let cancelled = QueryError("cancelled", at: SourceRange(0, 0), hint: "the statement was stopped before it finished")
}

/// The comparisons and orderings of QUERY.md over values of any kinds: numbers across int and
/// double, dates against date text, references against keys, null equal to null and to nothing
/// else, and every ordering across unrelated kinds false.
public enum ValueSemantics {
    /// Folds a string as the modifier asks: `[c]` lower-cases, `[d]` drops diacritics.
    @inline(__always)
    static func fold(_ s: String, _ options: ComparisonOptions) -> String {
        if options.isEmpty { return s }
        var o: String.CompareOptions = []
        if options.contains(.caseInsensitive) { o.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { o.insert(.diacriticInsensitive) }
        return s.folding(options: o, locale: nil)
    }

    /// Equality as `==` means it.
    static func equal(_ a: Value, _ b: Value, _ options: ComparisonOptions, graph: ObjectGraph) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case let (.int(x), .int(y)): return x == y
        case let (.string(x), .string(y)): return options.isEmpty ? x == y : fold(x, options) == fold(y, options)
        case let (.bool(x), .bool(y)): return x == y
        case let (.bool(x), .int(y)), let (.int(y), .bool(x)): return (x ? 1 : 0) == y
        case let (.date(x), .date(y)): return x == y
        case let (.date(x), .string(y)), let (.string(y), .date(x)): return DateText.parse(y) == x
        case let (.reference(x), .reference(y)): return x == y
        case let (.reference(r), other), let (other, .reference(r)):
            return graph.id(of: r).value == other || (other.numeric != nil && graph.id(of: r).value.numeric == other.numeric)
        case let (.array(x), .array(y)):
            return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1, options, graph: graph) }
        default:
            if let x = a.numeric, let y = b.numeric { return x == y }
            return a == b
        }
    }

    /// The order of two values of comparable kinds, or nil when they are not comparable.
    static func order(_ a: Value, _ b: Value, _ options: ComparisonOptions) -> ComparisonResult? {
        switch (a, b) {
        case let (.int(x), .int(y)): return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        case let (.string(x), .string(y)): return compareScalars(fold(x, options), fold(y, options))
        case let (.date(x), .date(y)): return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        case let (.date(x), .string(y)): return DateText.parse(y).flatMap { order(.date(x), .date($0), []) }
        case let (.string(x), .date(y)): return DateText.parse(x).flatMap { order(.date($0), .date(y), []) }
        case let (.bool(x), .bool(y)): return x == y ? .orderedSame : (!x ? .orderedAscending : .orderedDescending)
        default:
            if let x = a.numeric, let y = b.numeric {
                if x.isNaN || y.isNaN { return nil }
                return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
            }
            return nil
        }
    }

    /// Unicode scalar order, which is UTF-8 byte order.
    @inline(__always)
    static func compareScalars(_ x: String, _ y: String) -> ComparisonResult {
        var x = x, y = y
        return x.withUTF8 { a in
            y.withUTF8 { b in
                let n = min(a.count, b.count)
                let c = n == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, n)
                if c != 0 { return c < 0 ? .orderedAscending : .orderedDescending }
                return a.count < b.count ? .orderedAscending : a.count > b.count ? .orderedDescending : .orderedSame
            }
        }
    }

    /// A total order for sorting: null first, then booleans, numbers, strings, dates, data, the rest.
    public static func sortOrder(_ a: Value, _ b: Value) -> ComparisonResult {
        sortOrder(a, b) { (ValueFormatter.json(a), ValueFormatter.json(b)) }
    }

    /// The same, the two values' JSON text (what orders values no other rule orders: data,
    /// arrays, objects, NaN) asked of `texts` only when needed: a sort makes each value's once.
    static func sortOrder(_ a: Value, _ b: Value, texts: () -> (String, String)) -> ComparisonResult {
        let ra = rank(a), rb = rank(b)
        if ra != rb { return ra < rb ? .orderedAscending : .orderedDescending }
        if let o = order(a, b, []) { return o }
        switch (a, b) {
        case let (.reference(x), .reference(y)): return x < y ? .orderedAscending : x == y ? .orderedSame : .orderedDescending
        default:
            let (ta, tb) = texts()
            return compareScalars(ta, tb)
        }
    }

    private static func rank(_ v: Value) -> Int {
        switch v {
        case .null: return 0
        case .bool: return 1
        case .int, .double, .decimal: return 2
        case .string: return 3
        case .date: return 4
        case .data: return 5
        case .reference: return 6
        case .array: return 7
        case .object: return 8
        }
    }

    /// `LIKE`: `*` matches any run, `?` one character; the whole string must match.
    static func like(_ text: String, _ pattern: String) -> Bool {
        let s = Array(text.unicodeScalars), p = Array(pattern.unicodeScalars)
        var i = 0, j = 0, star = -1, mark = 0
        while i < s.count {
            if j < p.count, p[j] == "?" || (p[j] == s[i] && p[j] != "*") {
                i += 1; j += 1
            } else if j < p.count, p[j] == "*" {
                star = j; mark = i; j += 1
            } else if star >= 0 {
                j = star + 1; mark += 1; i = mark
            } else {
                return false
            }
        }
        while j < p.count, p[j] == "*" { j += 1 }
        return j == p.count
    }

    /// Truth of a value used as a condition.
    static func truth(_ v: Value) -> Bool {
        switch v {
        case .bool(let b): return b
        case .int(let i): return i != 0
        case .double(let d): return d != 0
        case .null: return false
        case .string(let s): return !s.isEmpty
        case .array(let a): return !a.isEmpty
        default: return true
        }
    }
}

/// One answer of a SUBQUERY: which one (its variable's slot), the count's limit, and everything
/// it reads from outside (the object, when its collection starts there; the outer variables it
/// names). The graph does not change while a statement runs, so equal keys have equal answers.
struct SubqueryKey: Hashable {
    let slot: Int
    let limit: Int
    let inputs: [Value]
}
