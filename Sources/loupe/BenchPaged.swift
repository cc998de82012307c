import ArgumentParser
import Foundation
import GRDB
import LoupeBrowser
import LoupeModel
import LoupeQuery
import LoupeSQL
import LoupeStore
import TerminalKit

/// Paged mode at scale: what `loupe FILE` does on a store over the memory budget, step by step,
/// with the peak memory of the whole session, beside SQLite reading the rows the windows need.
struct BenchPaged: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "paged",
        abstract: "Browse a Persist store or a plain SQLite file a window at a time (as over the memory budget): open to first frame, page through the largest type, jump to its end, follow relations and backlinks, answer the bench's questions; time per step and peak memory, beside SQLite.")
    @OptionGroup var store: StoreArgument
    @Option(help: "Pages to turn in the largest type.") var pages: Int = 300
    @Option(help: "Relations and backlinks to follow.") var follows: Int = 100
    @Option(help: "Screen size, WIDTHxHEIGHT.") var size: String = "160x50"

    func run() throws {
        let parts = size.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2 else { throw ValidationError("--size takes WIDTHxHEIGHT") }
        let terminal = Terminal(backend: TestBackend(width: parts[0], height: parts[1]))
        // Open to first frame, without and then with paged mode's cache entry.
        let saved = SchemaCache.directory.withLock { $0 }
        let scratch = NSTemporaryDirectory() + "loupe-bench-paged-\(getpid())"
        SchemaCache.directory.withLock { $0 = scratch }
        defer {
            SchemaCache.directory.withLock { $0 = saved }
            try? FileManager.default.removeItem(atPath: scratch)
        }
        var openSeconds: [Double] = []
        func opening() throws -> PagedOpening {
            // The bench's questions are SQL's: a store whose statements the engine answers a
            // chunk at a time (Core Data) has none to measure.
            guard let opening = try PagedOpening.open(try StoreFile.openForReading(store.file), reason: nil), opening.querySource != nil else {
                throw CLIError("the paged bench reads Persist stores and plain SQLite files")
            }
            return opening
        }
        /// What answers the questions over a session opened again.
        func questionsSource() throws -> any QuerySource {
            guard let source = try opening().querySource else { throw CLIError("the paged bench reads Persist stores and plain SQLite files") }
            return source
        }
        func open() throws -> Browser {
            let (source, seconds) = try timed { try opening() }
            openSeconds.append(seconds)
            let browser = Browser(fileLabel: store.file, formatName: source.formatName)
            // As `loupe` does: the types the store lists without their counts are counted on
            // another thread while the first frame is drawn.
            browser.background = ThreadRunner()
            browser.attachPaged(source.pages, querySource: source.querySource)
            terminal.draw { browser.render(into: &$0) }
            browser.background = nil
            return browser
        }
        let (first, coldOpen) = try timed { try open() }
        let wasCounting = first.isCountingTypes
        let (_, countedAfter) = timed { first.settleTypeCounts() }
        let (browser, warmOpen) = try timed { try open() }
        guard let source = browser.pages, let largest = source.catalog.indices.max(by: { source.catalog[$0].count < source.catalog[$1].count }) else {
            throw CLIError("the store has no types")
        }
        let objects = source.catalog.reduce(0) { $0 + $1.count }
        // A store without relation indexes (Persist's own): a window scans the relation rows
        // until `I` builds Loupe's index beside it.
        var indexLine: String?
        if source.offersRelationIndex {
            let ownIndexes = !source.notes.contains { $0.contains("no relation index") }
            let (_, scanned) = timed { if !ownIndexes { browser.perform(.goBottom); terminal.draw { browser.render(into: &$0) } } }
            let (_, built) = try timed { try source.buildRelationIndex(progress: { _, _ in }, isCancelled: { false }) }
            let size = (try? FileManager.default.contentsOfDirectory(atPath: scratch).filter { $0.hasPrefix("index-") }
                .compactMap { (try? FileManager.default.attributesOfItem(atPath: scratch + "/" + $0)[.size]) as? NSNumber }
                .reduce(Int64(0)) { $0 + $1.int64Value }) ?? 0
            indexLine = ownIndexes
                ? String(format: "`I` built Loupe's relation index and read each type's attributes' kinds in %.1f s (%@ in the cache): statements join and count through it", built, MemoryBudget(bytes: size).description)
                : String(format: "no relation index: a window scanning the relation rows took %.0f ms; `I` built Loupe's index in %.1f s (%@ in the cache)",
                         scanned * 1000, built, MemoryBudget(bytes: size).description)
            browser.perform(.goTop)
        }
        browser.handle(.key(.backTab))
        for _ in 0..<largest { browser.perform(.moveDown) }
        browser.handle(.key(.tab))
        terminal.draw { browser.render(into: &$0) }
        // Pages down the largest type, a frame each.
        let firstRow = browser.stack.last?.selection ?? 0
        var slowest = 0.0
        let (_, pagingSeconds) = timed {
            for _ in 0..<pages {
                let (_, s) = timed {
                    browser.perform(.pageDown)
                    terminal.draw { browser.render(into: &$0) }
                }
                slowest = max(slowest, s)
            }
        }
        let rowsPaged = max(1, (browser.stack.last?.selection ?? 0) - firstRow)
        let (_, endSeconds) = timed {
            browser.perform(.goBottom)
            terminal.draw { browser.render(into: &$0) }
        }
        // From rows spread over the type: the detail pane's first link followed and back.
        let (_, followSeconds) = timed {
            for i in 0..<follows {
                browser.perform(.goTop)
                for _ in 0..<(i % 7) { browser.perform(.pageDown) }
                browser.handle(.key(.tab))
                browser.perform(.openRow)
                terminal.draw { browser.render(into: &$0) }
                browser.perform(.goBack)
                browser.handle(.key(.backTab))
                terminal.draw { browser.render(into: &$0) }
            }
        }
        // The bench's five questions answered over the file (the statements paged mode pushes
        // down to SQLite), the first time (reading the store's relations, unless Loupe's index
        // keeps them, and the kinds of what each reads) and again; then, after the session's peak
        // is taken, SQLite's json_extract over the same file, answers compared.
        let questions = try questionsSource()
        let relational = source is RelationalPages
        // `I` on the sort question's columns: their order kept in Loupe's cache (a Persist store).
        var orderLine: String?
        if let sort = BenchQuery.cases.first(where: { $0.0.hasPrefix("sort") }), case .query(let q) = try Parser.parse(sort.1),
           case .sort(let keys)? = q.clauses.first, let typeName = q.type?.text, questions.sortIndexes(typeName: typeName) != nil {
            let names = keys.compactMap { key -> String? in if case .name(let n)? = key.path.steps.first, key.path.steps.count == 1 { return n.text } else { return nil } }
            let (_, kept) = try timed { for name in names { try questions.buildSortIndex(typeName: typeName, attribute: name, isCancelled: { false }) } }
            let size = (try? FileManager.default.contentsOfDirectory(atPath: scratch).filter { $0.hasPrefix("order-") }
                .compactMap { (try? FileManager.default.attributesOfItem(atPath: scratch + "/" + $0)[.size]) as? NSNumber }
                .reduce(Int64(0)) { $0 + $1.int64Value }) ?? 0
            orderLine = String(format: "`I` kept the order of %@ in %.1f s (%@ in the cache): the sort reads it", names.map { "\(typeName).\($0)" }.joined(separator: " and "),
                               kept, MemoryBudget(bytes: size).description)
        }
        var answers: [(first: Double, again: Double, answer: SourceAnswer?)] = []
        for (_, statement, _, _) in BenchQuery.cases {
            let parsed = try Parser.parse(statement)
            let (_, first) = try timed { try questions.answer(parsed, isCancelled: { false }) }
            let (answer, again) = try timed { try questions.answer(parsed, isCancelled: { false }) }
            answers.append((first, again, answer))
        }
        // A next session's first statements: what the first one read of the whole store (the
        // kinds of each attribute) kept in Loupe's cache for this state of the file.
        let nextSession = try questionsSource()
        var nextFirst: [Double] = []
        for (_, statement, _, _) in BenchQuery.cases {
            let parsed = try Parser.parse(statement)
            nextFirst.append(try timed { try nextSession.answer(parsed, isCancelled: { false }) }.1)
        }
        // What SQL does not say (arithmetic), answered by the engine a chunk of objects at a time.
        let chunkedQuestion = try Parser.parse(Self.chunkedStatement)
        guard let chunkedPlan = try ChunkedAnswer.plan(chunkedQuestion, over: source) else { throw CLIError("the chunked question does not plan over this store") }
        let (chunkedAnswer, chunkedSeconds) = try timed { try chunkedPlan.answer(chunkedQuestion, over: source) }
        let peak = peakMemoryMB()
        var questionLines: [String] = []
        var disagreements = 0
        for (((name, _, persistSQL, indexedSQL), (first, again, answer)), next) in zip(zip(BenchQuery.cases, answers), nextFirst) {
            // Over a relational file, the same question in plain SQL over its tables and indexes.
            let sql = relational ? indexedSQL : persistSQL
            let (columns, sqlite) = try timed { try StoreFile.openForReading(store.file).read { try BenchQuery.columns($0, sql: sql) } }
            let same = answer.map { BenchQuery.agrees($0, columns) } ?? false
            if !same { disagreements += 1 }
            questionLines.append(name.padding(toLength: 22, withPad: " ", startingAt: 0)
                + String(format: " %9.2f s   %9.2f s   %9.2f s   %11.2f s   %6.2f×   %@", first, again, next, sqlite, sqlite / max(again, next),
                         answer == nil ? "not translated" : same ? "yes" : "NO"))
        }
        // Baseline: SQLite reading what as many windows need, without building anything: the
        // next 300 keys and documents of the type, and the relation rows from and to them.
        let file = try StoreFile.openForReading(store.file)
        let typeName = source.catalog[largest].name
        let windows = max(1, (rowsPaged + 299) / 300)
        let (_, sqliteSeconds) = try timed {
            if let relational = source as? RelationalPages { return try relational.readWindowsPlainly(type: largest, windows: windows, rows: 300) }
            return try file.read { db -> Int in
                var last: Int64 = .min, n = 0
                for _ in 0..<windows {
                    let rows = try Row.fetchAll(db, sql: "SELECT id, json FROM by_type WHERE type_name = ? AND id > ? ORDER BY id LIMIT 300", arguments: [typeName, last])
                    guard let end = rows.last?[0] as Int64? else { break }
                    last = end
                    let ids = rows.compactMap { $0[0] as Int64? }
                    let list = ids.map(String.init).joined(separator: ",")
                    let out = try Row.fetchAll(db, sql: "SELECT rowid, from_id, to_id, relation FROM relations WHERE from_id IN (\(list))")
                    n += try Row.fetchAll(db, sql: "SELECT r.rowid, r.from_id, o.type_name FROM relations r JOIN by_type o ON o.id = r.from_id WHERE r.to_id IN (\(list))").count
                    // The targets' documents (a relation cell shows its target's name).
                    let targets = Set(out.compactMap { $0[2] as Int64? }).map(String.init).joined(separator: ",")
                    n += try Row.fetchAll(db, sql: "SELECT id, type_name, json FROM by_type WHERE id IN (\(targets))").count
                }
                return n
            }
        }
        print("\(objects) objects in \(source.catalog.count) types; a whole load ≈ \(MemoryBudget(bytes: MemoryBudget.wholeLoadEstimate(path: store.file, relational: relational)))")
        print(String(format: "open to first frame:   %.0f ms with the catalog and schema read (%.0f ms of it reading them%@), %.0f ms %@",
                     coldOpen * 1000, openSeconds[0] * 1000,
                     wasCounting ? String(format: "; the types listed by their index, their counts on screen %.0f ms after the frame", countedAfter * 1000) : "",
                     warmOpen * 1000,
                     relational ? "opened again (the catalog read again, its pages in the OS cache)" : "with them kept from the last open"))
        if let indexLine { print(indexLine) }
        if let orderLine { print(orderLine) }
        print(String(format: "page down (%@):  %.2f ms a frame, %.0f ms the slowest (%d frames at %@, %d rows)",
                     typeName, pagingSeconds * 1000 / Double(max(pages, 1)), slowest * 1000, pages, size, rowsPaged))
        print(String(format: "SQLite alone:           %.3f s reading what those frames show, 300 rows at a time (%@): loupe %@× that with the frames drawn",
                     sqliteSeconds, relational ? "rows, the rows their foreign keys name, the rows naming them" : "keys, documents, relation rows both ways, the targets' documents",
                     String(format: pagingSeconds < sqliteSeconds / 10 ? "%.3f" : "%.1f", pagingSeconds / max(sqliteSeconds, 1e-9))))
        print(String(format: "to the last row:        %.0f ms", endSeconds * 1000))
        print(String(format: "follow a link and back: %.1f ms (%d times, from rows across the type)", followSeconds * 1000 / Double(max(follows, 1)), follows))
        print("questions (pushed down to SQLite)   first      again  next session   sqlite3 \(relational ? "indexed SQL " : "json_extract")   vs sqlite3   same answer")
        questionLines.forEach { print($0) }
        let (chunkedColumns, chunkedSQLite) = try timed { try StoreFile.openForReading(store.file).read { try BenchQuery.columns($0, sql: relational ? Self.chunkedIndexedSQL : Self.chunkedPersistSQL) } }
        let chunkedSame = BenchQuery.agrees(chunkedAnswer, chunkedColumns)
        if !chunkedSame { disagreements += 1 }
        // (Once: a chunked answer keeps nothing for the next one.)
        print("in chunks (arithmetic)" + String(format: " %9.2f s%@   %11.2f s   %6.2f×   %@   (%@)", chunkedSeconds, String(repeating: " ", count: 28), chunkedSQLite,
                                                 chunkedSQLite / max(chunkedSeconds, 1e-9), chunkedSame ? "yes" : "NO", Self.chunkedStatement))
        print(String(format: "peak memory:            %.0f MB (the whole session)", peak))
        if disagreements > 0 { throw ExitCode(1) }
    }

    /// A question SQL does not say over the store (arithmetic on both sides of a comparison),
    /// which paged mode answers a chunk of objects at a time (``ChunkedAnswer``), and the same in
    /// SQL for sqlite3.
    static let chunkedStatement = "Book where pages * 2 > pages + 350 sort by price desc, id limit 3"
    static let chunkedPersistSQL = """
        SELECT id FROM by_type WHERE type_name = 'Book' AND json_extract(json, '$.pages') * 2 > json_extract(json, '$.pages') + 350
        ORDER BY json_extract(json, '$.price') DESC, id LIMIT 3
        """
    static let chunkedIndexedSQL = "SELECT id FROM book WHERE pages * 2 > pages + 350 ORDER BY price DESC, id LIMIT 3"
}
