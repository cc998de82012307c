import Foundation

extension Statement {
    /// The type a database could answer the statement over and its filter: a `count`, a query
    /// that names its type, or a `group by`; nil for the rest (bare predicates, mutations,
    /// dot-commands), which only a session answers.
    public var pushdownRoot: (type: Name, predicate: Predicate?)? {
        switch self {
        case .count(let type, let p): return (type, p)
        case .query(let q): return q.type.map { ($0, q.predicate) }
        case .group(let q, _): return q.type.map { ($0, q.predicate) }
        default: return nil
        }
    }
}

extension Predicate {
    /// The predicate as SQL text: `AND`, `OR`, `NOT` and the constants written here (`truth` and
    /// `falsehood` are the dialect's), every other node by `leaf`; nil as soon as any leaf is nil
    /// (the whole predicate then stays with the in-memory engine). Leaves must never be NULL in
    /// SQL, so that `NOT` means what the engine means.
    public func sql(truth: String, falsehood: String, leaf: (Predicate) throws -> String?) throws -> String? {
        switch self {
        case .constant(let b): return b ? truth : falsehood
        case .and(let ps), .or(let ps):
            var parts: [String] = []
            for part in ps { guard let sql = try part.sql(truth: truth, falsehood: falsehood, leaf: leaf) else { return nil }; parts.append("(\(sql))") }
            let isAnd: Bool = { if case .and = self { return true } else { return false } }()
            if parts.isEmpty { return isAnd ? truth : falsehood }
            return parts.joined(separator: isAnd ? " AND " : " OR ")
        case .not(let inner):
            return try inner.sql(truth: truth, falsehood: falsehood, leaf: leaf).map { "NOT (\($0))" }
        default:
            return try leaf(self)
        }
    }
}
