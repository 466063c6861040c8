import Testing

@testable import AccessoryCore

/// One broken rule: a descriptor that breaks exactly it, the error and its field.
struct BrokenRule: Sendable, CustomTestStringConvertible {
    var name: String
    var descriptor: DiscoveryDescriptor
    var error: DiscoveryDescriptorError
    var field: String

    var testDescription: String { name }

    static let all: [BrokenRule] = {
        let ssid = try! SSID("Setup")
        let service = BluetoothUUID(assigned: 0x180D)
        let company = BluetoothCompanyIdentifier(rawValue: 0x0BA9)
        let pattern = try! MaskedData(blob: [0x01], mask: [0xFF])
        var rules: [BrokenRule] = []

        var d = DiscoveryDescriptor()
        d.ssid = ssid
        d.ssidPrefix = try! SSID("Set")
        rules.append(
            BrokenRule(
                name: "ssid and ssidPrefix", descriptor: d, error: .ssidAndSSIDPrefixBothSet, field: "ssidPrefix"))

        d = DiscoveryDescriptor()
        d.ssid = ssid
        d.bssidMask = MACAddress(rawValue: 0xFFFF_FF00_0000)
        rules.append(
            BrokenRule(
                name: "bssidMask without bssid", descriptor: d, error: .bssidMaskWithoutBSSID, field: "bssidMask"))

        d = DiscoveryDescriptor()
        d.bluetoothServiceUUID = service
        d.minimumSignalStrength = 50
        rules.append(
            BrokenRule(
                name: "signal floor without Wi-Fi identifier", descriptor: d, error: .signalFloorWithoutWiFiIdentifier,
                field: "minimumSignalStrength"))

        d = DiscoveryDescriptor()
        d.ssid = ssid
        d.minimumSignalStrength = 101
        rules.append(
            BrokenRule(
                name: "signal strength 101", descriptor: d, error: .signalStrengthOutOfRange(101),
                field: "minimumSignalStrength"))

        d = DiscoveryDescriptor()
        d.ssid = ssid
        d.minimumSignalStrength = -1
        rules.append(
            BrokenRule(
                name: "signal strength -1", descriptor: d, error: .signalStrengthOutOfRange(-1),
                field: "minimumSignalStrength"))

        d = DiscoveryDescriptor()
        d.ssid = ssid
        d.bluetoothNameSubstring = "lamp"
        rules.append(
            BrokenRule(
                name: "name substring without Bluetooth identifier", descriptor: d,
                error: .nameSubstringWithoutIdentifier, field: "bluetoothNameSubstring"))

        d = DiscoveryDescriptor()
        d.bluetoothServiceUUID = service
        d.bluetoothNameSubstring = ""
        rules.append(
            BrokenRule(
                name: "empty name substring", descriptor: d, error: .emptyNameSubstring, field: "bluetoothNameSubstring"
            ))

        d = DiscoveryDescriptor()
        d.bluetoothServiceUUID = service
        d.bluetoothManufacturerData = pattern
        rules.append(
            BrokenRule(
                name: "manufacturer data without company", descriptor: d,
                error: .manufacturerDataWithoutCompanyIdentifier, field: "bluetoothManufacturerDataBlob"))

        d = DiscoveryDescriptor()
        d.bluetoothCompanyIdentifier = company
        d.bluetoothServiceData = pattern
        rules.append(
            BrokenRule(
                name: "service data without service UUID", descriptor: d, error: .serviceDataWithoutServiceUUID,
                field: "bluetoothServiceDataBlob"))

        d = DiscoveryDescriptor()
        d.ssid = ssid
        d.bluetoothRange = .immediate
        rules.append(
            BrokenRule(
                name: "range without Bluetooth identifier", descriptor: d, error: .rangeWithoutBluetoothIdentifier,
                field: "bluetoothRange"))

        d = DiscoveryDescriptor()
        d.ssid = ssid
        d.supportedOptions = [.bluetoothPairingLE]
        rules.append(
            BrokenRule(
                name: "supported options without Bluetooth identifier", descriptor: d,
                error: .supportedOptionsWithoutBluetoothIdentifier, field: "supportedOptions"))

        rules.append(
            BrokenRule(
                name: "no identifier", descriptor: DiscoveryDescriptor(), error: .noIdentifier, field: "(descriptor)"))
        return rules
    }()
}

@Suite("DiscoveryDescriptor validation")
struct DiscoveryDescriptorTests {
    @Test("each rule, broken alone, gives exactly its error", arguments: BrokenRule.all)
    func brokenRule(rule: BrokenRule) {
        #expect(rule.descriptor.validationErrors == [rule.error])
        #expect(rule.error.field == rule.field)
        #expect(throws: rule.error) { try rule.descriptor.validate() }
    }

    @Test("every error case is covered by a broken rule")
    func everyCaseCovered() {
        // The switch in caseName is exhaustive, so a new case fails to compile until it is named here.
        let covered = Set(BrokenRule.all.map { caseName($0.error) })
        #expect(
            covered == [
                "ssidAndSSIDPrefixBothSet", "bssidMaskWithoutBSSID", "signalFloorWithoutWiFiIdentifier",
                "signalStrengthOutOfRange", "nameSubstringWithoutIdentifier", "emptyNameSubstring",
                "manufacturerDataWithoutCompanyIdentifier", "serviceDataWithoutServiceUUID",
                "rangeWithoutBluetoothIdentifier", "supportedOptionsWithoutBluetoothIdentifier", "noIdentifier",
            ])
    }

    @Test("description is the field and the message")
    func errorDescription() {
        #expect(
            DiscoveryDescriptorError.signalStrengthOutOfRange(101).description
                == "minimumSignalStrength: is 101; signal strength is a percentage from 0 to 100")
        #expect(
            DiscoveryDescriptorError.bssidMaskWithoutBSSID.description
                == "bssidMask: a BSSID mask needs a bssid to compare with")
    }

    @Test("a Wi-Fi-only descriptor with every Wi-Fi field is valid")
    func validWiFiOnly() throws {
        var d = DiscoveryDescriptor()
        d.ssidPrefix = try SSID("PROV_")
        d.bssid = try MACAddress("7C:DF:A1:00:00:00")
        d.bssidMask = try MACAddress("FF:FF:FF:00:00:00")
        d.minimumSignalStrength = 0
        #expect(d.hasWiFiIdentifier)
        #expect(!d.hasBluetoothIdentifier)
        #expect(d.validationErrors.isEmpty)
        try d.validate()

        var bssidOnly = DiscoveryDescriptor()
        bssidOnly.bssid = try MACAddress("7C:DF:A1:26:1F:CD")
        bssidOnly.minimumSignalStrength = 100
        #expect(bssidOnly.validationErrors.isEmpty)
    }

    @Test("a Bluetooth-only descriptor with every Bluetooth field is valid")
    func validBluetoothOnly() throws {
        var d = DiscoveryDescriptor()
        d.bluetoothServiceUUID = BluetoothUUID(assigned: 0x4677)
        d.bluetoothCompanyIdentifier = BluetoothCompanyIdentifier(rawValue: 0x0BA9)
        d.bluetoothNameSubstring = "SBBT"
        d.bluetoothNameSubstringCompareOptions = .caseInsensitive
        d.bluetoothManufacturerData = try MaskedData(blob: [0x01], mask: [0xFF])
        d.bluetoothServiceData = try MaskedData(blob: [0x01, 0x00], mask: [0xFF, 0x0F])
        d.bluetoothRange = .immediate
        d.supportedOptions = [.bluetoothPairingLE, .bluetoothHID]
        #expect(!d.hasWiFiIdentifier)
        #expect(d.hasBluetoothIdentifier)
        #expect(d.validationErrors.isEmpty)
        try d.validate()

        var companyOnly = DiscoveryDescriptor()
        companyOnly.bluetoothCompanyIdentifier = BluetoothCompanyIdentifier(rawValue: 0x004C)
        #expect(companyOnly.validationErrors.isEmpty)
    }

    @Test("a descriptor with Wi-Fi and Bluetooth identifiers is valid")
    func validBoth() throws {
        var d = DiscoveryDescriptor()
        d.ssid = try SSID("PROV_261FCC")
        d.minimumSignalStrength = 40
        d.bluetoothServiceUUID = try BluetoothUUID("021a9004-0382-4aea-bff4-6b3f1c5adfb4")
        d.bluetoothNameSubstring = "PROV_"
        #expect(d.hasWiFiIdentifier && d.hasBluetoothIdentifier)
        #expect(d.validationErrors.isEmpty)
        try d.validate()
    }

    @Test("validationErrors lists every broken rule in field order; validate throws the first")
    func severalErrors() throws {
        var d = DiscoveryDescriptor()
        d.bssidMask = try MACAddress("FF:FF:FF:00:00:00")
        d.minimumSignalStrength = 200
        d.bluetoothNameSubstring = ""
        d.bluetoothRange = .immediate
        d.supportedOptions = .bluetoothTransportBridging
        #expect(
            d.validationErrors == [
                .bssidMaskWithoutBSSID, .signalFloorWithoutWiFiIdentifier, .signalStrengthOutOfRange(200),
                .nameSubstringWithoutIdentifier, .emptyNameSubstring, .rangeWithoutBluetoothIdentifier,
                .supportedOptionsWithoutBluetoothIdentifier, .noIdentifier,
            ])
        #expect(throws: DiscoveryDescriptorError.bssidMaskWithoutBSSID) { try d.validate() }
    }

    @Test("option sets and the range carry Apple's raw values")
    func rawValues() {
        #expect(AccessorySupportOptions.bluetoothPairingLE.rawValue == 2)
        #expect(AccessorySupportOptions.bluetoothTransportBridging.rawValue == 4)
        #expect(AccessorySupportOptions.bluetoothHID.rawValue == 8)
        #expect(BluetoothRange.default.rawValue == 0)
        #expect(BluetoothRange.immediate.rawValue == 10)
        #expect(BluetoothRange.immediateRSSIThreshold == -50)
    }
}

private func caseName(_ error: DiscoveryDescriptorError) -> String {
    switch error {
    case .ssidAndSSIDPrefixBothSet: "ssidAndSSIDPrefixBothSet"
    case .bssidMaskWithoutBSSID: "bssidMaskWithoutBSSID"
    case .signalFloorWithoutWiFiIdentifier: "signalFloorWithoutWiFiIdentifier"
    case .signalStrengthOutOfRange: "signalStrengthOutOfRange"
    case .nameSubstringWithoutIdentifier: "nameSubstringWithoutIdentifier"
    case .emptyNameSubstring: "emptyNameSubstring"
    case .manufacturerDataWithoutCompanyIdentifier: "manufacturerDataWithoutCompanyIdentifier"
    case .serviceDataWithoutServiceUUID: "serviceDataWithoutServiceUUID"
    case .rangeWithoutBluetoothIdentifier: "rangeWithoutBluetoothIdentifier"
    case .supportedOptionsWithoutBluetoothIdentifier: "supportedOptionsWithoutBluetoothIdentifier"
    case .noIdentifier: "noIdentifier"
    }
}
