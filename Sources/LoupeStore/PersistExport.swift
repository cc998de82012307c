import Foundation
import GRDB
import LoupeModel

/// Writes a whole loaded graph as a new file in the native (Persist) format, keeping every
/// object's id, attributes, and relation order: any store Loupe reads can be saved as one the
/// library API and Persist read.
public enum PersistExport {
    /// Writes `graph` to `path`, which must not exist.
    public static func write(_ graph: ObjectGraph, to path: String) throws {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw StoreError(.readOnly, path: path, reason: "the file exists; Loupe will not overwrite it")
        }
        let file = try StoreFile.openForWriting(path)
        do {
            try file.queue.write { db in
                let writer = PersistWriter(db: db)
                try writer.createSchema()
                // Persist keys are global integers: objects with other keys get fresh ones.
                var ids: [[Int64]] = []
                var next = (graph.types.flatMap(\.ids).compactMap { if case .int(let i) = $0 { return i } else { return nil } }.max() ?? 0) + 1
                var used = Set<Int64>()
                for table in graph.types {
                    var column: [Int64] = []
                    for id in table.ids {
                        if case .int(let i) = id, used.insert(i).inserted { column.append(i) } else { column.append(next); used.insert(next); next += 1 }
                    }
                    ids.append(column)
                }
                for (t, table) in graph.types.enumerated() {
                    for row in 0..<table.count {
                        let attributes = table.attributes.enumerated().map { ($1.name, table.value(row: row, attribute: $0)) }
                        try db.execute(sql: #"INSERT INTO "by_type" ("id", "type_name", "json") VALUES (?, ?, ?)"#,
                                       arguments: [ids[t][row], table.name.rawValue, PersistWriter.json(attributes)])
                    }
                }
                for (t, table) in graph.types.enumerated() {
                    for relation in table.relations {
                        try writer.declareRelation(type: table.name.rawValue, relation: relation.name, toMany: relation.isToMany)
                        for row in 0..<table.count {
                            for target in relation.targets(of: row) {
                                try db.execute(sql: #"INSERT INTO "relations" ("from_id", "to_id", "relation") VALUES (?, ?, ?)"#,
                                               arguments: [ids[t][row], ids[Int(target.type)][Int(target.row)], relation.name])
                            }
                        }
                    }
                }
            }
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw StoreError.from(error, path: path)
        }
    }
}
