import Foundation
import LoupeStore
import Synchronization

/// Whether a PostgreSQL database may have changed since last asked (live mode): the next
/// transaction id the server would hand out (`txid_snapshot_xmax(txid_current_snapshot())`),
/// which only a transaction that writes moves, read on a connection of its own at most once a
/// second. (The write-ahead log's position moved with no commit too — the background writer
/// logs a snapshot every 15 s — so paged mode counted commits nobody made.) It is the whole
/// server's (another database's commit moves it): a move is a reason to read the database again
/// and compare, never a change shown by itself. No `LISTEN`, no trigger, nothing written.
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

    /// The next transaction id, or nil when it cannot be read.
    private static func position(_ connection: PostgresConnection?) -> String? {
        (try? connection?.query("SELECT txid_snapshot_xmax(txid_current_snapshot())::text"))?.rows.first?.first ?? nil
    }
}
