import Foundation
import CSQLiteTuning
import GRDB

extension RelationalFormat {
    /// Collations a file names that only the app that wrote it registers (`COLLATE LOCALIZED`,
    /// Android's; `COLLATE NOCASE_UNICODE`…), which Loupe's read connections emulate
    /// (`loupe_sqlite_read_as_written`) so that the tables keyed or indexed by them read at all.
    ///
    /// An emulation orders text as SQLite's NOCASE or BINARY does, which may not be the app's
    /// order: `schema` says which collation is emulated and how, and such a table is never
    /// written (a write through an index kept in the app's order would leave it out of order).
    enum Collations {
        /// The collations SQLite itself has.
        static let ownNames: Set<String> = ["BINARY", "NOCASE", "RTRIM"]

        /// The collations `sql` names (`COLLATE name`, the name bare or quoted) that SQLite lacks.
        static func foreign(in sql: String) -> [String] {
            // (Most definitions name no collation: a word looked for before any pattern runs.)
            guard sql.range(of: "COLLATE", options: .caseInsensitive) != nil, let regex = collatePattern else { return [] }
            var names: [String] = []
            for match in regex.matches(in: sql, range: NSRange(sql.startIndex..., in: sql)) {
                let name = (1...5).lazy.compactMap { Range(match.range(at: $0), in: sql).map { String(sql[$0]) } }.first ?? ""
                if !name.isEmpty, !ownNames.contains(name.uppercased()), !names.contains(name) { names.append(name) }
            }
            return names
        }

        /// `COLLATE name`, the name bare or quoted each way SQLite allows.
        private static let collatePattern = try? NSRegularExpression(
            pattern: #"\bCOLLATE\s+(?:"((?:[^"]|"")+)"|'((?:[^']|'')+)'|`([^`]+)`|\[([^\]]+)\]|([A-Za-z_][A-Za-z0-9_$]*))"#, options: [.caseInsensitive])

        /// How collation `name` is emulated, in words.
        static func emulation(_ name: String) -> String {
            loupe_sqlite_collation_folds_case(name) != 0
                ? "as SQLite's NOCASE (ASCII letters compared without case, other text by its bytes)"
                : "as BINARY (text compared by its bytes)"
        }

        /// The foreign collations table or view `name` orders text by: in its own definition or
        /// in one of its indexes.
        static func foreign(_ db: Database, table name: String) throws -> [String] {
            let definitions = try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE (name = ? OR (type = 'index' AND tbl_name = ?)) AND sql IS NOT NULL",
                                                  arguments: [name, name])
            var names: [String] = []
            for sql in definitions { for c in foreign(in: sql) where !names.contains(c) { names.append(c) } }
            return names
        }

        /// What `schema` notes for a type that orders text by `collations`.
        static func notes(_ collations: [String]) -> [String] {
            collations.map { "collation \($0) is the app's, not SQLite's: Loupe reads it \(emulation($0)), which may order and match text otherwise than the app" }
        }

        /// Why table `name` is never written: it orders text by `collations`, or a foreign key of
        /// it references a table that does (`referenced`: that table and a collation of it); nil
        /// when neither.
        static func refusal(_ name: String, _ collations: [String], referenced: [(table: String, collation: String)]) -> String? {
            if !collations.isEmpty {
                return "\(name) orders text by collation \(collations.joined(separator: ", ")), which only the app that wrote the file has: a write through its key or index could leave it out of order, so Loupe does not edit it"
            }
            guard let (table, collation) = referenced.first else { return nil }
            return "\(name) has a foreign key to \(table), whose text is ordered by collation \(collation), which only the app that wrote the file has: a write could not check that key, so Loupe does not edit it"
        }
    }
}
