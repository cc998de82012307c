import Foundation
import LoupeModel

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
    /// The keys the filter names outright: the literals `k` of `id == k` or `id IN {k, …}`, the
    /// filter itself or a part of its top-level `AND` (the first such part); nil when none does.
    /// Every object the filter passes has one of those keys, so a database looks them up by its
    /// key's index before testing the filter whole: `Book where id == 7` over a store too large
    /// to load, an edit's `where id IN {…}`, and the chunks asking SQL for their candidates'
    /// values read those rows, not the type.
    public var keysNamed: [Literal]? {
        switch self {
        case .and(let parts):
            return parts.lazy.compactMap(\.keysNamed).first
        case .comparison(let c):
            guard c.quantifier == nil, c.options.isEmpty, case .path(let path) = c.lhs, path.steps == [.id], path.aggregate == nil else { return nil }
            switch (c.op, c.rhs) {
            case (.equal, .literal(let literal, _)):
                return [literal]
            case (.in, .list(let items, _)):
                var literals: [Literal] = []
                for item in items {
                    guard case .literal(let literal, _) = item else { return nil }
                    literals.append(literal)
                }
                return literals
            default:
                return nil
            }
        default:
            return nil
        }
    }

    /// ``keysNamed`` when they are numbers, as the integers they can equal (an integral decimal
    /// is its integer; one with a fraction equals no integer key, and is left out); nil when the
    /// filter names none, or names one that is no number.
    public var integerKeysNamed: [Int64]? {
        guard let literals = keysNamed else { return nil }
        var keys: [Int64] = []
        for literal in literals {
            switch literal {
            case .integer(let i): keys.append(i)
            case .decimal(let d): if let i = Int64(exactly: d) { keys.append(i) }
            default: return nil
            }
        }
        return keys
    }

    /// ``keysNamed`` when they are text, as every text a key the engine finds equal to one can
    /// be in a store: the engine compares text by canonical equivalence, and the only texts
    /// equivalent to ASCII text are those spelling its `K`, `;` and `` ` `` as U+212A, U+037E and
    /// U+1FEF, so each ASCII literal stands with those spellings. Nil when the filter names none,
    /// names one that is no text or not ASCII, or one with more than four such characters (a
    /// store then tests every row).
    public var textKeysNamed: [String]? {
        guard let literals = keysNamed else { return nil }
        var keys: [String] = []
        for literal in literals {
            guard case .string(let text) = literal, text.unicodeScalars.allSatisfy(\.isASCII) else { return nil }
            let twins: [Unicode.Scalar: Unicode.Scalar] = ["K": "\u{212A}", ";": "\u{037E}", "`": "\u{1FEF}"]
            var spellings = [String.UnicodeScalarView()]
            guard text.unicodeScalars.filter({ twins[$0] != nil }).count <= 4 else { return nil }
            for scalar in text.unicodeScalars {
                spellings = spellings.flatMap { spelling in ([scalar] + (twins[scalar].map { [$0] } ?? [])).map { spelling + [$0] } }
            }
            keys += spellings.map(String.init)
        }
        return keys
    }

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

extension Predicate {
    /// The predicate with each comparison of objects with keys — `author == #3`, `author !=
    /// nil`, `author IN {#3, #4}`, `ANY @links.Loan.book == #7`, on a path from an object of
    /// type `root` that ends on a relation or a backlink — as the same comparison of those
    /// objects' keys (`author.id == 3`), which a database reads from a key column where it has no
    /// object to compare. The engine answers both alike: an object equals a number or text when
    /// its key's value does, a missing one is nil, and `IN` tests each item for equality.
    /// Comparisons with options, with booleans or dates (which a key's value can equal where an
    /// object does not: `1 == true`, a date's text), with one text on `IN`'s right (a substring
    /// test on text keys), and paths from a `SUBQUERY`'s variable are left as they are.
    public func comparingKeys(from root: Int, in graph: ObjectGraph) -> Predicate {
        switch self {
        case .and(let parts): return .and(parts.map { $0.comparingKeys(from: root, in: graph) })
        case .or(let parts): return .or(parts.map { $0.comparingKeys(from: root, in: graph) })
        case .not(let inner): return .not(inner.comparingKeys(from: root, in: graph))
        case .comparison(var c):
            guard c.options.isEmpty, case .path(var path) = c.lhs, path.aggregate == nil,
                  Self.endsOnObjects(path, from: root, in: graph) else { return self }
            func isKeyLiteral(_ e: Expression) -> Bool {
                guard case .literal(let literal, _) = e else { return false }
                switch literal {
                case .null, .integer, .decimal, .exact, .string, .reference: return true
                case .bool, .date: return false
                }
            }
            switch (c.op, c.rhs) {
            case (.equal, let rhs), (.notEqual, let rhs): guard isKeyLiteral(rhs) else { return self }
            case (.in, .list(let items, _)): guard items.allSatisfy(isKeyLiteral) else { return self }
            default: return self
            }
            path.steps.append(.id)
            c.lhs = .path(path)
            return .comparison(c)
        case .constant, .between, .truthy:
            return self
        }
    }

    /// True when `path`, from an object of type `root`, ends on objects as the engine resolves
    /// it: its last step a backlink, or a name that is a relation (and no attribute) of every
    /// type the step before reaches that has it.
    private static func endsOnObjects(_ path: Path, from root: Int, in graph: ObjectGraph) -> Bool {
        guard !path.steps.isEmpty, graph.types.indices.contains(root) else { return false }
        var candidates = Set(graph.family(of: graph.types[root]))
        for (i, step) in path.steps.enumerated() {
            let isLast = i == path.steps.count - 1
            switch step {
            case .links(let typeName, _):
                guard let source = graph.type(named: typeName.text) else { return false }
                candidates = Set(graph.family(of: source))
            case .name(let name):
                var next = Set<Int>(), found = false
                for t in candidates {
                    let type = graph.types[t]
                    let attribute = type.attribute(named: name.text), relation = type.relation(named: name.text)
                    // The engine reads a last name as an attribute first, an inner one as a relation first.
                    if isLast, attribute != nil { return false }
                    guard let r = relation else {
                        if attribute != nil { return false }   // into a nested value
                        continue
                    }
                    found = true
                    next.formUnion(type.relations[r].targetTypes)
                }
                guard found else { return false }
                candidates = next
            case .variable, .id, .type:
                return false
            }
        }
        return true
    }
}
