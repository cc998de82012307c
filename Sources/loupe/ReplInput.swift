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

/// Where a line REPL's lines come from: on a terminal, the line editor (history, Tab completion
/// by `complete`); else standard input as lines come.
struct ReplInput {
    private let reader: LineReader?
    private let interactive: Bool
    private var warnedAtEnd = false

    init(interactive: Bool, complete: @escaping (String, Int) -> Completion.Result) {
        self.interactive = interactive
        reader = interactive && isatty(1) == 1 ? LineReader(completion: complete) : nil
    }

    /// The next line, or nil when the input ends. An end (Ctrl-D) with `session`'s changes not
    /// written: on a terminal, says so once as `.quit` does and reads on (a second Ctrl-D ends);
    /// from a script, notes they were not written.
    mutating func next(_ session: ReplSession) -> String? {
        while true {
            let line: String?
            if let reader { line = reader.readLine() } else {
                if interactive { print("loupe> ", terminator: ""); fflush(nil) }
                line = readLine(strippingNewline: true)
            }
            if let line { return line }
            guard !session.pending.isEmpty else { return nil }
            if reader != nil && !warnedAtEnd {
                warnedAtEnd = true
                printError("\(session.pendingSummary) not written: .commit writes them, .rollback drops them; Ctrl-D again leaves without writing them")
                continue
            }
            if reader == nil { printError("note: \(session.pendingSummary) not written (the input ended without .commit)") }
            return nil
        }
    }
}

/// Ctrl-C at a line REPL: stops the statement that runs (between ``begin()`` and ``end()``); at
/// the prompt it leaves (exit 130). Ctrl-C is handled so for as long as the value lives.
final class StatementInterrupts: @unchecked Sendable {
    private let running = Mutex<Cancellation?>(nil)
    private let source: any DispatchSourceSignal

    init() {
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { [unowned self] in
            if let cancellation = self.running.withLock({ $0 }) { cancellation.cancel() } else { Foundation.exit(130) }
        }
        source.resume()
    }

    deinit { source.cancel() }

    /// A statement starts: Ctrl-C cancels it from now on.
    func begin() -> Cancellation {
        let cancellation = Cancellation()
        running.withLock { $0 = cancellation }
        return cancellation
    }

    /// The statement ended: Ctrl-C leaves again.
    func end() { running.withLock { $0 = nil } }
}
