import Foundation
import LoupeStore

/// Loupe's cache folder moved to a new scratch folder until ``restore()``, so that a test of
/// what is kept there (the schema cache, the relation index, kept orders) sees only its own;
/// `restore()` puts the previous folder back and removes the scratch one.
public final class ScratchCache {
    public let path: String
    private let previous: String?

    public init() {
        path = NSTemporaryDirectory() + "loupe-cache-\(UUID().uuidString)"
        previous = SchemaCache.directory.withLock { $0 }
        SchemaCache.directory.withLock { [path] in $0 = path }
    }

    public func restore() {
        SchemaCache.directory.withLock { [previous] in $0 = previous }
        try? FileManager.default.removeItem(atPath: path)
    }
}
