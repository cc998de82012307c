import Foundation
import GRDB
import LoupeModel
import LoupeQuery
import LoupeSQL
import LoupeStore
import LoupeTestSupport
import XCTest

/// A statement's objects printed a part at a time (`loupe query` over a store read a page at a
/// time, where the answer may hold millions of objects): the parts print what one graph of them
/// all prints, in every mode, with attributes first seen in a late part, with documents that are
/// not objects, and with staged changes.
final class AnswerOutputTests: XCTestCase {
    /// A Persist store whose `Thing`s show attributes past the schema's sample: `late` first in
    /// the 300th document, `later` in the last, `never` only in a document that does not parse.
    static func store() throws -> String {
        try HostileFiles.make("parts.sqlite") { db in
            try HostileFiles.persistSchema(db)
            try db.inTransaction {
                for i in 1...400 {
                    var json = #"{"n": \#(i), "s": "name \#(i % 7)", "big": "\#(String(repeating: "w", count: i % 50))""#
                    if i == 300 { json += #", "late": true"# }
                    if i == 400 { json += #", "later": [1, 2]"# }
                    if i % 11 == 0 { json += #", "s": null"# }
                    json += "}"
                    if i == 350 { json = #"{"never": 1, oops"# }
                    if i == 351 { json = "[1, 2]" }
                    try db.execute(sql: "INSERT INTO by_type VALUES (?, 'Thing', ?)", arguments: [i, json])
                }
                try db.execute(sql: "INSERT INTO by_type VALUES (401, 'Other', '{\"x\": 1}')")
                return .commit
            }
        }
    }

    /// What `answer` prints in `mode`, `partSize` objects at a time.
    func printed(_ answer: SourceAnswer, _ pages: PageSource, _ mode: OutputMode, partSize: Int, staged: PagedChanges? = nil) throws -> String {
        let sink = OutputSink()
        try answer.write(mode, pages: pages, staged: staged, toTerminal: false, to: sink, partSize: partSize)
        return sink.text
    }

    /// A table with its rule line left out and runs of spaces made one: its cells, whatever the widths.
    func cells(_ table: String) -> [String] {
        table.split(separator: "\n", omittingEmptySubsequences: false).enumerated().filter { $0.offset != 1 }
            .map { $0.element.split(separator: " ").joined(separator: " ") }
    }

    func testObjectsPrintedInPartsAreOneGraphsObjects() throws {
        let pages = try PersistPages.open(try StoreFile.openForReading(try Self.store()))
        XCTAssertFalse(pages.schemaIsExact)
        let t = try XCTUnwrap(pages.catalog.firstIndex { $0.name == "Thing" })
        XCTAssertFalse(pages.types[t].attributes.contains("late"), "the sample shows the schema without the late attribute")
        // Sorted otherwise than by key, with a key of no object.
        let keys: [ObjectID] = (1...400).reversed().map { .int(Int64($0)) } + [.int(9_999)]
        let answer = SourceAnswer.objects(typeName: "Thing", keys: keys)
        XCTAssertEqual(try pages.attributeNames(type: t, keys: keys), ["n", "s", "big", "later", "late"], "in the order of the keys asked for")
        for mode in OutputMode.allCases {
            let whole = try printed(answer, pages, mode, partSize: .max)
            XCTAssertTrue(whole.contains("later"), "\(mode)")
            XCTAssertFalse(whole.contains("never"), "\(mode)")
            for partSize in [1, 7, 100] {
                let parts = try printed(answer, pages, mode, partSize: partSize)
                if mode == .table {
                    XCTAssertEqual(cells(parts), cells(whole), "\(mode) in parts of \(partSize)")
                } else {
                    XCTAssertEqual(parts, whole, "\(mode) in parts of \(partSize)")
                }
            }
        }
        // No object: the header alone, as for one graph.
        let none = SourceAnswer.objects(typeName: "Thing", keys: [.int(9_998), .int(9_999)])
        for mode in OutputMode.allCases {
            XCTAssertEqual(try printed(none, pages, mode, partSize: 1), try printed(none, pages, mode, partSize: .max), "\(mode)")
        }
    }

    /// A table printed in parts is aligned to its first part's widths: a wider cell later pushes
    /// the rest of its line right, and never runs into the next cell.
    func testTablePartsKeepTheFirstPartsWidths() throws {
        let pages = try PersistPages.open(try StoreFile.openForReading(try Self.store()))
        let answer = SourceAnswer.objects(typeName: "Thing", keys: [1, 2, 49].map { .int(Int64($0)) })
        XCTAssertEqual(try printed(answer, pages, .table, partSize: 1), """
            id  n  s       big
            --  -  ------  ---
            1   1  name 1  w
            2   2  name 2  ww
            49  49  name 0  \(String(repeating: "w", count: 49))

            """)
    }

    /// A relational file's objects printed by SQL a part at a time (``SQLPushdown/write``) print
    /// what its whole result prints: mixed kinds, blobs, a text key with a NULL, sorted by SQL,
    /// and a statement that fails prints nothing.
    func testRelationalObjectsPrintedInPartsAreTheWholeResult() throws {
        let file = try StoreFile.openForReading(try SQLEngineTests.makeFile())
        for statement in ["book", "book sort by title desc", "book where pages > 1 OR price < 10", "author sort by born", "Loan", "Loan where member != nil sort by due"] {
            let parsed = try Parser.parse(statement)
            let (result, graph) = try XCTUnwrap(try SQLPushdown.run(parsed, file: file), statement)
            for mode in OutputMode.allCases {
                let whole = result.render(mode, graph: graph)
                for partSize in [1, 2, 5] {
                    let sink = OutputSink()
                    XCTAssertTrue(try SQLPushdown.write(parsed, file: file, mode: mode, toTerminal: false, to: sink, partSize: partSize), statement)
                    if mode == .table {
                        XCTAssertEqual(cells(sink.text), cells(whole), "\(statement) in \(mode), parts of \(partSize)")
                    } else {
                        XCTAssertEqual(sink.text, whole, "\(statement) in \(mode), parts of \(partSize)")
                    }
                }
            }
        }
        let sink = OutputSink()
        XCTAssertThrowsError(try SQLPushdown.write(try Parser.parse("book where titel == 1"), file: file, mode: .json, toTerminal: false, to: sink, partSize: 1))
        XCTAssertEqual(sink.text, "")
    }

    /// Every table of Chinook (composite keys, dates, text) and of a file of awkward values
    /// (mixed kinds in a column, text keys, blobs, NULLs) printed by SQL in parts, whose rows go
    /// to the writer without a graph, prints what the objects of one graph print: in rowid
    /// order and sorted, in every mode.
    func testRowsPrintedWithoutAGraphAreTheLoadedObjects() throws {
        var answered = 0
        for path in [try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite"), try HostileFiles.awkwardRelational(people: 60, hub: 9)] {
            let file = try StoreFile.openForReading(path)
            let graph = try LoadedStore.open(path).graph
            for type in graph.types where type.count > 1 {
                let sorted = type.attributes.last.map { "\(type.name) sort by \($0.name) desc" }
                for statement in [type.name.rawValue] + (sorted.map { [$0] } ?? []) {
                    let parsed = try Parser.parse(statement)
                    // (A view, or a table keyed by position, is not answered by SQL.)
                    guard let (result, whole) = try SQLPushdown.run(parsed, file: file) else { continue }
                    answered += 1
                    let partSize = max(7, type.count / 3)
                    for mode in OutputMode.allCases where mode != .table {
                        let sink = OutputSink()
                        XCTAssertTrue(try SQLPushdown.write(parsed, file: file, mode: mode, toTerminal: false, to: sink, partSize: partSize), statement)
                        XCTAssertEqual(sink.text, result.render(mode, graph: whole), "\(statement) in \(mode), parts of \(partSize)")
                    }
                }
            }
        }
        XCTAssertGreaterThan(answered, 20)
    }

    /// With staged changes (an attribute set on one object, a new object), the parts print what
    /// one overlaid graph prints: the new attribute's column on every part.
    func testStagedChangesPrintedInParts() throws {
        let path = try Self.store()
        let pages = try PersistPages.open(try StoreFile.openForReading(path))
        var changes = try PagedChanges(pages: pages)
        let source = PersistQuerySource(pages: pages)
        for text in [#"update Thing where n == 5 set extra = "x""#, #"insert Thing {n: 1000, s: "new"}"#] {
            guard case .mutation(let mutation) = try Parser.parse(text) else { return XCTFail(text) }
            try changes.stage(mutation, source: text, storeKeys: { selection in
                guard case .objects(_, let keys)? = try source.answer(selection, isCancelled: { false }) else { return nil }
                return keys
            })
        }
        let inserted = try XCTUnwrap(changes.inserted(ofType: "Thing").first).id
        let answer = SourceAnswer.objects(typeName: "Thing", keys: (1...12).map { .int(Int64($0)) } + [inserted])
        for mode in OutputMode.allCases where mode != .table {
            let whole = try printed(answer, pages, mode, partSize: .max, staged: changes)
            XCTAssertTrue(whole.contains("extra") && whole.contains("new"), "\(mode): \(whole)")
            XCTAssertEqual(try printed(answer, pages, mode, partSize: 5, staged: changes), whole, "\(mode)")
        }
    }
}
