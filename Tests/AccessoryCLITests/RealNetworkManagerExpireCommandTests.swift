import AccessoryCLI
import Foundation
import ServiceHarness
import Testing

/// `accessoryctl expire`, the command the package's timer runs, against the real NetworkManager
/// in a network namespace, with profiles it reads from keyfiles as it would after a reboot:
/// only this project's profile past its expiry is removed.
@Suite(.serialized) final class RealNetworkManagerExpireCommandTests {
    let daemon: IsolatedNetworkManager

    init() throws {
        daemon = try IsolatedNetworkManager()
    }

    deinit { daemon.stop() }

    /// A Wi-Fi keyfile; `user` is its `[user]` section (this project's tags).
    func writeProfile(_ name: String, ssid: String, user: [String: String]) throws -> String {
        let uuid = UUID().uuidString.lowercased()
        var text = """
            [connection]
            id=\(name)
            uuid=\(uuid)
            type=wifi
            autoconnect=false

            [wifi]
            mode=infrastructure
            ssid=\(ssid)

            [ipv4]
            method=auto

            [ipv6]
            method=auto

            """
        if !user.isEmpty {
            text += "\n[user]\n" + user.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)\n" }.joined()
        }
        let url = daemon.keyfileDirectory.appendingPathComponent("\(name).nmconnection")
        try Data(text.utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        return "\(name).nmconnection"
    }

    func accessoryctl(_ arguments: String...) async throws -> Run {
        try await accessoryctlProcess(arguments, environment: daemon.bus.environment)
    }

    @Test func expireRemovesOnlyOurProfilePastItsExpiry() async throws {
        let now = Int(Date().timeIntervalSince1970)
        let expired = try writeProfile(
            "Accessory Old-Setup", ssid: "Old-Setup",
            user: [
                "accessory-setup.managed": "1", "accessory-setup.join-once": "0",
                "accessory-setup.expires": "\(now - 60)",
            ])
        let unexpired = try writeProfile(
            "Accessory New-Setup", ssid: "New-Setup",
            user: [
                "accessory-setup.managed": "1", "accessory-setup.join-once": "0",
                "accessory-setup.expires": "\(now + 86_400)",
            ])
        // The person's own profile: an expiry tag without this project's mark is not ours.
        let untagged = try writeProfile("Home-Net", ssid: "Home-Net", user: ["accessory-setup.expires": "\(now - 60)"])
        try ServiceHarness.run("/usr/bin/nmcli", ["connection", "reload"], environment: daemon.bus.environment)
        #expect(daemon.keyfiles() == [expired, unexpired, untagged].sorted())

        let run = try await accessoryctl("expire")
        #expect(run.code == .success, "\(run.err)\n\(daemon.log.suffix(2000))")
        #expect(run.out == "Removed 'Accessory Old-Setup' (Old-Setup): its lifetime ended at \(iso(now - 60)).\n")
        #expect(daemon.keyfiles() == [unexpired, untagged].sorted())

        let again = try await accessoryctl("expire", "--json")
        #expect(again.code == .success, "\(again.err)")
        let json = try JSONSerialization.jsonObject(with: Data(again.out.utf8)) as? [String: [Any]]
        #expect(json?["removed"]?.isEmpty == true && json?["inUse"]?.isEmpty == true, "\(again.out)")
        #expect(daemon.keyfiles() == [unexpired, untagged].sorted())
    }

    private func iso(_ seconds: Int) -> String {
        Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(.iso8601)
    }
}
