#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The C library as Loupe calls it where a Swift name would shadow the C one (`open`, `read`,
/// `write`, `exit` inside types that have methods of those names), and what Linux and macOS spell
/// differently (a `stat`'s modification time): the one file a port to another platform finishes.
/// Tested on Linux (glibc); the Darwin branch is written, not yet built.
public enum Platform {
    /// `open(2)` for reading, never blocking on a FIFO and closed on exec.
    public static func openForReading(_ path: String) -> Int32 {
        #if canImport(Glibc)
        Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        #else
        Darwin.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        #endif
    }

    /// `read(2)`.
    public static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(fd, buffer, count)
        #else
        Darwin.read(fd, buffer, count)
        #endif
    }

    /// `write(2)`.
    public static func write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(fd, buffer, count)
        #else
        Darwin.write(fd, buffer, count)
        #endif
    }

    /// `exit(3)`: leaves at once, running `atexit` handlers but no Swift deinitializer.
    public static func exit(_ code: Int32) -> Never {
        #if canImport(Glibc)
        Glibc.exit(code)
        #else
        Darwin.exit(code)
        #endif
    }

    /// A `stat`'s modification time in nanoseconds since 1970.
    public static func modifiedNanoseconds(_ s: stat) -> Int64 {
        #if canImport(Glibc)
        Int64(s.st_mtim.tv_sec) * 1_000_000_000 + Int64(s.st_mtim.tv_nsec)
        #else
        Int64(s.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(s.st_mtimespec.tv_nsec)
        #endif
    }
}
