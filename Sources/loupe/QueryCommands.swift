import ArgumentParser
import DisplayText
import Foundation
import Synchronization
import LoupeModel
import LoupeQuery
import LoupeStore
import LoupeBrowser
import LoupeHost
import LoupeSQL
import LoupePostgres

struct Query: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run one statement of the query language and print its result.",
        discussion: """
            Example: loupe query library.sqlite 'Book where author.name BEGINSWITH "A" sort by title limit 5' --format json
            An update, insert or delete prints the changes it stages and the exact writes they make; it writes
            them only with --commit (in one transaction, checked against the file as it was read).
            """)
    @OptionGroup var store: StoreArgument
    @Argument(help: "The statement, e.g. 'Book where pages > 300 sort by title'.") var statement: String
    @Option(help: "table, json, ndjson, csv, markdown or line (default: table).") var format: OutputFormat = .table
    @Flag(help: "Write the changes an update, insert or delete stages (without it they are only shown).") var commit = false
    @Option(help: "Which engine answers: auto (SQLite over a relational file, or PostgreSQL itself, when the statement translates exactly; SQLite over a Persist file or a Core Data store whose whole load is over the memory budget; else memory), memory (load the graph), sql (the database only, over any of these: an error when the statement does not translate).")
    var engine: QueryEngineChoice = .auto
    @Option(help: "A Persist store, a plain SQLite file, a Core Data store or a PostgreSQL database whose whole load would take more than this is answered by SQLite over the file or by PostgreSQL, or by the engine a chunk of objects at a time on one type's own attributes (what cannot be answered so is refused, not loaded): 512M, 2G… (default: a quarter of the machine's memory, at most 2 GB).")
    var memoryBudget: MemoryBudget?

    func run() throws {
        // Loaded no more than the statement needs (the session parses it again, and reports errors).
        let parsed: LoupeQuery.Statement?
        do { parsed = try Parser.parse(statement) } catch let error as QueryError {
            printError(error.render(source: statement))
            throw ExitCode(2)
        }
        if engine == .sql && commit { throw ValidationError("--engine sql answers queries; --commit needs the loaded graph (--engine memory or auto)") }
        // A file is opened once for every attempt below (a WAL file without its `-shm` is copied).
        let file = store.isPostgres ? nil : try StoreFile.openForReading(store.file)
        // An edit of a file too large to load: staged over the objects it names, read by key,
        // shown, and written with --commit, as over the loaded graph.
        if case .mutation(let mutation)? = parsed, engine == .auto, let file, let host = try overBudgetHost(file) {
            try stageOverBudget(mutation, host)
            return
        }
        // An edit of a database too large to load: its rows (or Persist's objects) read by key,
        // as for a file.
        if case .mutation(let mutation)? = parsed, engine != .memory, file == nil, try MemoryBudget.overBudget(postgres: store.file, budget: memoryBudget ?? .standard) != nil {
            try stageOverBudget(mutation, try PagedOpening.open(postgres: store.file, reason: nil).host)
            return
        }
        // A Persist file too large to load (or --engine sql): SQLite answers over the file.
        if !commit, engine != .memory, let file, let parsed, let (pages, overBudget) = try persistPages(file) {
            do {
                let source = PersistQuerySource(pages: pages)
                let started = DispatchTime.now().uptimeNanoseconds
                if let answer = try source.answer(parsed, isCancelled: { false }) {
                    try write(answer, pages)
                    let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
                    if seconds > 2, let hint = Self.orderHint(parsed, source: source, file: store.file) { printError(String(format: "(%.1f s: %@)", seconds, hint)) }
                    return
                }
            } catch let error as QueryError {
                printError(error.render(source: statement))
                throw ExitCode(2)
            }
            if engine == .auto, overBudget != nil, try answeredInChunks(parsed, { (pages, PersistQuerySource(pages: pages)) }) { return }
            let why = "paths into nested values, arithmetic, relations to several types and stores whose rows SQL cannot join as a load does are left to the in-memory engine"
            if engine == .sql { throw CLIError("SQL cannot answer this statement exactly over this Persist store (\(why)); run it with --engine auto or memory") }
            if let overBudget { throw CLIError("\(overBudget), and SQL cannot answer this statement exactly over the file (\(why)); raise --memory-budget to load it") }
        }
        // A relational file or a PostgreSQL database: the database answers, with the engine's
        // semantics, no load.
        // What the file's schema warns of, once printed (a load after a failed answer says the rest).
        var warned = Set<String>()
        if !commit, engine != .memory, let parsed {
            let sink = OutputSink(fd: 1)
            do {
                let written: Bool
                if let file {
                    // Written as read: a table of millions of rows a part at a time.
                    written = try SQLPushdown.write(parsed, file: file, mode: format, toTerminal: isatty(1) == 1, to: sink) { warnings in
                        for warning in warnings { printError("warning: \(warning)") }
                        warned.formUnion(warnings)
                    }
                } else if engine == .auto, let (opening, estimate) = try overBudgetPersist(url: store.file) {
                    // Persist's layout too large to load: read no more than the statement needs.
                    guard let paged = try opening.querySource?.answer(parsed, isCancelled: { false }) else {
                        if try writeInChunks(parsed, opening.pages, sql: opening.querySource) { return }
                        throw CLIError("a whole load (≈ \(MemoryBudget(bytes: estimate))) is over the \(memoryBudget ?? .standard) memory budget, and PostgreSQL cannot answer this statement exactly over Persist's layout (it leaves \(opening.unanswered) to the in-memory engine); raise --memory-budget to load it")
                    }
                    try write(paged, opening.pages)
                    return
                } else {
                    written = try PostgresPushdown.write(parsed, url: store.file, mode: format, toTerminal: isatty(1) == 1, to: sink)
                }
                if written {
                    sink.flush()
                    return
                }
            } catch let error as QueryError {
                printError(error.render(source: statement))
                throw ExitCode(2)
            } catch let error as StoreError where engine == .auto && error.kind != .fileNotFound && !sink.hasFlushed {
                // A damaged file: the load reads what it can, with warnings (what the sink holds
                // is dropped: nothing is printed twice).
            }
            // A database too large to load: a count or filter on one type's own attributes is
            // answered a chunk of objects at a time; anything else it cannot answer is refused,
            // not loaded.
            if engine == .auto, file == nil, let estimate = try MemoryBudget.overBudget(postgres: store.file, budget: memoryBudget ?? .standard) {
                if try PostgresDatabase.holdsPersist(url: store.file) {
                    throw CLIError("a whole load (≈ \(MemoryBudget(bytes: estimate))) is over the \(memoryBudget ?? .standard) memory budget, and \(Repl.unkeyedPersist); raise --memory-budget to load it")
                }
                if try answeredInChunks(parsed, {
                    let opening = try PagedOpening.open(postgres: store.file, reason: nil)
                    return (opening.pages, opening.querySource)
                }) { return }
                throw CLIError("a whole load (≈ \(MemoryBudget(bytes: estimate))) is over the \(memoryBudget ?? .standard) memory budget, and PostgreSQL cannot answer this statement exactly (it leaves \(PostgresPages.unanswered) to the in-memory engine); raise --memory-budget to load it")
            }
            // A plain SQLite file or a Core Data store too large to load: the same.
            if engine == .auto, let file, !isMutation(parsed), let (estimate, _) = try MemoryBudget.overBudget(store.file, budget: memoryBudget ?? .standard, opened: file) {
                let over = "a whole load (≈ \(MemoryBudget(bytes: estimate))) is over the \(memoryBudget ?? .standard) memory budget"
                let format = try file.read { try StoreFormats.detect($0, path: store.file) }
                if format == RelationalFormat.self {
                    if try answeredInChunks(parsed, {
                        let pages = try RelationalPages.open(file)
                        return (pages, RelationalQuerySource(pages: pages))
                    }) { return }
                    throw CLIError("\(over), and SQL cannot answer this statement exactly over the file (it leaves \(RelationalPages.unanswered) to the in-memory engine); raise --memory-budget to load it")
                }
                if format == CoreDataFormat.self {
                    // SQL over the store answers the whole statement when it can (nothing
                    // asked it yet), else the chunks, asking SQL the filter's parts through relations.
                    if try answeredInChunks(parsed, sqlFirst: true, {
                        let pages = try CoreDataPages.open(file)
                        return (pages, try? CoreDataQuerySource(pages: pages))
                    }) { return }
                    throw CLIError("\(over), and over a Core Data store SQL answers paths through relationships and the engine an entity's own attributes a chunk of objects at a time (\(CoreDataPages.unanswered) need the whole graph); raise --memory-budget to load it")
                }
            }
            // A Core Data store asked of SQL alone: its tables answer, or the statement is refused.
            if engine == .sql, let file, try file.read({ try StoreFormats.detect($0, path: store.file) }) == CoreDataFormat.self {
                if try answeredBySQL(parsed, {
                    let pages = try CoreDataPages.open(file)
                    return (pages, try CoreDataQuerySource(pages: pages))
                }) { return }
                throw CLIError("SQL cannot answer this statement exactly over this Core Data store (\(CoreDataPages.unanswered) are left to the in-memory engine); run it with --engine auto or memory")
            }
            if engine == .sql {
                throw CLIError(store.isPostgres
                    ? "PostgreSQL cannot answer this statement exactly (it leaves \(PostgresPages.unanswered) to the in-memory engine); run it with --engine auto or memory"
                    : "SQL cannot answer this statement exactly here (the SQL engine reads plain relational SQLite files, Core Data stores and Persist stores, and leaves arithmetic (over a relational file, arithmetic not compared with a number), objects compared otherwise than with keys and collections it cannot count exactly to the in-memory engine); run it with --engine auto or memory")
            }
        } else if engine == .sql, parsed == nil {
            throw CLIError("the statement does not parse; run it with --engine auto to see where")
        }
        // On a Persist store with a fresh schema cache entry, only what the statement's names reach.
        let projection = !commit ? file.flatMap { file in parsed.flatMap { OneShotGraph.projection(file, for: $0) } } : nil
        // `count T where <numeric comparisons>` on a Persist file: SQLite answers without a load.
        if projection == nil, !commit, let file, let parsed, let n = try? CountPushdown.count(parsed, file: file) {
            let sink = OutputSink(fd: 1)
            QueryResult.count(n).write(format, graph: GraphBuilder(formatName: "").finish(), toTerminal: isatty(1) == 1, to: sink)
            sink.flush()
            return
        }
        let host: SessionHost
        let graph: ObjectGraph
        do {
            if let file {
                // Read no more than the statement needs (see OneShotGraph).
                let opened = try projection ?? OneShotGraph.open(file, for: parsed, writing: commit)
                for warning in opened.warnings where !warned.contains(warning) { printError("warning: \(warning)") }
                let fileHost = StoreHost()
                if let loaded = opened.loaded { fileHost.adopt(loaded) }
                host = fileHost
                graph = opened.graph
            } else {
                let opened = try store.open()
                host = opened.host()
                graph = opened.graph
            }
        }
        let session = ReplSession(graph: graph, mode: format)
        session.storePath = store.file   // a file's path, or the database's URL (`.reload`)
        session.host = host
        let isMutation: Bool = { if case .mutation? = parsed { return true }; return false }()
        if commit && !isMutation { throw ValidationError("--commit goes with update, insert or delete") }
        let toTerminal = isatty(1) == 1
        switch session.begin(statement) {
        case .reply(let reply):
            if let error = reply.error { printError(error); throw ExitCode(2) }
            writeReply(reply)
        case .evaluate(let evaluation):
            switch evaluation.run() {
            case .failure(let error):
                printError(error.render(source: statement))
                throw ExitCode(2)
            case .success(.result(let result)):
                let sink = OutputSink(fd: 1)
                result.write(format, graph: graph, toTerminal: toTerminal, to: sink)
                sink.flush()
                // Nothing is left to write: leave without tearing the graph down object by object.
                Platform.exit(0)
            case .success(let staged):
                let reply = session.finish(evaluation, .success(staged), seconds: 0)
                try showAndCommit(session, staged: reply.output)
            }
        case .load, .commit:
            throw ValidationError("dot-commands run in `loupe repl`")
        }
    }
}

extension Query {
    /// True for an update, insert or delete.
    func isMutation(_ statement: LoupeQuery.Statement) -> Bool {
        if case .mutation = statement { return true }
        return false
    }

    /// For a statement that sorts a Persist store's type by attributes whose order Loupe does
    /// not keep: the `loupe index` command that keeps them (nil otherwise).
    static func orderHint(_ statement: LoupeQuery.Statement, source: PersistQuerySource, file: String) -> String? {
        guard case .query(let q) = statement, case .sort(let keys)? = q.clauses.first, let typeName = q.type?.text,
              let type = source.pages.catalog.first(where: { $0.name.caseInsensitiveCompare(typeName) == .orderedSame })?.name,
              let kept = source.sortIndexes(typeName: type) else { return nil }
        let names = keys.compactMap { key -> String? in
            guard key.path.steps.count == 1, key.path.aggregate == nil, case .name(let name) = key.path.steps[0] else { return nil }
            return name.text
        }
        let missing = names.filter { !kept.contains($0) }
        guard !missing.isEmpty else { return nil }
        let quoted = file.contains(where: { " '\"$\\".contains($0) }) ? "'" + file.replacingOccurrences(of: "'", with: "'\\''") + "'" : file
        return "`loupe index \(quoted) \(missing.map { "\(type).\($0)" }.joined(separator: " "))` keeps the order of what it sorts by in Loupe's cache, and sorts by it read that"
    }

    /// Persist's layout in the PostgreSQL database at `url` opened as paged mode opens it, when a
    /// whole load would go over the memory budget and its keys are integers (paged mode's
    /// statements then read no more of it than they need: a one-shot answer over the whole
    /// schema reads every document first), with the whole load's estimate; nil otherwise.
    func overBudgetPersist(url: String) throws -> (opening: PagedOpening, estimate: Int64)? {
        guard let estimate = try MemoryBudget.overBudget(postgres: url, budget: memoryBudget ?? .standard), try PostgresDatabase.holdsPersist(url: url) else { return nil }
        do { return (try PagedOpening.open(postgres: url, reason: nil), estimate) } catch where PostgresPersistPages.refusesUnkeyed(error) {
            return nil
        }
    }

    /// The Persist store `file` read by SQL, when `--engine sql` asks for it or a whole load
    /// would go over the memory budget (then with the reason); nil for other formats and stores not
    /// keyed by integers, which load.
    func persistPages(_ file: StoreFile) throws -> (pages: PersistPages, overBudget: String?)? {
        let budget = memoryBudget ?? .standard
        let estimate = MemoryBudget.wholeLoadEstimate(path: store.file)
        guard engine == .sql || estimate > budget.bytes else { return nil }
        let reason = estimate > budget.bytes ? "a whole load (≈ \(MemoryBudget(bytes: estimate))) is over the \(budget) memory budget" : nil
        do { return try PersistPages.openIfPersist(file, path: store.file).map { ($0, reason) } } catch let error as StoreError {
            // Keys that are not integers: loaded whole (as the browser does), unless SQL was asked for.
            if engine != .sql { return nil }
            throw CLIError("SQL cannot read this Persist store by key (\(error.reason)); run it with --engine auto or memory")
        }
    }

    /// What an edit of `file` commits through when a whole load is over the memory budget: a
    /// Persist store (``persistPages(_:)``) or a plain SQLite file read a page at a time, or a
    /// Core Data store (whose types refuse edits, as a load's do); nil when the file loads
    /// (under the budget, or a format paged mode does not read).
    func overBudgetHost(_ file: StoreFile) throws -> (any PagedSessionHost)? {
        if let (pages, _) = try persistPages(file) { return PagedStoreHost(pages: pages, querySource: PersistQuerySource.following) }
        guard try MemoryBudget.overBudget(store.file, budget: memoryBudget ?? .standard, opened: file) != nil else { return nil }
        let format = try file.read { try StoreFormats.detect($0, path: store.file) }
        // A Core Data store: its types are read-only, and the edit is refused as over a load.
        if format == CoreDataFormat.self { return PagedStoreHost(pages: try CoreDataPages.open(file), querySource: CoreDataQuerySource.following) }
        guard format == RelationalFormat.self else { return nil }
        return PagedStoreHost(pages: try RelationalPages.open(file), querySource: RelationalQuerySource.following)
    }

    /// An `update`, `insert` or `delete` over a file whose whole load is over the budget: its
    /// `where` answered by SQLite, the objects it names read by key (``PagedChanges``), the
    /// writes shown and, with `--commit`, written in one transaction — the same output and the
    /// same rows as over the loaded graph.
    func stageOverBudget(_ mutation: Mutation, _ host: any PagedSessionHost) throws {
        var changes = try PagedChanges(pages: host.pagedStore.pages)
        let session = ReplSession(graph: changes.pending.graph, mode: format)
        session.host = host
        session.storePath = store.file
        let step: EditStep
        do {
            let schema = changes.base.graph
            step = try changes.stage(mutation, source: statement, storeKeys: { selection in
                try ChunkedAnswer.selectedKeys(selection, pages: host.pagedStore.pages, schema: schema, sql: host.pagedStore.querySource, isCancelled: { false })
            })
        } catch let error as QueryError {
            printError(error.render(source: statement))
            throw ExitCode(2)
        } catch let error as PagedEditError {
            throw CLIError("\(error)")
        }
        session.replacePending(changes.pending)
        try showAndCommit(session, staged: session.stagedText(step))
    }

    /// After an edit is staged (`staged` says so): the writes it makes, and with `--commit` the
    /// commit, whose failure exits 1 with nothing written.
    func showAndCommit(_ session: ReplSession, staged: String) throws {
        writeReply(ReplSession.Reply(output: staged))
        writeReply(ReplSession.Reply(output: try session.changesText()))
        guard commit else {
            print("nothing written: run again with --commit to write these changes")
            return
        }
        let done = session.execute(".commit")
        if let error = done.error { printError(error); throw ExitCode(1) }
        writeReply(done)
    }

    /// Prints what SQL answered over a file read a page at a time; objects are read by key to be printed.
    func write(_ answer: SourceAnswer, _ pages: PageSource) throws { try Query.write(answer, pages, format: format) }

    /// What SQL did not answer over a store too large to load, answered by the engine a chunk
    /// of objects at a time (``ChunkedAnswer``: a count, query or group on one type's own
    /// attributes, its filter's parts through relations asked of `sql`) and printed; false when
    /// the statement is not one it answers. With `sqlFirst`, `sql` is asked the whole statement
    /// first (when nothing has asked it yet).
    func writeInChunks(_ statement: LoupeQuery.Statement, _ pages: PageSource, sql: (any QuerySource)?, sqlFirst: Bool = false) throws -> Bool {
        if sqlFirst, let answer = try sql?.answer(statement, isCancelled: { false }) {
            try write(answer, pages)
            return true
        }
        guard let plan = try ChunkedAnswer.plan(statement, over: pages) else { return false }
        let answer: SourceAnswer
        do {
            answer = try plan.answer(statement, over: pages, sql: sql, isCancelled: { false })
        } catch is RelationPartUnanswered { return false }
        try write(answer, pages)
        return true
    }

    /// ``writeInChunks(_:_:sql:)`` over the pages and SQL `open` opens, its errors in the
    /// statement printed as the engine's (exit status 2).
    func answeredInChunks(_ statement: LoupeQuery.Statement, sqlFirst: Bool = false, _ open: () throws -> (PageSource, (any QuerySource)?)) throws -> Bool {
        do {
            let (pages, sql) = try open()
            return try writeInChunks(statement, pages, sql: sql, sqlFirst: sqlFirst)
        } catch let error as QueryError {
            printError(error.render(source: self.statement))
            throw ExitCode(2)
        }
    }

    /// The statement answered by `open`'s SQL alone and printed; false when it does not
    /// translate. Its errors in the statement are printed as the engine's (exit status 2).
    func answeredBySQL(_ statement: LoupeQuery.Statement, _ open: () throws -> (PageSource, any QuerySource)) throws -> Bool {
        do {
            let (pages, sql) = try open()
            guard let answer = try sql.answer(statement, isCancelled: { false }) else { return false }
            try write(answer, pages)
            return true
        } catch let error as QueryError {
            printError(error.render(source: self.statement))
            throw ExitCode(2)
        }
    }

    /// With `staged` changes, objects are printed as they leave them (new ones too); many objects
    /// are read and printed a part at a time (``SourceAnswer/write(_:pages:staged:toTerminal:to:partSize:)``).
    static func write(_ answer: SourceAnswer, _ pages: PageSource, format: OutputFormat) throws {
        let sink = OutputSink(fd: 1)
        try answer.write(format, pages: pages, toTerminal: isatty(1) == 1, to: sink)
        sink.flush()
    }
}

extension PersistPages {
    /// `file` (at `path`) read a page at a time when it is a Persist store; nil for other
    /// formats. Throws ``StoreError`` for a Persist store paged mode cannot read by key (keys
    /// that are not integers: it loads whole).
    static func openIfPersist(_ file: StoreFile, path: String) throws -> PersistPages? {
        guard try file.read({ try StoreFormats.detect($0, path: path) }) == PersistFormat.self else { return nil }
        return try PersistPages.open(file)
    }
}

/// `loupe query --engine`: who answers a statement.
enum QueryEngineChoice: String, ExpressibleByArgument, CaseIterable {
    case auto, memory, sql
}

struct Repl: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A line REPL: statements and dot-commands, one per line (reads stdin when it is not a terminal).")
    @OptionGroup var store: StoreArgument
    @Option(help: "Initial output mode.") var format: OutputFormat = .table
    @Option(help: "A Persist store, a plain SQLite file, a Core Data store or a PostgreSQL database whose whole load would take more than this is read a page at a time, statements answered by SQLite over the file or by PostgreSQL (or, on one type's own attributes, by the engine a chunk of objects at a time): 512M, 2G… (default: a quarter of the machine's memory, at most 2 GB).")
    var memoryBudget: MemoryBudget?

    func run() throws {
        if store.isPostgres, let estimate = try MemoryBudget.overBudget(postgres: store.file, budget: memoryBudget ?? .standard) {
            // A page at a time (edits too); Persist's layout keyed otherwise than by integers
            // statement by statement.
            do {
                let opening = try PagedOpening.open(postgres: store.file, reason: nil)
                try Repl.pagedLoop(opening, label: opening.label, budget: memoryBudget ?? .standard, format: format)
            } catch where PostgresPersistPages.refusesUnkeyed(error) {
                try Repl.postgresLoop(url: store.file, estimate: estimate, budget: memoryBudget ?? .standard, format: format)
            }
            return
        }
        if !store.isPostgres, let (_, file) = try MemoryBudget.overBudget(store.file, budget: memoryBudget ?? .standard) {
            let label = URL(fileURLWithPath: store.file).lastPathComponent
            // Other formats load whole.
            if let opening = try? PagedOpening.open(file, reason: nil) {
                try Repl.pagedLoop(opening, label: label, budget: memoryBudget ?? .standard, format: format)
                return
            }
        }
        let host: SessionHost
        let graph: ObjectGraph, banner: String
        do {
            // The loaded store's file is not kept open: a commit writes through its own connection.
            let opened = try store.open()
            host = opened.host()
            graph = opened.graph
            banner = "Loupe \(DisplayText.escaped(opened.label)) — \(opened.formatName), \(graph.types.count) types, \(graph.objectCount) objects. .help for help, .quit to leave."
        }
        try Repl.loop(graph: graph, path: store.file, host: host, banner: banner, mode: format)
    }

    /// The REPL over a store too large to load (a Persist store, a plain SQLite file or a Core Data store): each
    /// statement answered by SQLite over the file (``PersistQuerySource``,
    /// ``RelationalQuerySource``, ``CoreDataQuerySource``) as `loupe query` answers it over the budget; edits (`update`,
    /// `insert`, `delete`) staged over the objects they name, read by key (``PagedChanges``),
    /// with `.changes`, `.commit`, `.undo`, `.redo`, `.rollback` and `.reload` as in the loaded
    /// REPL; `.types` lists the catalog, `.quit` leaves (asking first when changes are pending);
    /// what needs the whole graph says so. Ctrl-C stops the statement that runs. On a terminal,
    /// lines are edited as in the loaded REPL.
    static func pagedLoop(_ opening: PagedOpening, label: String, budget: MemoryBudget, format: OutputFormat) throws {
        let host = opening.host
        var changes = try PagedChanges(pages: host.pagedStore.pages)
        let session = ReplSession(graph: changes.pending.graph, mode: format)
        session.host = host
        session.storePath = opening.path
        let interactive = isatty(0) == 1
        if interactive { print(overBudgetBanner(label, format: opening.formatName, changes.pages, budget: budget, engine: opening.pages is PostgresPages ? "PostgreSQL" : opening.querySource == nil ? "the engine a chunk of objects at a time" : "SQLite over the file")) }
        let interrupts = StatementInterrupts()
        defer { withExtendedLifetime(interrupts) {} }
        var failures = 0
        // Completion: types and their attributes as the schema knows them (the empty edit base).
        let schema = changes.base.graph
        var input = ReplInput(interactive: interactive) { text, cursor in Completion.complete(text, cursor: cursor, graph: schema, currentType: nil) }
        while !session.wantsQuit {
            guard let line = input.next(session) else { break }
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            func fail(_ message: String) { printError(message); failures += 1 }
            let (current, source) = host.pagedStore
            let statement: LoupeQuery.Statement
            do { statement = try Parser.parse(text) } catch let error as QueryError { fail(error.render(source: text)); continue }
            // The dot-commands that need no graph, and the catalog and schema read from the store.
            if case .dotCommand(let name, let arguments, _) = statement, case .success(let command) = ReplSession.command(named: name),
               let reply = pagedDotCommand(command, arguments, text: text, session: session, pages: current) {
                writeReply(reply)
                if let error = reply.error { fail(error) }
                continue
            }
            // The pending changes' dot-commands, as the loaded REPL runs them.
            if case .dotCommand(let name, _, _) = statement, case .success(let command) = ReplSession.command(named: name),
               ["changes", "commit", "undo", "redo", "rollback", "quit"].contains(command.name) {
                let reply = session.execute(text)
                writeReply(reply)
                if let error = reply.error { fail(error) }
                if command.name == "commit", reply.error == nil, let next = try? changes.afterCommit(on: host.pagedStore.pages, reach: changes.pending.changes.reach) {
                    changes = next
                }
                changes.adopt(session.pending)
                session.replacePending(changes.pending)
                continue
            }
            let cancellation = interrupts.begin()
            defer { interrupts.end() }
            do {
                if case .dotCommand(let name, _, _) = statement, case .success(let command) = ReplSession.command(named: name), command.name == "reload" {
                    try host.reopen()
                    let (next, dropped) = try changes.reopened(on: host.pagedStore.pages)
                    changes = next
                    session.replacePending(next.pending)
                    let catalog = next.pages.catalog
                    print("reloaded: \(catalog.count) types, \(catalog.reduce(0) { $0 + $1.count }) objects"
                          + (dropped.isEmpty ? (next.isEmpty ? "" : "; the pending changes are staged again")
                             : "; \(dropped.count) pending step\(dropped.count == 1 ? "" : "s") no longer apply and were dropped: " + dropped.map(\.label).joined(separator: " | ")))
                    continue
                }
                if case .mutation(let mutation) = statement {
                    var work = changes
                    let schema = changes.base.graph
                    let step = try work.stage(mutation, source: text, storeKeys: { selection in
                        try ChunkedAnswer.selectedKeys(selection, pages: current, schema: schema, sql: source, isCancelled: { cancellation.isCancelled })
                    }, cancellation: cancellation)
                    changes = work
                    session.replacePending(changes.pending)
                    writeReply(ReplSession.Reply(output: session.stagedText(step)))
                    continue
                }
                let started = DispatchTime.now().uptimeNanoseconds
                let asked = changes.fileStatement(for: statement)
                // SQL over the store, else the engine a chunk of objects at a time.
                var found = try source?.answer(asked, declaring: changes.declaredAttributes, isCancelled: { cancellation.isCancelled })
                if found == nil, let plan = ChunkedAnswer(asked, source: current, schema: changes.base.graph) {
                    do {
                        found = try plan.answer(asked, over: current, sql: source, declaring: changes.declaredAttributes, isCancelled: { cancellation.isCancelled })
                    } catch is RelationPartUnanswered {}
                }
                guard let fileAnswer = found else {
                    fail("error: over the memory budget, statements are answered by SQL over the store (or, on one type's own attributes, a chunk of objects at a time); this one needs the whole graph (\(opening.unanswered)); reopen with a larger --memory-budget")
                    continue
                }
                // Over the file: with changes pending, the staged state's answer (or a note).
                let declared = changes.declaredAttributes
                let (answer, overFile) = try changes.staged(statement, fileAnswer: fileAnswer) {
                    try source?.answer(statement, declaring: declared, isCancelled: { cancellation.isCancelled })
                }
                let note = overFile ? PagedChanges.overFileNote : nil
                session.replacePending(changes.pending)   // the base may have gained kinds
                try session.writeResult(started: started) { sink, toTerminal in
                    try answer.write(session.mode, pages: current, staged: changes, toTerminal: toTerminal, to: sink)
                }
                if let note { printError(note) }
            } catch {
                fail(failureLine(error, source: text, cancelled: cancellation.isCancelled))
            }
        }
        withExtendedLifetime(host) {}
        if !interactive && failures > 0 { throw ExitCode(1) }
    }

    /// The dot-commands a REPL over the memory budget has beside the pending changes' (which
    /// ``pagedLoop(_:label:budget:format:)`` runs as the loaded REPL does).
    static let pagedCommands: Set<String> = ["help", "types", "schema", "mode", "output", "once", "timer",
                                             "changes", "commit", "rollback", "undo", "redo", "reload", "quit"]

    /// A dot-command in a REPL over the memory budget that needs no graph (`.help`, `.mode`,
    /// `.output`, `.once`, `.timer`: the session's own), or reads the store's catalog (`.types`)
    /// or a sample of it (`.schema`, ``PageSource/schemaText(type:schema:sampleSize:)``), or
    /// `.open`, which is refused; nil for the others (the pending changes', `.reload`, `.quit`).
    static func pagedDotCommand(_ command: ReplSession.DotCommand, _ arguments: [String], text: String, session: ReplSession, pages: PageSource) -> ReplSession.Reply? {
        switch command.name {
        case "help" where arguments.isEmpty:
            return ReplSession.Reply(output: ReplSession.helpText(only: pagedCommands)
                                     + "Over the memory budget: .types and .schema read the store's catalog and each type's first objects; .open is left to `loupe repl FILE`.\n")
        case "help", "mode", "output", "once", "timer":
            return session.execute(text)
        case "types" where arguments.isEmpty, "schema" where arguments.count <= 1:
            do {
                let text: String
                if command.name == "types" {
                    text = ResultTable.typeCounts(pages.catalog, mode: session.mode)
                } else {
                    text = try pages.schemaText(typeNamed: arguments.first) + "\n"
                }
                try session.writeResult(started: nil) { sink, _ in sink.write(text) }
                return ReplSession.Reply(output: "")
            } catch {
                return ReplSession.Reply(output: "", error: "error: \(error)")
            }
        case "types", "schema":
            return session.execute(text)   // its usage line
        case "open":
            return ReplSession.Reply(output: "", error: "error: .open is not available over the memory budget; leave (.quit) and run `loupe repl FILE`")
        default:
            return nil
        }
    }

    /// The REPL over Persist's layout in PostgreSQL too large to load and keyed otherwise than by
    /// integers (paged mode finds objects by integer keys): each statement answered by
    /// PostgreSQL itself as `loupe query` answers it (``PostgresPushdown``: objects, projections,
    /// groups and counts printed as the loaded REPL prints them); `.types` lists the catalog,
    /// `.quit` leaves; edits and what PostgreSQL cannot answer exactly need the whole graph and
    /// say so. On a terminal, lines are edited as in the loaded REPL.
    static func postgresLoop(url: String, estimate: Int64, budget: MemoryBudget, format: OutputFormat) throws {
        let catalog = try PostgresDatabase.catalog(url: url)
        let session = ReplSession(graph: GraphBuilder(formatName: "PostgreSQL").finish(), mode: format)
        let interactive = isatty(0) == 1
        if interactive {
            print("Loupe \(DisplayText.escaped(PostgresConnection.withoutPassword(url))) — PostgreSQL, \(catalog.count) types, \(catalog.reduce(0) { $0 + $1.count }) objects; "
                  + "a whole load (≈ \(MemoryBudget(bytes: estimate))) is over the \(budget) memory budget: statements are answered by PostgreSQL. .quit to leave.")
        }
        var failures = 0
        var input = ReplInput(interactive: interactive) { text, cursor in Completion.complete(text, cursor: cursor, graph: session.engine.graph, currentType: nil) }
        lines: while let line = input.next(session) {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            func fail(_ message: String) { printError(message); failures += 1 }
            let statement: LoupeQuery.Statement
            do { statement = try Parser.parse(text) } catch let error as QueryError { fail(error.render(source: text)); continue }
            switch statement {
            case .dotCommand(let name, let arguments, _):
                guard case .success(let command) = ReplSession.command(named: name) else { fail(session.execute(text).error ?? "error: no such command .\(name)"); continue }
                switch command.name {
                case "quit": break lines
                case "help" where arguments.isEmpty:
                    print(ReplSession.helpText(only: postgresCommands), terminator: "")
                case "help", "mode", "output", "once", "timer":
                    let reply = session.execute(text)
                    writeReply(reply)
                    if let error = reply.error { fail(error) }
                case "types" where arguments.isEmpty:
                    do {
                        try session.writeResult(started: nil) { sink, _ in
                            sink.write(ResultTable.typeCounts(catalog, mode: session.mode))
                        }
                    } catch { fail("error: \(error)") }
                default:
                    fail("error: over the memory budget, this REPL answers statements and \(postgresCommands.sorted().map { "." + $0 }.joined(separator: ", ")); reopen with a larger --memory-budget for .\(command.name)")
                }
            case .mutation:
                fail("error: over the memory budget, Persist's layout in PostgreSQL keyed otherwise than by integers is edited in a loaded session (its documents are checked against what was loaded); reopen with a larger --memory-budget")
            default:
                do {
                    let started = DispatchTime.now().uptimeNanoseconds
                    guard let (result, graph) = try PostgresPushdown.run(statement, url: url) else {
                        fail("error: over the memory budget, \(unkeyedPersist); reopen with a larger --memory-budget")
                        continue
                    }
                    try session.writeResult(started: started) { sink, toTerminal in result.write(session.mode, graph: graph, toTerminal: toTerminal, to: sink) }
                } catch let error as QueryError {
                    fail(error.render(source: text))
                } catch {
                    fail("error: \(error)")
                }
            }
        }
        if !interactive && failures > 0 { throw ExitCode(1) }
    }

    /// Why PostgreSQL answers no statement over Persist's layout keyed otherwise than by integers.
    static let unkeyedPersist = "PostgreSQL answers statements over Persist's layout when its keys are integers and its documents jsonb (by_type.id here is not an integer)"

    /// The dot-commands of the REPL over Persist's layout in PostgreSQL keyed otherwise than by integers.
    static let postgresCommands: Set<String> = ["help", "types", "mode", "output", "once", "timer", "quit"]

    /// What a REPL over the memory budget says of a statement that threw: a query error with its
    /// caret, else that it was cancelled, else the error.
    static func failureLine(_ error: any Error, source: String, cancelled: Bool) -> String {
        if let error = error as? QueryError { return error.render(source: source) }
        return cancelled ? "error: cancelled" : "error: \(error)"
    }

    /// The first line a REPL over the memory budget prints on a terminal.
    static func overBudgetBanner(_ label: String, format: String, _ pages: PageSource, budget: MemoryBudget, engine: String = "SQLite over the file") -> String {
        "Loupe \(DisplayText.escaped(label)) — \(format), \(pages.catalog.count) types, \(pages.catalog.reduce(0) { $0 + $1.count }) objects, over the \(budget) memory budget: "
            + "statements are answered by \(engine). .quit to leave."
    }

    static func loop(graph: ObjectGraph, path: String?, host: SessionHost, banner: String, mode: OutputFormat) throws {
        let session = ReplSession(graph: graph, mode: mode)
        session.storePath = path
        session.host = host
        let interactive = isatty(0) == 1
        if interactive { print(banner) }
        let interrupts = StatementInterrupts()
        defer { withExtendedLifetime(interrupts) {} }
        var failures = 0
        var input = ReplInput(interactive: interactive) { text, cursor in
            Completion.complete(text, cursor: cursor, graph: session.engine.graph, currentType: session.currentType)
        }
        while !session.wantsQuit {
            guard let line = input.next(session) else { break }
            let cancellation = interrupts.begin()
            let reply = session.execute(line, cancellation: cancellation)
            interrupts.end()
            writeReply(reply)
            if let error = reply.error { printError(error); failures += 1 }
        }
        if !interactive && failures > 0 { throw ExitCode(1) }
    }
}

/// Where a line REPL's lines come from: on a terminal, the line editor (history, Tab completion
/// by `complete`); else standard input as lines come.
struct ReplInput {
    private let reader: LineReader?
    private let interactive: Bool
    private var warnedAtEnd = false

    init(interactive: Bool, complete: @escaping (String, Int) -> Completion.Result) {
        self.interactive = interactive
        reader = interactive && isatty(1) == 1 ? LineReader(completion: complete) : nil
    }

    /// The next line, or nil when the input ends. An end (Ctrl-D) with `session`'s changes not
    /// written: on a terminal, says so once as `.quit` does and reads on (a second Ctrl-D ends);
    /// from a script, notes they were not written.
    mutating func next(_ session: ReplSession) -> String? {
        while true {
            let line: String?
            if let reader { line = reader.readLine() } else {
                if interactive { print("loupe> ", terminator: ""); fflush(nil) }
                line = readLine(strippingNewline: true)
            }
            if let line { return line }
            guard !session.pending.isEmpty else { return nil }
            if reader != nil && !warnedAtEnd {
                warnedAtEnd = true
                printError("\(session.pendingSummary) not written: .commit writes them, .rollback drops them; Ctrl-D again leaves without writing them")
                continue
            }
            if reader == nil { printError("note: \(session.pendingSummary) not written (the input ended without .commit)") }
            return nil
        }
    }
}

/// Ctrl-C at a line REPL: stops the statement that runs (between ``begin()`` and ``end()``); at
/// the prompt it leaves (exit 130). Ctrl-C is handled so for as long as the value lives.
final class StatementInterrupts: @unchecked Sendable {
    private let running = Mutex<Cancellation?>(nil)
    private let source: any DispatchSourceSignal

    init() {
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { [unowned self] in
            if let cancellation = self.running.withLock({ $0 }) { cancellation.cancel() } else { Foundation.exit(130) }
        }
        source.resume()
    }

    deinit { source.cancel() }

    /// A statement starts: Ctrl-C cancels it from now on.
    func begin() -> Cancellation {
        let cancellation = Cancellation()
        running.withLock { $0 = cancellation }
        return cancellation
    }

    /// The statement ended: Ctrl-C leaves again.
    func end() { running.withLock { $0 = nil } }
}

struct Sample: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Generate a deterministic lending-library store of any size.")
    @Argument(help: "The file to create (must not exist).") var file: String
    @Option(help: "About how many objects.") var objects: Int = 3000
    @Option(help: "The random seed.") var seed: UInt64 = 1

    func validate() throws {
        guard objects > 0, objects <= 50_000_000 else { throw ValidationError("--objects must be between 1 and 50,000,000") }
    }

    func run() throws {
        let start = Date()
        try SampleGenerator.generate(path: file, objects: objects, seed: seed)
        let loaded = try LoadedStore.open(file)
        print("wrote \(DisplayText.escaped(file)): \(loaded.graph.objectCount) objects in \(loaded.graph.types.count) types (\(String(format: "%.1f", Date().timeIntervalSince(start))) s)")
    }
}

struct Browse: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Browse a store (the bundled sample when no file is given).")
    @Argument(help: "The SQLite file (or Couchbase Lite .cblite2 folder) to browse, opened read-only; or a PostgreSQL URL, postgres://user@host/db.") var file: String?
    @OptionGroup var reading: ReadArguments
    @Option(help: "Replay keys and statements from SCRIPT without a terminal, then write the last screen.") var play: String?
    @Option(help: "The screen size for --play, WIDTHxHEIGHT.") var size: String = "120x40"
    @Option(help: "Where --play writes the last screen: .txt (text) or .svg (picture); stdout when absent.") var output: String?
    @Flag(help: "Browse a Persist store, a plain SQLite file, a Core Data store or a PostgreSQL database (its tables, or Persist's layout) a page at a time (paged mode), whatever its size.") var paged = false
    @Option(help: "Browse a Persist store, a plain SQLite file, a Core Data store or a PostgreSQL database whose whole load would take more memory than this a page at a time: 512M, 2G… (default: a quarter of the machine's memory, at most 2 GB).")
    var memoryBudget: MemoryBudget?

    func validate() throws {
        let parts = size.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts[0] >= 20, parts[1] >= 8, parts[0] <= 1000, parts[1] <= 500 else {
            throw ValidationError("--size takes WIDTHxHEIGHT, at least 20x8")
        }
        if output != nil && play == nil { throw ValidationError("--output goes with --play") }
    }

    func run() throws {
        let path = try file ?? Browse.bundledSample()
        if let play {
            let script: String
            do { script = try String(contentsOfFile: play, encoding: .utf8) } catch { throw CLIError("cannot read play script '\(play)'") }
            let steps = try PlayScript.parse(script)
            if let source = try pagedSource(path) {
                let browser = Browser(fileLabel: source.label, formatName: source.formatName,
                                      theme: Theme.fromEnvironment(ProcessInfo.processInfo.environment))
                browser.storePath = path
                source.attach(to: browser)
                try writeScreen(browser, steps)
                withExtendedLifetime(source.host) {}   // the browser holds it weakly
                return
            }
            let opened = try OpenedStore.open(path)
            let host = opened.host()
            let browser = Browser(fileLabel: opened.loaded == nil ? opened.label : URL(fileURLWithPath: path).lastPathComponent, formatName: opened.formatName,
                                  theme: Theme.fromEnvironment(ProcessInfo.processInfo.environment))
            browser.storePath = path   // a file's path, or the database's URL (reload)
            browser.host = host
            browser.loadNote = wholeLoadNote(path)
            browser.attach(opened.graph)
            try writeScreen(browser, steps)
            return
        }
        guard isatty(0) == 1, isatty(1) == 1 else {
            if PostgresConnection.isURL(path) { _ = try PostgresConnection(url: path) } else {
                _ = try StoreFile.openForReading(path)   // a bad file is reported as such first
            }
            printError("loupe: not a terminal; use `loupe query FILE STATEMENT` or `loupe repl FILE` for scripts")
            throw ExitCode(1)
        }
        // (A PostgreSQL database over the budget is refused by pagedSource, before any load.)
        if let source = try pagedSource(path) { try Interactive.run(paged: source, path: path) }
        else if PostgresConnection.isURL(path) { try Interactive.run(opened: try OpenedStore.open(path)) }
        else { try Interactive.run(path: path, note: wholeLoadNote(path)) }
    }

    /// What the status line says of a file loaded whole although a whole load is over the memory
    /// budget (paged mode reads Persist stores keyed by integers, plain relational files and Core Data stores;
    /// README says so), or nil.
    func wholeLoadNote(_ path: String) -> String? {
        guard !paged, !PostgresConnection.isURL(path), let (estimate, _) = try? overBudget(path) else { return nil }
        return "loaded whole: ≈ \(MemoryBudget(bytes: estimate)), over the \(memoryBudget ?? .standard) budget"
    }

    func overBudget(_ path: String) throws -> (estimate: Int64, file: StoreFile)? {
        try MemoryBudget.overBudget(path, budget: memoryBudget ?? .standard)
    }

    /// Plays `steps` on `browser` and writes the last screen where `--output` says.
    private func writeScreen(_ browser: Browser, _ steps: [PlayScript.Step]) throws {
        let parts = size.split(separator: "x").compactMap { Int($0) }
        let screen = browser.play(steps, width: parts[0], height: parts[1])
        let text = output?.hasSuffix(".svg") == true ? screen.svg() : screen.text + "\n"
        if let output {
            do { try text.write(toFile: output, atomically: true, encoding: .utf8) } catch { throw CLIError("cannot write '\(output)'") }
        } else {
            print(text, terminator: "")
        }
    }

    /// The store at `path` read a page at a time, when `--paged` asks for it or a whole load would
    /// go over the memory budget and the store is a Persist file or a plain relational one; nil:
    /// load it whole.
    func pagedSource(_ path: String) throws -> PagedOpening? {
        guard !PostgresConnection.isURL(path) else {
            let budget = memoryBudget ?? .standard
            let estimate = try MemoryBudget.overBudget(postgres: path, budget: budget)
            guard paged || estimate != nil else { return nil }
            return try PagedOpening.open(postgres: path, reason: estimate.map { "a whole load (≈ \(MemoryBudget(bytes: $0))) is over the \(budget) memory budget" })
        }
        let over = try overBudget(path)
        guard paged || over != nil else { return nil }
        let file = try over?.file ?? StoreFile.openForReading(path)
        let reason = paged ? nil : over.map { "a whole load (≈ \(MemoryBudget(bytes: $0.estimate))) is over the \(memoryBudget ?? .standard) memory budget" }
        do {
            guard let opening = try PagedOpening.open(file, reason: reason) else {
                if paged { throw CLIError("--paged reads Persist stores, plain SQLite files and Core Data stores; '\(path)' is \(try file.read { try StoreFormats.detect($0, path: path) }.name)") }
                return nil   // other formats load whole
            }
            return opening
        } catch is StoreError where !paged {
            return nil   // a store paged mode cannot read (Persist keys that are not integers) loads whole
        }
    }

    /// The bundled sample: where `scripts/bootstrap.sh` installs it (`$XDG_DATA_HOME/loupe`, else
    /// `~/.local/share/loupe`), else `sample-data/library.sqlite` of the checkout the executable was
    /// built in or of the working folder. Found from any folder, the executable run by name or not.
    static func bundledSample() throws -> String {
        let data = UserFolders.base("XDG_DATA_HOME", default: ".local/share")!
        var candidates = [data + "/loupe/library.sqlite"]
        let executable = Bundle.main.executableURL ?? URL(fileURLWithPath: "/proc/self/exe")
        var url = executable.resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<6 { candidates.append(url.path + "/sample-data/library.sqlite"); url.deleteLastPathComponent() }
        candidates.append(FileManager.default.currentDirectoryPath + "/sample-data/library.sqlite")
        for c in candidates where FileManager.default.fileExists(atPath: c) { return c }
        throw CLIError("no file given and the bundled sample was not found (scripts/bootstrap.sh installs it in \(data)/loupe)")
    }
}
