import Foundation
import GRDB
import LoupeModel
import Synchronization

/// One relation of a Persist store as a whole load finds it: its source type and name, whether
/// some object has several rows of it (or `loupe_relation_kinds` says it is to-many), and the
/// types of the objects its rows point at. Types are positions in ``PersistPages/catalog``.
public struct RelationShape: Sendable, Equatable {
    public let source: Int
    public let name: String
    public let toMany: Bool
    public let targets: [Int]
    /// True when every row of this name comes from an object of `source` and points at an
    /// object of its one target type: a hop over it needs no join to tell.
    public let exclusive: Bool
}

/// Reads one member of Persist documents as a load holds it: the member's last value in a JSON
/// object document, null when the document has none, is not an object, or is not JSON
/// (``DocumentMembers`` of one name).
public struct DocumentMember: Sendable {
    public let name: String
    private let members: DocumentMembers

    public init(_ name: String) {
        self.name = name
        members = DocumentMembers([name])
    }

    /// The member's value in `document` (a `json` cell as SQLite hands it over).
    public func value(in document: DatabaseValue) -> Value {
        var found: [Value] = [.null]
        members.values(in: document, into: &found)
        return found[0]
    }
}

/// Several members of Persist documents read in one pass over each document, as a load holds
/// them (``DocumentMember`` for each): the values a statement reads per object (sort keys,
/// groups, columns) of attributes SQLite's `json_extract` would read otherwise than the load
/// (dates, booleans, repeated or escaped names), one parse of the document for all of them.
public struct DocumentMembers: Sendable {
    /// The members read, in the order ``values(_:at:into:)`` gives them (a name may repeat).
    public let names: [String]
    /// The distinct names, their UTF-8 bytes, and where each goes among ``names``.
    private let unique: [String: Int]
    private let uniqueBytes: [[UInt8]]
    private let positions: [[Int]]
    /// True when a name holds U+FFFD: a key of invalid UTF-8 may read as it.
    private let repairs: Bool

    public init(_ names: [String]) {
        self.names = names
        var unique: [String: Int] = [:], uniqueBytes: [[UInt8]] = [], positions: [[Int]] = []
        for (i, name) in names.enumerated() {
            if let u = unique[name] { positions[u].append(i); continue }
            unique[name] = uniqueBytes.count
            uniqueBytes.append(Array(name.utf8))
            positions.append([i])
        }
        (self.unique, self.uniqueBytes, self.positions) = (unique, uniqueBytes, positions)
        repairs = names.contains { $0.contains("\u{FFFD}") }
    }

    /// Which distinct name a member's key is (its bytes, or its text when it had escapes), or -1:
    /// as ``PersistFormat/MemberNames`` matches it.
    @inline(__always)
    private func match(_ key: UnsafeBufferPointer<UInt8>, _ decoded: String?) -> Int {
        if let decoded { return unique[decoded] ?? -1 }
        for (u, bytes) in uniqueBytes.enumerated() where bytes.count == key.count {
            if key.isEmpty || bytes.withUnsafeBufferPointer({ memcmp($0.baseAddress!, key.baseAddress!, key.count) == 0 }) { return u }
        }
        return repairs ? unique[PersistFormat.repairedKey(key)] ?? -1 : -1
    }

    /// Each name's value in the document in column `index` of `row` (the member's last value;
    /// null when the document has none, is not an object, or is not JSON), written over
    /// `values` (one slot per name).
    public func values(_ row: Row, at index: Int, into values: inout [Value]) {
        for i in values.indices { values[i] = .null }
        try? row.withUnsafeData(atIndex: index) { data in
            data?.withUnsafeBytes { read($0, into: &values) }
        }
    }

    /// Each name's value in `document` (a `json` cell as SQLite hands it over), as
    /// ``values(_:at:into:)``.
    public func values(in document: DatabaseValue, into values: inout [Value]) {
        for i in values.indices { values[i] = .null }
        switch document.storage {
        case .string(var text): text.withUTF8 { read(UnsafeRawBufferPointer($0), into: &values) }
        case .blob(let data): data.withUnsafeBytes { read($0, into: &values) }
        default: break
        }
    }

    /// Reads one document's members into `values` (all null before); all null again when it is
    /// no JSON object.
    private func read(_ raw: UnsafeRawBufferPointer, into values: inout [Value]) {
        var matched = -1
        let isObject = (try? JSONReader.forEachMember(bytes: raw.bindMemory(to: UInt8.self), wants: { key, decoded in
            matched = match(key, decoded)
            return matched >= 0
        }) { _, _, value in
            for p in positions[matched] { values[p] = value }
        }) ?? false
        // A document that does not parse holds nothing, as for a load (members seen before the
        // error are dropped); later members of one name replace earlier ones.
        if !isObject { for i in values.indices { values[i] = .null } }
    }
}

extension PersistPages {
    /// Every relation of every type exactly as a whole load would find it: every relation row read
    /// once in row order, each end's type found by key (rows that point at nothing left out, as a
    /// load leaves them), a relation to-many when one object has several rows of it or
    /// `loupe_relation_kinds` says so. Nil when the rows hold what SQL would join otherwise than a
    /// load (keys that are not integers, names that are not text, type names stored as bytes).
    /// The caller keeps the answer: it holds until the file changes.
    public func exactRelations(on db: Database, relationTable: String) throws -> [RelationShape]? {
        guard !types.contains(where: \.storedAsBytes) else { return nil }
        // Read when the side index was built, or by an earlier session, while it describes the file.
        if hasSideIndex, let kept = SideIndex.shapes(for: file), let shapes = relationShapes(kept) { return shapes }
        if relationTable == "relations", let kept = SchemaCache.relations(for: file, stamp: openedStamp) {
            guard let kept else { return nil }
            if let shapes = relationShapes(kept) { return shapes }
        }
        let read = try readRelations(on: db, relationTable: relationTable)
        if relationTable == "relations" { SchemaCache.saveRelations(read.map(storedShapes), file: file, stamp: openedStamp) }
        return read
    }

    /// `shapes` kept by type name as this catalog's; nil when one names a type not in it.
    private func relationShapes(_ kept: [SideIndex.StoredShape]) -> [RelationShape]? {
        let index = Dictionary(types.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
        let shapes = kept.compactMap { s -> RelationShape? in
            guard let source = index[s.source] else { return nil }
            let targets = s.targets.compactMap { index[$0] }
            return targets.count == s.targets.count ? RelationShape(source: source, name: s.name, toMany: s.toMany, targets: targets, exclusive: s.exclusive) : nil
        }
        return shapes.count == kept.count ? shapes : nil
    }

    /// `shapes` by type name, as the caches keep them.
    func storedShapes(_ shapes: [RelationShape]) -> [SideIndex.StoredShape] {
        shapes.map { SideIndex.StoredShape(source: types[$0.source].name, name: $0.name, toMany: $0.toMany,
                                           targets: $0.targets.map { types[$0].name }, exclusive: $0.exclusive) }
    }

    /// ``exactRelations(on:relationTable:)`` read from the rows: every one, once.
    private func readRelations(on db: Database, relationTable: String) throws -> [RelationShape]? {
        let typeIndex = try typeLookup(db)
        // Which objects have a row of a relation already: a bit per key over a dense span.
        guard let bounds = try Row.fetchOne(db, sql: "SELECT min(id), max(id), count(*) FROM by_type"),
              let low = bounds[0] as Int64?, let high = bounds[1] as Int64?, let count = bounds[2] as Int? else { return [] }
        let span = Int(clamping: high.subtractingReportingOverflow(low).partialValue) + 1
        let dense = high >= low && span <= 4 * count + 1_024
        struct Shape { var targets = Set<Int>(); var toMany = false; var rows = 0; var seen = Set<Int64>(); var seenBits: [UInt64] = [] }
        var names: [String: Int] = [:], nameList: [String] = [], rowsNamed: [Int] = []
        var shapes: [Shape] = [], keys: [Int] = [], slot: [Int: Int] = [:]   // key: relation name number << 16 | source type
        let cursor = try Row.fetchCursor(db, sql: "SELECT from_id, to_id, relation FROM \(relationTable)")
        while let row = try cursor.next() {
            guard case .int64(let from) = (row[0] as DatabaseValue).storage, case .int64(let to) = (row[1] as DatabaseValue).storage,
                  case .string(let name) = (row[2] as DatabaseValue).storage else { return nil }
            let n = names[name] ?? {
                nameList.append(name)
                rowsNamed.append(0)
                names[name] = nameList.count - 1
                return nameList.count - 1
            }()
            rowsNamed[n] += 1
            guard let source = typeIndex(from), let target = typeIndex(to) else { continue }
            let key = n << 16 | source
            let s = slot[key] ?? {
                shapes.append(Shape(seenBits: dense ? [UInt64](repeating: 0, count: (span + 63) / 64) : []))
                keys.append(key)
                slot[key] = shapes.count - 1
                return shapes.count - 1
            }()
            shapes[s].targets.insert(target)
            shapes[s].rows += 1
            if shapes[s].toMany { continue }
            if dense, from >= low, from <= high {
                let i = Int(from - low), bit: UInt64 = 1 << UInt64(i & 63)
                if shapes[s].seenBits[i >> 6] & bit != 0 { shapes[s].toMany = true; shapes[s].seenBits = [] } else { shapes[s].seenBits[i >> 6] |= bit }
            } else if !shapes[s].seen.insert(from).inserted {
                shapes[s].toMany = true
                shapes[s].seen = []
            }
        }
        var found: [String: (source: Int, name: String, toMany: Bool, targets: Set<Int>, exclusive: Bool)] = [:]
        for (key, shape) in zip(keys, shapes) {
            let (source, name) = (key & 0xFFFF, nameList[key >> 16])
            found[types[source].name + "\u{0}" + name] = (source, name, shape.toMany, shape.targets,
                                                           shape.rows == rowsNamed[key >> 16] && shape.targets.count == 1)
        }
        // What Loupe recorded of each relation's kind, and relations it declared without rows.
        let index = Dictionary(types.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
        if try db.tableExists(PersistFormat.relationKindsTable) {
            for row in try Row.fetchAll(db, sql: "SELECT type_name, relation, to_many FROM \(PersistFormat.relationKindsTable)") {
                guard let type = (row[0] as DatabaseValue).lenientText, let source = index[type], let name = (row[1] as DatabaseValue).lenientText else { continue }
                let key = type + "\u{0}" + name
                var shape = found[key] ?? (source, name, false, [], false)
                if (row[2] as DatabaseValue).lenientBool { shape.toMany = true }
                found[key] = shape
            }
        }
        return found.values.sorted { ($0.source, $0.name) < ($1.source, $1.name) }
            .map { RelationShape(source: $0.source, name: $0.name, toMany: $0.toMany, targets: $0.targets.sorted(), exclusive: $0.exclusive) }
    }

    /// Each object's type (a position in the catalog) by key, read from `by_type` once: a flat
    /// table over the keys' span when they are dense (as Persist's rowids are), else a dictionary.
    func typeLookup(_ db: Database) throws -> (Int64) -> Int? {
        guard let bounds = try Row.fetchOne(db, sql: "SELECT min(id), max(id), count(*) FROM by_type"),
              let low = bounds[0] as Int64?, let high = bounds[1] as Int64?, let count = bounds[2] as Int? else { return { _ in nil } }
        let span = Int(clamping: high.subtractingReportingOverflow(low).partialValue) + 1
        let dense = high >= low && span <= 4 * count + 1_024
        var flat = dense ? [UInt16](repeating: 0, count: span) : []
        var sparse: [Int64: UInt16] = [:]
        for (t, info) in types.enumerated() {
            let cursor = try Int64.fetchCursor(db, sql: "SELECT id FROM by_type WHERE \(info.matches)", arguments: [info.stored])
            while let id = try cursor.next() {
                if dense { flat[Int(id - low)] = UInt16(t + 1) } else { sparse[id] = UInt16(t + 1) }
            }
        }
        if dense {
            return { [flat] id in
                guard id >= low, id <= high else { return nil }
                let t = flat[Int(id - low)]
                return t == 0 ? nil : Int(t) - 1
            }
        }
        return { [sparse] id in sparse[id].map { Int($0) - 1 } }
    }

    /// True when the side index numbers its rows' ends by this catalog's types (statements then
    /// tell a row's types from the row).
    public var sideIndexKnowsTypes: Bool {
        hasSideIndex && SideIndex.typeNames(for: file) == types.map(\.name)
    }

    /// What the members `names` of type `type`'s documents hold over the whole type (one pass):
    /// each one's kinds as a load reads them (a name no document holds is absent), and the names
    /// SQLite's `json_extract(json, '$."name"')` reads exactly as the load does — every document
    /// of the type is JSON object text, and the name is spelt without escapes and held at most
    /// once in each (SQLite would read a repeated member's first value, the load its last), and its
    /// text has no U+FFFD (which the load makes of what SQLite would hand over otherwise).
    /// `isCancelled` stops the pass (throwing).
    /// Each name's facts are read once per state of the store (``knownFacts``; kept across this
    /// session's commits where they cannot have changed).
    public func attributeFacts(type: Int, names: Set<String>, isCancelled: () -> Bool = { false }) throws -> (kinds: [String: ValueKind], plain: Set<String>) {
        var known = knownFacts.withLock { $0[type] ?? [:] }
        var missing = names.filter { known[$0] == nil }
        // Those kept beside an attribute's order, or by an earlier session, for this state of the
        // store are not read again.
        if !missing.isEmpty, type < types.count {
            let cached = SchemaCache.facts(for: file, stamp: openedStamp)[types[type].name] ?? [:]
            let kept = SortIndex.facts(for: file, stamp: openedStamp, type: types[type].name).merging(cached) { sorted, _ in sorted }.filter { missing.contains($0.key) }
            if !kept.isEmpty {
                knownFacts.withLock { $0[type, default: [:]].merge(kept) { old, _ in old } }
                known.merge(kept) { old, _ in old }
                missing = names.filter { known[$0] == nil }
            }
        }
        if !missing.isEmpty {
            let before = file.stamp()
            let read = try readAttributeFacts(type: type, names: Set(missing), isCancelled: isCancelled)
            var found: [String: AttributeFact] = [:]
            for name in missing { found[name] = AttributeFact(counts: read.counts[name] ?? [:], plain: read.plain.contains(name)) }
            knownFacts.withLock { $0[type, default: [:]].merge(found) { _, new in new } }
            // Kept for the next session when they describe the store as it was opened.
            if before == openedStamp { SchemaCache.saveFacts([types[type].name: found], file: file, stamp: openedStamp) }
        }
        let all = knownFacts.withLock { $0[type] ?? [:] }
        var kinds: [String: ValueKind] = [:]
        var plain = Set<String>()
        for name in names {
            guard let fact = all[name] else { continue }
            if let k = fact.kinds { kinds[name] = k }
            if fact.plain { plain.insert(name) }
        }
        return (kinds, plain)
    }

    /// Keeps `ranks`, the order of `attribute` over type `typeName` at `stamp`, in Loupe's cache
    /// (``SortIndex``), with what this session's pass over the type's documents found of it when
    /// that pass read this same state of the store.
    public func keepOrder(_ ranks: SortIndex.Ranks, stamp: FileStamp, type typeName: String, attribute: String) throws {
        let fact = stamp == openedStamp ? types.firstIndex { $0.name == typeName }.flatMap { t in knownFacts.withLock { $0[t]?[attribute] } } : nil
        try SortIndex.keep(ranks, fact: fact, for: file, stamp: stamp, type: typeName, attribute: attribute)
    }

    /// Every relation name the store's rows use (lowercased), when an earlier session kept them
    /// in Loupe's cache for the store as it was opened.
    var keptRelationNames: Set<String>? { SchemaCache.relationNames(for: file, stamp: openedStamp) }

    /// Every relation name the store's rows use (lowercased): kept by an earlier session, else
    /// read on `db` (one pass over the relation rows of `relationTable`) and kept for the next.
    public func relationNames(on db: Database, relationTable: String = "relations") throws -> Set<String> {
        if let kept = keptRelationNames { return kept }
        let read = Set(try String.fetchAll(db, sql: "SELECT DISTINCT CAST(relation AS TEXT) FROM \(relationTable) WHERE relation IS NOT NULL").map { $0.lowercased() })
        SchemaCache.saveFacts([:], relationNames: read, file: file, stamp: openedStamp)
        return read
    }

    /// What one pass over a type's documents found of one name (``attributeFacts``): how many
    /// values of each kind the documents hold (every member of that name), and whether
    /// `json_extract` reads it as the load does. Counts, so that a commit's documents before and
    /// after can move them exactly (``PersistPages/afterCommit(_:newAttributes:reach:)``).
    struct AttributeFact: Sendable, Codable, Equatable {
        var counts: [ValueKind.RawValue: Int]
        var plain: Bool
        /// The kinds held (nil: no document holds the name).
        var kinds: ValueKind? {
            let held = counts.filter { $0.value > 0 }.keys
            return held.isEmpty ? nil : held.reduce(into: ValueKind()) { $0.insert(ValueKind(rawValue: $1)) }
        }
    }

    /// Calls `body` with each member of the document `raw` whose name `only` holds: its name, its
    /// value as the load reads it, and true when SQLite's `json_extract` would read it otherwise
    /// (spelt with escapes, repeated, text holding U+FFFD). False when it is not a JSON object.
    static func forEachMember(of raw: UnsafeRawBufferPointer, only: PersistFormat.MemberNames, _ body: (String, Value, _ awkward: Bool) -> Void) -> Bool {
        var here: [String] = []
        return ((try? JSONReader.forEachMember(bytes: raw.bindMemory(to: UInt8.self), wants: { key, decoded in
            guard only.contains(key, decoded) else { return false }
            return true
        }) { key, decoded, value in
            let name = decoded ?? PersistFormat.repairedKey(key)
            // Repeated, or text with what SQLite would hand over otherwise (a lone surrogate,
            // bytes that are not UTF-8: the load shows U+FFFD).
            var awkward = decoded != nil || here.contains(name)
            if case .string(let text) = value, text.unicodeScalars.contains("\u{FFFD}") { awkward = true }
            here.append(name)
            body(name, value, awkward)
        }) ?? false)
    }

    private func readAttributeFacts(type: Int, names: Set<String>, isCancelled: () -> Bool) throws -> (counts: [String: [ValueKind.RawValue: Int]], plain: Set<String>) {
        let info = types[type]
        let only = PersistFormat.MemberNames(names)
        var counts: [String: [ValueKind.RawValue: Int]] = [:]
        var awkward = Set<String>()
        var documentsPlain = true
        try file.read { db in
            let cursor = try Row.fetchCursor(db, sql: "SELECT json FROM by_type WHERE \(info.matches)", arguments: [info.stored])
            var read = 0
            while let row = try cursor.next() {
                read += 1
                if read % 16_384 == 0, isCancelled() { throw StoreError(.unreadable, path: file.path, reason: "cancelled") }
                let isObject: Bool? = try? row.withUnsafeData(atIndex: 0) { data in
                    guard let data else { return false }
                    return data.withUnsafeBytes { raw in
                        Self.forEachMember(of: raw, only: only) { name, value, isAwkward in
                            if isAwkward { awkward.insert(name) }
                            counts[name, default: [:]][value.kind.rawValue, default: 0] += 1
                        }
                    }
                }
                if isObject != true { documentsPlain = false }
                if case .string = (row[0] as DatabaseValue).storage {} else { documentsPlain = false }
            }
        }
        let plain: Set<String> = documentsPlain ? names.subtracting(awkward).filter(SQL.spellsJSONPath) : []
        return (counts, plain)
    }

    /// The store's schema as a graph with no objects, for compiling a statement as a whole load
    /// would: each type's attributes (the schema's, and those `kinds` found over the whole type,
    /// with those kinds) and `relations`.
    public func schemaGraph(relations: [RelationShape], kinds: [Int: [String: ValueKind]]) -> ObjectGraph {
        var schema = types.map { ($0.name, $0.attributes, [(name: String, toMany: Bool, targets: [Int])]()) }
        for (t, found) in kinds {
            schema[t].1 += found.keys.sorted().filter { !schema[t].1.contains($0) }
        }
        for r in relations { schema[r.source].2.append((r.name, r.toMany, r.targets)) }
        let builder = PersistFormat.schemaBuilder(schema)
        for (t, found) in kinds {
            for (name, kind) in found { builder.addKinds(kind, type: t, attribute: builder.attribute(name, of: t)) }
        }
        return builder.finish()
    }

    /// The objects `keys` of type `type`, in that order, as a graph with the store's schema and
    /// their attributes (no relations): what printing a statement's objects reads (see
    /// ``documents(_:type:keys:_:)``); keys of no object of the type are left out.
    public func objects(type: Int, keys: [ObjectID]) throws -> ObjectGraph {
        let schema = types.map { ($0.name, $0.attributes, [(name: String, toMany: Bool, targets: [Int])]()) }
        let builder = PersistFormat.schemaBuilder(schema)
        let ids = keys.compactMap(\.integerKey)
        try file.read { db in
            let members = try documents(db, type: type, keys: ids) { PersistFormat.members($0, at: 1) }
            for key in ids {
                guard let found = members[key] else { continue }
                let ref = builder.addObject(type: type, id: .int(key))
                for (name, value) in found ?? [] {
                    builder.set(value, type: type, row: Int(ref.row), attribute: builder.attribute(name, of: type))
                }
            }
        }
        return builder.finish()
    }

    /// The attributes ``objects(type:keys:)`` of all of `keys` would give type `type`: the
    /// schema's, then any other member name of their documents, in the order of `keys` — the
    /// documents' keys scanned, their values skipped. A schema from a whole load has every name.
    public func attributeNames(type: Int, keys: [ObjectID]) throws -> [String] {
        var names = types[type].attributes
        guard !schemaIsExact else { return names }
        var seen = Set(names)
        let ids = keys.compactMap(\.integerKey)
        try file.read { db in
            for start in stride(from: 0, to: ids.count, by: 20_000) {
                let part = Array(ids[start ..< min(ids.count, start + 20_000)])
                let found = try documents(db, type: type, keys: part) { row -> [String] in
                    // Only a document that is a whole JSON object gives its members, as in a load.
                    var members: [String] = []
                    let isObject: Bool? = try? row.withUnsafeData(atIndex: 1) { data in
                        guard let data else { return false }
                        return data.withUnsafeBytes { raw in
                            (try? JSONReader.forEachMember(bytes: raw.bindMemory(to: UInt8.self), wants: { key, decoded in
                                members.append(decoded ?? PersistFormat.repairedKey(key))
                                return false
                            }) { _, _, _ in }) ?? false
                        }
                    }
                    return isObject == true ? members : []
                }
                for key in part {
                    for name in found[key] ?? [] where seen.insert(name).inserted { names.append(name) }
                }
            }
        }
        return names
    }

    /// What `read` makes of the row (`id`, `json`) of each stored object of type `type` among
    /// `keys`, by key. Keys dense in their span (few other objects between the least and the
    /// greatest: a type's objects in key order, as most answers list them) are read by one range
    /// scan; others by key, a few hundred at a time.
    private func documents<T>(_ db: Database, type: Int, keys: [Int64], _ read: (Row) -> T) throws -> [Int64: T] {
        let info = types[type]
        var out: [Int64: T] = [:]
        out.reserveCapacity(keys.count)
        let wanted = Set(keys)
        if let low = wanted.min(), let high = wanted.max(), high - low < Int64(2 * wanted.count + 64) {
            let cursor = try Row.fetchCursor(db.cachedStatement(sql: "SELECT id, json FROM by_type WHERE id BETWEEN ? AND ? AND \(info.matches)"),
                                             arguments: [low, high, info.stored])
            while let row = try cursor.next() {
                if let id = row[0] as Int64?, wanted.contains(id) { out[id] = read(row) }
            }
            return out
        }
        for chunk in Array(wanted).chunked(500) {
            let sql = "SELECT id, json FROM by_type WHERE \(info.matches) AND id IN (\(chunk.map { _ in "?" }.joined(separator: ",")))"
            let cursor = try Row.fetchCursor(chunk.count == 500 ? db.cachedStatement(sql: sql) : db.makeStatement(sql: sql),
                                             arguments: StatementArguments([info.stored] + chunk.map(\.databaseValue)))
            while let row = try cursor.next() { if let id = row[0] as Int64? { out[id] = read(row) } }
        }
        return out
    }

    /// The SQL condition that a `by_type` row under `alias` is of type `type`, and the value its
    /// `?` takes.
    public func typeCondition(_ type: Int, alias: String) -> (sql: String, argument: DatabaseValue) {
        let info = types[type]
        return ("\(alias).\(info.matches)", info.stored)
    }

    /// Runs `body` on a connection of its own to the file (read-only, outside any transaction, so
    /// that `interrupt` from another thread stops it), with the name of the table of relation rows
    /// to read: the side index's copy when there is one (attached read-only as `loupe_side`: its
    /// indexes by relation name serve joins and counts), else the file's.
    public func withStatementConnection<T>(isCancelled: @escaping @Sendable () -> Bool, _ body: (Database, String) throws -> T) throws -> T {
        try file.readInterruptibly(isCancelled: isCancelled) { db in try body(db, try attachSideIndex(db)) }
    }

    /// Like ``withStatementConnection(isCancelled:_:)`` on `workers` connections at once, each on a
    /// thread of its own and all on one snapshot of the file: `body(worker, db, relationTable)`;
    /// the results in worker order. Throws ``StoreError/Kind/busy`` when another process commits
    /// between every two attempts to begin the snapshot (the caller reads on one connection).
    public func withStatementConnections<T: Sendable>(workers: Int, isCancelled: @escaping @Sendable () -> Bool,
                                                      _ body: @escaping @Sendable (Int, Database, String) throws -> T) throws -> [T] {
        let table = Mutex("relations")
        return try file.readOnSnapshot(workers: workers, prepare: { db in
            let attached = try self.attachSideIndex(db)
            table.withLock { $0 = attached }
        }, isCancelled: isCancelled) { worker, db in try body(worker, db, table.withLock { $0 }) }.results
    }

    /// Attaches Loupe's relation index to `db` when it is built; the table statements read
    /// relation rows from.
    private func attachSideIndex(_ db: Database) throws -> String {
        guard hasSideIndex, let location = SideIndex.location(for: file) else { return "relations" }
        try db.execute(sql: "ATTACH DATABASE ? AS loupe_side", arguments: [StoreFile.uri(location, "mode=ro")])
        return "loupe_side.relations"
    }
}
