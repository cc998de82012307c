import Foundation
import GRDB
import LoupeModel

/// One document of a document store, as its type, key and top-level fields.
struct StoredDocument {
    var type: String
    var id: ObjectID
    var fields: [(key: String, value: Value)]
}

/// Builds a graph from documents: one type per document type (in order of first appearance),
/// attributes in order of first appearance, and, when `references` is on, relations from fields
/// that hold other documents' ids.
enum DocumentGraph {
    /// A field is a reference when every non-null value of it, across its type, is the id of a
    /// document (to-one) or an array of such ids (to-many), and at least one is. The field stays
    /// an attribute too (its last step in a path is the id; `left.name` goes through it).
    static func build(formatName: String, documents: [StoredDocument], readOnlyReason: String, references: Bool) -> GraphBuilder {
        let builder = GraphBuilder(formatName: formatName)
        var refs: [ObjectID: ObjectRef] = [:]
        for d in documents {
            let t = builder.type(d.type, readOnlyReason: readOnlyReason, keyPolicy: .column("id", autoIncrements: false))
            let ref = builder.addObject(type: t, id: d.id)
            if refs[d.id] == nil { refs[d.id] = ref }
            for (key, value) in d.fields { builder.set(value, type: t, row: Int(ref.row), attribute: builder.attribute(key, of: t)) }
        }
        guard references else { return builder }
        for t in 0..<builder.typeCount {
            for (a, name) in builder.attributeNames(of: t).enumerated() {
                let values = builder.column(type: t, attribute: a)
                var toMany = false, seen = false
                let isReference = values.allSatisfy { v in
                    switch v {
                    case .null: return true
                    case .string(let s): seen = true; return refs[.string(s)] != nil
                    case .array(let items):
                        toMany = true
                        return items.allSatisfy { if case .string(let s) = $0 { seen = true; return refs[.string(s)] != nil } else { return false } }
                    default: return false
                    }
                }
                guard isReference, seen else { continue }
                let r = builder.relation(name, of: t, toMany: toMany)
                for (row, v) in values.enumerated() {
                    let ids: [Value] = { if case .array(let items) = v { return items } else { return [v] } }()
                    for case .string(let s) in ids {
                        if let to = refs[.string(s)] { builder.addEdge(from: ObjectRef(type: t, row: row), relation: r, to: to) }
                    }
                }
            }
        }
        return builder
    }

    /// Reads a document store on one snapshot: `read` lists its documents (and notes problems),
    /// then the graph is built from them.
    static func load(_ file: StoreFile, formatName: String, readOnlyReason: String, references: Bool, progress: LoadProgress?,
                     _ read: @escaping @Sendable (Database, inout [String]) throws -> [StoredDocument]) throws -> LoadedGraph {
        let (results, stamp) = try file.readOnSnapshot(workers: 1) { _, db -> LoadedGraph in
            var warnings: [String] = []
            let documents = try read(db, &warnings)
            progress?(documents.count, documents.count)
            let builder = build(formatName: formatName, documents: documents, readOnlyReason: readOnlyReason, references: references)
            return LoadedGraph(graph: builder.finish(), warnings: warnings)
        }
        var loaded = results[0]
        loaded.stamp = stamp
        return loaded
    }

    /// ISO 8601 timestamps (`2024-03-28T09:00:07.586Z`, `2017-01-31T23:56:31Z`) as dates, at
    /// every depth; everything else unchanged.
    static func datingISOStrings(_ v: Value) -> Value {
        switch v {
        case .string(let s): return isTimestamp(s) ? DateText.parse(s).map(Value.date) ?? v : v
        case .array(let items): return .array(items.map(datingISOStrings))
        case .object(let o): return .object(NestedObject(o.members.map { ($0.key, datingISOStrings($0.value)) }))
        default: return v
        }
    }

    /// `yyyy-MM-ddTHH:mm:ss[.fff](Z|±hh:mm)`.
    static func isTimestamp(_ s: String) -> Bool {
        let b = Array(s.utf8)
        guard b.count >= 20, b.count <= 35 else { return false }
        let shape = Array("dddd-dd-ddTdd:dd:dd".utf8)
        for (i, expected) in shape.enumerated() {
            let isDigit = b[i] >= UInt8(ascii: "0") && b[i] <= UInt8(ascii: "9")
            if expected == UInt8(ascii: "d") ? !isDigit : b[i] != expected { return false }
        }
        if b.last == UInt8(ascii: "Z") { return true }
        let sign = b[b.count - 6]
        return sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-")
    }
}

/// A SwiftSerialization store (one `record` table of JSON documents), read as its classes: one
/// type per stored class name (`objectName`), keyed by the record's `id`; the `data` JSON's keys
/// as attributes (its `"object"` class-name key left out), `createdAt` too; embedded objects
/// stay nested values that key paths reach (`Student where teacher.lastName == "Kob"`), and
/// ISO timestamps are dates at every depth. Nothing in this format is stored by reference, so
/// it has no relations. Old class names stay their own types: the renames live in the app's
/// code (`Legacy.addClassRefactor`), not in the file.
public enum SwiftSerializationFormat: StoreFormat {
    public static let name = "SwiftSerialization"
    static let readOnlyReason = "a SwiftSerialization store: Loupe does not write its JSON records yet"

    public static func matches(_ db: Database) throws -> Bool {
        guard let columns = try db.columnNames(of: "record") else { return false }
        return Set(["id", "objectName", "createdAt", "data"]).isSubset(of: columns)
    }

    public static func catalog(_ db: Database) throws -> [(name: String, count: Int)] {
        try Row.fetchAll(db, sql: "SELECT objectName, count(*) FROM record GROUP BY objectName ORDER BY min(rowid)").map {
            (($0[0] as DatabaseValue).lenientText ?? "record", (($0[1] as DatabaseValue).lenientInt).map(Int.init) ?? 0)
        }
    }

    public static func load(_ file: StoreFile, progress: LoadProgress?) throws -> LoadedGraph {
        try DocumentGraph.load(file, formatName: name, readOnlyReason: readOnlyReason, references: false, progress: progress) { db, warnings in
            var documents: [StoredDocument] = []
            for row in try Row.fetchAll(db, sql: "SELECT id, objectName, createdAt, data FROM record ORDER BY rowid") {
                guard let id = (row[0] as DatabaseValue).objectID else { continue }
                var fields: [(key: String, value: Value)] = []
                let createdAt = (row[2] as DatabaseValue).lenientText
                fields.append(("createdAt", createdAt.map { DateText.parse($0).map(Value.date) ?? .string($0) } ?? .null))
                let text = (row[3] as DatabaseValue).lenientText ?? ""
                var className = (row[1] as DatabaseValue).lenientText
                if case .object(let o)? = try? JSONReader.parse(text, persistDates: false) {
                    if className == nil, case .string(let s)? = o["object"] { className = s }
                    fields += o.members.filter { $0.key != "object" }.map { ($0.key, DocumentGraph.datingISOStrings($0.value)) }
                } else {
                    warnings.append("record \(id): its data is not a JSON object; shown as text")
                    fields.append(("data", .string(text)))
                }
                documents.append(StoredDocument(type: className ?? "record", id: id, fields: fields))
            }
            return documents
        }
    }
}

/// A Couchbase Lite 1.x database (a `NAME.cblite2` folder holding `db.sqlite3` and
/// `attachments/`), read as the documents an app sees: each document's current revision (the
/// winning one when revisions conflict; deleted documents hidden, older revisions never shown) is
/// one object keyed by its document id.
///
/// A document written by dali (`{"kind": K, "data": {…}}`) is of type `K` with `data`'s keys as
/// attributes; any other document is of its `type` field's type (else `Document`) with its own
/// keys. A field whose values are other documents' ids is a relation (to-one; an array of ids,
/// to-many), so paths and backlinks follow it. Attachments show under `_attachments` with their
/// content type and size. ISO timestamps are dates.
public enum CouchbaseLiteFormat: StoreFormat {
    public static let name = "Couchbase Lite"
    static let readOnlyReason = "a Couchbase Lite database: its documents are revisions that only Couchbase Lite writes"

    /// The SQLite file inside a Couchbase Lite bundle, or nil when `path` is not a folder holding one.
    public static func databasePath(inBundle path: String) -> String? {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else { return nil }
        let inner = (path as NSString).appendingPathComponent("db.sqlite3")
        return FileManager.default.fileExists(atPath: inner) ? inner : nil
    }

    public static func matches(_ db: Database) throws -> Bool {
        guard let revs = try db.columnNames(of: "revs"), let docs = try db.columnNames(of: "docs") else { return false }
        return Set(["doc_id", "revid", "current", "deleted", "json"]).isSubset(of: revs) && Set(["doc_id", "docid"]).isSubset(of: docs)
    }

    public static func catalog(_ db: Database) throws -> [(name: String, count: Int)] {
        try Row.fetchAll(db, sql: """
            SELECT CASE WHEN json_valid(CAST(json AS TEXT)) THEN coalesce(
                       CASE WHEN json_type(CAST(json AS TEXT), '$.kind') = 'text' AND json_type(CAST(json AS TEXT), '$.data') = 'object'
                            THEN json_extract(CAST(json AS TEXT), '$.kind') END,
                       CASE WHEN json_type(CAST(json AS TEXT), '$.type') = 'text' THEN json_extract(CAST(json AS TEXT), '$.type') END,
                       'Document') ELSE 'Document' END AS kind,
                   count(DISTINCT doc_id)
            FROM revs WHERE current = 1 AND deleted = 0 GROUP BY kind ORDER BY min(sequence)
            """).map { (($0[0] as DatabaseValue).lenientText ?? "Document", (($0[1] as DatabaseValue).lenientInt).map(Int.init) ?? 0) }
    }

    public static func load(_ file: StoreFile, progress: LoadProgress?) throws -> LoadedGraph {
        try DocumentGraph.load(file, formatName: name, readOnlyReason: readOnlyReason, references: true, progress: progress) { db, warnings in
            // Each document's winning current revision: the highest generation, then the highest revid.
            var winners: [Int64: (docid: String, generation: Int, revid: String, json: String)] = [:]
            var order: [Int64] = []
            let rows = try Row.fetchAll(db, sql: """
                SELECT r.doc_id, d.docid, r.revid, CAST(r.json AS TEXT) FROM revs r JOIN docs d ON d.doc_id = r.doc_id
                WHERE r.current = 1 AND r.deleted = 0 ORDER BY r.sequence
                """)
            for row in rows {
                guard let doc = (row[0] as DatabaseValue).lenientInt, let docid = (row[1] as DatabaseValue).lenientText,
                      let revid = (row[2] as DatabaseValue).lenientText else { continue }
                let generation = Int(revid.prefix { $0 != "-" }) ?? 0
                let json = (row[3] as DatabaseValue).lenientText ?? ""
                if let w = winners[doc] {
                    if (generation, revid) > (w.generation, w.revid) { winners[doc] = (docid, generation, revid, json) }
                } else {
                    order.append(doc)
                    winners[doc] = (docid, generation, revid, json)
                }
            }
            var documents: [StoredDocument] = []
            for doc in order {
                let w = winners[doc]!
                guard case .object(let body)? = try? JSONReader.parse(w.json, persistDates: false) else {
                    warnings.append("document \(w.docid): its body is not a JSON object; left out")
                    continue
                }
                var type = "Document"
                var fields: [(key: String, value: Value)]
                if case .string(let kind)? = body["kind"], case .object(let data)? = body["data"] {
                    type = kind
                    fields = data.members
                } else {
                    if case .string(let t)? = body["type"] { type = t }
                    fields = body.members.filter { !$0.key.hasPrefix("_") }
                }
                fields = fields.map { ($0.key, DocumentGraph.datingISOStrings($0.value)) }
                if case .object(let attachments)? = body["_attachments"] {
                    fields.append(("_attachments", .object(NestedObject(attachments.members.map { name, info in
                        guard case .object(let o) = info else { return (name, info) }
                        return (name, .object(NestedObject(o.members.filter { ["content_type", "length", "digest"].contains($0.key) })))
                    }))))
                }
                documents.append(StoredDocument(type: type, id: .string(w.docid), fields: fields))
            }
            return documents
        }
    }
}
