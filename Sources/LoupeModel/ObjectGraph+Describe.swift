import DisplayText
import Foundation

extension ObjectGraph {
    /// The inferred schema of one type as text, as `.schema` and `loupe schema` print it:
    /// attributes with the kinds seen and how many objects have them, relations with their target
    /// types and cardinality, and the relations of other types that point here. Names are escaped
    /// (``DisplayText``): a name is data from the file.
    public func schemaText(of table: TypeTable) -> String {
        let e = DisplayText.escaped
        let readOnly = !table.isReadOnly ? "" : table.keyPolicy == .rowNumber ? " (read-only view)" : " (read-only)"
        var lines = ["\(e(table.name.rawValue))\(readOnly) — \(table.count) objects"]
        if let s = table.lineage.supertype { lines.append("  inherits from \(e(types[s].name.rawValue)) (a query on \(e(types[s].name.rawValue)) includes this type's objects)") }
        if !table.lineage.descendants.isEmpty {
            lines.append("  subtypes: \(table.lineage.descendants.map { e(types[$0].name.rawValue) }.joined(separator: ", ")) (a query on \(e(table.name.rawValue)) includes their objects)")
        }
        for note in table.lineage.notes { lines.append("  note: \(e(note))") }
        let names = table.attributes.map { e($0.name) } + table.relations.map { e($0.name) }
        let width = max(4, names.map { DisplayText.width(of: $0) }.max() ?? 4)
        func pad(_ s: String) -> String { s + String(repeating: " ", count: max(0, width - DisplayText.width(of: s))) }
        lines.append("  attributes:")
        if table.attributes.isEmpty { lines.append("    (none)") }
        for a in table.attributes {
            var line = "    \(pad(e(a.name)))  \(a.kinds.description)"
            if let declared = a.declaredType, !declared.isEmpty { line += "  [\(e(declared))\(a.isPrimaryKey ? " PRIMARY KEY" : "")]" }
            line += "  in \(a.presentCount) of \(table.count)"
            lines.append(line)
        }
        lines.append("  relations:")
        if table.relations.isEmpty { lines.append("    (none)") }
        for r in table.relations {
            let targets = r.targetTypes.map { e(types[$0].name.rawValue) }.joined(separator: "|")
            var line = "    \(pad(e(r.name)))  → \(targets.isEmpty ? "?" : targets)  \(r.isToMany ? "to-many" : "to-one")"
            if !r.aliases.isEmpty { line += "  (also \(r.aliases.map(e).joined(separator: ", ")))" }
            if r.isInferred { line += "  (inferred)" }
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
        for r in table.relations {
            let targets = r.targets(of: row)
            if !r.isToMany {
                lines.append("    \(pad(e(r.name)))  → \(targets.first.map { e(label(of: $0)) } ?? "null")")
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
