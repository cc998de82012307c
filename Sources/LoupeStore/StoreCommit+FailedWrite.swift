import Foundation
import GRDB
import Synchronization

/// What Loupe does after a commit of its own failed part-way (a full disk, an I/O error).
///
/// SQLite undoes a failed transaction from its rollback journal; should the journal be left
/// behind (hot), the file holds part of the commit until a connection plays the journal back.
/// So after such a failure Loupe opens the file once more, which makes SQLite play back any hot
/// journal, then checks that the file is as it was loaded (size, inode and change counter) and
/// no journal is left. Only then does the message say nothing was written; otherwise it says what
/// is on disk and what keeps the data safe.
///
/// The failed attempt changed the file's times (and a WAL file's `-wal`) without changing its
/// data: the stamp read after the check is remembered as the loaded one's equal, so that a retry
/// is not refused as if another process had written.
extension StoreCommit {
    /// What a failed commit left on disk.
    enum AfterFailure {
        /// The file is as it was loaded; `stamp` is what it looks like now.
        case restored(FileStamp)
        /// A journal is still beside the file, or the file is not as loaded: the words say which.
        case unsure(String)
    }

    /// Stamps of files Loupe put back after its own failed commit, with the stamp each was
    /// loaded with (``unchanged(_:since:)``).
    private static let restoredStamps = Mutex<[(loaded: FileStamp, now: FileStamp)]>([])

    /// True when the file's `current` stamp holds what was loaded with `loaded`: the same
    /// content, or the content Loupe put back after a failed commit of its own.
    static func unchanged(_ current: FileStamp, since loaded: FileStamp) -> Bool {
        if current.sameContent(as: loaded) { return true }
        return restoredStamps.withLock { $0.contains { $0.loaded == loaded && current.sameContent(as: $0.now) } }
    }

    /// True for a failure that may have written part of a commit (not a refusal before the writes).
    static func mayHaveWritten(_ error: Error) -> Bool {
        guard let e = error as? DatabaseError else { return false }
        switch e.resultCode {
        case .SQLITE_FULL, .SQLITE_IOERR, .SQLITE_CORRUPT, .SQLITE_NOMEM: return true
        default: return false
        }
    }

    /// Plays back a journal the failed commit left (by opening the file) and says what is on disk.
    static func recover(_ absolute: String, loaded stamp: FileStamp, watch: FileWatch) -> AfterFailure {
        let journal = absolute + "-journal"
        if journalIsHot(journal) {
            // Reading the schema makes SQLite roll the hot journal back (it needs no new space).
            if let queue = try? DatabaseQueue(path: absolute) {
                _ = try? queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
                try? queue.close()
            }
        }
        let now = FileStamp(path: absolute, watch: watch)
        if journalIsHot(journal) {
            return .unsure("the commit failed part-way and SQLite's journal \(journal) is still beside the file: the file holds part of the commit until SQLite plays the journal back. Keep the journal with the file (never delete or move one without the other), free space, and open the file again (Loupe or sqlite3 will undo the partial write)")
        }
        guard now.size == stamp.size, now.inode == stamp.inode, now.changeCounter == stamp.changeCounter else {
            return .unsure("the commit failed part-way, and the file is no longer as loaded (size \(stamp.size) → \(now.size) bytes); run `sqlite3 FILE 'PRAGMA integrity_check'` and reload before editing again")
        }
        restoredStamps.withLock { $0.append((stamp, now)) }
        return .restored(now)
    }

    /// True when `path` is a journal with a header (an empty or zeroed one is not hot).
    private static func journalIsHot(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 8)) ?? Data()
        return head.contains { $0 != 0 }
    }
}
