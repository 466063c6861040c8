import Foundation

/// The real NetworkManager daemon, confined: its own network namespace (no device of the
/// host is visible), its own mount namespace with tmpfs over `/run` and
/// `/var/lib/NetworkManager` and a read-only `/sys` (so it does not wait for udev), private
/// configuration and keyfile directory, polkit off, no device managed, and a private bus.
/// The host's network configuration is never touched.
public final class IsolatedNetworkManager: @unchecked Sendable {
    public let bus: PrivateSystemBus
    public let keyfileDirectory: URL
    private let namespace: String
    private let daemon: ServiceProcess

    public init() throws {
        guard getuid() == 0 else {
            throw HarnessError("starting NetworkManager in a network namespace needs root (run the tests as root)")
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/NetworkManager") else {
            throw HarnessError(
                "/usr/sbin/NetworkManager is missing: install the network-manager package (scripts/setup.sh does)")
        }
        bus = try PrivateSystemBus()
        let directory = bus.directory
        keyfileDirectory = directory.url.appendingPathComponent("system-connections")
        try FileManager.default.createDirectory(at: keyfileDirectory, withIntermediateDirectories: true)
        for name in ["conf.d", "system-conf.d"] {
            try FileManager.default.createDirectory(
                at: directory.url.appendingPathComponent(name), withIntermediateDirectories: true)
        }
        let config = """
            [main]
            plugins=keyfile
            no-auto-default=*
            auth-polkit=false
            dns=none
            rc-manager=unmanaged
            systemd-resolved=false
            hostname-mode=none

            [keyfile]
            path=\(keyfileDirectory.path)
            unmanaged-devices=*

            [connectivity]
            enabled=false

            [logging]
            level=INFO
            """
        try config.write(toFile: directory.path("NetworkManager.conf"), atomically: true, encoding: .utf8)

        namespace = "accessory-nm-\(getpid())-\(UUID().uuidString.prefix(6))"
        try run("/usr/sbin/ip", ["netns", "add", namespace])
        let script = """
            set -e
            mount -t tmpfs tmpfs /run
            mount -t tmpfs tmpfs /var/lib/NetworkManager
            mount -o remount,ro /sys
            exec /usr/sbin/NetworkManager --debug \
              --config=\(directory.path("NetworkManager.conf")) \
              --config-dir=\(directory.path("conf.d")) \
              --system-config-dir=\(directory.path("system-conf.d")) \
              --intern-config=\(directory.path("intern.conf")) \
              --state-file=\(directory.path("NetworkManager.state")) \
              --pid-file=\(directory.path("NetworkManager.pid"))
            """
        do {
            daemon = try ServiceProcess(
                name: "NetworkManager", executable: "/usr/sbin/ip",
                arguments: [
                    "netns", "exec", namespace, "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh",
                    "-c", script,
                ],
                environment: bus.environment, logFile: directory.url.appendingPathComponent("NetworkManager.log"))
            try daemon.wait(for: "owning org.freedesktop.NetworkManager") {
                bus.hasOwner("org.freedesktop.NetworkManager")
            }
        } catch {
            _ = try? run("/usr/sbin/ip", ["netns", "delete", namespace])
            throw error
        }
    }

    /// NetworkManager's log, for a failing test's message.
    public var log: String { daemon.log }

    /// The files in the keyfile directory.
    public func keyfiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: keyfileDirectory.path)) ?? []).sorted()
    }

    public func stop() {
        daemon.stop()
        _ = try? run("/usr/sbin/ip", ["netns", "delete", namespace])
        bus.stop()
    }

    deinit { stop() }
}
