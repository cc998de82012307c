import DisplayText
import TerminalKit

/// The add form (``AddForm``): one field a line — its name (`*` when required), its text, what
/// goes in it — the selected field highlighted with the cursor in it, a refusal's reason last.
struct FormPopup: CursorWidget {
    let title: String
    let fields: [AddForm.Field]
    let selection: Int
    /// The cursor's place in the selected field's text, in characters.
    let cursor: Int
    let error: String?
    let theme: Theme

    /// Where it goes on `screen`.
    func area(in screen: Rect) -> Rect {
        screen.centered(width: min(screen.width - 2, 100), height: min(screen.height - 2, fields.count + (error == nil ? 3 : 5)))
    }

    /// Draws the form; returns where the cursor goes.
    func draw(_ screen: Rect, _ buffer: inout Buffer) -> (x: Int, y: Int)? {
        let area = area(in: screen)
        buffer.fill(area)
        theme.popupBlock(title).render(area, &buffer)
        let inner = Block.inner(area)
        guard inner.height >= 1, inner.width >= 20 else { return nil }
        let nameWidth = min(24, (fields.map { DisplayText.width(of: $0.name) + 2 }.max() ?? 8))
        // The notes as wide as the longest (up to half of what the names leave), the text the rest.
        let noteWidth = min((inner.width - nameWidth) / 2, fields.map { DisplayText.width(of: $0.note) }.max() ?? 0)
        let textWidth = max(8, inner.width - nameWidth - noteWidth - 1)
        let rows = inner.height - (error == nil ? 1 : 3)
        let top = ScrollWindow.top(0, keeping: selection, height: rows, count: fields.count)
        var cursorAt: (x: Int, y: Int)?
        for (i, field) in fields.enumerated().dropFirst(top).prefix(rows) {
            let y = inner.y + i - top
            let selected = i == selection
            buffer.put(DisplayText.pad(field.name + (field.required ? "*" : ""), to: nameWidth), x: inner.x, y: y, style: selected ? theme.header : .plain)
            let x = inner.x + nameWidth
            // The selected field's text ends at the cursor when it is longer than the field.
            let chars = Array(field.text)
            let start = selected ? max(0, min(cursor, chars.count) - (textWidth - 1)) : 0
            let shown = DisplayText.fit(String(chars[start...]), width: textWidth)
            buffer.put(DisplayText.pad(shown, to: textWidth), x: x, y: y, style: selected ? theme.selection : theme.selectionUnfocused, maxWidth: textWidth)
            buffer.put(DisplayText.fit(field.note, width: max(0, inner.maxX - x - textWidth - 1)), x: x + textWidth + 1, y: y, style: theme.dim)
            if selected { cursorAt = (min(x + DisplayText.width(of: DisplayText.fit(String(chars[start..<min(cursor, chars.count)]), width: textWidth)), x + textWidth - 1), y) }
        }
        if let error {
            buffer.put(DisplayText.fit("not added: " + error, width: inner.width), x: inner.x, y: inner.maxY - 2, style: theme.error, maxWidth: inner.width)
        }
        buffer.put(DisplayText.fit("\(fields.count.counting("field")); * required", width: inner.width), x: inner.x, y: inner.maxY - 1, style: theme.dim)
        return cursorAt
    }
}
