import ArgumentParser
import Foundation

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

    /// A quarter of the machine's memory, at most 2 GB.
    static var standard: MemoryBudget {
        MemoryBudget(bytes: min(Int64(ProcessInfo.processInfo.physicalMemory / 4), 2 << 30))
    }

    var description: String {
        bytes >= 1 << 30 ? String(format: "%.1f GB", Double(bytes) / Double(1 << 30)) : bytes >= 1 << 20 ? "\(bytes >> 20) MB" : "\(bytes >> 10) KB"
    }

    /// What a whole load of the Persist store at `path` is expected to take at its peak: one and a
    /// half times the file and its WAL (measured: 1.3–1.4× for generated stores of 1M–3M objects).
    static func wholeLoadEstimate(path: String) -> Int64 {
        let size = { (p: String) in ((try? FileManager.default.attributesOfItem(atPath: p)[.size]) as? NSNumber)?.int64Value ?? 0 }
        return (size(path) + size(path + "-wal")) * 3 / 2
    }
}
