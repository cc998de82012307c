import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GRDB
import LoupeModel
import Synchronization

/// What a whole load of a Persist store learned about its schema, kept in a small file of
/// Loupe's own (never in the store), so that `loupe schema` and `loupe show` answer without a
/// load while the store is unchanged.
///
/// A Persist store's schema is in its documents: a type's attributes, their kinds and order come
/// from every object's JSON, and a relation's cardinality and targets from every relation row, so
/// only a pass over the whole file can tell them. The load makes that pass anyway; this keeps
/// what it found, under the store's real path and ``FileStamp`` (sizes, times, change counter,
/// WAL headers: any commit by any process changes it) and Loupe's build. An entry whose stamp,
/// path or build differs is stale and never used; a missing, unreadable or damaged entry is the
/// same as none. Entries are written whole (to a temporary name, then renamed), and the oldest
/// are removed beyond ``maximumEntries``.
///
/// Off unless ``directory`` is set: the `loupe` command sets it (`LOUPE_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/loupe`, else `~/.cache/loupe`; `LOUPE_CACHE_DIR=off` turns caching off), the
/// library leaves it to the app.
public enum SchemaCache {
    /// Where entries live; nil turns the cache off.
    public static let directory = Mutex<String?>(nil)

    /// How many stores keep an entry.
    static let maximumEntries = 64

    /// The layout of an entry file; a change makes older entries stale.
    static let version = 3

    /// What every kind of entry starts with: the key that tells whether it describes a file as
    /// it is now (``describes(_:path:entry:)``).
    protocol KeyedEntry: Codable {
        var version: Int { get }
        var build: String { get }
        var path: String { get }
        var stamp: FileStamp { get }
        var header: [UInt8] { get }
    }

    /// The entry of `kind` kept for `file`, when caching is on, `file` is read as it is on disk
    /// (read-only, or a WAL snapshot), and the entry's key describes it as it is now.
    static func kept<E: KeyedEntry>(_ type: E.Type, kind: String, for file: StoreFile) -> E? {
        guard file.access == .readOnly || file.access == .walSnapshot,
              let directory = directory.withLock({ $0 }), let path = realPath(file.path),
              let data = FileManager.default.contents(atPath: entryPath(directory, for: path, kind: kind)),
              let entry = try? JSONDecoder().decode(E.self, from: data),
              describes(file, path: path, entry: (entry.version, entry.build, entry.path, entry.stamp, entry.header)) else { return nil }
        return entry
    }

    /// One store's entry.
    struct Entry: KeyedEntry {
        var version: Int
        /// The Loupe build that wrote it (its schema text is that build's).
        var build: String
        /// The store's real path.
        var path: String
        var stamp: FileStamp
        /// The database header (its first 100 bytes: page size and count, schema cookie, change
        /// counter…): with the stamp, what tells this file from another written at the same path
        /// within the file system's clock tick.
        var header: [UInt8]
        var objectCount: Int
        var types: [CachedType]
        /// What the load noticed (dangling relation rows, documents that do not parse).
        var warnings: [String]
    }

    /// One type, in the load's order.
    struct CachedType: Codable {
        var name: String
        /// How many objects it has.
        var count: Int
        /// What `loupe schema` prints for it (``ObjectGraph/schemaText(of:)``).
        var schema: String
        /// Its attributes, in the load's column order.
        var attributes: [String]
        var relations: [CachedRelation]
    }

    /// One relation out of a type, in the load's order.
    struct CachedRelation: Codable {
        var name: String
        var toMany: Bool
        /// Indexes of the types it points into.
        var targets: [Int]
    }

    /// The directory the `loupe` command uses, from the environment (nil: off).
    /// The cache folder, made if need be, for an index of the store at `path`; or an error that
    /// says which folder cannot be used and why (never Foundation's error domain and code).
    static func writableDirectory(for path: String) throws -> String {
        guard let directory = directory.withLock({ $0 }) else {
            throw StoreError(.unreadable, path: path, reason: "the cache is off (LOUPE_CACHE_DIR=off): there is no place for an index")
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
            let reason = underlying.map { $0.domain == NSPOSIXErrorDomain ? String(cString: strerror(Int32($0.code))) : $0.localizedDescription }
                ?? whyNotMade(directory)
            throw StoreError(.readOnly, path: path, reason: "cannot make Loupe's cache folder '\(directory)' (\(reason)); set LOUPE_CACHE_DIR to a folder you can write")
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            throw StoreError(.readOnly, path: path, reason: "Loupe's cache folder '\(directory)' cannot be written (\(String(cString: strerror(errno)))); set LOUPE_CACHE_DIR to a folder you can write")
        }
        return directory
    }

    /// Why `directory` could not be made, from the nearest part of its path that exists.
    private static func whyNotMade(_ directory: String) -> String {
        var path = (directory as NSString).deletingLastPathComponent
        var isFolder: ObjCBool = false
        while !path.isEmpty, path != "/", !FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) {
            path = (path as NSString).deletingLastPathComponent
        }
        if !isFolder.boolValue { return "'\(path)' is a file, not a folder" }
        return access(path, W_OK) == 0 ? "it cannot be made there" : "'\(path)' cannot be written"
    }

    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let set = environment["LOUPE_CACHE_DIR"] { return set.isEmpty || set == "off" ? nil : set }
        return UserFolders.base("XDG_CACHE_HOME", default: ".cache", accountHome: false, environment: environment).map { $0 + "/loupe" }
    }

    /// Keeps what a whole load of a Persist store found, when caching is on and the load is one
    /// an entry can describe (the file read in place, keys that need no translation).
    static func save(_ store: LoadedStore, simpleKeys: Bool) {
        guard simpleKeys, ObjectIdentifier(store.format) == ObjectIdentifier(PersistFormat.self),
              store.file.access == .readOnly || store.file.access == .walSnapshot,
              let directory = directory.withLock({ $0 }), let path = realPath(store.path) else { return }
        let graph = store.graph
        let types = graph.types.map { table in
            CachedType(name: table.name.rawValue, count: table.count, schema: graph.schemaText(of: table), attributes: table.attributes.map(\.name),
                       relations: table.relations.map { CachedRelation(name: $0.name, toMany: $0.isToMany, targets: $0.targetTypes) })
        }
        let entry = Entry(version: version, build: build, path: path, stamp: store.stamp, header: store.file.databaseHeader(), objectCount: graph.objectCount, types: types,
                          warnings: store.warnings)
        guard let data = try? JSONEncoder().encode(entry) else { return }
        write(data, to: entryPath(directory, for: path), in: directory)
    }

    /// The entry for the store `file` reads, when there is one, it describes the file as it is
    /// now, and the file is read as a Persist store (not forced to another format with `--as`).
    static func entry(for file: StoreFile) -> Entry? {
        guard let entry = kept(Entry.self, kind: "schema", for: file), isWhole(entry.types.map(\.relations)),
              let format = try? file.read({ try StoreFormats.detect($0, path: file.path) }), format == PersistFormat.self else { return nil }
        return entry
    }

    /// True when an entry's key (layout version, build, real path, stamp, database header)
    /// describes `file`, at real path `path`, as it is now.
    static func describes(_ file: StoreFile, path: String, entry: (version: Int, build: String, path: String, stamp: FileStamp, header: [UInt8])) -> Bool {
        entry.version == version && entry.build == build && entry.path == path && entry.stamp == file.stamp() && entry.header == file.databaseHeader()
    }

    /// True when every relation's targets (each type's, by type) name a type the entry lists.
    static func isWhole(_ relations: [[CachedRelation]]) -> Bool {
        relations.allSatisfy { $0.allSatisfy { $0.targets.allSatisfy(relations.indices.contains) } }
    }

    /// The file holding the entry of the store at `path`: a hash of the path names it (the
    /// entry repeats the path, so a collision is a miss, never a wrong answer). `kind` tells a
    /// whole load's entry (`schema`) from paged mode's (`pages`).
    static func entryPath(_ directory: String, for path: String, kind: String = "schema") -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325   // FNV-1a
        for byte in path.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return directory + "/" + kind + "-" + String(hash, radix: 16) + ".json"
    }

    /// What paged mode read of a Persist store without loading it (``PersistPages``): the
    /// catalog with its counts, and the schema it sampled, kept under the same rules as an entry
    /// (real path, stamp, database header, build), so that opening the store again reads neither.
    struct PagedEntry: KeyedEntry {
        var version: Int
        var build: String
        var path: String
        var stamp: FileStamp
        var header: [UInt8]
        var types: [PagedCachedType]
    }

    struct PagedCachedType: Codable {
        var name: String
        var count: Int
        /// The stored name's bytes, for a name that is not UTF-8 text.
        var storedBytes: [UInt8]?
        var attributes: [String]
        var relations: [CachedRelation]
    }

    /// Keeps what paged mode read of `file` (when caching is on).
    static func savePaged(_ types: [PagedCachedType], file: StoreFile, stamp: FileStamp) {
        guard let directory = directory.withLock({ $0 }), let path = realPath(file.path) else { return }
        let entry = PagedEntry(version: version, build: build, path: path, stamp: stamp, header: file.databaseHeader(), types: types)
        guard let data = try? JSONEncoder().encode(entry) else { return }
        write(data, to: entryPath(directory, for: path, kind: "pages"), in: directory)
    }

    /// Paged mode's entry for `file`, when there is one and it describes the file as it is now.
    static func pagedEntry(for file: StoreFile) -> PagedEntry? {
        guard let entry = kept(PagedEntry.self, kind: "pages", for: file), isWhole(entry.types.map(\.relations)) else { return nil }
        return entry
    }

    /// What passes over a Persist store's documents found of its attributes (``PersistPages/attributeFacts(type:names:isCancelled:)``),
    /// by type name and attribute, and its relation names, for the store at one stamp, kept under
    /// the same rules as an entry: the next session's first statement reads none of them again.
    struct FactsEntry: KeyedEntry {
        var version: Int
        var build: String
        var path: String
        var stamp: FileStamp
        var header: [UInt8]
        var facts: [String: [String: PersistPages.AttributeFact]]
        /// Every relation name the relation rows use (lowercased), once read.
        var relationNames: [String]?
        /// The relations as a whole load finds them (``PersistPages/exactRelations(on:relationTable:)``),
        /// once read: nil before, an empty `shapes` with `unjoinable` for rows SQL cannot join
        /// as a load does.
        var relations: KeptRelations?
    }

    /// What one pass over a Persist store's relation rows found (by type names).
    struct KeptRelations: Codable {
        var shapes: [SideIndex.StoredShape]
        var unjoinable: Bool
    }

    /// Keeps `relations` of `file` (by type names; nil: rows SQL cannot join as a load does)
    /// as `stamp` describes it, beside its facts.
    static func saveRelations(_ relations: [SideIndex.StoredShape]?, file: StoreFile, stamp: FileStamp) {
        guard file.access == .readOnly || file.access == .walSnapshot, file.stamp() == stamp,
              let directory = directory.withLock({ $0 }), let path = realPath(file.path) else { return }
        var entry = factsEntry(for: file, stamp: stamp)
            ?? FactsEntry(version: version, build: build, path: path, stamp: stamp, header: file.databaseHeader(), facts: [:])
        entry.relations = KeptRelations(shapes: relations ?? [], unjoinable: relations == nil)
        guard let data = try? JSONEncoder().encode(entry) else { return }
        write(data, to: entryPath(directory, for: path, kind: "facts"), in: directory)
    }

    /// The relations kept of `file` under the same rule as its facts: nil when none are kept,
    /// `.some(nil)` when its rows are ones SQL cannot join as a load does.
    static func relations(for file: StoreFile, stamp: FileStamp) -> [SideIndex.StoredShape]?? {
        guard let kept = factsEntry(for: file, stamp: stamp)?.relations else { return nil }
        return .some(kept.unjoinable ? nil : kept.shapes)
    }

    /// Keeps `facts` (by type name) and `relationNames` of `file` as `stamp` describes it, with
    /// what was kept before for that same state (when caching is on and the file is still at
    /// `stamp`).
    static func saveFacts(_ facts: [String: [String: PersistPages.AttributeFact]], relationNames: Set<String>? = nil, file: StoreFile, stamp: FileStamp) {
        guard !facts.isEmpty || relationNames != nil, file.access == .readOnly || file.access == .walSnapshot, file.stamp() == stamp,
              let directory = directory.withLock({ $0 }), let path = realPath(file.path) else { return }
        var entry = factsEntry(for: file, stamp: stamp)
            ?? FactsEntry(version: version, build: build, path: path, stamp: stamp, header: file.databaseHeader(), facts: [:])
        for (type, byName) in facts { entry.facts[type, default: [:]].merge(byName) { _, new in new } }
        if let relationNames { entry.relationNames = relationNames.sorted() }
        guard let data = try? JSONEncoder().encode(entry) else { return }
        write(data, to: entryPath(directory, for: path, kind: "facts"), in: directory)
    }

    /// The facts kept of `file` (by type name), when they were read at `stamp` and the file is
    /// still as it describes it; empty otherwise.
    static func facts(for file: StoreFile, stamp: FileStamp) -> [String: [String: PersistPages.AttributeFact]] {
        factsEntry(for: file, stamp: stamp)?.facts ?? [:]
    }

    /// The relation names kept of `file` (lowercased), under the same rule as its facts.
    static func relationNames(for file: StoreFile, stamp: FileStamp) -> Set<String>? {
        factsEntry(for: file, stamp: stamp)?.relationNames.map(Set.init)
    }

    /// One value kept under the key every entry starts with (of a kind named by the caller).
    struct ValueEntry<Kept: Codable>: KeyedEntry {
        var version: Int
        var build: String
        var path: String
        var stamp: FileStamp
        var header: [UInt8]
        var value: Kept
    }

    /// Keeps `keys`: the relations paged mode found a load would infer in a relational file that
    /// declares none (``RelationalFormat/inferredKeys(_:loaded:builder:epoch:file:)``: a pass over
    /// each candidate column), found over `file` as `stamp` describes it, so that opening it
    /// again does not read those columns again (when caching is on and the file is read as it
    /// is on disk and still at `stamp`).
    static func saveInferredKeys(_ keys: [InferredKey], file: StoreFile, stamp: FileStamp) {
        guard file.access == .readOnly || file.access == .walSnapshot, file.stamp() == stamp,
              let directory = directory.withLock({ $0 }), let path = realPath(file.path) else { return }
        let entry = ValueEntry(version: version, build: build, path: path, stamp: stamp, header: file.databaseHeader(), value: keys)
        guard let data = try? JSONEncoder().encode(entry) else { return }
        write(data, to: entryPath(directory, for: path, kind: "inferred"), in: directory)
    }

    /// The inferred relations kept of `file`, when found at `stamp` and the file is still so.
    static func inferredKeys(for file: StoreFile, stamp: FileStamp) -> [InferredKey]? {
        guard let entry = kept(ValueEntry<[InferredKey]>.self, kind: "inferred", for: file), entry.stamp == stamp else { return nil }
        return entry.value
    }

    private static func factsEntry(for file: StoreFile, stamp: FileStamp) -> FactsEntry? {
        guard let entry = kept(FactsEntry.self, kind: "facts", for: file), entry.stamp == stamp else { return nil }
        return entry
    }

    /// Writes an entry file whole (to a temporary name, then renamed) and prunes the oldest.
    static func write(_ data: Data, to target: String, in directory: String) {
        let manager = FileManager.default
        guard (try? manager.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])) != nil else { return }
        let temporary = target + ".\(getpid()).tmp"
        guard manager.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600]) else { return }
        if rename(temporary, target) != 0 { unlink(temporary); return }
        prune(directory)
    }

    /// This build of Loupe: the running executable's size and modification time.
    static let build: String = {
        var s = stat()
        guard stat("/proc/self/exe", &s) == 0 else { return "unknown" }
        return "\(s.st_size)-\(Platform.modifiedNanoseconds(s) / 1_000_000_000).\(Platform.modifiedNanoseconds(s) % 1_000_000_000)"
    }()

    /// The path with symbolic links resolved, or nil when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Removes the least recently written entries beyond ``maximumEntries``.
    private static func prune(_ directory: String) {
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: directory) else { return }
        let entries = names.filter { ($0.hasPrefix("schema-") || $0.hasPrefix("pages-")) && $0.hasSuffix(".json") }
        guard entries.count > maximumEntries else { return }
        let dated = entries.map { name -> (String, Date) in
            let path = directory + "/" + name
            return (path, (try? manager.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? .distantPast)
        }
        for (path, _) in dated.sorted(by: { $0.1 < $1.1 }).prefix(entries.count - maximumEntries) { try? manager.removeItem(atPath: path) }
    }
}

extension SchemaCache.Entry {
    /// A graph of the store's types with their attributes and relations and no objects: names
    /// resolve in it as in the loaded graph.
    func builder() -> GraphBuilder {
        PersistFormat.schemaBuilder(types.map { ($0.name, $0.attributes, $0.relations.map { ($0.name, $0.toMany, $0.targets) }) })
    }
}

extension PersistFormat {
    /// A graph builder holding a Persist schema and no objects: each type (in order) with its
    /// attributes, then each type's relations with their cardinality and target types.
    static func schemaBuilder(_ types: [(name: String, attributes: [String], relations: [(name: String, toMany: Bool, targets: [Int])])]) -> GraphBuilder {
        let builder = GraphBuilder(formatName: PersistFormat.name)
        for type in types {
            let t = builder.type(type.name, keyPolicy: .globalInteger)
            for a in type.attributes { _ = builder.attribute(a, of: t) }
        }
        for (t, type) in types.enumerated() {
            for r in type.relations { builder.relation(r.name, of: t, toMany: r.toMany, declaredTargets: r.targets) }
        }
        return builder
    }
}

/// A Persist store's schema as its last whole load found it (``SchemaCache``), for `loupe schema`.
public struct CachedSchema: Sendable {
    public let objectCount: Int
    /// Each type's name, object count and what `loupe schema` prints for it, in the load's order.
    public let types: [(name: String, count: Int, schema: String)]
    /// What that load noticed, as it printed it.
    public let warnings: [String]
}

extension LoadedStore {
    /// The schema of the Persist store `file` reads, from a fresh ``SchemaCache`` entry, with no
    /// load; nil when there is none (the caller loads).
    public static func cachedSchema(_ file: StoreFile) -> CachedSchema? {
        guard let entry = SchemaCache.entry(for: file) else { return nil }
        return CachedSchema(objectCount: entry.objectCount, types: entry.types.map { ($0.name, $0.count, $0.schema) }, warnings: entry.warnings)
    }

    /// The types of the Persist store `file` reads, with their counts, as paged mode last
    /// counted them (its ``SchemaCache/PagedEntry``), with no `GROUP BY` over the store; nil
    /// when no entry describes the file as it is now, or the file is not read as a Persist store.
    public static func cachedPagedCatalog(_ file: StoreFile) -> [(name: String, count: Int)]? {
        guard let entry = SchemaCache.pagedEntry(for: file),
              let format = try? file.read({ try StoreFormats.detect($0, path: file.path) }), format == PersistFormat.self else { return nil }
        return entry.types.map { ($0.name, $0.count) }
    }
}

extension PersistFormat {
    /// One object with what `loupe show` prints of it, read by key instead of a load: its
    /// document, the relation rows from and to it, and the type of each object at their other
    /// end, in a graph whose types, attributes and relations come from a fresh ``SchemaCache``
    /// entry (so names, order, cardinality and backlink groups come out as a whole load gives
    /// them). Objects are added in key order within each type, as the load adds them, and edges
    /// in relation-row order. Nil when there is no fresh entry, when `type` names no type, or
    /// when the file does not match the entry (the caller loads).
    public static func neighbourhood(_ file: StoreFile, type name: String, ids: [ObjectID]) throws -> (graph: ObjectGraph, ref: ObjectRef?)? {
        guard let entry = SchemaCache.entry(for: file) else { return nil }
        let builder = entry.builder()
        guard let asked = builder.finishedTypeIndex(named: name) else { return nil }
        // Keys as a load matches them: an integer, or text spelling one.
        var keys: [Int64] = []
        for id in ids {
            switch id {
            case .int(let i): keys.append(i)
            case .string(let s): if let i = Int64(s) { keys.append(i) }
            default: break
            }
        }
        return try file.read { db -> (graph: ObjectGraph, ref: ObjectRef?)? in
            // The queries below find an object by `id`, which must then be its one integer key.
            let key = try Row.fetchAll(db, sql: "SELECT name, type, pk FROM pragma_table_info('by_type')")
            guard key.filter({ ($0["pk"] as Int? ?? 0) > 0 }).map({ ($0["name"] as String?) ?? "" }) == ["id"],
                  key.contains(where: { ($0["name"] as String?) == "id" && ($0["type"] as String? ?? "").uppercased() == "INTEGER" }) else { return nil }
            var documents: [Int64: (type: Int, json: DatabaseValue)] = [:]
            var others: [Int64: Int] = [:]   // objects at the other end of an edge: type only
            func holdsNUL(_ bytes: DatabaseValue) -> Bool { if case .blob(let data) = bytes.storage { return data.contains(0) } else { return false } }
            func typeIndex(of stored: DatabaseValue) -> Int? {
                let shown = typeName(of: stored)
                return entry.types.firstIndex { $0.name == shown }
            }
            // A type name that does not read back as stored (a NUL cuts it short) names its
            // objects otherwise for the load, which links no edge to them: such a store is
            // left to the load.
            for key in Set(keys) {
                guard let row = try Row.fetchOne(db, sql: "SELECT type_name, json, CAST(type_name AS BLOB) FROM by_type WHERE id = ?", arguments: [key]) else { continue }
                guard !holdsNUL(row[2]), let t = typeIndex(of: row[0]) else { return nil }
                documents[key] = (t, row[1])
            }
            // Relation rows from and to each object, once each, in rowid order.
            var edges: [(rowid: Int64, from: Int64, to: Int64, relation: String)] = []
            var seen = Set<Int64>()
            for key in documents.keys.sorted() {
                for (column, other) in [("from_id", "to_id"), ("to_id", "from_id")] {
                    let rows = try Row.fetchAll(db, sql: """
                        SELECT r.rowid, r.from_id, r.to_id, r.relation, o.type_name, CAST(o.type_name AS BLOB) FROM relations r JOIN by_type o ON o.id = r.\(other)
                        WHERE r.\(column) = ? ORDER BY r.rowid
                        """, arguments: [key])
                    for row in rows {
                        guard let rowid = row[0] as Int64?, let from = row[1] as Int64?, let to = row[2] as Int64?,
                              !holdsNUL(row[5]), let t = typeIndex(of: row[4]) else { return nil }
                        let end = column == "from_id" ? to : from
                        if documents[end] == nil { others[end] = t }
                        if seen.insert(rowid).inserted { edges.append((rowid, from, to, (row[3] as DatabaseValue).lenientText ?? "")) }
                    }
                }
            }
            // Objects in key order within each type, as the load adds them.
            var refs: [Int64: ObjectRef] = [:]
            let everyone = documents.mapValues(\.type).merging(others) { a, _ in a }
            for (key, t) in everyone.sorted(by: { $0.key < $1.key }) { refs[key] = builder.addObject(type: t, id: .int(key)) }
            for (key, document) in documents {
                // Text or bytes, parsed as the load parses them (a number or NULL is no object).
                let bytes: [UInt8]
                switch document.json.storage {
                case .string(let text): bytes = Array(text.utf8)
                case .blob(let data): bytes = Array(data)
                default: continue
                }
                guard let ref = refs[key] else { continue }
                var members: [(String, Value)] = []
                let parsed = bytes.withUnsafeBufferPointer { buffer in
                    try? JSONReader.forEachMember(bytes: buffer) { key, decoded, value in
                        members.append((decoded ?? PersistFormat.repairedKey(key), value))
                    }
                }
                guard parsed == true else { continue }   // not an object, or not JSON: no attributes, as loaded
                for (name, value) in members {
                    guard let a = builder.existingAttribute(name, of: document.type) else { return nil }
                    builder.set(value, type: document.type, row: Int(ref.row), attribute: a)
                }
            }
            for edge in edges.sorted(by: { $0.rowid < $1.rowid }) {
                guard let from = refs[edge.from], let to = refs[edge.to],
                      let r = entry.types[Int(from.type)].relations.firstIndex(where: { $0.name == edge.relation }) else { return nil }
                builder.addEdge(from: from, relation: r, to: to)
            }
            // A commit since the entry was checked: what was read may not be what it describes.
            guard file.stamp() == entry.stamp else { return nil }
            let graph = builder.finish()
            let table = graph.types[asked]
            return (graph, ids.lazy.compactMap { graph.ref(type: table, id: $0) }.first)
        }
    }
}

extension GraphBuilder {
    /// The index `type(named:)` of the finished graph would give: the exact name, else the only
    /// case-insensitive match.
    func finishedTypeIndex(named name: String) -> Int? {
        if let exact = existingType(name) { return exact }
        let matches = (0..<typeCount).filter { typeName($0).caseInsensitiveCompare(name) == .orderedSame }
        return matches.count == 1 ? matches[0] : nil
    }
}
