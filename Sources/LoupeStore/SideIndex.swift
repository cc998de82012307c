import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GRDB
import LoupeModel

/// An index of a Persist store's relation rows kept in Loupe's cache folder, never in the store:
/// for stores written by Persist itself, which has no index, so that paged mode finds an object's
/// relation rows by key instead of scanning every row for each window.
///
/// The index is a SQLite file of its own (`index-<hash>.sqlite` beside the schema cache's
/// entries) holding a copy of the `relations` table keyed by the store's rowids, with indexes by
/// `from_id` and by `to_id` (what windows look up), each row's ends' types (positions in the
/// catalog, NULL for an object that is not there) and indexes by relation name, both types and
/// either end (what statements join and count, covering), the relations as a whole load finds them
/// (``RelationShape``, when they can be read exactly), and the store's real path, ``FileStamp``, database header and Loupe's
/// build: like a cache entry, it is used only while it describes the file as it is. It is built
/// only when the user asks (paged mode offers it), from one read snapshot, into a temporary name
/// renamed into place when whole; a failed or cancelled build leaves nothing.
public enum SideIndex {
    /// The layout of the index file; a change makes older files stale.
    static let version = 3

    /// Where the side index of `file` lives, or nil when caching is off.
    static func location(for file: StoreFile) -> String? {
        guard let directory = SchemaCache.directory.withLock({ $0 }), let path = SchemaCache.realPath(file.path) else { return nil }
        return SchemaCache.entryPath(directory, for: path, kind: "index").replacingOccurrences(of: ".json", with: ".sqlite")
    }

    /// True when a side index can be built for `file` (caching is on).
    public static func isAvailable(for file: StoreFile) -> Bool { location(for: file) != nil }

    /// The fresh side index of `file`, opened read-only; nil when there is none, it is stale, or it
    /// cannot be read.
    static func open(for file: StoreFile) -> DatabaseQueue? {
        guard let location = location(for: file), FileManager.default.fileExists(atPath: location),
              let path = SchemaCache.realPath(file.path) else { return nil }
        var configuration = Configuration()
        configuration.readonly = true
        guard let queue = try? DatabaseQueue(path: location, configuration: configuration),
              let fresh = try? queue.read({ db -> Bool in
                  guard let row = try Row.fetchOne(db, sql: "SELECT version, build, path, stamp, header FROM loupe_side_index") else { return false }
                  guard let stamp = (row[3] as Data?).flatMap({ try? JSONDecoder().decode(FileStamp.self, from: $0) }),
                        let indexVersion = row[0] as Int?, indexVersion == version, let build = row[1] as String?, let indexed = row[2] as String?,
                        let header = row[4] as Data? else { return false }
                  return SchemaCache.describes(file, path: path, entry: (SchemaCache.version, build, indexed, stamp, Array(header)))
              }), fresh else { return nil }
        return queue
    }

    /// One relation as the index keeps it (``RelationShape`` with type names, not positions).
    public struct StoredShape: Codable, Sendable, Equatable {
        let source: String
        let name: String
        let toMany: Bool
        let targets: [String]
        let exclusive: Bool
    }

    /// The types the side index of `file` numbered its rows' ends by (positions), if it is fresh.
    static func typeNames(for file: StoreFile) -> [String]? {
        guard let queue = open(for: file) else { return nil }
        defer { try? queue.close() }
        return try? queue.read { try String.fetchAll($0, sql: "SELECT name FROM types ORDER BY position") }
    }

    /// The relations the side index of `file` keeps, if it is fresh and could read them exactly.
    static func shapes(for file: StoreFile) -> [StoredShape]? {
        guard let queue = open(for: file) else { return nil }
        defer { try? queue.close() }
        guard let text = try? queue.read({ try String.fetchOne($0, sql: "SELECT json FROM shapes") }) else { return nil }
        return try? JSONDecoder().decode([StoredShape].self, from: Data(text.utf8))
    }

    /// Builds the side index of `file`: every relation row read on one snapshot into a new file,
    /// then the two indexes; `progress(done, total)` as rows are copied; `isCancelled` stops it.
    /// Throws (leaving nothing) when caching is off, the file changes meanwhile, or a write fails.
    /// `types` gives each end of a row its type (a position in `names`; nil for an object that is
    /// not there), read on the copy's connection; `shapes` reads the store's relations (on a
    /// connection to the store) once the rows are copied.
    public static func build(for file: StoreFile, progress: @escaping @Sendable (Int, Int) -> Void = { _, _ in },
                             isCancelled: @escaping @Sendable () -> Bool = { false },
                             types: (names: [String], lookup: (Database) throws -> (Int64) -> Int?)? = nil,
                             shapes: (Database) throws -> [StoredShape]? = { _ in nil }) throws {
        _ = try SchemaCache.writableDirectory(for: file.path)
        guard let location = location(for: file), let path = SchemaCache.realPath(file.path) else {
            throw StoreError(.unreadable, path: file.path, reason: "the cache is off (LOUPE_CACHE_DIR=off): there is no place for an index")
        }
        let temporary = location + ".\(getpid()).tmp"
        unlink(temporary)
        var done = false
        defer { if !done { unlink(temporary); unlink(temporary + "-journal") } }
        let stamp = file.stamp()
        let header = file.databaseHeader()
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = OFF")
            try db.execute(sql: "PRAGMA synchronous = OFF")
        }
        let target = try DatabaseQueue(path: temporary, configuration: configuration)
        try target.write { out in
            try out.execute(sql: """
                CREATE TABLE relations (rowid_ INTEGER PRIMARY KEY, from_id, to_id, relation, from_type INTEGER, to_type INTEGER);
                CREATE TABLE loupe_side_index (version INTEGER, build TEXT, path TEXT, stamp BLOB, header BLOB);
                CREATE TABLE shapes (json TEXT);
                CREATE TABLE types (position INTEGER PRIMARY KEY, name TEXT);
                """)
            for (i, name) in (types?.names ?? []).enumerated() { try out.execute(sql: "INSERT INTO types VALUES (?, ?)", arguments: [i, name]) }
            let insert = try out.makeStatement(sql: "INSERT INTO relations VALUES (?, ?, ?, ?, ?, ?)")
            try file.read { db in
                let typeOf = try types?.lookup(db)
                let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM relations") ?? 0
                let cursor = try Row.fetchCursor(db, sql: "SELECT rowid, from_id, to_id, relation FROM relations")
                var n = 0
                func type(_ key: DatabaseValue) -> DatabaseValue {
                    guard let typeOf, case .int64(let id) = key.storage else { return .null }
                    return typeOf(id).map { Int64($0).databaseValue } ?? .null
                }
                while let row = try cursor.next() {
                    let (from, to) = (row[1] as DatabaseValue, row[2] as DatabaseValue)
                    try insert.execute(arguments: [row[0] as DatabaseValue, from, to, row[3] as DatabaseValue, type(from), type(to)])
                    n += 1
                    if n % 65_536 == 0 {
                        progress(n, total)
                        if isCancelled() { throw StoreError(.unreadable, path: file.path, reason: "the index was cancelled") }
                    }
                }
            }
            let read = try file.read { try shapes($0) }
            guard file.stamp() == stamp else { throw StoreError(.busy, path: file.path, reason: "the file changed while it was indexed; try again") }
            try out.execute(sql: "INSERT INTO shapes VALUES (?)", arguments: [try read.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }])
            try out.execute(sql: "CREATE INDEX side_from ON relations (from_id, rowid_)")
            try out.execute(sql: "CREATE INDEX side_to ON relations (to_id, rowid_)")
            if isCancelled() { throw StoreError(.unreadable, path: file.path, reason: "the index was cancelled") }
            try out.execute(sql: "CREATE INDEX side_typed_from ON relations (relation, from_type, to_type, from_id, to_id)")
            try out.execute(sql: "CREATE INDEX side_typed_to ON relations (relation, from_type, to_type, to_id, from_id)")
            try out.execute(sql: "INSERT INTO loupe_side_index VALUES (?, ?, ?, ?, ?)",
                            arguments: [version, SchemaCache.build, path, try JSONEncoder().encode(stamp), Data(header)])
        }
        try target.close()
        if isCancelled() { throw StoreError(.unreadable, path: file.path, reason: "the index was cancelled") }
        guard rename(temporary, location) == 0 else { throw StoreError(.unreadable, path: location, reason: String(cString: strerror(errno))) }
        done = true
    }
}
