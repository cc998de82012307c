import Foundation

/// The status line's messages kept (`M`): a message is replaced by the next, often before it
/// could be read whole, and a long one is cut to the screen's width. The last 200, with the time
/// each was shown.
extension Browser {
    /// How many messages are kept.
    static let messagesKept = 200

    /// Keeps `text`, shown on the status line now.
    func logMessage(_ text: String) {
        messageLog.append((Date(), text))
        if messageLog.count > Browser.messagesKept { messageLog.removeFirst(messageLog.count - Browser.messagesKept) }
    }

    /// Opens the log over the screen, scrolled to its end.
    func showMessageLog() {
        let clock = DateFormatter()
        clock.dateFormat = "HH:mm:ss"
        let lines = messageLog.isEmpty ? ["no messages yet"] : messageLog.map { "\(clock.string(from: $0.at))  \($0.text)" }
        dialog = Dialog(purpose: .log, title: "Messages — \(messageLog.count) kept, newest last", lines: lines,
                        choices: "Esc/Enter close · PgUp/PgDn scroll", top: max(0, lines.count - 12))
    }
}
