/// Two stores compared as object graphs (`loupe diff A B`): types matched by name, objects by key
/// (or by an attribute each type names), and per object the attributes and relation targets that
/// differ. The objects are read a chunk at a time from each side and every change is handed on
/// as it is found, so that two large stores are compared holding their keys, not their graphs.
public struct StoreDiff: Sendable {
    /// How one type's objects are matched: by key, or by the value of one attribute.
    public struct Matching: Sendable, Equatable {
        /// The attribute each `Type.attribute` (or every type having an `attribute`) matches by.
        public var attributes: [(type: String?, attribute: String)]
        public init(attributes: [(type: String?, attribute: String)] = []) { self.attributes = attributes }
        public static func == (a: Matching, b: Matching) -> Bool { a.attributes.elementsEqual(b.attributes) { $0.type == $1.type && $0.attribute == $1.attribute } }

        /// The attribute type `type` is matched by, or nil (by key).
        func attribute(of type: String, in names: [String]) -> String? {
            attributes.first { $0.type.map { $0.caseInsensitiveCompare(type) == .orderedSame } ?? names.contains($0.attribute) }?.attribute
        }
    }

    public let a: DiffSide
    public let b: DiffSide
    public var matching = Matching()
    /// How many objects are read from each side at a time.
    public var chunk = 2_000

    public init(_ a: DiffSide, _ b: DiffSide) {
        self.a = a
        self.b = b
    }

    /// What a diff hands on as it goes: each object's change, then its type's summary.
    public enum Event {
        case change(ObjectChange)
        case typeDone(TypeSummary)
    }

    /// Compares the types named `only` (every type of either side when empty), calling `emit` with
    /// each object's change as found (removed and changed in A's key order, then added in B's)
    /// and each type's summary after its changes; returns the summaries. Throws ``DiffError``
    /// for a name neither side has or an attribute to match by that does not single out objects.
    @discardableResult
    public func run(only: [String] = [], emit: (Event) throws -> Void) throws -> [TypeSummary] {
        let (typesA, typesB) = (a.types, b.types)
        let pairs = try TypePairs(typesA.map(\.name), typesB.map(\.name), only: only)
        var summaries: [TypeSummary] = []
        for (ta, tb) in pairs.pairs {
            var summary = TypeSummary(name: ta.map { typesA[$0].name } ?? typesB[tb!].name,
                                      countA: ta.map { typesA[$0].count }, countB: tb.map { typesB[$0].count })
            try compare(ta, tb, renaming: pairs.bToA, into: &summary) { try emit(.change($0)) }
            try emit(.typeDone(summary))
            summaries.append(summary)
        }
        return summaries
    }

    /// Compares type `ta` of A with type `tb` of B (either nil: a type only the other has).
    private func compare(_ ta: Int?, _ tb: Int?, renaming: [String: String], into summary: inout TypeSummary, emit: (ObjectChange) throws -> Void) throws {
        let name = summary.name
        if let ta, let tb, matching.attributes.isEmpty, a.isUnchanged(type: ta, in: b, type: tb) {
            summary.compared = summary.countA ?? 0
            return
        }
        let matched = try keyPairs(ta, tb, name: name)
        func report(_ kind: ObjectChange.Kind, _ keys: [ObjectID], side: DiffSide, type: Int) throws {
            for start in stride(from: 0, to: keys.count, by: chunk) {
                let part = Array(keys[start ..< min(keys.count, start + chunk)])
                for (key, object) in zip(part, try side.objects(type: type, keys: part)) {
                    guard let object else { continue }
                    try emit(ObjectChange(type: name, key: key, kind: kind, object: object.renamed(renaming)))
                    if kind == .added { summary.added += 1 } else { summary.removed += 1 }
                }
            }
        }
        if let ta { try report(.removed, matched.onlyA, side: a, type: ta) }
        if let ta, let tb {
            for start in stride(from: 0, to: matched.both.count, by: chunk) {
                let part = matched.both[start ..< min(matched.both.count, start + chunk)]
                let (a, b) = (self.a, self.b), keysA = part.map(\.a), keysB = part.map(\.b)
                let (left, right) = try Self.sideBySide({ try a.objects(type: ta, keys: keysA) }, { try b.objects(type: tb, keys: keysB) })
                for (i, pair) in part.enumerated() {
                    guard let x = left[i], let y = right[i]?.renamed(renaming) else { continue }
                    summary.compared += 1
                    // Equal as stored is the same; else compared value by value (1 and 1.0, keys reordered).
                    guard x != y, let change = ObjectChange.between(x, y, type: name, key: pair.a, otherKey: pair.b) else { continue }
                    summary.changed += 1
                    try emit(change)
                }
            }
        }
        if let tb { try report(.added, matched.onlyB, side: b, type: tb) }
    }

    /// The objects of both types matched: by key, or by the attribute ``matching`` names.
    private func keyPairs(_ ta: Int?, _ tb: Int?, name: String) throws -> KeyPairs {
        @Sendable func keys(_ side: DiffSide, _ t: Int?) throws -> [ObjectID] {
            guard let t else { return [] }
            var all: [ObjectID] = []
            try side.forEachKeyBatch(type: t) { all += $0 }
            return all
        }
        if let ta, let tb, !matching.attributes.isEmpty,
           let attribute = matching.attribute(of: a.types[ta].name, in: try a.attributeNames(type: ta)) {
            return KeyPairs(byValue: try values(a, ta, attribute, side: "A", type: name), try values(b, tb, attribute, side: "B", type: name))
        }
        let (a, b) = (self.a, self.b)
        let (keysA, keysB) = try Self.sideBySide({ try keys(a, ta) }, { try keys(b, tb) })
        return KeyPairs(byKey: keysA, keysB)
    }

    /// `x` and `y` at once, each on a thread of its own: the two stores read side by side (each
    /// side is read by one thread at a time).
    static func sideBySide<T: Sendable>(_ x: @escaping @Sendable () throws -> T, _ y: @escaping @Sendable () throws -> T) throws -> (T, T) {
        let results = try ParallelWork.run(workers: 2, stackSize: 16 << 20) { worker in try worker == 0 ? x() : y() }
        return (results[0], results[1])
    }

    /// Each object's key by its value of `attribute`; throws when a value is null or shared.
    private func values(_ side: DiffSide, _ t: Int, _ attribute: String, side label: String, type: String) throws -> [(Value, ObjectID)] {
        var seen: [Value: ObjectID] = [:], ordered: [(Value, ObjectID)] = []
        try side.forEachValue(type: t, attribute: attribute) { key, value in
            if value == .null { throw DiffError("\(type) #\(key) in \(label) has no \(attribute) to be matched by") }
            if let other = seen.updateValue(key, forKey: value) {
                throw DiffError("\(type).\(attribute) does not single out objects in \(label): #\(other) and #\(key) both hold \(ValueFormatter.json(value))")
            }
            ordered.append((value, key))
        }
        return ordered
    }
}

/// A diff's reason for not comparing: a type neither store has, an attribute that does not
/// single out objects.
public struct DiffError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
