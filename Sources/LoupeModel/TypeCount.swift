/// One type's count as a list of types shows it: `count`, what `count Type` answers (a parent
/// entity's includes its subtypes' objects, as a Core Data fetch request does), and `own`, the
/// type's own objects, given only where the two differ.
public struct TypeCount: Equatable, Sendable {
    public var name: String
    public var count: Int
    public var own: Int?

    public init(name: String, count: Int, own: Int? = nil) {
        self.name = name
        self.count = count
        self.own = own
    }

    /// The counts of `types` (each its own objects, -1 when not counted) folded up their
    /// hierarchy: a type's count adds those of every type whose chain of `supertype`s reaches it.
    public static func folded(_ types: [(name: String, count: Int)], supertype: [String: String]) -> [TypeCount] {
        guard !supertype.isEmpty else { return types.map { TypeCount(name: $0.name, count: $0.count) } }
        var total = Dictionary(types.map { ($0.name, $0.count) }, uniquingKeysWith: { a, _ in a })
        for (name, count) in types {
            var seen: Set<String> = [name]
            var parent = supertype[name]
            while let p = parent, seen.insert(p).inserted {
                if let t = total[p] { total[p] = t < 0 || count < 0 ? -1 : t + count }
                parent = supertype[p]
            }
        }
        return types.map { type in
            let count = total[type.name] ?? type.count
            return TypeCount(name: type.name, count: count, own: count == type.count ? nil : type.count)
        }
    }

    /// The count as a list shows it: `12`, `12 (3 own)`, `…` while not counted.
    public var shown: String {
        guard count >= 0 else { return "…" }
        return own.map { "\(count) (\($0) own)" } ?? String(count)
    }
}

extension ObjectGraph {
    /// Every type's count, folded up its hierarchy (``TypeCount/folded(_:supertype:)``).
    public var typeCounts: [TypeCount] {
        TypeCount.folded(types.map { ($0.name.rawValue, $0.liveCount) }, supertype: supertypeNames)
    }

    /// Each subtype's supertype, by name.
    public var supertypeNames: [String: String] {
        var out: [String: String] = [:]
        for t in types { if let s = t.lineage.supertype { out[t.name.rawValue] = types[s].name.rawValue } }
        return out
    }
}
