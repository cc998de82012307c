import LoupeModel

/// Completion of the word at the cursor, from the schema at the cursor's place in the statement:
/// type names where a type goes; after `Type where` (or `and`, `or`, `(`, `by`, `select`, `set`, a
/// comma) the attributes and relations of that type; after a dot, those of the type the path
/// reaches through its relations (`author.c` offers `Author`'s names, never another type's);
/// after an attribute, the operators; after a value, the clauses and connectives. Dot-commands at
/// the start of a line. Candidates keep the case of the schema; the caller keeps what the user
/// typed and adds the rest.
public enum Completion {
    /// The word being completed (its part after the last dot) and what may follow it, sorted.
    public struct Result: Equatable, Sendable {
        public let prefix: String
        public let candidates: [String]
    }

    static let comparisonOperators = ["==", "!=", "<", "<=", ">", ">=", "BEGINSWITH", "CONTAINS", "ENDSWITH", "LIKE", "MATCHES", "MATCH", "IN", "BETWEEN"]
    static let predicateStarts = ["ANY", "ALL", "NONE", "NOT", "SUBQUERY", "@links", "TRUEPREDICATE", "FALSEPREDICATE"]
    static let afterValue = ["AND", "OR", "sort by", "distinct", "limit", "select", "group by"]
    static let aggregates = ["@count", "@sum", "@avg", "@min", "@max"]
    /// Words after which an attribute or relation name comes.
    static let nameSlots: Set<String> = ["where", "and", "or", "not", "&&", "||", "!", "(", "by", ",", "select", "set", "any", "some", "all", "none", "distinct", "{"]

    /// Completes `text` at `cursor` (a character offset) over `graph`; `currentType` is the type
    /// a bare predicate filters (the view's).
    public static func complete(_ text: String, cursor: Int, graph: ObjectGraph, currentType: TypeTable?) -> Result {
        let before = Array(text.prefix(cursor))
        var start = before.count
        while start > 0, before[start - 1].isLetter || before[start - 1].isNumber || "_@.$".contains(before[start - 1]) { start -= 1 }
        let word = String(before[start...])
        let head = String(before[..<start])
        if head.trimmingCharacters(in: .whitespaces).isEmpty, text.hasPrefix(".") || word.hasPrefix(".") {
            return filter(ReplSession.commands.map { "." + $0.name }, prefix: word)
        }
        let tokens = tokenize(head)
        let segments = word.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let last = segments.last ?? ""

        // The statement's type: `Type …`, `count Type …`, `update Type …`; else the view's.
        let verbs: Set<String> = ["count", "update", "delete", "insert"]
        if tokens.isEmpty { return filter(typeNames(graph) + Array(verbs), prefix: last) }
        let first = tokens[0].lowercased()
        if verbs.contains(first), tokens.count == 1 { return filter(typeNames(graph), prefix: last) }
        let typeToken = verbs.contains(first) ? tokens[1] : tokens[0]
        guard let type = graph.type(named: typeToken) ?? currentType else { return Result(prefix: last, candidates: []) }

        if segments.count > 1 {
            // A path: follow its relations from the statement's type.
            var reached = type, toMany = false
            for name in segments.dropLast() {
                guard let r = reached.relation(named: name) else { return Result(prefix: last, candidates: []) }
                let relation = reached.relations[r]
                guard relation.targetTypes.count == 1 else { return Result(prefix: last, candidates: []) }
                toMany = toMany || relation.isToMany
                reached = graph.types[relation.targetTypes[0]]
            }
            return filter(names(of: reached) + (toMany ? aggregates : []), prefix: last)
        }
        let previous = tokens.last!.lowercased()
        if tokens.count == 1 && !verbs.contains(first) {
            // `Type |`: the clauses that may follow a type.
            return filter(["where", "sort by", "distinct", "limit", "select", "group by"], prefix: last)
        }
        let operatorWords: Set<String> = ["==", "!=", "<", "<=", ">", ">=", "=", "beginswith", "contains", "endswith", "like", "matches", "in", "between"]
        if operatorWords.contains(previous) || previous.hasSuffix("]") && operatorWords.contains(String(previous.prefix { $0 != "[" })) {
            return filter(names(of: type), prefix: last)   // a value, or a path to compare with
        }
        if nameSlots.contains(previous) {
            return filter(names(of: type) + (["where", "and", "or", "(", "not"].contains(previous) ? predicateStarts : []), prefix: last)
        }
        if type.attributeIndex[tokens.last!] != nil || type.relation(named: tokens.last!) != nil || previous.contains(".") || previous.hasPrefix("@") {
            return filter(comparisonOperators, prefix: last)
        }
        return filter(afterValue, prefix: last)
    }

    /// A type's attribute and relation names, in schema order, each as it must be typed (``SourceSpelling/name(_:)``).
    static func names(of type: TypeTable) -> [String] {
        (type.attributes.map(\.name) + type.relations.map(\.name)).map(SourceSpelling.name)
    }

    /// The type names, as they must be typed.
    static func typeNames(_ graph: ObjectGraph) -> [String] { graph.types.map { SourceSpelling.name($0.name.rawValue) } }

    /// The candidates that start with `prefix` (any case), sorted, without repeats or the prefix itself.
    static func filter(_ candidates: [String], prefix: String) -> Result {
        let lower = prefix.lowercased()
        var seen = Set<String>()
        // A quoted name matches by what is inside its backticks.
        func bare(_ c: String) -> String { c.count > 2 && c.hasPrefix("`") && c.hasSuffix("`") ? String(c.dropFirst().dropLast()) : c }
        let matches = candidates.filter { (bare($0).lowercased().hasPrefix(lower) || $0.lowercased().hasPrefix(lower)) && $0 != prefix && seen.insert($0).inserted }
        return Result(prefix: prefix, candidates: matches)
    }

    /// The words and symbols of the text before the word being completed (strings skipped).
    static func tokenize(_ text: String) -> [String] {
        var tokens: [String] = [], current = "", inString: Character? = nil
        func flush() { if !current.isEmpty { tokens.append(current); current = "" } }
        for c in text {
            if let quote = inString { if c == quote { inString = nil; tokens.append("\"…\"") }; continue }
            if c == "\"" || c == "'" { flush(); inString = c; continue }
            if c.isLetter || c.isNumber || "_@.$#".contains(c) { current.append(c); continue }
            flush()
            if "(),{}".contains(c) { tokens.append(String(c)) }
            else if !c.isWhitespace {
                // Operators: keep runs of symbol characters together (`==`, `<=`, `&&`).
                if let lastToken = tokens.last, lastToken.allSatisfy({ "=!<>&|".contains($0) }), "=!<>&|".contains(c) { tokens[tokens.count - 1].append(c) }
                else { tokens.append(String(c)) }
            }
        }
        flush()
        return tokens
    }
}
