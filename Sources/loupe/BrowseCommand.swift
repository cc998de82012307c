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

/// `loupe sample`: a generated lending-library store.
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

/// `loupe browse` (the default subcommand): the full-screen browser over a store, or the bundled sample.
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
