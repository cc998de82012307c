import Foundation
import Synchronization

/// The built `loupe` executable, run as a user would: arguments, standard input, and a time limit
/// (a hang guard). A run reports how it ended: its exit status, or the signal that killed it.
public enum LoupeBinary {
    /// `.build/…/debug/loupe`, beside the test bundle.
    public static var url: URL {
        _ = cacheDirectory   // children started any way inherit the test cache folder
        var dir = Bundle.main.bundleURL
        if dir.pathExtension == "xctest" { dir.deleteLastPathComponent() }
        for candidate in [dir] + Bundle.allBundles.map({ $0.bundleURL.deletingLastPathComponent() }) {
            let url = candidate.appendingPathComponent("loupe")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return dir.appendingPathComponent("loupe")
    }

    /// Where every run keeps its schema cache (`LOUPE_CACHE_DIR`): a folder of this test
    /// process, so that tests never write to the user's `~/.cache` and later runs on a file use
    /// what an earlier whole load cached, as a user's would.
    public static let cacheDirectory: String = {
        let path = NSTemporaryDirectory() + "loupe-test-cache-\(getpid())"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        setenv("LOUPE_CACHE_DIR", path, 1)
        return path
    }()

    /// The environment of a run: this process's, with the test cache folder, then `extra`.
    static func environment(_ extra: [String: String]?) -> [String: String] {
        ProcessInfo.processInfo.environment.merging(["LOUPE_CACHE_DIR": cacheDirectory]) { $1 }.merging(extra ?? [:]) { $1 }
    }

    /// How a run ended and what it printed.
    public struct Run: CustomStringConvertible {
        public let status: Int32
        /// True when a signal ended the process (a crash): `status` is the signal's number.
        public let crashed: Bool
        public let timedOut: Bool
        public let stdout: String
        public let stderr: String
        public var description: String {
            "status \(status)\(crashed ? " (signal)" : "")\(timedOut ? " (timed out)" : ")")\nstdout: \(stdout.prefix(2000))\nstderr: \(stderr.prefix(2000))"
        }
    }

    /// Starts `loupe` with `arguments` and returns at once (for tests that signal or kill it):
    /// output discarded; `stdin` written and closed, or, when nil, the input left open.
    public static func start(_ arguments: [String], stdin: String? = nil) throws -> Process {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        process.environment = environment(nil)
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        if let stdin {
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try input.fileHandleForWriting.close()
        }
        return process
    }

    /// Runs `loupe` with `arguments`, writing `stdin` to it, killing it after `timeout` seconds.
    @discardableResult
    public static func run(_ arguments: [String], stdin: String? = nil, timeout: Double = 60,
                           environment: [String: String]? = nil) throws -> Run {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        process.environment = self.environment(environment)
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        // Read both pipes while the process runs, so that a large output never blocks it.
        let collected = Mutex<(out: Data, err: Data)>((Data(), Data()))
        let group = DispatchGroup()
        for (pipe, isError) in [(out, false), (err, true)] {
            group.enter()
            DispatchQueue.global().async {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                collected.withLock { if isError { $0.err = data } else { $0.out = data } }
                group.leave()
            }
        }
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(timeout)
        var timedOut = false
        while process.isRunning {
            if Date() > deadline { timedOut = true; process.terminate(); kill(process.processIdentifier, SIGKILL); break }
            Thread.sleep(forTimeInterval: 0.01)
        }
        process.waitUntilExit()
        group.wait()
        let (o, e) = collected.withLock { ($0.out, $0.err) }
        return Run(status: process.terminationStatus, crashed: process.terminationReason == .uncaughtSignal, timedOut: timedOut,
                   stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }
}
