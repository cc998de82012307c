import Foundation
import GRDB
import LoupeModel

extension PersistPages {
    /// The store as this paged reader's own commit left it, without reading it again: the
    /// catalog's counts moved by the objects the commit added and deleted, `newAttributes` (by
    /// type name) added to the schema, and Loupe's relation index (``SideIndex``) carried forward
    /// by repeating the commit's writes to `relations` on its copy, then stamped with the file's
    /// new stamp; the order of attributes kept for sorts (``SortIndex``) is carried for the types
    /// the commit wrote no document of. The index is carried only when it described the file just before the commit and
    /// nobody else wrote in between (in a rollback-journal file, the change counter moved by
    /// exactly one); otherwise it is left stale and `I` offers to build it again. The new
    /// catalog is kept as paged mode's cache entry, so that opening the store again reads nothing.
    /// What passes over the documents found of each attribute (``attributeFacts``) is moved by
    /// the commit's documents, before and after, exactly (see ``carriedFacts(_:)``).
    public func afterCommit(_ report: StoreCommit.Report, newAttributes: [String: [String]]) -> PersistPages {
        let stamp = report.stampAfter ?? file.stamp()
        let wroteRelations = !report.relationWrites.isEmpty
        // (Types not counted yet stay so: the new state's counts are read when needed.)
        let counts = counted.known
        let updated = types.enumerated().map { t, type -> PagedType in
            let added = newAttributes[type.name]?.filter { !type.attributes.contains($0) } ?? []
            return PagedType(name: type.name, count: counts.map { max(0, $0[t] + (report.countChanges[type.name] ?? 0)) }, stored: type.stored,
                             storedAsBytes: type.storedAsBytes, attributes: type.attributes + added, relations: type.relations)
        }
        if let before = report.stampBefore, stamp.followsDirectly(before) {
            if hasSideIndex { carrySideIndex(report.relationWrites, stamp: stamp) }
            // Types whose documents the commit wrote (by stored and catalog name) lose their order.
            let written = Set(report.documents.map(\.typeName)).union(report.countChanges.keys)
            SortIndex.carry(for: file, from: before, to: stamp, dropping: written.union(types.filter { written.contains(String.fromDatabaseValue($0.stored) ?? "\u{0}") }.map(\.name)))
        }
        if counts != nil { SchemaCache.savePaged(updated.map { $0.cached(count: $0.count ?? 0) }, file: file, stamp: stamp) }
        let next = PersistPages(file: file, types: updated, schemaIsExact: schemaIsExact && !wroteRelations && newAttributes.values.allSatisfy(\.isEmpty),
                                hasRelationIndexes: hasRelationIndexes, hasTypeIndex: hasTypeIndex, edgesPerObject: edgesPerObject, stamp: stamp)
        let kept = carriedFacts(report.documents)
        next.knownFacts.withLock { $0 = kept }
        SchemaCache.saveFacts(Dictionary(kept.compactMap { t, facts in t < updated.count ? (updated[t].name, facts) : nil }, uniquingKeysWith: { a, _ in a }),
                              file: file, stamp: stamp)
        return next
    }

    /// The attribute facts after a commit that wrote `documents` (each object's document before
    /// and after): each name's counts of kinds less the members the documents held before, plus
    /// those they hold after; still plain unless a new member would be read otherwise by
    /// `json_extract`. Only names whose facts were plain are carried (every document of the type
    /// then is JSON object text, so the text a commit reports is the text that was counted); the
    /// others are read again when asked.
    func carriedFacts(_ documents: [(typeName: String, before: String, after: String)]) -> [Int: [String: AttributeFact]] {
        var facts = knownFacts.withLock { $0 }
        for (t, byName) in facts where t < types.count {
            let changed = documents.filter { $0.typeName == types[t].name }
            guard !changed.isEmpty else { continue }
            var next = byName.filter(\.value.plain)
            let only = PersistFormat.MemberNames(Set(next.keys))
            for document in changed {
                for (text, sign) in [(document.before, -1), (document.after, 1)] where !text.isEmpty {
                    _ = Array(text.utf8).withUnsafeBytes { raw in
                        Self.forEachMember(of: raw, only: only) { name, value, awkward in
                            next[name]?.counts[value.kind.rawValue, default: 0] += sign
                            if sign > 0 && awkward { next[name]?.plain = false }
                        }
                    }
                }
            }
            // A count below zero: what was counted is not what the commit reports; read again.
            facts[t] = next.filter { $0.value.plain && !$0.value.counts.values.contains { $0 < 0 } }
        }
        return facts
    }

    /// Repeats `writes` on the side index's copy of `relations` (each inserted row under the
    /// rowid the store gave it, with its ends' types read from the store by key), drops the
    /// relations' shapes when rows changed (statements read them again), and stamps the index
    /// with `stamp`; all in one transaction. A failure leaves the index as it was: stale.
    private func carrySideIndex(_ writes: [StoreCommit.RelationWrite], stamp: FileStamp) {
        guard let location = SideIndex.location(for: file), let path = SchemaCache.realPath(file.path) else { return }
        // Close our reader first: the index is rewritten in place.
        side.withLock { queue in try? queue?.close(); queue = nil }
        sideBuilt.withLock { $0 = false }
        let positions = Dictionary(types.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
        do {
            // The types of the new rows' ends, read from the store (by key: its primary key).
            var typeOf: [Int64: Int] = [:]
            let ends = Set(writes.filter { $0.insertedRowID != nil }.flatMap { $0.arguments.prefix(2) }.compactMap { $0.storage.int64Value })
            try file.read { db in
                let statement = try db.cachedStatement(sql: "SELECT type_name FROM by_type WHERE id = ?")
                for id in ends {
                    if let stored = try DatabaseValue.fetchOne(statement, arguments: [id]), let t = positions[PersistFormat.typeName(of: stored)] { typeOf[id] = t }
                }
            }
            let queue = try DatabaseQueue(path: location)
            defer { try? queue.close() }
            try queue.write { db in
                for write in writes {
                    if let rowid = write.insertedRowID {
                        let type = { (v: DatabaseValue) -> DatabaseValue in v.storage.int64Value.flatMap { typeOf[$0] }.map { Int64($0).databaseValue } ?? .null }
                        try db.execute(sql: "INSERT OR REPLACE INTO relations VALUES (?, ?, ?, ?, ?, ?)",
                                       arguments: [rowid, write.arguments[0], write.arguments[1], write.arguments[2], type(write.arguments[0]), type(write.arguments[1])])
                    } else {
                        try db.execute(sql: write.sql, arguments: StatementArguments(write.arguments))
                    }
                }
                if !writes.isEmpty { try db.execute(sql: "UPDATE shapes SET json = NULL") }
                try db.execute(sql: "UPDATE loupe_side_index SET stamp = ?, header = ?, path = ?",
                               arguments: [try JSONEncoder().encode(stamp), Data(file.databaseHeader()), path])
            }
        } catch {
            return   // the index stays stale: `I` offers to build it again
        }
    }
}

extension DatabaseValue.Storage {
    /// The integer this value holds, if it is one.
    var int64Value: Int64? { if case .int64(let i) = self { return i }; return nil }
}

extension FileStamp {
    /// True when this stamp can only be the file after one commit from `before`: in a
    /// rollback-journal file, the same file with its change counter one more. (A WAL file's
    /// header does not count commits; there, the commit's own stamp is taken as is.)
    func followsDirectly(_ before: FileStamp) -> Bool {
        guard inode == before.inode else { return false }
        guard walSize == nil, before.walSize == nil else { return true }
        func counter(_ bytes: [UInt8]) -> UInt32? {
            guard bytes.count == 4 else { return nil }
            return bytes.reduce(0) { $0 << 8 | UInt32($1) }
        }
        guard let a = counter(before.changeCounter), let b = counter(changeCounter) else { return false }
        return b == a &+ 1
    }
}
