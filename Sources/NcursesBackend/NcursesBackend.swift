import CNcurses
import CSignalSafety
import Foundation
import TerminalKit

/// The real terminal, through ncurses: the only module that sees the C shim.
///
/// It uses `newterm` (which reports a bad `TERM` instead of exiting the process), sets the locale
/// for wide characters (falling back to `C.UTF-8`), raw mode without echo, keypad and mouse
/// input, and the terminal's default colours. ``restore()`` ends curses on every way out the
/// program controls; when the process dies of a signal instead (SIGTERM, a crash), the handler of
/// ``CSignalSafety`` writes the saved terminal state back with async-signal-safe calls only
/// (`tcsetattr`, and `write` of the reset sequences), which `endwin` is not.
public final class NcursesBackend: Backend {
    private var screen: OpaquePointer?
    private var pairs: [Int: Int16] = [:]
    private let hasColors: Bool
    private let colorCount: Int
    /// Leaves the alternate screen, shows the cursor, resets colours, mouse reporting and keypad
    /// mode: what a dying process writes to give the terminal back (xterm's sequences, which
    /// every terminal Loupe runs in understands).
    static let resetSequences = "\u{1B}[?1049l\u{1B}[?25h\u{1B}[0m\u{1B}[?1000l\u{1B}[?1002l\u{1B}[?1003l\u{1B}[?1006l\u{1B}[?1l\u{1B}>\r\n"

    public struct StartError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Starts curses on the controlling terminal.
    public init() throws {
        if setlocale(LC_ALL, "") == nil || !(String(cString: setlocale(LC_CTYPE, nil)).uppercased().contains("UTF")) {
            setlocale(LC_ALL, "C.UTF-8")
        }
        loupe_signals_install()
        loupe_terminal_save(1, NcursesBackend.resetSequences)
        guard let screen = newterm(nil, loupe_stdout(), loupe_stdin()) else {
            loupe_terminal_forget()
            throw StartError(description: "cannot start the terminal (TERM=\(ProcessInfo.processInfo.environment["TERM"] ?? "unset"))")
        }
        self.screen = screen
        set_term(screen)
        raw()
        noecho()
        keypad(loupe_stdscr(), true)
        set_escdelay(25)
        curs_set(0)
        hasColors = has_colors()
        if hasColors {
            start_color()
            use_default_colors()
        }
        colorCount = Int(loupe_colors())
        mousemask(loupe_mouse_mask(), nil)
        mouseinterval(0)
    }

    deinit { restore() }

    /// Ends curses and gives the terminal back as it was.
    public func restore() {
        guard screen != nil else { return }
        endwin()
        delscreen(screen)
        screen = nil
        loupe_terminal_forget()
    }

    public var size: (width: Int, height: Int) { (Int(loupe_cols()), Int(loupe_lines())) }

    /// Writes OSC 52 (`ESC ] 52 ; c ; base64 BEL`): the terminal puts the text on its clipboard,
    /// over SSH too; tmux forwards it with `set -g set-clipboard on`. The text is base64, never
    /// shown.
    public func copyToClipboard(_ text: String) {
        let sequence = "\u{1B}]52;c;" + Data(text.utf8).base64EncodedString() + "\u{07}"
        fflush(loupe_stdout())
        FileHandle.standardOutput.write(Data(sequence.utf8))
    }

    /// Leaves curses (the terminal as it was before Loupe) while `body` runs, then resumes it.
    public func suspend(_ body: () -> Void) {
        guard screen != nil else { return body() }
        def_prog_mode()
        endwin()
        body()
        reset_prog_mode()
        clear()
        refresh()
    }

    private func pair(_ style: Style) -> Int16 {
        guard hasColors else { return 0 }
        func index(_ c: Color) -> Int {
            guard let i = c.index else { return -1 }
            return i < colorCount ? i : (i >= 8 && i < 16 ? i - 8 : 7)
        }
        let fg = index(style.foreground), bg = index(style.background)
        if fg < 0 && bg < 0 { return 0 }
        let key = (fg + 1) * 1000 + (bg + 1)
        if let p = pairs[key] { return p }
        let p = Int16(pairs.count + 1)
        init_pair(p, Int16(fg), Int16(bg))
        pairs[key] = p
        return p
    }

    public func draw(_ changes: [(x: Int, y: Int, cell: Cell)], cursor: (x: Int, y: Int)?) {
        for change in changes where !change.cell.isContinuation {
            var attrs = loupe_a_normal()
            let s = change.cell.style
            if s.bold { attrs |= loupe_a_bold() }
            if s.underline { attrs |= loupe_a_underline() }
            if s.reverse { attrs |= loupe_a_reverse() }
            if s.dim { attrs |= loupe_a_dim() }
            // Bright colours on an 8-colour terminal: the base colour, bold.
            if let i = s.foreground.index, i >= 8, i < 16, colorCount < 16 { attrs |= loupe_a_bold() }
            attr_set(attrs, pair(s), nil)
            var wide = change.cell.text.unicodeScalars.map { wchar_t(bitPattern: $0.value) }
            wide.append(0)
            mvaddwstr(Int32(change.y), Int32(change.x), wide)
        }
        if let cursor {
            curs_set(1)
            move(Int32(cursor.y), Int32(cursor.x))
        } else {
            curs_set(0)
        }
        refresh()
    }

    public func nextEvent(timeout: Int) -> Event? {
        wtimeout(loupe_stdscr(), Int32(timeout))
        var ch: wint_t = 0
        let result = wget_wch(loupe_stdscr(), &ch)
        if result == ERR { return nil }
        if result == KEY_CODE_YES {
            if let key = Self.key(code: Int32(ch)) { return .key(key) }
            switch Int32(ch) {
            case KEY_RESIZE: return .resize(width: size.width, height: size.height)
            case KEY_MOUSE:
                var event = MEVENT()
                guard getmouse(&event) == OK else { return nil }
                let x = Int(event.x), y = Int(event.y)
                if loupe_mouse_is_wheel_up(event.bstate) != 0 { return .mouse(MouseEvent(kind: .wheelUp, x: x, y: y)) }
                if loupe_mouse_is_wheel_down(event.bstate) != 0 { return .mouse(MouseEvent(kind: .wheelDown, x: x, y: y)) }
                if loupe_mouse_is_press(event.bstate) != 0 { return .mouse(MouseEvent(kind: .press, x: x, y: y)) }
                return nil
            default:
                return nil
            }
        }
        return Self.key(character: UInt32(ch)).map(Event.key)
    }

    /// The key of one of curses' key codes (`KEY_UP`, `KEY_NPAGE`, `KEY_F(5)`…), or nil.
    public static func key(code: Int32) -> Key? {
        switch code {
        case KEY_UP: return .up
        case KEY_DOWN: return .down
        case KEY_LEFT: return .left
        case KEY_RIGHT: return .right
        case KEY_NPAGE: return .pageDown
        case KEY_PPAGE: return .pageUp
        case KEY_HOME: return .home
        case KEY_END: return .end
        case KEY_BACKSPACE: return .backspace
        case KEY_DC: return .delete
        case KEY_BTAB: return .backTab
        case KEY_ENTER: return .enter
        default:
            for n in 1...12 where code == loupe_key_f(Int32(n)) { return .function(n) }
            return nil
        }
    }

    /// The key of a character `wget_wch` read (not a key code): Enter for CR and LF, Tab,
    /// Backspace for DEL and BS, Escape, Ctrl-A…Ctrl-Z, else the character; nil for a value that is
    /// no Unicode scalar.
    public static func key(character ch: UInt32) -> Key? {
        switch ch {
        case 10, 13: return .enter
        case 9: return .tab
        case 127, 8: return .backspace
        case 27: return .escape
        case 1...26: return .control(Character(Unicode.Scalar(UInt8(ch) + 96)))
        default:
            guard let scalar = Unicode.Scalar(ch) else { return nil }
            return .character(Character(scalar))
        }
    }
}
