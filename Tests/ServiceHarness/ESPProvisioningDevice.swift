import Foundation

/// The ESP32-style provisioning device simulator (`lab/accessories/esp_prov_device.py`) on
/// 127.0.0.1 at a port the kernel picks, or on a setup hotspot of `SetupHotspots`, with its
/// proof of possession and its home network's passphrase in files of a scratch directory.
public final class ESPProvisioningDevice: @unchecked Sendable {
    public static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    public static let script = repository.appendingPathComponent("lab/accessories/esp_prov_device.py").path
    /// The venv scripts/setup.sh makes for Python peers from PyPI (esp-protocomm).
    public static let peersPython = repository.appendingPathComponent(".build/python-peers/bin/python3").path

    public let host: String
    public let port: Int
    /// `HOST:PORT`, as a profile's `provisioning.address` names it.
    public var address: String { "\(host):\(port)" }
    public let directory: ScratchDirectory
    /// Kept while the device runs in one of their namespaces.
    public let hotspots: SetupHotspots?
    private let process: ServiceProcess

    /// `proofOfPossession` nil: security 1 without one (`no_pop`); required for security 2.
    /// `versionFormat`: how `proto-ver` answers, `json`, `no-sec-ver` (older firmware) or `bare`.
    /// `connectingSeconds`: how long it takes to join the home network from the first apply (a
    /// configuration applied again meanwhile does not start it over).
    /// On `hotspots`, it is the accessory behind their `behind`th interface, at their device
    /// address on port 80, as on its SoftAP.
    public init(
        security: Int, proofOfPossession: String?, patchVersion: Int = 1, username: String = "wifiprov",
        homeSSID: String = "HomeNet", homePassphrase: String = "home-passphrase", connectingPolls: Int = 1,
        connectingSeconds: Int = 0, versionFormat: String = "json", on hotspots: SetupHotspots? = nil,
        behind index: Int = 0
    ) throws {
        self.hotspots = hotspots
        host = hotspots == nil ? "127.0.0.1" : SetupHotspots.deviceAddress
        directory = try ScratchDirectory("esp-prov-device")
        var arguments = [
            Self.script, "--security", "\(security)", "--patch-version", "\(patchVersion)", "--username", username,
            "--home-ssid", homeSSID, "--home-passphrase-file", directory.path("home.pass"),
            "--connecting-polls", "\(connectingPolls)", "--connecting-seconds", "\(connectingSeconds)",
            "--version-format", versionFormat, "--address", host,
        ]
        if hotspots != nil { arguments += ["--port", "80"] }
        try Data((homePassphrase + "\n").utf8).write(to: directory.url.appendingPathComponent("home.pass"))
        if let proofOfPossession {
            try Data((proofOfPossession + "\n").utf8).write(to: directory.url.appendingPathComponent("device.pop"))
            arguments += ["--pop-file", directory.path("device.pop")]
        }
        let command = ["/usr/bin/python3"] + arguments
        let launched =
            hotspots.map { SetupHotspots.inNamespace($0.devices[min(index, $0.devices.count - 1)], command) } ?? command
        let process = try ServiceProcess(
            name: "ESP provisioning device", executable: launched[0], arguments: Array(launched.dropFirst()),
            logFile: directory.url.appendingPathComponent("device.log"))
        self.process = process
        var found: Int?
        try process.wait(for: "listening") {
            found =
                process.log.split(separator: "\n").lazy.compactMap { line in
                    line.hasPrefix("READY port=") ? Int(line.dropFirst(11).prefix { $0.isNumber }) : nil
                }.first
            return found != nil
        }
        port = found!
    }

    /// What the device logged: sessions, refusals and verdicts, never a secret.
    public var log: String { process.log }

    /// Writes `text` and a newline to a file in the scratch directory; returns its path.
    public func writeFile(_ name: String, _ text: String) throws -> String {
        try Data((text + "\n").utf8).write(to: directory.url.appendingPathComponent(name))
        return directory.path(name)
    }

    public func stop() { process.stop() }

    deinit { process.stop() }
}
