import Foundation
import LoupeModel

/// The rows of Persist's layout that planning a commit reads, wherever the layout is stored: a
/// SQLite file (``PersistEditWriter``) or a PostgreSQL database's `by_type` and `relations`.
public protocol PersistLayoutReading {
    /// A few documents (up to 50, in key order) from which the store's style for new documents is
    /// learnt: pretty-printed as Persist writes them, or compact; the zone its dates are written in.
    func sampleDocuments() throws -> [String]
    /// Each of the objects `ids` that has a row: its stored type name and document text. An id
    /// with no row is absent from the answer.
    func storedRows(_ ids: [ObjectID]) throws -> [ObjectID: (typeName: String?, json: String?)]
    /// True when a row already holds the key `id`.
    func isTaken(_ id: ObjectID) throws -> Bool
    /// The targets of one object's relation rows of one name, in the order the store keeps them.
    func relationTargets(from id: ObjectID, relation: String) throws -> [ObjectID]
    /// How conflicts name the store and whoever else writes to it: `("the file", "another
    /// process")`, `("the database", "another session")`.
    var words: (store: String, writer: String) { get }
}

/// What a commit writes for one object of a store in Persist's layout, whatever holds the layout:
/// its document before and after (`""` when there is none, as Persist's history keeps them) and
/// its writes, in order. Each store turns the writes into its own statements.
public struct PersistEdit: Sendable {
    /// One write to `by_type` or `relations`, for the object ``PersistEdit/id``.
    public enum Write: Sendable, Equatable {
        /// A new `by_type` row.
        case insertObject(typeName: String, json: String)
        /// The object's document replaced.
        case updateDocument(json: String)
        /// The object's `by_type` row and every `relations` row from or to it removed.
        case deleteObject
        /// Every `relations` row of this name from the object removed (before its new rows).
        case deleteRelation(String)
        /// A `relations` row from the object to `to`, appended.
        case insertRelation(String, to: ObjectID)
    }

    public let object: ObjectIdentity
    public let kind: WritePlan.Kind
    /// The object's key in `by_type.id`.
    public let id: ObjectID
    /// Its `type_name` as stored (a new object's type).
    public let typeName: String
    public let before: String
    public let after: String
    public let writes: [Write]

    /// The plan's lines for this object, `statements` being its writes as the store spells them.
    public func lines(statements: [String]) -> [String] {
        Self.lines(object: object, kind: kind, before: before, after: after, statements: statements)
    }

    /// A Persist object's lines in a plan: its kind, its document before and after (or that only
    /// relations change), then its statements, indented.
    static func lines(object: ObjectIdentity, kind: WritePlan.Kind, before: String, after: String, statements: [String]) -> [String] {
        var lines = ["\(object) (\(kind.rawValue))"]
        if before == after {
            lines.append("  json unchanged (relations only)")
        } else {
            if !before.isEmpty { lines.append("  json before: " + before.replacingOccurrences(of: "\n", with: "\n               ")) }
            if !after.isEmpty { lines.append("  json after:  " + after.replacingOccurrences(of: "\n", with: "\n               ")) }
        }
        return lines + statements.map { "  " + $0 }
    }
}

/// Turns staged changes into Persist's writes as Persist makes them: a changed object's document
/// rewritten in the store's own style (only the changed members re-encoded), relation rows deleted
/// and added for the relations that changed, a deleted object's row and every relation row that
/// touches it removed, a new object's document written in the style of the store's documents.
/// With `verify`, every existing object is compared with what was loaded (its document's members,
/// the targets of each relation the changes rewrite) and every new key must be free; what differs
/// is returned as conflicts, in words.
public enum PersistEditPlanner {
    public static func plan(_ pending: PendingChanges, reading store: some PersistLayoutReading, recordsHistory: Bool,
                            verify: Bool) throws -> (edits: [PersistEdit], conflicts: [String]) {
        let base = pending.base, staged = pending.graph, changes = pending.changes
        var edits: [PersistEdit] = [], conflicts: [String] = []
        let sample = try store.sampleDocuments()
        var storeStyle = sample.contains { $0.contains("\n") } || sample.isEmpty && recordsHistory ? PersistJSON.Style.persist : PersistJSON.Style.compact
        if let offset = sample.lazy.compactMap(PersistJSON.dateOffset).first { storeStyle.dateOffsetMinutes = offset }

        let touched = changes.touched
        let stored = try store.storedRows(touched.filter { !changes.isInserted($0) }.map { staged.id(of: $0) })
        for ref in touched {
            let table = staged.table(ref)
            let row = Int(ref.row)
            let isNew = changes.isInserted(ref), isGone = changes.isRemoved(ref)
            if isNew && isGone { continue }
            let identity = staged.identity(of: ref)
            let id = staged.id(of: ref)
            if isNew {
                let values = table.attributes.enumerated().map { ($0.element.name, table.value(row: row, attribute: $0.offset)) }.filter { !$0.1.isNull }
                let json = PersistJSON.rewrite(nil, changes: values, style: storeStyle)
                if verify, try store.isTaken(id) {
                    conflicts.append("\(identity): the id is taken in \(store.words.store) (\(store.words.writer) inserted an object)")
                }
                var writes = [PersistEdit.Write.insertObject(typeName: table.name.rawValue, json: json)]
                writes += relationRows(of: ref, in: staged, relations: table.relations.map(\.name))
                edits.append(PersistEdit(object: identity, kind: .create, id: id, typeName: table.name.rawValue, before: "", after: json, writes: writes))
                continue
            }
            // An existing object: its document as stored, checked against what was loaded.
            guard let found = stored[id] else {
                conflicts.append("\(identity) was deleted by \(store.words.writer)")
                continue
            }
            let original = found.json ?? ""
            let storedTypeName = found.typeName ?? table.name.rawValue
            let baseTable = base.types[table.index]
            if verify, let conflict = documentConflict(original, loaded: baseTable, row: row, in: store.words.store) { conflicts.append("\(identity)\(conflict)") }
            let changedRelations = changes.relinkedRelations(of: ref).sorted { (table.relation(named: $0) ?? 0) < (table.relation(named: $1) ?? 0) }
            for name in changedRelations where verify {
                let loaded = baseTable.relation(named: name).map { r in baseTable.relations[r].targets(of: row).map { base.id(of: $0) } } ?? []
                if try store.relationTargets(from: id, relation: name) != loaded { conflicts.append("\(identity).\(name) was changed by \(store.words.writer)") }
            }
            if isGone {
                edits.append(PersistEdit(object: identity, kind: .delete, id: id, typeName: storedTypeName, before: original, after: "", writes: [.deleteObject]))
                continue
            }
            let edited = changes.changedAttributes(of: ref).compactMap { name in table.attributeIndex[name].map { ($0, name) } }.sorted { $0.0 < $1.0 }
            var writes: [PersistEdit.Write] = []
            var after = original
            if !edited.isEmpty {
                let values = edited.map { ($0.1, table.value(row: row, attribute: $0.0)) }
                // A number or a bool is written alike in every style; only text, dates, nested
                // values and removals need the document's own style read first.
                let styleFree = values.allSatisfy { v in
                    switch v.1 { case .int, .double, .bool: return true; default: return false }
                }
                if styleFree, let spliced = PersistJSON.splicingValues(original, changes: values, style: storeStyle) {
                    after = spliced
                } else {
                    after = PersistJSON.rewrite(original, changes: values, style: PersistJSON.style(of: original, fallback: storeStyle))
                }
                writes.append(.updateDocument(json: after))
            }
            for name in changedRelations {
                writes.append(.deleteRelation(name))
                writes += relationRows(of: ref, in: staged, relations: [name])
            }
            if !writes.isEmpty {
                edits.append(PersistEdit(object: identity, kind: .update, id: id, typeName: storedTypeName, before: original, after: after, writes: writes))
            }
        }
        return (edits, conflicts)
    }

    /// The relation rows of an object's targets in the named relations, in order.
    private static func relationRows(of ref: ObjectRef, in graph: ObjectGraph, relations names: [String]) -> [PersistEdit.Write] {
        let table = graph.table(ref)
        var out: [PersistEdit.Write] = []
        for name in names {
            guard let r = table.relation(named: name), table.relations[r].name == name else { continue }
            for target in table.relations[r].targets(of: Int(ref.row)) { out.append(.insertRelation(name, to: graph.id(of: target))) }
        }
        return out
    }

    /// Why a stored document no longer holds what was loaded (`.title is … in the file, …
    /// when loaded`, the store named by `place`), or nil.
    static func documentConflict(_ text: String, loaded table: TypeTable, row: Int, in place: String) -> String? {
        var now: [String: Value] = [:]
        if case .object(let o)? = try? JSONReader.parse(text) { for m in o.members { now[m.key] = m.value } }
        for column in table.attributes {
            let inStore = now[column.name] ?? .null
            let loaded = table.value(row: row, attribute: table.attributeIndex[column.name]!)
            if inStore != loaded { return ".\(column.name) is \(ValueFormatter.plain(inStore)) in \(place), \(ValueFormatter.plain(loaded)) when loaded" }
        }
        return nil
    }
}
