import AccessoryCore
import Dispatch

// Fuzz target: the client state machines over what an accessory answers. The first byte picks
// the protocol. ESP-IDF: a whole `ProvisioningClient.provision` (security 0) over a transport
// whose every answer comes from the input, either a well-formed answer bent by the input (the
// scan's count, the entries of one answer, padding) or raw bytes; it must end with an outcome
// or an error, within its limits (no more networks than `ProvisioningLimits.scanResults`, a
// bounded number of requests). Improv: `ImprovExchange` fed notifications from the input; once
// past its notification limit it must have failed, and a settled exchange stays settled.

/// The input, read front to back; empty once used up.
final class Input: @unchecked Sendable {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: [UInt8]) { self.bytes = bytes[...] }

    var isEmpty: Bool { bytes.isEmpty }

    func byte() -> UInt8? { bytes.popFirst() }

    func take(_ count: Int) -> [UInt8] {
        let taken = Array(bytes.prefix(count))
        bytes = bytes.dropFirst(taken.count)
        return taken
    }

    func uint32() -> UInt32 {
        take(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
}

/// A security 0 ESP-IDF device whose answers the input writes or bends.
final class Device: ProvisioningTransport, @unchecked Sendable {
    let input: Input
    private(set) var requests = 0

    init(_ input: Input) { self.input = input }

    func send(endpoint: ProvisioningEndpoint, _ body: [UInt8]) async throws(ProvisioningError) -> [UInt8] {
        requests += 1
        guard let tag = input.byte() else { throw .connectionClosed(endpoint: endpoint.rawValue) }
        if tag & 0x80 != 0 {
            // Raw: up to 1 KiB of the input, or (tag 0xFF) an answer larger than the client takes.
            if tag == 0xFF { return [UInt8](repeating: tag, count: ProvisioningLimits().messageBytes + 1) }
            return input.take(Int(input.byte() ?? 0) << 2 | Int(tag & 0x03))
        }
        switch endpoint {
        case .version:
            let capabilities = tag & 1 == 0 ? #"["wifi_scan"]"# : "[]"
            return Array(#"{"prov":{"ver":"v1.1","sec_ver":0,"cap":\#(capabilities)}}"#.utf8)
        case .session:
            return SessionMessage.sec0Response(status: ProvisioningStatus(rawValue: UInt32(tag & 0x01))).encoded()
        case .scan:
            guard let (message, _) = try? WiFiScanMessage.decode(body) else { return [] }
            switch message {
            case .startCommand: return WiFiScanMessage.startResponse.encoded()
            case .statusCommand:
                return WiFiScanMessage.statusResponse(finished: true, resultCount: input.uint32()).encoded()
            case .resultCommand(let start, _):
                let count = Int(input.byte() ?? 0)
                let entries = (0..<count).map {
                    WiFiScanResult(
                        ssid: Array("n\(start &+ UInt32($0))".utf8), channel: 6, rssi: -40 - Int32($0 % 50),
                        bssid: [2, 0, 0, 0, 0, UInt8($0 & 0xFF)], auth: .wpa2PSK)
                }
                return WiFiScanMessage.resultResponse(entries).encoded()
            default: return []
            }
        default:
            guard let message = try? WiFiConfigMessage(decoding: body) else { return [] }
            switch message {
            case .setConfigCommand: return WiFiConfigMessage.setConfigResponse(status: .success).encoded()
            case .applyCommand: return WiFiConfigMessage.applyResponse(status: .success).encoded()
            default:
                let state: WiFiStationState =
                    switch tag & 0x03 {
                    case 0:
                        .connected(
                            WiFiConnection(
                                ipv4Address: "192.168.1.42", authMode: .wpa2PSK, ssid: Array("HomeNet".utf8),
                                bssid: [2, 0, 0, 0, 0, 1], channel: 6))
                    case 1: .connecting(attemptsRemaining: UInt32(tag >> 2))
                    case 2: .failed(WiFiFailureReason(rawValue: UInt32(tag >> 2)))
                    default: .disconnected
                    }
                return WiFiConfigMessage.getStatusResponse(status: .success, state: state).encoded()
            }
        }
    }
}

/// Security 0 asks nothing of the cryptography; the other schemes end at their first use of it.
struct NoCrypto: ProvisioningCrypto {
    func randomBytes(_ count: Int) throws(ProvisioningError) -> [UInt8] { throw .crypto("none") }
    func sha256(_ data: [UInt8]) -> [UInt8] { [] }
    func sha512(_ data: [UInt8]) -> [UInt8] { [] }
    func x25519KeyPair() throws(ProvisioningError) -> X25519KeyPair { throw .crypto("none") }
    func x25519(privateKey: SecretBytes, peerPublicKey: [UInt8]) throws(ProvisioningError) -> SecretBytes {
        throw .crypto("none")
    }
    func aes256CTR(key: SecretBytes, initialCounter: [UInt8]) throws(ProvisioningError) -> any KeystreamCipher {
        throw .crypto("none")
    }
    func aes256GCMSeal(key: SecretBytes, nonce: [UInt8], plaintext: [UInt8]) throws(ProvisioningError) -> [UInt8] {
        throw .crypto("none")
    }
    func aes256GCMOpen(key: SecretBytes, nonce: [UInt8], sealed: [UInt8]) throws(ProvisioningError) -> [UInt8] {
        throw .crypto("none")
    }
    func srp6aClient(username: [UInt8], password: Secret) throws(ProvisioningError) -> any SRP6aClient {
        throw .crypto("none")
    }
}

func provision(_ input: Input) {
    let device = Device(input)
    let scanned = Locked<Int?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let client = ProvisioningClient(transport: device, crypto: NoCrypto())
        do throws(ProvisioningError) {
            // A join timeout shorter than the one-second poll: the first "connecting" ends it.
            _ = try await client.provision(
                WiFiCredentials(ssid: Array("HomeNet".utf8), passphrase: Secret("home-passphrase")),
                authentication: ProvisioningAuthentication(), timeout: .milliseconds(1)
            ) { step in
                if case .scanned(let networks, _) = step { scanned.withLock { $0 = networks } }
            }
        } catch {
            _ = (error.code, error.errorName, error.description)
        }
        done.signal()
    }
    done.wait()
    let limits = ProvisioningLimits()
    if let networks = scanned.withLock({ $0 }) {
        precondition(networks <= Int(limits.scanResults), "the client kept \(networks) networks")
    }
    // Version, session, scan start and status, a batch of 4 per result request, credentials,
    // apply, status: anything more is a loop the limits did not end.
    let most = 1 + 2 + 2 + Int(limits.scanResults) + 3
    precondition(device.requests <= most, "the client sent \(device.requests) requests")
}

func improv(_ input: Input) {
    var exchange = ImprovExchange()
    exchange.start(ImprovCommand(rawValue: input.byte() ?? 1))
    var notifications = 0
    var settled = false
    while let selector = input.byte() {
        let length = Int(input.byte() ?? 0) | (selector & 0x80 != 0 ? Int(input.byte() ?? 0) << 8 : 0)
        let value = input.take(length)
        let characteristic: ImprovExchange.Characteristic =
            switch selector % 3 {
            case 0: .state
            case 1: .error
            default: .result
            }
        exchange.receive(value, from: characteristic)
        notifications += 1
        if selector & 0x40 != 0 {
            let now = exchange.settle { _ in }
            precondition(!settled || now, "a settled RPC came unsettled")
            settled = now
        }
    }
    let now = exchange.settle { _ in }
    precondition(!settled || now, "a settled RPC came unsettled")
    if notifications > ImprovExchange.notificationLimit {
        precondition(now && exchange.outcome != nil, "more notifications than the limit did not end the RPC")
    }
    if let outcome = exchange.outcome, case .success(let result) = outcome {
        precondition(result.command == exchange.command, "a result for another command was taken")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAccessoryExchange(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = Input(Array(UnsafeBufferPointer(start: start, count: count)))
    switch input.byte() {
    case nil: break
    case let mode? where mode & 1 == 0: provision(input)
    default: improv(input)
    }
    return 0
}
