import Foundation
import LoupeStore
import Synchronization

/// Whether a PostgreSQL database may have changed since last asked (live mode): the rows this
/// database's transactions inserted, updated and deleted (`pg_stat_database`, system catalogs
/// and `TRUNCATE` included), read on a connection of its own at most once a second. A writer's
/// counts reach the statistics when it goes idle, at most a second later. Where the server keeps
/// no counts (`track_counts` off) it is the next transaction id the server would hand out, which
/// every database's writes move. (The write-ahead log's position moved with no commit — the
/// background writer logs a snapshot every 15 s — and the transaction id moves with another
/// database's commits: both made paged mode read the store again for commits nobody made to it,
/// and hold the user's keys meanwhile.) No `LISTEN`, no trigger, nothing written.
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

    /// The database's written-row count (or the next transaction id), nil when it cannot be read.
    static func position(_ connection: PostgresConnection?) -> String? {
        let sql = """
            SELECT CASE WHEN current_setting('track_counts') = 'on'
                        THEN 'rows ' || (tup_inserted + tup_updated + tup_deleted)::text
                        ELSE 'xid ' || txid_snapshot_xmax(txid_current_snapshot())::text END
            FROM pg_stat_database WHERE datname = current_database()
            """
        return (try? connection?.query(sql))?.rows.first?.first ?? nil
    }
}
