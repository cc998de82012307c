/// The language in one screen: what `.help query` prints and the README's cheat sheet holds
/// (a test keeps the README equal to ``cheatSheet``). The whole language is
/// `docs/query-language.md`.
public enum QueryHelp {
    /// One example a line, each with what it shows.
    public static let cheatSheet = #"""
        Book where pages > 300 AND author.name BEGINSWITH[c] "a"       -- a filter, through a relation
        Book where title CONTAINS[cd] "zoe" sort by price desc limit 5 -- [c] case, [d] diacritics
        Author where @links.Book.author.@count >= 9                    -- backlinks, counted
        Book where ANY tags.label == "poetry"                          -- ANY / ALL / NONE over to-many
        count Member where SUBQUERY(@links.Loan.member, $l, $l.renewals == 2).@count >= 3
        Loan where returned == nil AND due < 2023-06-01 group by member.address.city
        Book select title, author.name as author, price                -- a projection
        Note where body MATCH "sqlite AND fast*"                       -- a full-text table (FTS3/4/5)
        Book where author == #164 OR id IN {196, 197}                  -- objects by key
        update Book where id == 196 set price = price * 1.1            -- staged, then .commit
        insert Genre { Name: "Polka" }
        delete Loan where returned != nil
        """#

    /// The clauses of a query, in the order they go (each once).
    public static let clauseOrder = "Type [where …] [sort by …] [distinct …] [limit N] [select …], or Type [where …] group by … [limit N]"

    /// What `.help query` prints.
    public static var text: String {
        "A statement names a type first, then its clauses: " + clauseOrder + ".\n"
            + "Operators: == != < <= > >= BEGINSWITH ENDSWITH CONTAINS LIKE MATCHES MATCH IN BETWEEN, AND OR NOT; "
            + "[c] ignores case, [d] diacritics; @count @sum @avg @min @max; @links.Type.relation walks backlinks.\n\n"
            + cheatSheet + "\n\n`.help TOPIC` explains one, with an example: " + topicNames + "\n"
            + "The whole language: docs/query-language.md.\n"
    }
}
