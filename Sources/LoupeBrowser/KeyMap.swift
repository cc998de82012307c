import DisplayText
import LoupeModel
import Synchronization
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
    case changesView = "changes-view"
    case copyValue = "copy-value", copyRow = "copy-row", editExternally = "edit-externally"
    case messageLog = "message-log"
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
        case .goBack: return "back one level: the graph closed, the detail left for its list, the previous view"
        case .quitView: return "back one level as Backspace does; quit at the root (asking when edits are pending)"
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
        case .addObject: return "add an object of the current type: a form of its fields (Tab moves, Ctrl-S stages)"
        case .deleteObject: return "mark the selected object for deletion"
        case .undoEdit: return "undo the last staged change"
        case .redoEdit: return "redo the change undone last"
        case .commitChanges: return "show the pending changes and their writes; Enter commits"
        case .messageLog: return "the status line's earlier messages, newest last (a long one whole)"
        case .copyValue: return "copy the selected value to the clipboard (OSC 52: works over SSH; tmux: set-clipboard on)"
        case .copyRow: return "copy the selected row to the clipboard as one line of JSON"
        case .editExternally: return "edit the selected value in $VISUAL or $EDITOR; saving stages it"
        case .changesView: return "what changed in the store since it was opened (or .changes-since mark), by type and object; Enter opens one"
        case .viewValue: return "the whole value of the cell or attribute: wrapped, nested values indented, data as hex"
        case .toggleColumnWidth: return "current column: full width or the default"
        case .zoomPane: return "the focused pane fills the screen, or back (REPL: its whole scrollback)"
        case .buildIndex: return "paged mode: build Loupe's relation index in its cache (never in the file); then, on an attribute column, keep its order for sorts"
        case .showHelp: return "this help"
        case .redraw: return "redraw the screen"
        }
    }
}

/// The key bindings, one table: Loupe's own (``standard``), with a user's config file's changes
/// when it has any (``use(_:)``).
public enum KeyMap {
    /// One key bound to a command, with the name help shows for the key.
    public typealias Binding = (key: Key, name: String, command: Command)

    /// The bindings in force, in help order.
    public static var bindings: [Binding] { active.withLock { $0 } }

    /// Puts `bindings` in force (a config file's, from ``rebinding(_:)``).
    public static func use(_ bindings: [Binding]) { active.withLock { $0 = bindings } }

    private static let active = Mutex(standard)

    /// Loupe's own bindings, in help order.
    public static let standard: [Binding] = [
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
        (.backspace, "Backspace", .goBack), (.escape, "Esc", .goBack),
        (.character("q"), "q", .quitView),
        (.character("/"), "/", .searchForward), (.character("n"), "n", .searchNext), (.character("N"), "N", .searchPrevious),
        (.character("s"), "s", .sortAscending), (.character("S"), "S", .sortDescending),
        (.character("F"), "F", .frequencyColumn),
        (.character(":"), ":", .focusRepl),
        (.character("v"), "v", .toggleGraph), (.character("+"), "+", .graphMoreHops), (.character("-"), "-", .graphFewerHops),
        (.character("e"), "e", .editValue), (.character("a"), "a", .addObject), (.character("d"), "d", .deleteObject),
        (.character("U"), "U", .undoEdit), (.character("R"), "R", .redoEdit), (.control("s"), "Ctrl-S", .commitChanges),
        (.character("C"), "C", .changesView),
        (.character("y"), "y", .copyValue), (.character("Y"), "Y", .copyRow), (.character("E"), "E", .editExternally), (.control("o"), "Ctrl-O", .editExternally),
        (.character("M"), "M", .messageLog),
        (.character("V"), "V", .viewValue), (.character("_"), "_", .toggleColumnWidth), (.character("z"), "z", .zoomPane),
        (.character("I"), "I", .buildIndex),
        (.character("?"), "?", .showHelp),
        (.control("l"), "Ctrl-L", .redraw),
    ]

    /// A change a config file asks for: `command` (by its verb-noun name) bound to `keys` (as
    /// help names them: `j`, `Down`, `Ctrl-F`, `Shift-Tab`, any single character), on `line`.
    public struct Rebinding: Sendable {
        public let command: String
        public let keys: [String]
        public let line: Int
        public init(command: String, keys: [String], line: Int) {
            self.command = command
            self.keys = keys
            self.line = line
        }
    }

    /// A rebinding that cannot be made, with the line of the config file it is on.
    public struct RebindingError: Error, CustomStringConvertible {
        public let line: Int
        public let reason: String
        public var description: String { "line \(line): \(reason)" }
    }

    /// The standard bindings with each command of `changes` bound to its keys instead of its own;
    /// an unknown command or key name, or a key two commands would share, is an error.
    public static func rebinding(_ changes: [Rebinding]) throws -> [Binding] {
        var result = standard
        var claimed: [Key: (command: String, line: Int)] = [:]
        for change in changes.sorted(by: { $0.line < $1.line }) {
            guard let command = Command(rawValue: change.command) else {
                let near = NameSuggestion.closest(to: change.command, in: Command.allCases.map(\.rawValue))
                throw RebindingError(line: change.line, reason: "no command is named '\(change.command)'" + (near.map { "; did you mean '\($0)'?" } ?? ""))
            }
            let keys = try change.keys.map { name -> Binding in
                guard let key = key(named: name) else {
                    throw RebindingError(line: change.line, reason: "'\(name)' names no key (like j, Down, PgDn, Ctrl-F, Shift-Tab)")
                }
                return (key, name, command)
            }
            for binding in keys {
                if let other = claimed[binding.key], other.command != change.command {
                    throw RebindingError(line: change.line, reason: "\(binding.name) is given to both \(other.command) (line \(other.line)) and \(change.command)")
                }
                claimed[binding.key] = (change.command, change.line)
            }
            // A key given to a command is taken from the command that had it.
            result.removeAll { $0.command == command || keys.map(\.key).contains($0.key) }
            result += keys
        }
        return result.sorted { Command.allCases.firstIndex(of: $0.command)! < Command.allCases.firstIndex(of: $1.command)! }
    }

    /// The key help calls `name`: a name of the standard table (`Down`, `PgDn`, `Ctrl-F`), `Ctrl-`
    /// and a letter, or one character.
    public static func key(named name: String) -> Key? {
        if let known = standard.first(where: { $0.name == name }) { return known.key }
        if name.hasPrefix("Ctrl-"), name.count == 6, let c = name.last, c.isLetter { return .control(Character(c.lowercased())) }
        if name.count == 1, let c = name.first, !c.isWhitespace { return .character(c) }
        return nil
    }

    /// The first key bound to `command`, as help names it (`?` for show-help unless rebound).
    public static func name(of command: Command) -> String { bindings.first { $0.command == command }?.name ?? "-" }

    /// The command bound to a key, if any.
    public static func command(for key: Key) -> Command? { bindings.first { $0.key == key }?.command }

    /// Where a command's summary starts on a line of ``helpLines`` (after its keys and name).
    static let helpSummaryColumn = 37

    /// The help text: one line per command with its keys, generated from ``bindings``.
    public static var helpLines: [String] {
        var lines: [String] = []
        for command in Command.allCases {
            let keys = bindings.filter { $0.command == command }.map(\.name).joined(separator: " ")
            lines.append(DisplayText.pad(keys, to: 16) + DisplayText.pad(command.rawValue, to: helpSummaryColumn - 16) + command.summary)
        }
        lines.append("")
        lines.append("In the REPL (:): Enter runs, Esc leaves, Up/Down history, Tab completes, PgUp/PgDn scroll,")
        lines.append("Ctrl-A/E start/end, Ctrl-K/U kill to end/start, Ctrl-W kill word.")
        lines.append("Mouse: click selects, wheel scrolls. Statements: .help query, .help where, .help @sum … in the REPL.")
        return lines
    }
}
