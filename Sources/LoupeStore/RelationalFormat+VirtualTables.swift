import Foundation
import GRDB

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
    enum VirtualTables {
        /// The module a `CREATE VIRTUAL TABLE … USING module(…)` statement names, else nil.
        static func module(_ sql: String) -> String? {
            // (Most tables are not virtual: a word compared before any pattern runs.)
            guard sql.utf8.count > 14, sql.drop(while: \.isWhitespace).prefix(6).uppercased() == "CREATE",
                  sql.range(of: "VIRTUAL", options: [.caseInsensitive]) != nil,
                  sql.range(of: #"^\s*CREATE\s+VIRTUAL\s+TABLE\b"#, options: [.regularExpression, .caseInsensitive]) != nil else { return nil }
            guard let using = sql.range(of: #"\bUSING\s+[A-Za-z0-9_]+"#, options: [.regularExpression, .caseInsensitive]) else { return "?" }
            return String(sql[using].dropFirst(5)).trimmingCharacters(in: .whitespaces).lowercased()
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
