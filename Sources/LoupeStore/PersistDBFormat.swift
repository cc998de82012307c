import Foundation
import GRDB
import LoupeModel

/// A store written by PersistDB (one table per model), read as its models: each table a type
/// keyed by its `id`, dates as dates, and to-one properties as relations.
///
/// Recognised by PersistDB's own shape: every table is made by `CREATE TABLE "<Model>" (…)` with
/// an `id … PRIMARY KEY` column, only `REAL`, `INTEGER` and `TEXT` columns, no foreign keys and no
/// indexes of its own. PersistDB declares no relations: a to-one property is a column holding
/// another model's `id` (an integer, or a UUID string even in an `INTEGER` column). Such a
/// column becomes a relation of the same name (so `author` is the key and `author.name` goes
/// through it) when every value is an id of one model: the model named like the column, else the
/// only model whose ids hold them all; such relations are marked inferred. To-many properties
/// have no column: they are the backlinks of those relations (`@links.Book.author`). `REAL`
/// columns named like dates (`date`, `createdAt`, `birthday`, `due`, …) are seconds since 2001.
public enum PersistDBFormat: StoreFormat {
    public static let name = "PersistDB"

    public static func matches(_ db: Database) throws -> Bool {
        // (The index count first: it settles most files without listing their tables.)
        let indexes = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL") ?? 0
        guard indexes == 0 else { return false }
        let tables = try RelationalFormat.sourceNames(db)
        guard !tables.isEmpty, !tables.contains(where: \.isView) else { return false }
        for table in tables {
            let sql = table.sql.uppercased()
            guard sql.hasPrefix("CREATE TABLE \""), !sql.contains("REFERENCES"), !sql.contains("WITHOUT ROWID") else { return false }
            let columns = try Row.fetchAll(db, sql: "SELECT name, type, pk FROM pragma_table_info(?)", arguments: [table.name])
            var hasID = false
            for c in columns {
                let type = ((c[1] as DatabaseValue).lenientText ?? "").uppercased()
                guard ["REAL", "INTEGER", "TEXT"].contains(type) else { return false }
                if (c[0] as DatabaseValue).lenientText == "id", ((c[2] as DatabaseValue).lenientInt ?? 0) > 0 { hasID = true }
            }
            if !hasID { return false }
        }
        return true
    }

    public static func catalog(_ db: Database) throws -> [(name: String, count: Int)] { try RelationalFormat.catalog(db) }

    public static func load(_ file: StoreFile, progress: LoadProgress?) throws -> LoadedGraph {
        let (results, stamp) = try file.readOnSnapshot(workers: 1) { _, db in try load(db, progress: progress) }
        var loaded = results[0]
        loaded.stamp = stamp
        return loaded
    }

    static let readOnlyReason = "a PersistDB store: Loupe does not write PersistDB's models yet"

    private static func load(_ db: Database, progress: LoadProgress?) throws -> LoadedGraph {
        let builder = GraphBuilder(formatName: name)
        var warnings: [String] = []
        var loaded: [(RelationalFormat.Source, Int)] = []
        let sources = try RelationalFormat.sourceNames(db).map { try RelationalFormat.describe(db, name: $0.name, isView: false) }
        progress?(0, sources.count)
        for (i, source) in sources.enumerated() {
            let dates = Set(source.columns.filter { $0.storage.declaredType.uppercased() == "REAL" && namesADate($0.name) }.map(\.name))
            let t = try RelationalFormat.loadRows(db, source: source, builder: builder, epoch: DateText.referenceDateOffset,
                                                  readOnlyReason: readOnlyReason, dateColumns: dates, warnings: &warnings)
            loaded.append((source, t))
            progress?(i + 1, sources.count)
        }
        let models = loaded.map(\.0.name)
        // (PersistDB writes every reference itself: one naming nothing is no id, so no tolerance.)
        RelationalFormat.inferRelations(builder, loaded: loaded, relationName: { column, _ in column }, strayShare: 0) { column, source in
            guard column.name != "id", column.storage.declaredType.uppercased() != "REAL" else { return [] }
            // The model named like the column first, then every other model (the first that holds
            // all values wins only when it is the only one: checked by `uniqueOnly`).
            let named = models.filter { $0.caseInsensitiveCompare(column.name) == .orderedSame }
            return named.isEmpty ? models.filter { $0 != source.name } : named
        } uniqueOnly: { column, _ in !models.contains { $0.caseInsensitiveCompare(column.name) == .orderedSame } }
        return LoadedGraph(graph: builder.finish(), warnings: warnings)
    }

    /// `date`, `createdAt`, `birthday`, `due`, `updatedOn`…: a REAL column PersistDB wrote a `Date` into.
    static func namesADate(_ column: String) -> Bool {
        let lower = column.lowercased()
        if ["date", "due", "birthday", "deadline", "timestamp", "time", "when", "created", "updated", "modified", "born", "died"].contains(lower) { return true }
        if lower.contains("date") || lower.hasSuffix("time") { return true }
        // camelCase `createdAt`, `completedOn`
        for suffix in ["At", "On"] where column.hasSuffix(suffix) && column.count > 2 {
            if let before = column.dropLast(2).last, before.isLowercase { return true }
        }
        return false
    }
}
