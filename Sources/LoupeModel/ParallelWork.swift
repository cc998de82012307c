import Foundation
import Synchronization

/// Runs pieces of work on threads of their own, each with a stack of a chosen size.
///
/// Dispatch's worker threads have 512 KB of stack; values read from a file can nest 2,000 levels
/// deep, and freeing or comparing one recurses once per level, so the loaders and the chunked
/// answers' parts use these threads.
public enum ParallelWork {
    /// Runs `body(worker)` for workers `0..<workers`, each on its own thread, and returns their
    /// results in worker order; the first failure (in worker order) is thrown once all are done.
    /// `coordinate` runs on the calling thread while the workers run (to synchronise with them).
    public static func run<T: Sendable>(workers: Int, stackSize: Int, _ body: @escaping @Sendable (Int) throws -> T,
                                 coordinate: () -> Void = {}) throws -> [T] {
        let results = Mutex<[Result<T, any Error>?]>(Array(repeating: nil, count: workers))
        let group = DispatchGroup()
        for worker in 0..<workers {
            group.enter()
            let thread = Thread {
                let result = Result { try body(worker) }
                results.withLock { $0[worker] = result }
                group.leave()
            }
            thread.stackSize = stackSize
            thread.start()
        }
        coordinate()
        group.wait()
        return try results.withLock { list in try list.map { try $0!.get() } }
    }

    /// Runs `body` on one thread with a stack of `stackSize` bytes and waits for its result.
    public static func onLargeStack<T: Sendable>(stackSize: Int = 64 << 20, _ body: @escaping @Sendable () throws -> T) throws -> T {
        try run(workers: 1, stackSize: stackSize) { _ in try body() }[0]
    }
}
