import CSignalSafety
import DisplayText
import Foundation
import LoupeBrowser
import LoupeModel
import LoupeQuery
import TerminalKit

/// The line editor of `loupe repl` on a terminal: the browser REPL's ``LineEditor`` (Ctrl-A/E/K/U/W,
/// arrows, Home/End, Delete), its history file (Up/Down) and schema completion (Tab), drawn on
/// one line. The terminal is in raw mode only while a line is read: a statement runs in the
/// normal mode, so Ctrl-C reaches it as a signal and cancels it. At the prompt, Ctrl-C clears the
/// line and Ctrl-D on an empty line leaves. The saved mode is restored on every way out (the
/// signal handler restores it too).
final class LineReader {
    private var editor: LineEditor
    private let prompt = "loupe> "
    private let completion: (String, Int) -> Completion.Result
    private var saved = termios()

    init(completion: @escaping (String, Int) -> Completion.Result) {
        editor = LineEditor(history: HistoryFile.load())
        self.completion = completion
        loupe_signals_install()
    }

    /// One line, or nil at the end (Ctrl-D on an empty line, or input closed).
    func readLine() -> String? {
        guard tcgetattr(0, &saved) == 0 else { return Swift.readLine(strippingNewline: true) }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
        loupe_terminal_save(0, "")
        tcsetattr(0, TCSAFLUSH, &raw)
        defer {
            tcsetattr(0, TCSAFLUSH, &saved)
            loupe_terminal_forget()
        }
        editor.set("")
        var hint = ""
        draw(hint)
        while true {
            guard let key = nextKey() else { write("\r\n"); return nil }
            hint = ""
            switch key {
            case .enter:
                write("\r\n")
                let line = editor.submit()
                if !line.trimmingCharacters(in: .whitespaces).isEmpty { HistoryFile.append(line) }
                return line
            case .control("c"): write("^C\r\n"); editor.set("")
            case .control("d"):
                if editor.text.isEmpty { write("\r\n"); return nil }
                editor.delete()
            case .control("l"): write("\u{1B}[H\u{1B}[2J")
            case .tab: hint = editor.take(completion(editor.text, editor.cursor)).prefix(40).joined(separator: "  ")
            default: _ = editor.handle(key)
            }
            draw(hint)
        }
    }

    /// Redraws the line (and a line of candidates under it), the cursor where the editor has it.
    private func draw(_ hint: String) {
        let width = max(20, terminalWidth())
        var out = "\r\u{1B}[J"
        if !hint.isEmpty { out += "\r\n" + DisplayText.fit(hint, width: width - 1) + "\u{1B}[1A\r" }
        // The part of the line around the cursor that fits, escaped like every value.
        let text = editor.text, cursor = editor.cursor
        let before = DisplayText.escaped(String(text.prefix(cursor)))
        let after = DisplayText.escaped(String(text.dropFirst(cursor)))
        let room = width - DisplayText.width(of: prompt) - 1
        let shownBefore = DisplayText.fitFromEnd(before, width: max(1, min(DisplayText.width(of: before), room)))
        let shownAfter = DisplayText.fit(after, width: max(0, room - DisplayText.width(of: shownBefore)))
        out += prompt + shownBefore + shownAfter + "\u{1B}[K"
        let back = DisplayText.width(of: shownAfter)
        if back > 0 { out += "\u{1B}[\(back)D" }
        write(out)
    }

    private func terminalWidth() -> Int {
        var size = winsize()
        return ioctl(1, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
    }

    private func write(_ s: String) {
        FileHandle.standardOutput.write(Data(s.utf8))
    }

    /// The next key from the terminal: UTF-8 characters, control keys and the usual escape
    /// sequences; nil when input ends.
    private func nextKey() -> Key? {
        guard let byte = readByte() else { return nil }
        switch byte {
        case 0x0D, 0x0A: return .enter
        case 0x09: return .tab
        case 0x7F, 0x08: return .backspace
        case 0x1B:
            guard let next = readByte(timeout: 50) else { return .escape }
            guard next == UInt8(ascii: "[") || next == UInt8(ascii: "O") else { return .escape }
            guard let code = readByte(timeout: 50) else { return .escape }
            switch code {
            case UInt8(ascii: "A"): return .up
            case UInt8(ascii: "B"): return .down
            case UInt8(ascii: "C"): return .right
            case UInt8(ascii: "D"): return .left
            case UInt8(ascii: "H"): return .home
            case UInt8(ascii: "F"): return .end
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                var number = Int(code - 48)
                while let more = readByte(timeout: 50), more != UInt8(ascii: "~") {
                    guard more >= 48, more <= 57 else { return .escape }
                    number = number * 10 + Int(more - 48)
                }
                switch number {
                case 1, 7: return .home
                case 4, 8: return .end
                case 3: return .delete
                default: return .escape
                }
            default: return .escape
            }
        case 0x01...0x1A: return .control(Character(UnicodeScalar(byte + 0x60)))
        default:
            // A UTF-8 sequence: its length from the first byte.
            var bytes = [byte]
            let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            while bytes.count < length, let more = readByte(timeout: 50) { bytes.append(more) }
            let s = String(decoding: bytes, as: UTF8.self)
            return s.first.map { .character($0) } ?? .escape
        }
    }

    private func readByte(timeout milliseconds: Int32 = -1) -> UInt8? {
        var fds = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        guard poll(&fds, 1, milliseconds) > 0 else { return nil }
        var byte: UInt8 = 0
        return Platform.read(0, &byte, 1) == 1 ? byte : nil
    }
}
