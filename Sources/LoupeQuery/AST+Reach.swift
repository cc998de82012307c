import Foundation
import LoupeModel

/// What a statement can reach in a graph, read from its tree before any store is loaded: a
/// one-shot `loupe query` loads only the type a statement reads when that is all it can reach.
extension Statement {
    /// The type a query, count or group reads and the names its paths start with, when every
    /// path stays inside that type's objects: each starts with a name (an attribute, unless the
    /// store has a relation of that name, which the caller checks), `id` or `@type`, and nothing
    /// reaches other objects (no `@links`, `SUBQUERY`, `#id` literal). Nil otherwise, and for
    /// mutations, dot-commands and bare predicates (whose type is the REPL's current one).
    public var singleTypeReach: (type: Name, firstNames: Set<String>)? {
        var reach = Reach()
        switch self {
        case .count(let type, let predicate):
            if let predicate { reach.visit(predicate) }
            return reach.result(type)
        case .query(let query):
            reach.visit(query)
            return query.type.flatMap(reach.result)
        case .group(let query, let by):
            reach.visit(query)
            reach.visit(by)
            return query.type.flatMap(reach.result)
        case .mutation, .dotCommand:
            return nil
        }
    }
}

/// The names a statement reads, for a loader that reads no more of a store than they reach
/// (``Statement/namesRead``).
public struct NamesRead: Sendable, Equatable {
    /// The type the statement starts from.
    public let type: Name
    /// Every attribute and relation name any path steps through (`@links` relations included).
    public let names: Set<String>
    /// The types `@links` steps name.
    public let linkTypes: Set<String>
    /// True when the result lists the type's objects, which print every attribute.
    public let listsObjects: Bool
}

extension Statement {
    /// What a query, count or group reads: its type, every name its paths use, anywhere (inside
    /// `SUBQUERY` too), and whether it lists objects. Nil for mutations, dot-commands and bare
    /// predicates. (An `#id` literal reaches no object here: in a query it is the key's value,
    /// `#3` the number 3, compared with a key or with an object that a name leads to.)
    public var namesRead: NamesRead? {
        var reach = Reach()
        let type: Name
        var listsObjects = false
        switch self {
        case .count(let t, let predicate):
            type = t
            if let predicate { reach.visit(predicate) }
        case .query(let query):
            guard let t = query.type else { return nil }
            type = t
            reach.visit(query)
            listsObjects = query.projection == nil
        case .group(let query, let by):
            guard let t = query.type else { return nil }
            type = t
            reach.visit(query)
            reach.visit(by)
        case .mutation, .dotCommand:
            return nil
        }
        return NamesRead(type: type, names: reach.allNames, linkTypes: reach.linkTypes, listsObjects: listsObjects)
    }
}

/// Walks a statement's paths and literals, noting the names paths start with and whether
/// anything reaches outside the statement's type, and every name any step uses.
private struct Reach {
    var names = Set<String>()
    var leavesType = false
    /// Every name a step uses, and the types `@links` names.
    var allNames = Set<String>()
    var linkTypes = Set<String>()

    func result(_ type: Name) -> (type: Name, firstNames: Set<String>)? { leavesType ? nil : (type, names) }

    mutating func visit(_ query: Query) {
        if let predicate = query.predicate { visit(predicate) }
        for clause in query.clauses {
            switch clause {
            case .sort(let keys): keys.forEach { visit($0.path) }
            case .distinct(let paths): paths.forEach { visit($0) }
            case .limit: break
            }
        }
        for column in query.projection ?? [] { visit(column.expression) }
    }

    mutating func visit(_ predicate: Predicate) {
        switch predicate {
        case .constant: break
        case .and(let ps), .or(let ps): ps.forEach { visit($0) }
        case .not(let p): visit(p)
        case .comparison(let c): visit(c.lhs); visit(c.rhs)
        case .between(_, let e, let low, let high, _): visit(e); visit(low); visit(high)
        case .truthy(let e): visit(e)
        }
    }

    mutating func visit(_ expression: Expression) {
        switch expression {
        case .literal(let literal, _):
            if case .reference = literal { leavesType = true }
        case .path(let path): visit(path)
        case .list(let items, _): items.forEach { visit($0) }
        case .arithmetic(_, let a, let b, _): visit(a); visit(b)
        case .negate(let e, _): visit(e)
        case .subqueryCount(let collection, _, let predicate, _):
            leavesType = true
            visit(collection)
            visit(predicate)
        }
    }

    mutating func visit(_ path: Path) {
        for step in path.steps {
            switch step {
            case .name(let n): allNames.insert(n.text)
            case .links(let type, let relation): linkTypes.insert(type.text); allNames.insert(relation.text)
            case .variable, .id, .type: break
            }
        }
        switch path.steps.first {
        case .name(let n)?: names.insert(n.text)
        case .id?, .type?: break
        case .links?, .variable?: leavesType = true
        case nil: break
        }
    }
}

extension Mutation {
    /// The type the mutation changes.
    public var typeName: Name {
        switch self { case .update(let t, _, _), .insert(let t, _), .delete(let t, _): return t }
    }

    /// The query that selects the objects an `update` or `delete` changes (every object of the
    /// type without `where`); nil for `insert`.
    public var selection: Statement? {
        switch self {
        case .update(let t, let p, _), .delete(let t, let p): return .query(Query(type: t, predicate: p))
        case .insert: return nil
        }
    }

    /// The keys the values name (`#12`, `#"k"`, and plain integers and text, which a relation
    /// takes as keys): the objects an edit over some of a store's objects reads before it is checked.
    public var namedKeys: [ObjectID] { namedKeysByField.flatMap(\.keys) }

    /// ``namedKeys`` by the attribute or relation each value is assigned to, in order.
    public var namedKeysByField: [(field: String, keys: [ObjectID])] {
        func keys(_ e: Expression) -> [ObjectID] {
            switch e {
            case .literal(.reference(.int(let i)), _), .literal(.integer(let i), _): return [.int(i)]
            case .literal(.reference(.string(let s)), _), .literal(.string(let s), _): return [.string(s)]
            case .list(let items, _): return items.flatMap(keys)
            default: return []
            }
        }
        switch self {
        case .update(_, _, let assignments): return assignments.map { ($0.target.text, keys($0.value)) }
        case .insert(_, let fields): return fields.map { ($0.0.text, keys($0.1)) }
        case .delete: return []
        }
    }

    /// The names the values' paths start with, when every value reads only the object's own
    /// attributes, `id` and `@type` (and key literals); nil when one reaches further (`@links`, a
    /// variable, `SUBQUERY`). A name may still be a relation's, which the caller checks.
    public var valueNames: Set<String>? {
        // `#key` literals name objects by key (the edit reads them); only paths matter here.
        var paths = Reach()
        func visit(_ e: Expression) {
            switch e {
            case .literal: break
            case .list(let items, _): items.forEach(visit)
            default: paths.visit(e)
            }
        }
        switch self {
        case .update(_, _, let assignments): assignments.forEach { visit($0.value) }
        case .insert(_, let fields): fields.forEach { visit($0.1) }
        case .delete: break
        }
        return paths.leavesType ? nil : paths.allNames
    }
}
