import GRDB
import LoupeBrowser
import LoupeHost
import LoupeModel
import LoupePostgres
import LoupeSQL
import LoupeStore
import LoupeTestSupport
import TerminalKit
import XCTest

/// Live mode: another process commits to the loaded file; the browser reads it again in place,
/// says what the commit added, changed and deleted, counts the commits on the status line, and
/// with edits pending reads nothing (they are checked at commit).
final class LiveBrowserTests: XCTestCase {
    /// A browser on a private copy of Chinook, loaded through the executable's host, on `Album`.
    private func chinook() throws -> (Browser, String, StoreHost) {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let host = StoreHost()
        let graph = try host.load(path: path, progress: nil)
        let b = Browser(fileLabel: "Chinook_Sqlite.sqlite", formatName: graph.formatName, theme: .color)
        b.host = host
        b.storePath = path
        b.attach(graph)
        return (b, path, host)
    }

    private func commit(_ path: String, _ sql: String) throws {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false   // as an app's own writes may
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.write { try $0.execute(sql: sql) }
        try queue.close()
    }

    /// What live mode compares after a commit: the store read again against the graph shown. One
    /// value changed in one table — text, integer, real, null to text, a row of a table keyed by
    /// two columns — is the one change found, whichever table holds it (the tables with no change
    /// are told apart from it column by column, without comparing their objects).
    func testOneValueChangedInAnyTableIsTheOneChangeFound() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let host = StoreHost()
        let cases: [(sql: String, type: String, key: Int?)] = [
            ("UPDATE Album SET Title = Title || ' ' WHERE AlbumId = 7", "Album", 7),
            ("UPDATE Track SET Milliseconds = Milliseconds + 1 WHERE TrackId = 3503", "Track", 3503),
            ("UPDATE InvoiceLine SET UnitPrice = 0.98 WHERE InvoiceLineId = 1", "InvoiceLine", 1),
            ("UPDATE Customer SET Company = 'Loupe' WHERE CustomerId = 2 AND Company IS NULL", "Customer", 2),
            ("DELETE FROM PlaylistTrack WHERE rowid = (SELECT min(rowid) FROM PlaylistTrack)", "PlaylistTrack", nil),
        ]
        var old = try host.load(path: path, progress: nil)
        for change in cases {
            try commit(path, change.sql)
            let new = try host.load(path: path, progress: nil)
            var found: [ObjectChange] = []
            let summaries = try StoreDiff(GraphDiffSide(old), GraphDiffSide(new)).run { if case .change(let c) = $0 { found.append(c) } }
            XCTAssertEqual(found.map(\.type), [change.type], change.sql)
            if let key = change.key { XCTAssertEqual(found.first?.key, .int(Int64(key)), change.sql) }
            XCTAssertEqual(summaries.reduce(0) { $0 + $1.compared }, 15607 - (change.key == nil ? 1 : 0), "every object in both counted as compared")
            old = new
        }
    }

    func testAnotherProcessesCommitIsShownInPlaceAndMarked() throws {
        let (b, path, host) = try chinook()
        let before = b.play(try PlayScript.parse("<Tab>"), width: 110, height: 24)   // Album #1 selected
        XCTAssertTrue(before.text.contains("Album          347"), before.text)
        try commit(path, "UPDATE Album SET Title = 'Live title' WHERE AlbumId = 2; INSERT INTO Album VALUES (348, 'Brand new', 1); DELETE FROM Album WHERE AlbumId = 1")
        b.storeChangedOnDisk()
        let after = b.play([], width: 110, height: 24)
        XCTAssertTrue(after.text.contains("live · 1 commit"), after.text)
        XCTAssertTrue(after.text.contains("commit 1 from another process: +1 ~1 −1"), after.text)
        XCTAssertTrue(after.text.contains("Album          347"), "the types pane counts the new state (−1 +1): \(after.text)")
        XCTAssertTrue(after.text.contains("Live title"), after.text)
        XCTAssertTrue(after.text.contains("For Those About To Rock"), "the deleted album is shown struck out until the next key")
        XCTAssertFalse(b.play(try PlayScript.parse("<Tab> <S-Tab>"), width: 110, height: 24).text.contains("For Those About To Rock"), "then gone")
        // The selected object was deleted: the selection moves to the next (Album #2, row 1).
        XCTAssertTrue(after.text.contains("row 1/347") && after.text.contains("Album #2"), after.text)
        // A commit that changes nothing shown (a checkpoint) counts nothing.
        b.storeChangedOnDisk()
        XCTAssertTrue(b.play([], width: 110, height: 24).text.contains("live · 1 commit"))
        withExtendedLifetime(host) {}
    }

    /// A row another process deleted stays where it was, struck out (dim, marked `−`), until the
    /// next key; the selection stays on its object, counted again.
    func testADeletedRowIsShownStruckOutUntilTheNextKey() throws {
        let (b, path, host) = try chinook()
        _ = b.play(try PlayScript.parse("j j"), width: 110, height: 24)   // Album #3 selected
        try commit(path, "DELETE FROM Album WHERE AlbumId = 2")
        b.storeChangedOnDisk()
        let after = b.play([], width: 110, height: 24)
        XCTAssertTrue(after.text.contains("commit 1 from another process: +0 ~0 −1"), after.text)
        XCTAssertTrue(after.text.contains("row 2/346") && after.text.contains("Album #3"), "the selection kept its object: \(after.text)")
        let line = try XCTUnwrap(after.lines.firstIndex { $0.contains("Balls to the Wall") }, "the deleted row is still in view: \(after.text)")
        let x = try XCTUnwrap(after.lines[line].range(of: "Balls to the Wall")).lowerBound.utf16Offset(in: after.lines[line])
        XCTAssertEqual(after[x, line].style, Theme.color.liveDeleted, "struck out")
        XCTAssertTrue(after.lines[line].contains("│−"), "marked without colour: \(after.lines[line])")
        XCTAssertTrue(after.lines[line - 1].contains("For Those About To Rock") && after.lines[line + 1].contains("Restless and Wild"), "where it was")
        let moved = b.play(try PlayScript.parse("j"), width: 110, height: 24)
        XCTAssertFalse(moved.text.contains("Balls to the Wall"), moved.text)
        XCTAssertTrue(moved.text.contains("row 3/346"), moved.text)
        withExtendedLifetime(host) {}
    }

    /// Paged mode marks what a commit did to the rows on screen as loaded mode does: a changed
    /// row `~` (its cell highlighted), a deleted one struck out where it was until the next key
    /// (found gone by key: rows that only moved are not), new rows after a type's end `+`.
    func testPagedModeMarksTheRowsOnScreenACommitChanged() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let file = try StoreFile.openForReading(path)
        let (b, host) = pagedBrowser(try RelationalPages.open(file, edgesPerObject: 2_000), path: path, formatName: "SQLite",
                                     querySource: RelationalQuerySource(file: file), following: RelationalQuerySource.following)
        _ = b.play(try PlayScript.parse("j j"), width: 110, height: 24)   // Album #3 selected
        try commit(path, "UPDATE Album SET Title = 'Live title' WHERE AlbumId = 4; DELETE FROM Album WHERE AlbumId = 2")
        b.storeChangedOnDisk()
        let after = b.play([], width: 110, height: 24)
        XCTAssertTrue(after.text.contains("commit 1 from another process: +0 ~1 −1 on screen"), after.text)
        let gone = try XCTUnwrap(after.lines.firstIndex { $0.contains("Balls to the Wall") }, "the deleted row is still in view: \(after.text)")
        XCTAssertTrue(after.lines[gone].contains("│−"), after.lines[gone])
        XCTAssertTrue(after.lines[gone - 1].contains("For Those About To Rock") && after.lines[gone + 1].contains("Restless and Wild"), "where it was")
        XCTAssertTrue(after.lines.contains { $0.contains("│~") && $0.contains("Live title") }, after.text)
        XCTAssertTrue(after.text.contains("row 2/346") && after.text.contains("Album #3"), "the selection kept its object: \(after.text)")
        XCTAssertFalse(after.lines.contains { $0.contains("│−") && !$0.contains("Balls to the Wall") }, "rows that moved up are not deleted: \(after.text)")
        XCTAssertFalse(b.play(try PlayScript.parse("j"), width: 110, height: 24).text.contains("Balls to the Wall"), "gone after a key")
        // A type whose end is on screen: a new object is marked `+`.
        _ = b.play(try PlayScript.parse("<S-Tab> j j j j j j j"), width: 110, height: 24)   // MediaType
        try commit(path, "INSERT INTO MediaType VALUES (6, 'Brand new')")
        b.storeChangedOnDisk()
        let added = b.play([], width: 110, height: 24)
        XCTAssertTrue(added.text.contains("commit 2 from another process: +1 ~0 −0 on screen"), added.text)
        let new = try XCTUnwrap(added.lines.firstIndex { $0.contains("Brand new") }, added.text)
        XCTAssertTrue(added.lines[new].contains("│+"), added.lines[new])
        withExtendedLifetime(host) {}
    }

    /// The title of album `id` in the file, read with SQLite (not Loupe).
    private func title(_ path: String, _ id: Int) throws -> String? {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { try String.fetchOne($0, sql: "SELECT Title FROM Album WHERE AlbumId = ?", arguments: [id]) }
    }

    func testPendingEditsACommitDoesNotTouchAreStagedAgainOverIt() throws {
        let (b, path, host) = try chinook()
        b.run("update Album where AlbumId == 3 set Title = \"Mine\"")
        try commit(path, "UPDATE Album SET Title = 'Theirs' WHERE AlbumId = 4")
        b.storeChangedOnDisk()
        let said = b.play([], width: 140, height: 24)
        XCTAssertTrue(said.text.contains("commit 1 from another process: +0 ~1 −0; the pending changes are staged again"), said.text)
        let screen = b.play(try PlayScript.parse("<Tab>"), width: 140, height: 24)
        XCTAssertTrue(screen.text.contains("Mine") && screen.text.contains("Theirs"), "both: \(screen.text)")
        XCTAssertEqual(b.session?.pending.active.count, 1)
        // The commit writes the edit over the file as the other process left it.
        b.run(".commit")
        XCTAssertEqual(try title(path, 3), "Mine")
        XCTAssertEqual(try title(path, 4), "Theirs")
        withExtendedLifetime(host) {}
    }

    /// Keys pressed while live mode reads another process's commit are held, not refused: an
    /// edit begun then (`e`, its text, Enter) is staged once the read is done, as typed.
    func testAnEditTypedDuringALiveReadIsHeldAndStagedAfterIt() throws {
        let (b, path, host) = try chinook()
        let runner = BrowserTests.HeldRunner()
        b.background = runner
        let start = b.play(try PlayScript.parse("j l"), width: 140, height: 24)   // Album #2's title
        XCTAssertTrue(start.text.contains("row 2/347"), start.text)
        try commit(path, "UPDATE Album SET Title = 'Theirs' WHERE AlbumId = 4")
        b.storeChangedOnDisk()
        XCTAssertTrue(b.isBusy, "the read runs off the UI thread")
        for step in try PlayScript.parse("e <C-u> Typed <Space> meanwhile <Enter>") { if case .event(let e) = step { b.handle(e) } }
        XCTAssertNotEqual(b.message, "wait for the running statement (Ctrl-C cancels it)")
        XCTAssertEqual(b.session?.pending.active.count ?? 0, 0, "nothing staged while the read runs")
        runner.release()
        b.collect()
        XCTAssertFalse(b.isBusy)
        XCTAssertEqual(b.session?.pending.active.count, 1, b.message)
        let screen = b.play([], width: 140, height: 24)
        XCTAssertTrue(screen.text.contains("Typed meanwhile") && screen.text.contains("Theirs"), screen.text)
        b.run(".commit")
        runner.release()
        b.collect()
        XCTAssertEqual(try title(path, 2), "Typed meanwhile")
        withExtendedLifetime(host) {}
    }

    /// Both changed Album #3's title: the browser offers the conflict with the three values,
    /// refuses to commit until it is decided, and Esc leaves the views and the file as they were.
    private func conflicted() throws -> (Browser, String, StoreHost) {
        let (b, path, host) = try chinook()
        b.run("update Album where AlbumId == 3 set Title = \"Mine\"")
        b.run("update Album where AlbumId == 6 set Title = \"Also mine\"")
        try commit(path, "UPDATE Album SET Title = 'Theirs' WHERE AlbumId = 3; UPDATE Album SET Title = 'Other' WHERE AlbumId = 5")
        b.storeChangedOnDisk()
        return (b, path, host)
    }

    func testAConflictIsOfferedAndNothingMovesUntilItIsDecided() throws {
        let (b, path, host) = try conflicted()
        let offered = b.play([], width: 150, height: 30)
        XCTAssertTrue(offered.text.contains("Conflicts — 0 of 1 decided"), offered.text)
        XCTAssertTrue(offered.text.contains("▶ [  ?   ] Album #3 · Title: was \"Restless and Wild\" · yours \"Mine\" · theirs \"Theirs\""), offered.text)
        let later = b.play(try PlayScript.parse("<Esc>"), width: 150, height: 30)
        XCTAssertTrue(later.text.contains("1 conflict to decide (Ctrl-S)"), later.text)
        XCTAssertFalse(later.text.contains("Other"), "the views wait for the choice: \(later.text)")
        for attempt in ["<C-s>", ":.commit"] {
            let again = b.play(try PlayScript.parse("<Esc>\n" + attempt), width: 150, height: 30)
            XCTAssertTrue(again.text.contains("Conflicts — 0 of 1 decided"), "\(attempt): \(again.text)")
            XCTAssertEqual(try title(path, 3), "Theirs", "\(attempt) wrote nothing")
        }
        // Enter applies only once every conflict is decided.
        let undecided = b.play(try PlayScript.parse("<Enter>"), width: 150, height: 30)
        XCTAssertTrue(undecided.text.contains("1 conflict still to decide"), undecided.text)
        withExtendedLifetime(host) {}
    }

    /// An edit staged while the conflicts wait, of another value the commit changed, is one more
    /// conflict to decide: Enter finds the conflicts again over the edits as they are then.
    func testAnEditStagedWhileConflictsWaitIsDecidedToo() throws {
        let (b, path, host) = try conflicted()
        _ = b.play(try PlayScript.parse("<Esc>"), width: 150, height: 30)
        b.run("update Album where AlbumId == 5 set Title = \"Mine too\"")
        let again = b.play(try PlayScript.parse("<Esc>\n<C-s>\nt <Enter>"), width: 150, height: 30)
        XCTAssertTrue(again.text.contains("[theirs] Album #3") && again.text.contains("[  ?   ] Album #5 · Title: was \"Big Ones\" · yours \"Mine too\" · theirs \"Other\""), again.text)
        XCTAssertTrue(again.text.contains("1 conflict still to decide"), again.text)
        _ = b.play(try PlayScript.parse("j m <Enter>"), width: 150, height: 30)
        b.run(".commit")
        XCTAssertEqual(try title(path, 3), "Theirs")
        XCTAssertEqual(try title(path, 5), "Mine too")
        withExtendedLifetime(host) {}
    }

    func testTakingTheirsDropsOnlyThatEditAndKeepingMineCommitsIt() throws {
        for (choice, expected) in [("t", "Theirs"), ("m", "Mine")] {
            let (b, path, host) = try conflicted()
            let applied = b.play(try PlayScript.parse("\(choice) <Enter>"), width: 150, height: 30)
            XCTAssertFalse(applied.text.contains("Conflicts —"), applied.text)
            XCTAssertTrue(applied.text.contains("Other"), "the views show the other process's commit: \(applied.text)")
            XCTAssertEqual(b.session?.pending.active.count, choice == "t" ? 1 : 2, "the other edit stays staged")
            b.run(".commit")
            XCTAssertEqual(try title(path, 3), expected, choice)
            XCTAssertEqual(try title(path, 5), "Other", "their other change survives")
            XCTAssertEqual(try title(path, 6), "Also mine", "the edit without a conflict is written")
            withExtendedLifetime(host) {}
        }
    }

    /// The changes view: `C` lists what changed since the store was opened — another process's
    /// commit and the browser's own — one row per object; Enter opens an object still there.
    func testTheChangesViewListsWhatChangedSinceOpening() throws {
        let (b, path, host) = try chinook()
        try commit(path, "UPDATE Album SET Title = 'Live title' WHERE AlbumId = 2; INSERT INTO Album VALUES (348, 'Brand new', 1); DELETE FROM Album WHERE AlbumId = 1")
        let listed = b.play(try PlayScript.parse("C"), width: 150, height: 30)
        XCTAssertTrue(listed.text.contains("changes since the store was opened at"), listed.text)
        XCTAssertTrue(listed.text.contains("3 objects in 1 of 11 types"), listed.text)
        XCTAssertEqual(listed.lines.filter { ["│−  Album", "│~  Album", "│+  Album"].contains(where: $0.contains) }.count, 3, listed.text)
        XCTAssertTrue(listed.lines.contains { $0.contains("│~") && $0.contains("Title: \"Balls to the Wall\" → \"Live title\"") }, listed.text)
        XCTAssertTrue(listed.lines.contains { $0.contains("│+") && $0.contains("Brand new") }, listed.text)
        XCTAssertTrue(listed.lines.contains { $0.contains("│−") && $0.contains("For Those About To Rock") }, listed.text)
        // Enter: the object's two versions side by side (the deleted one has only the first).
        let deleted = b.play(try PlayScript.parse("<Enter>"), width: 150, height: 30)
        XCTAssertTrue(deleted.text.contains("Album #1 — side by side") && deleted.text.contains("deleted: now has no such object"), deleted.text)
        let changed = b.play(try PlayScript.parse("<Esc> j <Enter>"), width: 150, height: 30)
        XCTAssertTrue(changed.lines.contains { $0.contains("≠ Title") && $0.contains("\"Balls to the Wall\"") && $0.contains("│ \"Live title\"") }, changed.text)
        XCTAssertTrue(changed.lines.contains { $0.contains("  ArtistId") && $0.contains("2  ") && $0.contains("│ 2") }, "the same value, unmarked: \(changed.text)")
        // `o` opens it in the browser: as the browser holds it (not live here, so as opened).
        let opened = b.play(try PlayScript.parse("o"), width: 150, height: 30)
        XCTAssertFalse(opened.text.contains("side by side"), opened.text)
        XCTAssertTrue(opened.text.contains("Balls to the Wall") && opened.text.contains("Album #2"), opened.text)
        // A mark: nothing changed since.
        b.run(".changes-since mark")
        let marked = b.play(try PlayScript.parse("<Esc>\nC"), width: 150, height: 30)
        XCTAssertTrue(marked.text.contains("no changes since the store was marked at"), marked.text)
        withExtendedLifetime(host) {}
    }

    /// `.diff FILE`: this store against another copy, as a view of the differences.
    func testDiffAgainstAnotherCopyIsAViewOfItsDifferences() throws {
        let (b, _, host) = try chinook()
        let other = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        try commit(other, "UPDATE Genre SET Name = 'Polka' WHERE GenreId = 3")
        b.run(".diff \(other)")
        let screen = b.play([], width: 150, height: 30)
        XCTAssertTrue(screen.text.contains("differences from this store to"), screen.text)
        XCTAssertTrue(screen.lines.contains { $0.contains("│~") && $0.contains("Name: \"Metal\" → \"Polka\"") }, screen.text)
        let sides = b.play(try PlayScript.parse("<Enter>"), width: 150, height: 30)
        XCTAssertTrue(sides.text.contains("this store") && sides.text.contains(URL(fileURLWithPath: other).lastPathComponent), sides.text)
        withExtendedLifetime(host) {}
    }

    /// A URL typed in the browser's REPL is echoed without its credentials, and so is any
    /// error about it.
    func testADiffAgainstAURLNeverShowsItsPassword() throws {
        let (b, _, host) = try chinook()
        b.run(".diff postgresql://who:s3cret@127.0.0.1:1/nowhere?sslpassword=hush")
        let screen = b.play([], width: 150, height: 30)
        XCTAssertTrue(screen.text.contains("loupe> .diff postgresql://who@127.0.0.1:1/nowhere?sslpassword=***"), screen.text)
        XCTAssertFalse(screen.text.contains("s3cret") || screen.text.contains("hush"), screen.text)
        XCTAssertTrue(screen.text.contains("a database's address, and this session reads files"), screen.text)
        b.run(".open postgresql://who:s3cret@127.0.0.1:1/nowhere")
        XCTAssertFalse(b.play([], width: 150, height: 30).text.contains("s3cret"), ".open says so without the password too")
        withExtendedLifetime(host) {}
    }

    /// A PostgreSQL database is live too: its written-row count moves with another session's
    /// commit (never with another database's on the same server), and the browser reads the
    /// database again and shows it in place.
    func testAPostgreSQLDatabaseFollowsAnotherSessionsCommit() throws {
        let url = try PostgresServer.freshDatabase("live")
        XCTAssertEqual(try PostgresServer.psql(url, "CREATE TABLE pet (id integer PRIMARY KEY, name text); INSERT INTO pet VALUES (1, 'Rex'), (2, 'Tom');"), 0)
        let host = PostgresHost(url: url)
        let graph = try host.load(path: url, progress: nil)
        let b = Browser(fileLabel: "live", formatName: graph.formatName, theme: .color)
        b.host = host
        b.storePath = url
        b.attach(graph)
        let moves = PostgresMoves(url: url)
        XCTAssertFalse(moves.moved(), "nothing to see within a second of the first look")
        let other = try PostgresServer.freshDatabase("live_other")
        XCTAssertEqual(try PostgresServer.psql(other, "CREATE TABLE t (id integer PRIMARY KEY); INSERT INTO t VALUES (1);"), 0)
        Thread.sleep(forTimeInterval: 1.1)
        XCTAssertFalse(moves.moved(), "another database's commit on the same server is not this one's")
        XCTAssertEqual(try PostgresServer.psql(url, "UPDATE pet SET name = 'Rexie' WHERE id = 1; INSERT INTO pet VALUES (3, 'Kit');"), 0)
        Thread.sleep(forTimeInterval: 1.1)
        XCTAssertTrue(moves.moved(), "the commit moved the server's write position")
        b.storeChangedOnDisk()
        let screen = b.play(try PlayScript.parse("<Tab>"), width: 120, height: 24)
        XCTAssertTrue(screen.text.contains("commit 1 from another process: +1 ~1 −0") || b.play([], width: 120, height: 24).text.contains("live · 1 commit"), screen.text)
        XCTAssertTrue(screen.text.contains("Rexie") && screen.text.contains("Kit"), screen.text)
        withExtendedLifetime(host) {}
    }
}
