import Foundation
import GRDB
import LoupeBrowser
import LoupeModel
import LoupeQuery
import LoupeSQL
import LoupeStore
import LoupeTestSupport
import TerminalKit
import XCTest

/// Paged mode against the whole graph: the same keys pressed in a browser on the loaded graph and
/// in one reading the store a window at a time give the same screens (all but the status line),
/// on stores with and without Loupe's indexes, with awkward rows, and with windows and link cuts
/// small enough that every walk crosses them.
final class PagedBrowsingTests: XCTestCase {
    /// Keys a walk presses: moves, pages, ends, opening and going back, panes (the REPL skipped),
    /// columns, and the relation graph. Commands paged mode refuses are not among them.
    static let keys: [Key] = [.character("j"), .character("j"), .character("j"), .character("k"), .pageDown, .pageUp, .end, .home,
                              .enter, .enter, .backspace, .tab, .backTab, .character("l"), .character("h"), .character("v"), .escape]

    func testPagedScreensAreTheLoadedGraphs() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 3_000, seed: 11)
        for seed in UInt64(1)...10 { try walk(path, seed: seed, count: 120, edgesPerObject: Int(seed % 3) + 1, windowRows: 40) }
        try walk(path, seed: 7, count: 120, edgesPerObject: 2_000, windowRows: 300)
    }

    /// `F` in paged mode counts a whole type's column over the store: the same table as over the
    /// loaded graph, the same order after `s`/`S`, and Enter opens the same objects.
    func testFrequencyTablesCountTheWholeType() throws {
        for awkward in [false, true] {
            let path = try Shared.temporaryPath()
            try SampleGenerator.generate(path: path, objects: 700, seed: 14)
            if awkward { try HostileFiles.addAwkwardPersistRows(path) }
            let graph = try LoadedStore.open(path).graph
            for (t, type) in graph.types.enumerated() where type.count > 0 {
                for column in 0...type.attributes.count {
                    // Sorted both ways on one type (each sort is the same code for every column).
                    for after in type.name.rawValue == "Book" ? [[Key](), [.character("S")], [.character("h"), .character("s")]] : [[Key]()] {
                        let whole = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
                        whole.attach(graph)
                        let paged = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
                        paged.attachPaged(try PersistPages.open(try StoreFile.openForReading(path)))
                        let keys: [Key] = [.backTab] + Array(repeating: .character("j"), count: t) + [.tab]
                            + Array(repeating: .character("l"), count: column) + [.character("F")] + after + [.character("j"), .enter, .character("j")]
                        if !assertSameScreens(whole, paged, keys: keys, "\(type.name) column \(column) awkward \(awkward)") { return }
                    }
                }
            }
        }
    }

    /// `s`/`S` in paged mode sort a whole type or a filter's objects over the store as the loaded
    /// browser sorts them (stably: a second sort keeps the first's order for its ties), on every
    /// column, awkward rows included; `F` still counts the sorted type; a relation's objects
    /// are refused with a message.
    func testSortingPagedLists() throws {
        for awkward in [false, true] {
            let path = try Shared.temporaryPath()
            try SampleGenerator.generate(path: path, objects: 800, seed: 19)
            if awkward { try HostileFiles.addAwkwardPersistRows(path) }
            let graph = try LoadedStore.open(path).graph
            func browsers() throws -> (Browser, Browser) {
                let whole = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
                whole.attach(graph)
                let pages = try PersistPages.open(try StoreFile.openForReading(path))
                let paged = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
                paged.attachPaged(pages, querySource: PersistQuerySource(pages: pages))
                return (whole, paged)
            }
            for (t, type) in graph.types.enumerated() where type.count > 0 {
                // The key, each attribute, and the first relation column (if any).
                let shown = try browsers().0
                for key in [Key.backTab] + Array(repeating: .character("j"), count: t) + [.tab] { shown.handle(.key(key)) }
                let columns = min(type.attributes.count + 2, shown.stack.last!.columns(graph: graph).count)
                /// Relations are not sorted over the store, nor, where its relation rows cannot be
                /// joined as a load joins them (awkward rows), a name that is a relation's too;
                /// collections are (the engine a chunk of objects at a time).
                func sortable(_ column: Int) -> Bool {
                    let kinds = column == 0 ? ValueKind.integer : column <= type.attributes.count ? type.attributes[column - 1].kinds : .reference
                    let alsoRelation = column > 0 && column <= type.attributes.count && type.relations.contains { $0.name == type.attributes[column - 1].name }
                    return !kinds.contains(.reference) && !(awkward && alsoRelation)
                }
                for column in 0..<columns {
                    let (whole, paged) = try browsers()
                    let label = "\(type.name) column \(column) awkward \(awkward)"
                    let keys: [Key] = [.backTab] + Array(repeating: .character("j"), count: t) + [.tab] + Array(repeating: .character("l"), count: column)
                    if !assertSameScreens(whole, paged, keys: keys, label) { return }
                    guard sortable(column) else {
                        paged.handle(.key(.character("s")))
                        XCTAssertTrue(paged.message.hasPrefix("cannot sort by"), "\(label): \(paged.message)")
                        continue
                    }
                    // Then descending by the next sortable column: ties keep the first sort's order.
                    let next = ((column + 1)..<columns).first(where: sortable) ?? (0..<column).first(where: sortable) ?? column
                    let move: [Key] = next > column ? Array(repeating: .character("l"), count: next - column) : Array(repeating: .character("h"), count: column - next)
                    if !assertSameScreens(whole, paged, keys: [.character("s"), .character("j")] + move + [.character("S"), .end, .character("k")], label) { return }
                    XCTAssertEqual(paged.message, whole.message, label)
                }
            }
            // A filter's objects, sorted twice; then F on a sorted whole type.
            let (whole, paged) = try browsers()
            for b in [whole, paged] { b.run("Book where pages > 300") }
            XCTAssertTrue(assertSameScreens(whole, paged, keys: [.character("l"), .character("l"), .character("S"), .character("l"), .character("s"), .pageDown], "filter"))
            let (wholeType, pagedType) = try browsers()
            XCTAssertTrue(assertSameScreens(wholeType, pagedType, keys: [.tab, .character("l"), .character("s"), .character("F"), .character("j"), .enter], "F after s"))
        }
        // A relation's objects are listed in the relation's order: not sorted in paged mode.
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 300, seed: 20)
        let pages = try PersistPages.open(try StoreFile.openForReading(path))
        let paged = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
        paged.attachPaged(pages, querySource: PersistQuerySource(pages: pages))
        paged.run("Book where @links.Loan.book.@count > 2 sort by title")
        paged.handle(.key(.character("s")))
        XCTAssertEqual(paged.message, "paged mode sorts a whole type or a filter's objects; add `sort by id` to the statement")
    }

    /// `I` on an attribute column keeps its order in Loupe's cache (after the relation index,
    /// which the first `I` builds): a slow sort says so, and sorts by it then show what the
    /// loaded browser shows. The store is never written.
    func testIKeepsAColumnsOrderForSorts() throws {
        let scratch = ScratchCache()
        defer { scratch.restore() }
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 900, seed: 22)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let graph = try LoadedStore.open(path).graph
        let book = try XCTUnwrap(graph.types.firstIndex { $0.name.rawValue == "Book" })
        let price = try XCTUnwrap(graph.types[book].attributes.firstIndex { $0.name == "price" }) + 1
        let whole = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
        whole.attach(graph)
        let pages = try PersistPages.open(try StoreFile.openForReading(path))
        let paged = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
        paged.attachPaged(pages, querySource: PersistQuerySource(pages: pages))
        paged.relationIndexHintSeconds = 0
        let moves: [Key] = [.backTab] + Array(repeating: .character("j"), count: book) + [.tab] + Array(repeating: .character("l"), count: price)
        XCTAssertTrue(assertSameScreens(whole, paged, keys: moves + [.character("s")], "sorted by documents"))
        XCTAssertTrue(paged.message.hasPrefix("sorted by price ascending ("), paged.message)
        XCTAssertTrue(paged.message.hasSuffix("s: I keeps price's order in Loupe's cache for faster sorts)"), paged.message)
        paged.handle(.key(.character("I")))
        XCTAssertEqual(paged.message, "relation index built in Loupe's cache: pages and statements read relation rows by key")
        paged.handle(.key(.character("I")))
        XCTAssertEqual(paged.message, "the order of Book.price is kept in Loupe's cache: sorts by it read ranks, not documents")
        XCTAssertEqual(paged.querySource?.sortIndexes(typeName: "Book"), ["price"])
        paged.handle(.key(.character("I")))
        XCTAssertEqual(paged.message, "the order of Book.price is kept already: sorts by it read it")
        XCTAssertTrue(assertSameScreens(whole, paged, keys: [.character("S"), .character("j"), .character("h"), .character("s"), .character("l"), .character("S")], "sorted by ranks"))
        XCTAssertEqual(paged.message, "sorted by price descending")
        XCTAssertTrue(assertSameScreens(whole, paged, keys: [.pageDown, .end], "sorted by ranks"))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
    }

    /// Statements in paged mode without SQL: counts, filters, sorts, projections and groups on
    /// a type's own attributes are answered over the store a chunk at a time (the same count,
    /// the same objects in the same view as over the loaded graph); others are refused with a
    /// message, and nothing is run.
    func testStatementsOnAttributesAreAnsweredOverTheStore() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 9_000, seed: 15)   // more than one chunk of Loan
        try HostileFiles.addAwkwardPersistRows(path)
        let graph = try LoadedStore.open(path).graph
        let statements = [
            "count Book", "count Loan where renewals > 1 AND returned == nil", "count book where title CONTAINS[cd] \"e\"",
            "Book where pages > 500 AND price < 20", "Loan where due < borrowed OR renewals BETWEEN {2, 3}",
            "Member where email ENDSWITH \".org\" AND address.city != nil", "Book where keywords.@count >= 2 AND ANY keywords == \"storm\"",
            "Review where text MATCHES \".*[0-9].*\"", "Book where title LIKE \"*a*\"", "count Odd where TRUEPREDICATE",
            "Book where titel == \"x\"", "Member where address.city.nothing == 1", "count Loan where renewals.@count > 1",
        ]
        for statement in statements { try assertSameAnswer(statement, graph: graph, path: path, pushedDown: false) }
        // Sorts, distincts, projections and groups on the type's own attributes too.
        for statement in ["Loan where renewals * 2 > 2 sort by due desc, id limit 30", "Book sort by language distinct language",
                          "Book where pages > 300 sort by price desc select title, price * 2 as twice", "Loan where renewals + 0 > 0 group by renewals"] {
            try assertSameAnswer(statement, graph: graph, path: path, pushedDown: false, lines: Self.comparedLines(statement))
        }
        // Relations and backlinks need the whole graph.
        let paged = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
        paged.attachPaged(try PersistPages.open(try StoreFile.openForReading(path)))
        for statement in ["count Loan where book.pages > 100", "Book where @links.Loan.book.@count > 1", "Loan sort by book.title", "Book select title, author.name"] {
            paged.run(statement)
            XCTAssertTrue(paged.replOutput.last?.hasPrefix("error: paged mode answers") == true, "\(statement): \(paged.replOutput.last ?? "")")
        }
        XCTAssertEqual(paged.stack.count, 1)
    }

    /// With SQL over the file (``PersistQuerySource``, as `loupe` attaches it), statements through
    /// relations and backlinks, aggregates, sorts, projections and groups show what they show
    /// over the loaded graph; a store whose rows SQL cannot join as a load does falls back to
    /// the engine over chunks, or says why not.
    func testStatementsThroughRelationsArePushedDown() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 5_000, seed: 16)
        let graph = try LoadedStore.open(path).graph
        let statements = [
            "count Loan where book.pages > 100", "Book where @links.Loan.book.@count > 1", "Book sort by price desc, title", "Book sort by pages select title, author.name",
            "Loan group by book.language", "Member where SUBQUERY(@links.Loan.member, $l, $l.renewals > 1).@count > 0 sort by name",
            "count Book where ANY tags.label BEGINSWITH \"s\"", "Loan where book.author.born < 1930 AND returned == nil limit 40",
            "Book where pages > 500", "Book where autor.name == \"x\"", "Book group by language",
            // Through relations beside arithmetic: SQL answers those parts, the chunks the rest.
            "Loan where book.author.born < 1930 AND renewals * 2 > 2 limit 40", "count Book where @links.Loan.book.@count > 1 OR pages / 2 > 300",
        ]
        for statement in statements {
            try assertSameAnswer(statement, graph: graph, path: path, pushedDown: true, lines: Self.comparedLines(statement))
        }
        // A slow statement on a store without Loupe's relation index says, once, that `I` helps.
        let scratch = ScratchCache()
        defer { scratch.restore() }
        let hinted = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
        let hintPages = try PersistPages.open(try StoreFile.openForReading(path))
        hinted.attachPaged(hintPages, querySource: PersistQuerySource(pages: hintPages))
        hinted.relationIndexHintSeconds = 0
        hinted.run("count Book")
        hinted.run("count Loan")
        XCTAssertEqual(hinted.replOutput.filter { $0.contains("I builds Loupe's relation index") }.count, 1, hinted.replOutput.joined(separator: "\n"))
        // Relation rows SQL cannot join as a load does (a name stored as bytes): own attributes
        // are still answered a chunk at a time; the rest says why not.
        try HostileFiles.addAwkwardPersistRows(path)
        let pages = try PersistPages.open(try StoreFile.openForReading(path))
        let paged = assertNeedsWholeGraph("count Loan where book.pages > 100", pages: pages, querySource: PersistQuerySource(pages: pages))
        paged.run("count Book where pages > 500")
        guard case .count(let n) = try QueryEngine(graph: LoadedStore.open(path).graph).run("count Book where pages > 500") else { return XCTFail("a count") }
        XCTAssertEqual(paged.replOutput.last, "\(n)")
    }

    /// Enter on a group a statement counted over the store lists its objects, found by the store:
    /// the loaded browser's screen (text, numbers, booleans; with and without `where`); a group by
    /// a path through a relation (which the loaded browser does not open) lists what the engine
    /// finds for `where … AND path == value`; a group's objects sort as a filter's do.
    func testGroupsOpenInPagedMode() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 1_200, seed: 31)
        let graph = try LoadedStore.open(path).graph
        for statement in ["Book group by language", "Loan group by renewals", "Book where pages > 300 group by inPrint"] {
            for row in 0..<3 {
                try assertSameAnswer(statement, graph: graph, path: path, pushedDown: true,
                                     keys: Array(repeating: .character("j"), count: row) + [.enter, .character("j")])
            }
        }
        // A group's objects are a filter's: they sort over the store as loaded ones sort (the
        // view keeps the statement that found them; its crumb, `language = en`, is not one).
        try assertSameAnswer("Book group by language", graph: graph, path: path, pushedDown: true,
                             keys: [.enter, .character("l"), .character("l"), .character("S"), .character("j")])
        let pages = try PersistPages.open(try StoreFile.openForReading(path))
        let paged = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
        paged.attachPaged(pages, querySource: PersistQuerySource(pages: pages))
        paged.run("Loan where renewals > 0 group by book.language")
        guard case .frequency(_, let rows, _)? = paged.stack.last?.content else { return XCTFail("a group view") }
        for (row, group) in rows.prefix(3).enumerated() {
            if row > 0 { paged.handle(.key(.backspace)); paged.handle(.key(.character("j"))) }
            paged.handle(.key(.enter))
            guard case .paged(let listed)? = paged.stack.last?.content, case .keys(let keys) = listed.source else { return XCTFail("the group's objects") }
            guard case .string(let language) = group.key,
                  case .objects(_, let refs) = try QueryEngine(graph: graph).run("Loan where renewals > 0 AND book.language == \"\(language)\"") else { return XCTFail("\(group.key)") }
            XCTAssertEqual(keys, refs.map { graph.id(of: $0) }, language)
            XCTAssertEqual(keys.count, group.count, language)
        }
    }

    /// Enter on a row of a projection the store answered shows the row's object in the detail
    /// pane, as the loaded browser shows it.
    func testProjectionRowsOpenTheirObjects() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 900, seed: 17)
        let graph = try LoadedStore.open(path).graph
        let statement = "Loan where renewals > 0 sort by book.pages desc, id limit 6 select book.title, renewals"
        for row in 0..<3 {
            let whole = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
            whole.attach(graph)
            let pages = try PersistPages.open(try StoreFile.openForReading(path))
            let paged = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
            paged.attachPaged(pages, querySource: PersistQuerySource(pages: pages))
            func detail(_ b: Browser) -> [String] {
                var buffer = Buffer(width: 120, height: 30)
                b.render(into: &buffer)
                return buffer.lines.prefix(18).map { $0.components(separatedBy: "┐┌").last!.components(separatedBy: "││").last! }
            }
            for b in [whole, paged] {
                b.run(statement)
                for _ in 0..<row { b.handle(.key(.character("j"))) }
                b.handle(.key(.enter))
            }
            XCTAssertEqual(paged.focus, .detail)
            XCTAssertEqual(detail(paged), detail(whole), "row \(row)")
            XCTAssertTrue(detail(paged).first?.contains("Loan #") == true, detail(paged).first ?? "")
        }
    }

    /// Persist's own files have no index: each window scans the relation rows (and says so).
    func testWithoutIndexesAndWithAwkwardRows() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 1_500, seed: 12)
        try HostileFiles.addAwkwardPersistRows(path)
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            for index in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'loupe_%'") {
                try db.execute(sql: "DROP INDEX \(index.quotedDatabaseIdentifier)")
            }
        }
        try queue.close()
        let pages = try PersistPages.open(try StoreFile.openForReading(path))
        XCTAssertTrue(pages.notes.contains { $0.contains("no relation index") })
        XCTAssertTrue(pages.notes.contains { $0.contains("no type index") })
        for seed in UInt64(21)...26 { try walk(path, seed: seed, count: 100, edgesPerObject: 3, windowRows: 30) }
        // `I` builds an index in Loupe's cache (never in the file); windows read through it.
        let scratch = ScratchCache()
        defer { scratch.restore() }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let browser = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
        browser.attachPaged(try PersistPages.open(try StoreFile.openForReading(path)))
        XCTAssertTrue(browser.pages?.offersRelationIndex == true)
        browser.handle(.key(.character("I")))
        XCTAssertEqual(browser.message, "relation index built in Loupe's cache: pages and statements read relation rows by key")
        XCTAssertEqual(browser.pages?.notes.contains("relation index from Loupe's cache"), true)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
        for seed in UInt64(27)...30 { try walk(path, seed: seed, count: 100, edgesPerObject: 3, windowRows: 30) }
        XCTAssertEqual(try PersistPages.open(try StoreFile.openForReading(path)).notes.contains("relation index from Loupe's cache"), true)
        // A commit makes it stale: not used.
        let writer = try DatabaseQueue(path: path)
        try writer.write { db in try db.execute(sql: "DELETE FROM relations WHERE rowid = (SELECT min(rowid) FROM relations)") }
        try writer.close()
        XCTAssertEqual(try PersistPages.open(try StoreFile.openForReading(path)).offersRelationIndex, true)
    }

    /// An object whose relation has more targets than a window holds, of several types, the
    /// first ones all of one type: the detail pane names every type the store counts, and the
    /// list it opens is of mixed types, as loaded.
    func testACutRelationToSeveralTypes() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 1_500, seed: 7)
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: #"INSERT INTO by_type (id, type_name, json) VALUES (900003, 'Shelf', '{"label": "mixed"}')"#)
            // Keys 10… are tags, then authors.
            for key in 10..<50 { try db.execute(sql: "INSERT INTO relations (from_id, to_id, relation) VALUES (900003, ?, 'holds')", arguments: [key]) }
            XCTAssertEqual(try String.fetchAll(db, sql: "SELECT DISTINCT type_name FROM by_type WHERE id IN (10, 49) ORDER BY 1"), ["Author", "Tag"])
        }
        try queue.close()
        let whole = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
        whole.attach(try LoadedStore.open(path).graph)
        let paged = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
        paged.attachPaged(try PersistPages.open(try StoreFile.openForReading(path), edgesPerObject: 3))
        let keys: [Key] = [.backTab, .end, .tab, .tab, .character("j"), .character("j"), .enter, .end]
        XCTAssertTrue(assertSameScreens(whole, paged, keys: keys, "Shelf › holds"))
        var buffer = Buffer(width: 120, height: 30)
        paged.render(into: &buffer)
        // (The list opens on its rows: End went to its last object.)
        XCTAssertTrue(buffer.text.contains("Shelf › Shelf #900003 › holds › Author #49"), buffer.text)
    }

    /// A store listed through its type index is drawn before its types are counted (see
    /// ``assertFirstScreenWaitsForNoCount(graph:open:)``).
    func testTheFirstScreenDoesNotWaitForTheCounts() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 20_000, seed: 12)
        try assertFirstScreenWaitsForNoCount(graph: try LoadedStore.open(path).graph) { try PersistPages.open(try StoreFile.openForReading(path)) }
    }

    /// A type's keys at any positions, paged from any window, are its keys in order: before the
    /// types are counted (listed through the type index, read from the first key or the window)
    /// and after.
    func testKeysByPositionFromEveryAnchor() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 2_000, seed: 13)
        let pages = try PersistPages.open(try StoreFile.openForReading(path))
        XCTAssertTrue(pages.listedTypes.allSatisfy { $0.count == nil }, "listed through the type index, not counted")
        let queue = try DatabaseQueue(path: path)
        var rng = SampleGenerator.Random(state: 5)
        let all = try pages.types.map { type in
            try queue.read { try Int64.fetchAll($0, sql: "SELECT id FROM by_type WHERE type_name = ? ORDER BY id", arguments: [type.name]) }
        }
        for counted in [false, true] {
            if counted { try pages.countTypes() }
            XCTAssertEqual(pages.listedTypes.map(\.count), counted ? all.map(\.count) : all.map { _ in nil })
            for (t, type) in pages.types.enumerated() {
                let all = all[t]
                for _ in 0..<20 where all.count > 0 {
                    let a = Int(rng.next() % UInt64(all.count)), n = Int(rng.next() % 50)
                    let b = Int(rng.next() % UInt64(all.count)), m = Int(rng.next() % 50) + 1
                    let near = (start: b, keys: Array(all[b..<min(all.count, b + m)]))
                    let expected = Array(all[a..<min(all.count, a + n)])
                    XCTAssertEqual(try pages.keys(type: t, range: a..<(a + n)), expected)
                    XCTAssertEqual(try pages.keys(type: t, range: a..<(a + n), near: near), expected, "\(type.name) \(a)+\(n) near \(b)+\(m)")
                }
            }
        }
        XCTAssertEqual(pages.catalog.map(\.count), all.map(\.count))
        XCTAssertEqual(pages.catalog.map(\.name), try queue.read { try String.fetchAll($0, sql: "SELECT type_name FROM by_type GROUP BY type_name ORDER BY min(id)") },
                       "listed in the load's order")
        try queue.close()
    }
}

extension XCTestCase {
    /// Presses `keys` in both browsers, comparing their screens (all but the status line) after
    /// each; false at the first difference (reported with `label`).
    func assertSameScreens(_ whole: Browser, _ paged: Browser, keys: [Key], _ label: String, file: StaticString = #filePath, line: UInt = #line) -> Bool {
        /// Keys that only move along a run of the same key: the screen is compared once at its end.
        let moves: Set<Key> = [.character("j"), .character("l"), .tab, .backTab]
        for (step, key) in keys.enumerated() {
            whole.handle(.key(key))
            paged.handle(.key(key))
            if moves.contains(key), step + 1 < keys.count, keys[step + 1] == key { continue }
            var a = Buffer(width: 120, height: 30), b = Buffer(width: 120, height: 30)
            whole.render(into: &a)
            paged.render(into: &b)
            guard Array(a.lines.dropLast()) == Array(b.lines.dropLast()) else {
                XCTFail("\(label) step \(step) (\(key))\n\(a.text)\n\(b.text)", file: file, line: line)
                return false
            }
        }
        return true
    }

    /// `S`, a row down and `s` on column `column` of the catalog's type `t`, in a browser on the
    /// loaded graph and in a paged one answering with `querySource`: the same screens and message,
    /// or, where neither the source nor the chunked engine answers that sort (a relation's
    /// column), paged mode's refusal.
    func assertSameSort(graph: ObjectGraph, pages: PageSource, querySource: any QuerySource, type t: Int, column: Int, _ label: String,
                        file: StaticString = #filePath, line: UInt = #line) throws {
        let whole = Browser(fileLabel: "store", formatName: "SQL", theme: .monochrome)
        whole.attach(graph)
        let paged = Browser(fileLabel: "store", formatName: "SQL", theme: .monochrome)
        paged.attachPaged(pages, querySource: querySource)
        let moves: [Key] = [.backTab] + Array(repeating: .character("j"), count: t) + [.tab] + Array(repeating: .character("l"), count: column)
        guard assertSameScreens(whole, paged, keys: moves, label, file: file, line: line), let sheet = whole.stack.last else { return }
        let name = sheet.columns(graph: graph)[sheet.column]
        let statement = Statement.query(Query(type: Name(text: pages.catalog[t].name, range: SourceRange(0, 0)),
                                              clauses: [.sort([SortKey(path: .column(name), ascending: false)])]))
        if try querySource.answer(statement, isCancelled: { false }) == nil, try ChunkedAnswer.plan(statement, over: pages) == nil {
            paged.handle(.key(.character("S")))
            let message = paged.message
            XCTAssertTrue(message.hasPrefix("cannot sort by \(name): paged mode answers what SQL can say over the store; this one needs the whole graph: SQL cannot answer this statement exactly over")
                          && message.hasSuffix(" (reopen with a larger --memory-budget)"), "\(label): \(message)", file: file, line: line)
            return
        }
        guard assertSameScreens(whole, paged, keys: [.character("S"), .character("j"), .character("s"), .end], label, file: file, line: line) else { return }
        XCTAssertEqual(whole.message, paged.message, label, file: file, line: line)
    }

    /// Walks both browsers with the same `count` random keys from `seed`, comparing every frame;
    /// `open` makes the paged store (a Persist store unless said otherwise).
    func walk(_ path: String, seed: UInt64, count: Int, edgesPerObject: Int, windowRows: Int,
              open: (StoreFile, Int) throws -> PageSource = { try PersistPages.open($0, edgesPerObject: $1) },
              file: StaticString = #filePath, line: UInt = #line) throws {
        try walk(graph: try LoadedStore.open(path).graph, pages: try open(try StoreFile.openForReading(path), edgesPerObject),
                 seed: seed, count: count, windowRows: windowRows, file: file, line: line)
    }

    /// The same walk over `graph` loaded whole and `pages` read a window at a time.
    func walk(graph: ObjectGraph, pages: PageSource, seed: UInt64, count: Int, windowRows: Int,
              file: StaticString = #filePath, line: UInt = #line) throws {
        let whole = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
        whole.attach(graph)
        let paged = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
        paged.pagedWindowRows = windowRows
        paged.attachPaged(pages, reason: "test")
        var rng = SampleGenerator.Random(state: seed)
        var pressed: [String] = []
        func frame(_ browser: Browser) -> [String] {
            var buffer = Buffer(width: 120, height: 32)
            browser.render(into: &buffer)
            return buffer.lines
        }
        for step in 0..<count {
            let a = frame(whole), b = frame(paged)
            XCTAssertTrue(b.last?.contains("paged · test") == true, b.last ?? "", file: file, line: line)
            if let y = zip(a.dropLast(), b.dropLast()).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
                XCTFail("line \(y) after \(pressed.joined(separator: " ")) (seed \(seed), step \(step)):\n whole: \(a[y])\n paged: \(b[y])",
                        file: file, line: line)
                return
            }
            var key = PagedBrowsingTests.keys[Int(rng.next() % UInt64(PagedBrowsingTests.keys.count))]
            // The REPL pane is skipped: statements are the whole graph's.
            if whole.focus == .detail, key == .tab { key = .backTab }
            if whole.focus == .types, key == .backTab { key = .tab }
            pressed.append("\(key)")
            whole.handle(.key(key))
            paged.handle(.key(key))
            XCTAssertEqual(whole.focus, paged.focus, file: file, line: line)
        }
        XCTAssertEqual(paged.storeReadsAskedWhileDrawing, 0, "a frame asked the store for rows (seed \(seed))", file: file, line: line)
        // Wherever the walk ended, Esc and then `q`, `q`, … go back to the root and quit.
        for browser in [whole, paged] {
            browser.handle(.key(.escape))
            for _ in 0..<100 where !browser.wantsQuit { browser.handle(.key(.character("q"))) }
            XCTAssertTrue(browser.wantsQuit, "q leads back to the root and out (seed \(seed), after \(pressed.joined(separator: " ")))", file: file, line: line)
        }
    }

    /// Every type's keys at `rounds` random positions (up to `length` long), paged from a random
    /// window of up to `length` keys (and, `withoutNear`, from no window), are `graph`'s keys there,
    /// in the load's order.
    func assertKeysByPosition(graph: ObjectGraph, pages: PageSource, seed: UInt64, rounds: Int, length: UInt64, withoutNear: Bool, label: String = "",
                              file: StaticString = #filePath, line: UInt = #line) {
        var rng = SampleGenerator.Random(state: seed)
        for (t, type) in graph.types.enumerated() where type.count > 0 {
            let all = (0..<type.count).map { graph.id(of: ObjectRef(type: t, row: $0)) }
            for _ in 0..<rounds {
                let a = Int(rng.next() % UInt64(type.count)), n = Int(rng.next() % length)
                let b = Int(rng.next() % UInt64(type.count)), m = Int(rng.next() % length) + 1
                let near = (start: b, keys: Array(all[b..<min(all.count, b + m)]))
                let expected = Array(all[a..<min(all.count, a + n)])
                if withoutNear { XCTAssertEqual(try pages.keys(type: t, range: a..<(a + n), near: nil), expected, "\(label) \(type.name) \(a)+\(n)", file: file, line: line) }
                XCTAssertEqual(try pages.keys(type: t, range: a..<(a + n), near: near), expected, "\(label) \(type.name) \(a)+\(n) near \(b)+\(m)", file: file, line: line)
            }
        }
    }

    /// A source that lists its types without counting them (`open` gives a new one each time) is
    /// drawn at once: names with `…`, the first type's first window with `counting…`; the counts,
    /// read off the UI thread, then give the loaded graph's screen, and a key pressed before they
    /// arrive waits for them (End goes to the type's true last row).
    func assertFirstScreenWaitsForNoCount(graph: ObjectGraph, open: () throws -> PageSource, file: StaticString = #filePath, line: UInt = #line) throws {
        for keyFirst in [false, true] {
            let whole = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
            whole.attach(graph)
            let pages = try open()
            let paged = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
            let runner = BrowserTests.HeldRunner()
            paged.background = runner
            paged.pagedWindowRows = 40
            paged.attachPaged(pages, reason: "test")
            var a = Buffer(width: 120, height: 32), b = Buffer(width: 120, height: 32)
            paged.render(into: &b)
            XCTAssertTrue(pages.listedTypes.allSatisfy { $0.count == nil }, "nothing counted for the first screen", file: file, line: line)
            XCTAssertTrue(paged.isCountingTypes, file: file, line: line)
            XCTAssertLessThan(paged.currentCount, graph.types[0].count, "the rows read so far: the first type is longer than its first window", file: file, line: line)
            XCTAssertTrue(b.text.contains("\(graph.types[0].name) (counting…)"), b.text, file: file, line: line)
            XCTAssertTrue(graph.types.indices.prefix(20).allSatisfy { b.lines[2 + $0].hasPrefix("│\(graph.types[$0].name) ") && b.lines[2 + $0].contains("…│") }, b.text, file: file, line: line)
            XCTAssertTrue(b.lines.last?.contains("counting objects…") == true && b.lines.last?.contains("row 1/…") == true, b.lines.last ?? "", file: file, line: line)
            whole.render(into: &a)
            // The first rows are the loaded graph's, counted or not.
            XCTAssertEqual(a.lines[5...12].map { String($0.suffix(80)) }, b.lines[5...12].map { String($0.suffix(80)) }, file: file, line: line)
            if keyFirst {
                whole.handle(.key(.end)); paged.handle(.key(.end))
                runner.release()
            } else {
                runner.release()
                XCTAssertTrue(paged.collect(), "the counts arrived: a new frame", file: file, line: line)
            }
            XCTAssertFalse(paged.isCountingTypes, file: file, line: line)
            a = Buffer(width: 120, height: 32); b = Buffer(width: 120, height: 32)
            whole.render(into: &a); paged.render(into: &b)
            XCTAssertEqual(Array(a.lines.dropLast()), Array(b.lines.dropLast()), "key first: \(keyFirst)", file: file, line: line)
            XCTAssertEqual(pages.listedTypes.map(\.count), graph.types.map(\.count), file: file, line: line)
        }
    }

    /// Runs `statement` in a browser on the loaded graph and in a paged one (answering with SQL
    /// over the file when `pushedDown`), then `keys` (one row down); their screens (the first 20
    /// lines, or what `lines` picks of them) and the REPL's last answer must be the same.
    func assertSameAnswer(_ statement: String, graph: ObjectGraph, path: String, pushedDown: Bool, keys: [Key] = [.character("j")],
                          lines: (Buffer) -> [String] = { Array($0.lines.prefix(20)) },
                          open: (StoreFile) throws -> (PageSource, any QuerySource) = { let p = try PersistPages.open($0); return (p, PersistQuerySource(pages: p)) },
                          file: StaticString = #filePath, line: UInt = #line) throws {
        let (pages, source) = try open(try StoreFile.openForReading(path))
        assertSameAnswer(statement, graph: graph, pages: pages, querySource: pushedDown ? source : nil, keys: keys, lines: lines, file: file, line: line)
    }

    /// What of the screens `assertSameAnswer` compares for `statement`: the first 20 lines, and
    /// for a projection (whose rows hold values only in paged mode, so its breadcrumb and detail
    /// pane do not show each row's object) without the breadcrumb, cut before the detail pane.
    static func comparedLines(_ statement: String) -> (Buffer) -> [String] {
        let projects = statement.contains(" select ")
        return { buffer in buffer.lines.prefix(20).dropFirst(projects ? 1 : 0).map { projects ? String(Array($0).prefix(82)) : $0 } }
    }

    /// Runs `statement` in a paged browser on `pages` with `querySource` and asserts that it is
    /// refused as needing the whole graph; returns the browser.
    @discardableResult
    func assertNeedsWholeGraph(_ statement: String, pages: PageSource, querySource: any QuerySource,
                               file: StaticString = #filePath, line: UInt = #line) -> Browser {
        let paged = Browser(fileLabel: "store", formatName: "paged", theme: .monochrome)
        paged.attachPaged(pages, querySource: querySource)
        paged.run(statement)
        XCTAssertTrue(paged.replOutput.last?.hasPrefix("error: paged mode answers what SQL can say") == true, "\(statement): \(paged.replOutput.last ?? "")",
                      file: file, line: line)
        return paged
    }

    /// The same comparison over `graph` loaded whole and `pages` with `querySource`.
    func assertSameAnswer(_ statement: String, graph: ObjectGraph, pages: PageSource, querySource: (any QuerySource)?, keys: [Key] = [.character("j")],
                          lines: (Buffer) -> [String] = { Array($0.lines.prefix(20)) },
                          file: StaticString = #filePath, line: UInt = #line) {
        let whole = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
        whole.attach(graph)
        let paged = Browser(fileLabel: "store.sqlite", formatName: "Persist", theme: .monochrome)
        paged.attachPaged(pages, querySource: querySource)
        for browser in [whole, paged] {
            browser.run(statement)
            for key in keys { browser.handle(.key(key)) }
        }
        var a = Buffer(width: 120, height: 30), b = Buffer(width: 120, height: 30)
        whole.render(into: &a)
        paged.render(into: &b)
        let (x, y) = (lines(a), lines(b))
        if let i = zip(x, y).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            XCTFail("\(statement), line \(i):\n whole: \(x[i])\n paged: \(y[i])", file: file, line: line)
        }
        // (A key that opens a view answers on the screen only.)
        if !keys.contains(.enter) {
            let answer = whole.replOutput.last { !$0.isEmpty && !$0.hasPrefix("loupe>") }
            XCTAssertEqual(paged.replOutput.last, answer, statement, file: file, line: line)
        }
    }
}
