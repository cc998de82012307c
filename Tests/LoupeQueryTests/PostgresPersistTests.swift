import Foundation
import LoupeModel
import LoupePostgres
import LoupeQuery
import LoupeStore
import LoupeTestSupport
import XCTest

/// Persist's layout stored in PostgreSQL: a generated library copied into a database (documents
/// as `json`, and as `jsonb`) reads as the same graph the file does and answers the same.
final class PostgresPersistTests: XCTestCase {
    static let statements = [
        "count Book", "count Loan where book.author.born < 1920", "count Book where @links.Loan.book.@count >= 2",
        "Book group by language", "Author where @links.Book.author.@count > 4 sort by name, id limit 5 select name, born",
        "Book where ANY tags.label BEGINSWITH \"a\" sort by published desc, id limit 3 select title, published, price",
        "Member where favorites.@count > 2 sort by id limit 4 select name, address.city", "count Loan where returned == null",
    ]

    func testPersistLayoutInPostgresReadsAsTheFile() throws {
        let path = try Shared.temporaryPath("library.sqlite")
        try SampleGenerator.generate(path: path, objects: 2000, seed: 4)
        let file = try LoupeStore.LoadedStore.open(path).graph
        for documentType in ["json", "jsonb"] {
            let url = try PostgresServer.persistDatabase(copying: path, named: "persist_\(documentType)", documentType: documentType)
            let loaded = try PostgresDatabase.load(url: url)
            let graph = loaded.graph
            XCTAssertEqual(graph.formatName, "PostgreSQL (Persist layout)")
            XCTAssertEqual(graph.types.map(\.name.rawValue), file.types.map(\.name.rawValue), documentType)
            XCTAssertEqual(graph.types.map { $0.count }, file.types.map { $0.count }, documentType)
            XCTAssertEqual(graph.types.map { $0.relations.map { "\($0.name) \($0.isToMany)" } }, file.types.map { $0.relations.map { "\($0.name) \($0.isToMany)" } })
            for statement in Self.statements {
                XCTAssertEqual(try QueryEngine(graph: graph).run(statement).render(.json, graph: graph),
                               try QueryEngine(graph: file).run(statement).render(.json, graph: file), "\(documentType): \(statement)")
            }
            // `json` keeps the document's text, so whole objects print as the file's do.
            if documentType == "json" {
                let listing = "Book sort by id limit 3"
                XCTAssertEqual(try QueryEngine(graph: graph).run(listing).render(.json, graph: graph),
                               try QueryEngine(graph: file).run(listing).render(.json, graph: file))
            }
            XCTAssertEqual(try PostgresDatabase.catalog(url: url).map { $0.count }, file.types.map { $0.count })
            XCTAssertNil(try PostgresPushdown.run(try Parser.parse("count Book"), url: url), "the load answers Persist's layout")
            // Read-only, with the reason.
            let host = PostgresHost(url: url)
            let session = ReplSession(graph: graph, mode: .json)
            session.host = host
            XCTAssertTrue(session.execute("update Book set pages = 1").error?.contains("Persist's layout in PostgreSQL is read, not written") ?? false)
        }
    }
}
