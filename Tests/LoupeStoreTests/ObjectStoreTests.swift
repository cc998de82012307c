import GRDB
import LoupeModel
@testable import LoupeStore
import LoupeTestSupport
import XCTest

// A small app model: classes with a cycle (Author ⇄ Book through Lazy), structs with optionals,
// arrays of stored types, nested plain values and dates.
final class Author: Storable {
    var storeID: Int64?
    var name: String
    var books: [Book] = []
    init(name: String) { self.name = name }
}

final class Book: Storable {
    var storeID: Int64?
    var title: String
    var published: Date
    var author: Lazy<Author>?
    var tags: [Tag] = []
    var edition: Edition?
    init(title: String, published: Date) { self.title = title; self.published = published }
}

struct Edition: Codable, Equatable { var number: Int; var format: String }

struct Tag: Storable, Equatable {
    var storeID: Int64?
    var label: String
}

struct Member: Storable {
    var storeID: Int64?
    var name: String
    var nickname: String?
    var favorite: Tag?
    var address: Address
    struct Address: Codable, Equatable { var city: String; var zip: String? }
}

/// A type renamed after data was written: was `Patron` with key `fullName`.
struct Reader: Storable {
    var storeID: Int64?
    var name: String
    static var formerTypeNames: [String] { ["Patron"] }
    static var formerKeys: [String: String] { ["fullName": "name"] }
}

/// Two classes pointing at each other, both eagerly: saving works, loading reports the cycle.
final class Node: Storable {
    var storeID: Int64?
    var label: String
    var next: Node?
    init(label: String) { self.label = label }
}

final class ObjectStoreTests: XCTestCase {
    private func makeStore() throws -> (ObjectStore, String) {
        let path = try Shared.temporaryPath()
        return (try ObjectStore(path: path), path)
    }

    func testRelationsAreFoundByTypeAndSharedObjectsSavedOnce() throws {
        let (store, path) = try makeStore()
        let author = Author(name: "Ursula")
        let fiction = Tag(label: "fiction")
        let b1 = Book(title: "The Dispossessed", published: Date(timeIntervalSince1970: 135_000_000))
        let b2 = Book(title: "The Lathe of Heaven", published: Date(timeIntervalSince1970: 31_000_000))
        for b in [b1, b2] { b.author = Lazy(author); b.tags = [fiction] }
        b1.edition = Edition(number: 2, format: "paperback")
        author.books = [b1, b2]
        try store.save(author)   // the cycle Author → Book → Lazy<Author> is saved once

        XCTAssertNotNil(author.storeID)
        XCTAssertNotNil(b1.storeID)
        XCTAssertEqual(try store.count(Author.self), 1)
        XCTAssertEqual(try store.count(Book.self), 2)
        XCTAssertEqual(try store.count(Tag.self), 2, "structs have no identity: an unsaved struct used twice is saved twice")

        // Persist's conventions on disk: relations as rows, never in the JSON; dates as Persist strings.
        let db = try DatabaseQueue(path: path)
        let json = try db.read { try String.fetchOne($0, sql: "SELECT json FROM by_type WHERE id = ?", arguments: [b1.storeID]) } ?? ""
        XCTAssertFalse(json.contains("author") || json.contains("tags") || json.contains("storeID"), json)
        XCTAssertTrue(json.contains("\"published\":\"1974-04-12 12:00:00 Z\""), json)
        let order = try db.read { try Int64.fetchAll($0, sql: "SELECT to_id FROM relations WHERE from_id = ? AND relation = 'books' ORDER BY rowid", arguments: [author.storeID]) }
        XCTAssertEqual(order, [b1.storeID!, b2.storeID!])

        // The browser reads the same file as a graph with relations and backlinks.
        let graph = try LoadedStore.open(path).graph
        XCTAssertEqual(graph.type(named: "Book")?.count, 2)
        let authorRef = try XCTUnwrap(graph.ref(id: .int(author.storeID!)))
        XCTAssertEqual(graph.backlinks(of: authorRef).map(\.key), ["Book.author"])
        let authorType = try XCTUnwrap(graph.type(named: "Author"))
        XCTAssertTrue(authorType.relations[authorType.relation(named: "books")!].isToMany)
    }

    func testLoadFollowsRelationsWithAnIdentityMap() throws {
        let (store, _) = try makeStore()
        let author = Author(name: "Octavia")
        let book = Book(title: "Kindred", published: Date(timeIntervalSince1970: 0))
        book.author = Lazy(author)
        author.books = [book]
        try store.save(author)
        let id = try XCTUnwrap(author.storeID)
        // A fresh store has an empty identity map.
        let reopened = try ObjectStore(path: store.path)
        let loaded = try reopened.load(Author.self, id: id)
        XCTAssertEqual(loaded.name, "Octavia")
        XCTAssertEqual(loaded.books.map(\.title), ["Kindred"])
        XCTAssertTrue(try reopened.load(Author.self, id: id) === loaded, "one id is one instance")
        XCTAssertTrue(try loaded.books[0].author?.get() === loaded, "a Lazy relation resolves through the identity map")
        XCTAssertEqual(try reopened.all(Book.self).map(\.title), ["Kindred"])
    }

    func testStructsOptionalsNestedValuesAndReadBack() throws {
        let (store, path) = try makeStore()
        var member = Member(name: "Zoë 山田 🚀", nickname: nil, favorite: Tag(label: "poetry"), address: .init(city: "Zürich", zip: nil))
        try store.save(&member)
        let id = try XCTUnwrap(member.storeID)
        XCTAssertNotNil(member.favorite?.storeID, "saving a struct reads it back, so related structs get their ids")
        var again = member
        try store.save(&again)
        XCTAssertEqual(try store.count(Tag.self), 1, "saving the read-back value again does not duplicate its relations")
        let loaded = try store.load(Member.self, id: id)
        XCTAssertEqual(loaded.name, "Zoë 山田 🚀")
        XCTAssertNil(loaded.nickname)
        XCTAssertEqual(loaded.favorite?.label, "poetry")
        XCTAssertEqual(loaded.address, .init(city: "Zürich", zip: nil))
        // Setting an optional relation to nil removes the relation row.
        var cleared = loaded
        cleared.favorite = nil
        try store.save(&cleared)
        XCTAssertNil(try store.load(Member.self, id: id).favorite)
        let json = try DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "SELECT json FROM by_type WHERE id = ?", arguments: [id]) } ?? ""
        XCTAssertFalse(json.contains("nickname"), "nil is omitted, as Persist does: \(json)")
    }

    func testDeleteWithAndWithoutCascade() throws {
        let (store, path) = try makeStore()
        var a = Member(name: "A", favorite: Tag(label: "x"), address: .init(city: "c"))
        var b = Member(name: "B", favorite: Tag(label: "y"), address: .init(city: "c"))
        try store.save(&a)
        try store.save(&b)
        try store.delete(Member.self, id: a.storeID!)
        XCTAssertEqual(try store.count(Member.self), 1)
        XCTAssertEqual(try store.count(Tag.self), 2, "without cascade the target stays")
        try store.delete(Member.self, id: b.storeID!, cascade: true)
        XCTAssertEqual(try store.count(Tag.self), 1, "with cascade the target goes too")
        let dangling = try DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM relations") }
        XCTAssertEqual(dangling, 0)
        XCTAssertThrowsError(try store.delete(Member.self, id: 999)) { XCTAssertEqual(($0 as? StoreError)?.kind, .notFound) }
    }

    func testCascadeKeepsTargetsOthersStillReferTo() throws {
        let (store, path) = try makeStore()
        var a = Member(name: "A", favorite: Tag(label: "shared"), address: .init(city: "c"))
        try store.save(&a)
        var b = Member(name: "B", favorite: a.favorite, address: .init(city: "c"))
        try store.save(&b)
        XCTAssertEqual(try store.count(Tag.self), 1, "both members point at one tag row")
        try store.delete(Member.self, id: a.storeID!, cascade: true)
        XCTAssertEqual(try store.count(Tag.self), 1, "B still refers to the tag, so the cascade keeps it")
        XCTAssertEqual(try store.load(Member.self, id: b.storeID!).favorite?.label, "shared")
        try store.delete(Member.self, id: b.storeID!, cascade: true)
        XCTAssertEqual(try store.count(Tag.self), 0, "with its last referrer gone, the cascade takes it")
        let rows = try DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM relations") }
        XCTAssertEqual(rows, 0)
    }

    func testExplicitTransactionsRollBack() throws {
        let (store, _) = try makeStore()
        struct Refused: Error {}
        XCTAssertThrowsError(try store.transaction { tx in
            var t = Tag(label: "kept?")
            try tx.save(&t)
            XCTAssertEqual(try tx.count(Tag.self), 1)
            throw Refused()
        })
        XCTAssertEqual(try store.count(Tag.self), 0)
        try store.transaction { tx in
            var t1 = Tag(label: "one"), t2 = Tag(label: "two")
            try tx.save(&t1)
            try tx.save(&t2)
        }
        XCTAssertEqual(try store.all(Tag.self).map(\.label), ["one", "two"])
    }

    func testRenamedTypesAndKeysStillLoad() throws {
        let (store, path) = try makeStore()
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: #"INSERT INTO by_type (id, type_name, json) VALUES (40, 'Patron', '{"fullName":"Old Name"}')"#)
        }
        XCTAssertEqual(try store.load(Reader.self, id: 40).name, "Old Name")
        XCTAssertEqual(try store.all(Reader.self).count, 1)
    }

    func testTypedErrorsSayWhatFailed() throws {
        let (store, path) = try makeStore()
        XCTAssertThrowsError(try store.load(Tag.self, id: 7)) { error in
            XCTAssertEqual((error as? StoreError)?.kind, .notFound)
            XCTAssertEqual("\(error)", "not found: Tag #7")
        }
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: #"INSERT INTO by_type (id, type_name, json) VALUES (8, 'Tag', '{"lable":"typo"}')"#)
            try db.execute(sql: #"INSERT INTO by_type (id, type_name, json) VALUES (9, 'Tag', 'not json')"#)
        }
        XCTAssertThrowsError(try store.load(Tag.self, id: 8)) { error in
            XCTAssertEqual((error as? StoreError)?.kind, .undecodableRow)
            XCTAssertEqual("\(error)", "cannot decode Tag #8: missing key 'label'")
        }
        XCTAssertThrowsError(try store.load(Tag.self, id: 9)) { XCTAssertEqual(($0 as? StoreError)?.kind, .undecodableRow) }
        XCTAssertThrowsError(try store.load(Member.self, id: 8)) { XCTAssertEqual(($0 as? StoreError)?.kind, .undecodableRow) }
        // A SQLite file in another format is refused, not changed.
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let before = Shared.fingerprint(chinook)
        XCTAssertThrowsError(try ObjectStore(path: chinook)) { XCTAssertEqual(($0 as? StoreError)?.kind, .missingTable) }
        XCTAssertEqual(Shared.fingerprint(chinook).first, before.first)
    }

    func testEagerCyclesSaveAndReportOnLoad() throws {
        let (store, _) = try makeStore()
        let a = Node(label: "a"), b = Node(label: "b")
        a.next = b
        b.next = a
        try store.save(a)
        XCTAssertEqual(try store.count(Node.self), 2, "a cycle of class instances is saved once each")
        let reopened = try ObjectStore(path: store.path)
        XCTAssertThrowsError(try reopened.load(Node.self, id: a.storeID!)) { error in
            XCTAssertEqual((error as? StoreError)?.kind, .undecodableRow)
            XCTAssertTrue("\(error)".contains("Lazy<Node>"), "\(error)")
        }
    }

    func testSafeFromSeveralThreads() throws {
        let (store, _) = try makeStore()
        DispatchQueue.concurrentPerform(iterations: 8) { i in
            for j in 0..<25 {
                do {
                    var t = Tag(label: "t\(i)-\(j)")
                    try store.save(&t)
                    XCTAssertEqual(try store.load(Tag.self, id: t.storeID ?? -1).label, t.label)
                } catch { XCTFail("\(error)") }
            }
        }
        XCTAssertEqual(try store.count(Tag.self), 200)
    }
}
