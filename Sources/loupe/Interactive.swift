import Foundation
import Synchronization
import LoupeBrowser
import LoupeHost
import LoupeModel
import LoupePostgres
import LoupeSQL
import LoupeStore
import NcursesBackend
import TerminalKit

/// The interactive browser on a real terminal: the types appear at once with a progress bar
/// while the graph loads on another thread; the terminal is restored on every way out.
enum Interactive {
    /// Progress and result of the background load, shared with the UI thread.
    final class LoadBox: Sendable {
        private let state = Mutex<(progress: (Int, Int), result: Result<LoadedStore, any Error>?)>(((0, 0), nil))
        var progress: (Int, Int) { state.withLock { $0.progress } }
        var result: Result<LoadedStore, any Error>? { state.withLock { $0.result } }
        /// The result, which the box then forgets (the store's file must not stay open: a commit
        /// writes through a connection of its own).
        func take() -> Result<LoadedStore, any Error>? { state.withLock { let r = $0.result; $0.result = nil; return r } }
        func set(progress: (Int, Int)) { state.withLock { $0.progress = progress } }
        func set(result: Result<LoadedStore, any Error>) { state.withLock { $0.result = result } }
    }

    /// A store already loaded (a PostgreSQL database): the browser opens on the whole graph.
    static func run(opened: OpenedStore) throws {
        let browser = Browser(fileLabel: opened.label, formatName: opened.formatName,
                              theme: Theme.fromEnvironment(ProcessInfo.processInfo.environment),
                              history: HistoryFile.load(), persistsHistory: true)
        let host = opened.host()
        browser.host = host
        browser.storePath = opened.url ?? opened.loaded?.path   // reload reads the database again
        browser.storeKind = opened.kind
        browser.background = ThreadRunner()
        browser.attach(opened.graph)
        let box = LoadBox()
        try loop(browser, box: box, host: nil, isLoaded: true, moves: opened.moves())
        withExtendedLifetime(host) {}   // the browser holds it weakly
    }

    /// A store browsed a page at a time: no load, the first type's first page at once.
    static func run(paged source: PagedOpening, path: String) throws {
        let browser = Browser(fileLabel: source.label, formatName: source.formatName,
                              theme: Theme.fromEnvironment(ProcessInfo.processInfo.environment),
                              history: HistoryFile.load(), persistsHistory: true)
        browser.storePath = path
        browser.background = ThreadRunner()   // statements, edits, commits, building a relation index (`I`)
        source.attach(to: browser)
        // Live as a loaded store is: a file's stamp, a database's next transaction id.
        try loop(browser, box: LoadBox(), host: nil, isLoaded: true, moves: PostgresConnection.isURL(path) ? PostgresMoves(url: path) : FileMoves(path: path))
        withExtendedLifetime(source.host) {}   // the browser holds it weakly
    }

    static func run(path: String, note: String? = nil) throws {
        let file = try StoreFile.openForReading(path)
        let (format, types) = try LoadedStore.catalog(file)
        let browser = Browser(fileLabel: URL(fileURLWithPath: path).lastPathComponent, formatName: format.name,
                              theme: Theme.fromEnvironment(ProcessInfo.processInfo.environment),
                              history: HistoryFile.load(), persistsHistory: true)
        let host = StoreHost()
        browser.host = host
        browser.storePath = path
        browser.storeKind = StoreKind.of(format)
        browser.loadNote = note
        browser.background = ThreadRunner()
        browser.pendingTypes = types
        browser.progress = (0, types.reduce(0) { $0 + max(0, $1.count) })
        let box = LoadBox()
        Thread.detachNewThread {
            do {
                let loaded = try LoadedStore.load(file) { done, total in box.set(progress: (done, total)) }
                box.set(result: .success(loaded))
            } catch { box.set(result: .failure(error)) }
        }
        // The first rows of the first type, read on their own while the graph loads.
        if let page = try? LoadedStore.firstPage(file) { browser.attachPreview(page) }

        try loop(browser, box: box, host: host, isLoaded: false, moves: FileMoves(path: path))
    }

    /// Draws and handles keys until the user leaves; adopts the graph from `box` when it arrives.
    /// `host`: the file's host, which adopts the load when it arrives (nil when loaded at start).
    /// `moves`: the loaded file's stamp (a database's next transaction id), looked at four times a
    /// second (live mode: another process's commits are read again and shown).
    private static func loop(_ browser: Browser, box: LoadBox, host: StoreHost?, isLoaded loadedAtStart: Bool, moves: (any StoreMoves)? = nil) throws {
        let backend: NcursesBackend
        do { backend = try NcursesBackend() } catch { throw CLIError("\(error)") }
        defer { backend.restore() }
        let terminal = Terminal(backend: backend)
        var isLoaded = loadedAtStart
        var needsDraw = true
        let lookEvery = 0.25
        var nextLook = DispatchTime.now() + lookEvery
        while true {
            if !isLoaded {
                switch box.take() {
                case .success(let loaded)?:
                    isLoaded = true
                    host?.adopt(loaded)
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
            if browser.collect() { needsDraw = true }
            if let moves, isLoaded, DispatchTime.now() >= nextLook {
                nextLook = DispatchTime.now() + lookEvery
                if moves.moved() { browser.storeChangedOnDisk(); needsDraw = true }
            }
            if browser.liveMarksFaded() { needsDraw = true }
            // A commit chosen at the quit guard ends the program when it succeeds.
            if browser.wantsQuit { return }
            if browser.isBusy { needsDraw = true }   // the elapsed time on the status line
            // A frame only when something changed: an idle browser does no work.
            if needsDraw { terminal.draw { buffer in browser.render(into: &buffer) } }
            needsDraw = false
            // Woken for the next look at the file, not a timeout later.
            let untilLook = moves == nil ? 1000 : max(10, Int(nextLook.uptimeNanoseconds / 1_000_000) - Int(DispatchTime.now().uptimeNanoseconds / 1_000_000))
            guard let first = backend.nextEvent(timeout: !isLoaded || browser.isBusy || browser.isCountingTypes ? 100 : untilLook) else { continue }
            // Everything already waiting (a paste) is handled before the next frame.
            var events = [first]
            while events.count < 65_536, let more = backend.nextEvent(timeout: 0) { events.append(more) }
            for event in events {
                if case .resize = event { terminal.invalidate() }
                if case .key(.control("l")) = event { terminal.invalidate() }
                if !browser.handle(event) { return }
                perform(browser.takeRequests(), browser, backend: backend, terminal: terminal)
            }
            needsDraw = true
        }
    }
}

/// Does what the browser asked of the terminal: the clipboard, an external editor (the
/// terminal lent to it, then drawn whole again).
private func perform(_ requests: [TerminalRequest], _ browser: Browser, backend: any Backend, terminal: Terminal) {
    for request in requests {
        switch request {
        case .copy(let text): backend.copyToClipboard(text)
        case .edit(let edit):
            var saved: String?
            backend.suspend { saved = ExternalEditor.edit(edit) }
            terminal.invalidate()
            browser.finishExternalEdit(edit, text: saved)
        }
    }
}

/// Runs the browser's statements and loads on a thread with a large stack (trees and values
/// nest deeply; a dispatch worker's 512 KB is not enough for every case).
final class ThreadRunner: BackgroundRunner {
    func start(_ work: @escaping @Sendable () -> Void) {
        let thread = Thread { work() }
        thread.stackSize = 64 << 20
        thread.start()
    }
}
