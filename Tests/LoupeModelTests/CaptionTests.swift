import LoupeModel
import XCTest

/// One caption rule for every store: which attribute names an object beside its key.
final class CaptionTests: XCTestCase {
    func caption(_ attributes: [(String, Value)]) -> String? {
        let builder = GraphBuilder(formatName: "test")
        let t = builder.type("Thing")
        let row = Int(builder.addObject(type: t, id: .int(1)).row)
        for (name, value) in attributes { builder.set(value, type: t, row: row, attribute: builder.attribute(name, of: t)) }
        let graph = builder.finish()
        return graph.types[0].caption(row: 0)
    }

    func testNamesBeatOtherTextAndPeopleReadAsFirstAndLast() {
        // A recipe is called by its name, not by the first text (its preparation time).
        XCTAssertEqual(caption([("prepTime", .string("20 min")), ("name", .string("Tarte Tatin"))]), "Tarte Tatin")
        XCTAssertEqual(caption([("ZNOTES", .string("x")), ("Title", .string("Dune")), ("label", .string("l"))]), "Dune")
        XCTAssertEqual(caption([("display_name", .string("Zoë")), ("email", .string("z@x.org"))]), "Zoë")
        XCTAssertEqual(caption([("FirstName", .string("Luís")), ("LastName", .string("Gonçalves")), ("Company", .string("Embraer"))]), "Luís Gonçalves")
        XCTAssertEqual(caption([("id_code", .int(3)), ("ArtistName", .string("AC/DC"))]), "AC/DC")
        // No naming attribute: the first non-empty text; none at all: nil.
        XCTAssertEqual(caption([("n", .int(1)), ("a", .string("")), ("b", .string("first"))]), "first")
        XCTAssertNil(caption([("n", .int(1))]))
        // A naming attribute left empty falls back to the first text.
        XCTAssertEqual(caption([("note", .string("kept")), ("name", .string(""))]), "kept")
    }
}
