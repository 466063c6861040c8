// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "accessory-setup",
    products: [
        .library(name: "AccessoryCore", targets: ["AccessoryCore"]),
        .library(name: "AccessorySetupKit", targets: ["AccessorySetupKit", "NetworkExtension", "CoreBluetooth"]),
        .executable(name: "accessoryctl", targets: ["accessoryctl"]),
        .executable(name: "accessory-agent", targets: ["accessory-agent"]),
        .executable(name: "accessory-picker", targets: ["accessory-picker"]),
        .executable(name: "accessory-settings", targets: ["accessory-settings"]),
    ],
    targets: [
        // Layer 1: the pure-Swift model. Imports FoundationEssentials and the C library (Glibc) only.
        // No target that ships imports all of Foundation: its ICU data would triple the binaries.
        .target(name: "AccessoryCore"),
        // The values D-Bus messages carry, in Swift: what the agent's contract is written in,
        // with no GLib beneath it (GLibRuntime converts them to and from GVariant).
        .target(name: "DBusValues"),

        // Layer 2: C libraries, each behind a system-library target, the shims Swift cannot
        // import without (macros, varargs), and the Swift runtime for GLib main contexts.
        .systemLibrary(name: "CGLib", pkgConfig: "gio-unix-2.0", providers: [.apt(["libglib2.0-dev"])]),
        .systemLibrary(name: "CNetworkManager", pkgConfig: "libnm", providers: [.apt(["libnm-dev"])]),
        .target(name: "CGLibShim", dependencies: ["CGLib"]),
        .target(name: "GLibRuntime", dependencies: ["CGLib", "CGLibShim", "DBusValues"]),
        .target(
            name: "NetworkManagerBackend",
            dependencies: ["AccessoryCore", "GLibRuntime", "CGLibShim", "CNetworkManager"]),
        .target(name: "BlueZBackend", dependencies: ["AccessoryCore", "GLibRuntime", "CGLibShim", "CGLib"]),
        // The agent's own side of D-Bus: owning a name, exporting objects, calling peers, and
        // which application a peer is.
        .target(name: "BusService", dependencies: ["AccessoryCore", "GLibRuntime", "CGLib", "CGLibShim"]),
        .target(name: "AvahiBackend", dependencies: ["AccessoryCore", "BusService", "GLibRuntime"]),
        // The BlueZ pairing agent (`org.bluez.Agent1`) the agent and `accessoryctl handoff` export.
        .target(
            name: "BluetoothPairing", dependencies: ["AccessoryCore", "BlueZBackend", "BusService", "GLibRuntime"]),

        // Layer 3: the agent, the system service, on the core, the backends and the bus service;
        // the values its interfaces carry, which its clients read too.
        .target(name: "AgentInterface", dependencies: ["AccessoryCore", "DBusValues"], plugins: ["EmbedInterfaces"]),
        .target(
            name: "AccessoryAgent",
            dependencies: [
                "AccessoryCore", "AgentInterface", "NetworkManagerBackend", "BlueZBackend", "BluetoothPairing",
                "AvahiBackend", "BusService", "GLibRuntime", "ProvisioningCrypto", "ProvisioningHTTP",
            ]
        ),
        .executableTarget(name: "accessory-agent", dependencies: ["AccessoryAgent", "AgentInterface", "GLibRuntime"]),
        .executableTarget(name: "embed-interfaces", path: "Plugins/EmbedInterfacesTool"),
        .plugin(name: "EmbedInterfaces", capability: .buildTool(), dependencies: ["embed-interfaces"]),
        // libcrypto's declarations (libssl-dev), its functions loaded with dlopen when provisioning.
        .target(name: "COpenSSL"),
        .target(name: "ProvisioningCrypto", dependencies: ["AccessoryCore", "COpenSSL"]),
        .target(name: "ProvisioningHTTP", dependencies: ["AccessoryCore"]),

        // The client library an application links: AccessorySetupKit's and NEHotspotConfiguration's
        // shape over the agent's D-Bus API.
        .target(
            name: "AccessorySetupKit",
            dependencies: ["AccessoryCore", "AgentInterface", "BusService", "CoreBluetooth", "GLibRuntime"]),
        // `NEHotspotConfiguration` and its manager; all of Foundation, for Apple's `NSError`s.
        .target(
            name: "NetworkExtension",
            dependencies: ["AccessoryCore", "AccessorySetupKit", "AgentInterface", "BusService", "DBusValues"]),
        // `CBUUID`, the one CoreBluetooth type AccessorySetupKit's descriptors take.
        .target(name: "CoreBluetooth"),

        // Layer 4: the commands of `accessoryctl`, as a library so tests can run them in-process.
        .target(
            name: "AccessoryCLI",
            dependencies: [
                "AccessoryCore", "AccessorySetupKit", "NetworkManagerBackend", "BlueZBackend", "BluetoothPairing",
                "AgentInterface", "BusService", "GLibRuntime", "ProvisioningCrypto", "ProvisioningHTTP",
            ]
        ),
        .executableTarget(name: "accessoryctl", dependencies: ["AccessoryCLI"]),

        // The graphical picker: GTK 4 and libadwaita behind a system-library target and a shim,
        // seen only by `AccessoryPicker`, which runs GTK on a thread of its own.
        .systemLibrary(
            name: "CGtk", pkgConfig: "libadwaita-1", providers: [.apt(["libgtk-4-dev", "libadwaita-1-dev"])]),
        .target(name: "CGtkShim", dependencies: ["CGtk"]),
        .target(
            name: "AccessoryPicker",
            dependencies: [
                "AccessoryCore", "AccessorySetupKit", "AgentInterface", "BusService", "GLibRuntime", "CGtk", "CGtkShim",
            ]
        ),
        .executableTarget(name: "accessory-picker", dependencies: ["AccessoryPicker"]),
        .executableTarget(name: "accessory-settings", dependencies: ["AccessoryPicker"]),

        // An application of the agent through the client library (examples/PickAccessory).
        .executableTarget(
            name: "pick-accessory", dependencies: ["AccessorySetupKit", "NetworkExtension"],
            path: "examples/PickAccessory",
            exclude: ["README.md", "org.example.PickAccessory.desktop", "org.example.PickAccessory.json"]),

        // Apple's sample code from ../shared/seeds, with only the lines Linux must change
        // (each file's header lists them); MockServicesAgentAppleSampleCodeTests runs it.
        .executableTarget(
            name: "apple-sample-code", dependencies: ["AccessorySetupKit", "NetworkExtension", "CoreBluetooth"],
            path: "examples/AppleSampleCode", swiftSettings: [.swiftLanguageMode(.v5)]),

        .executableTarget(
            name: "accessory-bench",
            dependencies: ["AccessoryCore"],
            path: "bench/MatchingBenchmark"
        ),

        // Starts the services integration tests need: a private bus, python-dbusmock,
        // NetworkManager in a network namespace.
        .target(
            name: "ServiceHarness", dependencies: ["ServiceHarnessShim"], path: "Tests/ServiceHarness",
            exclude: ["templates"]),
        // The GNU extensions of glibc that ServiceHarness spawns its children with.
        .target(name: "ServiceHarnessShim", path: "Tests/ServiceHarnessShim"),
        .testTarget(name: "ServiceHarnessTests", dependencies: ["ServiceHarness"]),

        .testTarget(name: "AccessoryCoreTests", dependencies: ["AccessoryCore"], exclude: ["Fixtures"]),
        .testTarget(name: "DBusValuesTests", dependencies: ["DBusValues"]),
        .testTarget(name: "GLibRuntimeTests", dependencies: ["GLibRuntime", "CGLib"]),
        .testTarget(name: "BusServiceTests", dependencies: ["BusService", "AccessoryCore"]),
        .testTarget(
            name: "AccessorySetupKitTests",
            dependencies: ["AccessorySetupKit", "AgentInterface", "AccessoryCore", "GLibRuntime", "CGLib"]),
        .testTarget(name: "AgentInterfaceTests", dependencies: ["AgentInterface", "AccessoryCore", "DBusValues"]),
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
        .testTarget(name: "PackagingTests", dependencies: ["AccessoryCLI", "AccessoryCore", "ServiceHarness"]),
        .testTarget(
            name: "AccessoryAgentTests",
            dependencies: ["AccessoryAgent", "BusService", "GLibRuntime", "AccessoryCore", "ServiceHarness"],
            exclude: ["Clients"]
        ),
        .testTarget(
            name: "AccessoryPickerTests",
            dependencies: [
                "AccessoryPicker", "AccessorySetupKit", "AgentInterface", "AccessoryCore", "BusService", "GLibRuntime",
                "ServiceHarness",
            ],
            exclude: ["Reference", "atspi_driver.py", "drive_picker.py", "drive_accessories.py"]
        ),
        .testTarget(
            name: "ProvisioningCryptoTests",
            dependencies: ["ProvisioningCrypto", "AccessoryCore", "ServiceHarness"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "ProvisioningHTTPTests",
            dependencies: ["ProvisioningHTTP", "ProvisioningCrypto", "AccessoryCore", "ServiceHarness"]
        ),
        .testTarget(
            name: "AccessoryCLITests",
            dependencies: ["AccessoryCLI", "AccessoryCore", "ServiceHarness"],
            exclude: ["Fixtures", "Snapshots"]
        ),
    ]
)
