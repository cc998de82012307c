import DisplayText
import Foundation

extension ObjectGraph {
    /// The inferred schema of one type as text, as `.schema` and `loupe schema` print it:
    /// attributes with the kinds seen and how many objects have them, relations with their target
    /// types, cardinality and broken links (``TypeTable/brokenLinkCount(relation:)``), and the
    /// relations of other types that point here. Names are escaped (``DisplayText``): a name is
    /// data from the file.
    public func schemaText(of table: TypeTable) -> String {
        schemaText(of: table, count: table.count, attributesFrom: table,
                   brokenLinks: Dictionary(uniqueKeysWithValues: table.relations.indices.map { ($0, table.brokenLinkCount(relation: $0)) }))
    }

    /// The schema of a type of a store read a page at a time, as ``schemaText(of:)`` prints it
    /// after a whole load: the type's `count` objects, its relations and backlinks as this graph
    /// (the store's schema) has them, and its attributes as `sample` found them (the same type in
    /// a graph holding its first objects): the kinds seen and how many of those objects have each.
    /// When the sample holds every object of the type, the text is a whole load's; else its first
    /// line and each attribute's say how many objects the sample holds. Broken links are those
    /// `brokenLinks` counts, by relation index; a to-one relation it leaves out says they are not
    /// counted (nil: the store counts none without a load, and nothing is said).
    public func schemaText(of table: TypeTable, count: Int, sample: TypeTable, brokenLinks: [Int: Int]? = nil) -> String {
        schemaText(of: table, count: count, attributesFrom: sample, brokenLinks: brokenLinks ?? [:], saysUncounted: brokenLinks != nil)
    }

    /// The note on a to-one relation whose broken links a store read a page at a time did not count.
    public static let brokenLinksNotCounted = "  (broken links not counted over the memory budget)"

    private func schemaText(of table: TypeTable, count: Int, attributesFrom sample: TypeTable, brokenLinks: [Int: Int], saysUncounted: Bool = false) -> String {
        let e = DisplayText.escaped
        let readOnly = table.isView ? " (read-only view)" : !table.isReadOnly ? "" : table.keyPolicy == .rowNumber ? " (read-only, rows numbered)" : " (read-only)"
        let sampled = sample.count < count
        var lines = ["\(e(table.name.rawValue))\(readOnly) — \(count.counting("object"))" + (sampled ? " (attributes as its first \(sample.count) have them)" : "")]
        if let s = table.lineage.supertype { lines.append("  inherits from \(e(types[s].name.rawValue)) (a query on \(e(types[s].name.rawValue)) includes this type's objects)") }
        if !table.lineage.descendants.isEmpty {
            lines.append("  subtypes: \(table.lineage.descendants.map { e(types[$0].name.rawValue) }.joined(separator: ", ")) (a query on \(e(table.name.rawValue)) includes their objects)")
        }
        for note in table.lineage.notes { lines.append("  note: \(e(note))") }
        let names = sample.attributes.map { e($0.name) } + table.relations.map { e($0.name) }
        let width = max(4, names.map { DisplayText.width(of: $0) }.max() ?? 4)
        func pad(_ s: String) -> String { s + String(repeating: " ", count: max(0, width - DisplayText.width(of: s))) }
        lines.append("  attributes:")
        if sample.attributes.isEmpty { lines.append("    (none)") }
        for a in sample.attributes {
            var line = "    \(pad(e(a.name)))  \(a.kinds.description)"
            if let declared = a.declaredType, !declared.isEmpty { line += "  [\(e(declared))\(a.isPrimaryKey ? " PRIMARY KEY" : "")]" }
            line += "  in \(a.presentCount) of \(sampled ? "first \(sample.count)" : "\(count)")"
            lines.append(line)
        }
        lines.append("  relations:")
        if table.relations.isEmpty { lines.append("    (none)") }
        for (index, r) in table.relations.enumerated() {
            let targets = r.targetTypes.map { e(types[$0].name.rawValue) }.joined(separator: "|")
            var line = "    \(pad(e(r.name)))  → \(targets.isEmpty ? "?" : targets)  \(r.isToMany ? "to-many" : "to-one")"
            if !r.aliases.isEmpty { line += "  (also \(r.aliases.map(e).joined(separator: ", ")))" }
            if r.isInferred { line += "  (inferred)" }
            let broken = brokenLinks[index] ?? 0
            if broken > 0 { line += "  (\(broken) broken link\(broken == 1 ? "" : "s"): keys naming no \(targets))" }
            if saysUncounted, brokenLinks[index] == nil, !r.isToMany { line += Self.brokenLinksNotCounted }
            lines.append(line)
        }
        lines.append("  backlinks:")
        if table.backlinks.isEmpty { lines.append("    (none)") }
        for b in table.backlinks {
            let source = types[b.sourceType]
            lines.append("    @links.\(e(source.name.rawValue)).\(e(source.relations[b.relation].name))")
        }
        return lines.joined(separator: "\n")
    }

    /// One object as text, as `loupe show` prints it: attributes, relations with their targets,
    /// and backlinks grouped by `Type.relation` with counts. Names and values are escaped.
    public func describe(_ ref: ObjectRef, listLimit: Int = 20) -> String {
        let e = DisplayText.escaped
        let table = self.table(ref)
        let row = Int(ref.row)
        var lines = [e(label(of: ref))]
        let names = table.attributes.map { e($0.name) } + table.relations.map { e($0.name) }
        let width = max(4, names.map { DisplayText.width(of: $0) }.max() ?? 4)
        func pad(_ s: String) -> String { s + String(repeating: " ", count: max(0, width - DisplayText.width(of: s))) }
        lines.append("  attributes:")
        for (i, a) in table.attributes.enumerated() {
            lines.append("    \(pad(e(a.name)))  \(e(ValueFormatter.plain(table.value(row: row, attribute: i))))")
        }
        lines.append("  relations:")
        if table.relations.isEmpty { lines.append("    (none)") }
        for (index, r) in table.relations.enumerated() {
            let targets = r.targets(of: row)
            if !r.isToMany {
                let broken = table.brokenLink(row: row, relation: index).map { "✗ \(e(ValueFormatter.plain($0))) (broken link: no such \(e(types[r.targetTypes.first ?? 0].name.rawValue)))" }
                lines.append("    \(pad(e(r.name)))  → \(targets.first.map { e(label(of: $0)) } ?? broken ?? "null")")
            } else {
                let shown = targets.prefix(listLimit).map { "#\(e(id(of: $0).description))" }.joined(separator: ", ")
                lines.append("    \(pad(e(r.name)))  → [\(targets.count)] \(shown)\(targets.count > listLimit ? ", …" : "")")
            }
        }
        lines.append("  backlinks:")
        let groups = backlinks(of: ref)
        if groups.isEmpty { lines.append("    (none)") }
        for g in groups {
            let shown = g.sources.prefix(listLimit).map { "#\(e(id(of: $0).description))" }.joined(separator: ", ")
            lines.append("    \(e(g.key))  [\(g.sources.count)] \(shown)\(g.sources.count > listLimit ? ", …" : "")")
        }
        return lines.joined(separator: "\n")
    }
}
