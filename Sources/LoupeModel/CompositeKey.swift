/// A foreign key of several columns (`(artist, album) → album(artist, title)`), which a
/// relational file's to-one relation may come from: each object links to the one target whose
/// `targetColumns` hold the object's `columns`, part by part. An object with a NULL part names
/// nothing (SQL does not check such a key); one whose parts match no target holds a broken link.
public struct CompositeKey: Hashable, Sendable {
    /// The source type's columns, in the key's order.
    public let columns: [String]
    /// The target type.
    public let targetType: Int
    /// The target's columns the parts name, in the same order.
    public let targetColumns: [String]

    public init(columns: [String], targetType: Int, targetColumns: [String]) {
        self.columns = columns
        self.targetType = targetType
        self.targetColumns = targetColumns
    }

    /// The key of one row as parts (`nil` when a part is NULL or cannot be a key).
    public static func key(_ parts: [Value]) -> ObjectID? {
        var ids: [ObjectID] = []
        for v in parts {
            guard !v.isNull, let id = ObjectID(keyValue: v) else { return nil }
            if case .composite = id { return nil }
            ids.append(id)
        }
        return .composite(ids)
    }

    /// The edges the key makes: for every live source row whose parts (`source`, one column of
    /// values per part) name a live target row (`target`, likewise), that pair.
    public static func edges(source: [[Value]], sourceRemoved: RowSet = RowSet(), target: [[Value]], targetRemoved: RowSet = RowSet(),
                             targetType: Int) -> (from: [Int32], to: [ObjectRef]) {
        let rows = { (columns: [[Value]]) in columns.first?.count ?? 0 }
        let targetKeys = (0..<rows(target)).map { r in key(target.map { $0[r] }) ?? .composite([]) }
        let index = KeyIndex(ids: targetKeys, removed: targetRemoved)
        var from: [Int32] = [], to: [ObjectRef] = []
        for r in 0..<rows(source) where sourceRemoved.isEmpty || !sourceRemoved.contains(r) {
            guard let k = key(source.map { $0[r] }), let t = index.row(for: k) else { continue }
            from.append(Int32(r))
            to.append(ObjectRef(type: targetType, row: t))
        }
        return (from, to)
    }
}
