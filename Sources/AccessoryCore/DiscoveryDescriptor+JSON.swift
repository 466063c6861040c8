/// The JSON form of a descriptor, as written in profiles and stored in accessory records
/// (the keys of `ASDiscoveryDescriptor`; see `profiles/README.md`).
extension DiscoveryDescriptor {
    static let keys = [
        "ssid", "ssidPrefix", "bssid", "bssidMask", "minimumSignalStrength",
        "bluetoothServiceUUID", "bluetoothCompanyIdentifier",
        "bluetoothNameSubstring", "bluetoothNameSubstringCompareOptions",
        "bluetoothManufacturerDataBlob", "bluetoothManufacturerDataMask",
        "bluetoothServiceDataBlob", "bluetoothServiceDataMask",
        "bluetoothRange", "supportedOptions",
    ]

    static let rangeNames: KeyValuePairs<String, BluetoothRange> = ["default": .default, "immediate": .immediate]
    static let compareOptionNames: KeyValuePairs<String, NameCompareOptions> = ["caseInsensitive": .caseInsensitive]
    static let supportOptionNames: KeyValuePairs<String, AccessorySupportOptions> = [
        "bluetoothPairingLE": .bluetoothPairingLE,
        "bluetoothTransportBridging": .bluetoothTransportBridging,
        "bluetoothHID": .bluetoothHID,
    ]

    /// Reads a descriptor, recording every fault (field types, values, and the rules of
    /// `validationErrors`) in the reader's diagnostics. Returns `nil` if there was any.
    public init?(reading object: JSONObjectReader) {
        let (descriptor, valid) = Self.read(object)
        guard valid else { return nil }
        self = descriptor
    }

    /// The descriptor made of the fields that could be read, and whether there was no fault,
    /// so callers can go on checking what did parse.
    static func read(_ object: JSONObjectReader) -> (descriptor: DiscoveryDescriptor, valid: Bool) {
        let before = object.diagnostics.issues.count
        object.rejectUnknownKeys(keys)
        var descriptor = DiscoveryDescriptor()
        descriptor.fill(from: object)
        for error in descriptor.validationErrors {
            // A rule broken only because a field failed to parse would echo that field's fault.
            if fieldsWhoseAbsenceBreaks(error).contains(where: object.has) { continue }
            let field =
                error == .noIdentifier ? (object.path.isEmpty ? error.field : object.path) : object.field(error.field)
            object.diagnostics.report(field, error.message)
        }
        return (descriptor, object.diagnostics.issues.count == before)
    }

    private mutating func fill(from object: JSONObjectReader) {
        ssid = object.parsed("ssid", SSID.init(notation:))
        ssidPrefix = object.parsed("ssidPrefix", SSID.init(notation:))
        bssid = object.parsed("bssid", MACAddress.init)
        bssidMask = object.parsed("bssidMask", MACAddress.init)
        minimumSignalStrength = object.integer("minimumSignalStrength", in: 0...100)
        bluetoothServiceUUID = object.parsed("bluetoothServiceUUID", BluetoothUUID.init)
        bluetoothCompanyIdentifier = Self.companyIdentifier(object, "bluetoothCompanyIdentifier")
        bluetoothNameSubstring = object.string("bluetoothNameSubstring")
        if let options = object.choices("bluetoothNameSubstringCompareOptions", from: Self.compareOptionNames) {
            bluetoothNameSubstringCompareOptions = NameCompareOptions(options)
        }
        bluetoothManufacturerData = Self.maskedData(object, "bluetoothManufacturerData")
        bluetoothServiceData = Self.maskedData(object, "bluetoothServiceData")
        bluetoothRange = object.choice("bluetoothRange", from: Self.rangeNames) ?? .default
        if let options = object.choices("supportedOptions", from: Self.supportOptionNames) {
            supportedOptions = AccessorySupportOptions(options)
        }
    }

    private static func fieldsWhoseAbsenceBreaks(_ error: DiscoveryDescriptorError) -> [String] {
        let wifi = ["ssid", "ssidPrefix", "bssid"]
        let bluetooth = ["bluetoothServiceUUID", "bluetoothCompanyIdentifier"]
        switch error {
        case .bssidMaskWithoutBSSID: return ["bssid"]
        case .signalFloorWithoutWiFiIdentifier: return wifi
        case .nameSubstringWithoutIdentifier, .rangeWithoutBluetoothIdentifier,
            .supportedOptionsWithoutBluetoothIdentifier:
            return bluetooth
        case .manufacturerDataWithoutCompanyIdentifier: return ["bluetoothCompanyIdentifier"]
        case .serviceDataWithoutServiceUUID: return ["bluetoothServiceUUID"]
        case .noIdentifier: return wifi + bluetooth
        case .ssidAndSSIDPrefixBothSet, .signalStrengthOutOfRange, .emptyNameSubstring: return []
        }
    }

    /// A company identifier written as a number or as a `"0x…"` string.
    static func companyIdentifier(_ object: JSONObjectReader, _ key: String) -> BluetoothCompanyIdentifier? {
        guard let value = object.value(key) else { return nil }
        return companyIdentifier(value, field: object.field(key), diagnostics: object.diagnostics)
    }

    static func companyIdentifier(_ value: JSONValue, field: String, diagnostics: FieldDiagnostics)
        -> BluetoothCompanyIdentifier?
    {
        switch value {
        case .number:
            return JSONObjectReader.integer(value, in: 0...0xFFFF, field: field, diagnostics: diagnostics)
                .map { BluetoothCompanyIdentifier(rawValue: UInt16($0)) }
        case .string(let text):
            do { return try BluetoothCompanyIdentifier(text) } catch {
                diagnostics.report(field, error.description)
                return nil
            }
        default:
            diagnostics.report(field, "expected a number or a \"0x…\" string, found \(value.kindName)")
            return nil
        }
    }

    /// `<prefix>Blob` and `<prefix>Mask`, both hex, read together.
    private static func maskedData(_ object: JSONObjectReader, _ prefix: String) -> MaskedData? {
        let blobKey = prefix + "Blob", maskKey = prefix + "Mask"
        let blob = object.parsed(blobKey, Hex.bytes)
        let mask = object.parsed(maskKey, Hex.bytes)
        switch (object.has(blobKey), object.has(maskKey)) {
        case (false, false): return nil
        case (true, false):
            object.report(maskKey, "is required with \(blobKey) (use all ff to compare every bit)"); return nil
        case (false, true): object.report(blobKey, "is required with \(maskKey)"); return nil
        case (true, true): break
        }
        guard let blob, let mask else { return nil }
        do { return try MaskedData(blob: blob, mask: mask) } catch {
            object.report(blob.isEmpty ? blobKey : maskKey, error.description)
            return nil
        }
    }
}

extension DiscoveryDescriptor: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let diagnostics = FieldDiagnostics()
        guard let object = JSONObjectReader(try container.decode(JSONValue.self), at: "", diagnostics: diagnostics),
            let descriptor = DiscoveryDescriptor(reading: object)
        else {
            let faults = diagnostics.issues.map(\.description).joined(separator: "; ")
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "invalid descriptor: \(faults)")
        }
        self = descriptor
    }

    private enum CodingKeys: String, CodingKey {
        case ssid, ssidPrefix, bssid, bssidMask, minimumSignalStrength
        case bluetoothServiceUUID, bluetoothCompanyIdentifier
        case bluetoothNameSubstring, bluetoothNameSubstringCompareOptions
        case bluetoothManufacturerDataBlob, bluetoothManufacturerDataMask
        case bluetoothServiceDataBlob, bluetoothServiceDataMask
        case bluetoothRange, supportedOptions
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(ssid, forKey: .ssid)
        try container.encodeIfPresent(ssidPrefix, forKey: .ssidPrefix)
        try container.encodeIfPresent(bssid, forKey: .bssid)
        try container.encodeIfPresent(bssidMask, forKey: .bssidMask)
        try container.encodeIfPresent(minimumSignalStrength, forKey: .minimumSignalStrength)
        try container.encodeIfPresent(bluetoothServiceUUID, forKey: .bluetoothServiceUUID)
        try container.encodeIfPresent(bluetoothCompanyIdentifier, forKey: .bluetoothCompanyIdentifier)
        try container.encodeIfPresent(bluetoothNameSubstring, forKey: .bluetoothNameSubstring)
        let compareOptions = Self.names(of: bluetoothNameSubstringCompareOptions, in: Self.compareOptionNames)
        if !compareOptions.isEmpty {
            try container.encode(compareOptions, forKey: .bluetoothNameSubstringCompareOptions)
        }
        try container.encodeIfPresent(
            bluetoothManufacturerData.map { Hex.string($0.blob) }, forKey: .bluetoothManufacturerDataBlob)
        try container.encodeIfPresent(
            bluetoothManufacturerData.map { Hex.string($0.mask) }, forKey: .bluetoothManufacturerDataMask)
        try container.encodeIfPresent(
            bluetoothServiceData.map { Hex.string($0.blob) }, forKey: .bluetoothServiceDataBlob)
        try container.encodeIfPresent(
            bluetoothServiceData.map { Hex.string($0.mask) }, forKey: .bluetoothServiceDataMask)
        if bluetoothRange != .default {
            try container.encode(Self.name(of: bluetoothRange, in: Self.rangeNames), forKey: .bluetoothRange)
        }
        let options = Self.names(of: supportedOptions, in: Self.supportOptionNames)
        if !options.isEmpty { try container.encode(options, forKey: .supportedOptions) }
    }

    private static func names<T: OptionSet>(of set: T, in table: KeyValuePairs<String, T>) -> [String]
    where T.Element == T {
        table.filter { set.contains($0.value) }.map(\.key)
    }

    private static func name<T: Equatable>(of value: T, in table: KeyValuePairs<String, T>) -> String? {
        table.first { $0.value == value }?.key
    }
}
