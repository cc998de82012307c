import Foundation
import LoupeModel
import LoupeStore

/// Persist's layout stored in PostgreSQL: `by_type(id, type_name, json)` (the document as `json`,
/// `jsonb` or text) and `relations(from_id, to_id, relation)` in the `public` schema, read as the
/// object graph the same rows make in a Persist file — types from `type_name`, attributes from
/// the documents, relations and backlinks from `relations` — through Persist's own loader
/// (``PersistRows``), so values, dates, keys and cardinalities mean what they mean in a file.
/// `jsonb` keeps its members in its own order (shorter keys first), so attributes come in that
/// order. A relation's targets keep the order of its rows' `id` column when the table has one,
/// else their physical order. Edits are written by ``PostgresPersistCommit`` (read-only when it
/// says why it cannot write the database).
enum PostgresPersist {
    static let formatName = "PostgreSQL (Persist layout)"

    /// True when the database has Persist's two tables, with their columns, in `public`.
    static func isPersist(_ c: PostgresConnection) throws -> Bool {
        let columns = try c.query("""
            SELECT c.relname, a.attname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            WHERE n.nspname = 'public' AND c.relname IN ('by_type', 'relations') AND c.relkind IN ('r', 'p')
            """).rows
        let names = Set(columns.compactMap { row in row[0].flatMap { table in row[1].map { "\(table).\($0)" } } })
        return ["by_type.id", "by_type.type_name", "by_type.json", "relations.from_id", "relations.to_id", "relations.relation"].allSatisfy(names.contains)
    }

    /// Every type with its object count, in order of its first object.
    static func catalog(_ c: PostgresConnection) throws -> [(name: String, count: Int)] {
        try c.query("SELECT type_name, count(*) FROM by_type GROUP BY type_name ORDER BY min(id)").rows.map { row in
            (row[0] ?? "(no type)", Int(row[1] ?? "") ?? 0)
        }
    }

    /// The whole graph (inside the caller's snapshot).
    static func load(_ c: PostgresConnection) throws -> LoadedGraph {
        let layout = try PostgresPersistCommit.Layout.read(c)
        func key(_ text: String?, _ column: String) -> PersistRows.Key? {
            switch layout.key(text, column: column) {
            case .int(let i)?: return .int(i)
            case .string(let s)?: return .text(s)
            default: return nil
            }
        }
        let documents = try c.query("SELECT id, type_name, json::text FROM by_type ORDER BY id")
        let objects = documents.rows.map { PersistRows.Object(id: key($0[0], "by_type.id"), typeName: $0[1], json: $0[2]) }
        let relationRows = try c.query("SELECT from_id, to_id, relation FROM relations ORDER BY \(layout.types["relations.id"] != nil ? "id" : "ctid")")
        let edges = relationRows.rows.map { PersistRows.Edge(from: key($0[0], "relations.from_id"), to: key($0[1], "relations.to_id"), relation: $0[2]) }
        let loaded = try PersistRows.load(objects: objects, edges: edges, kinds: try relationKinds(c))
        return LoadedGraph(graph: loaded.graph.readOnly(because: PostgresPersistCommit.refusal(layout), formatName: formatName), warnings: loaded.warnings)
    }

    /// The relation cardinalities Loupe recorded (`loupe_relation_kinds`: type, relation, to-many),
    /// if the database has the table.
    static func relationKinds(_ c: PostgresConnection) throws -> [(type: String, relation: String, toMany: Bool)] {
        guard try !c.query("SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relname = 'loupe_relation_kinds'").rows.isEmpty else { return [] }
        return try c.query(#"SELECT "type_name", "relation", "to_many"::text FROM "public"."loupe_relation_kinds""#).rows.compactMap { row in
            guard let type = row[0], let relation = row[1] else { return nil }
            return (type, relation, ["1", "t", "true"].contains(row[2] ?? ""))
        }
    }
}
