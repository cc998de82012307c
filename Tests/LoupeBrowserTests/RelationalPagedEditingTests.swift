import Foundation
import GRDB
import LoupeBrowser
import LoupeHost
import LoupeModel
import LoupeQuery
import LoupeSQL
import LoupeStore
import LoupeTestSupport
import TerminalKit
import XCTest

/// Editing a plain relational SQLite file in paged mode against editing its loaded graph: the
/// same statements and keys on two copies stage the same changes and their commits leave the
/// same rows — keys assigned above the table's largest stored one, `ON DELETE` cascades and
/// set-nulls followed through rows no window had read, refusals said alike — and what paged
/// mode cannot see whole (a row with more referring rows than a window reads, references from a
/// table without a rowid) is refused before anything is staged.
final class RelationalPagedEditingTests: XCTestCase {
    /// A browser reading `path` a page at a time, with the host the executable gives it.
    func pagedBrowser(_ path: String, edgesPerObject: Int = 2_000) throws -> (Browser, PagedStoreHost<RelationalPages>) {
        let file = try StoreFile.openForReading(path)
        let pages = try RelationalPages.open(file, edgesPerObject: edgesPerObject)
        return pagedBrowser(pages, path: path, formatName: "SQLite", querySource: RelationalQuerySource(file: file), following: RelationalQuerySource.following)
    }

    func loadedBrowser(_ path: String) throws -> (Browser, StoreHost) { try loadedBrowser(path, formatName: "SQLite") }

    func assertSameRows(_ a: String, _ b: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
        assertSameLines(try Shared.tableRows(a), try Shared.tableRows(b), what, file: file, line: line)
    }

    func testChinookEditsInPagedModeCommitWhatLoadedEditsCommit() throws {
        let original = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let (loadedPath, pagedPath) = try Shared.twoCopies(of: original)
        let statements = [
            "update Track where Milliseconds > 1500000 set Composer = \"Long\"",
            "update Customer where Country == \"Brazil\" set Fax = nil, Company = \"BR\"",
            "insert Artist {Name: \"Loupe Band\"}",
            "insert Album {Title: \"Loupe Live\", Artist: #1}",
            "insert Genre {GenreId: 25, Name: \"Dup\"}",                 // refused: the key is stored (not yet read)
            "update Album where AlbumId == 5 set Artist = #3",
            "update Track where TrackId <= 5 set UnitPrice = UnitPrice + 1",
            "delete InvoiceLine where InvoiceId == 1",
            "delete Invoice where InvoiceId == 1",
            "delete Track where TrackId == 1",                            // refused: playlists and invoice lines refer to it
            "delete PlaylistTrack where PlaylistId == 18",
            ".undo", ".redo", ".undo", ".redo",
        ]
        let (loaded, loadedHost) = try loadedBrowser(loadedPath)
        let (paged, pagedHost) = try pagedBrowser(pagedPath)
        assertSameStaging(statements, loaded: loaded, paged: paged)
        XCTAssertTrue(paged.replOutput.contains { $0.contains("Genre #25 exists already") }, paged.replOutput.joined(separator: "\n"))
        // Keys: the first type's second row, a cell edited, the third row deleted (refused: tracks refer to it), undo, redo.
        let keys = "j l e <C-u>\nEdited by key\n<Enter> j d U R"
        let loadedScreen = loaded.play(try PlayScript.parse(keys), width: 160, height: 30)
        let screen = paged.play(try PlayScript.parse(keys), width: 160, height: 30)
        XCTAssertEqual(pendingPart(paged), pendingPart(loaded))
        XCTAssertEqual(screen.lines.dropLast(), loadedScreen.lines.dropLast())
        XCTAssertTrue(screen.text.contains("Editedbykey"), "the staged value shows in the page: \(screen.text)")
        // The new album shows with its artist, a new key above the stored ones.
        paged.run("Album where Title == \"Loupe Live\"")
        loaded.run("Album where Title == \"Loupe Live\"")
        XCTAssertEqual(paged.play([], width: 160, height: 30).lines.dropLast(), loaded.play([], width: 160, height: 30).lines.dropLast())
        try assertSameRows(pagedPath, original, "nothing is written before the commit")

        loaded.run(".commit")
        paged.run(".commit")
        XCTAssertEqual(lastReply(paged), lastReply(loaded))
        XCTAssertTrue(lastReply(paged).hasPrefix("committed:"), lastReply(paged))
        try assertSameRows(pagedPath, loadedPath, "the two commits wrote the same rows")
        XCTAssertNotEqual(try Shared.tableRows(pagedPath), try Shared.tableRows(original))
        XCTAssertTrue(status(paged).contains("no pending changes"), status(paged))
        // The catalog is the file's new state, and edits go on over it.
        let after = try LoadedStore.open(pagedPath).graph
        XCTAssertEqual(paged.pages?.catalog.map(\.count), after.types.map(\.count))
        for statement in ["insert Artist {Name: \"Second\"}", ".commit"] {
            loaded.run(statement)
            paged.run(statement)
            XCTAssertEqual(lastReply(paged), lastReply(loaded), statement)
        }
        try assertSameRows(pagedPath, loadedPath, "the second commits wrote the same rows")
        withExtendedLifetime((loadedHost, pagedHost)) {}
    }

    /// A small library whose foreign keys cascade and set null, two levels deep, beside a table
    /// without a rowid that refers to books and a table without a declared key.
    func cascadingLibrary() throws -> String {
        try HostileFiles.make("cascade.sqlite") { db in
            try db.execute(sql: """
                CREATE TABLE Author(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                CREATE TABLE Book(id INTEGER PRIMARY KEY, title TEXT, authorId INTEGER REFERENCES Author(id) ON DELETE CASCADE);
                CREATE TABLE Chapter(id INTEGER PRIMARY KEY, bookId INTEGER NOT NULL REFERENCES Book(id) ON DELETE CASCADE, n INTEGER);
                CREATE TABLE Note(id INTEGER PRIMARY KEY, chapterId INTEGER REFERENCES Chapter(id) ON DELETE SET NULL, text TEXT);
                CREATE TABLE Shelf(name TEXT PRIMARY KEY, bookId INTEGER REFERENCES Book(id) ON DELETE CASCADE) WITHOUT ROWID;
                CREATE TABLE Loose(a INTEGER, b TEXT);
                INSERT INTO Author VALUES (1, 'Ann'), (2, 'Bob'), (3, 'Cy');
                INSERT INTO Book VALUES (1, 'A1', 1), (2, 'A2', 1), (3, 'B1', 2), (4, 'C1', 3);
                INSERT INTO Chapter VALUES (1, 1, 1), (2, 1, 2), (3, 2, 1), (4, 3, 1), (5, 4, 1);
                INSERT INTO Note VALUES (1, 1, 'n1'), (2, 3, 'n2'), (3, 4, 'n3'), (4, NULL, 'n4'), (5, 2, 'n5');
                INSERT INTO Shelf VALUES ('s1', 4);
                INSERT INTO Loose VALUES (1, 'x'), (7, 'y');
                DELETE FROM Loose WHERE a = 7;
                INSERT INTO Loose(rowid, a, b) VALUES (9, 9, 'z');
                """)
        }
    }

    func testCascadesReachRowsNoWindowRead() throws {
        let original = try cascadingLibrary()
        let (loadedPath, pagedPath) = try Shared.twoCopies(of: original)
        let (loaded, loadedHost) = try loadedBrowser(loadedPath)
        let (paged, pagedHost) = try pagedBrowser(pagedPath)
        // Ann's two books, their three chapters, the notes on them set to null; a Loose row gets
        // rowid 10 (above the stored 9); a duplicate key is refused.
        for statement in ["delete Author where id == 1", "insert Loose {a: 3, b: \"new\"}", "insert Author {id: 2, name: \"dup\"}",
                          "delete Chapter where id == 4", ".changes", ".commit"] {
            loaded.run(statement)
            paged.run(statement)
            XCTAssertEqual(pendingPart(paged), pendingPart(loaded), statement)
            XCTAssertEqual(lastReply(paged), lastReply(loaded), statement)
        }
        XCTAssertEqual(paged.replOutput.filter { !$0.hasPrefix("committed:") }, loaded.replOutput.filter { !$0.hasPrefix("committed:") })
        try assertSameRows(pagedPath, loadedPath, "the two commits wrote the same rows")
        let rows = try Shared.tableRows(pagedPath)
        XCTAssertEqual(rows.filter { $0.hasPrefix("Author:") }, ["Author: 2 | \"Bob\"", "Author: 3 | \"Cy\""])
        XCTAssertEqual(rows.filter { $0.hasPrefix("Note:") }, ["Note: 1 | NULL | \"n1\"", "Note: 2 | NULL | \"n2\"", "Note: 3 | NULL | \"n3\"",
                                                               "Note: 4 | NULL | \"n4\"", "Note: 5 | NULL | \"n5\""])
        XCTAssertEqual(try DatabaseQueue(path: pagedPath).read { try Int64.fetchOne($0, sql: "SELECT max(rowid) FROM Loose") }, 10)

        // Cy's book is on a shelf (a table without a rowid, whose foreign keys paged mode does not
        // follow): its deletion is refused, nothing staged.
        paged.run("delete Author where id == 3")
        XCTAssertTrue(lastReply(paged).contains("Book #4 is referred to by Shelf.book"), lastReply(paged))
        XCTAssertTrue(status(paged).contains("no pending changes"), status(paged))
        withExtendedLifetime((loadedHost, pagedHost)) {}
    }

    func testRowsWithMoreReferencesThanAWindowReadsAreNotDeleted() throws {
        let original = try cascadingLibrary()
        let (paged, host) = try pagedBrowser(original, edgesPerObject: 1)
        // Ann has two books: a window reads one of them, so her cascade cannot be followed whole.
        paged.run("delete Author where id == 1")
        XCTAssertTrue(lastReply(paged).contains("Author #1 is referred to by more rows than paged mode reads at once"), lastReply(paged))
        XCTAssertTrue(status(paged).contains("no pending changes"), status(paged))
        // Bob has one: his book, its chapter and the chapter's note follow.
        paged.run("delete Author where id == 2")
        XCTAssertEqual(pendingPart(paged), "pending +0 ~1 -3")
        paged.run(".commit")
        XCTAssertTrue(lastReply(paged).hasPrefix("committed: 0 added, 1 changed, 3 deleted"), lastReply(paged))
        withExtendedLifetime(host) {}
    }
}
