import Foundation
import GRDB
import LoupeModel

extension RelationalFormat {
    /// What Loupe does with virtual tables (FTS3/4/5, R-Tree, any other module) and the ordinary
    /// tables their modules keep behind them.
    ///
    /// A module's shadow tables (`docs_data`, `docs_idx`, `docs_content`, `r_node`…) are its own
    /// bookkeeping: a row written into one by hand corrupts the index it belongs to while
    /// `PRAGMA integrity_check` still says ok. So they are hidden, as SQLite's own tables are,
    /// wherever SQLite can tell them (`PRAGMA table_list` says `shadow`); a table named like the
    /// shadow table of a virtual table whose module this SQLite does not have is shown read-only.
    /// The virtual table itself is listed like a view: its rows read, never written.
    public enum VirtualTables {
        /// The module a `CREATE VIRTUAL TABLE … USING module(…)` statement names, else nil.
        static func module(_ sql: String) -> String? {
            // (Most tables are not virtual: a word compared before any pattern runs.)
            guard sql.utf8.count > 14, sql.drop(while: \.isWhitespace).prefix(6).uppercased() == "CREATE",
                  sql.range(of: "VIRTUAL", options: [.caseInsensitive]) != nil,
                  sql.range(of: #"^\s*CREATE\s+VIRTUAL\s+TABLE\b"#, options: [.regularExpression, .caseInsensitive]) != nil else { return nil }
            guard let using = sql.range(of: #"\bUSING\s+[A-Za-z0-9_]+"#, options: [.regularExpression, .caseInsensitive]) else { return "?" }
            return String(sql[using].dropFirst(5)).trimmingCharacters(in: .whitespaces).lowercased()
        }

        /// The full-text module (`fts3`, `fts4`, `fts5`) of virtual table `name`, when it is one
        /// and this SQLite has the module: its rows are keyed by rowid and searched with `MATCH`.
        static func fullTextModule(_ db: Database, name: String) throws -> String? {
            guard let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [name]),
                  let module = module(sql), ["fts3", "fts4", "fts5"].contains(module),
                  Set((try? String.fetchAll(db, sql: "SELECT name FROM pragma_module_list")) ?? []).contains(module) else { return nil }
            return module
        }

        /// How `MATCH` searches full-text table `table` of the file at `path`: the module asked
        /// over a connection of its own, opened for reading only, for the rowids (the rows' keys).
        static func search(path: String, table: String, module: String, columns: [String]) -> FullTextSearch {
            FullTextSearch(module: module, columns: columns) { query, column in
                let file = try StoreFile.openForReading(path)
                return try file.read { db in try rowids(db, table: table, column: column, query: query) }.get().map(ObjectID.int)
            }
        }

        /// `SELECT rowid FROM table WHERE column MATCH 'query'` (nil `column`: every column).
        public static func matchingSQL(table: String, column: String?, query: String) -> String {
            "SELECT rowid FROM \(SQL.identifier(table)) WHERE \(SQL.identifier(column ?? table)) MATCH \(SQL.literal(query))"
        }

        /// The rowids of the rows of full-text table `table` matching `query` (only whether
        /// there is one, with `firstOnly`), or the module's refusal of the query in its own words
        /// (`fts5: syntax error near "AND"`), without SQLite's wrapping.
        public static func rowids(_ db: Database, table: String, column: String?, query: String,
                                  firstOnly: Bool = false) throws -> Result<[Int64], FullTextSearch.Refusal> {
            do {
                return .success(try Int64.fetchAll(db, sql: matchingSQL(table: table, column: column, query: query) + (firstOnly ? " LIMIT 1" : "")))
            } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
                return .failure(FullTextSearch.Refusal(error.message ?? "\(error.resultCode)"))
            }
        }

        /// The tables SQLite itself calls shadow tables of a virtual table in the main schema.
        static func shadowTables(_ db: Database) throws -> Set<String> {
            // (`table_list` is SQLite 3.37's; without it, ``refusal(_:name:)`` still keeps them unwritten.)
            guard let rows = try? String.fetchAll(db, sql: "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'shadow'") else { return [] }
            return Set(rows)
        }

        /// Why table `name` is never written, when it is a virtual table or may be the shadow table
        /// of one whose module this SQLite lacks (it cannot say which tables that module keeps).
        static func refusal(_ db: Database, name: String) throws -> String? {
            let virtuals = try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'")
            guard !virtuals.isEmpty else { return nil }
            let known = Set((try? String.fetchAll(db, sql: "SELECT name FROM pragma_module_list")) ?? [])
            for row in virtuals {
                guard let table = (row[0] as DatabaseValue).lenientText, let module = module((row[1] as DatabaseValue).lenientText ?? "") else { continue }
                if table == name {
                    return "\(name) is a virtual table (module \(module)): Loupe reads its rows and never writes them"
                }
                if name.hasPrefix(table + "_"), !known.contains(module) {
                    return "\(name) may be a shadow table of virtual table \(table) (module \(module), which Loupe's SQLite does not have): Loupe never writes a virtual table's shadow tables"
                }
            }
            return nil
        }
    }
}
