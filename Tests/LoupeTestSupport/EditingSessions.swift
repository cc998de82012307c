import Foundation
import LoupeHost
import LoupeQuery

/// REPL sessions over store files, each with a host that previews and commits, as `loupe repl`
/// makes them. A session holds its host weakly (the executable owns it), so this keeps them.
public final class EditingSessions {
    private var hosts: [StoreHost] = []

    public init() {}

    /// A session over the store at `path`, loaded whole.
    public func open(_ path: String) throws -> ReplSession {
        let host = StoreHost()
        let session = ReplSession(graph: try host.load(path: path, progress: nil))
        session.host = host
        session.storePath = path
        hosts.append(host)
        return session
    }
}

/// A small disk of its own (a tmpfs) for tests of what a full disk does to a commit. Mounting
/// needs root, as CI runs; elsewhere ``mount(size:)`` returns nil and the caller says what it
/// leaves out.
public final class ScratchDisk {
    /// The folder the disk is mounted on.
    public let folder: String

    private init(folder: String) { self.folder = folder }

    /// A fresh tmpfs of `size` (`4m`, `24m`) on a new folder, or nil when it cannot be mounted.
    public static func mount(size: String) throws -> ScratchDisk? {
        let folder = try Shared.temporaryPath("disk")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", folder]) else { return nil }
        return ScratchDisk(folder: folder)
    }

    deinit { _ = Self.run("/bin/umount", ["-l", folder]) }

    /// Bytes free on the disk.
    public var free: Int {
        (try? FileManager.default.attributesOfFileSystem(forPath: folder)[.systemFreeSize] as? NSNumber)?.intValue ?? 0
    }

    /// Fills the disk with a file named `fill` until `room` bytes are left; returns its path.
    @discardableResult
    public func fill(leaving room: Int) -> String {
        let path = folder + "/fill"
        try? FileManager.default.removeItem(atPath: path)
        _ = FileManager.default.createFile(atPath: path, contents: Data(count: max(0, free - room)))
        return path
    }

    /// Removes what ``fill(leaving:)`` wrote.
    public func empty() { try? FileManager.default.removeItem(atPath: folder + "/fill") }

    /// Runs a command, true when it exits 0.
    static func run(_ tool: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
