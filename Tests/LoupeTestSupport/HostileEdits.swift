import Foundation
import GRDB
import LoupeQuery
import LoupeStore

/// Makes the hostile cases of editing (the hardening issue's "data loss" classes): values a write
/// must keep byte for byte, and files whose keys, virtual tables or disks a commit must respect.
/// Every case is made here from a seed; nothing binary is checked in.
public enum HostileEdits {
    /// `count` texts a write must keep exactly, seeded: NUL at the start, inside, at the end and
    /// in runs, beside quotes, backslashes, escapes that look like escapes, terminal controls,
    /// combining marks, emoji and text longer than a page.
    public static func texts(seed: UInt64 = 1, count: Int = 40) -> [String] {
        var random = SampleGenerator.Random(state: seed)
        let parts = ["\u{0}", "\u{0}\u{0}", "x", "'", "\"", "\\", "\\u{1B}", "\u{1B}[31m", "\n", "e\u{301}", "🚀", "漢", "%", "_", " ", "\u{7F}", "\u{85}"]
        var out = ["x\u{0}y", "\u{0}", "\u{0}lead", "trail\u{0}", "a\u{0}\u{0}b", String(repeating: "p\u{0}", count: 3000)]
        while out.count < count {
            var s = ""
            for _ in 0..<(1 + random.int(8)) { s += parts[random.int(parts.count)] }
            if !s.utf8.contains(0) { s.insert("\u{0}", at: s.index(s.startIndex, offsetBy: random.int(s.count + 1))) }
            out.append(s)
        }
        return out
    }

    /// `s` as a string literal of Loupe's statement language (every escape it reads spelled out).
    public static func literal(_ s: String) -> String { SourceSpelling.string(s) }

    /// A plain file with one row per text of ``texts(seed:count:)`` in a `TEXT` column and in an
    /// untyped one (`t(id INTEGER PRIMARY KEY, s TEXT, u)`), each holding `'-'` to start with.
    public static func textTable(rows: Int) throws -> String {
        try HostileFiles.make("texts.sqlite") { db in
            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT, u)")
            for i in 1...rows { try db.execute(sql: "INSERT INTO t VALUES (?, '-', '-')", arguments: [i]) }
        }
    }

    /// A Persist store with `rows` objects of type `Note` (`{"text": "-"}`, ids 1…rows).
    public static func persistNotes(rows: Int) throws -> String {
        try HostileFiles.make("notes.sqlite") { db in
            try HostileFiles.persistSchema(db)
            for i in 1...rows { try db.execute(sql: "INSERT INTO by_type VALUES (?, 'Note', ?)", arguments: [i, #"{"text":"-"}"#]) }
        }
    }

    /// `AUTOINCREMENT` tables whose largest keys were deleted (SQLite's sequence is past every
    /// row): `seq(id INTEGER PRIMARY KEY AUTOINCREMENT, name)` with rows 1…`kept` left of
    /// `kept + deleted`, and `plain(id INTEGER PRIMARY KEY, name)` (no sequence) likewise.
    public static func autoincrement(kept: Int, deleted: Int) throws -> String {
        try HostileFiles.make("autoincrement.sqlite") { db in
            try db.execute(sql: "CREATE TABLE seq(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT); CREATE TABLE plain(id INTEGER PRIMARY KEY, name TEXT)")
            for i in 1...(kept + deleted) {
                try db.execute(sql: "INSERT INTO seq(name) VALUES (?)", arguments: ["n\(i)"])
                try db.execute(sql: "INSERT INTO plain(name) VALUES (?)", arguments: ["n\(i)"])
            }
            try db.execute(sql: "DELETE FROM seq WHERE id > ?; DELETE FROM plain WHERE id > ?", arguments: [kept, kept])
        }
    }

    /// The virtual-table modules the test file holds, each with the shadow tables SQLite keeps for it.
    public static let virtualModules: [(table: String, module: String, shadows: [String])] = [
        ("docs5", "fts5(title, body)", ["docs5_data", "docs5_idx", "docs5_content", "docs5_docsize", "docs5_config"]),
        ("docs4", "fts4(title, body)", ["docs4_content", "docs4_segments", "docs4_segdir", "docs4_docsize", "docs4_stat"]),
        ("docs3", "fts3(title, body)", ["docs3_content", "docs3_segments", "docs3_segdir"]),
        ("box", "rtree(id, minX, maxX)", ["box_node", "box_parent", "box_rowid"]),
    ]

    /// A file with every module of ``virtualModules``, `rows` rows in each, beside an ordinary
    /// table named like a shadow table (`docs5_notes`, which is the user's and stays editable).
    public static func virtualTables(rows: Int = 5, seed: UInt64 = 1) throws -> String {
        var random = SampleGenerator.Random(state: seed)
        let words = ["sea", "ship", "storm", "harbour", "gull", "tide"]
        return try HostileFiles.make("virtual.sqlite") { db in
            for m in virtualModules { try db.execute(sql: "CREATE VIRTUAL TABLE \(m.table) USING \(m.module)") }
            try db.execute(sql: "CREATE TABLE docs5_notes(id INTEGER PRIMARY KEY, note TEXT)")
            for i in 1...rows {
                let body = (0..<4).map { _ in words[random.int(words.count)] }.joined(separator: " ")
                for t in ["docs5", "docs4", "docs3"] { try db.execute(sql: "INSERT INTO \(t) VALUES (?, ?)", arguments: ["t\(i)", body]) }
                try db.execute(sql: "INSERT INTO box VALUES (?, ?, ?)", arguments: [i, Double(i), Double(i) + 0.5])
                try db.execute(sql: "INSERT INTO docs5_notes VALUES (?, ?)", arguments: [i, "note \(i)"])
            }
        }
    }

    /// A plain file in UTF-16 (`UTF-16le`, or `UTF-16be`): tables and columns named with accents,
    /// CJK and emoji, a declared foreign key between them, text values beyond the BMP, a view.
    public static func utf16(bigEndian: Bool = false) throws -> String {
        try HostileFiles.make(bigEndian ? "utf16be.sqlite" : "utf16le.sqlite") { db in
            try db.execute(sql: "PRAGMA encoding = '\(bigEndian ? "UTF-16be" : "UTF-16le")'")
            try db.execute(sql: """
                CREATE TABLE "Café" (id INTEGER PRIMARY KEY, "名前" TEXT, note TEXT);
                CREATE TABLE "Börse🚀" (id INTEGER PRIMARY KEY, "café_id" INTEGER REFERENCES "Café"(id), price REAL, label TEXT);
                CREATE VIEW "Übersicht" AS SELECT b.id, c."名前" FROM "Börse🚀" b JOIN "Café" c ON c.id = b."café_id";
                INSERT INTO "Café" VALUES (1, '東京', 'ñandú 🐦'), (2, 'Zoë', NULL), (3, 'plain', 'x');
                INSERT INTO "Börse🚀" VALUES (1, 1, 2.5, '𝄞 clef'), (2, 1, 3, 'b'), (3, 2, NULL, 'c');
                """)
        }
    }

    /// Literals of every value kind an edit writes, each with the column it goes in
    /// (``valueKindTable(rows:)``'s `i INTEGER`, `r REAL`, `s TEXT`, `d DATE`, `b BOOLEAN`, `u`
    /// untyped): the integers at the ends of 64 bits and past 2⁵³, doubles at the ends of their
    /// range, texts of ``texts(seed:count:)``, dates at the ends of the years 1–9999, booleans, nil.
    public static func valueLiterals(seed: UInt64 = 1) -> [(column: String, literal: String)] {
        let integers = ["0", "-1", "9223372036854775807", "-9223372036854775808", "9007199254740993", "-9007199254740993"]
        let doubles = ["0.5", "0.1", "1e308", "1.7976931348623157e308", "5e-324", "-2.5e-300", "123456789.000001"]
        let dates = ["0001-01-01", "9999-12-31T23:59:59Z", "2024-02-29T12:00:00Z", "1970-01-01T00:00:00Z", "2000-06-15T08:30:00+05:30"]
        var out = integers.flatMap { [("i", $0), ("u", $0)] } + doubles.flatMap { [("r", $0), ("u", $0)] } + dates.map { ("d", $0) }
        out += texts(seed: seed, count: 12).flatMap { [("s", literal($0)), ("u", literal($0))] }
        out += [("b", "true"), ("b", "false"), ("i", "nil"), ("s", "nil"), ("d", "nil"), ("u", "nil"), ("s", literal(""))]
        return out
    }

    /// A plain file for ``valueLiterals(seed:)``: `v(id INTEGER PRIMARY KEY, i INTEGER, r REAL,
    /// s TEXT, d DATE, b BOOLEAN, u)`, `rows` rows of zeros and dashes.
    public static func valueKindTable(rows: Int) throws -> String {
        try HostileFiles.make("value-kinds.sqlite") { db in
            try db.execute(sql: "CREATE TABLE v(id INTEGER PRIMARY KEY, i INTEGER, r REAL, s TEXT, d DATE, b BOOLEAN, u)")
            for k in 1...rows { try db.execute(sql: "INSERT INTO v VALUES (?, 0, 0.0, '-', '2000-01-01', 0, '-')", arguments: [k]) }
        }
    }
}
