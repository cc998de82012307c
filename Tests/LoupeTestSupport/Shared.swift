import Foundation
import GRDB

/// The test fixtures (`Tests/Fixtures` in the checkout: real stores from other projects with
/// their licences, seed-format stores with the scripts that made them, the conformance table)
/// and fresh temp files, for every test target.
public enum Shared {
    /// `Tests/Fixtures` of the checkout.
    public static var root: URL {
        checkout.appendingPathComponent("Tests/Fixtures")
    }

    /// The checkout itself (for `sample-data/`).
    public static var checkout: URL {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }   // Tests/LoupeTestSupport/Shared.swift → the checkout
        return url
    }

    /// Copies a file of the checkout (`sample-data/library.sqlite`) into a fresh temp folder.
    public static func copyFromCheckout(_ relative: String) throws -> String {
        let target = try temporaryPath(URL(fileURLWithPath: relative).lastPathComponent)
        try FileManager.default.copyItem(atPath: checkout.appendingPathComponent(relative).path, toPath: target)
        return target
    }

    /// Copies a fixture (and its -wal/-shm) into a fresh temp folder; tests never open a fixture itself.
    public static func copy(_ relative: String) throws -> String {
        let source = root.appendingPathComponent(relative)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let target = folder.appendingPathComponent(source.lastPathComponent)
        try FileManager.default.copyItem(at: source, to: target)
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: source.path + suffix) {
            try FileManager.default.copyItem(atPath: source.path + suffix, toPath: target.path + suffix)
        }
        return target.path
    }

    /// Runs a fixture generator of `scripts/fixtures` (`make_coredata_fixture.py`) with python3,
    /// writing `name` in a fresh temp folder; returns its path.
    public static func fixture(_ script: String, _ name: String, _ arguments: [String] = []) throws -> String {
        let out = try temporaryPath(name)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", checkout.appendingPathComponent("scripts/fixtures/\(script)").path, out] + arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw NSError(domain: "fixture", code: Int(process.terminationStatus), userInfo: [NSLocalizedDescriptionKey: "\(script) failed"])
        }
        return out
    }

    /// A path in a fresh temp folder that does not exist yet.
    public static func temporaryPath(_ name: String = "store.sqlite") throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appendingPathComponent(name).path
    }

    /// Two copies of the file at `path` (in fresh temp folders), for one test to change each its
    /// own way (a loaded session and a paged one) and compare.
    public static func twoCopies(of path: String) throws -> (String, String) {
        let a = try temporaryPath("a.sqlite"), b = try temporaryPath("b.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: a)
        try FileManager.default.copyItem(atPath: path, toPath: b)
        return (a, b)
    }

    /// A Persist file's rows as lines: every object (`id type_name json`) in key order, then every
    /// relation row (`from.relation → to`) in each object's order.
    public static func persistRows(_ path: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT id, type_name, json FROM by_type ORDER BY id").map { "\($0[0] as DatabaseValue) \($0[1] as DatabaseValue) \($0[2] as DatabaseValue)" }
                + Row.fetchAll(db, sql: "SELECT from_id, relation, to_id FROM relations ORDER BY from_id, relation, rowid").map { "\($0[0] as DatabaseValue).\($0[1] as DatabaseValue) → \($0[2] as DatabaseValue)" }
        }
    }

    /// A plain SQLite file's rows as lines: every table by name, each row (`table: a | b | …`)
    /// in the table's own order (rowid, or key for a table without one).
    public static func tableRows(_ path: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").flatMap { table in
                try Row.fetchAll(db, sql: "SELECT * FROM \"\(table.replacingOccurrences(of: "\"", with: "\"\""))\"").map { row in
                    "\(table): " + row.databaseValues.map { "\($0)" }.joined(separator: " | ")
                }
            }
        }
    }

    /// The bytes of a file and its companions, to prove nothing was written.
    public static func fingerprint(_ path: String) -> [Data?] {
        ["", "-wal", "-shm", "-journal"].map { FileManager.default.contents(atPath: path + $0) }
    }
}
