import ArgumentParser
import DisplayText
import Foundation
import LoupeModel
import LoupePostgres
import LoupeQuery
import LoupeStore

/// `loupe watch STORE [TYPE…]` (a SQLite file or a PostgreSQL URL): each change another process commits, printed as it lands.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print each object change as another process commits it (tail -f for an object graph).",
        discussion: """
            The store is read, never written: Loupe notices a commit by the file's stamp (its size, change
            counter, write-ahead log and its index), checked every --interval — or a PostgreSQL server's
            next transaction id, read once a second — then reads the store again and prints what differs from
            the last read, one line per object (as loupe diff prints it), stamped with the time and the
            commit's number. Several commits between two checks print as one. The store is held in memory
            to compare with; Ctrl-C stops, as does --commits N.
            """)
    @Argument(help: "The store to watch: a SQLite file (Persist, plain SQLite, Core Data…) or a postgres:// URL.") var file: String
    @Argument(help: "The types to watch (default: every type).") var types: [String] = []
    @Option(name: .customLong("where"), help: "Print only changes to objects this predicate holds for (after the change; before it, for a deletion); needs one TYPE.")
    var predicate: String?
    @Option(help: "table (a line per change) or ndjson (a JSON object per change, with its commit and time).") var format: OutputFormat = .table
    @Option(help: "Seconds between two looks at the file.") var interval: Double = 0.25
    @Option(help: "Stop after this many commits that changed something.") var commits: Int?
    @Option(help: "A store whose whole load would take more than this is refused (watch holds it in memory): 512M, 2G…")
    var memoryBudget: MemoryBudget?
    @OptionGroup var reading: ReadArguments

    func validate() throws {
        guard [.table, .ndjson].contains(format) else { throw ValidationError("watch prints table or ndjson") }
        guard interval >= 0.05, interval <= 60 else { throw ValidationError("--interval is between 0.05 and 60 seconds") }
        if predicate != nil, types.count != 1 { throw ValidationError("--where filters one type: name it (loupe watch FILE Book --where 'pages > 300')") }
        if let commits, commits < 1 { throw ValidationError("--commits is at least 1") }
    }

    func run() throws {
        let isDatabase = PostgresConnection.isURL(file)
        let budget = memoryBudget ?? .standard
        let estimate = isDatabase ? try MemoryBudget.overBudget(postgres: file, budget: budget) : try MemoryBudget.overBudget(file, budget: budget)?.0
        if let estimate {
            throw CLIError("watch holds the store in memory to compare each commit with, and a whole load (≈ \(MemoryBudget(bytes: estimate))) is over the \(budget) memory budget; raise --memory-budget")
        }
        if !isDatabase { _ = try StoreFile.openForReading(file) }   // a file that is not a store is one line, now
        let moves: any StoreMoves = isDatabase ? PostgresMoves(url: file) : FileMoves(path: file)
        var warned: [String] = []
        var graph = try read(warned: &warned)
        // A mistake is reported before any wait.
        for type in types where graph.type(named: type) == nil {
            throw CLIError("unknown type '\(type)'" + suggestion(type, among: graph.types.map(\.name.rawValue)))
        }
        if let predicate { _ = try matching(predicate, in: graph) }
        printError("watching \(DisplayText.escaped(PostgresConnection.withoutPassword(file))): \(graph.types.count.counting("type")), \(graph.objectCount.counting("object")) (Ctrl-C stops)")
        let out = OutputSink(fd: 1)
        var seen = 0
        while commits.map({ seen < $0 }) ?? true {
            Thread.sleep(forTimeInterval: interval)
            guard moves.moved() else { continue }
            let next = try read(warned: &warned)
            let changes = try self.changes(from: graph, to: next)
            graph = next
            guard !changes.isEmpty else { continue }   // a checkpoint, or a transaction not yet committed
            seen += 1
            let at = DateText.iso(Date())
            for change in changes { out.write(line(change, commit: seen, at: at) + "\n") }
            out.flush()
        }
    }

    /// The store as it is now, loaded; what the load warns of is printed when it was not at
    /// the last read (`warned`), not at every commit.
    func read(warned: inout [String]) throws -> ObjectGraph {
        let graph: ObjectGraph, warnings: [String]
        if PostgresConnection.isURL(file) {
            let loaded = try PostgresDatabase.load(url: file)
            (graph, warnings) = (loaded.graph, loaded.warnings)
        } else {
            let store = try LoadedStore.open(file)
            (graph, warnings) = (store.graph, store.warnings)
        }
        for warning in warnings where !warned.contains(warning) { printError("warning: \(DisplayText.escaped(warning))") }
        warned = warnings
        return graph
    }

    /// What differs between two reads of the store, in the watched types, filtered by `--where`.
    func changes(from old: ObjectGraph, to new: ObjectGraph) throws -> [ObjectChange] {
        var changes: [ObjectChange] = []
        try StoreDiff(GraphDiffSide(old), GraphDiffSide(new)).run(only: types) { event in
            if case .change(let change) = event { changes.append(change) }
        }
        guard let predicate else { return changes }
        let before = try matching(predicate, in: old), after = try matching(predicate, in: new)
        return changes.filter { ($0.kind == .removed ? before : after).contains($0.key) }
    }

    /// The keys of the watched type's objects `predicate` holds for in `graph`.
    func matching(_ predicate: String, in graph: ObjectGraph) throws -> Set<ObjectID> {
        let statement = "\(types[0]) where \(predicate)"
        do {
            guard case .objects(_, let refs) = try QueryEngine(graph: graph).run(statement) else { return [] }
            return Set(refs.map(graph.id(of:)))
        } catch let error as QueryError {
            throw CLIError(error.render(source: statement))
        }
    }

    /// One change as printed: `12:00:01.250 ~ Book #5  pages: 1 → 2`, or its JSON with
    /// `"commit"` and `"at"` first.
    func line(_ change: ObjectChange, commit: Int, at: String) -> String {
        guard format == .ndjson else { return "\(at) [\(commit)] \(change.line)" }
        return "{\"commit\": \(commit), \"at\": \(ValueFormatter.json(.string(at))), " + change.json.dropFirst()
    }
}
