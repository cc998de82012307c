import Foundation
import LoupeHost
import LoupeModel
import LoupeQuery
import LoupePostgres
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
