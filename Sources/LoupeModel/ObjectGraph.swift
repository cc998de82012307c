import Foundation

/// The in-memory object graph of one store: every type, its objects, their attributes, relations
/// and backlinks, answered by array reads (no SQL after loading).
///
/// A graph is built once by a ``GraphBuilder`` and then read from any thread. Types keep their
/// objects in store order; relation targets keep their stored order (a to-many's order).
public final class ObjectGraph: @unchecked Sendable {
    /// Every type, in the order the store lists them.
    public let types: [TypeTable]
    /// What kind of file the graph came from (`Persist`, `SQLite`), for the status line and `.types`.
    public let formatName: String
    private let typeIndexByName: [String: Int]

    init(types: [TypeTable], formatName: String) {
        self.types = types
        self.formatName = formatName
        var byName: [String: Int] = [:]
        for (i, t) in types.enumerated() { byName[t.name.rawValue] = i }
        typeIndexByName = byName
    }

    /// The number of objects of every type together.
    public var objectCount: Int { types.reduce(0) { $0 + $1.count } }

    /// The type named `name`: an exact match, else the unique case-insensitive match, else nil.
    public func type(named name: String) -> TypeTable? {
        if let i = typeIndexByName[name] { return types[i] }
        let matches = types.filter { $0.name.rawValue.caseInsensitiveCompare(name) == .orderedSame }
        return matches.count == 1 ? matches[0] : nil
    }

    /// The table of the type a handle points into.
    @inlinable public func table(_ ref: ObjectRef) -> TypeTable { types[Int(ref.type)] }

    /// The object with key `id` in `type`, if any.
    public func ref(type: TypeTable, id: ObjectID) -> ObjectRef? {
        type.row(for: id).map { ObjectRef(type: type.index, row: $0) }
    }

    /// The object with key `id` in any type (Persist keys are global), the first type in order that has it.
    public func ref(id: ObjectID) -> ObjectRef? {
        for t in types { if let r = ref(type: t, id: id) { return r } }
        return nil
    }

    /// The store key of an object.
    @inlinable public func id(of ref: ObjectRef) -> ObjectID { types[Int(ref.type)].ids[Int(ref.row)] }

    /// `Book #12`: the name people and breadcrumbs use for an object.
    public func label(of ref: ObjectRef) -> String { "\(table(ref).name) #\(id(of: ref))" }

    /// Every object that points at `ref`, grouped by source type and relation name, in the order of
    /// the source types and their relations. Groups without members are left out.
    public func backlinks(of ref: ObjectRef) -> [BacklinkGroup] {
        let target = table(ref)
        var groups: [BacklinkGroup] = []
        for index in target.backlinks {
            let sources = index.sources(of: Int(ref.row))
            if sources.isEmpty { continue }
            let relation = types[index.sourceType].relations[index.relation]
            groups.append(BacklinkGroup(sourceType: types[index.sourceType].name, relation: relation.name,
                                        sources: sources.map { ObjectRef(type: index.sourceType, row: Int($0)) }))
        }
        return groups
    }
}

/// The objects of one source type whose relation of one name points at a given object.
public struct BacklinkGroup: Hashable, Sendable {
    public let sourceType: TypeName
    public let relation: String
    public let sources: [ObjectRef]
    /// `Loan.book`: how queries (`@links.Loan.book`) and the browser name the group.
    public var key: String { "\(sourceType).\(relation)" }
}

/// The objects of one type, stored by columns: one array of ids, one array of values per attribute,
/// one adjacency table per relation, and the reverse tables of every relation that points here.
public final class TypeTable: @unchecked Sendable {
    /// The type's name.
    public let name: TypeName
    /// The type's position in ``ObjectGraph/types``, the `type` of its ``ObjectRef``s.
    public let index: Int
    /// Views and other read-only sources: listed and queried, never edited.
    public internal(set) var isReadOnly: Bool
    /// Every object's key, in store order; an object's row is its position here.
    public internal(set) var ids: [ObjectID] = []
    /// The attributes seen, in the order first seen (a table's column order).
    public internal(set) var attributes: [AttributeColumn] = []
    /// The relations out of this type, in the order first seen.
    public internal(set) var relations: [RelationColumn] = []
    /// The reverse tables of every relation (of any type) whose targets include this type.
    public internal(set) var backlinks: [BacklinkIndex] = []

    var attributeIndex: [String: Int] = [:]
    var relationIndex: [String: Int] = [:]
    private var idIndex: [ObjectID: Int32]?
    private let idIndexLock = NSLock()

    init(name: TypeName, index: Int, isReadOnly: Bool) {
        self.name = name
        self.index = index
        self.isReadOnly = isReadOnly
    }

    /// How many objects the type has.
    @inlinable public var count: Int { ids.count }

    /// The position of an attribute: exact name, else the unique case-insensitive match.
    public func attribute(named name: String) -> Int? {
        if let i = attributeIndex[name] { return i }
        let m = attributes.indices.filter { attributes[$0].name.caseInsensitiveCompare(name) == .orderedSame }
        return m.count == 1 ? m[0] : nil
    }

    /// The position of a relation, by its name or an alias: exact, else unique case-insensitive.
    public func relation(named name: String) -> Int? {
        if let i = relationIndex[name] { return i }
        let m = relationIndex.filter { $0.key.caseInsensitiveCompare(name) == .orderedSame }
        let positions = Set(m.values)
        return positions.count == 1 ? positions.first : nil
    }

    /// The value of attribute `attribute` for the object at `row` (`null` when it has none).
    @inlinable public func value(row: Int, attribute: Int) -> Value { attributes[attribute].values[row] }

    /// The row of the object with key `id`; the index is built on first use.
    public func row(for id: ObjectID) -> Int? {
        idIndexLock.lock(); defer { idIndexLock.unlock() }
        if idIndex == nil {
            var index: [ObjectID: Int32] = [:]
            index.reserveCapacity(ids.count)
            for (row, id) in ids.enumerated() where index[id] == nil { index[id] = Int32(row) }
            idIndex = index
        }
        return idIndex![id].map(Int.init)
    }

    /// The index of the backlinks that come from `sourceType` through its relation at `relation`.
    public func backlinkIndex(sourceType: Int, relation: Int) -> BacklinkIndex? {
        backlinks.first { $0.sourceType == sourceType && $0.relation == relation }
    }
}

/// One attribute of a type: its values by row and what schema inference learned about it.
public struct AttributeColumn: Sendable {
    /// The attribute's name.
    public let name: String
    /// The value for every row (`null` where an object does not have it).
    public internal(set) var values: [Value]
    /// Every kind of value seen.
    public internal(set) var kinds: ValueKind = []
    /// How many objects have the attribute (a stored null counts; a missing key does not).
    public internal(set) var presentCount: Int = 0
    /// The declared SQL type of a relational column (`INTEGER`, `NVARCHAR(160)`), if any.
    public internal(set) var declaredType: String?
    /// True when the attribute is a declared primary key (`id` shows it already).
    public internal(set) var isPrimaryKey: Bool = false
}

/// One named relation out of a type, stored as adjacency lists (compressed rows).
public struct RelationColumn: Sendable {
    /// The relation's name (a Swift property name, or a foreign key's name without `Id`).
    public let name: String
    /// Other names that reach the same relation (a foreign key's column name).
    public internal(set) var aliases: [String] = []
    /// The attribute holding the foreign key this relation comes from, for relational files.
    public internal(set) var foreignKeyAttribute: String?
    /// `offsets[row] ..< offsets[row + 1]` are the row's targets in ``targets``.
    public internal(set) var offsets: [Int32]
    /// All targets, row after row, each row's in stored order.
    public internal(set) var targets: [ObjectRef]
    /// Every type a target was seen in, ascending.
    public internal(set) var targetTypes: [Int]
    /// True when some object has more than one target, or the store declared the relation to-many.
    public internal(set) var isToMany: Bool

    /// The targets of the object at `row`, in stored order.
    @inlinable public func targets(of row: Int) -> ArraySlice<ObjectRef> {
        targets[Int(offsets[row]) ..< Int(offsets[row + 1])]
    }

    /// How many targets the object at `row` has.
    @inlinable public func count(of row: Int) -> Int { Int(offsets[row + 1] - offsets[row]) }
}

/// The reverse of one relation into one target type: for each target row, the source rows that
/// point at it (in source order).
public struct BacklinkIndex: Sendable {
    /// The type the relation starts from.
    public let sourceType: Int
    /// The relation's position in the source type's ``TypeTable/relations``.
    public let relation: Int
    @usableFromInline let offsets: [Int32]
    @usableFromInline let sources: [Int32]

    /// The source rows pointing at the target at `row`.
    @inlinable public func sources(of row: Int) -> ArraySlice<Int32> {
        sources[Int(offsets[row]) ..< Int(offsets[row + 1])]
    }

    /// How many sources point at the target at `row`.
    @inlinable public func count(of row: Int) -> Int { Int(offsets[row + 1] - offsets[row]) }
}
