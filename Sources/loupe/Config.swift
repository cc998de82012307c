import DisplayText
import Foundation
import LoupeBrowser
import LoupeModel
import Synchronization
import TOMLKit

/// The optional config file, `$XDG_CONFIG_HOME/loupe/config.toml` (else
/// `~/.config/loupe/config.toml`; `LOUPE_CONFIG` names another): key bindings, colour, the default
/// memory budget and how much REPL history is kept. Read once at start; a mistake in it is one
/// line naming the file and the line, and nothing runs.
///
/// ```toml
/// [keys]                      # a command (as help names it) = a key or a list of keys
/// quit-view = ["q", "Ctrl-Q"]
/// commit-changes = "W"
///
/// [defaults]
/// memory-budget = "1G"        # --memory-budget when none is given
/// history = 5000              # REPL lines kept in $XDG_STATE_HOME/loupe/history
/// colour = false              # no colour (NO_COLOR does the same)
/// ```
struct Config {
    /// `--memory-budget` when none is given.
    var memoryBudget: MemoryBudget?

    /// The settings in force (none until ``load()`` ran).
    static let current = Mutex(Config())

    /// A mistake in the file, with its line (0 when the whole file is at fault).
    struct Problem: Error, CustomStringConvertible {
        let path: String
        let line: Int
        let reason: String
        var description: String { line > 0 ? "\(path):\(line): \(reason)" : "\(path): \(reason)" }
    }

    /// Where the file is looked for.
    static func path(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let named = environment["LOUPE_CONFIG"], !named.isEmpty { return named }
        return UserFolders.base("XDG_CONFIG_HOME", default: ".config", environment: environment)! + "/loupe/config.toml"
    }

    /// Reads the file when there is one and puts it in force: bindings, colour, history, budget.
    static func load() throws {
        let path = path()
        guard FileManager.default.fileExists(atPath: path) else { return }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw Problem(path: path, line: 0, reason: "cannot be read as UTF-8 text")
        }
        let table: TOMLTable
        do { table = try TOMLTable(string: text) } catch let error as TOMLParseError {
            throw Problem(path: path, line: Int(error.source.begin.line), reason: error.description.components(separatedBy: " (at line").first ?? "\(error)")
        }
        let lines = text.components(separatedBy: "\n")
        func line(of key: String) -> Int {
            (lines.firstIndex { $0.trimmingCharacters(in: .whitespaces).hasPrefix(key) }).map { $0 + 1 } ?? 0
        }
        var config = Config()
        for (section, value) in table {
            guard let inner = value.table else { throw Problem(path: path, line: line(of: section), reason: "'\(section)' must be a section ([keys] or [defaults])") }
            switch section {
            case "keys": try bindKeys(inner, path: path, line: line)
            case "defaults": try config.takeDefaults(inner, path: path, line: line)
            default: throw Problem(path: path, line: line(of: "[\(section)"), reason: "no section is named [\(section)]; there are [keys] and [defaults]")
            }
        }
        current.withLock { $0 = config }
    }

    /// `[keys]`: each command's keys.
    private static func bindKeys(_ table: TOMLTable, path: String, line: (String) -> Int) throws {
        var changes: [KeyMap.Rebinding] = []
        for (command, value) in table {
            let keys: [String]
            if let one = value.string { keys = [one] } else if let many = value.array, many.allSatisfy({ $0.string != nil }) {
                keys = many.compactMap(\.string)
            } else {
                throw Problem(path: path, line: line(command), reason: "\(command) takes a key or a list of keys, like \"q\" or [\"q\", \"Ctrl-Q\"]")
            }
            changes.append(KeyMap.Rebinding(command: command, keys: keys, line: line(command)))
        }
        do { KeyMap.use(try KeyMap.rebinding(changes)) } catch let error as KeyMap.RebindingError {
            throw Problem(path: path, line: error.line, reason: error.reason)
        }
    }

    /// `[defaults]`: the memory budget, history and colour.
    private mutating func takeDefaults(_ table: TOMLTable, path: String, line: (String) -> Int) throws {
        for (key, value) in table {
            switch key {
            case "memory-budget":
                guard let text = value.string, let budget = MemoryBudget(argument: text) else {
                    throw Problem(path: path, line: line(key), reason: "memory-budget takes a size like \"512M\" or \"2G\"")
                }
                memoryBudget = budget
            case "history":
                guard let n = value.int, n >= 0, n <= 1_000_000 else { throw Problem(path: path, line: line(key), reason: "history takes a number of lines, 0 to 1000000") }
                HistoryFile.kept.withLock { $0 = n }
            case "colour", "color":
                guard let on = value.bool else { throw Problem(path: path, line: line(key), reason: "\(key) takes true or false") }
                Theme.coloured.withLock { $0 = on }
            default:
                throw Problem(path: path, line: line(key), reason: "no setting is named '\(key)' in [defaults]; there are memory-budget, history and colour")
            }
        }
    }
}
