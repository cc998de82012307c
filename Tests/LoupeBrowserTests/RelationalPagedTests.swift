import Foundation
import GRDB
import LoupeBrowser
import LoupeModel
import LoupeQuery
import LoupeSQL
import LoupeStore
import LoupeTestSupport
import TerminalKit
import XCTest

/// Paged mode over plain relational SQLite files (``RelationalPages``) against the whole graph:
/// the same keys in a browser on the loaded graph and in one reading the file a window at a time
/// give the same screens, on real databases and on files made to be awkward.
final class RelationalPagedTests: XCTestCase {
    func relational(_ file: StoreFile, _ edges: Int) throws -> PageSource { try RelationalPages.open(file, edgesPerObject: edges) }

    func testChinookPagedScreensAreTheLoadedGraphs() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        for seed in UInt64(1)...6 {
            try walk(path, seed: seed, count: 150, edgesPerObject: Int(seed % 3) * 5 + 1, windowRows: 40, open: relational)
        }
        try walk(path, seed: 9, count: 150, edgesPerObject: 2_000, windowRows: 300, open: relational)
    }

    func testAwkwardKeysPageAsTheyLoad() throws {
        let path = try HostileFiles.awkwardRelational()
        for seed in UInt64(1)...8 {
            try walk(path, seed: seed, count: 150, edgesPerObject: Int(seed % 4) * 7 + 1, windowRows: 30, open: relational)
        }
    }

    func testNorthwindPagedScreensAreTheLoadedGraphs() throws {
        let path = try Shared.copy("realdata/northwind/northwind_w3schools.db3")
        for seed in UInt64(1)...4 { try walk(path, seed: seed, count: 150, edgesPerObject: Int(seed) * 4, windowRows: 40, open: relational) }
    }
}
