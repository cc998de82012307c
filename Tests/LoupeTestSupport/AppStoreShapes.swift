import Foundation
import GRDB

/// Makes files shaped as real apps' stores are where Loupe once read them wrong (the fidelity
/// issue): each a fresh file in a temp folder, written here by SQL, so that the tests need no
/// binary fixture. Each stands for a class: any app collation, any legacy-quoted view, any
/// composite foreign key, any undeclared key column with a few dangling values.
public enum AppStoreShapes {
    /// A file whose app registers collation `LOCALIZED` (Android's name for one) and `APPORDER`:
    /// `word` is keyed by it `WITHOUT ROWID`, `tag` keyed by it, `post` has a foreign key to
    /// `tag`, `label` has an index in `APPORDER`, and `note` uses none.
    public static func appCollations() throws -> String {
        try make("collations") { db in
            db.add(collation: DatabaseCollation("LOCALIZED") { a, b in a.lowercased() < b.lowercased() ? .orderedAscending : a.lowercased() > b.lowercased() ? .orderedDescending : .orderedSame })
            db.add(collation: DatabaseCollation("APPORDER") { a, b in b < a ? .orderedAscending : b > a ? .orderedDescending : .orderedSame })
            try db.execute(sql: """
                CREATE TABLE word (w TEXT COLLATE LOCALIZED PRIMARY KEY, n INTEGER) WITHOUT ROWID;
                CREATE TABLE tag (name TEXT COLLATE LOCALIZED PRIMARY KEY, hits INTEGER);
                CREATE TABLE post (id INTEGER PRIMARY KEY, tag TEXT REFERENCES tag(name));
                CREATE TABLE label (id INTEGER PRIMARY KEY, title TEXT);
                CREATE INDEX label_title ON label(title COLLATE APPORDER);
                CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT);
                INSERT INTO word VALUES ('bob', 1), ('Alice', 2), ('carl', 3);
                INSERT INTO tag VALUES ('swift', 1), ('Rust', 2);
                INSERT INTO post (tag) VALUES ('swift'), ('Rust'), ('swift');
                INSERT INTO label (title) VALUES ('b'), ('a');
                INSERT INTO note (body) VALUES ('hello');
                """)
        }
    }

    /// A file whose view `joined` uses `"|"` as a string, as SQLite's legacy rule allows and
    /// apps' views do; `parts` has rows `(x, y)` and `(p, q)`.
    public static func legacyQuotedView() throws -> String {
        try make("legacy-view", legacyQuotes: true) { db in
            try db.execute(sql: """
                CREATE TABLE parts (id INTEGER PRIMARY KEY, a TEXT, b TEXT);
                INSERT INTO parts (a, b) VALUES ('x', 'y'), ('p', 'q');
                CREATE VIEW joined AS SELECT id, a || "|" || b AS ab FROM parts;
                """)
        }
    }

    /// Customers and orders as a well-known sample has them: `Orders.CustomerID` names a
    /// customer undeclared, and `dangling` of `orders` orders name one that is not there.
    /// `Visits.CustomerID` names a missing customer in half its rows.
    public static func danglingKeys(orders: Int = 830, dangling: Int = 29) throws -> String {
        try make("dangling-keys") { db in
            try db.execute(sql: """
                CREATE TABLE Customers (CustomerID TEXT PRIMARY KEY, CompanyName TEXT);
                CREATE TABLE Orders (OrderID INTEGER PRIMARY KEY, CustomerID TEXT, Freight REAL);
                CREATE TABLE Visits (VisitID INTEGER PRIMARY KEY, CustomerID TEXT);
                """)
            for i in 0..<90 { try db.execute(sql: "INSERT INTO Customers VALUES (?, ?)", arguments: [String(format: "C%03d", i), "Company \(i)"]) }
            for i in 0..<orders {
                let customer = i < dangling ? String(format: "GONE%02d", i % 7) : String(format: "C%03d", i % 90)
                try db.execute(sql: "INSERT INTO Orders (CustomerID, Freight) VALUES (?, ?)", arguments: [customer, Double(i) / 4])
            }
            for i in 0..<40 { try db.execute(sql: "INSERT INTO Visits (CustomerID) VALUES (?)", arguments: [i % 2 == 0 ? "C001" : "NOPE\(i)"]) }
        }
    }

    /// Albums keyed by `(artist, title)` and tracks naming theirs by a composite foreign key
    /// `(artist, album) → album(artist, title)`; one track names an album that is not there,
    /// one names none (NULLs).
    public static func compositeForeignKey() throws -> String {
        try make("composite-fk") { db in
            try db.execute(sql: """
                CREATE TABLE album (artist TEXT, title TEXT, year INTEGER, PRIMARY KEY (artist, title));
                CREATE TABLE track (id INTEGER PRIMARY KEY, name TEXT, artist TEXT, album TEXT,
                                    FOREIGN KEY (artist, album) REFERENCES album (artist, title));
                INSERT INTO album VALUES ('A', 'One', 1990), ('A', 'Two', 1991), ('B', 'One', 2000);
                INSERT INTO track (name, artist, album) VALUES ('t1', 'A', 'One'), ('t2', 'A', 'Two'), ('t3', 'B', 'One'),
                    ('t4', 'A', 'One'), ('t5', 'B', 'Two'), ('t6', NULL, NULL);
                """)
        }
    }

    /// A new file written by `body` (foreign keys not enforced: the shapes break their own).
    private static func make(_ name: String, legacyQuotes: Bool = false, _ body: (Database) throws -> Void) throws -> String {
        let path = try Shared.temporaryPath(name + ".sqlite")
        var config = Configuration()
        config.foreignKeysEnabled = false
        config.acceptsDoubleQuotedStringLiterals = legacyQuotes
        let queue = try DatabaseQueue(path: path, configuration: config)
        try queue.write(body)
        try queue.close()
        return path
    }
}
