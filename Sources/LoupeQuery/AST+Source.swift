import Foundation

/// Statements printed back in the query language, so that parsing the text gives the same tree:
/// `Book where pages > 300 AND author.name BEGINSWITH[c] "a" limit 5`. Parentheses are written
/// only where precedence (or a chain the parser would otherwise flatten) needs them, so the
/// printed text never nests deeper than the statement did.
/// Names that are keywords or not plain identifiers are written in backticks; a name holding a
/// backtick has no spelling in the language, and then there is no source text (nil).
extension Statement {
    /// The statement in the query language, or nil when it holds a name the language cannot spell
    /// (or is a mutation or dot-command, which are not printed).
    public var sourceText: String? {
        var p = SourcePrinter()
        return p.statement(self)
    }
}

/// Names and strings as the language reads them: what completion inserts, what tests type.
public enum SourceSpelling {
    /// `name` as typed in a statement: as it is when it is a plain identifier and no keyword,
    /// else in backticks. A name holding a backtick has no spelling; it comes back as it is.
    public static func name(_ name: String) -> String {
        var printer = SourcePrinter()
        let spelt = printer.name(name)
        return printer.spellable ? spelt : name
    }

    /// `text` as a string literal: quotes, backslashes and every control character escaped.
    public static func string(_ text: String) -> String { SourcePrinter.quoted(text) }
}

private struct SourcePrinter {
    /// False once a name could not be spelt.
    var spellable = true

    static let keywords: Set<String> = Set((Keywords.all + ["id", "and", "or", "not", "group", "by", "offset", "as", "some"]).map { $0.lowercased() })

    mutating func statement(_ s: Statement) -> String? {
        let text: String
        switch s {
        case .query(let q): text = query(q)
        case .count(let t, let p): text = "count \(name(t.text))" + (p.map { " where \(predicate($0))" } ?? "")
        case .group(let q, let by):
            var base = q
            let clauses = base.clauses
            base.clauses = []
            text = query(base) + " group by \(path(by))" + clauses.map { " " + clause($0) }.joined()
        case .mutation, .dotCommand: return nil
        }
        return spellable ? text : nil
    }

    mutating func query(_ q: Query) -> String {
        var parts: [String] = []
        if let t = q.type {
            parts.append(name(t.text))
            if let p = q.predicate { parts.append("where \(predicate(p))") }
        } else if let p = q.predicate {
            // A lone word (a boolean attribute, TRUEPREDICATE) would be read as a type: only that
            // goes in parentheses. Any other predicate is written bare, so that printing never
            // adds a level of nesting the parser counts (a statement at the depth limit reparses).
            switch p {
            case .constant: parts.append("(\(predicate(p)))")
            case .truthy:
                // An expression that starts with a sign, a number or a parenthesis cannot be read
                // as a type: written bare too (a chain of minus signs at the depth limit reparses).
                let text = predicate(p)
                parts.append(text.first.map { $0 == "-" || $0 == "(" || $0.isNumber } == true ? text : "(\(text))")
            default: parts.append(predicate(p))
            }
        }
        for c in q.clauses { parts.append(clause(c)) }
        if let columns = q.projection {
            parts.append("select " + columns.map { c in expression(c.expression) + (c.alias.map { " as \(name($0))" } ?? "") }.joined(separator: ", "))
        }
        return parts.joined(separator: " ")
    }

    mutating func clause(_ c: Clause) -> String {
        switch c {
        case .sort(let keys): return "sort by " + keys.map { path($0.path) + ($0.ascending ? " asc" : " desc") }.joined(separator: ", ")
        case .distinct(let paths): return "distinct " + paths.map { path($0) }.joined(separator: ", ")
        case .limit(let n, let o): return "limit \(n)" + (o > 0 ? " offset \(o)" : "")
        }
    }

    /// Predicate precedence: OR 1, AND 2, NOT and everything tighter 3.
    private func level(_ p: Predicate) -> Int {
        switch p {
        case .or: return 1
        case .and: return 2
        default: return 3
        }
    }

    /// A predicate, in parentheses when it binds looser than `minimum` (and/or operands of the
    /// same operator too: `(a AND b) AND c` is not the chain `a AND b AND c`).
    mutating func predicate(_ p: Predicate, minimum: Int = 0) -> String {
        let text: String
        switch p {
        case .constant(let b): text = b ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .and(let ps): text = ps.map { predicate($0, minimum: 3) }.joined(separator: " AND ")
        case .or(let ps): text = ps.map { predicate($0, minimum: 2) }.joined(separator: " OR ")
        case .not(let inner): text = "NOT " + predicate(inner, minimum: 3)
        case .comparison(let c):
            text = (c.quantifier.map { "\($0.rawValue) " } ?? "") + expression(c.lhs) + " " + c.op.rawValue + c.options.text + " " + expression(c.rhs)
        case .between(let q, let e, let lo, let hi, _):
            text = (q.map { "\($0.rawValue) " } ?? "") + expression(e) + " BETWEEN {" + expression(lo) + ", " + expression(hi) + "}"
        case .truthy(let e):
            // A bare expression as a condition: a literal word (true, null) or a keyword-like
            // start must not be read as something else, so it is written as an expression.
            text = expression(e)
        }
        return level(p) < minimum ? "(" + text + ")" : text
    }

    /// Arithmetic precedence: + - 1, * / 2, a factor 3.
    private func level(_ e: Expression) -> Int {
        if case .arithmetic(let op, _, _, _) = e { return op == .add || op == .subtract ? 1 : 2 }
        return 3
    }

    /// An expression, in parentheses when it binds looser than `minimum` (chains are left
    /// associative: the right operand of the same precedence needs them).
    mutating func expression(_ e: Expression, minimum: Int = 0) -> String {
        let text: String
        switch e {
        case .literal(let l, _): text = literal(l)
        case .path(let p): text = path(p)
        case .list(let items, _): text = "{" + items.map { expression($0) }.joined(separator: ", ") + "}"
        case .arithmetic(let op, let a, let b, _):
            let mine = level(e)
            text = expression(a, minimum: mine) + " " + op.rawValue + " " + expression(b, minimum: mine + 1)
        case .negate(let inner, _): text = "-" + expression(inner, minimum: 3)
        case .subqueryCount(let c, let v, let p, _): text = "SUBQUERY(\(path(c)), $\(v), \(predicate(p))).@count"
        }
        return level(e) < minimum ? "(" + text + ")" : text
    }

    func literal(_ l: Literal) -> String {
        switch l {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .integer(let i): return String(i)
        case .decimal(let d):
            let text = "\(d)"
            return text.contains(".") || text.contains("e") ? text : text + ".0"
        case .exact(let d): return d.text
        case .string(let s): return SourcePrinter.quoted(s)
        case .date(let d): return DateParser.iso(d)
        case .reference(.int(let i)): return "#\(i)"
        case .reference(.string(let s)): return "#" + SourcePrinter.quoted(s)
        }
    }

    /// A string literal: quotes, backslashes and every control character escaped.
    static func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if u.value < 0x20 || (u.value >= 0x7F && u.value < 0xA0) { out += "\\u{\(String(u.value, radix: 16))}" } else { out.unicodeScalars.append(u) }
            }
        }
        return out + "\""
    }

    mutating func path(_ p: Path) -> String {
        var parts = p.steps.map { step -> String in
            switch step {
            case .name(let n): return name(n.text)
            case .links(let t, let r): return "@links.\(name(t.text)).\(name(r.text))"
            case .variable(let v): return "$" + v.text
            case .id: return "id"
            case .type: return "@type"
            }
        }
        if let a = p.aggregate { parts.append("@" + a.rawValue) }
        return parts.joined(separator: ".")
    }

    /// A name as an identifier when it is one and no keyword, else in backticks.
    mutating func name(_ text: String) -> String {
        var scalars = text.unicodeScalars.makeIterator()
        let plain: Bool = {
            guard let first = scalars.next(), first == "_" || first.properties.isAlphabetic else { return false }
            while let u = scalars.next() { if !(u == "_" || u.properties.isAlphabetic || ("0"..."9").contains(u)) { return false } }
            return !SourcePrinter.keywords.contains(text.lowercased())
        }()
        if plain { return text }
        if text.contains("`") || text.isEmpty { spellable = false }
        return "`" + text + "`"
    }
}
