import Foundation

/// One primitive change to a graph, as staged: objects are named by identity (type and key), so
/// that an edit means the same thing on the graph it was made on, on the staged graphs built on
/// it, and on the graph reloaded from the file after another process wrote.
public enum Edit: Sendable, Equatable {
    /// Sets an attribute (by name; a name the type does not have yet adds it). Null removes it
    /// from a schemaless document and stores NULL in a column.
    case set(ObjectIdentity, attribute: String, value: Value)
    /// Adds an object of a type under a key, with attribute values.
    case insert(ObjectIdentity, values: [String: Value])
    /// Deletes an object (it stays as a tombstone row until the changes are committed or dropped).
    case remove(ObjectIdentity)
    /// Replaces the targets of one object's relation (Persist's relations; a foreign key's
    /// relation is changed by setting its column).
    case link(ObjectIdentity, relation: String, targets: [ObjectIdentity])

    /// The object the edit changes.
    public var object: ObjectIdentity {
        switch self {
        case .set(let o, _, _), .insert(let o, _), .remove(let o), .link(let o, _, _): return o
        }
    }

    public static func == (a: Edit, b: Edit) -> Bool {
        switch (a, b) {
        case let (.set(x, p, v), .set(y, q, w)): return x == y && p == q && v == w
        case let (.insert(x, v), .insert(y, w)): return x == y && v == w
        case let (.remove(x), .remove(y)): return x == y
        case let (.link(x, r, t), .link(y, s, u)): return x == y && r == s && t == u
        default: return false
        }
    }
}

/// One user action (a statement, a key press): its edits are staged, undone and redone together.
public struct EditStep: Sendable {
    /// What the user did, as a statement of the language (`update Book where id == 7 set …`).
    public let label: String
    /// The primitive changes, in order.
    public let edits: [Edit]
    /// What the action does beyond what it names, said when it is staged (a deletion's
    /// cascades and the links it cuts); nil when nothing.
    public let effects: String?
    /// For a deletion, the objects the action named (the others it deletes are cascades).
    public let named: [ObjectIdentity]
    /// How many objects the action touches.
    public var objectCount: Int { Set(edits.map(\.object)).count }

    public init(label: String, edits: [Edit], effects: String? = nil, named: [ObjectIdentity] = []) {
        self.label = label
        self.edits = edits
        self.effects = effects
        self.named = named
    }
}

/// The staged changes of a session over one base graph: steps in order, and a cursor for undo and
/// redo. The staged graph is the base with the active steps applied (``graph``); nothing is
/// written until the host commits them.
public struct PendingChanges: Sendable {
    /// The graph as loaded from the file.
    public let base: ObjectGraph
    /// Every step staged, undone ones included (after the cursor).
    public private(set) var steps: [EditStep] = []
    /// How many steps are active; the ones after it can be redone.
    public private(set) var cursor = 0
    /// The active steps folded into one change set.
    public private(set) var changes: ChangeSet
    /// The base with the active steps applied.
    public private(set) var graph: ObjectGraph
    /// A new value at every change of the staged state: what was planned for one revision
    /// (the writes a preview read from the file) holds for it and for no other.
    public private(set) var revision = UUID()

    public init(base: ObjectGraph) {
        self.base = base
        changes = ChangeSet(base: base)
        graph = base
    }

    /// The steps that are staged now (undone ones excluded).
    public var active: ArraySlice<EditStep> { steps[..<cursor] }
    /// True when something is staged.
    public var isEmpty: Bool { cursor == 0 }
    /// True when an undone step can be redone.
    public var canRedo: Bool { cursor < steps.count }

    /// Stages a step (dropping the steps undone before it) and rebuilds the staged graph.
    public mutating func stage(_ step: EditStep) throws {
        var next = changes
        for edit in step.edits { try next.apply(edit) }
        steps.removeSubrange(cursor...)
        steps.append(step)
        cursor = steps.count
        changes = next
        graph = base.applying(changes)
        revision = UUID()
    }

    /// Unstages the last active step; returns it.
    @discardableResult
    public mutating func undo() -> EditStep? {
        guard cursor > 0 else { return nil }
        cursor -= 1
        refold()
        return steps[cursor]
    }

    /// Restages the step undone last; returns it.
    @discardableResult
    public mutating func redo() -> EditStep? {
        guard cursor < steps.count else { return nil }
        cursor += 1
        refold()
        return steps[cursor - 1]
    }

    /// Drops every staged step.
    public mutating func rollback() {
        steps = []
        cursor = 0
        refold()
    }

    private mutating func refold() {
        revision = UUID()
        var folded = ChangeSet(base: base)
        for step in active { for edit in step.edits { try? folded.apply(edit) } }   // each applied once already
        changes = folded
        graph = base.applying(changes)
    }

    /// The same steps without the edits `keep` refuses (by the index of the step among
    /// ``steps`` and of the edit in it): a step left with no edits is dropped, and the steps
    /// undone stay undone. What a user taking another process's value over their own keeps.
    public func keeping(_ keep: (_ step: Int, _ edit: Int) -> Bool) -> PendingChanges {
        var kept = PendingChanges(base: base)
        var active = 0
        for (i, step) in steps.enumerated() {
            let edits = step.edits.indices.filter { keep(i, $0) }.map { step.edits[$0] }
            guard !edits.isEmpty, (try? kept.stage(EditStep(label: step.label, edits: edits))) != nil else { continue }
            if i < cursor { active = kept.cursor }
        }
        while kept.cursor > active { kept.cursor -= 1 }
        if kept.cursor != kept.steps.count { kept.refold() }
        return kept
    }

    /// The same active steps staged over another base (the file reloaded after another process
    /// wrote; in paged mode, a base holding more objects): the steps whose objects still exist
    /// are kept; the others are returned, unstaged. Undone steps that still apply stay undone
    /// (redo brings them back); the others are dropped with them, unreported.
    public func rebased(on newBase: ObjectGraph) -> (PendingChanges, dropped: [EditStep]) {
        var rebased = PendingChanges(base: newBase)
        var dropped: [EditStep] = []
        for step in active {
            do { try rebased.stage(step) } catch { dropped.append(step) }
        }
        let kept = rebased.cursor
        for step in steps[cursor...] { try? rebased.stage(step) }
        while rebased.cursor > kept { rebased.cursor -= 1 }
        if rebased.cursor != rebased.steps.count { rebased.refold() }
        return (rebased, dropped)
    }
}

/// The failure to apply an edit: the object it names is not in the graph (deleted since), or a
/// key is taken. A value with a fixed-shape message, like every error of Loupe.
public struct EditError: Error, Equatable, Sendable, CustomStringConvertible {
    public let object: ObjectIdentity
    public let reason: String
    public init(_ object: ObjectIdentity, _ reason: String) {
        self.object = object
        self.reason = reason
    }
    public var description: String { "\(object): \(reason)" }
}

/// What a commit changed beyond its objects (``ChangeSet/reach``): what a reader that kept
/// knowledge of the whole store (kinds of attributes, its relations) must read again.
public struct ChangeReach: Sendable, Equatable {
    /// Per type name, the attributes whose values changed; nil: any (objects added or deleted).
    public let attributes: [String: Set<String>?]
    /// True when relation rows changed.
    public let relations: Bool

    public init(attributes: [String: Set<String>?], relations: Bool) {
        self.attributes = attributes
        self.relations = relations
    }

    /// True when knowledge of attribute `name` of type `type` still holds.
    public func keeps(type: String, attribute name: String) -> Bool {
        guard let changed = attributes[type] else { return true }
        guard let names = changed else { return false }
        return !names.contains(name)
    }
}

/// Staged changes folded by object: what each row's cells, relations and life became. Rows of
/// inserted objects come after the base's rows, in the order they were inserted.
public struct ChangeSet: Sendable {
    public let base: ObjectGraph
    /// Per type: attribute name → row → new value.
    public private(set) var cells: [Int: [String: [Int: Value]]] = [:]
    /// Per type: the keys of inserted objects, in row order after the base's rows.
    public private(set) var inserted: [Int: [ObjectID]] = [:]
    /// Per type: rows deleted (base rows and inserted ones alike).
    public private(set) var removed: [Int: RowSet] = [:]
    /// Per type: relation name → row → new targets.
    public private(set) var links: [Int: [String: [Int: [ObjectRef]]]] = [:]
    /// Attributes named by edits that the base's types do not have, per type, in order of first use.
    public private(set) var newAttributes: [Int: [String]] = [:]
    /// Per type: the row of each inserted key (a key index for what the base's index lacks).
    private var insertedRows: [Int: [ObjectID: Int]] = [:]

    public init(base: ObjectGraph) { self.base = base }

    /// True when nothing is changed.
    public var isEmpty: Bool { cells.isEmpty && inserted.isEmpty && removed.isEmpty && links.isEmpty }

    /// How many objects the changes add, change and delete.
    public var counts: (added: Int, changed: Int, deleted: Int) {
        var changed = Set<ObjectRef>()
        for (t, byAttribute) in cells { for rows in byAttribute.values { for row in rows.keys { changed.insert(ObjectRef(type: t, row: row)) } } }
        for (t, byRelation) in links { for rows in byRelation.values { for row in rows.keys { changed.insert(ObjectRef(type: t, row: row)) } } }
        var added = 0, deleted = 0
        for (t, keys) in inserted {
            let first = base.types[t].count
            for i in keys.indices where !(removed[t]?.contains(first + i) ?? false) { added += 1 }
        }
        for (t, rows) in removed { for row in rows.rows where row < base.types[t].count { deleted += 1 } }
        let changedOnly = changed.filter { ref in
            let t = Int(ref.type), row = Int(ref.row)
            return row < base.types[t].count && !(removed[t]?.contains(row) ?? false)
        }
        return (added, changedOnly.count, deleted)
    }

    /// The row an object has in the staged graph (inserted objects included), or nil.
    public func row(of identity: ObjectIdentity) -> ObjectRef? {
        guard let t = base.type(named: identity.type.rawValue), t.name == identity.type else { return nil }
        if let row = insertedRows[t.index]?[identity.id] { return ObjectRef(type: t.index, row: row) }
        guard let row = t.row(for: identity.id) else { return nil }
        return ObjectRef(type: t.index, row: row)
    }

    /// The row of a live object (not deleted by an earlier edit).
    private func liveRow(of identity: ObjectIdentity) throws -> ObjectRef {
        guard let ref = row(of: identity) else { throw EditError(identity, "no such object") }
        if removed[Int(ref.type)]?.contains(Int(ref.row)) ?? false { throw EditError(identity, "it is deleted") }
        return ref
    }

    /// Adds one edit. Fails (and changes nothing) when the edit names an object that does not
    /// exist or is deleted, or inserts a key that is taken.
    public mutating func apply(_ edit: Edit) throws {
        switch edit {
        case .set(let identity, let attribute, let value):
            let ref = try liveRow(of: identity)
            let t = Int(ref.type)
            noteAttribute(attribute, of: t)
            cells[t, default: [:]][attribute, default: [:]][Int(ref.row)] = value
        case .insert(let identity, let values):
            guard let table = base.type(named: identity.type.rawValue), table.name == identity.type else {
                throw EditError(identity, "no such type")
            }
            let t = table.index
            if let existing = row(of: identity), !(removed[t]?.contains(Int(existing.row)) ?? false) {
                throw EditError(identity, "the key is taken")
            }
            let row = table.count + (inserted[t]?.count ?? 0)
            inserted[t, default: []].append(identity.id)
            insertedRows[t, default: [:]][identity.id] = row
            for (attribute, value) in values.sorted(by: { $0.key < $1.key }) {
                noteAttribute(attribute, of: t)
                cells[t, default: [:]][attribute, default: [:]][row] = value
            }
        case .remove(let identity):
            let ref = try liveRow(of: identity)
            removed[Int(ref.type), default: RowSet()].insert(Int(ref.row))
        case .link(let identity, let relation, let targets):
            let ref = try liveRow(of: identity)
            let resolved = try targets.map { try liveRow(of: $0) }
            links[Int(ref.type), default: [:]][relation, default: [:]][Int(ref.row)] = resolved
        }
    }

    /// Notes an attribute an edit names on type `t` (a column the staged graph adds when the
    /// type does not have it), also for an edit this change set does not hold (an object that
    /// is not in its base: paged mode's windows hold some objects of a store).
    public mutating func noteAttribute(_ name: String, of t: Int) {
        if base.types[t].attributeIndex[name] == nil, !(newAttributes[t]?.contains(name) ?? false) {
            newAttributes[t, default: []].append(name)
        }
    }

    /// What writing these changes may change of what is known of the store beyond the objects:
    /// per type name, the attributes whose values change (nil: any, where objects are added or
    /// deleted), and whether any relation row changes (links set, objects deleted).
    public var reach: ChangeReach {
        var attributes: [String: Set<String>?] = [:]
        for (t, byAttribute) in cells { attributes[base.types[t].name.rawValue] = Set(byAttribute.keys) }
        for t in Set(inserted.keys).union(removed.keys) { attributes[base.types[t].name.rawValue] = .some(nil) }
        return ChangeReach(attributes: attributes, relations: !links.isEmpty || !removed.isEmpty)
    }

    /// The staged value of a cell, if an edit set it.
    public func value(_ ref: ObjectRef, attribute: String) -> Value? {
        cells[Int(ref.type)]?[attribute]?[Int(ref.row)]
    }

    /// True when an edit set this cell.
    public func isChanged(_ ref: ObjectRef, attribute: String) -> Bool { value(ref, attribute: attribute) != nil }

    /// The attributes edits changed on this object (for an inserted one, those it was given), in
    /// no particular order: a look-up per changed attribute, not per attribute of the type.
    public func changedAttributes(of ref: ObjectRef) -> [String] {
        guard let byAttribute = cells[Int(ref.type)] else { return [] }
        return byAttribute.compactMap { $0.value[Int(ref.row)] != nil ? $0.key : nil }
    }

    /// The relations edits changed on this object, in no particular order.
    public func relinkedRelations(of ref: ObjectRef) -> [String] {
        guard let byRelation = links[Int(ref.type)] else { return [] }
        return byRelation.compactMap { $0.value[Int(ref.row)] != nil ? $0.key : nil }
    }

    /// True when an edit changed this relation of this object.
    public func isRelinked(_ ref: ObjectRef, relation: String) -> Bool { links[Int(ref.type)]?[relation]?[Int(ref.row)] != nil }

    /// True for a row that was inserted.
    public func isInserted(_ ref: ObjectRef) -> Bool { Int(ref.row) >= base.types[Int(ref.type)].count }

    /// True for a row that was deleted.
    public func isRemoved(_ ref: ObjectRef) -> Bool { removed[Int(ref.type)]?.contains(Int(ref.row)) ?? false }

    /// Every object the changes touch (set, inserted, deleted or relinked), by row, in type and row order.
    public var touched: [ObjectRef] {
        var out = Set<ObjectRef>()
        for (t, byAttribute) in cells { for rows in byAttribute.values { for row in rows.keys { out.insert(ObjectRef(type: t, row: row)) } } }
        for (t, byRelation) in links { for rows in byRelation.values { for row in rows.keys { out.insert(ObjectRef(type: t, row: row)) } } }
        for (t, keys) in inserted { for i in keys.indices { out.insert(ObjectRef(type: t, row: base.types[t].count + i)) } }
        for (t, rows) in removed { for row in rows.rows { out.insert(ObjectRef(type: t, row: row)) } }
        return out.sorted()
    }
}

extension ObjectGraph {
    /// This graph with `changes` applied: a new graph sharing every column and relation the
    /// changes do not touch. Inserted objects are appended to their types' rows; deleted ones stay
    /// as rows that are not live (``TypeTable/removed``), so handles keep their meaning. A
    /// foreign key's relation is recomputed from its column; a relation loses its edges to deleted
    /// objects; backlinks are rebuilt for the types whose incoming edges changed.
    public func applying(_ changes: ChangeSet) -> ObjectGraph {
        guard !changes.isEmpty || !changes.newAttributes.isEmpty else { return self }
        let n = types.count
        var ids = types.map(\.ids)
        var rowCountChanged = Set<Int>()
        for (t, keys) in changes.inserted where !keys.isEmpty {
            ids[t].append(contentsOf: keys)
            rowCountChanged.insert(t)
        }
        var removed = types.map(\.removed)
        for (t, rows) in changes.removed { for row in rows.rows { removed[t].insert(row) } }
        let typesWithRemovals = Set(changes.removed.keys)

        // Attributes: copy only the columns that change, and extend all for inserted rows.
        var attributes = types.map(\.attributes)
        for t in 0..<n {
            let extra = ids[t].count - types[t].count
            let changedCells = changes.cells[t] ?? [:]
            guard extra > 0 || !changedCells.isEmpty || changes.newAttributes[t] != nil else { continue }
            for name in changes.newAttributes[t] ?? [] {
                attributes[t].append(AttributeColumn(name: name, values: ColumnValues(Array(repeating: .null, count: types[t].count)), storage: nil))
            }
            for a in attributes[t].indices {
                let name = attributes[t][a].name
                let edits = changedCells[name]
                if extra == 0 && edits == nil { continue }
                var column = attributes[t][a]
                if extra > 0 { column.values.append(contentsOf: repeatElement(.null, count: extra)) }
                if let edits {
                    for (row, value) in edits { column.values[row] = value }
                    // What schema inference knows of the column, recomputed: a declared column is
                    // present in every row; a document has a key only when it is not null.
                    var kinds: ValueKind = []
                    var present = 0
                    for v in column.values { kinds.insert(v.kind); if !v.isNull { present += 1 } }
                    column.kinds = kinds
                    column.presentCount = column.storage != nil ? ids[t].count : present
                } else if column.storage != nil {
                    column.presentCount = ids[t].count
                }
                column.values.compact()
                attributes[t][a] = column
            }
        }

        // Relations: a foreign key's from its (staged) column; the others from their edges, with
        // edits and edges to deleted objects applied.
        var relations = types.map(\.relations)
        var relationChanged = Set<[Int]>()
        for t in 0..<n {
            for (r, relation) in types[t].relations.enumerated() {
                if let fk = relation.foreignKey {
                    let columnChanged = changes.cells[t]?[fk.attribute] != nil
                    let targetChanged = rowCountChanged.contains(fk.targetType) || typesWithRemovals.contains(fk.targetType)
                        || (fk.targetAttribute.map { changes.cells[fk.targetType]?[$0] != nil } ?? false)
                    guard columnChanged || targetChanged || rowCountChanged.contains(t) || typesWithRemovals.contains(t) else { continue }
                    guard let a = attributes[t].firstIndex(where: { $0.name == fk.attribute }) else { continue }
                    let target = fk.targetType
                    let index: KeyIndex
                    if let name = fk.targetAttribute, let ta = attributes[target].firstIndex(where: { $0.name == name }) {
                        index = KeyIndex(values: attributes[target][ta].values, removed: removed[target])
                    } else {
                        index = KeyIndex(ids: ids[target], removed: removed[target])
                    }
                    var from: [Int32] = [], to: [ObjectRef] = []
                    for (row, v) in attributes[t][a].values.enumerated() where !v.isNull && !removed[t].contains(row) {
                        if let targetRow = index.row(for: v) { from.append(Int32(row)); to.append(ObjectRef(type: target, row: targetRow)) }
                    }
                    relations[t][r] = RelationColumn.build(name: relation.name, aliases: relation.aliases, foreignKey: fk, rowCount: ids[t].count,
                                                           from: from, to: to, declaredTargets: relation.targetTypes, declaredToMany: relation.isToMany,
                                    isInferred: relation.isInferred)
                    relationChanged.insert([t, r])
                } else if let key = relation.compositeKey {
                    let target = key.targetType
                    let changed = key.columns.contains { changes.cells[t]?[$0] != nil } || key.targetColumns.contains { changes.cells[target]?[$0] != nil }
                    guard changed || rowCountChanged.contains(target) || typesWithRemovals.contains(target) || rowCountChanged.contains(t) || typesWithRemovals.contains(t) else { continue }
                    func columns(_ names: [String], of type: Int) -> [[Value]]? {
                        let found = names.compactMap { name in attributes[type].first { $0.name == name }.map { Array($0.values) } }
                        return found.count == names.count ? found : nil
                    }
                    guard let source = columns(key.columns, of: t), let targetValues = columns(key.targetColumns, of: target) else { continue }
                    let (from, to) = CompositeKey.edges(source: source, sourceRemoved: removed[t], target: targetValues, targetRemoved: removed[target], targetType: target)
                    relations[t][r] = RelationColumn.build(name: relation.name, aliases: relation.aliases, foreignKey: nil, rowCount: ids[t].count,
                                                           from: from, to: to, declaredTargets: relation.targetTypes, declaredToMany: relation.isToMany,
                                                           compositeKey: key)
                    relationChanged.insert([t, r])
                } else {
                    let edits = changes.links[t]?[relation.name]
                    let touchesRemoved = !typesWithRemovals.isDisjoint(with: relation.targetTypes) || typesWithRemovals.contains(t)
                    guard edits != nil || touchesRemoved || rowCountChanged.contains(t) else { continue }
                    relations[t][r] = rebuilt(relation, rows: ids[t].count, edits: edits ?? [:], removed: removed, sourceRemoved: removed[t])
                    relationChanged.insert([t, r])
                }
            }
            // Relations first named by an edit.
            for (name, edits) in changes.links[t] ?? [:] where !types[t].relations.contains(where: { $0.name == name }) {
                let empty = RelationColumn(name: name, aliases: [], foreignKey: nil, offsets: Array(repeating: 0, count: types[t].count + 1),
                                           targets: [], targetTypes: [], isToMany: false)
                relations[t].append(rebuilt(empty, rows: ids[t].count, edits: edits, removed: removed, sourceRemoved: removed[t]))
                relationChanged.insert([t, relations[t].count - 1])
            }
        }

        // Backlinks: rebuilt for every type a changed relation points into, or whose rows changed.
        var affected = rowCountChanged
        for key in relationChanged { affected.formUnion(relations[key[0]][key[1]].targetTypes) }
        for key in relationChanged { affected.formUnion(types[key[0]].relations.indices.contains(key[1]) ? types[key[0]].relations[key[1]].targetTypes : []) }
        var backlinks = types.map(\.backlinks)
        if !affected.isEmpty {
            let rebuiltBacklinks = GraphBuilder.backlinks(relationsByType: relations, rowCounts: ids.map(\.count))
            for t in affected { backlinks[t] = rebuiltBacklinks[t] }
        }

        var tables = types
        for t in 0..<n {
            let touched = ids[t].count != types[t].count || removed[t] != types[t].removed || attributes[t].count != types[t].attributes.count
                || changes.cells[t] != nil || relationChanged.contains { $0[0] == t } || affected.contains(t)
            guard touched else { continue }
            tables[t] = types[t].replacing(ids: ids[t], attributes: attributes[t], relations: relations[t], backlinks: backlinks[t], removed: removed[t])
        }
        return ObjectGraph(types: tables, formatName: formatName)
    }

    /// The same graph with the kinds `kinds` gives (by type name, then attribute name) added to
    /// those attributes' kinds: what a graph holding some objects of a store knows of what the
    /// whole store holds (paged mode's edits are checked against it, as a load's are).
    public func addingKinds(_ kinds: [String: [String: ValueKind]]) -> ObjectGraph {
        guard !kinds.isEmpty else { return self }
        return ObjectGraph(types: types.map { t in
            guard let known = kinds[t.name.rawValue] else { return t }
            var attributes = t.attributes
            for i in attributes.indices { if let k = known[attributes[i].name] { attributes[i].kinds.formUnion(k) } }
            return t.replacing(attributes: attributes)
        }, formatName: formatName)
    }

    /// The same graph under another format name, every type read-only for `reason` (a store
    /// read through a format whose writes Loupe does not make); types keep their own reasons
    /// when `reason` is nil.
    public func readOnly(because reason: String?, formatName: String) -> ObjectGraph {
        ObjectGraph(types: types.map { $0.replacing(readOnlyReason: $0.readOnlyReason ?? reason) }, formatName: formatName)
    }

    /// A relation without a foreign key rebuilt row by row: each row's edited targets or its
    /// stored ones, without deleted sources or targets.
    private func rebuilt(_ relation: RelationColumn, rows n: Int, edits: [Int: [ObjectRef]], removed: [RowSet], sourceRemoved: RowSet) -> RelationColumn {
        var from: [Int32] = [], to: [ObjectRef] = []
        from.reserveCapacity(relation.targets.count)
        to.reserveCapacity(relation.targets.count)
        let stored = relation.offsets.count - 1
        for row in 0..<n where !sourceRemoved.contains(row) {
            let targets: [ObjectRef] = edits[row] ?? (row < stored ? Array(relation.targets(of: row)) : [])
            for target in targets where !removed[Int(target.type)].contains(Int(target.row)) {
                from.append(Int32(row))
                to.append(target)
            }
        }
        return RelationColumn.build(name: relation.name, aliases: relation.aliases, foreignKey: relation.foreignKey, rowCount: n,
                                    from: from, to: to, declaredTargets: relation.targetTypes, declaredToMany: relation.isToMany,
                                    isInferred: relation.isInferred)
    }
}
