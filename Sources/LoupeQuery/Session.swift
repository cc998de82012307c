import Foundation
import LoupeModel

/// Reports how far a long piece of work has got, `(done, total)`, from any thread.
public typealias ProgressReport = @Sendable (_ done: Int, _ total: Int) -> Void

/// What the REPL cannot do by itself (loading files needs the storage core); the executable, the
/// browser or a test provides it. Loading may run on any thread.
public protocol SessionHost: AnyObject, Sendable {
    /// Opens and loads the store at `path` (for `.open`, and `.reload` of the current path).
    func load(path: String, progress: ProgressReport?) throws -> ObjectGraph
    /// Reads the store at `path` as it is now, to compare with (`.changes-since`): what a commit
    /// writes to and checks against stays the store last loaded.
    func read(path: String, progress: ProgressReport?) throws -> ObjectGraph
    /// The writes committing `pending` would make, as text: SQL with its values, or Persist's
    /// documents before and after (read from the file, nothing written), in about `maxLines`
    /// lines at most (then a line says how much more).
    func preview(_ pending: PendingChanges, maxLines: Int) throws -> String
    /// Writes `pending` into the store's file in one transaction, then reads the file again;
    /// returns the new graph and what was written. Throws, having written nothing, when the
    /// file changed since it was loaded or a write is refused.
    func commit(_ pending: PendingChanges, progress: ProgressReport?) throws -> (graph: ObjectGraph, summary: String)
}

/// The REPL's engine: runs statements and dot-commands, keeps the output mode, the output file,
/// the timer and the current type. Used by `loupe repl` and by the browser's REPL pane.
///
/// A line goes through ``begin(_:)``, which answers at once (dot-commands, parse errors) or hands
/// back the work to do: an ``Evaluation`` of a statement, or a store to load. That work may run
/// on another thread (the browser keeps drawing, and Ctrl-C cancels it); its outcome comes back
/// through ``finish(_:_:seconds:render:)`` or ``finishLoad(path:_:)`` on the session's thread.
/// ``execute(_:cancellation:)`` does all of it in one call, for `loupe repl` and for tests.
public final class ReplSession {
    /// What `.commit` says when nothing is pending.
    public static let nothingToCommit = "nothing to commit: no pending changes"

    public private(set) var engine: QueryEngine
    /// The staged changes over the graph as loaded; ``engine`` reads the staged graph.
    public private(set) var pending: PendingChanges
    /// True after a `.quit` that was refused because changes are pending: the next one leaves.
    private var quitWarned = false
    /// How results print (`.mode`).
    public var mode: OutputMode
    /// The type a bare predicate filters (the browser's records pane sets it).
    public var currentType: TypeTable?
    /// Whether each statement's time is printed (`.timer`).
    public private(set) var timer = false
    /// True once `.quit` ran.
    public private(set) var wantsQuit = false
    /// The result of the last query, for the browser to show.
    public private(set) var lastResult: QueryResult?
    public weak var host: SessionHost?

    private var outputPath: String?
    private var oncePath: String?
    /// The open store's file: `.output` and `.once` refuse it and its `-wal`, `-shm` and
    /// `-journal` companions, however the path names them (symlinks, `..`, hard links);
    /// `.reload` reads it again.
    public var storePath: String?
    /// The kind of store the session's graph was loaded from (what `.explain` names).
    public var storeKind: StoreKind = .document

    /// What `.changes-since` compares the store with: the store as opened, or as last marked.
    public internal(set) var changesMark: ChangesMark

    public init(graph: ObjectGraph, mode: OutputMode = .table) {
        self.engine = QueryEngine(graph: graph)
        self.pending = PendingChanges(base: graph)
        self.mode = mode
        self.changesMark = ChangesMark(graph: graph, label: "opened")
    }

    /// Replaces the pending changes (a browser action staged, undid or redid an edit).
    public func replacePending(_ changes: PendingChanges) {
        pending = changes
        engine = QueryEngine(graph: changes.graph)
        currentType = currentType.flatMap { changes.graph.type(named: $0.name.rawValue) }
        quitWarned = false
    }

    /// What one input line produced: text for standard output, and an error for standard error.
    public struct Reply: Equatable, Sendable {
        public var output: String
        public var error: String?
        /// True when `output` is an answer in a format that escapes its own values (JSON,
        /// NDJSON, CSV): data for a program, written as it is. Everything else is for people and
        /// goes through ``DisplayText/escapedLines(_:)`` on its way to a terminal.
        public var isData = false
        public init(output: String, error: String? = nil) {
            self.output = output
            self.error = error
        }
    }

    /// What a line asks for.
    public enum Step {
        /// Done: the reply to show.
        case reply(Reply)
        /// A statement to evaluate (on any thread), then to ``finish(_:_:seconds:render:)``.
        case evaluate(Evaluation)
        /// A store to load (on any thread, through the host), then to ``finishLoad(path:_:)``.
        case load(path: String)
        /// The pending changes to write (on any thread, through the host), then to ``finishCommit(_:)``.
        case commit(PendingChanges)
        /// `.changes-since`: the store to read again (on any thread, through the host) and compare
        /// with the mark (``ChangesSinceRequest/run(now:)``), then to ``finishChangesSince(_:_:)``.
        case changesSince(ChangesSinceRequest)
    }

    /// One statement ready to run on the graph of the moment, on any thread.
    public struct Evaluation: Sendable {
        /// The line as typed.
        public let line: String
        let statement: Statement
        let engine: QueryEngine
        let currentType: TypeTable?
        let pending: PendingChanges

        /// What a statement produced: a result, or (for a mutation) the changes with its step staged.
        public enum Outcome: Sendable {
            case result(QueryResult)
            case staged(PendingChanges, EditStep)
        }

        /// Runs the statement; `cancellation` stops it between objects.
        public func run(cancellation: Cancellation? = nil) -> Result<Outcome, QueryError> {
            do {
                if case .mutation(let mutation) = statement {
                    let step = try Editor(graph: pending.graph).step(for: mutation, source: line, cancellation: cancellation)
                    var next = pending
                    do { try next.stage(step) } catch { throw QueryError("\(error)", at: SourceRange(0, 0)) }
                    return .success(.staged(next, step))
                }
                return .success(.result(try engine.run(statement, currentType: currentType, cancellation: cancellation)))
            } catch let error as QueryError {
                return .failure(error)
            } catch {
                return .failure(QueryError("\(error)", at: SourceRange(0, 0)))
            }
        }
    }

    /// Starts one line: a statement, or a dot-command. Errors are answered, never thrown, so that
    /// the REPL stays usable after any input.
    public func begin(_ line: String) -> Step {
        let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty || trimmed.hasPrefix("--") { return .reply(Reply(output: "")) }
        do {
            let statement = try Parser.parse(line)
            if case .dotCommand(let name, let arguments, let range) = statement {
                return try dotCommand(name, arguments, range: range, source: line)
            }
            return .evaluate(Evaluation(line: line, statement: statement, engine: engine, currentType: currentType, pending: pending))
        } catch let error as QueryError {
            return .reply(Reply(output: "", error: error.render(source: line)))
        } catch {
            return .reply(Reply(output: "", error: "error: \(error)"))
        }
    }

    /// Takes the outcome of an evaluation: the result becomes ``lastResult`` and is printed in the
    /// output mode (unless `render` is false: the browser shows objects, projections and groups
    /// as views, and printing 250,000 rows only to throw the text away is what froze it), with
    /// the time when `.timer` is on.
    public func finish(_ evaluation: Evaluation, _ outcome: Result<Evaluation.Outcome, QueryError>, seconds: Double, render: Bool = true) -> Reply {
        switch outcome {
        case .failure(let error):
            return Reply(output: "", error: error.render(source: evaluation.line))
        case .success(.staged(let changes, let step)):
            lastResult = nil
            if !step.edits.isEmpty { replacePending(changes) }
            var text = stagedText(step)
            if timer { text += String(format: "Run Time: %.3f ms\n", seconds * 1000) }
            return Reply(output: text)
        case .success(.result(let result)):
            lastResult = result
            var text = ""
            switch result {
            case .count, .message: text = result.render(mode, graph: evaluation.engine.graph)
            default: if render { text = result.render(mode, graph: evaluation.engine.graph) }
            }
            if timer { text += String(format: "Run Time: %.3f ms\n", seconds * 1000) }
            do {
                var reply = try deliver(text)
                if case .message = result {} else { reply.isData = [.json, .ndjson, .csv].contains(mode) }
                return reply
            } catch { return Reply(output: "", error: "error: \(error)") }
        }
    }

    /// A typed line as it may be shown again (the browser's REPL echoes `loupe> .diff URL`):
    /// every URL in it without its credentials (``withoutPassword(_:)``).
    public static func shownLine(_ line: String) -> String {
        guard line.contains("://") else { return line }
        return line.split(separator: " ", omittingEmptySubsequences: false).map { word in
            word.contains("://") ? withoutPassword(String(word)) : String(word)
        }.joined(separator: " ")
    }

    /// A PostgreSQL URL as it may be shown: no credential in any spelling libpq reads. The
    /// password of `user:password@` is left out, and so is the value of every parameter that
    /// carries a secret or the file holding one (`password`, `passfile`, `sslpassword`,
    /// `sslkey`…), however its name is percent-encoded (`%70assword=` is `password=` to libpq).
    public static func withoutPassword(_ path: String) -> String {
        guard let scheme = path.range(of: "://") else { return path }
        var shown = String(path[..<scheme.upperBound])
        var rest = path[scheme.upperBound...]
        // libpq's credentials end at the first '@' before the path.
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        if let at = rest[..<authorityEnd].firstIndex(of: "@") {
            shown += String(rest[..<at].prefix { $0 != ":" }) + "@"
            rest = rest[rest.index(after: at)...]
        }
        guard let query = rest.firstIndex(of: "?") else { return shown + rest }
        shown += rest[...query]
        let parameters = rest[rest.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false).map { parameter -> String in
            let name = String(parameter.prefix { $0 != "=" })
            let decoded = (name.removingPercentEncoding ?? name).lowercased()
            return credentialParameters.contains(decoded) ? name + "=***" : String(parameter)
        }
        return shown + parameters.joined(separator: "&")
    }

    /// libpq's connection parameters that hold a secret, or name the file that holds one.
    static let credentialParameters: Set<String> = ["password", "passfile", "sslpassword", "sslkey", "sslkeylogfile"]

    /// Stages again, over the graph just reloaded, the inserts among `lost` (steps that no longer
    /// apply): an insert whose key the store assigned gets the next free key, as it would have if
    /// typed now. Returns the inserts staged so (as `label → key`) and the steps still dropped
    /// (anything else, and inserts whose given key another process took).
    private func replanInserts(_ lost: [EditStep]) -> (replanned: [String], dropped: [EditStep]) {
        var replanned: [String] = [], dropped: [EditStep] = []
        for step in lost {
            guard case .mutation(let mutation)? = try? Parser.parse(step.label), case .insert = mutation,
                  let again = try? Editor(graph: pending.graph).step(for: mutation, source: step.label) else {
                dropped.append(step)
                continue
            }
            var next = pending
            guard (try? next.stage(again)) != nil else { dropped.append(step); continue }
            pending = next
            replanned.append(step.label)
        }
        return (replanned, dropped)
    }

    /// Takes the outcome of loading `path` for `.open` or `.reload`. Reloading the same file keeps
    /// the pending changes, staged again over what the file holds now (steps whose objects are
    /// gone are dropped, and said so).
    public func finishLoad(path: String, _ outcome: Result<ObjectGraph, any Error>) -> Reply {
        switch outcome {
        case .failure(let error):
            return Reply(output: "", error: "error: \(error)")
        case .success(let graph):
            let counts = ": \(graph.types.count.counting("type")), \(graph.objectCount.counting("object"))"
            guard path != storePath else { return Reply(output: "reloaded" + counts + restage(over: graph) + "\n") }
            pending = PendingChanges(base: graph)
            engine = QueryEngine(graph: graph)
            changesMark = ChangesMark(graph: graph, label: "opened")
            storePath = path
            currentType = nil
            return Reply(output: "opened \(ReplSession.withoutPassword(path))" + counts + "\n")
        }
    }

    /// Makes `graph`, the open store read again, the base, with the pending changes staged again
    /// over it (steps whose objects are gone are dropped; an insert whose key another process
    /// took gets the next free one). Returns what became of them, each part after `; ` (empty
    /// when nothing was pending): what `.reload` and the browser's live mode say.
    public func restage(over graph: ObjectGraph) -> String {
        var note = ""
        if !pending.isEmpty {
            let (rebased, lost) = pending.rebased(on: graph)
            pending = rebased
            let (replanned, dropped) = replanInserts(lost)
            note = dropped.isEmpty ? "; the pending changes are staged again" :
                "; \(dropped.count) pending step\(dropped.count == 1 ? "" : "s") no longer apply and were dropped: " + dropped.map(\.label).joined(separator: " | ")
            if !replanned.isEmpty {
                note += "; \(replanned.count) insert\(replanned.count == 1 ? "" : "s") given the next free key\(replanned.count == 1 ? "" : "s") (another process took \(replanned.count == 1 ? "its" : "their") key\(replanned.count == 1 ? "" : "s")): " + replanned.joined(separator: " | ")
            }
        } else {
            pending = PendingChanges(base: graph)
        }
        engine = QueryEngine(graph: pending.graph)
        currentType = currentType.flatMap { pending.graph.type(named: $0.name.rawValue) }
        return note
    }

    /// Takes the outcome of committing: on success the file's new state is the base and nothing
    /// is pending; on failure everything stays pending and the reason is shown.
    public func finishCommit(_ outcome: Result<(graph: ObjectGraph, summary: String), any Error>) -> Reply {
        switch outcome {
        case .failure(let error):
            return Reply(output: "", error: "error: \(error)")
        case .success(let (graph, summary)):
            pending = PendingChanges(base: graph)
            engine = QueryEngine(graph: graph)
            currentType = currentType.flatMap { graph.type(named: $0.name.rawValue) }
            quitWarned = false
            return Reply(output: summary + "\n")
        }
    }

    /// What staging `step` (now pending) says: how many objects, and what is pending in all.
    public func stagedText(_ step: EditStep) -> String {
        guard !step.edits.isEmpty else { return "nothing staged: no object changes\n" }
        let effects = step.effects.map { "; \($0)" } ?? ""
        return "staged: \(step.objectCount) object\(step.objectCount == 1 ? "" : "s")\(effects) (\(pendingSummary)); .changes shows the writes, .commit writes them\n"
    }

    /// `2 added, 3 changed, 1 deleted in 4 steps`.
    public var pendingSummary: String {
        let c = pending.changes.counts
        let steps = pending.active.count
        return "pending: \(c.added) added, \(c.changed) changed, \(c.deleted) deleted in \(steps) step\(steps == 1 ? "" : "s")"
    }

    /// `.changes`: the steps staged, and the writes the commit will make.
    public func changesText() throws -> String {
        guard !pending.isEmpty else { return "no pending changes\n" }
        var lines = changesSummaryLines()
        if let host {
            // What is staged lives here, not in the file: a file renamed, deleted or locked only
            // keeps the writes from being read again, never the steps from being listed.
            do {
                lines += ReplSession.writesLines(try host.preview(pending, maxLines: ReplSession.previewLines))
            } catch {
                lines += ["", "the writes cannot be read from the file now (\(error)); the steps above stay staged, each as the statement that made it: .changes again once the file is back, or run them on another copy"]
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// How many lines of writes a preview shows (then a line says how many more).
    public static let previewLines = 400

    /// The first part of `.changes`: the pending counts and every active step.
    public func changesSummaryLines() -> [String] {
        var lines = [pendingSummary + ":"]
        for (i, step) in pending.active.enumerated() {
            lines.append("  \(i + 1). \(step.label)  (\(step.objectCount) object\(step.objectCount == 1 ? "" : "s"))")
        }
        if pending.canRedo { lines.append("  (\(pending.steps.count - pending.cursor) undone step\(pending.steps.count - pending.cursor == 1 ? "" : "s") can be redone)") }
        return lines
    }

    /// The second part of `.changes`: the writes a host previewed, indented under their heading,
    /// which names what commits them (`.commit` in the REPL, a key in the browser).
    public static func writesLines(_ preview: String, committedBy action: String = ".commit") -> [String] {
        // Steps that cancel out (an object inserted, then deleted) leave nothing to write.
        guard !preview.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return ["", "\(action) writes nothing: the pending steps cancel out"] }
        return ["", "\(action) writes, in one transaction:"] + preview.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }
    }

    /// Runs one line to the end on this thread: `loupe repl`, scripts and tests.
    public func execute(_ line: String, cancellation: Cancellation? = nil) -> Reply {
        switch begin(line) {
        case .reply(let reply): return reply
        case .evaluate(let evaluation):
            let started = DispatchTime.now()
            let outcome = evaluation.run(cancellation: cancellation)
            return finish(evaluation, outcome, seconds: Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9)
        case .load(let path):
            guard let host else { return Reply(output: "", error: "error: loading another store is not available here") }
            return finishLoad(path: path, Result { try host.load(path: path, progress: nil) })
        case .commit(let changes):
            guard let host else { return Reply(output: "", error: "error: committing is not available here") }
            return finishCommit(Result { try host.commit(changes, progress: nil) })
        case .changesSince(let request):
            return finishChangesSince(request, Result {
                let now = try request.readNow(host: host, storePath: storePath, base: pending.base, progress: nil)
                return (now, try request.run(now: now))
            })
        }
    }

    /// Sends a result to `.once`/`.output` files, or returns it for standard output.
    func deliver(_ text: String) throws -> Reply {
        if let path = oncePath {
            oncePath = nil
            try write(text, to: path, append: false)
            return Reply(output: "")
        }
        if let path = outputPath {
            try write(text, to: path, append: true)
            return Reply(output: "")
        }
        return Reply(output: text)
    }

    /// Writes a result that its writer sends a part at a time (a REPL over the memory budget
    /// prints answers read from the store in parts) where ``deliver(_:)`` sends text: to the
    /// `.once` file (then back to the screen), to the `.output` file (appended), else to standard
    /// output. `body` writes into the sink, told whether it is a terminal; with `.timer` on, the
    /// time since `started` (`DispatchTime` nanoseconds; nil for a dot-command's text) follows, as
    /// for a loaded store.
    public func writeResult(started: UInt64?, _ body: (OutputSink, _ toTerminal: Bool) throws -> Void) throws {
        let path = oncePath ?? outputPath
        let append = oncePath == nil
        oncePath = nil
        var fd: Int32 = 1
        if let path {
            fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0o644)
            guard fd >= 0 else { throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path]) }
        }
        defer { if fd != 1 { close(fd) } }
        let sink = OutputSink(fd: fd)
        try body(sink, fd == 1 && isatty(1) == 1)
        if timer, let started { sink.write(String(format: "Run Time: %.3f ms\n", Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)) }
        sink.flush()
    }

    private func write(_ text: String, to path: String, append: Bool) throws {
        let url = URL(fileURLWithPath: path)
        if append, let handle = try? FileHandle(forWritingTo: url) {
            defer { try? handle.close() }
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(text.utf8))
        } else {
            try Data(text.utf8).write(to: url)
        }
    }

    /// Why `path` may not receive output (it is the open store or one of its companions), or nil.
    func refusal(_ path: String) -> String? {
        guard let store = storePath else { return nil }
        for suffix in ["", "-wal", "-shm", "-journal"] where FileIdentity.same(path, store + suffix) {
            return "error: '\(path)' is the open store\(suffix.isEmpty ? "" : "'s \(suffix.dropFirst()) file"); results are never written over it"
        }
        return nil
    }

    // MARK: Dot-commands

    /// One dot-command: its name, arguments, what it does. Help is printed from this table.
    public struct DotCommand: Sendable {
        public let name: String
        public let arguments: String
        public let summary: String
    }

    /// Every dot-command, in help order (sqlite3's conventions).
    public static let commands: [DotCommand] = [
        DotCommand(name: "help", arguments: "[command|query|topic]", summary: "the table of commands, one command's help, the query language (query), or one clause, operator or function (where, @sum, …)"),
        DotCommand(name: "types", arguments: "", summary: "every type with its object count"),
        DotCommand(name: "schema", arguments: "[Type]", summary: "attributes (with the kinds of value seen), relations, backlinks"),
        DotCommand(name: "mode", arguments: "table|line|json|ndjson|csv|markdown", summary: "how results print"),
        DotCommand(name: "output", arguments: "[FILE]", summary: "send results to FILE (no FILE: back to the screen)"),
        DotCommand(name: "once", arguments: "FILE", summary: "send the next result to FILE"),
        DotCommand(name: "timer", arguments: "on|off", summary: "print each statement's time"),
        DotCommand(name: "explain", arguments: "STATEMENT", summary: "run STATEMENT and show its plan: the engines asked, the SQL sent, why one declined"),
        DotCommand(name: "changes", arguments: "", summary: "the staged changes and the writes they will make"),
        DotCommand(name: "changes-since", arguments: "[mark]", summary: "what changed in the store since it was opened (or marked): per type, per object; mark sets the mark"),
        DotCommand(name: "commit", arguments: "", summary: "write the staged changes in one transaction"),
        DotCommand(name: "rollback", arguments: "", summary: "drop the staged changes"),
        DotCommand(name: "undo", arguments: "", summary: "unstage the last change"),
        DotCommand(name: "redo", arguments: "", summary: "restage the last undone change"),
        DotCommand(name: "open", arguments: "FILE", summary: "open another store"),
        DotCommand(name: "diff", arguments: "FILE", summary: "compare this store (as loaded) with FILE, a copy or another version, object by object"),
        DotCommand(name: "reload", arguments: "", summary: "reload this store from disk"),
        DotCommand(name: "quit", arguments: "", summary: "leave (asks if changes are pending)"),
    ]

    /// The command a name or an unambiguous prefix of one names.
    public static func command(named name: String) -> Result<DotCommand, QueryError> {
        let lower = name.lowercased()
        if let exact = commands.first(where: { $0.name == lower }) { return .success(exact) }
        let matches = commands.filter { $0.name.hasPrefix(lower) }
        if matches.count == 1 { return .success(matches[0]) }
        if matches.isEmpty {
            let hint = NameSuggestion.closest(to: lower, in: commands.map(\.name)).map { "did you mean '.\($0)'?" } ?? "try .help"
            return .failure(QueryError("unknown command '.\(name)'", at: SourceRange(0, 0), hint: hint))
        }
        return .failure(QueryError("ambiguous command '.\(name)'", at: SourceRange(0, 0),
                                   hint: "could be " + matches.map { "." + $0.name }.joined(separator: ", ")))
    }

    private func usage(_ command: DotCommand, bad: String? = nil) -> Reply {
        var text = "Usage: .\(command.name)\(command.arguments.isEmpty ? "" : " " + command.arguments)"
        if let bad { text = "bad argument '\(bad)'\n" + text }
        return Reply(output: "", error: text)
    }

    /// The help table, from ``commands`` (those named in `only`, when given).
    public static func helpText(only: Set<String>? = nil) -> String {
        let commands = commands.filter { only?.contains($0.name) ?? true }
        let width = commands.map { ".\($0.name) \($0.arguments)".count }.max() ?? 0
        return commands.map { c in
            let head = ".\(c.name)" + (c.arguments.isEmpty ? "" : " " + c.arguments)
            return head + String(repeating: " ", count: width - head.count + 2) + c.summary
        }.joined(separator: "\n") + "\n"
    }

    private func dotCommand(_ name: String, _ args: [String], range: SourceRange, source: String) throws -> Step {
        // Loading a store is work for the caller to do (off the UI thread in the browser).
        if case .success(let c) = ReplSession.command(named: name) {
            if c.name == "open" {
                guard args.count == 1 else { return .reply(args.isEmpty ? usage(c) : usage(c, bad: args[1])) }
                if !pending.isEmpty {
                    return .reply(Reply(output: "", error: "error: \(pendingSummary): .commit writes them, .rollback drops them, before .open"))
                }
                return .load(path: args[0])
            }
            if c.name == "commit" {
                guard args.isEmpty else { return .reply(usage(c, bad: args[0])) }
                if pending.isEmpty { return .reply(Reply(output: Self.nothingToCommit + "\n")) }
                guard host != nil else { return .reply(Reply(output: "", error: "error: committing is not available here")) }
                return .commit(pending)
            }
            if c.name == "changes-since" {
                guard args.count <= 1, args.first.map({ $0.lowercased() == "mark" }) ?? true else { return .reply(usage(c, bad: args.last)) }
                return .changesSince(ChangesSinceRequest(mark: changesMark, setsMark: !args.isEmpty))
            }
            if c.name == "diff" {
                guard args.count == 1 else { return .reply(args.isEmpty ? usage(c) : usage(c, bad: args[1])) }
                return .changesSince(ChangesSinceRequest(mark: ChangesMark(graph: pending.base, label: "loaded"), setsMark: false, other: args[0]))
            }
            if c.name == "reload" {
                guard args.isEmpty else { return .reply(usage(c, bad: args[0])) }
                guard let storePath else { return .reply(Reply(output: "", error: "error: no store file to reload")) }
                return .load(path: storePath)
            }
        }
        return .reply(try answer(name, args, range: range, source: source))
    }

    private func answer(_ name: String, _ args: [String], range: SourceRange, source: String) throws -> Reply {
        let command: DotCommand
        switch ReplSession.command(named: name) {
        case .success(let c): command = c
        case .failure(let e):
            return Reply(output: "", error: QueryError(e.message, at: range, hint: e.hint).render(source: source))
        }
        let graph = engine.graph
        switch command.name {
        case "help":
            if let topic = args.first {
                // `.help .commit` and `.help commit` alike.
                let name = topic.hasPrefix(".") ? String(topic.dropFirst()) : topic
                if ["query", "language", "statements"].contains(name.lowercased()) { return Reply(output: QueryHelp.text) }
                if case .success = ReplSession.command(named: name) {} else if let t = QueryHelp.topic(named: args.joined(separator: " ")) {
                    return Reply(output: QueryHelp.text(of: t))
                }
                guard case .success(let c) = ReplSession.command(named: name) else { return usage(command, bad: topic) }
                return Reply(output: ".\(c.name)\(c.arguments.isEmpty ? "" : " " + c.arguments)\n    \(c.summary)\n")
            }
            return Reply(output: ReplSession.helpText())
        case "types":
            guard args.isEmpty else { return usage(command, bad: args[0]) }
            return try deliver(ResultTable.typeCounts(graph.types.map { ($0.name.rawValue, $0.count) }, mode: mode))
        case "schema":
            if args.count > 1 { return usage(command, bad: args[1]) }
            if let name = args.first {
                guard let type = graph.type(named: name) else {
                    let hint = NameSuggestion.closest(to: name, in: graph.types.map(\.name.rawValue)).map { " (did you mean '\($0)'?)" } ?? ""
                    return Reply(output: "", error: "error: unknown type '\(name)'\(hint)")
                }
                return try deliver(graph.schemaText(of: type) + "\n")
            }
            return try deliver(graph.types.map { graph.schemaText(of: $0) }.joined(separator: "\n\n") + "\n")
        case "mode":
            guard let arg = args.first else { return Reply(output: "current output mode: \(mode.rawValue)\n") }
            guard args.count == 1, let m = OutputMode(rawValue: arg.lowercased()) else { return usage(command, bad: args.count > 1 ? args[1] : arg) }
            mode = m
            return Reply(output: "")
        case "output":
            if args.count > 1 { return usage(command, bad: args[1]) }
            if let path = args.first {
                if let refusal = refusal(path) { return Reply(output: "", error: refusal) }
                try Data().write(to: URL(fileURLWithPath: path))
                outputPath = path
            } else {
                outputPath = nil
            }
            return Reply(output: "")
        case "once":
            guard args.count == 1 else { return args.isEmpty ? usage(command) : usage(command, bad: args[1]) }
            if let refusal = refusal(args[0]) { return Reply(output: "", error: refusal) }
            oncePath = args[0]
            return Reply(output: "")
        case "timer":
            guard let arg = args.first else { return Reply(output: "timer is \(timer ? "on" : "off")\n") }
            switch arg.lowercased() {
            case "on", "1", "yes": timer = true
            case "off", "0", "no": timer = false
            default: return usage(command, bad: arg)
            }
            return Reply(output: "")
        case "changes":
            guard args.isEmpty else { return usage(command, bad: args[0]) }
            return Reply(output: try changesText())
        case "rollback":
            guard args.isEmpty else { return usage(command, bad: args[0]) }
            if pending.isEmpty { return Reply(output: "nothing to roll back: no pending changes\n") }
            let count = pending.active.count
            var changes = pending
            changes.rollback()
            replacePending(changes)
            return Reply(output: "dropped \(count) pending step\(count == 1 ? "" : "s"); nothing was written\n")
        case "undo", "redo":
            guard args.isEmpty else { return usage(command, bad: args[0]) }
            var changes = pending
            guard let step = command.name == "undo" ? changes.undo() : changes.redo() else {
                return Reply(output: "nothing to \(command.name)\n")
            }
            replacePending(changes)
            return Reply(output: "\(command.name == "undo" ? "undone" : "redone"): \(step.label) (\(pendingSummary))\n")
        case "explain":
            return try explain(ReplSession.explained(source), mode: mode)
        case "quit":
            // Leaving with pending changes asks first: a second .quit leaves without writing.
            if !pending.isEmpty && !quitWarned {
                quitWarned = true
                return Reply(output: "", error: "error: \(pendingSummary). .commit writes them, .rollback drops them; .quit again leaves without writing them")
            }
            wantsQuit = true
            return Reply(output: "")
        default:
            return usage(command)
        }
    }
}

extension ReplSession {
    /// The statement of an `.explain` line: what follows the command's name.
    public static func explained(_ line: String) -> String {
        let trimmed = line.drop { $0 == " " || $0 == "\t" }
        return String(trimmed.drop { $0 != " " && $0 != "\t" }).trimmingCharacters(in: .whitespaces)
    }

    /// `.explain` over the loaded graph: the statement run by the in-memory engine, its plan
    /// printed (as JSON in json mode).
    func explain(_ text: String, mode: OutputMode) throws -> Reply {
        guard !text.isEmpty else { return Reply(output: "", error: "Usage: .explain STATEMENT") }
        let statement: Statement
        do { statement = try Parser.parse(text) } catch let error as QueryError { return Reply(output: "", error: error.render(source: text)) }
        if case .dotCommand = statement { return Reply(output: "", error: "error: .explain explains statements, not dot-commands") }
        let counts = Dictionary(engine.graph.types.map { ($0.name.rawValue, $0.count) }, uniquingKeysWith: { a, _ in a })
        let plan = Planner.plan(statement, PlanSituation(kind: storeKind, loaded: true, counts: counts))
        let started = DispatchTime.now().uptimeNanoseconds
        var rows: Int?
        var detail = "over the graph loaded in this session"
        if case .mutation = statement {
            detail = "an edit is staged over the loaded graph; .explain stages nothing"
        } else {
            rows = try engine.run(statement).rowCount
        }
        let report = PlanReport(plan, source: text, answeredBy: .memory, declines: [], detail: detail, sql: [], rows: rows,
                                milliseconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
        return Reply(output: (mode == .json ? report.json : report.text) + "\n")
    }
}

/// Whether two paths name the same file: the same device and inode when both exist, else the
/// same canonical path (symlinks and `..` resolved in the folder, for a file not created yet).
enum FileIdentity {
    static func same(_ a: String, _ b: String) -> Bool {
        var sa = stat(), sb = stat()
        if stat(a, &sa) == 0, stat(b, &sb) == 0 { return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino }
        return canonical(a) == canonical(b)
    }

    /// The path with its folder's symlinks resolved and made absolute.
    static func canonical(_ path: String) -> String {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let folder = url.deletingLastPathComponent().resolvingSymlinksInPath()
        return folder.appendingPathComponent(url.lastPathComponent).path
    }
}
