import Foundation

/// A vendor's HTTP setup API (`lab/accessories/vendor_setup_device.py`: Shelly Gen1 and Gen2,
/// Tasmota, WLED, ESPHome) on a setup hotspot of `SetupHotspots`, at its device address on
/// port 80, knowing its home network's passphrase from a file of a scratch directory.
public final class VendorSetupDevice: @unchecked Sendable {
    public static let script = ESPProvisioningDevice.repository
        .appendingPathComponent("lab/accessories/vendor_setup_device.py").path

    /// `HOST:PORT`, as a profile's `provisioning.address` names it.
    public var address: String { "\(SetupHotspots.deviceAddress):80" }
    public let directory: ScratchDirectory
    public let hotspots: SetupHotspots
    private let process: ServiceProcess

    /// `vendor` as the simulator names it (`shelly-gen2`); `auth`: its web interface is
    /// password-protected; `leavesHotspot`: it stops serving once it has the network.
    public init(
        vendor: String, homeSSID: String = "HomeNet", homePassphrase: String = "home-passphrase",
        homeAddress: String = "192.168.1.43", auth: Bool = false, leavesHotspot: Bool = false,
        on hotspots: SetupHotspots
    ) throws {
        self.hotspots = hotspots
        directory = try ScratchDirectory("vendor-device")
        try Data((homePassphrase + "\n").utf8).write(to: directory.url.appendingPathComponent("home.pass"))
        var arguments = [
            Self.script, "--vendor", vendor, "--address", SetupHotspots.deviceAddress, "--port", "80",
            "--home-ssid", homeSSID, "--home-passphrase-file", directory.path("home.pass"), "--home-ip", homeAddress,
            "--join-seconds", "0.5",
        ]
        if auth { arguments.append("--auth") }
        if leavesHotspot { arguments.append("--leaves-hotspot") }
        let launched = SetupHotspots.inNamespace(hotspots.devices[0], ["/usr/bin/python3"] + arguments)
        let process = try ServiceProcess(
            name: "\(vendor) device", executable: launched[0], arguments: Array(launched.dropFirst()),
            logFile: directory.url.appendingPathComponent("device.log"))
        self.process = process
        try process.wait(for: "listening") { process.log.contains("READY port=") }
    }

    /// What the device logged: requests, and whether the passphrase it got matched; never a secret.
    public var log: String { process.log }

    /// Waits until the device has logged `text` (`LEAVING`: it stopped serving its hotspot).
    public func waitForLog(_ text: String, timeout: TimeInterval = 10) throws {
        try process.wait(for: "'\(text)' in its log", timeout: timeout) { process.log.contains(text) }
    }

    /// Writes `text` and a newline to a file in the scratch directory; returns its path.
    public func writeFile(_ name: String, _ text: String) throws -> String {
        try Data((text + "\n").utf8).write(to: directory.url.appendingPathComponent(name))
        return directory.path(name)
    }

    public func stop() { process.stop() }

    deinit { process.stop() }
}
