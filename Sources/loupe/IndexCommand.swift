import ArgumentParser
import DisplayText
import Foundation
import LoupeModel
import LoupePostgres
import LoupeQuery
import LoupeSQL
import LoupeStore

/// `loupe index FILE [TYPE.ATTRIBUTE…]`: builds, in Loupe's cache folder (never in the file),
/// what paged mode's `I` builds for a Persist store — the relation index, or the order of the
/// attributes named — so that the browser, `loupe repl` and `loupe query` over the memory budget
/// read through them; then says what is kept. Ctrl-C stops a build, keeping nothing of it.
struct Index: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract: "Build Loupe's indexes of a Persist store in its cache (never in the file): the relation index, or the order of each TYPE.ATTRIBUTE named (sorts by it read it).",
        discussion: "Paged mode (the browser, `loupe repl` and `loupe query` over the memory budget) reads through them while the file is unchanged; Loupe's own commits carry them forward. `I` in the browser builds the same. SQLite files and PostgreSQL databases are read through their own indexes (CREATE INDEX).")

    @Argument(help: "The Persist store (a SQLite file).")
    var file: String

    @Argument(help: "Attributes whose order to keep, as TYPE.ATTRIBUTE (Book.price).")
    var orders: [String] = []

    func run() throws {
        guard !PostgresConnection.isURL(file) else { throw CLIError("loupe index builds Loupe's indexes of Persist files; a PostgreSQL database is read through its own (CREATE INDEX)") }
        let opened = try StoreFile.openForReading(file)
        let persist: PersistPages?
        do { persist = try PersistPages.openIfPersist(opened, path: file) } catch let error as StoreError {
            throw CLIError("paged mode cannot read this Persist store by key (\(error.reason)): it is loaded whole, and needs no index")
        }
        guard let pages = persist else {
            throw CLIError("loupe index builds Loupe's indexes of Persist stores; \(file) is read through its own indexes (CREATE INDEX)")
        }
        guard SideIndex.isAvailable(for: opened) else { throw CLIError("Loupe's cache is off (LOUPE_CACHE_DIR=off): there is no place for an index") }
        let source = PersistQuerySource(pages: pages)
        // Each TYPE.ATTRIBUTE split where the part before the dot names a type (type names may hold dots).
        let names = pages.catalog.map(\.name)
        let wanted = try orders.map { text -> (type: String, attribute: String) in
            let dots = text.indices.filter { text[$0] == "." }
            for dot in dots.reversed() {
                let type = String(text[..<dot]), attribute = String(text[text.index(after: dot)...])
                if !attribute.isEmpty, let match = names.first(where: { $0 == type }) ?? names.first(where: { $0.caseInsensitiveCompare(type) == .orderedSame }) {
                    return (match, attribute)
                }
            }
            let typed = dots.last.map { String(text[..<$0]) } ?? text
            let suggestion = NameSuggestion.closest(to: typed, in: names).map { "; did you mean \($0)?" } ?? ""
            throw CLIError("\(text) names no type of the store as TYPE.ATTRIBUTE\(suggestion)")
        }
        let interrupts = StatementInterrupts()
        defer { withExtendedLifetime(interrupts) {} }
        func timedStep(_ work: (Cancellation) throws -> Void) throws -> Double {
            let cancellation = interrupts.begin()
            defer { interrupts.end() }
            let start = DispatchTime.now().uptimeNanoseconds
            do { try work(cancellation) } catch where cancellation.isCancelled { throw CLIError("cancelled: nothing of this index was kept") }
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        }
        if wanted.isEmpty && pages.offersRelationIndex {
            let seconds = try timedStep { c in try pages.buildRelationIndex(progress: { _, _ in }, isCancelled: { c.isCancelled }) }
            print(String(format: "relation index built in %.1f s: pages and statements read relation rows by key", seconds))
        } else {
            print(pages.relationIndexBuilt ? "relation index: built" : "relation index: not built (`loupe index FILE` builds it)")
        }
        for (type, attribute) in wanted {
            let seconds: Double
            do {
                seconds = try timedStep { c in try source.buildSortIndex(typeName: type, attribute: attribute, isCancelled: { c.isCancelled }) }
            } catch let error as QueryError {
                throw CLIError("cannot keep the order of \(type).\(attribute): \(error.message)" + (error.hint.map { " — \($0)" } ?? ""))
            }
            print(String(format: "order of %@.%@ kept in %.1f s: sorts by it read it", DisplayText.escaped(type), DisplayText.escaped(attribute), seconds))
        }
        // What is kept now, type by type.
        for name in names {
            let kept = source.sortIndexes(typeName: name) ?? []
            if !kept.isEmpty { print("orders kept for \(DisplayText.escaped(name)): " + kept.sorted().map(DisplayText.escaped).joined(separator: ", ")) }
        }
    }
}
