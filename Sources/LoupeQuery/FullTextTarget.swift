import LoupeModel

/// What a `MATCH` comparison asks of a full-text table, checked once for every engine: the
/// table's search, the column (nil: every column, written as the table's own name) and the
/// query in the module's syntax.
public struct FullTextTarget {
    public let search: FullTextSearch
    public let column: String?
    public let query: String
    let range: SourceRange

    static let hint = "write `column MATCH \"words\"` (or the table's name for every column) on a full-text table (SQLite FTS3/4/5); CONTAINS and MATCHES test text anywhere"

    /// `c` (a `MATCH`) on the objects of `table` (nil: not one type), or the error a user sees.
    public init(_ c: Comparison, on table: TypeTable?) throws {
        guard c.quantifier == nil, c.options.isEmpty, case .path(let path) = c.lhs, path.aggregate == nil, path.steps.count == 1,
              case .name(let name) = path.steps[0] else {
            throw QueryError("MATCH takes a column of a full-text table on its left", at: c.lhs.range, hint: Self.hint)
        }
        guard case .literal(.string(let query), _) = c.rhs else {
            throw QueryError("MATCH takes the query as text", at: c.rhs.range, hint: "like body MATCH \"sqlite AND fast\"")
        }
        guard let table, let search = table.fullText else {
            throw QueryError(table.map { "\($0.name) is not a full-text table" } ?? "MATCH needs a statement on one full-text table", at: c.range, hint: Self.hint)
        }
        if let a = table.attribute(named: name.text) {
            column = table.attributes[a].name
        } else if name.text.caseInsensitiveCompare(table.name.rawValue) == .orderedSame {
            column = nil
        } else {
            throw QueryError("\(table.name) has no column \(name.text)", at: name.range, hint: "its columns: " + search.columns.joined(separator: ", "))
        }
        (self.search, self.query, self.range) = (search, query, c.rhs.range)
    }

    /// The error a user sees when the module refuses the query (`reason`: its own words).
    public func refusal(_ reason: any Error) -> QueryError {
        QueryError("\(search.module) refused the full-text query: \(reason)", at: range,
                   hint: "terms, \"phrases\", prefix*, AND, OR, NOT, NEAR(a b): SQLite's full-text query syntax")
    }
}
