/// One of the two stores a diff compares (``StoreDiff``): its types, every key of a type a batch
/// at a time, and objects read by key — from a loaded graph (``GraphDiffSide``) or a page at a
/// time from the store (``PagedDiffSide``), so that two large stores are compared holding their
/// keys and a chunk of objects, not two graphs.
public protocol DiffSide: Sendable {
    /// Each type's name and object count, in the store's order.
    var types: [(name: String, count: Int)] { get }
    /// Calls `body` with every key of type `type` (an index into ``types``) in key order, a
    /// batch at a time.
    func forEachKeyBatch(type: Int, _ body: ([ObjectID]) throws -> Void) throws
    /// The objects `keys` of type `type`, in the order given (nil: no such object).
    func objects(type: Int, keys: [ObjectID]) throws -> [DiffObject?]
    /// Calls `body` with each object's key and its value of `attribute` (null when it has none).
    func forEachValue(type: Int, attribute: String, _ body: (ObjectID, Value) throws -> Void) throws
    /// Type `type`'s attribute names (as its first objects hold them, where the store has no schema).
    func attributeNames(type: Int) throws -> [String]
    /// True when type `type` here and type `other` of `side` hold the same objects with the same
    /// stored values: nothing for a diff to report, told without comparing object by object
    /// (false when it cannot be told cheaply).
    func isUnchanged(type: Int, in side: any DiffSide, type other: Int) -> Bool
}

extension DiffSide {
    public func isUnchanged(type: Int, in side: any DiffSide, type other: Int) -> Bool { false }
}

/// What a diff compares of one object: its attributes and its relations' targets.
public struct DiffObject: Sendable, Equatable {
    /// Each attribute the object has, by name, in its type's order.
    public var attributes: [(name: String, value: Value)]
    /// Each relation that is not a foreign key among the attributes (that one is compared as the
    /// attribute), by name: its targets in stored order, and whether the relation is to-many.
    public var relations: [(name: String, targets: [ObjectIdentity], toMany: Bool)]

    public init(attributes: [(name: String, value: Value)], relations: [(name: String, targets: [ObjectIdentity], toMany: Bool)]) {
        self.attributes = attributes
        self.relations = relations
    }

    /// The attribute and relation names, attributes first, each once.
    public var names: [String] { attributes.map(\.name) + relations.map(\.name) }

    /// The value of `name` as text: an attribute's as JSON, a relation's targets
    /// (`Tag #1, Tag #3`); nil when the object has no such attribute or relation.
    public func text(of name: String) -> String? {
        if let value = attributes.first(where: { $0.name == name })?.value { return ValueFormatter.json(value) }
        return relations.first { $0.name == name }.map { $0.targets.map(\.description).joined(separator: ", ") }
    }

    public static func == (a: DiffObject, b: DiffObject) -> Bool {
        a.attributes.elementsEqual(b.attributes) { $0.name == $1.name && $0.value == $1.value }
            && a.relations.elementsEqual(b.relations) { $0.name == $1.name && $0.targets == $1.targets && $0.toMany == $1.toMany }
    }
}

extension TypeTable {
    /// The relations a diff compares: those whose foreign key is not one of the attributes (a
    /// relational file's key column is compared as the column), composite keys aside.
    public var comparedRelations: [RelationColumn] {
        relations.filter { r in !(r.foreignKeyAttribute.map { attributeIndex[$0] != nil } ?? false) && r.compositeKey == nil }
    }
}

extension ObjectGraph {
    /// The object at `ref` as a diff compares it: its attributes and its ``TypeTable/comparedRelations``
    /// (`relations`, when the caller already holds its type's, for a run of objects).
    public func diffObject(_ ref: ObjectRef, relations: [RelationColumn]? = nil) -> DiffObject {
        let table = self.table(ref), row = Int(ref.row)
        let attributes = table.attributes.indices.map { (table.attributes[$0].name, table.value(row: row, attribute: $0)) }
        let relations = (relations ?? table.comparedRelations).map { r in
            (r.name, r.targets(of: row).map { ObjectIdentity(type: self.table($0).name, id: id(of: $0)) }, r.isToMany)
        }
        return DiffObject(attributes: attributes, relations: relations)
    }

    /// The objects `keys` of type `table` as a diff compares them, in the order given (nil: no such object).
    public func diffObjects(type table: TypeTable, keys: [ObjectID]) -> [DiffObject?] {
        let relations = table.comparedRelations
        return keys.map { key in ref(type: table, id: key).map { diffObject($0, relations: relations) } }
    }
}

/// A loaded graph as one side of a diff.
public struct GraphDiffSide: DiffSide {
    public let graph: ObjectGraph
    public init(_ graph: ObjectGraph) { self.graph = graph }

    public var types: [(name: String, count: Int)] { graph.types.map { ($0.name.rawValue, $0.liveCount) } }

    public func forEachKeyBatch(type: Int, _ body: ([ObjectID]) throws -> Void) throws {
        let table = graph.types[type]
        try body(table.liveRows.map { table.ids[$0] }.sorted())
    }

    public func objects(type: Int, keys: [ObjectID]) throws -> [DiffObject?] {
        graph.diffObjects(type: graph.types[type], keys: keys)
    }

    public func forEachValue(type: Int, attribute: String, _ body: (ObjectID, Value) throws -> Void) throws {
        let table = graph.types[type]
        for row in table.liveRows { try body(table.ids[row], table.value(row: row, named: attribute)) }
    }

    public func attributeNames(type: Int) throws -> [String] { graph.types[type].attributes.map(\.name) }

    /// Two tables of loaded graphs (a store and the same store read again) are compared column by
    /// column: the same keys in the same order and the same stored values, with no relation a
    /// diff compares outside the attributes (their targets are refs into each graph).
    public func isUnchanged(type: Int, in side: any DiffSide, type other: Int) -> Bool {
        guard let side = side as? GraphDiffSide else { return false }
        let (x, y) = (graph.types[type], side.graph.types[other])
        guard x.removed.isEmpty, y.removed.isEmpty, x.comparedRelations.isEmpty, y.comparedRelations.isEmpty,
              x.attributes.count == y.attributes.count, x.ids == y.ids else { return false }
        return zip(x.attributes, y.attributes).allSatisfy { $0.name == $1.name && $0.values.storage == $1.values.storage }
    }
}
