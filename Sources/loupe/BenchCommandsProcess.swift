import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LoupeModel
import LoupeStore

/// `loupe bench commands`: whole commands as a script runs them, a new process each — what a
/// shell pipeline pays per call — beside sqlite3 doing the nearest thing over the same file.
struct BenchCommands: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "commands",
        abstract: "Time whole commands, a new process each (types, schema, show, one-shot queries, printing every book), with and without the schema cache, beside sqlite3.")
    @OptionGroup var store: StoreArgument
    @Option(help: "Runs per command (the best is reported).") var runs: Int = 3

    func run() throws {
        let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let path = store.file
        // A whole load, as the browser or REPL makes it, leaves the schema cache entry the commands use.
        let (loaded, loadSeconds) = try timed { try LoadedStore.open(path) }
        let cacheOn = SchemaCache.directory.withLock { $0 } != nil
        print(String(format: "whole load first: %.2f s (%@)", loadSeconds, cacheOn ? "it leaves the schema cache entry" : "LOUPE_CACHE_DIR=off: no cache"))
        let graph = loaded.graph
        guard let book = graph.type(named: "Book"), book.count > 0 else { throw CLIError("the bench needs a store made by `loupe sample`") }
        let showID = graph.id(of: ObjectRef(type: Int32(book.index), row: Int32(book.count / 2))).description
        let sqlite3 = ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let uncached = ["LOUPE_CACHE_DIR": "off"]
        // (label, loupe arguments, time without the cache too, sqlite3 SQL, how to compare answers)
        let commands: [(String, [String], Bool, String?, Compare)] = [
            ("types", ["types", path], false, "SELECT type_name, count(*) FROM by_type GROUP BY type_name", .typeCounts),
            ("schema", ["schema", path], true,
             "SELECT b.type_name, j.key, j.type, count(*) FROM by_type b, json_each(b.json) j GROUP BY 1, 2, 3", .none),
            ("show Book \(showID)", ["show", path, "Book", showID], true,
             "SELECT json FROM by_type WHERE id = \(showID); SELECT * FROM relations WHERE from_id = \(showID) OR to_id = \(showID)", .none),
            ("count (numeric)", ["query", path, "count Book where pages > 500"], false,
             "SELECT count(*) FROM by_type WHERE type_name = 'Book' AND json_extract(json, '$.pages') > 500", .number),
            ("two-hop count", ["query", path, "count Loan where book.author.born < 1920"], true, """
             SELECT count(*) FROM by_type l JOIN relations rb ON rb.from_id = l.id AND rb.relation = 'book'
             JOIN relations ra ON ra.from_id = rb.to_id AND ra.relation = 'author' JOIN by_type a ON a.id = ra.to_id
             WHERE l.type_name = 'Loan' AND json_extract(a.json, '$.born') < 1920
             """, .number),
            ("backlink @count", ["query", path, "count Book where @links.Loan.book.@count >= 3"], true, """
             SELECT count(*) FROM (SELECT b.id FROM by_type b JOIN relations r ON r.to_id = b.id AND r.relation = 'book'
             JOIN by_type l ON l.id = r.from_id AND l.type_name = 'Loan' WHERE b.type_name = 'Book' GROUP BY b.id HAVING count(*) >= 3)
             """, .number),
            ("group by", ["query", path, "Book group by language", "--format", "csv"], true,
             "SELECT json_extract(json, '$.language'), count(*) FROM by_type WHERE type_name = 'Book' GROUP BY 1", .rows(header: 1)),
            ("print every book, table", ["query", path, "Book sort by title, id", "--format", "table"], false, """
             SELECT id, json_extract(json, '$.title'), json_extract(json, '$.isbn'), json_extract(json, '$.published'), json_extract(json, '$.pages'),
             json_extract(json, '$.price'), json_extract(json, '$.language') FROM by_type WHERE type_name = 'Book' ORDER BY 2, 1
             """, .rows(header: 2)),
            ("print every book, CSV", ["query", path, "Book sort by title, id", "--format", "csv"], false, nil, .none),
            ("print every book, JSON", ["query", path, "Book sort by title, id", "--format", "json"], false, nil, .none),
        ]
        print("(a new process each, best of \(max(1, runs)); peak: the process's resident memory, sampled; output to a file; \(book.count) books)")
        print("command                    loupe (ms)   peak (MB)   no cache (ms)   sqlite3 (ms)   same answer")
        var disagreements = 0
        for (label, arguments, alsoUncached, sql, compare) in commands {
            var best = Process.Outcome(seconds: .infinity, peakMB: 0, status: 0, output: "", lines: 0)
            for _ in 0..<max(1, runs) {
                let outcome = try Process.measure([me] + arguments)
                if outcome.seconds < best.seconds { best = outcome }
            }
            guard best.status == 0 else { throw CLIError("`loupe \(arguments.joined(separator: " "))` exited with status \(best.status)") }
            let uncachedText = alsoUncached ? String(format: "%13.0f", try Process.measure([me] + arguments, environment: uncached).seconds * 1000) : "            —"
            var sqliteText = "           —", same = "—"
            if let sqlite3, let sql {
                var bestSQL = Process.Outcome(seconds: .infinity, peakMB: 0, status: 0, output: "", lines: 0)
                for _ in 0..<max(1, runs) {
                    let outcome = try Process.measure([sqlite3, "-readonly", path, sql])
                    if outcome.seconds < bestSQL.seconds { bestSQL = outcome }
                }
                sqliteText = String(format: "%12.0f", bestSQL.seconds * 1000)
                if let agrees = compare.agrees(best, bestSQL) {
                    same = agrees ? "yes" : "NO"
                    if !agrees { disagreements += 1 }
                }
            }
            print(label.padding(toLength: 25, withPad: " ", startingAt: 0)
                  + String(format: " %10.0f   %9.0f   %@   %@   %@", best.seconds * 1000, best.peakMB, uncachedText, sqliteText, same))
        }
        if sqlite3 == nil { print("(sqlite3 is not installed: no baseline column)") }
        if disagreements > 0 { throw ExitCode(1) }
    }

    /// How a command's output is checked against sqlite3's.
    enum Compare {
        case none, number, typeCounts
        /// The same number of rows, after loupe's `header` lines (a table's rule counts).
        case rows(header: Int)

        /// True or false when the outputs can be compared, nil when not.
        func agrees(_ loupe: Process.Outcome, _ sqlite: Process.Outcome) -> Bool? {
            func lines(_ s: String) -> [String] { s.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }
            switch self {
            case .none: return nil
            case .number: return loupe.output.trimmingCharacters(in: .whitespacesAndNewlines) == sqlite.output.trimmingCharacters(in: .whitespacesAndNewlines)
            case .rows(let header): return loupe.lines - header == sqlite.lines
            case .typeCounts:
                // `Book  250000` lines beside `Book|250000` lines, in any order.
                let mine = Set(lines(loupe.output).dropFirst(2).map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: "|") })
                return mine == Set(lines(sqlite.output))
            }
        }
    }
}

extension Process {
    /// How a measured run went.
    struct Outcome {
        var seconds: Double
        var peakMB: Double
        var status: Int32
        /// Standard output (at most the first 64 KB are kept).
        var output: String
        /// How many lines it printed in all.
        var lines: Int
    }

    /// Runs `argv` (its first element an executable path) with standard output to a temporary
    /// file: wall time, peak resident memory (sampled every 2 ms), exit status, the first 64 KB of
    /// output and how many lines it had.
    static func measure(_ argv: [String], environment: [String: String] = [:]) throws -> Outcome {
        let outputPath = NSTemporaryDirectory() + "loupe-bench-\(getpid()).out"
        defer { unlink(outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let env = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0)=\($1)" }
        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = env.map { strdup($0) } + [nil]
        defer { (cArgs + cEnv).forEach { free($0) } }
        var pid: pid_t = 0
        let start = DispatchTime.now()
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, cArgs, cEnv)
        guard spawned == 0 else { throw CLIError("cannot run \(argv[0]): \(String(cString: strerror(spawned)))") }
        // The peak is sampled from /proc (VmHWM, the child's own high-water mark): wait4's
        // ru_maxrss keeps the parent's peak across the exec, which would hide the child's.
        var status: Int32 = 0, peakKB = 0.0
        while true {
            if let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
               let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
               let kb = Double(line.split(separator: " ").dropFirst().first.map(String.init) ?? "") {
                peakKB = max(peakKB, kb)
            }
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid || (done < 0 && errno != EINTR) { break }
            usleep(2_000)
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        var output = "", lines = 0
        if let handle = FileHandle(forReadingAtPath: outputPath) {
            defer { try? handle.close() }
            while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                if output.isEmpty { output = String(decoding: chunk.prefix(65_536), as: UTF8.self) }
                lines += chunk.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            }
        }
        let exit = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Outcome(seconds: seconds, peakMB: peakKB / 1024, status: exit, output: output, lines: lines)
    }
}
