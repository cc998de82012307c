import Foundation

extension ObjectGraph {
    /// The inferred schema of one type as text, as `.schema` and `loupe schema` print it:
    /// attributes with the kinds seen and how many objects have them, relations with their target
    /// types and cardinality, and the relations of other types that point here.
    public func schemaText(of table: TypeTable) -> String {
        var lines = ["\(table.name)\(table.isReadOnly ? " (read-only view)" : "") — \(table.count) objects"]
        let width = max(4, (table.attributes.map(\.name.count) + table.relations.map(\.name.count)).max() ?? 4)
        func pad(_ s: String) -> String { s + String(repeating: " ", count: max(0, width - s.count)) }
        lines.append("  attributes:")
        if table.attributes.isEmpty { lines.append("    (none)") }
        for a in table.attributes {
            var line = "    \(pad(a.name))  \(a.kinds.description)"
            if let declared = a.declaredType, !declared.isEmpty { line += "  [\(declared)\(a.isPrimaryKey ? " PRIMARY KEY" : "")]" }
            line += "  in \(a.presentCount) of \(table.count)"
            lines.append(line)
        }
        lines.append("  relations:")
        if table.relations.isEmpty { lines.append("    (none)") }
        for r in table.relations {
            let targets = r.targetTypes.map { types[$0].name.rawValue }.joined(separator: "|")
            var line = "    \(pad(r.name))  → \(targets.isEmpty ? "?" : targets)  \(r.isToMany ? "to-many" : "to-one")"
            if !r.aliases.isEmpty { line += "  (also \(r.aliases.joined(separator: ", ")))" }
            lines.append(line)
        }
        lines.append("  backlinks:")
        if table.backlinks.isEmpty { lines.append("    (none)") }
        for b in table.backlinks {
            let source = types[b.sourceType]
            lines.append("    @links.\(source.name).\(source.relations[b.relation].name)")
        }
        return lines.joined(separator: "\n")
    }

    /// One object as text, as `loupe show` prints it: attributes, relations with their targets,
    /// and backlinks grouped by `Type.relation` with counts.
    public func describe(_ ref: ObjectRef, listLimit: Int = 20) -> String {
        let table = self.table(ref)
        let row = Int(ref.row)
        var lines = [label(of: ref)]
        let width = max(4, (table.attributes.map(\.name.count) + table.relations.map(\.name.count)).max() ?? 4)
        func pad(_ s: String) -> String { s + String(repeating: " ", count: max(0, width - s.count)) }
        lines.append("  attributes:")
        for (i, a) in table.attributes.enumerated() {
            lines.append("    \(pad(a.name))  \(TextSafety.escaped(ValueFormatter.plain(table.value(row: row, attribute: i))))")
        }
        lines.append("  relations:")
        if table.relations.isEmpty { lines.append("    (none)") }
        for r in table.relations {
            let targets = r.targets(of: row)
            if !r.isToMany {
                lines.append("    \(pad(r.name))  → \(targets.first.map { label(of: $0) } ?? "null")")
            } else {
                let shown = targets.prefix(listLimit).map { "#\(id(of: $0))" }.joined(separator: ", ")
                lines.append("    \(pad(r.name))  → [\(targets.count)] \(shown)\(targets.count > listLimit ? ", …" : "")")
            }
        }
        lines.append("  backlinks:")
        let groups = backlinks(of: ref)
        if groups.isEmpty { lines.append("    (none)") }
        for g in groups {
            let shown = g.sources.prefix(listLimit).map { "#\(id(of: $0))" }.joined(separator: ", ")
            lines.append("    \(g.key)  [\(g.sources.count)] \(shown)\(g.sources.count > listLimit ? ", …" : "")")
        }
        return lines.joined(separator: "\n")
    }
}

/// Keeps data from acting on a terminal: control characters and escape sequences are shown as
/// escapes (`\n`, `\t`, `\u{1B}`), never sent as they are.
public enum TextSafety {
    /// The text with every C0/C1 control character and DEL replaced by a visible escape.
    public static func escaped(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: isControl) else { return s }
        var out = ""
        for u in s.unicodeScalars {
            switch u {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if isControl(u) { out += "\\u{\(String(u.value, radix: 16, uppercase: true))}" } else { out.unicodeScalars.append(u) }
            }
        }
        return out
    }

    @inline(__always) static func isControl(_ u: Unicode.Scalar) -> Bool {
        u.value < 0x20 || (u.value >= 0x7F && u.value < 0xA0) || u.value == 0x2028 || u.value == 0x2029
    }
}

/// Display width in terminal cells, for text the command line aligns (tables, carets): East Asian
/// wide and emoji characters take 2, combining marks and zero-width characters 0. It follows the
/// same rules as TerminalKit's `TextWidth`, which cannot be shared: the terminal kit depends on
/// nothing, the model on nothing either.
public enum DisplayWidth {
    /// The width of a text.
    public static func of(_ s: String) -> Int { s.reduce(0) { $0 + of($1) } }

    /// The width of one character (grapheme).
    public static func of(_ ch: Character) -> Int {
        let scalars = ch.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if scalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        let v = first.value
        if v == 0 { return 0 }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if (0x1100...0x115F).contains(v) || (0x2E80...0x303E).contains(v) || (0x3041...0x33FF).contains(v)
            || (0x3400...0x4DBF).contains(v) || (0x4E00...0x9FFF).contains(v) || (0xA000...0xA4CF).contains(v)
            || (0xAC00...0xD7A3).contains(v) || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v)
            || (0xFF00...0xFF60).contains(v) || (0xFFE0...0xFFE6).contains(v) || (0x20000...0x3FFFD).contains(v) {
            return 2
        }
        return first.properties.isEmojiPresentation ? 2 : 1
    }
}
