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

/// `loupe repl`: the line REPL over any store — loaded, a page at a time, or statement by
/// statement — every kind through one loop (``readLines(_:interactive:complete:_:)``).
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
        try readLines(session, interactive: interactive, complete: { Completion.complete($0, cursor: $1, graph: session.engine.graph, currentType: session.currentType) }) { line, cancellation, fail in
            let reply = session.execute(line, cancellation: cancellation)
            writeReply(reply)
            if let error = reply.error { fail(error) }
        }
    }

    /// The line REPL of every store kind (``loop(graph:path:kind:host:banner:mode:)`` loaded,
    /// ``pagedLoop(_:label:budget:format:)`` a page at a time, ``postgresLoop(url:estimate:budget:format:)``
    /// statement by statement): each line from the terminal's line editor (history, Tab
    /// completion by `complete`) or from standard input is handed to `step` with a cancellation
    /// Ctrl-C sets while it runs, until `.quit` (the session wants to quit) or the end of input.
    /// `step` writes its answer and calls `fail` with each error line, printed to standard error;
    /// input that was not a terminal and met an error exits 1, as sqlite3 does.
    static func readLines(_ session: ReplSession, interactive: Bool, complete: @escaping (String, Int) -> Completion.Result,
                          _ step: (_ line: String, _ cancellation: Cancellation, _ fail: (String) -> Void) throws -> Void) throws {
        let interrupts = StatementInterrupts()
        defer { withExtendedLifetime(interrupts) {} }
        var failures = 0
        var input = ReplInput(interactive: interactive, complete: complete)
        while !session.wantsQuit {
            guard let line = input.next(session) else { break }
            let cancellation = interrupts.begin()
            defer { interrupts.end() }
            try step(line, cancellation) { printError($0); failures += 1 }
        }
        if !interactive && failures > 0 { throw ExitCode(1) }
    }
}
