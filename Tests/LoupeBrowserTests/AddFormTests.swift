import Foundation
@testable import LoupeBrowser
import LoupeModel
import LoupeQuery
import LoupeStore
import LoupeTestSupport
import TerminalKit
import XCTest

/// `a`: a form of the type's fields that stages one insert, checked as the REPL checks one.
extension BrowserTests {
    func type(_ b: Browser, _ text: String) { for c in text { b.handle(.key(.character(c))) } }

    /// Chinook's Track: its fields with kinds, NOT NULL and the tables foreign keys point to; a
    /// required field left empty, and a key that names no row, are refused in the form; filled
    /// in, one insert is staged and the form closes.
    func testTheAddFormStagesOneInsertAndKeepsARefusalInTheForm() throws {
        let graph = try Self.chinook
        let b = browser(graph)
        b.run("Track where TrackId < 3")
        b.handle(.key(.escape))
        b.handle(.key(.backTab))
        for _ in 0..<14 { b.handle(.key(.character("j"))) }
        b.handle(.key(.tab))
        b.handle(.key(.character("a")))
        let form = try XCTUnwrap(b.form)
        XCTAssertEqual(form.fields.map(\.name), ["Name", "AlbumId", "MediaTypeId", "GenreId", "Composer", "Milliseconds", "Bytes", "UnitPrice"])
        XCTAssertEqual(form.fields.filter(\.required).map(\.name), ["Name", "MediaTypeId", "Milliseconds", "UnitPrice"])
        XCTAssertEqual(form.fields[2].note, "integer · NOT NULL · → MediaType · Ctrl-P picks")
        let screen = b.play([], width: 120, height: 30)
        XCTAssertTrue(screen.text.contains("New Track — Tab next · Ctrl-P picks"), screen.text)
        XCTAssertTrue(screen.text.contains("MediaTypeId*"), screen.text)
        type(b, "Ode")
        b.handle(.key(.control("s")))
        XCTAssertEqual(b.form?.error, "MediaTypeId is required (NOT NULL, no default)")
        XCTAssertNil(b.pendingChanges, "nothing staged")
        // Tab to each field in turn; a media type that does not exist is refused by its key.
        for (field, text) in [(2, "99"), (5, "1000"), (7, "0.99")] {
            while b.form!.selection != field { b.handle(.key(.tab)) }
            type(b, text)
        }
        b.handle(.key(.enter))   // the last field: stages
        XCTAssertNotNil(b.form, "refused: \(b.message)")
        XCTAssertTrue(b.form?.error?.contains("99") == true, b.form?.error ?? "")
        b.handle(.key(.up)); b.handle(.key(.up)); b.handle(.key(.up)); b.handle(.key(.up)); b.handle(.key(.up))
        XCTAssertEqual(b.form?.selection, 2)
        b.handle(.key(.backspace)); b.handle(.key(.backspace))
        type(b, "1")
        b.handle(.key(.control("s")))
        XCTAssertNil(b.form, b.form?.error ?? "")
        XCTAssertEqual(b.pendingChanges?.changes.counts.added, 1)
        XCTAssertTrue(b.message.hasPrefix("staged: insert Track { Name: \"Ode\", MediaTypeId: 1, Milliseconds: 1000, UnitPrice: 0.99 }"), b.message)
        let staged = try XCTUnwrap(b.pendingChanges?.graph)
        guard case .count(let n) = try QueryEngine(graph: staged).run("count Track where Name == \"Ode\" AND MediaType.Name == \"MPEG audio file\"") else { return XCTFail("a count") }
        XCTAssertEqual(n, 1)
    }

    /// A Persist type's to-one relations are fields too, filled with the target's key; Esc
    /// leaves without staging.
    func testTheAddFormLinksARelationByKeyAndEscLeaves() throws {
        let graph = try Self.sample
        let b = browser(graph)
        guard let bookType = graph.types.firstIndex(where: { $0.name.rawValue == "Book" }) else { return XCTFail("Book") }
        b.handle(.key(.backTab))
        for _ in 0..<bookType { b.handle(.key(.character("j"))) }
        b.handle(.key(.tab))
        b.handle(.key(.character("a")))
        let fields = try XCTUnwrap(b.form?.fields)
        XCTAssertEqual(fields.filter(\.isRelation).map(\.name), ["author", "publisher"])
        type(b, "A New Book")
        while b.form!.fields[b.form!.selection].name != "author" { b.handle(.key(.tab)) }
        // (Persist's keys are global: the first author's, whatever it is.)
        let author = try XCTUnwrap(graph.type(named: "Author")?.ids.first)
        type(b, "#\(author)")
        b.handle(.key(.control("s")))
        XCTAssertNil(b.form, b.form?.error ?? "")
        let staged = try XCTUnwrap(b.pendingChanges?.graph)
        XCTAssertEqual(try QueryEngine(graph: staged).run("Book where title == \"A New Book\" select author.id").render(.csv, graph: staged), "author.id\r\n\(author)\r\n")
        b.handle(.key(.character("a")))
        type(b, "Another")
        b.handle(.key(.escape))
        XCTAssertNil(b.form)
        XCTAssertEqual(b.message, "nothing added")
        XCTAssertEqual(b.pendingChanges?.changes.counts.added, 1)
    }

    /// Ctrl-P on a field that names an object opens the picker over its target's objects; a
    /// filter and Enter fill the field with the chosen one's key, and the insert links it.
    func testTheAddFormPicksAForeignKeyFromItsTargetsObjects() throws {
        let graph = try Self.chinook
        let b = browser(graph)
        b.handle(.key(.character("a")))   // a new Album: Title, ArtistId
        type(b, "Picked")
        b.handle(.key(.tab))
        b.handle(.key(.control("p")))
        let screen = b.play([], width: 120, height: 30)
        XCTAssertTrue(screen.text.contains("New Album.ArtistId — Enter sets"), screen.text)
        type(b, "aerosm")
        XCTAssertTrue(b.play([], width: 120, height: 30).text.contains("Artist #3 Aerosmith"))
        b.handle(.key(.enter))
        XCTAssertNil(b.picker)
        XCTAssertEqual(b.form?.fields[1].text, "3", "the chosen artist's key")
        XCTAssertEqual(b.form?.fields[0].text, "Picked", "the other field kept")
        b.handle(.key(.control("s")))
        XCTAssertNil(b.form, b.form?.error ?? "")
        let session = try XCTUnwrap(b.session)
        let album = try XCTUnwrap(session.engine.graph.type(named: "Album"))
        let row = try XCTUnwrap(album.liveRows.last)
        XCTAssertEqual(album.value(row: row, named: "Title"), .string("Picked"))
        XCTAssertEqual(album.relations.first { $0.name == "Artist" }?.targets(of: row).first.map { session.engine.graph.id(of: $0) }, .int(3))
        // A field that names no object says so; Esc in the picker leaves the form open.
        b.handle(.key(.character("a")))
        b.handle(.key(.control("p")))
        XCTAssertEqual(b.message, "Title names no object: type its value")
        b.handle(.key(.tab)); b.handle(.key(.control("p"))); b.handle(.key(.escape))
        XCTAssertNil(b.picker)
        XCTAssertNotNil(b.form, "Esc closes the picker only")
    }
}
