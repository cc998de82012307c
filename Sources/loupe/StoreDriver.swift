import Foundation
import LoupeHost
import LoupeModel
import LoupePostgres
import LoupeQuery
import LoupeSQL
import LoupeStore

/// One store as a command meets it, detected once: its kind, the file opened once (nil for
/// PostgreSQL), and whether a whole load fits the memory budget. Everything that differs by
/// kind of store (which pages, which SQL, which host) is decided here, from ``kind``; the
/// planner decides the rest from the same value (``situation(only:paged:)``).
struct StoreDriver {
    let kind: StoreKind
    /// The file's path, or the database's URL (password included, to connect again; never shown).
    let location: String
    let file: StoreFile?
    /// A whole load's estimate when it is over ``budget``; nil when the store may load.
    let estimate: Int64?
    let budget: MemoryBudget

    /// Why a whole load is refused, nil when it fits.
    var overBudget: Decline.Reason? { estimate.map { .overBudget(estimate: $0, budget: budget.bytes) } }

    /// Detects the store at `location` (the file opened for reading once, or the server asked).
    static func detect(_ location: String, budget: MemoryBudget) throws -> StoreDriver {
        if PostgresConnection.isURL(location) {
            return StoreDriver(kind: try StoreKind.ofDatabase(location), location: location, file: nil, estimate: try MemoryBudget.overBudget(postgres: location, budget: budget), budget: budget)
        }
        let file = try StoreFile.openForReading(location)
        let kind = try file.read { try StoreKind.of(StoreFormats.detect($0, path: location)) }
        let estimate = MemoryBudget.wholeLoadEstimate(path: location, relational: kind != .persist)
        return StoreDriver(kind: kind, location: location, file: file, estimate: estimate > budget.bytes ? estimate : nil, budget: budget)
    }

    /// Where the planner plans over this store: `only` as `--engine` asks, `paged` when it is
    /// read a page at a time; object counts when the pages know them.
    func situation(only: PlanEngine?, paged: PageSource? = nil) -> PlanSituation {
        var situation = PlanSituation(kind: kind, only: only, overBudget: overBudget, paged: paged != nil, counts: PlanSituation.counts(paged))
        situation.partialLoad = kind == .persist && file.map { LoadedStore.cachedSchema($0) != nil } == true
        return situation
    }

    /// The store read a page at a time (paged mode's opening): its pages, its SQL and its
    /// host; nil for a kind that does not page (a document). A Persist store keyed otherwise
    /// than by integers is refused with the opening's error, or with `unkeyedLoads` is nil too
    /// (it loads whole; in PostgreSQL it is answered statement by statement).
    func openPaged(reason: String?, unkeyedLoads: Bool = false) throws -> PagedOpening? {
        switch kind {
        case .postgresPersist:
            do {
                let host = PostgresPersistPagedHost(pages: try PostgresPersistPages.open(url: location))
                return PagedOpening(pages: host.pages, path: location, reason: reason, formatName: PostgresPersistPages.formatName, querySource: host.querySource, host: host, kind: kind)
            } catch where unkeyedLoads && PostgresPersistPages.refusesUnkeyed(error) { return nil }
        case .postgres:
            let host = PostgresPagedHost(pages: try PostgresPages.open(url: location))
            return PagedOpening(pages: host.pages, path: location, reason: reason, formatName: PostgresDatabase.formatName, querySource: host.querySource, host: host, kind: kind)
        case .persist:
            guard let file else { return nil }
            let pages: PersistPages
            do { pages = try PersistPages.open(file) } catch is StoreError where unkeyedLoads { return nil }
            return opening(pages, formatName: PersistFormat.name, reason: reason, following: PersistQuerySource.following)
        case .relational:
            guard let file else { return nil }
            return opening(try RelationalPages.open(file), formatName: RelationalFormat.name, reason: reason, following: RelationalQuerySource.following)
        case .coreData:
            guard let file else { return nil }
            return opening(try CoreDataPages.open(file), formatName: CoreDataFormat.name, reason: reason, following: CoreDataQuerySource.following)
        case .document:
            return nil
        }
    }
}

extension StoreDriver {
    /// The opening of this file read by `pages`, committed through a ``PagedStoreHost`` whose
    /// statements `following` answers.
    private func opening<Pages: CommittablePages>(_ pages: Pages, formatName: String, reason: String?,
                                                  following: @escaping @Sendable (Pages, (any QuerySource)?, ChangeReach?) -> (any QuerySource)?) -> PagedOpening {
        let host = PagedStoreHost(pages: pages, querySource: following)
        return PagedOpening(pages: pages, path: location, reason: reason, formatName: formatName, querySource: host.pagedStore.querySource, host: host, kind: kind)
    }
}

extension StoreKind {
    /// The kind of the PostgreSQL database at `url`: Persist's layout, or tables.
    static func ofDatabase(_ url: String) throws -> StoreKind {
        try PostgresDatabase.holdsPersist(url: url) ? .postgresPersist : .postgres
    }

    /// The kind of a file of `format`.
    static func of(_ format: any StoreFormat.Type) -> StoreKind {
        switch ObjectIdentifier(format) {
        case ObjectIdentifier(PersistFormat.self): return .persist
        case ObjectIdentifier(RelationalFormat.self): return .relational
        case ObjectIdentifier(CoreDataFormat.self): return .coreData
        default: return .document
        }
    }
}
