import Foundation

/// The search of a full-text table (SQLite's FTS3, FTS4 or FTS5): the keys of the rows whose
/// text matches a query written in the module's own syntax (`sqlite AND fast`, `"one phrase"`,
/// `prefix*`, `NEAR(a b)`), as the module itself answers it — its tokenizer, its stemming — so
/// that every engine gives the same answer: the in-memory engine asks it, SQL asks the module
/// directly.
public struct FullTextSearch: Sendable {
    /// The module (`fts5`), for messages.
    public let module: String
    /// The table's columns, each searchable on its own.
    public let columns: [String]
    private let search: @Sendable (_ query: String, _ column: String?) throws -> [ObjectID]

    /// A search answered by `search(query, column)` (nil: every column).
    public init(module: String, columns: [String], search: @escaping @Sendable (_ query: String, _ column: String?) throws -> [ObjectID]) {
        self.module = module
        self.columns = columns
        self.search = search
    }

    /// A query the module refused, in its own words (`fts5: syntax error near "AND"`).
    public struct Refusal: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// The keys of the rows matching `query`, in `column` only when given; throws the module's
    /// own complaint about a query it cannot read.
    public func keys(matching query: String, in column: String?) throws -> Set<ObjectID> {
        Set(try search(query, column))
    }
}
