import Foundation
import GRDB
import LoupeModel
@testable import LoupeStore
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

    /// A generated library with ``HostileFiles/addAwkwardPersistRows(_:)``.
    static func awkwardStore() throws -> String {
        let path = try Shared.temporaryPath("awkward.sqlite")
        try SampleGenerator.generate(path: path, objects: 3000, seed: 7)
        try HostileFiles.addAwkwardPersistRows(path)
        return path
    }

    func testShowAndSchemaFromTheCacheMatchALoad() throws {
        let path = try Self.awkwardStore()
        let loaded = try LoadedStore.open(path)
        let graph = loaded.graph
        let file = try StoreFile.openForReading(path)
        let cached = try XCTUnwrap(LoadedStore.cachedSchema(file), "a whole load of a Persist store leaves an entry")
        XCTAssertEqual(cached.objectCount, graph.objectCount)
        XCTAssertEqual(cached.types.map(\.name), graph.types.map(\.name.rawValue))
        XCTAssertEqual(cached.types.map(\.count), graph.types.map(\.count))
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

    /// A type name holding a NUL reads cut short, and the load links no edge to its objects: the
    /// cache leaves an object next to one to the load rather than link what the load does not
    /// (a file fuzzer finding).
    func testATypeNameWithANulIsLeftToTheLoad() throws {
        let path = try HostileFiles.make("nul-type.sqlite") { db in
            try HostileFiles.persistSchema(db)
            try db.execute(sql: """
                INSERT INTO by_type VALUES (1, 'Item', '{"n":1}'), (2, 'Part', '{"n":2}'), (3, CAST(X'506172741B00' AS TEXT), '{"n":3}');
                INSERT INTO relations VALUES (1, 2, 'parts'), (1, 3, 'parts');
                """)
        }
        let graph = try LoadedStore.open(path).graph
        let item = try XCTUnwrap(graph.type(named: "Item"))
        let ref = ObjectRef(type: Int32(item.index), row: 0)
        let small = try LoadedStore.neighbourhood(path, type: "Item", ids: [.int(1)])
        if let small, let smallRef = small.ref { XCTAssertEqual(small.graph.describe(smallRef), graph.describe(ref)) }
        XCTAssertNil(small, "left to the load")
    }

    func testAChangedStoreIsNeverAnsweredFromTheCache() throws {
        let path = try Self.awkwardStore()
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

    /// Paged mode keeps the catalog and schema it read (so a second open reads neither), drops
    /// them when the file changes, and prefers a whole load's exact entry.
    func testPagedModeKeepsWhatItReadUntilTheFileChanges() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 600, seed: 8)
        let first = try PersistPages.open(try StoreFile.openForReading(path))
        XCTAssertFalse(first.schemaIsExact)
        // The types were listed through their index; once counted, the entry is kept.
        try first.countTypes()
        let directory = try XCTUnwrap(SchemaCache.directory.withLock { $0 })
        let name = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: directory).first { $0.hasPrefix("pages-") })
        // The entry answers the next open: a count written into it comes back.
        let entryURL = URL(fileURLWithPath: directory + "/" + name)
        var json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: entryURL)) as? [String: Any])
        var types = try XCTUnwrap(json["types"] as? [[String: Any]])
        types[0]["count"] = 123_456
        json["types"] = types
        try JSONSerialization.data(withJSONObject: json).write(to: entryURL)
        XCTAssertEqual(try PersistPages.open(try StoreFile.openForReading(path)).catalog.first?.count, 123_456)
        // `loupe types` reads it too, and nothing once the file changes.
        XCTAssertEqual(LoadedStore.cachedPagedCatalog(try StoreFile.openForReading(path))?.map(\.name), first.catalog.map(\.name))
        XCTAssertEqual(LoadedStore.cachedPagedCatalog(try StoreFile.openForReading(path))?.first?.count, 123_456)
        // A commit makes it stale: the file is read again.
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: #"INSERT INTO by_type (type_name, json) VALUES ('Publisher', '{"name": "New"}')"#) }
        try queue.close()
        XCTAssertNil(LoadedStore.cachedPagedCatalog(try StoreFile.openForReading(path)))
        let reopened = try PersistPages.open(try StoreFile.openForReading(path))
        XCTAssertEqual(reopened.catalog.first?.count, first.catalog[0].count + 1)
        XCTAssertEqual(reopened.catalog.map(\.name), first.catalog.map(\.name))
        // After a whole load, its exact schema and counts.
        let graph = try LoadedStore.open(path).graph
        let exact = try PersistPages.open(try StoreFile.openForReading(path))
        XCTAssertTrue(exact.schemaIsExact)
        XCTAssertEqual(exact.catalog.map(\.name), graph.types.map(\.name.rawValue))
        XCTAssertEqual(exact.catalog.map(\.count), graph.types.map(\.count))
        XCTAssertFalse(exact.notes.contains("schema from a sample"))
    }

    /// Without an entry, a store with an index on `type_name` is listed through it without
    /// counting (the names, their order and, once counted, the counts a load finds; names in
    /// bytes that are not UTF-8 and blobs included); a position far from any known key waits for
    /// the counts, which are then kept for the next open. Without a usable index (none, or a
    /// partial one) the counts are read at open.
    func testTypesAreListedThroughTheirIndexAndCountedWhenNeeded() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 30_000, seed: 3)
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: #"INSERT INTO by_type (type_name, json) VALUES (CAST(X'547261948C65' AS TEXT), '{"n": 1}'), (X'426C6F62', '{"n": 2}'), (X'426C6F62', '{}')"#)
        }
        let graph = try LoadedStore.open(path).graph
        // The whole load's entry forgotten: paged mode reads the store.
        let directory = try XCTUnwrap(SchemaCache.directory.withLock { $0 })
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) { try FileManager.default.removeItem(atPath: directory + "/" + name) }
        let pages = try PersistPages.open(try StoreFile.openForReading(path))
        XCTAssertEqual(pages.listedTypes.map(\.name), graph.types.map(\.name.rawValue))
        XCTAssertTrue(pages.listedTypes.allSatisfy { $0.count == nil })
        let loans = try XCTUnwrap(pages.types.firstIndex { $0.name == "Loan" })
        let n = graph.types[loans].count
        XCTAssertGreaterThan(n, PersistPages.uncountedReach + 10)
        XCTAssertEqual(try pages.keys(type: loans, range: 0..<3), try queue.read { try Int64.fetchAll($0, sql: "SELECT id FROM by_type WHERE type_name = 'Loan' ORDER BY id LIMIT 3") })
        XCTAssertTrue(pages.listedTypes.allSatisfy { $0.count == nil }, "the first keys need no count")
        XCTAssertEqual(try pages.keys(type: loans, range: (n - 3)..<(n + 2)),
                       try queue.read { try Int64.fetchAll($0, sql: "SELECT id FROM by_type WHERE type_name = 'Loan' ORDER BY id DESC LIMIT 3") }.reversed())
        XCTAssertEqual(pages.listedTypes.map(\.count), graph.types.map(\.count), "the last keys waited for the counts")
        XCTAssertEqual(try PersistPages.open(try StoreFile.openForReading(path)).listedTypes.map(\.count), graph.types.map(\.count), "kept for the next open")
        for index in ["", "CREATE INDEX partial_type ON by_type (type_name) WHERE id > 5"] {
            try queue.write { db in
                for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'by_type'") { try db.execute(sql: "DROP INDEX \"\(name)\"") }
                if !index.isEmpty { try db.execute(sql: index) }
            }
            let pages = try PersistPages.open(try StoreFile.openForReading(path))
            XCTAssertEqual(pages.listedTypes.map(\.count), graph.types.map(\.count), "counted at open: \(index)")
            XCTAssertEqual(pages.listedTypes.map(\.name), graph.types.map(\.name.rawValue))
        }
        try queue.close()
    }

    /// What a pass over a type's documents found of an attribute (its kinds) is kept for the
    /// next session over the same state of the store, and read again once the store changes.
    func testPagedModeKeepsAttributeFactsUntilTheFileChanges() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 600, seed: 8)
        let first = try PersistPages.open(try StoreFile.openForReading(path))
        let book = try XCTUnwrap(first.catalog.firstIndex { $0.name == "Book" })
        XCTAssertEqual(try first.attributeFacts(type: book, names: ["pages"]).kinds["pages"], .integer)
        let directory = try XCTUnwrap(SchemaCache.directory.withLock { $0 })
        let name = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: directory).first { $0.hasPrefix("facts-") })
        // The entry answers the next session: kinds written into it come back unread.
        let entryURL = URL(fileURLWithPath: directory + "/" + name)
        var entry = try JSONDecoder().decode(SchemaCache.FactsEntry.self, from: Data(contentsOf: entryURL))
        XCTAssertEqual(entry.facts["Book"]?["pages"]?.kinds, .integer)
        entry.facts["Book"]?["pages"] = PersistPages.AttributeFact(counts: [ValueKind.string.rawValue: 1], plain: true)
        try JSONEncoder().encode(entry).write(to: entryURL)
        let second = try PersistPages.open(try StoreFile.openForReading(path))
        XCTAssertEqual(try second.attributeFacts(type: book, names: ["pages"]).kinds["pages"], .string)
        // The relation names too, once a session read them.
        XCTAssertNil(second.keptRelationNames)
        let names = try second.file.read { try second.relationNames(on: $0) }
        XCTAssertTrue(names.isSuperset(of: ["author", "book"]), "\(names)")
        XCTAssertEqual(try PersistPages.open(try StoreFile.openForReading(path)).keptRelationNames, names)
        // A change to the file makes it stale: the documents are read again.
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: #"INSERT INTO by_type (type_name, json) VALUES ('Book', '{"title": "New", "pages": 12}')"#) }
        try queue.close()
        let third = try PersistPages.open(try StoreFile.openForReading(path))
        XCTAssertNil(third.keptRelationNames)
        XCTAssertEqual(try third.attributeFacts(type: book, names: ["pages"]).kinds["pages"], .integer)
        // `I` reads every type's attributes' kinds and the relation names with its index.
        try third.buildRelationIndex(progress: { _, _ in }, isCancelled: { false })
        let kept = SchemaCache.facts(for: third.file, stamp: third.openedStamp)
        for type in third.catalog {
            XCTAssertEqual(Set(kept[type.name]?.keys ?? [:].keys), Set(try XCTUnwrap(third.schemaTypes.first { $0.name == type.name }).attributes), type.name)
        }
        XCTAssertEqual(try PersistPages.open(try StoreFile.openForReading(path)).keptRelationNames, names)
    }

    /// The relations as a whole load finds them (a pass over every relation row) are kept for
    /// the next session over the same state of the store, rows SQL cannot join too, and read
    /// again once the store changes.
    func testRelationShapesAreKeptUntilTheFileChanges() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 600, seed: 9)
        let first = try PersistPages.open(try StoreFile.openForReading(path))
        let read = try XCTUnwrap(try first.file.read { try first.exactRelations(on: $0, relationTable: "relations") })
        XCTAssertTrue(read.contains { first.catalog[$0.source].name == "Book" && $0.name == "author" && !$0.toMany && $0.exclusive }, "\(read)")
        let second = try PersistPages.open(try StoreFile.openForReading(path))
        XCTAssertEqual(try XCTUnwrap(SchemaCache.relations(for: second.file, stamp: second.openedStamp)).map { second.storedShapes(read) == $0 }, true)
        // The next session answers from the entry: what was written into it comes back unread.
        let kept = [SideIndex.StoredShape(source: "Book", name: "author", toMany: true, targets: ["Author", "Member"], exclusive: false)]
        SchemaCache.saveRelations(kept, file: second.file, stamp: second.openedStamp)
        let third = try PersistPages.open(try StoreFile.openForReading(path))
        let answered = try XCTUnwrap(try third.file.read { try third.exactRelations(on: $0, relationTable: "relations") })
        XCTAssertEqual(answered.map { "\(third.catalog[$0.source].name).\($0.name) \($0.toMany) \($0.targets.map { third.catalog[$0].name })" }, ["Book.author true [\"Author\", \"Member\"]"])
        SchemaCache.saveRelations(nil, file: third.file, stamp: third.openedStamp)
        let fourth = try PersistPages.open(try StoreFile.openForReading(path))
        XCTAssertNil(try fourth.file.read { try fourth.exactRelations(on: $0, relationTable: "relations") }, "rows SQL cannot join, as kept")
        // A change to the file makes it stale: the rows are read again.
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "INSERT INTO relations (from_id, to_id, relation) SELECT id, id, 'self' FROM by_type WHERE type_name = 'Tag' LIMIT 1") }
        try queue.close()
        let fifth = try PersistPages.open(try StoreFile.openForReading(path))
        XCTAssertNil(SchemaCache.relations(for: fifth.file, stamp: fifth.openedStamp) as Any?)
        let again = try XCTUnwrap(try fifth.file.read { try fifth.exactRelations(on: $0, relationTable: "relations") })
        XCTAssertEqual(again.count, read.count + 1)
        XCTAssertEqual(Set(again.map(\.name)), Set(read.map(\.name)).union(["self"]))
    }

    func testDamagedEntriesAndUnusualKeysAreIgnored() throws {
        let path = try Self.awkwardStore()
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
        let other = try Self.awkwardStore()
        _ = try LoadedStore.open(other)
        XCTAssertNil(LoadedStore.cachedSchema(try StoreFile.openForReading(other)))
        SchemaCache.directory.withLock { $0 = directory }
        XCTAssertNil(LoadedStore.cachedSchema(try StoreFile.openForReading(other)))
    }
}

/// Reading only some members of a document (``JSONReader/forEachMember(bytes:persistDates:wants:_:)``
/// with `wants`) accepts and refuses exactly the documents a full read does, and gives the
/// members it keeps the same values.
final class JSONMemberSkipTests: XCTestCase {
    func testSkippedMembersParseAndFailAsRead() throws {
        let valid = [
            #"{"a": "x", "b": 1, "c": 2.5e3, "d": true, "e": null, "f": [1, {"g": "h"}], "i": {"j": []}, "k": "é\u00e9\n\"q\""}"#,
            #"{}"#, #"  {"a" : -0 , "b":"2024-01-02 03:04:05 Z"}  "#, #"[1, 2]"#, #""text""#, "12",
            #"{"a": "\ud83d\ude00", "b": "\ud800"}"#, #"{"a": 1, "a": 2}"#,
        ]
        let invalid = [
            "{\"a\": \"tab\there\", \"b\": 1}", #"{"a": "\x", "b": 1}"#, #"{"a": "\u12", "b": 1}"#, #"{"a": 1.2.3, "b": 1}"#,
            #"{"a": tru, "b": 1}"#, #"{"a": "open, "b": 1}"#, #"{"a": [1, 2, "b": 1}"#, #"{"a": 1,}"#, #"{"a": 1} x"#,
            #"{"a": -, "b": 1}"#, #"{"a": 1e, "b": 1}"#, #"{"a": nul}"#, "{\"a\": \"\u{1}\"}", #"{"a" 1}"#, #"{"a": 1"#,
        ]
        for document in valid + invalid {
            var bytes = Array(document.utf8)
            func read(_ wants: ((UnsafeBufferPointer<UInt8>, String?) -> Bool)?) -> (Bool?, [String]) {
                var seen: [String] = []
                let outcome = bytes.withUnsafeMutableBufferPointer { buffer in
                    try? JSONReader.forEachMember(bytes: UnsafeBufferPointer(buffer), wants: wants) { key, decoded, value in
                        seen.append((decoded ?? String(decoding: key, as: UTF8.self)) + "=" + "\(value)")
                    }
                }
                return (outcome, seen)
            }
            let full = read(nil)
            XCTAssertEqual(full.0 == nil, invalid.contains(document), document)
            XCTAssertEqual(read { _, _ in false }.0, full.0, document)
            let some = read { key, decoded in (decoded ?? String(decoding: key, as: UTF8.self)) == "b" }
            XCTAssertEqual(some.0, full.0, document)
            if full.0 == true { XCTAssertEqual(some.1, full.1.filter { $0.hasPrefix("b=") }, document) }
        }
    }
}

/// A `type_name` stored as text that is not UTF-8 (a foreign writer's bytes): its objects load
/// under the repaired name, with their relations, everywhere they are read.
final class NonUTF8TypeNameTests: XCTestCase {
    func testObjectsOfATypeNamedInBrokenUTF8AreRead() throws {
        let path = try HostileFiles.make("brokenname.sqlite") { db in
            try db.execute(sql: #"CREATE TABLE "by_type" ("id" INTEGER PRIMARY KEY NOT NULL, "type_name" TEXT NOT NULL, "json" TEXT NOT NULL)"#)
            try db.execute(sql: #"CREATE TABLE "relations" ("from_id" INTEGER NOT NULL, "to_id" INTEGER NOT NULL, "relation" TEXT NOT NULL)"#)
            try db.execute(sql: #"INSERT INTO by_type VALUES (1, 'Deal', '{"n": 1}'), (2, CAST(X'547261948C65' AS TEXT), '{"n": 2}'), (3, 'Deal', '{"n": 3}')"#)
            try db.execute(sql: "INSERT INTO relations VALUES (1, 2, 'splits'), (1, 3, 'splits')")
        }
        let graph = try LoupeStore.LoadedStore.open(path).graph
        let broken = try XCTUnwrap(graph.types.first { $0.name.rawValue.hasPrefix("Tra") })
        XCTAssertEqual(broken.count, 1, "the object is read, not lost")
        let deal = try XCTUnwrap(graph.type(named: "Deal"))
        let splits = try XCTUnwrap(deal.relations.first { $0.name == "splits" })
        XCTAssertEqual(splits.targets(of: 0).count, 2)
        XCTAssertTrue(splits.isToMany)
    }
}
