import Foundation
import LoupeModel

/// A parsed statement. Every node prints itself (`description`) as a canonical, fully
/// parenthesised form, which is what tests compare.
public indirect enum Statement: Equatable, Sendable, CustomStringConvertible {
    /// `Type [where p] {clause} [select …]`, or a bare predicate (type nil) on the current type.
    case query(Query)
    /// `count Type [where p]`.
    case count(type: Name, predicate: Predicate?)
    /// `Type [where p] group by path [clause]`.
    case group(Query, by: Path)
    /// `update`, `insert`, `delete`.
    case mutation(Mutation)
    /// `.name args`.
    case dotCommand(name: String, arguments: [String], range: SourceRange)

    public var description: String {
        switch self {
        case .query(let q): return q.description
        case .count(let t, let p): return "(count \(t)\(p.map { " where \($0)" } ?? ""))"
        case .group(let q, let by): return "(group \(q) by \(by))"
        case .mutation(let m): return m.description
        case .dotCommand(let name, let args, _): return "(.\(name)\(args.map { " \($0)" }.joined()))"
        }
    }
}

/// A name as written, with where it stands.
public struct Name: Equatable, Sendable, CustomStringConvertible {
    public let text: String
    public let range: SourceRange
    public var description: String { text }
    public init(text: String, range: SourceRange) {
        self.text = text
        self.range = range
    }
}

/// A query: a type (nil for a bare predicate), a filter, clauses in order, and a projection.
public struct Query: Equatable, Sendable, CustomStringConvertible {
    public var type: Name?
    public var predicate: Predicate?
    public var clauses: [Clause] = []
    public var projection: [Column]? = nil

    public init(type: Name? = nil, predicate: Predicate? = nil, clauses: [Clause] = [], projection: [Column]? = nil) {
        self.type = type
        self.predicate = predicate
        self.clauses = clauses
        self.projection = projection
    }

    public var description: String {
        var s = "(query \(type?.text ?? "_")"
        if let predicate { s += " where \(predicate)" }
        for c in clauses { s += " \(c)" }
        if let projection { s += " select " + projection.map(\.description).joined(separator: ", ") }
        return s + ")"
    }
}

/// A clause that orders or trims a result.
public enum Clause: Equatable, Sendable, CustomStringConvertible {
    case sort([SortKey])
    case distinct([Path])
    case limit(Int, offset: Int)

    public var description: String {
        switch self {
        case .sort(let keys): return "(sort " + keys.map(\.description).joined(separator: ", ") + ")"
        case .distinct(let paths): return "(distinct " + paths.map(\.description).joined(separator: ", ") + ")"
        case .limit(let n, let o): return "(limit \(n)\(o > 0 ? " offset \(o)" : ""))"
        }
    }
}

/// One sort key: a path and a direction.
public struct SortKey: Equatable, Sendable, CustomStringConvertible {
    public var path: Path
    public var ascending: Bool
    public var description: String { "\(path) \(ascending ? "asc" : "desc")" }
    public init(path: Path, ascending: Bool) {
        self.path = path
        self.ascending = ascending
    }
}

/// A projected column: an expression and the name it is shown under.
public struct Column: Equatable, Sendable, CustomStringConvertible {
    public var expression: Expression
    public var alias: String?
    /// The column's heading: the alias, else the expression as written.
    public var name: String
    public var description: String { "\(expression)" + (alias.map { " as \($0)" } ?? "") }
}

/// A predicate: what `where` filters with.
public indirect enum Predicate: Equatable, Sendable, CustomStringConvertible {
    case constant(Bool)
    /// All of the operands (n-ary, so long chains never nest deeply).
    case and([Predicate])
    /// Any of the operands.
    case or([Predicate])
    case not(Predicate)
    case comparison(Comparison)
    /// `expr BETWEEN {low, high}`.
    case between(Quantifier?, Expression, low: Expression, high: Expression, range: SourceRange)
    /// A bare expression used as a condition (a boolean attribute).
    case truthy(Expression)

    public var description: String {
        switch self {
        case .constant(let b): return b ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .and(let ps): return "(" + ps.map(\.description).joined(separator: " AND ") + ")"
        case .or(let ps): return "(" + ps.map(\.description).joined(separator: " OR ") + ")"
        case .not(let p): return "(NOT \(p))"
        case .comparison(let c): return c.description
        case .between(let q, let e, let lo, let hi, _): return "(\(q.map { "\($0) " } ?? "")\(e) BETWEEN {\(lo), \(hi)})"
        case .truthy(let e): return "(\(e))"
        }
    }
}

/// `ANY`, `ALL`, `NONE` (`SOME` is `ANY`).
public enum Quantifier: String, Equatable, Sendable, CustomStringConvertible {
    case any = "ANY", all = "ALL", noneOf = "NONE"
    public var description: String { rawValue }
}

/// The comparison operators.
public enum ComparisonOperator: String, Equatable, Sendable, CaseIterable {
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case beginsWith = "BEGINSWITH", endsWith = "ENDSWITH", contains = "CONTAINS", like = "LIKE", matches = "MATCHES"
    case `in` = "IN"
    /// A full-text table's search (`body MATCH "sqlite AND fast"`), in its module's syntax.
    case fullText = "MATCH"
}

/// `[c]` case-insensitive, `[d]` diacritic-insensitive.
public struct ComparisonOptions: OptionSet, Equatable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let caseInsensitive = ComparisonOptions(rawValue: 1)
    public static let diacriticInsensitive = ComparisonOptions(rawValue: 2)
    var text: String {
        if isEmpty { return "" }
        return "[" + (contains(.caseInsensitive) ? "c" : "") + (contains(.diacriticInsensitive) ? "d" : "") + "]"
    }
}

/// `[quantifier] lhs op[modifier] rhs`.
public struct Comparison: Equatable, Sendable, CustomStringConvertible {
    public var quantifier: Quantifier?
    public var lhs: Expression
    public var op: ComparisonOperator
    public var options: ComparisonOptions
    public var rhs: Expression
    /// The operator's place, for errors about the comparison as a whole.
    public var range: SourceRange

    public init(quantifier: Quantifier? = nil, lhs: Expression, op: ComparisonOperator, options: ComparisonOptions = [], rhs: Expression, range: SourceRange) {
        self.quantifier = quantifier
        self.lhs = lhs
        self.op = op
        self.options = options
        self.rhs = rhs
        self.range = range
    }

    public var description: String {
        "(\(quantifier.map { "\($0) " } ?? "")\(lhs) \(op.rawValue)\(options.text) \(rhs))"
    }
}

/// Arithmetic operators; `/` always divides as floating point.
public enum ArithmeticOperator: String, Equatable, Sendable { case add = "+", subtract = "-", multiply = "*", divide = "/" }

/// A value-producing expression.
public indirect enum Expression: Equatable, Sendable, CustomStringConvertible {
    case literal(Literal, SourceRange)
    case path(Path)
    case list([Expression], SourceRange)
    case arithmetic(ArithmeticOperator, Expression, Expression, SourceRange)
    case negate(Expression, SourceRange)
    /// `SUBQUERY(collection, $var, predicate)` followed by `.@count`.
    case subqueryCount(collection: Path, variable: String, predicate: Predicate, range: SourceRange)

    public var description: String {
        switch self {
        case .literal(let l, _): return l.description
        case .path(let p): return p.description
        case .list(let items, _): return "{" + items.map(\.description).joined(separator: ", ") + "}"
        case .arithmetic(let op, let a, let b, _): return "(\(a) \(op.rawValue) \(b))"
        case .negate(let e, _): return "(-\(e))"
        case .subqueryCount(let c, let v, let p, _): return "SUBQUERY(\(c), $\(v), \(p)).@count"
        }
    }

    /// Where the expression stands in the statement.
    public var range: SourceRange {
        switch self {
        case .literal(_, let r), .list(_, let r), .arithmetic(_, _, _, let r), .negate(_, let r): return r
        case .path(let p): return p.range
        case .subqueryCount(_, _, _, let r): return r
        }
    }
}

extension Expression {
    /// The number of levels of the tree (a literal or path is 1). The parser keeps every tree it
    /// builds within ``Parser/maximumHeight``, so everything that recurses over one (the compiler,
    /// evaluation, printing, freeing) stays within a known depth.
    public var height: Int {
        switch self {
        case .literal, .path: return 1
        case .list(let items, _): return 1 + (items.map(\.height).max() ?? 0)
        case .arithmetic(_, let a, let b, _): return 1 + max(a.height, b.height)
        case .negate(let e, _): return 1 + e.height
        case .subqueryCount(_, _, let p, _): return 2 + p.height
        }
    }
}

extension Predicate {
    /// The number of levels of the tree (see ``Expression/height``).
    public var height: Int {
        switch self {
        case .constant: return 1
        case .and(let ps), .or(let ps): return 1 + (ps.map(\.height).max() ?? 0)
        case .not(let p): return 1 + p.height
        case .comparison(let c): return 1 + max(c.lhs.height, c.rhs.height)
        case .between(_, let e, let lo, let hi, _): return 1 + max(e.height, lo.height, hi.height)
        case .truthy(let e): return 1 + e.height
        }
    }
}

/// A literal value.
public enum Literal: Equatable, Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    case integer(Int64)
    case decimal(Double)
    /// A number of more than 15 significant digits, kept digit for digit.
    case exact(ExactDecimal)
    case string(String)
    case date(Date)
    case reference(ObjectIDLiteral)

    public var description: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .integer(let i): return String(i)
        case .decimal(let d): return "\(d)"
        case .exact(let d): return d.text
        case .string(let s):
            return "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                .replacingOccurrences(of: "\n", with: "\\n") + "\""
        case .date(let d): return DateParser.iso(d)
        case .reference(let r): return r.description
        }
    }
}

/// A path: steps from the current object (or a variable), optionally ending in an aggregate.
public struct Path: Equatable, Sendable, CustomStringConvertible {
    public var steps: [Step]
    /// `@count`, `@sum`, …, applied to the collection the steps yield.
    public var aggregate: Aggregate?
    public var range: SourceRange

    public var description: String {
        var parts = steps.map(\.description)
        if let aggregate { parts.append("@" + aggregate.rawValue) }
        return parts.joined(separator: ".")
    }

    /// The path a browser's column names, not parsed (any name): `id`, `@type`, or one
    /// attribute or relation of the objects listed.
    public static func column(_ name: String) -> Path {
        let step: Step = name == "id" ? .id : name == "@type" ? .type : .name(Name(text: name, range: SourceRange(0, 0)))
        return Path(steps: [step], aggregate: nil, range: SourceRange(0, 0))
    }
}

/// One step of a path.
public enum Step: Equatable, Sendable, CustomStringConvertible {
    /// An attribute or relation name.
    case name(Name)
    /// `@links.Type.relation`.
    case links(type: Name, relation: Name)
    /// `$var` (only first).
    case variable(Name)
    /// `id`: the object's key.
    case id
    /// `@type`: the object's type name.
    case type

    public var description: String {
        switch self {
        case .name(let n): return n.text
        case .links(let t, let r): return "@links.\(t.text).\(r.text)"
        case .variable(let v): return "$" + v.text
        case .id: return "id"
        case .type: return "@type"
        }
    }
}

/// Collection operators.
public enum Aggregate: String, Equatable, Sendable {
    case count, sum, avg, min, max
}

/// A statement that changes data (parsed now; staged by the editing layer).
public enum Mutation: Equatable, Sendable, CustomStringConvertible {
    case update(type: Name, predicate: Predicate?, assignments: [Assignment])
    case insert(type: Name, fields: [(Name, Expression)])
    case delete(type: Name, predicate: Predicate?)

    public static func == (a: Mutation, b: Mutation) -> Bool { a.description == b.description }

    public var description: String {
        switch self {
        case .update(let t, let p, let a):
            return "(update \(t)\(p.map { " where \($0)" } ?? "") set " + a.map(\.description).joined(separator: ", ") + ")"
        case .insert(let t, let fields):
            return "(insert \(t) {" + fields.map { "\($0.0): \($0.1)" }.joined(separator: ", ") + "})"
        case .delete(let t, let p): return "(delete \(t)\(p.map { " where \($0)" } ?? ""))"
        }
    }
}

/// `name = expr`, `relation += ref`, `relation -= ref`.
public struct Assignment: Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable { case set = "=", add = "+=", remove = "-=" }
    public var target: Name
    public var kind: Kind
    public var value: Expression
    public var description: String { "\(target) \(kind.rawValue) \(value)" }
}

extension DateParser {
    static func iso(_ d: Date) -> String { LoupeModelDate.iso(d) }
}
