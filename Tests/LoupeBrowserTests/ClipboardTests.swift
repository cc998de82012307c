import Foundation
@testable import LoupeBrowser
import LoupeModel
import LoupeQuery
import LoupeStore
import LoupeTestSupport
import TerminalKit
import XCTest

/// `y`, `Y` and `E`: the browser asks its host for the clipboard and for an editor
/// (``TerminalRequest``); what it asks, and what it stages when the editor saves.
extension BrowserTests {
    func testYCopiesTheValueAndCapitalYTheRowAsJSON() throws {
        let graph = try Self.chinook
        let b = browser(graph)
        for key in "jl" { b.handle(.key(.character(key))) }
        b.handle(.key(.character("y")))
        XCTAssertEqual(b.takeRequests(), [.copy("Balls to the Wall")])
        XCTAssertEqual(b.message, "copied Album #2.Title (17 characters)")
        XCTAssertEqual(b.takeRequests(), [], "taken once")
        b.handle(.key(.character("Y")))
        let expected = try QueryEngine(graph: graph).run("Album where AlbumId == 2").render(.ndjson, graph: graph).trimmingCharacters(in: .newlines)
        XCTAssertEqual(b.takeRequests(), [.copy(expected)])
        XCTAssertTrue(expected.hasPrefix("{") && expected.contains("\"Title\": \"Balls to the Wall\""), expected)
        // A projection's row, and a value in the detail pane.
        b.run("Album sort by AlbumId limit 3 select AlbumId, Title")
        b.handle(.key(.character("Y")))
        XCTAssertEqual(b.takeRequests(), [.copy(#"{"AlbumId": 1, "Title": "For Those About To Rock We Salute You"}"#)])
        let detail = browser(graph)
        // (The detail pane starts on the first relation: two up is Title.)
        for key: Key in [.tab, .character("k"), .character("k"), .character("y")] { detail.handle(.key(key)) }
        XCTAssertEqual(detail.takeRequests(), [.copy("For Those About To Rock We Salute You")], detail.message + " \(detail.focus)")
    }

    /// `E` hands the value to the host's editor; what it saves is staged as the cell editor
    /// stages it, a refused text stays in the cell editor, an unsaved or unchanged one does nothing.
    func testEEditsTheValueInAnEditorAndStagesWhatItSaves() throws {
        let graph = try Self.chinook
        let b = browser(graph)
        for key in "jlE" { b.handle(.key(.character(key))) }
        guard case .edit(let edit)? = b.takeRequests().first else { return XCTFail("an edit request") }
        XCTAssertEqual(edit.text, "Balls to the Wall")
        XCTAssertEqual(edit.title, "Album #2.Title")
        b.finishExternalEdit(edit, text: nil)
        XCTAssertEqual(b.message, "not changed: the editor did not save")
        b.finishExternalEdit(edit, text: "Balls to the Wall")
        XCTAssertEqual(b.message, "not changed")
        XCTAssertNil(b.pendingChanges)
        b.finishExternalEdit(edit, text: "Balls to the Wall\nremastered")
        XCTAssertEqual(b.pendingChanges?.changes.counts.changed, 1)
        XCTAssertEqual(b.focus, .records, "back where it was")
        let staged = try XCTUnwrap(b.pendingChanges?.graph)
        XCTAssertEqual(staged.type(named: "Album")?.value(row: 1, named: "Title"), .string("Balls to the Wall\nremastered"))
        // An integer column given text: refused, the text kept in the cell editor to fix.
        for key in "lE" { b.handle(.key(.character(key))) }
        guard case .edit(let artist)? = b.takeRequests().first else { return XCTFail("an edit request") }
        b.finishExternalEdit(artist, text: "two")
        XCTAssertTrue(b.message.hasPrefix("refused:"), b.message)
        XCTAssertEqual(b.editor.text, "two")
        XCTAssertEqual(b.focus, .repl)
        // A key and a relation are not values to edit.
        let sample = browser(try Self.sample)
        sample.handle(.key(.character("E")))
        XCTAssertEqual(sample.takeRequests(), [])
        XCTAssertEqual(sample.message, "the key cannot be edited: it is the object's identity")
    }
}
