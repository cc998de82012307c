/// The kinds of store Loupe reads, as the query planner sees them: which SQL dialect answers
/// over them (if any), in which layout, and what that SQL leaves to the in-memory engine. The
/// one place those facts are written: refusals, `explain`, the status line and the capability
/// table in `docs/query-language.md` are all made from them.
public enum StoreKind: String, Sendable, CaseIterable, Codable {
    case persist, relational, coreData, postgres, postgresPersist, document

    /// The SQL dialect that answers statements over the store itself, nil for none.
    public enum Dialect: String, Sendable, Codable { case sqlite = "SQLite", postgres = "PostgreSQL" }

    public var dialect: Dialect? {
        switch self {
        case .persist, .relational, .coreData: return .sqlite
        case .postgres, .postgresPersist: return .postgres
        case .document: return nil
        }
    }

    /// The store's layout, as its SQL reads it.
    public var layout: String {
        switch self {
        case .persist: return "Persist's by_type and relations tables"
        case .relational: return "relational tables"
        case .coreData: return "Core Data's Z tables"
        case .postgres: return "PostgreSQL tables"
        case .postgresPersist: return "Persist's layout in PostgreSQL"
        case .document: return "a document read whole"
        }
    }

    /// What a user calls the store (`a Persist file`).
    public var title: String {
        switch self {
        case .persist: return "a Persist file"
        case .relational: return "a relational SQLite file"
        case .coreData: return "a Core Data store"
        case .postgres: return "a PostgreSQL database"
        case .postgresPersist: return "Persist's layout in PostgreSQL"
        case .document: return "a document store"
        }
    }

    /// True when SQL answers first even when the whole store fits the memory budget (the
    /// database's own indexes answer faster than a load); other kinds load, and SQL answers
    /// over the budget.
    public var asksSQLFirst: Bool { self == .relational || self == .postgres || self == .postgresPersist }

    /// The constructs this kind's SQL leaves to the in-memory engine, in the order they are told.
    public var leaves: [SQLConstruct] {
        switch self {
        case .persist: return [.nestedValues, .arithmetic, .relationsToSeveralTypes, .unjoinableRows]
        case .relational: return [.arithmeticNotAgainstNumber, .objectComparisons, .affinityKeys, .relationsWithoutRowid]
        case .coreData: return [.objectComparisons, .arithmeticThroughRelationships, .relationshipsStoredTwice, .entitiesSharingColumns, .subentities]
        case .postgres: return [.arithmeticNotAgainstNumber, .arithmeticPastServerRange, .matches, .pathComparisons, .objectComparisons, .integersPast2to53, .nonASCIISubstrings]
        case .postgresPersist: return [.documentsNotJSONB, .mixedKinds, .nestedValues, .arithmeticOnMixedNumbers, .datesInAnotherZone]
        case .document: return []
        }
    }

    /// ``leaves`` as one phrase: `paths into nested values, arithmetic and …`.
    public var leavesText: String { SQLConstruct.list(leaves) }
}

/// A construct of the language some SQL layout cannot say with the engine's exact semantics
/// (the planner keeps it in the engine).
public enum SQLConstruct: String, Sendable, CaseIterable, Codable {
    case nestedValues, arithmetic, arithmeticNotAgainstNumber, arithmeticPastServerRange, arithmeticOnMixedNumbers
    case arithmeticThroughRelationships, relationsToSeveralTypes, unjoinableRows, objectComparisons, affinityKeys
    case relationsWithoutRowid, relationshipsStoredTwice, entitiesSharingColumns, subentities, matches
    case pathComparisons, integersPast2to53, nonASCIISubstrings, documentsNotJSONB, mixedKinds, datesInAnotherZone

    public var description: String {
        switch self {
        case .nestedValues: return "paths into nested values"
        case .arithmetic: return "arithmetic"
        case .arithmeticNotAgainstNumber: return "arithmetic not compared with a number"
        case .arithmeticPastServerRange: return "arithmetic past the server's range"
        case .arithmeticOnMixedNumbers: return "arithmetic on members holding integers beside fractions"
        case .arithmeticThroughRelationships: return "arithmetic through relationships"
        case .relationsToSeveralTypes: return "relations to several types"
        case .unjoinableRows: return "rows SQL cannot join as a load does (dangling or mistyped edges)"
        case .objectComparisons: return "objects compared otherwise than with keys"
        case .affinityKeys: return "keys that match only by SQLite's affinity"
        case .relationsWithoutRowid: return "relations read from a view or a table without a rowid"
        case .relationshipsStoredTwice: return "relationships stored in two places"
        case .entitiesSharingColumns: return "names two entities of one table store in different columns"
        case .subentities: return "such statements on an entity with subentities"
        case .matches: return "MATCHES"
        case .pathComparisons: return "comparisons of two paths"
        case .integersPast2to53: return "integers compared with a real past 2^53"
        case .nonASCIISubstrings: return "substring tests on non-ASCII text"
        case .documentsNotJSONB: return "documents other than jsonb"
        case .mixedKinds: return "members of mixed kinds"
        case .datesInAnotherZone: return "dates in another zone"
        }
    }

    /// `a, b and c`.
    public static func list(_ constructs: [SQLConstruct]) -> String {
        let words = constructs.map(\.description)
        guard words.count > 1 else { return words.first ?? "nothing" }
        return words.dropLast().joined(separator: ", ") + " and " + words.last!
    }
}

extension StoreKind {
    /// The capability table of `docs/command-line.md` (a test keeps the page equal to it): per
    /// kind of store, the SQL that answers over it and what that SQL leaves to the engine.
    public static var capabilityTable: String {
        var lines = ["| store | SQL that answers over it | left to the in-memory engine |", "| --- | --- | --- |"]
        for kind in allCases where kind != .document {
            let when = kind.asksSQLFirst ? "asked first" : kind == .persist ? "asked for counts, and for all over the memory budget" : "asked over the memory budget"
            let sql = "\(kind.dialect?.rawValue ?? "none") over \(kind.layout), \(when)"
            lines.append("| \(kind.title) | \(sql) | \(kind.leavesText) |")
        }
        lines.append("| \(StoreKind.document.title) | none: loaded whole | everything |")
        return lines.joined(separator: "\n")
    }
}
