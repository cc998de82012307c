import Foundation

/// Builds an ``ObjectGraph`` from what a store adapter reads: types, objects in store order,
/// attribute values, and relation edges in stored order. Relations are turned into compressed
/// adjacency tables, and their reverse (backlinks), once, in ``finish()``.
///
/// A builder is used from one thread; the finished graph is immutable and shared.
public final class GraphBuilder {
    private var drafts: [TableDraft] = []
    private var tableIndexByName: [String: Int] = [:]
    private let formatName: String

    /// A type under construction.
    private struct TableDraft {
        var name: String
        var readOnlyReason: String?
        var keyPolicy: KeyPolicy
        var keyFloor: Int64 = 0
        var ids: [ObjectID] = []
        var attributes: [AttributeColumn] = []
        var attributeIndex: [String: Int] = [:]
        var relations: [RelationDraft] = []
        var supertype: Int?
        var notes: [String] = []
        var fullText: FullTextSearch?
    }

    /// A relation under construction: its description and its edges in the order added.
    private struct RelationDraft {
        var name: String
        var aliases: [String]
        var foreignKey: ForeignKey?
        var declaredToMany: Bool
        var declaredTargets: [Int]
        var isInferred = false
        var compositeKey: CompositeKey?
        var from: [Int32] = []
        var to: [ObjectRef] = []
    }

    /// Starts an empty graph for a file of the given format.
    public init(formatName: String) { self.formatName = formatName }

    /// Makes type `type` searchable with `MATCH` (a full-text table).
    public func setFullText(_ search: FullTextSearch, type: Int) { drafts[type].fullText = search }

    /// The index of the type named `name`, created (empty) on first mention. A `readOnlyReason`
    /// marks types Loupe lists and queries but does not edit (views, formats it cannot write).
    @discardableResult
    public func type(_ name: String, readOnlyReason: String? = nil, keyPolicy: KeyPolicy = .globalInteger) -> Int {
        if let i = tableIndexByName[name] { return i }
        let i = drafts.count
        drafts.append(TableDraft(name: name, readOnlyReason: readOnlyReason, keyPolicy: keyPolicy))
        tableIndexByName[name] = i
        return i
    }

    /// Makes `type` inherit from `supertype`: a query on the supertype then includes its objects.
    public func setSupertype(_ supertype: Int, of type: Int) {
        precondition(supertype != type, "a type cannot inherit from itself")
        drafts[type].supertype = supertype
    }

    /// Sets the largest key the store has handed out for `type` (``TypeTable/keyFloor``).
    public func setKeyFloor(_ floor: Int64, type: Int) { drafts[type].keyFloor = floor }

    /// Adds a note on how `type` was read (`schema` shows it).
    public func note(_ text: String, type: Int) { drafts[type].notes.append(text) }

    /// Marks a relation as found from names and values rather than declared by the store.
    public func markInferred(relation: Int, of type: Int) { drafts[type].relations[relation].isInferred = true }

    /// Marks a relation as coming from a composite foreign key (``CompositeKey``).
    public func setCompositeKey(_ key: CompositeKey, relation: Int, of type: Int) { drafts[type].relations[relation].compositeKey = key }

    /// The number of types so far.
    public var typeCount: Int { drafts.count }

    /// The name of the type at `index`.
    public func typeName(_ index: Int) -> String { drafts[index].name }

    /// The index of the type named exactly `name`, if any.
    public func existingType(_ name: String) -> Int? { tableIndexByName[name] }

    /// How `type`'s objects are keyed.
    public func keyPolicy(of type: Int) -> KeyPolicy { drafts[type].keyPolicy }

    /// The keys of `type`'s objects so far, in row order.
    public func ids(of type: Int) -> [ObjectID] { drafts[type].ids }

    /// The number of objects added to `type` so far.
    public func count(of type: Int) -> Int { drafts[type].ids.count }

    /// The names of the relations of `type` so far.
    public func relationNames(of type: Int) -> Set<String> { Set(drafts[type].relations.map(\.name)) }

    /// Reserves room for `n` more objects of `type`.
    public func reserve(_ n: Int, of type: Int) {
        drafts[type].ids.reserveCapacity(drafts[type].ids.count + n)
    }

    /// Adds an object at the end of `type`'s store order and returns its handle.
    @discardableResult
    public func addObject(type: Int, id: ObjectID) -> ObjectRef {
        let row = drafts[type].ids.count
        drafts[type].ids.append(id)
        for a in drafts[type].attributes.indices { drafts[type].attributes[a].values.append(.null) }
        return ObjectRef(type: type, row: row)
    }

    /// Adds objects at the end of `type`'s store order, in the order given.
    public func addObjects(type: Int, ids: [ObjectID]) {
        drafts[type].ids.append(contentsOf: ids)
        for a in drafts[type].attributes.indices {
            drafts[type].attributes[a].values.append(contentsOf: repeatElement(Value.null, count: ids.count))
        }
    }

    /// The position of attribute `name` on `type`, created on first mention (earlier rows get null).
    public func attribute(_ name: String, of type: Int, storage: ColumnStorage? = nil) -> Int {
        if let a = drafts[type].attributeIndex[name] { return a }
        let a = drafts[type].attributes.count
        drafts[type].attributes.append(AttributeColumn(name: name, values: ColumnValues(Array(repeating: .null, count: drafts[type].ids.count)),
                                                       storage: storage))
        drafts[type].attributeIndex[name] = a
        return a
    }

    /// Replaces what the store declares about an attribute (a reader that learns more while reading).
    public func setStorage(_ storage: ColumnStorage?, type: Int, attribute: Int) {
        drafts[type].attributes[attribute].storage = storage
    }

    /// The names of `type`'s attributes so far, in order.
    public func attributeNames(of type: Int) -> [String] { drafts[type].attributes.map(\.name) }

    /// The position of an existing attribute, or nil.
    public func existingAttribute(_ name: String, of type: Int) -> Int? { drafts[type].attributeIndex[name] }

    /// The value set so far for one attribute of one object.
    public func value(type: Int, row: Int, attribute: Int) -> Value { drafts[type].attributes[attribute].values[row] }

    /// The values set so far for one attribute of every object of `type`.
    public func column(type: Int, attribute: Int) -> [Value] { Array(drafts[type].attributes[attribute].values) }

    /// The key of one object, as a value.
    public func idValue(type: Int, row: Int) -> Value { drafts[type].ids[row].value }

    /// Sets an attribute of one object; the value counts as present for schema inference.
    @inline(__always)
    public func set(_ value: Value, type: Int, row: Int, attribute: Int) {
        drafts[type].attributes[attribute].values[row] = value
        drafts[type].attributes[attribute].kinds.insert(value.kind)
        drafts[type].attributes[attribute].presentCount += 1
    }

    /// Records that attribute `attribute` of `type` holds values of `kinds` elsewhere in the
    /// store (a part of a store read on its own compiles paths as the whole would).
    public func addKinds(_ kinds: ValueKind, type: Int, attribute: Int) {
        drafts[type].attributes[attribute].kinds.formUnion(kinds)
    }

    /// Replaces a whole attribute column at once (a bulk loader's path), with its statistics.
    public func setColumn(type: Int, attribute: Int, values: [Value], kinds: ValueKind, presentCount: Int) {
        setColumn(type: type, attribute: attribute, values: ColumnValues(values), kinds: kinds, presentCount: presentCount)
    }

    /// ``setColumn(type:attribute:values:kinds:presentCount:)`` with a column a reader built.
    public func setColumn(type: Int, attribute: Int, values: ColumnValues, kinds: ValueKind, presentCount: Int) {
        precondition(values.count == drafts[type].ids.count, "a column needs one value per object")
        // Held compactly at once (a bulk loader's whole column), so that its array of values
        // goes while the rest loads.
        var compact = values
        compact.compact(kinds: kinds)
        drafts[type].attributes[attribute].values = compact
        drafts[type].attributes[attribute].kinds.formUnion(kinds)
        drafts[type].attributes[attribute].presentCount += presentCount
    }

    /// The position of relation `name` out of `type`, created on first mention. `declaredTargets`
    /// are types the store says the relation points into, even when no edge does yet.
    @discardableResult
    public func relation(_ name: String, of type: Int, aliases: [String] = [], foreignKey: ForeignKey? = nil,
                         toMany: Bool = false, declaredTargets: [Int] = []) -> Int {
        if let r = drafts[type].relations.firstIndex(where: { $0.name == name }) {
            if toMany { drafts[type].relations[r].declaredToMany = true }
            drafts[type].relations[r].declaredTargets.append(contentsOf: declaredTargets)
            return r
        }
        drafts[type].relations.append(RelationDraft(name: name, aliases: aliases, foreignKey: foreignKey,
                                                    declaredToMany: toMany, declaredTargets: declaredTargets))
        return drafts[type].relations.count - 1
    }

    /// Adds many edges of one relation at once; each source row's edges keep the order given.
    public func addEdges(type: Int, relation: Int, fromRows: [Int32], to targets: [ObjectRef]) {
        precondition(fromRows.count == targets.count, "one target per source row")
        drafts[type].relations[relation].from.append(contentsOf: fromRows)
        drafts[type].relations[relation].to.append(contentsOf: targets)
    }

    /// Adds one edge; a row's edges keep the order they are added in.
    @inline(__always)
    public func addEdge(from: ObjectRef, relation: Int, to: ObjectRef) {
        drafts[Int(from.type)].relations[relation].from.append(from.row)
        drafts[Int(from.type)].relations[relation].to.append(to)
    }

    /// A lookup from a key value to the row of `type` it names: the type's own keys when
    /// `attribute` is nil, else the values of that attribute.
    public func keyIndex(type: Int, attribute: Int?) -> KeyIndex {
        if let attribute { return KeyIndex(values: drafts[type].attributes[attribute].values) }
        return KeyIndex(ids: drafts[type].ids)
    }

    /// Turns the collected edges into adjacency and backlink tables and returns the graph.
    public func finish() -> ObjectGraph {
        var relationsByType: [[RelationColumn]] = []
        for draft in drafts {
            let n = draft.ids.count
            relationsByType.append(draft.relations.map { r in
                RelationColumn.build(name: r.name, aliases: r.aliases, foreignKey: r.foreignKey, rowCount: n,
                                     from: r.from, to: r.to, declaredTargets: r.declaredTargets, declaredToMany: r.declaredToMany,
                                     isInferred: r.isInferred, compositeKey: r.compositeKey)
            })
        }
        drafts = drafts.map { var d = $0; d.relations = []; return d }   // the edges are in the columns now
        // Columns of one kind held compactly (``ColumnValues``), one at a time.
        for t in drafts.indices {
            for a in drafts[t].attributes.indices { drafts[t].attributes[a].values.compact() }
        }
        let backlinks = GraphBuilder.backlinks(relationsByType: relationsByType, rowCounts: drafts.map(\.ids.count))
        let lineages = self.lineages()
        let tables = drafts.enumerated().map { i, d in
            TypeTable(name: TypeName(d.name), index: i, readOnlyReason: d.readOnlyReason, keyPolicy: d.keyPolicy, ids: d.ids,
                      attributes: d.attributes, relations: relationsByType[i], backlinks: backlinks[i], lineage: lineages[i], keyFloor: d.keyFloor, fullText: d.fullText)
        }
        drafts = []
        return ObjectGraph(types: tables, formatName: formatName)
    }

    /// Each type's supertype, descendants (parents before children, a cycle cut where it closes) and notes.
    private func lineages() -> [TypeLineage] {
        var children: [[Int]] = Array(repeating: [], count: drafts.count)
        for (i, d) in drafts.enumerated() { if let s = d.supertype { children[s].append(i) } }
        return drafts.enumerated().map { i, d in
            var descendants: [Int] = []
            var seen: Set<Int> = [i]
            var queue = children[i]
            while !queue.isEmpty {
                let c = queue.removeFirst()
                guard seen.insert(c).inserted else { continue }
                descendants.append(c)
                queue.append(contentsOf: children[c])
            }
            return TypeLineage(supertype: d.supertype, descendants: descendants, notes: d.notes)
        }
    }

    /// The backlink indexes of every type: one per (source type, relation) whose targets include it,
    /// in the order of the source types and their relations.
    static func backlinks(relationsByType: [[RelationColumn]], rowCounts: [Int]) -> [[BacklinkIndex]] {
        var out: [[BacklinkIndex]] = Array(repeating: [], count: rowCounts.count)
        for (t, relations) in relationsByType.enumerated() {
            for (r, relation) in relations.enumerated() {
                for tt in relation.targetTypes where tt < rowCounts.count {
                    out[tt].append(BacklinkIndex.build(sourceType: t, relationIndex: r, relation: relation, targetType: tt, targetRows: rowCounts[tt]))
                }
            }
        }
        return out
    }
}

/// Finds the row a key value names: a type's keys, or the values of one of its columns (a
/// foreign key that references a non-key column). The first row with a value wins; a value that
/// does not match exactly is tried with SQLite's affinity leniency (`"7"` finds `7`).
public struct KeyIndex: Sendable {
    private var rows: [ObjectID: Int32] = [:]

    /// An index of the keys of the live rows (`removed` rows are left out).
    public init(ids: [ObjectID], removed: RowSet = RowSet()) {
        rows.reserveCapacity(ids.count)
        for (row, id) in ids.enumerated() where removed.isEmpty || !removed.contains(row) {
            if rows[id] == nil { rows[id] = Int32(row) }
        }
    }

    /// An index of the values of one column.
    public init<C: Collection>(values: C, removed: RowSet = RowSet()) where C.Element == Value {
        for (row, v) in values.enumerated() where removed.isEmpty || !removed.contains(row) {
            if let id = ObjectID(keyValue: v), rows[id] == nil { rows[id] = Int32(row) }
        }
    }

    /// The row a key value names, or nil.
    public func row(for value: Value) -> Int? {
        guard let id = ObjectID(keyValue: value) else { return nil }
        return row(for: id)
    }

    /// The row a key names, or nil.
    public func row(for id: ObjectID) -> Int? {
        if let r = rows[id] { return Int(r) }
        if let alternative = id.affinityAlternative, let r = rows[alternative] { return Int(r) }
        return nil
    }
}
