import AccessoryCore
import Testing

/// What an ESP-IDF device can make the client hold: its scan's count, the entries of one
/// answer, the size of one answer, and the time of the whole provisioning (`ProvisioningLimits`).
@Suite struct ProvisioningBoundsTests {
    /// A security 0 device whose scan is `networks` long and whose answers `tamper` may change.
    final class Device: ProvisioningTransport, @unchecked Sendable {
        let networks: UInt32
        let entriesPerAnswer: Int?
        let hangs: Set<ProvisioningEndpoint>
        let padding: Int
        private let sent = Locked(0)

        init(
            networks: UInt32 = 2, entriesPerAnswer: Int? = nil, hangs: Set<ProvisioningEndpoint> = [],
            padding: Int = 0
        ) {
            self.networks = networks
            self.entriesPerAnswer = entriesPerAnswer
            self.hangs = hangs
            self.padding = padding
        }

        /// The requests the device was sent.
        var requests: Int { sent.withLock { $0 } }

        static func network(_ index: UInt32) -> WiFiScanResult {
            WiFiScanResult(
                ssid: Array("net\(index)".utf8), channel: 6, rssi: -50, bssid: [2, 0, 0, 0, 0, 1], auth: .wpa2PSK)
        }

        func send(endpoint: ProvisioningEndpoint, _ body: [UInt8]) async throws(ProvisioningError) -> [UInt8] {
            let count = sent.withLock {
                $0 += 1
                return $0
            }
            // A device that answers forever is cut off here, so that a test fails instead of hanging.
            guard count < 10_000 else { throw .transport(endpoint: endpoint.rawValue, "the test device gave up") }
            if hangs.contains(endpoint) {
                do { try await Task.sleep(for: .seconds(3600)) } catch { throw .cancelled }
            }
            switch endpoint {
            case .version:
                return Array(#"{"prov":{"ver":"v1.1","sec_ver":0,"cap":["wifi_scan"]}}"#.utf8)
            case .session:
                return SessionMessage.sec0Response(status: .success).encoded()
            case .scan:
                switch try WiFiScanMessage.decode(body).message {
                case .startCommand: return WiFiScanMessage.startResponse.encoded()
                case .statusCommand:
                    return WiFiScanMessage.statusResponse(finished: true, resultCount: networks).encoded()
                case .resultCommand(let start, let count):
                    let entries = (0..<UInt32(entriesPerAnswer ?? Int(count))).map { Self.network(start &+ $0) }
                    return WiFiScanMessage.resultResponse(entries).encoded()
                default: throw .transport(endpoint: endpoint.rawValue, "not a scan command")
                }
            default:
                switch try WiFiConfigMessage(decoding: body) {
                case .setConfigCommand: return WiFiConfigMessage.setConfigResponse(status: .success).encoded()
                case .applyCommand: return WiFiConfigMessage.applyResponse(status: .success).encoded()
                default:
                    let connection = WiFiConnection(
                        ipv4Address: "192.168.1.42", authMode: .wpa2PSK, ssid: Array("HomeNet".utf8),
                        bssid: [2, 0, 0, 0, 0, 1], channel: 6)
                    // An unknown field the decoder skips pads the answer.
                    var answer = WiFiConfigMessage.getStatusResponse(status: .success, state: .connected(connection))
                        .encoded()
                    if padding > 0 {
                        answer += [0xFA, 0x01] + Self.varint(padding) + [UInt8](repeating: 0x41, count: padding)
                    }
                    return answer
                }
            }
        }

        static func varint(_ value: Int) -> [UInt8] {
            var value = UInt64(value)
            var bytes: [UInt8] = []
            while value >= 0x80 {
                bytes.append(UInt8(value & 0x7F) | 0x80)
                value >>= 7
            }
            return bytes + [UInt8(value)]
        }
    }

    /// Security 0 asks nothing of the cryptography.
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

    func provision(_ device: Device, limits: ProvisioningLimits = ProvisioningLimits()) async -> ProvisioningError? {
        let client = ProvisioningClient(transport: device, crypto: NoCrypto(), limits: limits)
        do throws(ProvisioningError) {
            _ = try await client.provision(
                WiFiCredentials(ssid: Array("HomeNet".utf8), passphrase: Secret("home-passphrase")),
                authentication: ProvisioningAuthentication(), timeout: .seconds(60)
            ) { _ in }
            return nil
        } catch {
            return error
        }
    }

    @Test func aDeviceWithinTheLimitsIsProvisioned() async {
        #expect(await provision(Device()) == nil)
    }

    /// 2^32 - 1 networks would be a billion requests; more than the limit is refused at once.
    @Test func aScanCountAboveTheLimitIsRefused() async {
        let device = Device(networks: .max)
        let error = await provision(device)
        guard case .malformedMessage(_, let reason) = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(reason.contains("\(ProvisioningLimits().scanResults)"), "\(reason)")
        #expect(device.requests <= 5)
    }

    @Test func anAnswerWithMoreEntriesThanAskedForIsRefused() async {
        let error = await provision(Device(networks: 8, entriesPerAnswer: 100))
        guard case .malformedMessage(_, let reason) = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(reason.contains("100 networks"), "\(reason)")
    }

    @Test func anAnswerLargerThanTheLimitIsRefused() async {
        let limits = ProvisioningLimits()
        let error = await provision(Device(padding: limits.messageBytes))
        guard case .malformedMessage(_, let reason) = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(reason.contains("\(limits.messageBytes)"), "\(reason)")
    }

    /// A device that stops answering midway ends the whole run at its one deadline, whatever
    /// the transport's own time for one request.
    @Test(arguments: [ProvisioningEndpoint.version, .scan, .config])
    func theWholeProvisioningEndsAtItsDeadline(endpoint: ProvisioningEndpoint) async {
        var limits = ProvisioningLimits()
        limits.time = .milliseconds(300)
        let error = await provision(Device(hangs: [endpoint]), limits: limits)
        guard case .timedOut = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(error?.errorName == "TimedOut")
    }
}
