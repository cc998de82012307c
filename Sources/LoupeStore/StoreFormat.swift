import Foundation
import Synchronization
import CMemory
import GRDB
import LoupeModel

/// A type that reads one on-disk format into an ``ObjectGraph`` (the DataSource idea of the seeds:
/// one protocol, one adapter per format).
public protocol StoreFormat: Sendable {
    /// The format's name as the status line and `loupe types` show it (`Persist`, `SQLite`).
    static var name: String { get }
    /// True when the file's schema is laid out in this format.
    static func matches(_ db: Database) throws -> Bool
    /// Every type with its object count, read without loading any object (shown while loading).
    static func catalog(_ db: Database) throws -> [(name: String, count: Int)]
    /// The catalog with every count, even when that costs a scan (`loupe types`).
    static func countedCatalog(_ db: Database) throws -> [(name: String, count: Int)]
    /// Each type's supertype by name, for a format whose types inherit (Core Data's entities):
    /// what folds the catalog's own counts into what `count` answers (``TypeCount``).
    static func supertypes(_ db: Database) throws -> [String: String]
    /// Reads every object and relation of the file (an adapter may open more readers on it).
    static func load(_ file: StoreFile, progress: LoadProgress?) throws -> LoadedGraph
    /// The names of every relation of every type (and the other names that reach one, such as a
    /// foreign key's own), read without loading; nil when the format cannot tell without loading.
    static func relationNames(_ db: Database) throws -> Set<String>?
    /// Reads only the objects and attributes of the named types, without relations (a one-shot
    /// statement that reads nothing else); a format that cannot loads everything.
    static func load(_ file: StoreFile, progress: LoadProgress?, onlyTypes: Set<String>) throws -> LoadedGraph
    /// The first `limit` objects of one type with their attributes, read quickly while the whole
    /// graph loads (a browser shows them at once); nil when the format has no quick way.
    static func firstPage(_ file: StoreFile, type: String, limit: Int) throws -> ObjectGraph?
}

extension StoreFormat {
    public static func countedCatalog(_ db: Database) throws -> [(name: String, count: Int)] { try catalog(db) }
    public static func relationNames(_ db: Database) throws -> Set<String>? { nil }
    public static func supertypes(_ db: Database) throws -> [String: String] { [:] }
    public static func firstPage(_ file: StoreFile, type: String, limit: Int) throws -> ObjectGraph? { nil }
    public static func load(_ file: StoreFile, progress: LoadProgress?, onlyTypes: Set<String>) throws -> LoadedGraph {
        try load(file, progress: progress)
    }
}

/// Reports how far a load has got: `(objects read, objects in all)`, called now and then from the
/// loading threads (so it must be safe to call from any thread).
public typealias LoadProgress = @Sendable (_ done: Int, _ total: Int) -> Void

/// A graph with what the load noticed on the way (dangling relation rows, undecodable documents).
public struct LoadedGraph: Sendable {
    public let graph: ObjectGraph
    /// One line per problem, for the status line and `--verbose`.
    public var warnings: [String]
    /// How long each phase took, for `loupe bench load`.
    public var timings: [(phase: String, seconds: Double)] = []
    /// The file's stamp for the snapshot that was read.
    public var stamp: FileStamp?
    /// True when the whole graph was read, every object key and every relation row's ends were
    /// integers, and each type came from one stored name: one object's neighbours can then be
    /// found by its key alone (what ``SchemaCache`` needs; set by the Persist format).
    public var simpleKeys = false

    public init(graph: ObjectGraph, warnings: [String], timings: [(phase: String, seconds: Double)] = [], stamp: FileStamp? = nil) {
        self.graph = graph
        self.warnings = warnings
        self.timings = timings
        self.stamp = stamp
    }
}

/// Times the phases of a load.
struct PhaseClock {
    private var last = DispatchTime.now()
    private(set) var timings: [(phase: String, seconds: Double)] = []

    /// Ends the current phase under `name` and starts the next.
    mutating func lap(_ name: String) {
        let now = DispatchTime.now()
        timings.append((name, Double(now.uptimeNanoseconds - last.uptimeNanoseconds) / 1e9))
        last = now
    }
}

/// The formats Loupe knows, most specific first: the first whose ``StoreFormat/matches(_:)`` says
/// yes reads the file. Plain relational SQLite matches every file, so it comes last.
public enum StoreFormats {
    public static let all: [any StoreFormat.Type] = [PersistFormat.self, CoreDataFormat.self, CouchbaseLiteFormat.self,
                                                     SwiftSerializationFormat.self, PersistDBFormat.self, RelationalFormat.self]

    /// The names `--as` accepts, each with its format (`sqlite` reads any file as raw tables).
    public static let byOptionName: [(name: String, format: any StoreFormat.Type)] = [
        ("persist", PersistFormat.self), ("coredata", CoreDataFormat.self), ("couchbase", CouchbaseLiteFormat.self),
        ("swiftserialization", SwiftSerializationFormat.self), ("persistdb", PersistDBFormat.self), ("sqlite", RelationalFormat.self),
    ]

    /// The format of an open file: the one ``ReadOptions/format`` forces, else the first that matches.
    public static func detect(_ db: Database, path: String? = nil) throws -> any StoreFormat.Type {
        if let forced = ReadOptions.current.format {
            guard try forced.matches(db) else {
                throw StoreError(.unreadable, path: path, reason: "not laid out as a \(forced.name) store (try without --as, or --as sqlite for the raw tables)")
            }
            return forced
        }
        for format in all where try format.matches(db) { return format }
        return RelationalFormat.self
    }
}

/// How this process reads stores, set once by the command line before anything is opened.
public struct ReadOptions: Sendable {
    /// Read every file as this format instead of detecting it (`--as sqlite` shows the raw tables).
    public var format: (any StoreFormat.Type)?
    /// Infer relations from column names and values in files that declare no foreign keys.
    public var infersRelations = true

    public init(format: (any StoreFormat.Type)? = nil, infersRelations: Bool = true) {
        self.format = format
        self.infersRelations = infersRelations
    }

    private static let shared = Mutex(ReadOptions())
    /// The options in force.
    public static var current: ReadOptions {
        get { shared.withLock { $0 } }
        set { shared.withLock { $0 = newValue } }
    }
}

/// An opened and loaded store: the file, its format and its graph.
public final class LoadedStore: Sendable {
    public let file: StoreFile
    public let format: any StoreFormat.Type
    public let graph: ObjectGraph
    public let warnings: [String]
    /// How long each phase of the load took.
    public let timings: [(phase: String, seconds: Double)]
    /// The file on disk when it was read: a commit checks that nobody wrote since.
    public let stamp: FileStamp

    init(file: StoreFile, format: any StoreFormat.Type, loaded: LoadedGraph, stamp: FileStamp) {
        self.file = file
        self.format = format
        self.graph = loaded.graph
        self.warnings = loaded.warnings
        self.timings = loaded.timings
        self.stamp = stamp
    }

    /// The path of the file.
    public var path: String { file.path }

    /// The format and the types with their counts (-1 when the format cannot count them
    /// quickly, unless `counted`), read before a load, named and merged as the load names them
    /// (a BLOB and a text `type_name` of the same bytes are one type).
    public static func catalog(_ file: StoreFile, counted: Bool = false) throws -> (format: any StoreFormat.Type, types: [(name: String, count: Int)]) {
        try file.read { db in
            let format = try StoreFormats.detect(db, path: file.path)
            var merged: [(name: String, count: Int)] = []
            var position: [String: Int] = [:]
            for (name, count) in try counted ? format.countedCatalog(db) : format.catalog(db) {
                if let i = position[name] {
                    merged[i].count = merged[i].count < 0 || count < 0 ? -1 : merged[i].count + count
                } else {
                    position[name] = merged.count
                    merged.append((name, count))
                }
            }
            return (format, merged)
        }
    }

    /// Each type's supertype by name (``StoreFormat/supertypes(_:)``), read without a load.
    public static func supertypes(_ file: StoreFile) throws -> [String: String] {
        try file.read { db in try StoreFormats.detect(db, path: file.path).supertypes(db) }
    }

    /// What a load of `file` would warn of its catalog (tables left out for their names, in a
    /// plain SQLite file), read without a load: what ``catalog(_:counted:)``'s callers print first.
    public static func catalogWarnings(_ file: StoreFile) throws -> [String] {
        try file.read { db in
            ObjectIdentifier(try StoreFormats.detect(db, path: file.path)) == ObjectIdentifier(RelationalFormat.self) ? try RelationalFormat.catalogWarnings(db) : []
        }
    }

    /// Loads the graph of an already opened file: one consistent snapshot of it, however many
    /// connections read it and whatever other processes commit meanwhile (see
    /// ``StoreFile/snapshotReaders(_:)``).
    public static func load(_ file: StoreFile, progress: LoadProgress? = nil) throws -> LoadedStore {
        do {
            let format = try file.read { try StoreFormats.detect($0, path: file.path) }
            let loaded = try format.load(file, progress: progress)
            let store = LoadedStore(file: file, format: format, loaded: loaded, stamp: loaded.stamp ?? file.stamp())
            SchemaCache.save(store, simpleKeys: loaded.simpleKeys)
            _ = loupe_release_free_memory()   // the pieces the load built and freed
            return store
        } catch { throw StoreError.from(error, path: file.path) }
    }

    /// The first `limit` objects of the first type, for a browser to show while the whole graph
    /// loads; nil when there is no type or the format has no quick way to read a page.
    public static func firstPage(_ file: StoreFile, limit: Int = 200) throws -> ObjectGraph? {
        do {
            let (format, first) = try file.read { db in
                let format = try StoreFormats.detect(db, path: file.path)
                return (format, try format.catalog(db).first?.name)
            }
            guard let first else { return nil }
            return try format.firstPage(file, type: first, limit: limit)
        } catch { throw StoreError.from(error, path: file.path) }
    }

    /// Opens `path` read-only and loads what a statement reaching only `type`'s attributes needs:
    /// that type alone, when the format can read one type and no relation of the file is named
    /// like one of `names` (else, to stay exact, the whole graph). `type` is resolved against the
    /// catalog as a loaded graph resolves it (exact, else the unique case-insensitive match).
    public static func open(_ path: String, reaching type: String, names: Set<String>) throws -> LoadedStore {
        try open(try StoreFile.openForReading(path), reaching: type, names: names)
    }

    /// ``open(_:reaching:names:)`` on a file already open (one opening for every attempt of a
    /// one-shot command: a WAL file without its `-shm` is copied once, not once per attempt).
    public static func open(_ file: StoreFile, reaching type: String, names: Set<String>) throws -> LoadedStore {
        do {
            let (format, catalog, relations) = try file.read { db in
                let format = try StoreFormats.detect(db, path: file.path)
                return (format, try format.catalog(db).map(\.name), try format.relationNames(db))
            }
            let matches = Set(catalog.filter { $0.caseInsensitiveCompare(type) == .orderedSame })
            let exact: String? = catalog.contains(type) ? type : matches.count == 1 ? matches.first : nil
            let lowered = Set((relations ?? []).map { $0.lowercased() })
            guard let exact, relations != nil, !names.contains(where: { lowered.contains($0.lowercased()) }) else {
                return try load(file)
            }
            let loaded = try format.load(file, progress: nil, onlyTypes: [exact])
            return LoadedStore(file: file, format: format, loaded: loaded, stamp: loaded.stamp ?? file.stamp())
        } catch { throw StoreError.from(error, path: file.path) }
    }

    /// Opens `path` read-only, detects its format and loads its whole graph.
    public static func open(_ path: String, progress: LoadProgress? = nil) throws -> LoadedStore {
        try load(try StoreFile.openForReading(path), progress: progress)
    }
}

extension Database {
    /// The columns of a table, or nil when there is no such table.
    func columnNames(of table: String) throws -> [String]? {
        guard try tableExists(table) else { return nil }
        return try columnNames(in: table)
    }

    /// The columns of a table or view in order, as `SELECT *` gives them (the hidden columns of
    /// a virtual table left out; none when there is no such table). The name is bound, not
    /// spelt into the SQL: GRDB's `columns(in:)` quotes a name without doubling the quotes it
    /// holds, and a file's table may be called `we"ird`.
    func columnNames(in table: String) throws -> [String] {
        try String.fetchAll(self, sql: "SELECT name FROM pragma_table_xinfo(?) WHERE hidden != 1 ORDER BY cid", arguments: [table])
    }

    /// The first column of each index on `table` (an index led by the rowid or an expression
    /// left out), the name bound as in ``columnNames(in:)`` (GRDB's `indexes(on:)` spells it).
    func columnsLeadingIndexes(on table: String) throws -> Set<String> {
        Set(try String.fetchAll(self, sql: """
            SELECT i.name FROM pragma_index_list(?) l, pragma_index_info(l.name) i WHERE i.seqno = 0 AND i.name IS NOT NULL
            """, arguments: [table]))
    }
}
