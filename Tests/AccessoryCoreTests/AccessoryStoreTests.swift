import Foundation
import Testing

@testable import AccessoryCore

/// A fresh directory under the system's temporary directory, removed by `remove()`.
private struct Scratch {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("AccessoryStoreTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    var storeURL: URL { directory.appendingPathComponent("accessories.json") }

    func names() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

private struct SimulatedCrash: Error {}

/// Runs `body` and returns the AccessoryStoreError it threw, recording an issue otherwise.
private func storeError(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void)
    -> AccessoryStoreError?
{
    do {
        try body()
        Issue.record("expected an AccessoryStoreError, nothing was thrown", sourceLocation: sourceLocation)
    } catch let thrown as AccessoryStoreError {
        return thrown
    } catch {
        Issue.record("expected an AccessoryStoreError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

private func date(_ seconds: TimeInterval) -> Date { Date(timeIntervalSince1970: seconds) }

private func sampleRecords() throws -> [AccessoryRecord] {
    var wled = DiscoveryDescriptor()
    wled.ssid = try SSID("WLED-AP")
    wled.minimumSignalStrength = 30

    var shelly = DiscoveryDescriptor()
    shelly.bluetoothCompanyIdentifier = BluetoothCompanyIdentifier(rawValue: 0x0BA9)
    shelly.bluetoothManufacturerData = try MaskedData(blob: [0x01, 0x00], mask: [0xFF, 0x0F])
    shelly.bluetoothNameSubstring = "SBBT"
    shelly.bluetoothNameSubstringCompareOptions = .caseInsensitive
    shelly.bluetoothRange = .immediate
    shelly.supportedOptions = [.bluetoothPairingLE, .bluetoothTransportBridging]

    var odd = DiscoveryDescriptor()
    odd.ssidPrefix = try SSID(notation: "hex:43616ffe")
    odd.bssid = try MACAddress("02:11:22:33:44:55")
    odd.bssidMask = try MACAddress("FF:FF:FF:00:00:00")

    return [
        AccessoryRecord(
            id: UUID(uuidString: "6F1B7C1E-0000-4000-8000-000000000001")!, displayName: "Living room lights",
            state: .authorized, ssid: try SSID("WLED-AP"), descriptor: wled,
            owner: AccessoryOwner(uid: 1000, profileID: "ge.wled.softap"),
            created: date(1_700_000_000), changed: date(1_700_000_123)),
        AccessoryRecord(
            id: UUID(uuidString: "6F1B7C1E-0000-4000-8000-000000000002")!, displayName: "Door sensor",
            state: .awaitingAuthorization, bluetoothIdentifier: try MACAddress("7C:C6:B6:65:43:21"),
            bluetoothTransportBridgingIdentifier: try MACAddress("7C:C6:B6:65:43:22"), descriptor: shelly,
            owner: AccessoryOwner(uid: 1001, profileID: "cloud.shelly.blu"), created: date(1_710_000_000)),
        AccessoryRecord(
            id: UUID(uuidString: "6F1B7C1E-0000-4000-8000-000000000003")!, displayName: "Café ☕ \\ \"quoted\"",
            state: .unauthorized, ssid: try SSID(notation: "hex:43616ffe"), descriptor: odd,
            owner: AccessoryOwner(uid: 0, profileID: "org.example.odd"), created: date(0), changed: date(4_102_444_800)),
    ]
}

@Suite("AccessoryStore")
struct AccessoryStoreTests {
    @Test("loading a store that does not exist gives no records")
    func loadMissing() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        #expect(try AccessoryStore(url: scratch.storeURL).load() == [])
        #expect(try AccessoryStore(url: scratch.directory.appendingPathComponent("no/such/dir/a.json")).load() == [])
        #expect(try scratch.names() == [])
    }

    @Test("records saved are loaded back, every field, by a fresh store")
    func roundTrip() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let records = try sampleRecords()
        try AccessoryStore(url: scratch.storeURL).save(records)
        let loaded = try AccessoryStore(url: scratch.storeURL).load()
        #expect(loaded == records)
        #expect(loaded.map(\.created) == [date(1_700_000_000), date(1_710_000_000), date(0)])
        #expect(loaded.map(\.changed) == [date(1_700_000_123), date(1_710_000_000), date(4_102_444_800)])
        #expect(loaded[1].descriptor.bluetoothManufacturerData?.mask == [0xFF, 0x0F])
        #expect(loaded[2].ssid?.bytes == [0x43, 0x61, 0x6F, 0xFE])
    }

    @Test("dates are stored to the second as ISO 8601")
    func datesToTheSecond() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        var record = try sampleRecords()[0]
        record.created = date(1_700_000_000.75)
        record.changed = date(1_700_000_001)
        try AccessoryStore(url: scratch.storeURL).save([record])
        let text = try String(contentsOf: scratch.storeURL, encoding: .utf8)
        #expect(text.contains("\"2023-11-14T22:13:20Z\""))
        #expect(text.contains("\"2023-11-14T22:13:21Z\""))
        let loaded = try #require(try AccessoryStore(url: scratch.storeURL).load().first)
        #expect(abs(loaded.created.timeIntervalSince(record.created)) < 1)
        #expect(loaded.created.timeIntervalSince1970.rounded(.down) == loaded.created.timeIntervalSince1970)
        #expect(loaded.changed == record.changed)
    }

    @Test("the file holds schemaVersion 1 and the records, and saving again replaces them")
    func fileContents() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let store = AccessoryStore(url: scratch.storeURL)
        try store.save(try sampleRecords())
        try store.save([])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: scratch.storeURL)) as? [String: Any])
        #expect(object["schemaVersion"] as? Int == 1)
        #expect((object["records"] as? [Any])?.isEmpty == true)
        #expect(try store.load() == [])
        #expect(try scratch.names() == ["accessories.json"])
    }

    @Test("the store file is readable by its owner only (0600)")
    func fileMode() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let store = AccessoryStore(url: scratch.storeURL)
        try store.save(try sampleRecords())
        let attributes = try FileManager.default.attributesOfItem(atPath: scratch.storeURL.path)
        let mode = try #require(attributes[.posixPermissions] as? NSNumber).intValue
        #expect(mode & 0o777 == 0o600)

        // Saving again over an existing file keeps the mode.
        try store.save([])
        let again = try FileManager.default.attributesOfItem(atPath: scratch.storeURL.path)
        #expect(try #require(again[.posixPermissions] as? NSNumber).intValue & 0o777 == 0o600)
    }

    @Test("saving creates the missing directories")
    func createsDirectory() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let url = scratch.directory.appendingPathComponent("state/accessory-agent/accessories.json")
        try AccessoryStore(url: url).save(try sampleRecords())
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path, isDirectory: &isDirectory))
        #expect(isDirectory.boolValue)
        #expect(try AccessoryStore(url: url).load() == (try sampleRecords()))
    }

    @Test("a save that fails before its rename leaves the old records intact and no temporary file")
    func tornWrite() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let records = try sampleRecords()
        let old = Array(records.prefix(1))
        try AccessoryStore(url: scratch.storeURL).save(old)
        let before = try Data(contentsOf: scratch.storeURL)

        var failing = AccessoryStore(url: scratch.storeURL)
        failing.beforeRename = { throw SimulatedCrash() }
        let thrown = storeError { try failing.save(records) }
        guard case .writeFailed(let path, _)? = thrown else {
            Issue.record("expected writeFailed, got \(String(describing: thrown))")
            return
        }
        #expect(path == scratch.storeURL.path)
        #expect(thrown?.description.contains(scratch.storeURL.path) == true)
        #expect(thrown?.description.contains("the previous contents are unchanged") == true)

        #expect(try AccessoryStore(url: scratch.storeURL).load() == old)
        #expect(try Data(contentsOf: scratch.storeURL) == before)
        #expect(try scratch.names() == ["accessories.json"])
        #expect(try !scratch.names().contains { $0.hasPrefix(".accessories.json.tmp-") })
    }

    @Test("a save that fails before its rename into an empty directory leaves nothing behind")
    func tornFirstWrite() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        var failing = AccessoryStore(url: scratch.storeURL)
        failing.beforeRename = { throw SimulatedCrash() }
        #expect(throws: AccessoryStoreError.self) { try failing.save(try sampleRecords()) }
        #expect(try scratch.names() == [])
        #expect(try AccessoryStore(url: scratch.storeURL).load() == [])
    }

    @Test("a stale temporary file from a crash does not affect loading and is removed by the next save")
    func staleTemporaryFile() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let records = try sampleRecords()
        let store = AccessoryStore(url: scratch.storeURL)
        try store.save(Array(records.prefix(1)))

        // A crash after writing the temporary file, before its rename: truncated content left behind.
        let newFile = scratch.directory.appendingPathComponent("new.json")
        try AccessoryStore(url: newFile).save(records)
        let full = try Data(contentsOf: newFile)
        try FileManager.default.removeItem(at: newFile)
        let stale = scratch.directory.appendingPathComponent(
            ".accessories.json.tmp-1F2E3D4C-DEAD-BEEF-0000-000000000000")
        try full.prefix(full.count / 2).write(to: stale)
        // Files that are not this store's temporary files are left alone.
        let unrelated = scratch.directory.appendingPathComponent(".other.json.tmp-1234")
        try Data("keep".utf8).write(to: unrelated)

        #expect(try store.load() == Array(records.prefix(1)))
        #expect(FileManager.default.fileExists(atPath: stale.path))

        try store.save(records)
        #expect(!FileManager.default.fileExists(atPath: stale.path))
        #expect(try scratch.names() == [".other.json.tmp-1234", "accessories.json"])
        #expect(try store.load() == records)
    }

    static let corruptContents: [(name: String, bytes: [UInt8])] = [
        ("garbage bytes", [0xFF, 0xFE, 0x00, 0x13, 0x37, 0x42]),
        ("empty file", []),
        ("truncated JSON", Array(#"{"schemaVersion": 1, "records": [{"id": "#.utf8)),
        ("a JSON array", Array("[1, 2, 3]".utf8)),
        ("missing schemaVersion", Array(#"{"records": []}"#.utf8)),
        ("schemaVersion as a string", Array(#"{"schemaVersion": "1", "records": []}"#.utf8)),
        ("fractional schemaVersion", Array(#"{"schemaVersion": 1.5, "records": []}"#.utf8)),
        ("records of the wrong shape", Array(#"{"schemaVersion": 1, "records": {"a": 1}}"#.utf8)),
        (
            "a record missing fields",
            Array(#"{"schemaVersion": 1, "records": [{"id": "6F1B7C1E-0000-4000-8000-000000000001"}]}"#.utf8)
        ),
        ("missing records", Array(#"{"schemaVersion": 1}"#.utf8)),
        ("a key given twice", Array(#"{"schemaVersion": 1, "records": [], "records": []}"#.utf8)),
    ]

    @Test("a corrupt store is moved aside, kept byte for byte, and reported", arguments: corruptContents)
    func corrupt(name: String, bytes: [UInt8]) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let original = Data(bytes)
        try original.write(to: scratch.storeURL)

        let thrown = storeError { _ = try AccessoryStore(url: scratch.storeURL).load() }
        guard case .corrupt(let path, _, let keptAt)? = thrown else {
            Issue.record("expected corrupt, got \(String(describing: thrown))")
            return
        }
        #expect(path == scratch.storeURL.path)
        let kept = try #require(keptAt)
        #expect(kept.hasPrefix(scratch.storeURL.path + ".corrupt-"))
        #expect(FileManager.default.fileExists(atPath: kept))
        #expect(try Data(contentsOf: URL(fileURLWithPath: kept)) == original)
        #expect(!FileManager.default.fileExists(atPath: scratch.storeURL.path))
        let description = try #require(thrown).description
        #expect(description.contains(scratch.storeURL.path))
        #expect(description.contains(kept))

        // A new store starts afresh; the kept file is not touched by it.
        #expect(try AccessoryStore(url: scratch.storeURL).load() == [])
        try AccessoryStore(url: scratch.storeURL).save(try sampleRecords())
        #expect(try Data(contentsOf: URL(fileURLWithPath: kept)) == original)
    }

    @Test(
        "the reason a store is corrupt says where the fault is",
        arguments: [
            (
                #"{"schemaVersion": 1, "records": [{"id": "#,
                "(document): is not valid JSON: line 1, column 41: the document ends where a value is expected"
            ),
            (
                #"{"schemaVersion": 1, "records": [], "records": []}"#,
                "records: is given twice in one object (line 1, column 22 and line 1, column 37)"
            ),
            ("[1, 2, 3]", "it is not a JSON object"),
        ])
    func corruptReason(contents: String, reason: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try Data(contents.utf8).write(to: scratch.storeURL)
        let thrown = storeError { _ = try AccessoryStore(url: scratch.storeURL).load() }
        guard case .corrupt(_, let found, _)? = thrown else {
            Issue.record("expected corrupt, got \(String(describing: thrown))")
            return
        }
        #expect(found.hasPrefix(reason), "\(found)")
    }

    @Test("a store from a newer schema is refused and left untouched")
    func newerSchema() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let original = Data(#"{"schemaVersion": 99, "records": [{"future": true}]}"#.utf8)
        try original.write(to: scratch.storeURL)

        let thrown = storeError { _ = try AccessoryStore(url: scratch.storeURL).load() }
        #expect(thrown == .unsupportedSchemaVersion(path: scratch.storeURL.path, found: 99, supported: 1))
        #expect(try Data(contentsOf: scratch.storeURL) == original)
        #expect(try scratch.names() == ["accessories.json"])
        #expect(thrown?.description.contains(scratch.storeURL.path) == true)
        #expect(thrown?.description.contains("99") == true)
    }

    @Test("a store path that is a directory is unreadable, and cannot be saved over")
    func pathIsDirectory() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(at: scratch.storeURL, withIntermediateDirectories: false)

        let thrown = storeError { _ = try AccessoryStore(url: scratch.storeURL).load() }
        #expect(thrown == .unreadable(path: scratch.storeURL.path, reason: "it is a directory"))
        #expect(thrown?.description == "cannot read the accessory store \(scratch.storeURL.path): it is a directory")

        let saveError = storeError { try AccessoryStore(url: scratch.storeURL).save(try sampleRecords()) }
        guard case .writeFailed(let path, _)? = saveError else {
            Issue.record("expected writeFailed, got \(String(describing: saveError))")
            return
        }
        #expect(path == scratch.storeURL.path)
        #expect(try scratch.names() == ["accessories.json"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.storeURL.path) == [])
    }

    @Test(
        "every error description names the store's path",
        arguments: [
            AccessoryStoreError.unreadable(path: "/var/lib/agent/accessories.json", reason: "denied"),
            .corrupt(
                path: "/var/lib/agent/accessories.json", reason: "bad",
                keptAt: "/var/lib/agent/accessories.json.corrupt-1"),
            .corrupt(path: "/var/lib/agent/accessories.json", reason: "bad", keptAt: nil),
            .unsupportedSchemaVersion(path: "/var/lib/agent/accessories.json", found: 2, supported: 1),
            .writeFailed(path: "/var/lib/agent/accessories.json", reason: "disk full"),
        ])
    func descriptionsNamePath(error: AccessoryStoreError) {
        #expect(error.description.contains("/var/lib/agent/accessories.json"))
    }

    @Test("accessory states are stored by name")
    func stateNames() throws {
        let data = try JSONEncoder().encode(AccessoryState.allCases)
        #expect(String(decoding: data, as: UTF8.self) == #"["unauthorized","awaitingAuthorization","authorized"]"#)
        #expect(try JSONDecoder().decode([AccessoryState].self, from: data) == AccessoryState.allCases)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([AccessoryState].self, from: Data(#"["revoked"]"#.utf8))
        }
        #expect(AccessoryState.allCases.map(\.rawValue) == [0, 10, 20])
    }
}
