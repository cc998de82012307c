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
        let graph: ObjectGraph, banner: String, kind: StoreKind
        do {
            // The loaded store's file is not kept open: a commit writes through its own connection.
            let opened = try store.open()
            host = opened.host()
            graph = opened.graph
            kind = opened.kind
            banner = "Loupe \(DisplayText.escaped(opened.label)) — \(opened.formatName), \(graph.types.count.counting("type")), \(graph.objectCount.counting("object")). .help for help, .quit to leave."
        }
        try Repl.loop(graph: graph, path: store.file, kind: kind, host: host, banner: banner, mode: format)
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
               let reply = limitedDotCommand(command, arguments, text: text, session: session, available: pagedCommands,
                                             catalog: { current.catalog }, schema: { try current.schemaText(typeNamed: $0) + "\n" }) {
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
                    print("reloaded: \(catalog.count.counting("type")), \((catalog.reduce(0) { $0 + $1.count }).counting("object"))"
                          + (dropped.isEmpty ? (next.isEmpty ? "" : "; the pending changes are staged again")
                             : "; \(dropped.count) pending step\(dropped.count == 1 ? "" : "s") no longer apply and were dropped: " + dropped.map(\.label).joined(separator: " | ")))
                    continue
                }
                let steps = StoreSteps(source: source, pages: current, schema: changes.base.graph, kind: opening.kind,
                                       declaring: changes.declaredAttributes, isCancelled: { cancellation.isCancelled })
                if case .mutation(let mutation) = statement {
                    var work = changes
                    let step = try work.stage(mutation, source: text, storeKeys: { selection in
                        try Planner.plan(selection, PlanSituation(kind: opening.kind, paged: true)).selectedKeys(steps)
                    }, cancellation: cancellation)
                    changes = work
                    session.replacePending(changes.pending)
                    writeReply(ReplSession.Reply(output: session.stagedText(step)))
                    continue
                }
                if case .dotCommand(let name, _, _) = statement, case .success(let command) = ReplSession.command(named: name), command.name == "explain" {
                    let reply = explainPaged(ReplSession.explained(text), steps: steps, mode: session.mode)
                    writeReply(reply)
                    if let error = reply.error { fail(error) }
                    continue
                }
                let started = DispatchTime.now().uptimeNanoseconds
                let asked = changes.fileStatement(for: statement)
                // As the planner plans it: SQL over the store, else the engine a chunk of objects at a time.
                let fileAnswer: SourceAnswer
                do {
                    guard case .answered(let found, _, _) = try Planner.plan(asked, PlanSituation(kind: opening.kind, paged: true)).run(steps) else { continue }
                    fileAnswer = found
                } catch let refusal as PlanRefusal {
                    fail("error: over the memory budget, statements are answered by SQL over the store (or, on one type's own attributes, a chunk of objects at a time); this one needs the whole graph: \(refusal); reopen with a larger --memory-budget")
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
    static let pagedCommands: Set<String> = ["help", "types", "schema", "mode", "output", "once", "timer", "explain",
                                             "changes", "commit", "rollback", "undo", "redo", "reload", "quit"]

    /// A dot-command in a REPL over the memory budget, from the one command table
    /// (``ReplSession/commands``): the session's own that need no graph (`.help`, `.mode`,
    /// `.output`, `.once`, `.timer`), the store's catalog (`.types`) or a sample of it
    /// (`.schema`, when `schema` reads one); `.open`, and any command not `available`, refused
    /// with one line; nil for those the loop runs itself (the pending changes', `.reload`,
    /// `.explain`, `.quit`).
    static func limitedDotCommand(_ command: ReplSession.DotCommand, _ arguments: [String], text: String, session: ReplSession, available: Set<String>,
                                  catalog: () -> [(name: String, count: Int)], schema: ((String?) throws -> String)?) -> ReplSession.Reply? {
        switch command.name {
        case "help" where arguments.isEmpty:
            return ReplSession.Reply(output: ReplSession.helpText(only: available) + (schema == nil ? ""
                : "Over the memory budget: .types and .schema read the store's catalog and each type's first objects; .open is left to `loupe repl FILE`.\n"))
        case "open":
            return ReplSession.Reply(output: "", error: "error: .open is not available over the memory budget; leave (.quit) and run `loupe repl FILE`")
        case _ where !available.contains(command.name):
            return ReplSession.Reply(output: "", error: "error: over the memory budget, this REPL answers statements and \(available.sorted().map { "." + $0 }.joined(separator: ", ")); reopen with a larger --memory-budget for .\(command.name)")
        case "help", "mode", "output", "once", "timer":
            return session.execute(text)
        case "types" where arguments.isEmpty, "schema" where arguments.count <= 1:
            do {
                let text = command.name == "types" ? ResultTable.typeCounts(catalog(), mode: session.mode) : try schema?(arguments.first) ?? ""
                try session.writeResult(started: nil) { sink, _ in sink.write(text) }
                return ReplSession.Reply(output: "")
            } catch {
                return ReplSession.Reply(output: "", error: "error: \(error)")
            }
        case "types", "schema":
            return session.execute(text)   // its usage line
        default:
            return nil
        }
    }

    /// `.explain STATEMENT` in the paged REPL: the statement planned as paged mode plans it,
    /// run with the SQL it sends recorded, its plan printed (JSON in json mode).
    static func explainPaged(_ text: String, steps: StoreSteps, mode: OutputFormat) -> ReplSession.Reply {
        guard !text.isEmpty else { return ReplSession.Reply(output: "", error: "Usage: .explain STATEMENT") }
        do {
            let report = try PlanReport.paged(text, steps: steps)
            return ReplSession.Reply(output: (mode == .json ? report.json : report.text) + "\n")
        } catch {
            return ReplSession.Reply(output: "", error: failureLine(error, source: text, cancelled: false))
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
            print("Loupe \(DisplayText.escaped(PostgresConnection.withoutPassword(url))) — PostgreSQL, \(catalog.count.counting("type")), \((catalog.reduce(0) { $0 + $1.count }).counting("object")); "
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
                if command.name == "quit" { break lines }
                guard let reply = limitedDotCommand(command, arguments, text: text, session: session, available: postgresCommands,
                                                    catalog: { catalog }, schema: nil) else { continue }
                writeReply(reply)
                if let error = reply.error { fail(error) }
            case .mutation:
                fail("error: over the memory budget, Persist's layout in PostgreSQL keyed otherwise than by integers is edited in a loaded session (its documents are checked against what was loaded); reopen with a larger --memory-budget")
            default:
                do {
                    let started = DispatchTime.now().uptimeNanoseconds
                    guard let (result, graph) = try PostgresPushdown.run(statement, url: url) else {
                        fail("error: over the memory budget, \(Decline(.sql, .unkeyed, over: .postgresPersist).why); reopen with a larger --memory-budget")
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
        "Loupe \(DisplayText.escaped(label)) — \(format), \(pages.catalog.count.counting("type")), \((pages.catalog.reduce(0) { $0 + $1.count }).counting("object")), over the \(budget) memory budget: "
            + "statements are answered by \(engine). .quit to leave."
    }

    static func loop(graph: ObjectGraph, path: String?, kind: StoreKind, host: SessionHost, banner: String, mode: OutputFormat) throws {
        let session = ReplSession(graph: graph, mode: mode)
        session.storePath = path
        session.storeKind = kind
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
        print("wrote \(DisplayText.escaped(file)): \(loaded.graph.objectCount.counting("object")) in \(loaded.graph.types.count.counting("type")) (\(String(format: "%.1f", Date().timeIntervalSince(start))) s)")
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
                try writeScreen(browser, steps, moves: PostgresConnection.isURL(path) ? nil : FileMoves(path: path))
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
            try writeScreen(browser, steps, moves: opened.moves())
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

    /// Plays `steps` on `browser` and writes the last screen where `--output` says. A `wait`
    /// looks at the store's file (`moves`) as the interactive browser does, ten times a second.
    private func writeScreen(_ browser: Browser, _ steps: [PlayScript.Step], moves: (any StoreMoves)? = nil) throws {
        let parts = size.split(separator: "x").compactMap { Int($0) }
        let screen = browser.play(steps, width: parts[0], height: parts[1]) { seconds in
            let end = Date().addingTimeInterval(seconds)
            while Date() < end {
                Thread.sleep(forTimeInterval: min(0.1, max(0, end.timeIntervalSinceNow)))
                if moves?.moved() == true { browser.storeChangedOnDisk() }
            }
        }
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
