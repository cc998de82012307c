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
                var single = DetailLink(label: graph.label(of: target), targets: [target], toMany: false, crumb: graph.label(of: target), relation: nil)
                single.isObject = true
                nodes.append(GraphNode(text: Sheet.label(target, in: graph), depth: depth, isBacklink: backlink, link: single))
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
