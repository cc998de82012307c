import DisplayText
import TerminalKit

/// The status line: parts joined by `·`, the message or key hint on the right. When the line
/// is too narrow, whole parts are left out, least useful first, never cut mid-word: parts kept
/// at 6 or more always stay (the row, running work, pending counts).
struct StatusLine: Widget {
    struct Part { let text: String; let keep: Int }
    let parts: [Part]
    /// Said after the parts while there is room (how to commit pending edits).
    let hint: String?
    /// The right-hand side: the message, or the key hint when there is none.
    let right: String
    /// True when `right` is a message (it gets up to half the line; a hint only 16 cells).
    let isMessage: Bool
    let theme: Theme

    func render(_ area: Rect, _ buffer: inout Buffer) {
        let width = area.width, y = area.y
        buffer.fill(Rect(x: area.x, y: y, width: width, height: 1), style: theme.status)
        var parts = self.parts, hint = self.hint
        let rightRoom = isMessage ? min(DisplayText.width(of: right), width / 2) : min(DisplayText.width(of: right), 16)
        func text() -> String { " " + parts.map(\.text).joined(separator: " · ") + (hint.map { " " + $0 } ?? "") }
        while DisplayText.width(of: text()) > width - rightRoom - 2 {
            if hint != nil { hint = nil; continue }
            guard let lowest = parts.indices.filter({ parts[$0].keep < 6 }).min(by: { parts[$0].keep < parts[$1].keep }) else { break }
            parts.remove(at: lowest)
        }
        let used = buffer.put(text(), x: area.x, y: y, style: theme.status, maxWidth: width)
        let rw = min(DisplayText.width(of: right), max(0, width - used - 2))
        if rw > 0 { buffer.put(DisplayText.fit(right, width: rw), x: area.x + width - rw, y: y, style: theme.status, maxWidth: rw) }
    }
}

/// The top line: where the user is, each step of the sheet stack shortened to 40 cells and the
/// whole cut from the left, so that the current place always shows.
struct Breadcrumb: Widget {
    let steps: [String]
    let theme: Theme

    func render(_ area: Rect, _ buffer: inout Buffer) {
        let parts = steps.map { DisplayText.fit($0, width: 40) }
        let text = parts.isEmpty ? "Loupe" : parts.joined(separator: " › ")
        buffer.put(" " + DisplayText.fitFromEnd(text, width: area.width - 2), x: area.x, y: area.y, style: theme.header, maxWidth: area.width)
    }
}
