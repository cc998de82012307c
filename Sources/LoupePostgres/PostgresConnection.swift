import Foundation
import CLibPQ
import CSignalSafety
import LoupeQuery
import LoupeModel
import Synchronization

/// A failure talking to PostgreSQL, with the server or address it concerns (never the password).
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// `postgres://user@host:port/db`, without a password.
    public let server: String
    /// What libpq or the server said, on one line.
    public let reason: String
    /// True for a failed commit (`cannot write to …`), false for a failed read.
    public var writing = false
    /// The server's SQLSTATE for an error it raised (`22003`: a value out of range), else nil.
    public var code: String?

    public init(server: String, reason: String, writing: Bool = false, code: String? = nil) {
        self.server = server
        self.reason = reason
        self.writing = writing
        self.code = code
    }

    /// True for a value out of range on the server (SQLSTATE 22003: an integer that overflowed,
    /// a float that overflowed or underflowed, a `numeric` too large for a double), where
    /// Loupe's engine computes on (doubles after an integer overflow, infinities, zeros).
    public var isArithmeticRange: Bool { code == "22003" }

    public var description: String { "cannot \(writing ? "write to" : "read") '\(server)': \(reason)" }
}

/// One connection to a PostgreSQL server through libpq, read-only unless a transaction says
/// otherwise: every session it opens sets `default_transaction_read_only`, reads run in one
/// `REPEATABLE READ READ ONLY` transaction (one snapshot, whatever other clients commit
/// meanwhile), and only ``PostgresCommit`` begins a `READ WRITE` one. Values are always bound
/// parameters.
public final class PostgresConnection: @unchecked Sendable {   // used by one thread at a time (``PostgresPages`` hands its connections out one by one)
    private let connection: OpaquePointer
    /// The address without its password, for messages.
    public let server: String

    /// True for what `loupe` opens as a PostgreSQL database: a `postgres://` or `postgresql://` URL.
    public static func isURL(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://")
    }

    /// Connects to `url` (libpq's URI form; `connect_timeout` defaults to 5 seconds so an
    /// unreachable host fails instead of hanging), or throws with libpq's reason.
    public init(url: String) throws {
        server = PostgresConnection.withoutPassword(url)
        var conninfo = url
        if !url.contains("connect_timeout=") { conninfo += (url.contains("?") ? "&" : "?") + "connect_timeout=5" }
        if !url.contains("application_name=") { conninfo += "&application_name=loupe" }
        guard let c = PQconnectdb(conninfo) else { throw PostgresError(server: server, reason: "libpq could not allocate a connection") }
        connection = c
        // (Once `connection` is set, a throw runs `deinit`, which finishes it.)
        guard PQstatus(c) == CONNECTION_OK else { throw PostgresError(server: server, reason: PostgresConnection.message(PQerrorMessage(c))) }
        PQsetClientEncoding(c, "UTF8")
        // Killed (SIGTERM, SIGHUP, Ctrl-C outside a REPL) or exiting mid-statement, Loupe asks the
        // server to cancel what this connection runs, as PQcancel may from a signal handler.
        loupe_signals_install()
        cancelHandle = PQgetCancel(c)
        if let cancelHandle {
            cancelSlot = loupe_cancel_add({ context, buffer, size in PQcancel(OpaquePointer(context), buffer, size) }, UnsafeMutableRawPointer(cancelHandle))
        }
        _ = try query("SET default_transaction_read_only = on")
        // A statement waiting on another session's lock gives up after a while, with a message
        // that says so, rather than waiting as long as that session holds it (a REPL fed by a
        // script never reached the end of its input). A commit sets its own, shorter wait.
        _ = try query("SET lock_timeout = '\(PostgresConnection.lockWait)s'")
        // Floats as text that reads back as the same double (the server's default since
        // PostgreSQL 12; a server configured with fewer digits would round what a load reads).
        _ = try query("SET extra_float_digits = 3")
    }

    /// How many seconds a statement waits for a lock another session holds (`lock_timeout`).
    static let lockWait = 5

    /// `sql` with its parameters after it, as `explain` shows what was sent (`… -- $1 = '500'`).
    static func traced(_ sql: String, _ parameters: [String?]) -> String {
        guard !parameters.isEmpty else { return sql }
        return sql + " -- " + parameters.enumerated().map { "$\($0.offset + 1) = " + ($0.element.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" } ?? "NULL") }
            .joined(separator: ", ")
    }

    /// libpq's cancel request for this connection, and its slot in the signal handler's table.
    private var cancelHandle: OpaquePointer?
    private var cancelSlot: Int32 = -1

    deinit {
        loupe_cancel_remove(cancelSlot)
        if let cancelHandle { PQfreeCancel(cancelHandle) }
        PQfinish(connection)
    }

    /// The rows of one statement, every value as text (`nil` for NULL) with its column's type.
    public struct Rows {
        public let columns: [String]
        /// Each column's type OID (`pg_type`).
        public let types: [UInt32]
        public let rows: [[String?]]
    }

    /// While set, every statement polls it as the server works and, once it says true, asks the
    /// server to cancel the statement and throws ``QueryError/cancelled`` (the browser's and the
    /// REPL's Ctrl-C).
    public var isCancelled: (() -> Bool)?

    /// Runs one statement with `parameters` bound as `$1, $2, …` (text; nil is NULL).
    public func query(_ sql: String, _ parameters: [String?] = []) throws -> Rows {
        SQLTrace.record(PostgresConnection.traced(sql, parameters))
        let result: OpaquePointer?
        if let isCancelled { result = try cancellableResult(sql, parameters, isCancelled) } else {
            result = try withCStrings(parameters) { values in
                PQexecParams(connection, sql, Int32(parameters.count), nil, values, nil, nil, 0)
            }
        }
        guard let result else { throw PostgresError(server: server, reason: PostgresConnection.message(PQerrorMessage(connection))) }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else {
            let reason = PQresultErrorMessage(result).map { String(cString: $0) } ?? ""
            let code = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }   // PG_DIAG_SQLSTATE
            if code == "55P03" {
                throw PostgresError(server: server, reason: "another session holds a lock this statement needs; it waited \(PostgresConnection.lockWait) s, gave up, and did nothing: try again once that session ends", code: code)
            }
            throw PostgresError(server: server, reason: PostgresConnection.message(reason.isEmpty ? PQerrorMessage(connection) : nil, fallback: reason), code: code)
        }
        let width = Int(PQnfields(result)), height = Int(PQntuples(result))
        var columns: [String] = [], types: [UInt32] = []
        for i in 0..<width {
            columns.append(PQfname(result, Int32(i)).map { String(cString: $0) } ?? "")
            types.append(UInt32(PQftype(result, Int32(i))))
        }
        var rows: [[String?]] = []
        rows.reserveCapacity(height)
        for r in 0..<height {
            var row: [String?] = []
            row.reserveCapacity(width)
            for c in 0..<width {
                if PQgetisnull(result, Int32(r), Int32(c)) == 1 { row.append(nil); continue }
                let length = Int(PQgetlength(result, Int32(r), Int32(c)))
                let bytes = UnsafeRawPointer(PQgetvalue(result, Int32(r), Int32(c))!).assumingMemoryBound(to: UInt8.self)
                row.append(String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self))
            }
            rows.append(row)
        }
        return Rows(columns: columns, types: types, rows: rows)
    }

    /// The result of one statement sent without waiting for it: the socket is polled every 50 ms,
    /// and once `isCancelled` says so the server is asked to stop (`PQcancel`) and what it
    /// answers is read to the end, so that the connection can be used again.
    private func cancellableResult(_ sql: String, _ parameters: [String?], _ isCancelled: () -> Bool) throws -> OpaquePointer? {
        let sent = try withCStrings(parameters) { values in
            PQsendQueryParams(connection, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        guard sent == 1 else { return nil }
        var cancelled = false
        var last: OpaquePointer?
        while true {
            while PQisBusy(connection) == 1 {
                if !cancelled, isCancelled() {
                    cancelled = true
                    if let cancel = PQgetCancel(connection) {
                        var reason = [CChar](repeating: 0, count: 256)
                        _ = PQcancel(cancel, &reason, Int32(reason.count))
                        PQfreeCancel(cancel)
                    }
                }
                var descriptor = pollfd(fd: PQsocket(connection), events: Int16(POLLIN), revents: 0)
                _ = poll(&descriptor, 1, 50)
                guard PQconsumeInput(connection) == 1 else {
                    if let last { PQclear(last) }
                    return nil
                }
            }
            guard let next = PQgetResult(connection) else { break }
            if let last { PQclear(last) }
            last = next
        }
        if cancelled {
            if let last { PQclear(last) }
            throw QueryError.cancelled
        }
        return last
    }

    /// Runs one statement that returns no rows (an `INSERT`, `UPDATE` or `DELETE`), values bound
    /// as `parameters`; returns how many rows it changed.
    public func execute(_ sql: String, _ parameters: [String?] = []) throws -> Int {
        let result: OpaquePointer? = try withCStrings(parameters) { values in
            PQexecParams(connection, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        guard let result else { throw PostgresError(server: server, reason: PostgresConnection.message(PQerrorMessage(connection))) }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else {
            let reason = PQresultErrorMessage(result).map { String(cString: $0) } ?? ""
            throw PostgresError(server: server, reason: PostgresConnection.message(reason.isEmpty ? PQerrorMessage(connection) : nil, fallback: reason))
        }
        return Int(PQcmdTuples(result).map { String(cString: $0) } ?? "") ?? 0
    }

    /// Runs `body` inside one read-only `REPEATABLE READ` transaction: one snapshot.
    public func snapshot<T>(_ body: () throws -> T) throws -> T {
        _ = try query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        do {
            let value = try body()
            _ = try query("COMMIT")
            return value
        } catch {
            _ = try? query("ROLLBACK")
            throw error
        }
    }

    /// Runs `sql` (a `SELECT`, `parameters` bound) through a cursor, handing `body` its rows
    /// `batch` at a time until they end or `body` returns false: a whole table read without its
    /// rows in memory at once. Inside a transaction (``snapshot(_:)``), as cursors are.
    public func forEachBatch(_ sql: String, _ parameters: [String?] = [], batch: Int = 10_000, _ body: (Rows) throws -> Bool) throws {
        _ = try query("DECLARE loupe_scan NO SCROLL CURSOR FOR " + sql, parameters)
        defer { _ = try? query("CLOSE loupe_scan") }
        while true {
            let rows = try query("FETCH FORWARD \(max(1, batch)) FROM loupe_scan")
            guard !rows.rows.isEmpty, try body(rows), rows.rows.count == max(1, batch) else { return }
        }
    }

    /// False once the connection is lost (the server went away): it is not used again.
    public var isHealthy: Bool { PQstatus(connection) == CONNECTION_OK }

    /// Calls `body` with the parameters as C strings. PostgreSQL's text cannot hold U+0000, and
    /// libpq would send a C string cut short at it (`"x\u{0}y"` written as `"x"`): such a value
    /// is refused before anything is sent.
    private func withCStrings<R>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) throws -> R {
        if strings.contains(where: { $0?.utf8.contains(0) ?? false }) {
            throw PostgresError(server: server, reason: "PostgreSQL text cannot hold a NUL character (U+0000); a value holding one is not sent, nothing was written")
        }
        let pointers: [UnsafeMutablePointer<CChar>?] = strings.map { $0.flatMap { strdup($0) } }
        defer { for p in pointers { free(p) } }
        return body(pointers.map { $0.map { UnsafePointer($0) } })
    }

    /// libpq's message, trimmed to one line.
    private static func message(_ pointer: UnsafePointer<CChar>?, fallback: String = "") -> String {
        let text = pointer.map { String(cString: $0) } ?? fallback
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return lines.isEmpty ? "the server gave no reason" : lines.joined(separator: "; ")
    }

    /// `postgres://user:secret@host/db` → `postgres://user@host/db`.
    public static func withoutPassword(_ url: String) -> String { ReplSession.withoutPassword(url) }
}

/// A few connections to one database for a paged session's reads (one per thread at work), each
/// read in its own read-only snapshot; the connections close with the pool. A session's state
/// after a commit shares its pool with the state before.
public final class PostgresPool: Sendable {
    /// The database's URL (with its password, to connect; never shown).
    let url: String
    private let connections = Mutex<[PostgresConnection]>([])

    /// A pool for `url`, starting with `connection` when one is open already.
    init(url: String, connection: PostgresConnection? = nil) {
        self.url = url
        if let connection { connections.withLock { $0.append(connection) } }
    }

    /// Runs `body` in one read-only snapshot on a connection of the pool (a new one when all are
    /// at work). A connection the server dropped while it waited in the pool (a restart, an idle
    /// timeout) is replaced and `body` run again on a new one; one dropped while new is an error.
    func read<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let pooled = connections.withLock { $0.popLast() }
        let connection = try pooled ?? PostgresConnection(url: url)
        do {
            let value = try connection.snapshot { try body(connection) }
            keep(connection)
            return value
        } catch is PostgresError where pooled != nil && !connection.isHealthy {
            return try read(body)
        } catch {
            if connection.isHealthy { keep(connection) }
            throw error
        }
    }

    private func keep(_ connection: PostgresConnection) {
        connections.withLock { if $0.count < 4 { $0.append(connection) } }
    }
}
