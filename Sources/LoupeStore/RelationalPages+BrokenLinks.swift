import Foundation
import GRDB
import LoupeModel

/// Broken links over the file: the rows whose foreign key names no row of its target, counted
/// by SQL where its `=` decides as a load does — no value that names a row only through its
/// affinity twin (the text `5` for the key 5), and text compared byte for byte only where it is
/// ASCII on both sides (a load compares canonical equivalents) — each answer a fact kept under
/// the file's stamp; elsewhere not counted (nil for that relation).
extension RelationalPages {
    public func brokenLinkCounts(type t: Int) throws -> [Int: Int]? {
        guard layout.tables[t] != nil else { return nil }
        let facts = FileFacts(file: file)
        defer { facts.save() }
        return try file.read { db in
            var counts: [Int: Int] = [:]
            for (r, relation) in layout.graph.types[t].relations.enumerated() {
                guard let (pairs, target) = keyPairs(type: t, relation: relation),
                      try pairs.allSatisfy({ try matchesAsALoad(source: t, column: $0.column, target: target, targetColumn: $0.target, facts, db) }) else { continue }
                counts[r] = Int.fromDatabaseValue(try facts.scalar(db, sql: brokenLinkSQL(type: t, pairs: pairs, target: target))) ?? 0
            }
            return counts
        }
    }

    /// The columns of type `t` a to-one `relation` is held by, each with the target's column
    /// it names, and the target; nil when the target is not a table or a part is a date column
    /// (a load reads dates, which name nothing).
    private func keyPairs(type t: Int, relation: RelationColumn) -> ([(column: String, target: String)], Int)? {
        let pairs: [(column: String, target: String)], target: Int
        if let key = relation.compositeKey {
            (pairs, target) = (Array(zip(key.columns, key.targetColumns)), key.targetType)
        } else if let fk = relation.foreignKey, layout.keyColumns(fk.targetType).count <= 1,
                  let k = fk.targetAttribute ?? layout.keyColumns(fk.targetType).first ?? layout.tables[fk.targetType]?.rowid {
            (pairs, target) = ([(fk.attribute, k)], fk.targetType)
        } else {
            return nil
        }
        guard let source = layout.tables[t], layout.tables[target] != nil,
              pairs.allSatisfy({ p in source.columns.first { $0.name == p.column }.map { !$0.isDate } ?? false }) else { return nil }
        return (pairs, target)
    }

    /// True when SQL's `=` between `column` and the target's `targetColumn` pairs exactly the
    /// values a load pairs (facts over both columns).
    private func matchesAsALoad(source t: Int, column: String, target: Int, targetColumn: String, _ facts: FileFacts, _ db: Database) throws -> Bool {
        let (s, tt) = (sources[t].name, sources[target].name), f = SQL.identifier(column), k = SQL.identifier(targetColumn)
        if try facts.exists(db, table: tt, where: "typeof(\(k)) IN ('integer', 'real')"),
           try facts.exists(db, table: s, where: "typeof(\(f)) = 'text' AND \(f) <> '' AND trim(\(f), '+-0123456789') = ''") { return false }
        guard try facts.exists(db, table: tt, where: "typeof(\(k)) = 'text'") else { return true }
        if try facts.exists(db, table: s, where: "typeof(\(f)) IN ('integer', 'real') AND \(f) = CAST(\(f) AS INTEGER)") { return false }
        return try !facts.exists(db, table: tt, where: "typeof(\(k)) = 'text' AND \(k) GLOB '*[^ -~]*'")
            && !facts.exists(db, table: s, where: "typeof(\(f)) = 'text' AND \(f) GLOB '*[^ -~]*'")
    }

    /// `SELECT count(*)` of type `t`'s rows whose parts (`pairs`) are all there and name no row
    /// of `target`: a plain `=` first (an index on the target serves), then the same by bytes.
    private func brokenLinkSQL(type t: Int, pairs: [(column: String, target: String)], target: Int) -> String {
        let matches = pairs.map { p in
            "t.\(SQL.identifier(p.target)) = s.\(SQL.identifier(p.column)) AND t.\(SQL.identifier(p.target)) = s.\(SQL.identifier(p.column)) COLLATE BINARY"
        }.joined(separator: " AND ")
        let present = pairs.map { "s.\(SQL.identifier($0.column)) IS NOT NULL" }.joined(separator: " AND ")
        return "SELECT count(*) FROM \(SQL.identifier(sources[t].name)) s WHERE \(present) AND NOT EXISTS (SELECT 1 FROM \(SQL.identifier(sources[target].name)) t WHERE \(matches))"
    }
}
