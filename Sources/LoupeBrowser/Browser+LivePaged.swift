import Foundation
import LoupeModel

/// The rows of a paged sheet on screen, as they were before the store was read again: enough to
/// mark what another process's commit did to them.
struct VisiblePagedRows {
    /// The sheet's place in the stack, its row count and its first visible row.
    let depth: Int, count: Int, top: Int
    /// True when the sheet lists a whole type (in key order: new objects come last).
    let isWholeType: Bool
    /// Each visible row's object and cells, by column name, top to bottom.
    let rows: [(identity: ObjectIdentity, cells: [String: Value])]
    /// The selected row's object.
    let selected: ObjectIdentity?
}

extension Browser {
    /// The visible rows of the paged sheet on screen (nil for any other sheet).
    func visiblePagedRows() -> VisiblePagedRows? {
        guard let graph, let sheet = current, case .paged(let paged) = sheet.content else { return nil }
        let columns = sheet.columns(graph: graph)
        let end = min(sheet.count, sheet.top + max(1, layout.recordsBody.height))
        let rows = (sheet.top..<max(sheet.top, end)).compactMap { row -> (ObjectIdentity, [String: Value])? in
            guard let ref = sheet.ref(at: row) else { return nil }
            let cells = sheet.cells(row: row, columns: columns, graph: graph)
            return (graph.identity(of: ref), cells)
        }
        var isWholeType = false
        if case .type = paged.source { isWholeType = true }
        return VisiblePagedRows(depth: stack.count, count: sheet.count, top: sheet.top, isWholeType: isWholeType, rows: rows,
                                selected: sheet.ref(at: sheet.selection).map(graph.identity(of:)))
    }

    /// Marks what another process's commit did to the rows that were on screen (`before`), now
    /// that the sheet is read again: cells that changed (`~`), rows it deleted (kept in view,
    /// struck out, until the next key: their objects are looked up by key, so a row that only
    /// scrolled out is not one), and, on a whole type whose window showed its end, the rows after
    /// the old end (`+`: a type lists its objects in key order, new ones last). Only the rows on
    /// screen are compared: a paged store is never held whole. The selection stays on its object
    /// where it is still on screen. Returns `+a ~c −d`.
    func markPagedCommit(since before: VisiblePagedRows) -> String {
        ensurePagedWindow(span: max(1, layout.recordsBody.height))
        guard live != nil, var after = visiblePagedRows(), after.depth == before.depth, let pages else { return "+0 ~0 −0" }
        if let selected = before.selected, after.selected != selected, let i = after.rows.firstIndex(where: { $0.identity == selected }) {
            stack[stack.count - 1].selection = after.top + i
            ensurePagedWindow(span: max(1, layout.recordsBody.height))
            after = visiblePagedRows() ?? after
        }
        let now = Dictionary(after.rows.map { ($0.identity, $0.cells) }, uniquingKeysWith: { a, _ in a })
        let was = Set(before.rows.map(\.identity))
        var changed: [ObjectIdentity: Set<String>] = [:]
        for (identity, cells) in before.rows {
            guard let current = now[identity] else { continue }
            let names = Set(cells.keys.filter { cells[$0] != current[$0] })
            if !names.isEmpty { changed[identity] = names }
        }
        // Gone from the screen: deleted, or moved (shifted by rows deleted or added before them).
        let missing = before.rows.map(\.identity).filter { now[$0] == nil }
        let deleted = (try? stillStored(missing, in: pages)).map { Set(missing).subtracting($0) } ?? []
        var ghosts: [LiveGhost] = [], gone = 0
        for (i, row) in before.rows.enumerated() where deleted.contains(row.identity) {
            ghosts.append(LiveGhost(depth: before.depth, position: before.top + i - gone, cells: row.cells))
            gone += 1
        }
        var added: Set<ObjectIdentity> = []
        if before.isWholeType, after.isWholeType, after.count > before.count, before.top + before.rows.count >= before.count {
            for (i, row) in after.rows.enumerated() where after.top + i >= before.count && !was.contains(row.identity) { added.insert(row.identity) }
        }
        live?.ghosts = ghosts
        live?.added = added
        live?.changed = changed
        if !added.isEmpty || !changed.isEmpty { live?.markedAt = Date() }
        return "+\(added.count) ~\(changed.count) −\(deleted.count)"
    }

    /// Those of `objects` the store still holds, looked up by key (type by type).
    private func stillStored(_ objects: [ObjectIdentity], in pages: PageSource) throws -> Set<ObjectIdentity> {
        var found: Set<ObjectIdentity> = []
        for (type, identities) in Dictionary(grouping: objects, by: \.type) {
            guard let t = pages.catalog.firstIndex(where: { $0.name == type.rawValue }) else { continue }
            let graph = try pages.objects(type: t, keys: identities.map(\.id))
            for identity in identities where graph.ref(identity) != nil { found.insert(identity) }
        }
        return found
    }
}
