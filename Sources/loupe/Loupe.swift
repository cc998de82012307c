import ArgumentParser
import DisplayText
import Foundation
import LoupeModel
import LoupeStore
import LoupeQuery
import LoupePostgres

/// The `loupe` command: browse a store (the default), or inspect, query and benchmark it.
@main
struct Loupe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loupe",
        abstract: "Browse and query persisted object graphs in SQLite files and PostgreSQL databases.",
        discussion: "Run `loupe FILE` to browse a store, or `loupe` alone to browse the bundled sample.",
        version: Loupe.version,
        subcommands: [Browse.self, Types.self, Schema.self, Show.self, Query.self, Repl.self, Diff.self, Watch.self, Index.self, Sample.self, Bench.self],
        defaultSubcommand: Browse.self)

    /// What `loupe --version` prints.
    static let version = "0.47.0"

    /// Runs the command; Loupe's own failures print as one escaped line (`Error: …`, exit 1),
    /// usage mistakes and help as swift-argument-parser prints them.
    static func main() {
        // `loupe tpyes FILE`: the first word is neither a command nor a file; name the command meant.
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let first = arguments.first, !first.hasPrefix("-"), !FileManager.default.fileExists(atPath: first), !PostgresConnection.isURL(first) {
            let names = configuration.subcommands.compactMap { $0.configuration.commandName ?? String(describing: $0).lowercased() }
            if !names.contains(first), let meant = NameSuggestion.closest(to: first.lowercased(), in: names) {
                printError("Error: unknown command '\(first)'; did you mean '\(meant)'? (`loupe --help` lists the commands)")
                Foundation.exit(64)
            }
        }
        // What a whole load of a Persist store finds is kept for `schema` and `show` (SchemaCache).
        SchemaCache.directory.withLock { $0 = SchemaCache.defaultDirectory() }
        do { try Config.load() } catch {
            printErrorLine("Error: config file \(error)")
            Foundation.exit(78)   // EX_CONFIG
        }
        if let dashed = fileNamedLikeAnOption(arguments) {
            printErrorLine("Error: '\(dashed)' would be read as options; a file name that starts with '-' goes after `--` (loupe types -- \(dashed))")
            Foundation.exit(64)
        }
        var command: ParsableCommand
        do { command = try parseAsRoot() } catch { exitForUsage(error, arguments) }
        do {
            try command.run()
        } catch let error as StoreError {
            printErrorLine("Error: \(error)")
            Foundation.exit(1)
        } catch let error as CLIError {
            printErrorLine("Error: \(error)")
            Foundation.exit(1)
        } catch let error as PostgresError {
            printErrorLine("Error: \(error)")
            Foundation.exit(1)
        } catch {
            exitForUsage(error, arguments)
        }
    }

    /// Prints what swift-argument-parser says of a usage mistake (or the help asked for) and
    /// exits with its code (2 for `loupe diff`). The message quotes the arguments it did not take; it is made again
    /// from the arguments escaped, so that no byte of an argument acts on the terminal and an
    /// argument holding a newline cannot forge a second `Error:` line.
    static func exitForUsage(_ error: Error, _ arguments: [String]) -> Never {
        var code = exitCode(for: error)
        // `loupe diff` exits as diff does: 1 for stores that differ, 2 for any trouble.
        if arguments.first == "diff", code != .success, code.rawValue != 1 { code = ExitCode(2) }
        var message = fullMessage(for: error)
        let escaped = arguments.map(DisplayText.escaped)
        if code != .success, escaped != arguments {
            do { _ = try parseAsRoot(escaped) } catch { message = fullMessage(for: error) }
        }
        if code == .success {
            if !message.isEmpty { print(DisplayText.escapedLines(message)) }
        } else if !message.isEmpty {
            printError(message)
        }
        Foundation.exit(code.rawValue)
    }

    /// An argument before any `--` that is an existing file whose name starts with `-`: parsed,
    /// `-dash.sqlite` would be the flags `-d -a -s -h` (help, exit 0, nothing read).
    static func fileNamedLikeAnOption(_ arguments: [String]) -> String? {
        for argument in arguments {
            if argument == "--" { return nil }
            if argument.hasPrefix("-"), argument.count > 1, FileManager.default.fileExists(atPath: argument) { return argument }
        }
        return nil
    }
}

/// The argument every inspecting command takes.
struct StoreArgument: ParsableArguments {
    @Argument(help: "The SQLite file (or Couchbase Lite .cblite2 folder) to read, opened read-only; or a PostgreSQL URL, postgres://user@host/db.")
    var file: String

    @OptionGroup var reading: ReadArguments

    /// True when the argument is a PostgreSQL URL rather than a file.
    var isPostgres: Bool { PostgresConnection.isURL(file) }

    /// Opens and loads the file, or throws a one-line error; what the load noticed goes to stderr.
    func load() throws -> LoadedStore {
        let store = try LoadedStore.open(file)
        for warning in store.warnings { printError("warning: \(warning)") }
        return store
    }

    /// Opens and loads the file or the PostgreSQL database.
    func open() throws -> OpenedStore { try OpenedStore.open(file) }
}

/// How a store is read: its format forced, relation inference off (every command that opens one).
struct ReadArguments: ParsableArguments {
    @Option(name: .customLong("as"),
            help: "Read the file as this format instead of detecting it: \(StoreFormats.byOptionName.map(\.name).joined(separator: ", ")) (sqlite: the raw tables).")
    var readAs: String?

    @Flag(help: "Do not infer relations from column names and values in files that declare no foreign keys.")
    var noInferredRelations = false

    /// Checks `--as` and sets the process's ``ReadOptions`` before anything is opened.
    mutating func validate() throws {
        var options = ReadOptions(infersRelations: !noInferredRelations)
        if let readAs {
            guard let match = StoreFormats.byOptionName.first(where: { $0.name.caseInsensitiveCompare(readAs) == .orderedSame }) else {
                throw ValidationError("unknown format '\(readAs)' for --as; one of: \(StoreFormats.byOptionName.map(\.name).joined(separator: ", "))")
            }
            options.format = match.format
        }
        ReadOptions.current = options
    }
}

typealias OutputFormat = OutputMode
extension OutputMode: ExpressibleByArgument {}

/// A failure the command reports in one line (no usage text: the arguments were well formed).
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Writes to standard error, line by line through ``DisplayText``'s escaping: messages carry
/// names and paths from files, and nothing in them may act on the terminal.
func printError(_ text: String) {
    let joined = DisplayText.escapedLines(text)
    FileHandle.standardError.write(Data((joined.hasSuffix("\n") ? joined : joined + "\n").utf8))
}

/// Writes one line to standard error with every byte of it escaped, line breaks included: an
/// `Error:` line quoting a path or an argument that holds a newline stays one line.
func printErrorLine(_ text: String) {
    FileHandle.standardError.write(Data((DisplayText.escaped(text) + "\n").utf8))
}

/// Writes a REPL's reply to standard output: messages, previews and tables escaped line by line
/// (``DisplayText/escapedLines(_:)``), a JSON, NDJSON or CSV answer as it is (it escapes itself).
func writeReply(_ reply: ReplSession.Reply) {
    guard !reply.output.isEmpty else { return }
    FileHandle.standardOutput.write(Data((reply.isData ? reply.output : DisplayText.escapedLines(reply.output)).utf8))
}

struct Types: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List every type with its object count.")
    @OptionGroup var store: StoreArgument
    @Option(help: "table or json.") var format: OutputFormat = .table

    func run() throws {
        // The catalog answers without loading the graph (a GROUP BY, not a million documents
        // parsed, or the schema cache; `count(*)` per table on PostgreSQL); a store whose
        // catalog cannot count its types is loaded.
        var types: [(name: String, count: Int)]
        var supertypes: [String: String] = [:]
        if store.isPostgres {
            types = try PostgresDatabase.catalog(url: store.file)
        } else {
            let file = try StoreFile.openForReading(store.file)
            // A Persist store unchanged since a whole load: its counts are known without a scan.
            if let cached = LoadedStore.cachedSchema(file) {
                types = cached.types.map { ($0.name, $0.count) }
            } else if let counted = LoadedStore.cachedPagedCatalog(file) {
                // Or since paged mode counted its types.
                types = counted
            } else {
                types = try LoadedStore.catalog(file, counted: true).types
            }
            if types.contains(where: { $0.count < 0 }) {
                types = try store.load().graph.types.map { ($0.name.rawValue, $0.count) }
            } else {
                // What a load would say of the catalog: tables it leaves out.
                for warning in try LoadedStore.catalogWarnings(file) { printError("warning: \(warning)") }
            }
            supertypes = try LoadedStore.supertypes(file)
        }
        // A count is what `count Type` answers; a parent entity's own share beside it.
        let counts = TypeCount.folded(types, supertype: supertypes)
        let withOwn = counts.contains { $0.own != nil }
        let rows: [[Value]] = counts.map { c in
            [.string(c.name), .int(Int64(c.count))] + (withOwn ? [c.own.map { .int(Int64($0)) } ?? .int(Int64(c.count))] : [])
        }
        // JSON objects are `{"name": …, "count": …}`; tables head the first column `type`.
        let json = format == .json || format == .ndjson
        print(ResultTable(columns: [json ? "name" : "type", "count"] + (withOwn ? ["own"] : []), rows: rows).render(format), terminator: "")
    }
}

struct Schema: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the inferred schema of every type, or of one; or draw it as a diagram.",
        discussion: """
            --format mermaid prints an entity-relationship diagram for a ```mermaid block (GitHub renders it);
            --format dot a Graphviz graph (loupe schema FILE --format dot | dot -Tsvg > schema.svg). Both draw
            every type with its attributes, relations with their cardinalities (dashed when inferred),
            join tables as many-to-many lines and Core Data subentities as inheriting from their parents.
            """)
    @OptionGroup var store: StoreArgument
    @Argument(help: "A type name.") var type: String?
    @Option(help: "text, mermaid or dot.") var format: SchemaFormat = .text
    @Option(help: "A Persist store, a plain SQLite file, a Core Data store or a PostgreSQL database whose whole load would take more than this is described without a load: each type's count and relations from the store, its attributes as its first 1,000 objects have them: 512M, 2G… (default: a quarter of the machine's memory, at most 2 GB).")
    var memoryBudget: MemoryBudget?

    func run() throws {
        if format != .text { return try draw() }
        // A Persist store unchanged since a load: what that load found, without another.
        if !store.isPostgres, let file = try? StoreFile.openForReading(store.file), let cached = LoadedStore.cachedSchema(file) {
            for warning in cached.warnings { printError("warning: \(warning)") }
            if let type {
                let names = cached.types.map(\.name)
                let matches = names.indices.filter { names[$0].caseInsensitiveCompare(type) == .orderedSame }
                if let i = names.firstIndex(of: type) ?? (matches.count == 1 ? matches[0] : nil) {
                    print(cached.types[i].schema)
                    return
                }
            } else {
                print("\(DisplayText.escaped(file.path)): \(PersistFormat.name) store, \(cached.types.count.counting("type")), \(cached.objectCount.counting("object"))\n")
                print(cached.types.map(\.schema).joined(separator: "\n\n"))
                return
            }
        }
        if let opening = try pagedOpening() {
            try describe(opening)
            return
        }
        let opened = try store.open()
        let graph = opened.graph
        if let type {
            guard let table = graph.type(named: type) else {
                throw CLIError("unknown type '\(type)'" + suggestion(type, among: graph.types.map(\.name.rawValue)))
            }
            print(graph.schemaText(of: table))
        } else {
            print("\(DisplayText.escaped(opened.label)): \(opened.formatName) store, \(graph.types.count.counting("type")), \(graph.objectCount.counting("object"))\n")
            print(graph.types.map { graph.schemaText(of: $0) }.joined(separator: "\n\n"))
        }
    }
}

extension Schema {
    /// The store opened a page at a time when a whole load would go over the memory budget and
    /// its format pages (other formats load whole, as the REPL does).
    func pagedOpening() throws -> PagedOpening? {
        let budget = memoryBudget ?? .standard
        if store.isPostgres {
            guard let estimate = try MemoryBudget.overBudget(postgres: store.file, budget: budget) else { return nil }
            do {
                return try PagedOpening.open(postgres: store.file, reason: nil)
            } catch where PostgresPersistPages.refusesUnkeyed(error) {
                throw CLIError("a whole load (≈ \(MemoryBudget(bytes: estimate))) is over the \(budget) memory budget, and Persist's layout keyed otherwise than by integers is described after a load; raise --memory-budget to load it")
            }
        }
        guard let (_, file) = try MemoryBudget.overBudget(store.file, budget: budget) else { return nil }
        return try PagedOpening.open(file, reason: nil)
    }

    /// Prints the schema of the store `opening` reads a page at a time (``PageSource/schemaText(type:schema:sampleSize:)``).
    func describe(_ opening: PagedOpening) throws {
        let pages = opening.pages
        if type == nil {
            let catalog = pages.catalog
            print("\(DisplayText.escaped(opening.label)): \(opening.formatName) store, \(catalog.count.counting("type")), \((catalog.reduce(0) { $0 + $1.count }).counting("object")) "
                  + "(over the \(memoryBudget ?? .standard) memory budget: read a page at a time)\n")
        }
        do { print(try pages.schemaText(typeNamed: type)) } catch let error as UnknownTypeName { throw CLIError(error.description) }
    }
}

struct Show: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show one object: attributes, relations and backlinks.")
    @OptionGroup var store: StoreArgument
    @Argument(help: "The object's type.") var type: String
    @Argument(help: "The object's key (as `id` shows it).") var id: String

    func run() throws {
        // A relational file answers by indexed lookups: the object, what it names, what names it.
        let candidates = ObjectID.candidates(typed: id)
        if let (graph, ref) = try store.isPostgres ? PostgresDatabase.neighbourhood(url: store.file, type: type, ids: candidates)
                                                   : LoadedStore.neighbourhood(store.file, type: type, ids: candidates) {
            if !store.isPostgres, let file = try? StoreFile.openForReading(store.file), let cached = LoadedStore.cachedSchema(file) {
                for warning in cached.warnings { printError("warning: \(warning)") }   // as the load printed them
            }
            guard let ref else { throw CLIError("no \(graph.type(named: type)?.name.rawValue ?? type) has id \(id)") }
            print(graph.describe(ref))
            return
        }
        let graph = try store.open().graph
        guard let table = graph.type(named: type) else {
            throw CLIError("unknown type '\(type)'" + suggestion(type, among: graph.types.map(\.name.rawValue)))
        }
        guard let ref = ObjectID.candidates(typed: id).lazy.compactMap({ graph.ref(type: table, id: $0) }).first else {
            throw CLIError("no \(table.name) has id \(id)")
        }
        print(graph.describe(ref))
    }
}

/// ` (did you mean 'Track'?)` when a name is close to one of `names`, else empty.
func suggestion(_ name: String, among names: [String]) -> String {
    guard let best = NameSuggestion.closest(to: name, in: names) else { return "" }
    return " (did you mean '\(best)'?)"
}
