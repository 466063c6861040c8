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

        // Layer 2: C libraries, each behind a system-library target, the shims Swift cannot
        // import without (macros, varargs), and the Swift runtime for GLib main contexts.
        .systemLibrary(name: "CGLib", pkgConfig: "gio-2.0", providers: [.apt(["libglib2.0-dev"])]),
        .systemLibrary(name: "CNetworkManager", pkgConfig: "libnm", providers: [.apt(["libnm-dev"])]),
        .target(name: "CGLibShim", dependencies: ["CGLib"]),
        .target(name: "GLibRuntime", dependencies: ["CGLib", "CGLibShim"]),
        .target(name: "NetworkManagerBackend", dependencies: ["AccessoryCore", "GLibRuntime", "CGLibShim", "CNetworkManager"]),
        .target(name: "BlueZBackend", dependencies: ["AccessoryCore", "GLibRuntime", "CGLibShim", "CGLib"]),

        // Layer 4: the commands of `accessoryctl`, as a library so tests can run them in-process.
        .target(name: "AccessoryCLI", dependencies: ["AccessoryCore", "NetworkManagerBackend", "BlueZBackend"]),
        .executableTarget(name: "accessoryctl", dependencies: ["AccessoryCLI"]),

        .executableTarget(
            name: "accessory-bench",
            dependencies: ["AccessoryCore"],
            path: "bench/MatchingBenchmark"
        ),

        // Starts the services integration tests need: a private bus, python-dbusmock,
        // NetworkManager in a network namespace.
        .target(name: "ServiceHarness", path: "Tests/ServiceHarness", exclude: ["templates"]),

        .testTarget(name: "AccessoryCoreTests", dependencies: ["AccessoryCore"]),
        .testTarget(name: "GLibRuntimeTests", dependencies: ["GLibRuntime", "CGLib"]),
        .testTarget(
            name: "NetworkManagerBackendTests",
            dependencies: ["NetworkManagerBackend", "AccessoryCore", "ServiceHarness"]
        ),
        .testTarget(
            name: "BlueZBackendTests",
            dependencies: ["BlueZBackend", "AccessoryCore", "ServiceHarness"]
        ),
        // What the Debian package installs (`packaging/`, `debian/`): the dispatcher hook, the
        // D-Bus policy, the polkit actions, the man pages.
        .testTarget(name: "PackagingTests", dependencies: ["AccessoryCLI", "ServiceHarness"]),
        .testTarget(
            name: "AccessoryCLITests",
            dependencies: ["AccessoryCLI", "AccessoryCore", "ServiceHarness"],
            exclude: ["Fixtures", "Snapshots"]
        ),
    ]
)
