import CSQLiteTuning
import Foundation
import GRDB

/// Opens SQLite files for reading without ever writing to them, and for writing when asked.
///
/// Reading opens the file read-only. A file in WAL mode keeps part of its rows in the `-wal` file,
/// and SQLite needs write access to the `-shm` index to read them; so such a file (and its `-wal`)
/// is copied to a temporary folder first and the copy is opened. The original is never touched.
public final class StoreFile {
    /// The path the user gave.
    public let path: String
    /// The connection (to the file itself, or to the private copy of a WAL file).
    public let queue: DatabaseQueue
    /// The file the connection reads: `path`, or the private copy of a WAL file.
    let openedPath: String
    private let temporaryFolder: URL?

    private init(path: String, queue: DatabaseQueue, openedPath: String? = nil, temporaryFolder: URL?) {
        self.path = path
        self.queue = queue
        self.openedPath = openedPath ?? path
        self.temporaryFolder = temporaryFolder
    }

    /// Another read-only connection to the same file, for reading in parallel.
    func makeReader() throws -> DatabaseQueue {
        do {
            return try DatabaseQueue(path: openedPath, configuration: StoreFile.readOnly(label: "loupe.read.parallel"))
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Read-only, waiting up to 2 s for a writer's lock before reporting the file locked.
    private static func readOnly(label: String) -> Configuration {
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(2)
        config.label = label
        return config
    }

    deinit {
        try? queue.close()
        if let temporaryFolder { try? FileManager.default.removeItem(at: temporaryFolder) }
    }

    /// The 16-byte header every SQLite 3 file starts with.
    static let header = Array("SQLite format 3\0".utf8)

    /// Checks that `path` names a readable SQLite file; returns its first 100 bytes.
    static func checkedHeader(_ path: String) throws -> [UInt8] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw StoreError(.fileNotFound, path: path, reason: "no such file")
        }
        if isDirectory.boolValue { throw StoreError(.unreadable, path: path, reason: "is a directory") }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw StoreError(.unreadable, path: path, reason: "permission denied")
        }
        defer { try? handle.close() }
        let bytes: [UInt8]
        do { bytes = Array(try handle.read(upToCount: 100) ?? Data()) } catch {
            throw StoreError(.unreadable, path: path, reason: "cannot read the file (\(error.localizedDescription))")
        }
        if bytes.isEmpty { throw StoreError(.notADatabase, path: path, reason: "empty file, not a SQLite database") }
        guard bytes.count >= 100, Array(bytes.prefix(16)) == header else {
            throw StoreError(.notADatabase, path: path, reason: "not a SQLite database")
        }
        return bytes
    }

    /// Process-wide SQLite settings, applied once before the first connection opens.
    private static let configured: Void = { _ = loupe_sqlite_disable_memory_statistics() }()

    /// Opens `path` for reading only. Fails with a ``StoreError`` for a missing, unreadable,
    /// non-SQLite or locked file; never creates or changes a file at `path`.
    public static func openForReading(_ path: String) throws -> StoreFile {
        _ = configured
        let header = try checkedHeader(path)
        let config = readOnly(label: "loupe.read")
        let isWAL = header[18] == 2 || header[19] == 2
        do {
            if isWAL {
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let copy = folder.appendingPathComponent("store.sqlite").path
                do {
                    try FileManager.default.copyItem(atPath: path, toPath: copy)
                    if FileManager.default.fileExists(atPath: path + "-wal") {
                        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
                    }
                } catch {
                    try? FileManager.default.removeItem(at: folder)
                    throw StoreError(.unreadable, path: path, reason: "cannot read the file (\(error.localizedDescription))")
                }
                var copyConfig = Configuration()
                copyConfig.label = "loupe.read-copy"
                let queue = try DatabaseQueue(path: copy, configuration: copyConfig)
                let file = StoreFile(path: path, queue: queue, openedPath: copy, temporaryFolder: folder)
                try file.probe()
                return file
            }
            let queue = try DatabaseQueue(path: path, configuration: config)
            let file = StoreFile(path: path, queue: queue, temporaryFolder: nil)
            try file.probe()
            return file
        } catch {
            throw StoreError.from(error, path: path)
        }
    }

    /// Opens (creating if needed) `path` for writing.
    public static func openForWriting(_ path: String) throws -> StoreFile {
        _ = configured
        if FileManager.default.fileExists(atPath: path) {
            let attributes = try? FileManager.default.attributesOfItem(atPath: path)
            if (attributes?[.size] as? NSNumber)?.intValue ?? 0 > 0 { _ = try checkedHeader(path) }
        }
        var config = Configuration()
        config.busyMode = .timeout(5)
        config.label = "loupe.write"
        do {
            let queue = try DatabaseQueue(path: path, configuration: config)
            return StoreFile(path: path, queue: queue, temporaryFolder: nil)
        } catch {
            throw StoreError.from(error, path: path)
        }
    }

    /// Reads the schema once so that a locked or corrupt file fails at open, not later.
    private func probe() throws {
        try queue.read { db in _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
    }

    /// Runs `body` in a read transaction, turning failures into ``StoreError``s.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try queue.read(body) } catch { throw StoreError.from(error, path: path) }
    }
}
