import Foundation
import GRDB
import LoupeStore

/// Makes the hostile inputs of the hardening issue, each as a fresh file in a temp folder: no
/// binary blob is checked in, every case is written here by SQL. Tests run Loupe on them and
/// expect a clear answer or a clear error, never a crash, a hang, a lie, a control sequence on
/// the terminal, or a changed file.
public enum HostileFiles {
    /// Names of every character class a table or column name can hold: quotes of each kind,
    /// brackets, SQL comment and statement separators, spaces and line breaks, terminal control
    /// sequences (a title change, an OSC 52 clipboard write), bidi overrides and zero-width
    /// characters, CJK and emoji, and names crafted to run SQL when spliced unquoted.
    public static let names: [String] = [
        "plain", "we\"ird", "it's", "back`tick", "[bracket]", "semi;colon", "dash--dash", "two words",
        "line\nbreak", "tab\there", "title\u{1B}]0;pwned\u{7}", "clip\u{1B}]52;c;SGVsbG8=\u{7}", "red\u{1B}[31mred",
        "bidi\u{202E}txt", "zero\u{200B}width", "join\u{200D}er", "漢字", "emoji🚀", "\"",
        "x\" FROM sqlite_master UNION ALL SELECT 'FAKE' --",
        "y\" , (WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT count(*) FROM r) AS \"z",
    ]

    /// Quotes an identifier for SQLite (embedded quotes doubled).
    public static func q(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// Persist's two tables, as Persist declares them (or with looser types, for `loose`).
    public static func persistSchema(_ db: Database, loose: Bool = false) throws {
        if loose {
            try db.execute(sql: "CREATE TABLE by_type (id, type_name, json)")
            try db.execute(sql: "CREATE TABLE relations (from_id, to_id, relation)")
        } else {
            try db.execute(sql: #"CREATE TABLE "by_type" ("id" INTEGER PRIMARY KEY NOT NULL, "type_name" TEXT NOT NULL, "json" TEXT NOT NULL)"#)
            try db.execute(sql: #"CREATE TABLE "relations" ("from_id" INTEGER NOT NULL, "to_id" INTEGER NOT NULL, "relation" TEXT NOT NULL)"#)
        }
    }

    /// A new SQLite file written by `body`, closed before it is returned.
    public static func make(_ name: String, _ body: (Database) throws -> Void) throws -> String {
        let path = try Shared.temporaryPath(name)
        var config = Configuration()
        config.foreignKeysEnabled = false   // hostile files break their own declarations
        let queue = try DatabaseQueue(path: path, configuration: config)
        try queue.writeWithoutTransaction { db in try body(db) }
        try queue.close()
        return path
    }

    /// A plain file of loosely typed tables, seeded: columns without a type holding integers,
    /// reals equal to them (5 and 5.0), text, blobs and 2^62; `WITHOUT ROWID` tables (a
    /// `NOCASE` text key, a composite key, a join table of two foreign keys); an `INTEGER
    /// PRIMARY KEY DESC` (not the rowid); a foreign key naming a unique column, one naming a
    /// table's key without a column, a self reference; a table named with a space and accents,
    /// a column named with a quote; dates as text, numbers and junk; a view.
    public static func untypedRelational(seed: UInt64 = 1) throws -> String {
        var random = SampleGenerator.Random(state: seed)
        let names: [DatabaseValue] = ["Ann", "bob", "Çelik", "", "ANN", "zoë", "a b", "O'Brien", "x\u{301}", "日本", "Bob"].map(\.databaseValue) + [.null]
        func pick(_ values: [DatabaseValue]) -> DatabaseValue { values[random.int(values.count)] }
        func int(_ n: Int) -> Int { random.int(n) }
        func loose() -> DatabaseValue {
            let choices: [DatabaseValue] = [(int(45) - 5).databaseValue, (Double(int(3000)) / 100).databaseValue, pick(names), .null,
                                            String(int(30)).databaseValue, Double(int(10)).databaseValue, Data([1, 2]).databaseValue, (1 << 62).databaseValue]
            return pick(choices)
        }
        return try make("untyped.sqlite") { db in
            try db.execute(sql: """
                CREATE TABLE owner(id INTEGER PRIMARY KEY, name TEXT, score REAL, born TEXT, code TEXT UNIQUE, n INTEGER);
                CREATE TABLE kv(k TEXT PRIMARY KEY COLLATE NOCASE, v) WITHOUT ROWID;
                CREATE TABLE pet(id INTEGER PRIMARY KEY DESC, owner_id INTEGER REFERENCES owner(id), kv_key TEXT REFERENCES kv(k), name TEXT, weight NUMERIC);
                CREATE TABLE link(owner_id INTEGER REFERENCES owner(id), pet_id INTEGER REFERENCES pet(id), since TEXT, PRIMARY KEY(owner_id, pet_id)) WITHOUT ROWID;
                CREATE TABLE loose(x, y REFERENCES owner(id));
                CREATE TABLE ticket(tid TEXT PRIMARY KEY, code TEXT REFERENCES owner(code), price REAL) WITHOUT ROWID;
                CREATE TABLE dept(name TEXT PRIMARY KEY, "we""ird col" INTEGER, opened DATE);
                CREATE TABLE "Ünï cödé"(id INTEGER PRIMARY KEY, boss INTEGER REFERENCES "Ünï cödé"(id), dept TEXT REFERENCES dept, "when" DATETIME, flag BOOLEAN);
                CREATE VIEW rich AS SELECT * FROM owner WHERE score > 5;
                """)
            for i in 1...120 {
                try db.execute(sql: "INSERT INTO owner VALUES (?, ?, ?, ?, ?, ?)", arguments: [
                    i, pick(names), pick([.null, (Double(int(1000)) / 100).databaseValue, int(11).databaseValue]),
                    pick([.null, "2021-03-0\(1 + int(9))".databaseValue, "2020-12-31T10:00:00Z".databaseValue, "not a date".databaseValue]),
                    int(5) == 0 ? DatabaseValue.null : "C\(i)".databaseValue, pick([.null, (int(7) - 3).databaseValue, "7".databaseValue, 2.5.databaseValue])])
            }
            var keys: [String] = []
            for i in 0..<60 {
                let k = ["key", "Key", "k", "α", "z", "10", "9", ""][int(8)] + String(i)
                if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM kv WHERE k = ?)", arguments: [k]) == false {
                    try db.execute(sql: "INSERT INTO kv VALUES (?, ?)", arguments: [k, loose()])
                    keys.append(k)
                }
            }
            for i in 1...200 {
                let key = keys[int(keys.count)]
                try db.execute(sql: "INSERT INTO pet VALUES (?, ?, ?, ?, ?)", arguments: [
                    i * 3, pick([.null, (1 + int(125)).databaseValue, String(1 + int(30)).databaseValue, Double(1 + int(5)).databaseValue]),
                    pick([.null, key.databaseValue, key.uppercased().databaseValue, "missing".databaseValue]), pick(names),
                    pick([.null, (1 + int(50)).databaseValue, (Double(int(5000)) / 100).databaseValue, "12".databaseValue, "heavy".databaseValue])])
            }
            for _ in 0..<300 {
                try db.execute(sql: "INSERT OR IGNORE INTO link VALUES (?, ?, ?)", arguments: [1 + int(125), (1 + int(210)) * 3, pick([.null, "2022-01-01".databaseValue, "soon".databaseValue])])
            }
            for _ in 0..<150 {
                try db.execute(sql: "INSERT INTO loose VALUES (?, ?)", arguments: [
                    loose(), pick([.null, (1 + int(130)).databaseValue, String(1 + int(20)).databaseValue, "abc".databaseValue, Double(1 + int(9)).databaseValue, Data([5]).databaseValue])])
            }
            for _ in 0..<100 {
                try db.execute(sql: "INSERT OR IGNORE INTO ticket VALUES (?, ?, ?)", arguments: [
                    String(format: "T%03d", int(400)), pick([.null, "C\(1 + int(130))".databaseValue, "c\(1 + int(9))".databaseValue]),
                    pick([.null, (Double(int(10000)) / 100).databaseValue, int(100).databaseValue])])
            }
            let depts: [DatabaseValue] = ["R&D", "ops", "Ops", "sales", "", "10"].map(\.databaseValue)
            for d in depts {
                try db.execute(sql: "INSERT INTO dept VALUES (?, ?, ?)", arguments: [
                    d, pick([.null, int(6).databaseValue, "3".databaseValue, 4.0.databaseValue]),
                    pick([.null, "2020-01-0\(1 + int(9))".databaseValue, (700_000_000 + int(10_000_000)).databaseValue, "bad".databaseValue, 1.5e9.databaseValue])])
            }
            for i in 1...150 {
                try db.execute(sql: #"INSERT INTO "Ünï cödé" VALUES (?, ?, ?, ?, ?)"#, arguments: [
                    i, pick([.null, (1 + int(160)).databaseValue, String(1 + int(20)).databaseValue]), pick(depts + [.null, "gone".databaseValue, 10.databaseValue]),
                    pick([.null, "2023-0\(1 + int(9))-1\(int(10)) 10:00:00".databaseValue, (1.7e9 + Double(int(10_000_000))).databaseValue, "later".databaseValue, int(11).databaseValue]),
                    pick([.null, 0.databaseValue, 1.databaseValue, "true".databaseValue, 2.databaseValue])])
            }
        }
    }

    /// Persist ids at both ends of the 64-bit range, related to each other.
    public static func persistFarApartIDs() throws -> String {
        try make("far.sqlite") { db in
            try persistSchema(db)
            try db.execute(sql: #"INSERT INTO by_type VALUES (-1, 'A', '{"n": 1}'), (9223372036854775807, 'B', '{"n": 2}'), (-9223372036854775808, 'A', '{"n": 3}')"#)
            try db.execute(sql: "INSERT INTO relations VALUES (-1, 9223372036854775807, 'b'), (9223372036854775807, -9223372036854775808, 'a')")
        }
    }

    /// REAL primary and foreign keys of 1e300 and ±infinity.
    public static func realKeys() throws -> String {
        try make("real.sqlite") { db in
            try db.execute(sql: "CREATE TABLE t (id REAL PRIMARY KEY, v TEXT)")
            try db.execute(sql: "INSERT INTO t VALUES (1e300, 'big'), (9e999, 'inf'), (-9e999, '-inf'), (3.0, 'three'), (2.5, 'half')")
            try db.execute(sql: "CREATE TABLE u (id INTEGER PRIMARY KEY, t_id REAL REFERENCES t(id))")
            try db.execute(sql: "INSERT INTO u VALUES (1, 1e300), (2, 9e999), (3, 3), (4, 2.5), (5, 1e308)")
        }
    }

    /// Date columns holding numbers no calendar reaches, and impossible days.
    public static func hugeDates() throws -> String {
        try make("dates.sqlite") { db in
            try db.execute(sql: "CREATE TABLE d (id INTEGER PRIMARY KEY, at DATE, ts TIMESTAMP, dt DATETIME)")
            try db.execute(sql: """
                INSERT INTO d VALUES (1, 9223372036854775807, 1e20, 1e308), (2, -9223372036854775808, -1e308, 9e999),
                  (3, '2024-02-30', '2023-02-29', '2024-02-29'), (4, 0, 1700000000, '2024-01-31T10:20:30Z')
                """)
        }
    }

    /// `type_name` stored as a BLOB, a number and NULL; odd rows in `loupe_relation_kinds`.
    public static func oddTypeNames() throws -> String {
        try make("oddnames.sqlite") { db in
            try persistSchema(db, loose: true)
            try db.execute(sql: #"""
                INSERT INTO by_type VALUES (1, x'426f6f6b', '{"t": 1}'), (2, 42, '{"t": 2}'), (3, NULL, '{"t": 3}'),
                  (4, 'Book', '{"t": 4}'), (5, x'ff00', '{"t": 5}'), ('007', 'Text', '{"t": 6}')
                """#)
            try db.execute(sql: "INSERT INTO relations VALUES (1, 4, 'next'), (4, 2, x'6e657874'), (NULL, 1, 'x'), (2, NULL, NULL)")
            try db.execute(sql: "CREATE TABLE loupe_relation_kinds (type_name, relation, to_many)")
            try db.execute(sql: "INSERT INTO loupe_relation_kinds VALUES ('Book', 'next', 'maybe'), (NULL, 'next', 1), (x'00', NULL, x'01'), ('Book', 'other', 2.5)")
        }
    }

    /// Tables and columns named with every character class of ``names``, holding control
    /// sequences in their values too.
    public static func hostileNames() throws -> String {
        try make("names.sqlite") { db in
            for (i, table) in names.enumerated() {
                let columns = names.map { q($0) + " TEXT" }.joined(separator: ", ")
                try db.execute(sql: "CREATE TABLE \(q(table)) (id INTEGER PRIMARY KEY, \(columns))")
                let values = names.map { _ in "?" }.joined(separator: ", ")
                try db.execute(sql: "INSERT INTO \(q(table)) VALUES (?, \(values))",
                               arguments: StatementArguments([i + 1] + names.map { "v\u{1B}]0;title\u{7}" + $0 }))
            }
            try db.execute(sql: "CREATE TABLE child (id INTEGER PRIMARY KEY, \(q("we\"ird_id")) INTEGER REFERENCES \(q("we\"ird"))(id))")
            try db.execute(sql: "INSERT INTO child VALUES (1, 2)")
        }
    }

    /// A named pipe where a database is expected.
    public static func fifo() throws -> String {
        let path = try Shared.temporaryPath("pipe.sqlite")
        guard mkfifo(path, 0o600) == 0 else { throw CocoaError(.fileWriteUnknown) }
        return path
    }

    /// One value of `megabytes` MB in a table of a few rows.
    public static func bigValue(megabytes: Int = 50) throws -> String {
        try make("big.sqlite") { db in
            try db.execute(sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT, body TEXT)")
            try db.execute(sql: "INSERT INTO notes VALUES (1, 'small', 'short'), (2, 'huge', ?), (3, 'after', 'x')",
                           arguments: [String(repeating: "abcdefghij", count: megabytes * 100_000)])
        }
    }

    /// Rows whose text makes a backtracking regular expression take exponential time.
    public static func regexTrap() throws -> String {
        try make("regex.sqlite") { db in
            try db.execute(sql: "CREATE TABLE words (id INTEGER PRIMARY KEY, w TEXT)")
            for i in 1...100 { try db.execute(sql: "INSERT INTO words VALUES (?, ?)", arguments: [i, String(repeating: "a", count: 20 + i % 10) + "!"]) }
            try db.execute(sql: "INSERT INTO words VALUES (101, ?)", arguments: [String(repeating: "a", count: 100_000)])
        }
    }

    /// `rows` rows on which `w MATCHES "(a+)+b"` takes milliseconds each (under MATCHES's step
    /// budget): a statement that runs for seconds, to cancel.
    public static func slowRows(rows: Int = 400, length: Int = 19) throws -> String {
        try make("slow.sqlite") { db in
            try db.execute(sql: "CREATE TABLE words (id INTEGER PRIMARY KEY, w TEXT)")
            for i in 1...rows { try db.execute(sql: "INSERT INTO words VALUES (?, ?)", arguments: [i, String(repeating: "a", count: length) + "!"]) }
        }
    }

    /// A hub and `edges` edge objects, each pointing back at the hub: `edges.back` is a
    /// product of `edges`² elements unless paths keep each object once.
    public static func hub(edges: Int = 3000) throws -> String {
        try make("hub.sqlite") { db in
            try persistSchema(db)
            try db.execute(sql: #"INSERT INTO by_type VALUES (1, 'Hub', '{"name": "h"}')"#)
            for i in 0..<edges {
                try db.execute(sql: #"INSERT INTO by_type VALUES (?, 'Edge', '{"n": 1}')"#, arguments: [i + 2])
                try db.execute(sql: "INSERT INTO relations VALUES (1, ?, 'edges'), (?, 1, 'back')", arguments: [i + 2, i + 2])
            }
        }
    }

    /// A relational file whose keys a window must read as a load reads them: a text key, a key
    /// column without affinity holding both `5` and `'5'` (foreign keys to it spelt `'05'`, `'+7'`,
    /// `7.0`), a foreign key to a column that repeats values, a self-reference with a hub of
    /// `hub` rows (indexed) and notes on it (not indexed), dangling values, a table keyed by rowid,
    /// a composite key (one also named through a referenced column), a `WITHOUT ROWID` table and a table whose rowid is hidden (both without
    /// relations), a view, dates, and text with controls.
    public static func awkwardRelational(people: Int = 400, hub: Int = 60) throws -> String {
        try make("awkward.sqlite") { db in
            try db.execute(sql: """
                CREATE TABLE Parent(code TEXT PRIMARY KEY, name TEXT, born DATE);
                CREATE TABLE Mixed(k PRIMARY KEY, label TEXT);
                CREATE TABLE Tag(n INTEGER PRIMARY KEY, label TEXT);
                CREATE TABLE Person(id INTEGER PRIMARY KEY, name TEXT, boss INTEGER REFERENCES Person(id),
                                    parent TEXT REFERENCES Parent(code), mixed REFERENCES Mixed(k), tag TEXT REFERENCES Tag(label), seen DATETIME);
                CREATE INDEX person_boss ON Person(boss);
                CREATE TABLE Note(body TEXT, person INTEGER REFERENCES Person(id));
                CREATE TABLE Pair(a INTEGER, b TEXT, person INTEGER REFERENCES Person, PRIMARY KEY (a, b));
                CREATE TABLE Slot(a INTEGER, b TEXT, code TEXT UNIQUE, PRIMARY KEY (a, b));
                CREATE TABLE Booking(slot TEXT REFERENCES Slot(code), note TEXT);
                CREATE TABLE Setting(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
                CREATE TABLE Hidden(rowid, _rowid_, oid, v);
                CREATE VIEW Bosses AS SELECT p.name AS name, count(*) AS reports FROM Person p JOIN Person q ON q.boss = p.id GROUP BY p.id;
                INSERT INTO Parent VALUES ('p1', 'Ada', '1815-12-10'), ('p2', 'Bo', 'not a date'), ('P1', 'Upper', NULL), ('p3', 'Cy' || char(27) || '[31m', 1000000000);
                INSERT INTO Mixed VALUES ('x', 'ex'), (2.5, 'two and a half');
                INSERT INTO Tag VALUES (1, 'a'), (2, 'b'), (3, 'a'), (4, 'c');
                INSERT INTO Setting VALUES ('theme', 'dark'), ('lines', 40), ('a', NULL);
                INSERT INTO Hidden VALUES (1, 2, 3, 'x'), (4, 5, 6, 'y');
                """)
            let parents: [DatabaseValue] = ["p1".databaseValue, "p2".databaseValue, "P1".databaseValue, "p9".databaseValue, .null]
            // Integer keys first, their text twins far after them (no window holds both).
            for i in 1...150 { try db.execute(sql: "INSERT INTO Mixed VALUES (?, ?)", arguments: [i, "int \(i)"]) }
            for i in stride(from: 1, through: 150, by: 2) { try db.execute(sql: "INSERT INTO Mixed VALUES (?, ?)", arguments: ["\(i)", "text \(i)"]) }
            func mixedValue(_ i: Int) -> DatabaseValue {
                let k = i % 150 + 1
                switch i % 9 {
                case 0: return k.databaseValue
                case 1: return "\(k)".databaseValue              // the text twin when k is odd, else the integer
                case 2: return "0\(k)".databaseValue             // only the integer
                case 3: return "+\(k)".databaseValue
                case 4: return Double(k).databaseValue
                case 5: return "x".databaseValue
                case 6: return "y".databaseValue                 // dangling
                case 7: return 2.5.databaseValue
                default: return .null
                }
            }
            let tags: [DatabaseValue] = ["a".databaseValue, "b".databaseValue, "c".databaseValue, "z".databaseValue, .null]
            for i in 1...people {
                let boss: DatabaseValue = i == 1 ? .null : i <= hub ? 1.databaseValue : i % 7 == 0 ? 999.databaseValue : ((i * 37) % (i - 1) + 1).databaseValue
                try db.execute(sql: "INSERT INTO Person VALUES (?, ?, ?, ?, ?, ?, ?)",
                               arguments: [i, "person \(i)", boss, parents[i % parents.count], mixedValue(i), tags[i % tags.count],
                                           i % 3 == 0 ? "2024-0\(i % 9 + 1)-1\(i % 9)T10:00:00Z" : nil])
            }
            for i in 0..<(people * 2) {
                try db.execute(sql: "INSERT INTO Note VALUES (?, ?)", arguments: ["note \(i)", i % 3 == 0 ? 1 : i % people + 1])
            }
            for i in 0..<30 { try db.execute(sql: "INSERT INTO Pair VALUES (?, ?, ?)", arguments: [i % 4, "b\(i)", i % 5 == 0 ? 1 : i + 2]) }
            // A composite key named through a referenced column, one slot by many bookings.
            for i in 0..<80 { try db.execute(sql: "INSERT INTO Slot VALUES (?, ?, ?)", arguments: [i % 7, "s\(i)", "c\(i)"]) }
            for i in 0..<120 { try db.execute(sql: "INSERT INTO Booking VALUES (?, ?)", arguments: [i % 3 == 0 ? "c0" : "c\(i % 90)", "booking \(i)"]) }
        }
    }

    /// Chinook as an app would write it without declaring its foreign keys: the same tables,
    /// rows and indexes, no `REFERENCES` (a load infers `Track.Album`, `Invoice.Customer`… from
    /// the `XId` columns and their values; `SupportRepId` and `ReportsTo` name no table).
    public static func undeclaredChinook() throws -> String {
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        return try make("undeclared-chinook.sqlite") { db in
            try db.execute(sql: "ATTACH DATABASE ? AS chinook", arguments: [chinook])
            let tables = try Row.fetchAll(db, sql: "SELECT name, sql FROM chinook.sqlite_master WHERE type = 'table' ORDER BY rowid")
            for table in tables {
                let name: String = table[0], sql: String = table[1]
                let declared = try NSRegularExpression(pattern: #",\s*FOREIGN KEY\s*\([^)]*\)\s*REFERENCES\s*\[?\w+\]?\s*\([^)]*\)(\s*ON (DELETE|UPDATE) NO ACTION)*"#)
                try db.execute(sql: declared.stringByReplacingMatches(in: sql, range: NSRange(sql.startIndex..., in: sql), withTemplate: ""))
                try db.execute(sql: "INSERT INTO main.\(q(name)) SELECT * FROM chinook.\(q(name))")
            }
            for index in try String.fetchAll(db, sql: "SELECT sql FROM chinook.sqlite_master WHERE type = 'index' AND sql IS NOT NULL") {
                try db.execute(sql: index)
            }
            try db.execute(sql: "DETACH DATABASE chinook")
            let declared = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master m, pragma_foreign_key_list(m.name) WHERE m.type = 'table'")
            precondition(declared == 0, "Chinook's foreign keys were not all left out")
        }
    }

    /// Tables that declare no foreign key, whose `XId` columns a load decides on value by value:
    /// keys matched through their affinity twins (text digits, `05`, whole reals, an integer
    /// naming a text key), a candidate table passed over for one stray value in its last row (the
    /// next candidate, `Owners`, holding them all), a date column (its values read as dates, which
    /// name no key), a key column declared `NOCASE` (which Swift does not fold), and rows enough
    /// that a window holds a part; with `unicodeTwins`, text equal to a key only under Unicode
    /// equivalence too (which a load matches, and a window's lookups by bytes do not find).
    public static func awkwardUndeclared(rows: Int = 240, unicodeTwins: Bool = false) throws -> String {
        try make("undeclared.sqlite") { db in
            try db.execute(sql: """
                CREATE TABLE Owner(Id INTEGER PRIMARY KEY, Name TEXT);
                CREATE TABLE Owners(Id INTEGER PRIMARY KEY, Name TEXT);
                CREATE TABLE Code(Id TEXT PRIMARY KEY, Label TEXT);
                CREATE TABLE Tag(Code TEXT PRIMARY KEY COLLATE NOCASE, Label TEXT);
                CREATE TABLE Pet(Id INTEGER PRIMARY KEY, Name TEXT, OwnerId TEXT, CodeId INTEGER, TagId TEXT);
                CREATE TABLE Visit(Id INTEGER PRIMARY KEY, OwnerId REAL, CodeId TEXT, Tag_Id TEXT, TagID TEXT);
                CREATE TABLE Bill(Id INTEGER PRIMARY KEY, OwnerId INTEGER, Amount REAL);
                CREATE TABLE Log(Id INTEGER PRIMARY KEY, OwnerId DATE);
                CREATE INDEX pet_owner ON Pet(OwnerId);
                """)
            for i in 1...40 {
                try db.execute(sql: "INSERT INTO Owner VALUES (?, ?)", arguments: [i, "owner \(i)"])
                try db.execute(sql: "INSERT INTO Owners VALUES (?, ?)", arguments: [i, "owners \(i)"])
                try db.execute(sql: "INSERT INTO Code VALUES (?, ?)", arguments: ["\(i)", "code \(i)"])
            }
            try db.execute(sql: "INSERT INTO Owners VALUES (41, 'only in Owners')")
            try db.execute(sql: "INSERT INTO Tag VALUES ('caf\u{E9}', 'precomposed'), ('ABC', 'upper'), ('x', 'plain')")
            for i in 1...rows {
                let k = i % 40 + 1
                let owner: DatabaseValue = [k.databaseValue, "\(k)".databaseValue, "0\(k)".databaseValue, .null][i % 4]
                let tag: DatabaseValue = ["x".databaseValue, "ABC".databaseValue, .null][i % 3]
                try db.execute(sql: "INSERT INTO Pet VALUES (?, ?, ?, ?, ?)", arguments: [i, "pet \(i)", owner, k, tag])
                let visitTag = unicodeTwins && i % 5 == 0 ? "cafe\u{301}" : i % 5 == 0 ? "caf\u{E9}" : "x"
                try db.execute(sql: "INSERT INTO Visit VALUES (?, ?, ?, ?, ?)", arguments: [i, Double(k), i % 6 == 0 ? "\(k)" : nil, visitTag, i % 7 == 0 ? "abc" : "ABC"])
                try db.execute(sql: "INSERT INTO Bill VALUES (?, ?, ?)", arguments: [i, i == rows ? 41 : k, Double(i) / 4])
                try db.execute(sql: "INSERT INTO Log VALUES (?, ?)", arguments: [i, k])
            }
        }
    }

    /// A WAL file whose rows are in its `-wal` and whose `-shm` is gone (as after a crash).
    public static func walWithoutSharedMemory(rows: Int = 50) throws -> String {
        let path = try Shared.temporaryPath("wal.sqlite")
        var config = Configuration()
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
        let queue = try DatabaseQueue(path: path, configuration: config)
        try queue.writeWithoutTransaction { db in
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
            try db.execute(sql: """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                INSERT INTO t SELECT i, 'row ' || i || ' ' || printf('%.40c', 'x') FROM n
                """, arguments: [rows])
        }
        // Copy the three files while the writer is open: the copy's -wal holds the rows.
        let copy = try Shared.temporaryPath("wal.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        try queue.close()
        return copy
    }

    /// Adds to a Persist store (a generated library, with a `Book` and Loupe's relation kinds)
    /// what a reader of it must get right: an attribute named like a relation, a self edge, a
    /// dangling edge, a to-many holding one target, a relation Loupe declared with no edges, a
    /// document that does not parse, one that is not an object, one stored as bytes, a relation
    /// name stored as bytes, a key that needs escaping, a type named like another but for case.
    public static func addAwkwardPersistRows(_ path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            let next = (try Int64.fetchOne(db, sql: "SELECT max(id) FROM by_type") ?? 0) + 1
            let book = try Int64.fetchOne(db, sql: "SELECT min(id) FROM by_type WHERE type_name = 'Book'") ?? 0
            try db.execute(sql: #"""
                INSERT INTO by_type VALUES (?, 'Odd', '{"a\"b": 1, "self": 5, "when": "2024-01-02 03:04:05 Z", "nested": {"k": [1, 2]}}'),
                  (?, 'Odd', '{not json'), (?, 'Odd', '[1, 2]'), (?, 'Odd', CAST('{"a\"b": 2}' AS BLOB)), (?, 'odd2', '{}')
                """#, arguments: [next, next + 1, next + 2, next + 3, next + 4])
            try db.execute(sql: "INSERT INTO relations VALUES (?, ?, 'self'), (?, 987654321, 'gone'), (?, ?, CAST('blob' AS BLOB)), (?, ?, 'many')",
                           arguments: [next, next, next, next + 1, book, next + 3, book])
            try db.execute(sql: "INSERT OR REPLACE INTO loupe_relation_kinds VALUES ('Odd', 'many', 1), ('Odd', 'never', 1)")
        }
        try queue.close()
    }

    /// Persist ids written as text: UUIDs, `"abc"`, `"007"`, with relations between them.
    public static func persistTextIDs() throws -> String {
        try make("textids.sqlite") { db in
            try db.execute(sql: "CREATE TABLE by_type (id TEXT PRIMARY KEY, type_name TEXT NOT NULL, json TEXT NOT NULL)")
            try db.execute(sql: "CREATE TABLE relations (from_id TEXT NOT NULL, to_id TEXT NOT NULL, relation TEXT NOT NULL)")
            try db.execute(sql: #"""
                INSERT INTO by_type VALUES ('5A1F3C2E-0000-4000-8000-000000000001', 'Person', '{"name": "Ann"}'),
                  ('abc', 'Person', '{"name": "Ben"}'), ('007', 'Teacher', '{"name": "Bond"}'), ('7', 'Teacher', '{"name": "Seven"}')
                """#)
            try db.execute(sql: """
                INSERT INTO relations VALUES ('5A1F3C2E-0000-4000-8000-000000000001', '007', 'teacher'), ('abc', '7', 'teacher'),
                  ('abc', '5A1F3C2E-0000-4000-8000-000000000001', 'friend')
                """)
        }
    }

    /// Composite keys whose parts would collide if joined with `|`, in a rowid and a WITHOUT
    /// ROWID table; generated columns; columns named `id` and `type`.
    public static func keysAndColumns() throws -> String {
        try make("keys.sqlite") { db in
            try db.execute(sql: "CREATE TABLE pair (a TEXT, b, v TEXT, PRIMARY KEY (a, b)) WITHOUT ROWID")
            try db.execute(sql: "INSERT INTO pair VALUES ('a', 'b|1', 'first'), ('a|b', 1, 'second'), ('a', 1, 'third')")
            try db.execute(sql: "CREATE TABLE pair2 (a TEXT, b, v TEXT, PRIMARY KEY (a, b))")
            try db.execute(sql: "INSERT INTO pair2 VALUES ('a', 'b|1', 'first'), ('a|b', 1, 'second')")
            try db.execute(sql: "CREATE TABLE gen (x INTEGER, doubled INTEGER GENERATED ALWAYS AS (x * 2) VIRTUAL, tripled INTEGER GENERATED ALWAYS AS (x * 3) STORED)")
            try db.execute(sql: "INSERT INTO gen (x) VALUES (1), (2)")
            try db.execute(sql: "CREATE TABLE clash (pk INTEGER PRIMARY KEY, id TEXT, type TEXT)")
            try db.execute(sql: "INSERT INTO clash VALUES (1, 'not the key', 'not the type')")
            try db.execute(sql: "CREATE TABLE keyed (id INTEGER PRIMARY KEY, name TEXT)")
            try db.execute(sql: "INSERT INTO keyed VALUES (5, 'five')")
            try db.execute(sql: "CREATE TABLE blobkey (k BLOB PRIMARY KEY, v TEXT)")
            try db.execute(sql: "INSERT INTO blobkey VALUES (x'3041', 'blob'), ('0A', 'text')")
        }
    }

    /// Names that are not UTF-8, as a foreign writer can leave them (written here through
    /// `writable_schema`): a table `t\u{97}x` (two rows) that `good.t_id` refers to, a column
    /// `c\u{98}` of `w`, and the key column `k\u{98}` of `WITHOUT ROWID` table `k`.
    public static func namesNotUTF8() throws -> String {
        try make("names-not-utf8.sqlite") { db in
            try db.execute(sql: """
                CREATE TABLE tQx(id INTEGER PRIMARY KEY, v INT); INSERT INTO tQx VALUES (1, 1), (2, 2);
                CREATE TABLE w(id INTEGER PRIMARY KEY, cZ TEXT, ok INT); INSERT INTO w VALUES (1, 'v', 5);
                CREATE TABLE k(kZ TEXT PRIMARY KEY, v) WITHOUT ROWID; INSERT INTO k VALUES ('a', 1), ('b', 2);
                CREATE TABLE good(id INTEGER PRIMARY KEY, t_id INTEGER REFERENCES tQx(id)); INSERT INTO good VALUES (1, 1);
                PRAGMA writable_schema = ON;
                """)
            func bytes(_ text: String) -> Data {
                Data(text.utf8.map { $0 == UInt8(ascii: "Q") ? 0x97 : $0 == UInt8(ascii: "Z") ? 0x98 : $0 })
            }
            for name in ["tQx", "w", "k", "good"] {
                let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = ?", arguments: [name]) ?? ""
                try db.execute(sql: "UPDATE sqlite_master SET name = CAST(? AS TEXT), tbl_name = CAST(? AS TEXT), sql = CAST(? AS TEXT) WHERE name = ?",
                               arguments: [bytes(name), bytes(name), bytes(sql), name])
            }
        }
    }

    /// Persist documents whose values nest `depths` levels deep (1999 is SQLite's limit once the
    /// document's own level counts; 3000 is beyond it, still valid JSON), one under a key every
    /// document sampled has and one under a key only one document has (the leftover path).
    public static func deepJSON(depths: [Int] = [1000, 1500, 1999, 3000]) throws -> String {
        try make("deep.sqlite") { db in
            try persistSchema(db)
            var id = 1
            for depth in depths {
                let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
                try db.execute(sql: "INSERT INTO by_type VALUES (?, 'Deep', ?)", arguments: [id, "{\"d\": \(depth), \"v\": \(nested)}"])
                id += 1
            }
            for _ in 0..<70 { try db.execute(sql: #"INSERT INTO by_type VALUES (?, 'Deep', '{"d": 0}')"#, arguments: [id]); id += 1 }
            let depth = depths.max() ?? 1000
            let rare = String(repeating: "{\"k\": ", count: depth) + "1" + String(repeating: "}", count: depth)
            try db.execute(sql: "INSERT INTO by_type VALUES (?, 'Deep', ?)", arguments: [id, "{\"d\": -1, \"rare\": \(rare)}"])
        }
    }

    /// A rollback-journal file left with a hot journal, as a crash in mid-transaction leaves it.
    public static func hotJournal() throws -> String {
        let path = try Shared.temporaryPath("hot.sqlite")
        var config = Configuration()
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA journal_mode = DELETE; PRAGMA cache_size = 1") }
        let queue = try DatabaseQueue(path: path, configuration: config)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
            for i in 1...400 { try db.execute(sql: "INSERT INTO t VALUES (?, ?)", arguments: [i, String(repeating: "x", count: 500)]) }
        }
        let copy = try Shared.temporaryPath("hot.sqlite")
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN")
            try db.execute(sql: "UPDATE t SET v = upper(v)")   // more pages than the cache: the database file is written
            // The state a crash leaves: the changed file and its journal, with no process holding them.
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            try FileManager.default.copyItem(atPath: path + "-journal", toPath: copy + "-journal")
            try db.execute(sql: "ROLLBACK")
        }
        try queue.close()
        return copy
    }

    /// Two symbolic links pointing at each other.
    public static func symlinkLoop() throws -> String {
        let a = try Shared.temporaryPath("a.sqlite")
        let b = URL(fileURLWithPath: a).deletingLastPathComponent().appendingPathComponent("b.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: a, withDestinationPath: b)
        try FileManager.default.createSymbolicLink(atPath: b, withDestinationPath: a)
        return a
    }
}

extension String {
    /// True when the text holds anything a terminal would act on or hide: C0/C1 controls (but
    /// the line breaks and tabs output is made of), DEL, bidi and other format characters.
    public var hasTerminalControl: Bool {
        unicodeScalars.contains { u in
            if u == "\n" || u == "\t" || u == "\r" { return false }
            return u.value < 0x20 || (u.value >= 0x7F && u.value < 0xA0) || u.properties.generalCategory == .format
                || u.value == 0x2028 || u.value == 0x2029
        }
    }
}
