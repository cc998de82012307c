import ArgumentParser
import DisplayText
import Foundation
import LoupeModel
import LoupeQuery
import LoupeStore
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
            --explain prints the plan instead of the answer: which engine answered, the SQL sent, why an engine declined.
            """)
    @OptionGroup var store: StoreArgument
    @Argument(help: "The statement, e.g. 'Book where pages > 300 sort by title'.") var statement: String
    @Option(help: "table, json, ndjson, csv, markdown or line (default: table); with --explain, json prints the plan as JSON.") var format: OutputFormat = .table
    @Flag(help: "Write the changes an update, insert or delete stages (without it they are only shown).") var commit = false
    @Flag(help: "Print the plan (the engines asked in order, what each did and why, the SQL sent with its values, the rows) instead of the answer; the statement runs, nothing is written.")
    var explain = false
    @Option(help: "Which engine answers: auto (the planner's choice: SQL where the store's indexes answer faster than a load or the store is over the memory budget, else memory), memory (load the graph), sql (the database only: refused, with the reason, when SQL cannot answer the statement exactly).")
    var engine: QueryEngineChoice = .auto
    @Option(help: "A store whose whole load would take more than this is answered by SQL over it, or by the engine a chunk of objects at a time on one type's own attributes (what cannot be answered so is refused, not loaded): 512M, 2G… (default: a quarter of the machine's memory, at most 2 GB).")
    var memoryBudget: MemoryBudget?

    func run() throws {
        let parsed: LoupeQuery.Statement
        do { parsed = try Parser.parse(statement) } catch let error as QueryError {
            printError(error.render(source: statement))
            throw ExitCode(2)
        }
        let isMutation: Bool = { if case .mutation = parsed { return true }; return false }()
        if commit && !isMutation { throw ValidationError("--commit goes with update, insert or delete") }
        if engine == .sql && isMutation {
            throw ValidationError("--engine sql answers queries; an update, insert or delete is staged over the loaded graph or the objects it names (--engine memory or auto)")
        }
        // The store, detected once: its kind, the file opened once, its load against the budget.
        let driver = try StoreDriver.detect(store.file, budget: memoryBudget ?? .standard)
        guard !isDotCommand(parsed) else { return try answerLoaded(parsed, driver, declines: [], warned: []) }
        // An edit of a store too large to load: staged over the objects it names, read by key,
        // shown, and written with --commit, as over the loaded graph.
        if case .mutation(let mutation) = parsed, engine != .memory, driver.overBudget != nil,
           let opening = try driver.openPaged(reason: nil, unkeyedLoads: true) {
            return try stageOverBudget(mutation, opening)
        }
        if isMutation {
            let plan = Planner.plan(parsed, driver.situation(only: .memory))
            return try answerLoaded(parsed, driver, plan: plan, declines: plan.declined, warned: [])
        }
        let steps = CommandSteps(query: self, driver: driver)
        let plan = Planner.plan(parsed, driver.situation(only: engine.only, paged: try steps.pagedForChunks()))
        if explain { SQLTrace.start() }
        let started = DispatchTime.now().uptimeNanoseconds
        let outcome: PlanOutcome<CommandSteps.Written>
        do {
            outcome = try plan.run(steps)
        } catch let error as QueryError {
            _ = SQLTrace.stop()
            printError(error.render(source: statement))
            throw ExitCode(2)
        } catch var refusal as PlanRefusal {
            _ = SQLTrace.stop()
            refusal.remedy = driver.overBudget != nil && engine != .sql ? "raise --memory-budget to load it" : "run it with --engine auto or memory"
            throw CLIError(refusal.description)
        }
        switch outcome {
        case .answered(let written, let engine, let declines):
            if explain { printPlan(plan, answeredBy: engine, declines: declines, rows: written.rows, started: started) }
        case .load(let declines):
            try answerLoaded(parsed, driver, plan: plan, declines: declines, warned: steps.warned)
        }
    }

    /// True for a dot-command (they run in `loupe repl`).
    func isDotCommand(_ statement: LoupeQuery.Statement) -> Bool {
        if case .dotCommand = statement { return true }
        return false
    }

    /// Prints `plan`'s report (``PlanReport``) after it ran: the SQL recorded since it started.
    func printPlan(_ plan: QueryPlan, answeredBy: PlanEngine?, declines: [Decline], detail: String? = nil, rows: Int?, started: UInt64) {
        let milliseconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
        let report = PlanReport(plan, source: statement, answeredBy: answeredBy, declines: declines, detail: detail,
                                sql: SQLTrace.stop(), rows: rows, milliseconds: milliseconds)
        if format == .json { print(report.json) } else { print(DisplayText.escapedLines(report.text)) }
    }
}

/// `loupe query --engine`: who answers a statement.
enum QueryEngineChoice: String, ExpressibleByArgument, CaseIterable {
    case auto, memory, sql
}

extension QueryEngineChoice {
    /// The one engine `--engine` asks for, nil for the planner's choice.
    var only: PlanEngine? {
        switch self {
        case .auto: return nil
        case .memory: return .memory
        case .sql: return .sql
        }
    }
}
