import DisplayText
import TerminalKit

/// The types pane: each type's name and count, the selected one highlighted.
struct TypesPane: Widget {
    struct Row { let name: String; let count: String }
    let rows: [Row]
    /// The selected row (nil while nothing can be selected: the store is loading).
    let selection: Int?
    /// The first row shown (``ScrollWindow``).
    let top: Int
    let focused: Bool
    let theme: Theme

    func render(_ area: Rect, _ buffer: inout Buffer) {
        theme.paneBlock("Types", focused: focused).render(area, &buffer)
        let inner = Block.inner(area)
        guard inner.height > 0 else { return }
        for (i, row) in rows.enumerated().dropFirst(top).prefix(inner.height) {
            let name = DisplayText.pad(row.name, to: max(1, inner.width - row.count.count - 1))
            let style = i == selection ? (focused ? theme.selection : theme.selectionUnfocused) : Style.plain
            buffer.put(name + " " + row.count, x: inner.x, y: inner.y + i - top, style: style, maxWidth: inner.width)
        }
    }
}
