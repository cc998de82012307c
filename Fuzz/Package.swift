// swift-tools-version:6.0
import PackageDescription

/// Coverage-guided fuzzing of Loupe with libFuzzer (`scripts/fuzz.sh` builds and runs it).
///
/// A package of its own: libFuzzer provides `main`, so these executables only link when built
/// with `-sanitize=fuzzer`, which the main package's ordinary build must not need.
let package = Package(
    name: "LoupeFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "Loupe", path: "..")],
    targets: [
        .executableTarget(name: "QueryFuzz", dependencies: [.product(name: "LoupeQuery", package: "Loupe"), .product(name: "LoupeModel", package: "Loupe")],
                          swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(name: "FileFuzz", dependencies: [.product(name: "LoupeStore", package: "Loupe"), .product(name: "LoupeQuery", package: "Loupe"),
                                                           .product(name: "LoupeModel", package: "Loupe")],
                          swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
    ],
    swiftLanguageModes: [.v6]
)
