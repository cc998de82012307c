import LoupeModel

/// What of a statement's size a SQL dialect bounds.
public enum StatementLimit: String, Sendable, Hashable, Codable {
    /// Tests joined by one `AND`/`OR` chain: SQLite nests a chain one level per term, within
    /// its expression depth (1000 by default).
    case terms
    /// Levels of the statement's tree (parentheses, `NOT`, arithmetic, `SUBQUERY`).
    case nesting
    /// Relations followed by one path (or nested SUBQUERY/quantifiers): each is a nested
    /// subquery, within SQLite's parser stack (100 states by default).
    case hops
    /// Literals bound as parameters (an `IN` list's items too).
    case parameters

    func words(_ size: Int) -> String {
        switch self {
        case .terms: return "a chain of \(size) tests"
        case .nesting: return "nesting \(size) levels deep"
        case .hops: return "a path through \(size) relations"
        case .parameters: return "\(size) bound values"
        }
    }
}

/// A statement's size in the measures a dialect bounds (``StatementLimit``).
public struct StatementSize: Sendable, Equatable {
    public var terms = 0, nesting = 0, hops = 0, parameters = 0

    /// The measures of `statement` (its filter, sort keys, columns, group path, assignments).
    public init(_ statement: Statement) {
        switch statement {
        case .query(let q): add(q)
        case .count(_, let p): p.map { add($0, depth: 1) }
        case .group(let q, let by): add(q); add(by)
        case .mutation(let m):
            switch m {
            case .update(_, let p, let assignments): p.map { add($0, depth: 1) }; assignments.forEach { add($0.value, depth: 1) }
            case .insert(_, let fields): fields.forEach { add($0.1, depth: 1) }
            case .delete(_, let p): p.map { add($0, depth: 1) }
            }
        case .dotCommand: break
        }
    }

    /// The first limit of `limits` this size is beyond, with the size; nil when within all.
    public func beyond(_ limits: DialectLimits) -> (StatementLimit, size: Int, limit: Int)? {
        for (limit, size, most) in [(StatementLimit.terms, terms, limits.terms), (.nesting, nesting, limits.nesting),
                                    (.hops, hops, limits.hops), (.parameters, parameters, limits.parameters)] where size > most {
            return (limit, size, most)
        }
        return nil
    }

    private mutating func add(_ q: Query) {
        q.predicate.map { add($0, depth: 1) }
        for clause in q.clauses {
            switch clause {
            case .sort(let keys): keys.forEach { add($0.path) }
            case .distinct(let paths): paths.forEach { add($0) }
            case .limit: break
            }
        }
        q.projection?.forEach { add($0.expression, depth: 1) }
    }

    private mutating func add(_ p: Predicate, depth: Int, hops outer: Int = 0) {
        nesting = max(nesting, depth)
        switch p {
        case .constant: break
        case .and(let ps), .or(let ps):
            terms = max(terms, ps.count)
            ps.forEach { add($0, depth: depth + 1, hops: outer) }
        case .not(let inner): add(inner, depth: depth + 1, hops: outer)
        case .comparison(let c):
            add(c.lhs, depth: depth + 1, hops: outer)
            add(c.rhs, depth: depth + 1, hops: outer)
        case .between(_, let e, let lo, let hi, _):
            [e, lo, hi].forEach { add($0, depth: depth + 1, hops: outer) }
        case .truthy(let e): add(e, depth: depth + 1, hops: outer)
        }
    }

    private mutating func add(_ e: Expression, depth: Int, hops outer: Int = 0) {
        nesting = max(nesting, depth)
        switch e {
        case .literal: parameters += 1
        case .path(let path): add(path, after: outer)
        case .list(let items, _):
            terms = max(terms, items.count)
            items.forEach { add($0, depth: depth + 1, hops: outer) }
        case .arithmetic(_, let a, let b, _):
            add(a, depth: depth + 1, hops: outer)
            add(b, depth: depth + 1, hops: outer)
        case .negate(let inner, _): add(inner, depth: depth + 1, hops: outer)
        case .subqueryCount(let collection, _, let predicate, _):
            let reached = outer + collection.steps.count
            hops = max(hops, reached)
            add(predicate, depth: depth + 2, hops: reached)
        }
    }

    /// A path's steps past its first may each be a relation followed (a nested subquery).
    private mutating func add(_ path: Path, after outer: Int = 0) {
        hops = max(hops, outer + max(0, path.steps.count - 1) + (path.aggregate == nil ? 0 : 1))
    }
}

/// The most of each measure a dialect takes in the SQL Loupe writes for it (``StatementSize``):
/// past one, the planner keeps the statement in the engine rather than send SQL that fails.
/// Measured over every layout with the statements `PlanLimitTests` makes (the tightest layout
/// sets the figure): SQLite fails a chain of about 1000 tests and a path through 10 relations.
public struct DialectLimits: Sendable, Equatable {
    public let terms: Int, nesting: Int, hops: Int, parameters: Int

    public static func of(_ dialect: StoreKind.Dialect) -> DialectLimits {
        switch dialect {
        case .sqlite: return DialectLimits(terms: 400, nesting: 60, hops: 6, parameters: 30_000)
        case .postgres: return DialectLimits(terms: 10_000, nesting: 200, hops: 40, parameters: 60_000)
        }
    }
}

/// The errors a database gives for SQL past one of its limits. ``DialectLimits`` keeps Loupe's
/// SQL within them; should a layout still nest deeper than measured, the plan takes such an
/// error as SQL declining (the next engine answers) rather than show it.
public enum DialectLimitError {
    static let messages = ["Expression tree is too large", "parser stack overflow", "too many SQL variables",
                           "too many terms in compound SELECT", "stack depth limit exceeded", "too many arguments",
                           "number of parameters must be between"]

    /// The limit `error` names, nil for any other error.
    public static func limit(in error: any Error) -> String? {
        let text = String(describing: error)
        return messages.first { text.localizedCaseInsensitiveContains($0) }
    }
}
