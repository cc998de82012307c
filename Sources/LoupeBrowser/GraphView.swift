import DisplayText
import LoupeModel
import TerminalKit

/// The relation graph view: the selected object in the middle, its backlinks on the left and its
/// relations on the right, grouped by name with counts, out to 1–3 hops; every node selectable.
extension Browser {
    /// One selectable node of the graph view.
    struct GraphNode {
        let text: String
        let depth: Int
        let isBacklink: Bool
        let link: DetailLink?
    }

    /// The nodes, in selection order: relations (with their targets and, at 3 hops, the targets'
    /// own relations), then backlinks likewise.
    func graphNodes() -> [GraphNode] {
        guard let graph, let origin = selectedObject else { return [] }
        var nodes: [GraphNode] = []
        func expand(_ targets: [ObjectRef], depth: Int, backlink: Bool, total: Int? = nil) {
            guard graphHops > depth else { return }
            for target in targets.prefix(4) {
                let single = DetailLink(label: graph.label(of: target), targets: [target], toMany: false, crumb: graph.label(of: target), relation: nil)
                nodes.append(GraphNode(text: graph.label(of: target), depth: depth, isBacklink: backlink, link: single))
                if graphHops > depth + 1 {
                    let t = graph.table(target)
                    for relation in t.relations {
                        let n = relation.count(of: Int(target.row))
                        // Not back to the object the graph is of: that is where this branch came from.
                        if n == 1, relation.targets(of: Int(target.row)).first == origin { continue }
                        if n > 0 { nodes.append(GraphNode(text: "\(relation.name) (\(n))", depth: depth + 1, isBacklink: backlink,
                                                          link: DetailLink(label: relation.name, targets: Array(relation.targets(of: Int(target.row))),
                                                                           toMany: relation.isToMany, crumb: graph.label(of: target) + " › " + relation.name, relation: nil))) }
                    }
                }
            }
            let count = total ?? targets.count
            if count > 4 { nodes.append(GraphNode(text: "… \(count - 4) more", depth: depth, isBacklink: backlink, link: nil)) }
        }
        // The selected object's links as the detail pane lists them (so that, in paged mode, a
        // link a window cut shows the store's count and opens whole).
        for link in detailLinks() {
            let isBacklink = link.relation == nil
            let name = isBacklink ? String(link.label.dropFirst("@links.".count)) : link.label
            nodes.append(GraphNode(text: "\(name) (\(linkCount(link, origin: origin)))", depth: 0, isBacklink: isBacklink, link: link))
            expand(link.targets, depth: 1, backlink: isBacklink, total: pagedTotal(of: link, origin: origin))
        }
        return nodes
    }

    func renderGraph(_ buffer: inout Buffer, _ area: Rect) {
        guard let graph, let origin = selectedObject else { return }
        let inner = drawBlock(&buffer, area, title: "Graph of \(graph.label(of: origin)) — \(graphHops) hop\(graphHops == 1 ? "" : "s") (+/- hops, Enter opens, v closes)",
                              style: theme.focusedBorder, titleStyle: theme.header)
        guard inner.width >= 30, inner.height >= 5 else { return }
        let nodes = graphNodes()
        graphSelection = max(0, min(graphSelection, nodes.count - 1))
        let columnWidth = (inner.width - 2) / 3
        let centerX = inner.x + columnWidth + 1
        let label = DisplayText.fit(graph.label(of: origin), width: columnWidth - 4)
        let boxWidth = DisplayText.width(of: label) + 4
        let centerY = inner.y + inner.height / 2 - 1
        let boxX = centerX + (columnWidth - boxWidth) / 2
        _ = drawBlock(&buffer, Rect(x: boxX, y: centerY, width: boxWidth, height: 3), title: "", style: theme.header)
        buffer.put(label, x: boxX + 2, y: centerY + 1, style: theme.header)

        func place(_ list: [(offset: Int, node: GraphNode)], left: Bool) {
            guard !list.isEmpty else { return }
            // Scroll so the selection is visible.
            let height = inner.height
            var first = 0
            if let sel = list.firstIndex(where: { $0.offset == graphSelection }), sel >= height { first = sel - height + 1 }
            let shown = Array(list.dropFirst(first).prefix(height))
            let top = inner.y + max(0, (height - shown.count) / 2)
            let stemX = left ? boxX - 2 : boxX + boxWidth + 1
            for (i, item) in shown.enumerated() {
                let y = top + i
                let indent = item.node.depth * 2
                let textWidth = columnWidth - 4 - indent
                let text = GraphView.fitKeepingCount(item.node.text, width: max(4, textWidth))
                let selected = item.offset == graphSelection
                let style = selected ? theme.selection : (item.node.depth == 0 ? theme.relation : Style.plain)
                if left {
                    let x = inner.x + indent
                    buffer.put(text, x: x, y: y, style: style)
                    if item.node.depth == 0 {
                        let end = x + DisplayText.width(of: text) + 1
                        if stemX > end { buffer.put(String(repeating: "─", count: stemX - end), x: end, y: y, style: theme.border) }
                    }
                } else {
                    let x = stemX + 2 + indent
                    buffer.put(text, x: x, y: y, style: style)
                    if item.node.depth == 0 { buffer.put("─", x: stemX + 1, y: y, style: theme.border) }
                }
            }
            // The stem joining the branches (depth-0 rows) to the box's middle row: each cell of
            // it drawn with the glyph of the lines that meet there.
            let branchRows = Set(shown.enumerated().filter { $0.element.node.depth == 0 }.map { top + $0.offset })
            let joinY = centerY + 1
            let rows = branchRows.union([joinY])
            let stemTop = rows.min()!, stemBottom = rows.max()!
            for y in stemTop...stemBottom {
                let branch = branchRows.contains(y), join = y == joinY
                // Towards the branches (outwards) and towards the box (inwards).
                let outward = branch, inward = join
                let glyph = GraphView.junction(up: y > stemTop, down: y < stemBottom,
                                               left: left ? outward : inward, right: left ? inward : outward)
                buffer.put(glyph, x: stemX, y: y, style: theme.border)
            }
            buffer.put("─", x: left ? stemX + 1 : stemX - 1, y: joinY, style: theme.border)
        }
        let indexed = nodes.enumerated().map { (offset: $0.offset, node: $0.element) }
        place(indexed.filter { !$0.node.isBacklink }, left: false)
        place(indexed.filter { $0.node.isBacklink }, left: true)
        if nodes.isEmpty { buffer.put("no relations and no backlinks", x: inner.x + 1, y: inner.maxY - 1, style: theme.dim) }
    }
}

/// Box-drawing and text for the graph.
public enum GraphView {
    /// A node's text in `width` cells: a group's name is cut before its count (`Track.Album (3)`
    /// becomes `Track.Alb… (3)`), never the count.
    public static func fitKeepingCount(_ text: String, width: Int) -> String {
        guard DisplayText.width(of: DisplayText.fit(text, width: width + 1)) > width,
              text.hasSuffix(")"), let open = text.lastIndex(of: "("), text[text.index(after: open)..<text.index(before: text.endIndex)].allSatisfy(\.isNumber)
        else { return DisplayText.fit(text, width: width) }
        let count = " " + String(text[open...])
        let room = width - DisplayText.width(of: count)
        guard room >= 2 else { return DisplayText.fit(text, width: width) }
        return DisplayText.fit(String(text[..<open]).trimmingCharacters(in: .whitespaces), width: room) + count
    }

    /// The glyph where lines meet: up, down, left, right.
    static func junction(up: Bool, down: Bool, left: Bool, right: Bool) -> String {
        switch (up, down, left, right) {
        case (true, true, true, true): return "┼"
        case (true, true, true, false): return "┤"
        case (true, true, false, true): return "├"
        case (true, false, true, true): return "┴"
        case (false, true, true, true): return "┬"
        case (true, true, false, false): return "│"
        case (false, false, true, true): return "─"
        case (false, true, false, true): return "┌"
        case (false, true, true, false): return "┐"
        case (true, false, false, true): return "└"
        case (true, false, true, false): return "┘"
        case (_, _, true, false), (_, _, false, true): return "─"
        default: return "│"
        }
    }
}
