import Foundation
import Synchronization

/// The SQL Loupe sends for a statement while a recording is on (`explain` shows it), and on
/// standard error when `LOUPE_SQL_TRACE` is set: every statement SQLite runs on a read
/// connection and every one sent to PostgreSQL, with their bound values. Off, recording costs
/// one atomic read per statement.
public enum SQLTrace {
    private static let on = Atomic<Bool>(false)
    private static let recorded = Mutex<[String]>([])
    /// `LOUPE_SQL_TRACE` set: each statement is written to standard error as it is sent.
    static let printed = ProcessInfo.processInfo.environment["LOUPE_SQL_TRACE"] != nil

    /// True while ``record(_:)`` keeps (or prints) what it is given.
    public static var isRecording: Bool { printed || on.load(ordering: .relaxed) }

    /// Starts keeping statements (what was kept before is dropped).
    public static func start() {
        recorded.withLock { $0 = [] }
        on.store(true, ordering: .relaxed)
    }

    /// Stops keeping statements; what was kept since ``start()``, in order.
    public static func stop() -> [String] {
        on.store(false, ordering: .relaxed)
        return recorded.withLock { kept in defer { kept = [] }; return kept }
    }

    /// Keeps `sql` when recording (`sql` is made only then) when it is SQL translated from a
    /// statement: every translation names the statement's root rows `a0`. The rest (catalog
    /// reads, a load's or a page's reads) is the store's reading, not the statement's SQL.
    public static func record(_ sql: @autoclosure () -> String) {
        guard isRecording else { return }
        let text = sql()
        guard isTranslated(text) else { return }
        if printed { FileHandle.standardError.write(Data((text + "\n").utf8)) }
        if on.load(ordering: .relaxed) { recorded.withLock { $0.append(text) } }
    }

    /// True for SQL that names the root alias `a0`.
    static func isTranslated(_ sql: String) -> Bool {
        sql.contains(" a0 ") || sql.contains("a0.") || sql.hasSuffix(" a0")
    }
}
