import ArgumentParser
import Foundation
import LoupePostgres
import LoupeQuery
import LoupeStore

/// A size in bytes as the command line takes it: `512M`, `2G`, `1.5G`, `800000000`.
struct MemoryBudget: ExpressibleByArgument, CustomStringConvertible {
    let bytes: Int64

    init(bytes: Int64) { self.bytes = bytes }

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces).uppercased()
        let units: [(String, Double)] = [("GB", 1_073_741_824), ("G", 1_073_741_824), ("MB", 1_048_576), ("M", 1_048_576), ("KB", 1024), ("K", 1024), ("B", 1)]
        let (unit, factor) = units.first { text.hasSuffix($0.0) } ?? ("", 1)
        guard let number = Double(text.dropLast(unit.count)), number.isFinite, number >= 0, number * factor < 9e18 else { return nil }
        bytes = Int64(number * factor)
    }

    /// The config file's `memory-budget`, else a quarter of the machine's memory, at most 2 GB.
    static var standard: MemoryBudget {
        Config.current.withLock { $0.memoryBudget } ?? MemoryBudget(bytes: min(Int64(ProcessInfo.processInfo.physicalMemory / 4), 2 << 30))
    }

    var description: String { ByteCount(bytes).description }

    /// What a whole load of the store at `path` is expected to take at its peak: for a Persist
    /// store one and a half times the file and its WAL (measured: 1.3–1.4× for generated stores
    /// of 1M–3M objects, whose JSON documents are larger than their values), for a relational
    /// file four times (measured: 3.8× at 10M rows, 4.1× at 1M rows: every cell is a value).
    static func wholeLoadEstimate(path: String, relational: Bool = false) -> Int64 {
        let size = { (p: String) in ((try? FileManager.default.attributesOfItem(atPath: p)[.size]) as? NSNumber)?.int64Value ?? 0 }
        let bytes = size(path) + size(path + "-wal")
        return relational ? bytes * 4 : bytes * 3 / 2
    }

    /// What a whole load of the PostgreSQL database at `url` is expected to take, when that is
    /// over `budget`: four times what its tables take on the server (as for a relational file;
    /// a server's pages hold values as densely as SQLite's).
    static func overBudget(postgres url: String, budget: MemoryBudget) throws -> Int64? {
        let estimate = try PostgresDatabase.storedBytes(url: url) * 4
        return estimate > budget.bytes ? estimate : nil
    }

    /// What a whole load of the file at `path` is expected to take and the file opened, when that
    /// is over `budget` (the file, unless `opened`, is opened to tell its format only when its size could be).
    static func overBudget(_ path: String, budget: MemoryBudget, opened: StoreFile? = nil) throws -> (estimate: Int64, file: StoreFile)? {
        guard wholeLoadEstimate(path: path, relational: true) > budget.bytes else { return nil }
        let file = try opened ?? StoreFile.openForReading(path)
        let isPersist = try file.read { try StoreFormats.detect($0, path: path) } == PersistFormat.self
        let estimate = wholeLoadEstimate(path: path, relational: !isPersist)
        return estimate > budget.bytes ? (estimate, file) : nil
    }
}
