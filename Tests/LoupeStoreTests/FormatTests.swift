import GRDB
import LoupeModel
@testable import LoupeStore
import LoupeTestSupport
import XCTest

/// Reading real files: counts against SQL, detection, relations and backlinks, dates, read-only opening.
final class FormatTests: XCTestCase {
    /// `SELECT count(*)` per type, computed independently of Loupe.
    private func sqlCounts(_ path: String, persist: Bool) throws -> [String: Int] {
        let db = try DatabaseQueue(path: path, configuration: { var c = Configuration(); c.readonly = true; return c }())
        return try db.read { db in
            if persist {
                return Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT type_name, count(*) FROM by_type GROUP BY type_name").map { ($0[0] as String, $0[1] as Int) })
            }
            var out: [String: Int] = [:]
            for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%'") {
                out[name] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(name.quotedDatabaseIdentifier)")
            }
            return out
        }
    }

    private func counts(_ store: LoadedStore) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: store.graph.types.map { ($0.name.rawValue, $0.count) })
    }

    func testChinookCountsEqualSQLAndForeignKeysAreRelations() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let store = try LoadedStore.open(path)
        XCTAssertEqual(store.format.name, "SQLite")
        XCTAssertEqual(counts(store), try sqlCounts(path, persist: false))
        let track = try XCTUnwrap(store.graph.type(named: "Track"))
        let album = try XCTUnwrap(track.relation(named: "Album"))
        XCTAssertEqual(track.relation(named: "AlbumId"), album, "a foreign key is reachable under its column's name too")
        let first = try XCTUnwrap(store.graph.ref(type: track, id: .int(1)))
        let target = try XCTUnwrap(track.relations[album].targets(of: Int(first.row)).first)
        XCTAssertEqual(store.graph.label(of: target), "Album #1")
        let backlinks = store.graph.backlinks(of: target)
        XCTAssertEqual(backlinks.first { $0.key == "Track.Album" }?.sources.count, 10)
        let employee = try XCTUnwrap(store.graph.type(named: "Employee"))
        let birth = try XCTUnwrap(employee.attribute(named: "BirthDate"))
        XCTAssertEqual(employee.attributes[birth].kinds, .date, "DATETIME text is read as dates")
    }

    func testPersistFixturesBothLayouts() throws {
        for name in ["persist.sqlite", "persist_original.sqlite"] {
            let path = try Shared.copy("fixtures/seed-formats/\(name)")
            let store = try LoadedStore.open(path)
            XCTAssertEqual(store.format.name, "Persist", name)
            XCTAssertEqual(counts(store), try sqlCounts(path, persist: true), name)
            let person = try XCTUnwrap(store.graph.type(named: "Person"))
            let birthday = try XCTUnwrap(person.attribute(named: "birthday"))
            XCTAssertEqual(person.attributes[birthday].kinds, .date, "Persist date strings are dates")
            XCTAssertEqual(person.value(row: 0, attribute: birthday), .date(DateText.parse("2010-01-01T12:00:00Z")!))
            let homework = try XCTUnwrap(person.relation(named: "homework"))
            XCTAssertTrue(person.relations[homework].isToMany)
            let teacher = try XCTUnwrap(person.relation(named: "teacher"))
            XCTAssertFalse(person.relations[teacher].isToMany)
            // to-many order is relation rowid order
            let db = try DatabaseQueue(path: path)
            let expected = try db.read { try Int64.fetchAll($0, sql: "SELECT to_id FROM relations WHERE from_id = 5 AND relation = 'homework' ORDER BY rowid") }
            let ben = try XCTUnwrap(store.graph.ref(type: person, id: .int(5)))
            XCTAssertEqual(person.relations[homework].targets(of: Int(ben.row)).map { store.graph.id(of: $0) }, expected.map { .int($0) })
            let address = try XCTUnwrap(person.attribute(named: "address"))
            guard case .object(let o) = person.value(row: 0, attribute: address) else { return XCTFail("nested object") }
            XCTAssertEqual(o["street"], .string("10 Elm St/Apt 0"))
        }
    }

    /// The check that decides whether a key's text reads back (``RelationalFormat/holdsTextThatDoesNotReadBack(_:table:columns:)``,
    /// in C) agrees with Swift's own UTF-8 validation on every short byte string that matters:
    /// all of one and two bytes, and three- and four-byte ones around UTF-8's edges (overlong
    /// forms, surrogates, beyond U+10FFFF, cut short), a NUL anywhere.
    func testKeyTextReadsBackExactlyWhenItIsUTF8WithoutANUL() throws {
        var samples: [[UInt8]] = [[]]
        for a in 0 ... 255 { samples.append([UInt8(a)]); for b in stride(from: 0, through: 255, by: 1) { samples.append([UInt8(a), UInt8(b)]) } }
        let edges: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF]
        for a in edges where a >= 0xE0 { for b in edges { for c in edges { samples.append([a, b, c]); for d in edges where a >= 0xF0 { samples.append([a, b, c, d]) } } } }
        samples += [Array("a\u{0}b".utf8), Array("é😀".utf8), Array("é😀".utf8) + [0x80]]
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT)")
            let insert = try db.makeStatement(sql: "INSERT INTO t VALUES (?, CAST(? AS TEXT))")
            for (i, bytes) in samples.enumerated() { try insert.execute(arguments: [i, Data(bytes)]) }
            XCTAssertTrue(try RelationalFormat.holdsTextThatDoesNotReadBack(db, table: "t", columns: ["id", "k"]))
            let refused = Set(try Int.fetchAll(db, sql: "SELECT id FROM t WHERE NOT loupe_reads_back(k)"))
            for (i, bytes) in samples.enumerated() {
                let readsBack = !bytes.contains(0) && String(validating: bytes, as: UTF8.self) != nil
                XCTAssertEqual(refused.contains(i), !readsBack, "\(bytes)")
            }
            try db.execute(sql: "DELETE FROM t WHERE NOT loupe_reads_back(k)")
            XCTAssertFalse(try RelationalFormat.holdsTextThatDoesNotReadBack(db, table: "t", columns: ["id", "k"]))
        }
    }

    func testMalformedPersistDocumentsNeverBlankTheTable() throws {
        let path = try Shared.temporaryPath()
        try DatabaseQueue(path: path).write { db in
            for sql in PersistWriter.schema.prefix(2) { try db.execute(sql: sql) }
            try db.execute(sql: #"""
                INSERT INTO by_type VALUES (1, 'A', '{"x": 1}'), (2, 'A', '{"x": "half", "q": 5,'), (3, 'A', '{"x": 3, "y": [1, {"z": true}]}'),
                  (4, 'A', '[1, 2]'), (5, 'B', '{}'), (6, 'A', '{"we\"ird": 2, "x": "a\/b"}');
                INSERT INTO relations VALUES (1, 3, 'r'), (3, 99, 'r');
                """#)
        }
        let store = try LoadedStore.open(path)
        let a = try XCTUnwrap(store.graph.type(named: "A"))
        XCTAssertEqual(a.ids, [1, 2, 3, 4, 6].map { ObjectID.int($0) }, "every row is an object, in id order")
        let x = try XCTUnwrap(a.attribute(named: "x")), y = try XCTUnwrap(a.attribute(named: "y"))
        XCTAssertEqual(Array(a.attributes[x].values), [.int(1), .null, .int(3), .null, .string("a/b")],
                       "a document cut short shows nothing of what it began with")
        XCTAssertEqual(a.attributes[x].presentCount, 3)
        XCTAssertNil(a.attribute(named: "q"), "a key only it named is not an attribute")
        XCTAssertEqual(a.value(row: 2, attribute: y), .array([.int(1), .object(NestedObject([("z", .bool(true))]))]))
        XCTAssertEqual(a.value(row: 4, attribute: try XCTUnwrap(a.attribute(named: "we\"ird"))), .int(2),
                       "keys no JSON path can spell are still read")
        XCTAssertEqual(store.warnings.count, 3, "\(store.warnings)")
    }

    func testOpeningNeverWritesEvenInWALMode() throws {
        for relative in ["realdata/chinook/Chinook_Sqlite.sqlite", "realdata/coredata/surfjournal/SurfJournalModel.sqlite",
                         "fixtures/seed-formats/persist.sqlite", "realdata/couchbase/ios140_iosdb.cblite2/db.sqlite3"] {
            let path = try Shared.copy(relative)
            let before = Shared.fingerprint(path)
            let store = try LoadedStore.open(path)
            XCTAssertGreaterThan(store.graph.types.count, 0, relative)
            XCTAssertEqual(Shared.fingerprint(path), before, "\(relative) was changed by opening it")
        }
    }

    func testCoreDataTimestampsAreDatesSince2001() throws {
        let path = try Shared.copy("realdata/coredata/surfjournal/SurfJournalModel.sqlite")
        let graph = try LoadedStore.open(path).graph
        let entries = try XCTUnwrap(graph.type(named: "JournalEntry"))
        let date = try XCTUnwrap(entries.attribute(named: "date"))
        XCTAssertEqual(entries.attributes[date].kinds.subtracting(.null), .date)
        let seconds = try DatabaseQueue(path: try Shared.copy("realdata/coredata/surfjournal/SurfJournalModel.sqlite"))
            .read { try Double.fetchOne($0, sql: "SELECT ZDATE FROM ZJOURNALENTRY ORDER BY Z_PK LIMIT 1") } ?? 0
        XCTAssertEqual(entries.value(row: 0, attribute: date), .date(Date(timeIntervalSinceReferenceDate: seconds)))
    }

    func testWALRowsAreRead() throws {
        let path = try Shared.copy("realdata/coredata/surfjournal/SurfJournalModel.sqlite")
        let viaSQLite = try DatabaseQueue(path: try Shared.copy("realdata/coredata/surfjournal/SurfJournalModel.sqlite"))
        let expected = try viaSQLite.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM ZJOURNALENTRY") }
        let store = try LoadedStore.open(path)
        XCTAssertEqual(store.graph.type(named: "JournalEntry")?.count, expected)
        XCTAssertGreaterThan(expected ?? 0, 0)
    }

    func testBadFilesGiveOneClearErrorAndStayUntouched() throws {
        let folder = try Shared.temporaryPath("x")
        XCTAssertThrowsError(try LoadedStore.open(folder)) { XCTAssertEqual(($0 as? StoreError)?.kind, .fileNotFound) }
        let text = try Shared.temporaryPath("notes.txt")
        try Data("hello, not a database".utf8).write(to: URL(fileURLWithPath: text))
        XCTAssertThrowsError(try LoadedStore.open(text)) { error in
            XCTAssertEqual((error as? StoreError)?.kind, .notADatabase)
            XCTAssertEqual("\(error)", "cannot open '\(text)': not a SQLite database")
        }
        XCTAssertEqual(try String(contentsOfFile: text, encoding: .utf8), "hello, not a database")
        let empty = try Shared.temporaryPath("empty.sqlite")
        XCTAssertTrue(FileManager.default.createFile(atPath: empty, contents: Data()))
        XCTAssertThrowsError(try LoadedStore.open(empty)) { XCTAssertEqual(($0 as? StoreError)?.kind, .notADatabase) }
        let directory = URL(fileURLWithPath: text).deletingLastPathComponent().path
        XCTAssertThrowsError(try LoadedStore.open(directory)) { XCTAssertEqual(($0 as? StoreError)?.kind, .unreadable) }
    }

    func testLockedFileIsReportedNotHung() throws {
        let path = try Shared.copy("fixtures/seed-formats/persist.sqlite")
        let holder = try DatabaseQueue(path: path)
        try holder.inDatabase { db in
            try db.execute(sql: "BEGIN EXCLUSIVE; UPDATE by_type SET json = json WHERE id = 1")
            XCTAssertThrowsError(try LoadedStore.open(path)) { XCTAssertEqual(($0 as? StoreError)?.kind, .locked) }
            try db.execute(sql: "ROLLBACK")
        }
    }

    func testPersistFileRoundTripsUnchangedInMeaning() throws {
        let path = try Shared.copy("fixtures/seed-formats/persist.sqlite")
        let original = try LoadedStore.open(path).graph
        let copy = try Shared.temporaryPath()
        try PersistExport.write(original, to: copy)
        let again = try LoadedStore.open(copy)
        XCTAssertEqual(again.format.name, "Persist")
        GraphComparison.assertSameMeaning(original, again.graph)
        // and Persist's own reading conventions hold: relations never in the JSON, nil omitted, Persist dates
        let db = try DatabaseQueue(path: copy)
        let json = try db.read { try String.fetchOne($0, sql: "SELECT json FROM by_type WHERE id = 1") } ?? ""
        XCTAssertTrue(json.contains("\"birthday\":\"2010-01-01 12:00:00 Z\""), json)
        XCTAssertFalse(json.contains("teacher"), json)
    }

    func testGeneratedSampleHasTheLibraryShapeAndIsDeterministic() throws {
        let a = try Shared.temporaryPath(), b = try Shared.temporaryPath()
        try SampleGenerator.generate(path: a, objects: 2000, seed: 7)
        try SampleGenerator.generate(path: b, objects: 2000, seed: 7)
        XCTAssertEqual(FileManager.default.contents(atPath: a), FileManager.default.contents(atPath: b))
        let graph = try LoadedStore.open(a).graph
        XCTAssertEqual(graph.objectCount, 2000)
        XCTAssertEqual(Set(graph.types.map(\.name.rawValue)), ["Publisher", "Tag", "Author", "Book", "Member", "Loan", "Review"])
        let relations = graph.types.reduce(0) { $0 + $1.relations.reduce(0) { $0 + $1.targets.count } }
        XCTAssertGreaterThan(relations, 3400)
        XCTAssertThrowsError(try SampleGenerator.generate(path: a, objects: 10)) { XCTAssertEqual(($0 as? StoreError)?.kind, .readOnly) }
    }
}

/// Compares two graphs by meaning: same types, ids, attribute values (by name) and relation targets (by id), in order.
enum GraphComparison {
    static func assertSameMeaning(_ a: ObjectGraph, _ b: ObjectGraph, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.types.map(\.name), b.types.map(\.name), file: file, line: line)
        for (ta, tb) in zip(a.types, b.types) {
            XCTAssertEqual(ta.ids, tb.ids, "\(ta.name) ids", file: file, line: line)
            for row in 0..<min(ta.count, tb.count) {
                for (i, attribute) in ta.attributes.enumerated() {
                    let other = tb.attribute(named: attribute.name).map { tb.value(row: row, attribute: $0) } ?? .null
                    XCTAssertEqual(ta.value(row: row, attribute: i), other, "\(ta.name) #\(ta.ids[row]).\(attribute.name)", file: file, line: line)
                }
                for relation in ta.relations {
                    let targetsA = relation.targets(of: row).map { a.id(of: $0) }
                    let targetsB = tb.relation(named: relation.name).map { tb.relations[$0].targets(of: row).map { b.id(of: $0) } } ?? []
                    XCTAssertEqual(targetsA, targetsB, "\(ta.name) #\(ta.ids[row]).\(relation.name)", file: file, line: line)
                }
            }
        }
    }
}
