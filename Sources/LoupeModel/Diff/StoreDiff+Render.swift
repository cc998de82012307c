import DisplayText

/// How a diff is printed: a line per change for people (`table`), one JSON document, or a JSON
/// object per change (`ndjson`). Text lines are escaped for the terminal (``DisplayText``); JSON
/// escapes itself (``ValueFormatter/writeJSONString(_:to:)``).
extension ObjectChange {
    /// `~ Book #5  title: "Old" → "New"; author: Author #1 → Author #2; tags: +Tag #3 −Tag #1`, `+ Book #751  title: "New", …`,
    /// `− Book #12  …`.
    public var line: String {
        let e = DisplayText.escaped
        let head = "\(sign) \(e(type)) #\(e(key.description))" + (otherKey.map { " (#\(e($0.description)) in B)" } ?? "")
        let parts = detail(e)
        return parts.isEmpty ? head : head + "  " + parts
    }

    /// `+`, `−` or `~`.
    public var sign: String { kind == .added ? "+" : kind == .removed ? "−" : "~" }

    /// What the line says after the object: the attributes and relations of an added or removed
    /// object, or each change (`title: "Old" → "New"`), each name and value through `escape`
    /// (the terminal's escaping for a line; none for a cell, which the display escapes).
    public func detail(_ escape: (String) -> String) -> String {
        let e = escape
        var parts: [String]
        if let object {
            parts = object.attributes.filter { $0.value != .null }.map { "\(e($0.name)): \(e(ValueFormatter.json($0.value)))" }
                + object.relations.filter { !$0.targets.isEmpty }.map { "\(e($0.name)): \($0.targets.map { e($0.description) }.joined(separator: ", "))" }
        } else {
            parts = attributes.map { "\(e($0.name)): \(e(ValueFormatter.json($0.old))) → \(e(ValueFormatter.json($0.new)))" }
            parts += relations.map { r in
                if !r.toMany, r.added.count <= 1, r.removed.count <= 1 {
                    return "\(e(r.name)): \(r.removed.first.map { e($0.description) } ?? "null") → \(r.added.first.map { e($0.description) } ?? "null")"
                }
                let moves = r.added.map { "+\(e($0.description))" } + r.removed.map { "−\(e($0.description))" }
                return "\(e(r.name)): " + (r.reordered ? "same targets, another order" : moves.joined(separator: " "))
            }
        }
        return parts.joined(separator: "; ")
    }

    /// One JSON object: `{"type": …, "key": …, "change": "changed", "attributes": {"title":
    /// {"a": …, "b": …}}, "relations": {"tags": {"added": […], "removed": […], "reordered": false}}}`;
    /// an added or removed object's `"object"` holds its attributes and relations.
    public var json: String {
        var out = "{\"type\": "
        ValueFormatter.writeJSONString(type, to: &out)
        out += ", \"key\": " + ValueFormatter.json(key.value)
        if let otherKey { out += ", \"keyInB\": " + ValueFormatter.json(otherKey.value) }
        out += ", \"change\": \"\(kind.rawValue)\""
        if let object {
            out += ", \"object\": " + Self.jsonObject(object.attributes.map { ($0.name, ValueFormatter.json($0.value)) }
                                                      + object.relations.map { ($0.name, Self.jsonTargets($0.targets)) })
        } else {
            out += ", \"attributes\": " + Self.jsonObject(attributes.map { ($0.name, Self.jsonObject([("a", ValueFormatter.json($0.old)), ("b", ValueFormatter.json($0.new))])) })
            out += ", \"relations\": " + Self.jsonObject(relations.map { r in
                (r.name, Self.jsonObject([("added", Self.jsonTargets(r.added)), ("removed", Self.jsonTargets(r.removed)), ("reordered", r.reordered ? "true" : "false")]))
            })
        }
        return out + "}"
    }

    /// `{"k": v, …}` of members already in JSON.
    static func jsonObject(_ members: [(String, String)]) -> String {
        var out = "{"
        for (i, m) in members.enumerated() {
            if i > 0 { out += ", " }
            ValueFormatter.writeJSONString(m.0, to: &out)
            out += ": " + m.1
        }
        return out + "}"
    }

    /// `[{"type": "Tag", "key": 3}, …]`.
    static func jsonTargets(_ targets: [ObjectIdentity]) -> String {
        "[" + targets.map { t in jsonObject([("type", ValueFormatter.json(.string(t.type.rawValue))), ("key", ValueFormatter.json(t.id.value))]) }.joined(separator: ", ") + "]"
    }
}

extension TypeSummary {
    /// `Book: 1 added, 1 removed, 3 changed of 749 in both (750 in A, 751 in B)`, or `Book: same
    /// (750 objects)`, or a type only one store has.
    public var line: String {
        let e = DisplayText.escaped
        guard let countA, let countB else {
            return "\(e(name)): only in \(countA == nil ? "B" : "A") (\((countA ?? countB ?? 0).counting("object")))"
        }
        if isSame { return "\(e(name)): same (\(countA.counting("object")))" }
        return "\(e(name)): \(added) added, \(removed) removed, \(changed) changed of \(compared) in both (\(countA) in A, \(countB) in B)"
    }

    /// The type's figures as a JSON object (its changes, already JSON, under `"changes"`).
    public func json(changes: [String]?) -> String {
        var members: [(String, String)] = [("type", ValueFormatter.json(.string(name))),
                                           ("countA", countA.map(String.init) ?? "null"), ("countB", countB.map(String.init) ?? "null"),
                                           ("added", "\(added)"), ("removed", "\(removed)"), ("changed", "\(changed)"), ("compared", "\(compared)")]
        if let changes { members.append(("changes", "[" + changes.joined(separator: ", ") + "]")) }
        return ObjectChange.jsonObject(members)
    }
}

extension Array where Element == TypeSummary {
    /// The closing line: `the stores differ: 2 of 7 types; 1 added, 1 removed, 3 changed (2,998 compared)`.
    public var summaryLine: String {
        let differing = filter { !$0.isSame }.count
        let (added, removed, changed) = reduce((0, 0, 0)) { ($0.0 + $1.added, $0.1 + $1.removed, $0.2 + $1.changed) }
        let compared = reduce(0) { $0 + $1.compared }
        if differing == 0 { return "same: \(count.counting("type")), \(compared.counting("object")) compared" }
        return "differ: \(differing) of \(count.counting("type")); \(added) added, \(removed) removed, \(changed) changed (\(compared) in both compared)"
    }

    /// The closing figures as a JSON object.
    public var summaryJSON: String {
        let (added, removed, changed) = reduce((0, 0, 0)) { ($0.0 + $1.added, $0.1 + $1.removed, $0.2 + $1.changed) }
        return ObjectChange.jsonObject([("same", allSatisfy(\.isSame) ? "true" : "false"), ("types", "\(count)"), ("typesDiffering", "\(filter { !$0.isSame }.count)"),
                                        ("added", "\(added)"), ("removed", "\(removed)"), ("changed", "\(changed)"), ("compared", "\(reduce(0) { $0 + $1.compared })")])
    }
}
