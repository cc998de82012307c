import Foundation
import LoupeModel
import LoupeQuery
import LoupeStore

/// The graph a one-shot `loupe query` runs its statement on, read no further than the statement
/// needs: on a Persist store unchanged since a whole load (a fresh schema cache entry), only what
/// the statement's names reach (``PersistFormat/projected(_:type:names:linkTypes:listsObjects:halvesFrom:)``);
/// else, for a statement that reads only one type's attributes, that type alone; else the whole
/// graph. A listing of one type's objects loads that type whole (faster than value by value).
public struct OneShotGraph {
    public let graph: ObjectGraph
    /// The load, when there was one (a commit needs it).
    public let loaded: LoadedStore?
    /// How the graph was read, for `loupe bench`.
    public let path: String
    /// What the load noticed (for a projection: what the whole load behind its cache entry noticed).
    public let warnings: [String]

    /// Reads the graph `statement` (nil: one that does not parse) needs from `file`; `writing`
    /// (a statement to commit) always loads the whole graph.
    public static func open(_ file: StoreFile, for statement: Statement?, writing: Bool) throws -> OneShotGraph {
        if !writing, let statement, let projected = projection(file, for: statement) { return projected }
        if !writing, let reach = statement?.singleTypeReach {
            let loaded = try LoadedStore.open(file, reaching: reach.type.text, names: reach.firstNames)
            return OneShotGraph(graph: loaded.graph, loaded: loaded, path: loaded.graph.types.count == 1 ? "one type loaded" : "whole graph loaded",
                                warnings: loaded.warnings)
        }
        let loaded = try LoadedStore.load(file)
        return OneShotGraph(graph: loaded.graph, loaded: loaded, path: "whole graph loaded", warnings: loaded.warnings)
    }

    /// Only what `statement`'s names reach, on a Persist store with a fresh schema cache entry
    /// (tried first: it also beats SQLite's count over the documents); nil otherwise.
    public static func projection(_ file: StoreFile, for statement: Statement) -> OneShotGraph? {
        guard let reads = statement.namesRead, !(reads.listsObjects && statement.singleTypeReach != nil),
              let projected = try? PersistFormat.projected(file, type: reads.type.text, names: reads.names, linkTypes: reads.linkTypes,
                                                           listsObjects: reads.listsObjects) else { return nil }
        return OneShotGraph(graph: projected, loaded: nil, path: "what its names reach", warnings: LoadedStore.cachedSchema(file)?.warnings ?? [])
    }
}
