/// One object's difference between the two stores.
public struct ObjectChange: Sendable {
    public enum Kind: String, Sendable { case added, removed, changed }

    /// The type's name (A's spelling where both have it).
    public let type: String
    /// The object's key: in A, or in B for an added object.
    public let key: ObjectID
    /// B's key when objects are matched by an attribute and the keys differ.
    public var otherKey: ObjectID?
    public let kind: Kind
    /// An added or removed object as it is; nil for a change.
    public var object: DiffObject?
    /// The attributes that differ (`old` from A, `new` from B).
    public var attributes: [(name: String, old: Value, new: Value)] = []
    /// The relations whose targets differ: those only B has, those only A has, and whether the
    /// same targets are in another order (an ordered to-many relation).
    public var relations: [(name: String, added: [ObjectIdentity], removed: [ObjectIdentity], reordered: Bool, toMany: Bool)] = []

    init(type: String, key: ObjectID, kind: Kind, object: DiffObject?) {
        self.type = type
        self.key = key
        self.kind = kind
        self.object = object
    }

    /// What differs between `a` (A's) and `b` (B's) of one object; nil when nothing does.
    static func between(_ a: DiffObject, _ b: DiffObject, type: String, key: ObjectID, otherKey: ObjectID) -> ObjectChange? {
        var change = ObjectChange(type: type, key: key, kind: .changed, object: nil)
        if otherKey != key { change.otherKey = otherKey }
        let bValues = Dictionary(b.attributes.map { ($0.name, $0.value) }, uniquingKeysWith: { x, _ in x })
        let aNames = Set(a.attributes.map(\.name))
        for (name, old) in a.attributes {
            let new = bValues[name] ?? .null
            if !Self.same(old, new) { change.attributes.append((name, old, new)) }
        }
        for (name, new) in b.attributes where !aNames.contains(name) && new != .null { change.attributes.append((name, .null, new)) }
        let bTargets = Dictionary(b.relations.map { ($0.name, $0.targets) }, uniquingKeysWith: { x, _ in x })
        let aRelations = Set(a.relations.map(\.name))
        for r in a.relations {
            if let difference = Self.targets(r.targets, bTargets[r.name] ?? [], ordered: r.toMany) { change.relations.append((r.name, difference.added, difference.removed, difference.reordered, r.toMany)) }
        }
        for r in b.relations where !aRelations.contains(r.name) && !r.targets.isEmpty { change.relations.append((r.name, r.targets, [], false, r.toMany)) }
        return change.attributes.isEmpty && change.relations.isEmpty ? nil : change
    }

    /// Two values the same: equal, the same number stored as an integer and as a double, both
    /// NaN, arrays of the same values, or objects of the same members in any order (a JSON
    /// document's keys, which PostgreSQL's `jsonb` sorts).
    static func same(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case (.object(let x), .object(let y)):
            guard x.members.count == y.members.count else { return false }
            let values = Dictionary(y.members.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
            return x.members.allSatisfy { m in values[m.key].map { same(m.value, $0) } ?? false }
        case (.int(let i), .double(let d)), (.double(let d), .int(let i)): return Double(i) == d && Int64(exactly: d) == i
        case (.double(let x), .double(let y)): return x == y || (x.isNaN && y.isNaN)
        default: return a == b
        }
    }

    /// The targets only `new` has and only `old` has (each counted as often as it appears), and
    /// whether the same targets come in another order; nil when they are the same list.
    static func targets(_ old: [ObjectIdentity], _ new: [ObjectIdentity], ordered: Bool) -> (added: [ObjectIdentity], removed: [ObjectIdentity], reordered: Bool)? {
        guard old != new else { return nil }
        var counts: [ObjectIdentity: Int] = [:]
        for t in old { counts[t, default: 0] += 1 }
        var added: [ObjectIdentity] = []
        for t in new {
            if let n = counts[t], n > 0 { counts[t] = n - 1 } else { added.append(t) }
        }
        var left = counts
        let removed = old.filter { t in
            guard let n = left[t], n > 0 else { return false }
            left[t] = n - 1
            return true
        }
        if added.isEmpty && removed.isEmpty && !ordered { return nil }
        return (added, removed, added.isEmpty && removed.isEmpty)
    }
}

/// What a diff found of one type.
public struct TypeSummary: Sendable, Equatable {
    public let name: String
    /// The type's object count in each store (nil: that store has no such type).
    public let countA: Int?
    public let countB: Int?
    public var added = 0, removed = 0, changed = 0
    /// Objects found in both and compared.
    public var compared = 0

    /// True when the type is the same in both stores.
    public var isSame: Bool { countA != nil && countB != nil && added == 0 && removed == 0 && changed == 0 }
}

extension DiffObject {
    /// The object with its targets' type names spelt as A spells them (`renaming`: B's name to A's).
    func renamed(_ renaming: [String: String]) -> DiffObject {
        guard !renaming.isEmpty else { return self }
        var copy = self
        for i in copy.relations.indices {
            copy.relations[i].targets = copy.relations[i].targets.map { t in renaming[t.type.rawValue].map { ObjectIdentity(type: TypeName($0), id: t.id) } ?? t }
        }
        return copy
    }
}

/// The types two stores are compared by: each of A's with B's of the same name (exactly, or
/// else ignoring case, as PostgreSQL folds names), then those only one has.
struct TypePairs {
    var pairs: [(Int?, Int?)] = []
    /// B's names that A spells otherwise.
    var bToA: [String: String] = [:]

    init(_ a: [String], _ b: [String], only: [String]) throws {
        var unmatched = Set(b.indices)
        for (i, name) in a.enumerated() {
            let j = b.firstIndex(of: name).flatMap { unmatched.contains($0) ? $0 : nil }
                ?? b.indices.first { unmatched.contains($0) && b[$0].caseInsensitiveCompare(name) == .orderedSame }
            if let j { unmatched.remove(j); if b[j] != name { bToA[b[j]] = name } }
            pairs.append((i, j))
        }
        pairs += unmatched.sorted().map { (nil, $0) }
        guard !only.isEmpty else { return }
        let names = pairs.map { $0.0.map { a[$0] } ?? b[$0.1!] }
        var kept: [(Int?, Int?)] = []
        for wanted in only {
            let exact = names.firstIndex(of: wanted)
            let folded = names.indices.filter { names[$0].caseInsensitiveCompare(wanted) == .orderedSame }
            guard let k = exact ?? (folded.count == 1 ? folded[0] : nil) else {
                let close = NameSuggestion.closest(to: wanted, in: names).map { " (did you mean '\($0)'?)" } ?? ""
                throw DiffError("neither store has a type '\(wanted)'\(close)")
            }
            kept.append(pairs[k])
        }
        pairs = kept
    }
}

/// The objects of one type in both stores matched up: pairs found in both (A's key, B's key) in
/// A's order, and the keys only A or only B has, each in its store's order.
struct KeyPairs {
    var both: [(a: ObjectID, b: ObjectID)] = []
    var onlyA: [ObjectID] = []
    var onlyB: [ObjectID] = []

    /// Matched by key: merged when both lists are in ascending order (as stores list keys),
    /// else through a set of each.
    init(byKey a: [ObjectID], _ b: [ObjectID]) {
        if Self.ascending(a), Self.ascending(b) {
            var i = 0, j = 0
            while i < a.count, j < b.count {
                if a[i] == b[j] { both.append((a[i], b[j])); i += 1; j += 1 } else if a[i] < b[j] { onlyA.append(a[i]); i += 1 } else { onlyB.append(b[j]); j += 1 }
            }
            onlyA += a[i...]
            onlyB += b[j...]
            return
        }
        let inB = Set(b)
        for key in a { if inB.contains(key) { both.append((key, key)) } else { onlyA.append(key) } }
        let inA = Set(a)
        onlyB = b.filter { !inA.contains($0) }
    }

    /// True when every key is below the next.
    static func ascending(_ keys: [ObjectID]) -> Bool {
        zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 }
    }

    /// Matched by a value each object holds (unique on each side).
    init(byValue a: [(Value, ObjectID)], _ b: [(Value, ObjectID)]) {
        let inB = Dictionary(b, uniquingKeysWith: { x, _ in x })
        for (value, key) in a { if let other = inB[value] { both.append((key, other)) } else { onlyA.append(key) } }
        let inA = Set(a.map(\.0))
        onlyB = b.filter { !inA.contains($0.0) }.map(\.1)
    }
}
