import DisplayText
import Foundation
import LoupeModel
import XCTest

/// The graph's tables, dates, renderings and name suggestions.
final class ModelTests: XCTestCase {
    func testGraphKeepsStoreOrderRelationOrderAndBacklinks() throws {
        let b = GraphBuilder(formatName: "test")
        let author = b.type("Author"), book = b.type("Book")
        let a1 = b.addObject(type: author, id: .int(1)), a2 = b.addObject(type: author, id: .string("x"))
        let books = (10..<14).map { b.addObject(type: book, id: .int(Int64($0))) }
        let wrote = b.relation("books", of: author)
        for i in [2, 0, 3] { b.addEdge(from: a1, relation: wrote, to: books[i]) }
        b.addEdge(from: a2, relation: wrote, to: books[0])
        let by = b.relation("author", of: book)
        b.addEdge(from: books[0], relation: by, to: a1)
        let title = b.attribute("title", of: book)
        b.set(.string("T"), type: book, row: 1, attribute: title)
        b.set(.null, type: book, row: 2, attribute: title)
        let graph = b.finish()
        let authors = try XCTUnwrap(graph.type(named: "author"), "case-insensitive when unique")
        let relation = authors.relations[0]
        XCTAssertTrue(relation.isToMany)
        XCTAssertEqual(relation.targets(of: 0).map { graph.id(of: $0) }, [.int(12), .int(10), .int(13)], "targets keep their order")
        XCTAssertFalse(graph.type(named: "Book")!.relations[0].isToMany)
        let backlinks = graph.backlinks(of: books[0])
        XCTAssertEqual(backlinks.map(\.key), ["Author.books"])
        XCTAssertEqual(backlinks[0].sources.map { graph.id(of: $0) }, [.int(1), .string("x")], "sources in store order")
        XCTAssertEqual(graph.ref(type: authors, id: .string("x")), a2)
        XCTAssertEqual(graph.label(of: a2), "Author #\"x\"")
        let column = graph.type(named: "Book")!.attributes[0]
        XCTAssertEqual(column.presentCount, 2, "a stored null counts as present, a missing value does not")
        XCTAssertEqual(column.kinds, [.string, .null])
        XCTAssertEqual(Array(column.values), [.null, .string("T"), .null, .null])
    }

    func testDateTextReadsTheStoredFormsAndWritesPersistAndISO() {
        let d = Date(timeIntervalSince1970: 1_586_828_459)   // 2020-04-14T01:40:59Z
        for text in ["2020-04-14T01:40:59Z", "2020-04-14 01:40:59 Z", "2020-04-13 21:40:59 -04:00", "2020-04-14T03:40:59+02:00",
                     "2020-04-14 01:40:59", "2020-04-14T01:40:59.000Z", "2020-04-14T03:40:59+0200"] {
            XCTAssertEqual(DateText.parse(text), d, text)
        }
        XCTAssertEqual(DateText.parse("2024-01-31"), Date(timeIntervalSince1970: 1_706_659_200))
        // … and no date outside the years 1–9999, which iso(_:) could not write back.
        for bad in ["2024-13-01", "2024-01-31T25:00", "yesterday", "2024-01-31Tx", "2024-01-31 10:00:00 +5", "0000-02-01", "0001-01-01T00:30:00+01:00"] {
            XCTAssertNil(DateText.parse(bad), bad)
        }
        XCTAssertEqual(DateText.persist(d), "2020-04-14 01:40:59 Z")
        XCTAssertEqual(DateText.iso(d), "2020-04-14T01:40:59Z")
        XCTAssertEqual(DateText.iso(Date(timeIntervalSince1970: -86400.5)), "1969-12-30T23:59:59.500Z")
        XCTAssertEqual(DateText.iso(Date(timeIntervalSince1970: -62_135_596_800)), "0001-01-01T00:00:00Z")
        XCTAssertEqual(DateText.iso(Date(timeIntervalSince1970: 253_402_300_799.25)), "9999-12-31T23:59:59.250Z")
        XCTAssertEqual(DateText.persist(d, offsetMinutes: -240), "2020-04-13 21:40:59 -04:00")
        XCTAssertEqual(DateText.persist(d, offsetMinutes: 330), "2020-04-14 07:10:59 +05:30")
        XCTAssertEqual(DateText.sqlite(d, dateOnly: false), "2020-04-14 01:40:59")
        XCTAssertEqual(DateText.sqlite(Date(timeIntervalSince1970: 1_706_659_200), dateOnly: true), "2024-01-31")
        XCTAssertEqual(DateText.sqlite(Date(timeIntervalSince1970: 1_706_659_200.007), dateOnly: true), "2024-01-31 00:00:00.007")
    }

    func testRenderingsEscapeWhatTheyMust() {
        XCTAssertEqual(ValueFormatter.json(.string("a\"b\\c\n\u{1}é")), "\"a\\\"b\\\\c\\n\\u0001é\"")
        XCTAssertEqual(ValueFormatter.json(.array([.int(1), .double(2.5), .double(3), .bool(true), .null])), "[1, 2.5, 3.0, true, null]")
        XCTAssertEqual(ValueFormatter.json(.object(NestedObject([("b", .int(1)), ("a", .string("x"))]))), "{\"b\": 1, \"a\": \"x\"}")
        XCTAssertEqual(ValueFormatter.plain(.data(Data([1, 2, 3]))), "<3 bytes>")
        XCTAssertEqual(DisplayText.escaped("red\u{1B}[31m\tbell\u{7}"), "red\\u{1B}[31m\\tbell\\u{7}")
        XCTAssertEqual(DisplayText.width(of: "漢字 🚀 e\u{301}"), 4 + 1 + 2 + 1 + 1)
    }

    func testOneEscapingAndWidthRuleForEveryOutput() {
        // Controls, DEL, C1 and separators: escapes.
        XCTAssertEqual(DisplayText.escaped("a\u{0}b\u{7F}c\u{85}d\u{2028}e"), "a\\u{0}b\\u{7F}c\\u{85}d\\u{2028}e")
        // Format characters: bidi overrides and isolates, zero-width spaces and joiners, soft hyphen, tags.
        for u in ["\u{202E}", "\u{2066}", "\u{200E}", "\u{061C}", "\u{200B}", "\u{200D}", "\u{2060}", "\u{FEFF}", "\u{AD}", "\u{E0041}"] {
            let escaped = DisplayText.escaped("x" + u + "y")
            XCTAssertTrue(escaped.hasPrefix("x\\u{") && escaped.hasSuffix("}y"), escaped)
            XCTAssertEqual(DisplayText.width(of: "x" + u + "y"), DisplayText.width(of: escaped), "width is the width of what is shown")
        }
        // A combining mark at the start would join whatever cell is left of it: escaped; inside a text it joins its base.
        XCTAssertEqual(DisplayText.escaped("\u{301}e"), "\\u{301}e")
        XCTAssertEqual(DisplayText.escaped("e\u{301}"), "e\u{301}")
        XCTAssertEqual(DisplayText.width(of: "e\u{301}"), 1)
        // Wide and emoji characters take two cells; variation selector 16 makes a symbol an emoji.
        XCTAssertEqual(DisplayText.width(of: "漢字한글ｱ"), 2 + 2 + 2 + 2 + 1)
        XCTAssertEqual(DisplayText.width(of: "🚀✅"), 4)
        XCTAssertEqual(DisplayText.width(of: "©\u{FE0F}"), 2)
        // Fitting and padding: exactly the width asked, `…` when cut, never half a wide character.
        XCTAssertEqual(DisplayText.fit("abcdef", width: 4), "abc…")
        XCTAssertEqual(DisplayText.fit("漢字漢字", width: 5), "漢字…")
        XCTAssertEqual(DisplayText.pad("漢", to: 4), "漢  ")
        XCTAssertEqual(DisplayText.padLeft("7", to: 3), "  7")
        XCTAssertEqual(DisplayText.fit("a\u{1B}[31m", width: 20), "a\\u{1B}[31m")
        XCTAssertEqual(DisplayText.width(of: DisplayText.fitFromEnd("Album › Album #3 › Artist", width: 12)), 12)
        XCTAssertTrue(DisplayText.fitFromEnd("Album › Album #3 › Artist", width: 12).hasSuffix("Artist"))
        // JSON keeps the data and shows nothing a terminal acts on.
        XCTAssertEqual(ValueFormatter.json(.string("\u{202E}\u{85}\u{1F600}")), "\"\\u202e\\u0085\u{1F600}\"")
        XCTAssertEqual(ValueFormatter.json(.string("\u{E0041}")), "\"\\udb40\\udc41\"")
    }

    func testNameSuggestions() {
        XCTAssertEqual(NameSuggestion.closest(to: "titel", in: ["title", "pages", "author"]), "title")
        XCTAssertEqual(NameSuggestion.closest(to: "Trak", in: ["Track", "Album"]), "Track")
        XCTAssertNil(NameSuggestion.closest(to: "zzz", in: ["title", "pages"]))
    }
}

/// Columns of one kind held compactly read and write exactly as arrays of values do.
final class ColumnValuesTests: XCTestCase {
    func testCompactColumnsReadAndWriteAsValues() {
        let date = Date(timeIntervalSinceReferenceDate: 123.456)
        let cases: [[Value]] = [
            [.int(1), .null, .int(-5), .int(.max)], [.double(1.5), .double(-0.0), .null], [.date(date), .null, .date(.distantPast)],
            [.string("a"), .string(""), .null, .string("ünïcode ✓")], [.bool(true), .bool(false), .null], [.null, .null],
            [.int(1), .double(2)], [.string("x"), .array([.int(1)])], (0..<200).map { $0 % 7 == 0 ? .null : .int(Int64($0)) },
        ]
        for values in cases {
            var column = ColumnValues(values)
            column.compact()
            XCTAssertEqual(Array(column), values)
            XCTAssertEqual(column, ColumnValues(values))
            let kinds = Set(values.filter { !$0.isNull }.map(\.kind.rawValue))
            XCTAssertEqual(column.isCompact, kinds.count == 1, "\(values)")
            // Writes of the same kind, of null, and of another kind; then appends.
            var expected = values
            for (row, value) in [(0, values.first { !$0.isNull } ?? .null), (1, .null), (0, .string("other kind")), (1, .int(9))] where row < values.count {
                column[row] = value
                expected[row] = value
                XCTAssertEqual(Array(column), expected, "\(values) after writing \(value) at \(row)")
            }
            column.append(.int(3))
            column.append(contentsOf: [.null, .string("z")])
            expected += [.int(3), .null, .string("z")]
            XCTAssertEqual(Array(column), expected)
            column.compact()
            XCTAssertEqual(Array(column), expected)
        }
        // A null written into a compact column, and taken back out.
        var ints = ColumnValues((0..<130).map { .int(Int64($0)) })
        ints.compact()
        XCTAssertTrue(ints.isCompact)
        ints[129] = .null
        XCTAssertEqual(ints[129], .null)
        XCTAssertTrue(ints.isCompact, "a null stays compact")
        ints[129] = .int(7)
        XCTAssertEqual(ints[129], .int(7))
        XCTAssertEqual(ints[128], .int(128))
    }

    /// A reader's columns: null rows held in no memory until the first value, the first value's
    /// kind from then on, halves appended and trimmed as they are held.
    func testReaderColumnsAppendAndTrimAsValues() {
        let samples: [[Value]] = [
            [.int(1), .null, .int(3)], [.string("a"), .null], [.double(0.5)], [.date(Date(timeIntervalSinceReferenceDate: 9))],
            [.bool(true), .null], [.null, .null], [.int(1), .string("mixed")], [], (0..<150).map { $0 % 3 == 0 ? .null : .int(Int64($0)) },
        ]
        func built(_ values: [Value], capacity: Int) -> ColumnValues {
            var c = ColumnValues(nulls: capacity)
            for (row, v) in values.enumerated() where !v.isNull { c[row] = v }
            return c
        }
        for a in samples {
            for b in samples {
                // Built with spare capacity, trimmed to the rows read, then the halves joined.
                var first = built(a, capacity: a.count + 70), second = built(b, capacity: b.count + 3)
                first.removeLast(first.count - a.count)
                second.removeLast(second.count - b.count)
                XCTAssertEqual(Array(first), a)
                XCTAssertEqual(Array(second), b)
                first.append(second)
                XCTAssertEqual(Array(first), a + b, "\(a) + \(b)")
                first.append(ColumnValues(nulls: 65))
                XCTAssertEqual(Array(first), a + b + Array(repeating: .null, count: 65))
                first.compact()
                XCTAssertEqual(Array(first), a + b + Array(repeating: .null, count: 65))
            }
        }
    }

    func testAFinishedGraphHoldsColumnsOfOneKindCompactly() {
        let builder = GraphBuilder(formatName: "test")
        let t = builder.type("Book")
        builder.addObjects(type: t, ids: (1...3).map { ObjectID.int($0) })
        let pages = builder.attribute("pages", of: t), title = builder.attribute("title", of: t), mixed = builder.attribute("mixed", of: t)
        for row in 0..<3 {
            builder.set(.int(Int64(row * 100)), type: t, row: row, attribute: pages)
            if row != 1 { builder.set(.string("t\(row)"), type: t, row: row, attribute: title) }
            builder.set(row == 0 ? .int(1) : .string("x"), type: t, row: row, attribute: mixed)
        }
        let graph = builder.finish()
        let book = graph.types[0]
        XCTAssertTrue(book.attributes[pages].values.isCompact)
        XCTAssertTrue(book.attributes[title].values.isCompact)
        XCTAssertFalse(book.attributes[mixed].values.isCompact)
        XCTAssertEqual((0..<3).map { book.value(row: $0, attribute: title) }, [.string("t0"), .null, .string("t2")])
        XCTAssertEqual((0..<3).map { book.value(row: $0, attribute: pages) }, [.int(0), .int(100), .int(200)])
    }
}
