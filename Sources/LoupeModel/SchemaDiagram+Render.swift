/// The two texts a diagram renders as.
extension SchemaDiagram {
    /// A Mermaid entity-relationship diagram (GitHub renders it in a ```` ```mermaid ```` block):
    /// each type an entity with its attributes (kind, name, PK/FK, a comment with the declared type
    /// and what the name was when it is not a plain identifier), each edge a crow's-foot line,
    /// dashed when inferred; inheritance is a line labelled `inherits`.
    public var mermaid: String {
        let ids = Self.identifiers(entities.map(\.name))
        var lines = ["erDiagram"]
        for (i, e) in entities.enumerated() {
            let label = ids[i] == e.name ? ids[i] : "\(ids[i])[\"\(Self.mermaidQuoted(e.name))\"]"
            lines.append("    \(label) {")
            for a in e.attributes {
                let keys = [a.isPrimaryKey ? "PK" : nil, a.isForeignKey ? "FK" : nil].compactMap { $0 }.joined(separator: ", ")
                let name = Self.identifier(a.name)
                var comment = [a.declaredType.isEmpty ? nil : a.declaredType, a.isOptional ? "optional" : nil].compactMap { $0 }
                if name != a.name { comment.insert(a.name, at: 0) }
                lines.append("        \(Self.identifier(a.kind.replacingOccurrences(of: "|", with: "_or_"))) \(name)"
                             + (keys.isEmpty ? "" : " \(keys)") + (comment.isEmpty ? "" : " \"\(Self.mermaidQuoted(comment.joined(separator: ", ")))\""))
            }
            lines.append("    }")
        }
        for edge in edges {
            let line = edge.isInferred ? ".." : "--"
            lines.append("    \(ids[edge.source]) \(Self.crowsFoot(edge.sourceEnd, left: true))\(line)\(Self.crowsFoot(edge.targetEnd, left: false)) \(ids[edge.target]) : \"\(Self.mermaidQuoted(edge.label))\"")
        }
        return lines.joined(separator: "\n")
    }

    /// A Graphviz digraph (`dot -Tsvg`): each type a table of its attributes, each relation an
    /// arrow from the type holding it with its cardinalities at the ends, dashed when inferred;
    /// many-to-many a double-ended crow's-foot arrow named by its join table; inheritance a
    /// hollow arrow to the parent.
    public var dot: String {
        var lines = ["digraph schema {", "    graph [rankdir=LR];", "    node [shape=plain, fontname=\"Helvetica\"];", "    edge [fontname=\"Helvetica\", fontsize=10];"]
        for (i, e) in entities.enumerated() {
            let h = Self.htmlEscaped
            var rows = ["<tr><td bgcolor=\"#dde4ee\"><b>\(h(e.name))</b> (\(e.count)\(e.note.map { ", \(h($0))" } ?? ""))</td></tr>"]
            for a in e.attributes {
                let keys = [a.isPrimaryKey ? "PK" : nil, a.isForeignKey ? "FK" : nil].compactMap { $0 }.joined(separator: ", ")
                let detail = [a.declaredType.isEmpty ? nil : a.declaredType, keys.isEmpty ? nil : keys].compactMap { $0 }.joined(separator: " ")
                rows.append("<tr><td align=\"left\">\(h(a.name)) : \(h(a.kind))\(a.isOptional ? "?" : "")\(detail.isEmpty ? "" : "  [\(h(detail))]")</td></tr>")
            }
            lines.append("    t\(i) [label=<<table border=\"0\" cellborder=\"1\" cellspacing=\"0\" cellpadding=\"4\">\(rows.joined())</table>>];")
        }
        for edge in edges {
            var attributes: [String]
            switch edge.kind {
            case .inheritance: attributes = ["arrowhead=empty", "label=\"inherits\""]
            case .manyToMany: attributes = ["dir=both", "arrowhead=crow", "arrowtail=crow"]
            case .relation: attributes = ["taillabel=\"\(edge.sourceEnd.rawValue)\"", "headlabel=\"\(edge.targetEnd.rawValue)\""]
            }
            if edge.kind != .inheritance { attributes.append("label=\"\(Self.dotQuoted(edge.label))\"") }
            if edge.isInferred { attributes.append("style=dashed") }
            lines.append("    t\(edge.source) -> t\(edge.target) [\(attributes.joined(separator: ", "))];")
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }
}

extension SchemaDiagram.Edge {
    /// True for a relation, or a join table's, that the store does not declare.
    public var isInferred: Bool {
        switch kind {
        case .relation(_, let inferred), .manyToMany(_, let inferred): return inferred
        case .inheritance: return false
        }
    }

    /// What the edge is labelled: the relation's name, `via` the join table, `inherits`.
    public var label: String {
        switch kind {
        case .relation(let name, let inferred): return name + (inferred ? " (inferred)" : "")
        case .manyToMany(let through, let inferred): return "via \(through)" + (inferred ? " (inferred)" : "")
        case .inheritance: return "inherits"
        }
    }
}

extension SchemaDiagram {
    /// A Mermaid identifier for `name`: letters, digits and `_` (others become `_`), not starting
    /// with a digit.
    static func identifier(_ name: String) -> String {
        var id = String(name.unicodeScalars.map { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") ? Character($0) : "_" })
        if id.isEmpty || id.first!.isNumber { id = "_" + id }
        return id
    }

    /// An identifier for each name, made unique by a number where two would be the same.
    static func identifiers(_ names: [String]) -> [String] {
        var used: Set<String> = []
        return names.map { name in
            let base = identifier(name)
            var id = base, n = 2
            while !used.insert(id).inserted { id = "\(base)_\(n)"; n += 1 }
            return id
        }
    }

    /// Text inside a Mermaid quoted string: its double quotes as Mermaid's `#quot;`.
    static func mermaidQuoted(_ text: String) -> String {
        text.replacingOccurrences(of: "#", with: "#35;").replacingOccurrences(of: "\"", with: "#quot;")
    }

    /// Text inside a DOT quoted string: backslashes and double quotes escaped.
    static func dotQuoted(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }

    /// Text inside a DOT HTML label: `&`, `<`, `>` and `"` as entities.
    static func htmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// Mermaid's crow's-foot marker for one end (`left`: the marker written before the line).
    static func crowsFoot(_ end: Cardinality, left: Bool) -> String {
        switch end {
        case .zeroOrOne: return left ? "|o" : "o|"
        case .exactlyOne: return "||"
        case .many: return left ? "}o" : "o{"
        }
    }
}
