import Foundation
import Synchronization

/// The in-memory object graph of one store: every type, its objects, their attributes, relations
/// and backlinks, answered by array reads (no SQL after loading).
///
/// A graph never changes once built: a ``GraphBuilder`` makes it from a store, and staged edits
/// make a new graph that shares every table they do not touch (``ObjectGraph/applying(_:)``).
/// Types keep their objects in store order; relation targets keep their stored order.
public final class ObjectGraph: Sendable {
    /// Every type, in the order the store lists them.
    public let types: [TypeTable]
    /// What kind of file the graph came from (`Persist`, `SQLite`), for the status line and `.types`.
    public let formatName: String
    private let typeIndexByName: [String: Int]

    init(types: [TypeTable], formatName: String) {
        self.types = types
        self.formatName = formatName
        var byName: [String: Int] = [:]
        for (i, t) in types.enumerated() where byName[t.name.rawValue] == nil { byName[t.name.rawValue] = i }
        typeIndexByName = byName
    }

    /// The number of live objects of every type together (staged deletions excluded).
    public var objectCount: Int { types.reduce(0) { $0 + $1.liveCount } }

    /// The type named `name`: an exact match, else the unique case-insensitive match, else nil.
    public func type(named name: String) -> TypeTable? {
        if let i = typeIndexByName[name] { return types[i] }
        let matches = types.filter { $0.name.rawValue.caseInsensitiveCompare(name) == .orderedSame }
        return matches.count == 1 ? matches[0] : nil
    }

    /// The indexes of `type` and every type that inherits from it: what a query on `type` reads.
    public func family(of type: TypeTable) -> [Int] { [type.index] + type.lineage.descendants }

    /// The live objects of `type` and of every type that inherits from it, in type then store order.
    public func liveRefs(of type: TypeTable) -> [ObjectRef] {
        family(of: type).flatMap { t in types[t].liveRows.map { ObjectRef(type: Int32(t), row: Int32($0)) } }
    }

    /// The table of the type a handle points into.
    @inlinable public func table(_ ref: ObjectRef) -> TypeTable { types[Int(ref.type)] }

    /// The live object with key `id` in `type`, if any.
    public func ref(type: TypeTable, id: ObjectID) -> ObjectRef? {
        type.row(for: id).map { ObjectRef(type: type.index, row: $0) }
    }

    /// The live object with key `id` in `type` or a type that inherits from it, the first in
    /// ``family(of:)`` order: an object a statement on `type` answers by key (Core Data's
    /// subentities share their parent's table, and so its keys).
    public func ref(inFamilyOf type: TypeTable, id: ObjectID) -> ObjectRef? {
        for t in family(of: type) { if let r = ref(type: types[t], id: id) { return r } }
        return nil
    }

    /// The live object with key `id` in any type (Persist keys are global), the first type in order that has it.
    public func ref(id: ObjectID) -> ObjectRef? {
        for t in types { if let r = ref(type: t, id: id) { return r } }
        return nil
    }

    /// The live object with the given identity, if any.
    public func ref(_ identity: ObjectIdentity) -> ObjectRef? {
        guard let t = type(named: identity.type.rawValue), t.name == identity.type else { return nil }
        return ref(type: t, id: identity.id)
    }

    /// The store key of an object.
    @inlinable public func id(of ref: ObjectRef) -> ObjectID { types[Int(ref.type)].ids[Int(ref.row)] }

    /// The lasting identity of an object (its type's name and its key).
    public func identity(of ref: ObjectRef) -> ObjectIdentity { ObjectIdentity(type: table(ref).name, id: id(of: ref)) }

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

/// How the objects of a type are keyed in their store, which says how a new object gets its key
/// and how a writer finds a row again.
public enum KeyPolicy: Hashable, Sendable {
    /// One integer key shared by every type of the file, assigned as max + 1 (Persist's `by_type.id`).
    case globalInteger
    /// The table's rowid, assigned by SQLite as max + 1 (a table without a declared primary key).
    case rowid
    /// The value of one column; an integer column assigned as max + 1 when a new object leaves it
    /// out (`INTEGER PRIMARY KEY`), else it must be given.
    case column(String, autoIncrements: Bool)
    /// The values of several columns, in key order (a composite or `WITHOUT ROWID` key); always given.
    case columns([String])
    /// Row numbers: the source has no key of its own (a view). Such a type is read-only.
    case rowNumber

    /// The columns that hold the key, in key order (empty: the rowid, a global key, or the position).
    public var keyColumns: [String] {
        switch self {
        case .column(let k, _): return [k]
        case .columns(let ks): return ks
        default: return []
        }
    }
}

/// The objects of one type, stored by columns: one array of ids, one array of values per attribute,
/// one adjacency table per relation, and the reverse tables of every relation that points here.
///
/// A table never changes once built. Staged deletions stay in it as rows that are not live, so
/// that every ``ObjectRef`` a view holds keeps meaning the same object until the edits are
/// committed or dropped.
public final class TypeTable: Sendable {
    /// The type's name.
    public let name: TypeName
    /// The type's position in ``ObjectGraph/types``, the `type` of its ``ObjectRef``s.
    public let index: Int
    /// Why the type cannot be edited (a view; a format Loupe cannot write faithfully), or nil.
    public let readOnlyReason: String?
    /// How objects are keyed (see ``KeyPolicy``).
    public let keyPolicy: KeyPolicy
    /// The largest integer key the store has ever handed out for this type, kept or not (an
    /// `AUTOINCREMENT` table's `sqlite_sequence` row; for Persist, `by_type`'s): a new object's
    /// key is above it, so that a deleted object's key is never reused. 0 when the store keeps none.
    public let keyFloor: Int64
    /// Every object's key, in store order; an object's row is its position here.
    public let ids: [ObjectID]
    /// The attributes seen, in the order first seen (a table's column order).
    public let attributes: [AttributeColumn]
    /// The relations out of this type, in the order first seen.
    public let relations: [RelationColumn]
    /// The reverse tables of every relation (of any type) whose targets include this type.
    public let backlinks: [BacklinkIndex]
    /// Rows staged for deletion (still here, so handles stay valid; not live).
    public let removed: RowSet
    /// Where the type sits in an entity hierarchy, and how its names were read.
    public let lineage: TypeLineage

    /// Attribute positions by exact name.
    public let attributeIndex: [String: Int]
    /// Relation positions by exact name and by alias.
    public let relationIndex: [String: Int]
    /// The attributes whose text names an object beside its key (``caption(row:)``).
    public let captionAttributes: [Int]
    /// How `MATCH` searches the type, when it is a full-text table (else nil).
    public let fullText: FullTextSearch?
    private let idIndex = Mutex<[ObjectID: Int32]?>(nil)

    init(name: TypeName, index: Int, readOnlyReason: String?, keyPolicy: KeyPolicy, ids: [ObjectID],
         attributes: [AttributeColumn], relations: [RelationColumn], backlinks: [BacklinkIndex], removed: RowSet = RowSet(),
         lineage: TypeLineage = TypeLineage(), keyFloor: Int64 = 0, fullText: FullTextSearch? = nil) {
        self.lineage = lineage
        self.fullText = fullText
        self.keyFloor = keyFloor
        self.name = name
        self.index = index
        self.readOnlyReason = readOnlyReason
        self.keyPolicy = keyPolicy
        self.ids = ids
        self.attributes = attributes
        self.relations = relations
        self.backlinks = backlinks
        self.removed = removed
        var a: [String: Int] = [:]
        for (i, column) in attributes.enumerated() where a[column.name] == nil { a[column.name] = i }
        attributeIndex = a
        var r: [String: Int] = [:]
        for (i, relation) in relations.enumerated() where r[relation.name] == nil { r[relation.name] = i }
        for (i, relation) in relations.enumerated() { for alias in relation.aliases where r[alias] == nil { r[alias] = i } }
        relationIndex = r
        captionAttributes = Self.captionAttributes(attributes)
    }

    /// The same type with the parts given replaced (what staged edits, kinds learned and a
    /// read-only format change); everything else — name, key, lineage, search — kept.
    func replacing(readOnlyReason: String? = nil, ids: [ObjectID]? = nil, attributes: [AttributeColumn]? = nil, relations: [RelationColumn]? = nil,
                   backlinks: [BacklinkIndex]? = nil, removed: RowSet? = nil) -> TypeTable {
        TypeTable(name: name, index: index, readOnlyReason: readOnlyReason ?? self.readOnlyReason, keyPolicy: keyPolicy, ids: ids ?? self.ids,
                  attributes: attributes ?? self.attributes, relations: relations ?? self.relations, backlinks: backlinks ?? self.backlinks,
                  removed: removed ?? self.removed, lineage: lineage, keyFloor: keyFloor, fullText: fullText)
    }

    /// True for views and other sources Loupe lists and queries but never edits.
    public var isReadOnly: Bool { readOnlyReason != nil }

    /// The ``readOnlyReason`` of a type read from a view named `name` (SQL's view, materialized
    /// view): what tells a view apart from a table that is read-only for another reason.
    public static func viewReason(_ name: String) -> String { "\(name) is a view" }

    /// True when the type was read from a view (see ``viewReason(_:)``).
    public var isView: Bool { readOnlyReason == Self.viewReason(name.rawValue) }

    /// How many rows the table has, staged deletions included (the range of valid rows).
    @inlinable public var count: Int { ids.count }

    /// How many live objects the type has (staged deletions excluded).
    public var liveCount: Int { ids.count - removed.count }

    /// True unless the row is staged for deletion.
    @inlinable public func isLive(_ row: Int) -> Bool { removed.isEmpty || !removed.contains(row) }

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

    /// The to-one relation whose foreign key column is attribute `name` (Chinook's `ArtistId`
    /// holds `Artist`), if there is one.
    public func relation(heldBy name: String) -> RelationColumn? {
        guard attributeIndex[name] != nil else { return nil }
        return relations.first { !$0.isToMany && $0.foreignKeyAttribute == name }
    }

    /// The value of attribute `attribute` for the object at `row` (`null` when it has none).
    @inlinable public func value(row: Int, attribute: Int) -> Value { attributes[attribute].values[row] }

    /// The value of the attribute named `name` (exactly), or null when the type has no such attribute.
    public func value(row: Int, named name: String) -> Value {
        attributeIndex[name].map { attributes[$0].values[row] } ?? .null
    }

    /// The row of the live object with key `id`; the index is built on first use.
    public func row(for id: ObjectID) -> Int? {
        let row: Int32? = idIndex.withLock { index in
            if index == nil {
                var built: [ObjectID: Int32] = [:]
                built.reserveCapacity(ids.count)
                for (row, id) in ids.enumerated() where isLive(row) && built[id] == nil { built[id] = Int32(row) }
                index = built
            }
            return index![id]
        }
        return row.map(Int.init)
    }

    /// The index of the backlinks that come from `sourceType` through its relation at `relation`.
    public func backlinkIndex(sourceType: Int, relation: Int) -> BacklinkIndex? {
        backlinks.first { $0.sourceType == sourceType && $0.relation == relation }
    }

    /// The live rows, in store order.
    public var liveRows: [Int] {
        if removed.isEmpty { return Array(0..<count) }
        return (0..<count).filter { !removed.contains($0) }
    }
}

/// Where a type sits in an entity hierarchy (Core Data's subentities share their parent's table),
/// and notes on how its names were read.
public struct TypeLineage: Hashable, Sendable {
    /// The type it inherits from, if any.
    public var supertype: Int?
    /// Every type that inherits from it, directly or not, parents before children. A query on
    /// the type includes their objects, as a Core Data fetch request on a parent entity does.
    public var descendants: [Int]
    /// How the type's names were read when the store did not say (inferred from columns), for `schema`.
    public var notes: [String]

    public init(supertype: Int? = nil, descendants: [Int] = [], notes: [String] = []) {
        self.supertype = supertype
        self.descendants = descendants
        self.notes = notes
    }
}

/// What the store says about a column beyond its values (relational files), which edits respect.
public struct ColumnStorage: Hashable, Sendable {
    /// The declared SQL type (`INTEGER`, `NVARCHAR(160)`), empty when none.
    public var declaredType: String
    /// True when the column is (part of) the declared primary key.
    public var isPrimaryKey: Bool
    /// True for `NOT NULL` columns.
    public var notNull: Bool
    /// True for generated columns (computed by SQLite, never written).
    public var isGenerated: Bool
    /// The `DEFAULT` expression as written in the schema, if any.
    public var defaultSQL: String?
    /// How a date column holds its dates in the file (what a writer writes new dates as); nil
    /// for columns that are not dates.
    public var dateEncoding: DateEncoding?

    public init(declaredType: String = "", isPrimaryKey: Bool = false, notNull: Bool = false, isGenerated: Bool = false,
                defaultSQL: String? = nil, dateEncoding: DateEncoding? = nil) {
        self.declaredType = declaredType
        self.isPrimaryKey = isPrimaryKey
        self.notNull = notNull
        self.isGenerated = isGenerated
        self.defaultSQL = defaultSQL
        self.dateEncoding = dateEncoding
    }

    /// The ways a column holds dates.
    public enum DateEncoding: String, Hashable, Sendable {
        /// ISO 8601 text, as SQLite's date functions write it (`2024-01-31 10:20:30`).
        case text
        /// Seconds since 1970 (a number).
        case unixSeconds
        /// Seconds since 2001 (Core Data's and PersistDB's reference date).
        case referenceSeconds
    }

    /// What values the column takes, when SQLite's rules for the declared type do not say it
    /// (a PostgreSQL column: `uuid` takes text, `bytea` bytes).
    public var declaredAffinity: Affinity?
    /// True for a column holding JSON (PostgreSQL's `json`, `jsonb`): it takes any value, nested
    /// ones included.
    public var holdsJSON = false

    /// The type affinity of the column: ``declaredAffinity`` when set, else SQLite's for the
    /// declared type (the rules of datatype3.html, section 3.1).
    public var affinity: Affinity {
        if let declaredAffinity { return declaredAffinity }
        let t = declaredType.uppercased()
        if t.contains("INT") { return .integer }
        if t.contains("CHAR") || t.contains("CLOB") || t.contains("TEXT") { return .text }
        if t.isEmpty || t.contains("BLOB") { return .blob }
        if t.contains("REAL") || t.contains("FLOA") || t.contains("DOUB") { return .real }
        return .numeric
    }

    /// SQLite's five column affinities.
    public enum Affinity: String, Sendable { case integer = "INTEGER", text = "TEXT", blob = "BLOB", real = "REAL", numeric = "NUMERIC" }
}

/// One attribute of a type: its values by row and what schema inference learned about it.
public struct AttributeColumn: Sendable {
    /// The attribute's name.
    public let name: String
    /// The value for every row (`null` where an object does not have it), compact once the
    /// graph is finished (``ColumnValues``).
    public internal(set) var values: ColumnValues
    /// Every kind of value seen.
    public internal(set) var kinds: ValueKind = []
    /// How many objects have the attribute (a stored null counts; a missing key does not).
    public internal(set) var presentCount: Int = 0
    /// What the store declares about the column, for relational files; nil for schemaless ones.
    public internal(set) var storage: ColumnStorage?

    /// The declared SQL type of a relational column (`INTEGER`, `NVARCHAR(160)`), if any.
    public var declaredType: String? { storage?.declaredType }
    /// True when the attribute is a declared primary key (`id` shows it already).
    public var isPrimaryKey: Bool { storage?.isPrimaryKey ?? false }
}

/// What happens to the objects that refer to an object when it is deleted (a declared foreign
/// key's `ON DELETE`), and for relations that are not foreign keys (Persist), `removeLinks`.
public enum DeleteAction: String, Hashable, Sendable {
    case noAction = "NO ACTION", restrict = "RESTRICT", setNull = "SET NULL", setDefault = "SET DEFAULT", cascade = "CASCADE"
    /// The relation's rows that touch the deleted object go with it (Persist's `delete`).
    case removeLinks = "REMOVE LINKS"
}

/// A relation that a foreign-key column holds: the column, the type it points into, and the
/// column there whose value it matches (nil: that type's key).
public struct ForeignKey: Hashable, Sendable {
    public let attribute: String
    public let targetType: Int
    public let targetAttribute: String?
    public let onDelete: DeleteAction
    /// True when inferred from names and values rather than declared by the schema.
    public let isInferred: Bool

    public init(attribute: String, targetType: Int, targetAttribute: String?, onDelete: DeleteAction, isInferred: Bool = false) {
        self.attribute = attribute
        self.targetType = targetType
        self.targetAttribute = targetAttribute
        self.onDelete = onDelete
        self.isInferred = isInferred
    }
}

/// One named relation out of a type, stored as adjacency lists (compressed rows).
public struct RelationColumn: Sendable {
    /// The relation's name (a Swift property name, or a foreign key's name without `Id`).
    public let name: String
    /// Other names that reach the same relation (a foreign key's column name).
    public let aliases: [String]
    /// The foreign key this relation comes from, for relational files.
    public let foreignKey: ForeignKey?
    /// `offsets[row] ..< offsets[row + 1]` are the row's targets in ``targets``.
    public let offsets: [Int32]
    /// All targets, row after row, each row's in stored order.
    public let targets: [ObjectRef]
    /// Every type a target was seen in, or that the store declares, ascending.
    public let targetTypes: [Int]
    /// True when some object has more than one target, or the store declared the relation to-many.
    public let isToMany: Bool
    /// True when the store does not declare the relation: Loupe found it from names and values
    /// (a column named `CustomerId` whose values are all `Customer` keys).
    public var isInferred: Bool = false
    /// The foreign key of several columns this relation comes from, for relational files (then
    /// ``foreignKey`` is nil): edited through its columns, never as a relation.
    public var compositeKey: CompositeKey? = nil

    /// The attribute holding the foreign key this relation comes from, for relational files.
    public var foreignKeyAttribute: String? { foreignKey?.attribute }

    /// The targets of the object at `row`, in stored order.
    @inlinable public func targets(of row: Int) -> ArraySlice<ObjectRef> {
        targets[Int(offsets[row]) ..< Int(offsets[row + 1])]
    }

    /// How many targets the object at `row` has.
    @inlinable public func count(of row: Int) -> Int { Int(offsets[row + 1] - offsets[row]) }

    /// A relation over `rowCount` source rows from edges given as (source row, target) pairs; each
    /// row's targets keep the order given (a counting sort by source row).
    static func build(name: String, aliases: [String], foreignKey: ForeignKey?, rowCount n: Int,
                      from: [Int32], to: [ObjectRef], declaredTargets: [Int], declaredToMany: Bool, isInferred: Bool = false,
                      compositeKey: CompositeKey? = nil) -> RelationColumn {
        var offsets = [Int32](repeating: 0, count: n + 1)
        for f in from { offsets[Int(f) + 1] += 1 }
        var maxPerRow: Int32 = 0
        for i in 0..<n {
            maxPerRow = max(maxPerRow, offsets[i + 1])
            offsets[i + 1] += offsets[i]
        }
        var cursor = offsets
        var targets = [ObjectRef](repeating: ObjectRef(type: 0, row: 0), count: to.count)
        var targetTypes = Set(declaredTargets)
        for (f, target) in zip(from, to) {
            targets[Int(cursor[Int(f)])] = target
            cursor[Int(f)] += 1
            targetTypes.insert(Int(target.type))
        }
        return RelationColumn(name: name, aliases: aliases, foreignKey: foreignKey, offsets: offsets, targets: targets,
                              targetTypes: targetTypes.sorted(), isToMany: declaredToMany || maxPerRow > 1, isInferred: isInferred,
                              compositeKey: compositeKey)
    }
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

    /// The reverse of `relation` (out of `sourceType`) for the targets in `targetType`, which has
    /// `targetRows` rows.
    static func build(sourceType: Int, relationIndex: Int, relation: RelationColumn, targetType: Int, targetRows n: Int) -> BacklinkIndex {
        var offsets = [Int32](repeating: 0, count: n + 1)
        let t32 = Int32(targetType)
        for target in relation.targets where target.type == t32 { offsets[Int(target.row) + 1] += 1 }
        for i in 0..<n { offsets[i + 1] += offsets[i] }
        var cursor = offsets
        var sources = [Int32](repeating: 0, count: Int(offsets[n]))
        let rows = relation.offsets.count - 1
        for row in 0..<rows {
            for target in relation.targets(of: row) where target.type == t32 {
                sources[Int(cursor[Int(target.row)])] = Int32(row)
                cursor[Int(target.row)] += 1
            }
        }
        return BacklinkIndex(sourceType: sourceType, relation: relationIndex, offsets: offsets, sources: sources)
    }
}

/// A set of rows, as a bit set (staged deletions).
public struct RowSet: Hashable, Sendable {
    private var words: [UInt64] = []
    /// How many rows are in the set.
    public private(set) var count = 0

    public init() {}

    public var isEmpty: Bool { count == 0 }

    @inlinable public func contains(_ row: Int) -> Bool { _contains(row) }

    @usableFromInline func _contains(_ row: Int) -> Bool {
        let w = row >> 6
        return w < words.count && words[w] & (1 << UInt64(row & 63)) != 0
    }

    public mutating func insert(_ row: Int) {
        let w = row >> 6
        if w >= words.count { words.append(contentsOf: repeatElement(0, count: w - words.count + 1)) }
        let bit: UInt64 = 1 << UInt64(row & 63)
        if words[w] & bit == 0 { words[w] |= bit; count += 1 }
    }

    public mutating func remove(_ row: Int) {
        let w = row >> 6
        guard w < words.count else { return }
        let bit: UInt64 = 1 << UInt64(row & 63)
        if words[w] & bit != 0 { words[w] &= ~bit; count -= 1 }
    }

    /// The rows in the set, ascending.
    public var rows: [Int] {
        var out: [Int] = []
        for (w, word) in words.enumerated() where word != 0 {
            for b in 0..<64 where word & (1 << UInt64(b)) != 0 { out.append(w * 64 + b) }
        }
        return out
    }
}
