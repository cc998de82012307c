import Foundation
import GRDB

/// A failure of the storage core, as a value: what failed, where (file, type, object), and why,
/// printed in one fixed shape: `cannot open 'lib.sqlite': not a SQLite database`.
public struct StoreError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What went wrong, matchable in code.
    public enum Kind: String, Sendable {
        /// The file does not exist.
        case fileNotFound
        /// The file exists but is not a SQLite database.
        case notADatabase
        /// The file cannot be read (permissions, a directory, I/O error).
        case unreadable
        /// Another process holds a lock that keeps Loupe from reading or writing.
        case locked
        /// Another process commits so often that parallel readers cannot share a snapshot (the
        /// loader then reads on one connection; users never see this).
        case busy
        /// A table the format needs is missing.
        case missingTable
        /// A stored object could not be decoded into the requested Swift type.
        case undecodableRow
        /// No object has the requested key.
        case notFound
        /// A Swift value could not be encoded for storage.
        case unencodable
        /// The file is read-only to Loupe, or the write was refused.
        case readOnly
        /// A commit was refused because the file changed, or its constraints would break.
        case conflict
        /// Any other SQLite failure.
        case sqlite
    }

    public let kind: Kind
    /// The file concerned, if any.
    public let path: String?
    /// The stored type concerned, if any.
    public let typeName: String?
    /// The object concerned, if any.
    public let objectID: String?
    /// The reason, in words.
    public let reason: String

    public init(_ kind: Kind, path: String? = nil, typeName: String? = nil, objectID: String? = nil, reason: String) {
        self.kind = kind
        self.path = path
        self.typeName = typeName
        self.objectID = objectID
        self.reason = reason
    }

    /// `cannot open 'f.sqlite': not a SQLite database`, `cannot decode Book #12: …`, ….
    public var description: String {
        var subject = ""
        if let typeName { subject = typeName + (objectID.map { " #\($0)" } ?? "") }
        switch kind {
        case .fileNotFound, .notADatabase, .unreadable, .locked, .busy:
            return "cannot open '\(path ?? "?")': \(reason)"
        case .undecodableRow: return "cannot decode \(subject): \(reason)"
        case .notFound: return "not found: \(subject.isEmpty ? reason : subject)"
        case .missingTable: return "missing table: \(reason)" + (path.map { " in '\($0)'" } ?? "")
        case .unencodable: return "cannot encode \(subject): \(reason)"
        case .readOnly: return "cannot write '\(path ?? "?")': \(reason)"
        case .conflict: return "cannot commit to '\(path ?? "?")': \(reason)"
        case .sqlite: return "SQLite error" + (path.map { " in '\($0)'" } ?? "") + ": \(reason)"
        }
    }

    /// The same error about the file at `path` (one raised where the path was not known).
    public func located(at path: String) -> StoreError {
        StoreError(kind, path: path, typeName: typeName, objectID: objectID, reason: reason)
    }

    /// Wraps a GRDB error as a store error for `path`, classifying locks and non-databases.
    static func from(_ error: Error, path: String?) -> StoreError {
        if let e = error as? StoreError { return e }
        if let e = error as? DatabaseError {
            switch e.resultCode {
            case .SQLITE_BUSY, .SQLITE_LOCKED: return StoreError(.locked, path: path, reason: "the database is locked by another process")
            case .SQLITE_NOTADB: return StoreError(.notADatabase, path: path, reason: "not a SQLite database")
            case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_AUTH, .SQLITE_IOERR: return StoreError(.unreadable, path: path, reason: e.message ?? "cannot read the file")
            case .SQLITE_READONLY: return StoreError(.readOnly, path: path, reason: e.message ?? "the database is read-only")
            case .SQLITE_CORRUPT: return StoreError(.notADatabase, path: path, reason: "the database is corrupt (\(e.message ?? ""))")
            case .SQLITE_ERROR where e.message?.hasPrefix("no such collation sequence: ") == true:
                // Only a connection that writes meets it: those that read emulate the app's collations.
                let name = e.message!.dropFirst("no such collation sequence: ".count)
                return StoreError(.readOnly, path: path, reason: "the write reaches text ordered by collation \(name), which only the app that wrote the file has (Loupe emulates it only to read)")
            default: return StoreError(.sqlite, path: path, reason: e.message ?? "\(e)")
            }
        }
        return StoreError(.sqlite, path: path, reason: "\(error)")
    }
}
