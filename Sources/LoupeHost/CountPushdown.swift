import Foundation
import LoupeModel
import LoupeQuery
import LoupeStore

/// `count T where …` answered by SQLite over a Persist file, without loading it, when the
/// predicate only compares `T`'s numeric attributes with numbers (``AttributeFilter``); any
/// other statement, or a file where SQLite's answer could differ from the engine's, gives nil
/// and the caller runs the statement in memory.
public enum CountPushdown {
    public static func count(_ statement: Statement, file: StoreFile) throws -> Int? {
        guard case .count(let typeName, let predicate) = statement else { return nil }
        guard let filter = predicate.map(translate) ?? .constant(true) else { return nil }
        let (format, catalog) = try LoadedStore.catalog(file)
        guard format == PersistFormat.self else { return nil }
        // The type as a graph resolves it: the exact name, else the only case-insensitive match.
        let names = catalog.map(\.name)
        let matches = names.filter { $0.caseInsensitiveCompare(typeName.text) == .orderedSame }
        guard let type = names.contains(typeName.text) ? typeName.text : matches.count == 1 ? matches[0] : nil else { return nil }
        // A name that is also a relation's would be the relation to the engine.
        let relations = Set(try file.read { try PersistFormat.relationNames($0) ?? [] }.map { $0.lowercased() })
        guard filter.keys.allSatisfy({ !relations.contains($0.lowercased()) }) else { return nil }
        return try PersistFormat.count(file, type: type, where: filter)
    }

    /// The filter a predicate means, or nil when it reads anything but top-level attributes
    /// compared with numbers.
    static func translate(_ p: LoupeQuery.Predicate) -> AttributeFilter? {
        switch p {
        case .constant(let b): return .constant(b)
        case .and(let ps): return all(ps).map(AttributeFilter.and)
        case .or(let ps): return all(ps).map(AttributeFilter.or)
        case .not(let inner): return translate(inner).map(AttributeFilter.not)
        case .between(nil, .path(let path), let low, let high, _):
            guard let key = attribute(path), let lo = number(low), let hi = number(high) else { return nil }
            return .between(key: key, low: lo, high: hi)
        case .comparison(let c) where c.quantifier == nil && c.options.isEmpty:
            let op: AttributeFilter.Comparison
            let flipped: AttributeFilter.Comparison
            switch c.op {
            case .equal: (op, flipped) = (.equal, .equal)
            case .notEqual: (op, flipped) = (.notEqual, .notEqual)
            case .less: (op, flipped) = (.less, .greater)
            case .lessOrEqual: (op, flipped) = (.lessOrEqual, .greaterOrEqual)
            case .greater: (op, flipped) = (.greater, .less)
            case .greaterOrEqual: (op, flipped) = (.greaterOrEqual, .lessOrEqual)
            default: return nil
            }
            if case .path(let path) = c.lhs, let key = attribute(path), let value = number(c.rhs) { return .compare(key: key, op: op, value: value) }
            if case .path(let path) = c.rhs, let key = attribute(path), let value = number(c.lhs) { return .compare(key: key, op: flipped, value: value) }
            return nil
        default: return nil
        }
    }

    private static func all(_ ps: [LoupeQuery.Predicate]) -> [AttributeFilter]? {
        var out: [AttributeFilter] = []
        for p in ps { guard let f = translate(p) else { return nil }; out.append(f) }
        return out
    }

    /// A path that is one attribute name, without an aggregate.
    private static func attribute(_ path: Path) -> String? {
        guard path.steps.count == 1, path.aggregate == nil, case .name(let n) = path.steps[0] else { return nil }
        return n.text
    }

    /// A numeric literal (a negated one too).
    private static func number(_ e: LoupeQuery.Expression) -> AttributeFilter.Number? {
        switch e {
        case .literal(.integer(let i), _): return .int(i)
        case .literal(.decimal(let d), _): return d.isFinite ? .double(d) : nil
        case .negate(.literal(.integer(let i), _), _): return i == .min ? nil : .int(-i)
        case .negate(.literal(.decimal(let d), _), _): return d.isFinite ? .double(-d) : nil
        default: return nil
        }
    }
}
