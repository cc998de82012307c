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

/// The REPL over a store too large to load: a page at a time, statements answered by the store.
extension Repl {
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
        // Completion: types and their attributes as the schema knows them (the empty edit base).
        let schema = changes.base.graph
        try readLines(session, interactive: interactive, complete: { Completion.complete($0, cursor: $1, graph: schema, currentType: nil) }) { line, cancellation, fail in
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { return }
            let (current, source) = host.pagedStore
            let statement: LoupeQuery.Statement
            do { statement = try Parser.parse(text) } catch let error as QueryError { fail(error.render(source: text)); return }
            // The dot-commands that need no graph, and the catalog and schema read from the store.
            if case .dotCommand(let name, let arguments, _) = statement, case .success(let command) = ReplSession.command(named: name),
               let reply = limitedDotCommand(command, arguments, text: text, session: session, available: pagedCommands,
                                             catalog: { current.catalog }, schema: { try current.schemaText(typeNamed: $0) + "\n" }) {
                writeReply(reply)
                if let error = reply.error { fail(error) }
                return
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
                return
            }
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
                    return
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
                    return
                }
                if case .dotCommand(let name, _, _) = statement, case .success(let command) = ReplSession.command(named: name), command.name == "explain" {
                    let reply = explainPaged(ReplSession.explained(text), steps: steps, mode: session.mode)
                    writeReply(reply)
                    if let error = reply.error { fail(error) }
                    return
                }
                let started = DispatchTime.now().uptimeNanoseconds
                let asked = changes.fileStatement(for: statement)
                // As the planner plans it: SQL over the store, else the engine a chunk of objects at a time.
                let fileAnswer: SourceAnswer
                do {
                    guard case .answered(let found, _, _) = try Planner.plan(asked, PlanSituation(kind: opening.kind, paged: true)).run(steps) else { return }
                    fileAnswer = found
                } catch let refusal as PlanRefusal {
                    fail("error: over the memory budget, statements are answered by SQL over the store (or, on one type's own attributes, a chunk of objects at a time); this one needs the whole graph: \(refusal); reopen with a larger --memory-budget")
                    return
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


    /// What a REPL over the memory budget says of a statement that threw: a query error with its
    /// caret, else that it was cancelled, else the error.
    static func failureLine(_ error: any Error, source: String, cancelled: Bool) -> String {
        if let error = error as? QueryError { return error.render(source: source) }
        return cancelled ? "error: cancelled" : "error: \(error)"
    }
}
