import DisplayText
import LoupeModel
import LoupeQuery

/// A paged sheet's rows: a whole type of the catalog, or a list of keys (a followed relation),
/// and the window of them in memory.
public struct PagedRows {
    public enum Source {
        /// Every object of the catalog's type at this index, in key order.
        case type(Int)
        /// These objects, in this order.
        case keys([ObjectID])
        /// The objects at the other end of one link of an object (one a window cut).
        case link(ObjectIdentity, ObjectWindow.Link)
    }

    public let source: Source
    /// How many rows the sheet has.
    public internal(set) var count: Int
    /// The name of the type every row is of (nil: several).
    public let typeName: String?
    /// The position of the window's first row, its keys, and what was read for them.
    public internal(set) var start = 0
    public internal(set) var keys: [ObjectID] = []
    public internal(set) var window: ObjectWindow
    /// False until a window is read (an empty list's window still brings the schema).
    var isRead = false
    /// False while the store counts the type (``Browser/settleTypeCounts()``): `count` is then the
    /// rows read so far, or the first window's size.
    public internal(set) var isCounted = true

    init(source: Source, count: Int, typeName: String?) {
        self.source = source
        self.count = count
        self.typeName = typeName
        self.window = ObjectWindow(graph: GraphBuilder(formatName: "").finish(), refs: [])
    }

    /// The object on row `row`, when the window holds it.
    public func ref(at row: Int) -> ObjectRef? {
        let i = row - start
        return i >= 0 && i < window.refs.count ? window.refs[i] : nil
    }

    /// The rows' type in the window's graph (nil: several, or none read yet).
    var type: TypeTable? { typeName.flatMap { window.graph.type(named: $0) } }

    /// True when the window holds rows `range`.
    func holds(_ range: Range<Int>) -> Bool {
        range.isEmpty || (range.lowerBound >= start && range.upperBound <= start + window.refs.count)
    }
}

/// How a paged list was sorted (`s`/`S`): the statement it lists (a whole type, a filter) and
/// the sort keys so far, the latest first (a later sort keeps earlier ones' order for its ties).
public struct PagedSort: Sendable {
    let base: Query
    let keys: [SortKey]
}

/// A frequency table of one column of a whole type, counted over the store (paged mode's `F`).
public struct PagedFrequency {
    /// The column's name, as the records pane heads it.
    public let column: String
    /// Each value with how many objects have it: most frequent first, ties by value.
    public internal(set) var rows: [(key: Value, count: Int)]
    /// How many objects were counted (the type's count).
    public let total: Int
    /// The catalog's index of the type, the attribute counted (nil: the key), the type's name.
    let type: Int
    let attribute: String?
    let typeName: String
    /// The window of the view it was counted from (what the other panes read meanwhile).
    let graph: ObjectGraph
}

extension Browser {
    /// Browses `source` a page at a time: the types pane from its catalog, the first type's first
    /// page at once. Statements are answered by `querySource` (SQL over the store) when given,
    /// else, on a type's own attributes, a chunk at a time. Edits are staged over the objects they
    /// name (``PagedChanges``) when ``host`` is a ``PagedSessionHost`` (set it first); without
    /// one the store is read-only and says so. `reason` says why on the status line (`over the
    /// 2.0 GB memory budget`).
    public func attachPaged(_ source: PageSource, reason: String? = nil, querySource: (any QuerySource)? = nil) {
        pages = source
        self.querySource = querySource
        pagedReason = reason
        loadedGraph = nil
        isPreview = false
        progress = nil
        typeSelection = 0
        startPagedEditing()
        listTypes(of: source)
        openType(0)
    }

    /// Shows `source`'s types as it lists them, and counts those it has not counted yet off the
    /// UI thread (on ``background``; here and now without one): the first screen does not wait
    /// for a count of every object. The next event waits for the counts
    /// (``settleTypeCounts()``), so that no key acts on a count still read.
    func listTypes(of source: PageSource) {
        pendingTypes = source.listedTypes.map { ($0.name, $0.count ?? -1) }
        guard pendingTypes.contains(where: { $0.count < 0 }) else { return }
        countingTypes = true
        if let background {
            nonisolated(unsafe) let counted = source
            background.start { try? counted.countTypes() }
        } else {
            settleTypeCounts()
        }
    }

    /// True while the store counts its types after a first screen drawn without their counts.
    public var isCountingTypes: Bool { countingTypes }

    /// Waits for the store's counts of its types, when they are still being read, then shows them
    /// in the types pane and in the views of whole types that showed the rows read so far.
    public func settleTypeCounts() {
        guard countingTypes, let pages else { countingTypes = false; return }
        countingTypes = false
        pendingTypes = pages.catalog
        func settled(_ sheet: inout Sheet) {
            guard case .paged(var rows) = sheet.content, !rows.isCounted, case .type(let t) = rows.source, t < pendingTypes.count else { return }
            rows.count = pendingTypes[t].count + (pagedChanges?.inserted(ofType: pendingTypes[t].name).count ?? 0)
            rows.isCounted = true
            sheet.content = .paged(rows)
            sheet.selection = min(sheet.selection, max(0, rows.count - 1))
        }
        for i in stack.indices { settled(&stack[i]) }
        for s in earlierStacks.indices { for i in earlierStacks[s].indices { settled(&earlierStacks[s][i]) } }
    }

    /// Opens the catalog's type `index` as a paged sheet (while the store counts it, with the
    /// rows its first window reads).
    func openPagedType(_ index: Int) {
        guard pages != nil, index >= 0, index < pendingTypes.count else { return }
        typeSelection = index
        let entry = pendingTypes[index]
        var rows = PagedRows(source: .type(index), count: entry.count < 0 ? pagedWindowRows : entry.count, typeName: entry.name)
        rows.isCounted = entry.count >= 0
        var sheet = Sheet(content: .paged(rows), crumb: entry.name)
        sheet.showsWholeType = true
        if stack.count > 1 { earlierStacks.append(stack); if earlierStacks.count > 20 { earlierStacks.removeFirst() } }
        stack = [sheet]
        showsGraph = false
        ensurePagedWindow(span: max(1, layout.recordsBody.height))
        detailSelection = initialDetailSelection()
    }

    /// Follows a link in paged mode: its objects as a paged list of keys, or, when the window
    /// holds only the first ones, the link itself read from the store a page at a time.
    func followPaged(_ link: DetailLink, from origin: ObjectRef, in graph: ObjectGraph) {
        let names = targetTypes(of: link, origin: origin, in: graph)
        let crumb = graph.label(of: origin) + " › " + link.crumb
        if let total = pagedTotal(of: link, origin: origin), let name = link.relationName {
            let key = ObjectWindow.Link(relation: name, outgoing: link.relation != nil, sourceType: link.sourceType)
            let typeName = link.sourceType ?? (names.count == 1 ? names.first : nil)
            push(Sheet(content: .paged(PagedRows(source: .link(graph.identity(of: origin), key), count: total, typeName: typeName)), crumb: crumb))
        } else {
            guard !link.targets.isEmpty else { message = "\(link.label) is empty"; return }
            let keys = link.targets.map { graph.id(of: $0) }
            push(Sheet(content: .paged(PagedRows(source: .keys(keys), count: keys.count, typeName: names.count == 1 ? names.first : nil)), crumb: crumb))
        }
        ensurePagedWindow(span: max(1, layout.recordsBody.height))
        detailSelection = initialDetailSelection()
        focus = link.toMany ? .records : .detail   // a list opens on its rows, one object on its detail
    }

    /// The links of a cut object with their totals (read from the store once per object).
    func pagedLinkTotals(of origin: ObjectRef) -> [ObjectWindow.Link: Int]? {
        guard let pages, case .paged(let rows)? = current?.content else { return nil }
        let object = rows.window.graph.identity(of: origin)
        guard rows.window.cut.contains(object) else { return nil }
        if let known = linkTotalsRead[object] { return known }
        guard !isMakingFrame else { storeReadsAskedWhileDrawing += 1; return nil }
        guard let totals = try? pages.linkTotals(of: object) else { return nil }
        linkTotalsRead[object] = totals
        return totals
    }

    /// How many edges the store has for a link whose window holds only the first ones.
    func pagedTotal(of link: DetailLink, origin: ObjectRef) -> Int? {
        guard let name = link.relationName, let totals = pagedLinkTotals(of: origin) else { return nil }
        let total = matching(link, name, totals).reduce(0) { $0 + $1.value }
        return total > link.targets.count ? total : nil
    }

    /// The totals of `link` (named `name`) among a cut object's: a relation's for every type of
    /// its targets, a backlink's from its source type.
    private func matching(_ link: DetailLink, _ name: String, _ totals: [ObjectWindow.Link: Int]) -> [ObjectWindow.Link: Int] {
        let outgoing = link.relation != nil
        return totals.filter { $0.key.relation == name && $0.key.outgoing == outgoing && (outgoing || $0.key.sourceType == link.sourceType) }
    }

    /// The names of the types at the far end of `link`: those of the targets the graph or window
    /// holds, and in paged mode, for a cut object's relation, those the store counted beyond them.
    func targetTypes(of link: DetailLink, origin: ObjectRef, in graph: ObjectGraph) -> Set<String> {
        var names = Set(link.targets.map { graph.table($0).name.rawValue })
        if link.relation != nil, let name = link.relationName, let totals = pagedLinkTotals(of: origin) {
            for (key, n) in matching(link, name, totals) where n > 0 { if let type = key.sourceType { names.insert(type) } }
        }
        return names
    }

    /// A link's count as the detail pane shows it: the store's, also when the window holds only
    /// the first edges (following the link reads them all, a page at a time).
    func linkCount(_ link: DetailLink, origin: ObjectRef) -> String {
        guard pages != nil, let total = pagedTotal(of: link, origin: origin) else { return "\(link.targets.count)" }
        return "\(total)"
    }

    /// The backlinks of a cut object with those its window holds none of (their rows come after
    /// the first ones read) added, with empty targets (following one reads it from the store), in
    /// the loaded graph's order: by source type, then by the relation's place in it.
    func pagedBacklinks(of origin: ObjectRef, _ shown: [DetailLink], in graph: ObjectGraph) -> [DetailLink] {
        guard let totals = pagedLinkTotals(of: origin) else { return shown }
        let present = Set(shown.map { ($0.sourceType ?? "") + "\u{0}" + ($0.relationName ?? "") })
        let missing = totals.keys.filter { !$0.outgoing && !present.contains(($0.sourceType ?? "") + "\u{0}" + $0.relation) }
            .map { link in
                let key = "\(link.sourceType ?? "").\(link.relation)"
                return DetailLink(label: "@links." + key, targets: [], toMany: true, crumb: "@links " + key, relation: nil,
                                  relationName: link.relation, sourceType: link.sourceType)
            }
        func place(_ link: DetailLink) -> (Int, Int) {
            guard let type = link.sourceType.flatMap({ graph.type(named: $0) }) else { return (Int.max, Int.max) }
            return (type.index, link.relationName.flatMap { type.relation(named: $0) } ?? Int.max)
        }
        return (shown + missing).enumerated().sorted { a, b in
            let (x, y) = (place(a.element), place(b.element))
            return x != y ? x < y : a.offset < b.offset
        }.map(\.element)
    }

    /// Reads the window the current paged sheet needs to show `span` rows from its top and its
    /// selection, when the window in memory does not hold them; a failed read leaves the old
    /// window and says why.
    func ensurePagedWindow(span: Int) {
        guard let pages, var sheet = current, case .paged(var rows) = sheet.content else { return }
        guard !isMakingFrame else { storeReadsAskedWhileDrawing += 1; return }
        // The rows a frame shows: the selection in view first (as rendering places it; the
        // sheet itself is clamped when drawn).
        sheet.clamp(height: span)
        let low = sheet.top
        let high = min(rows.count, sheet.top + span)
        guard !rows.isRead || !rows.holds(low..<high) else { return }
        let size = max(pagedWindowRows, (high - low) * 2)
        let start = max(0, min(low - size / 4, rows.count - size))
        let range = start..<min(rows.count, start + size)
        do {
            let keys: [ObjectID]
            var inserted: [ObjectIdentity] = []
            // The rows' type: a relational store finds keys table by table.
            var typeName = rows.typeName
            switch rows.source {
            case .type(let t):
                // The store's objects, then those staged as new (after them, as a load shows them).
                typeName = pendingTypes[t].name
                // Not counted yet: as many as the range asks (fewer come back past the end).
                let stored = rows.isCounted ? pendingTypes[t].count : range.upperBound
                let storedRange = range.clamped(to: 0..<stored)
                let near = Array(rows.keys.prefix(max(0, stored - rows.start)))
                keys = storedRange.isEmpty ? [] : try pages.keys(type: t, range: storedRange, near: near.isEmpty ? nil : (rows.start, near))
                if !rows.isCounted, keys.count < storedRange.count { rows.count = storedRange.lowerBound + keys.count }
                if rows.isCounted, range.upperBound > stored, let new = pagedChanges?.inserted(ofType: pendingTypes[t].name) {
                    inserted = Array(new[max(0, range.lowerBound - stored)..<min(new.count, range.upperBound - stored)])
                }
            case .keys(let all):
                keys = Array(all[range])
            case .link(let origin, let link):
                keys = try pages.linkKeys(of: origin, link: link, range: range)
            }
            if case .keys = rows.source, let pagedChanges {
                // A statement's answer over the staged state lists new objects too, in its order.
                rows.window = try pagedChanges.window(listing: keys, of: typeName)
            } else {
                rows.window = try pagedChanges.map { try $0.window(keys: keys, of: typeName, inserted: inserted) } ?? pages.window(keys: keys, of: typeName)
            }
            rows.isRead = true
            rows.start = start
            rows.keys = keys + inserted.map(\.id)
            updateCurrent { $0.content = .paged(rows) }
        } catch {
            message = "cannot read this page: \(error)"
        }
    }

    /// What paged mode does not do, said when it is asked for.
    func refusePaged(_ what: String) {
        message = "paged mode: \(what) needs the whole graph (reopen with a larger --memory-budget)"
    }
}

extension Browser {
    /// The running task's line while a relation index is built.
    static let indexTaskLine = "build a relation index"

    /// `I`: builds what paged mode offers in Loupe's cache, off the UI thread (Ctrl-C cancels):
    /// the relation index when the store lacks one, else, on an attribute column of a list of
    /// one type, that attribute's order for sorts (``buildSortIndex(typeName:attribute:)``).
    func buildRelationIndex() {
        guard let pages else { message = "I builds a relation index for paged mode; this store is loaded whole"; return }
        guard running == nil else { message = "wait for the running task (Ctrl-C cancels it)"; return }
        guard pages.offersRelationIndex else {
            if buildSortIndex() { return }
            message = pages.relationIndexBuilt ? "Loupe's relation index is built already; on an attribute column, I keeps its order for sorts"
                : querySource?.sortIndexes(typeName: "") != nil ? "no place for an index: the cache is off (LOUPE_CACHE_DIR=off)"
                : "nothing for I to build: this store's own indexes serve paged mode"
            return
        }
        let task = RunningTask(line: Browser.indexTaskLine, isLoad: true, verb: "indexing")
        nonisolated(unsafe) let source = pages
        start(task) {
            let result = Result { try source.buildRelationIndex(progress: { task.report($0, $1) }, isCancelled: { task.cancellation.isCancelled }) }
            task.finish(.indexed(result))
        }
    }

    /// Says how building the index ended; windows read through it from now on.
    func finishRelationIndex(_ result: Result<Void, any Error>, cancelled: Bool) {
        switch result {
        case .success: message = "relation index built in Loupe's cache: pages and statements read relation rows by key"
        case .failure where cancelled: message = "index cancelled: nothing was kept"
        case .failure(let error): message = "cannot build the index: \(error)"
        }
    }

    /// `I` on an attribute column of a paged list of one type whose query source keeps orders
    /// (a Persist store): keeps that attribute's order in Loupe's cache, off the UI thread
    /// (Ctrl-C cancels). False when the view or the source has nothing to index.
    func buildSortIndex() -> Bool {
        guard let sql = querySource, let graph, let sheet = current, case .paged(let rows) = sheet.content,
              let typeName = rows.typeName, let kept = sql.sortIndexes(typeName: typeName) else { return false }
        let columns = sheet.columns(graph: graph)
        guard sheet.column < columns.count, let type = rows.type, let a = type.attribute(named: columns[sheet.column]),
              type.attributes[a].name == columns[sheet.column] else { return false }
        let attribute = columns[sheet.column]
        guard !kept.contains(attribute) else {
            message = "the order of \(typeName).\(attribute) is kept already: sorts by it read it"; return true
        }
        let task = RunningTask(line: "I \(attribute)", isLoad: true, verb: "indexing")
        start(task) {
            let result = Result { try sql.buildSortIndex(typeName: typeName, attribute: attribute, isCancelled: { task.cancellation.isCancelled }) }
            task.finish(.sortIndexed("\(typeName).\(attribute)", result))
        }
        return true
    }

    /// Says how keeping an attribute's order ended.
    func finishSortIndex(_ name: String, _ result: Result<Void, any Error>, cancelled: Bool) {
        switch result {
        case .success: message = "the order of \(name) is kept in Loupe's cache: sorts by it read ranks, not documents"
        case .failure where cancelled: message = "index cancelled: nothing was kept"
        case .failure(let error): message = "cannot keep the order of \(name): \(error)"
        }
    }

    /// At most this many distinct values make a paged frequency table (its rows are held).
    static let pagedFrequencyLimit = 200_000

    /// `F` in paged mode: the current column of a whole type counted over the store, off the UI
    /// thread (Ctrl-C cancels): its attributes' values or its keys.
    func pagedFrequency() {
        guard let pages, let graph, let sheet = current, case .paged(let rows) = sheet.content else {
            if case .pagedFrequency? = current?.content { message = "already a frequency table" } else { refusePaged("a frequency table of this view") }
            return
        }
        // A whole type, or one `s` sorted (the same objects).
        let sortedType = sheet.pagedSort.flatMap { $0.base.predicate == nil ? $0.base.type?.text : nil }.flatMap { name in pages.catalog.firstIndex { $0.name == name } }
        guard let t = sortedType ?? { if case .type(let t) = rows.source { return t } else { return nil } }() else {
            refusePaged("a frequency table of a followed link or a statement's objects"); return
        }
        guard running == nil else { message = "wait for the running task (Ctrl-C cancels it)"; return }
        let columns = sheet.columns(graph: graph)
        guard sheet.column < columns.count else { return }
        let name = columns[sheet.column]
        let attribute: String?
        if let type = rows.type, type.attribute(named: name).map({ type.attributes[$0].name == name }) == true {
            attribute = name
        } else if name == "id", rows.type.map({ !Sheet.keyIsAnAttribute($0) }) ?? true {
            attribute = nil
        } else {
            refusePaged("a frequency table of a relation column"); return
        }
        // With changes pending: the objects they touch counted as staged, not as stored.
        let moved = pagedChanges?.stagedValues(ofType: pages.catalog[t].name, attribute: attribute) ?? []
        let total = pages.catalog[t].count + moved.filter { $0.stored == nil }.count
        let task = RunningTask(line: "F \(name)", isLoad: true, verb: "counting")
        nonisolated(unsafe) let source = pages
        let limit = Browser.pagedFrequencyLimit
        start(task) {
            let result = Result { () throws -> [Value: Int] in
                let tooMany = PagedRefusal("more than \(limit) different values: a frequency table of \(name) needs the whole graph")
                // Counted by the store where it counts exactly, else value by value.
                var counts: [Value: Int] = [:]
                if let counted = try source.frequencies(type: t, attribute: attribute, limit: limit, isCancelled: { task.cancellation.isCancelled }) {
                    guard counted.count <= limit else { throw tooMany }
                    counts = counted
                } else {
                    var n = 0
                    try source.forEachValue(type: t, attribute: attribute) { _, value in
                        counts[value, default: 0] += 1
                        n += 1
                        if n & 65_535 == 0 { task.report(n, total) }
                        if counts.count > limit { throw tooMany }
                        return !task.cancellation.isCancelled
                    }
                }
                for (_, stored, staged) in moved {
                    if let stored { counts[stored, default: 0] -= 1 }
                    counts[staged, default: 0] += 1
                }
                return counts.filter { $0.value > 0 }
            }
            task.finish(.counted(name, t, attribute, total, result))
        }
    }

    /// Shows a paged frequency table once counted.
    func finishPagedFrequency(column: String, type: Int, attribute: String?, total: Int, _ result: Result<[Value: Int], any Error>, cancelled: Bool) {
        guard let pages, let graph else { return }
        switch result {
        case .success where cancelled: message = "counting cancelled"
        case .success(let counts):
            let table = PagedFrequency(column: column, rows: QueryEngine.frequencyRows(counts: counts), total: total, type: type, attribute: attribute,
                                       typeName: pages.catalog[type].name, graph: graph)
            push(Sheet(content: .pagedFrequency(table), crumb: "F \(column)"))
        case .failure(let error): message = "cannot count \(column): \(error)"
        }
    }

    /// Enter on a paged frequency table's row: the type's objects with that value, found over the
    /// store (off the UI thread), as a paged list.
    func openPagedFrequencyRow(_ table: PagedFrequency, row: Int) {
        guard let pages, row < table.rows.count else { return }
        guard running == nil else { message = "wait for the running task (Ctrl-C cancels it)"; return }
        let value = table.rows[row].key
        let task = RunningTask(line: "\(table.column) = \(ValueFormatter.plain(value))", isLoad: true, verb: "finding")
        nonisolated(unsafe) let source = pages
        let (type, attribute, total, typeName) = (table.type, table.attribute, table.total, table.typeName)
        // With changes pending: the objects they touch found by their staged values.
        let moved = pagedChanges?.stagedValues(ofType: typeName, attribute: attribute) ?? []
        start(task) {
            let empty = GraphBuilder(formatName: "").finish()
            let result = Result { () throws -> [ObjectID] in
                var keys: [ObjectID] = []
                var n = 0
                let touched = Set(moved.map(\.key))
                try source.forEachValue(type: type, attribute: attribute) { key, v in
                    if !touched.contains(key), QueryEngine.opens(v, row: value, graph: empty) { keys.append(key) }
                    n += 1
                    if n & 65_535 == 0 { task.report(n, total) }
                    return !task.cancellation.isCancelled
                }
                guard !moved.isEmpty else { return keys }
                return (keys + moved.filter { QueryEngine.opens($0.staged, row: value, graph: empty) }.map(\.key)).sorted()
            }
            task.finish(.found(task.line, typeName, result))
        }
    }

    /// Shows the objects a frequency table's row stands for, once found.
    func finishPagedFilter(crumb: String, typeName: String, _ result: Result<[ObjectID], any Error>, cancelled: Bool) {
        switch result {
        case .success where cancelled: message = "cancelled"
        case .success(let keys):
            push(Sheet(content: .paged(PagedRows(source: .keys(keys), count: keys.count, typeName: typeName)), crumb: crumb))
            ensurePagedWindow(span: max(1, layout.recordsBody.height))
            detailSelection = initialDetailSelection()
        case .failure(let error): message = "cannot find them: \(error)"
        }
    }

    /// What paged mode answers of a statement: a count, the keys of the objects it lists, a
    /// projection's rows or a frequency table.
    enum PagedAnswer: Sendable {
        case count(Int)
        case keys(typeName: String, [ObjectID])
        case projection(columns: [String], rows: [[Value]], keys: [ObjectID])
        case groups(key: String, rows: [(key: Value, count: Int)], total: Int)

        init(_ answer: SourceAnswer) {
            switch answer {
            case .count(let n): self = .count(n)
            case .objects(let typeName, let keys): self = .keys(typeName: typeName, keys)
            case .projection(let columns, let rows, let keys): self = .projection(columns: columns, rows: rows, keys: keys)
            case .groups(let key, let rows, let total): self = .groups(key: key, rows: rows, total: total)
            }
        }

        var sourceAnswer: SourceAnswer {
            switch self {
            case .count(let n): return .count(n)
            case .keys(let typeName, let keys): return .objects(typeName: typeName, keys: keys)
            case .projection(let columns, let rows, let keys): return .projection(columns: columns, rows: rows, keys: keys)
            case .groups(let key, let rows, let total): return .groups(key: key, rows: rows, total: total)
            }
        }
    }

    /// The dot-commands paged mode runs (the pending changes' only while editing is on).
    var pagedCommands: Set<String> {
        Set(["help", "types", "schema", "mode", "timer", "explain", "quit"]).union(pagedChanges != nil ? ["changes", "commit", "undo", "redo", "rollback", "reload"] : [])
    }

    /// Runs a dot-command of paged mode that needs no graph (`.help`, listing what paged mode
    /// runs; `.mode`, `.timer`), or reads the store's catalog (`.types`) or each type's first
    /// objects (`.schema`, ``PageSource/schemaText(type:schema:sampleSize:)``) off the UI thread.
    /// False for any other line.
    func runPagedDotCommand(_ line: String) -> Bool {
        guard let pages, case .dotCommand(let name, let arguments, _)? = try? Parser.parse(line),
              case .success(let command) = ReplSession.command(named: name) else { return false }
        if command.name == "explain" { return explainPaged(line, pages: pages) }
        guard let session else { return false }
        switch command.name {
        case "help" where arguments.isEmpty:
            replOutput.append(contentsOf: ReplSession.helpText(only: pagedCommands).split(separator: "\n").map(String.init))
        case "types" where arguments.isEmpty, "schema" where arguments.count <= 1:
            guard running == nil else { message = "wait for the running task (Ctrl-C cancels it)"; return true }
            nonisolated(unsafe) let source = pages
            let mode = session.mode
            let task = RunningTask(line: line, isLoad: true, verb: "reading")
            start(task) {
                task.finish(.described(Result {
                    if command.name == "types" {
                        return ResultTable.typeCounts(source.catalog, mode: mode)
                    }
                    return try source.schemaText(typeNamed: arguments.first)
                }))
            }
        case "help", "mode", "timer", "types", "schema":
            // The session's own (a command's help, the output mode, the timer, a usage line).
            guard case .reply(let reply) = session.begin(line) else { return false }
            let text = reply.error ?? reply.output
            replOutput.append(contentsOf: text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast(text.hasSuffix("\n") ? 1 : 0))
        default:
            return false
        }
        trimOutput()
        return true
    }

    /// `.explain STATEMENT` in paged mode: the statement planned and run off the UI thread as
    /// paged mode runs it, its plan (``PlanReport``) shown in the REPL's output.
    func explainPaged(_ line: String, pages: PageSource) -> Bool {
        guard running == nil else { message = "wait for the running task (Ctrl-C cancels it)"; return true }
        let text = ReplSession.explained(line), json = session?.mode == .json
        guard !text.isEmpty else { replOutput.append("Usage: .explain STATEMENT"); trimOutput(); return true }
        let task = RunningTask(line: line, isLoad: true, verb: "explaining")
        nonisolated(unsafe) let steps = StoreSteps(source: querySource, pages: pages, schema: graph, kind: storeKind, isCancelled: { task.cancellation.isCancelled })
        start(task) {
            task.finish(.described(Result {
                let report = try PlanReport.paged(text, steps: steps)
                return json ? report.json : report.text
            }))
        }
        return true
    }

    /// A statement typed in paged mode, answered over the store off the UI thread (Ctrl-C
    /// cancels): by the ``querySource`` (SQL over the file: paths through relations and backlinks,
    /// aggregates, sorts, projections, groups), else, for counts, queries and groups whose paths
    /// read only the type's own attributes, by the engine a few thousand objects at a time
    /// (``ChunkedAnswer``).
    /// Objects are listed as a paged view, projections and groups as in the loaded browser.
    /// Returns false when it did not run (a mutation, a dot-command, a bare predicate).
    func runPaged(_ line: String) -> Bool {
        guard pages != nil, graph != nil else { return false }
        let statement: Statement
        do { statement = try Parser.parse(line) } catch let error as QueryError {
            replOutput.append(contentsOf: error.render(source: line).split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
            trimOutput()
            return true
        } catch { return false }
        return runPaged(statement, line: line)
    }

    /// Answers a parsed statement over the store (see ``runPaged(_:)``); `line` labels its view.
    func runPaged(_ statement: Statement, line: String) -> Bool {
        guard pages != nil else { return false }
        // A statement over a type runs (neither SQL nor the chunks answering it: refused as such).
        guard statement.pushdownRoot != nil else { return false }
        guard running == nil else { message = "wait for the running task (Ctrl-C cancels it)"; return true }
        let task = RunningTask(line: line, isLoad: true, verb: "querying")
        let answering = pagedAnswering(statement)
        start(task) { task.finish(.answered(statement, Result { try answering(task) })) }
        return true
    }

    /// How a task answers `statement` over the store, read off the UI thread, as the planner
    /// plans it: by the ``querySource``, else the engine a chunk of objects at a time; with
    /// changes pending, the staged state's answer (and the note to show after it, if any).
    func pagedAnswering(_ statement: Statement) -> @Sendable (RunningTask) throws -> (PagedAnswer, String?) {
        nonisolated(unsafe) let source = pages
        let sql = querySource
        let changes = pagedChanges
        let kind = storeKind
        let schema = graph
        return { task in
            let asked = changes?.fileStatement(for: statement) ?? statement
            // The chunks answer what the store is asked (without the clauses the staged
            // answer applies itself).
            let steps = StoreSteps(source: sql, pages: source, schema: schema, kind: kind, declaring: changes?.declaredAttributes ?? [:],
                                   progress: { task.report($0, $1) }, isCancelled: { task.cancellation.isCancelled })
            let plan = Planner.plan(asked, PlanSituation(kind: kind, paged: true))
            let answer: PagedAnswer
            do {
                guard case .answered(let found, _, _) = try plan.run(steps) else { throw PagedRefusal("paged mode cannot load the store") }
                answer = PagedAnswer(found)
            } catch let refusal as PlanRefusal {
                throw PagedRefusal("paged mode answers what SQL can say over the store; this one needs the whole graph: \(refusal.description) (reopen with a larger --memory-budget)")
            }
            // The store answered over the file: with changes pending, the staged state's answer.
            guard var changes else { return (answer, nil) }
            let declared = changes.declaredAttributes
            let staged = try changes.staged(statement, fileAnswer: answer.sourceAnswer) {
                try sql?.answer(statement, declaring: declared, isCancelled: { task.cancellation.isCancelled })
            }
            return (PagedAnswer(staged.answer), staged.overFile ? PagedChanges.overFileNote : nil)
        }
    }

    /// `s`/`S` on a paged list of objects: the list sorted by the current column, as the loaded
    /// browser sorts it (stably: ties keep the order the list had), by a statement answered over
    /// the store off the UI thread (Ctrl-C cancels). A whole type is `Type sort by column`; a
    /// statement's objects in key order (a filter) are the statement with that sort; a list
    /// sorted here before is sorted by the new column, then by the earlier ones. Relations'
    /// objects and other statements' lists are refused (their order is not a statement's).
    func sortPaged(ascending: Bool) {
        guard pages != nil, let graph, let sheet = current, case .paged(let rows) = sheet.content, let typeName = rows.typeName else {
            refusePaged("sorting this view"); return
        }
        let columns = sheet.columns(graph: graph)
        guard sheet.column < columns.count else { return }
        let name = columns[sheet.column]
        var query: Query
        switch rows.source {
        case _ where sheet.pagedSort != nil:
            query = sheet.pagedSort!.base
        case .type:
            query = Query(type: Name(text: typeName, range: SourceRange(0, 0)))
        case .keys:
            guard case .query(let q)? = sheet.statement, q.clauses.isEmpty, q.projection == nil, q.type != nil else {
                message = "paged mode sorts a whole type or a filter's objects; add `sort by \(name)` to the statement"; return
            }
            query = q
        case .link:
            message = "paged mode sorts a whole type or a filter's objects, not a relation's"; return
        }
        guard running == nil else { message = "wait for the running task (Ctrl-C cancels it)"; return }
        let key = SortKey(path: .column(name), ascending: ascending)
        let keys = [key] + (sheet.pagedSort?.keys ?? []).filter { $0.path != key.path }
        let sort = PagedSort(base: query, keys: keys)
        query.clauses = [.sort(keys)]
        let statement = Statement.query(query)
        let task = RunningTask(line: "sort by \(name)", isLoad: true, verb: "sorting")
        let answering = pagedAnswering(statement)
        let depth = stack.count
        start(task) {
            task.finish(.pagedSorted(depth, name, sort, Result { try answering(task) }))
        }
    }

    /// Shows a sort's answer in the view it sorted (when that is still the current view).
    /// A sort that took more than ``relationIndexHintSeconds`` by a column whose order the
    /// source could keep says that `I` keeps it.
    func finishPagedSort(depth: Int, column: String, sort: PagedSort, _ result: Result<(PagedAnswer, String?), any Error>, cancelled: Bool, seconds: Double = 0) {
        guard stack.count == depth, let sheet = current, case .paged(let rows) = sheet.content else {
            message = "the sort's view was left before it was sorted"; return
        }
        switch result {
        case .success where cancelled: message = "sort cancelled"
        case .success(let (.keys(typeName, sorted), note)):
            updateCurrent {
                $0.content = .paged(PagedRows(source: .keys(sorted), count: sorted.count, typeName: rows.typeName ?? typeName))
                $0.pagedSort = sort
                $0.sortedBy = SortMark(column: column, ascending: sort.keys.first?.ascending ?? true)
                $0.selection = 0
                $0.top = 0
            }
            ensurePagedWindow(span: max(1, layout.recordsBody.height))
            detailSelection = initialDetailSelection()
            message = "sorted by \(column) \(sort.keys.first?.ascending == false ? "descending" : "ascending")"
            if seconds > relationIndexHintSeconds, let typeName = rows.typeName, let kept = querySource?.sortIndexes(typeName: typeName),
               !kept.contains(column), rows.type?.attribute(named: column) != nil {
                message += String(format: " (%.1f s: I keeps %@'s order in Loupe's cache for faster sorts)", seconds, column)
            }
            if let note { replOutput.append(note); trimOutput() }
        case .success: message = "cannot sort by \(column)"
        case .failure where cancelled: message = "sort cancelled"
        case .failure(let error as PagedRefusal): message = "cannot sort by \(column): \(error)"
        case .failure: message = "cannot sort by \(column)"
        }
    }

    /// Shows a paged statement's answer: a count in the REPL, objects as a paged view.
    /// A statement that took `seconds` (more than ``relationIndexHintSeconds``) on a store without
    /// Loupe's relation index says once that `I` builds it.
    func finishPagedStatement(line: String, statement: Statement, _ outcome: Result<(PagedAnswer, String?), any Error>, cancelled: Bool, seconds: Double = 0) {
        let result = outcome.map(\.0)
        defer {
            if case .success(let (_, note?)) = outcome, !cancelled { replOutput.append(note); trimOutput() }
        }
        defer {
            if case .success = result, !cancelled, seconds > relationIndexHintSeconds, pages?.offersRelationIndex == true, !hintedRelationIndex {
                hintedRelationIndex = true
                replOutput.append(String(format: "(%.1f s: I builds Loupe's relation index, which statements through relations read faster)", seconds))
                trimOutput()
            }
        }
        switch result {
        case .success where cancelled: replOutput.append("cancelled")
        case .success(.count(let n)): replOutput.append("\(n)")
        case .success(.keys(let typeName, let keys)):
            push(Sheet(content: .paged(PagedRows(source: .keys(keys), count: keys.count, typeName: typeName)), crumb: line, statement: statement))
            ensurePagedWindow(span: max(1, layout.recordsBody.height))
            detailSelection = initialDetailSelection()
            replOutput.append("\(keys.count.counting("object"))")
        case .success(.projection(let columns, let rows, let keys)):
            // Values only; each row keeps its object's key (Enter opens the object).
            var sheet = Sheet(content: .projection(columns: columns, rows: rows, refs: []), crumb: line, statement: statement)
            sheet.rowKeys = keys
            push(sheet)
            replOutput.append("\(rows.count.counting("row"))")
        case .success(.groups(let key, let rows, let total)):
            var sheet = Sheet(content: .frequency(column: key, rows: rows, source: []), crumb: line, statement: statement)
            sheet.countedTotal = total
            push(sheet)
            replOutput.append("\(rows.count) groups")
        case .failure(let error as QueryError): replOutput.append(contentsOf: error.render(source: line).split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        case .failure where cancelled: replOutput.append("cancelled")
        case .failure(let error): replOutput.append("error: \(error)")
        }
        trimOutput()
    }

    /// Enter on a row of a projection the store answered: the row's object, read by key, in the
    /// detail pane (a projection holds values only).
    func openPagedRowObject(_ key: ObjectID, of sheet: Sheet) {
        let root = sheet.statement?.pushdownRoot?.type.text
        let typeName = root.flatMap { root in pages?.catalog.first { $0.name.caseInsensitiveCompare(root) == .orderedSame }?.name }
        var object = Sheet(content: .paged(PagedRows(source: .keys([key]), count: 1, typeName: typeName)), crumb: "\(typeName ?? "object") #\(key)")
        object.isObjectOfRow = true
        push(object)
        ensurePagedWindow(span: max(1, layout.recordsBody.height))
        focus = .detail
        detailSelection = initialDetailSelection()
    }

    /// Enter on a group a statement counted over the store: its objects, found by the store too,
    /// as `Type where (predicate) AND key == value` (`statement`: the group statement the view
    /// answers).
    func openPagedGroup(_ statement: Statement?, column: String, value: Value) {
        guard case .group(var query, let by)? = statement else { message = "this group does not open"; return }
        let literal: Literal
        switch value {
        case .null: literal = .null
        case .bool(let b): literal = .bool(b)
        case .int(let i): literal = .integer(i)
        case .double(let d): literal = .decimal(d)
        case .string(let s): literal = .string(s)
        case .date(let d): literal = .date(d)
        default: message = "a group of \(ValueFormatter.kindName(value)) values does not open in paged mode"; return
        }
        let test = Predicate.comparison(Comparison(quantifier: nil, lhs: .path(by), op: .equal, options: [], rhs: .literal(literal, by.range), range: by.range))
        query.predicate = query.predicate.map { .and([$0, test]) } ?? test
        query.clauses = []
        query.projection = nil
        // Labelled as the loaded browser labels a group's objects.
        if !runPaged(.query(query), line: "\(column) = \(ValueFormatter.plain(value))") { message = "this group does not open in paged mode" }
    }

    /// What a command needs that paged mode does not have, named for the message; nil when the
    /// command works a page at a time (`F` and sorting a frequency table check the view).
    static func needsWholeGraph(_ command: Command) -> String? {
        switch command {
        case .editValue, .addObject, .deleteObject, .undoEdit, .redoEdit, .commitChanges: return "editing (it needs a store Loupe can write)"
        case .searchForward, .searchNext, .searchPrevious: return "search"
        case .graphMoreHops: return "a graph of more than one hop"
        default: return nil
        }
    }
}

/// Why paged mode stopped a task (said as it is).
struct PagedRefusal: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
