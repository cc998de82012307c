import ArgumentParser
import LoupeModel

/// What `loupe schema` prints: the schema as text, or a diagram.
enum SchemaFormat: String, ExpressibleByArgument, CaseIterable {
    case text, mermaid, dot
}

extension Schema {
    /// Prints the store's schema as a Mermaid or Graphviz diagram (``SchemaDiagram``): from a
    /// whole load, or over the memory budget from the store's schema with each type's attributes
    /// as its first 1,000 objects hold them. With a type, that type and the types it relates to.
    func draw() throws {
        var diagram: SchemaDiagram
        if let opening = try pagedOpening() {
            let pages = opening.pages
            let schema = try pages.window(keys: [], of: nil).graph
            let samples = try schema.types.map { table in
                var sample = table
                try pages.forEachChunk(type: table.index, size: 1_000, kinds: [:], names: nil) { sample = $0.types[table.index]; return false }
                return sample
            }
            diagram = schema.diagram(counts: pages.catalog.map(\.count), samples: samples)
        } else {
            diagram = try store.open().graph.diagram()
        }
        if let type {
            guard let around = diagram.around(type) else {
                throw CLIError("unknown type '\(type)'" + suggestion(type, among: diagram.entities.map(\.name)))
            }
            diagram = around
        }
        print(format == .mermaid ? diagram.mermaid : diagram.dot)
    }
}
