import FoundationEssentials

/// What the radios heard at one time, as a JSON file: Wi-Fi access points and Bluetooth LE
/// advertisements. `accessoryctl match --scan` reads it; the format is in `docs/scan-format.md`.
public struct RecordedScan: Hashable, Sendable {
    public static let schemaVersion = 1

    public var wifi: [WiFiScanEntry]
    public var bluetooth: [BLEAdvertisement]

    public init(wifi: [WiFiScanEntry] = [], bluetooth: [BLEAdvertisement] = []) {
        self.wifi = wifi
        self.bluetooth = bluetooth
    }

    /// Reads a scan file, reporting every fault at once as `ProfileError`-style field issues.
    public static func load(contentsOf url: URL) throws(RecordedScanError) -> RecordedScan {
        let data: Data
        do {
            data = try BoundedInput.read(path: url.path, limit: BoundedInput.documentLimit)
        } catch {
            throw RecordedScanError(path: url.path, issues: [FieldIssue(field: "(file)", message: error.reason)])
        }
        return try parse(data, path: url.path)
    }

    public static func parse(_ data: Data, path: String) throws(RecordedScanError) -> RecordedScan {
        let diagnostics = FieldDiagnostics()
        do {
            let document = try JSONValue.parse(data)
            if let object = JSONObjectReader(document, at: "", diagnostics: diagnostics),
                let scan = RecordedScan(reading: object)
            {
                return scan
            }
        } catch {
            throw RecordedScanError(path: path, issues: [error])
        }
        throw RecordedScanError(path: path, issues: diagnostics.issues)
    }

    private init?(reading object: JSONObjectReader) {
        object.rejectUnknownKeys(["schemaVersion", "wifi", "bluetooth"])
        if let version = object.integer("schemaVersion", in: 1...Int.max, required: true), version != Self.schemaVersion
        {
            object.report("schemaVersion", "is \(version); this version reads schema \(Self.schemaVersion)")
        }
        let wifi = object.array("wifi")?.compactMap { value, field in
            JSONObjectReader(value, at: field, diagnostics: object.diagnostics).flatMap(WiFiScanEntry.init(reading:))
        }
        let bluetooth = object.array("bluetooth")?.compactMap { value, field in
            JSONObjectReader(value, at: field, diagnostics: object.diagnostics).flatMap(BLEAdvertisement.init(reading:))
        }
        guard object.diagnostics.issues.isEmpty else { return nil }
        self.init(wifi: wifi ?? [], bluetooth: bluetooth ?? [])
    }
}

/// Every fault found in a scan file.
public struct RecordedScanError: Error, Hashable, Sendable, CustomStringConvertible {
    public var path: String
    public var issues: [FieldIssue]

    public var description: String {
        issues.map { "\(path): \($0)" }.joined(separator: "\n")
    }
}

extension WiFiScanEntry {
    init?(reading object: JSONObjectReader) {
        let before = object.diagnostics.issues.count
        object.rejectUnknownKeys(["ssid", "bssid", "strength", "frequency", "security"])
        let ssid = object.parsed("ssid", SSID.init(notation:))
        let bssid = object.parsed("bssid", required: true, MACAddress.init)
        let strength = object.integer("strength", in: 0...100, required: true)
        let frequency = object.integer("frequency", in: 1...100_000, required: true)
        let security = object.choices("security", from: WiFiSecurity.names) ?? []
        guard object.diagnostics.issues.count == before, let bssid, let strength, let frequency else { return nil }
        self.init(ssid: ssid, bssid: bssid, strength: strength, frequency: frequency, security: WiFiSecurity(security))
    }
}

extension WiFiScanEntry: Encodable {
    private enum CodingKeys: String, CodingKey { case ssid, bssid, strength, frequency, security }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(ssid, forKey: .ssid)
        try container.encode(bssid, forKey: .bssid)
        try container.encode(strength, forKey: .strength)
        try container.encode(frequency, forKey: .frequency)
        try container.encode(security.names, forKey: .security)
    }
}

extension BLEAdvertisement {
    init?(reading object: JSONObjectReader) {
        let before = object.diagnostics.issues.count
        object.rejectUnknownKeys([
            "address", "addressType", "name", "rssi", "txPower", "serviceUUIDs", "manufacturerData", "serviceData",
        ])
        let address = object.parsed("address", required: true, MACAddress.init)
        let addressType =
            object.choice("addressType", from: ["public": BluetoothAddressType.public, "random": .random]) ?? .public
        let name = object.string("name", allowEmpty: true)
        let rssi = object.integer("rssi", in: -127...20)
        let txPower = object.integer("txPower", in: -127...127)
        let services = object.parsedElements("serviceUUIDs", expected: "a UUID string", BluetoothUUID.init) ?? []
        var manufacturerData: [BluetoothCompanyIdentifier: [UInt8]] = [:]
        var serviceData: [BluetoothUUID: [UInt8]] = [:]
        if let table = object.object("manufacturerData") {
            Self.readHexTable(table, keyedBy: BluetoothCompanyIdentifier.init) { manufacturerData[$0] = $1 }
        }
        if let table = object.object("serviceData") {
            Self.readHexTable(table, keyedBy: BluetoothUUID.init) { serviceData[$0] = $1 }
        }
        guard object.diagnostics.issues.count == before, let address else { return nil }
        self.init(
            address: address, addressType: addressType, name: name, rssi: rssi, txPower: txPower,
            serviceUUIDs: services, manufacturerData: manufacturerData, serviceData: serviceData)
    }

    /// `{ "key": "hex", … }`, each key parsed by `parseKey`.
    private static func readHexTable<Key, E: Error & CustomStringConvertible>(
        _ table: JSONObjectReader, keyedBy parseKey: (String) throws(E) -> Key, _ store: (Key, [UInt8]) -> Void
    ) {
        for name in table.keys {
            let key: Key
            do { key = try parseKey(name) } catch {
                table.report(name, "is not a valid key: \(error)")
                continue
            }
            if let bytes = table.parsed(name, Hex.bytes) { store(key, bytes) }
        }
    }
}

extension BLEAdvertisement: Encodable {
    private enum CodingKeys: String, CodingKey {
        case address, addressType, name, rssi, txPower, serviceUUIDs, manufacturerData, serviceData
    }

    /// Manufacturer data keyed by `0x` company id and service data by UUID, both as hex.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(address, forKey: .address)
        try container.encode(addressType.rawValue, forKey: .addressType)
        try container.encodeIfPresent(name, forKey: .name)
        try container.encodeIfPresent(rssi, forKey: .rssi)
        try container.encodeIfPresent(txPower, forKey: .txPower)
        try container.encode(serviceUUIDs, forKey: .serviceUUIDs)
        try container.encode(
            Dictionary(uniqueKeysWithValues: manufacturerData.map { ($0.key.description, Hex.string($0.value)) }),
            forKey: .manufacturerData)
        try container.encode(
            Dictionary(uniqueKeysWithValues: serviceData.map { ($0.key.string, Hex.string($0.value)) }),
            forKey: .serviceData)
    }
}
