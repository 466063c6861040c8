// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "accessory-setup",
    products: [
        .library(name: "AccessoryCore", targets: ["AccessoryCore"]),
        .executable(name: "accessoryctl", targets: ["accessoryctl"]),
    ],
    targets: [
        // Layer 1: the pure-Swift model. Imports Foundation only, never a C library.
        .target(name: "AccessoryCore"),

        // Layer 4: the commands of `accessoryctl`, as a library so tests can run them in-process.
        .target(name: "AccessoryCLI", dependencies: ["AccessoryCore"]),
        .executableTarget(name: "accessoryctl", dependencies: ["AccessoryCLI"]),

        .executableTarget(
            name: "accessory-bench",
            dependencies: ["AccessoryCore"],
            path: "bench/MatchingBenchmark"
        ),

        .testTarget(name: "AccessoryCoreTests", dependencies: ["AccessoryCore"]),
        .testTarget(name: "AccessoryCLITests", dependencies: ["AccessoryCLI", "AccessoryCore"]),
    ]
)
