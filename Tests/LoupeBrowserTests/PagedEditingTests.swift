import Foundation
import GRDB
import LoupeBrowser
import LoupeHost
import LoupeModel
import LoupeQuery
import LoupeSQL
import LoupeStore
import LoupeTestSupport
import TerminalKit
import XCTest

/// Editing in paged mode against editing over the loaded graph: the same statements and keys on
/// two copies of a store, one loaded and one read a page at a time, stage the same changes
/// (counted alike), and their commits leave the two files with the same rows; a file another
/// process wrote refuses the commit and keeps the changes; Loupe's relation index is carried
/// forward to the file's new state, row for row what a new build makes.
final class PagedEditingTests: XCTestCase {
    /// A browser reading `path` a page at a time, with the host the executable gives it.
    func pagedBrowser(_ path: String, edgesPerObject: Int = 2_000) throws -> (Browser, PagedStoreHost<PersistPages>) {
        let pages = try PersistPages.open(try StoreFile.openForReading(path), edgesPerObject: edgesPerObject)
        return pagedBrowser(pages, path: path, formatName: "Persist", querySource: PersistQuerySource(pages: pages), following: PersistQuerySource.following)
    }

    func loadedBrowser(_ path: String) throws -> (Browser, StoreHost) { try loadedBrowser(path, formatName: "Persist") }

    func assertSameRows(_ a: String, _ b: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
        assertSameLines(try Shared.persistRows(a), try Shared.persistRows(b), what, file: file, line: line)
    }

    func testPagedEditsCommitWhatLoadedEditsCommit() throws {
        let original = try Shared.temporaryPath()
        try SampleGenerator.generate(path: original, objects: 900, seed: 5)
        let (loadedPath, pagedPath) = try Shared.twoCopies(of: original)
        let graph = try LoadedStore.open(original).graph
        func ids(_ type: String) -> [ObjectID] { graph.type(named: type)!.ids }
        let (loans, books, tags) = (ids("Loan"), ids("Book"), ids("Tag"))
        let statements = [
            "update Book where pages > 400 set pages = 400",
            "update Author where name BEGINSWITH \"A\" set country = \"Nowhere\", note = \"added\"",
            "delete Loan where id == \(loans[0])",
            "insert Author {name: \"Zoë Test\", born: 1950}",
            "update Loan where id == \(loans[1]) set book = #\(books[3])",
            "update Book where id == \(books[2]) set tags += #\(tags[1])",
            "delete Book where id == \(books[5])",
            "update Book where pages < 150 set pages = pages + 1",
            ".undo", ".redo", ".undo",
        ]
        let (loaded, loadedHost) = try loadedBrowser(loadedPath)
        let (paged, pagedHost) = try pagedBrowser(pagedPath)
        // Statements read the store's relations and kinds before the edits: the commit keeps
        // what it cannot have changed, and the answers after it must still be the file's.
        let questions = ["count Book where pages >= 400", "count Author where country == \"Nowhere\"", "count Loan where book.pages >= 400",
                         "count Book where tags.@count >= 2", "count Member where name BEGINSWITH \"A\"", "count Author where note == \"added\""]
        for question in questions { paged.run(question) }
        for statement in statements {
            loaded.run(statement)
            paged.run(statement)
            XCTAssertEqual(pendingPart(paged), pendingPart(loaded), "after \(statement):\n" + paged.replOutput.suffix(3).joined(separator: "\n"))
        }
        // Keys: the first type's second row, a cell edited, the third row deleted, undo, redo.
        let keys = "j l e <C-u>\nEdited by key\n<Enter> j d U R"
        _ = loaded.play(try PlayScript.parse(keys), width: 160, height: 30)
        let screen = paged.play(try PlayScript.parse(keys), width: 160, height: 30)
        XCTAssertEqual(pendingPart(paged), pendingPart(loaded))
        let loadedScreen = loaded.play([], width: 160, height: 30)
        XCTAssertEqual(screen.lines.prefix(7).map { String($0.prefix(26)) }, loadedScreen.lines.prefix(7).map { String($0.prefix(26)) },
                       "the types pane counts what the commit would leave")
        XCTAssertTrue(screen.text.contains("Editedbykey"), "the staged value shows in the page: \(screen.text)")
        XCTAssertTrue(screen.lines.contains { $0.contains("│- ") || $0.contains("│-") }, "a row marked for deletion: \(screen.text)")

        // Statements answer over the staged state, as over the loaded graph (on a type's own
        // attributes; through relations, over the file, and said so).
        for question in questions + ["Book where pages == 400", "Author where note == \"added\""] {
            loaded.run(question)
            paged.run(question)
            if question.contains("book.") || question.contains("tags.") {
                XCTAssertEqual(paged.replOutput.last, PagedChanges.overFileNote, question)
            } else {
                XCTAssertEqual(paged.replOutput.last, loaded.replOutput.last { !$0.hasPrefix("loupe>") }, question)
            }
        }
        let found = paged.play([], width: 160, height: 30)
        XCTAssertTrue(found.text.contains("added"), "the staged values show in the answer's view: \(found.text)")
        // A relation of an untouched type whose targets a staged deletion removes: over the file, said so.
        paged.run("count Review where book.pages >= 0")
        XCTAssertEqual(paged.replOutput.last, PagedChanges.overFileNote)
        // Groups too: each group's count moved by the objects the changes touch, then the clauses;
        // and sorts, limits and projections, over the objects' staged values.
        for question in ["Author group by country", "Author group by country sort by count desc limit 3", "Book where pages >= 400 group by inPrint",
                         "Book where pages >= 390 sort by pages desc, title limit 7", "Author sort by country, name select name, country, note",
                         "Author where born > 1900 sort by name desc limit 4"] {
            loaded.run(question)
            paged.run(question)
            // (A paged projection's rows hold values: no object selected, the detail pane empty,
            // no row marked.)
            func shown(_ buffer: Buffer) -> [String] {
                guard question.contains("select") else { return Array(buffer.lines.prefix(20)) }
                return buffer.lines.prefix(20).dropFirst().map { line in
                    ["+", "~", "-"].reduce(String(line.prefix(110))) { $0.replacingOccurrences(of: "││\($1) ", with: "││  ") }
                }
            }
            let (a, b) = (shown(loaded.play([], width: 160, height: 30)), shown(paged.play([], width: 160, height: 30)))
            if let y = zip(a, b).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
                XCTFail("\(question), line \(y):\n loaded: \(a[y])\n paged:  \(b[y])")
            }
            XCTAssertEqual(paged.replOutput.last, loaded.replOutput.last { !$0.hasPrefix("loupe>") }, question)
            _ = loaded.play(try PlayScript.parse("<BS>"), width: 160, height: 30)
            _ = paged.play(try PlayScript.parse("<BS>"), width: 160, height: 30)
        }
        paged.run("Author where name == \"Zoë Test\"")
        XCTAssertEqual(paged.replOutput.last, "1 object")
        let new = paged.play([], width: 160, height: 30)
        XCTAssertTrue(new.lines.contains { $0.contains("+") && $0.contains("Zoë Test") }, "a new object in the answer's view: \(new.text)")
        _ = paged.play(try PlayScript.parse("<BS> <BS> <BS>"), width: 160, height: 30)
        // While changes are pending, a where through a relation is refused in paged mode.
        paged.run("update Loan where book.pages > 300 set renewals = 9")
        XCTAssertTrue(paged.replOutput.last?.contains("own attributes only") == true, paged.replOutput.suffix(2).joined(separator: "\n"))
        try assertSameRows(pagedPath, original, "nothing is written before the commit")

        loaded.run(".commit")
        paged.run(".commit")
        XCTAssertTrue(paged.replOutput.contains { $0.hasPrefix("committed:") }, paged.replOutput.suffix(4).joined(separator: "\n"))
        try assertSameRows(pagedPath, loadedPath, "the two commits wrote the same rows")
        XCTAssertNotEqual(try Shared.persistRows(pagedPath), try Shared.persistRows(original))
        XCTAssertTrue(status(paged).contains("no pending changes"), status(paged))

        // The paged view is the file's new state: its catalog, and statements over it.
        let after = try LoadedStore.open(pagedPath).graph
        XCTAssertEqual(paged.pages?.catalog.map(\.name), after.types.map(\.name.rawValue))
        XCTAssertEqual(paged.pages?.catalog.map(\.count), after.types.map(\.count))
        paged.run("count Author where name == \"Zoë Test\"")
        XCTAssertEqual(paged.replOutput.last, "1")
        for question in questions {
            paged.run(question)
            guard case .count(let n) = try QueryEngine(graph: after).run(question) else { return XCTFail(question) }
            XCTAssertEqual(paged.replOutput.last, "\(n)", question)
        }
        withExtendedLifetime((loadedHost, pagedHost)) {}
    }

    /// Documents that are not JSON objects, BLOBs, escaped names, relation rows to nothing:
    /// edited alike in both modes, the commits leave the same rows.
    func testAwkwardDocumentsAreEditedAlike() throws {
        let original = try Shared.temporaryPath()
        try SampleGenerator.generate(path: original, objects: 300, seed: 12)
        try HostileFiles.addAwkwardPersistRows(original)
        let odd = try LoadedStore.open(original).graph.type(named: "Odd")!.ids.map { "\($0)" }
        let book = try LoadedStore.open(original).graph.type(named: "Book")!.ids[0]
        let statements = [
            "update Odd where id == \(odd[0]) set self = 6, added = \"new\"",
            "update Odd where id == \(odd[2]) set x = 1",
            "update Odd where id == \(odd[3]) set extra = true",
            "delete Odd where id == \(odd[1])",
            "update Odd where id == \(odd[0]) set many = {#\(book)}",
            "insert Odd {self: 9}",
        ]
        let (loadedPath, pagedPath) = try Shared.twoCopies(of: original)
        let (loaded, loadedHost) = try loadedBrowser(loadedPath)
        let (paged, pagedHost) = try pagedBrowser(pagedPath)
        for statement in statements + [".commit"] {
            loaded.run(statement)
            paged.run(statement)
            func timeless(_ line: String?) -> String? { line?.replacingOccurrences(of: #", [0-9.]+ s\)"#, with: ")", options: .regularExpression) }
            XCTAssertEqual(timeless(paged.replOutput.last), timeless(loaded.replOutput.last), statement)
        }
        try assertSameRows(pagedPath, loadedPath, "the two commits wrote the same rows")
        withExtendedLifetime((loadedHost, pagedHost)) {}
    }

    /// `F` in paged mode with changes pending counts the objects they touch as staged, and Enter
    /// lists a value's objects as staged: the loaded browser's screens.
    func testFrequencyTablesCountTheStagedState() throws {
        let original = try Shared.temporaryPath()
        try SampleGenerator.generate(path: original, objects: 600, seed: 21)
        let graph = try LoadedStore.open(original).graph
        let authors = graph.type(named: "Author")!
        let (loadedPath, pagedPath) = try Shared.twoCopies(of: original)
        let (loaded, loadedHost) = try loadedBrowser(loadedPath)
        let (paged, pagedHost) = try pagedBrowser(pagedPath)
        let column = 1 + authors.attributes.firstIndex { $0.name == "country" }!
        let keys = "<S-Tab> " + String(repeating: "j ", count: authors.index) + "<Tab> " + String(repeating: "l ", count: column) + "F"
        for statement in ["update Author where born < 1950 set country = \"Nowhere\"", "insert Author {name: \"New\", country: \"Nowhere\"}",
                          "delete Author where id == \(authors.ids[3])"] {
            loaded.run(statement)
            paged.run(statement)
        }
        for script in [keys, "<Enter>"] {
            let (a, b) = (loaded.play(try PlayScript.parse(script), width: 140, height: 30), paged.play(try PlayScript.parse(script), width: 140, height: 30))
            if let y = zip(a.lines.prefix(20), b.lines.prefix(20)).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
                XCTFail("after \(script), line \(y):\n loaded: \(a.lines[y])\n paged:  \(b.lines[y])")
            }
            XCTAssertTrue(b.text.contains("Nowhere"), b.text)
        }
        withExtendedLifetime((loadedHost, pagedHost)) {}
    }

    func testAConcurrentWriteRefusesTheCommitAndReloadKeepsTheEdits() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 400, seed: 8)
        let graph = try LoadedStore.open(path).graph
        let book = graph.type(named: "Book")!.ids[0], other = graph.type(named: "Book")!.ids[1]
        let (paged, host) = try pagedBrowser(path)
        paged.run("update Book where id == \(book) set pages = 4242")
        XCTAssertTrue(pendingPart(paged).hasPrefix("pending +0 ~1 -0"), status(paged))
        // Another process changes another book.
        let writer = try DatabaseQueue(path: path)
        try writer.write { try $0.execute(sql: "UPDATE by_type SET json = json_set(json, '$.pages', 7) WHERE id = ?", arguments: [Int64("\(other)")!]) }
        try writer.close()
        let before = try Shared.persistRows(path)
        paged.run(".commit")
        XCTAssertTrue(paged.replOutput.suffix(3).contains { $0.contains("another process wrote") }, paged.replOutput.suffix(3).joined(separator: "\n"))
        XCTAssertEqual(try Shared.persistRows(path), before, "a refused commit writes nothing")
        XCTAssertTrue(pendingPart(paged).hasPrefix("pending +0 ~1 -0"), "the edit stays pending: \(status(paged))")
        paged.run(".reload")
        XCTAssertTrue(paged.replOutput.last?.contains("staged again") == true, paged.replOutput.suffix(2).joined(separator: "\n"))
        // Quitting asks first; Ctrl-S shows the writes, Enter commits them.
        let asked = paged.play(try PlayScript.parse("q"), width: 120, height: 30)
        XCTAssertTrue(asked.text.contains("Quit with changes that are not written?"), asked.text)
        let preview = paged.play(try PlayScript.parse("<Esc> <C-s>"), width: 120, height: 30)
        XCTAssertTrue(preview.text.contains("\"pages\":4242"), "the preview shows the document after: \(preview.text)")
        _ = paged.play(try PlayScript.parse("<Enter>"), width: 120, height: 30)
        XCTAssertTrue(paged.replOutput.contains { $0.hasPrefix("committed: 0 added, 1 changed") }, paged.replOutput.suffix(3).joined(separator: "\n"))
        let now = try LoadedStore.open(path).graph
        let books = now.type(named: "Book")!
        XCTAssertEqual(books.value(row: books.row(for: book)!, named: "pages"), .int(4242))
        XCTAssertEqual(books.value(row: books.row(for: other)!, named: "pages"), .int(7), "the other process's write is kept")
        withExtendedLifetime(host) {}
    }

    /// A store without indexes, with Loupe's relation index built: a commit that changes relation
    /// rows carries the index forward (it stays in use, row for row a new build's), and windows
    /// and statements read the new rows through it.
    func testTheRelationIndexIsCarriedForward() throws {
        let scratch = ScratchCache()
        defer { scratch.restore() }
        let cache = scratch.path
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 600, seed: 3)
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            for table in ["by_type", "relations"] {
                for index in try db.indexes(on: table) { try db.execute(sql: "DROP INDEX \(index.name.quotedDatabaseIdentifier)") }
            }
        }
        try queue.close()
        let pages = try PersistPages.open(try StoreFile.openForReading(path))
        try pages.buildRelationIndex(progress: { _, _ in }, isCancelled: { false })
        let graph = try LoadedStore.open(path).graph
        let loans = graph.type(named: "Loan")!.ids, books = graph.type(named: "Book")!.ids, tags = graph.type(named: "Tag")!.ids
        let (paged, host) = try pagedBrowser(path)
        XCTAssertTrue(paged.pages?.relationIndexBuilt == true)
        for statement in ["update Loan where id == \(loans[0]) set book = #\(books[9])", "update Book where id == \(books[1]) set tags = {#\(tags[0]), #\(tags[2])}",
                          "delete Book where id == \(books[4])", "insert Loan {renewals: 1, book: #\(books[9])}", ".commit"] {
            paged.run(statement)
        }
        XCTAssertTrue(paged.replOutput.contains { $0.hasPrefix("committed:") }, paged.replOutput.suffix(4).joined(separator: "\n"))
        XCTAssertTrue(host.pagedStore.pages.relationIndexBuilt, "the index describes the file after the commit")
        func sideRows() throws -> [String] {
            let side = try FileManager.default.contentsOfDirectory(atPath: cache).first { $0.hasPrefix("index-") && $0.hasSuffix(".sqlite") }!
            let q = try DatabaseQueue(path: cache + "/" + side)
            defer { try? q.close() }
            return try q.read { try Row.fetchAll($0, sql: "SELECT * FROM relations ORDER BY rowid_").map { $0.description } }
        }
        let carried = try sideRows()
        try PersistPages.open(try StoreFile.openForReading(path)).buildRelationIndex(progress: { _, _ in }, isCancelled: { false })
        XCTAssertEqual(carried, try sideRows(), "the carried index is what a new build makes")
        // Statements over the index answer as the loaded file does.
        let now = try LoadedStore.open(path).graph
        for statement in ["count Loan where book.id == \(books[9])", "count Book where @links.Loan.book.@count >= 1", "count Book where tags.@count == 2"] {
            paged.run(statement)
            let expected = try QueryEngine(graph: now).run(statement)
            guard case .count(let n) = expected else { return XCTFail("\(expected)") }
            XCTAssertEqual(paged.replOutput.last, "\(n)", statement)
        }
        withExtendedLifetime(host) {}
    }

    /// Orders kept for sorts (`I` on a column) follow Loupe's own commit: those of a type the
    /// commit wrote are dropped (its sorts read documents again), the others are kept, stamped
    /// for the new state, and sorts by them answer as over the committed file.
    func testKeptOrdersFollowACommit() throws {
        let scratch = ScratchCache()
        defer { scratch.restore() }
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 600, seed: 5)
        let (paged, host) = try pagedBrowser(path)
        let source = try XCTUnwrap(paged.querySource)
        for (type, attribute) in [("Book", "price"), ("Book", "title"), ("Member", "name")] {
            try source.buildSortIndex(typeName: type, attribute: attribute, isCancelled: { false })
        }
        let books = try LoadedStore.open(path).graph.type(named: "Book")!.ids
        for statement in ["update Book where id == \(books[3]) set price = 0.5", "update Book where id == \(books[8]) set title = \"A\"", ".commit"] { paged.run(statement) }
        XCTAssertTrue(paged.replOutput.contains { $0.hasPrefix("committed:") }, paged.replOutput.suffix(4).joined(separator: "\n"))
        let after = try XCTUnwrap(host.pagedStore.querySource)
        XCTAssertEqual(after.sortIndexes(typeName: "Book"), [], "the commit wrote books")
        XCTAssertEqual(after.sortIndexes(typeName: "Member"), ["name"], "and no member")
        let now = try LoadedStore.open(path).graph
        for statement in ["Book sort by price, id limit 5", "Book sort by title desc limit 5", "Member sort by name desc, id"] {
            guard case .objects(_, let refs) = try QueryEngine(graph: now).run(statement),
                  case .objects(_, let keys)? = try after.answer(try Parser.parse(statement), isCancelled: { false }) else { return XCTFail(statement) }
            XCTAssertEqual(keys, refs.map { now.id(of: $0) }, statement)
        }
        withExtendedLifetime(host) {}
    }

    /// What passes over the documents found of each attribute (kinds, and whether SQLite's
    /// `json_extract` reads it as the load does) is moved by a commit's documents, not read again:
    /// it must be what a new pass over the file finds — kinds gone with the last value of
    /// theirs, kinds new, a member that `json_extract` would read otherwise.
    func testAttributeFactsAreCarriedExactly() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 400, seed: 6)
        let graph = try LoadedStore.open(path).graph
        let books = graph.type(named: "Book")!.ids
        // Two books whose pages are text: the only values of their kind.
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            for id in books.prefix(2) {
                try db.execute(sql: "UPDATE by_type SET json = json_set(json, '$.pages', 'many') WHERE id = ?", arguments: [Int64("\(id)")!])
            }
        }
        try queue.close()
        let (paged, host) = try pagedBrowser(path)
        let names: Set<String> = ["pages", "title", "price", "inPrint", "note"]
        let t = host.pages.catalog.firstIndex { $0.name == "Book" }!
        _ = try host.pages.attributeFacts(type: t, names: names)
        for statement in ["update Book where id == \(books[0]) set pages = 7", "delete Book where id == \(books[1])",
                          "update Book where id == \(books[2]) set price = 3, title = \"Bad \u{FFFD} text\"",
                          "insert Book {title: \"New\", pages: 12, note: \"x\"}", ".commit"] {
            paged.run(statement)
        }
        XCTAssertTrue(paged.replOutput.last?.hasPrefix("committed:") == true, paged.replOutput.suffix(3).joined(separator: "\n"))
        let carried = try host.pages.attributeFacts(type: t, names: names)
        let fresh = try PersistPages.open(try StoreFile.openForReading(path)).attributeFacts(type: t, names: names)
        XCTAssertEqual(carried.kinds, fresh.kinds)
        XCTAssertEqual(carried.plain, fresh.plain)
        XCTAssertEqual(fresh.kinds["pages"], .integer, "the text values are gone")
        XCTAssertFalse(fresh.plain.contains("title"), "text holding U+FFFD")
        withExtendedLifetime(host) {}
    }

    /// What paged mode refuses to stage, and says why: the relation picker (every object of the
    /// target types), a relation of an object with more links than a window reads.
    func testRefusals() throws {
        let path = try Shared.temporaryPath()
        try SampleGenerator.generate(path: path, objects: 500, seed: 2)
        let graph = try LoadedStore.open(path).graph
        let authors = graph.type(named: "Author")!
        // An author with several books: its backlinks are cut at one edge per object.
        let books = graph.type(named: "Book")!
        let (paged, host) = try pagedBrowser(path, edgesPerObject: 1)
        let tagged = books.ids.first { id in books.relation(named: "tags").map { books.relations[$0].targets(of: books.row(for: id)!).count > 1 } ?? false }!
        let current = Set(books.relations[books.relation(named: "tags")!].targets(of: books.row(for: tagged)!).map { graph.id(of: $0) })
        let tag = graph.type(named: "Tag")!.ids.first { !current.contains($0) }!
        paged.run("update Book where id == \(tagged) set tags += #\(tag)")
        XCTAssertTrue(paged.replOutput.last?.contains("more links than paged mode reads at once") == true, paged.replOutput.suffix(2).joined(separator: "\n"))
        XCTAssertTrue(status(paged).contains("no pending changes"), status(paged))
        // A cell takes what its attribute holds over the whole type: the editor stays open with the text.
        let refused = paged.play(try PlayScript.parse("j l l l e <C-u>\nnineteen\n<Enter>"), width: 160, height: 30)
        XCTAssertTrue(refused.lines.last?.contains("refused: the text \"nineteen\" cannot go into Publisher.founded") == true, refused.lines.last ?? "")
        XCTAssertTrue(refused.text.contains("nineteen"), "the editor keeps the text: \(refused.text)")
        XCTAssertTrue(status(paged).contains("no pending changes"), status(paged))
        // After a commit of another attribute, what is known of `founded` still checks values.
        _ = paged.play(try PlayScript.parse("<Esc>"), width: 160, height: 30)
        paged.run("update Publisher where id == \(graph.type(named: "Publisher")!.ids[0]) set city = \"Elsewhere\"")
        paged.run(".commit")
        XCTAssertTrue(paged.replOutput.last?.hasPrefix("committed: 0 added, 1 changed") == true, paged.replOutput.suffix(2).joined(separator: "\n"))
        let again = paged.play(try PlayScript.parse("e <C-u>\nnineteen\n<Enter>"), width: 160, height: 30)
        XCTAssertTrue(again.lines.last?.contains("refused: the text \"nineteen\" cannot go into Publisher.founded") == true, again.lines.last ?? "")
        paged.run("update Author where id == \(authors.ids[0]) set name = @links.Book.author.@count")
        XCTAssertTrue(paged.replOutput.last?.contains("own attributes") == true, paged.replOutput.suffix(2).joined(separator: "\n"))
        withExtendedLifetime(host) {}
    }
}
