import Foundation

/// Builds an ``ObjectGraph`` from what a store adapter reads: types, objects in store order,
/// attribute values, and relation edges in stored order. Relations are turned into compressed
/// adjacency tables, and their reverse (backlinks), once, in ``finish()``.
///
/// A builder is used from one thread; the finished graph is shared.
public final class GraphBuilder {
    private var tables: [TypeTable] = []
    private var tableIndexByName: [String: Int] = [:]
    /// Edges per (type, relation), in the order added.
    private var edges: [[EdgeList]] = []
    private var relationMeta: [[RelationMeta]] = []
    private let formatName: String

    private struct EdgeList {
        var from: [Int32] = []
        var to: [ObjectRef] = []
    }

    private struct RelationMeta {
        var name: String
        var aliases: [String] = []
        var foreignKeyAttribute: String?
        var declaredToMany = false
    }

    /// Starts an empty graph for a file of the given format.
    public init(formatName: String) { self.formatName = formatName }

    /// The index of the type named `name`, created (empty) on first mention.
    @discardableResult
    public func type(_ name: String, isReadOnly: Bool = false) -> Int {
        if let i = tableIndexByName[name] { return i }
        let i = tables.count
        tables.append(TypeTable(name: TypeName(name), index: i, isReadOnly: isReadOnly))
        tableIndexByName[name] = i
        edges.append([])
        relationMeta.append([])
        return i
    }

    /// The number of types so far.
    public var typeCount: Int { tables.count }

    /// The name of the type at `index`.
    public func typeName(_ index: Int) -> String { tables[index].name.rawValue }

    /// The keys of `type`'s objects so far, in row order.
    public func ids(of type: Int) -> [ObjectID] { tables[type].ids }

    /// The number of objects added to `type` so far.
    public func count(of type: Int) -> Int { tables[type].ids.count }

    /// Reserves room for `n` more objects of `type`.
    public func reserve(_ n: Int, of type: Int) {
        tables[type].ids.reserveCapacity(tables[type].ids.count + n)
    }

    /// Adds an object at the end of `type`'s store order and returns its handle.
    @discardableResult
    public func addObject(type: Int, id: ObjectID) -> ObjectRef {
        let table = tables[type]
        let row = table.ids.count
        table.ids.append(id)
        for a in table.attributes.indices { table.attributes[a].values.append(.null) }
        return ObjectRef(type: type, row: row)
    }

    /// Adds objects at the end of `type`'s store order, in the order given.
    public func addObjects(type: Int, ids: [ObjectID]) {
        let table = tables[type]
        table.ids.append(contentsOf: ids)
        for a in table.attributes.indices {
            table.attributes[a].values.append(contentsOf: repeatElement(Value.null, count: ids.count))
        }
    }

    /// Adds many edges of one relation at once; each source row's edges keep the order given.
    public func addEdges(type: Int, relation: Int, fromRows: [Int32], to targets: [ObjectRef]) {
        precondition(fromRows.count == targets.count, "one target per source row")
        edges[type][relation].from.append(contentsOf: fromRows)
        edges[type][relation].to.append(contentsOf: targets)
    }

    /// The position of attribute `name` on `type`, created on first mention (earlier rows get null).
    public func attribute(_ name: String, of type: Int, declaredType: String? = nil, isPrimaryKey: Bool = false) -> Int {
        let table = tables[type]
        if let a = table.attributeIndex[name] { return a }
        let a = table.attributes.count
        table.attributes.append(AttributeColumn(name: name, values: Array(repeating: .null, count: table.ids.count),
                                                declaredType: declaredType, isPrimaryKey: isPrimaryKey))
        table.attributeIndex[name] = a
        return a
    }

    /// The position of an existing attribute, or nil.
    public func existingAttribute(_ name: String, of type: Int) -> Int? { tables[type].attributeIndex[name] }

    /// The value set so far for one attribute of one object.
    public func value(type: Int, row: Int, attribute: Int) -> Value { tables[type].attributes[attribute].values[row] }

    /// The key of one object, as a value.
    public func idValue(type: Int, row: Int) -> Value { tables[type].ids[row].value }

    /// Sets an attribute of one object; the value counts as present for schema inference.
    @inline(__always)
    public func set(_ value: Value, type: Int, row: Int, attribute: Int) {
        let table = tables[type]
        table.attributes[attribute].values[row] = value
        table.attributes[attribute].kinds.insert(value.kind)
        table.attributes[attribute].presentCount += 1
    }

    /// Replaces a whole attribute column at once (a bulk loader's path), with its statistics.
    public func setColumn(type: Int, attribute: Int, values: [Value], kinds: ValueKind, presentCount: Int) {
        let table = tables[type]
        precondition(values.count == table.ids.count, "a column needs one value per object")
        table.attributes[attribute].values = values
        table.attributes[attribute].kinds.formUnion(kinds)
        table.attributes[attribute].presentCount += presentCount
    }

    /// The position of relation `name` out of `type`, created on first mention.
    @discardableResult
    public func relation(_ name: String, of type: Int, aliases: [String] = [], foreignKeyAttribute: String? = nil,
                         toMany: Bool = false) -> Int {
        if let r = relationMeta[type].firstIndex(where: { $0.name == name }) {
            if toMany { relationMeta[type][r].declaredToMany = true }
            return r
        }
        relationMeta[type].append(RelationMeta(name: name, aliases: aliases, foreignKeyAttribute: foreignKeyAttribute,
                                               declaredToMany: toMany))
        edges[type].append(EdgeList())
        return relationMeta[type].count - 1
    }

    /// Adds one edge; a row's edges keep the order they are added in.
    @inline(__always)
    public func addEdge(from: ObjectRef, relation: Int, to: ObjectRef) {
        edges[Int(from.type)][relation].from.append(from.row)
        edges[Int(from.type)][relation].to.append(to)
    }

    /// Turns the collected edges into adjacency and backlink tables and returns the graph.
    public func finish() -> ObjectGraph {
        var reverse: [[(sourceType: Int, relation: Int, targetRows: [Int32], sourceRows: [Int32])]] =
            Array(repeating: [], count: tables.count)
        for (t, table) in tables.enumerated() {
            for (r, meta) in relationMeta[t].enumerated() {
                let list = edges[t][r]
                let n = table.ids.count
                // Counting sort by source row keeps each row's edges in the order added.
                var offsets = [Int32](repeating: 0, count: n + 1)
                for f in list.from { offsets[Int(f) + 1] += 1 }
                var maxPerRow: Int32 = 0
                for i in 0..<n {
                    maxPerRow = max(maxPerRow, offsets[i + 1])
                    offsets[i + 1] += offsets[i]
                }
                var cursor = offsets
                var targets = [ObjectRef](repeating: ObjectRef(type: 0, row: 0), count: list.to.count)
                var targetTypes = Set<Int>()
                for (f, to) in zip(list.from, list.to) {
                    targets[Int(cursor[Int(f)])] = to
                    cursor[Int(f)] += 1
                    targetTypes.insert(Int(to.type))
                }
                table.relations.append(RelationColumn(
                    name: meta.name, aliases: meta.aliases, foreignKeyAttribute: meta.foreignKeyAttribute,
                    offsets: offsets, targets: targets, targetTypes: targetTypes.sorted(),
                    isToMany: meta.declaredToMany || maxPerRow > 1))
                table.relationIndex[meta.name] = r
                for alias in meta.aliases where table.relationIndex[alias] == nil { table.relationIndex[alias] = r }
                // Reverse edges, grouped by target type, in source order.
                for tt in targetTypes.sorted() {
                    var targetRows: [Int32] = []
                    var sourceRows: [Int32] = []
                    for row in 0..<n {
                        for target in targets[Int(offsets[row]) ..< Int(offsets[row + 1])] where Int(target.type) == tt {
                            targetRows.append(target.row)
                            sourceRows.append(Int32(row))
                        }
                    }
                    reverse[tt].append((t, r, targetRows, sourceRows))
                }
            }
            edges[t] = []
        }
        for (tt, list) in reverse.enumerated() {
            let n = tables[tt].ids.count
            for entry in list {
                var offsets = [Int32](repeating: 0, count: n + 1)
                for r in entry.targetRows { offsets[Int(r) + 1] += 1 }
                for i in 0..<n { offsets[i + 1] += offsets[i] }
                var cursor = offsets
                var sources = [Int32](repeating: 0, count: entry.sourceRows.count)
                for (target, source) in zip(entry.targetRows, entry.sourceRows) {
                    sources[Int(cursor[Int(target)])] = source
                    cursor[Int(target)] += 1
                }
                tables[tt].backlinks.append(BacklinkIndex(sourceType: entry.sourceType, relation: entry.relation,
                                                          offsets: offsets, sources: sources))
            }
        }
        return ObjectGraph(types: tables, formatName: formatName)
    }
}
