import DisplayText
import Foundation
import LoupeModel

/// A place in a statement: a range of Unicode scalar offsets, 0-based, end exclusive.
public struct SourceRange: Hashable, Sendable {
    public var start: Int
    public var end: Int
    public init(_ start: Int, _ end: Int) { self.start = start; self.end = max(end, start) }
    /// The range from the start of `a` to the end of `b`.
    public static func spanning(_ a: SourceRange, _ b: SourceRange) -> SourceRange { SourceRange(min(a.start, b.start), max(a.end, b.end)) }
}

/// Every error of the query language: what was wrong, where, and what would be right.
///
/// One renderer (``render(source:)``) prints all of them in the caret form of QUERY.md:
/// ```
/// error: unknown attribute 'titel' on Book
///  --> 1:12
///   |
/// 1 | Book where titel BEGINSWITH "Harry"
///   |            ^^^^^ did you mean 'title'?
/// ```
public struct QueryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was wrong, in one line: `unknown attribute 'titel' on Book`.
    public let message: String
    /// Where in the statement.
    public let range: SourceRange
    /// What would be right, shown after the carets: `did you mean 'title'?`, `expected a value`.
    public let hint: String?

    public init(_ message: String, at range: SourceRange, hint: String? = nil) {
        self.message = message
        self.range = range
        self.hint = hint
    }

    public var description: String { "error: \(message) at \(range.start + 1)" + (hint.map { " (\($0))" } ?? "") }

    /// The caret form, against the statement the error is about. Everything shown is escaped
    /// (``DisplayText``): names in the message come from the file, and the statement may hold
    /// anything; the caret is measured on the escaped text, so it stays under the mistake.
    public func render(source: String) -> String {
        if self == .cancelled { return "error: cancelled (the statement was stopped before it finished)" }
        let scalars = Array(source.unicodeScalars)
        let start = min(range.start, scalars.count)
        // Line and column (1-based) of the start.
        var line = 1, lineStart = 0
        for i in 0..<start where scalars[i] == "\n" { line += 1; lineStart = i + 1 }
        var lineEnd = lineStart
        while lineEnd < scalars.count, scalars[lineEnd] != "\n" { lineEnd += 1 }
        let column = start - lineStart + 1
        func text(_ a: Int, _ b: Int) -> String { String(String.UnicodeScalarView(scalars[a..<b])) }
        // A long line is shown as a window around the mistake (…s mark what is left out).
        let window = 72
        let from = start - lineStart > window ? start - window : lineStart
        let markEnd = max(start, min(range.end, lineEnd, start + window))
        let to = lineEnd - markEnd > window ? markEnd + window : lineEnd
        let prefix = (from > lineStart ? "…" : "") + DisplayText.escaped(text(from, start))
        let marked = DisplayText.escaped(text(start, markEnd))
        let rest = DisplayText.escaped(text(markEnd, to)) + (to < lineEnd ? "…" : "")
        let gutter = String(line)
        let pad = String(repeating: " ", count: gutter.count)
        let width = max(1, DisplayText.width(of: marked))
        var out = "error: \(DisplayText.escaped(message))\n"
        out += "\(pad)--> \(line):\(column)\n"
        out += "\(pad) |\n"
        out += "\(gutter) | \(prefix)\(marked)\(rest)\n"
        out += "\(pad) | \(String(repeating: " ", count: DisplayText.width(of: prefix)))\(String(repeating: "^", count: width))"
        if let hint { out += " \(DisplayText.escaped(hint))" }
        return out
    }
}

