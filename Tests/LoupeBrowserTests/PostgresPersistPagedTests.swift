import Foundation
import LoupeBrowser
import LoupeModel
import LoupePostgres
import LoupeQuery
import LoupeStore
import LoupeTestSupport
import TerminalKit
import XCTest

/// Paged mode over Persist's layout stored in PostgreSQL (``PostgresPersistPages``) against the
/// whole graph a load of the same database gives: the same keys give the same screens.
final class PostgresPersistPagedTests: XCTestCase {
    /// A generated library copied into PostgreSQL with `documentType` documents, with rows made
    /// to be awkward added: a document that is not an object, one member repeated (kept by
    /// `json` only), a relation row to nothing, an object with many backlinks and one with many
    /// targets of one relation, a type whose first object comes late.
    static func library(_ name: String, documentType: String, relationKey: String? = "bigserial", indexes: Bool = false) throws -> String {
        let path = try Shared.temporaryPath("\(name).sqlite")
        try SampleGenerator.generate(path: path, objects: 1500, seed: 7)
        let url = try PostgresServer.persistDatabase(copying: path, named: name, documentType: documentType, relationKey: relationKey)
        var script = """
            INSERT INTO by_type VALUES (900001, 'Author', '[1, 2]'), (900002, 'Author', '{"name": "twice", "name": "again", "born": 1901}'),
                                       (900003, 'Shelf', '{"label": "late", "at": "2020-01-02 03:04:05 Z"}');
            INSERT INTO relations (from_id, to_id, relation) VALUES (900003, 123456789, 'holds'), (900003, 900002, 'keeper');

            """
        for i in 0..<40 { script += "INSERT INTO relations (from_id, to_id, relation) VALUES (900003, \(i + 10), 'holds'), (\(i + 10), 900002, 'shelvedBy');\n" }
        if indexes {
            script += "CREATE INDEX ON relations (from_id); CREATE INDEX ON relations (to_id); CREATE INDEX ON by_type (type_name, id);\n"
        }
        XCTAssertEqual(try PostgresServer.psql(url, script), 0)
        return url
    }

    func testPersistLayoutPagesAsItLoads() throws {
        for (documentType, relationKey, indexes) in [("jsonb", "bigserial", false), ("json", nil, true)] as [(String, String?, Bool)] {
            let url = try Self.library("persist_paged_\(documentType)", documentType: documentType, relationKey: relationKey, indexes: indexes)
            let graph = try PostgresDatabase.load(url: url).graph
            let pages = try PostgresPersistPages.open(url: url)
            XCTAssertEqual(pages.catalog.map(\.name), graph.types.map(\.name.rawValue), documentType)
            XCTAssertEqual(pages.catalog.map(\.count), graph.types.map(\.count), documentType)
            XCTAssertEqual(pages.notes, ["schema from a sample"] + (indexes ? [] : [
                "no index on relations.from_id and .to_id: each page scans the relation rows",
                "no index on by_type (type_name, id): opening and far jumps in a type walk the keys before it"]), documentType)
            for seed in UInt64(1)...5 {
                try walk(graph: graph, pages: try PostgresPersistPages.open(url: url, edgesPerObject: Int(seed % 3) * 4 + 1), seed: seed, count: 120, windowRows: 30)
            }
            try walk(graph: graph, pages: pages, seed: 11, count: 150, windowRows: 200)
            // Every type's keys at any positions, paged from any window, are its keys in the load's order.
            assertKeysByPosition(graph: graph, pages: pages, seed: 5, rounds: 8, length: 30, withoutNear: false, label: documentType)
        }
    }
}

/// Statements and edits over Persist's layout in PostgreSQL in paged mode against the loaded
/// graph: the same answers from PostgreSQL, the same staged changes, the same rows committed.
final class PostgresPersistPagedSessionTests: XCTestCase {
    /// Persist's two tables as text, row by row in key order.
    func rows(_ url: String) throws -> [String] {
        let c = try PostgresConnection(url: url)
        return try ["by_type", "relations"].flatMap { table in
            [table] + (try c.query("SELECT t::text FROM \(table) t ORDER BY 1").rows.map { $0[0] ?? "" })
        }
    }

    func testStatementsAreAnsweredByTheServer() throws {
        let url = try PostgresPersistPagedTests.library("persist_paged_statements", documentType: "jsonb")
        let graph = try PostgresDatabase.load(url: url).graph
        let pages = try PostgresPersistPages.open(url: url)
        let source = PostgresPersistQuerySource(pages: pages)
        for statement in [
            "count Book where pages > 500", "Book where pages > 900 sort by pages desc, id", "Loan where book.author.born < 1920 sort by id limit 5",
            "Author where @links.Book.author.@count > 4 sort by name, id select name, born", "Book group by language",
            "Book where ANY tags.label == \"poetry\" sort by published desc, id limit 3 select title, published, price",
            "count Author where SUBQUERY(@links.Book.author, $b, $b.pages > 400).@count > 1", "Shelf", "Book where Nmae == 1",
            "Book where pages * 2 > 1900", "Loan where book.pages * 2 > 1000", "Book where pages * 2 > 1900 AND title MATCHES \".*e.*\"",   // the last: MATCHES a chunk at a time
        ] {
            assertSameAnswer(statement, graph: graph, pages: pages, querySource: source, lines: Self.comparedLines(statement))
        }
        // What PostgreSQL cannot answer exactly needs the whole graph, and says so.
        assertNeedsWholeGraph("Loan where book.title MATCHES \".*e.*\"", pages: pages, querySource: source)
        // `json` documents are not translated: every statement needs the whole graph.
        let json = try PostgresPersistPagedTests.library("persist_paged_statements_json", documentType: "json")
        let jsonPages = try PostgresPersistPages.open(url: json)
        XCTAssertNil(try PostgresPersistQuerySource(pages: jsonPages).answer(try Parser.parse("count Book"), isCancelled: { false }))
    }

    /// A statement reads no more of the whole database than it needs (each member it reads over
    /// its type, the relations only when it can reach them), and what a commit changes is read
    /// again: a member whose values became text is no longer compared as a number.
    func testTheSourceReadsWhatAStatementNeedsAndRereadsWhatACommitChanged() throws {
        let url = try PostgresPersistPagedTests.library("persist_paged_reads", documentType: "jsonb")
        let source = PostgresPersistQuerySource(pages: try PostgresPersistPages.open(url: url))
        _ = try source.answer(try Parser.parse("count Book where pages > 500"), isCancelled: { false })
        XCTAssertFalse(source.wholeReads.relations)
        XCTAssertEqual(source.wholeReads.members, ["Book": ["pages"]])
        _ = try source.answer(try Parser.parse("Loan where book.title BEGINSWITH \"A\" sort by id"), isCancelled: { false })
        XCTAssertTrue(source.wholeReads.relations)
        XCTAssertEqual(source.wholeReads.members["Book"], ["pages", "title"])

        let loadedURL = try PostgresPersistPagedTests.library("persist_paged_reads_loaded", documentType: "jsonb")
        let (loaded, loadedHost) = try loadedBrowser(postgres: loadedURL)
        let (paged, pagedHost) = pagedBrowser(postgres: try PostgresPersistPages.open(url: url))
        let book = try XCTUnwrap(PostgresDatabase.load(url: url).graph.type(named: "Book")?.ids.first?.description)
        // The new title is not in NFC: compared as the engine compares text (canonical
        // equivalence), it equals its NFC spelling, which SQL's byte comparison would miss.
        for statement in ["count Book where pages > 500", "count Book where title == \"Café\"", ".commit",
                          "update Book where id == \(book) set title = \"Cafe\u{301}\", pages = 512", ".commit",
                          "count Book where pages > 500", "count Book where title == \"Café\"", "count Book where pages == 512"] {
            loaded.run(statement)
            paged.run(statement)
            XCTAssertEqual(lastReply(paged), lastReply(loaded), statement)
        }
        let reads = try XCTUnwrap(pagedHost.querySource as? PostgresPersistQuerySource).wholeReads
        XCTAssertEqual(reads.members["Book"], ["title", "pages"], "read again after the commit changed them")
        withExtendedLifetime((loadedHost, pagedHost)) {}
    }

    func testEditsInPagedModeCommitWhatLoadedEditsCommit() throws {
        let loadedURL = try PostgresPersistPagedTests.library("persist_edit_loaded", documentType: "jsonb")
        let pagedURL = try PostgresPersistPagedTests.library("persist_edit_paged", documentType: "jsonb")
        let original = try rows(pagedURL)
        let graph = try PostgresDatabase.load(url: pagedURL).graph
        func ids(_ type: String) -> [ObjectID] { graph.type(named: type)!.ids }
        let (loans, books, tags) = (ids("Loan"), ids("Book"), ids("Tag"))
        let statements = [
            "update Book where pages > 900 set pages = 900",
            "update Author where name BEGINSWITH \"A\" set country = \"Nowhere\", note = \"added\"",
            "delete Loan where id == \(loans[0])",
            "insert Author {name: \"Zoë Test\", born: 1950}",
            "update Loan where id == \(loans[1]) set book = #\(books[3])",
            "update Book where id == \(books[2]) set tags += #\(tags[1])",
            "delete Book where id == \(books[5])",
            "update Book where id == \(books[6]) set title = \"'); DROP TABLE by_type; --\"",
            ".undo", ".redo", ".undo", ".redo",
        ]
        let (loaded, loadedHost) = try loadedBrowser(postgres: loadedURL)
        let (paged, pagedHost) = pagedBrowser(postgres: try PostgresPersistPages.open(url: pagedURL))
        assertSameStaging(statements, loaded: loaded, paged: paged)
        XCTAssertEqual(try rows(pagedURL), original, "nothing is written before the commit")
        loaded.run(".commit")
        paged.run(".commit")
        XCTAssertTrue(lastReply(paged).hasPrefix("committed:"), paged.replOutput.suffix(3).joined(separator: "\n"))
        XCTAssertEqual(lastReply(paged), lastReply(loaded))
        XCTAssertEqual(try rows(pagedURL), try rows(loadedURL))
        XCTAssertNotEqual(try rows(pagedURL), original)
        // The catalog follows the commit: one author more, one loan and one book fewer.
        let before = Dictionary(uniqueKeysWithValues: graph.types.map { ($0.name.rawValue, $0.count) })
        let after = Dictionary(uniqueKeysWithValues: pagedHost.pages.catalog.map { ($0.name, $0.count) })
        XCTAssertEqual([after["Author"], after["Loan"], after["Book"]], [before["Author"]! + 1, before["Loan"]! - 1, before["Book"]! - 1])
        // Statements after the commit read the database as it is now.
        for question in ["count Author where note == \"added\"", "count Book where pages > 900"] {
            loaded.run(question)
            paged.run(question)
            XCTAssertEqual(paged.replOutput.last, loaded.replOutput.last, question)
        }
        withExtendedLifetime((loadedHost, pagedHost)) {}
    }

    func testAChangedObjectRefusesTheCommitAndKeepsTheEdits() throws {
        let url = try PostgresPersistPagedTests.library("persist_edit_conflict", documentType: "jsonb")
        let (paged, host) = pagedBrowser(postgres: try PostgresPersistPages.open(url: url))
        let book = try XCTUnwrap(PostgresDatabase.load(url: url).graph.type(named: "Book")?.ids.first?.description)
        paged.run("update Book where id == \(book) set title = \"Mine\"")
        XCTAssertEqual(pendingPart(paged), "pending +0 ~1 -0")
        let other = try PostgresConnection(url: url)
        _ = try other.query("BEGIN READ WRITE")
        XCTAssertEqual(try other.execute(#"UPDATE by_type SET json = jsonb_set(json, '{title}', '"Theirs"') WHERE id = $1"#, [book]), 1)
        _ = try other.query("COMMIT")
        paged.run(".commit")
        XCTAssertTrue(lastReply(paged).contains("nothing was written. Changed: Book #\(book).title is Theirs in the database"), lastReply(paged))
        XCTAssertEqual(pendingPart(paged), "pending +0 ~1 -0", "the edits stay pending")
        XCTAssertEqual(try other.query("SELECT json->>'title' FROM by_type WHERE id = $1", [book]).rows.first?.first, "Theirs")
        // Reloaded, the edit applies to the object as it is now and commits.
        paged.run(".reload")
        paged.run(".commit")
        XCTAssertTrue(lastReply(paged).hasPrefix("committed: 0 added, 1 changed"), paged.replOutput.suffix(3).joined(separator: "\n"))
        XCTAssertEqual(try other.query("SELECT json->>'title' FROM by_type WHERE id = $1", [book]).rows.first?.first, "Mine")
        withExtendedLifetime(host) {}
    }
}
