import Foundation
import LoupeTestSupport
import XCTest

/// `loupe schema FILE --format mermaid|dot`: what each draws of real stores (Chinook's join table,
/// a Core Data model's subentities, inferred relations), that Graphviz's `dot` takes every graph,
/// and that every Mermaid line is in the grammar GitHub's renderer reads, hostile names included.
final class SchemaDiagramTests: XCTestCase {
    func testChinookDrawsKeysCardinalitiesAndItsJoinTableAsManyToMany() throws {
        let chinook = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let mermaid = try draw(chinook, "mermaid")
        XCTAssertTrue(mermaid.contains("        integer AlbumId PK \"INTEGER\"\n        string Title \"NVARCHAR(160)\"\n        integer ArtistId FK \"INTEGER\"\n"), mermaid)
        XCTAssertTrue(mermaid.contains("    Album }o--|| Artist : \"Artist\""), "a NOT NULL foreign key is exactly one")
        XCTAssertTrue(mermaid.contains("    Track }o--o| Genre : \"Genre\""), "a nullable one is at most one")
        XCTAssertTrue(mermaid.contains("    Employee }o--o| Employee : \"ReportsTo\""))
        XCTAssertTrue(mermaid.contains("    Track }o--o{ Playlist : \"via PlaylistTrack\""), mermaid)
        XCTAssertFalse(mermaid.contains("PlaylistTrack {"), "a join table is the line between the types it joins")
        let dot = try draw(chinook, "dot")
        XCTAssertTrue(dot.contains("<b>Track</b> (3503)"), dot)
        XCTAssertTrue(dot.contains("dir=both, arrowhead=crow, arrowtail=crow, label=\"via PlaylistTrack\""), dot)
        // One type: it and the types its lines reach.
        let track = try draw(chinook, "mermaid", type: "track")
        XCTAssertEqual(Set(entities(track)), ["Album", "Genre", "InvoiceLine", "MediaType", "Playlist", "Track"])
    }

    func testCoreDataSubentitiesInheritAndInferredRelationsAreDashed() throws {
        let notes = try Shared.fixture("make_coredata_fixture.py", "notes.sqlite")
        let mermaid = try draw(notes, "mermaid")
        XCTAssertTrue(mermaid.contains("    ChecklistNote |o--|| Note : \"inherits\""), mermaid)
        XCTAssertTrue(mermaid.contains("    ChecklistNote {\n        integer doneCount \"Integer, optional\"\n    }"), "a subentity shows what it adds")
        XCTAssertTrue(mermaid.contains("    Folder }o--o{ Item : \"items\""))
        XCTAssertFalse(mermaid.contains("Folder }o--o{ Note"), "a line to a parent stands for its subentities")
        XCTAssertTrue(try draw(notes, "dot").contains("t3 -> t2 [arrowhead=empty, label=\"inherits\"]"))
        let recipes = try draw(try Shared.copy("realdata/coredata/apple_recipes/Recipes.sqlite"), "mermaid")
        XCTAssertTrue(recipes.contains("    Ingredient }o..o| Recipe : \"recipe (inferred)\""), recipes)
    }

    func testEveryGraphParsesAndNoNameActsOnTheTerminal() throws {
        let stores = [try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite"), try Shared.copyFromCheckout("sample-data/library.sqlite"),
                      try Shared.fixture("make_coredata_fixture.py", "notes.sqlite"), try HostileFiles.hostileNames(),
                      try Shared.copy("fixtures/seed-formats/persistdb.sqlite"), try Shared.copy("realdata/coredata/surfjournal/SurfJournalModel.sqlite")]
        for store in stores {
            let dot = try draw(store, "dot")
            let rendered = try Self.graphviz(dot)
            XCTAssertEqual(rendered.status, 0, "dot refused the graph of \(store): \(rendered.stderr)\n\(dot)")
            XCTAssertTrue(rendered.stdout.contains("<svg"), store)
            let mermaid = try draw(store, "mermaid")
            XCTAssertEqual(Self.unparsed(mermaid), [], store)
            XCTAssertEqual(Set(entities(mermaid)).count, entities(mermaid).count, "each entity once")
        }
        // Over the memory budget: the store's schema with attributes from a sample, the same lines.
        let library = try Shared.copyFromCheckout("sample-data/library.sqlite")
        let paged = try LoupeBinary.run(["schema", library, "--format", "mermaid", "--memory-budget", "1K"])
        XCTAssertEqual(paged.status, 0, paged.stderr)
        XCTAssertEqual(paged.stdout, try draw(library, "mermaid") + "\n")
        let unknown = try LoupeBinary.run(["schema", library, "Boook", "--format", "dot"])
        XCTAssertEqual(unknown.status, 1)
        XCTAssertEqual(unknown.stderr, "Error: unknown type 'Boook' (did you mean 'Book'?)\n")
    }

    /// `loupe schema STORE [TYPE] --format FORMAT`'s output (checked free of terminal controls).
    private func draw(_ store: String, _ format: String, type: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let run = try LoupeBinary.run(["schema", store] + (type.map { [$0] } ?? []) + ["--format", format])
        XCTAssertEqual(run.status, 0, run.stderr, file: file, line: line)
        XCTAssertFalse(run.stdout.hasTerminalControl, file: file, line: line)
        return String(run.stdout.dropLast())
    }

    /// The entity names a Mermaid diagram declares.
    private func entities(_ mermaid: String) -> [String] {
        mermaid.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(" {") else { return nil }
            return String(line.dropFirst(4).dropLast(2).prefix { $0 != "[" })
        }
    }

    /// The lines of a Mermaid ER diagram outside the grammar (entities declared before the
    /// lines that name them): what GitHub's renderer would refuse.
    static func unparsed(_ mermaid: String) -> [String] {
        let id = "[A-Za-z_][A-Za-z0-9_]*", quoted = "\"[^\"\\n]*\""
        let header = try! NSRegularExpression(pattern: "^    (\(id))(\\[\(quoted)\\])? \\{$")
        let attribute = try! NSRegularExpression(pattern: "^        \(id) \(id)( (PK|FK|PK, FK))?( \(quoted))?$")
        let edge = try! NSRegularExpression(pattern: "^    (\(id)) (\\|o|\\|\\||\\}o)(--|\\.\\.)(o\\||\\|\\||o\\{) (\(id)) : \(quoted)$")
        var declared: Set<String> = [], bad: [String] = []
        func groups(_ r: NSRegularExpression, _ line: String) -> [String]? {
            guard let m = r.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) else { return nil }
            return (0..<m.numberOfRanges).map { Range(m.range(at: $0), in: line).map { String(line[$0]) } ?? "" }
        }
        for (n, line) in mermaid.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).enumerated() {
            if n == 0 { if line != "erDiagram" { bad.append(line) }; continue }
            if let g = groups(header, line) { declared.insert(g[1]) } else if line == "    }" || groups(attribute, line) != nil {
            } else if let g = groups(edge, line), declared.contains(g[1]), declared.contains(g[5]) {
            } else { bad.append(line) }
        }
        return bad
    }

    /// `dot -Tsvg` run on `graph` (written to a file, its picture and messages read back).
    static func graphviz(_ graph: String) throws -> (status: Int32, stdout: String, stderr: String) {
        let input = try Shared.temporaryPath("schema.dot")
        try graph.write(toFile: input, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "dot -Tsvg \"$0\" > \"$0.svg\" 2> \"$0.err\"", input]
        try process.run()
        process.waitUntilExit()
        let read = { (suffix: String) in (try? String(contentsOfFile: input + suffix, encoding: .utf8)) ?? "" }
        return (process.terminationStatus, read(".svg"), read(".err"))
    }
}
