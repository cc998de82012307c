import Foundation
import GRDB
import LoupeModel

/// Persist's layout held somewhere other than a SQLite file (a PostgreSQL database's `by_type`
/// and `relations` tables), read with Persist's own loader so that it means exactly what the same
/// rows mean in a file: the rows are written, as they are, into a private temporary file in
/// Persist's layout (keys keep their kind: integers stay integers, text stays text), loaded by
/// ``PersistFormat``, and the file removed.
public enum PersistRows {
    /// One object's row: its key (an integer or text), type name and JSON document.
    public struct Object: Sendable {
        public let id: Key?
        public let typeName: String?
        public let json: String?
        public init(id: Key?, typeName: String?, json: String?) { (self.id, self.typeName, self.json) = (id, typeName, json) }
    }

    /// One relation row, in the order the relation's targets keep.
    public struct Edge: Sendable {
        public let from: Key?
        public let to: Key?
        public let relation: String?
        public init(from: Key?, to: Key?, relation: String?) { (self.from, self.to, self.relation) = (from, to, relation) }
    }

    /// A key as stored.
    public enum Key: Sendable {
        case int(Int64)
        case text(String)
        var databaseValue: DatabaseValue {
            switch self {
            case .int(let i): return i.databaseValue
            case .text(let s): return s.databaseValue
            }
        }
    }

    /// The graph the rows make, as Persist's loader reads them; `kinds` are Loupe's recorded
    /// relation cardinalities (`loupe_relation_kinds`: type, relation, to-many), if the store
    /// has them.
    public static func load(objects: [Object], edges: [Edge], kinds: [(type: String, relation: String, toMany: Bool)]) throws -> LoadedGraph {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-rows-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/store.sqlite"
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            // Columns without declared types: every value keeps the kind it was given.
            try db.execute(sql: "CREATE TABLE by_type (id, type_name, json)")
            try db.execute(sql: "CREATE TABLE relations (from_id, to_id, relation)")
            try db.execute(sql: "CREATE TABLE \(PersistFormat.relationKindsTable) (type_name TEXT NOT NULL, relation TEXT NOT NULL, to_many INTEGER NOT NULL, PRIMARY KEY (type_name, relation))")
            let object = try db.makeStatement(sql: "INSERT INTO by_type VALUES (?, ?, ?)")
            for o in objects { try object.execute(arguments: [o.id?.databaseValue ?? .null, o.typeName, o.json]) }
            let edge = try db.makeStatement(sql: "INSERT INTO relations VALUES (?, ?, ?)")
            for e in edges { try edge.execute(arguments: [e.from?.databaseValue ?? .null, e.to?.databaseValue ?? .null, e.relation]) }
            let kind = try db.makeStatement(sql: "INSERT OR REPLACE INTO \(PersistFormat.relationKindsTable) VALUES (?, ?, ?)")
            for k in kinds { try kind.execute(arguments: [k.type, k.relation, k.toMany]) }
            try db.execute(sql: "CREATE INDEX rows_type ON by_type (type_name)")
        }
        try queue.close()
        return try PersistFormat.load(try StoreFile.openForReading(path), progress: nil)
    }
}
