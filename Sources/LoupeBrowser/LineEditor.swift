import Foundation
import Synchronization
import LoupeQuery
import TerminalKit

/// The REPL's input line: text, cursor, readline-style editing, and history.
public struct LineEditor: Equatable {
    /// The text, as characters.
    public private(set) var characters: [Character] = []
    /// The cursor, between 0 and the count of characters.
    public private(set) var cursor = 0
    /// Earlier lines, oldest first.
    public private(set) var history: [String] = []
    private var historyIndex: Int? = nil

    public init(history: [String] = []) { self.history = history }

    public var text: String { String(characters) }

    public mutating func insert(_ c: Character) { characters.insert(c, at: cursor); cursor += 1 }
    public mutating func insert(_ s: String) { for c in s { insert(c) } }
    public mutating func backspace() { if cursor > 0 { characters.remove(at: cursor - 1); cursor -= 1 } }
    public mutating func delete() { if cursor < characters.count { characters.remove(at: cursor) } }
    public mutating func left() { cursor = max(0, cursor - 1) }
    public mutating func right() { cursor = min(characters.count, cursor + 1) }
    public mutating func home() { cursor = 0 }
    public mutating func end() { cursor = characters.count }
    /// Ctrl-K.
    public mutating func killToEnd() { characters.removeSubrange(cursor...) }
    /// Ctrl-U.
    public mutating func killToStart() { characters.removeSubrange(..<cursor); cursor = 0 }
    /// Ctrl-W: the word before the cursor, and the spaces after it.
    public mutating func killWord() {
        var start = cursor
        while start > 0, characters[start - 1] == " " { start -= 1 }
        while start > 0, characters[start - 1] != " " { start -= 1 }
        characters.removeSubrange(start..<cursor)
        cursor = start
    }

    /// Replaces the whole line.
    public mutating func set(_ text: String) { characters = Array(text); cursor = characters.count }

    /// Takes the line for running: it joins the history (unless blank or a repeat) and the editor empties.
    public mutating func submit() -> String {
        let line = text
        if !line.trimmingCharacters(in: .whitespaces).isEmpty, history.last != line { history.append(line) }
        characters = []
        cursor = 0
        historyIndex = nil
        return line
    }

    /// Up: the previous history line.
    public mutating func historyBack() {
        guard !history.isEmpty else { return }
        let i = max(0, (historyIndex ?? history.count) - 1)
        historyIndex = i
        set(history[i])
    }

    /// Down: the next history line, or an empty line after the last.
    public mutating func historyForward() {
        guard let i = historyIndex else { return }
        if i + 1 < history.count { historyIndex = i + 1; set(history[i + 1]) } else { historyIndex = nil; set("") }
    }

    /// The word being typed (letters, digits, `_`, `@`, `.` and `$` before the cursor) and where it starts.
    public var currentWord: (text: String, start: Int) {
        var start = cursor
        while start > 0, characters[start - 1].isLetter || characters[start - 1].isNumber || "_@.$".contains(characters[start - 1]) {
            start -= 1
        }
        return (String(characters[start..<cursor]), start)
    }

    /// Applies an editing key: a character, deletion, movement, the readline kills (Ctrl-K/U/W),
    /// Home/End (Ctrl-A/E), history (Up/Down). False for any other key, which is the caller's.
    public mutating func handle(_ key: Key) -> Bool {
        switch key {
        case .character(let c): insert(c)
        case .backspace: backspace()
        case .delete: delete()
        case .left: left()
        case .right: right()
        case .home, .control("a"): home()
        case .end, .control("e"): end()
        case .control("k"): killToEnd()
        case .control("u"): killToStart()
        case .control("w"): killWord()
        case .up: historyBack()
        case .down: historyForward()
        default: return false
        }
        return true
    }

    /// Takes a completion at the cursor: the one candidate, else the candidates' common start,
    /// keeping what the user typed as typed (only the rest is added). Returns the candidates
    /// still to choose from (empty when one was taken or there were none).
    public mutating func take(_ result: Completion.Result) -> [String] {
        let prefix = result.prefix, matches = result.candidates
        guard !matches.isEmpty else { return [] }
        func keepingTyped(_ candidate: String) -> String { prefix + candidate.dropFirst(prefix.count) }
        let isDotCommand = prefix.hasPrefix(".")   // the whole line is the command's name
        if matches.count == 1 {
            if isDotCommand { set(keepingTyped(matches[0]) + " ") } else { complete(keepingTyped(matches[0])) }
            return []
        }
        var common = matches[0]
        for m in matches.dropFirst() { while !m.lowercased().hasPrefix(common.lowercased()) { common.removeLast() } }
        if common.count > prefix.count { if isDotCommand { set(keepingTyped(common)) } else { complete(keepingTyped(common)) } }
        return matches
    }

    /// Replaces the current word's last component (after its last `.`) with `completion`.
    public mutating func complete(_ completion: String) {
        let (word, start) = currentWord
        let lastDot = word.lastIndex(of: ".").map { word.distance(from: word.startIndex, to: $0) + 1 } ?? 0
        characters.replaceSubrange((start + lastDot)..<cursor, with: Array(completion))
        cursor = start + lastDot + completion.count
    }
}

/// Where the REPL's history lives: `$XDG_STATE_HOME/loupe/history`, else `~/.local/state/loupe/history`.
public enum HistoryFile {
    public static var url: URL {
        let env = ProcessInfo.processInfo.environment
        let base = env["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".local/state")
        return base.appendingPathComponent("loupe/history")
    }

    /// How many lines ``load(limit:)`` gives back: 1,000, or what the config file says.
    public static let kept = Mutex(1000)

    /// The last `limit` lines (``kept`` when not given).
    public static func load(limit: Int? = nil) -> [String] {
        let limit = limit ?? kept.withLock { $0 }
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        return Array(text.split(separator: "\n").map(String.init).suffix(limit))
    }

    /// Appends one line (best effort: a read-only home never stops the browser).
    public static func append(_ line: String) {
        let url = self.url
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let data = Data((line.replacingOccurrences(of: "\n", with: " ") + "\n").utf8)
        if let handle = try? FileHandle(forWritingTo: url) {
            defer { try? handle.close() }
            _ = try? handle.seekToEnd()
            try? handle.write(contentsOf: data)
        } else {
            try? data.write(to: url)
        }
    }
}
