// swift-tools-version:6.0
import PackageDescription

/// Coverage-guided fuzzing of Loupe with libFuzzer (`scripts/fuzz.sh` builds and runs it).
///
/// A package of its own: libFuzzer provides `main`, so these executables only link when built
/// with `-sanitize=fuzzer`, which the main package's ordinary build must not need.
let package = Package(
    name: "LoupeFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "Loupe", path: ".."), .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0")],
    targets: [
        .executableTarget(name: "QueryFuzz", dependencies: [.product(name: "LoupeQuery", package: "Loupe"), .product(name: "LoupeModel", package: "Loupe")],
                          swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(name: "FileFuzz", dependencies: [.product(name: "LoupeStore", package: "Loupe"), .product(name: "LoupeQuery", package: "Loupe"),
                                                           .product(name: "LoupeModel", package: "Loupe"), .product(name: "LoupeSQL", package: "Loupe"),
                                                           .product(name: "GRDB", package: "GRDB.swift")],
                          swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
    ],
    swiftLanguageModes: [.v6]
)
