import DisplayText

/// A store's schema as a diagram: its types as boxes of attributes, its relations as edges with
/// their cardinalities, what `loupe schema --format mermaid|dot` draws. Built from a graph's
/// schema (a loaded graph, or the schema a paged store reads without its objects); rendered by
/// ``mermaid`` (GitHub's Markdown) and ``dot`` (Graphviz). Names are escaped for the terminal
/// (``DisplayText``) before each format's own quoting.
public struct SchemaDiagram: Sendable, Equatable {
    /// One type: its name, count and attributes.
    public struct Entity: Sendable, Equatable {
        public var name: String
        public var count: Int
        public var attributes: [Attribute]
        /// Why it cannot be edited (a view, rows without a key), or nil.
        public var note: String?
    }

    /// One attribute: its name, the kinds of value it holds, how the store declares it.
    public struct Attribute: Sendable, Equatable {
        public var name: String
        /// The kinds seen apart from null (`integer`, `integer|double`), or the declared kind.
        public var kind: String
        public var declaredType: String
        public var isPrimaryKey: Bool
        /// True when the attribute holds a relation's foreign key.
        public var isForeignKey: Bool
        /// True when some object holds null or lacks it, or the store lets it (a column not
        /// declared `NOT NULL`, but for a key).
        public var isOptional: Bool
    }

    /// How many objects an end of an edge stands for.
    public enum Cardinality: String, Sendable, Equatable {
        case zeroOrOne = "0..1", exactlyOne = "1", many = "*"
    }

    /// One edge: a relation from `source` to `target` (indices into ``entities``).
    public struct Edge: Sendable, Equatable {
        public enum Kind: Sendable, Equatable {
            /// A relation of the source's (its name); `inferred` when the store does not declare it.
            case relation(name: String, inferred: Bool)
            /// Many-to-many through a join table (its name), drawn in place of the table.
            case manyToMany(through: String, inferred: Bool)
            /// The source inherits from the target (a Core Data subentity).
            case inheritance
        }
        public var source: Int
        public var target: Int
        public var kind: Kind
        /// How many sources one target has, and how many targets one source has.
        public var sourceEnd: Cardinality
        public var targetEnd: Cardinality
    }

    public var entities: [Entity]
    public var edges: [Edge]
}

extension ObjectGraph {
    /// This graph's schema as a diagram: every type but join tables (two to-one relations and
    /// nothing else), which become many-to-many edges between the types they join; a subtype
    /// shows only what it adds to its parent, and an edge to a type and its subtypes goes to
    /// the type alone. `counts`
    /// are the types' object counts by index when the graph holds none of its objects (a paged
    /// store's schema), `samples` the same types in graphs of their first objects, whose
    /// attributes are drawn (with the kinds those objects hold); else each type's own.
    public func diagram(counts: [Int]? = nil, samples: [TypeTable]? = nil) -> SchemaDiagram {
        let joins = Set(types.indices.filter { joinedTypes(of: types[$0]) != nil })
        var position: [Int: Int] = [:]
        var entities: [SchemaDiagram.Entity] = []
        for table in types where !joins.contains(table.index) {
            position[table.index] = entities.count
            entities.append(entity(of: table, count: counts?[table.index] ?? table.count, sample: samples?[table.index] ?? table))
        }
        var edges: [SchemaDiagram.Edge] = []
        for table in types {
            if let (a, b, inferred) = joinedTypes(of: table) {
                guard let s = position[a], let t = position[b] else { continue }
                edges.append(.init(source: s, target: t, kind: .manyToMany(through: DisplayText.escaped(table.name.rawValue), inferred: inferred),
                                   sourceEnd: .many, targetEnd: .many))
                continue
            }
            guard let s = position[table.index] else { continue }
            if let parent = table.lineage.supertype, let t = position[parent] {
                edges.append(.init(source: s, target: t, kind: .inheritance, sourceEnd: .zeroOrOne, targetEnd: .exactlyOne))
            }
            let inherited = Set(table.lineage.supertype.map { types[$0].relations.map(\.name) } ?? [])
            for relation in table.relations where !inherited.contains(relation.name) {
                for target in relation.targetTypes where !hasAncestor(target, among: relation.targetTypes) {
                    guard let t = position[target] else { continue }
                    edges.append(.init(source: s, target: t, kind: .relation(name: DisplayText.escaped(relation.name), inferred: relation.isInferred),
                                       sourceEnd: .many, targetEnd: targetEnd(of: relation, in: table)))
                }
            }
        }
        return SchemaDiagram(entities: entities, edges: edges)
    }

    /// One type as a box of `count` objects: its attributes (as `sample` holds them) with their
    /// kinds and keys, less those it inherits (drawn on its parent).
    private func entity(of table: TypeTable, count: Int, sample: TypeTable) -> SchemaDiagram.Entity {
        let foreignKeys = Set(table.relations.flatMap { [$0.foreignKeyAttribute].compactMap { $0 } + ($0.compositeKey?.columns ?? []) })
        let inherited = Set(table.lineage.supertype.map { types[$0].attributes.map(\.name) } ?? [])
        let attributes = sample.attributes.filter { !inherited.contains($0.name) }.map { a in
            let kinds = a.kinds.subtracting(.null)
            return SchemaDiagram.Attribute(name: DisplayText.escaped(a.name),
                                           kind: kinds.isEmpty ? (a.kinds.isEmpty ? "none" : "null") : kinds.description,
                                           declaredType: DisplayText.escaped(a.declaredType ?? ""), isPrimaryKey: a.isPrimaryKey,
                                           isForeignKey: foreignKeys.contains(a.name),
                                           isOptional: a.kinds.contains(.null) || a.presentCount < sample.count || (a.storage?.notNull == false && !a.isPrimaryKey))
        }
        let note = table.isView ? "view" : table.isReadOnly ? "read-only" : nil
        return .init(name: DisplayText.escaped(table.name.rawValue), count: count, attributes: attributes, note: note)
    }

    /// True when a type `type` inherits from, directly or not, is among `types` (an edge to
    /// that one stands for both).
    private func hasAncestor(_ type: Int, among types: [Int]) -> Bool {
        var parent = self.types[type].lineage.supertype
        while let p = parent {
            if types.contains(p) { return true }
            parent = self.types[p].lineage.supertype
        }
        return false
    }

    /// How many targets one object has by `relation`: many for a to-many relation, exactly one
    /// for a foreign key declared `NOT NULL`, else at most one.
    private func targetEnd(of relation: RelationColumn, in table: TypeTable) -> SchemaDiagram.Cardinality {
        if relation.isToMany { return .many }
        let columns = relation.compositeKey?.columns ?? [relation.foreignKeyAttribute].compactMap { $0 }
        let required = !columns.isEmpty && columns.allSatisfy { c in table.attributeIndex[c].map { table.attributes[$0].storage?.notNull == true } ?? false }
        return required ? .exactlyOne : .zeroOrOne
    }

    /// The two types `table` joins when it is a join table: exactly two to-one relations, each
    /// to one other type, every attribute one of their keys, and nothing relating to it.
    func joinedTypes(of table: TypeTable) -> (Int, Int, inferred: Bool)? {
        guard table.relations.count == 2, table.backlinks.isEmpty, table.lineage.supertype == nil, table.lineage.descendants.isEmpty,
              table.relations.allSatisfy({ !$0.isToMany && $0.targetTypes.count == 1 && $0.targetTypes[0] != table.index }) else { return nil }
        let keys = Set(table.relations.flatMap { [$0.foreignKeyAttribute].compactMap { $0 } + ($0.compositeKey?.columns ?? []) })
        guard !keys.isEmpty, table.attributes.allSatisfy({ keys.contains($0.name) }) else { return nil }
        return (table.relations[0].targetTypes[0], table.relations[1].targetTypes[0], table.relations.contains { $0.isInferred })
    }
}

extension SchemaDiagram {
    /// The type `name` names (exactly, or ignoring case when one type does) and the types its
    /// edges reach, with those edges only; nil when no type has that name.
    public func around(_ name: String) -> SchemaDiagram? {
        let names = entities.map(\.name)
        let folded = names.indices.filter { names[$0].caseInsensitiveCompare(name) == .orderedSame }
        guard let center = names.firstIndex(of: name) ?? (folded.count == 1 ? folded[0] : nil) else { return nil }
        let kept = edges.filter { $0.source == center || $0.target == center }
        let reached = Set([center] + kept.flatMap { [$0.source, $0.target] }).sorted()
        let position = Dictionary(uniqueKeysWithValues: reached.enumerated().map { ($1, $0) })
        return SchemaDiagram(entities: reached.map { entities[$0] },
                             edges: kept.map { var e = $0; e.source = position[e.source]!; e.target = position[e.target]!; return e })
    }
}
