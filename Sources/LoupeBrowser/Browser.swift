import DisplayText
import Foundation
import Synchronization
import LoupeModel
import LoupeQuery
import TerminalKit

/// The panes that can have the focus, in Tab order.
public enum Pane: Int, CaseIterable, Sendable { case types, records, detail, repl }

/// The browser: its state and what each key does. It draws into a ``Buffer`` (see
/// `Browser+Render.swift`) and never touches a terminal, so every screen can be tested as text.
public final class Browser {
    /// The graph the current view reads: the loaded graph, or in paged mode the current sheet's
    /// window (nil while the store is still loading).
    public var graph: ObjectGraph? {
        switch stack.last?.content {
        case .paged(let rows)?: return rows.window.graph
        case .pagedFrequency(let table)?: return table.graph
        default:
            // In paged mode, a projection or frequency table a statement gave holds values only:
            // drawn with the schema of the view it came from.
            if loadedGraph == nil, pages != nil {
                for sheet in stack.reversed() { if case .paged(let rows) = sheet.content { return rows.window.graph } }
            }
            return loadedGraph
        }
    }
    /// The whole graph, once loaded (nil while loading, and in paged mode).
    var loadedGraph: ObjectGraph?
    /// In paged mode, the store read a page at a time (see ``attachPaged(_:)``).
    public internal(set) var pages: PageSource?
    /// What answers statements over the store in paged mode (SQL over the file), if anything.
    public internal(set) var querySource: (any QuerySource)?
    /// In paged mode, true once the REPL said that `I` makes slow statements faster.
    var hintedRelationIndex = false
    /// In paged mode, a statement that takes longer than this says (once) that `I` helps.
    public var relationIndexHintSeconds = 2.0
    /// In paged mode, how many rows a window reads around what a screen shows.
    public var pagedWindowRows = 300
    /// True while the paged store counts its types off the UI thread (``listTypes(of:)``).
    var countingTypes = false
    /// Why the store is paged, for the status line (nil: asked for).
    var pagedReason: String?
    /// The store's kind: the planner plans paged mode's statements by it, a refused statement
    /// says what its SQL leaves to the whole graph, and `.explain` names it.
    public var storeKind: StoreKind = .persist
    /// Said on the status line of a store loaded whole although it is over the memory budget
    /// (paged mode reads Persist stores only).
    public var loadNote: String?
    /// In paged mode, the link totals read for objects their windows cut, by key.
    var linkTotalsRead: [ObjectIdentity: [ObjectWindow.Link: Int]] = [:]
    /// In paged mode with a host that commits, the staged edits (their base read by key).
    var pagedChanges: PagedChanges?
    public internal(set) var session: ReplSession?
    /// What the status line says of the file: `library.sqlite · Persist`.
    public private(set) var fileLabel: String
    public private(set) var formatName: String
    /// Types and counts known before the graph is (shown at once, with a progress bar).
    public var pendingTypes: [(name: String, count: Int)] = []
    /// Load progress, `(done, total)`, while loading.
    public var progress: (done: Int, total: Int)?
    /// True while ``graph`` is only the first page of the first type, shown while the whole
    /// graph loads (``attachPreview(_:)``): its rows can be browsed; nothing else runs yet.
    public internal(set) var isPreview = false

    public internal(set) var stack: [Sheet] = []
    public internal(set) var focus: Pane = .records
    public internal(set) var typeSelection = 0
    var typeTop = 0
    /// The selected item of the detail pane (relations and backlinks are selectable).
    var detailSelection = 0
    var detailTop = 0
    public internal(set) var editor: LineEditor
    /// The REPL pane's output, newest last.
    public internal(set) var replOutput: [String] = []
    /// What the input line is for: a statement, or a search.
    var inputMode: InputMode = .statement
    public internal(set) var message = "" {
        didSet { if !message.isEmpty, message != oldValue { logMessage(message) } }
    }
    /// The status line's messages, oldest first, with when each was shown (`M` lists them).
    var messageLog: [(at: Date, text: String)] = []
    var lastSearch: String?
    public internal(set) var showsHelp = false
    public internal(set) var showsGraph = false
    public internal(set) var graphHops = 1
    var graphSelection = 0
    public internal(set) var wantsQuit = false
    let theme: Theme
    /// Whether lines typed at the REPL are saved to the history file.
    let persistsHistory: Bool
    /// Rectangles of the last frame, for mouse clicks.
    var layout = Layout()
    /// How many rows of the current view the last frame read (a frame reads what it shows).
    public internal(set) var rowsReadLastFrame = 0
    /// Loads stores for `.open` and `.reload` (the executable provides it).
    public weak var host: SessionHost? { didSet { session?.host = host } }
    /// The open store's file (for `.reload`, and so that `.output` never writes over it).
    public var storePath: String? { didSet { session?.storePath = storePath } }
    /// Runs statements and loads off the UI thread; nil: at once (tests and `--play`).
    public var background: BackgroundRunner?
    /// The statement or load running now, if any.
    var running: RunningTask?
    /// What live mode has seen of other processes' commits (nil until the first).
    public internal(set) var live: LiveState?
    /// A commit seen while something ran: the views are read again when it is done.
    var liveRefreshWaiting = false
    /// Keys and clicks pressed while live mode reads the store, handled once it has.
    var heldEvents: [Event] = []
    /// True while a frame is made from the state (``makeFrame(_:)``), which reads no store.
    var isMakingFrame = false
    /// Reads of the store asked for while a frame was made (each refused): 0, or a bug.
    public internal(set) var storeReadsAskedWhileDrawing = 0
    /// True while paged mode opens the store again for another process's commit (not `.reload`).
    var isLiveReopen = false
    /// The pane a search (`/`, `n`, `N`) looks in: the one focused when it began.
    var searchPane: Pane = .records
    /// Stacks left by choosing another type, most recent last (Backspace at the root returns).
    var earlierStacks: [[Sheet]] = []
    /// The first line of help shown (help scrolls on small screens).
    var helpTop = 0
    /// The focused pane fills the screen (`z`).
    public var zoomed = false
    /// How many lines the REPL's output is scrolled back (PgUp/PgDn at the REPL); 0 follows the end.
    var replScroll = 0
    /// Statements typed while one ran, run next in order.
    var queued: [String] = []

    enum InputMode: Equatable { case statement, search, editValue(ObjectRef, attribute: String) }
    /// The relation picker, while open.
    var picker: Picker?
    /// The dialog over the screen (commit preview, quit guard), while open.
    var dialog: Dialog?
    /// Quit once the commit running now succeeds (the quit guard's "commit").
    var quitAfterCommit = false
    /// The pane to go back to when the cell editor closes.
    var previousFocus: Pane = .records
    /// What the host is asked to do at the terminal (``takeRequests()``).
    var requests: [TerminalRequest] = []
    /// The add form (`a`), while open.
    var form: AddForm?

    struct Layout {
        var types = Rect(x: 0, y: 0, width: 0, height: 0)
        var records = Rect(x: 0, y: 0, width: 0, height: 0)
        var detail = Rect(x: 0, y: 0, width: 0, height: 0)
        var repl = Rect(x: 0, y: 0, width: 0, height: 0)
        /// Rows of the records pane's table body.
        var recordsBody = Rect(x: 0, y: 0, width: 0, height: 0)
        var detailBody = Rect(x: 0, y: 0, width: 0, height: 0)
        var pickerBody = Rect(x: 0, y: 0, width: 0, height: 0)
        var typesBody = Rect(x: 0, y: 0, width: 0, height: 0)
    }

    /// A browser on a file; call ``attach(_:)`` when its graph is loaded.
    public init(fileLabel: String, formatName: String, theme: Theme = .color, history: [String] = [], persistsHistory: Bool = false) {
        self.fileLabel = fileLabel
        self.formatName = formatName
        self.theme = theme
        self.editor = LineEditor(history: history)
        self.persistsHistory = persistsHistory
    }

    /// Shows the first page of the first type while the whole graph loads: the types pane keeps
    /// the catalog, the page's rows and attributes can be browsed; statements, edits and other
    /// types wait for ``attach(_:)``, which keeps the row the user is on.
    public func attachPreview(_ page: ObjectGraph) {
        guard graph == nil, pages == nil, !page.types.isEmpty else { return }
        loadedGraph = page
        isPreview = true
        typeSelection = 0
        openType(0)
    }

    /// Shows a loaded graph: the first type's records (the same row as the preview's, if one
    /// was shown), then runs the statements typed while it loaded.
    public func attach(_ graph: ObjectGraph) {
        // Leaving the preview: the same type's rows, in the same order, with the same row selected.
        let kept = isPreview && stack.count == 1 && typeSelection == 0 ? current.map { ($0.selection, $0.top) } : nil
        isPreview = false
        pages = nil
        loadedGraph = graph
        self.formatName = graph.formatName
        if session == nil || session!.engine.graph !== graph {
            let session = ReplSession(graph: graph, mode: .table)
            session.host = host
            session.storePath = storePath
            session.storeKind = storeKind
            self.session = session
        }
        progress = nil
        pendingTypes = []
        typeSelection = 0
        openType(0)
        if let (selection, top) = kept, let sheet = current, selection < sheet.count {
            updateCurrent { $0.selection = selection; $0.top = top }
        }
        if running == nil, !queued.isEmpty { run(queued.removeFirst()) }
    }

    // MARK: Helpers

    var current: Sheet? { stack.last }

    func updateCurrent(_ body: (inout Sheet) -> Void) {
        guard !stack.isEmpty else { return }
        body(&stack[stack.count - 1])
    }

    /// The object the detail pane shows: the selected row's.
    public var selectedObject: ObjectRef? {
        guard let sheet = current else { return nil }
        return sheet.ref(at: sheet.selection)
    }

    /// One selectable line of the detail pane: an attribute (edited with `e`), or a relation or
    /// backlink (followed with Enter).
    enum DetailItem {
        case attribute(Int)
        case link(DetailLink)
    }

    /// The selectable items of the detail pane: the attributes, then the relations and backlinks.
    func detailItems() -> [DetailItem] {
        guard let graph, let ref = selectedObject else { return [] }
        return graph.table(ref).attributes.indices.map(DetailItem.attribute) + detailLinks().map(DetailItem.link)
    }

    /// Where the detail pane's selection starts: on the first relation when there is one (the
    /// usual next step is to follow it), else on the first attribute.
    func initialDetailSelection() -> Int {
        guard let graph, let ref = selectedObject else { return 0 }
        let attributes = graph.table(ref).attributes.count
        return detailLinks().isEmpty ? 0 : attributes
    }

    /// The relations and backlinks of the selected object.
    func detailLinks() -> [DetailLink] {
        guard let graph, let ref = selectedObject else { return [] }
        let table = graph.table(ref)
        var links: [DetailLink] = []
        let base = markedForDeletion(ref)
        for (r, relation) in table.relations.enumerated() {
            var targets = Array(relation.targets(of: Int(ref.row)))
            // Marked for deletion: what it links to until the deletion is written, not ∅.
            if let (baseGraph, baseRef) = base, let b = baseGraph.table(baseRef).relation(named: relation.name) {
                targets = baseGraph.table(baseRef).relations[b].targets(of: Int(baseRef.row)).compactMap { graph.ref(baseGraph.identity(of: $0)) }
            }
            links.append(DetailLink(label: relation.name, targets: targets, toMany: relation.isToMany, crumb: relation.name, relation: r,
                                    relationName: relation.name))
        }
        var backlinks = graph.backlinks(of: ref).map { group in
            DetailLink(label: "@links." + group.key, targets: group.sources, toMany: true, crumb: "@links " + group.key, relation: nil,
                       relationName: group.relation, sourceType: group.sourceType.rawValue)
        }
        if pages != nil { backlinks = pagedBacklinks(of: ref, backlinks, in: graph) }
        links += backlinks
        return links
    }

    /// For an object a pending deletion removes (loaded, not paged), the graph as loaded and the
    /// object in it, which still has the links the deletion cuts.
    func markedForDeletion(_ ref: ObjectRef) -> (ObjectGraph, ObjectRef)? {
        guard pages == nil, let graph, let pending = pendingChanges, pending.changes.isRemoved(ref),
              let baseRef = pending.base.ref(graph.identity(of: ref)) else { return nil }
        return (pending.base, baseRef)
    }

    struct DetailLink {
        let label: String
        let targets: [ObjectRef]
        let toMany: Bool
        let crumb: String
        let relation: Int?
        /// The relation's name (of the relation, or of the backlinks' relation).
        var relationName: String? = nil
        /// The type backlinks come from (nil for a relation).
        var sourceType: String? = nil
        /// True for one object named by its own label (a node of the graph): opened, the
        /// breadcrumb names it once, as the selected object, after the object it came from.
        var isObject = false
    }

    func openType(_ index: Int) {
        if pages != nil { openPagedType(index); return }
        if isPreview, index != 0 {
            message = "loading: the other types open when the whole store is read"
            return
        }
        guard let graph, index >= 0, index < graph.types.count else { return }
        let table = graph.types[index]
        typeSelection = index
        let refs = (0..<table.count).map { ObjectRef(type: table.index, row: $0) }
        var sheet = Sheet(content: .objects(type: table, refs: refs), crumb: table.name.rawValue)
        sheet.showsWholeType = true
        // The views left (query results, followed relations) stay reachable: Backspace at the
        // root goes back to them.
        if stack.count > 1 { earlierStacks.append(stack); if earlierStacks.count > 20 { earlierStacks.removeFirst() } }
        stack = [sheet]
        session?.currentType = table
        detailSelection = initialDetailSelection()
        showsGraph = false
    }

    func push(_ sheet: Sheet) {
        stack.append(sheet)
        detailSelection = initialDetailSelection()
        graphSelection = 0
        if case .objects(let type?, _) = sheet.content { session?.currentType = type }
    }

    func pop() {
        if stack.count > 1 {
            // Back from an object opened in the graph: the graph again, as it was.
            if let node = stack.removeLast().openedFromGraphNode { showsGraph = true; graphSelection = node }
        } else if let earlier = earlierStacks.popLast() {
            stack = earlier
            message = "back to \(DisplayText.fit(earlier.last?.crumb ?? "", width: 40))"
        } else {
            return
        }
        detailSelection = initialDetailSelection()
        if case .objects(let type?, _)? = current?.content {
            session?.currentType = type
            if let index = graph?.types.firstIndex(where: { $0.name == type.name }) { typeSelection = index }
        }
        if case .paged(let rows)? = current?.content, let name = rows.typeName,
           pages != nil, let index = pendingTypes.firstIndex(where: { $0.name == name }) { typeSelection = index }
    }

    /// Follows a relation or backlink: one target opens that object, several a list of them.
    func follow(_ link: DetailLink) {
        guard let graph, let origin = selectedObject else { return }
        if pages != nil { followPaged(link, from: origin, in: graph); return }
        guard !link.targets.isEmpty else { message = "\(link.label) is empty"; return }
        let types = Set(link.targets.map(\.type))
        let type = types.count == 1 ? graph.table(link.targets[0]) : nil
        // One object named by its label: the breadcrumb's selected object says it (once).
        let crumb = graph.label(of: origin) + (link.isObject ? "" : " › " + link.crumb)
        push(Sheet(content: .objects(type: type, refs: link.targets), crumb: crumb))
        focus = link.toMany ? .records : .detail   // a list opens on its rows, one object on its detail
    }

    // MARK: Events

    /// Handles one event; returns false when the browser wants to quit.
    @discardableResult
    public func handle(_ event: Event) -> Bool {
        settleTypeCounts()
        if holdsDuringLiveRefresh(event) { return !wantsQuit }
        // The rows another process deleted stay in view until the next key or click.
        if case .resize = event {} else if live?.ghosts.isEmpty == false { live?.ghosts = [] }
        switch event {
        case .resize: break
        case .mouse(let mouse): handleMouse(mouse)
        case .key(let key):
            // Ctrl-C (raw mode delivers it as a key) cancels a running statement; else it
            // closes what is open, or quits like `q` (asking first when changes are pending).
            if case .control("c") = key {
                if cancelRunning() { break }
                if dialog == nil, picker == nil, form == nil, focus != .repl, !showsHelp { requestQuit(); break }
                if form != nil, picker == nil { form = nil; editor.set(""); message = "nothing added"; break }
            }
            if dialog != nil { handleDialogKey(key) }
            else if picker != nil { handlePickerKey(key) }
            else if form != nil { handleFormKey(key) }
            else if focus == .repl { handleInputKey(key) }
            else if showsHelp {
                switch key {
                case .character("j"), .down: helpTop += 1
                case .character("k"), .up: helpTop = max(0, helpTop - 1)
                case .pageDown, .character(" "): helpTop += 10
                case .pageUp: helpTop = max(0, helpTop - 10)
                default: showsHelp = false; helpTop = 0
                }
            }
            else if let command = KeyMap.command(for: key) { perform(command) }
            else if case .character(let c) = key { message = "no command on '\(c)' (? for help)" }
        }
        return !wantsQuit
    }

    /// While live mode reads another process's commit (a task the user did not start), keys and
    /// clicks are held rather than refused as "wait for the running statement" — an edit begun
    /// then would otherwise be lost, its keys typed into the pane instead. Ctrl-C cancels the read
    /// and drops what was held. True when the event was held (or was that Ctrl-C).
    private func holdsDuringLiveRefresh(_ event: Event) -> Bool {
        guard running?.isLiveRefresh == true else { return false }
        switch event {
        case .resize: return false
        case .key(.control("c")): heldEvents.removeAll(); cancelRunning()
        case .key, .mouse: heldEvents.append(event)
        }
        return true
    }

    /// The events held during a live read, handled in order (a later one may be held again when
    /// an earlier one waits for another live read).
    private func replayHeldEvents() {
        let events = heldEvents
        heldEvents.removeAll()
        for event in events { handle(event) }
    }

    /// Runs one command on the focused pane.
    public func perform(_ command: Command) {
        settleTypeCounts()
        message = ""
        if pages != nil, let what = Browser.needsWholeGraph(command), !(pagedChanges != nil && Browser.isEditCommand(command)) { refusePaged(what); return }
        let page = max(1, layout.recordsBody.height - 1)
        switch command {
        case .moveDown: move(by: 1)
        case .moveUp: move(by: -1)
        case .pageDown: move(by: page)
        case .pageUp: move(by: -page)
        case .goTop: move(by: Int.min / 2)
        case .goBottom: move(by: Int.max / 2)
        case .columnLeft: moveColumn(by: -1)
        case .columnRight: moveColumn(by: 1)
        case .nextPane: cycleFocus(1)
        case .previousPane: cycleFocus(-1)
        case .openRow: open()
        // Back one level, as Enter went one deeper: the graph closed, the object's detail left
        // for its list, the sheet popped; `q` at the root quits (asking when edits would be lost).
        case .goBack:
            if showsGraph { showsGraph = false } else if focus == .detail { focus = .records } else { pop() }
        case .quitView:
            if showsGraph { showsGraph = false } else if focus == .detail { focus = .records } else if stack.count > 1 { pop() } else { requestQuit() }
        case .editValue: if isBusy { message = "wait for the running statement (Ctrl-C cancels it)" } else { previousFocus = focus; editSelected() }
        case .addObject: if isBusy { message = "wait for the running statement" } else { openAddForm() }
        case .deleteObject: if isBusy { message = "wait for the running statement" } else { deleteSelected() }
        case .undoEdit: if !isBusy { undoOrRedo(true) }
        case .redoEdit: if !isBusy { undoOrRedo(false) }
        case .commitChanges: if !isBusy { showCommitPreview() }
        case .messageLog: showMessageLog()
        case .copyValue: copySelectedValue()
        case .copyRow: copySelectedRow()
        case .editExternally: if isBusy { message = "wait for the running statement" } else { editSelectedExternally() }
        case .changesView: if isBusy { message = "wait for the running statement" } else { run(".changes-since") }
        case .searchForward:
            searchPane = focus == .types ? .types : .records
            inputMode = .search
            editor.set("")
            focus = .repl
        case .searchNext: search(lastSearch, forward: true)
        case .searchPrevious: search(lastSearch, forward: false)
        case .sortAscending: sortColumn(ascending: true)
        case .sortDescending: sortColumn(ascending: false)
        case .frequencyColumn: frequency()
        case .focusRepl:
            inputMode = .statement
            focus = .repl
        case .toggleGraph:
            showsGraph.toggle()
            graphSelection = 0
        case .graphMoreHops: if showsGraph { graphHops = min(3, graphHops + 1) }
        case .graphFewerHops: if showsGraph { graphHops = max(1, graphHops - 1) }
        case .viewValue: viewSelectedValue()
        case .toggleColumnWidth:
            updateCurrent { sheet in
                if sheet.wideColumns.contains(sheet.column) { sheet.wideColumns.remove(sheet.column) } else { sheet.wideColumns.insert(sheet.column) }
            }
        case .zoomPane: zoomed.toggle()
        case .buildIndex: buildRelationIndex()
        case .showHelp: showsHelp = true
        case .redraw: break
        }
    }

    func cycleFocus(_ step: Int) {
        let panes = Pane.allCases
        focus = panes[(focus.rawValue + step + panes.count) % panes.count]
        if focus == .repl { inputMode = .statement }
    }

    func move(by delta: Int) {
        if showsGraph {
            // Up and down one side of the graph (relations right, backlinks left).
            let nodes = graphNodes()
            guard graphSelection < nodes.count else { return }
            let side = nodes.indices.filter { nodes[$0].isBacklink == nodes[graphSelection].isBacklink }
            guard let at = side.firstIndex(of: graphSelection) else { return }
            graphSelection = side[max(0, min(side.count - 1, at + max(-side.count, min(side.count, delta))))]
            return
        }
        switch focus {
        case .types:
            guard let count = pages != nil ? pendingTypes.count : graph?.types.count, count > 0 else { return }
            let target = max(0, min(count - 1, typeSelection + max(-count, min(count, delta))))
            if target != typeSelection { openType(target) }
        case .records, .repl:
            updateCurrent { sheet in
                let d = max(-sheet.count, min(sheet.count, delta))
                sheet.selection = max(0, min(sheet.count - 1, sheet.selection + d))
            }
            ensurePagedWindow(span: max(1, layout.recordsBody.height))
            detailSelection = initialDetailSelection()
        case .detail:
            let count = detailItems().count
            guard count > 0 else { return }
            detailSelection = max(0, min(count - 1, detailSelection + max(-count, min(count, delta))))
        }
    }

    func moveColumn(by delta: Int) {
        guard let graph else { return }
        // In the graph, h goes to the backlinks on the left, l to the relations on the right
        // (the hidden view's column stays).
        if showsGraph {
            let nodes = graphNodes()
            guard let first = nodes.firstIndex(where: { $0.isBacklink == (delta < 0) }) else {
                message = delta < 0 ? "no backlinks on the left" : "no relations on the right"
                return
            }
            if graphSelection < nodes.count, nodes[graphSelection].isBacklink != (delta < 0) { graphSelection = first }
            return
        }
        updateCurrent { sheet in
            let count = sheet.columns(graph: graph).count
            sheet.column = max(0, min(count - 1, sheet.column + delta))
            if sheet.column < sheet.firstColumn { sheet.firstColumn = sheet.column }
        }
    }

    func open() {
        guard let graph else { return }
        if showsGraph {
            let nodes = graphNodes()
            guard graphSelection < nodes.count else { return }
            let node = nodes[graphSelection]
            guard let link = node.link else { return }
            let depth = stack.count, selectedNode = graphSelection
            showsGraph = false
            follow(link)
            if stack.count > depth { stack[stack.count - 1].openedFromGraphNode = selectedNode } else { showsGraph = true }
            return
        }
        switch focus {
        case .types: focus = .records
        case .records:
            if case .pagedFrequency(let table)? = current?.content, let sheet = current {
                openPagedFrequencyRow(table, row: sheet.selection)
                return
            }
            if case .frequency(let column, let rows, let source)? = current?.content, let sheet = current {
                if sheet.countedTotal != nil {
                    if sheet.selection < rows.count { openPagedGroup(sheet.statement, column: column, value: rows[sheet.selection].key) }
                    return
                }
                guard sheet.selection < rows.count, let session else { return }
                let value = rows[sheet.selection].key
                do {
                    let refs = try session.engine.filtered(source, column: column, equals: value)
                    let types = Set(refs.map(\.type))
                    let type = types.count == 1 ? refs.first.map { graph.table($0) } : nil
                    push(Sheet(content: .objects(type: type, refs: refs), crumb: "\(column) = \(ValueFormatter.plain(value))"))
                } catch { message = "\(error)" }
                return
            }
            if let sheet = current, let comparison = sheet.comparison {
                showSideBySide(comparison, row: sheet.selection)
                return
            }
            if pages != nil, case .projection? = current?.content, let sheet = current, sheet.selection < sheet.rowKeys.count {
                openPagedRowObject(sheet.rowKeys[sheet.selection], of: sheet)
                return
            }
            if selectedObject != nil {
                focus = .detail
                detailSelection = initialDetailSelection()
            }
        case .detail:
            let items = detailItems()
            guard detailSelection < items.count else { return }
            switch items[detailSelection] {
            case .link(let link): follow(link)
            case .attribute: message = "e edits this attribute"
            }
        case .repl: break
        }
    }

    func sortColumn(ascending: Bool) {
        if case .pagedFrequency(var table)? = current?.content, let sheet = current {
            table.rows = Browser.frequencyOrder(table.rows, byKey: sheet.column == 0, ascending: ascending).map { table.rows[$0] }
            let name = [table.column, "count"][min(sheet.column, 1)]
            updateCurrent { $0.content = .pagedFrequency(table); $0.selection = 0; $0.sortedBy = SortMark(column: name, ascending: ascending) }
            return
        }
        if pages != nil { sortPaged(ascending: ascending); return }
        guard let graph, let sheet = current, let session else { return }
        let columns = sheet.columns(graph: graph)
        guard sheet.column < columns.count else { return }
        let name = columns[sheet.column]
        switch sheet.content {
        case .objects(let type, let refs):
            do {
                let sorted = try session.engine.sorted(refs, by: name, ascending: ascending)
                updateCurrent { $0.content = .objects(type: type, refs: sorted); $0.selection = 0; $0.top = 0; $0.sortedBy = SortMark(column: name, ascending: ascending) }
                message = "sorted by \(name) \(ascending ? "ascending" : "descending")"
            } catch { message = "cannot sort by \(name)" }
        case .projection(let cols, let rows, let refs):
            let order = rows.indices.sorted { a, b in
                let x = rows[a][sheet.column], y = rows[b][sheet.column]
                let o = ValueSemantics.sortOrder(x, y)
                return o == .orderedSame ? a < b : (ascending ? o == .orderedAscending : o == .orderedDescending)
            }
            updateCurrent {
                $0.content = .projection(columns: cols, rows: order.map { rows[$0] }, refs: refs.isEmpty ? [] : order.map { refs[$0] })
                if let objects = $0.comparison?.objects { $0.comparison?.objects = order.map { objects[$0] } }
                $0.selection = 0
                $0.sortedBy = SortMark(column: name, ascending: ascending)
            }
        case .frequency(let column, let rows, let source):
            let order = Browser.frequencyOrder(rows, byKey: sheet.column == 0, ascending: ascending)
            updateCurrent {
                $0.content = .frequency(column: column, rows: order.map { rows[$0] }, source: source)
                $0.selection = 0
                $0.sortedBy = SortMark(column: sheet.column == 0 ? column : "count", ascending: ascending)
            }
        case .paged, .pagedFrequency: break   // above
        }
    }

    /// A frequency table's rows in the order `s`/`S` asks for: by key (the first column) or by
    /// count, ties in their order.
    static func frequencyOrder(_ rows: [(key: Value, count: Int)], byKey: Bool, ascending: Bool) -> [Int] {
        rows.indices.sorted { a, b in
            let o = byKey ? ValueSemantics.sortOrder(rows[a].key, rows[b].key) : ValueSemantics.sortOrder(.int(Int64(rows[a].count)), .int(Int64(rows[b].count)))
            return o == .orderedSame ? a < b : (ascending ? o == .orderedAscending : o == .orderedDescending)
        }
    }

    func frequency() {
        if pages != nil { pagedFrequency(); return }
        guard let graph, let sheet = current, let session else { return }
        let columns = sheet.columns(graph: graph)
        guard sheet.column < columns.count else { return }
        if case .frequency = sheet.content { message = "already a frequency table"; return }
        let name = columns[sheet.column]
        do {
            let rows = try session.engine.frequencies(sheet.objects, of: name)
            push(Sheet(content: .frequency(column: name, rows: rows, source: sheet.objects), crumb: "F \(name)"))
        } catch { message = "cannot count \(name)" }
    }

    /// Finds the next row (wrapping) where some cell contains `term`, case-insensitively.
    func search(_ term: String?, forward: Bool) {
        if searchPane == .types, let graph, let term, !term.isEmpty {
            // The types pane searches type names.
            lastSearch = term
            let count = graph.types.count
            var index = typeSelection
            for _ in 0..<count {
                index = (index + (forward ? 1 : -1) + count) % count
                if graph.types[index].name.rawValue.lowercased().contains(term.lowercased()) {
                    openType(index)
                    message = "/\(term): \(graph.types[index].name.rawValue)"
                    return
                }
            }
            message = "/\(term): no type matches"
            return
        }
        guard let graph, let term, !term.isEmpty, let sheet = current, sheet.count > 0 else {
            message = "no search yet: / to search"
            return
        }
        lastSearch = term
        let columns = sheet.columns(graph: graph).count
        let needle = term.lowercased()
        var row = sheet.selection
        for _ in 0..<sheet.count {
            row = (row + (forward ? 1 : -1) + sheet.count) % sheet.count
            for c in 0..<columns where ValueFormatter.plain(sheet.value(row: row, column: c, graph: graph)).lowercased().contains(needle) {
                updateCurrent { $0.selection = row }
                message = "/\(term): row \(row + 1)"
                return
            }
        }
        message = "/\(term): not found"
    }

    // MARK: The input line

    func handleInputKey(_ key: Key) {
        switch key {
        case .enter: submitInput()
        case .escape:
            if case .editValue = inputMode { inputMode = .statement; focus = previousFocus; message = "not changed" } else { focus = .records }
            editor.set("")
        case .character(":") where editor.text.isEmpty && inputMode == .statement:
            break   // `:` out of habit at an empty prompt: the REPL already has the keyboard
        case .tab: completeInput()
        case .pageUp: replScroll = min(max(0, replOutput.count - 1), replScroll + max(1, layout.repl.height - 3))
        case .pageDown: replScroll = max(0, replScroll - max(1, layout.repl.height - 3))
        case .control("c"), .control("g"): editor.set(""); focus = .records
        default:
            // Typing on after a completion: its list of candidates has served.
            if editor.handle(key), case .character = key, !message.isEmpty, !isBusy { message = "" }
        }
    }

    func submitInput() {
        if case .editValue(let ref, let attribute) = inputMode {
            let text = editor.text
            editor.set("")
            submitEdit(text, ref: ref, attribute: attribute)
            return
        }
        let line = editor.submit()
        if inputMode == .search {
            focus = searchPane
            inputMode = .statement
            search(line, forward: true)
            return
        }
        guard !line.trimmingCharacters(in: .whitespaces).isEmpty else { return }
        if persistsHistory { HistoryFile.append(line) }
        run(line)
    }

    /// Runs a statement or dot-command; a query's result becomes a new view. A statement, and the
    /// load of `.open`/`.reload`, run through ``background`` when there is one (the UI keeps
    /// drawing; Ctrl-C cancels), else at once; ``collect()`` applies their outcome.
    public func run(_ line: String) {
        settleTypeCounts()
        if pages != nil {
            if runPagedEdit(line) { return }
            replOutput.append("loupe> " + ReplSession.shownLine(line))
            if [".quit", ".exit", ".q"].contains(line.trimmingCharacters(in: .whitespaces)) { wantsQuit = true; return }
            if runPagedDotCommand(line) || runPaged(line) { return }
            replOutput.append("error: paged mode answers counts, queries, groups" + (pagedChanges != nil ? ", edits" : "") + " and " + pagedCommands.sorted().map { "." + $0 }.joined(separator: ", ")
                              + " over the store; other dot-commands and predicates without a type need the whole graph (reopen with a larger --memory-budget)")
            return
        }
        if isPreview {
            // Kept, in order, for when the whole store is read.
            queued.append(line)
            message = "queued: \(queued.count) statement\(queued.count == 1 ? "" : "s") run when the whole store is read"
            return
        }
        guard let session, graph != nil else { return }
        guard running == nil else {
            // Typed ahead while a statement runs: it runs next, in order (Ctrl-C cancels all).
            queued.append(line)
            message = "queued: \(queued.count) statement\(queued.count == 1 ? "" : "s") after the running one (Ctrl-C cancels)"
            return
        }
        // Leaving with pending changes asks first.
        if case .dotCommand(let name, _, _)? = try? Parser.parse(line), case .success(let c) = ReplSession.command(named: name), c.name == "quit",
           !session.pending.isEmpty {
            replOutput.append("loupe> " + ReplSession.shownLine(line))
            requestQuit()
            return
        }
        if case .objects(let type?, _)? = current?.content { session.currentType = type }
        switch session.begin(line) {
        case .reply(let reply):
            show(reply, for: line)
            // .undo, .redo and .rollback change the staged graph.
            if let staged = session.engine.graph as ObjectGraph?, staged !== graph { adopt(staged, remap: false) }
        case .evaluate(let evaluation):
            replOutput.append("loupe> " + ReplSession.shownLine(line))
            let task = RunningTask(line: line, isLoad: false)
            start(task) {
                let started = DispatchTime.now()
                let outcome = evaluation.run(cancellation: task.cancellation)
                task.finish(.evaluated(evaluation, outcome, Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9))
            }
        case .commit(let changes):
            replOutput.append("loupe> " + ReplSession.shownLine(line))
            commit(changes, line: line)
        case .changesSince(let request):
            replOutput.append("loupe> " + ReplSession.shownLine(line))
            listChanges(request, line: line)
        case .load(let path):
            replOutput.append("loupe> " + ReplSession.shownLine(line))
            guard let host else {
                show(ReplSession.Reply(output: "", error: "error: loading another store is not available here"), for: line)
                return
            }
            let task = RunningTask(line: line, isLoad: true)
            start(task) {
                let outcome = Result { try host.load(path: path, progress: { done, total in task.report(done, total) }) }
                task.finish(.loaded(path, outcome))
            }
        }
        trimOutput()
    }

    /// Writes the pending changes through the host, off the UI thread.
    func commit(_ changes: PendingChanges, line: String) {
        // Another process's commit changed what the edits change: the user decides first.
        if live?.incoming != nil { quitAfterCommit = false; showConflicts(); return }
        guard let host else {
            show(ReplSession.Reply(output: "", error: "error: committing is not available here"), for: nil)
            return
        }
        let task = RunningTask(line: line, isLoad: true)
        start(task) {
            let outcome = Result { try host.commit(changes, progress: { done, total in task.report(done, total) }) }
            task.finish(.committed(outcome))
        }
    }

    /// Starts a task: on the background runner, or here and now.
    func start(_ task: RunningTask, _ work: @escaping @Sendable () -> Void) {
        running = task
        if let background {
            background.start(work)
        } else {
            work()
            _ = collect()
        }
    }

    /// On the UI thread, after a task finished: applies its outcome (a new view, an error, another
    /// store). Returns true when the screen changed (the task finished or reported progress).
    @discardableResult
    public func collect() -> Bool {
        // The types' counts, once read off the UI thread, shown at once.
        let counted = countingTypes && pages?.listedTypes.allSatisfy({ $0.count != nil }) == true
        if counted { settleTypeCounts() }
        guard let task = running else { return counted }
        guard let outcome = task.outcome else { return task.takeProgressChange() || counted }
        // Keys held while live mode read the store, then a commit another process made while
        // this task ran, once it is done.
        defer {
            if running == nil { replayHeldEvents() }
            if running == nil, liveRefreshWaiting { liveRefreshWaiting = false; storeChangedOnDisk() }
        }
        switch outcome {
        case .indexed(let result):
            running = nil
            finishRelationIndex(result, cancelled: task.cancellation.isCancelled)
            return true
        case .counted(let column, let type, let attribute, let total, let result):
            running = nil
            finishPagedFrequency(column: column, type: type, attribute: attribute, total: total, result, cancelled: task.cancellation.isCancelled)
            return true
        case .found(let crumb, let typeName, let result):
            running = nil
            finishPagedFilter(crumb: crumb, typeName: typeName, result, cancelled: task.cancellation.isCancelled)
            return true
        case .pagedSorted(let depth, let column, let sort, let result):
            running = nil
            finishPagedSort(depth: depth, column: column, sort: sort, result, cancelled: task.cancellation.isCancelled,
                            seconds: Double(DispatchTime.now().uptimeNanoseconds - task.started.uptimeNanoseconds) / 1e9)
            return true
        case .sortIndexed(let name, let result):
            running = nil
            finishSortIndex(name, result, cancelled: task.cancellation.isCancelled)
            return true
        case .answered(let statement, let result):
            running = nil
            finishPagedStatement(line: task.line, statement: statement, result, cancelled: task.cancellation.isCancelled,
                                 seconds: Double(DispatchTime.now().uptimeNanoseconds - task.started.uptimeNanoseconds) / 1e9)
            return true
        case .pagedStaged(let revision, let result):
            running = nil
            finishPagedStaged(revision: revision, result, line: task.line, cancelled: task.cancellation.isCancelled)
            return true
        case .pagedReopened(let result):
            running = nil
            finishPagedReopen(result)
            return true
        case .pagedCellStaged(let revision, let text, let ref, let attribute, let result):
            running = nil
            finishPagedCell(revision: revision, text: text, ref: ref, attribute: attribute, result)
            return true
        case .described(let result):
            running = nil
            switch result {
            case .success(let text):
                replOutput.append(contentsOf: text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast(text.hasSuffix("\n") ? 1 : 0))
            case .failure(let error): replOutput.append(task.cancellation.isCancelled ? "error: cancelled" : "error: \(error)")
            }
            trimOutput()
            return true
        default: break
        }
        guard let session else { return false }
        running = nil
        defer {
            if running == nil, !queued.isEmpty, !wantsQuit, dialog == nil { run(queued.removeFirst()) }
        }
        switch outcome {
        case .evaluated(let evaluation, let result, let seconds):
            let reply = session.finish(evaluation, result, seconds: seconds, render: false)
            if let error = reply.error {
                replOutput.append(contentsOf: error.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
            } else if case .success(.staged) = result {
                adopt(session.engine.graph, remap: false)
                show(reply, for: nil)
            } else {
                showResult(of: task.line, reply: reply)
            }
        case .loaded(let path, let result):
            let reloading = path == storePath
            let reply = session.finishLoad(path: path, result)
            show(reply, for: nil)
            if case .success = result {
                if reloading {
                    live?.incoming = nil   // `.reload` stages the edits over the file as it is
                    adopt(session.engine.graph, remap: true)
                } else {
                    fileLabel = URL(fileURLWithPath: path).lastPathComponent
                    storePath = path
                    attach(session.engine.graph)
                }
            }
        case .refreshed(let result):
            finishLiveReload(result, session: session)
        case .changesListed(let request, let result):
            finishListingChanges(request, result, session: session)
        case .previewed(let summary, let result):
            if task.cancellation.isCancelled { message = "preview cancelled"; break }
            switch result {
            case .success(let writes): showPreviewDialog(summary, writes: writes)
            case .failure(let error): message = "cannot preview: \(error)"
            }
        case .indexed, .sortIndexed, .counted, .found, .answered, .pagedSorted, .pagedStaged, .pagedReopened, .pagedCellStaged, .described: break   // handled above
        case .committed(let result):
            let reply = session.finishCommit(result)
            show(reply, for: nil)
            if case .success = result {
                if pages != nil { finishPagedCommit() } else { adopt(session.engine.graph, remap: true) }
                message = reply.output.trimmingCharacters(in: .whitespacesAndNewlines)
                if quitAfterCommit { wantsQuit = true }
            } else if let error = reply.error {
                message = error.split(separator: "\n").first.map(String.init) ?? error
            }
            quitAfterCommit = false
        }
        trimOutput()
        return true
    }

    /// Asks the running statement (or load) to stop; true when there was one.
    @discardableResult
    public func cancelRunning() -> Bool {
        guard let running else { return false }
        running.cancellation.cancel()
        queued.removeAll()
        message = "cancelling…"
        return true
    }

    /// The number of rows in the current view.
    public var currentCount: Int { current?.count ?? 0 }

    /// True while a statement or a load runs.
    public var isBusy: Bool { running != nil }

    /// Shows another graph of the same store: a staged one (rows only append, so every view keeps
    /// its rows and only its type tables are renewed), or the file's new state after a commit or
    /// a reload (`remap`: views find their objects again by identity; those gone are dropped).
    func adopt(_ newGraph: ObjectGraph, remap: Bool) {
        guard let old = graph, old !== newGraph else { return }
        loadedGraph = newGraph
        for i in stack.indices { stack[i].adopt(newGraph, from: old, remap: remap) }
        if let type = session?.currentType { session?.currentType = newGraph.types.indices.contains(type.index) ? newGraph.types[type.index] : nil }
        if typeSelection >= newGraph.types.count { typeSelection = max(0, newGraph.types.count - 1) }
    }

    /// Shows a reply in the REPL pane; `line` is echoed first unless the reply is a caret error
    /// (which repeats the statement itself).
    func show(_ reply: ReplSession.Reply, for line: String?) {
        if let line, reply.error == nil || !(reply.error!.hasPrefix("error:")) { replOutput.append("loupe> " + ReplSession.shownLine(line)) }
        if let error = reply.error {
            replOutput.append(contentsOf: error.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
            return
        }
        if session?.wantsQuit == true { wantsQuit = true; return }
        replOutput.append(contentsOf: reply.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast(reply.output.hasSuffix("\n") ? 1 : 0))
        trimOutput()
    }

    /// A query's result as a new view (objects, a projection, a frequency table), or its text.
    /// The keyboard stays where it was: typing at the REPL stays at the REPL until Esc.
    private func showResult(of line: String, reply: ReplSession.Reply) {
        switch session?.lastResult {
        case .objects(let type, let refs)?:
            push(Sheet(content: .objects(type: type, refs: refs), crumb: line))
            replOutput.append("\(refs.count.counting("object"))")
        case .projection(let columns, let rows, let refs)?:
            push(Sheet(content: .projection(columns: columns, rows: rows, refs: refs), crumb: line))
            replOutput.append("\(rows.count.counting("row"))")
        case .groups(let key, let rows, let objects)?:
            push(Sheet(content: .frequency(column: key, rows: rows, source: objects), crumb: line))
            replOutput.append("\(rows.count) groups")
        default: break
        }
        replOutput.append(contentsOf: reply.output.split(separator: "\n").map(String.init))
    }

    /// Keeps the REPL's scrollback to 2,000 lines, and follows the end after new output.
    func trimOutput() {
        if replOutput.count > 2_000 { replOutput.removeFirst(replOutput.count - 2_000) }
        replScroll = 0
    }

    /// Completes the word before the cursor from types, attributes, relations, keywords and dot-commands.
    func completeInput() {
        guard let graph else { return }
        let type = session?.currentType ?? current.flatMap { if case .objects(let t?, _) = $0.content { return t } else { return nil } }
        let result = Completion.complete(editor.text, cursor: editor.cursor, graph: graph, currentType: type)
        apply(result)
    }

    /// Completes with the candidates (see ``LineEditor/take(_:)``) and lists those left on the
    /// status line, as many as fit.
    private func apply(_ result: Completion.Result) {
        guard !result.candidates.isEmpty else { message = "no completion here"; return }
        let left = editor.take(result)
        let width = max(20, layout.repl.width - 20)
        var listed = ""
        for (i, m) in left.enumerated() {
            let next = listed.isEmpty ? m : listed + "  " + m
            if DisplayText.width(of: next) > width { listed += "  … \(left.count - i) more"; break }
            listed = next
        }
        message = listed
    }

    // MARK: Mouse

    func handleMouse(_ mouse: MouseEvent) {
        func inside(_ r: Rect) -> Bool { mouse.x >= r.x && mouse.x < r.maxX && mouse.y >= r.y && mouse.y < r.maxY }
        switch mouse.kind {
        case .wheelUp, .wheelDown:
            let delta = mouse.kind == .wheelUp ? -3 : 3
            if inside(layout.types) { focus = .types } else if inside(layout.detail) { focus = .detail } else { focus = .records }
            move(by: delta)
        case .press:
            if inside(layout.typesBody) {
                focus = .types
                let index = typeTop + mouse.y - layout.typesBody.y
                if index != typeSelection { openType(index) }
            } else if inside(layout.recordsBody), let sheet = current {
                focus = .records
                let row = sheet.top + mouse.y - layout.recordsBody.y
                if row < sheet.count { updateCurrent { $0.selection = row }; detailSelection = initialDetailSelection() }
            } else if inside(layout.detailBody) {
                focus = .detail
            } else if inside(layout.repl) {
                focus = .repl
                inputMode = .statement
            }
        }
    }
}

/// Starts work off the UI thread (the interactive browser gives a thread with a large stack:
/// statements recurse over their trees, and values can nest 2,000 levels).
public protocol BackgroundRunner: AnyObject {
    func start(_ work: @escaping @Sendable () -> Void)
}

/// A statement or a load running off the UI thread: its cancellation, its progress and, once
/// done, its outcome, shared between the worker and the UI thread.
final class RunningTask: Sendable {
    enum Outcome: Sendable {
        case evaluated(ReplSession.Evaluation, Result<ReplSession.Evaluation.Outcome, QueryError>, Double)
        case loaded(String, Result<ObjectGraph, any Error>)
        /// Live mode: the store read again after another process's commit, and what it changed.
        case refreshed(Result<(graph: ObjectGraph, changes: LiveChanges), any Error>)
        case committed(Result<(graph: ObjectGraph, summary: String), any Error>)
        case previewed([String], Result<String, any Error>)
        case indexed(Result<Void, any Error>)
        /// Paged mode: an attribute's order kept for sorts (its `Type.attribute`).
        case sortIndexed(String, Result<Void, any Error>)
        /// Paged mode: a column counted (its name, the type, the attribute, the type's count).
        case counted(String, Int, String?, Int, Result<[Value: Int], any Error>)
        /// Paged mode: the keys with a value (the crumb, the type's name).
        case found(String, String, Result<[ObjectID], any Error>)
        /// Paged mode: a list sorted over the store (the stack's depth then, the column, the sort).
        case pagedSorted(Int, String, PagedSort, Result<(Browser.PagedAnswer, String?), any Error>)
        /// Paged mode: a statement answered over the store.
        /// (With a note to show after it, if any.)
        case answered(Statement, Result<(Browser.PagedAnswer, String?), any Error>)
        /// Paged mode: an edit statement staged over a copy of the changes as they were at this revision.
        case pagedStaged(UUID, Result<(PagedChanges, EditStep), any Error>)
        /// Paged mode: a cell's new text (for the object and attribute) read and staged over a copy
        /// of the changes as they were at this revision.
        case pagedCellStaged(UUID, String, ObjectRef, String, Result<(PagedChanges, EditStep), any Error>)
        /// Paged mode: the store opened again, the edits staged over it (and those dropped).
        case pagedReopened(Result<(PagedChanges, [EditStep]), any Error>)
        /// Paged mode: a dot-command's text read from the store (`.types`, `.schema`).
        case described(Result<String, any Error>)
        /// `.changes-since`: the store read again and compared with the mark.
        case changesListed(ReplSession.ChangesSinceRequest, Result<(now: ObjectGraph, changes: ReplSession.ChangesSince), any Error>)
    }

    let line: String
    let isLoad: Bool
    /// What the status line says the task is doing (`loading`, `indexing`, `counting`).
    let verb: String
    let cancellation = Cancellation()
    let started = DispatchTime.now()
    private let state = Mutex<(outcome: Outcome?, progress: (Int, Int)?, progressChanged: Bool)>((nil, nil, false))

    /// Live mode's read of another process's commit, which the user did not ask for: keys
    /// pressed meanwhile are held and handled, in order, once it is done.
    let isLiveRefresh: Bool

    init(line: String, isLoad: Bool, verb: String = "loading", isLiveRefresh: Bool = false) {
        self.line = line
        self.isLoad = isLoad
        self.verb = verb
        self.isLiveRefresh = isLiveRefresh
    }

    func finish(_ outcome: Outcome) { state.withLock { $0.outcome = outcome } }
    func report(_ done: Int, _ total: Int) { state.withLock { $0.progress = (done, total); $0.progressChanged = true } }
    var outcome: Outcome? { state.withLock { $0.outcome } }
    var progress: (Int, Int)? { state.withLock { $0.progress } }
    /// Seconds since the task started.
    var elapsed: Double { Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9 }
    /// True once since the last call when progress was reported.
    func takeProgressChange() -> Bool { state.withLock { let changed = $0.progressChanged; $0.progressChanged = false; return changed } }
}
