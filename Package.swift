// swift-tools-version:6.0
import PackageDescription

/// Loupe: a terminal browser and REPL for persisted object graphs.
///
/// Dependencies point one way (see ARCHITECTURE.md):
/// DisplayText ← LoupeModel, TerminalKit; LoupeModel ← LoupeStore, LoupeQuery;
/// TerminalKit ← LoupeBrowser, NcursesBackend; all ← loupe.
let package = Package(
    name: "Loupe",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "LoupeModel", targets: ["LoupeModel"]),
        .library(name: "LoupeStore", targets: ["LoupeStore"]),
        .library(name: "LoupeQuery", targets: ["LoupeQuery"]),
        .library(name: "LoupeSQL", targets: ["LoupeSQL"]),
        .executable(name: "loupe", targets: ["loupe"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", exact: "0.6.0"),
    ],
    targets: [
        // The one escaping and width rule for text on a terminal (depends on nothing).
        .target(name: "DisplayText"),
        .target(name: "LoupeModel", dependencies: ["DisplayText"]),
        .target(name: "LoupeStore", dependencies: ["LoupeModel", "CSQLiteTuning", "CSignalSafety", "CZlib", "CMemory", .product(name: "GRDB", package: "GRDB.swift"),
                                                  .product(name: "GRDBSQLite", package: "GRDB.swift")]),
        // zlib, to inflate a Core Data store's compressed model cache.
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        // Process-wide SQLite settings that GRDB does not expose (see its header).
        .target(name: "CSQLiteTuning", linkerSettings: [.linkedLibrary("sqlite3")]),
        // What a signal handler must do (restore the terminal, remove private copies), in C.
        .target(name: "CSignalSafety"),
        // malloc_trim, which Swift's Glibc module leaves out: a load gives back what it freed.
        .target(name: "CMemory"),
        .target(name: "LoupeQuery", dependencies: ["LoupeModel", "DisplayText"]),
        // libpq, PostgreSQL's C client (Debian's libpq-dev).
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // PostgreSQL databases read as object graphs, through libpq.
        .target(name: "LoupePostgres", dependencies: ["CLibPQ", "CSignalSafety", "LoupeStore", "LoupeQuery", "LoupeModel"]),
        // The query language answered by SQLite over the file, without loading it.
        .target(name: "LoupeSQL", dependencies: ["LoupeStore", "LoupeQuery", "LoupeModel", .product(name: "GRDB", package: "GRDB.swift")]),
        // The store under a REPL session: loads, previews and commits through the storage core.
        .target(name: "LoupeHost", dependencies: ["LoupeStore", "LoupeQuery", "LoupeModel"]),
        .target(name: "TerminalKit", dependencies: ["DisplayText"]),
        .target(name: "LoupeBrowser", dependencies: ["TerminalKit", "LoupeModel", "LoupeQuery", "DisplayText"]),
        .systemLibrary(name: "CNcurses", providers: [.apt(["libncurses-dev"])]),
        .target(name: "NcursesBackend", dependencies: ["CNcurses", "CSignalSafety", "TerminalKit"]),
        .executableTarget(name: "loupe", dependencies: [
            "DisplayText", "LoupeModel", "LoupeStore", "LoupeQuery", "LoupeSQL", "LoupePostgres", "LoupeHost", "LoupeBrowser", "NcursesBackend", "CSignalSafety", "TerminalKit",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "TOMLKit", package: "TOMLKit"),
        ]),
        // Helpers every test target shares (hostile inputs, temp files, editing sessions, a small disk).
        .target(name: "LoupeTestSupport", dependencies: ["LoupeStore", "LoupeQuery", "LoupeHost", .product(name: "GRDB", package: "GRDB.swift")], path: "Tests/LoupeTestSupport"),
        .testTarget(name: "LoupeModelTests", dependencies: ["LoupeModel", "DisplayText"]),
        .testTarget(name: "LoupeStoreTests", dependencies: ["LoupeStore", "LoupeModel", "LoupeTestSupport"]),
        .testTarget(name: "LoupeQueryTests", dependencies: ["LoupeQuery", "LoupeStore", "LoupeModel", "LoupeHost", "LoupeSQL", "LoupePostgres", "LoupeTestSupport",
                                                            .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "LoupeBrowserTests", dependencies: ["LoupeBrowser", "LoupeHost", "TerminalKit", "DisplayText", "LoupeStore", "LoupeModel", "LoupeQuery", "LoupeSQL", "LoupePostgres", "LoupeTestSupport"],
                    exclude: ["Golden"]),
        .testTarget(name: "TerminalKitTests", dependencies: ["TerminalKit", "NcursesBackend", "CNcurses", "DisplayText"]),
        .testTarget(name: "LoupeCLITests", dependencies: ["LoupeTestSupport", "DisplayText", "LoupeStore", "LoupeQuery", .product(name: "GRDB", package: "GRDB.swift")]),
    ],
    swiftLanguageModes: [.v6]
)
