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
