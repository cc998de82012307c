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

/// The REPL over Persist's layout in PostgreSQL too large to load and keyed otherwise than by integers.
extension Repl {
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
        try readLines(session, interactive: interactive, complete: { Completion.complete($0, cursor: $1, graph: session.engine.graph, currentType: nil) }) { line, _, fail in
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { return }
            let statement: LoupeQuery.Statement
            do { statement = try Parser.parse(text) } catch let error as QueryError { fail(error.render(source: text)); return }
            switch statement {
            case .dotCommand(let name, let arguments, _):
                guard case .success(let command) = ReplSession.command(named: name) else { fail(session.execute(text).error ?? "error: no such command .\(name)"); return }
                if command.name == "quit" { _ = session.execute(text); return }
                guard let reply = limitedDotCommand(command, arguments, text: text, session: session, available: postgresCommands,
                                                    catalog: { catalog }, schema: nil) else { return }
                writeReply(reply)
                if let error = reply.error { fail(error) }
            case .mutation:
                fail("error: over the memory budget, Persist's layout in PostgreSQL keyed otherwise than by integers is edited in a loaded session (its documents are checked against what was loaded); reopen with a larger --memory-budget")
            default:
                do {
                    let started = DispatchTime.now().uptimeNanoseconds
                    guard let (result, graph) = try PostgresPushdown.run(statement, url: url) else {
                        fail("error: over the memory budget, \(Decline(.sql, .unkeyed, over: .postgresPersist).why); reopen with a larger --memory-budget")
                        return
                    }
                    try session.writeResult(started: started) { sink, toTerminal in result.write(session.mode, graph: graph, toTerminal: toTerminal, to: sink) }
                } catch let error as QueryError {
                    fail(error.render(source: text))
                } catch {
                    fail("error: \(error)")
                }
            }
        }
    }

    /// The dot-commands of the REPL over Persist's layout in PostgreSQL keyed otherwise than by integers.
    static let postgresCommands: Set<String> = ["help", "types", "mode", "output", "once", "timer", "quit"]
}
