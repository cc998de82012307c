import Foundation
import GRDB
import LoupeModel
import LoupeQuery
import LoupeSQL
import LoupeStore

/// libFuzzer's entry point for files: any bytes are written to a fresh file and opened as a store
/// the way `loupe types`, `schema` and `query` open one; every type is described and listed as
/// JSON; then statements through relations and backlinks go to both engines, and when SQL
/// answers (``SQLPushdown``) its JSON must be the in-memory engine's; on a Persist store the
/// schema cache entry the load left must give `schema`, `show` and projected statements as the
/// loaded graph gives them, paged mode's windows (Persist, plain SQLite and Core Data) must describe objects
/// as the loaded graph does, and statements SQL answers over the paged store must be answered as in
/// memory. A crash, trap, hang or disagreement is a finding; refusing the file with an error is
/// expected.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let path = FileFuzz.folder + "/input.sqlite"
    for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    guard FileManager.default.createFile(atPath: path, contents: Data(bytes: data, count: size)) else { return 0 }
    guard let store = try? LoadedStore.open(path) else { return 0 }
    let graph = store.graph
    let engine = QueryEngine(graph: graph)
    for type in graph.types {
        _ = graph.schemaText(of: type)
        if type.count > 0 { _ = graph.describe(ObjectRef(type: type.index, row: 0)) }
        if let result = try? engine.run("`\(type.name.rawValue.replacingOccurrences(of: "`", with: ""))` limit 20") {
            _ = result.render(.json, graph: graph)
            _ = result.render(.table, graph: graph)
        }
    }
    // A load that read around damage (warnings) answers from part of the file, and on a file
    // SQLite itself finds corrupt (rowids out of order, repeated) SQL's order is the damaged
    // b-tree's. SQL, the schema cache and paged mode find rows by key lookups through indexes,
    // which on a damaged file (an index missing a row, which quick_check does not look for)
    // find other rows than the load's scan (and decide otherwise which relations a file that
    // declares none has): the engines are compared on files whose indexes match their tables.
    let sound = (try? store.file.read { try String.fetchOne($0, sql: "PRAGMA quick_check") }) == "ok"
    let intact = sound && (try? store.file.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") }) == "ok"
    if intact, store.warnings.isEmpty { FileFuzz.compareEngines(graph, file: store.file) }
    if intact { FileFuzz.compareCache(graph, path: path) }
    FileFuzz.comparePages(graph, path: path, compare: intact && store.warnings.isEmpty)
    FileFuzz.compareRelationalPages(graph, path: path, compare: intact && store.warnings.isEmpty)
    FileFuzz.compareCoreDataPages(graph, path: path, compare: intact && store.warnings.isEmpty)
    return 0
}

enum FileFuzz {
    /// A name as the language writes it (nil when it cannot be quoted).
    static func quoted(_ name: String) -> String? { name.contains("`") || name.isEmpty ? nil : "`\(name)`" }

    /// Statements over the first types' attributes, relations and backlinks.
    static func statements(_ graph: ObjectGraph) -> [String] {
        var statements: [String] = []
        for type in graph.types.prefix(4) {
            guard let t = quoted(type.name.rawValue) else { continue }
            statements.append("count \(t)")
            let first = type.attributes.first.flatMap { quoted($0.name) }
            if let a = first { statements += ["\(t) sort by \(a) desc limit 5", "\(t) where \(a) > 0 OR \(a) BEGINSWITH[c] \"a\" group by \(a)"] }
            for relation in type.relations.prefix(2) {
                guard let r = quoted(relation.name), let target = relation.targetTypes.first,
                      let b = graph.types[target].attributes.first.flatMap({ quoted($0.name) }) else { continue }
                statements += ["count \(t) where \(r).\(b) != null", "\(t) where \(r).\(b) > 1 sort by \(first ?? "id") limit 3",
                               "count \(t) where @links.\(t).\(r).@count >= 1", "\(t) where NONE @links.\(t).\(r).\(first ?? "id") == 1 select \(first ?? "id")",
                               "\(t) where \(r).@count > 1 OR ANY \(r).\(b) BEGINSWITH \"a\" select \(first ?? "id"), \(r).@count"]
            }
        }
        return statements
    }

    /// Statements over each type's attributes, relations and backlinks, through SQL and in memory.
    static func compareEngines(_ graph: ObjectGraph, file: StoreFile) {
        for statement in statements(graph) {
            guard let parsed = try? Parser.parse(statement) else { continue }
            let memory: String
            do { memory = try QueryEngine(graph: graph).run(parsed).render(.json, graph: graph) } catch { memory = "error: \(error)" }
            let sql: String
            do {
                guard let answer = try SQLPushdown.run(parsed, file: file) else { continue }
                sql = answer.result.render(.json, graph: answer.graph)
            } catch is StoreError {
                continue   // a damaged file SQL refuses; the load reads around it (and `auto` falls back to it)
            } catch {
                sql = "error: \(error)"
            }
            if sql != memory, !sql.hasPrefix("error: ") || !memory.hasPrefix("error: ") {
                fatalError("the engines disagree on \(statement)\nSQL:    \(sql)\nmemory: \(memory)")
            }
        }
    }

    /// A Persist store's schema cache entry (the load above wrote it): `schema`, `show` and
    /// projected statements must print what the loaded graph prints.
    static func compareCache(_ graph: ObjectGraph, path: String) {
        guard let file = try? StoreFile.openForReading(path), let cached = LoadedStore.cachedSchema(file) else { return }
        guard cached.types.map(\.schema) == graph.types.map({ graph.schemaText(of: $0) }) else { fatalError("the cached schema differs") }
        for type in graph.types where type.count > 0 {
            for row in [0, type.count - 1] {
                let ref = ObjectRef(type: type.index, row: row)
                let key = graph.id(of: ref).description
                guard let small = try? LoadedStore.neighbourhood(path, type: type.name.rawValue, ids: ObjectID.candidates(typed: key)),
                      let smallRef = small.ref else { continue }   // nil: the caller loads
                if small.graph.describe(smallRef) != graph.describe(ref) {
                    fatalError("show from the cache differs for \(type.name) #\(key):\n\(small.graph.describe(smallRef))\n---\n\(graph.describe(ref))")
                }
            }
        }
        for statement in statements(graph) {
            guard let parsed = try? Parser.parse(statement), let reads = parsed.namesRead,
                  let small = try? PersistFormat.projected(file, type: reads.type.text, names: reads.names, linkTypes: reads.linkTypes,
                                                           listsObjects: reads.listsObjects) else { continue }
            let whole: String, projected: String
            do { whole = try QueryEngine(graph: graph).run(parsed).render(.json, graph: graph) } catch { whole = "error: \(error)" }
            do { projected = try QueryEngine(graph: small).run(parsed).render(.json, graph: small) } catch { projected = "error: \(error)" }
            if whole != projected { fatalError("the projection differs on \(statement)\nprojected: \(projected)\nwhole:     \(whole)") }
        }
    }

    /// Paged mode on any input: opened with the schema from a sample (the cache off) and with the
    /// load's exact one, each type's first and last pages read as windows; on a sound file each
    /// window's objects must describe as the loaded graph describes them.
    static func comparePages(_ graph: ObjectGraph, path: String, compare: Bool) {
        let directory = SchemaCache.directory.withLock { $0 }
        SchemaCache.directory.withLock { $0 = nil }
        let sampled = try? PersistPages.open(try StoreFile.openForReading(path))
        SchemaCache.directory.withLock { $0 = directory }
        let exact = try? PersistPages.open(try StoreFile.openForReading(path), edgesPerObject: 5)
        for pages in [sampled, exact].compactMap({ $0 }) {
            if compare { compareQuerySource(graph, source: PersistQuerySource(pages: pages)) }
            if compare, pages.schemaIsExact { compareChunks(graph, pages: pages) }
            for (t, entry) in pages.catalog.enumerated() {
                for range in [0..<min(entry.count, 25), max(0, entry.count - 25)..<entry.count] {
                    guard let keys = try? pages.keys(type: t, range: range), let window = try? pages.window(keys: keys) else { continue }
                    for ref in window.refs.compactMap({ $0 }) {
                        let id = window.graph.id(of: ref)
                        _ = try? pages.linkTotals(of: window.graph.identity(of: ref))
                        guard compare, pages.schemaIsExact, !window.cut.contains(window.graph.identity(of: ref)) else { continue }
                        guard let table = graph.type(named: entry.name), let whole = graph.ref(type: table, id: id) else {
                            fatalError("paged mode read \(entry.name) #\(id), which the load does not have")
                        }
                        if window.graph.describe(ref) != graph.describe(whole) {
                            fatalError("a paged window differs for \(entry.name) #\(id):\n\(window.graph.describe(ref))\n---\n\(graph.describe(whole))")
                        }
                    }
                }
            }
        }
    }

    /// A plain SQLite input in paged mode (``RelationalPages``): each type's first and last pages
    /// read as windows, every link of their objects counted and read; on a sound file whose
    /// relations paged mode follows (every table with a rowid; inferred relations too), each
    /// object a window did not cut must describe as the loaded graph describes it, and statements
    /// answered over the file (``RelationalQuerySource``) as in memory.
    static func compareRelationalPages(_ graph: ObjectGraph, path: String, compare: Bool) {
        guard let file = try? StoreFile.openForReading(path), let pages = try? RelationalPages.open(file, edgesPerObject: 5) else { return }
        let follows = compare && pages.layout.tables.allSatisfy { $0 != nil }
        if compare { compareQuerySource(graph, source: RelationalQuerySource(pages: pages)) }
        if compare { compareChunks(graph, pages: pages) }
        compareWindows(graph, pages: pages, follows: follows, label: "relational")
    }

    /// Each type's first and last pages of `pages` read as windows, every link of their objects
    /// counted and read; with `follows`, each count must be what is read (but for the links
    /// `countedPerType` names: a Core Data relationship's targets are counted per type and read
    /// all at once), and each object a window did not cut must describe as the loaded graph
    /// describes it.
    static func compareWindows(_ graph: ObjectGraph, pages: PageSource, follows: Bool, label: String, countedPerType: (ObjectWindow.Link) -> Bool = { _ in false }) {
        for (t, entry) in pages.catalog.enumerated() {
            for range in [0..<min(entry.count, 25), max(0, entry.count - 25)..<entry.count] {
                guard let keys = try? pages.keys(type: t, range: range, near: nil), let window = try? pages.window(keys: keys, of: entry.name) else { continue }
                for ref in window.refs.compactMap({ $0 }) {
                    let object = window.graph.identity(of: ref)
                    for (link, total) in (try? pages.linkTotals(of: object)) ?? [:] {
                        let read = (try? pages.linkKeys(of: object, link: link, range: 0..<total + 1)) ?? []
                        if follows, !countedPerType(link), read.count != total { fatalError("\(object): \(link) counts \(total) and reads \(read.count)") }
                    }
                    guard follows, !window.cut.contains(object) else { continue }
                    guard let table = graph.type(named: entry.name), let whole = graph.ref(type: table, id: object.id) else {
                        fatalError("paged mode read \(object), which the load does not have")
                    }
                    if window.graph.describe(ref) != graph.describe(whole) {
                        fatalError("a \(label) window differs for \(object):\n\(window.graph.describe(ref))\n---\n\(graph.describe(whole))")
                    }
                }
            }
        }
    }

    /// A Core Data input in paged mode (``CoreDataPages``): each entity's first and last pages
    /// read as windows, every link of their objects counted and read; on a sound file with no
    /// table beside its entities (which paged mode leaves out), each object a window did not cut
    /// must describe as the loaded graph describes it, and statements answered a chunk at a time
    /// or by SQL over the store (``CoreDataQuerySource``) as in memory.
    static func compareCoreDataPages(_ graph: ObjectGraph, path: String, compare: Bool) {
        guard let file = try? StoreFile.openForReading(path), let pages = try? CoreDataPages.open(file, edgesPerObject: 5) else { return }
        let follows = compare && !pages.notes.contains { $0.hasPrefix("tables beside") }
        if follows {
            compareChunks(graph, pages: pages)
            if let source = try? CoreDataQuerySource(pages: pages) { compareQuerySource(graph, source: source) }
        }
        compareWindows(graph, pages: pages, follows: follows, label: "Core Data", countedPerType: \.outgoing)
    }

    /// Statements on a type's own attributes answered a chunk of objects at a time over the paged
    /// store (``ChunkedAnswer``, as paged mode and `loupe query` over the budget answer what SQL
    /// does not say) against the in-memory engine: the same counts and keys in the same order,
    /// errors on both sides; the objects answered must read back by key.
    static func compareChunks(_ graph: ObjectGraph, pages: PageSource) {
        for type in graph.types.prefix(4) {
            guard let t = quoted(type.name.rawValue) else { continue }
            var statements = ["count \(t)", "\(t) limit 3 offset 2"]
            if let a = type.attributes.first.flatMap({ quoted($0.name) }), let b = type.attributes.last.flatMap({ quoted($0.name) }) {
                statements += ["count \(t) where \(a) * 2 > 1", "\(t) where \(a) * 2 > 1 OR \(a) BEGINSWITH[c] \"a\" limit 7 offset 1",
                               "\(t) sort by \(b) desc, \(a) limit 3 offset 1", "\(t) where \(a) * 2 > 1 sort by \(a) select \(b), \(a) * 3 as x",
                               "\(t) sort by \(a) distinct \(b) limit 2 offset 1", "\(t) distinct \(b) limit 2 select \(a)",
                               "\(t) where \(b) != nil group by \(a) limit 3", "\(t) group by \(b) sort by count, key desc"]
            }
            // Chunks of two objects too, so that a limit after a sort prunes the candidates.
            for statement in statements {
                for size in [ChunkedAnswer.standardChunkSize, 2] {
                    guard let parsed = try? Parser.parse(statement), let plan = try? ChunkedAnswer.plan(parsed, over: pages, chunkSize: size) else { continue }
                    let memory: String
                    do { memory = describe(try QueryEngine(graph: graph).run(parsed), graph) } catch { memory = "error: \(error)" }
                    let chunked: String
                    do {
                        let answer = try plan.answer(parsed, over: pages)
                        chunked = describe(answer)
                        if case .objects(_, let keys) = answer, let read = try? pages.objects(type: plan.type, keys: keys) {
                            let found = Set(read.types[plan.type].ids.map(\.description))
                            if let missing = keys.first(where: { !found.contains($0.description) }) {
                                fatalError("\(statement): object \(missing) answered in chunks does not read back by key")
                            }
                        }
                    } catch is StoreError {
                        continue
                    } catch is RelationPartUnanswered {
                        continue   // a refusal: without a SQL source, nothing says what goes through relations
                    } catch {
                        chunked = "error: \(error)"
                    }
                    if chunked != memory, !chunked.hasPrefix("error: ") || !memory.hasPrefix("error: ") {
                        fatalError("the chunked engine disagrees on \(statement) (chunks of \(size))\nchunks: \(chunked)\nmemory: \(memory)")
                    }
                }
            }
        }
    }

    /// Statements answered by SQL over the paged store (``PersistQuerySource``,
    /// ``RelationalQuerySource`` or ``CoreDataQuerySource``, as paged mode and `loupe query` over the budget ask them) against
    /// the in-memory engine: the same counts, keys in the same order, rows and groups; errors on
    /// both sides.
    static func compareQuerySource(_ graph: ObjectGraph, source: any QuerySource) {
        for statement in statements(graph) {
            guard let parsed = try? Parser.parse(statement) else { continue }
            let memory: String
            do { memory = describe(try QueryEngine(graph: graph).run(parsed), graph) } catch { memory = "error: \(error)" }
            let sql: String
            do {
                guard let answer = try source.answer(parsed, isCancelled: { false }) else { continue }
                sql = describe(answer)
            } catch is StoreError {
                continue   // SQL refused the file; the caller says so
            } catch {
                sql = "error: \(error)"
            }
            if sql != memory, !sql.hasPrefix("error: ") || !memory.hasPrefix("error: ") {
                fatalError("SQL over the paged store disagrees on \(statement)\nSQL:    \(sql)\nmemory: \(memory)")
            }
        }
    }

    static func describe(_ result: QueryResult, _ graph: ObjectGraph) -> String {
        switch result {
        case .count(let n): return "count \(n)"
        case .objects(_, let refs): return refs.map { graph.id(of: $0).description }.joined(separator: " ")
        case .projection(let columns, let rows, let refs):
            return columns.joined(separator: "|") + "\n" + rows.map { $0.map(\.description).joined(separator: "|") }.joined(separator: "\n")
                + "\nof " + refs.map { graph.id(of: $0).description }.joined(separator: " ")
        case .groups(let key, let rows, let objects): return key + " of \(objects.count)\n" + rows.map { "\($0.key) \($0.count)" }.joined(separator: "\n")
        case .message(let m): return m
        }
    }

    static func describe(_ answer: SourceAnswer) -> String {
        switch answer {
        case .count(let n): return "count \(n)"
        case .objects(_, let keys): return keys.map(\.description).joined(separator: " ")
        case .projection(let columns, let rows, let keys):
            return columns.joined(separator: "|") + "\n" + rows.map { $0.map(\.description).joined(separator: "|") }.joined(separator: "\n")
                + "\nof " + keys.map(\.description).joined(separator: " ")
        case .groups(let key, let rows, let total): return key + " of \(total)\n" + rows.map { "\($0.key) \($0.count)" }.joined(separator: "\n")
        }
    }

    static let folder: String = {
        let f = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-filefuzz-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: f, withIntermediateDirectories: true)
        SchemaCache.directory.withLock { $0 = f + "/cache" }   // every Persist input's load leaves an entry
        return f
    }()
}
