import AccessoryCore

// Fuzz target: the ESP-IDF provisioning codec on what a device sends back. The bytes are read
// as a session message, a Wi-Fi config message, a Wi-Fi scan message and a proto-ver answer;
// every message that decodes must encode to bytes that decode to the same message.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProvisioningCodec(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    do {
        let message = try SessionMessage(decoding: bytes)
        let again = try? SessionMessage(decoding: message.encoded())
        precondition(again == message, "a session message does not survive encoding")
    } catch {
        _ = (error.code, error.errorName, error.description)
    }
    do {
        let message = try WiFiConfigMessage(decoding: bytes)
        let again = try? WiFiConfigMessage(decoding: message.encoded())
        precondition(again == message, "a Wi-Fi config message does not survive encoding")
        if case .setConfigCommand(let credentials) = message { _ = try? credentials.validate() }
    } catch {
        _ = error.description
    }
    do {
        let (message, status) = try WiFiScanMessage.decode(bytes)
        let again = try? WiFiScanMessage.decode(message.encoded(status: status))
        precondition(again?.message == message && again?.status == status, "a scan message does not survive encoding")
    } catch {
        _ = error.description
    }
    if let version = try? ProvisioningVersion(parsing: bytes) { _ = (version.impliedScheme, version.capabilities) }
    return 0
}
