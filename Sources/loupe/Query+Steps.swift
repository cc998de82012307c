import ArgumentParser
import DisplayText
import Foundation
import LoupeModel
import LoupeQuery
import LoupeStore
import LoupeHost
import LoupeSQL
import LoupePostgres

/// How `loupe query` asks a plan's engines (``QueryPlan/run(_:)``): SQL over a relational file
/// or PostgreSQL writes its rows as it reads them; SQL over the other kinds and the chunks
/// answer over the store read a page at a time (opened once, when a step first needs it), and
/// the answer is printed. With `--explain` nothing is printed: the rows are counted.
final class CommandSteps: PlanSteps {
    /// What a step printed: how many rows (nil when they streamed uncounted).
    struct Written { let rows: Int? }

    let query: Query
    let driver: StoreDriver
    /// What the file's schema warned of, once printed (the load after a failed answer says the rest).
    private(set) var warned = Set<String>()
    private var opened: PagedOpening??

    init(query: Query, driver: StoreDriver) {
        self.query = query
        self.driver = driver
    }

    /// The store read a page at a time, opened on first use; nil when its kind does not page.
    func paged() throws -> PagedOpening? {
        if let opened { return opened }
        let opening: PagedOpening?
        do { opening = try driver.openPaged(reason: nil, unkeyedLoads: query.engine != .sql) } catch let error as StoreError where driver.kind == .persist {
            throw CLIError("SQL cannot read this Persist store by key (\(error.reason)); run it with --engine auto or memory")
        }
        opened = .some(opening)
        return opening
    }

    /// The pages the chunks read: over the budget only (under it, the load answers).
    func pagedForChunks() throws -> PageSource? {
        guard driver.overBudget != nil, query.engine != .memory else { return nil }
        return try paged()?.pages
    }

    func sql(_ statement: LoupeQuery.Statement) throws -> Written? {
        // Persist's layout in PostgreSQL is read by key over the budget when keyed by integers.
        let persistByKey = try driver.kind == .postgresPersist && driver.overBudget != nil && paged() != nil
        switch driver.kind {
        case .relational where query.explain:
            guard let file = driver.file else { return nil }
            return try SQLPushdown.answer(statement, file: file, throwingDeclines: true, isCancelled: { false }).map { Written(rows: $0.rowCount) }
        case .postgres where query.explain, .postgresPersist where query.explain && !persistByKey:
            return try PostgresPushdown.run(statement, url: driver.location).map { Written(rows: $0.result.rowCount) }
        case .relational:
            return try streamed(statement) { mode, toTerminal, sink in
                guard let file = driver.file else { return false }
                return try SQLPushdown.write(statement, file: file, mode: mode, toTerminal: toTerminal, to: sink, throwingDeclines: true) { warnings in
                    for warning in warnings where !self.warned.contains(warning) { printError("warning: \(warning)") }
                    self.warned.formUnion(warnings)
                }
            }
        case .postgres:
            return try streamed(statement) { mode, toTerminal, sink in
                try PostgresPushdown.write(statement, url: driver.location, mode: mode, toTerminal: toTerminal, to: sink)
            }
        case .postgresPersist where !persistByKey:
            // Under the budget, or keyed otherwise than by integers: statement by statement.
            let written = try streamed(statement) { mode, toTerminal, sink in
                try PostgresPushdown.write(statement, url: driver.location, mode: mode, toTerminal: toTerminal, to: sink)
            }
            if written == nil, driver.overBudget != nil { throw Decline(.sql, .unkeyed, over: driver.kind) }
            return written
        default:
            guard let opening = try paged(), let source = opening.querySource else { throw Decline(.sql, .noSQL, over: driver.kind) }
            let started = DispatchTime.now().uptimeNanoseconds
            guard let answer = try source.answer(statement, isCancelled: { false }) else { return nil }
            try print(answer, opening.pages)
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            if seconds > 2, let persist = source as? PersistQuerySource, let hint = Query.orderHint(statement, source: persist, file: driver.location) {
                printError(String(format: "(%.1f s: %@)", seconds, hint))
            }
            return Written(rows: answer.rowCount)
        }
    }

    func chunks(_ statement: LoupeQuery.Statement) throws -> Written? {
        guard let opening = try paged() else { return nil }
        let steps = StoreSteps(source: opening.querySource, pages: opening.pages, schema: nil, kind: driver.kind, isCancelled: { false })
        guard let answer = try steps.chunks(statement) else { return nil }
        try print(answer, opening.pages)
        return Written(rows: answer.rowCount)
    }

    /// SQL that writes its rows as it reads them (`write` false: it does not translate). A
    /// damaged file's error, before anything is printed, is a decline: the load reads what it can.
    private func streamed(_ statement: LoupeQuery.Statement, _ write: (OutputMode, Bool, OutputSink) throws -> Bool) throws -> Written? {
        let sink = OutputSink(fd: 1)
        do {
            guard try write(query.format, isatty(1) == 1, sink) else { return nil }
        } catch let error as StoreError where query.engine == .auto && error.kind != .fileNotFound && !sink.hasFlushed {
            throw Decline(.sql, .failed(error.reason), over: driver.kind)
        }
        sink.flush()
        return Written(rows: nil)
    }

    /// Prints what SQL or the chunks answered over the pages (objects read by key to be
    /// printed); nothing with --explain.
    private func print(_ answer: SourceAnswer, _ pages: PageSource) throws {
        guard !query.explain else { return }
        try Query.write(answer, pages, format: query.format)
    }
}

extension Query {
    /// The load's answer, as the plan's last step: the graph read no further than the statement
    /// needs (``OneShotGraph``), the statement run by the in-memory engine, the answer printed
    /// (an edit staged, shown, and committed with --commit). `warned`: warnings already printed.
    func answerLoaded(_ parsed: LoupeQuery.Statement, _ driver: StoreDriver, plan: QueryPlan? = nil, declines: [Decline], warned: Set<String>) throws {
        let started = DispatchTime.now().uptimeNanoseconds
        let host: SessionHost
        let graph: ObjectGraph
        var detail = "whole graph loaded"
        if let file = driver.file {
            let opened = try (commit ? nil : OneShotGraph.projection(file, for: parsed)) ?? OneShotGraph.open(file, for: parsed, writing: commit)
            for warning in opened.warnings where !warned.contains(warning) { printError("warning: \(warning)") }
            let fileHost = StoreHost()
            if let loaded = opened.loaded { fileHost.adopt(loaded) }
            (host, graph, detail) = (fileHost, opened.graph, opened.path)
        } else {
            let opened = try store.open()
            (host, graph) = (opened.host(), opened.graph)
        }
        let session = ReplSession(graph: graph, mode: format)
        session.storePath = store.file   // a file's path, or the database's URL (`.reload`)
        session.host = host
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
                if explain, let plan {
                    printPlan(plan, answeredBy: .memory, declines: declines, detail: detail, rows: result.rowCount, started: started)
                    return
                }
                let sink = OutputSink(fd: 1)
                result.write(format, graph: graph, toTerminal: isatty(1) == 1, to: sink)
                sink.flush()
                // Nothing is left to write: leave without tearing the graph down object by object.
                Platform.exit(0)
            case .success(let staged):
                if explain, let plan { return printPlan(plan, answeredBy: .memory, declines: declines, detail: "staged over the loaded graph, not written", rows: nil, started: started) }
                let reply = session.finish(evaluation, .success(staged), seconds: 0)
                try showAndCommit(session, staged: reply.output)
            }
        case .load, .commit, .changesSince:
            throw ValidationError("dot-commands run in `loupe repl`")
        }
    }

    /// An `update`, `insert` or `delete` over a store whose whole load is over the budget: its
    /// `where` answered as the planner plans it (SQL, else the chunks), the objects it names
    /// read by key (``PagedChanges``), the writes shown and, with `--commit`, written in one
    /// transaction — the same output and the same rows as over the loaded graph.
    func stageOverBudget(_ mutation: Mutation, _ opening: PagedOpening) throws {
        let host = opening.host
        var changes = try PagedChanges(pages: host.pagedStore.pages)
        let session = ReplSession(graph: changes.pending.graph, mode: format)
        session.host = host
        session.storePath = store.file
        let step: EditStep
        do {
            let steps = StoreSteps(source: host.pagedStore.querySource, pages: host.pagedStore.pages, schema: changes.base.graph, kind: opening.kind, isCancelled: { false })
            step = try changes.stage(mutation, source: statement, storeKeys: { selection in
                try Planner.plan(selection, PlanSituation(kind: opening.kind, paged: true)).selectedKeys(steps)
            })
        } catch let error as QueryError {
            printError(error.render(source: statement))
            throw ExitCode(2)
        } catch let error as PagedEditError {
            throw CLIError("\(error)")
        }
        session.replacePending(changes.pending)
        if explain { return print("plan: the edit's where answered over the store as paged mode answers it, its objects read by key and staged; nothing is written") }
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
        guard try file.read({ try StoreKind.of(StoreFormats.detect($0, path: path)) }) == .persist else { return nil }
        return try PersistPages.open(file)
    }
}
