import ArgumentParser
import DisplayText
import Foundation
import LoupeModel
import LoupePostgres
import LoupeQuery

/// `loupe diff A B [TYPE…]`: two stores compared as object graphs, as `diff` compares files.
struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare two stores as object graphs: per type, the objects added, removed and changed.",
        discussion: """
            Objects are matched by key (or by an attribute: --by isbn, --by Book.isbn); a change lists each
            attribute that differs (A's value → B's) and each relation's targets added and removed, or that
            they were reordered. The stores may be of different layouts where types and keys match (a
            Persist file and its copy in PostgreSQL). Exit status: 0 the same, 1 different, 2 trouble, as
            diff. Stores are read a page at a time where their format pages: two large stores are compared
            holding their keys and a chunk of objects, not their graphs.
            """)
    @Argument(help: "The first store (A): a SQLite file, a Couchbase Lite folder or a postgres://… URL.") var a: String
    @Argument(help: "The second store (B).") var b: String
    @Argument(help: "The types to compare (default: every type of either store).") var types: [String] = []
    @Option(help: "Match objects by this attribute instead of their keys: NAME (every type having it) or Type.NAME; repeatable.")
    var by: [String] = []
    @Option(help: "table (a line per change, a line per type, a summary), json (one document) or ndjson (a line per change, then the summary).")
    var format: OutputFormat = .table
    @OptionGroup var reading: ReadArguments

    func validate() throws {
        guard [.table, .json, .ndjson].contains(format) else { throw ValidationError("diff prints table, json or ndjson") }
    }

    /// Exits 0 when the stores are the same, 1 when they differ, 2 on trouble (one `Error:` line).
    func run() throws {
        let same: Bool
        do {
            var diff = StoreDiff(try Self.side(a), try Self.side(b))
            diff.matching = StoreDiff.Matching(attributes: by.map { spec in
                guard let dot = spec.lastIndex(of: ".") else { return (nil, spec) }
                return (String(spec[..<dot]), String(spec[spec.index(after: dot)...]))
            })
            same = try write(diff).allSatisfy(\.isSame)
        } catch {
            printErrorLine("Error: \(error)")
            throw ExitCode(2)
        }
        if !same { throw ExitCode(1) }
    }

    /// Runs the diff, writing each change as found in the chosen format; returns each type's summary.
    private func write(_ diff: StoreDiff) throws -> [TypeSummary] {
        let out = OutputSink(fd: 1)
        defer { out.flush() }
        var changes: [String] = [], types: [String] = []
        let summaries = try diff.run(only: self.types) { event in
            switch (event, format) {
            case (.change(let change), .json): changes.append(change.json)
            case (.change(let change), .ndjson): out.write(change.json + "\n")
            case (.change(let change), _): out.write(change.line + "\n")
            case (.typeDone(let summary), .json):
                types.append(summary.json(changes: changes))
                changes = []
            case (.typeDone, .ndjson): break
            case (.typeDone(let summary), _): out.write(summary.line + "\n")
            }
        }
        switch format {
        case .json:
            let label = { (s: String) in ValueFormatter.json(.string(DisplayText.escaped(PostgresConnection.withoutPassword(s)))) }
            out.write("{\"a\": \(label(a)), \"b\": \(label(b)), \"types\": [\(types.joined(separator: ", "))], \"summary\": \(summaries.summaryJSON)}\n")
        case .ndjson: out.write("{\"summary\": \(summaries.summaryJSON)}\n")
        default: out.write(summaries.summaryLine + "\n")
        }
        return summaries
    }

    /// One store as a side of the diff: read a page at a time where its format pages, else loaded.
    static func side(_ location: String) throws -> DiffSide {
        let driver = try StoreDriver.detect(location, budget: .standard)
        if let opening = try driver.openPaged(reason: nil, unkeyedLoads: true) { return try PagedDiffSide(opening.pages) }
        return GraphDiffSide(try OpenedStore.open(location).graph)
    }
}
