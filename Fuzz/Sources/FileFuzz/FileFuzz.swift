import Foundation
import LoupeModel
import LoupeQuery
import LoupeStore

/// libFuzzer's entry point for files: any bytes are written to a fresh file and opened as a store
/// the way `loupe types`, `schema` and `query` open one; every type is described and listed as
/// JSON. A crash, trap or hang is a finding; refusing the file with an error is expected.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let path = FileFuzz.folder + "/input.sqlite"
    for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    guard FileManager.default.createFile(atPath: path, contents: Data(bytes: data, count: size)) else { return 0 }
    guard let store = try? LoadedStore.open(path) else { return 0 }
    let graph = store.graph
    let engine = QueryEngine(graph: graph)
    for type in graph.types {
        _ = graph.schemaText(of: type)
        if type.count > 0 { _ = graph.describe(ObjectRef(type: type.index, row: 0)) }
        if let result = try? engine.run("`\(type.name.rawValue.replacingOccurrences(of: "`", with: ""))` limit 20") {
            _ = result.render(.json, graph: graph)
            _ = result.render(.table, graph: graph)
        }
    }
    return 0
}

enum FileFuzz {
    static let folder: String = {
        let f = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-filefuzz-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: f, withIntermediateDirectories: true)
        return f
    }()
}
