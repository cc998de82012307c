import LoupeModel

/// Edits over a store browsed a page at a time (paged mode), staged, undone and committed as a
/// loaded session's are: steps of primitive ``Edit``s naming objects by identity, in a
/// ``PendingChanges``. Its base is not the whole graph but the **edit base**: a window of the
/// store holding every object an edit names (read by key, with what is around them), grown as
/// edits name more (the steps are staged again over the larger base). A commit writes from it
/// as from a loaded graph: each object's document as read, checked against the file.
///
/// What a view shows is the store's window with the staged changes applied (``window(keys:inserted:)``).
/// A statement's `where` is answered by the store (the caller asks it, ``selected(_:storeKeys:)``
/// adds the staged state): exactly, because a statement whose predicate reaches other objects
/// is refused while changes are pending (the store would answer it as the file holds them).
public struct PagedChanges: @unchecked Sendable {
    /// The store, read by key.
    public let pages: PageSource
    /// The edit base: the objects edits named, as the store holds them.
    public private(set) var base: ObjectWindow
    /// The objects read into the base, in the order they were first named.
    public private(set) var baseKeys: [ObjectIdentity] = []
    private var baseKeySet = Set<ObjectIdentity>()
    /// The staged changes over the base (with the whole store's kinds of the attributes edited).
    public private(set) var pending: PendingChanges
    /// The kinds of value each edited attribute holds over its whole type (by type, then
    /// attribute name), read once: what values are checked against, as in a load. The base of
    /// ``pending`` is always the base's graph with these kinds added.
    private var kinds: [String: [String: ValueKind]] = [:]
    /// The largest key stored: new objects' keys go above it (where keys are store-wide).
    private var storedKeyMaximum: Int64
    /// The largest key stored of each type (by index) a statement inserted into, where the store
    /// assigns a type's keys as its max + 1 (a table's rowid).
    private var typeKeyMaxima: [Int: Int64] = [:]
    /// The most objects one statement may change in paged mode (each is read into the edit base).
    public static let statementLimit = 50_000

    /// No changes yet over `pages`: the base holds no object (only the store's schema).
    public init(pages: PageSource) throws {
        self.pages = pages
        base = try pages.window(keys: [])
        pending = PendingChanges(base: base.graph)
        storedKeyMaximum = try pages.maximumIntegerKey(type: nil)
    }

    /// True when something is staged.
    public var isEmpty: Bool { pending.isEmpty }

    // MARK: The edit base

    /// The objects staged as new, of every type.
    private var insertedObjects: Set<ObjectIdentity> {
        var out = Set<ObjectIdentity>()
        for (t, keys) in pending.changes.inserted { for key in keys { out.insert(ObjectIdentity(type: pending.base.types[t].name, id: key)) } }
        return out
    }

    /// Reads `objects` into the edit base (those not in it yet, and not staged as new), and
    /// the whole store's kinds of `attributes` (type name, attribute name), then stages the
    /// steps again over the larger base. Throws when a step no longer applies (an object it
    /// names is gone from the file): nothing changes then.
    public mutating func include(_ objects: [ObjectIdentity], kindsOf attributes: [(type: String, attribute: String)] = []) throws {
        let staged = insertedObjects
        var new: [ObjectIdentity] = []
        var seen = baseKeySet
        for object in objects where !staged.contains(object) && seen.insert(object).inserted { new.append(object) }
        var missing: [String: Set<String>] = [:]
        for (type, attribute) in attributes where kinds[type]?[attribute] == nil { missing[type, default: []].insert(attribute) }
        guard !new.isEmpty || !missing.isEmpty else { return }
        var nextKinds = kinds
        for (type, names) in missing {
            guard let t = pages.catalog.firstIndex(where: { $0.name == type }) else { continue }
            let found = try pages.kinds(type: t, names: names)
            for name in names { nextKinds[type, default: [:]][name] = found[name] ?? [] }
        }
        let nextBase = new.isEmpty ? base : try pages.window(objects: baseKeys + new)
        let (rebased, dropped) = pending.rebased(on: nextBase.graph.addingKinds(nextKinds))
        if let step = dropped.first {
            throw PagedEditError("'\(step.label)' no longer applies to the store (an object it names is gone from the file); undo it or reopen the store")
        }
        base = nextBase
        baseKeys += new
        baseKeySet.formUnion(new)
        kinds = nextKinds
        pending = rebased
    }

    /// No changes over `pages`, the store as this session's commit left it: what was known of
    /// the whole store's kinds is kept where the commit (`reach`) cannot have changed it.
    public func afterCommit(on pages: PageSource, reach: ChangeReach) throws -> PagedChanges {
        var next = try PagedChanges(pages: pages)
        for (type, byName) in kinds {
            for (name, kind) in byName where reach.keeps(type: type, attribute: name) { next.kinds[type, default: [:]][name] = kind }
        }
        // The base's graph always carries every kind known (values are checked against them).
        next.pending = PendingChanges(base: next.base.graph.addingKinds(next.kinds))
        return next
    }

    /// The store opened again (after another process wrote, or this session committed): the
    /// edit base read again from `pages` and every step staged over it; the steps that no longer
    /// apply are returned, unstaged.
    public func reopened(on pages: PageSource) throws -> (PagedChanges, dropped: [EditStep]) {
        var next = try PagedChanges(pages: pages)
        guard !baseKeys.isEmpty || !pending.steps.isEmpty else { return (next, []) }
        next.base = try pages.window(objects: baseKeys)
        next.baseKeys = baseKeys
        next.baseKeySet = baseKeySet
        let (rebased, dropped) = pending.rebased(on: next.base.graph)
        next.pending = rebased
        return (next, dropped)
    }

    // MARK: Staging

    /// Stages a step the browser made (a cell, a deletion): the objects it names are read into
    /// the base first, and a deletion's cascades found over them (``completingDeletions(_:)``).
    /// A relation of an object with more links than a window reads is refused (its whole list is
    /// not in memory to be rewritten).
    public mutating func stage(_ step: EditStep) throws {
        var objects: [ObjectIdentity] = []
        for edit in step.edits {
            switch edit {
            case .insert: break
            case .set(let o, _, _), .remove(let o): objects.append(o)
            case .link(let o, _, let targets): objects.append(o); objects += targets
            }
        }
        try include(objects)
        let step = try completingDeletions(step)
        try refuseCutLinks(step)
        try pending.stage(step)
    }

    /// Refuses a step that changes a relation of an object whose links the base holds only the first of.
    private func refuseCutLinks(_ step: EditStep) throws {
        for case .link(let o, let relation, _) in step.edits where base.cut.contains(o) {
            throw PagedEditError("\(o) has more links than paged mode reads at once: its \(relation) is changed in a loaded session (a larger --memory-budget)")
        }
    }

    /// `step` with its deletions made over every object they reach: each object it deletes is
    /// read into the base with what refers to it, and the deletions (with their declared `ON
    /// DELETE` actions: cascades, set null, refusals) are made again over the larger base, until
    /// every object they delete or change was read whole. An object with more referring rows
    /// than a window reads is refused (they would not all be followed). A step that deletes
    /// nothing is returned as it is.
    mutating func completingDeletions(_ step: EditStep) throws -> EditStep {
        var doomed = step.edits.compactMap { edit -> ObjectIdentity? in if case .remove(let o) = edit { return o } else { return nil } }
        guard !doomed.isEmpty else { return step }
        let inserted = insertedObjects
        var edits = step.edits
        while true {
            try include(doomed)
            let graph = pending.graph
            for object in doomed where base.cut.contains(object) {
                guard let ref = graph.ref(object), graph.table(ref).backlinks.contains(where: { graph.types[$0.sourceType].relations[$0.relation].foreignKey != nil }) else { continue }
                throw PagedEditError("\(object) is referred to by more rows than paged mode reads at once: it is deleted in a loaded session (a larger --memory-budget)")
            }
            let refs = doomed.compactMap { graph.ref($0) }
            if let gone = doomed.first(where: { graph.ref($0) == nil }) { throw PagedEditError("\(gone) is not in the store (another process deleted it?); reopen the store") }
            edits = try Editor(graph: graph).deletions(refs)
            // Every object the deletions name, read whole (or staged as new): done.
            let named = edits.map(\.object).filter { !inserted.contains($0) }
            if named.allSatisfy(baseKeySet.contains) { break }
            guard named.count <= Self.statementLimit else {
                throw PagedEditError("this would change \(named.count) objects; paged mode stages at most \(Self.statementLimit) in one statement")
            }
            doomed = edits.compactMap { edit -> ObjectIdentity? in if case .remove(let o) = edit { return o } else { return nil } }
            try include(named)
        }
        for case .remove(let object) in edits where !inserted.contains(object) {
            let unseen = try pages.unfollowedReferences(to: object)
            guard unseen.isEmpty else {
                throw PagedEditError("\(object) is referred to by \(unseen.joined(separator: ", ")), which paged mode does not follow (a table without a rowid): it is deleted in a loaded session (a larger --memory-budget)")
            }
        }
        // Changes to objects this step does not delete (the step may set values and delete too).
        let reached = Set(edits.map(\.object))
        let others = step.edits.filter { edit in if case .remove = edit { return false } else { return !reached.contains(edit.object) } }
        // What the deletions do beyond the objects named, over the base that read them whole.
        let graph = pending.graph
        let named = step.named.isEmpty ? step.edits.compactMap { edit -> ObjectIdentity? in if case .remove(let o) = edit { return o } else { return nil } } : step.named
        return EditStep(label: step.label, edits: others + edits, effects: Editor(graph: graph).deletionEffects(of: edits, asked: named.compactMap { graph.ref($0) }),
                        named: named)
    }

    /// Replaces the pending changes with `changes` over the same base (`.undo`, `.redo`,
    /// `.rollback` in the session).
    public mutating func adopt(_ changes: PendingChanges) {
        guard changes.base === pending.base else { return }
        pending = changes
    }

    /// The text typed for a cell, read as the attribute's kind over its whole type (as a load
    /// checks it) for object `identity`.
    public mutating func typedValue(_ text: String, for identity: ObjectIdentity, attribute: String) throws -> Value {
        try include([identity], kindsOf: [(identity.type.rawValue, attribute)])
        guard let ref = pending.changes.row(of: identity) else { throw PagedEditError("\(identity) is not in the store") }
        return try Editor(graph: pending.graph, storedKeyMaximum: storedKeyMaximum).typedValue(text, for: ref, attribute: attribute)
    }

    /// The objects an `update` or `delete` changes, from the keys the store's answer to its
    /// ``Mutation/selection`` gave (`storeKeys`, the file's state): objects staged changes
    /// touched are judged again on their staged state (inserted ones too, deleted ones dropped).
    /// Refused while changes are pending when the predicate reaches other objects (the store
    /// would judge it on what the file holds), and over ``statementLimit`` objects.
    public func selected(_ mutation: Mutation, storeKeys: [ObjectID]) throws -> [ObjectID] {
        guard let statement = mutation.selection, case .query(let query) = statement else { return [] }
        var keys = storeKeys
        if !pending.isEmpty {
            let graph = pending.graph
            let type = try Compiler(graph: graph).resolveType(mutation.typeName)
            guard let reach = statement.singleTypeReach,
                  !reach.firstNames.contains(where: { name in type.relations.contains { $0.name.caseInsensitiveCompare(name) == .orderedSame } }) else {
                throw PagedEditError("while changes are pending, paged mode changes objects chosen by their own attributes only (the store would judge other objects as the file holds them): commit or undo first")
            }
            let touched = Set(pending.changes.touched.filter { Int($0.type) == type.index }.map { graph.id(of: $0) })
            let engine = QueryEngine(graph: graph)
            let passing = try engine.filter(type, query.predicate, QueryEngine.Run(compiler: Compiler(graph: graph), cancellation: nil))
                .filter { graph.table($0).isLive(Int($0.row)) }.map { graph.id(of: $0) }
            keys = keys.filter { !touched.contains($0) } + passing.filter { touched.contains($0) }
        }
        guard keys.count <= Self.statementLimit else {
            throw PagedEditError("this would change \(keys.count) objects; paged mode stages at most \(Self.statementLimit) in one statement (narrow the where)")
        }
        return keys
    }

    /// Stages a mutation statement whose `where` the store answers: `storeKeys` gives the keys
    /// the store's answer to a selection lists (its plan's refusal, or nil, when it cannot), then
    /// ``selected(_:storeKeys:)`` and ``stage(_:source:selected:cancellation:)``.
    @discardableResult
    public mutating func stage(_ mutation: Mutation, source: String, storeKeys: (Statement) throws -> [ObjectID]?,
                               cancellation: Cancellation? = nil) throws -> EditStep {
        var chosen: [ObjectID]?
        if let selection = mutation.selection {
            let found: [ObjectID]?
            do { found = try storeKeys(selection) } catch let refusal as PlanRefusal {
                throw PagedEditError("paged mode changes the objects SQL can find over the store; \(refusal) (reopen with a larger --memory-budget)")
            }
            guard let keys = found else {
                throw PagedEditError("paged mode changes the objects SQL can find over the store; this where needs the whole graph (reopen with a larger --memory-budget)")
            }
            chosen = try selected(mutation, storeKeys: keys)
        }
        return try stage(mutation, source: source, selected: chosen, cancellation: cancellation)
    }

    /// Stages a mutation statement: `selected` are the objects its `where` chose (from
    /// ``selected(_:storeKeys:)``; nil for `insert`). The objects, the keys its values name and
    /// the whole store's kinds of the attributes it assigns are read first; then the editor
    /// checks and stages it as over a loaded graph. Returns the step.
    @discardableResult
    public mutating func stage(_ mutation: Mutation, source: String, selected: [ObjectID]?, cancellation: Cancellation? = nil) throws -> EditStep {
        let type = try Compiler(graph: pending.graph).resolveType(mutation.typeName)
        let assigned: [String]
        switch mutation {
        case .update(_, _, let assignments): assigned = assignments.map(\.target.text)
        case .insert(_, let fields): assigned = fields.map(\.0.text)
        case .delete: assigned = []
        }
        if let names = mutation.valueNames,
           let relation = names.first(where: { name in type.relations.contains { $0.name.caseInsensitiveCompare(name) == .orderedSame } }) {
            throw PagedEditError("in paged mode a value reads the object's own attributes; '\(relation)' is a relation (set it with #key)")
        } else if mutation.valueNames == nil {
            throw PagedEditError("in paged mode a value reads the object's own attributes (no @links, variables or SUBQUERY)")
        }
        try include((selected ?? []).map { ObjectIdentity(type: type.name, id: $0) } + namedObjects(mutation, type: type),
                    kindsOf: assigned.map { (type.name.rawValue, $0) })
        if case .insert = mutation, typeKeyMaxima[type.index] == nil {
            typeKeyMaxima[type.index] = try pages.maximumIntegerKey(type: type.index)
        }
        let graph = pending.graph
        let refs = selected.map { keys in keys.compactMap { graph.ref(type: graph.types[type.index], id: $0) } }
        let editor = Editor(graph: graph, storedKeyMaximum: storedKeyMaximum, storedTypeKeyMaxima: typeKeyMaxima)
        let step = try completingDeletions(editor.step(for: mutation, source: source, cancellation: cancellation, objects: refs))
        try refuseCutLinks(step)
        guard !step.edits.isEmpty else { return step }   // nothing to change: nothing staged
        try pending.stage(step)
        if case .insert = mutation { storedKeyMaximum = max(storedKeyMaximum, step.edits.compactMap { edit -> Int64? in
            if case .insert(let o, _) = edit, case .int(let i) = o.id { return i }
            return nil
        }.max() ?? storedKeyMaximum) }
        return step
    }

    /// The objects a mutation's values name by key, read into the base before it is checked: a
    /// relation's targets (by the relation's name or its foreign key's column, of its target
    /// types), and a new object's own key (so that one stored already is found). Other keys are
    /// taken as the mutation's type's (a store whose keys are store-wide reads them whatever the type).
    private func namedObjects(_ mutation: Mutation, type: TypeTable) -> [ObjectIdentity] {
        let graph = pending.base
        var out: [ObjectIdentity] = []
        for (field, keys) in mutation.namedKeysByField where !keys.isEmpty {
            var types = [type.name]
            if let r = type.relation(named: field) {
                let relation = type.relations[r]
                let targets = relation.foreignKey.map { [$0.targetType] } ?? relation.targetTypes
                if !targets.isEmpty { types = targets.map { graph.types[$0].name } }
            }
            for name in types { out += keys.map { ObjectIdentity(type: name, id: $0) } }
        }
        return out
    }

    // MARK: Statements over the staged state

    /// What the pending changes make of a statement's answer over the file.
    enum Adjustment {
        /// They touch nothing the statement reads: the file's answer is the staged one.
        case same
        /// The staged state's answer.
        case adjusted(SourceAnswer)
        /// They touch what it reads and its answer cannot be adjusted exactly.
        case overFile
        /// A sorted or projected query over more objects than are read to sort them here.
        case tooMany
    }

    /// The statement to ask the store for, so that ``staged(_:fileAnswer:)`` can make the staged
    /// answer of `statement`: a `group by` without its clauses (they apply after the counts move).
    /// A query on a touched type's own attributes with clauses or a projection without them (its
    /// objects are found, then sorted and projected here over their staged values).
    public func fileStatement(for statement: Statement) -> Statement {
        guard !pending.isEmpty else { return statement }
        switch statement {
        case .group(var query, let by) where !query.clauses.isEmpty:
            query.clauses = []
            return .group(query, by: by)
        case .query(var query) where (!query.clauses.isEmpty || query.projection != nil) && touchesItsOwnType(statement):
            query.clauses = []
            query.projection = nil
            return .query(query)
        default:
            return statement
        }
    }

    /// True when `statement` reads only its type's own attributes and the changes touch that type.
    private func touchesItsOwnType(_ statement: Statement) -> Bool {
        guard let reach = statement.singleTypeReach,
              let type = pages.catalog.first(where: { $0.name.caseInsensitiveCompare(reach.type.text) == .orderedSame })?.name,
              let table = pending.base.type(named: type),
              !reach.firstNames.contains(where: { name in table.relations.contains { $0.name.caseInsensitiveCompare(name) == .orderedSame } })
        else { return false }
        return pending.changes.touched.contains { Int($0.type) == table.index }
    }

    /// The answer to show for `statement` given `fileAnswer`, the store's answer over the file to
    /// ``fileStatement(for:)``: the staged state's for a count, a query without clauses and a
    /// `group by` whose paths read only their type's own attributes (the count less the touched
    /// objects that passed as stored, plus those that pass as staged; the keys likewise, in key
    /// order as a load lists them; each group's count likewise, then the group's clauses); else
    /// the file's, with `overFile` true when the changes touch what the statement reads
    /// (relations, sorts, projections).
    /// A sorted or projected query whose objects are more than ``statementLimit`` is asked again as
    /// it is (`askAsItIs`) and answered over the file.
    public mutating func staged(_ statement: Statement, fileAnswer: SourceAnswer,
                                askAsItIs: () throws -> SourceAnswer?) throws -> (answer: SourceAnswer, overFile: Bool) {
        // A group asked without its clauses gets them whatever the answer.
        var clauses: [Clause] = []
        if !pending.isEmpty, case .group(let q, _) = statement { clauses = q.clauses }
        func withClauses(_ answer: SourceAnswer) -> SourceAnswer {
            guard !clauses.isEmpty, case .groups(let key, let rows, let total) = answer else { return answer }
            return .groups(key: key, rows: QueryEngine.groupClauses(rows, clauses), total: total)
        }
        switch try adjustment(statement, fileAnswer: fileAnswer) {
        case .same: return (withClauses(fileAnswer), false)
        case .overFile: return (withClauses(fileAnswer), true)
        case .adjusted(let answer): return (answer, false)
        case .tooMany: return (try askAsItIs() ?? fileAnswer, true)
        }
    }

    private mutating func adjustment(_ statement: Statement, fileAnswer: SourceAnswer) throws -> Adjustment {
        guard !pending.isEmpty else { return .same }
        let changes = pending.changes
        let touchedTypes = Set(changes.touched.map { pending.base.types[Int($0.type)].name.rawValue })
        guard let reach = statement.singleTypeReach,
              let type = pages.catalog.first(where: { $0.name.caseInsensitiveCompare(reach.type.text) == .orderedSame })?.name,
              let table = pending.base.type(named: type),
              !reach.firstNames.contains(where: { name in table.relations.contains { $0.name.caseInsensitiveCompare(name) == .orderedSame } }) else {
            // It reads relations (whose targets the changes may delete or change): over the file.
            return .overFile
        }
        // Its own type untouched, and it reads only its own attributes.
        guard touchedTypes.contains(type) else { return .same }
        let predicate: Predicate?
        var group: (by: Path, clauses: [Clause])?
        var query: Query?
        switch statement {
        case .count(_, let p): predicate = p
        case .query(let q): predicate = q.predicate; query = q
        case .group(let q, let by) where q.projection == nil: predicate = q.predicate; group = (by, q.clauses)
        default: return .overFile
        }
        // The kinds over the whole type of what it reads, as the store's answer was compiled with.
        try include([], kindsOf: reach.firstNames.map { (type, $0) })
        let touched = Set(changes.touched.filter { Int($0.type) == table.index }.map { pending.graph.id(of: $0) })
        // The touched objects that pass in `graph`, and how many of them each group's value has.
        let run = { (graph: ObjectGraph) throws -> (Set<ObjectID>, [Value: Int]) in
            let t = graph.types[table.index]
            let engine = QueryEngine(graph: graph)
            let refs = try engine.filter(t, predicate, QueryEngine.Run(compiler: Compiler(graph: graph), cancellation: nil))
                .filter { touched.contains(graph.id(of: $0)) }
            return (Set(refs.map { graph.id(of: $0) }), try group.map { try engine.groupCounts(refs, by: $0.by) } ?? [:])
        }
        // As stored: the base, with the attributes edits add as columns no object holds.
        var declared = ChangeSet(base: pending.base)
        for (t, names) in changes.newAttributes { for name in names { declared.noteAttribute(name, of: t) } }
        let (stored, storedGroups) = try run(pending.base.applying(declared))
        let (now, nowGroups) = try run(pending.graph)
        switch fileAnswer {
        case .groups(let key, let rows, let total):
            guard let group else { return .overFile }
            var counts = Dictionary(rows.map { ($0.key, $0.count) }, uniquingKeysWith: +)
            for (value, n) in storedGroups { counts[value, default: 0] -= n }
            for (value, n) in nowGroups { counts[value, default: 0] += n }
            guard !counts.values.contains(where: { $0 < 0 }) else { return .overFile }
            let moved = QueryEngine.frequencyRows(counts: counts.filter { $0.value > 0 })
            return .adjusted(.groups(key: key, rows: QueryEngine.groupClauses(moved, group.clauses), total: total - stored.count + now.count))
        case .count(let n):
            return .adjusted(.count(n - stored.count + now.count))
        case .objects(let typeName, let keys):
            let kept = (keys.filter { !touched.contains($0) } + now).sorted()
            guard let query, !query.clauses.isEmpty || query.projection != nil else { return .adjusted(.objects(typeName: typeName, keys: kept)) }
            // Sorted, limited or projected over the objects' staged values, by the engine.
            guard kept.count <= Self.statementLimit, let t = pages.catalog.firstIndex(where: { $0.name == type }) else { return .tooMany }
            let stored = try pages.objects(type: t, keys: kept.filter { insertedIdentity($0, of: typeName) == nil })
            // Every name it reads that the store's objects hold, as a column (some of these may not).
            var columns = ChangeSet(base: stored)
            for name in try pages.kinds(type: t, names: Set(reach.firstNames)).keys { columns.noteAttribute(name, of: t) }
            let (graph, _) = overlaid(stored.applying(columns), inserting: Set(kept))
            var asked = query
            asked.predicate = nil
            switch try QueryEngine(graph: graph).run(.query(asked)) {
            case .objects(_, let refs): return .adjusted(.objects(typeName: typeName, keys: refs.map { graph.id(of: $0) }))
            case .projection(let columns, let rows, let refs): return .adjusted(.projection(columns: columns, rows: rows, keys: refs.map { graph.id(of: $0) }))
            default: return .overFile
            }
        default:
            return .overFile
        }
    }

    /// The value of `attribute` (nil: the key) that each object of the type named `typeName` the
    /// changes touch has as stored (nil: a new object) and as staged: what moves a count of the
    /// column over the store (paged `F`) to the rows a view shows (objects marked for deletion
    /// included, as a loaded view shows and counts them).
    public func stagedValues(ofType typeName: String, attribute: String?) -> [(key: ObjectID, stored: Value?, staged: Value)] {
        guard !pending.isEmpty, let type = pending.graph.type(named: typeName), type.name.rawValue == typeName else { return [] }
        var declared = ChangeSet(base: pending.base)
        for (t, names) in pending.changes.newAttributes { for name in names { declared.noteAttribute(name, of: t) } }
        let stored = pending.base.applying(declared), staged = pending.graph
        func value(_ graph: ObjectGraph, _ row: Int) -> Value {
            let table = graph.types[type.index]
            guard let attribute else { return table.ids[row].value }
            return table.attributeIndex[attribute] == nil ? .null : table.value(row: row, named: attribute)
        }
        return pending.changes.touched.filter { Int($0.type) == type.index }.map { ref in
            let row = Int(ref.row)
            return (staged.id(of: ref), pending.changes.isInserted(ref) ? nil : value(stored, row), value(staged, row))
        }
    }

    /// The attributes staged edits name that the store's types do not have, by type name: a
    /// statement over the file declares them (``QuerySource/answer(_:declaring:isCancelled:)``).
    public var declaredAttributes: [String: Set<String>] {
        var out: [String: Set<String>] = [:]
        for (t, names) in pending.changes.newAttributes { out[pending.base.types[t].name.rawValue, default: []].formUnion(names) }
        return out
    }

    /// Said after an answer over the file when pending changes touch what it reads.
    public static let overFileNote = "(answered over the file as written: the pending changes are not in it; .commit writes them)"

    // MARK: What views show

    /// The identity of `key` when it is an object staged as new (of the type named `typeName`,
    /// or of any type when it is nil: a store whose keys are store-wide).
    public func insertedIdentity(_ key: ObjectID, of typeName: String?) -> ObjectIdentity? {
        for (t, keys) in pending.changes.inserted where keys.contains(key) {
            let name = pending.base.types[t].name
            if typeName == nil || name.rawValue == typeName { return ObjectIdentity(type: name, id: key) }
        }
        return nil
    }

    /// The objects staged as new, of the type named `typeName`, in the order they were added.
    public func inserted(ofType typeName: String) -> [ObjectIdentity] {
        guard let t = pending.base.type(named: typeName), t.name.rawValue == typeName else { return [] }
        return (pending.changes.inserted[t.index] ?? []).map { ObjectIdentity(type: t.name, id: $0) }
    }

    /// The store's objects `keys` of the type named `typeName` (nil: keys of several types, in a
    /// store whose keys are store-wide) as the staged changes leave them, then the objects
    /// `inserted` (staged as new): a window of the store (with the targets of relations edits
    /// set on them) and the active edits applied to it. Deleted objects stay, not live, as in a
    /// loaded view.
    public func window(keys: [ObjectID], of typeName: String?, inserted: [ObjectIdentity] = []) throws -> ObjectWindow {
        let edits = pending.active.flatMap(\.edits)
        guard !edits.isEmpty else { return try pages.window(keys: keys, of: typeName) }
        let new = insertedObjects
        // The objects shown: by identity where the type is known, else by key alone.
        let type = typeName.flatMap { name in pending.base.type(named: name).flatMap { $0.name.rawValue == name ? $0.name : nil } }
        func isShown(_ o: ObjectIdentity) -> Bool { type.map { o.type == $0 && keySet.contains(o.id) } ?? keySet.contains(o.id) }
        let keySet = Set(keys)
        let insertedSet = Set(inserted)
        var extra: [ObjectIdentity] = []
        var seen = Set<ObjectIdentity>()
        for edit in edits where isShown(edit.object) || insertedSet.contains(edit.object) {
            for target in targets(of: edit) where !new.contains(target) && seen.insert(target).inserted { extra.append(target) }
        }
        let read: ObjectWindow
        if let type {
            read = try pages.window(objects: keys.map { ObjectIdentity(type: type, id: $0) } + extra)
        } else {
            read = try pages.window(keys: keys + extra.map(\.id))
        }
        let (graph, changes) = overlaid(read.graph)
        let refs = Array(read.refs.prefix(keys.count)) + inserted.map { changes.row(of: $0) }
        return ObjectWindow(graph: graph, refs: refs, cut: read.cut, changes: changes)
    }

    /// The objects an edit makes its object's relations point at: a relation's new targets, and
    /// the objects a foreign key's new value names by key.
    private func targets(of edit: Edit) -> [ObjectIdentity] {
        let graph = pending.base
        func named(_ type: TypeTable?, _ attribute: String, _ value: Value) -> [ObjectIdentity] {
            guard let type, let fk = type.relations.lazy.compactMap(\.foreignKey).first(where: { $0.attribute == attribute && $0.targetAttribute == nil }),
                  let key = ObjectID(keyValue: value) else { return [] }
            return [ObjectIdentity(type: graph.types[fk.targetType].name, id: key)]
        }
        func type(of o: ObjectIdentity) -> TypeTable? { graph.type(named: o.type.rawValue).flatMap { $0.name == o.type ? $0 : nil } }
        switch edit {
        case .link(_, _, let targets): return targets
        case .set(let o, let attribute, let value): return named(type(of: o), attribute, value)
        case .insert(let o, let values): return values.flatMap { named(type(of: o), $0.key, $0.value) }
        case .remove: return []
        }
    }

    /// The objects `keys` of the type named `typeName` (nil: of several types, where keys are
    /// store-wide), stored or staged as new, in that order, as the staged changes leave them (a
    /// statement's answer over the staged state).
    public func window(listing keys: [ObjectID], of typeName: String?) throws -> ObjectWindow {
        let new = keys.map { insertedIdentity($0, of: typeName) }
        let stored = zip(keys, new).filter { $0.1 == nil }.map(\.0)
        let read = try window(keys: stored, of: typeName, inserted: new.compactMap { $0 })
        var storedRefs = read.refs[..<stored.count].makeIterator(), newRefs = read.refs[stored.count...].makeIterator()
        let refs = new.map { $0 == nil ? storedRefs.next() ?? nil : newRefs.next() ?? nil }
        return ObjectWindow(graph: read.graph, refs: refs, cut: read.cut, changes: read.changes)
    }

    /// `graph` (some objects of the store, as it holds them) with the active edits applied to
    /// the objects it holds, every new object added, and every attribute an edit names as a
    /// column: what a loaded session's staged graph holds of those objects. Also the change
    /// set applied (which rows are added, changed, marked for deletion).
    /// `inserting`, when given, limits the new objects added to those keys.
    public func overlaid(_ graph: ObjectGraph, inserting: Set<ObjectID>? = nil) -> (graph: ObjectGraph, changes: ChangeSet) {
        var changes = ChangeSet(base: graph)
        for edit in pending.active.flatMap(\.edits) {
            if case .insert(let o, _) = edit, inserting.map({ !$0.contains(o.id) }) ?? false { continue }
            if case .insert = edit {} else if changes.row(of: edit.object) == nil {
                // Not in this graph: only the column it names.
                if case .set(let o, let attribute, _) = edit, let t = graph.type(named: o.type.rawValue), t.name == o.type {
                    changes.noteAttribute(attribute, of: t.index)
                }
                continue
            }
            try? changes.apply(edit)
        }
        return (graph.applying(changes), changes)
    }
}

/// Why paged mode did not stage an edit, said as it is.
public struct PagedEditError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The host of a paged session: commits as ``SessionHost`` does (its `commit` returns the new
/// edit base's empty graph), then hands over the store as the commit left it.
public protocol PagedSessionHost: SessionHost {
    /// The store as it is now (after a commit or ``reopen()``, the file's new state), and what
    /// answers statements over it.
    var pagedStore: (pages: PageSource, querySource: (any QuerySource)?) { get }
    /// Opens the store again as the file is now (`.reload`, after another process wrote).
    func reopen() throws
}

extension PagedSessionHost {
    /// A store over the memory budget is never held whole, so never compared whole.
    public func read(path: String, progress: ProgressReport?) throws -> ObjectGraph {
        throw PagedEditError("the store is over the memory budget: comparing it whole needs a larger --memory-budget (or `loupe diff`, which reads both stores a page at a time)")
    }
}
