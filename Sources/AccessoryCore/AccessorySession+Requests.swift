import FoundationEssentials

/// Reading the dictionaries of the agent's D-Bus API (as `JSONValue`s, which the service makes
/// of its `a{sv}` arguments) into the session's inputs. Keys are those of a profile's items; a
/// fault is `invalidRequest` naming the field, the first one found.
extension AccessorySession {
    /// A `ShowPicker` item: a profile item, or a migration item with `hotspotSSID` or
    /// `peripheralAddress` as well.
    public static func pickerRequestItem(_ value: JSONValue, at field: String) throws(AccessorySessionError)
        -> PickerRequestItem
    {
        let migrationKeys = ["hotspotSSID", "peripheralAddress"]
        guard case .object(var members) = value else {
            throw .invalidRequest(field: field, reason: "expected a dictionary")
        }
        let migration = migrationKeys.compactMap { key in members.removeValue(forKey: key).map { (key, $0) } }
        let item: PickerDisplayItem = try reading(.object(members), at: field) {
            PickerDisplayItem(reading: $0, supports: nil, declared: nil)
        }
        guard !migration.isEmpty else { return .display(item) }
        let extra: MigrationDisplayItem = try reading(.object(Dictionary(uniqueKeysWithValues: migration)), at: field) {
            object in
            let ssid = object.parsed("hotspotSSID") { (text: String) throws(SSIDError) in try SSID(notation: text) }
            let address = object.parsed("peripheralAddress") { (text: String) throws(IdentifierError) in
                try MACAddress(text)
            }
            guard object.diagnostics.issues.isEmpty else { return nil }
            return MigrationDisplayItem(item: item, hotspotSSID: ssid, peripheralAddress: address)
        }
        return .migration(extra)
    }

    /// `ShowPicker`'s settings: `discoveryTimeout` (seconds, or `short`, `medium`, `long`,
    /// `unbounded`), `options` (`filterDiscoveryResults`), `authorizationTimeout` (seconds) and
    /// `shareNetwork` (an SSID, or empty for the network this computer is on).
    public static func pickerDisplaySettings(_ value: JSONValue, at field: String) throws(AccessorySessionError)
        -> PickerDisplaySettings
    {
        try reading(value, at: field) { object in
            object.rejectUnknownKeys(["discoveryTimeout", "options", "authorizationTimeout", "shareNetwork"])
            var settings = PickerDisplaySettings()
            let longest = Int(PickerDisplaySettings.DiscoveryTimeout.maximum.components.seconds)
            switch object.value("discoveryTimeout") {
            case nil:
                break
            case .string(let name)?:
                let named: [String: PickerDisplaySettings.DiscoveryTimeout] = [
                    "short": .short, "medium": .medium, "long": .long, "unbounded": .unbounded,
                ]
                if let timeout = named[name] {
                    settings.discoveryTimeout = timeout
                } else {
                    object.report("discoveryTimeout", "'\(name)' is not short, medium, long or unbounded")
                }
            case .number?:
                if let seconds = object.integer("discoveryTimeout", in: 1...longest) {
                    settings.discoveryTimeout = .duration(.seconds(seconds))
                }
            case let other?:
                object.report("discoveryTimeout", "expected seconds or a name, found \(other.kindName)")
            }
            if let seconds = object.integer("authorizationTimeout", in: 1...longest) {
                settings.authorizationTimeout = .seconds(seconds)
            }
            let options = object.choices(
                "options", from: ["filterDiscoveryResults": PickerDisplaySettings.Options.filterDiscoveryResults])
            settings.options = PickerDisplaySettings.Options(options ?? [])
            settings.sharedNetwork = object.parsed("shareNetwork") {
                (text: String) throws(SSIDError) -> PickerDisplaySettings.SharedNetwork in
                text.isEmpty ? .current : .ssid(try SSID(notation: text))
            }
            return object.diagnostics.issues.isEmpty ? settings : nil
        }
    }

    /// An `UpdatePicker` item: `entry`, `name`, `productImage`.
    public static func discoveredDisplayItem(_ value: JSONValue, at field: String) throws(AccessorySessionError)
        -> DiscoveredDisplayItem
    {
        try reading(value, at: field) { object in
            object.rejectUnknownKeys(["entry", "name", "productImage"])
            let entry = object.integer("entry", in: 0...Int(UInt32.max), required: true)
            let name = object.string("name", required: true)
            let image = object.string("productImage")
            guard let entry, let name, object.diagnostics.issues.isEmpty else { return nil }
            return DiscoveredDisplayItem(entryID: entry, name: name, productImage: image)
        }
    }

    /// `FinishAuthorization`'s settings: `ssid`, `bluetoothTransportBridgingIdentifier`.
    public static func accessorySettings(_ value: JSONValue, at field: String) throws(AccessorySessionError)
        -> AccessorySettings
    {
        try reading(value, at: field) { object in
            object.rejectUnknownKeys(["ssid", "bluetoothTransportBridgingIdentifier"])
            let ssid = object.parsed("ssid") { (text: String) throws(SSIDError) in try SSID(notation: text) }
            let bridging = object.parsed("bluetoothTransportBridgingIdentifier") {
                (text: String) throws(IdentifierError) in
                try MACAddress(text)
            }
            guard object.diagnostics.issues.isEmpty else { return nil }
            return AccessorySettings(ssid: ssid, bluetoothTransportBridgingIdentifier: bridging)
        }
    }

    /// An `UpdateAuthorization` descriptor.
    public static func discoveryDescriptor(_ value: JSONValue, at field: String) throws(AccessorySessionError)
        -> DiscoveryDescriptor
    {
        try reading(value, at: field) { DiscoveryDescriptor(reading: $0) }
    }

    private static func reading<T>(
        _ value: JSONValue, at field: String, _ read: (JSONObjectReader) -> T?
    ) throws(AccessorySessionError) -> T {
        let diagnostics = FieldDiagnostics()
        if let object = JSONObjectReader(value, at: field, diagnostics: diagnostics), let result = read(object),
            diagnostics.issues.isEmpty
        {
            return result
        }
        let issue = diagnostics.issues.first ?? FieldIssue(field: field, message: "is not valid")
        throw .invalidRequest(field: issue.field, reason: issue.message)
    }
}
