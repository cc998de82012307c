import Foundation
import GRDB
import LoupeModel
import Synchronization

/// A Persist store read a page at a time, for a store larger than the memory a whole load may
/// take (the browser's paged mode): the catalog once, the keys of a type by position (keyset
/// paging over `by_type` in key order), and windows of objects by key, each a small graph with
/// the objects' documents, the relation rows from and to them, and the objects at their other
/// ends (with documents for the targets of relations, so that a relation cell shows its
/// target's name; the sources of backlinks as keys and types).
///
/// The schema is a fresh ``SchemaCache`` entry's when there is one (exact: the last whole load's),
/// else a sample's: each type's attributes from its first documents in the load's order, its
/// relations from those objects' relation rows, with the kinds `loupe_relation_kinds` records. A window
/// adds what its own documents and rows show beyond the schema (an attribute first seen there,
/// a relation with several targets), so nothing read is hidden. Reading never writes: the file
/// is opened read-only like every other read.
public final class PersistPages: PageSource, Sendable {
    /// One type as the catalog and the schema give it.
    public struct PagedType: Sendable {
        public let name: String
        /// Nil when the type was listed without counting its objects (``PersistPages/counts()``
        /// reads them when first needed).
        public let count: Int?
        let stored: DatabaseValue
        let storedAsBytes: Bool
        /// Attributes in column order.
        public let attributes: [String]
        let relations: [PagedRelation]

        /// The type as paged mode's cache entry keeps it, with `count` objects.
        func cached(count: Int) -> SchemaCache.PagedCachedType {
            var bytes: [UInt8]?
            if storedAsBytes, case .blob(let data) = stored.storage { bytes = Array(data) }
            return SchemaCache.PagedCachedType(name: name, count: count, storedBytes: bytes, attributes: attributes,
                                               relations: relations.map { SchemaCache.CachedRelation(name: $0.name, toMany: $0.toMany, targets: $0.targets) })
        }

        /// The condition that selects the type's rows, with `stored` bound to its `?`.
        var matches: String { storedAsBytes ? "type_name IS CAST(? AS TEXT)" : "type_name IS ?" }
    }

    struct PagedRelation: Sendable {
        let name: String
        let toMany: Bool
        let targets: [Int]
    }

    public let file: StoreFile
    /// Every type with its object count, in the load's order (each type's first key).
    public let types: [PagedType]
    /// True when the schema is a whole load's (a ``SchemaCache`` entry), false when it comes
    /// from a sample of each type's documents and relation rows.
    public let schemaIsExact: Bool
    /// True when the file has indexes on `relations` by `from_id` and by `to_id` (Loupe's
    /// sample makes them; Persist makes none): without them, each window scans the relation rows.
    public let hasRelationIndexes: Bool
    /// True when `by_type` has an index on `type_name`: without it, a type's keys are found by
    /// walking every object in key order.
    public let hasTypeIndex: Bool

    /// Counts the types first when they were listed without their counts (0 for each when
    /// that read fails: the windows then say why).
    public var catalog: [(name: String, count: Int)] {
        let counts = (try? counts()) ?? types.map { $0.count ?? 0 }
        return zip(types, counts).map { ($0.name, $1) }
    }

    public var listedTypes: [(name: String, count: Int?)] { counted.listed(types.map(\.name)) }

    public func countTypes() throws { try counts() }

    /// Each type's object count, read first when the types were listed without them: through the
    /// index on `type_name`, on a connection of its own (the windows read on meanwhile), once;
    /// then the catalog is kept as paged mode's cache entry for the file as it was opened, so
    /// that the next open lists the counts at once.
    @discardableResult
    public func counts() throws -> [Int] {
        try counted.counts {
            let counts = try file.readOnOwnConnection { db in
                try types.map { try Int.fetchOne(db, sql: "SELECT count(*) FROM by_type WHERE \($0.matches)", arguments: [$0.stored]) ?? 0 }
            }
            if file.stamp() == openedStamp {
                SchemaCache.savePaged(zip(types, counts).map { $0.cached(count: $1) }, file: file, stamp: openedStamp)
            }
            return counts
        }
    }

    public var notes: [String] {
        (schemaIsExact ? [] : ["schema from a sample"])
            + (hasRelationIndexes ? [] : sideIndex != nil ? ["relation index from Loupe's cache"]
                : offersRelationIndex ? ["no relation index: each page scans the relation rows (I builds one in Loupe's cache)"]
                : ["no relation index: each page scans the relation rows"])
            + (hasTypeIndex ? [] : ["no type index: a far jump in a type walks the keys before it"])
            + (file.stamp() == openedStamp ? [] : ["the file changed since it was opened: reopen it to see it as it is"])
    }

    public func keys(type: Int, range: Range<Int>, near: (start: Int, keys: [ObjectID])?) throws -> [ObjectID] {
        let known = near.map { (start: $0.start, keys: $0.keys.compactMap(\.integerKey)) }
        return try keys(type: type, range: range, near: known?.keys.count == near?.keys.count ? known : nil).map(ObjectID.int)
    }

    /// Persist's keys are store-wide: the type is not needed to find them.
    public func window(keys: [ObjectID], of type: String?) throws -> ObjectWindow { try window(keys: keys.compactMap(\.integerKey)) }

    /// A window holds every relation row to an object up to its cut: none is left unfollowed.
    public func unfollowedReferences(to object: ObjectIdentity) throws -> [String] { [] }

    /// Persist's keys are store-wide: each object is read by its key, whatever type it names.
    public func window(objects: [ObjectIdentity]) throws -> ObjectWindow { try window(keys: objects.compactMap(\.id.integerKey)) }

    public func linkTotals(of object: ObjectIdentity) throws -> [ObjectWindow.Link: Int] {
        guard let key = object.id.integerKey else { return [:] }
        return try linkTotals(of: key)
    }

    public func linkKeys(of object: ObjectIdentity, link: ObjectWindow.Link, range: Range<Int>) throws -> [ObjectID] {
        guard let key = object.id.integerKey else { return [] }
        return try linkKeys(of: key, link: link, range: range).map(ObjectID.int)
    }

    public func forEachValue(type: Int, attribute: String?, _ body: (ObjectID, Value) throws -> Bool) throws {
        let info = types[type]
        let only = attribute.map { PersistFormat.MemberNames([$0]) }
        try file.read { db in
            let cursor = try Row.fetchCursor(db, sql: "SELECT id, json FROM by_type WHERE \(info.matches) ORDER BY id", arguments: [info.stored])
            while let row = try cursor.next() {
                guard let id = row[0] as Int64? else { continue }
                // The key itself, or the member's last value as a load keeps it (null when absent
                // or when the document is not an object).
                let value = only.map { PersistFormat.members(row, at: 1, only: $0)?.last?.1 ?? .null } ?? .int(id)
                if try !body(.int(id), value) { return }
            }
        }
    }

    public func kinds(type: Int, names: Set<String>) throws -> [String: ValueKind] {
        try attributeFacts(type: type, names: names).kinds
    }

    public func forEachChunk(type: Int, size: Int, kinds: [String: ValueKind], names: Set<String>?, _ body: (ObjectGraph) throws -> Bool) throws {
        try forEachChunk(type: type, size: size, kinds: kinds, names: names, from: nil, below: nil, body)
    }

    /// The keys at positions `count * i / parts` of the type (found by the key index).
    public func chunkSplits(type: Int, parts: Int) throws -> [ObjectID] {
        let count = catalog[type].count
        return try (1..<max(1, parts)).compactMap { i in
            try keys(type: type, range: count * i / parts ..< count * i / parts + 1, near: nil as (start: Int, keys: [Int64])?).first.map(ObjectID.int)
        }
    }

    public func forEachChunk(type: Int, size: Int, kinds: [String: ValueKind], names: Set<String>?, from: ObjectID?, below: ObjectID?,
                             _ body: (ObjectGraph) throws -> Bool) throws {
        let info = types[type]
        var bounds = "", bound: [DatabaseValueConvertible?] = []
        if let from { bounds += " AND id >= ?"; bound.append(from.integerKey) }
        if let below { bounds += " AND id < ?"; bound.append(below.integerKey) }
        let wants = names.map(PersistFormat.wants(named:))
        var schema = types.map { ($0.name, $0.attributes, $0.relations.map { ($0.name, $0.toMany, $0.targets) }) }
        schema[type].1 += kinds.keys.sorted().filter { !schema[type].1.contains($0) }
        func finished(_ builder: GraphBuilder) -> ObjectGraph {
            for (name, kind) in kinds { builder.addKinds(kind, type: type, attribute: builder.attribute(name, of: type)) }
            return builder.finish()
        }
        try file.readOnOwnConnection { db in
            let cursor = try Row.fetchCursor(db, sql: "SELECT id, json FROM by_type WHERE \(info.matches)\(bounds) ORDER BY id",
                                             arguments: StatementArguments([info.stored] + bound))
            var builder = PersistFormat.schemaBuilder(schema)
            var count = 0
            while let row = try cursor.next() {
                guard let id = row[0] as Int64? else { continue }
                let ref = builder.addObject(type: type, id: .int(id))
                for (name, value) in PersistFormat.members(row, at: 1, wants: wants) ?? [] {
                    builder.set(value, type: type, row: Int(ref.row), attribute: builder.attribute(name, of: type))
                }
                count += 1
                if count == size {
                    guard try body(finished(builder)) else { return }
                    builder = PersistFormat.schemaBuilder(schema)
                    count = 0
                }
            }
            if count > 0 { _ = try body(finished(builder)) }
        }
    }

    /// How many rows from a known key ``keys(type:range:near:)`` steps over before it waits
    /// for the type's count instead (to read from its other end when nearer).
    static let uncountedReach = 10_000

    /// How many documents of each type the sample reads for the schema.
    public static let sampleDocuments = 200
    /// At most this many relation rows of each relation from one object, and as many to it, are
    /// read into a window (in row order); the window says which objects were cut.
    public let edgesPerObject: Int
    /// At most this many objects at the far end of a window's relations get their documents read.
    public static let targetDocuments = 2_000

    /// Persist's keys are store-wide: the largest of any type, whatever `type` names.
    public func maximumIntegerKey(type: Int?) throws -> Int64 {
        try file.read { db in max(try Int64.fetchOne(db, sql: "SELECT max(id) FROM by_type") ?? 0, try SQLiteSequence.value(db, table: "by_type")) }
    }

    /// The file's stamp when it was opened (a commit by anyone changes it).
    public let openedStamp: FileStamp
    /// The ``SideIndex`` of the relation rows, when the store has no index of its own and one was
    /// built (now or before).
    let side: Mutex<DatabaseQueue?>
    let sideBuilt: Mutex<Bool>
    /// Per type, what passes over its documents found of each name (``attributeFacts``).
    let knownFacts = Mutex<[Int: [String: AttributeFact]]>([:])
    /// Each type's count once known (at open, or once ``counts()`` read them).
    let counted: TypeCounts
    var sideIndex: DatabaseQueue? { side.withLock { $0 } }

    /// True when there is no side index and one can be built (windows read through it when the
    /// store has no relation index of its own; statements always do).
    public var offersRelationIndex: Bool { !hasSideIndex && SideIndex.isAvailable(for: file) }
    /// True when a fresh ``SideIndex`` of the store is in Loupe's cache.
    var hasSideIndex: Bool { sideBuilt.withLock { $0 } }
    public var relationIndexBuilt: Bool { hasSideIndex }

    /// Builds the relation index in Loupe's cache (``SideIndex``) and reads relation rows through
    /// it from then on; then reads what statements read of the whole store before their first
    /// answer — each type's attributes' kinds over the type, the relation names — and keeps it
    /// in the cache for the store as it is (``attributeFacts(type:names:isCancelled:)``).
    public func buildRelationIndex(progress: @escaping @Sendable (Int, Int) -> Void, isCancelled: @escaping @Sendable () -> Bool) throws {
        try SideIndex.build(for: file, progress: progress, isCancelled: isCancelled,
                            types: (types.map(\.name), { try self.typeLookup($0) })) { db in
            try self.exactRelations(on: db, relationTable: "relations").map(self.storedShapes)
        }
        guard let queue = SideIndex.open(for: file) else {
            throw StoreError(.busy, path: file.path, reason: "the file changed since it was opened; reopen it")
        }
        sideBuilt.withLock { $0 = true }
        if !hasRelationIndexes { side.withLock { $0 = queue } } else { try? queue.close() }
        // What statements read of the whole store before their first answer, read now and kept
        // in the cache: each type's attributes' kinds, and the relation names.
        for t in types.indices { _ = try attributeFacts(type: t, names: Set(types[t].attributes), isCancelled: isCancelled) }
        _ = try file.read { try relationNames(on: $0) }
    }

    init(file: StoreFile, types: [PagedType], schemaIsExact: Bool, hasRelationIndexes: Bool, hasTypeIndex: Bool, edgesPerObject: Int, stamp: FileStamp) {
        self.file = file
        self.openedStamp = stamp
        let side = SideIndex.open(for: file)
        self.sideBuilt = Mutex(side != nil)
        if hasRelationIndexes { try? side?.close() }
        self.side = Mutex(hasRelationIndexes ? nil : side)
        self.edgesPerObject = edgesPerObject
        self.types = types
        let counts = types.compactMap(\.count)
        self.counted = TypeCounts(counts.count == types.count ? counts : nil)
        self.schemaIsExact = schemaIsExact
        self.hasRelationIndexes = hasRelationIndexes
        self.hasTypeIndex = hasTypeIndex
    }

    /// Opens `file` for paging: the catalog and the schema from a fresh ``SchemaCache`` entry
    /// (a whole load's), else from paged mode's own entry, else read (a `GROUP BY` over `by_type`
    /// and a sample; then kept as paged mode's entry). Throws when the file is not a Persist store.
    public static func open(_ file: StoreFile, edgesPerObject: Int = 2_000) throws -> PersistPages {
        let entry = SchemaCache.entry(for: file)
        let pagedEntry = entry == nil ? SchemaCache.pagedEntry(for: file) : nil
        let stamp = file.stamp()
        return try file.read { db in
            guard try StoreFormats.detect(db, path: file.path) == PersistFormat.self else {
                throw StoreError(.missingTable, path: file.path, reason: "paged mode reads Persist stores (by_type and relations)")
            }
            // Pages are found by key: `id` must be the table's integer key (as Persist writes it).
            let columns = try Row.fetchAll(db, sql: "SELECT name, type, pk FROM pragma_table_info('by_type')")
            guard columns.filter({ ($0["pk"] as Int? ?? 0) > 0 }).map({ ($0["name"] as String?) ?? "" }) == ["id"],
                  columns.contains(where: { ($0["name"] as String?) == "id" && ($0["type"] as String? ?? "").uppercased() == "INTEGER" }) else {
                throw StoreError(.undecodableRow, path: file.path, typeName: "by_type",
                                 reason: "paged mode reads Persist stores keyed by integers (by_type.id INTEGER PRIMARY KEY); this one must be loaded whole")
            }
            let indexed = try Self.indexedColumns(db)
            let hasRelationIndexes = indexed["relations"]?.contains("from_id") == true && indexed["relations"]?.contains("to_id") == true
            let hasTypeIndex = indexed["by_type"]?.contains("type_name") == true
            func pages(_ types: [PagedType], exact: Bool) throws -> PersistPages {
                // A damaged file can list a type twice (its GROUP BY reads a broken b-tree):
                // types are found by name, so such a catalog is refused.
                guard Set(types.map(\.name)).count == types.count else {
                    throw StoreError(.undecodableRow, path: file.path, typeName: "by_type", reason: "the catalog lists a type twice (the file is damaged); it must be loaded whole")
                }
                return PersistPages(file: file, types: types, schemaIsExact: exact, hasRelationIndexes: hasRelationIndexes, hasTypeIndex: hasTypeIndex,
                                    edgesPerObject: max(1, edgesPerObject), stamp: stamp)
            }
            func relations(_ cached: [SchemaCache.CachedRelation]) -> [PagedRelation] {
                cached.map { PagedRelation(name: $0.name, toMany: $0.toMany, targets: $0.targets) }
            }
            // A whole load's entry (its names are text: one repaired from other bytes is read again).
            if let entry, !entry.types.contains(where: { $0.name.contains("\u{FFFD}") }) {
                return try pages(entry.types.map { PagedType(name: $0.name, count: $0.count, stored: $0.name.databaseValue, storedAsBytes: false,
                                                         attributes: $0.attributes, relations: relations($0.relations)) }, exact: true)
            }
            if let pagedEntry {
                return try pages(pagedEntry.types.map {
                    PagedType(name: $0.name, count: $0.count, stored: $0.storedBytes.map { Data($0).databaseValue } ?? $0.name.databaseValue,
                              storedAsBytes: $0.storedBytes != nil, attributes: $0.attributes, relations: relations($0.relations))
                }, exact: false)
            }
            // Listed at once through the type index, counted when first needed (the browser
            // draws its first screen meanwhile: ``countTypes()`` keeps the entry then).
            if entry == nil, hasTypeIndex, let listed = try listedTypes(db) {
                return try pages(try sampledSchema(db, listed, counted: false, relationIndexes: hasRelationIndexes), exact: false)
            }
            let stored = try PersistFormat.storedTypes(db)
            if let entry, entry.types.map(\.name) == stored.map(\.name), entry.types.map(\.count) == stored.map(\.count) {
                return try pages(zip(stored, entry.types).map { info, cached in
                    PagedType(name: info.name, count: info.count, stored: info.stored, storedAsBytes: info.storedAsBytes, attributes: cached.attributes,
                              relations: relations(cached.relations))
                }, exact: true)
            }
            let types = try sampledSchema(db, stored, counted: true, relationIndexes: hasRelationIndexes)
            SchemaCache.savePaged(types.map { $0.cached(count: $0.count ?? 0) }, file: file, stamp: stamp)
            return try pages(types, exact: false)
        }
    }

    /// The stored types in the load's order (each type's first key) without counting their
    /// objects (`count` 0): one seek in the index on `type_name` per type (a skip scan) and one
    /// for its first key, where the catalog's `GROUP BY` reads every entry of it. Nil when the
    /// types cannot be listed that way: a type name that is NULL (the seek steps over it), or an
    /// index SQLite would not seek in for it (a partial one, another collation).
    private static func listedTypes(_ db: Database) throws -> [PersistFormat.TypeInfo]? {
        let step = "SELECT type_name, CAST(type_name AS BLOB) FROM by_type WHERE type_name > ? ORDER BY type_name LIMIT 1"
        let plan = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + step, arguments: [""]).compactMap { $0["detail"] as String? }
        guard plan.contains(where: { $0.contains("INDEX") }), !plan.contains(where: { $0.contains("TEMP B-TREE") }),
              try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM by_type WHERE type_name IS NULL)") == false else { return nil }
        var listed: [(info: PersistFormat.TypeInfo, first: Int64)] = []
        var row = try Row.fetchOne(db, sql: "SELECT type_name, CAST(type_name AS BLOB) FROM by_type WHERE type_name IS NOT NULL ORDER BY type_name LIMIT 1")
        while let found = row {
            let info = PersistFormat.TypeInfo(found, count: 0)
            // A name that is not UTF-8 is bound by its bytes, read as the text they are.
            let bound = info.storedAsBytes ? "CAST(? AS TEXT)" : "?"
            listed.append((info, try Int64.fetchOne(db, sql: "SELECT min(id) FROM by_type WHERE \(info.matches)", arguments: [info.stored]) ?? .max))
            row = try Row.fetchOne(db, sql: step.replacingOccurrences(of: "> ?", with: "> " + bound), arguments: [info.stored])
        }
        return listed.sorted { $0.first < $1.first }.map(\.info)
    }

    /// The first column of each index, by table.
    private static func indexedColumns(_ db: Database) throws -> [String: Set<String>] {
        var out: [String: Set<String>] = [:]
        for table in ["by_type", "relations"] {
            out[table] = try db.columnsLeadingIndexes(on: table)
        }
        return out
    }

    /// The schema from a sample: each type's first documents (keys in the load's column order),
    /// and the relation rows from those objects (names, targets' types, and to-many where one
    /// object has several rows of a name), with the kinds `loupe_relation_kinds` records. A
    /// relation no sampled object has is found by the windows that meet it.
    private static func sampledSchema(_ db: Database, _ stored: [PersistFormat.TypeInfo], counted: Bool, relationIndexes: Bool) throws -> [PagedType] {
        var attributes: [[String]] = []
        var sampled: [Int64: Int] = [:]   // sampled object → type
        for (t, info) in stored.enumerated() {
            var order = PersistFormat.KeyOrder()
            // Without an index on `type_name`, each sample is a scan in key order: from the type's
            // first key, and no further than its last object when it has fewer than the sample.
            let from = info.firstID.map { " AND id >= \($0)" } ?? ""
            let limit = counted ? min(sampleDocuments, max(1, info.count)) : sampleDocuments
            let cursor = try Row.fetchCursor(db, sql: "SELECT id, json FROM by_type WHERE \(info.matches)\(from) ORDER BY id LIMIT \(limit)",
                                             arguments: [info.stored])
            while let row = try cursor.next() {
                if let id = row[0] as Int64? { sampled[id] = t }
                order.add(PersistFormat.members(row, at: 1))
            }
            attributes.append(order.order)
        }
        let index = Dictionary(stored.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
        // The sampled objects' relation rows (by index, or in one pass without one).
        var rows: [(from: Int64, to: Int64, relation: String)] = []
        for chunk in Array(sampled.keys).sorted().chunked(relationIndexes ? 500 : 30_000) {
            let cursor = try Row.fetchCursor(db, sql: "SELECT from_id, to_id, relation FROM relations WHERE from_id IN (\(chunk.map { _ in "?" }.joined(separator: ","))) ORDER BY rowid",
                                             arguments: StatementArguments(chunk))
            while let row = try cursor.next() {
                guard let from = row[0] as Int64?, let to = row[1] as Int64? else { continue }
                rows.append((from, to, (row[2] as DatabaseValue).lenientText ?? ""))
            }
        }
        // The types of the objects they point at.
        var targetType: [Int64: Int] = [:]
        for chunk in Array(Set(rows.map(\.to))).sorted().chunked(500) {
            for row in try Row.fetchAll(db, sql: "SELECT id, type_name FROM by_type WHERE id IN (\(chunk.map { _ in "?" }.joined(separator: ",")))",
                                        arguments: StatementArguments(chunk)) {
                if let id = row[0] as Int64?, let t = index[PersistFormat.typeName(of: row[1])] { targetType[id] = t }
            }
        }
        var kinds: [(type: String, relation: String, toMany: Bool)] = []
        if try db.tableExists(PersistFormat.relationKindsTable) {
            for row in try Row.fetchAll(db, sql: "SELECT type_name, relation, to_many FROM \(PersistFormat.relationKindsTable)") {
                guard let type = (row[0] as DatabaseValue).lenientText, let name = (row[1] as DatabaseValue).lenientText else { continue }
                kinds.append((type, name, (row[2] as DatabaseValue).lenientBool))
            }
        }
        let relations = PersistRows.sampledRelations(rows.map { ($0.from, $0.relation, targetType[$0.to]) }, sampled: sampled, kinds: kinds, types: index, count: stored.count)
        return stored.enumerated().map { t, info in
            PagedType(name: info.name, count: counted ? info.count : nil, stored: info.stored, storedAsBytes: info.storedAsBytes, attributes: attributes[t],
                      relations: relations[t].map { PagedRelation(name: $0.name, toMany: $0.toMany, targets: $0.targets) })
        }
    }

    /// The keys of type `type` at positions `range` (key order), paged from the nearest of what
    /// is already known: the type's first or last key, or a window `near` (its first position and
    /// keys). SQLite steps over the rows between the anchor and the range (keyset paging: a
    /// page next to a known one costs its own rows only).
    ///
    /// While the type is not counted (``countTypes()``), positions a few pages from its first key
    /// or from `near` are read from there (fewer keys come back past the end); a range farther
    /// away waits for the count, to read from whichever end is nearer.
    public func keys(type: Int, range: Range<Int>, near: (start: Int, keys: [Int64])? = nil) throws -> [Int64] {
        let info = types[type]
        let anchorNear = near.map { ($0.start, $0.keys.map(ObjectID.int)) }
        let asked = max(0, range.lowerBound) ..< max(0, range.upperBound)
        var count = counted.known?[type]
        let uncounted = count == nil ? KeysetAnchor.uncounted(for: asked, near: anchorNear, reach: Self.uncountedReach) : nil
        if count == nil, uncounted == nil { count = try counts()[type] }
        let range = asked.clamped(to: 0..<(count ?? .max))
        guard !range.isEmpty, let best = uncounted ?? KeysetAnchor.ranked(for: range, count: count ?? .max, near: anchorNear).first else { return [] }
        return try file.read { db in
            switch best {
            case .forward(let from, let anchorKey):
                let key = anchorKey.flatMap { k -> Int64? in if case .int(let i) = k { return i } else { return nil } }
                let condition = key == nil ? "" : " AND id >= ?"
                var arguments: [DatabaseValueConvertible?] = [info.stored]
                if let key { arguments.append(key) }
                return try Int64.fetchAll(db, sql: "SELECT id FROM by_type WHERE \(info.matches)\(condition) ORDER BY id LIMIT ? OFFSET ?",
                                          arguments: StatementArguments(arguments + [range.count, range.lowerBound - from]))
            case .backward(let below, let anchorKey):
                let key = anchorKey.flatMap { k -> Int64? in if case .int(let i) = k { return i } else { return nil } }
                let condition = key == nil ? "" : " AND id < ?"
                var arguments: [DatabaseValueConvertible?] = [info.stored]
                if let key { arguments.append(key) }
                return try Int64.fetchAll(db, sql: "SELECT id FROM by_type WHERE \(info.matches)\(condition) ORDER BY id DESC LIMIT ? OFFSET ?",
                                          arguments: StatementArguments(arguments + [range.count, below - range.upperBound])).reversed()
            }
        }
    }

    /// A window: the objects `keys` (of any types) with their documents, the relation rows from
    /// and to them (at most ``edgesPerObject`` per relation of an object and to it; ``linkTotals(of:)`` and
    /// ``linkKeys(of:link:range:)`` give the rest of an object cut), and the objects at the other ends
    /// (documents for up to ``targetDocuments`` relation targets, the rest by key and type), as
    /// a graph with the whole schema.
    public func window(keys: [Int64]) throws -> ObjectWindow {
        try file.read { db in
            var read = PersistRows.WindowRows()
            func readDocuments(_ ids: [Int64]) throws {
                for chunk in ids.chunked(500) {
                    let cursor = try Row.fetchCursor(db, sql: "SELECT id, type_name, json FROM by_type WHERE id IN (\(chunk.map { _ in "?" }.joined(separator: ",")))",
                                                     arguments: StatementArguments(chunk))
                    while let row = try cursor.next() {
                        guard let id = row[0] as Int64? else { continue }
                        read.documents[id] = (PersistFormat.typeName(of: row[1]), PersistFormat.members(row, at: 2) ?? [])
                    }
                }
            }
            try readDocuments(Array(Set(keys)))
            // Relation rows from and to the window's objects, in rowid order: at most
            // `edgesPerObject` of each relation from an object and to it (one with more is cut).
            var edges: [(rowid: Int64, from: Int64, to: Int64, relation: String)] = []
            var cut = Set<Int64>()
            let present = read.documents.keys.sorted()
            /// By key, through an index of the store's or of Loupe's cache.
            func readByKey(_ db: Database) throws {
                let limit = edgesPerObject
                func append(_ rows: ArraySlice<Row>) {
                    for row in rows {
                        guard let rowid = row[0] as Int64?, let from = row[1] as Int64?, let to = row[2] as Int64? else { continue }
                        edges.append((rowid, from, to, (row[3] as DatabaseValue).lenientText ?? ""))
                    }
                }
                // Outgoing: each relation's first rows (so that no relation of an object with
                // many edges is left without its targets).
                let names = try db.cachedStatement(sql: "SELECT relation, count(*) FROM relations WHERE from_id = ? GROUP BY relation")
                let outgoing = try db.cachedStatement(sql: "SELECT rowid, from_id, to_id, relation FROM relations WHERE from_id = ? AND relation IS ? ORDER BY rowid LIMIT ?")
                let incoming = try db.cachedStatement(sql: "SELECT rowid, from_id, to_id, relation FROM relations WHERE to_id = ? ORDER BY rowid LIMIT ?")
                for key in present {
                    for relation in try Row.fetchAll(names, arguments: [key]) {
                        if (relation[1] as Int? ?? 0) > limit { cut.insert(key) }
                        append(try Row.fetchAll(outgoing, arguments: [key, relation[0] as DatabaseValue, limit])[...])
                    }
                    // Incoming: the first rows (a backlink group left out is read when shown).
                    let rows = try Row.fetchAll(incoming, arguments: [key, limit + 1])
                    if rows.count > limit { cut.insert(key) }
                    append(rows.prefix(limit))
                }
            }
            if let sideIndex {
                try sideIndex.read { try readByKey($0) }
            } else if hasRelationIndexes {
                try readByKey(db)
            } else {
                // No index: one pass over the relation rows for both ends, cut as they come
                // (outgoing: per relation; incoming: per object, as by key).
                var counts: [Int64: (out: [String: Int], in: Int)] = [:]
                for chunk in present.chunked(8_000) {
                    let list = chunk.map { _ in "?" }.joined(separator: ",")
                    let cursor = try Row.fetchCursor(db, sql: "SELECT rowid, from_id, to_id, relation FROM relations WHERE from_id IN (\(list)) OR to_id IN (\(list))",
                                                     arguments: StatementArguments(chunk + chunk))
                    let inChunk = Set(chunk)
                    while let row = try cursor.next() {
                        guard let rowid = row[0] as Int64?, let from = row[1] as Int64?, let to = row[2] as Int64? else { continue }
                        let relation = (row[3] as DatabaseValue).lenientText ?? ""
                        var keep = false
                        if inChunk.contains(from) {
                            let n = (counts[from]?.out[relation] ?? 0) + 1
                            counts[from, default: ([:], 0)].out[relation] = n
                            if n > edgesPerObject { cut.insert(from) } else { keep = true }
                        }
                        if inChunk.contains(to) {
                            let n = (counts[to]?.in ?? 0) + 1
                            counts[to, default: ([:], 0)].in = n
                            if n > edgesPerObject { cut.insert(to) } else { keep = true }
                        }
                        if keep { edges.append((rowid, from, to, relation)) }
                    }
                }
            }
            var seenEdge = Set<Int64>()
            read.edges = edges.sorted { $0.rowid < $1.rowid }.filter { seenEdge.insert($0.rowid).inserted }.map { ($0.from, $0.to, $0.relation) }
            read.cut = cut
            // The far ends: targets' documents (labels), the rest by type only.
            try readDocuments(Array(read.unreadTargets.prefix(Self.targetDocuments)))
            for chunk in read.untyped.chunked(500) {
                for row in try Row.fetchAll(db, sql: "SELECT id, type_name FROM by_type WHERE id IN (\(chunk.map { _ in "?" }.joined(separator: ",")))",
                                            arguments: StatementArguments(chunk)) {
                    if let id = row[0] as Int64? { read.others[id] = PersistFormat.typeName(of: row[1]) }
                }
            }
            return PersistRows.window(read, keys: keys, types: schemaTypes)
        }
    }

    /// The relation rows from `keys` to stored objects (a row naming no object is left out, as
    /// windows and loads leave it), with their targets' types, by `from_id` through the store's
    /// index (chunks of 500 keys); nil without that index (a scan per chunk).
    public func outgoingLinks(type: Int, keys: [ObjectID]) throws -> [ObjectID: [String: [ObjectIdentity]]]? {
        guard hasRelationIndexes else { return nil }
        return try file.read { db in
            var links: [ObjectID: [String: [ObjectIdentity]]] = [:]
            for chunk in keys.compactMap(\.integerKey).chunked(500) {
                let sql = "SELECT r.from_id, r.to_id, r.relation, t.type_name FROM relations r JOIN by_type t ON t.id = r.to_id "
                    + "WHERE r.from_id IN (\(chunk.map { _ in "?" }.joined(separator: ","))) ORDER BY r.rowid"
                let cursor = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(chunk))
                while let row = try cursor.next() {
                    guard let from = row[0] as Int64?, let to = row[1] as Int64? else { continue }
                    let relation = (row[2] as DatabaseValue).lenientText ?? ""
                    links[.int(from), default: [:]][relation, default: []].append(ObjectIdentity(type: TypeName(PersistFormat.typeName(of: row[3])), id: .int(to)))
                }
            }
            return links
        }
    }

    /// The schema as ``PersistRows`` builds windows over it.
    var schemaTypes: [PersistRows.TypeSchema] {
        types.map { PersistRows.TypeSchema(name: $0.name, attributes: $0.attributes, kinds: [:], relations: $0.relations.map { ($0.name, $0.toMany, $0.targets) }) }
    }

    /// Each link of object `key` with its number of edges: its relations by name and target
    /// type, its backlinks by source type and relation name.
    public func linkTotals(of key: Int64) throws -> [ObjectWindow.Link: Int] {
        var out: [ObjectWindow.Link: Int] = [:]
        for (column, other, outgoing) in [("from_id", "to_id", true), ("to_id", "from_id", false)] {
            if let sideIndex {
                // The rows from Loupe's index, the other ends' types from the store.
                let rows = try sideIndex.read { try Row.fetchAll($0, sql: "SELECT \(other), relation FROM relations WHERE \(column) = ?", arguments: [key]) }
                let types = try typeNames(of: rows.compactMap { $0[0] as Int64? })
                for row in rows {
                    guard let end = row[0] as Int64?, let type = types[end] else { continue }
                    out[ObjectWindow.Link(relation: (row[1] as DatabaseValue).lenientText ?? "", outgoing: outgoing, sourceType: type), default: 0] += 1
                }
                continue
            }
            let rows = try file.read { db in
                try Row.fetchAll(db, sql: """
                    SELECT o.type_name, r.relation, count(*) FROM relations r JOIN by_type o ON o.id = r.\(other)
                    WHERE r.\(column) = ? GROUP BY o.type_name, r.relation
                    """, arguments: [key])
            }
            for row in rows {
                let link = ObjectWindow.Link(relation: (row[1] as DatabaseValue).lenientText ?? "", outgoing: outgoing,
                                             sourceType: PersistFormat.typeName(of: row[0]))
                out[link, default: 0] += (row[2] as Int?) ?? 0
            }
        }
        return out
    }

    /// The type name of each stored key in `keys`.
    private func typeNames(of keys: [Int64]) throws -> [Int64: String] {
        try file.read { db in
            var out: [Int64: String] = [:]
            for chunk in Array(Set(keys)).sorted().chunked(500) {
                for row in try Row.fetchAll(db, sql: "SELECT id, type_name FROM by_type WHERE id IN (\(chunk.map { _ in "?" }.joined(separator: ",")))",
                                            arguments: StatementArguments(chunk)) {
                    if let id = row[0] as Int64? { out[id] = PersistFormat.typeName(of: row[1]) }
                }
            }
            return out
        }
    }

    /// The keys at the other end of one link of object `key`, positions `range` in the order a
    /// load gives them: a relation's targets in row order, backlinks' sources in key order.
    public func linkKeys(of key: Int64, link: ObjectWindow.Link, range: Range<Int>) throws -> [Int64] {
        if link.outgoing {
            let sql = "SELECT to_id FROM relations WHERE from_id = ? AND relation = ? ORDER BY rowid LIMIT ? OFFSET ?"
            let arguments: StatementArguments = [key, link.relation, range.count, range.lowerBound]
            if let sideIndex { return try sideIndex.read { try Int64.fetchAll($0, sql: sql, arguments: arguments) } }
            return try file.read { try Int64.fetchAll($0, sql: sql, arguments: arguments) }
        }
        if let sideIndex {
            // Every source from Loupe's index, those of the link's type kept.
            let sources = try sideIndex.read {
                try Int64.fetchAll($0, sql: "SELECT from_id FROM relations WHERE to_id = ? AND relation = ? ORDER BY from_id, rowid", arguments: [key, link.relation])
            }
            let types = try typeNames(of: sources)
            let kept = sources.filter { types[$0] == link.sourceType }
            return Array(kept[min(kept.count, range.lowerBound) ..< min(kept.count, range.upperBound)])
        }
        return try file.read { db in
            try Int64.fetchAll(db, sql: """
                SELECT r.from_id FROM relations r JOIN by_type o ON o.id = r.from_id
                WHERE r.to_id = ? AND r.relation = ? AND o.type_name = ? ORDER BY r.from_id, r.rowid LIMIT ? OFFSET ?
                """, arguments: [key, link.relation, link.sourceType ?? "", range.count, range.lowerBound])
        }
    }
}

extension PersistFormat {
    /// The order a load gives a type's columns from the documents it reads first: keys holding
    /// scalars, then keys holding arrays or objects, as first seen in the first ``sampleSize``
    /// documents that are objects; then later keys as they appear.
    struct KeyOrder {
        private var sampled: [String] = [], nested = Set<String>(), later: [String] = [], seen = Set<String>()
        private var objects = 0

        /// Adds one document's members (nil: not a JSON object).
        mutating func add(_ members: [(String, Value)]?) {
            guard let members else { return }
            objects += 1
            let inSample = objects <= PersistFormat.sampleSize
            for (key, value) in members {
                let spellable = !key.contains("\"") && !key.contains("\\")
                if inSample, spellable {
                    switch value { case .array, .object: nested.insert(key); default: break }
                }
                guard seen.insert(key).inserted else { continue }
                if inSample, spellable { sampled.append(key) } else { later.append(key) }
            }
        }

        var order: [String] { sampled.filter { !nested.contains($0) } + sampled.filter { nested.contains($0) } + later }
    }

    /// Member names to read, matched against a key's stored bytes (or its decoded text).
    struct MemberNames {
        let names: Set<String>
        let bytes: [[UInt8]]
        /// True when a name holds U+FFFD: a key of invalid UTF-8 may read as it (see ``repairedKey(_:)``).
        let repairs: Bool
        init<S: Sequence>(_ names: S) where S.Element == String {
            self.names = Set(names)
            bytes = self.names.map { Array($0.utf8) }
            repairs = self.names.contains { $0.contains("\u{FFFD}") }
        }
        func contains(_ key: UnsafeBufferPointer<UInt8>, _ decoded: String?) -> Bool {
            if let decoded { return names.contains(decoded) }
            if bytes.contains(where: { $0.elementsEqual(key) }) { return true }
            return repairs && names.contains(PersistFormat.repairedKey(key))
        }
    }

    /// A member's key without escapes as a load names it: its bytes as UTF-8, an invalid
    /// sequence read as U+FFFD.
    static func repairedKey(_ key: UnsafeBufferPointer<UInt8>) -> String { String(decoding: key, as: UTF8.self) }

    /// The members of the JSON object document in column `index` of `row`, as the load parses it
    /// (only those named in `only`, the others checked but not built); nil when it is not an
    /// object (or not JSON, or NULL).
    static func members(_ row: Row, at index: Int, only: MemberNames? = nil) -> [(String, Value)]? {
        members(row, at: index, wants: only.map { only in { only.contains($0, $1) } })
    }

    /// A test of member keys for ``members(_:at:wants:)``: is the key one of `names`, ignoring
    /// case as paths match names? Each key is decided once; the keys seen are few and short,
    /// so they are found again by their bytes.
    public static func wants(named names: Set<String>) -> (UnsafeBufferPointer<UInt8>, String?) -> Bool {
        var seen: [(bytes: [UInt8], wanted: Bool)] = []
        var seenDecoded: [String: Bool] = [:]
        return { key, decoded in
            if decoded == nil, let known = seen.first(where: { $0.bytes.count == key.count && $0.bytes.elementsEqual(key) }) { return known.wanted }
            if let decoded, let known = seenDecoded[decoded] { return known }
            let name = decoded ?? PersistFormat.repairedKey(key)
            let found = names.contains(name) || names.contains { $0.caseInsensitiveCompare(name) == .orderedSame }
            if let decoded { seenDecoded[decoded] = found } else if seen.count < 256 { seen.append((Array(key), found)) }
            return found
        }
    }

    /// The same, building the members `wants` is true for (given each key's bytes, and the key
    /// when it has escapes).
    static func members(_ row: Row, at index: Int, wants: ((UnsafeBufferPointer<UInt8>, String?) -> Bool)?) -> [(String, Value)]? {
        var members: [(String, Value)] = []
        let isObject: Bool? = try? row.withUnsafeData(atIndex: index) { data in
            guard let data else { return false }
            return data.withUnsafeBytes { raw in
                try? JSONReader.forEachMember(bytes: raw.bindMemory(to: UInt8.self), wants: wants) { key, decoded, value in
                    members.append((decoded ?? PersistFormat.repairedKey(key), value))
                }
            }
        }
        return isObject == true ? members : nil
    }
}

extension ObjectID {
    /// The key as Persist stores it (every Persist object has an integer key).
    var integerKey: Int64? { if case .int(let i) = self { return i } else { return nil } }
}

extension Array {
    /// The array in consecutive pieces of at most `size` elements.
    public func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0 ..< Swift.min(count, $0 + size)] }
    }
}
