import Foundation
import LoupeModel
import LoupePostgres
import LoupeStore

/// What a command opened: a SQLite file loaded through its format (with what a commit needs), or
/// a PostgreSQL database (`postgres://…`), read into a graph and never written.
struct OpenedStore {
    let graph: ObjectGraph
    let formatName: String
    /// The file's path, or the server's address without its password.
    let label: String
    /// The loaded file; nil for PostgreSQL.
    let loaded: LoadedStore?

    /// Opens `location` (a file path or a PostgreSQL URL) and loads it whole; what the load
    /// noticed goes to stderr.
    static func open(_ location: String) throws -> OpenedStore {
        if PostgresConnection.isURL(location) {
            let loaded = try PostgresDatabase.load(url: location)
            for warning in loaded.warnings { printError("warning: \(warning)") }
            return OpenedStore(graph: loaded.graph, formatName: PostgresDatabase.formatName,
                               label: PostgresConnection.withoutPassword(location), loaded: nil)
        }
        let store = try LoadedStore.open(location)
        for warning in store.warnings { printError("warning: \(warning)") }
        return OpenedStore(graph: store.graph, formatName: store.format.name, label: store.path, loaded: store)
    }
}
