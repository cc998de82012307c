import Foundation
import GRDB
import LoupeModel

/// Writes objects and relations in Persist's format, inside a transaction the caller holds.
///
/// Objects are JSON documents in `by_type`, dates in Persist's `yyyy-MM-dd HH:mm:ss ZZZZZ` form
/// (UTC), nulls omitted; relations are `relations` rows in target order. The writer creates the
/// tables when missing (with Persist's exact statements), and adds what Loupe needs to read fast
/// (indexes on `relations`) and to know more than Persist records (`loupe_relation_kinds`).
struct PersistWriter {
    let db: Database

    /// Persist's table statements, verbatim (SQLite.swift output), and Loupe's additions.
    static let schema = [
        #"CREATE TABLE IF NOT EXISTS "by_type" ("id" INTEGER PRIMARY KEY NOT NULL, "type_name" TEXT NOT NULL, "json" TEXT NOT NULL)"#,
        #"CREATE TABLE IF NOT EXISTS "relations" ("from_id" INTEGER NOT NULL, "to_id" INTEGER NOT NULL, "relation" TEXT NOT NULL)"#,
        #"CREATE INDEX IF NOT EXISTS "loupe_relations_from" ON "relations" ("from_id", "relation")"#,
        #"CREATE INDEX IF NOT EXISTS "loupe_relations_to" ON "relations" ("to_id")"#,
        #"CREATE INDEX IF NOT EXISTS "loupe_by_type_type" ON "by_type" ("type_name")"#,
        #"CREATE TABLE IF NOT EXISTS "loupe_relation_kinds" ("type_name" TEXT NOT NULL, "relation" TEXT NOT NULL, "to_many" INTEGER NOT NULL, PRIMARY KEY ("type_name", "relation"))"#,
    ]

    /// Creates the tables and indexes that are missing.
    func createSchema() throws {
        for sql in PersistWriter.schema { try db.execute(sql: sql) }
    }

    /// Records whether a relation is to-many, so a to-many of one target is not read as to-one.
    func declareRelation(type: String, relation: String, toMany: Bool) throws {
        try db.execute(sql: #"INSERT OR REPLACE INTO "loupe_relation_kinds" VALUES (?, ?, ?)"#, arguments: [type, relation, toMany])
    }

    /// Inserts an object under a given id.
    func insert(id: Int64, type: String, attributes: [(String, Value)]) throws {
        try db.cachedStatement(sql: #"INSERT INTO "by_type" ("id", "type_name", "json") VALUES (?, ?, ?)"#)
            .execute(arguments: [id, type, PersistWriter.json(attributes)])
    }

    /// True when an object has this id.
    func exists(_ id: Int64) throws -> Bool {
        try Int64.fetchOne(db.cachedStatement(sql: #"SELECT "id" FROM "by_type" WHERE "id" = ?"#), arguments: [id]) != nil
    }

    /// Replaces the document of an existing object.
    func update(id: Int64, type: String, attributes: [(String, Value)]) throws {
        try db.cachedStatement(sql: #"UPDATE "by_type" SET "json" = ?, "type_name" = ? WHERE "id" = ?"#)
            .execute(arguments: [PersistWriter.json(attributes), type, id])
    }

    /// Removes every relation row out of an object.
    func deleteRelations(from: Int64) throws {
        try db.cachedStatement(sql: #"DELETE FROM "relations" WHERE "from_id" = ?"#).execute(arguments: [from])
    }

    /// Appends targets to one relation of one object, in the given order.
    func addRelation(from: Int64, relation: String, to targets: [Int64]) throws {
        let statement = try db.cachedStatement(sql: #"INSERT INTO "relations" ("from_id", "to_id", "relation") VALUES (?, ?, ?)"#)
        for t in targets { try statement.execute(arguments: [from, t, relation]) }
    }

    /// The JSON document of an object: members in order, nulls left out (as `encodeIfPresent`
    /// does), dates in Persist's form.
    static func json(_ attributes: [(String, Value)]) -> String {
        var out = "{"
        var first = true
        for (key, value) in attributes where !value.isNull {
            if !first { out += "," }
            first = false
            ValueFormatter.writeJSONString(key, to: &out)
            out += ":"
            write(value, to: &out)
        }
        return out + "}"
    }

    private static func write(_ value: Value, to out: inout String) {
        switch value {
        case .date(let d): ValueFormatter.writeJSONString(DateText.persist(d), to: &out)
        case .array(let items):
            out += "["
            for (i, v) in items.enumerated() { if i > 0 { out += "," }; write(v, to: &out) }
            out += "]"
        case .object(let o):
            out += "{"
            var first = true
            for m in o.members where !m.value.isNull {
                if !first { out += "," }
                first = false
                ValueFormatter.writeJSONString(m.key, to: &out)
                out += ":"
                write(m.value, to: &out)
            }
            out += "}"
        case .double(let d) where d.isFinite && d == d.rounded() && abs(d) < 1e15:
            out += String(Int64(d))   // as Swift's JSONEncoder writes 188.0
        default: ValueFormatter.writeJSON(value, to: &out)
        }
    }
}
