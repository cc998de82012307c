import Foundation
import LoupeModel

/// A compiled expression: a function of the current object (or value) and the environment.
struct CompiledExpression {
    let evaluate: (Value, Environment) -> Operand
    /// True when the expression can yield a collection (a to-many step, a backlink, an array).
    let isCollection: Bool
    /// The value, when the expression is a constant.
    let constant: Operand?
}

/// A compiled predicate.
typealias CompiledPredicate = (Value, Environment) -> Bool

/// A part of a filter whose outcome per object is known before the filter runs: `passes` says
/// it for an object of the statement's type (see ``Compiler/decided``).
struct DecidedPredicate {
    let predicate: Predicate
    let passes: (ObjectRef) -> Bool
}

/// Turns AST nodes into functions over one graph, resolving every name against the inferred schema
/// first (exact, then unique case-insensitive), so that a misspelt name fails before any object is
/// read, with a "did you mean".
final class Compiler {
    let graph: ObjectGraph
    private(set) var slotCount = 0
    /// Variables in scope: name → (slot, the types its objects may have, nil when unknown).
    private var variables: [String: (slot: Int, types: [Int]?)] = [:]

    /// Puts a variable in scope with no known types (``ValueTest`` supplies its value per call)
    /// and returns its slot.
    func bind(variable name: String) -> Int {
        let slot = slotCount
        slotCount += 1
        variables[name] = (slot, nil)
        return slot
    }

    /// Predicates whose outcome for each object of the statement's type is already known (a
    /// part of a filter another engine answered: ``ChunkedAnswer``'s parts through relations):
    /// each compiles to its `passes`, never to its paths. Matched by equality, source ranges
    /// included, so a part stands only for itself.
    let decided: [DecidedPredicate]

    init(graph: ObjectGraph, decided: [DecidedPredicate] = []) {
        self.graph = graph
        self.decided = decided
    }

    /// The type a statement names, or an error with a suggestion.
    func resolveType(_ name: Name) throws -> TypeTable {
        if let t = graph.type(named: name.text) { return t }
        let names = graph.types.map(\.name.rawValue)
        throw QueryError("unknown type '\(name.text)'", at: name.range,
                         hint: NameSuggestion.closest(to: name.text, in: names).map { "did you mean '\($0)'?" })
    }

    // MARK: Predicates

    func predicate(_ p: Predicate, on types: [Int]?) throws -> CompiledPredicate {
        if let known = decided.first(where: { $0.predicate == p }) {
            let passes = known.passes
            return { v, _ in if case .reference(let r) = v { return passes(r) } else { return false } }
        }
        switch p {
        case .constant(let b): return { _, _ in b }
        case .and(let ps):
            let parts = try ps.map { try predicate($0, on: types) }
            if parts.count == 2 { let a = parts[0], b = parts[1]; return { v, e in a(v, e) && b(v, e) } }
            return { v, e in
                for part in parts where !part(v, e) { return false }
                return true
            }
        case .or(let ps):
            let parts = try ps.map { try predicate($0, on: types) }
            return { v, e in
                for part in parts where part(v, e) { return true }
                return false
            }
        case .not(let inner):
            let f = try predicate(inner, on: types)
            return { v, e in !f(v, e) }
        case .truthy(let expr):
            let f = try expression(expr, on: types)
            return { v, e in f.evaluate(v, e).elements.contains(where: ValueSemantics.truth) }
        case .between(let q, let expr, let low, let high, let range):
            let x = try expression(expr, on: types)
            try checkQuantifier(q, x, at: range)
            let lo = try expression(low, on: types), hi = try expression(high, on: types)
            let graph = self.graph
            let test: (Value, Value, Value) -> Bool = { x, l, h in
                guard let a = ValueSemantics.order(x, l, []), let b = ValueSemantics.order(x, h, []) else { return false }
                _ = graph
                return a != .orderedAscending && b != .orderedDescending
            }
            return quantified(q, x) { value, v, e in test(value, lo.evaluate(v, e).value, hi.evaluate(v, e).value) }
        case .comparison(let c):
            return try comparison(c, on: types)
        }
    }

    private func checkQuantifier(_ q: Quantifier?, _ lhs: CompiledExpression, at range: SourceRange) throws {
        if let q, !lhs.isCollection {
            throw QueryError("\(q) needs a collection on its left", at: range,
                             hint: "the left side is a single value; drop \(q) or use a to-many path")
        }
    }

    /// Applies a quantifier (none given: ANY over collections) to a per-element test.
    private func quantified(_ q: Quantifier?, _ lhs: CompiledExpression,
                            _ test: @escaping (Value, Value, Environment) -> Bool) -> CompiledPredicate {
        let eval = lhs.evaluate
        if !lhs.isCollection && q == nil {
            return { v, e in
                switch eval(v, e) {
                case .one(let x): return test(x, v, e)
                case .many(let xs): return xs.contains { test($0, v, e) }
                }
            }
        }
        // No quantifier over a member that holds an array in some objects: an array is ANY of its
        // elements, and a single value (null, a number) is itself, as in a member that never
        // holds an array. Mixed kinds in one member never change what `nil` means.
        if q == nil {
            return { v, e in
                switch eval(v, e) {
                case .one(.array(let items)): return items.contains { test($0, v, e) }
                case .one(let x): return test(x, v, e)
                case .many(let xs): return xs.contains { test($0, v, e) }
                }
            }
        }
        switch q! {
        case .any: return { v, e in eval(v, e).elements.contains { test($0, v, e) } }
        case .all: return { v, e in eval(v, e).elements.allSatisfy { test($0, v, e) } }
        case .noneOf: return { v, e in !eval(v, e).elements.contains { test($0, v, e) } }
        }
    }

    /// `pages > "abc"`: an attribute that holds only numbers compared with text is an error (as
    /// in RQL, "unsupported comparison"; NSPredicate raises), not a silent no-match.
    private func checkNumberAgainstText(_ c: Comparison, on types: [Int]?) throws {
        guard [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual].contains(c.op),
              case .path(let path) = c.lhs, path.aggregate == nil, path.steps.count == 1, case .name(let name) = path.steps[0],
              case .literal(.string(let text), let range) = c.rhs, let types, !types.isEmpty else { return }
        let numeric: ValueKind = [.integer, .double, .null]
        let columns = types.compactMap { t in graph.types[t].attribute(named: name.text).map { graph.types[t].attributes[$0] } }
        guard columns.count == types.count, columns.allSatisfy({ $0.kinds.subtracting(numeric).isEmpty && !$0.kinds.subtracting([.null]).isEmpty }) else { return }
        let hint = Double(text) != nil ? "write the number without quotes: \(text)" : "`\(name.text)` holds numbers"
        throw QueryError("cannot compare a number with text", at: range, hint: hint)
    }

    private func comparison(_ c: Comparison, on types: [Int]?) throws -> CompiledPredicate {
        if c.op == .fullText { return try fullTextMatch(c, on: types) }
        if let exists = try subqueryExistence(c, on: types) { return exists }
        let lhs = try expression(c.lhs, on: types)
        let rhs = try expression(c.rhs, on: types)
        try checkNumberAgainstText(c, on: types)
        try checkQuantifier(c.quantifier, lhs, at: c.lhs.range)
        let options = c.options
        let graph = self.graph

        // Collection membership: `collection CONTAINS x` and `x IN collection` (a list literal or
        // a collection, whatever its size, as NSPredicate); `x IN "text"` on two strings is a
        // substring test.
        if c.op == .in {
            let members: (Value, Environment) -> (text: String?, list: [Value])
            if let k = rhs.constant {
                let list = k.isCollection ? k.elements : k.listItems
                let text: String? = { if !k.isCollection, case .string(let s) = k.value { return s } else { return nil } }()
                members = { _, _ in (text, list) }
            } else {
                members = { v, e in
                    let evaluated = rhs.evaluate(v, e)
                    if !rhs.isCollection, case .one(.string(let s)) = evaluated { return (s, [.string(s)]) }
                    return (nil, evaluated.elements)
                }
            }
            return quantified(c.quantifier, lhs) { x, v, e in
                let (text, list) = members(v, e)
                if let text, case .string(let needle) = x {
                    return ValueSemantics.fold(text, options).contains(ValueSemantics.fold(needle, options))
                }
                return list.contains { ValueSemantics.equal(x, $0, options, graph: graph) }
            }
        }
        if c.op == .contains, c.quantifier == nil, lhs.isCollection {
            return { v, e in
                let items = lhs.evaluate(v, e)
                let needle = rhs.evaluate(v, e).value
                if case .one(.string(let s)) = items, case .string(let n) = needle {
                    return ValueSemantics.fold(s, options).contains(ValueSemantics.fold(n, options))
                }
                return items.elements.contains { ValueSemantics.equal($0, needle, options, graph: graph) }
            }
        }

        let test = try scalarTest(c.op, options: options, rhsConstant: rhs.constant, at: c.rhs.range)
        if let k = rhs.constant, !k.isCollection {
            let constant = k.value
            return quantified(c.quantifier, lhs) { x, _, e in test(x, constant, e) }
        }
        return quantified(c.quantifier, lhs) { x, v, e in
            switch rhs.evaluate(v, e) {
            case .one(let y): return test(x, y, e)
            case .many(let ys): return ys.contains { test(x, $0, e) }
            }
        }
    }

    /// How many progress reports (each about 10,000 steps of ICU's matcher) MATCHES allows on one
    /// value before it gives up with an error: about 10 million steps, a quarter of a second.
    static let regexStepBudget = 1_000

    /// The test of one left value against one right value (the environment carries failures and
    /// the cancellation, for MATCHES).
    private func scalarTest(_ op: ComparisonOperator, options: ComparisonOptions, rhsConstant: Operand?,
                            at range: SourceRange) throws -> (Value, Value, Environment) -> Bool {
        let graph = self.graph
        func strings(_ f: @escaping (String, String) -> Bool) -> (Value, Value, Environment) -> Bool {
            if case .one(.string(let k))? = rhsConstant {
                let folded = ValueSemantics.fold(k, options)
                return { a, _, _ in if case .string(let s) = a { return f(ValueSemantics.fold(s, options), folded) } else { return false } }
            }
            return { a, b, _ in
                if case .string(let s) = a, case .string(let t) = b {
                    return f(ValueSemantics.fold(s, options), ValueSemantics.fold(t, options))
                }
                return false
            }
        }
        switch op {
        case .equal: return { a, b, _ in ValueSemantics.equal(a, b, options, graph: graph) }
        case .notEqual: return { a, b, _ in !ValueSemantics.equal(a, b, options, graph: graph) }
        case .less: return { a, b, _ in ValueSemantics.order(a, b, options) == .orderedAscending }
        case .lessOrEqual: return { a, b, _ in ValueSemantics.order(a, b, options).map { $0 != .orderedDescending } ?? false }
        case .greater: return { a, b, _ in ValueSemantics.order(a, b, options) == .orderedDescending }
        case .greaterOrEqual: return { a, b, _ in ValueSemantics.order(a, b, options).map { $0 != .orderedAscending } ?? false }
        case .beginsWith: return strings { $0.hasPrefix($1) }
        case .endsWith: return strings { $0.hasSuffix($1) }
        case .contains:
            let substring = strings { $1.isEmpty || $0.contains($1) }
            return { a, b, e in
                if case .array(let items) = a { return items.contains { ValueSemantics.equal($0, b, options, graph: graph) } }
                return substring(a, b, e)
            }
        case .like: return strings { ValueSemantics.like($0, $1) }
        case .matches:
            var regexOptions: NSRegularExpression.Options = []
            if options.contains(.caseInsensitive) { regexOptions.insert(.caseInsensitive) }
            func compile(_ pattern: String) -> NSRegularExpression? {
                try? NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z", options: regexOptions)
            }
            if case .one(.string(let pattern))? = rhsConstant {
                guard let regex = compile(pattern) else {
                    throw QueryError("invalid regular expression", at: range, hint: "MATCHES takes an ICU regular expression")
                }
                return { a, _, e in
                    if case .string(let s) = a { return Compiler.matches(regex, s, options: options, env: e, at: range) } else { return false }
                }
            }
            return { a, b, e in
                guard case .string(let s) = a, case .string(let p) = b, let regex = compile(p) else { return false }
                return Compiler.matches(regex, s, options: options, env: e, at: range)
            }
        case .in: return { a, b, _ in ValueSemantics.equal(a, b, options, graph: graph) }
        case .fullText: throw QueryError("MATCH searches a full-text table's own rows", at: range, hint: FullTextTarget.hint)
        }
    }

    /// `column MATCH "query"` (or `Table MATCH "query"` for every column) on a full-text table:
    /// the table's module answers the query once, when the statement is compiled, and each
    /// object is tested by its key — the rows SQLite's `MATCH` gives, whichever engine asks.
    private func fullTextMatch(_ c: Comparison, on types: [Int]?) throws -> CompiledPredicate {
        let tables = (types ?? []).map { graph.types[$0] }
        let target = try FullTextTarget(c, on: tables.count == 1 ? tables[0] : nil)
        // (A type with no objects here — a store's schema, its names checked before SQL runs the
        // statement — asks the module nothing: nothing could match.)
        var keys = Set<ObjectID>()
        if let table = tables.first, table.count > 0 {
            do { keys = try target.search.keys(matching: target.query, in: target.column) } catch { throw target.refusal(error) }
        }
        let objects = self.graph
        return { v, _ in
            if case .reference(let r) = v { return keys.contains(objects.id(of: r)) }
            return false
        }
    }

    /// A full-string match of `regex` on `s`, with a step budget: ICU reports progress every
    /// ten thousand steps or so; past ``regexStepBudget`` reports, or when the user cancels, the
    /// match stops, and when ICU itself gives up (its backtracking stack is full) that is recorded
    /// as an error too: giving up is never reported as "no match".
    static func matches(_ regex: NSRegularExpression, _ s: String, options: ComparisonOptions, env: Environment, at range: SourceRange) -> Bool {
        if env.shouldStop { return false }
        let text = options.contains(.diacriticInsensitive) ? ValueSemantics.fold(s, [.diacriticInsensitive]) : s
        var matched = false, ticks = 0
        regex.enumerateMatches(in: text, options: [.reportProgress, .reportCompletion], range: NSRange(text.startIndex..., in: text)) { result, flags, stop in
            if result != nil { matched = true; stop.pointee = true; return }
            if flags.contains(.progress) {
                ticks += 1
                if env.cancellation?.isCancelled == true {
                    stop.pointee = true
                } else if ticks > regexStepBudget {
                    env.fail(QueryError("MATCHES gave up on a value of \(text.count) characters", at: range,
                                        hint: "the pattern backtracks too much (nested repeats like (a+)+); simplify it"))
                    stop.pointee = true
                }
            }
            if flags.contains(.internalError) {
                env.fail(QueryError("MATCHES failed on a value of \(text.count) characters", at: range,
                                    hint: "the regular expression engine gave up (its backtracking stack is full); simplify the pattern"))
            }
        }
        return matched
    }

    // MARK: Expressions

    func expression(_ expr: Expression, on types: [Int]?) throws -> CompiledExpression {
        switch expr {
        case .literal(let l, _):
            let v = literal(l)
            return CompiledExpression(evaluate: { _, _ in .one(v) }, isCollection: false, constant: .one(v))
        case .list(let items, _):
            let parts = try items.map { try expression($0, on: types) }
            if parts.allSatisfy({ $0.constant != nil }) {
                let values = parts.flatMap { $0.constant!.listItems }
                return CompiledExpression(evaluate: { _, _ in .many(values) }, isCollection: true, constant: .many(values))
            }
            return CompiledExpression(evaluate: { v, e in .many(parts.flatMap { $0.evaluate(v, e).listItems }) },
                                      isCollection: true, constant: nil)
        case .negate(let inner, _):
            let f = try expression(inner, on: types)
            return CompiledExpression(evaluate: { v, e in .one(Arithmetic.negate(f.evaluate(v, e).value)) }, isCollection: false, constant: nil)
        case .arithmetic(let op, let a, let b, _):
            let fa = try expression(a, on: types), fb = try expression(b, on: types)
            return CompiledExpression(evaluate: { v, e in .one(Arithmetic.apply(op, fa.evaluate(v, e).value, fb.evaluate(v, e).value)) },
                                      isCollection: false, constant: nil)
        case .path(let p):
            return try path(p, on: types)
        case .subqueryCount(let collection, let variable, let predicate, let range):
            let matches = try subquery(collection, variable, predicate, range, on: types)
            return CompiledExpression(evaluate: { v, e in .one(.int(Int64(matches(v, e, .max)))) }, isCollection: false, constant: nil)
        }
    }

    /// A `SUBQUERY(collection, $variable, predicate)` as a function of the object, the
    /// environment and a limit: how many of the collection's elements pass, counting stopped at
    /// the limit (1 answers `.@count > 0` at the first match).
    ///
    /// Its answer depends only on what it reads from outside: the object (unless the collection
    /// starts from a variable) and the outer variables it names. Each answer is kept in the
    /// environment under those, so a nested SUBQUERY over shared objects is counted once per
    /// distinct input, and the cost grows with the data, not with the nesting.
    private func subquery(_ collection: Path, _ variable: String, _ predicate: Predicate, _ range: SourceRange,
                          on types: [Int]?) throws -> (Value, Environment, Int) -> Int {
        let items = try compilePath(collection, on: types)
        guard items.isCollection else {
            throw QueryError("SUBQUERY needs a collection", at: collection.range, hint: "use a to-many relation or @links path")
        }
        if variables[variable] != nil {
            throw QueryError("variable '$\(variable)' is already in use", at: range, hint: "choose another name")
        }
        // The outer variables it may read: every `$name` in its text bound outside it.
        let text = collection.description + " " + predicate.description
        let named = Set(text.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_" || $0 == "$") }).filter { $0.hasPrefix("$") }.map { String($0.dropFirst()) })
        let outer = named.compactMap { $0 == variable ? nil : variables[$0]?.0 }.sorted()
        let readsObject = !collection.description.hasPrefix("$")
        // Only a SUBQUERY inside another meets the same input twice; one at the top meets each
        // object once, and keeping its answers would only cost memory.
        let memoize = !variables.isEmpty
        let slot = slotCount
        slotCount += 1
        variables[variable] = (slot, items.elementTypes)
        defer { variables[variable] = nil }
        let test = try self.predicate(predicate, on: items.elementTypes)
        return { v, e, limit in
            let key = memoize ? SubqueryKey(slot: slot, limit: limit, inputs: (readsObject ? [v] : []) + outer.map { e.variables[$0] }) : nil
            if let key, let known = e.subqueryAnswers[key] { return known }
            var n = 0
            for item in items.evaluate(v, e).elements {
                e.variables[slot] = item
                if test(item, e) { n += 1; if n >= limit { break } }
            }
            if let key { e.subqueryAnswers[key] = n }
            return n
        }
    }

    /// `SUBQUERY(…).@count` compared with 0 or 1 so that only whether one element passes matters
    /// (`> 0`, `>= 1`, `!= 0`, `== 0`, `< 1`, `<= 0`): the count stops at the first match.
    private func subqueryExistence(_ c: Comparison, on types: [Int]?) throws -> CompiledPredicate? {
        guard c.quantifier == nil, c.options.isEmpty, case .subqueryCount(let collection, let variable, let predicate, let range) = c.lhs,
              case .literal(.integer(let n), _) = c.rhs else { return nil }
        let wantsOne: Bool
        switch (c.op, n) {
        case (.greater, 0), (.greaterOrEqual, 1), (.notEqual, 0): wantsOne = true
        case (.equal, 0), (.less, 1), (.lessOrEqual, 0): wantsOne = false
        default: return nil
        }
        let matches = try subquery(collection, variable, predicate, range, on: types)
        return { v, e in (matches(v, e, 1) > 0) == wantsOne }
    }

    func literal(_ l: Literal) -> Value {
        switch l {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .integer(let i): return .int(i)
        case .decimal(let d): return .double(d)
        case .exact(let d): return .decimal(d)
        case .string(let s): return .string(s)
        case .date(let d): return .date(d)
        case .reference(.int(let i)): return .int(i)
        case .reference(.string(let s)): return .string(s)
        }
    }

    // MARK: Paths

    /// A path's compiled form, with the types of the objects it ends on (when known).
    struct CompiledPath {
        let evaluate: (Value, Environment) -> Operand
        let isCollection: Bool
        let elementTypes: [Int]?
    }

    private func path(_ p: Path, on types: [Int]?) throws -> CompiledExpression {
        let compiled = try compilePath(p, on: types)
        return CompiledExpression(evaluate: compiled.evaluate, isCollection: compiled.isCollection, constant: nil)
    }

    /// How one name resolves on one type.
    private enum Resolution {
        case attribute(Int)
        case relation(Int, toMany: Bool)
        case none
    }

    func compilePath(_ p: Path, on startTypes: [Int]?) throws -> CompiledPath {
        let graph = self.graph
        let tables = graph.types
        var candidates = startTypes
        var isCollection = false
        var stepFunctions: [(Value) -> Operand] = []
        var start: ((Value, Environment) -> Value)? = nil
        // A chain of to-one relations ending in an attribute (`book.author.born`) is also compiled
        // to a loop over the adjacency tables, with no intermediate operands.
        var chain: [(columns: [ColumnValues?], relations: [RelationColumn?])] = []
        var isChain = true

        for (index, step) in p.steps.enumerated() {
            let isLast = index == p.steps.count - 1
            switch step {
            case .variable(let name):
                isChain = false
                guard let v = variables[name.text] else {
                    throw QueryError("unknown variable '$\(name.text)'", at: name.range, hint: "variables come from SUBQUERY(collection, $x, …)")
                }
                let slot = v.slot
                start = { _, e in e.variables[slot] }
                candidates = v.types
            case .id:
                isChain = false
                stepFunctions.append { v in
                    if case .reference(let r) = v { return .one(graph.id(of: r).value) }
                    if case .object(let o) = v { return .one(o["id"] ?? .null) }
                    return .one(.null)
                }
                candidates = nil
            case .type:
                isChain = false
                stepFunctions.append { v in
                    if case .reference(let r) = v { return .one(.string(tables[Int(r.type)].name.rawValue)) }
                    return .one(.null)
                }
                candidates = nil
            case .links(let typeName, let relationName):
                isChain = false
                let source = try resolveType(typeName)
                guard let r = source.relation(named: relationName.text) else {
                    throw QueryError("unknown relation '\(relationName.text)' on \(source.name)", at: relationName.range,
                                     hint: suggestion(relationName.text, among: source.relations.flatMap { [$0.name] + $0.aliases }))
                }
                // The relation of the type and of every type that inherits it (a parent entity's
                // backlinks include its subentities', as its fetch does).
                let name = source.relations[r].name
                let members = graph.family(of: source).compactMap { m in tables[m].relation(named: name).map { (m, $0) } }
                var indexesByType: [[(BacklinkIndex, Int32)]] = []
                for t in tables { indexesByType.append(members.compactMap { m, rm in t.backlinkIndex(sourceType: m, relation: rm).map { ($0, Int32(m)) } }) }
                stepFunctions.append { v in
                    guard case .reference(let ref) = v else { return .many([]) }
                    let indexes = indexesByType[Int(ref.type)]
                    if indexes.count == 1 {
                        let (idx, sourceIndex) = indexes[0]
                        return .many(idx.sources(of: Int(ref.row)).map { .reference(ObjectRef(type: sourceIndex, row: $0)) })
                    }
                    return .many(indexes.flatMap { idx, sourceIndex in idx.sources(of: Int(ref.row)).map { .reference(ObjectRef(type: sourceIndex, row: $0)) } })
                }
                isCollection = true
                candidates = members.map(\.0)
            case .name(let name):
                var resolutions: [Resolution] = []
                for t in tables {
                    let attribute = t.attribute(named: name.text)
                    let relation = t.relation(named: name.text)
                    if isLast, let a = attribute { resolutions.append(.attribute(a)) }
                    else if let r = relation { resolutions.append(.relation(r, toMany: t.relations[r].isToMany)) }
                    else if let a = attribute { resolutions.append(.attribute(a)) }
                    else { resolutions.append(.none) }
                }
                var next: Set<Int> = []
                if let known = candidates, !known.isEmpty {
                    var resolvedAny = false
                    for t in known {
                        switch resolutions[t] {
                        case .attribute(let a):
                            resolvedAny = true
                            if tables[t].attributes[a].kinds.contains(.array) { isCollection = true }
                        case .relation(let r, let toMany):
                            resolvedAny = true
                            if toMany { isCollection = true }
                            next.formUnion(tables[t].relations[r].targetTypes)
                        case .none: break
                        }
                    }
                    if !resolvedAny {
                        let names = known.flatMap { t in tables[t].attributes.map(\.name) + tables[t].relations.flatMap { [$0.name] + $0.aliases } }
                        let owner = known.map { tables[$0].name.rawValue }.joined(separator: "|")
                        throw QueryError("unknown attribute '\(name.text)' on \(owner)", at: name.range,
                                         hint: suggestion(name.text, among: names))
                    }
                    let attributeOnly = known.allSatisfy { if case .relation = resolutions[$0] { return false } else { return true } }
                    if attributeOnly && !isLast {
                        // `Milliseconds.Name`: a path goes on only through a relation, or into a
                        // nested object or array (a JSON attribute); NSPredicate refuses this too.
                        let holdsNested = known.contains { t in
                            if case .attribute(let a) = resolutions[t] { return !tables[t].attributes[a].kinds.isDisjoint(with: [.object, .array]) }
                            return false
                        }
                        if !holdsNested {
                            let owner = known.map { tables[$0].name.rawValue }.joined(separator: "|")
                            throw QueryError("'\(name.text)' is an attribute of \(owner), not a relation", at: name.range,
                                             hint: "a path goes on only through a relation or a nested object")
                        }
                    }
                    candidates = attributeOnly ? nil : Array(next).sorted()
                } else {
                    candidates = nil
                }
                let key = name.text
                // Columns and relation tables are captured once here, so a step is two array reads
                // with no copy of the type's column structs.
                var columnByType: [ColumnValues?] = []
                var relationByType: [RelationColumn?] = []
                for (t, resolution) in resolutions.enumerated() {
                    switch resolution {
                    case .attribute(let a):
                        columnByType.append(tables[t].attributes[a].values)
                        relationByType.append(nil)
                        if !isLast { isChain = false }   // a nested value is walked by the general steps
                    case .relation(let r, let toMany):
                        columnByType.append(nil)
                        relationByType.append(tables[t].relations[r])
                        if toMany { isChain = false }
                    case .none: columnByType.append(nil); relationByType.append(nil)
                    }
                }
                chain.append((columnByType, relationByType))
                stepFunctions.append { v in
                    switch v {
                    case .reference(let ref):
                        let t = Int(ref.type)
                        if let column = columnByType[t] { return .one(column[Int(ref.row)]) }
                        guard let relation = relationByType[t] else { return .one(.null) }
                        let targets = relation.targets(of: Int(ref.row))
                        if relation.isToMany { return .many(targets.map { .reference($0) }) }
                        return .one(targets.first.map { .reference($0) } ?? .null)
                    case .object(let o): return .one(o[key] ?? .null)
                    case .array(let items):
                        return .many(items.map { if case .object(let o) = $0 { return o[key] ?? .null } else { return .null } })
                    default: return .one(.null)
                    }
                }
            }
        }

        // Fast path: one step from the current object.
        if start == nil, p.aggregate == nil, stepFunctions.count == 1 {
            let single = stepFunctions[0]
            return CompiledPath(evaluate: { v, _ in single(v) }, isCollection: isCollection, elementTypes: candidates)
        }

        let steps = stepFunctions
        let begin = start
        let pathRange = p.range
        var evaluate: (Value, Environment) -> Operand = { v, e in
            var current = Operand.one(begin?(v, e) ?? v)
            for step in steps {
                switch current {
                case .one(let x): current = step(x)
                case .many(let xs):
                    // From a collection, each object is reached once (Core Data's sets): a path
                    // through to-many relations never multiplies into a product of its steps.
                    var out: [Value] = []
                    out.reserveCapacity(xs.count)
                    var seen = Set<ObjectRef>()
                    func add(_ y: Value) {
                        if case .reference(let r) = y, !seen.insert(r).inserted { return }
                        out.append(y)
                    }
                    for x in xs {
                        switch step(x) {
                        case .one(let y): add(y)
                        case .many(let ys): for y in ys { add(y) }
                        }
                        if out.count > Compiler.maximumPathElements {
                            e.fail(QueryError("the path yields more than \(Compiler.maximumPathElements) values for one object", at: pathRange,
                                              hint: "narrow it, or count a shorter path"))
                            return .many([])
                        }
                    }
                    current = .many(out)
                }
            }
            return current
        }
        if isChain, start == nil, p.aggregate == nil, chain.count > 1 {
            let hops = chain.dropLast().map(\.relations)
            let last = chain[chain.count - 1]
            let general = evaluate
            return CompiledPath(evaluate: { v, e in
                guard case .reference(var ref) = v else { return general(v, e) }   // not an object: nested values
                for relations in hops {
                    guard let relation = relations[Int(ref.type)] else { return .one(.null) }
                    let row = Int(ref.row)
                    let lo = Int(relation.offsets[row])
                    if lo == Int(relation.offsets[row + 1]) { return .one(.null) }
                    ref = relation.targets[lo]
                }
                if let column = last.columns[Int(ref.type)] { return .one(column[Int(ref.row)]) }
                if let relation = last.relations[Int(ref.type)] {
                    return .one(relation.targets(of: Int(ref.row)).first.map { .reference($0) } ?? .null)
                }
                return .one(.null)
            }, isCollection: isCollection, elementTypes: candidates)
        }
        if let aggregate = p.aggregate {
            let inner = evaluate
            evaluate = { v, e in .one(Aggregation.apply(aggregate, inner(v, e))) }
            return CompiledPath(evaluate: evaluate, isCollection: false, elementTypes: nil)
        }
        return CompiledPath(evaluate: evaluate, isCollection: isCollection, elementTypes: candidates)
    }

    /// The most values one path may yield for one object (a bound on memory per evaluation).
    static let maximumPathElements = 20_000_000

    private func suggestion(_ name: String, among names: [String]) -> String? {
        NameSuggestion.closest(to: name, in: names).map { "did you mean '\($0)'?" }
    }
}

/// `+ - * /` on numbers: integers stay integers until they overflow; `/` divides as floating
/// point; dividing by zero, or anything that is not a number, gives null.
enum Arithmetic {
    static func apply(_ op: ArithmeticOperator, _ a: Value, _ b: Value) -> Value {
        if case .int(let x) = a, case .int(let y) = b, op != .divide {
            let (r, overflow): (Int64, Bool)
            switch op {
            case .add: (r, overflow) = x.addingReportingOverflow(y)
            case .subtract: (r, overflow) = x.subtractingReportingOverflow(y)
            default: (r, overflow) = x.multipliedReportingOverflow(by: y)
            }
            if !overflow { return .int(r) }
        }
        guard let x = a.numeric, let y = b.numeric else { return .null }
        switch op {
        case .add: return .double(x + y)
        case .subtract: return .double(x - y)
        case .multiply: return .double(x * y)
        case .divide: return y == 0 ? .null : .double(x / y)
        }
    }

    static func negate(_ v: Value) -> Value {
        switch v {
        case .int(let i) where i != Int64.min: return .int(-i)
        default: return v.numeric.map { .double(-$0) } ?? .null
        }
    }
}
