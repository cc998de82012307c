import DisplayText
import TerminalKit

/// Everything the browser can be asked to do, by verb-noun name (VisiData's design). Keys are
/// bound to commands in ``KeyMap/bindings`` only, and help is printed from that table, so help
/// and bindings can never disagree.
public enum Command: String, CaseIterable, Sendable {
    case moveDown = "move-down", moveUp = "move-up"
    case columnLeft = "column-left", columnRight = "column-right"
    case pageDown = "page-down", pageUp = "page-up"
    case goTop = "go-top", goBottom = "go-bottom"
    case nextPane = "next-pane", previousPane = "previous-pane"
    case openRow = "open-row", goBack = "go-back", quitView = "quit-view"
    case searchForward = "search-forward", searchNext = "search-next", searchPrevious = "search-previous"
    case sortAscending = "sort-ascending", sortDescending = "sort-descending"
    case frequencyColumn = "frequency-column"
    case focusRepl = "focus-repl"
    case toggleGraph = "toggle-graph", graphMoreHops = "graph-more-hops", graphFewerHops = "graph-fewer-hops"
    case editValue = "edit-value", addObject = "add-object", deleteObject = "delete-object"
    case undoEdit = "undo-edit", redoEdit = "redo-edit", commitChanges = "commit-changes"
    case viewValue = "view-value", toggleColumnWidth = "toggle-column-width", zoomPane = "zoom-pane"
    case buildIndex = "build-index"
    case showHelp = "show-help", redraw = "redraw"

    /// What the command does, for help.
    public var summary: String {
        switch self {
        case .moveDown: return "select the next row or item"
        case .moveUp: return "select the previous row or item"
        case .columnLeft: return "move to the column on the left (scrolls)"
        case .columnRight: return "move to the column on the right (scrolls)"
        case .pageDown: return "one page down"
        case .pageUp: return "one page up"
        case .goTop: return "first row"
        case .goBottom: return "last row"
        case .nextPane: return "focus the next pane (types, records, detail, REPL)"
        case .previousPane: return "focus the previous pane"
        case .openRow: return "open: a type, an object's detail, a relation or backlink, a value's rows"
        case .goBack: return "back to the previous view"
        case .quitView: return "close the current view; quit at the root"
        case .searchForward: return "search the current view"
        case .searchNext: return "next match"
        case .searchPrevious: return "previous match"
        case .sortAscending: return "sort by the current column, ascending"
        case .sortDescending: return "sort by the current column, descending"
        case .frequencyColumn: return "frequency table of the current column"
        case .focusRepl: return "type a statement in the REPL"
        case .toggleGraph: return "relation graph of the selected object"
        case .graphMoreHops: return "graph: one more hop (up to 3)"
        case .graphFewerHops: return "graph: one hop less"
        case .editValue: return "edit the selected cell or attribute; on a relation, pick its target(s)"
        case .addObject: return "add an object of the current type (an insert at the REPL)"
        case .deleteObject: return "mark the selected object for deletion"
        case .undoEdit: return "undo the last staged change"
        case .redoEdit: return "redo the change undone last"
        case .commitChanges: return "show the pending changes and their writes; Enter commits"
        case .viewValue: return "the whole value of the cell or attribute: wrapped, nested values indented, data as hex"
        case .toggleColumnWidth: return "current column: full width or the default"
        case .zoomPane: return "the focused pane fills the screen, or back (REPL: its whole scrollback)"
        case .buildIndex: return "paged mode: build Loupe's relation index in its cache (never in the file); then, on an attribute column, keep its order for sorts"
        case .showHelp: return "this help"
        case .redraw: return "redraw the screen"
        }
    }
}

/// The key bindings, one table.
public enum KeyMap {
    /// Every binding, in help order.
    public static let bindings: [(key: Key, name: String, command: Command)] = [
        (.character("j"), "j", .moveDown), (.down, "Down", .moveDown),
        (.character("k"), "k", .moveUp), (.up, "Up", .moveUp),
        (.character("h"), "h", .columnLeft), (.left, "Left", .columnLeft),
        (.character("l"), "l", .columnRight), (.right, "Right", .columnRight),
        (.pageDown, "PgDn", .pageDown), (.control("f"), "Ctrl-F", .pageDown),
        (.pageUp, "PgUp", .pageUp), (.control("b"), "Ctrl-B", .pageUp),
        (.character("g"), "g", .goTop), (.home, "Home", .goTop),
        (.character("G"), "G", .goBottom), (.end, "End", .goBottom),
        (.tab, "Tab", .nextPane), (.backTab, "Shift-Tab", .previousPane),
        (.enter, "Enter", .openRow),
        (.backspace, "Backspace", .goBack),
        (.character("q"), "q", .quitView),
        (.character("/"), "/", .searchForward), (.character("n"), "n", .searchNext), (.character("N"), "N", .searchPrevious),
        (.character("s"), "s", .sortAscending), (.character("S"), "S", .sortDescending),
        (.character("F"), "F", .frequencyColumn),
        (.character(":"), ":", .focusRepl),
        (.character("v"), "v", .toggleGraph), (.character("+"), "+", .graphMoreHops), (.character("-"), "-", .graphFewerHops),
        (.character("e"), "e", .editValue), (.character("a"), "a", .addObject), (.character("d"), "d", .deleteObject),
        (.character("U"), "U", .undoEdit), (.character("R"), "R", .redoEdit), (.control("s"), "Ctrl-S", .commitChanges),
        (.character("V"), "V", .viewValue), (.character("_"), "_", .toggleColumnWidth), (.character("z"), "z", .zoomPane),
        (.character("I"), "I", .buildIndex),
        (.character("?"), "?", .showHelp),
        (.control("l"), "Ctrl-L", .redraw),
    ]

    /// The command bound to a key, if any.
    public static func command(for key: Key) -> Command? { bindings.first { $0.key == key }?.command }

    /// The help text: one line per command with its keys, generated from ``bindings``.
    public static var helpLines: [String] {
        var lines: [String] = []
        for command in Command.allCases {
            let keys = bindings.filter { $0.command == command }.map(\.name).joined(separator: " ")
            lines.append(DisplayText.pad(keys, to: 16) + DisplayText.pad(command.rawValue, to: 21) + command.summary)
        }
        lines.append("")
        lines.append("In the REPL (:): Enter runs, Esc leaves, Up/Down history, Tab completes, PgUp/PgDn scroll,")
        lines.append("Ctrl-A/E start/end, Ctrl-K/U kill to end/start, Ctrl-W kill word.")
        lines.append("Mouse: click selects, wheel scrolls. Statements: see README (.help in the REPL).")
        return lines
    }
}
