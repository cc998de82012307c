import GRDB
import LoupeHost
import LoupeModel
import LoupeQuery
import LoupeTestSupport
import XCTest

/// `.changes-since` in the REPL: what changed in the store since it was opened (or marked), read
/// from the file, per type and per object — and reading it never makes another process's commit
/// the state a commit checks against.
final class ChangesSinceTests: XCTestCase {
    /// A REPL session on a private copy of Chinook, loaded through the executable's host.
    private func session() throws -> (ReplSession, StoreHost, String) {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let host = StoreHost()
        let session = ReplSession(graph: try host.load(path: path, progress: nil))
        session.host = host
        session.storePath = path
        return (session, host, path)
    }

    /// Another process's commit (GRDB on its own connection).
    private func commit(_ path: String, _ sql: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { try $0.execute(sql: sql) }
        try queue.close()
    }

    func testListsEachObjectChangedAddedAndDeletedPerType() throws {
        let (session, host, path) = try session()
        XCTAssertTrue(session.execute(".changes-since").output.hasPrefix("no changes since the store was opened at"))
        try commit(path, """
            UPDATE Album SET Title = 'Renamed' WHERE AlbumId = 2; INSERT INTO Album VALUES (348, 'Brand new', 1);
            DELETE FROM PlaylistTrack WHERE PlaylistId = 1 AND TrackId = 3; UPDATE Artist SET Name = 'X' WHERE ArtistId = 1
            """)
        let text = session.execute(".changes-since").output
        let lines = text.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines[0].hasPrefix("changes since the store was opened at ") && lines[0].hasSuffix(": 4 objects in 3 of 11 types"), text)
        XCTAssertTrue(lines.contains("Album: +1 ~1 −0 (347 → 348 objects)"), text)
        XCTAssertTrue(lines.contains("  ~ Album #2  Title: \"Balls to the Wall\" → \"Renamed\""), text)
        XCTAssertTrue(lines.contains("  + Album #348  AlbumId: 348; Title: \"Brand new\"; ArtistId: 1"), text)
        XCTAssertTrue(lines.contains("Artist: +0 ~1 −0 (275 → 275 objects)"), text)
        XCTAssertTrue(lines.contains { $0.hasPrefix("PlaylistTrack: +0 ~0 −1") }, text)
        // A mark: from now on only what changes after it.
        XCTAssertTrue(session.execute(".changes-since mark").output.hasPrefix("marked: .changes-since now lists what changes after the store as it is"))
        XCTAssertTrue(session.execute(".changes-since").output.hasPrefix("no changes since the store was marked at"))
        try commit(path, "DELETE FROM Album WHERE AlbumId = 348")
        XCTAssertTrue(session.execute(".changes-since").output.contains("  − Album #348  AlbumId: 348; Title: \"Brand new\"; ArtistId: 1"))
        XCTAssertEqual(session.execute(".changes-since marks").error, "bad argument 'marks'\nUsage: .changes-since [mark]")
        withExtendedLifetime(host) {}
    }

    /// Listing another process's commit is not loading it: edits staged over the store as loaded
    /// are still refused at commit, never written over what that process wrote.
    func testListingChangesLeavesTheCommitCheckOnTheStoreAsLoaded() throws {
        let (session, host, path) = try session()
        _ = session.execute("update Album where AlbumId == 3 set Title = \"Mine\"")
        try commit(path, "UPDATE Album SET Title = 'Theirs' WHERE AlbumId = 3")
        XCTAssertTrue(session.execute(".changes-since").output.contains("~ Album #3"))
        let refused = session.execute(".commit")
        XCTAssertNotNil(refused.error, refused.output)
        let queue = try DatabaseQueue(path: path)
        XCTAssertEqual(try queue.read { try String.fetchOne($0, sql: "SELECT Title FROM Album WHERE AlbumId = 3") }, "Theirs")
        try queue.close()
        withExtendedLifetime(host) {}
    }

    /// `.diff FILE`: the store as loaded compared with another, the same lines as `.changes-since`.
    func testDiffComparesTheStoreAsLoadedWithAnother() throws {
        let (session, host, _) = try session()
        let other = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        XCTAssertTrue(session.execute(".diff \(other)").output.hasPrefix("no differences between this store and "))
        try commit(other, "UPDATE Genre SET Name = 'Polka' WHERE GenreId = 3")
        let text = session.execute(".diff \(other)").output
        XCTAssertTrue(text.contains(": 1 object in 1 of 11 types\nGenre: +0 ~1 −0 (25 → 25 objects)\n  ~ Genre #3  Name: \"Metal\" → \"Polka\"\n"), text)
        XCTAssertTrue(session.execute(".diff /nonexistent/x.sqlite").error?.hasPrefix("error: ") == true)
        XCTAssertEqual(session.execute(".diff").error, "Usage: .diff FILE")
        withExtendedLifetime(host) {}
    }
}
