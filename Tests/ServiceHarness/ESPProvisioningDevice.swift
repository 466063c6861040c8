import Foundation

/// The ESP32-style provisioning device simulator (`lab/accessories/esp_prov_device.py`) on
/// 127.0.0.1 at a port the kernel picks, with its proof of possession and its home network's
/// passphrase in files of a scratch directory.
public final class ESPProvisioningDevice: @unchecked Sendable {
    public static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    public static let script = repository.appendingPathComponent("lab/accessories/esp_prov_device.py").path
    /// The venv scripts/setup.sh makes for Python peers from PyPI (esp-protocomm).
    public static let peersPython = repository.appendingPathComponent(".build/python-peers/bin/python3").path

    public let port: Int
    public let directory: ScratchDirectory
    private let process: ServiceProcess

    /// `proofOfPossession` nil: security 1 without one (`no_pop`); required for security 2.
    /// `versionFormat`: how `proto-ver` answers, `json`, `no-sec-ver` (older firmware) or `bare`.
    public init(
        security: Int, proofOfPossession: String?, patchVersion: Int = 1, username: String = "wifiprov",
        homeSSID: String = "HomeNet", homePassphrase: String = "home-passphrase", connectingPolls: Int = 1,
        versionFormat: String = "json"
    ) throws {
        directory = try ScratchDirectory("esp-prov-device")
        var arguments = [
            Self.script, "--security", "\(security)", "--patch-version", "\(patchVersion)", "--username", username,
            "--home-ssid", homeSSID, "--home-passphrase-file", directory.path("home.pass"),
            "--connecting-polls", "\(connectingPolls)", "--version-format", versionFormat,
        ]
        try Data((homePassphrase + "\n").utf8).write(to: directory.url.appendingPathComponent("home.pass"))
        if let proofOfPossession {
            try Data((proofOfPossession + "\n").utf8).write(to: directory.url.appendingPathComponent("device.pop"))
            arguments += ["--pop-file", directory.path("device.pop")]
        }
        let process = try ServiceProcess(
            name: "ESP provisioning device", executable: "/usr/bin/python3", arguments: arguments,
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
