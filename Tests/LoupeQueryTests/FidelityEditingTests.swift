import Foundation
import GRDB
import LoupeModel
import LoupeQuery
import LoupeStore
import LoupeTestSupport
import XCTest

/// Edits on real apps' store shapes (``AppStoreShapes``): tables ordered by an app's collation
/// are refused with the reason and the file stays as it was; a composite foreign key's relation
/// is edited through its columns and follows them.
final class FidelityEditingTests: XCTestCase {
    private let sessions = EditingSessions()

    func testTablesOrderedByAnAppCollationAreNeverWritten() throws {
        let path = try AppStoreShapes.appCollations()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let session = try sessions.open(path)
        for line in ["update tag set hits = 5", "update word set n = 9", "update post where id == 1 set tag = \"Rust\"", "update label set title = \"z\""] {
            let reply = session.execute(line)
            XCTAssertTrue(reply.error?.contains("collation") ?? false, "\(line): \(reply.error ?? reply.output)")
        }
        XCTAssertNil(session.execute("update note set body = \"hi\"").error)
        XCTAssertNil(session.execute(".commit").error)
        XCTAssertEqual(try DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "SELECT body FROM note") }, "hi")
        XCTAssertEqual(try DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT hits FROM tag WHERE name = 'Rust' COLLATE BINARY") }, 2)
        XCTAssertNotEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
    }

    func testACompositeKeysRelationIsEditedThroughItsColumns() throws {
        let path = try AppStoreShapes.compositeForeignKey()
        let session = try sessions.open(path)
        let refusal = session.execute("update track where id == 1 set artist_album = nil").error ?? ""
        XCTAssertTrue(refusal.contains("follows a foreign key of several columns (artist, album)"), refusal)
        XCTAssertNil(session.execute("update track where id == 1 set album = \"Two\"").error)
        XCTAssertEqual(session.execute("track where id == 1 select artist_album.year").output.contains("1991"), true,
                       session.execute("track where id == 1 select artist_album.year").output)
        XCTAssertNil(session.execute(".commit").error)
        XCTAssertEqual(try DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "SELECT album FROM track WHERE id = 1") }, "Two")
    }
}
