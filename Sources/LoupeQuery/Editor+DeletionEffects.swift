import LoupeModel

extension Editor {
    /// The step that deletes `refs`, saying what it does beyond deleting them (``deletionEffects(of:asked:)``).
    public func deletionStep(_ refs: [ObjectRef], label: String, at range: SourceRange = SourceRange(0, 0)) throws -> EditStep {
        let edits = try deletions(refs, at: range)
        return EditStep(label: label, edits: edits, effects: deletionEffects(of: edits, asked: refs), named: refs.map { graph.identity(of: $0) })
    }

    /// What deleting `asked` does beyond deleting them, as `edits` stage it: the objects foreign
    /// keys cascade to, the columns they set, and the links of relations without a foreign key
    /// (Persist's) that go with the objects — `also deletes 3 Track; sets 2 Track.GenreId to
    /// NULL; unlinks 32 Book.publisher links`. Nil when nothing else changes.
    public func deletionEffects(of edits: [Edit], asked: [ObjectRef]) -> String? {
        var removed = Set<ObjectIdentity>()
        var sets: [String: Int] = [:]
        for edit in edits {
            switch edit {
            case .remove(let o): removed.insert(o)
            case .set(let o, let attribute, let value): sets["\(o.type).\(attribute) to \(value.isNull ? "NULL" : "its default")", default: 0] += 1
            case .insert, .link: break
            }
        }
        var cascaded: [String: Int] = [:]
        for o in removed.subtracting(asked.map { graph.identity(of: $0) }) { cascaded[o.type.rawValue, default: 0] += 1 }
        var parts = Self.counted(cascaded) { "also deletes \($1) \($0)" } + Self.counted(sets) { "sets \($1) \($0)" }
        parts += Self.counted(unlinked(removed)) { "unlinks \($1) \($0) link\($1 == 1 ? "" : "s")" }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// How many edges of relations without a foreign key, from objects that are kept, point at
    /// `removed`, by `Type.relation`.
    private func unlinked(_ removed: Set<ObjectIdentity>) -> [String: Int] {
        var unlinked: [String: Int] = [:]
        for object in removed {
            guard let ref = graph.ref(object) else { continue }
            for index in graph.table(ref).backlinks {
                let sourceType = graph.types[index.sourceType]
                let relation = sourceType.relations[index.relation]
                guard relation.foreignKey == nil else { continue }
                for source in index.sources(of: Int(ref.row)) where sourceType.isLive(Int(source)) {
                    let kept = !removed.contains(graph.identity(of: ObjectRef(type: index.sourceType, row: Int(source))))
                    if kept { unlinked["\(sourceType.name).\(relation.name)", default: 0] += 1 }
                }
            }
        }
        return unlinked
    }

    /// `counts` as phrases, in name order.
    private static func counted(_ counts: [String: Int], _ phrase: (String, Int) -> String) -> [String] {
        counts.sorted { $0.key < $1.key }.map { phrase($0.key, $0.value) }
    }
}
