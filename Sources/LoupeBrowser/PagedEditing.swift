import Foundation
import LoupeModel
import LoupeQuery

/// Editing in paged mode: the same keys and statements as over a loaded graph (`e`, `a`, `d`,
/// `U`, `R`, `Ctrl-S`; `update`, `insert`, `delete`, `.changes`, `.commit`, `.undo`, `.redo`,
/// `.rollback`, `.reload`), staged in a ``PagedChanges`` whose base holds the objects edits name
/// (read by key), shown in every window with the changes applied, and committed by the host
/// (a ``PagedSessionHost``) in one transaction with the same checks against the file.
extension Browser {
    /// True for the keys that edit.
    static func isEditCommand(_ command: Command) -> Bool {
        switch command {
        case .editValue, .addObject, .deleteObject, .undoEdit, .redoEdit, .commitChanges: return true
        default: return false
        }
    }

    /// The staged changes as the current view's rows show them: in paged mode, applied to its
    /// window (by the window's rows); else the pending changes over the loaded graph.
    var shownChanges: ChangeSet? {
        guard pages != nil else { return pendingChanges?.changes }
        if case .paged(let rows)? = current?.content { return rows.window.changes }
        // Rows of values (groups, projections): nothing to mark, the marks' column kept.
        guard pendingChanges != nil, let graph else { return nil }
        return ChangeSet(base: graph)
    }

    /// The catalog's types with the counts a commit of the pending changes would leave.
    var pagedTypeRows: [(String, Int)] {
        guard let pending = pendingChanges else { return pendingTypes }
        let changes = pending.changes
        return pendingTypes.map { entry in
            guard let type = pending.base.type(named: entry.name), type.name.rawValue == entry.name else { return entry }
            let (t, stored) = (type.index, type.count)
            let added = (changes.inserted[t] ?? []).indices.filter { !(changes.removed[t]?.contains(stored + $0) ?? false) }.count
            let deleted = changes.removed[t]?.rows.filter { $0 < stored }.count ?? 0
            return (entry.name, entry.count + added - deleted)
        }
    }

    /// Starts paged editing when the host can commit to the store (a ``PagedSessionHost``): an
    /// empty edit base and a session over it for the REPL's dot-commands.
    func startPagedEditing() {
        pagedChanges = nil
        guard let pages, host is PagedSessionHost, let changes = try? PagedChanges(pages: pages) else {
            session = nil
            return
        }
        pagedChanges = changes
        let session = ReplSession(graph: changes.pending.graph, mode: .table)
        session.host = host
        session.storePath = storePath
        self.session = session
    }

    /// Stages a step made by a key (a cell, a deletion) over the store's objects.
    func stagePaged(_ step: EditStep) {
        guard var changes = pagedChanges, let session else { refusePaged("editing (it needs a store Loupe can write)"); return }
        do { try changes.stage(step) } catch {
            message = "not staged: \(error)"
            return
        }
        pagedChanges = changes
        session.replacePending(changes.pending)
        refreshPagedViews()
        message = "staged: \(step.label) · \(session.pendingSummary)"
    }

    /// Enter in the cell editor in paged mode: the text read as the attribute's kind over its
    /// whole type (read once, off the UI thread: seconds over millions of objects), then staged;
    /// a refusal reopens the editor with the text, as over a loaded graph.
    func submitPagedEdit(_ text: String, ref: ObjectRef, attribute: String) {
        guard let graph, let changes = pagedChanges else { refusePaged("editing (it needs a store Loupe can write)"); return }
        guard running == nil else { editor.set(text); message = "wait for the running task (Ctrl-C cancels it)"; return }
        let identity = graph.identity(of: ref), clause = whereClause(ref)
        let task = RunningTask(line: text, isLoad: true, verb: "checking")
        start(task) {
            let result = Result { () throws -> (PagedChanges, EditStep) in
                var work = changes
                let value = try work.typedValue(text, for: identity, attribute: attribute)
                let step = EditStep(label: "update \(identity.type) \(clause) set \(attribute) = \(Browser.sourceLiteral(value))",
                                    edits: [.set(identity, attribute: attribute, value: value)])
                try work.stage(step)
                return (work, step)
            }
            task.finish(.pagedCellStaged(changes.pending.revision, text, ref, attribute, result))
        }
    }

    /// Takes a cell edit's changes, or reopens the editor with the text and the reason.
    func finishPagedCell(revision: UUID, text: String, ref: ObjectRef, attribute: String, _ result: Result<(PagedChanges, EditStep), any Error>) {
        switch result {
        case .success(let (changes, step)) where pagedChanges?.pending.revision == revision:
            pagedChanges = changes
            session?.replacePending(changes.pending)
            refreshPagedViews()
            inputMode = .statement
            focus = previousFocus
            message = "staged: \(step.label) · \(session?.pendingSummary ?? "")"
        case .success:
            inputMode = .editValue(ref, attribute: attribute)
            editor.set(text)
            message = "not staged: changes were staged meanwhile; press Enter again"
        case .failure(let error):
            inputMode = .editValue(ref, attribute: attribute)
            editor.set(text)
            if let error = error as? QueryError {
                message = "refused: \(error.message)" + (error.hint.map { " — \($0)" } ?? "")
            } else {
                message = "refused: \(error)"
            }
        }
    }

    /// Every paged view read again with the staged changes (a type's count with its new objects).
    func refreshPagedViews() {
        guard let pages else { return }
        for i in stack.indices {
            guard case .paged(var rows) = stack[i].content else { continue }
            rows.isRead = false
            if case .type(let t) = rows.source, t < pages.catalog.count {
                rows.count = pages.catalog[t].count + (pagedChanges?.inserted(ofType: pages.catalog[t].name).count ?? 0)
            }
            stack[i].content = .paged(rows)
            if stack[i].selection >= rows.count { stack[i].selection = max(0, rows.count - 1) }
        }
        ensurePagedWindow(span: max(1, layout.recordsBody.height))
    }

    /// Runs a line that edits in paged mode: a mutation (its `where` answered by the store, off
    /// the UI thread), or a dot-command of the pending changes. False for anything else.
    func runPagedEdit(_ line: String) -> Bool {
        guard let session, let changes = pagedChanges else { return false }
        guard let statement = try? Parser.parse(line) else { return false }
        switch statement {
        case .mutation(let mutation):
            replOutput.append("loupe> " + ReplSession.shownLine(line))
            guard running == nil else { message = "wait for the running task (Ctrl-C cancels it)"; return true }
            stagePagedStatement(mutation, line: line, over: changes)
            return true
        case .dotCommand(let name, _, _):
            guard case .success(let command) = ReplSession.command(named: name) else { return false }
            switch command.name {
            case "changes", "undo", "redo", "rollback":
                guard case .reply(let reply) = session.begin(line) else { return false }
                replOutput.append("loupe> " + ReplSession.shownLine(line))
                if let error = reply.error { replOutput.append(contentsOf: error.split(separator: "\n").map(String.init)) }
                replOutput.append(contentsOf: reply.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast(reply.output.hasSuffix("\n") ? 1 : 0))
                pagedChanges?.adopt(session.pending)
                refreshPagedViews()
                trimOutput()
                return true
            case "commit":
                replOutput.append("loupe> " + ReplSession.shownLine(line))
                guard !session.pending.isEmpty else { replOutput.append(ReplSession.nothingToCommit); return true }
                guard running == nil else { message = "wait for the running task (Ctrl-C cancels it)"; return true }
                commit(session.pending, line: line)
                return true
            case "reload":
                replOutput.append("loupe> " + ReplSession.shownLine(line))
                guard running == nil else { message = "wait for the running task (Ctrl-C cancels it)"; return true }
                reopenPaged(changes)
                return true
            case "quit" where !session.pending.isEmpty:
                replOutput.append("loupe> " + ReplSession.shownLine(line))
                requestQuit()
                return true
            default:
                return false
            }
        default:
            return false
        }
    }

    /// Stages `mutation` off the UI thread: the objects its `where` selects found by the store
    /// (SQL, or the chunked engine on a type's own attributes), then read and edited over a copy
    /// of the changes; the UI takes the copy when nothing was staged meanwhile.
    func stagePagedStatement(_ mutation: Mutation, line: String, over changes: PagedChanges) {
        guard let pages else { return }
        let sql = querySource
        let schema = graph
        let kind = storeKind
        let revision = changes.pending.revision
        nonisolated(unsafe) let source = pages
        let task = RunningTask(line: line, isLoad: true, verb: "staging")
        start(task) {
            let result = Result { () throws -> (PagedChanges, EditStep) in
                var work = changes
                let step = try work.stage(mutation, source: line, storeKeys: { selection in
                    let steps = StoreSteps(source: sql, pages: source, schema: schema, kind: kind, progress: { task.report($0, $1) },
                                           isCancelled: { task.cancellation.isCancelled })
                    return try Planner.plan(selection, PlanSituation(kind: kind, paged: true)).selectedKeys(steps)
                }, cancellation: task.cancellation)
                return (work, step)
            }
            task.finish(.pagedStaged(revision, result))
        }
    }

    /// Takes a staged statement's changes (unless something was staged while it ran).
    func finishPagedStaged(revision: UUID, _ result: Result<(PagedChanges, EditStep), any Error>, line: String, cancelled: Bool) {
        switch result {
        case _ where cancelled:
            replOutput.append("cancelled")
        case .failure(let error as QueryError):
            replOutput.append(contentsOf: error.render(source: line).split(separator: "\n").map(String.init))
        case .failure(let error):
            replOutput.append("error: \(error)")
        case .success(let (changes, step)):
            guard let session, pagedChanges?.pending.revision == revision else {
                replOutput.append("error: changes were staged while the statement ran; run it again")
                break
            }
            pagedChanges = changes
            session.replacePending(changes.pending)
            refreshPagedViews()
            replOutput.append(session.stagedText(step).trimmingCharacters(in: .newlines))
            if !step.edits.isEmpty { message = "staged: \(step.label)" }
        }
        trimOutput()
    }

    /// After a commit: the store as the host left it (catalog, relation index, statements), a new
    /// empty edit base, and every view read again.
    func finishPagedCommit() {
        guard let host = host as? PagedSessionHost else { return }
        let (next, sql) = host.pagedStore
        adoptPagedStore(next, querySource: sql)
        let reach = pagedChanges?.pending.changes.reach ?? ChangeReach(attributes: [:], relations: true)
        guard let changes = try? pagedChanges?.afterCommit(on: next, reach: reach) ?? PagedChanges(pages: next) else { pagedChanges = nil; return }
        pagedChanges = changes
        session?.replacePending(changes.pending)
        refreshPagedViews()
    }

    /// `.reload`: the store opened again off the UI thread and the pending steps staged over it.
    func reopenPaged(_ changes: PagedChanges) {
        guard let host = host as? PagedSessionHost else { replOutput.append("error: reloading is not available here"); return }
        let snapshot = changes
        let task = RunningTask(line: ".reload", isLoad: true, verb: "reopening", isLiveRefresh: isLiveReopen)
        start(task) {
            let result = Result { () throws -> (PagedChanges, [EditStep]) in
                try host.reopen()
                return try snapshot.reopened(on: host.pagedStore.pages)
            }
            task.finish(.pagedReopened(result))
        }
    }

    func finishPagedReopen(_ result: Result<(PagedChanges, [EditStep]), any Error>) {
        defer { isLiveReopen = false }
        switch result {
        case .failure(let error):
            replOutput.append("error: \(error)")
        case .success(let (changes, dropped)):
            guard let host = host as? PagedSessionHost else { return }
            // What the screen showed, to mark what another process's commit did to it.
            let shown = isLiveReopen ? visiblePagedRows() : nil
            adoptPagedStore(host.pagedStore.pages, querySource: host.pagedStore.querySource)
            pagedChanges = changes
            session?.replacePending(changes.pending)
            refreshPagedViews()
            let figures = shown.map { markPagedCommit(since: $0) }
            let counts = changes.pages.catalog.reduce(0) { $0 + $1.count }
            var note = changes.isEmpty ? "" : "; the pending changes are staged again"
            if !dropped.isEmpty {
                note = "; \(dropped.count) pending step\(dropped.count == 1 ? "" : "s") no longer apply and were dropped: " + dropped.map(\.label).joined(separator: " | ")
            }
            if isLiveReopen {
                // Another process committed: said on the status line, the REPL only when edits were dropped.
                message = "commit \(live?.commits ?? 0) from another process: " + (figures.map { "\($0) on screen" } ?? "the rows shown and the counts read again") + note
                if !dropped.isEmpty { replOutput.append(message) }
            } else {
                replOutput.append("reloaded: \(changes.pages.catalog.count.counting("type")), \(counts.counting("object"))" + note)
            }
        }
        trimOutput()
    }

    /// Another state of the same store (after a commit or a reload): the catalog, what answers
    /// statements, the link totals read; the views keep their places and are read again.
    private func adoptPagedStore(_ next: PageSource, querySource sql: (any QuerySource)?) {
        pages = next
        querySource = sql
        pendingTypes = next.catalog
        linkTotalsRead = [:]
    }
}
