import Foundation
import Testing

@testable import AccessoryCore

@Suite("The kiosk policy")
struct KioskPolicyTests {
    static let example = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("packaging/etc/kiosk.json")

    private func issues(_ text: String) -> [FieldIssue] {
        do {
            let policy = try KioskPolicy.parse(Data(text.utf8), path: "kiosk.json")
            Issue.record("expected faults, the policy parsed: \(policy)")
            return []
        } catch {
            guard case .invalid(_, let issues) = error else {
                Issue.record("expected field faults, got \(error)")
                return []
            }
            return issues
        }
    }

    @Test func theShippedExampleReads() throws {
        let policy = try KioskPolicy.load(contentsOf: Self.example)
        #expect(policy.policies.count == 4)
        #expect(policy.policies[0].rule == .strongestSignal(settle: .seconds(5)))
        #expect(policy.policies[0].users == [.name("kiosk"), .uid(0)])
        #expect(policy.policies[1].rule == .ssidPattern("PROV_*"))
        #expect(policy.policies[3].passphraseFile == "/etc/accessory-setup/kiosk/camera.passphrase")
    }

    @Test func everyFaultNamesItsField() {
        let found = issues(
            """
            {
              "schemaVersion": 2,
              "policies": [
                {"profiles": [], "users": ["kiosk"], "choose": "firstMatch"},
                {"profiles": ["ge.wled.softap", "not a profile"], "users": ["kiosk", -1, "9lives", "x y"],
                 "choose": "loudest"},
                {"profiles": ["ge.wled.softap"], "users": [0], "choose": "ssidPattern", "settleSeconds": 5},
                {"profiles": ["ge.wled.softap"], "users": [0], "choose": "strongestSignal", "settleSeconds": 301,
                 "passphraseFile": "etc/pass", "colour": "red"},
                {"profiles": ["ge.wled.softap"], "users": [0], "choose": "firstMatch", "passphrase": "wled1234"},
                "first"
              ],
              "extra": true
            }
            """)
        #expect(
            found.map(\.field) == [
                "extra",
                "schemaVersion",
                "policies[0].profiles",
                "policies[1].profiles[1]",
                "policies[1].users[1]",
                "policies[1].users[2]",
                "policies[1].users[3]",
                "policies[1].choose",
                "policies[2].settleSeconds",
                "policies[2].ssidPattern",
                "policies[3].colour",
                "policies[3].settleSeconds",
                "policies[3].passphraseFile",
                "policies[4].passphrase",
                "policies[5]",
            ])
        #expect(!found.contains { $0.message.contains("wled1234") }, "the secret is not echoed")
        #expect(found.first { $0.field == "policies[4].passphrase" }?.message.contains("passphraseFile") == true)
    }

    @Test func aDocumentThatIsNotJSONOrTooLargeIsRefusedWhole() throws {
        #expect(issues("{").map(\.field) == ["(document)"])
        #expect(issues("[]").map(\.field) == ["(document)"])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let large = directory.appendingPathComponent("kiosk.json")
        try Data(count: BoundedInput.documentLimit + 1).write(to: large)
        #expect(
            throws: KioskPolicyError.unreadable(
                path: large.path, reason: BoundedInputError.tooLarge(name: "", limit: BoundedInput.documentLimit).reason
            )
        ) {
            try KioskPolicy.load(contentsOf: large)
        }
    }

    @Test func theFirstPolicyNamingProfileAndUserApplies() throws {
        let policy = try KioskPolicy.load(contentsOf: Self.example)
        #expect(policy.policy(forProfile: "ge.wled.softap", uid: 1000, userName: "kiosk") == policy.policies[0])
        #expect(policy.policy(forProfile: "ge.wled.softap", uid: 0, userName: "root") == policy.policies[0])
        #expect(policy.policy(forProfile: "ge.wled.softap", uid: 1001, userName: "alice") == nil)
        #expect(policy.policy(forProfile: "com.improv-wifi.ble", uid: 1001, userName: nil) == policy.policies[2])
        #expect(policy.policy(forProfile: "cloud.shelly.gen1", uid: 1000, userName: "kiosk") == nil)
    }

    @Test func aPolicyMayRefuseUnencryptedProvisioningAndAllowsItByDefault() throws {
        let text = """
            {"schemaVersion": 1, "policies": [
              {"profiles": ["ge.wled.softap"], "users": [0], "choose": "firstMatch", "unencryptedProvisioning": false},
              {"profiles": ["cloud.shelly.gen1"], "users": [0], "choose": "firstMatch"}]}
            """
        let policy = try KioskPolicy.parse(Data(text.utf8), path: "kiosk.json")
        #expect(policy.policies.map(\.allowsUnencryptedProvisioning) == [false, true])
        let wrong = text.replacingOccurrences(
            of: "\"unencryptedProvisioning\": false", with: "\"unencryptedProvisioning\": 0")
        #expect(throws: KioskPolicyError.self) { try KioskPolicy.parse(Data(wrong.utf8), path: "kiosk.json") }
    }

    private static func entry(_ id: Int, ssid: [UInt8]? = nil, strength: Int? = nil, rssi: Int? = nil) -> PickerEntry {
        let wifi = ssid.map {
            WiFiScanEntry(
                ssid: try! SSID(bytes: $0), bssid: MACAddress(rawValue: UInt64(id)), strength: strength ?? 0,
                frequency: 2412)
        }
        let bluetooth = rssi.map { BLEAdvertisement(address: MACAddress(rawValue: UInt64(id)), rssi: $0) }
        return PickerEntry(id: id, itemIndex: 0, name: "Entry \(id)", wifi: wifi, bluetooth: bluetooth)
    }

    private static func policy(_ rule: KioskPolicy.Rule) -> KioskPolicy.Policy {
        KioskPolicy.Policy(profiles: ["ge.wled.softap"], users: [.uid(0)], rule: rule)
    }

    @Test func firstMatchTakesTheEntryHeardFirst() {
        let entries = [Self.entry(3, ssid: Array("b".utf8)), Self.entry(2, rssi: -90)]
        #expect(Self.policy(.firstMatch).choose(from: entries)?.id == 2)
        #expect(Self.policy(.firstMatch).choose(from: []) == nil)
    }

    @Test func strongestSignalComparesBothRadiosOnOneScale() {
        let entries = [
            Self.entry(1, ssid: Array("WLED-AP".utf8), strength: 50),
            Self.entry(2, rssi: -52),  // 80 on NetworkManager's scale
            Self.entry(3, ssid: Array("WLED-AP".utf8), strength: 80),
        ]
        let rule = KioskPolicy.Rule.strongestSignal(settle: .seconds(5))
        #expect(Self.policy(rule).choose(from: entries)?.id == 2, "equal signals: the one heard first")
        #expect(
            Self.policy(rule).choose(from: [Self.entry(4)])?.id == 4, "an entry without a signal can still be chosen")
    }

    @Test func ssidPatternIsAGlobOverTheSSIDText() {
        let entries = [
            Self.entry(1, ssid: Array("HomeNet".utf8)),
            Self.entry(2, rssi: -40),
            Self.entry(3, ssid: [0x43, 0x41, 0x4D, 0x2D, 0xFF, 0x31, 0x32, 0x33]),  // not UTF-8
            Self.entry(4, ssid: Array("CAM-12a4".utf8)),
            Self.entry(5, ssid: Array("CAM-1234".utf8)),
        ]
        #expect(Self.policy(.ssidPattern("CAM-[0-9][0-9][0-9][0-9]")).choose(from: entries)?.id == 5)
        #expect(Self.policy(.ssidPattern("CAM-*")).choose(from: entries)?.id == 4)
        #expect(Self.policy(.ssidPattern("Home???")).choose(from: entries)?.id == 1)
        #expect(Self.policy(.ssidPattern("*")).choose(from: [Self.entry(6, ssid: [0x41, 0x00, 0x42])]) == nil)
        #expect(Self.policy(.ssidPattern("PROV_*")).choose(from: entries) == nil)
    }
}

@Suite("The kiosk policy's passphrase files")
struct KioskPassphraseFileTests {
    private let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-pass-\(UUID())")

    private func file(_ contents: String, mode: Int) throws -> String {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("passphrase-\(UUID())").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(contents.utf8)))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)  // not narrowed by umask
        return path
    }

    private func reason(_ path: String) -> String? {
        do {
            _ = try KioskPolicy.readPassphrase(path: path)
            return nil
        } catch {
            guard case .unsafePassphraseFile(let named, let reason) = error, named == path else {
                Issue.record("expected a refusal naming \(path), got \(error)")
                return nil
            }
            return reason
        }
    }

    @Test(.enabled(if: getuid() == 0, "the file must be root's; the project's tests run as root"))
    func aRootOnlyFileIsReadWithoutItsNewline() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try file("camera pass\n", mode: 0o600)
        #expect(try KioskPolicy.readPassphrase(path: path) == Secret("camera pass"))
        let readOnly = try file("camera pass", mode: 0o400)
        #expect(try KioskPolicy.readPassphrase(path: readOnly) == Secret("camera pass"))
    }

    @Test func filesOthersCanReadOrChangeAreRefused() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(reason(try file("x", mode: 0o644))?.contains("chmod 600") == true)
        #expect(reason(try file("x", mode: 0o620))?.contains("chmod 600") == true)
        #expect(reason(directory.appendingPathComponent("missing").path)?.contains("cannot be opened") == true)
        let target = try file("x", mode: 0o600)
        let link = directory.appendingPathComponent("link").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(reason(link)?.contains("symbolic link") == true)
        #expect(reason(directory.path)?.contains("not a regular file") == true)
    }

    @Test(.enabled(if: getuid() == 0, "changing a file's owner needs root; the project's tests run as root"))
    func filesNotOwnedByRootEmptyOrTooLargeAreRefused() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(reason(try file("\n", mode: 0o600)) == "is empty")
        let notRoots = try file("x", mode: 0o600)
        #expect(chown(notRoots, 1000, 1000) == 0)
        #expect(reason(notRoots)?.contains("not owned by root") == true)
        let large = try file(String(repeating: "x", count: BoundedInput.passphraseLimit + 1), mode: 0o600)
        #expect(reason(large)?.contains("larger than") == true)
    }

    @Test(.enabled(if: getuid() == 0, "the directories must be root's; the project's tests run as root"))
    func aFileInADirectoryOthersCanChangeOrReachedThroughALinkIsRefused() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try file("camera pass", mode: 0o600)
        #expect(try KioskPolicy.readPassphrase(path: path) == Secret("camera pass"))
        // Another user could put another file in its place.
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        #expect(reason(path)?.contains("its directory \(directory.path) may be written by others") == true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        #expect(chown(directory.path, 1000, 1000) == 0)
        #expect(reason(path)?.contains("its directory \(directory.path) is not owned by root") == true)
        #expect(chown(directory.path, 0, 0) == 0)
        // A link among the directories is not followed either.
        let linked = directory.deletingLastPathComponent().appendingPathComponent("kiosk-link-\(UUID())")
        try FileManager.default.createSymbolicLink(atPath: linked.path, withDestinationPath: directory.path)
        defer { try? FileManager.default.removeItem(at: linked) }
        let throughLink = linked.appendingPathComponent((path as NSString).lastPathComponent).path
        #expect(reason(throughLink)?.contains("symbolic link") == true)
    }

    @Test(.enabled(if: getuid() == 0, "the file must be root's; the project's tests run as root"))
    func theAgentTakesAPolicyOnlyRootCanHaveWritten() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let policy =
            #"{"schemaVersion": 1, "policies": [{"profiles": ["ge.wled.softap"], "users": [0], "choose": "firstMatch"}]}"#
        let path = try file(policy, mode: 0o644)
        #expect(try KioskPolicy.loadRootOwned(path: path).policies.count == 1)
        try FileManager.default.setAttributes([.posixPermissions: 0o664], ofItemAtPath: path)
        do {
            _ = try KioskPolicy.loadRootOwned(path: path)
            Issue.record("a group-writable policy was taken")
        } catch {
            #expect("\(error)".contains(path) && "\(error)".contains("chmod go-w"), "\(error)")
        }
    }

    @Test func thePassphraseIsNeverInTheError() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try file("hunter22", mode: 0o644)
        do {
            _ = try KioskPolicy.readPassphrase(path: path)
            Issue.record("a world-readable file was accepted")
        } catch {
            #expect(!"\(error)".contains("hunter22"))
        }
    }
}
