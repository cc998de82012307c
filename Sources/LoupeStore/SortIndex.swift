import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GRDB
import LoupeModel

/// The order of attributes of a Persist store's types, kept in Loupe's cache folder (never in
/// the store): for each indexed attribute, every object's key with its value's rank in the
/// order `sort by` puts values in (dense: values that sort level share a rank), so that a sort
/// by it in paged mode reads integers instead of every document of the type.
///
/// The ranks are worked out by the caller, from the values exactly as a load reads them, over
/// one snapshot of the store; this file keeps them. It is a SQLite file of its own
/// (`order-<hash>.sqlite` beside the schema cache's entries) that records, like a cache entry,
/// the store's real path, ``FileStamp``, database header and Loupe's build, and is used only
/// while it describes the file as it is: ranks are read for a statement only when the stamp the
/// statement started from is the one they were made at. Adding an attribute to a file that
/// describes another state of the store starts a new file (written under a temporary name,
/// renamed into place when whole). A commit by Loupe carries the ranks of the types it did not
/// write forward (``carry(for:from:to:dropping:)``); any other write leaves them stale. Beside
/// each order it keeps what the pass over the type's documents found of the attribute (its
/// kinds, and whether SQL reads it as the load does), so that a new session sorting by it reads
/// no document to learn them.
public enum SortIndex {
    /// The layout of the file; a change makes older files stale.
    static let version = 2

    /// Keys and ranks are stored this many to a row (as little-endian blobs).
    static let chunk = 1 << 20

    /// One attribute's order over its type: the type's keys ascending, each one's rank, and how
    /// many different ranks there are.
    public struct Ranks: Sendable, Equatable {
        public let keys: [Int64]
        public let ranks: [Int32]
        public let distinct: Int
        public init(keys: [Int64], ranks: [Int32], distinct: Int) {
            self.keys = keys
            self.ranks = ranks
            self.distinct = distinct
        }
    }

    /// Where the sort index of `file` lives, or nil when caching is off.
    static func location(for file: StoreFile) -> String? {
        guard let directory = SchemaCache.directory.withLock({ $0 }), let path = SchemaCache.realPath(file.path) else { return nil }
        return SchemaCache.entryPath(directory, for: path, kind: "order").replacingOccurrences(of: ".json", with: ".sqlite")
    }

    /// True when an attribute's order can be kept for `file` (caching is on).
    public static func isAvailable(for file: StoreFile) -> Bool { location(for: file) != nil }

    /// The stamp the sort index of `file` was made at, when it describes the file as it is now.
    private static func freshStamp(_ db: Database, _ file: StoreFile) throws -> FileStamp? {
        guard let path = SchemaCache.realPath(file.path),
              let row = try Row.fetchOne(db, sql: "SELECT version, build, path, stamp, header FROM loupe_sort_index"),
              let stamp = (row[3] as Data?).flatMap({ try? JSONDecoder().decode(FileStamp.self, from: $0) }),
              let indexVersion = row[0] as Int?, indexVersion == version, let build = row[1] as String?, let indexed = row[2] as String?,
              let header = row[4] as Data?,
              SchemaCache.describes(file, path: path, entry: (SchemaCache.version, build, indexed, stamp, Array(header))) else { return nil }
        return stamp
    }

    /// Opens the sort index of `file` when there is one (nil otherwise, or when it cannot be read).
    private static func open(_ location: String, readonly: Bool = true) -> DatabaseQueue? {
        guard FileManager.default.fileExists(atPath: location) else { return nil }
        var configuration = Configuration()
        configuration.readonly = readonly
        return try? DatabaseQueue(path: location, configuration: configuration)
    }

    /// The attributes of `typeName` whose order is kept for `file` as it is now.
    public static func attributes(for file: StoreFile, type typeName: String) -> Set<String> {
        guard let location = location(for: file), let queue = open(location) else { return [] }
        defer { try? queue.close() }
        return (try? queue.read { db -> Set<String> in
            guard try freshStamp(db, file) != nil else { return [] }
            return Set(try String.fetchAll(db, sql: "SELECT attribute FROM attributes WHERE type = ?", arguments: [typeName]))
        }) ?? []
    }

    /// The order of `attribute` over `typeName` kept for `file`, when it was made at `stamp` and
    /// the file is still as `stamp` describes it; nil otherwise.
    public static func ranks(for file: StoreFile, stamp: FileStamp, type typeName: String, attribute: String) -> Ranks? {
        guard let location = location(for: file), let queue = open(location) else { return nil }
        defer { try? queue.close() }
        return try? queue.read { db -> Ranks? in
            guard try freshStamp(db, file) == stamp,
                  let row = try Row.fetchOne(db, sql: "SELECT position, count, distinct_ FROM attributes WHERE type = ? AND attribute = ?",
                                             arguments: [typeName, attribute]),
                  let position = row[0] as Int64?, let count = row[1] as Int?, let distinct = row[2] as Int? else { return nil }
            var keys: [Int64] = [], ranks: [Int32] = []
            keys.reserveCapacity(count)
            ranks.reserveCapacity(count)
            let chunks = try Row.fetchCursor(db, sql: "SELECT keys, ranks FROM chunks WHERE attribute = ? ORDER BY chunk", arguments: [position])
            while let chunk = try chunks.next() {
                guard let k = chunk[0] as Data?, let r = chunk[1] as Data?, k.count == r.count * 2, r.count % 4 == 0 else { return nil }
                k.withUnsafeBytes { raw in keys.append(contentsOf: raw.bindMemory(to: Int64.self).lazy.map { Int64(littleEndian: $0) }) }
                r.withUnsafeBytes { raw in ranks.append(contentsOf: raw.bindMemory(to: Int32.self).lazy.map { Int32(littleEndian: $0) }) }
            }
            guard keys.count == count, ranks.count == count else { return nil }
            return Ranks(keys: keys, ranks: ranks, distinct: distinct)
        }
    }

    /// The facts kept beside the orders of `typeName`'s attributes (by name: how many values
    /// of each kind, and whether SQL reads them as the load does), when the index was made at
    /// `stamp` and the file is still as `stamp` describes it.
    static func facts(for file: StoreFile, stamp: FileStamp, type typeName: String) -> [String: PersistPages.AttributeFact] {
        guard let location = location(for: file), let queue = open(location) else { return [:] }
        defer { try? queue.close() }
        return (try? queue.read { db -> [String: PersistPages.AttributeFact] in
            guard try freshStamp(db, file) == stamp else { return [:] }
            var facts: [String: PersistPages.AttributeFact] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT attribute, counts, plain FROM attributes WHERE type = ? AND counts IS NOT NULL", arguments: [typeName]) {
                guard let name = row[0] as String?, let text = row[1] as String?, let plain = row[2] as Bool?,
                      let counts = try? JSONDecoder().decode([ValueKind.RawValue: Int].self, from: Data(text.utf8)) else { continue }
                facts[name] = PersistPages.AttributeFact(counts: counts, plain: plain)
            }
            return facts
        }) ?? [:]
    }

    /// Keeps `ranks` without the attribute's facts (see below).
    public static func keep(_ ranks: Ranks, for file: StoreFile, stamp: FileStamp, type typeName: String, attribute: String) throws {
        try keep(ranks, fact: nil, for: file, stamp: stamp, type: typeName, attribute: attribute)
    }

    /// Keeps `ranks`, the order of `attribute` over `typeName` in `file` as it was at `stamp`
    /// (which must still describe the file), with `fact` (what the pass over the type's
    /// documents found of it at that state, if known): added to the file's sort index when that
    /// describes the same state, else in a new one. Throws when caching is off, the file changed
    /// since `stamp`, or a write fails (leaving what was kept before).
    static func keep(_ ranks: Ranks, fact: PersistPages.AttributeFact?, for file: StoreFile, stamp: FileStamp, type typeName: String, attribute: String) throws {
        _ = try SchemaCache.writableDirectory(for: file.path)
        guard let location = location(for: file), let path = SchemaCache.realPath(file.path) else {
            throw StoreError(.unreadable, path: file.path, reason: "the cache is off (LOUPE_CACHE_DIR=off): there is no place for an index")
        }
        guard file.stamp() == stamp else { throw StoreError(.busy, path: file.path, reason: "the file changed while it was indexed; try again") }
        func add(_ db: Database) throws {
            try db.execute(sql: "DELETE FROM chunks WHERE attribute IN (SELECT position FROM attributes WHERE type = ? AND attribute = ?)", arguments: [typeName, attribute])
            try db.execute(sql: "DELETE FROM attributes WHERE type = ? AND attribute = ?", arguments: [typeName, attribute])
            let counts = try fact.map { String(decoding: try JSONEncoder().encode($0.counts), as: UTF8.self) }
            try db.execute(sql: "INSERT INTO attributes (type, attribute, count, distinct_, counts, plain) VALUES (?, ?, ?, ?, ?, ?)",
                           arguments: [typeName, attribute, ranks.keys.count, ranks.distinct, counts, fact?.plain])
            let position = db.lastInsertedRowID
            for (n, start) in stride(from: 0, to: ranks.keys.count, by: chunk).enumerated() {
                let end = min(start + chunk, ranks.keys.count)
                let keys = ranks.keys[start..<end].map(\.littleEndian).withUnsafeBytes { Data($0) }
                let values = ranks.ranks[start..<end].map(\.littleEndian).withUnsafeBytes { Data($0) }
                try db.execute(sql: "INSERT INTO chunks VALUES (?, ?, ?, ?)", arguments: [position, n, keys, values])
            }
        }
        // Added to the kept file when it describes this state of the store.
        if let queue = open(location, readonly: false) {
            defer { try? queue.close() }
            let added = (try? queue.write { db -> Bool in
                guard try freshStamp(db, file) == stamp else { return false }
                try add(db)
                return true
            }) ?? false
            if added { return }
        }
        let temporary = location + ".\(getpid()).tmp"
        unlink(temporary)
        var done = false
        defer { if !done { unlink(temporary); unlink(temporary + "-journal") } }
        let queue = try DatabaseQueue(path: temporary)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE loupe_sort_index (version INTEGER, build TEXT, path TEXT, stamp BLOB, header BLOB);
                CREATE TABLE attributes (position INTEGER PRIMARY KEY, type TEXT, attribute TEXT, count INTEGER, distinct_ INTEGER, counts TEXT, plain INTEGER,
                                         UNIQUE (type, attribute));
                CREATE TABLE chunks (attribute INTEGER, chunk INTEGER, keys BLOB, ranks BLOB, PRIMARY KEY (attribute, chunk));
                """)
            try db.execute(sql: "INSERT INTO loupe_sort_index VALUES (?, ?, ?, ?, ?)",
                           arguments: [version, SchemaCache.build, path, try JSONEncoder().encode(stamp), Data(file.databaseHeader())])
            try add(db)
        }
        try queue.close()
        guard file.stamp() == stamp else { throw StoreError(.busy, path: file.path, reason: "the file changed while it was indexed; try again") }
        guard rename(temporary, location) == 0 else { throw StoreError(.unreadable, path: location, reason: String(cString: strerror(errno))) }
        done = true
    }

    /// After Loupe's own commit took `file` from `before` to `after` (nobody else writing in
    /// between): the ranks of types the commit did not write (`dropping` names those it did)
    /// are kept, stamped with the new state; the others are dropped. A sort index that did not
    /// describe `before` is left as it is (stale).
    static func carry(for file: StoreFile, from before: FileStamp, to after: FileStamp, dropping written: Set<String>) {
        guard let location = location(for: file), let queue = open(location, readonly: false) else { return }
        defer { try? queue.close() }
        try? queue.write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT stamp FROM loupe_sort_index"),
                  let stamp = (row[0] as Data?).flatMap({ try? JSONDecoder().decode(FileStamp.self, from: $0) }), stamp == before else { return }
            for typeName in written {
                try db.execute(sql: "DELETE FROM chunks WHERE attribute IN (SELECT position FROM attributes WHERE type = ?)", arguments: [typeName])
                try db.execute(sql: "DELETE FROM attributes WHERE type = ?", arguments: [typeName])
            }
            try db.execute(sql: "UPDATE loupe_sort_index SET stamp = ?, header = ?", arguments: [try JSONEncoder().encode(after), Data(file.databaseHeader())])
        }
    }
}
