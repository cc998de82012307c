import LoupeModel

/// A store read a page at a time (paged mode) that Loupe commits edits into: a Persist store
/// or a plain relational SQLite file (and a Core Data store, whose types are read-only: its
/// edits are refused as staged). What a paged session's host needs of it beyond paging.
public protocol CommittablePages: PageSource, Sendable {
    /// The file read.
    var file: StoreFile { get }
    /// The file's stamp when it was opened: a commit refuses what another process wrote since.
    var openedStamp: FileStamp { get }
    /// The format its commits are planned and written by.
    static var format: any StoreFormat.Type { get }
    /// The store opened again as the file is now (`.reload`, after another process wrote).
    func reopened() throws -> Self
    /// The store as this process's commit (`report`) left it, without reading it again where
    /// the commit says what changed; `newAttributes` are the attributes the commit added, by type name.
    func afterCommit(_ report: StoreCommit.Report, newAttributes: [String: [String]]) -> Self
}

extension PersistPages: CommittablePages {
    public static var format: any StoreFormat.Type { PersistFormat.self }
    public func reopened() throws -> PersistPages { try PersistPages.open(file, edgesPerObject: edgesPerObject) }
}

extension RelationalPages: CommittablePages {
    public static var format: any StoreFormat.Type { RelationalFormat.self }
    public func reopened() throws -> RelationalPages { try RelationalPages.open(file, edgesPerObject: edgesPerObject) }

    /// The same tables with the row counts the commit moved (when they were read) and the
    /// file's new stamp (a relational commit adds no column).
    public func afterCommit(_ report: StoreCommit.Report, newAttributes: [String: [String]]) -> RelationalPages {
        let moved = counted.known.map { counts in
            zip(layout.graph.types, counts).map { type, count in max(0, count + (report.countChanges[type.name.rawValue] ?? 0)) }
        }
        return RelationalPages(file: file, layout: layout, sources: sources, counts: moved, indexedColumns: indexedColumns,
                               readOnlyReason: readOnlyReason, edgesPerObject: edgesPerObject, stamp: report.stampAfter ?? file.stamp(),
                               inferred: inferred)
    }
}
