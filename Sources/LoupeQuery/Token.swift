import DisplayText
import Foundation

/// One token of a statement, with where it stands.
public struct Token: Equatable, Sendable {
    /// The kinds of token.
    public enum Kind: Equatable, Sendable {
        /// A name or keyword: `Book`, `where`, `AND`.
        case identifier(String)
        /// A name in backticks: `` `sort` ``.
        case quotedIdentifier(String)
        /// `@count`, `@links`, `@type`: the name without `@`.
        case at(String)
        /// `$i`: the name without `$`.
        case variable(String)
        case integer(Int64)
        case decimal(Double)
        case string(String)
        /// A date or timestamp literal.
        case date(Date)
        /// `#42` or `#"key"`.
        case reference(ObjectIDLiteral)
        /// `[c]`, `[d]`, `[cd]`: the letters inside.
        case modifier(String)
        /// Operators and punctuation: `==`, `(`, `,`, `.`, ….
        case symbol(String)
        case end
    }

    public let kind: Kind
    public let range: SourceRange

    /// The identifier's text when the token is a (non-quoted) identifier.
    var word: String? { if case .identifier(let w) = kind { return w } else { return nil } }

    /// True when the token is the keyword `k` (case-insensitive, never a quoted identifier).
    func isKeyword(_ k: String) -> Bool { word.map { $0.caseInsensitiveCompare(k) == .orderedSame } ?? false }

    func isSymbol(_ s: String) -> Bool { kind == .symbol(s) }
}

/// The key of a `#` reference literal.
public enum ObjectIDLiteral: Hashable, Sendable, CustomStringConvertible {
    case int(Int64)
    case string(String)
    public var description: String {
        switch self {
        case .int(let i): return "#\(i)"
        case .string(let s): return "#\"\(s)\""
        }
    }
}

/// Splits a statement into tokens. Never fails silently: a character that starts no token, an
/// unclosed string or a bad escape is a positioned ``QueryError``.
public struct Lexer {
    private let scalars: [Unicode.Scalar]
    private var i = 0

    public init(_ source: String) { scalars = Array(source.unicodeScalars) }

    /// All tokens, ending with `.end`.
    public static func tokenize(_ source: String) throws -> [Token] {
        var lexer = Lexer(source)
        var tokens: [Token] = []
        while true {
            let t = try lexer.next()
            tokens.append(t)
            if t.kind == .end { return tokens }
        }
    }

    private func peek(_ k: Int = 0) -> Unicode.Scalar? { i + k < scalars.count ? scalars[i + k] : nil }

    private static func isIdentStart(_ u: Unicode.Scalar) -> Bool {
        u == "_" || u.properties.isAlphabetic
    }

    private static func isIdentPart(_ u: Unicode.Scalar) -> Bool {
        isIdentStart(u) || ("0"..."9").contains(u)
    }

    private static func isDigit(_ u: Unicode.Scalar?) -> Bool { u.map { ("0"..."9").contains($0) } ?? false }

    public mutating func next() throws -> Token {
        while let c = peek(), c.properties.isWhitespace { i += 1 }
        let start = i
        guard let c = peek() else { return Token(kind: .end, range: SourceRange(i, i)) }
        func token(_ kind: Token.Kind) -> Token { Token(kind: kind, range: SourceRange(start, i)) }

        if Lexer.isIdentStart(c) {
            while let d = peek(), Lexer.isIdentPart(d) { i += 1 }
            return token(.identifier(text(start, i)))
        }
        if Lexer.isDigit(c) { return try number(start) }
        switch c {
        case "\"", "'":
            return token(.string(try string()))
        case "`":
            i += 1
            let s = i
            while let d = peek(), d != "`" { i += 1 }
            guard peek() == "`" else { throw QueryError("unclosed quoted name", at: SourceRange(start, i), hint: "add a closing `") }
            let name = text(s, i)
            i += 1
            if name.isEmpty { throw QueryError("empty quoted name", at: SourceRange(start, i)) }
            return token(.quotedIdentifier(name))
        case "@", "$":
            i += 1
            let s = i
            while let d = peek(), Lexer.isIdentPart(d) { i += 1 }
            if s == i { throw QueryError("'\(c)' must be followed by a name", at: SourceRange(start, i), hint: c == "@" ? "like @count" : "like $item") }
            let name = text(s, i)
            return token(c == "@" ? .at(name) : .variable(name))
        case "#":
            i += 1
            if peek() == "\"" || peek() == "'" { return token(.reference(.string(try string()))) }
            let s = i
            if peek() == "-" { i += 1 }
            while Lexer.isDigit(peek()) { i += 1 }
            guard let n = Int64(text(s, i)) else {
                if text(s, i).contains(where: \.isNumber) {
                    throw QueryError("object key #\(text(s, i)) is out of range", at: SourceRange(start, i),
                                     hint: "integer keys run from -9223372036854775808 to 9223372036854775807; a text key is written #\"key\"")
                }
                throw QueryError("'#' must be followed by an object key", at: SourceRange(start, max(i, start + 1)), hint: "like #42 or #\"key\"")
            }
            return token(.reference(.int(n)))
        case "[":
            i += 1
            let s = i
            while let d = peek(), d.properties.isAlphabetic { i += 1 }
            let letters = text(s, i).lowercased()
            guard peek() == "]", !letters.isEmpty, letters.allSatisfy({ "cdn".contains($0) }) else {
                throw QueryError("unknown modifier", at: SourceRange(start, i + (peek() == "]" ? 1 : 0)), hint: "use [c], [d] or [cd]")
            }
            i += 1
            return token(.modifier(letters))
        default:
            break
        }
        let two = peek(1).map { String(c) + String($0) } ?? ""
        if ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||", "+=", "-="].contains(two) {
            i += 2
            return token(.symbol(two))
        }
        if "=<>!+-*/(){},.:;".unicodeScalars.contains(c) {
            i += 1
            return token(.symbol(String(c)))
        }
        i += 1
        throw QueryError("unexpected character '\(DisplayText.escaped(String(c)))'", at: SourceRange(start, i))
    }

    private func text(_ a: Int, _ b: Int) -> String { String(String.UnicodeScalarView(scalars[a..<b])) }

    /// `42`, `3.25`, `1e6`, or a date `2024-01-31[(T|@| )HH:mm[:ss[.fff]]][Z|±HH:mm]`.
    private mutating func number(_ start: Int) throws -> Token {
        // A date starts with four digits and a dash followed by two digits.
        if (0..<4).allSatisfy({ Lexer.isDigit(peek($0)) }), peek(4) == "-", Lexer.isDigit(peek(5)), Lexer.isDigit(peek(6)),
           peek(7) == "-", Lexer.isDigit(peek(8)), Lexer.isDigit(peek(9)) {
            i += 10
            var text = self.text(start, i)
            if (peek() == "T" || peek() == "@"), Lexer.isDigit(peek(1)), Lexer.isDigit(peek(2)), peek(3) == ":" {
                i += 1
                text += "T"
                let s = i
                while let d = peek(), Lexer.isDigit(d) || d == ":" || d == "." { i += 1 }
                if peek() == "Z" { i += 1 } else if (peek() == "+" || peek() == "-"), Lexer.isDigit(peek(1)), Lexer.isDigit(peek(2)) {
                    i += 3
                    if peek() == ":", Lexer.isDigit(peek(1)), Lexer.isDigit(peek(2)) { i += 3 } else if Lexer.isDigit(peek()), Lexer.isDigit(peek(1)) { i += 2 }
                }
                text += self.text(s, i)
            }
            guard let date = DateParser.parse(text) else {
                throw QueryError("invalid date '\(self.text(start, i))'", at: SourceRange(start, i), hint: "like 2024-01-31 or 2024-01-31T10:20:30Z")
            }
            return Token(kind: .date(date), range: SourceRange(start, i))
        }
        while Lexer.isDigit(peek()) { i += 1 }
        // Digits, a dash, two digits, a dash and two digits, with nothing between, are a date or
        // nothing: never arithmetic (`99999-01-01` is not 99997).
        if peek() == "-", Lexer.isDigit(peek(1)), Lexer.isDigit(peek(2)), peek(3) == "-", Lexer.isDigit(peek(4)), Lexer.isDigit(peek(5)) {
            let year = text(start, i)
            i += 6
            while let c = peek(), Lexer.isDigit(c) || c == ":" || c == "." || c == "T" || c == "Z" { i += 1 }
            throw QueryError("invalid date '\(text(start, i))': year \(year) is outside the years 0001–9999 a date can have", at: SourceRange(start, i),
                             hint: "a date is written with a four-digit year, like 2024-01-31")
        }
        var isDecimal = false
        if peek() == ".", Lexer.isDigit(peek(1)) {
            isDecimal = true
            i += 1
            while Lexer.isDigit(peek()) { i += 1 }
        }
        if peek() == "e" || peek() == "E", Lexer.isDigit(peek(1)) || ((peek(1) == "+" || peek(1) == "-") && Lexer.isDigit(peek(2))) {
            isDecimal = true
            i += 2
            while Lexer.isDigit(peek()) { i += 1 }
        }
        let t = text(start, i)
        let range = SourceRange(start, i)
        if isDecimal {
            guard let d = Double(t), d.isFinite else { throw QueryError("number out of range", at: range) }
            return Token(kind: .decimal(d), range: range)
        }
        if let n = Int64(t) { return Token(kind: .integer(n), range: range) }
        if let d = Double(t), d.isFinite { return Token(kind: .decimal(d), range: range) }
        throw QueryError("number out of range", at: range)
    }

    /// A string in `"` or `'`, with escapes `\n \t \r \0 \\ \" \' \u{1F600} \uXXXX`.
    private mutating func string() throws -> String {
        let start = i
        let quote = scalars[i]
        i += 1
        var out = String.UnicodeScalarView()
        while true {
            guard let c = peek() else {
                throw QueryError("unclosed string", at: SourceRange(start, i), hint: "add a closing \(quote)")
            }
            i += 1
            if c == quote { return String(out) }
            if c != "\\" { out.append(c); continue }
            guard let e = peek() else { throw QueryError("unclosed string", at: SourceRange(start, i), hint: "add a closing \(quote)") }
            let escapeStart = i - 1
            i += 1
            switch e {
            case "n": out.append("\n")
            case "t": out.append("\t")
            case "r": out.append("\r")
            case "0": out.append("\0")
            case "\\", "\"", "'", "/": out.append(e)
            case "u":
                var hex = ""
                if peek() == "{" {
                    i += 1
                    while let d = peek(), d != "}", hex.count < 9 { hex.unicodeScalars.append(d); i += 1 }
                    guard peek() == "}" else { throw QueryError("bad unicode escape", at: SourceRange(escapeStart, i), hint: "like \\u{1F600}") }
                    i += 1
                } else {
                    for _ in 0..<4 { if let d = peek() { hex.unicodeScalars.append(d); i += 1 } }
                }
                guard let v = UInt32(hex, radix: 16), let u = Unicode.Scalar(v) else {
                    throw QueryError("bad unicode escape", at: SourceRange(escapeStart, i), hint: "like \\u{1F600}")
                }
                out.append(u)
            default:
                throw QueryError("unknown escape '\\\(e)'", at: SourceRange(escapeStart, i), hint: "use \\n \\t \\\\ \\\" \\' or \\u{…}")
            }
        }
    }
}


import LoupeModel

/// Date literals use the model's date reader (`yyyy-MM-dd`, times, zones).
enum DateParser {
    static func parse(_ s: String) -> Date? { DateText.parse(s) }
}

/// The model's ISO rendering, under a name local to this module.
enum LoupeModelDate {
    static func iso(_ d: Date) -> String { DateText.iso(d) }
}
