import LoupeModel

/// Which names a statement reads as attributes of which types (positions in the graph), found by
/// walking its paths over the graph's relations: the attributes whose kinds it compiles on.
/// Names that are no relation of a type count as read there (an unknown name is looked for).
public struct AttributeReads {
    private let graph: ObjectGraph
    private var reads: [Int: Set<String>] = [:]
    private var variables: [String: Set<Int>] = [:]

    public static func of(_ statement: Statement, in graph: ObjectGraph) -> [Int: Set<String>] {
        var walk = AttributeReads(graph: graph)
        guard let (name, _) = statement.pushdownRoot, let root = graph.type(named: name.text)?.index else { return [:] }
        switch statement {
        case .count(_, let p?): walk.visit(p, [root])
        case .query(let q): walk.visit(q, root)
        case .group(let q, let by): walk.visit(q, root); walk.visit(by, [root])
        default: break
        }
        return walk.reads
    }

    private mutating func visit(_ q: Query, _ root: Int) {
        if let p = q.predicate { visit(p, [root]) }
        for clause in q.clauses {
            switch clause {
            case .sort(let keys): keys.forEach { visit($0.path, [root]) }
            case .distinct(let paths): paths.forEach { visit($0, [root]) }
            case .limit: break
            }
        }
        for column in q.projection ?? [] { visit(column.expression, [root]) }
    }

    private mutating func visit(_ p: Predicate, _ at: Set<Int>) {
        switch p {
        case .constant: break
        case .and(let ps), .or(let ps): ps.forEach { visit($0, at) }
        case .not(let inner): visit(inner, at)
        case .comparison(let c): visit(c.lhs, at); visit(c.rhs, at)
        case .between(_, let e, let low, let high, _): visit(e, at); visit(low, at); visit(high, at)
        case .truthy(let e): visit(e, at)
        }
    }

    private mutating func visit(_ e: Expression, _ at: Set<Int>) {
        switch e {
        case .literal: break
        case .path(let p): visit(p, at)
        case .list(let items, _): items.forEach { visit($0, at) }
        case .arithmetic(_, let a, let b, _): visit(a, at); visit(b, at)
        case .negate(let inner, _): visit(inner, at)
        case .subqueryCount(let collection, let variable, let predicate, _):
            let elements = visit(collection, at)
            let outer = variables[variable]
            variables[variable] = elements
            visit(predicate, at)
            variables[variable] = outer
        }
    }

    /// Walks one path from the types `at`; returns the types it ends on (for a `SUBQUERY`).
    @discardableResult
    private mutating func visit(_ p: Path, _ at: Set<Int>) -> Set<Int> {
        var types = at
        for step in p.steps {
            var next = Set<Int>()
            switch step {
            case .variable(let name): next = variables[name.text] ?? []
            case .name(let name):
                for t in types {
                    let table = graph.types[t]
                    if let r = table.relation(named: name.text) {
                        next.formUnion(table.relations[r].targetTypes)
                    } else {
                        // The name as written, and the schema's spelling it resolves to.
                        reads[t, default: []].insert(name.text)
                        if let a = table.attribute(named: name.text) { reads[t, default: []].insert(table.attributes[a].name) }
                    }
                }
            case .links(let typeName, _):
                if let source = graph.type(named: typeName.text) { next = [source.index] }
            case .id, .type: break
            }
            types = next
        }
        return types
    }
}
