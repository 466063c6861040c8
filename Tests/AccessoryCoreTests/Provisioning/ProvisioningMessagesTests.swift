import AccessoryCore
import Foundation
import Testing

/// The provisioning messages against bytes Python's protobuf made from
/// `lab/accessories/esp_prov/esp_provisioning.proto` (`Fixtures/provisioning/make_protobuf_vectors.py`).
@Suite struct ProvisioningMessagesTests {
    enum Value {
        case session(SessionMessage)
        case config(WiFiConfigMessage)
        case scan(WiFiScanMessage, ProvisioningStatus)
    }

    static let vectors: [String: [UInt8]] = {
        struct File: Decodable {
            struct Vector: Decodable { var name: String; var hex: String }
            var vectors: [Vector]
        }
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/provisioning/protobuf-vectors.json")
        let file = try! JSONDecoder().decode(File.self, from: Data(contentsOf: url))
        return Dictionary(uniqueKeysWithValues: file.vectors.map { ($0.name, try! Hex.bytes($0.hex)) })
    }()

    static let key32 = Array(UInt8(1)...32)
    static let random16 = Array(UInt8(0xA0)..<0xB0)
    static let big384: [UInt8] = [0x80] + Array(UInt8(0)...255) + Array(UInt8(0)..<127)
    static let bssid: [UInt8] = [0x02, 0, 0, 0, 0, 0x01]

    // Computed, not a stored static: LeakSanitizer reported an array of this literal, built
    // in the static's one-time initializer, as leaked.
    static var expected: [String: Value] {
        [
            "sec0Command": .session(.sec0Command),
            "sec0Response": .session(.sec0Response(status: .success)),
            "sec1Command0": .session(.sec1Command0(clientPublicKey: key32)),
            "sec1Response0": .session(
                .sec1Response0(
                    status: .success, devicePublicKey: key32.reversed(),
                    deviceRandom: random16)),
            "sec1Command1": .session(.sec1Command1(clientVerifyData: key32)),
            "sec1Response1CryptoError": .session(.sec1Response1(status: .cryptoError, deviceVerifyData: key32)),
            "sec2Command0": .session(.sec2Command0(username: Array("wifiprov".utf8), clientPublicKey: big384)),
            "sec2Response0": .session(
                .sec2Response0(status: .success, devicePublicKey: big384.reversed(), salt: random16)),
            "sec2Command1": .session(.sec2Command1(clientProof: [UInt8](repeating: 0, count: 64))),
            "sec2Response1": .session(
                .sec2Response1(
                    status: .success, deviceProof: Array(0..<64),
                    deviceNonce: Array(0..<12))),
            "getStatusCommand": .config(.getStatusCommand),
            "statusConnected": .config(
                .getStatusResponse(
                    status: .success,
                    state: .connected(
                        WiFiConnection(
                            ipv4Address: "192.168.1.23", authMode: .wpa2PSK, ssid: Array("HomeNet".utf8), bssid: bssid,
                            channel: 6)))),
            "statusConnecting": .config(
                .getStatusResponse(status: .success, state: .connecting(attemptsRemaining: nil))),
            "statusConnectingAttemptsLeft": .config(
                .getStatusResponse(
                    status: .success,
                    state: .connecting(attemptsRemaining: 3))),
            "decodeOnly.statusConnectingEmptyConnected": .config(
                .getStatusResponse(
                    status: .success, state: .connecting(attemptsRemaining: nil))),
            "statusFailedAuthError": .config(.getStatusResponse(status: .success, state: .failed(.authError))),
            "statusFailedNetworkNotFound": .config(
                .getStatusResponse(status: .success, state: .failed(.networkNotFound))),
            "statusDisconnected": .config(.getStatusResponse(status: .success, state: .disconnected)),
            "setConfigCommand": .config(
                .setConfigCommand(
                    WiFiCredentials(
                        ssid: Array("HomeNet".utf8),
                        passphrase: Secret("correct horse")))),
            "setConfigCommandFull": .config(
                .setConfigCommand(
                    WiFiCredentials(
                        ssid: Array("Café ☕".utf8), passphrase: Secret(String(repeating: "p", count: 63)),
                        bssid: [0xA4, 0xCF, 0x12, 0x6B, 0, 1], channel: 11))),
            "setConfigResponseInvalidArgument": .config(.setConfigResponse(status: .invalidArgument)),
            "applyCommand": .config(.applyCommand),
            "applyResponse": .config(.applyResponse(status: .success)),
            "scanStartCommand": .scan(
                .startCommand(
                    blocking: true, passive: false, groupChannels: 5,
                    periodMilliseconds: 120), .success),
            "scanStartResponse": .scan(.startResponse, .success),
            "scanStatusCommand": .scan(.statusCommand, .success),
            "scanStatusResponse": .scan(.statusResponse(finished: true, resultCount: 300), .success),
            "scanResultCommand": .scan(.resultCommand(startIndex: 4, count: 4), .success),
            "scanResultResponse": .scan(
                .resultResponse([
                    WiFiScanResult(
                        ssid: Array("HomeNet".utf8), channel: 6, rssi: -42, bssid: [2, 0, 0, 0, 0, 6],
                        auth: .wpa2PSK),
                    WiFiScanResult(
                        ssid: Array("Cafe".utf8), channel: 1, rssi: -90, bssid: [2, 0, 0, 0, 0, 1], auth: .open),
                    WiFiScanResult(
                        ssid: Array("Lab\0Net".utf8), channel: 13, rssi: 5, bssid: [2, 0, 0, 0, 0, 13],
                        auth: .wpa2WPA3PSK),
                ]), .success),
            "scanStatusInvalidSession": .scan(.statusResponse(finished: false, resultCount: 0), .invalidSession),
            "decodeOnly.sec0CommandWithoutMember": .session(.sec0Command),
            "decodeOnly.applyCommandWithoutMember": .config(.applyCommand),
            "decodeOnly.scanStartResponseWithoutMember": .scan(.startResponse, .success),
        ]
    }

    @Test func everyVectorHasAnExpectedValue() {
        #expect(Set(Self.vectors.keys) == Set(Self.expected.keys))
        #expect(Self.vectors.count == 33)
    }

    @Test(arguments: expected.keys.sorted())
    func encodesAndDecodesLikePythonProtobuf(name: String) throws {
        let bytes = try #require(Self.vectors[name])
        let encodes = !name.hasPrefix("decodeOnly.")
        switch try #require(Self.expected[name]) {
        case .session(let message):
            if encodes { #expect(message.encoded() == bytes) }
            #expect(try SessionMessage(decoding: bytes) == message)
        case .config(let message):
            if encodes { #expect(message.encoded() == bytes) }
            #expect(try WiFiConfigMessage(decoding: bytes) == message)
        case .scan(let message, let status):
            if encodes { #expect(message.encoded(status: status) == bytes) }
            let decoded = try WiFiScanMessage.decode(bytes)
            #expect(decoded.message == message)
            #expect(decoded.status == status)
        }
    }

    @Test func truncatedOrWrongMessagesAreMalformedNotCrashes() throws {
        let bytes = try #require(Self.vectors["sec1Response0"])
        for length in 0..<bytes.count {
            #expect(throws: ProvisioningError.self) { _ = try SessionMessage(decoding: bytes.prefix(length)) }
        }
        // An unknown message type, and a type that does not match its member.
        #expect(throws: ProvisioningError.self) { _ = try WiFiConfigMessage(decoding: [0x08, 0x09]) }
        #expect(throws: ProvisioningError.self) { _ = try WiFiConfigMessage(decoding: [0x08, 0x01, 0x62, 0x00]) }
        // A varint of eleven bytes.
        #expect(throws: ProvisioningError.self) {
            _ = try WiFiConfigMessage(decoding: [0x08] + [UInt8](repeating: 0xFF, count: 10) + [0x01])
        }
        // Wire type 3 (groups) does not exist in proto3.
        #expect(throws: ProvisioningError.self) { _ = try SessionMessage(decoding: [0x13]) }
        // A security 1 payload labelled security 2.
        var mislabelled = try #require(Self.vectors["sec1Command0"])
        mislabelled[1] = 2
        let error = try #require(throws: ProvisioningError.self) { _ = try SessionMessage(decoding: mislabelled) }
        #expect(error.description.contains("security 2"), "\(error)")
    }

    @Test func unknownFieldsAreSkipped() throws {
        let bytes = try #require(Self.vectors["statusFailedAuthError"])
        // Field 7 (varint) and field 9 (fixed32) appended at the top level.
        let extended = bytes + [0x38, 0x05, 0x4D, 1, 2, 3, 4]
        #expect(
            try WiFiConfigMessage(decoding: extended)
                == .getStatusResponse(
                    status: .success,
                    state: .failed(.authError)))
    }

    @Test func credentialsTheDeviceWouldRefuseAreRefusedNamingTheField() {
        let cases: [(WiFiCredentials, String)] = [
            (WiFiCredentials(ssid: [], passphrase: Secret("12345678")), "ssid"),
            (WiFiCredentials(ssid: [UInt8](repeating: 0x41, count: 32), passphrase: Secret("12345678")), "ssid"),
            (WiFiCredentials(ssid: [0x41], passphrase: Secret(String(repeating: "p", count: 64))), "passphrase"),
            (WiFiCredentials(ssid: [0x41], passphrase: Secret("short")), "passphrase"),
            (WiFiCredentials(ssid: [0x41], passphrase: Secret("12345678"), bssid: [1, 2, 3]), "bssid"),
        ]
        for (credentials, field) in cases {
            let error = #expect(throws: ProvisioningError.self) { try credentials.validate() }
            guard case .invalidCredentials(let named, _) = error else {
                Issue.record("\(String(describing: error)) is not about invalid credentials")
                continue
            }
            #expect(named == field)
        }
        #expect(throws: Never.self) { try WiFiCredentials(ssid: [0x41], passphrase: Secret("")).validate() }
        let message = WiFiConfigMessage.setConfigCommand(WiFiCredentials(ssid: [0x41], passphrase: Secret("hunter22")))
        #expect(!"\(message)".contains("hunter22"), "the passphrase must not print")
    }

    @Test func failureReasonsNameTheirCause() {
        let auth = ProvisioningError.connectionFailed(ssid: Array("HomeNet".utf8), .authError)
        #expect(auth.description.contains("passphrase is wrong"))
        #expect(auth.description.contains("HomeNet"))
        #expect(auth.errorName == "ProvisioningWrongPassphrase")
        let missing = ProvisioningError.connectionFailed(ssid: Array("HomeNet".utf8), .networkNotFound)
        #expect(missing.description.contains("cannot find that network"))
        #expect(ProvisioningError.wrongProofOfPossession(.sec1).description.contains("proof of possession"))
    }
}
