import Foundation

/// The real avahi-daemon on a private bus, confined: its own network namespace with one veth
/// pair (`av0`, multicast, 10.77.0.1/24) for mDNS, and its own mount namespace with tmpfs over
/// `/run/avahi-daemon` (its pid file and socket). Services are announced with `avahi-publish`
/// through the same daemon, so a browse through it over D-Bus sees them, resolved to the
/// addresses they were published with.
public final class AvahiResponder: @unchecked Sendable {
    private let namespace: String
    private let daemon: ServiceProcess
    private let bus: PrivateSystemBus
    private let directory: ScratchDirectory
    private let lock = NSLock()
    private var published: [ServiceProcess] = []
    /// Each host's address publisher, by host name.
    private var hosts: [String: ServiceProcess] = [:]

    public init(on bus: PrivateSystemBus) throws {
        guard getuid() == 0 else {
            throw HarnessError("starting avahi-daemon in a network namespace needs root (run the tests as root)")
        }
        for tool in ["/usr/sbin/avahi-daemon", "/usr/bin/avahi-publish"]
        where !FileManager.default.isExecutableFile(atPath: tool) {
            throw HarnessError("\(tool) is missing: install avahi-daemon and avahi-utils (scripts/setup.sh does)")
        }
        self.bus = bus
        directory = try ScratchDirectory("avahi")
        let config = """
            [server]
            use-ipv4=yes
            use-ipv6=no
            allow-interfaces=av0
            enable-dbus=yes
            [publish]
            publish-hinfo=no
            publish-workstation=no
            """
        try config.write(toFile: directory.path("avahi-daemon.conf"), atomically: true, encoding: .utf8)
        namespace = "accessory-avahi-\(getpid())-\(UUID().uuidString.prefix(6))"
        try run("/usr/sbin/ip", ["netns", "add", namespace])
        // The daemon is the child of a shell that stays, and that stops it on SIGTERM.
        let script = """
            set -e
            ip link set lo up
            ip link add av0 type veth peer name av1
            ip link set av0 multicast on up
            ip link set av1 up
            ip addr add 10.77.0.1/24 dev av0
            mkdir -p /run/avahi-daemon
            mount -t tmpfs tmpfs /run/avahi-daemon
            /usr/sbin/avahi-daemon -f \(directory.path("avahi-daemon.conf")) --no-drop-root --no-chroot \
              --no-rlimits --no-proc-title &
            daemon=$!
            trap 'kill $daemon; wait $daemon; exit 0' TERM INT
            wait $daemon
            """
        do {
            daemon = try ServiceProcess(
                name: "avahi-daemon", executable: "/usr/sbin/ip",
                arguments: [
                    "netns", "exec", namespace, "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh",
                    "-c", script,
                ],
                environment: bus.environment, logFile: directory.url.appendingPathComponent("avahi-daemon.log"))
            try daemon.wait(for: "Server startup complete", timeout: 30) {
                daemon.log.contains("Server startup complete")
            }
        } catch {
            _ = try? run("/usr/sbin/ip", ["netns", "delete", namespace])
            throw error
        }
    }

    public var log: String { daemon.log }

    /// Announces `hostname` at `address`, and service `name` of `type` on it at `port` with
    /// `txt` (`key=value` strings), until `stop`. The daemon withdraws what a killed publisher
    /// announced once the bus tells it the publisher left; an announcement that collides with
    /// one not withdrawn yet (avahi-publish renames the service, or gives the address up) is
    /// made again a moment later, so that the names stay as asked.
    public func publish(
        _ name: String, type: String, port: UInt16, hostname: String, address: String, txt: [String] = []
    ) throws {
        var attempts: [String] = []
        for attempt in 1...10 {
            let tag = UUID().uuidString.prefix(6)
            let host = try ServiceProcess(
                name: "avahi-publish -a", executable: "/usr/bin/avahi-publish",
                arguments: ["-a", "-R", hostname, address], environment: bus.environment,
                logFile: directory.url.appendingPathComponent("publish-address-\(tag).log"))
            try host.wait(for: "'\(hostname)' established", timeout: 30) {
                host.log.contains("Established under name") || !host.isRunning
            }
            let service = try ServiceProcess(
                name: "avahi-publish -s", executable: "/usr/bin/avahi-publish",
                arguments: ["-s", "-H", hostname, name, type, String(port)] + txt, environment: bus.environment,
                logFile: directory.url.appendingPathComponent("publish-service-\(tag).log"))
            try service.wait(for: "'\(name)' established", timeout: 30) {
                service.log.contains("Established under name") || service.log.contains("collision")
                    || !service.isRunning
            }
            if host.isRunning && service.log.contains("Established under name '\(name)'") {
                lock.withLock {
                    published += [host, service]
                    hosts[hostname] = host
                }
                return
            }
            attempts.append("attempt \(attempt):\n\(host.log)\n\(service.log)")
            for process in [host, service] {
                process.send(SIGKILL)
                _ = process.waitForExit(timeout: 10)
            }
            usleep(200_000)
        }
        throw HarnessError(
            "'\(name)' at \(hostname) was never announced as asked:\n\(attempts.joined(separator: "\n"))")
    }

    /// Moves `hostname` to `address` the standard way, as a device whose DHCP lease changed
    /// does: its address record is withdrawn and announced anew, its services left as they are.
    public func moveHost(_ hostname: String, to address: String) throws {
        guard let old = lock.withLock({ hosts[hostname] }) else {
            throw HarnessError("\(hostname) was not published here")
        }
        old.send(SIGKILL)
        _ = old.waitForExit(timeout: 10)
        for attempt in 1...10 {
            let host = try ServiceProcess(
                name: "avahi-publish -a", executable: "/usr/bin/avahi-publish",
                arguments: ["-a", "-R", hostname, address], environment: bus.environment,
                logFile: directory.url.appendingPathComponent("publish-address-\(UUID().uuidString.prefix(6)).log"))
            try host.wait(for: "'\(hostname)' established at \(address)", timeout: 30) {
                host.log.contains("Established under name") || !host.isRunning
            }
            if host.isRunning {
                lock.withLock {
                    published.append(host)
                    hosts[hostname] = host
                }
                return
            }
            // The withdrawn record was still held: announced again a moment later.
            if attempt < 10 { usleep(200_000) }
        }
        throw HarnessError("\(hostname) was never announced at \(address)")
    }

    /// Withdraws what was published.
    public func unpublishAll() {
        let processes = lock.withLock {
            defer {
                published = []
                hosts = [:]
            }
            return published
        }
        // Killed: avahi-publish's own goodbye is not needed, the daemon withdraws what a client
        // that left published, and a SIGTERM waits out ServiceProcess.stop's grace.
        for process in processes {
            process.send(SIGKILL)
            _ = process.waitForExit(timeout: 10)
        }
    }

    public func stop() {
        unpublishAll()
        daemon.stop()
        _ = try? run("/usr/sbin/ip", ["netns", "delete", namespace])
    }

    deinit { stop() }
}
