import CSignalSafety
import CSQLiteTuning
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GRDB
import LoupeModel
import Synchronization

/// Opens SQLite files for reading without ever writing to them, and for writing when asked.
///
/// Reading never changes a byte of the file or of its `-wal`, `-shm` and `-journal` companions,
/// and never creates one:
/// - a file in rollback-journal mode is opened read-only (`mode=ro`);
/// - a WAL file with both companions is read through SQLite with `readonly_shm=1`: the shared
///   memory index is mapped read-only and SQLite builds a private copy of it, so the rows that live
///   in the `-wal` are read, as one consistent snapshot, even while another process writes;
/// - a WAL file without a `-wal` is complete in itself and opened `immutable=1`;
/// - a WAL file with a `-wal` but no `-shm` (left by a crash) is copied with its `-wal` into a
///   private folder and read there. The copy is removed when the file is closed, when the process
///   dies of a signal (``CSignalSafety``), and, after a `kill -9`, by the next Loupe that starts.
///
/// The path must name a regular file: a FIFO or a device would block or never end, a directory
/// is not a database.
public final class StoreFile: Sendable {
    /// The path the user gave.
    public let path: String
    /// The connection (to the file itself, or to the private copy).
    public let queue: DatabaseQueue
    /// How the file is read (for tests and the status line).
    public let access: Access
    /// Where readers connect: a URI on the file, or the private copy's path.
    let location: String
    private let privateCopy: PrivateCopy?
    /// Descriptors on the user's file and its `-shm`, kept while connections are open (see ``FileWatch``).
    private let watch: FileWatch

    /// The ways a file is read.
    public enum Access: String, Sendable {
        /// Read-only, in place (rollback-journal mode, or a WAL file without companions).
        case readOnly = "read-only"
        /// Read-only through the WAL's shared memory, mapped read-only.
        case walSnapshot = "WAL snapshot"
        /// From a private copy of the file and its `-wal`.
        case privateCopy = "private copy"
        /// Open for writing.
        case readWrite = "read-write"
    }

    private init(path: String, queue: DatabaseQueue, access: Access, location: String, privateCopy: PrivateCopy?, watch: FileWatch) {
        self.path = path
        self.queue = queue
        self.access = access
        self.location = location
        self.privateCopy = privateCopy
        self.watch = watch
    }

    /// The connection closes before the watch's descriptors (which are released after this).
    deinit { try? queue.close() }

    /// Another read-only connection to the same file, for reading in parallel.
    func makeReader() throws -> DatabaseQueue {
        do {
            return try DatabaseQueue(path: location, configuration: StoreFile.readOnly(label: "loupe.read.parallel"))
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Runs `body` on a read-only connection of its own that SQLite interrupts, in the middle of
    /// a statement, once `isCancelled` says so (polled every 20 ms); a cancelled read throws
    /// "cancelled", a failed one the file's error.
    public func readInterruptibly<T>(isCancelled: @escaping @Sendable () -> Bool, _ body: (Database) throws -> T) throws -> T {
        let reader = try makeReader()
        let done = Mutex(false)
        let watcher = Thread {
            while !done.withLock({ $0 }) {
                if isCancelled() { reader.interrupt(); return }
                usleep(20_000)
            }
        }
        watcher.start()
        defer { done.withLock { $0 = true } }
        do {
            return try reader.inDatabase { try body($0) }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
            throw StoreError(.unreadable, path: path, reason: "cancelled")
        } catch let error as DatabaseError {
            throw StoreError.from(error, path: path)
        }
    }

    /// How many times opening several readers on one snapshot is tried while another process
    /// commits, before the caller reads on one connection instead.
    static let snapshotAttempts = 20

    /// Runs `body(worker, db)` on `workers` read-only connections at once, each on its own thread
    /// (with a stack of `stackSize` bytes) and inside one read transaction, all transactions on
    /// the same snapshot of the file; returns the results in worker order and the file's stamp
    /// for that snapshot.
    ///
    /// SQLite has no call that shares a snapshot between connections in this build, so each
    /// worker begins its transaction and waits; the file's stamp before the first began and after
    /// the last must agree (no commit came between them), else all end and begin again. The gap
    /// is microseconds, so a process that commits without pause costs a retry or two; when every
    /// attempt is hit, this throws ``StoreError/Kind/busy`` and the caller reads on one connection
    /// (one transaction is always one snapshot). The stamp returned is the one taken before the
    /// snapshot began, so comparing it later can only report a commit too eagerly, never miss one.
    /// `prepare` runs on each connection first, outside any transaction (an `ATTACH`); once
    /// `isCancelled` says so (polled every 20 ms), SQLite interrupts every worker and this throws
    /// "cancelled".
    func readOnSnapshot<T: Sendable>(workers: Int, stackSize: Int = 64 << 20, prepare: ((Database) throws -> Void)? = nil,
                                     isCancelled: (@Sendable () -> Bool)? = nil,
                                     _ body: @escaping @Sendable (Int, Database) throws -> T) throws -> (results: [T], stamp: FileStamp) {
        let readers = try (0..<workers).map { _ in try makeReader() }
        if let prepare { for reader in readers { try reader.inDatabase(prepare) } }
        let done = Mutex(false)
        if let isCancelled {
            let watcher = Thread {
                while !done.withLock({ $0 }) {
                    if isCancelled() { readers.forEach { $0.interrupt() }; return }
                    usleep(20_000)
                }
            }
            watcher.start()
        }
        defer { done.withLock { $0 = true } }
        do {
            return try readOnSnapshot(readers, stackSize: stackSize, body)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
            throw StoreError(.unreadable, path: path, reason: "cancelled")
        }
    }

    private func readOnSnapshot<T: Sendable>(_ readers: [DatabaseQueue], stackSize: Int,
                                             _ body: @escaping @Sendable (Int, Database) throws -> T) throws -> (results: [T], stamp: FileStamp) {
        let workers = readers.count
        var transientFailures = 0
        for _ in 0..<StoreFile.snapshotAttempts {
            let before = stamp()
            let started = DispatchSemaphore(value: 0), go = DispatchSemaphore(value: 0)
            let decision = Mutex(false)
            let results: [T?]
            do {
              results = try ParallelWork.run(workers: workers, stackSize: stackSize) { worker -> T? in
                var began = false
                defer { if !began { started.signal() } }
                return try readers[worker].inDatabase { db -> T? in
                    try db.execute(sql: "BEGIN DEFERRED")
                    defer { try? db.execute(sql: "COMMIT") }
                    _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master")   // the snapshot starts here
                    began = true
                    started.signal()
                    go.wait()
                    return decision.withLock { $0 } ? try body(worker, db) : nil
                }
              } coordinate: {
                for _ in 0..<workers { started.wait() }
                let same = workers == 1 || stamp() == before || access == .privateCopy
                decision.withLock { $0 = same }
                for _ in 0..<workers { go.signal() }
              }
            } catch let error as DatabaseError where StoreFile.isTransient(error) && transientFailures < StoreFile.snapshotAttempts {
                transientFailures += 1
                Thread.sleep(forTimeInterval: 0.005)
                continue
            }
            if decision.withLock({ $0 }) { return (results.map { $0! }, before) }
            Thread.sleep(forTimeInterval: 0.002)
        }
        throw StoreError(.busy, path: path, reason: "another process commits between every two reads")
    }

    /// True for the failures a read-only reader of a WAL file meets while another process writes
    /// and which go away on a retry: the WAL index caught mid-update (`SQLITE_READONLY_RECOVERY`,
    /// `SQLITE_READONLY_CANTINIT`), a busy lock.
    static func isTransient(_ error: DatabaseError) -> Bool {
        // SQLITE_READONLY_RECOVERY, SQLITE_READONLY_CANTINIT, SQLITE_BUSY_RECOVERY,
        // SQLITE_BUSY_SNAPSHOT (a plain busy lock is not transient: it already waited).
        [264, 1288, 261, 517].contains(error.extendedResultCode.rawValue)
    }

    /// Read-only, waiting up to 2 s for a writer's lock before reporting the file locked.
    static func readOnly(label: String) -> Configuration {
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(2)
        config.label = label
        reading(&config)
        return config
    }

    /// Connections made with `config` read a store's schema as SQLite's shell would (its legacy
    /// double-quoted strings, its app's collations emulated: `loupe_sqlite_read_as_written`), and
    /// what runs on them is kept while `explain` records it (``SQLTrace``), with its bound values.
    /// For connections that read only.
    static func reading(_ config: inout Configuration) {
        config.prepareDatabase { db in
            _ = loupe_sqlite_read_as_written(db.sqliteConnection)
            db.trace(options: .statement) { event in SQLTrace.record(event.expandedDescription) }
        }
    }

    /// The 16-byte header every SQLite 3 file starts with.
    static let header = Array("SQLite format 3\0".utf8)

    /// Process-wide settings, applied once before the first connection opens; and the signal
    /// handler that removes private copies if the process dies.
    static let configured: Void = {
        _ = loupe_sqlite_configure()
        loupe_signals_install()
        PrivateCopy.removeStaleCopies()
    }()

    /// Checks that `path` names a readable regular SQLite file; returns its absolute path and
    /// its first 100 bytes. Never blocks, whatever the path names.
    static func checkedHeader(_ path: String) throws -> (absolute: String, header: [UInt8]) {
        var info = stat()
        if stat(path, &info) != 0 {
            switch errno {
            case ENOENT: throw StoreError(.fileNotFound, path: path, reason: "no such file")
            case ELOOP: throw StoreError(.unreadable, path: path, reason: "too many levels of symbolic links (a symlink loop)")
            case ENOTDIR: throw StoreError(.fileNotFound, path: path, reason: "no such file (a part of the path is not a folder)")
            case EACCES: throw StoreError(.unreadable, path: path, reason: "permission denied")
            case ENAMETOOLONG: throw StoreError(.unreadable, path: path, reason: "the path is too long")
            default: throw StoreError(.unreadable, path: path, reason: String(cString: strerror(errno)))
            }
        }
        if let kind = nonRegularKind(info.st_mode) { throw StoreError(.unreadable, path: path, reason: kind) }
        // O_NONBLOCK: if the path was swapped for a FIFO since the check, opening still returns.
        let fd = Platform.openForReading(path)
        guard fd >= 0 else {
            throw StoreError(.unreadable, path: path, reason: errno == EACCES ? "permission denied" : String(cString: strerror(errno)))
        }
        defer { close(fd) }
        if fstat(fd, &info) == 0, let kind = nonRegularKind(info.st_mode) { throw StoreError(.unreadable, path: path, reason: kind) }
        var bytes = [UInt8](repeating: 0, count: 100)
        let n = bytes.withUnsafeMutableBytes { Platform.read(fd, $0.baseAddress, 100) }
        guard n >= 0 else { throw StoreError(.unreadable, path: path, reason: "cannot read the file (\(String(cString: strerror(errno))))") }
        if n == 0 { throw StoreError(.notADatabase, path: path, reason: "empty file, not a SQLite database") }
        guard n == 100, Array(bytes.prefix(16)) == header else {
            throw StoreError(.notADatabase, path: path, reason: "not a SQLite database")
        }
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        return (absolute, bytes)
    }

    /// Why a file of this mode is not read (a directory, a FIFO, …), or nil for a regular file.
    private static func nonRegularKind(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return "is a directory"
        case S_IFIFO: return "is a FIFO (a named pipe), not a regular file"
        case S_IFSOCK: return "is a socket, not a regular file"
        case S_IFCHR, S_IFBLK: return "is a device, not a regular file"
        default: return "is not a regular file"
        }
    }

    /// `file:/abs%20path?mode=ro&…`: a URI for SQLite, every character that could be read as URI
    /// syntax percent-encoded.
    static func uri(_ absolute: String, _ parameters: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "/-._~")
        return "file:" + (absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute) + "?" + parameters
    }

    /// Opens `path` for reading only. Fails with a ``StoreError`` for a missing, unreadable,
    /// non-SQLite or locked file; never creates or changes a file at `path` or beside it.
    ///
    /// A Couchbase Lite bundle (a `NAME.cblite2` folder) is read through its `db.sqlite3`.
    public static func openForReading(_ path: String) throws -> StoreFile {
        _ = configured
        let (absolute, header) = try checkedHeader(CouchbaseLiteFormat.databasePath(inBundle: path) ?? path)
        let isWAL = header[18] == 2 || header[19] == 2
        let manager = FileManager.default
        do {
            if isWAL {
                let hasWAL = manager.fileExists(atPath: absolute + "-wal"), hasSHM = manager.fileExists(atPath: absolute + "-shm")
                if hasWAL && hasSHM {
                    let location = uri(absolute, "mode=ro&readonly_shm=1")
                    if let file = try? open(path: path, location: location, access: .walSnapshot) { return file }
                    // A -shm SQLite cannot use read-only (stale, or from another machine): a copy.
                } else if !hasWAL {
                    return try open(path: path, location: uri(absolute, "mode=ro&immutable=1"), access: .readOnly)
                }
                let copy = try PrivateCopy(of: absolute, displayPath: path)
                var config = Configuration()
                config.label = "loupe.read-copy"
                reading(&config)
                let queue = try DatabaseQueue(path: copy.database, configuration: config)
                let file = StoreFile(path: path, queue: queue, access: .privateCopy, location: copy.database, privateCopy: copy,
                                     watch: FileWatch(path: absolute))
                try file.probe()
                return file
            }
            return try open(path: path, location: uri(absolute, "mode=ro"), access: .readOnly)
        } catch {
            throw explained(error, path: absolute, displayPath: path)
        }
    }

    private static func open(path: String, location: String, access: Access) throws -> StoreFile {
        let watch = FileWatch(path: location.removingURI)   // before any connection takes a lock
        let queue = try DatabaseQueue(path: location, configuration: readOnly(label: "loupe.read"))
        let file = StoreFile(path: path, queue: queue, access: access, location: location, privateCopy: nil, watch: watch)
        try file.probe()
        return file
    }

    /// A store error that says what the user can do: a hot journal is an interrupted transaction.
    private static func explained(_ error: Error, path absolute: String, displayPath: String) -> StoreError {
        let e = StoreError.from(error, path: displayPath)
        if e.kind == .readOnly || e.kind == .unreadable,
           let size = (try? FileManager.default.attributesOfItem(atPath: absolute + "-journal"))?[.size] as? NSNumber, size.intValue > 0 {
            return StoreError(.unreadable, path: displayPath,
                              reason: "an interrupted transaction left a hot journal ('\(displayPath)-journal'); open the file once with sqlite3 (or the app that wrote it) to recover it, then try again")
        }
        return e
    }

    /// Opens (creating if needed) `path` for writing.
    public static func openForWriting(_ path: String) throws -> StoreFile {
        _ = configured
        var absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        if FileManager.default.fileExists(atPath: path) {
            let attributes = try? FileManager.default.attributesOfItem(atPath: path)
            if (attributes?[.size] as? NSNumber)?.intValue ?? 0 > 0 { absolute = try checkedHeader(path).absolute }
        }
        var config = Configuration()
        config.busyMode = .timeout(5)
        config.label = "loupe.write"
        do {
            let watch = FileWatch(path: absolute)
            let queue = try DatabaseQueue(path: absolute, configuration: config)
            return StoreFile(path: path, queue: queue, access: .readWrite, location: absolute, privateCopy: nil, watch: watch)
        } catch {
            throw StoreError.from(error, path: path)
        }
    }

    /// Reads the schema once so that a locked or corrupt file fails at open, not later.
    private func probe() throws {
        _ = try read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
    }

    /// Runs `body` in a read transaction, turning failures into ``StoreError``s; the transient
    /// failures of reading a WAL file another process writes are retried.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        var attempt = 0
        while true {
            do { return try queue.read(body) } catch let error as DatabaseError where StoreFile.isTransient(error) && attempt < 40 {
                attempt += 1
                Thread.sleep(forTimeInterval: 0.005)
            } catch { throw StoreError.from(error, path: path) }
        }
    }

    /// Runs `body` once on a read-only connection of its own (one snapshot), never again after a
    /// failure: for reads that hand what they read to their caller as they go, who may read the
    /// file meanwhile through ``read(_:)`` (GRDB lets no connection be entered twice, and a
    /// retried read would hand the same rows over again).
    public func readOnOwnConnection<T>(_ body: (Database) throws -> T) throws -> T {
        let reader = try makeReader()
        do { return try reader.read(body) } catch let error as DatabaseError { throw StoreError.from(error, path: path) }
    }

    /// What the file and its companions look like on disk now (sizes, times, the WAL's header).
    /// Any commit by any process changes it.
    public func stamp() -> FileStamp { FileStamp(path: privateCopy == nil ? location.removingURI : path, watch: watch) }

    /// The database header (the file's first 100 bytes), read through the descriptor the stamps
    /// use (never a descriptor opened and closed, which would drop SQLite's locks).
    func databaseHeader() -> [UInt8] { watch.read(watch.databaseFD, 0..<100) }
}

/// The state of a database file and its companions on disk: sizes, modification times, the
/// database header's change counter (rollback mode bumps it at every commit), the WAL's header
/// (its salts change when the WAL restarts) and the WAL index header in the `-shm` (a WAL commit
/// becomes visible to readers when the writer updates it: the size and time of the `-wal` may
/// change before that moment and not after it). Two equal stamps taken around a read mean no
/// commit happened in between; a stamp taken at load and again before a commit tells whether
/// another process wrote meanwhile.
public struct FileStamp: Equatable, Sendable, Codable {
    let size: Int64
    let modified: Int64
    let inode: UInt64
    let changeCounter: [UInt8]
    let walSize: Int64?
    let walModified: Int64?
    let walHeader: [UInt8]
    /// The two copies of the WAL index header and the backfill count (bytes 0–99 of `-shm`), not
    /// the readers' marks that follow (readers move those without changing any data).
    let walIndexHeader: [UInt8]

    init(path: String, watch: FileWatch) {
        var db = stat()
        let hasDB = watch.databaseFD >= 0 ? fstat(watch.databaseFD, &db) == 0 : stat(path, &db) == 0
        size = hasDB ? Int64(db.st_size) : -1
        modified = hasDB ? Platform.modifiedNanoseconds(db) : -1
        inode = hasDB ? UInt64(db.st_ino) : 0
        changeCounter = watch.read(watch.databaseFD, 24..<28)
        var wal = stat()
        if stat(path + "-wal", &wal) == 0 {
            walSize = Int64(wal.st_size)
            walModified = Platform.modifiedNanoseconds(wal)
            // SQLite holds no lock on the -wal file: a descriptor of our own may come and go.
            let fd = Platform.openForReading(path + "-wal")
            walHeader = fd >= 0 ? watch.read(fd, 0..<32) : []
            if fd >= 0 { close(fd) }
        } else {
            walSize = nil
            walModified = nil
            walHeader = []
        }
        walIndexHeader = watch.read(watch.sharedMemoryFD, 0..<100)
    }
}

/// Whether a store may have changed since last asked (another process committed): what live mode
/// looks at, twice a second. A false "moved" costs a read; a missed one, a stale screen.
public protocol StoreMoves: AnyObject, Sendable {
    /// True when the store may have changed since the last call (or since made, at the first).
    func moved() -> Bool
}

/// Whether a store's file moved since last asked: another process committed (or checkpointed),
/// told by the file's ``FileStamp`` read through descriptors held open (no connection, no lock:
/// a look is a few `fstat`s and `pread`s). What live mode and `loupe watch` look at.
public final class FileMoves: StoreMoves {
    private let path: String
    private let watch: FileWatch
    private let last: Mutex<FileStamp>

    public init(path: String) {
        self.path = path
        watch = FileWatch(path: path)
        last = Mutex(FileStamp(path: path, watch: watch))
    }

    /// True when the stamp differs from the last look (or from the first, at the first call).
    public func moved() -> Bool {
        let now = FileStamp(path: path, watch: watch)
        return last.withLock { stamp in
            guard stamp != now else { return false }
            stamp = now
            return true
        }
    }
}

/// Descriptors on a store's database file and `-shm`, opened once and kept until the store's
/// connections are closed, from which ``FileStamp``s are read with `pread`.
///
/// Closing any descriptor of a file releases every POSIX lock the process holds on it, SQLite's
/// read locks included; a stamp that opened and closed the database or its `-shm` while a read
/// transaction was open would let a writer checkpoint under it. SQLite keeps its own descriptors
/// open for the same reason; so does this.
final class FileWatch: Sendable {
    let databaseFD: Int32
    let sharedMemoryFD: Int32

    init(path: String) {
        databaseFD = Platform.openForReading(path)
        sharedMemoryFD = Platform.openForReading(path + "-shm")
    }

    deinit {
        if databaseFD >= 0 { close(databaseFD) }
        if sharedMemoryFD >= 0 { close(sharedMemoryFD) }
    }

    /// Bytes `range` of an open file (empty when it is not open or shorter).
    func read(_ fd: Int32, _ range: Range<Int>) -> [UInt8] {
        guard fd >= 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: range.count)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, range.count, off_t(range.lowerBound)) }
        return n == range.count ? bytes : []
    }
}

extension String {
    /// The file path inside a `file:` URI Loupe made (percent-decoded), or the string itself.
    var removingURI: String {
        guard hasPrefix("file:") else { return self }
        let body = dropFirst(5).split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        return body.removingPercentEncoding ?? body
    }
}

/// A private copy of a WAL file and its `-wal`, in a folder of its own named after this process,
/// removed when it is released, when the process dies of a signal, or by the next Loupe after a
/// `kill -9`.
final class PrivateCopy: Sendable {
    let folder: String
    let database: String
    private let slots: [Int32]

    /// The prefix of the private folders in the temporary directory.
    static let prefix = "loupe-copy-"

    init(of absolute: String, displayPath: String) throws {
        let temp = FileManager.default.temporaryDirectory.path
        folder = temp + "/" + PrivateCopy.prefix + "\(getpid())-" + UUID().uuidString
        database = folder + "/store.sqlite"
        var registered: [Int32] = [loupe_cleanup_add(folder, 1)]
        for suffix in ["", "-wal", "-shm", "-journal"] { registered.append(loupe_cleanup_add(database + suffix, 0)) }
        slots = registered
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: absolute, toPath: database)
            try FileManager.default.copyItem(atPath: absolute + "-wal", toPath: database + "-wal")
        } catch {
            release()
            throw StoreError(.unreadable, path: displayPath, reason: "cannot read the file (\(error.localizedDescription))")
        }
    }

    deinit { release() }

    private func release() {
        try? FileManager.default.removeItem(atPath: folder)
        for slot in slots { loupe_cleanup_remove(slot) }
    }

    /// Removes the private folders of Loupe processes that no longer run (killed with `kill -9`).
    static func removeStaleCopies() {
        let temp = FileManager.default.temporaryDirectory.path
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: temp) else { return }
        for name in names where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            guard let pid = Int32(rest.prefix { $0 != "-" }), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { try? FileManager.default.removeItem(atPath: temp + "/" + name) }
        }
    }
}
