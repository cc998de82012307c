import LoupeModel

extension SourceAnswer {
    /// Above this many objects, an answer's objects are read and printed a part at a time.
    public static let partSize = 20_000

    /// Writes the answer in `mode` to `sink` as ``QueryResult/write(_:graph:toTerminal:to:)``
    /// prints it, its objects read from `pages` by key — more than `partSize` of them a part at a
    /// time, each part read, written and let go (memory holds a part, never the answer: printing
    /// millions of objects of a store read a page at a time). With `staged` changes, objects are
    /// printed as they leave them (new ones too).
    public func write(_ mode: OutputMode, pages: PageSource, staged: PagedChanges? = nil, toTerminal: Bool, to sink: OutputSink,
                      partSize: Int = SourceAnswer.partSize) throws {
        let empty = GraphBuilder(formatName: "").finish()
        switch self {
        case .count(let n): QueryResult.count(n).write(mode, graph: empty, toTerminal: toTerminal, to: sink)
        case .projection(let columns, let rows, _): QueryResult.projection(columns: columns, rows: rows, refs: []).write(mode, graph: empty, toTerminal: toTerminal, to: sink)
        case .groups(let key, let rows, _): QueryResult.groups(key: key, rows: rows, objects: []).write(mode, graph: empty, toTerminal: toTerminal, to: sink)
        case .objects(let typeName, let keys):
            guard let t = pages.catalog.firstIndex(where: { $0.name == typeName }) else { return }
            /// The objects `keys` as stored, or as the staged changes leave them.
            func read(_ keys: [ObjectID]) throws -> (graph: ObjectGraph, type: TypeTable, refs: [ObjectRef]) {
                let stored = try pages.objects(type: t, keys: keys)
                let (graph, changes) = staged.map { $0.overlaid(stored) } ?? (stored, ChangeSet(base: stored))
                let type = graph.types[t]
                // An object of a subtype the type's answer lists (Core Data's subentities) by its own type.
                let family = graph.family(of: type).map { graph.types[$0] }
                let refs = keys.compactMap { key in family.lazy.compactMap { changes.row(of: ObjectIdentity(type: $0.name, id: key)) }.first }
                    .filter { graph.table($0).isLive(Int($0.row)) }
                return (graph, type, refs)
            }
            guard keys.count > partSize else {
                let (graph, type, refs) = try read(keys)
                QueryResult.objects(type: type, refs: refs).write(mode, graph: graph, toTerminal: toTerminal, to: sink)
                return
            }
            // The columns one graph of them all would have: the stored objects' attributes, then
            // those only the staged changes give.
            var names = try pages.attributeNames(type: t, keys: keys)
            let schema = try read([]).type
            var seen = Set(names)
            for a in schema.attributes where seen.insert(a.name).inserted { names.append(a.name) }
            var keyColumn: String?
            if case .column(let key, _) = schema.keyPolicy { keyColumn = key }
            var writer = QueryResult.ObjectsWriter(attributes: names, keyColumn: keyColumn, mode: mode, toTerminal: toTerminal, to: sink)
            for start in stride(from: 0, to: keys.count, by: partSize) {
                let part = try read(Array(keys[start ..< min(keys.count, start + partSize)]))
                writer.write(type: part.type, refs: part.refs, graph: part.graph)
            }
            writer.finish()
        }
    }
}
