import DisplayText
import TerminalKit

/// The relation graph (`v`): the object in a box in the middle, its relations on the right and
/// its backlinks on the left, each branch joined to the box by a stem; the selected node
/// highlighted (``Browser/graphNodes()`` makes the nodes).
struct GraphPane: Widget {
    let title: String
    /// The object's label, in the middle.
    let label: String
    let nodes: [Browser.GraphNode]
    let selection: Int
    let theme: Theme

    func render(_ area: Rect, _ buffer: inout Buffer) {
        theme.popupBlock(title).render(area, &buffer)
        let inner = Block.inner(area)
        guard inner.width >= 30, inner.height >= 5 else { return }
        let columnWidth = (inner.width - 2) / 3
        let label = DisplayText.fit(self.label, width: columnWidth - 4)
        let boxWidth = DisplayText.width(of: label) + 4
        let box = Rect(x: inner.x + columnWidth + 1 + (columnWidth - boxWidth) / 2, y: inner.y + inner.height / 2 - 1, width: boxWidth, height: 3)
        Block(title: "", style: theme.header).render(box, &buffer)
        buffer.put(label, x: box.x + 2, y: box.y + 1, style: theme.header)
        let indexed = nodes.enumerated().map { (offset: $0.offset, node: $0.element) }
        place(indexed.filter { !$0.node.isBacklink }, left: false, inner: inner, box: box, columnWidth: columnWidth, &buffer)
        place(indexed.filter { $0.node.isBacklink }, left: true, inner: inner, box: box, columnWidth: columnWidth, &buffer)
        if nodes.isEmpty { buffer.put("no relations and no backlinks", x: inner.x + 1, y: inner.maxY - 1, style: theme.dim) }
    }

    /// One side's nodes, scrolled so the selection shows, and the stem joining them to the box.
    private func place(_ list: [(offset: Int, node: Browser.GraphNode)], left: Bool, inner: Rect, box: Rect, columnWidth: Int, _ buffer: inout Buffer) {
        guard !list.isEmpty else { return }
        let height = inner.height
        var first = 0
        if let sel = list.firstIndex(where: { $0.offset == selection }), sel >= height { first = sel - height + 1 }
        let shown = Array(list.dropFirst(first).prefix(height))
        let top = inner.y + max(0, (height - shown.count) / 2)
        let stemX = left ? box.x - 2 : box.maxX + 1
        for (i, item) in shown.enumerated() {
            let y = top + i
            let indent = item.node.depth * 2
            let text = GraphView.fitKeepingCount(item.node.text, width: max(4, columnWidth - 4 - indent))
            let style = item.offset == selection ? theme.selection : (item.node.depth == 0 ? theme.relation : Style.plain)
            if left {
                let x = inner.x + indent
                buffer.put(text, x: x, y: y, style: style)
                let end = x + DisplayText.width(of: text) + 1
                if item.node.depth == 0, stemX > end { buffer.put(String(repeating: "─", count: stemX - end), x: end, y: y, style: theme.border) }
            } else {
                buffer.put(text, x: stemX + 2 + indent, y: y, style: style)
                if item.node.depth == 0 { buffer.put("─", x: stemX + 1, y: y, style: theme.border) }
            }
        }
        drawStem(branchRows: Set(shown.enumerated().filter { $0.element.node.depth == 0 }.map { top + $0.offset }), x: stemX, joinY: box.y + 1, left: left, &buffer)
    }

    /// The stem joining the branches (depth-0 rows) to the box's middle row: each cell of it
    /// drawn with the glyph of the lines that meet there.
    private func drawStem(branchRows: Set<Int>, x stemX: Int, joinY: Int, left: Bool, _ buffer: inout Buffer) {
        let rows = branchRows.union([joinY])
        let stemTop = rows.min()!, stemBottom = rows.max()!
        for y in stemTop...stemBottom {
            // Towards the branches (outwards) and towards the box (inwards).
            let outward = branchRows.contains(y), inward = y == joinY
            let glyph = GraphView.junction(up: y > stemTop, down: y < stemBottom, left: left ? outward : inward, right: left ? inward : outward)
            buffer.put(glyph, x: stemX, y: y, style: theme.border)
        }
        buffer.put("─", x: left ? stemX + 1 : stemX - 1, y: joinY, style: theme.border)
    }
}
