import Foundation
import TerminalKit

/// A replayable list of keys and commands (VisiData's command log idea), for tests and screenshots.
///
/// One step per line:
/// - `j j <Enter> <Tab> <C-a> <S-Tab> <Space>` — keys separated by spaces (`<Up>`, `<Down>`,
///   `<Left>`, `<Right>`, `<PgUp>`, `<PgDn>`, `<Home>`, `<End>`, `<Esc>`, `<Backspace>`, `<Del>`,
///   `<Colon>`, `<Slash>`, `<Hash>`);
///   a word of several characters types them one after another;
/// - `:Book where pages > 300` — focuses the REPL, types the statement and presses Enter;
/// - `> count Book` — types the text as it is (spaces included) and presses Enter, without `:`
///   first: the next statement at a REPL that already has the keyboard;
/// - `/text` — searches for `text`;
/// - `resize 100x30`, `click X Y`, `wheel up|down X Y`;
/// - `wait 1.5` — waits that many seconds (at most 60) as a quiet terminal would: a live store
///   shows what another process commits meanwhile;
/// - blank lines and lines starting with `#` are ignored.
public enum PlayScript {
    public enum Step: Equatable {
        case event(Event)
        case resize(width: Int, height: Int)
        case wait(seconds: Double)
    }

    public struct ParseError: Error, CustomStringConvertible {
        public let line: Int
        public let reason: String
        public var description: String { "play script line \(line): \(reason)" }
    }

    static let named: [String: Key] = [
        "enter": .enter, "tab": .tab, "s-tab": .backTab, "backspace": .backspace, "bs": .backspace, "del": .delete,
        "up": .up, "down": .down, "left": .left, "right": .right, "pgup": .pageUp, "pgdn": .pageDown,
        "home": .home, "end": .end, "esc": .escape, "space": .character(" "), "colon": .character(":"),
        "slash": .character("/"), "hash": .character("#"),
    ]

    public static func parse(_ text: String) throws -> [Step] {
        var steps: [Step] = []
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.hasSuffix("\r") ? String(raw.dropLast()) : String(raw)
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            if line.hasPrefix("> ") {
                for c in line.dropFirst(2) { steps.append(.event(.key(.character(c)))) }
                steps.append(.event(.key(.enter)))
                continue
            }
            if line.hasPrefix(":") || line.hasPrefix("/") {
                steps.append(.event(.key(.character(line.first!))))
                for c in line.dropFirst() { steps.append(.event(.key(.character(c)))) }
                steps.append(.event(.key(.enter)))
                continue
            }
            let words = trimmed.split(separator: " ").map(String.init)
            switch words.first {
            case "resize":
                let size = words.count == 2 ? words[1].split(separator: "x").compactMap { Int($0) } : []
                guard size.count == 2, size[0] > 0, size[1] > 0 else { throw ParseError(line: n + 1, reason: "use resize WIDTHxHEIGHT") }
                steps.append(.resize(width: size[0], height: size[1]))
                continue
            case "click":
                guard words.count == 3, let x = Int(words[1]), let y = Int(words[2]) else { throw ParseError(line: n + 1, reason: "use click X Y") }
                steps.append(.event(.mouse(MouseEvent(kind: .press, x: x, y: y))))
                continue
            case "wait":
                guard words.count == 2, let seconds = Double(words[1]), seconds >= 0, seconds <= 60 else {
                    throw ParseError(line: n + 1, reason: "use wait SECONDS (0 to 60)")
                }
                steps.append(.wait(seconds: seconds))
                continue
            case "wheel":
                guard words.count == 4, ["up", "down"].contains(words[1]), let x = Int(words[2]), let y = Int(words[3]) else {
                    throw ParseError(line: n + 1, reason: "use wheel up|down X Y")
                }
                steps.append(.event(.mouse(MouseEvent(kind: words[1] == "up" ? .wheelUp : .wheelDown, x: x, y: y))))
                continue
            default: break
            }
            for word in words {
                if word.hasPrefix("<"), word.hasSuffix(">"), word.count > 2 {
                    let name = String(word.dropFirst().dropLast()).lowercased()
                    if let key = named[name] { steps.append(.event(.key(key))); continue }
                    if name.hasPrefix("c-"), name.count == 3 { steps.append(.event(.key(.control(name.last!)))); continue }
                    throw ParseError(line: n + 1, reason: "unknown key \(word)")
                }
                for c in word { steps.append(.event(.key(.character(c)))) }
            }
        }
        return steps
    }
}

extension Browser {
    /// Replays steps without a terminal, drawing each frame into a buffer of the given size, and
    /// returns the last frame. A `wait` step is `waiting`'s to spend (the executable looks at the
    /// store's file meanwhile, as live mode does); without it, a sleep.
    public func play(_ steps: [PlayScript.Step], width: Int, height: Int, waiting: ((Double) -> Void)? = nil) -> Buffer {
        var size = (width, height)
        var buffer = Buffer(width: size.0, height: size.1)
        render(into: &buffer)
        for step in steps {
            switch step {
            case .resize(let w, let h): size = (w, h)
            case .wait(let seconds): if let waiting { waiting(seconds) } else { Thread.sleep(forTimeInterval: seconds) }
            case .event(let event): if !handle(event) { break }
            }
            buffer = Buffer(width: size.0, height: size.1)
            render(into: &buffer)
            if wantsQuit { break }
        }
        return buffer
    }
}
