import DisplayText
import Foundation
import LoupeModel

/// A recursive-descent parser for the language of QUERY.md. Each parse function quotes the rule it
/// implements. Parsing never crashes or hangs: nesting deeper than ``maximumDepth`` is an error.
public struct Parser {
    /// How deeply predicates and expressions may nest (parentheses, NOT, unary minus).
    public static let maximumDepth = 200
    /// How tall any tree of the statement may be (operators and parentheses nested, chains
    /// counted level by level): a 999-operand chain fits, thirty of them nested in each other
    /// do not. Everything that walks a tree recursively stays within this depth. A limit of
    /// the tree, not of its text: `(a + b) + c` is the chain `a + b + c` printed back, so a
    /// limit on one chain's operands would refuse the printed text of a statement it took (a
    /// fuzz finding: two chains of 600 joined by parentheses reparsed as one of 1,200).
    public static let maximumHeight = 1200

    private var tokens: [Token]
    private var position = 0
    private var depth = 0
    private let source: String

    /// Parses one statement.
    public static func parse(_ source: String) throws -> Statement {
        let trimmed = source.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix(".") { return try parseDotCommand(source) }
        var parser = Parser(tokens: try Lexer.tokenize(source), source: source)
        return try parser.statement()
    }

    private init(tokens: [Token], source: String) {
        self.tokens = tokens
        self.source = source
    }

    /// The source text a range covers (ranges count Unicode scalars).
    fileprivate func text(of range: SourceRange) -> String {
        let scalars = Array(source.unicodeScalars)
        guard range.start >= 0, range.end <= scalars.count else { return "" }
        return String(String.UnicodeScalarView(scalars[range.start..<range.end]))
    }

    // MARK: Tokens

    private var current: Token { tokens[position] }
    private func peek(_ k: Int = 1) -> Token { tokens[min(position + k, tokens.count - 1)] }
    private mutating func advance() -> Token {
        let t = tokens[position]
        if position < tokens.count - 1 { position += 1 }
        return t
    }

    private mutating func accept(keyword k: String) -> Bool {
        if current.isKeyword(k) { position += 1; return true }
        return false
    }

    private mutating func accept(symbol s: String) -> Bool {
        if current.isSymbol(s) { position += 1; return true }
        return false
    }

    private mutating func expect(symbol s: String, _ what: String? = nil) throws -> Token {
        guard current.isSymbol(s) else { throw unexpected(expected: what ?? "'\(s)'") }
        return advance()
    }

    private mutating func expect(keyword k: String) throws {
        guard accept(keyword: k) else { throw unexpected(expected: "'\(k)'") }
    }

    /// `unexpected 'x'` (or `unexpected end of statement`) with what was expected instead.
    private func unexpected(expected: String) -> QueryError {
        let t = current
        if t.kind == .end {
            return QueryError("unexpected end of statement", at: SourceRange(t.range.start, t.range.start + 1), hint: "expected \(expected)")
        }
        return QueryError("unexpected \(describe(t))", at: t.range, hint: "expected \(expected)")
    }

    private func describe(_ t: Token) -> String {
        let scalars = Array(source.unicodeScalars)
        let text = String(String.UnicodeScalarView(scalars[min(t.range.start, scalars.count)..<min(t.range.end, scalars.count)]))
        return "'\(DisplayText.escaped(String(text.prefix(40))))'"
    }

    /// Fails when a tree would be taller than ``maximumHeight``.
    private func checkHeight(_ height: Int, at range: SourceRange) throws {
        if height > Parser.maximumHeight {
            throw QueryError("statement nested too deeply", at: range, hint: "at most \(Parser.maximumHeight) levels of operators and parentheses")
        }
    }

    private mutating func nest<T>(_ body: (inout Parser) throws -> T) throws -> T {
        depth += 1
        defer { depth -= 1 }
        if depth > Parser.maximumDepth {
            throw QueryError("statement nested too deeply", at: current.range, hint: "at most \(Parser.maximumDepth) levels")
        }
        return try body(&self)
    }

    private static let clauseKeywords = ["where", "sort", "distinct", "limit", "select", "group"]

    // MARK: Statements

    /// `statement = query | count | group | mutation | dot-command`
    private mutating func statement() throws -> Statement {
        guard current.kind != .end else { throw QueryError("empty statement", at: SourceRange(0, 1), hint: "try a type name, like `.types` lists") }
        // SQL out of habit: say what the same question is here.
        if current.isKeyword("select"), peek().isSymbol("*") || (peek(2).isKeyword("from") && !peek().isKeyword("where")) {
            throw QueryError("this looks like SQL; a statement here names the type first", at: current.range,
                             hint: "`SELECT * FROM Book WHERE pages > 300` is `Book where pages > 300`; `.help query` shows the language")
        }
        let result: Statement
        if current.isKeyword("count"), isName(peek()), isStatementBoundary(peek(2)) {
            _ = advance()
            let type = try name("a type name")
            let predicate = accept(keyword: "where") ? try predicate() : nil
            result = .count(type: type, predicate: predicate)
        } else if (current.isKeyword("update") || current.isKeyword("delete") || current.isKeyword("insert")), isName(peek()),
                  peek(2).kind == .end || peek(2).isKeyword("where") || peek(2).isKeyword("set") || peek(2).isSymbol("{") {
            result = .mutation(try mutation())
        } else {
            result = try queryOrGroup()
        }
        _ = accept(symbol: ";")
        guard current.kind == .end else {
            // A clause after `select` (or a second `where`): say where it belongs.
            if let clause = ["where", "sort", "distinct", "limit", "group", "SORT", "DISTINCT", "LIMIT"].first(where: { current.isKeyword($0) }) {
                throw QueryError("unexpected '\(clause)'", at: current.range,
                                 hint: "clauses go in this order, each once: " + QueryHelp.clauseOrder)
            }
            throw unexpected(expected: "the end of the statement")
        }
        return result
    }

    private func isName(_ t: Token) -> Bool {
        switch t.kind { case .identifier, .quotedIdentifier: return true; default: return false }
    }

    /// True when `t` ends a type name at the start of a query: the end, or a clause keyword.
    private func isStatementBoundary(_ t: Token) -> Bool {
        t.kind == .end || t.isSymbol(";") || Parser.clauseKeywords.contains { t.isKeyword($0) }
    }

    /// `query = type [ "where" predicate ] { clause } [ "select" column { "," column } ]`
    /// `group = type [ "where" predicate ] "group" "by" path [ clause ]`
    /// A bare predicate (no type) filters the current type.
    private mutating func queryOrGroup() throws -> Statement {
        var query = Query()
        let startsWithClause = ["sort", "distinct", "limit", "select"].contains { current.isKeyword($0) }
            && (peek().isKeyword("by") || peek().isSymbol("(") || !current.isKeyword("sort"))
            && !(peek().kind == .symbol("==") || peek().kind == .symbol("."))
        if startsWithClause {
            // clauses on the current type
        } else if isName(current), isStatementBoundary(peek()) {
            query.type = try name("a type name")
            if accept(keyword: "where") { query.predicate = try predicate() }
        } else {
            query.predicate = try predicate()
        }
        while true {
            if current.isKeyword("group"), peek().isKeyword("by") {
                // The clauses of a `group by` follow it (they order and cut its groups).
                guard query.clauses.isEmpty else {
                    throw QueryError("group by comes right after the type and its where", at: current.range,
                                     hint: "like Track where Milliseconds > 300000 group by Genre.Name limit 3")
                }
                position += 2
                let by = try path()
                if let c = try clause() { query.clauses.append(c) }
                return .group(query, by: by)
            }
            if let c = try clause() { query.clauses.append(c); continue }
            if accept(keyword: "select") {
                var columns: [Column] = []
                repeat {
                    let start = current.range.start
                    let e = try expression()
                    let written = text(from: start, to: tokens[position - 1].range.end)
                    var alias: String? = nil
                    if accept(keyword: "as") { alias = try name("a column name").text }
                    columns.append(Column(expression: e, alias: alias, name: alias ?? written))
                } while accept(symbol: ",")
                query.projection = columns
            }
            return .query(query)
        }
    }

    private func text(from a: Int, to b: Int) -> String {
        let scalars = Array(source.unicodeScalars)
        return String(String.UnicodeScalarView(scalars[min(a, scalars.count)..<min(b, scalars.count)]))
    }

    /// `clause = "sort" "by" sortkey {"," sortkey} | "SORT" "(" … ")" | "distinct" path {"," path}
    ///          | "DISTINCT" "(" … ")" | "limit" int ["offset" int] | "LIMIT" "(" int ")"`
    private mutating func clause() throws -> Clause? {
        if current.isKeyword("sort") {
            _ = advance()
            let parenthesised = accept(symbol: "(")
            if !parenthesised { try expect(keyword: "by") }
            var keys: [SortKey] = []
            repeat {
                let p = try path()
                var ascending = true
                if accept(keyword: "asc") || accept(keyword: "ascending") { ascending = true }
                else if accept(keyword: "desc") || accept(keyword: "descending") { ascending = false }
                keys.append(SortKey(path: p, ascending: ascending))
            } while accept(symbol: ",")
            if parenthesised { _ = try expect(symbol: ")") }
            return .sort(keys)
        }
        if current.isKeyword("distinct") {
            _ = advance()
            let parenthesised = accept(symbol: "(")
            var paths: [Path] = []
            repeat { paths.append(try path()) } while accept(symbol: ",")
            if parenthesised { _ = try expect(symbol: ")") }
            return .distinct(paths)
        }
        if current.isKeyword("limit") {
            _ = advance()
            let parenthesised = accept(symbol: "(")
            let n = try count("a row count")
            var offset = 0
            if parenthesised { _ = try expect(symbol: ")") } else if accept(keyword: "offset") { offset = try count("an offset") }
            return .limit(n, offset: offset)
        }
        return nil
    }

    private mutating func count(_ what: String) throws -> Int {
        guard case .integer(let n) = current.kind, n >= 0, n <= Int64(Int32.max) else { throw unexpected(expected: what) }
        _ = advance()
        return Int(n)
    }

    private mutating func name(_ what: String) throws -> Name {
        switch current.kind {
        case .identifier(let s), .quotedIdentifier(let s):
            let t = advance()
            return Name(text: s, range: t.range)
        default:
            throw unexpected(expected: what)
        }
    }

    /// `mutation = "update" type ["where" predicate] "set" assignment {"," assignment}
    ///            | "insert" type "{" [ident ":" expr {"," ident ":" expr}] "}"
    ///            | "delete" type ["where" predicate]`
    private mutating func mutation() throws -> Mutation {
        let verb = advance()
        let type = try name("a type name")
        if verb.isKeyword("insert") {
            _ = try expect(symbol: "{")
            var fields: [(Name, Expression)] = []
            if !current.isSymbol("}") {
                repeat {
                    let field = try name("an attribute name")
                    _ = try expect(symbol: ":")
                    fields.append((field, try expression()))
                } while accept(symbol: ",")
            }
            _ = try expect(symbol: "}", "'}' or ','")
            return .insert(type: type, fields: fields)
        }
        let predicate = accept(keyword: "where") ? try predicate() : nil
        if verb.isKeyword("delete") { return .delete(type: type, predicate: predicate) }
        try expect(keyword: "set")
        var assignments: [Assignment] = []
        repeat {
            let target = try name("an attribute or relation name")
            let kind: Assignment.Kind
            if accept(symbol: "=") || accept(symbol: "==") { kind = .set }
            else if accept(symbol: "+=") { kind = .add }
            else if accept(symbol: "-=") { kind = .remove }
            else { throw unexpected(expected: "'=', '+=' or '-='") }
            assignments.append(Assignment(target: target, kind: kind, value: try expression()))
        } while accept(symbol: ",")
        return .update(type: type, predicate: predicate, assignments: assignments)
    }

    // MARK: Predicates

    /// `predicate = predicate ("OR" | "||") predicate` (lowest precedence)
    private mutating func predicate() throws -> Predicate {
        try nest { p in
            var operands = [try p.conjunction()]
            while p.accept(keyword: "or") || p.accept(symbol: "||") { operands.append(try p.conjunction()) }
            return operands.count == 1 ? operands[0] : .or(operands)
        }
    }

    /// `predicate ("AND" | "&&") predicate`
    private mutating func conjunction() throws -> Predicate {
        var operands = [try negation()]
        while accept(keyword: "and") || accept(symbol: "&&") { operands.append(try negation()) }
        return operands.count == 1 ? operands[0] : .and(operands)
    }

    /// `("NOT" | "!") predicate` (highest precedence)
    private mutating func negation() throws -> Predicate {
        if current.isKeyword("not") || (current.isSymbol("!") && !peek().isSymbol("=")) {
            _ = advance()
            return try nest { .not(try $0.negation()) }
        }
        return try primaryPredicate()
    }

    /// `"(" predicate ")" | comparison | "TRUEPREDICATE" | "FALSEPREDICATE"`
    private mutating func primaryPredicate() throws -> Predicate {
        if accept(keyword: "truepredicate") { return .constant(true) }
        if accept(keyword: "falsepredicate") { return .constant(false) }
        if current.isSymbol("(") {
            let open = advance()
            let inner = try nest { try $0.predicate() }
            let close = try expect(symbol: ")", "')'")
            // `(a + b) > 3`: the parentheses held an expression, which the comparison continues.
            if case .truthy(let e) = inner, isComparisonContinuation(current) {
                let grouped = Expression.grouped(e, range: SourceRange.spanning(open.range, close.range))
                return try comparison(quantifier: nil, startingWith: grouped)
            }
            return inner
        }
        var quantifier: Quantifier? = nil
        if !isComparisonContinuation(peek()) && !peek().isSymbol(".") {
            if accept(keyword: "any") || accept(keyword: "some") { quantifier = .any }
            else if accept(keyword: "all") { quantifier = .all }
            else if accept(keyword: "none") { quantifier = .noneOf }
        }
        return try comparison(quantifier: quantifier, startingWith: nil)
    }

    private func isComparisonContinuation(_ t: Token) -> Bool {
        operatorOf(t) != nil || t.isKeyword("between") || ["+", "-", "*", "/"].contains { t.isSymbol($0) }
    }

    private func operatorOf(_ t: Token) -> ComparisonOperator? {
        switch t.kind {
        case .symbol("=="), .symbol("="): return .equal
        case .symbol("!="), .symbol("<>"): return .notEqual
        case .symbol("<"): return .less
        case .symbol("<="), .symbol("=<"): return .lessOrEqual
        case .symbol(">"): return .greater
        case .symbol(">="), .symbol("=>"): return .greaterOrEqual
        case .identifier(let w):
            switch w.uppercased() {
            case "BEGINSWITH": return .beginsWith
            case "ENDSWITH": return .endsWith
            case "CONTAINS": return .contains
            case "LIKE": return .like
            case "MATCHES": return .matches
            case "MATCH": return .fullText
            case "IN": return .in
            default: return nil
            }
        default: return nil
        }
    }

    /// `comparison = [quantifier] expr op [modifier] expr | expr "BETWEEN" "{" expr "," expr "}"`
    private mutating func comparison(quantifier: Quantifier?, startingWith first: Expression?) throws -> Predicate {
        let lhs = try expression(startingWith: first)
        if current.isKeyword("between") {
            let between = advance()
            _ = try expect(symbol: "{", "'{' after BETWEEN")
            let low = try expression()
            _ = try expect(symbol: ",", "',' between the bounds")
            let high = try expression()
            let close = try expect(symbol: "}", "'}'")
            return .between(quantifier, lhs, low: low, high: high, range: SourceRange.spanning(between.range, close.range))
        }
        guard let op = operatorOf(current) else {
            if let quantifier {
                throw QueryError("\(quantifier) needs a comparison", at: current.kind == .end ? SourceRange(current.range.start, current.range.start + 1) : current.range,
                                 hint: "like \(quantifier) books.price > 10")
            }
            return .truthy(lhs)
        }
        let opToken = advance()
        var options: ComparisonOptions = []
        if case .modifier(let letters) = current.kind {
            _ = advance()
            if letters.contains("c") { options.insert(.caseInsensitive) }
            if letters.contains("d") { options.insert(.diacriticInsensitive) }
        }
        guard startsExpression(current) else { throw unexpected(expected: "a value after \(op.rawValue)") }
        let rhs = try expression()
        let comparison = Predicate.comparison(Comparison(quantifier: quantifier, lhs: lhs, op: op, options: options, rhs: rhs, range: opToken.range))
        try checkHeight(comparison.height, at: rhs.range)
        return comparison
    }

    private func startsExpression(_ t: Token) -> Bool {
        switch t.kind {
        case .identifier, .quotedIdentifier, .at, .variable, .integer, .decimal, .string, .date, .reference: return true
        case .symbol(let s): return s == "(" || s == "{" || s == "-"
        default: return false
        }
    }

    // MARK: Expressions

    /// `expr = term { ("+" | "-") term }`
    private mutating func expression(startingWith first: Expression? = nil) throws -> Expression {
        var lhs = try term(startingWith: first)
        var height = lhs.height
        while current.isSymbol("+") || current.isSymbol("-") {
            let op: ArithmeticOperator = advance().isSymbol("+") ? .add : .subtract
            let rhs = try term(startingWith: nil)
            height = max(height, rhs.height) + 1
            try checkHeight(height, at: rhs.range)
            lhs = .arithmetic(op, lhs, rhs, SourceRange.spanning(lhs.range, rhs.range))
        }
        return lhs
    }

    /// `term = factor { ("*" | "/") factor }`
    private mutating func term(startingWith first: Expression?) throws -> Expression {
        var lhs = try first ?? factor()
        var height = lhs.height
        while current.isSymbol("*") || current.isSymbol("/") {
            let op: ArithmeticOperator = advance().isSymbol("*") ? .multiply : .divide
            let rhs = try factor()
            height = max(height, rhs.height) + 1
            try checkHeight(height, at: rhs.range)
            lhs = .arithmetic(op, lhs, rhs, SourceRange.spanning(lhs.range, rhs.range))
        }
        return lhs
    }

    /// `factor = literal | path | list | "(" expr ")" | "-" factor
    ///         | "SUBQUERY" "(" path "," "$" ident "," predicate ")" "." ("@count" | "@size")`
    private mutating func factor() throws -> Expression {
        try nest { p in
            let t = p.current
            switch t.kind {
            case .integer(let n): _ = p.advance(); return .literal(.integer(n), t.range)
            case .decimal(let d):
                _ = p.advance()
                if case .decimal(let exact)? = ExactDecimal.value(p.text(of: t.range)) { return .literal(.exact(exact), t.range) }
                return .literal(.decimal(d), t.range)
            case .string(let s): _ = p.advance(); return .literal(.string(s), t.range)
            case .date(let d): _ = p.advance(); return .literal(.date(d), t.range)
            case .reference(let r): _ = p.advance(); return .literal(.reference(r), t.range)
            case .symbol("-"):
                _ = p.advance()
                let inner = try p.factor()
                switch inner {
                case .literal(.integer(let n), let r) where n != Int64.min: return .literal(.integer(-n), SourceRange.spanning(t.range, r))
                case .literal(.decimal(let d), let r): return .literal(.decimal(-d), SourceRange.spanning(t.range, r))
                // -9223372036854775808 is Int64.min, whose digits alone do not fit an integer.
                case .literal(.exact(let d), let r):
                    let range = SourceRange.spanning(t.range, r)
                    return Int64(d.negated.text).map { .literal(.integer($0), range) } ?? .literal(.exact(d.negated), range)
                default:
                    try p.checkHeight(inner.height + 1, at: inner.range)
                    return .negate(inner, SourceRange.spanning(t.range, inner.range))
                }
            case .symbol("("):
                _ = p.advance()
                let inner = try p.expression()
                let close = try p.expect(symbol: ")", "')'")
                return Expression.grouped(inner, range: SourceRange.spanning(t.range, close.range))
            case .symbol("{"):
                _ = p.advance()
                var items: [Expression] = []
                if !p.current.isSymbol("}") {
                    repeat { items.append(try p.expression()) } while p.accept(symbol: ",")
                }
                let close = try p.expect(symbol: "}", "'}' or ','")
                let list = Expression.list(items, SourceRange.spanning(t.range, close.range))
                try p.checkHeight(list.height, at: list.range)
                return list
            case .identifier(let w):
                let followedByDot = p.peek().isSymbol(".")
                switch w.lowercased() {
                case "true" where !followedByDot: _ = p.advance(); return .literal(.bool(true), t.range)
                case "false" where !followedByDot: _ = p.advance(); return .literal(.bool(false), t.range)
                case "null" where !followedByDot, "nil" where !followedByDot: _ = p.advance(); return .literal(.null, t.range)
                case "subquery" where p.peek().isSymbol("("): return try p.subquery()
                default: return .path(try p.path())
                }
            case .quotedIdentifier, .at, .variable:
                return .path(try p.path())
            default:
                throw p.unexpected(expected: "a value")
            }
        }
    }

    /// `"SUBQUERY" "(" path "," "$" ident "," predicate ")" "." ("@count" | "@size")`
    private mutating func subquery() throws -> Expression {
        let start = advance()
        _ = try expect(symbol: "(")
        let collection = try path()
        _ = try expect(symbol: ",", "',' after the collection")
        guard case .variable(let v) = current.kind else { throw unexpected(expected: "a variable like $x") }
        _ = advance()
        _ = try expect(symbol: ",", "',' after the variable")
        let predicate = try predicate()
        _ = try expect(symbol: ")", "')'")
        _ = try expect(symbol: ".", "'.@count' after SUBQUERY(…)")
        guard case .at(let op) = current.kind, ["count", "size"].contains(op.lowercased()) else {
            throw unexpected(expected: "@count after SUBQUERY(…)")
        }
        let end = advance()
        return .subqueryCount(collection: collection, variable: v, predicate: predicate, range: SourceRange.spanning(start.range, end.range))
    }

    /// `path = step { "." step } [ "." collection-op [ "." ident ] ]`
    /// `step = ident | "`" any-text "`" | "@links" "." type "." relation | "$" ident | "id" | "@type"`
    private mutating func path() throws -> Path {
        let start = current.range
        var steps: [Step] = []
        var aggregate: Aggregate? = nil
        var end = start
        func isFirst() -> Bool { steps.isEmpty && aggregate == nil }
        repeat {
            let t = current
            switch t.kind {
            case .identifier(let w):
                _ = advance()
                if w == "id" {
                    steps.append(.id)
                } else {
                    steps.append(.name(Name(text: w, range: t.range)))
                }
            case .quotedIdentifier(let w):
                _ = advance()
                steps.append(.name(Name(text: w, range: t.range)))
            case .variable(let v):
                guard isFirst() else { throw QueryError("a variable can only start a path", at: t.range) }
                _ = advance()
                steps.append(.variable(Name(text: v, range: t.range)))
            case .at(let a):
                let lower = a.lowercased()
                _ = advance()
                if aggregate != nil { throw QueryError("only one collection operator per path", at: t.range) }
                switch lower {
                case "links":
                    _ = try expect(symbol: ".", "'.' and a type after @links")
                    let type = try name("a type name after @links.")
                    _ = try expect(symbol: ".", "'.' and a relation after @links.\(type.text)")
                    let relation = try name("a relation name")
                    steps.append(.links(type: type, relation: relation))
                case "type": steps.append(.type)
                case "count", "size": aggregate = .count
                case "sum": aggregate = .sum
                case "avg": aggregate = .avg
                case "min": aggregate = .min
                case "max": aggregate = .max
                default:
                    throw QueryError("unknown collection operator '@\(a)'", at: t.range, hint: "use @count, @size, @sum, @avg, @min, @max, @links or @type")
                }
            default:
                throw unexpected(expected: steps.isEmpty ? "a name" : "a name after '.'")
            }
            end = tokens[max(0, position - 1)].range
            if let aggregate {
                // `items.@sum.price` is `items.price.@sum`; `@count` takes no key.
                if current.isSymbol("."), case .identifier = peek().kind {
                    if aggregate == .count { throw QueryError("@count takes no key", at: peek().range, hint: "write path.@count") }
                    _ = advance()
                    let key = try name("a key")
                    steps.append(.name(key))
                    end = key.range
                }
                break
            }
        } while accept(symbol: ".")
        return Path(steps: steps, aggregate: aggregate, range: SourceRange.spanning(start, end))
    }

    // MARK: Dot-commands

    /// `.name arg…`: words split on spaces; quotes group words.
    static func parseDotCommand(_ source: String) throws -> Statement {
        let scalars = Array(source.unicodeScalars)
        var i = 0
        while i < scalars.count, scalars[i].properties.isWhitespace { i += 1 }
        let start = i
        i += 1
        var words: [String] = []
        var word = ""
        var quote: Unicode.Scalar? = nil
        var inWord = false
        while i < scalars.count {
            let c = scalars[i]
            if let q = quote {
                if c == q { quote = nil } else { word.unicodeScalars.append(c) }
            } else if c == "\"" || c == "'" {
                quote = c; inWord = true
            } else if c.properties.isWhitespace {
                if inWord { words.append(word); word = ""; inWord = false }
            } else {
                word.unicodeScalars.append(c); inWord = true
            }
            i += 1
        }
        if quote != nil { throw QueryError("unclosed quote", at: SourceRange(start, scalars.count)) }
        if inWord { words.append(word) }
        guard let name = words.first, !name.isEmpty else {
            throw QueryError("missing command name after '.'", at: SourceRange(start, start + 1), hint: "try .help")
        }
        return .dotCommand(name: name, arguments: Array(words.dropFirst()), range: SourceRange(start, start + 1 + name.unicodeScalars.count))
    }
}

extension Expression {
    /// Parentheses leave no node in the tree: `(a + b)` is the expression `a + b`.
    static func grouped(_ e: Expression, range: SourceRange) -> Expression { e }
}
