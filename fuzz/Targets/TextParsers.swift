import AccessoryCore
import Foundation

// Fuzz target: the text parsers behind every SSID, MAC address, Bluetooth UUID, company
// identifier and hex field of profiles, scans and command-line options. Each either throws or
// gives a value that prints and parses back to itself.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTextParsers(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    let text = String(decoding: bytes, as: UTF8.self)

    if let ssid = try? SSID(notation: text) {
        precondition((try? SSID(notation: ssid.notation)) == ssid, "an SSID's notation reads back differently")
        _ = ssid.escaped
    }
    if let ssid = try? SSID(bytes: bytes) {
        precondition((try? SSID(notation: ssid.notation)) == ssid, "an SSID's notation reads back differently")
        precondition(
            !ssid.escaped.unicodeScalars.contains { $0.properties.generalCategory == .control },
            "an escaped SSID still holds a control character")
    }
    if let address = try? MACAddress(text) {
        precondition((try? MACAddress(address.description)) == address, "a MAC address reads back differently")
    }
    if let uuid = try? BluetoothUUID(text) {
        precondition((try? BluetoothUUID(uuid.string)) == uuid, "a Bluetooth UUID reads back differently")
    }
    if let company = try? BluetoothCompanyIdentifier(text) {
        precondition(
            (try? BluetoothCompanyIdentifier(company.description)) == company,
            "a company identifier reads back differently")
    }
    do {
        let decoded = try Hex.bytes(text)
        precondition((try? Hex.bytes(Hex.string(decoded))) == decoded, "hex reads back differently")
    } catch {
        _ = error.description
    }
    precondition((try? Hex.bytes(Hex.string(bytes))) == bytes, "hex of the input reads back differently")
    let half = bytes.count / 2
    if let masked = try? MaskedData(blob: Array(bytes[..<half]), mask: Array(bytes[half..<2 * half])) {
        _ = masked.matches(bytes)
    }
    return 0
}
