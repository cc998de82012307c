import Foundation
import GRDB
import Synchronization

/// Facts about a file's columns that a plan needs before it can send SQL (does a column hold
/// blobs or text outside ASCII, which kinds does it hold, does any foreign key spell an integer
/// as text), each a scalar one query computes over a whole column. Asked through ``scalar(_:sql:)``,
/// each is computed once per state of the file: kept in Loupe's cache folder under the file's
/// stamp (``SchemaCache``), so that the next process — and the next statement — reads it back
/// instead of scanning the column again. A file that changes (any commit, Loupe's own included)
/// has a new stamp, and its facts are computed again on first need.
///
/// With caching off, or a file not read as it is on disk (a private copy), facts are only kept
/// for the process.
public final class FileFacts: @unchecked Sendable {
    private let file: StoreFile?
    private let stamp: FileStamp?
    private let known = Mutex<[String: Scalar]>([:])
    private let added = Mutex(false)

    /// What a fact is: the one value its query answers.
    enum Scalar: Codable, Equatable {
        case null, int(Int64), double(Double), text(String)

        init(_ value: DatabaseValue) {
            switch value.storage {
            case .int64(let i): self = .int(i)
            case .double(let d): self = .double(d)
            case .string(let s): self = .text(s)
            case .null, .blob: self = .null
            }
        }

        var databaseValue: DatabaseValue {
            switch self {
            case .null: return .null
            case .int(let i): return i.databaseValue
            case .double(let d): return d.databaseValue
            case .text(let s): return s.databaseValue
            }
        }
    }

    /// The facts of `file` as it is now (those kept for it read back).
    public init(file: StoreFile) {
        self.file = file
        let stamp = file.stamp()
        self.stamp = stamp
        known.withLock { $0 = SchemaCache.sqlFacts(for: file, stamp: stamp) ?? [:] }
    }

    /// Facts kept for nothing but this value's life (no file to key them by).
    public init() {
        file = nil
        stamp = nil
    }

    /// The value `sql` (one row, one column, over the file `db` reads) answers, computed once.
    public func scalar(_ db: Database, sql: String) throws -> DatabaseValue {
        if let kept = known.withLock({ $0[sql] }) { return kept.databaseValue }
        let value = Scalar(try DatabaseValue.fetchOne(db, sql: sql) ?? .null)
        known.withLock { $0[sql] = value }
        added.withLock { $0 = true }
        return value.databaseValue
    }

    /// True when `condition` holds for some row of `table` (a fact: ``scalar(_:sql:)``).
    public func exists(_ db: Database, table: String, where condition: String) throws -> Bool {
        try scalar(db, sql: "SELECT EXISTS (SELECT 1 FROM \(SQL.identifier(table)) WHERE \(condition))") != false.databaseValue
    }

    /// Keeps the facts computed since they were read, when the file is still as it was.
    public func save() {
        guard added.withLock({ $0 }), let file, let stamp else { return }
        SchemaCache.saveSQLFacts(known.withLock { $0 }, file: file, stamp: stamp)
        added.withLock { $0 = false }
    }
}

extension SchemaCache {
    /// Keeps `facts` (``FileFacts``) of `file` as `stamp` describes it (when caching is on, the
    /// file is read as it is on disk and still at `stamp`).
    static func saveSQLFacts(_ facts: [String: FileFacts.Scalar], file: StoreFile, stamp: FileStamp) {
        guard file.access == .readOnly || file.access == .walSnapshot, file.stamp() == stamp,
              let directory = directory.withLock({ $0 }), let path = realPath(file.path) else { return }
        let entry = ValueEntry(version: version, build: build, path: path, stamp: stamp, header: file.databaseHeader(), value: facts)
        guard let data = try? JSONEncoder().encode(entry) else { return }
        write(data, to: entryPath(directory, for: path, kind: "sqlfacts"), in: directory)
    }

    /// The facts kept of `file`, when found at `stamp` and the file is still so.
    static func sqlFacts(for file: StoreFile, stamp: FileStamp) -> [String: FileFacts.Scalar]? {
        guard let entry = kept(ValueEntry<[String: FileFacts.Scalar]>.self, kind: "sqlfacts", for: file), entry.stamp == stamp else { return nil }
        return entry.value
    }
}
