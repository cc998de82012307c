extension QueryHelp {
    /// One clause, operator or function of the language: what `.help NAME` prints, and one row
    /// of docs/query-language.md's reference table (a test keeps the two equal and runs every
    /// example on the bundled sample).
    public struct Topic: Sendable {
        /// The words `.help` finds it by, the first as it is written in a statement.
        public let names: [String]
        /// How it is written.
        public let syntax: String
        /// What it does, in one sentence.
        public let meaning: String
        /// One statement over the bundled sample (`sample-data/library.sqlite`) that uses it,
        /// or over a full-text table `Note(title, body)` when ``needsFullTextTable``.
        public let example: String
        /// True when the example needs a full-text table (the sample has none).
        public var needsFullTextTable = false
    }

    /// Every clause, operator and function, in the order docs/query-language.md lists them.
    public static let topics: [Topic] = [
        Topic(names: ["where", "filter"], syntax: "Type where PREDICATE",
              meaning: "keeps the objects the predicate holds for; a bare predicate filters the type on screen",
              example: #"Book where pages > 300 AND author.name BEGINSWITH[c] "a""#),
        Topic(names: ["sort", "sort by", "order"], syntax: "sort by PATH [asc|desc], …",
              meaning: "orders the objects, stably, nulls first ascending",
              example: "Book sort by price desc, title limit 5"),
        Topic(names: ["distinct"], syntax: "distinct PATH, …",
              meaning: "keeps the first object of each distinct value of the paths",
              example: "Book sort by price distinct author limit 10"),
        Topic(names: ["limit", "offset"], syntax: "limit N [offset M]",
              meaning: "keeps N objects, after skipping M",
              example: "Book sort by title limit 10 offset 20"),
        Topic(names: ["select", "as", "projection"], syntax: "select EXPR [as NAME], …",
              meaning: "a table of values instead of objects, one column per expression",
              example: "Book limit 5 select title, author.name as author, price * 2 as double"),
        Topic(names: ["group", "group by", "frequency"], syntax: "Type [where …] group by PATH [limit N]",
              meaning: "one row per distinct value with its count, most frequent first",
              example: "Loan where returned == nil group by member.address.city limit 5"),
        Topic(names: ["count"], syntax: "count Type [where PREDICATE]",
              meaning: "the number of objects the predicate holds for",
              example: "count Book where inPrint == true"),
        Topic(names: ["and", "or", "not", "&&", "||", "!"], syntax: "P AND Q, P OR Q, NOT P",
              meaning: "combine predicates; NOT binds tightest, OR loosest",
              example: "Book where NOT (pages < 100 OR price > 40)"),
        Topic(names: ["==", "!=", "<", "<=", ">", ">=", "=", "<>", "comparison"], syntax: "EXPR == EXPR (also != < <= > >=)",
              meaning: "compares values; numbers across integers and doubles, dates with date literals, null with missing values",
              example: "Loan where returned == nil AND due < 2023-06-01"),
        Topic(names: ["between"], syntax: "EXPR BETWEEN {LOW, HIGH}",
              meaning: "LOW <= value <= HIGH",
              example: "Book where pages BETWEEN {100, 200}"),
        Topic(names: ["in"], syntax: "EXPR IN {A, B, …}",
              meaning: "membership in a list or a collection; on two strings, a substring test",
              example: #"Author where country IN {"Kraków", "Reykjavík"}"#),
        Topic(names: ["beginswith", "endswith"], syntax: "TEXT BEGINSWITH[cd] TEXT",
              meaning: "prefix and suffix tests",
              example: #"Book where title BEGINSWITH "Caf""#),
        Topic(names: ["contains"], syntax: "TEXT CONTAINS[cd] TEXT, COLLECTION CONTAINS VALUE",
              meaning: "a substring test on text, membership on a collection",
              example: #"Book where title CONTAINS[c] "night""#),
        Topic(names: ["like"], syntax: "TEXT LIKE[c] PATTERN",
              meaning: "a whole-text pattern: * any run, ? one character",
              example: #"Member where email LIKE "*@example.org""#),
        Topic(names: ["matches", "regex"], syntax: "TEXT MATCHES[c] REGEX",
              meaning: "a whole-text regular expression (Foundation's)",
              example: #"Book where isbn MATCHES "97[89].*""#),
        Topic(names: ["match", "full-text", "fts"], syntax: "COLUMN MATCH QUERY, TABLE MATCH QUERY",
              meaning: "a full-text table's search (SQLite FTS3/4/5), answered by its module",
              example: #"Note where body MATCH "sqlite AND fast*""#, needsFullTextTable: true),
        Topic(names: ["[c]", "[d]", "[cd]", "modifier"], syntax: "OP[c], OP[d], OP[cd]",
              meaning: "[c] ignores case, [d] diacritics, for == != and the text tests",
              example: #"Author where name ==[cd] "ines bronte""#),
        Topic(names: ["any", "some", "all", "none", "quantifier"], syntax: "ANY|ALL|NONE PATH OP VALUE",
              meaning: "tests each element of a to-many path; without one, a collection means ANY",
              example: #"Book where ALL tags.label != "poetry""#),
        Topic(names: ["subquery", "$"], syntax: "SUBQUERY(COLLECTION, $x, PREDICATE).@count",
              meaning: "the elements of a collection a predicate holds for, counted",
              example: "Member where SUBQUERY(@links.Loan.member, $l, $l.renewals == 2).@count >= 3"),
        Topic(names: ["@count", "@size"], syntax: "PATH.@count",
              meaning: "the size of a collection (to-many, backlink, array), a text's length",
              example: "Book where tags.@count >= 2"),
        Topic(names: ["@sum"], syntax: "PATH.@sum[.ATTRIBUTE]",
              meaning: "the numbers' sum, added exactly as decimals; 0 for none",
              example: "Author where @links.Book.author.pages.@sum > 3000"),
        Topic(names: ["@avg"], syntax: "PATH.@avg[.ATTRIBUTE]",
              meaning: "the numbers' (or dates') average; null for none",
              example: "Member where @links.Review.member.rating.@avg >= 4"),
        Topic(names: ["@min", "@max"], syntax: "PATH.@min[.ATTRIBUTE]",
              meaning: "the least or greatest value; null for none",
              example: "Author where @links.Book.author.published.@min < 1990-01-01"),
        Topic(names: ["@links", "backlink", "backlinks"], syntax: "@links.Type.relation",
              meaning: "every object of Type whose relation points here",
              example: "Author where @links.Book.author.@count == 0"),
        Topic(names: ["id", "#", "key", "reference"], syntax: "id, #KEY",
              meaning: "an object's key, and an object named by its key",
              example: "Book where author == #12 OR id IN {196, 197}"),
        Topic(names: ["@type"], syntax: "@type",
              meaning: "the object's type name",
              example: "Book limit 3 select @type, title"),
        Topic(names: ["+", "-", "*", "/", "arithmetic"], syntax: "EXPR + - * / EXPR",
              meaning: "arithmetic on numbers; / divides as floating point, by zero gives null",
              example: "Book where price * 2 > pages / 10"),
        Topic(names: ["date", "dates", "null", "nil", "literal", "literals"], syntax: #"42, 3.25, "text", true, null, 2024-01-31, 2024-01-31T10:20:30Z, {1, 2}"#,
              meaning: "numbers, text, booleans, null, dates (UTC unless a zone is given) and lists",
              example: "Member where joined >= 2020-01-01T00:00:00Z AND phone != nil"),
        Topic(names: ["update", "set"], syntax: "update Type [where …] set NAME = EXPR, REL += #KEY, …",
              meaning: "stages a change to every object the predicate holds for (.commit writes it)",
              example: "update Book where id == 196 set price = price * 1.1"),
        Topic(names: ["insert"], syntax: "insert Type { NAME: EXPR, … }",
              meaning: "stages a new object",
              example: #"insert Tag { label: "zines" }"#),
        Topic(names: ["delete"], syntax: "delete Type [where …]",
              meaning: "stages the deletion of every object the predicate holds for",
              example: "delete Loan where returned != nil"),
    ]

    /// The topic `.help NAME` means (any of its names, any case), if any.
    public static func topic(named name: String) -> Topic? {
        let wanted = name.lowercased()
        return topics.first { $0.names.contains { $0.lowercased() == wanted } }
    }

    /// What `.help NAME` prints for a topic.
    public static func text(of topic: Topic) -> String {
        "\(topic.syntax)\n    \(topic.meaning)\n    e.g. \(topic.example)\n"
    }

    /// The words `.help` takes for the language, one per topic.
    public static var topicNames: String { topics.map { $0.names[0] }.joined(separator: " ") }

    /// docs/query-language.md's reference table: one row per topic.
    public static var referenceTable: String {
        func cell(_ s: String) -> String { "`" + s.replacingOccurrences(of: "|", with: "\\|") + "`" }
        return "| clause, operator or function | written | what it does | example |\n| --- | --- | --- | --- |\n"
            + topics.map { "| \($0.names[0]) | \(cell($0.syntax)) | \($0.meaning) | \(cell($0.example)) |" }.joined(separator: "\n") + "\n"
    }
}
