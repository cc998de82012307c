import Foundation
import LoupeBrowser
import LoupeHost
import LoupeModel
import LoupePostgres
import LoupeQuery
import LoupeStore
import TerminalKit
import XCTest

/// What the paged-editing tests share: a browser on a store's whole graph beside one reading it a
/// page at a time (each on its own copy), the parts of their status lines they compare, and the
/// first line where two files' rows differ.
extension XCTestCase {
    /// A browser on the whole graph of `path`, with a loaded session's host.
    func loadedBrowser(_ path: String, formatName: String) throws -> (Browser, StoreHost) {
        let host = StoreHost()
        let graph = try host.load(path: path, progress: nil)
        let b = Browser(fileLabel: "store.sqlite", formatName: formatName, theme: .monochrome)
        b.host = host
        b.storePath = path
        b.attach(graph)
        return (b, host)
    }

    /// A browser reading `pages` (the file at `path`) a page at a time, with the host the
    /// executable gives it: statements answered by `querySource`, after a commit by what
    /// `following` makes.
    func pagedBrowser<Pages: CommittablePages>(_ pages: Pages, path: String, formatName: String, querySource: any QuerySource,
                                               following: @escaping @Sendable (Pages, (any QuerySource)?, ChangeReach?) -> (any QuerySource)?) -> (Browser, PagedStoreHost<Pages>) {
        let host = PagedStoreHost(pages: pages, querySource: following)
        let b = Browser(fileLabel: "store.sqlite", formatName: formatName, theme: .monochrome)
        b.host = host
        b.storePath = path
        b.attachPaged(pages, reason: "test", querySource: querySource)
        return (b, host)
    }

    /// A browser on the whole graph of the PostgreSQL database at `url`, with a loaded session's host.
    func loadedBrowser(postgres url: String) throws -> (Browser, PostgresHost) {
        let host = PostgresHost(url: url)
        let b = Browser(fileLabel: "db", formatName: "PostgreSQL", theme: .monochrome)
        b.host = host
        b.storePath = url
        b.attach(try host.load(path: url, progress: nil))
        return (b, host)
    }

    /// A browser reading the PostgreSQL database `pages` a page at a time, with the host the
    /// executable gives it.
    func pagedBrowser<Pages: PostgresPagedDatabase>(postgres pages: Pages) -> (Browser, PostgresPagedSessionHost<Pages>) {
        let host = PostgresPagedSessionHost(pages: pages)
        let b = Browser(fileLabel: "db", formatName: "PostgreSQL", theme: .monochrome)
        b.host = host
        b.storePath = pages.url
        b.attachPaged(pages, reason: "test", querySource: host.pagedStore.querySource)
        return (b, host)
    }

    /// The REPL's last line without a commit's time.
    func lastReply(_ b: Browser) -> String {
        (b.replOutput.last ?? "").replacingOccurrences(of: #", [0-9.]+ s\)"#, with: ")", options: .regularExpression)
    }

    /// The status line, wide enough for every part.
    func status(_ b: Browser) -> String {
        var buffer = Buffer(width: 400, height: 30)
        b.render(into: &buffer)
        return buffer.lines.last ?? ""
    }

    /// The status line's pending counts (`pending +1 ~2 -0`), or "nothing pending".
    func pendingPart(_ b: Browser) -> String {
        let line = status(b)
        guard let r = line.range(of: #"pending \+\d+ ~\d+ -\d+"#, options: .regularExpression) else { return "nothing pending" }
        return String(line[r])
    }

    /// Runs each of `statements` in both browsers: after each, the same pending counts and the
    /// same last two lines of the REPL.
    func assertSameStaging(_ statements: [String], loaded: Browser, paged: Browser, file: StaticString = #filePath, line: UInt = #line) {
        for statement in statements {
            loaded.run(statement)
            paged.run(statement)
            XCTAssertEqual(pendingPart(paged), pendingPart(loaded), "after \(statement):\n" + paged.replOutput.suffix(3).joined(separator: "\n"), file: file, line: line)
            XCTAssertEqual(paged.replOutput.suffix(2), loaded.replOutput.suffix(2), statement, file: file, line: line)
        }
    }

    /// Fails with the first line where `x` and `y` (two files' rows) differ.
    func assertSameLines(_ x: [String], _ y: [String], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        if let i = zip(x, y).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            XCTFail("\(what): line \(i) differs:\n \(x[i])\n \(y[i])", file: file, line: line)
        } else if x.count != y.count {
            XCTFail("\(what): \(x.count) lines against \(y.count)", file: file, line: line)
        }
    }
}
