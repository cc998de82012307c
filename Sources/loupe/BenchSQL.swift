import ArgumentParser
import Foundation
import GRDB

/// `loupe bench sql`: one-shot statements on a relational file as a script runs them, a new
/// process each, beside sqlite3 running the best hand-written SQL for the same question on the
/// same file: medians of alternating runs, every answer compared.
struct BenchSQL: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sql",
        abstract: "Time one-shot statements on a relational file (scripts/fixtures/make_relational_library.py) beside sqlite3, medians of alternating runs, answers compared.")
    @OptionGroup var store: StoreArgument
    @Option(help: "Runs per command, alternating Loupe and sqlite3 (the median is reported).") var runs: Int = 5

    /// One question: Loupe's statement and sqlite3's SQL, each printing the same CSV.
    struct Question {
        let label: String
        let statement: String
        let sql: String
    }

    func run() throws {
        let path = store.file
        guard let sqlite3 = ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw CLIError("the bench needs sqlite3 (apt install sqlite3)")
        }
        let loans = try DatabaseQueue(path: path, configuration: { var c = Configuration(); c.readonly = true; return c }())
            .read { try Int.fetchOne($0, sql: "SELECT max(id) FROM loan") } ?? 0
        guard loans > 0 else { throw CLIError("the bench needs a file made by scripts/fixtures/make_relational_library.py") }
        let half = loans / 2
        let questions = [
            Question(label: "sort by indexed, limit", statement: "loan sort by book_id limit 10 select id, book_id",
                     sql: "SELECT id, book_id FROM loan ORDER BY book_id, id LIMIT 10"),
            Question(label: "key range count", statement: "count loan where id <= \(half)", sql: "SELECT count(*) AS count FROM loan WHERE id <= \(half)"),
            Question(label: "filter count", statement: "count loan where renewals >= 2", sql: "SELECT count(*) AS count FROM loan WHERE renewals >= 2"),
            Question(label: "group by", statement: "loan group by renewals", sql: "SELECT renewals AS key, count(*) AS count FROM loan GROUP BY renewals ORDER BY count DESC, key"),
            Question(label: "two-hop count", statement: "count loan where book.author.born < 1900",
                     sql: "SELECT count(*) AS count FROM loan l JOIN book b ON b.id = l.book_id JOIN author a ON a.id = b.author_id WHERE a.born < 1900"),
            Question(label: "backlink @count", statement: "count book where @links.loan.book.@count >= 4",
                     sql: "SELECT count(*) AS count FROM (SELECT book_id FROM loan GROUP BY book_id HAVING count(*) >= 4)"),
        ]
        let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        print("(\(loans) loans; a new process each; medians of \(max(1, runs)) alternating runs; answers compared as CSV)")
        print("question                  loupe (ms)   sqlite3 (ms)   ratio   same answer")
        var disagreements = 0
        for q in questions {
            var mine: [Double] = [], theirs: [Double] = []
            var loupeOut = "", sqliteOut = ""
            for _ in 0..<max(1, runs) {
                let a = try Process.measure([me, "query", path, q.statement, "--format", "csv"])
                guard a.status == 0 else { throw CLIError("`loupe query \(q.statement)` exited with status \(a.status)") }
                let b = try Process.measure([sqlite3, "-readonly", "-csv", "-header", path, q.sql])
                mine.append(a.seconds); theirs.append(b.seconds)
                loupeOut = a.output; sqliteOut = b.output
            }
            let same = Self.normalized(loupeOut) == Self.normalized(sqliteOut)
            if !same { disagreements += 1 }
            let (m, s) = (Self.median(mine) * 1000, Self.median(theirs) * 1000)
            print(q.label.padding(toLength: 24, withPad: " ", startingAt: 0)
                  + String(format: " %10.1f   %12.1f   %5.1f×   %@", m, s, m / max(s, 0.001), same ? "yes" : "NO"))
        }
        if disagreements > 0 { throw ExitCode(1) }
    }

    /// The lines of a CSV answer (Loupe ends them with CRLF, as RFC 4180 does; sqlite3 with LF).
    static func normalized(_ csv: String) -> [String] {
        csv.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
