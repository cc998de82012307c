import Foundation
import GRDB
import LoupeModel
import LoupeQuery
import LoupeStore
import LoupeTestSupport
import XCTest

/// A one-shot statement over a Persist store with a fresh schema cache reads only what its names
/// reach (``PersistFormat/projected(_:type:names:linkTypes:listsObjects:)``); generated
/// statements over every type, path, backlink, aggregate and subquery of an awkward store must
/// print the same JSON (or the same error) from that graph as from the whole one.
final class PersistProjectionTests: XCTestCase {
    private var saved: String?

    override func setUp() {
        saved = SchemaCache.directory.withLock { $0 }
        SchemaCache.directory.withLock { $0 = NSTemporaryDirectory() + "loupe-projection-\(UUID().uuidString)" }
    }

    override func tearDown() {
        if let directory = SchemaCache.directory.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: directory) }
        SchemaCache.directory.withLock { $0 = saved }
    }

    /// Per type: paths to scalars (and collections, for ANY/ALL/NONE), names in other cases too.
    static let scalars: [String: [String]] = [
        "Book": ["title", "pages", "price", "published", "inPrint", "language", "edition", "keywords", "id", "@type", "author.name",
                 "author.born", "AUTHOR.died", "author.BORN", "publisher.city", "@links.Loan.book.@count", "@links.Review.book.rating.@avg",
                 "@links.Member.favorites.@count", "tags.@count", "SUBQUERY(@links.Loan.book, $l, $l.renewals > 0).@count",
                 "@links.Loan.book.member.name.@min", "author.@links.Book.author.@count", "titel"],
        "Loan": ["renewals", "due", "returned", "book.title", "book.author.born", "book.pages", "member.name", "member.address.city",
                 "book.@links.Review.book.@count", "book.publisher.founded", "member.favorites.@count", "borrowed"],
        "Author": ["name", "born", "died", "bio", "@links.Book.author.@count", "@links.Book.author.pages.@sum",
                   "SUBQUERY(@links.Book.author, $b, $b.pages > 300).@count", "@links.Book.author.price.@max", "country"],
        "Member": ["name", "joined", "phone", "favorites.@count", "address.city", "@links.Loan.member.@count", "@links.Review.member.rating.@sum"],
        "Odd": ["self", "when", "nested.k", "many.@count", "never.@count", "blob.@count", "self.when", "id", "`a\"b`", "many.title"],
    ]
    static let collections: [String: [String]] = [
        "Book": ["tags.label", "@links.Loan.book.renewals", "keywords"],
        "Loan": ["book.tags.label", "member.favorites.pages"],
        "Author": ["@links.Book.author.title", "@links.Book.author.tags.label"],
        "Member": ["favorites.title", "@links.Loan.member.due"],
        "Odd": ["many.pages", "never.title"],
    ]
    static let literals = ["300", "\"300\"", "1.5", "-5", "0", "null", "\"\"", "\"ko\"", "\"Ann\"", "2020-01-02", "1950", "true", "\"a*\"", "{1, 2, \"x\"}"]
    static let operators = ["==", "!=", "<", ">=", "==[c]", "BEGINSWITH", "CONTAINS[cd]", "LIKE", "MATCHES", "IN"]

    static func atom(_ g: inout SQLEngineTests.Generator, _ type: String) -> String {
        switch g.next(5) {
        case 0, 1, 2:
            let op = g.pick(operators)
            return "\(g.pick(scalars[type]!)) \(op) \(op == "MATCHES" ? "\"[A-Z].*\"" : g.pick(literals))"
        case 3:
            return "\(g.pick(["ANY ", "ALL ", "NONE "]))\(g.pick(collections[type]!)) \(g.pick(operators)) \(g.pick(literals))"
        default:
            return "\(g.pick(scalars[type]!)) \(g.pick(["==", "<", "!="])) \(g.pick(scalars[type]!))"
        }
    }

    static func statement(_ g: inout SQLEngineTests.Generator) -> String {
        let type = g.pick(["Book", "Loan", "Author", "Member", "Odd"])
        var p = atom(&g, type)
        if g.next(2) == 0 { p = "(\(p)) \(g.pick(["AND", "OR"])) NOT (\(atom(&g, type)))" }
        let column = g.pick(scalars[type]!.filter { !$0.hasPrefix("SUBQUERY") })
        switch g.next(5) {
        case 0: return "count \(type) where \(p)"
        case 1: return "\(type) where \(p) sort by \(column)\(g.pick(["", " desc"])), id limit \(g.pick(["3", "40"]))"
        case 2: return "\(type) where \(p) select \(column), \(g.pick(scalars[type]!)) as other"
        case 3: return "\(type) where \(p) group by \(column)"
        default: return "\(type.lowercased()) where \(p)"
        }
    }

    func testGeneratedStatementsAgreeWithTheWholeGraph() throws {
        let path = try Shared.temporaryPath("projection.sqlite")
        try SampleGenerator.generate(path: path, objects: 3000, seed: 11)
        try HostileFiles.addAwkwardPersistRows(path)
        let graph = try LoupeStore.LoadedStore.open(path).graph   // leaves the cache entry
        let file = try StoreFile.openForReading(path)
        let environment = ProcessInfo.processInfo.environment
        var g = SQLEngineTests.Generator(state: UInt64(environment["LOUPE_PROJECTION_SEED"] ?? "") ?? 5)
        let target = Int(environment["LOUPE_PROJECTION_STATEMENTS"] ?? "") ?? 300
        var projected = 0, errors = 0, total = 0
        var seen = Set<String>()
        while total < target {
            let statement = Self.statement(&g)
            guard seen.insert(statement).inserted else { continue }
            total += 1
            let expected = SQLEngineTests.memory(statement, graph)
            let reads = try XCTUnwrap(try Parser.parse(statement).namesRead, statement)
            // Every other statement reads its large types in two halves, as at a million objects.
            guard let small = try PersistFormat.projected(file, type: reads.type.text, names: reads.names, linkTypes: reads.linkTypes,
                                                          listsObjects: reads.listsObjects, halvesFrom: total % 2 == 0 ? 100 : 50_000) else { continue }
            projected += 1
            let answer = SQLEngineTests.memory(statement, small)
            if answer.hasPrefix("error") { errors += 1 }
            XCTAssertEqual(answer, expected, statement)
        }
        XCTAssertEqual(projected, total, "every statement over a fresh entry is projected")
        XCTAssertLessThan(errors, total / 4, "most statements run (\(errors) of \(total) are errors)")
        print("projection: \(projected) of \(total) generated statements, \(errors) errors equal to the whole graph's")
    }

    /// What a projection leaves out is left out: a count over one relation reads no document of
    /// the types it does not name, and `#id`, mutations and bare predicates are not projected.
    func testAProjectionReadsOnlyWhatItsNamesReach() throws {
        let path = try Shared.temporaryPath("projection.sqlite")
        try SampleGenerator.generate(path: path, objects: 2000, seed: 3)
        let whole = try LoupeStore.LoadedStore.open(path).graph
        let file = try StoreFile.openForReading(path)
        let reads = try XCTUnwrap(try Parser.parse("count Loan where book.author.born < 1920").namesRead)
        XCTAssertEqual(reads.names, ["book", "author", "born"])
        let small = try XCTUnwrap(try PersistFormat.projected(file, type: "Loan", names: reads.names, linkTypes: reads.linkTypes, listsObjects: false))
        XCTAssertEqual(small.types.map(\.name), whole.types.map(\.name), "the whole schema")
        XCTAssertEqual(try XCTUnwrap(small.type(named: "Publisher")).count, 0, "no name leads to publishers")
        XCTAssertEqual(try XCTUnwrap(small.type(named: "Loan")).count, try XCTUnwrap(whole.type(named: "Loan")).count)
        let book = try XCTUnwrap(small.type(named: "Book"))
        let title = try XCTUnwrap(book.attribute(named: "title"))
        XCTAssertTrue(book.liveRows.allSatisfy { book.value(row: $0, attribute: title) == .null }, "titles are not read")
        for statement in ["update Book set pages = 1", "pages > 3"] {
            XCTAssertNil(try Parser.parse(statement).namesRead, statement)
        }
        // An `#id` literal is a key's value: it reaches no object a name does not lead to.
        let loan = try XCTUnwrap(whole.type(named: "Loan"))
        let lent = try XCTUnwrap(loan.relations[try XCTUnwrap(loan.relation(named: "book"))].targets(of: 0).first)
        let byKey = "count Loan where book == #\(whole.id(of: lent)) OR member.name == nil"
        let keyReads = try XCTUnwrap(try Parser.parse(byKey).namesRead)
        XCTAssertEqual(keyReads.names, ["book", "member", "name"])
        let projected = try XCTUnwrap(try PersistFormat.projected(file, type: "Loan", names: keyReads.names, linkTypes: keyReads.linkTypes, listsObjects: false))
        XCTAssertEqual(try QueryEngine(graph: projected).run(byKey).render(.json, graph: projected), try QueryEngine(graph: whole).run(byKey).render(.json, graph: whole))
        XCTAssertNotEqual(try QueryEngine(graph: whole).run(byKey).render(.json, graph: whole), "0")
    }

    /// A member whose key is not valid UTF-8 reads as the load repairs its name (U+FFFD for the
    /// bad bytes), in a projection and over the whole store alike (a fuzz finding: the projection
    /// compared keys by their bytes only, and left such a member out).
    func testKeysOfInvalidUTF8ReadAsTheLoadReadsThem() throws {
        let path = try HostileFiles.make("repaired.sqlite") { db in
            try db.execute(sql: """
                CREATE TABLE by_type (id INTEGER PRIMARY KEY NOT NULL, type_name TEXT NOT NULL, json TEXT NOT NULL);
                CREATE TABLE relations (from_id INTEGER NOT NULL, to_id INTEGER NOT NULL, relation TEXT NOT NULL);
                INSERT INTO by_type VALUES (1, 'Teacher', '{"name": "Ms Jones", "salary": 61000}'),
                    (2, 'Teacher', CAST(x'7b226e616d65223a20224d7220536d697468222c202273616c61ff79223a2036313030307d' AS TEXT)),
                    (3, 'Teacher', '{"name": "Mr Brown", "salary": 50000}');
                """)
        }
        let graph = try LoupeStore.LoadedStore.open(path).graph   // leaves the cache entry
        let teacher = try XCTUnwrap(graph.type(named: "Teacher"))
        XCTAssertNotNil(teacher.attribute(named: "sala\u{FFFD}y"), "the load repairs the key")
        let file = try StoreFile.openForReading(path)
        for statement in ["Teacher sort by name select name, salary, `sala\u{FFFD}y`", "count Teacher where `sala\u{FFFD}y` > 1", "Teacher group by `sala\u{FFFD}y`"] {
            let parsed = try Parser.parse(statement)
            let reads = try XCTUnwrap(parsed.namesRead, statement)
            let small = try XCTUnwrap(try PersistFormat.projected(file, type: reads.type.text, names: reads.names, linkTypes: reads.linkTypes,
                                                                  listsObjects: reads.listsObjects), statement)
            XCTAssertEqual(SQLEngineTests.memory(statement, small), SQLEngineTests.memory(statement, graph), statement)
        }
    }
}
