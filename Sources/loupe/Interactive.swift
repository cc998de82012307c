import Foundation
import LoupeBrowser
import LoupeModel
import LoupeStore
import NcursesBackend
import TerminalKit

/// The interactive browser on a real terminal: the types appear at once with a progress bar
/// while the graph loads on another thread; the terminal is restored on every way out.
enum Interactive {
    /// Progress and result of the background load, shared with the UI thread.
    final class LoadBox: @unchecked Sendable {
        private let lock = NSLock()
        private var _progress: (Int, Int) = (0, 0)
        private var _result: Result<LoadedStore, Error>?
        var progress: (Int, Int) { lock.lock(); defer { lock.unlock() }; return _progress }
        var result: Result<LoadedStore, Error>? { lock.lock(); defer { lock.unlock() }; return _result }
        func set(progress: (Int, Int)) { lock.lock(); _progress = progress; lock.unlock() }
        func set(result: Result<LoadedStore, Error>) { lock.lock(); _result = result; lock.unlock() }
    }

    static func run(path: String) throws {
        let file = try StoreFile.openForReading(path)
        let (format, types) = try LoadedStore.catalog(file)
        let browser = Browser(fileLabel: URL(fileURLWithPath: path).lastPathComponent, formatName: format.name,
                              theme: Theme.fromEnvironment(ProcessInfo.processInfo.environment),
                              history: HistoryFile.load(), persistsHistory: true)
        let host = StoreHost(path: path)
        browser.host = host
        browser.pendingTypes = types
        browser.progress = (0, types.reduce(0) { $0 + max(0, $1.count) })
        let box = LoadBox()
        Thread.detachNewThread {
            do {
                let loaded = try LoadedStore.load(file) { done, total in box.set(progress: (done, total)) }
                box.set(result: .success(loaded))
            } catch { box.set(result: .failure(error)) }
        }

        let backend: NcursesBackend
        do { backend = try NcursesBackend() } catch { throw CLIError("\(error)") }
        defer { backend.restore() }
        let terminal = Terminal(backend: backend)
        var loadedStore: LoadedStore?
        var needsDraw = true
        while true {
            if loadedStore == nil {
                switch box.result {
                case .success(let loaded)?:
                    loadedStore = loaded
                    browser.attach(loaded.graph)
                    needsDraw = true
                case .failure(let error)?:
                    backend.restore()
                    throw error
                case nil:
                    let (done, total) = box.progress
                    if total > 0, browser.progress.map({ $0 != (done, total) }) ?? true { browser.progress = (done, total); needsDraw = true }
                }
            }
            // A frame only when something changed: an idle browser does no work.
            if needsDraw { terminal.draw { buffer in browser.render(into: &buffer) } }
            needsDraw = false
            guard let first = backend.nextEvent(timeout: loadedStore == nil ? 100 : 1000) else { continue }
            // Everything already waiting (a paste) is handled before the next frame.
            var events = [first]
            while events.count < 65_536, let more = backend.nextEvent(timeout: 0) { events.append(more) }
            for event in events {
                if case .resize = event { terminal.invalidate() }
                if case .key(.control("l")) = event { terminal.invalidate() }
                // Ctrl-C quits (raw mode delivers it as a key) unless the REPL is taking it.
                if case .key(.control("c")) = event, browser.focus != .repl { return }
                if !browser.handle(event) { return }
            }
            needsDraw = true
        }
    }
}
