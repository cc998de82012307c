import Foundation
import LoupeBrowser
import LoupeHost
import LoupeModel
import LoupeQuery
import LoupePostgres
import LoupeSQL
import LoupeStore

/// What a command opened: a SQLite file loaded through its format, or a PostgreSQL database
/// (`postgres://…`) read into a graph; each with what a commit needs.
struct OpenedStore {
    let graph: ObjectGraph
    let formatName: String
    /// The file's path, or the server's address without its password.
    let label: String
    /// The loaded file; nil for PostgreSQL.
    let loaded: LoadedStore?
    /// The PostgreSQL URL as given (password included, to connect again; never shown); nil for a file.
    var url: String? = nil
    /// The store's kind (what `.explain` names).
    var kind: StoreKind = .document

    /// What a session previews and commits through: the loaded file's host, or the database's.
    /// (Sessions and browsers hold their host weakly: the caller keeps it.)
    func host() -> SessionHost {
        if let url { return PostgresHost(url: url) }
        let host = StoreHost()
        if let loaded { host.adopt(loaded) }
        return host
    }

    /// What live mode looks at to tell another process committed: the file's stamp, or the
    /// database server's write position.
    func moves() -> any StoreMoves {
        if let url { return PostgresMoves(url: url) }
        return FileMoves(path: loaded?.path ?? label)
    }

    /// Opens `location` (a file path or a PostgreSQL URL) and loads it whole; what the load
    /// noticed goes to stderr.
    static func open(_ location: String) throws -> OpenedStore {
        if PostgresConnection.isURL(location) {
            let loaded = try PostgresDatabase.load(url: location)
            for warning in loaded.warnings { printError("warning: \(warning)") }
            return OpenedStore(graph: loaded.graph, formatName: loaded.graph.formatName,
                               label: PostgresConnection.withoutPassword(location), loaded: nil, url: location,
                               kind: (try? StoreKind.ofDatabase(location)) ?? .postgres)
        }
        let store = try LoadedStore.open(location)
        for warning in store.warnings { printError("warning: \(warning)") }
        return OpenedStore(graph: store.graph, formatName: store.format.name, label: store.path, loaded: store, kind: StoreKind.of(store.format))
    }
}

/// A store opened a page at a time (paged mode): a Persist store, a plain relational SQLite
/// file or a PostgreSQL database's tables, what answers its statements, and the host its edits
/// commit through.
struct PagedOpening {
    let pages: PageSource
    /// The file's path, or the database's URL (with its password, to connect again).
    let path: String
    /// Why paged mode is on (`a whole load (≈ 3.2 GB) is over the 2.0 GB memory budget`; nil: asked for).
    let reason: String?
    let formatName: String
    /// What answers statements over the store: the host's, which a commit carries forward
    /// with what it has read of the whole store; nil when none could be made (a Core Data store
    /// whose tables' keys cannot be read), and the engine answers a chunk of objects at a time.
    let querySource: (any QuerySource)?
    /// What edits commit through.
    let host: any PagedSessionHost
    /// The store's kind: what its SQL leaves to the in-memory engine, for the planner.
    let kind: StoreKind

    /// What the store is called on screen: the file's name, the database's address without its password.
    var label: String {
        PostgresConnection.isURL(path) ? PostgresConnection.withoutPassword(path) : URL(fileURLWithPath: path).lastPathComponent
    }

    /// Opens the PostgreSQL database at `url` in paged mode: its tables, or Persist's layout
    /// when it holds that (keyed by integers; other keys are refused with a line that says so).
    static func open(postgres url: String, reason: String?) throws -> PagedOpening {
        // Its kind only: paged mode is asked for, so its size against the budget is not read.
        guard let opening = try StoreDriver(kind: try StoreKind.ofDatabase(url), location: url, file: nil, estimate: nil, budget: .standard).openPaged(reason: reason) else {
            throw CLIError("this database cannot be read a page at a time")
        }
        return opening
    }

    /// Opens `file` in paged mode when its kind pages (``StoreDriver/openPaged(reason:)``); nil
    /// for other formats. Throws what the opening throws.
    static func open(_ file: StoreFile, reason: String?) throws -> PagedOpening? {
        let kind = try file.read { try StoreKind.of(StoreFormats.detect($0, path: file.path)) }
        return try StoreDriver(kind: kind, location: file.path, file: file, estimate: nil, budget: .standard).openPaged(reason: reason)
    }

    /// Attaches the store to `browser` (the host first, so that editing starts where it can).
    func attach(to browser: Browser) {
        browser.host = host
        browser.storeKind = kind
        browser.attachPaged(pages, reason: reason, querySource: querySource)
    }
}
