import ArgumentParser
import Foundation
import GRDB
import LoupeModel
import LoupeQuery
import LoupeStore
import LoupeBrowser
import LoupeHost
import LoupeSQL
import TerminalKit

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Measure load and query speed against SQLite on the same file.",
                                                    subcommands: [BenchLoad.self, BenchQuery.self, BenchCommands.self, BenchSQL.self, BenchRender.self, BenchEdit.self, BenchPaged.self])
}

/// Peak resident memory of this process, in megabytes (from /proc/self/status).
func peakMemoryMB() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
    let kb = Double(line.split(separator: " ").dropFirst().first.map(String.init) ?? "0") ?? 0
    return kb / 1024
}

/// Resident memory of this process now, in megabytes (from /proc/self/status).
func residentMemoryMB() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
    return (Double(line.split(separator: " ").dropFirst().first.map(String.init) ?? "0") ?? 0) / 1024
}

/// Wall time of `body` in seconds, with its result.
func timed<T>(_ body: () throws -> T) rethrows -> (T, Double) {
    let start = DispatchTime.now()
    let r = try body()
    return (r, Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9)
}

struct BenchLoad: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "load", abstract: "Load a store; print wall time and peak memory beside SQLite reading the same rows.")
    @OptionGroup var store: StoreArgument

    func run() throws {
        let file = try StoreFile.openForReading(store.file)
        // Baseline: SQLite alone reading every row of both tables once.
        let (_, sqliteSeconds) = try timed {
            try file.read { db -> Int in
                var n = 0
                if try db.tableExists("by_type") {
                    let c = try Row.fetchCursor(db, sql: "SELECT id, type_name, json FROM by_type")
                    while let row = try c.next() { n += (row[2] as String).utf8.count > 0 ? 1 : 0 }
                    let r = try Row.fetchCursor(db, sql: "SELECT from_id, to_id, relation FROM relations")
                    while let row = try r.next() { n += (row[0] as Int64) > 0 ? 1 : 0 }
                }
                return n
            }
        }
        // What the browser shows first: the catalog and the first page of the first type, read
        // from a fresh open as `loupe FILE` does while the graph loads.
        let (_, firstPageSeconds) = try timed { () throws -> Int in
            let fresh = try StoreFile.openForReading(store.file)
            _ = try LoadedStore.catalog(fresh)
            return try LoadedStore.firstPage(fresh)?.objectCount ?? 0
        }
        // The floor: the same rows read, and every document parsed once, on one thread.
        let floor = try LoadFloor.persist(file)
        let (loaded, loadSeconds) = try timed { try LoadedStore.open(store.file) }
        let relations = loaded.graph.types.reduce(0) { $0 + $1.relations.reduce(0) { $0 + $1.targets.count } }
        print("objects:          \(loaded.graph.objectCount)")
        print("relations:        \(relations)")
        print(String(format: "sqlite read rows: %.3f s (baseline)", sqliteSeconds))
        if floor.objects > 0 {
            print(String(format: "read + parse:     %.3f s (the floor: every row read, every document parsed once, one thread)", floor.seconds))
        }
        print(String(format: "loupe load:       %.3f s (%.2f× the baseline%@)", loadSeconds, loadSeconds / max(sqliteSeconds, 1e-9),
                     floor.objects > 0 ? String(format: ", %.2f× the floor", loadSeconds / max(floor.seconds, 1e-9)) : ""))
        if floor.objects > 0 {
            print(String(format: "per object:       %.2f µs, %.0f bytes", loadSeconds * 1e6 / Double(max(loaded.graph.objectCount, 1)),
                         peakMemoryMB() * 1_048_576 / Double(max(loaded.graph.objectCount, 1))))
        }
        print(String(format: "first page:       %.0f ms (open, catalog and the first type's first 200 objects, shown while the rest loads)", firstPageSeconds * 1000))
        print(String(format: "peak memory:      %.0f MB (while loading); %.0f MB resident after it (what a session holds)", peakMemoryMB(), residentMemoryMB()))
        for (phase, seconds) in loaded.timings { print(String(format: "  %6.3f s  %@", seconds, phase as NSString)) }
    }
}

struct BenchQuery: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "query", abstract: "Time five query shapes in memory beside sqlite3 doing the same over the file.")
    @OptionGroup var store: StoreArgument
    @Option(help: "Runs per case (the best is reported).") var runs: Int = 3

    /// The five questions: (name, statement, SQL over the Persist tables, SQL over an indexed relational copy).
    static let cases: [(String, String, String, String)] = [
        ("attribute predicate", "count Book where pages > 500",
         "SELECT count(*) FROM by_type WHERE type_name = 'Book' AND json_extract(json, '$.pages') > 500",
         "SELECT count(*) FROM book WHERE pages > 500"),
        ("two-hop path", "count Loan where book.author.born < 1920",
         """
         SELECT count(*) FROM by_type l
         JOIN relations rb ON rb.from_id = l.id AND rb.relation = 'book'
         JOIN relations ra ON ra.from_id = rb.to_id AND ra.relation = 'author'
         JOIN by_type a ON a.id = ra.to_id
         WHERE l.type_name = 'Loan' AND json_extract(a.json, '$.born') < 1920
         """,
         "SELECT count(*) FROM loan JOIN book ON book.id = loan.book_id JOIN author ON author.id = book.author_id WHERE author.born < 1920"),
        ("backlink @count", "count Book where @links.Loan.book.@count >= 3",
         """
         SELECT count(*) FROM (SELECT b.id FROM by_type b JOIN relations r ON r.to_id = b.id AND r.relation = 'book'
         JOIN by_type l ON l.id = r.from_id AND l.type_name = 'Loan'
         WHERE b.type_name = 'Book' GROUP BY b.id HAVING count(*) >= 3)
         """,
         "SELECT count(*) FROM (SELECT book_id FROM loan WHERE book_id IS NOT NULL GROUP BY book_id HAVING count(*) >= 3)"),
        ("sort all of a type", "Book sort by price desc, title, id",
         "SELECT id FROM by_type WHERE type_name = 'Book' ORDER BY json_extract(json, '$.price') DESC, json_extract(json, '$.title'), id",
         "SELECT id FROM book ORDER BY price DESC, title, id"),
        ("group by", "Book group by language",
         "SELECT json_extract(json, '$.language') k, count(*) c FROM by_type WHERE type_name = 'Book' GROUP BY k ORDER BY c DESC",
         "SELECT language, count(*) c FROM book GROUP BY language ORDER BY c DESC"),
    ]

    func run() throws {
        let loaded = try LoadedStore.open(store.file)
        let engine = QueryEngine(graph: loaded.graph)
        // (name, statement, SQL over the Persist tables, SQL over an indexed relational copy)
        let cases = BenchQuery.cases
        // The strongest fair baseline: the same data as a normal relational schema with an index
        // for each question, built here from the file (a copy in a temporary folder).
        let (relational, buildSeconds) = try timed { try BenchQuery.relationalCopy(of: loaded.path) }
        defer { if let relational { try? FileManager.default.removeItem(atPath: relational.path) } }
        if relational != nil { print(String(format: "indexed relational copy built in %.1f s (book, author, loan; indexes on every column asked)", buildSeconds)) }
        print("(vs: how many times faster Loupe answers than that baseline; below 1× it is slower)")
        print("case                   loupe (ms)   json_extract (ms)   indexed (ms)   vs json   vs indexed   same answer")
        var disagreements = 0
        for (name, statement, sql, indexedSQL) in cases {
            var best = Double.infinity, bestSQL = Double.infinity, bestIndexed = Double.infinity
            var answer: QueryResult?, rows: [Row] = [], indexedRows: [Row]?
            for _ in 0..<max(1, runs) {
                let (result, t) = try timed { try engine.run(statement) }
                best = min(best, t)
                answer = result
                let (fetched, s) = try timed { try loaded.file.read { db in try Row.fetchAll(db, sql: sql) } }
                bestSQL = min(bestSQL, s)
                rows = fetched
                if let relational {
                    let (fetchedIndexed, i) = try timed { try relational.queue.read { db in try Row.fetchAll(db, sql: indexedSQL) } }
                    bestIndexed = min(bestIndexed, i)
                    indexedRows = fetchedIndexed
                }
            }
            let same = answer.map { a in BenchQuery.agrees(a, rows, graph: loaded.graph) && (indexedRows.map { BenchQuery.agrees(a, $0, graph: loaded.graph) } ?? true) } ?? false
            if !same { disagreements += 1 }
            let label = name.padding(toLength: 22, withPad: " ", startingAt: 0)
            let indexedText = relational == nil ? "           —" : String(format: "%12.1f", bestIndexed * 1000)
            let versusIndexed = relational == nil ? "        —" : String(format: "%8.1f×", bestIndexed / best)
            print(label + String(format: " %10.1f   %17.1f   %@   %6.1f×   %@   %@", best * 1000, bestSQL * 1000, indexedText, bestSQL / best, versusIndexed,
                                 same ? "yes" : "NO"))
        }
        // One-shot answers, as `loupe query FILE STATEMENT` gives them from a cold start: what its
        // names reach (the schema cache entry the load above left), else SQLite's count when the
        // statement allows it, else only the type it reads, else the whole graph.
        print("\none-shot (loupe query FILE STATEMENT: open, load what the statement needs, answer)")
        print("case                   one-shot (ms)   path                      same answer")
        for (name, statement, _, _) in cases {
            var best = Double.infinity, path = "", answer: QueryResult?, graph = loaded.graph
            for _ in 0..<max(1, runs) {
                let parsed = try Parser.parse(statement)
                let (result, t) = try timed { () throws -> (QueryResult, String, ObjectGraph) in
                    let file = try StoreFile.openForReading(loaded.path)
                    // As `loupe query` plans it: SQL first where the planner asks it, else the load.
                    let plan = Planner.plan(parsed, try StoreDriver.detect(loaded.path, budget: .standard).situation(only: nil))
                    if plan.steps.first == .sql, let pages = try PersistPages.openIfPersist(file, path: loaded.path),
                       case .count(let n)? = try PersistQuerySource(pages: pages).answer(parsed, isCancelled: { false }) {
                        return (.count(n), "SQLite count", loaded.graph)
                    }
                    let opened = try OneShotGraph.projection(file, for: parsed) ?? OneShotGraph.open(file, for: parsed, writing: false)
                    return (try QueryEngine(graph: opened.graph).run(parsed), opened.path, opened.graph)
                }
                best = min(best, t)
                (answer, path, graph) = (result.0, result.1, result.2)
            }
            let expected = try engine.run(statement)
            let same = answer.map { $0.render(.json, graph: graph) == expected.render(.json, graph: loaded.graph) } ?? false
            if !same { disagreements += 1 }
            print(name.padding(toLength: 22, withPad: " ", startingAt: 0) + String(format: " %13.1f   %@   %@", best * 1000,
                  path.padding(toLength: 24, withPad: " ", startingAt: 0), same ? "yes" : "NO"))
        }
        // The SQL engine (`loupe query --engine sql`) over the indexed relational copy: the same
        // statements, translated from the AST, beside the hand-written SQL above.
        if let relational {
            print("\nSQL engine (loupe query --engine sql) over the indexed relational copy, from a cold start")
            print("case                   SQL engine (ms)   hand-written SQL (ms)   same answer")
            let file = try StoreFile.openForReading(relational.path)
            for (name, statement, _, indexedSQL) in cases {
                var best = Double.infinity, bestHand = Double.infinity
                var answer: (result: QueryResult, graph: ObjectGraph)?
                for _ in 0..<max(1, runs) {
                    let parsed = try Parser.parse(statement)
                    let (result, t) = try timed { try SQLPushdown.run(parsed, file: file) }
                    best = min(best, t)
                    answer = result
                    let (_, h) = try timed { try relational.queue.read { db in try Row.fetchAll(db, sql: indexedSQL) } }
                    bestHand = min(bestHand, h)
                }
                let expected = try engine.run(statement)
                let same = answer.map { BenchQuery.sameAnswer($0.result, $0.graph, expected, loaded.graph) } ?? false
                if !same { disagreements += 1 }
                print(name.padding(toLength: 22, withPad: " ", startingAt: 0) + String(format: " %15.1f   %21.1f   %@", best * 1000, bestHand * 1000,
                      answer == nil ? "not translated" : same ? "yes" : "NO"))
            }
        }
        if disagreements > 0 { throw ExitCode(1) }
    }

    /// Two engines' answers over two files with the same keys: the same count, the same keys in
    /// the same order, the same frequency table (attributes may be laid out differently).
    static func sameAnswer(_ a: QueryResult, _ graphA: ObjectGraph, _ b: QueryResult, _ graphB: ObjectGraph) -> Bool {
        switch (a, b) {
        case let (.count(x), .count(y)): return x == y
        case let (.objects(_, x), .objects(_, y)): return x.map { graphA.id(of: $0) } == y.map { graphB.id(of: $0) }
        case let (.groups(_, x, _), .groups(_, y, _)):
            return x.map { ValueFormatter.plain($0.key) + "=\($0.count)" } == y.map { ValueFormatter.plain($0.key) + "=\($0.count)" }
        default: return false
        }
    }

    /// The sample's Book, Author and Loan as plain tables with indexes (nil when the store has
    /// no such types): what a relational app would have, the fair baseline for the questions.
    static func relationalCopy(of path: String) throws -> (path: String, queue: DatabaseQueue)? {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-bench-relational-\(getpid()).sqlite").path
        try? FileManager.default.removeItem(atPath: copy)
        let queue = try DatabaseQueue(path: copy)
        let source = "file:" + (path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path) + "?mode=ro"
        let built = try queue.writeWithoutTransaction { db -> Bool in
            try db.execute(sql: "ATTACH DATABASE ? AS src", arguments: [source])
            defer { try? db.execute(sql: "DETACH DATABASE src") }
            guard try Int.fetchOne(db, sql: "SELECT count(*) FROM src.sqlite_master WHERE name IN ('by_type', 'relations')") == 2,
                  try Int.fetchOne(db, sql: "SELECT count(*) FROM src.by_type WHERE type_name = 'Loan'") ?? 0 > 0 else { return false }
            try db.inTransaction {
                try db.execute(sql: """
                    CREATE TEMP TABLE rel AS SELECT from_id, to_id, relation FROM src.relations WHERE relation IN ('book', 'author');
                    CREATE INDEX temp.rel_from ON rel(relation, from_id);
                    CREATE TABLE author (id INTEGER PRIMARY KEY, born);
                    CREATE TABLE book (id INTEGER PRIMARY KEY, pages, price, title, language, author_id INTEGER REFERENCES author(id));
                    CREATE TABLE loan (id INTEGER PRIMARY KEY, book_id INTEGER REFERENCES book(id));
                    INSERT INTO author SELECT id, json_extract(json, '$.born') FROM src.by_type WHERE type_name = 'Author';
                    INSERT INTO book SELECT b.id, json_extract(b.json, '$.pages'), json_extract(b.json, '$.price'),
                        json_extract(b.json, '$.title'), json_extract(b.json, '$.language'),
                        (SELECT to_id FROM rel WHERE relation = 'author' AND from_id = b.id)
                        FROM src.by_type b WHERE b.type_name = 'Book';
                    INSERT INTO loan SELECT l.id, (SELECT to_id FROM rel WHERE relation = 'book' AND from_id = l.id)
                        FROM src.by_type l WHERE l.type_name = 'Loan';
                    CREATE INDEX book_pages ON book(pages);
                    CREATE INDEX book_sort ON book(price DESC, title, id); CREATE INDEX book_language ON book(language);
                    CREATE INDEX book_author ON book(author_id);
                    CREATE INDEX author_born ON author(born);
                    CREATE INDEX loan_book ON loan(book_id);
                    ANALYZE main;
                    """)
                return .commit
            }
            return true
        }
        guard built else { try queue.close(); try? FileManager.default.removeItem(atPath: copy); return nil }
        return (copy, queue)
    }

    /// True when Loupe's answer and SQLite's rows say the same: a count equals the count; a
    /// sorted list has the same objects in the same order (ids); a frequency table the same keys
    /// with the same counts.
    static func agrees(_ result: QueryResult, _ rows: [Row], graph: ObjectGraph) -> Bool {
        let columns = (0..<(rows.first?.count ?? 0)).map { c in rows.map { $0[c] as DatabaseValue } }
        switch result {
        case .objects(_, let refs): return agrees(.objects(typeName: "", keys: refs.map { graph.id(of: $0) }), columns)
        case .count(let n): return agrees(.count(n), columns)
        case .groups(let key, let groups, let objects): return agrees(.groups(key: key, rows: groups, total: objects.count), columns)
        default: return false
        }
    }

    /// A query's rows as columns (a column of values takes far less memory than rows).
    static func columns(_ db: Database, sql: String) throws -> [[DatabaseValue]] {
        var columns: [[DatabaseValue]] = []
        let cursor = try Row.fetchCursor(db, sql: sql)
        while let row = try cursor.next() {
            if columns.isEmpty { columns = Array(repeating: [], count: row.count) }
            for c in 0..<row.count { columns[c].append(row[c]) }
        }
        return columns
    }

    /// True when SQLite's rows say what a ``QuerySource`` answered: the count, the keys in order, or
    /// the frequency table (in any order).
    static func agrees(_ answer: SourceAnswer, _ columns: [[DatabaseValue]]) -> Bool {
        let rowCount = columns.first?.count ?? 0
        switch answer {
        case .count(let n):
            return rowCount == 1 && Int.fromDatabaseValue(columns[0][0]) == n
        case .objects(_, let ids):
            return ids.count == rowCount && zip(ids, columns.first ?? []).allSatisfy { id, cell in
                if case .int(let i) = id { return Int64.fromDatabaseValue(cell) == i }
                return false
            }
        case .groups(_, let groups, _):
            var mine: [String: Int] = [:]
            for g in groups { mine[ValueFormatter.plain(g.key)] = g.count }
            var theirs: [String: Int] = [:]
            for (key, count) in zip(columns.first ?? [], columns.dropFirst().first ?? []) {
                theirs[key.isNull ? ValueFormatter.plain(.null) : (String.fromDatabaseValue(key) ?? "\(key)")] = Int.fromDatabaseValue(count)
            }
            return mine == theirs
        default:
            return false
        }
    }
}

struct BenchRender: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "render",
        abstract: "Time the browser: start to first frame, then frames of the records and detail panes while the selection moves.")
    @OptionGroup var store: StoreArgument
    @Option(help: "Frames to draw.") var frames: Int = 1000
    @Option(help: "Screen size, WIDTHxHEIGHT.") var size: String = "160x50"

    func run() throws {
        let parts = size.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2 else { throw ValidationError("--size takes WIDTHxHEIGHT") }
        let backend = TestBackend(width: parts[0], height: parts[1])
        let terminal = Terminal(backend: backend)
        // Start to first frame: what the interactive browser does before the graph is loaded.
        let (browser, firstFrame) = try timed { () -> Browser in
            let file = try StoreFile.openForReading(store.file)
            let (format, types) = try LoadedStore.catalog(file)
            let browser = Browser(fileLabel: store.file, formatName: format.name)
            browser.pendingTypes = types
            browser.progress = (0, types.reduce(0) { $0 + max(0, $1.count) })
            terminal.draw { browser.render(into: &$0) }
            return browser
        }
        let (loaded, loadSeconds) = try timed { try LoadedStore.open(store.file) }
        browser.attach(loaded.graph)
        // The largest type, so the frames scroll through the most rows.
        if let largest = loaded.graph.types.indices.max(by: { loaded.graph.types[$0].count < loaded.graph.types[$1].count }) {
            browser.handle(.key(.backTab))
            for _ in 0..<largest { browser.perform(.moveDown) }
            browser.handle(.key(.tab))
        }
        let (_, seconds) = timed {
            for i in 0..<frames {
                browser.perform(i % 100 == 99 ? .pageDown : .moveDown)
                terminal.draw { browser.render(into: &$0) }
            }
        }
        // A query with a large result, typed at the REPL, to the frame that shows it (the
        // statement runs here on this thread: no background runner in the bench).
        var resultLine = ""
        if let largest = loaded.graph.types.max(by: { $0.count < $1.count }) {
            let statement = "\(largest.name.rawValue) where TRUEPREDICATE"
            let (_, querySeconds) = timed {
                browser.run(statement)
                terminal.draw { browser.render(into: &$0) }
            }
            resultLine = String(format: "query to its frame:    %.1f ms (%@: %d results shown as a view)", querySeconds * 1000,
                                statement, browser.currentCount)
        }
        print(String(format: "start to first frame:  %.1f ms (types and a progress bar, before the graph loads)", firstFrame * 1000))
        print(String(format: "graph load:            %.3f s", loadSeconds))
        print(String(format: "frames:                %d at %@ (records and detail panes, selection moving)", frames, size))
        print(String(format: "time per frame:        %.2f ms", seconds * 1000 / Double(max(frames, 1))))
        if !resultLine.isEmpty { print(resultLine) }
    }
}

/// Editing at scale: stage one statement over a whole type, commit it, and compare with SQLite
/// making the same change in one `UPDATE` over a copy of the file; both files must then hold the
/// same values. The store is never changed: both sides work on copies in a temporary folder.
struct BenchEdit: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "edit",
        abstract: "Stage and commit `update Book set price = price * 1.1` on copies of a Persist store, beside SQLite's json_set UPDATE.")
    @OptionGroup var store: StoreArgument
    @Option(help: "The type to update (a Persist type with a numeric attribute).") var type: String = "Book"
    @Option(help: "The numeric attribute multiplied by 1.1.") var attribute: String = "price"
    @Flag(help: "In paged mode, as over the memory budget: the objects whose attribute is below --below, found by SQLite, read by key, staged and committed (paged mode stages at most 50,000 objects in one statement).")
    var paged = false
    @Option(help: "With --paged: the objects changed are those whose attribute is below this.") var below: Double = 5

    func run() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-bench-edit-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let mine = folder.appendingPathComponent("loupe.sqlite").path, theirs = folder.appendingPathComponent("sqlite.sqlite").path
        for target in [mine, theirs] { try FileManager.default.copyItem(atPath: store.file, toPath: target) }
        if paged { return try runPaged(mine, theirs) }

        let (loaded, loadSeconds) = try timed { try LoadedStore.open(mine) }
        let host = StoreHost()
        host.adopt(loaded)
        let session = ReplSession(graph: loaded.graph, mode: .table)
        session.storePath = mine
        session.host = host
        let statement = "update \(type) set \(attribute) = \(attribute) * 1.1"
        let (reply, stageSeconds) = timed { () -> ReplSession.Reply in
            guard case .evaluate(let evaluation) = session.begin(statement) else { return session.execute(statement) }
            return session.finish(evaluation, evaluation.run(), seconds: 0)
        }
        if let error = reply.error { throw ValidationError(error) }
        let (plan, planSeconds) = try timed { try StoreCommit.preview(session.pending, path: mine, format: loaded.format) }
        // The commit after the preview (Ctrl-S then Enter, `.changes` then `.commit`, `query
        // --commit`): the file is as loaded, so the preview's plan is the commit's.
        let (report, commitSeconds) = try timed {
            try StoreCommit.commit(session.pending, path: mine, format: loaded.format, loadedStamp: loaded.stamp, planned: plan)
        }

        // SQLite: the same change in one statement, in one transaction.
        let sql = "UPDATE by_type SET json = json_set(json, '$.' || ?, json_extract(json, '$.' || ?) * 1.1) WHERE type_name = ? AND json_type(json, '$.' || ?) IN ('integer', 'real')"
        let queue = try DatabaseQueue(path: theirs)
        let (changed, sqliteSeconds) = try timed { try queue.write { db -> Int in
            try db.execute(sql: sql, arguments: [attribute, attribute, type, attribute])
            return db.changesCount
        } }
        try queue.close()

        // One answer: the same values in both files.
        let (same, compared) = try sameValues(mine, theirs)

        print("objects loaded:         \(loaded.graph.objectCount) (load \(String(format: "%.2f", loadSeconds)) s)")
        print("statement:              \(statement)")
        print("objects changed:        loupe \(report.changed), sqlite \(changed)")
        print(String(format: "stage (in memory):      %.3f s", stageSeconds))
        print(String(format: "plan the writes:        %.3f s (%d units; what .changes prints)", planSeconds, plan.units.count))
        print(String(format: "loupe commit:           %.3f s after the preview (%d writes, checks included)", commitSeconds, report.statements))
        print(String(format: "  without a preview:  ≈ %.3f s (plus the plan, made inside the commit)", commitSeconds + planSeconds))
        print(String(format: "sqlite UPDATE json_set: %.3f s (baseline)", sqliteSeconds))
        print(String(format: "commit / baseline:      %.2f× after the preview, %.2f× without", commitSeconds / max(sqliteSeconds, 1e-9),
                     (commitSeconds + planSeconds) / max(sqliteSeconds, 1e-9)))
        print("same values in both:    \(same ? "yes" : "NO") (\(compared) objects compared, to 15 significant digits)")
        if !same { throw ExitCode(1) }
    }

    /// True when the attribute holds the same values in every object of the type in both files,
    /// and how many objects were compared. SQLite's JSON writer keeps 15 significant digits
    /// (`%!.15g`); Loupe writes the shortest text that reads back as the same double, as Swift's
    /// JSONEncoder (Persist) does. So the values agree to 1e-14 relative, not bit for bit.
    private func sameValues(_ mine: String, _ theirs: String) throws -> (Bool, Int) {
        let check = "SELECT id, json_extract(json, '$.' || ?) FROM by_type WHERE type_name = ? ORDER BY id"
        func values(_ path: String) throws -> [(Int64, Double?)] {
            let q = try DatabaseQueue(path: path, configuration: { var c = Configuration(); c.readonly = true; return c }())
            defer { try? q.close() }
            return try q.read { db in try Row.fetchAll(db, sql: check, arguments: [attribute, type]).map { ($0[0], $0[1]) } }
        }
        let a = try values(mine), b = try values(theirs)
        let same = a.count == b.count && zip(a, b).allSatisfy { x, y in
            guard x.0 == y.0 else { return false }
            guard let p = x.1, let q = y.1 else { return x.1 == nil && y.1 == nil }
            return abs(p - q) <= 1e-14 * max(abs(p), abs(q))
        }
        return (same, a.count)
    }

    /// The same change over part of the type in paged mode on `mine`, beside SQLite on `theirs`.
    private func runPaged(_ mine: String, _ theirs: String) throws {
        let statement = "update \(type) where \(attribute) < \(ValueFormatter.number(below)) set \(attribute) = \(attribute) * 1.1"
        guard case .mutation(let mutation) = try Parser.parse(statement) else { throw ValidationError("not an update: \(statement)") }
        let ((host, changes, step), stageSeconds) = try timed { () -> (PagedStoreHost, PagedChanges, EditStep) in
            let pages = try PersistPages.open(try StoreFile.openForReading(mine))
            let host = PagedStoreHost(pages: pages, querySource: PersistQuerySource.following)
            var changes = try PagedChanges(pages: pages)
            let step = try changes.stage(mutation, source: statement, storeKeys: { selection in
                guard case .objects(_, let keys)? = try host.pagedStore.querySource?.answer(selection, isCancelled: { false }) else { return nil }
                return keys
            })
            return (host, changes, step)
        }
        let (_, planSeconds) = try timed { try host.preview(changes.pending, maxLines: 1) }
        let (_, commitSeconds) = try timed { try host.commit(changes.pending, progress: nil) }
        let peak = peakMemoryMB()

        let sql = "UPDATE by_type SET json = json_set(json, '$.' || ?, json_extract(json, '$.' || ?) * 1.1) WHERE type_name = ? AND json_type(json, '$.' || ?) IN ('integer', 'real') AND json_extract(json, '$.' || ?) < ?"
        let queue = try DatabaseQueue(path: theirs)
        let (changed, sqliteSeconds) = try timed { try queue.write { db -> Int in
            try db.execute(sql: sql, arguments: [attribute, attribute, type, attribute, attribute, below])
            return db.changesCount
        } }
        try queue.close()
        let (same, compared) = try sameValues(mine, theirs)
        print("statement (paged):      \(statement)")
        print("objects changed:        loupe \(step.objectCount), sqlite \(changed)")
        print(String(format: "open, find, read, stage: %.3f s (SQLite finds them; each read by key; values checked against the type's kinds)", stageSeconds))
        print(String(format: "preview the writes:     %.3f s", planSeconds))
        print(String(format: "commit:                 %.3f s (checks included; catalog and index carried forward)", commitSeconds))
        print(String(format: "sqlite UPDATE json_set: %.3f s (baseline)", sqliteSeconds))
        print(String(format: "all / baseline:         %.2f×", (stageSeconds + planSeconds + commitSeconds) / max(sqliteSeconds, 1e-9)))
        print(String(format: "peak memory:            %.0f MB", peak))
        print("same values in both:    \(same ? "yes" : "NO") (\(compared) objects compared, to 15 significant digits)")
        if !same { throw ExitCode(1) }
    }
}
