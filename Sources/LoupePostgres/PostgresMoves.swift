import Foundation
import LoupeStore
import Synchronization

/// Whether a PostgreSQL database may have changed since last asked (live mode): the server's
/// write-ahead log position (`pg_current_wal_lsn()`), which every committed write moves, read on
/// a connection of its own at most once a second. It is the whole server's (another database's
/// commit, a checkpoint moves it too): a move is a reason to read the database again and compare,
/// never a change shown by itself. No `LISTEN`, no trigger, nothing written.
public final class PostgresMoves: StoreMoves {
    private let state: Mutex<(connection: PostgresConnection?, lsn: String?, lookedAt: Date)>
    /// The least time between two looks.
    static let interval = 1.0

    /// Watches the database at `url`; a database it cannot reach is never reported as moved.
    public init(url: String) {
        let connection = try? PostgresConnection(url: url)
        state = Mutex((connection, PostgresMoves.position(connection), Date()))
    }

    public func moved() -> Bool {
        state.withLock { state in
            guard Date().timeIntervalSince(state.lookedAt) >= Self.interval, let connection = state.connection else { return false }
            state.lookedAt = Date()
            guard let now = Self.position(connection), now != state.lsn else { return false }
            state.lsn = now
            return true
        }
    }

    /// The server's WAL position, or nil when it cannot be read.
    private static func position(_ connection: PostgresConnection?) -> String? {
        (try? connection?.query("SELECT pg_current_wal_lsn()::text"))?.rows.first?.first ?? nil
    }
}
