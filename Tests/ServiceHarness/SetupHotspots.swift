import Foundation

/// Accessories' setup hotspots as a machine joined to them sees them, in network namespaces
/// of the test's own: the machine's (`machine`) with the Wi-Fi interfaces `interfaces`, each a
/// veth to an accessory's namespace, where the accessory is at `deviceAddress` on
/// `192.168.4.0/24`, as ESP-IDF devices are on their SoftAP. The machine's route to that
/// network is through the first interface (the lowest metric), so that with `separateDevices`,
/// two hotspots with the same addresses, only binding to an interface reaches another one's
/// device. Without it, one accessory is behind every interface (a bridge in its namespace).
public final class SetupHotspots: @unchecked Sendable {
    public static let deviceAddress = "192.168.4.1"
    /// The address of the machine's `index`th interface.
    public static func machineAddress(_ index: Int) -> String { "192.168.4.\(2 + index)" }

    public let machine: String
    public let interfaces: [String]
    /// The accessories' namespaces: one per interface, in their order, or one for all.
    public let devices: [String]
    private var stopped = false

    public init(interfaces: [String] = ["wlan0", "wlan1"], separateDevices: Bool = false) throws {
        let tag = "\(getpid())-\(UUID().uuidString.prefix(6))"
        self.interfaces = interfaces
        machine = "accessory-machine-\(tag)"
        devices = (0..<(separateDevices ? interfaces.count : 1)).map { "accessory-device\($0)-\(tag)" }
        for namespace in [machine] + devices { try run("/usr/sbin/ip", ["netns", "add", namespace]) }
        do {
            try ip(machine, "link", "set", "lo", "up")
            for device in devices { try ip(device, "link", "set", "lo", "up") }
            if !separateDevices {
                try ip(devices[0], "link", "add", "br0", "type", "bridge")
                try ip(devices[0], "address", "add", "\(Self.deviceAddress)/24", "dev", "br0")
                try ip(devices[0], "link", "set", "br0", "up")
            }
            for (index, interface) in interfaces.enumerated() {
                let device = separateDevices ? devices[index] : devices[0]
                let peer = "eth\(index)"
                try ip(machine, "link", "add", interface, "type", "veth", "peer", "name", peer, "netns", device)
                try ip(machine, "address", "add", "\(Self.machineAddress(index))/24", "dev", interface, "noprefixroute")
                try ip(machine, "link", "set", interface, "up")
                try ip(machine, "route", "add", "192.168.4.0/24", "dev", interface, "metric", "\(100 * (index + 1))")
                if separateDevices {
                    try ip(device, "address", "add", "\(Self.deviceAddress)/24", "dev", peer)
                } else {
                    try ip(device, "link", "set", peer, "master", "br0")
                }
                try ip(device, "link", "set", peer, "up")
            }
        } catch {
            stop()
            throw error
        }
    }

    /// The command that runs `command` in `namespace`.
    public static func inNamespace(_ namespace: String, _ command: [String]) -> [String] {
        ["/usr/sbin/ip", "netns", "exec", namespace] + command
    }

    private func ip(_ namespace: String, _ arguments: String...) throws {
        try run("/usr/sbin/ip", ["-n", namespace] + arguments)
    }

    public func stop() {
        guard !stopped else { return }
        stopped = true
        for namespace in [machine] + devices { _ = try? run("/usr/sbin/ip", ["netns", "delete", namespace]) }
    }

    deinit { stop() }
}
