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

    /// What a session previews and commits through: the loaded file's host, or the database's.
    /// (Sessions and browsers hold their host weakly: the caller keeps it.)
    func host() -> SessionHost {
        if let url { return PostgresHost(url: url) }
        let host = StoreHost()
        if let loaded { host.adopt(loaded) }
        return host
    }

    /// Opens `location` (a file path or a PostgreSQL URL) and loads it whole; what the load
    /// noticed goes to stderr.
    static func open(_ location: String) throws -> OpenedStore {
        if PostgresConnection.isURL(location) {
            let loaded = try PostgresDatabase.load(url: location)
            for warning in loaded.warnings { printError("warning: \(warning)") }
            return OpenedStore(graph: loaded.graph, formatName: loaded.graph.formatName,
                               label: PostgresConnection.withoutPassword(location), loaded: nil, url: location)
        }
        let store = try LoadedStore.open(location)
        for warning in store.warnings { printError("warning: \(warning)") }
        return OpenedStore(graph: store.graph, formatName: store.format.name, label: store.path, loaded: store)
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
    /// What SQL leaves to the in-memory engine over this format (a refusal names it).
    let unanswered: String

    /// What the store is called on screen: the file's name, the database's address without its password.
    var label: String {
        PostgresConnection.isURL(path) ? PostgresConnection.withoutPassword(path) : URL(fileURLWithPath: path).lastPathComponent
    }

    /// Opens the PostgreSQL database at `url` in paged mode: its tables, or Persist's layout
    /// when it holds that (keyed by integers; other keys are refused with a line that says so).
    static func open(postgres url: String, reason: String?) throws -> PagedOpening {
        if try PostgresDatabase.holdsPersist(url: url) {
            let host = PostgresPersistPagedHost(pages: try PostgresPersistPages.open(url: url))
            return PagedOpening(pages: host.pages, path: url, reason: reason, formatName: PostgresPersistPages.formatName, querySource: host.querySource, host: host,
                                unanswered: PostgresPersistPages.unanswered)
        }
        let host = PostgresPagedHost(pages: try PostgresPages.open(url: url))
        return PagedOpening(pages: host.pages, path: url, reason: reason, formatName: PostgresDatabase.formatName, querySource: host.querySource, host: host,
                            unanswered: PostgresPages.unanswered)
    }

    /// Opens `file` in paged mode when its format pages: Persist (keyed by integers), plain
    /// relational, or Core Data; nil for other formats. Throws what the format's opening throws.
    static func open(_ file: StoreFile, reason: String?) throws -> PagedOpening? {
        let format = try file.read { try StoreFormats.detect($0, path: file.path) }
        if format == PersistFormat.self {
            let pages = try PersistPages.open(file)
            let host = PagedStoreHost(pages: pages, querySource: PersistQuerySource.following)
            return PagedOpening(pages: pages, path: file.path, reason: reason, formatName: PersistFormat.name,
                                querySource: host.pagedStore.querySource ?? PersistQuerySource(pages: pages), host: host,
                                unanswered: "paths into nested values, arithmetic, relations to several types")
        }
        if format == RelationalFormat.self {
            let pages = try RelationalPages.open(file)
            let host = PagedStoreHost(pages: pages, querySource: RelationalQuerySource.following)
            return PagedOpening(pages: pages, path: file.path, reason: reason, formatName: RelationalFormat.name,
                                querySource: host.pagedStore.querySource ?? RelationalQuerySource(pages: pages), host: host,
                                unanswered: RelationalPages.unanswered)
        }
        if format == CoreDataFormat.self {
            let pages = try CoreDataPages.open(file)
            let host = PagedStoreHost(pages: pages, querySource: CoreDataQuerySource.following)
            return PagedOpening(pages: pages, path: file.path, reason: reason, formatName: CoreDataFormat.name,
                                querySource: host.pagedStore.querySource, host: host,
                                unanswered: CoreDataPages.unanswered)
        }
        return nil
    }

    /// Attaches the store to `browser` (the host first, so that editing starts where it can).
    func attach(to browser: Browser) {
        browser.host = host
        browser.pagedUnanswered = unanswered
        browser.attachPaged(pages, reason: reason, querySource: querySource)
    }
}
