import Synchronization
/// Some objects of a store and what is around them, read by key without a whole load (the
/// browser's paged mode): a graph with the store's schema holding the objects, the relation
/// rows from and to them and the objects at the other ends.
public struct ObjectWindow: Sendable {
    /// One of an object's links: a relation (outgoing), or its backlinks from one type by one
    /// relation name (incoming, `sourceType` set).
    public struct Link: Hashable, Sendable {
        public let relation: String
        public let outgoing: Bool
        /// The type at the other end: the one the backlinks come from; for a relation, nil, or
        /// in ``PageSource/linkTotals(of:)`` the type of the targets counted (a relation to
        /// several types has a total per type; nil where a store counts them all at once).
        public let sourceType: String?
        public init(relation: String, outgoing: Bool, sourceType: String?) {
            self.relation = relation
            self.outgoing = outgoing
            self.sourceType = sourceType
        }
    }

    public let graph: ObjectGraph
    /// The object of each key asked for, in order (nil: no longer stored).
    public let refs: [ObjectRef?]
    /// Objects with more edges than a window holds: the graph has their first edges in row
    /// order; their links' totals and keys come from the store when asked
    /// (``PageSource/linkTotals(of:)``, ``PageSource/linkKeys(of:link:range:)``).
    public let cut: Set<ObjectIdentity>
    /// The staged changes applied to the window (paged editing), by the graph's rows: which
    /// rows are added, changed or marked for deletion. Nil for a window as the store holds it.
    public let changes: ChangeSet?

    public init(graph: ObjectGraph, refs: [ObjectRef?], cut: Set<ObjectIdentity> = [], changes: ChangeSet? = nil) {
        self.graph = graph
        self.refs = refs
        self.cut = cut
        self.changes = changes
    }
}

/// A store browsed a page at a time (the browser's paged mode), for stores larger than the memory
/// a whole load may take: the catalog, the keys of a type by position, windows of objects by key,
/// and an object's links when a window holds only their first edges.
public protocol PageSource: AnyObject {
    /// Each type's name and object count, in the store's order. A store that lists its types
    /// before counting them (``listedTypes``) counts them here first, when not yet done.
    var catalog: [(name: String, count: Int)] { get }
    /// Each type's name and its object count when already read (nil while not yet counted), in
    /// the order of ``catalog``: what a first screen shows without waiting for the counts.
    var listedTypes: [(name: String, count: Int?)] { get }
    /// Reads the counts ``listedTypes`` lacks (nothing when it lacks none); safe to call from
    /// another thread while the store is read, and again (it reads them once).
    func countTypes() throws
    /// What a status line should say of how the store is read (`schema from a sample`).
    var notes: [String] { get }
    /// The keys of type `type` (an index into ``catalog``) at positions `range`, in key order;
    /// `near` is a window already read (its first position and keys) to page from.
    func keys(type: Int, range: Range<Int>, near: (start: Int, keys: [ObjectID])?) throws -> [ObjectID]
    /// The objects `keys` of type `type` and what is around them. `type` is nil for keys of
    /// several types, which only a store whose keys are store-wide (Persist) reads.
    func window(keys: [ObjectID], of type: String?) throws -> ObjectWindow
    /// The objects `objects`, of any types, and what is around them, in one graph (paged
    /// editing's base); `refs` in the order given. A store whose keys are store-wide may read
    /// them by key whatever the type named.
    func window(objects: [ObjectIdentity]) throws -> ObjectWindow
    /// Each link of `object` with its number of edges (asked for an object a window cut).
    func linkTotals(of object: ObjectIdentity) throws -> [ObjectWindow.Link: Int]
    /// The keys at the other end of one link of `object`, positions `range` in row order.
    func linkKeys(of object: ObjectIdentity, link: ObjectWindow.Link, range: Range<Int>) throws -> [ObjectID]
    /// Calls `body` with each object of type `type` (an index into ``catalog``), in key order, and
    /// its value of `attribute` as a load would hold it (null when it has none; nil asks for the
    /// key itself), until `body` returns false.
    func forEachValue(type: Int, attribute: String?, _ body: (ObjectID, Value) throws -> Bool) throws
    /// How many objects of type `type` hold each value of `attribute`, counted by the store
    /// itself, or nil (see the default in the extension below).
    func frequencies(type: Int, attribute: String?, limit: Int, isCancelled: @escaping @Sendable () -> Bool) throws -> [Value: Int]?
    /// The kinds of value each of `names` holds as a member of type `type`'s objects, over every
    /// object; a name no object has is left out.
    func kinds(type: Int, names: Set<String>) throws -> [String: ValueKind]
    /// Calls `body` with the objects of type `type` in key order, `size` at a time (or more where
    /// each chunk costs a new scan: a view read by position), each time as a
    /// graph with the store's schema holding those objects and their attributes (no relations),
    /// the attributes in `kinds` present with at least those kinds (as in the whole store), until
    /// `body` returns false. With `names`, the chunks need hold only the attributes named so,
    /// ignoring case as paths match names (a source whose objects cost more to build the more
    /// attributes they hold, JSON documents, builds only those); others may be there or not.
    func forEachChunk(type: Int, size: Int, kinds: [String: ValueKind], names: Set<String>?, _ body: (ObjectGraph) throws -> Bool) throws
    /// Where type `type`'s keys split into `parts` parts of about as many objects, which
    /// ``forEachChunk(type:size:kinds:names:from:below:_:)`` reads apart, each on a connection of
    /// its own, so that the machine's cores read a large type at once: the first key of each part
    /// after the first, in key order (`[k]`: the keys below `k`, then from `k`). Empty when the
    /// source reads a type in one go (see the default in the extension below).
    func chunkSplits(type: Int, parts: Int) throws -> [ObjectID]
    /// ``forEachChunk(type:size:kinds:names:_:)`` over the type's keys from `from` (nil: the
    /// first) and below `below` (nil: to the last), as ``chunkSplits(type:)`` splits them.
    func forEachChunk(type: Int, size: Int, kinds: [String: ValueKind], names: Set<String>?, from: ObjectID?, below: ObjectID?,
                      _ body: (ObjectGraph) throws -> Bool) throws
    /// The objects `keys` of type `type` (an index into ``catalog``) and their attributes, as a
    /// load holds them (no relations), in the order given.
    func objects(type: Int, keys: [ObjectID]) throws -> ObjectGraph
    /// The attributes ``objects(type:keys:)`` of all of `keys` would give type `type`, in its
    /// order, without holding those objects at once: what a result printed a part at a time is
    /// headed by (see the default in the extension below).
    func attributeNames(type: Int, keys: [ObjectID]) throws -> [String]
    /// The largest integer key stored (0 when there is none): of any object when `type` is nil
    /// (a new object's key, where keys are shared by every type and assigned as max + 1, is one
    /// more), else of type `type`'s objects (an index into ``catalog``; where the store assigns a
    /// table's keys as its max + 1).
    func maximumIntegerKey(type: Int?) throws -> Int64
    /// The relations into `object` that windows do not follow (their rows are not read with it)
    /// and that some stored row refers to it by, as `Type.relation`: what a deletion of it made
    /// over a window would not see.
    func unfollowedReferences(to object: ObjectIdentity) throws -> [String]
    /// Every relation row from each of `keys` (objects of type `type`), by relation name, the
    /// targets in row order with their types: what a diff compares of an object's relations,
    /// read in a few statements rather than a window per object; nil where the store reads them
    /// only through windows (see the default in the extension below).
    func outgoingLinks(type: Int, keys: [ObjectID]) throws -> [ObjectID: [String: [ObjectIdentity]]]?
    /// How many objects of type `type` hold a broken link (a key naming no object), by relation
    /// index, as a load counts them (``TypeTable/brokenLinkCount(relation:)``); nil where the
    /// store cannot count them without reading every object and every target.
    func brokenLinkCounts(type: Int) throws -> [Int: Int]?
    /// True when the store has no index for finding relation rows by key and one can be built
    /// beside it (each window scans the rows until then).
    var offersRelationIndex: Bool { get }
    /// True when that index is built (in Loupe's cache, fresh for the file).
    var relationIndexBuilt: Bool { get }
    /// Builds that index (off the UI thread), reporting rows copied; `isCancelled` stops it.
    func buildRelationIndex(progress: @escaping @Sendable (Int, Int) -> Void, isCancelled: @escaping @Sendable () -> Bool) throws
}

extension PageSource {
    /// A store that counts no broken links without a load.
    public func brokenLinkCounts(type: Int) throws -> [Int: Int]? { nil }

    /// A source whose relation rows are read through windows.
    public func outgoingLinks(type: Int, keys: [ObjectID]) throws -> [ObjectID: [String: [ObjectIdentity]]]? { nil }

    /// A source that reads a type in one go: no splits, and only the whole type.
    public func chunkSplits(type: Int, parts: Int) throws -> [ObjectID] { [] }
    public func forEachChunk(type: Int, size: Int, kinds: [String: ValueKind], names: Set<String>?, from: ObjectID?, below: ObjectID?,
                             _ body: (ObjectGraph) throws -> Bool) throws {
        precondition(from == nil && below == nil, "this source reads a type in one go (it gives no chunkSplits)")
        try forEachChunk(type: type, size: size, kinds: kinds, names: names, body)
    }

    /// How many objects of type `type` (an index into ``catalog``) hold each value of `attribute`
    /// (nil: the key), as ``forEachValue(type:attribute:_:)`` would count them, counted by the
    /// store itself; nil when it cannot count them exactly that way (then the caller counts value
    /// by value). More than `limit` values may stop the count early: the caller then refuses.
    public func frequencies(type: Int, attribute: String?, limit: Int, isCancelled: @escaping @Sendable () -> Bool) throws -> [Value: Int]? { nil }

    /// A store whose objects all have their table's columns: the schema's attributes, whatever
    /// the keys.
    public func attributeNames(type: Int, keys: [ObjectID]) throws -> [String] {
        try objects(type: type, keys: []).types[type].attributes.map(\.name)
    }

    /// ``attributeNames(type:keys:)`` for a store whose documents may hold attributes its schema
    /// lacks: the objects read `size` at a time, their attributes gathered in order.
    public func attributeNamesReadingObjects(type: Int, keys: [ObjectID], size: Int = 10_000) throws -> [String] {
        var names = try objects(type: type, keys: []).types[type].attributes.map(\.name)
        var seen = Set(names)
        for start in stride(from: 0, to: keys.count, by: size) {
            let graph = try objects(type: type, keys: Array(keys[start ..< min(keys.count, start + size)]))
            for a in graph.types[type].attributes where seen.insert(a.name).inserted { names.append(a.name) }
        }
        return names
    }

    /// The schema of type `type` (an index into ``catalog``) as
    /// ``ObjectGraph/schemaText(of:count:sample:)`` prints it, reading no more than the type's
    /// first `sampleSize` objects (or its first chunk, for a long view read by position): its
    /// count from the catalog, its relations and backlinks as `schema` (the store's schema:
    /// ``window(keys:of:)`` of no keys) has them, its attributes as
    /// those objects hold them (what `.schema` and `loupe schema` show over the memory budget;
    /// a type of no more objects than the sample reads as after a whole load).
    public func schemaText(type t: Int, schema: ObjectGraph, sampleSize: Int = 1_000) throws -> String {
        var sample: ObjectGraph?
        try forEachChunk(type: t, size: sampleSize, kinds: [:], names: nil) { chunk in
            sample = chunk
            return false
        }
        return schema.schemaText(of: schema.types[t], count: catalog[t].count, sample: (sample ?? schema).types[t], brokenLinks: try brokenLinkCounts(type: t))
    }

    /// `.schema [Type]` over the store: the schema of the type `name` names (as a loaded graph
    /// finds a type by name), or of every type when nil, each as
    /// ``schemaText(type:schema:sampleSize:)`` gives it, blank lines between; a name no type has
    /// throws ``UnknownTypeName``.
    public func schemaText(typeNamed name: String?) throws -> String {
        let schema = try window(keys: [], of: nil).graph
        var types = schema.types
        if let name {
            guard let type = schema.type(named: name) else { throw UnknownTypeName(name: name, among: schema.types.map(\.name.rawValue)) }
            types = [type]
        }
        return try types.map { try schemaText(type: $0.index, schema: schema) }.joined(separator: "\n\n")
    }

    /// A store whose catalog is read with its counts lists them at once.
    public var listedTypes: [(name: String, count: Int?)] { catalog.map { ($0.name, $0.count) } }
    public func countTypes() throws {}

    /// The objects `keys`, of any types (a store whose keys are store-wide).
    public func window(keys: [ObjectID]) throws -> ObjectWindow { try window(keys: keys, of: nil) }
}

/// Where keyset paging starts reading positions of a type in key order: forward from position
/// `from` (at key `key`, or the first key when nil), or backward from below position `below`
/// (below key `key`, or from the last key when nil); the rows between are skipped by offset.
public enum KeysetAnchor: Sendable {
    case forward(from: Int, key: ObjectID?)
    case backward(below: Int, key: ObjectID?)

    /// The anchors positions `range` of a type of `count` keys can be read from — the type's ends,
    /// and the ends of `near` (a window already read: its first position and keys) — fewest rows
    /// skipped first.
    public static func ranked(for range: Range<Int>, count: Int, near: (start: Int, keys: [ObjectID])?) -> [KeysetAnchor] {
        var anchors: [KeysetAnchor] = [.forward(from: 0, key: nil), .backward(below: count, key: nil)]
        if let near, let first = near.keys.first, let last = near.keys.last {
            anchors += [.forward(from: near.start, key: first), .backward(below: near.start, key: first), .forward(from: near.start + near.keys.count - 1, key: last)]
        }
        func skipped(_ a: KeysetAnchor) -> Int? {
            switch a {
            case .forward(let from, _): return range.lowerBound >= from ? range.lowerBound - from : nil
            case .backward(let below, _): return range.upperBound <= below ? below - range.upperBound : nil
            }
        }
        return anchors.compactMap { a in skipped(a).map { (a, $0) } }.sorted { $0.1 < $1.1 }.map(\.0)
    }

    /// The anchor positions `range` of a type not counted yet are read from — the type's first
    /// key or an end of `near` — when it steps over at most `reach` rows; nil when it would step
    /// over more (the caller then counts the type, to read from whichever end is nearer).
    public static func uncounted(for range: Range<Int>, near: (start: Int, keys: [ObjectID])?, reach: Int) -> KeysetAnchor? {
        let best = ranked(for: range, count: .max, near: near).first { if case .backward(_, nil) = $0 { return false } else { return true } }
        switch best {
        case .forward(let from, _)?: return range.lowerBound - from <= reach ? best : nil
        case .backward(let below, _)?: return below - range.upperBound <= reach ? best : nil
        case nil: return nil
        }
    }
}

/// A paged source's counts of its types, read once when first needed — by whichever thread asks
/// first, the others waiting for that read — so that a first screen can be drawn from the
/// types' names alone (``PageSource/listedTypes``).
public final class TypeCounts: Sendable {
    private let value: Mutex<[Int]?>
    private let reading = Mutex(())

    /// Counts known already (nil: read when first asked).
    public init(_ counts: [Int]?) { value = Mutex(counts) }

    /// The counts when read, else nil (never waits).
    public var known: [Int]? { value.withLock { $0 } }

    /// Each of `names` (the types', in order) with its count when read, else nil (never waits):
    /// a page source's ``PageSource/listedTypes``.
    public func listed(_ names: [String]) -> [(name: String, count: Int?)] {
        let counts = known
        return names.enumerated().map { t, name in (name, counts?[t]) }
    }

    /// The counts, read by `read` first when not known yet (once: a caller meanwhile waits for it).
    @discardableResult
    public func counts(reading read: () throws -> [Int]) throws -> [Int] {
        if let known { return known }
        return try reading.withLock { _ in
            if let known { return known }
            let counts = try read()
            value.withLock { $0 = counts }
            return counts
        }
    }
}

/// A type name no type of the store has: `unknown type 'Bok' (did you mean 'Book'?)`.
public struct UnknownTypeName: Error, CustomStringConvertible {
    public let description: String

    public init(name: String, among names: [String]) {
        description = "unknown type '\(name)'" + (NameSuggestion.closest(to: name, in: names).map { " (did you mean '\($0)'?)" } ?? "")
    }
}
