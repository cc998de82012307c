import LoupeModel

/// How a statement is answered over a store: the engines to ask, in order, and the ones left
/// out with why. Made by ``Planner/plan(_:_:)`` for every entry point (`loupe query`, both
/// REPLs, the browser's paged mode, edits selecting their objects, `bench`), run by
/// ``answer(sql:pages:schema:declaring:progress:isCancelled:)`` (or, for the loaded graph, by
/// the caller's load), and printed by `explain`.
public struct QueryPlan: Sendable {
    /// The statement planned (for an edit: the query of its `where`, which selects its objects).
    public let statement: Statement
    /// The store's kind: its SQL's dialect and layout.
    public let kind: StoreKind
    /// The engines to ask, in order: each answers, or declines and the next is asked.
    public let steps: [PlanEngine]
    /// The engines left out while planning, with why (`SQL: a chain of 5000 tests is beyond…`).
    public let declined: [Decline]
    /// The statement's type's object count, when the store knows it (explain's estimate).
    public let estimatedRows: Int?

    /// True when SQL is among the steps.
    public var asksSQL: Bool { steps.contains(.sql) }
}

/// Where a statement is planned: the store and what the caller can do there.
public struct PlanSituation: Sendable {
    public var kind: StoreKind
    /// What `--engine` asked for: nil for auto, else only that engine.
    public var only: PlanEngine?
    /// Why a whole load is refused (over the memory budget); nil when the store may load.
    public var overBudget: Decline.Reason?
    /// True when the store reads a page at a time (the chunks can read it).
    public var paged: Bool
    /// True when the graph is loaded already (a REPL's session): the engine answers over it.
    public var loaded: Bool
    /// True when a load can read only what a statement's names reach (a Persist file with a
    /// fresh schema cache entry): a count through backlinks then loads that, faster than SQL.
    public var partialLoad = false
    /// Object counts by type name, when known.
    public var counts: [String: Int]

    public init(kind: StoreKind, only: PlanEngine? = nil, overBudget: Decline.Reason? = nil, paged: Bool = false, loaded: Bool = false, counts: [String: Int] = [:]) {
        self.kind = kind
        self.only = only
        self.overBudget = overBudget
        self.paged = paged
        self.loaded = loaded
        self.counts = counts
    }
}

extension PlanSituation {
    /// The object counts `pages` has read (explain's estimates), by type name.
    public static func counts(_ pages: PageSource?) -> [String: Int] {
        var counts: [String: Int] = [:]
        for entry in pages?.listedTypes ?? [] { if let count = entry.count { counts[entry.name] = count } }
        return counts
    }
}

/// The one planner: which engines answer a statement, from the statement and the situation.
public enum Planner {
    /// The plan of `statement` in `situation`. SQL is asked first where the store's own
    /// indexes answer faster than a load (relational files, PostgreSQL tables) or where the
    /// store may not load (over the budget); never for a statement beyond the dialect's limits
    /// (``DialectLimits``). Over the budget the chunks follow SQL; else the load does.
    public static func plan(_ statement: Statement, _ situation: PlanSituation) -> QueryPlan {
        let kind = situation.kind
        var declined: [Decline] = []
        var asked = statement
        if case .mutation(let m) = statement { asked = m.selection ?? .query(Query(type: m.typeName, predicate: .constant(false))) }
        // `--engine memory` loads whatever the budget says; `--engine sql` asks SQL alone.
        let unloaded = situation.only == .memory ? nil : situation.overBudget ?? (situation.paged ? .notLoaded : nil)
        var steps: [PlanEngine]
        if situation.loaded {
            steps = [.memory]
        } else if let unloaded {
            steps = [.sql, .chunks]
            declined.append(Decline(.memory, unloaded, over: kind))
        } else if case .mutation = statement {
            steps = [.memory]
            declined.append(Decline(.sql, .mutation, over: kind))
        } else {
            steps = kind.asksSQLFirst || isCountOverPersist(asked, kind, partialLoad: situation.partialLoad) ? [.sql, .memory] : [.memory]
        }
        if let only = situation.only {
            declined += steps.filter { $0 != only }.map { Decline($0, .leftOutByChoice, over: kind) }
            steps = steps.contains(only) || only == .sql ? [only] : []
        }
        if steps.contains(.sql), let why = sqlDeclines(asked, kind) {
            declined.append(Decline(.sql, why, over: kind))
            steps.removeAll { $0 == .sql }
        }
        if steps.contains(.chunks), !situation.paged {
            declined.append(Decline(.chunks, .notPaged, over: kind))
            steps.removeAll { $0 == .chunks }
        }
        let rows = asked.pushdownRoot.flatMap { root in situation.counts[root.type.text] }
        return QueryPlan(statement: asked, kind: kind, steps: steps, declined: declined, estimatedRows: rows)
    }

    /// Why SQL is not asked `statement` over `kind`, nil when it may be: no dialect, not a
    /// statement over a type, or larger than the dialect's limits.
    static func sqlDeclines(_ statement: Statement, _ kind: StoreKind) -> Decline.Reason? {
        guard let dialect = kind.dialect else { return .noSQL }
        guard statement.pushdownRoot != nil else { return .untranslated(uses: []) }
        if let (limit, size, most) = StatementSize(statement).beyond(.of(dialect)) {
            return .beyondLimit(limit, size: size, limit: most, dialect: dialect)
        }
        return nil
    }

    /// A count over a Persist file is SQLite's to answer even when the file fits in memory:
    /// counting documents beats loading them. Measured on 1M objects (`bench commands`, new
    /// processes): 0.33 s and 42 MB against a whole load's 1.7 s; against the partial load a
    /// fresh schema cache allows, as fast or faster (two hops 0.44–0.47 s against 0.55 s) in a
    /// fifth of the memory, except through backlinks (0.54–0.61 s against 0.49–0.52 s), which
    /// then load.
    static func isCountOverPersist(_ statement: Statement, _ kind: StoreKind, partialLoad: Bool = false) -> Bool {
        guard kind == .persist, case .count = statement else { return false }
        return !(partialLoad && statement.namesRead?.linkTypes.isEmpty == false)
    }
}
