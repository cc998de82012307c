import DisplayText
import LoupeModel
import LoupeQuery

/// The column a view was last sorted by, and which way (`▲` ascending, `▼` descending in its header).
public struct SortMark: Sendable, Equatable {
    public let column: String
    public let ascending: Bool
    /// The column's header with the mark: `title▲`.
    func header(_ name: String) -> String { name == column ? name + (ascending ? "▲" : "▼") : name }
}

/// One view on the browser's stack (VisiData's sheet): rows, columns, and where the cursor is.
/// Drilling into a row pushes a sheet; Backspace or `q` pops it.
public struct Sheet {
    public enum Content {
        /// Objects (of one type, or of several: a polymorphic relation).
        case objects(type: TypeTable?, refs: [ObjectRef])
        /// A `select` projection, or a list the browser makes (the changes view): the object of
        /// each row, when it has one that the graph holds (nil for an object a commit deleted).
        case projection(columns: [String], rows: [[Value]], refs: [ObjectRef?])
        /// A frequency table of `column` over `source` objects.
        case frequency(column: String, rows: [(key: Value, count: Int)], source: [ObjectRef])
        /// Objects read a window at a time (paged mode): their refs are the window graph's.
        case paged(PagedRows)
        /// A frequency table of a whole type's column counted over the store (paged mode).
        case pagedFrequency(PagedFrequency)
    }

    public var content: Content
    /// Where this sheet came from, for the breadcrumb: `Author #12 › books`, or a type's name.
    public var crumb: String
    /// The statement whose answer this sheet is (nil for a type, a relation, a list the browser
    /// makes): sorting, opening a group or a row's object asks it again, never the crumb's text.
    public var statement: Statement?
    /// True for the view of a whole type: its rows follow the type's (objects inserted appear,
    /// deleted ones stay marked until committed).
    public var showsWholeType = false
    /// For a frequency table a store counted (paged mode), how many objects it counted (the
    /// table holds no objects of its own).
    public var countedTotal: Int?
    /// For a projection the store answered (paged mode), the key of each row's object.
    public var rowKeys: [ObjectID] = []
    /// The object of a projection's row, opened from it (paged mode): the breadcrumb names it
    /// once, as the selected object, as over a loaded projection.
    public var isObjectOfRow = false
    /// For a paged list `s`/`S` sorted, how (the next sort keeps its order for ties).
    public var pagedSort: PagedSort?
    /// The column the rows were last sorted by (`s`/`S`) and which way: its header says so.
    public var sortedBy: SortMark?
    /// For a changes or diff view: the two states compared, to show a row's object side by side.
    public var comparison: Comparison?
    /// Opened from the relation graph: going back returns to the graph, at this node.
    public var openedFromGraphNode: Int?
    public var selection = 0
    public var top = 0
    /// The first column shown (horizontal scroll) and the current column.
    public var firstColumn = 0
    public var column = 0
    /// Columns shown at full width (`_`), by index.
    public var wideColumns: Set<Int> = []

    public init(content: Content, crumb: String, statement: Statement? = nil) {
        self.content = content
        self.crumb = crumb
        self.statement = statement
    }

    /// How many rows the sheet has.
    public var count: Int {
        switch content {
        case .objects(_, let refs): return refs.count
        case .projection(_, let rows, _): return rows.count
        case .frequency(_, let rows, _): return rows.count
        case .paged(let rows): return rows.count
        case .pagedFrequency(let table): return table.rows.count
        }
    }

    /// False while ``count`` is the rows read so far of a type the store is still counting.
    public var isCounted: Bool {
        if case .paged(let rows) = content { return rows.isCounted }
        return true
    }

    /// True when each row is an object (of a type, a followed link, a page of either).
    public var showsObjects: Bool {
        switch content {
        case .objects, .paged: return true
        case .projection, .frequency, .pagedFrequency: return false
        }
    }

    /// The object on a row, when rows are objects.
    public func ref(at row: Int) -> ObjectRef? {
        guard row >= 0, row < count else { return nil }
        switch content {
        case .objects(_, let refs): return refs[row]
        case .projection(_, _, let refs): return row < refs.count ? refs[row] : nil
        case .frequency, .pagedFrequency: return nil
        case .paged(let rows): return rows.ref(at: row)
        }
    }

    /// The column names.
    /// True when a type's key is one of its own columns (`AlbumId`): the records show that
    /// column and no separate `id` beside it.
    static func keyIsAnAttribute(_ type: TypeTable) -> Bool {
        if case .column(let name, _) = type.keyPolicy { return type.attributeIndex[name] != nil }
        return false
    }

    /// The to-one relations a type's records show as columns, after its attributes: those that
    /// are not a foreign-key column already shown (Persist's `author`, not Chinook's `ArtistId`).
    static func relationColumns(_ type: TypeTable) -> [Int] {
        type.relations.indices.filter { r in
            let relation = type.relations[r]
            return relation.foreignKey == nil && !relation.isToMany && type.attributeIndex[relation.name] == nil
        }
    }

    /// An object as a cell shows a relation's target: its label and its caption
    /// (`Author #89 Zoë Ito`, ``TypeTable/caption(row:)``).
    public static func label(_ ref: ObjectRef, in graph: ObjectGraph) -> String {
        guard let caption = graph.table(ref).caption(row: Int(ref.row)) else { return graph.label(of: ref) }
        return graph.label(of: ref) + " " + DisplayText.fit(caption, width: 40)
    }

    /// The caption of the object a foreign-key cell names (Chinook's `ArtistId` 1: `AC/DC`), shown
    /// beside the key so that it does not read as a bare number; nil for any other cell. `name`
    /// is the column's (``columns(graph:)``, which the caller has at hand).
    public func foreignKeyCaption(row: Int, column name: String, graph: ObjectGraph) -> String? {
        guard showsObjects, let ref = ref(at: row) else { return nil }
        guard let target = graph.table(ref).relation(heldBy: name)?.targets(of: Int(ref.row)).first else { return nil }
        return graph.table(target).caption(row: Int(target.row))
    }

    public func columns(graph: ObjectGraph) -> [String] {
        switch content {
        case .objects(let type, let refs):
            return Sheet.objectColumns(type: type, first: refs.first, graph: graph)
        case .paged(let rows):
            return Sheet.objectColumns(type: rows.type, first: rows.window.refs.lazy.compactMap { $0 }.first, graph: graph)
        case .projection(let columns, _, _): return columns
        case .frequency(let column, _, _): return [column, "count", "%", ""]
        case .pagedFrequency(let table): return [table.column, "count", "%", ""]
        }
    }

    /// An object sheet's columns: one type's key, attributes and to-one relations; for several
    /// types, `id`, `@type` and the attributes of the first object's type.
    static func objectColumns(type: TypeTable?, first: ObjectRef?, graph: ObjectGraph) -> [String] {
        if let type {
            return (Sheet.keyIsAnAttribute(type) ? [] : ["id"]) + type.attributes.map(\.name)
                + Sheet.relationColumns(type).map { type.relations[$0].name }
        }
        // Several types: id, type, and the attributes of the first one seen.
        let table = first.map { graph.table($0) }
        return ["id", "@type"] + (table?.attributes.map(\.name) ?? [])
    }

    /// The value of object `ref` in column `column` of an object sheet of `type` (nil: several
    /// types); `names` gives the sheet's column names when they are needed.
    static func objectValue(_ ref: ObjectRef, type: TypeTable?, column: Int, graph: ObjectGraph, names columns: () -> [String]) -> Value {
        let table = graph.table(ref)
        if let type {
            let attribute = Sheet.keyIsAnAttribute(type) ? column : column - 1
            if attribute == -1 { return graph.id(of: ref).value }
            if table.index != type.index {
                // A subtype's object among its supertype's (a query on a parent entity): by name.
                let names = columns()
                if let a = table.attribute(named: names[column]) { return table.value(row: Int(ref.row), attribute: a) }
                if let r = table.relation(named: names[column]) {
                    return table.relations[r].targets(of: Int(ref.row)).first.map { .string(Sheet.label($0, in: graph)) } ?? .null
                }
                return .null
            }
            if attribute < table.attributes.count { return table.value(row: Int(ref.row), attribute: attribute) }
            // A relation column: its target's label.
            let shown = Sheet.relationColumns(table)
            guard attribute - table.attributes.count < shown.count else { return .null }
            let relation = table.relations[shown[attribute - table.attributes.count]]
            return relation.targets(of: Int(ref.row)).first.map { .string(Sheet.label($0, in: graph)) } ?? .null
        }
        // Several types: id, type, then the attributes named by the first type's columns.
        if column == 0 { return graph.id(of: ref).value }
        if column == 1 { return .string(table.name.rawValue) }
        let names = columns()
        return table.attribute(named: names[column]).map { table.value(row: Int(ref.row), attribute: $0) } ?? .null
    }

    /// The value in one cell.
    public func value(row: Int, column: Int, graph: ObjectGraph) -> Value {
        switch content {
        case .objects(let type, let refs):
            return Sheet.objectValue(refs[row], type: type, column: column, graph: graph) { columns(graph: graph) }
        case .paged(let rows):
            guard let ref = rows.ref(at: row) else { return .null }
            return Sheet.objectValue(ref, type: rows.type, column: column, graph: graph) { columns(graph: graph) }
        case .projection(_, let rows, _):
            let v = rows[row][column]
            if case .reference(let r) = v { return graph.id(of: r).value }
            return v
        case .frequency(_, let rows, let source):
            return Sheet.frequencyValue(rows, row: row, column: column, total: countedTotal ?? source.count)
        case .pagedFrequency(let table):
            return Sheet.frequencyValue(table.rows, row: row, column: column, total: table.total)
        }
    }

    /// A frequency table's cell: the key, its count, its share of `total` objects, a bar.
    static func frequencyValue(_ rows: [(key: Value, count: Int)], row: Int, column: Int, total: Int) -> Value {
        switch column {
        case 0: return rows[row].key
        case 1: return .int(Int64(rows[row].count))
        case 2: return .double((Double(rows[row].count) * 1000 / Double(max(total, 1))).rounded() / 10)
        default: return .string(String(repeating: "■", count: max(1, rows[row].count * 20 / max(rows.first?.count ?? 1, 1))))
        }
    }

    /// All the objects the sheet's rows stand for (what `F` counts over).
    public var objects: [ObjectRef] {
        switch content {
        case .objects(_, let refs): return refs
        case .projection(_, _, let refs): return refs.compactMap { $0 }
        case .frequency(_, _, let source): return source
        case .paged(let rows): return rows.window.refs.compactMap { $0 }
        case .pagedFrequency: return []
        }
    }

    /// Points the sheet at another graph of the same store. Without `remap` (a staged graph: rows
    /// only append) the rows stay and the type tables are renewed; with it (the file's new state)
    /// the objects are found again by identity, and those gone are dropped.
    mutating func adopt(_ graph: ObjectGraph, from old: ObjectGraph, remap: Bool) {
        func map(_ refs: [ObjectRef]) -> [ObjectRef] {
            remap ? refs.compactMap { graph.ref(old.identity(of: $0)) } : refs
        }
        /// A projection's rows keep their places: an object gone leaves its row without one.
        func mapInPlace(_ refs: [ObjectRef?]) -> [ObjectRef?] {
            remap ? refs.map { $0.flatMap { graph.ref(old.identity(of: $0)) } } : refs
        }
        func renew(_ type: TypeTable?) -> TypeTable? {
            type.flatMap { t in graph.types.indices.contains(t.index) && graph.types[t.index].name == t.name ? graph.types[t.index] : graph.type(named: t.name.rawValue) }
        }
        let selected = ref(at: selection).map { old.identity(of: $0) }
        switch content {
        case .objects(let type, let refs):
            if showsWholeType, let type = renew(type) {
                content = .objects(type: type, refs: (0..<type.count).map { ObjectRef(type: type.index, row: $0) })
                if remap, let selected, let found = graph.ref(selected) { selection = Int(found.row) }
            } else {
                content = .objects(type: renew(type), refs: map(refs))
            }
        case .projection(let columns, let rows, let refs):
            if remap { content = .projection(columns: columns, rows: rows, refs: mapInPlace(refs)) }
        case .frequency(let column, let rows, let source): content = .frequency(column: column, rows: rows, source: map(source))
        case .paged, .pagedFrequency: break   // read from the store, never staged
        }
        selection = max(0, min(selection, count - 1))
    }

    /// Keeps the selection and the scroll inside the sheet, with `height` rows visible.
    public mutating func clamp(height: Int) {
        selection = max(0, min(selection, count - 1))
        if selection < top { top = selection }
        if height > 0, selection >= top + height { top = selection - height + 1 }
        top = max(0, min(top, max(0, count - height)))
    }
}
