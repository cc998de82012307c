extension TypeTable {
    /// The key a row's foreign key of to-one relation `r` holds when it names no object (a
    /// broken link: the row it named was deleted, or never there); nil when the link holds, the
    /// key is null, or the relation is not a foreign key.
    /// (A composite key's broken link is its parts, as an array; one with a NULL part names nothing.)
    public func brokenLink(row: Int, relation r: Int) -> Value? {
        let relation = relations[r]
        guard !relation.isToMany, relation.targets(of: row).isEmpty else { return nil }
        if let composite = relation.compositeKey {
            let parts = composite.columns.map { name in attribute(named: name).map { value(row: row, attribute: $0) } ?? .null }
            return parts.contains(where: \.isNull) ? nil : .array(parts)
        }
        guard let key = relation.foreignKey, let a = attribute(named: key.attribute) else { return nil }
        let v = value(row: row, attribute: a)
        return v.isNull ? nil : v
    }

    /// How many live objects hold a broken link of relation `r` (``brokenLink(row:relation:)``).
    public func brokenLinkCount(relation r: Int) -> Int {
        guard !relations[r].isToMany, relations[r].foreignKey != nil || relations[r].compositeKey != nil else { return 0 }
        return liveRows.reduce(0) { $0 + (brokenLink(row: $1, relation: r) == nil ? 0 : 1) }
    }
}
