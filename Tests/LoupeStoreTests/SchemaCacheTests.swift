import Foundation
import GRDB
import LoupeModel
import LoupeStore
import LoupeTestSupport
import XCTest

/// `loupe schema` and `loupe show` on a Persist store answered from what its last whole load
/// found (``SchemaCache``): the same text as a load gives, for every object of stores built to
/// differ, and never once the store has changed.
final class SchemaCacheTests: XCTestCase {
    private var saved: String?

    override func setUpWithError() throws {
        saved = SchemaCache.directory.withLock { $0 }
        let directory = NSTemporaryDirectory() + "loupe-schema-cache-\(UUID().uuidString)"
        SchemaCache.directory.withLock { $0 = directory }
    }

    override func tearDown() {
        if let directory = SchemaCache.directory.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: directory) }
        SchemaCache.directory.withLock { $0 = saved }
    }

    /// A generated library plus what a load must get right: a self edge, a dangling edge, a
    /// to-many holding one target, a relation Loupe declared with no edges, a document that does
    /// not parse, one that is not an object, one stored as bytes, a relation name stored as
    /// bytes, keys that need escaping, an object of another type under a type's name in any case.
    private func awkwardStore() throws -> String {
        let path = try Shared.temporaryPath("awkward.sqlite")
        try SampleGenerator.generate(path: path, objects: 3000, seed: 7)
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            let next = (try Int64.fetchOne(db, sql: "SELECT max(id) FROM by_type") ?? 0) + 1
            let book = try Int64.fetchOne(db, sql: "SELECT min(id) FROM by_type WHERE type_name = 'Book'")!
            try db.execute(sql: #"""
                INSERT INTO by_type VALUES (?, 'Odd', '{"a\"b": 1, "when": "2024-01-02 03:04:05 Z", "nested": {"k": [1, 2]}}'),
                  (?, 'Odd', '{not json'), (?, 'Odd', '[1, 2]'), (?, 'Odd', CAST('{"a\"b": 2}' AS BLOB)), (?, 'odd2', '{}')
                """#, arguments: [next, next + 1, next + 2, next + 3, next + 4])
            try db.execute(sql: "INSERT INTO relations VALUES (?, ?, 'self'), (?, 987654321, 'gone'), (?, ?, CAST('blob' AS BLOB)), (?, ?, 'many')",
                           arguments: [next, next, next, next + 1, book, next + 3, book])
            try db.execute(sql: "INSERT OR REPLACE INTO loupe_relation_kinds VALUES ('Odd', 'many', 1), ('Odd', 'never', 1)")
        }
        try queue.close()
        return path
    }

    func testShowAndSchemaFromTheCacheMatchALoad() throws {
        let path = try awkwardStore()
        let loaded = try LoadedStore.open(path)
        let graph = loaded.graph
        let file = try StoreFile.openForReading(path)
        let cached = try XCTUnwrap(LoadedStore.cachedSchema(file), "a whole load of a Persist store leaves an entry")
        XCTAssertEqual(cached.objectCount, graph.objectCount)
        XCTAssertEqual(cached.types.map(\.name), graph.types.map(\.name.rawValue))
        XCTAssertEqual(cached.types.map(\.schema), graph.types.map { graph.schemaText(of: $0) })
        XCTAssertEqual(cached.warnings, loaded.warnings)
        XCTAssertFalse(cached.warnings.isEmpty, "the dangling edge and the broken documents are noticed")
        // Every object of the small types, every 7th of the others: the same text as the load.
        var compared = 0
        for table in graph.types {
            for row in table.liveRows where table.count < 200 || row % 7 == 0 {
                let ref = ObjectRef(type: Int32(table.index), row: Int32(row))
                let key = graph.id(of: ref).description
                let asked = row % 2 == 0 ? table.name.rawValue : table.name.rawValue.uppercased()
                let small = try XCTUnwrap(LoadedStore.neighbourhood(path, type: asked, ids: ObjectID.candidates(typed: key)), "\(asked) \(key)")
                let smallRef = try XCTUnwrap(small.ref, "\(asked) #\(key)")
                XCTAssertEqual(small.graph.describe(smallRef), graph.describe(ref), "\(asked) #\(key)")
                compared += 1
            }
        }
        XCTAssertGreaterThan(compared, 400)
        // An id of another type, and one no object has: no object, as the loaded graph says.
        let author = try XCTUnwrap(graph.type(named: "Author"))
        let authorKey = graph.id(of: ObjectRef(type: Int32(author.index), row: 0)).description
        XCTAssertNil(try LoadedStore.neighbourhood(path, type: "Book", ids: ObjectID.candidates(typed: authorKey))?.ref)
        XCTAssertNil(graph.ref(type: try XCTUnwrap(graph.type(named: "Book")), id: .int(Int64(authorKey)!)))
        XCTAssertNil(try LoadedStore.neighbourhood(path, type: "Book", ids: ObjectID.candidates(typed: "999999999"))?.ref)
        // A name no type has: nil, so the caller loads and says so with a suggestion.
        XCTAssertNil(try LoadedStore.neighbourhood(path, type: "Bok", ids: [.int(1)]))
    }

    func testAChangedStoreIsNeverAnsweredFromTheCache() throws {
        let path = try awkwardStore()
        _ = try LoadedStore.open(path)
        XCTAssertNotNil(LoadedStore.cachedSchema(try StoreFile.openForReading(path)))
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: #"UPDATE by_type SET json = '{"title": "changed"}' WHERE id = (SELECT min(id) FROM by_type WHERE type_name = 'Book')"#) }
        try queue.close()
        XCTAssertNil(LoadedStore.cachedSchema(try StoreFile.openForReading(path)), "any commit makes the entry stale")
        XCTAssertNil(try LoadedStore.neighbourhood(path, type: "Book", ids: [.int(1)]))
        // The next whole load writes a fresh one, which then answers.
        let reloaded = try LoadedStore.open(path)
        let cached = try XCTUnwrap(LoadedStore.cachedSchema(try StoreFile.openForReading(path)))
        XCTAssertEqual(cached.types.map(\.schema), reloaded.graph.types.map { reloaded.graph.schemaText(of: $0) })
    }

    func testDamagedEntriesAndUnusualKeysAreIgnored() throws {
        let path = try awkwardStore()
        _ = try LoadedStore.open(path)
        let directory = try XCTUnwrap(SchemaCache.directory.withLock { $0 })
        let entries = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }
        XCTAssertEqual(entries.count, 1)
        for damage in [Data("{".utf8), Data(), Data(#"{"version": 1}"#.utf8)] {
            try damage.write(to: URL(fileURLWithPath: directory + "/" + entries[0]))
            XCTAssertNil(LoadedStore.cachedSchema(try StoreFile.openForReading(path)))
            XCTAssertNil(try LoadedStore.neighbourhood(path, type: "Book", ids: [.int(1)]))
        }
        // Text keys resolve through the load's rules only: no entry is written for them.
        let textKeys = try HostileFiles.persistTextIDs()
        _ = try LoadedStore.open(textKeys)
        XCTAssertNil(LoadedStore.cachedSchema(try StoreFile.openForReading(textKeys)))
        // With no directory set (the library's default), nothing is written.
        SchemaCache.directory.withLock { $0 = nil }
        let other = try awkwardStore()
        _ = try LoadedStore.open(other)
        XCTAssertNil(LoadedStore.cachedSchema(try StoreFile.openForReading(other)))
        SchemaCache.directory.withLock { $0 = directory }
        XCTAssertNil(LoadedStore.cachedSchema(try StoreFile.openForReading(other)))
    }
}
