/// A store read a page at a time (``PageSource``) as one side of a diff: keys by position in key
/// order, a batch at a time; objects by key, with their relations' rows only for a type that has
/// relations a diff compares (others read their attributes alone). Unchecked `Sendable`: a diff
/// reads each side from one thread at a time (``StoreDiff`` reads the two sides at once).
public final class PagedDiffSide: DiffSide, @unchecked Sendable {
    public let pages: PageSource
    /// The store's schema (a window of no objects): which types have relations to compare.
    private let schema: ObjectGraph
    private let keyBatch: Int

    public init(_ pages: PageSource, keyBatch: Int = 100_000) throws {
        self.pages = pages
        self.schema = try pages.window(keys: [], of: nil).graph
        self.keyBatch = keyBatch
    }

    public var types: [(name: String, count: Int)] { pages.catalog }

    public func forEachKeyBatch(type: Int, _ body: ([ObjectID]) throws -> Void) throws {
        let count = pages.catalog[type].count
        var near: (start: Int, keys: [ObjectID])?
        for start in stride(from: 0, to: count, by: keyBatch) {
            let keys = try pages.keys(type: type, range: start ..< min(count, start + keyBatch), near: near)
            try body(keys)
            near = (start, keys)
        }
    }

    public func objects(type: Int, keys: [ObjectID]) throws -> [DiffObject?] {
        guard !keys.isEmpty else { return [] }
        let table = schema.types[type]
        let compared = table.comparedRelations
        guard !compared.isEmpty else {
            let graph = try pages.objects(type: type, keys: keys)
            return graph.diffObjects(type: graph.types[type], keys: keys)
        }
        if let links = try pages.outgoingLinks(type: type, keys: keys) {
            let graph = try pages.objects(type: type, keys: keys)
            return keys.map { key in
                guard let ref = graph.ref(type: graph.types[type], id: key) else { return nil }
                var object = graph.diffObject(ref, relations: [])
                object.relations = compared.map { r in (r.name, links[key]?[r.name] ?? [], r.isToMany) }
                return object
            }
        }
        let window = try pages.window(keys: keys, of: table.name.rawValue)
        return try window.refs.map { ref in
            guard let ref else { return nil }
            var object = window.graph.diffObject(ref)
            let identity = ObjectIdentity(type: table.name, id: window.graph.id(of: ref))
            if window.cut.contains(identity) { try readAllTargets(of: identity, into: &object) }
            return object
        }
    }

    /// Replaces the first edges a window holds of an object with many by every target, read
    /// from the store link by link.
    private func readAllTargets(of identity: ObjectIdentity, into object: inout DiffObject) throws {
        let totals = try pages.linkTotals(of: identity)
        for i in object.relations.indices {
            var targets: [ObjectIdentity] = []
            for (link, total) in totals where link.outgoing && link.relation == object.relations[i].name {
                let typeName = link.sourceType.map { TypeName($0) } ?? object.relations[i].targets.first?.type ?? identity.type
                targets += try pages.linkKeys(of: identity, link: link, range: 0 ..< total).map { ObjectIdentity(type: typeName, id: $0) }
            }
            if !targets.isEmpty { object.relations[i].targets = targets }
        }
    }

    public func attributeNames(type: Int) throws -> [String] {
        let first = try pages.keys(type: type, range: 0 ..< min(1_000, pages.catalog[type].count), near: nil)
        return try pages.attributeNames(type: type, keys: first)
    }

    public func forEachValue(type: Int, attribute: String, _ body: (ObjectID, Value) throws -> Void) throws {
        // The body's own error stops the scan and is thrown as it is (not as the store's).
        var failure: Error?
        try pages.forEachValue(type: type, attribute: attribute) { key, value in
            do { try body(key, value) } catch { failure = error; return false }
            return true
        }
        if let failure { throw failure }
    }
}
