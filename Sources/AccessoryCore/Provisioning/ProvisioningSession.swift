/// How the client proves itself to the device on `prov-session`.
public enum ProvisioningSecurity: Hashable, Sendable {
    /// Security 0: no encryption.
    case sec0
    /// Security 1: X25519 and AES-256-CTR, keyed with the proof of possession when there is one.
    case sec1(proofOfPossession: Secret?)
    /// Security 2: SRP-6a with the username and the proof of possession as password, then AES-256-GCM.
    case sec2(username: String, proofOfPossession: Secret)

    public var scheme: SecurityScheme {
        switch self {
        case .sec0: .sec0
        case .sec1: .sec1
        case .sec2: .sec2
        }
    }

    /// The username esp_prov and the IDF examples use for security 2.
    public static let defaultUsername = "wifiprov"
}

/// The client side of a protocomm session: the security 0, 1 or 2 handshake, then the
/// encryption of every later payload. One transition function owns the state; a session that
/// failed stays failed, as the device's does.
public final class ProvisioningSession {
    private enum State {
        case idle
        case awaitingSec0Response
        case awaitingSec1Response0(X25519KeyPair)
        case awaitingSec1Response1(clientPublicKey: [UInt8], cipher: any KeystreamCipher)
        case awaitingSec2Response0(any SRP6aClient)
        case awaitingSec2Response1(any SRP6aClient)
        case established(Cipher)
        case failed
    }

    private enum Cipher {
        case plain
        case ctr(any KeystreamCipher)
        /// `counting`: the last four bytes of the nonce count up after every use (sec_patch_ver 1).
        case gcm(key: SecretBytes, nonce: [UInt8], counting: Bool)
    }

    private enum Input {
        case start
        case response([UInt8])
    }

    public let security: ProvisioningSecurity
    private let patchVersion: Int
    private let crypto: any ProvisioningCrypto
    private var state = State.idle

    public init(security: ProvisioningSecurity, securityPatchVersion: Int, crypto: any ProvisioningCrypto) {
        self.security = security
        self.patchVersion = securityPatchVersion
        self.crypto = crypto
    }

    public var isEstablished: Bool {
        if case .established = state { return true }
        return false
    }

    /// Whether the next answer is the one where the device checks the proof of possession.
    public var awaitsProofCheck: Bool {
        switch (state, security) {
        case (.awaitingSec1Response1, .sec1(.some)), (.awaitingSec2Response1, _): true
        default: false
        }
    }

    /// The first request to send to `prov-session`.
    public func start() throws(ProvisioningError) -> [UInt8] {
        guard let request = try transition(.start) else { throw .sessionNotEstablished }
        return request
    }

    /// Takes the device's answer; returns the next request, or `nil` once the session is up.
    public func receive(_ response: [UInt8]) throws(ProvisioningError) -> [UInt8]? {
        try transition(.response(response))
    }

    private func transition(_ input: Input) throws(ProvisioningError) -> [UInt8]? {
        let current = state
        state = .failed
        switch (current, input) {
        case (.idle, .start):
            switch security {
            case .sec0:
                state = .awaitingSec0Response
                return SessionMessage.sec0Command.encoded()
            case .sec1:
                let pair = try crypto.x25519KeyPair()
                state = .awaitingSec1Response0(pair)
                return SessionMessage.sec1Command0(clientPublicKey: pair.publicKey).encoded()
            case .sec2(let username, let password):
                let srp = try crypto.srp6aClient(username: Array(username.utf8), password: password)
                state = .awaitingSec2Response0(srp)
                return SessionMessage.sec2Command0(username: Array(username.utf8), clientPublicKey: srp.publicKey)
                    .encoded()
            }

        case (.awaitingSec0Response, .response(let bytes)):
            guard case .sec0Response(let status) = try message(bytes, step: "session request") else { break }
            try check(status, step: "the session request")
            state = .established(.plain)
            return nil

        case (.awaitingSec1Response0(let pair), .response(let bytes)):
            let answer = try message(bytes, step: "key exchange")
            guard case .sec1Response0(let status, let devicePublicKey, let random) = answer else { break }
            try check(status, step: "the key exchange")
            guard devicePublicKey.count == 32, random.count == 16 else {
                throw .malformedMessage(
                    "key exchange answer",
                    "the device's key is \(devicePublicKey.count) bytes "
                        + "(32 expected) and its random \(random.count) (16 expected)")
            }
            var key = try crypto.x25519(privateKey: pair.privateKey, peerPublicKey: devicePublicKey).bytes
            if case .sec1(.some(let pop)) = security {
                let digest = crypto.sha256(Array(pop.reveal().utf8))
                for index in key.indices { key[index] ^= digest[index] }
            }
            let cipher = try crypto.aes256CTR(key: SecretBytes(key), initialCounter: random)
            let verify = try cipher.apply(devicePublicKey)
            state = .awaitingSec1Response1(clientPublicKey: pair.publicKey, cipher: cipher)
            return SessionMessage.sec1Command1(clientVerifyData: verify).encoded()

        case (.awaitingSec1Response1(let clientPublicKey, let cipher), .response(let bytes)):
            guard case .sec1Response1(let status, let verify) = try message(bytes, step: "key verification")
            else { break }
            try check(status, step: "the key verification")
            guard try cipher.apply(verify) == clientPublicKey else { throw .deviceNotVerified(.sec1) }
            state = .established(.ctr(cipher))
            return nil

        case (.awaitingSec2Response0(let srp), .response(let bytes)):
            guard case .sec2Response0(let status, let devicePublicKey, let salt) = try message(bytes, step: "SRP start")
            else { break }
            try check(status, step: "the SRP start")
            let proof = try srp.proof(salt: salt, serverPublicKey: devicePublicKey)
            state = .awaitingSec2Response1(srp)
            return SessionMessage.sec2Command1(clientProof: proof).encoded()

        case (.awaitingSec2Response1(let srp), .response(let bytes)):
            guard case .sec2Response1(let status, let proof, let nonce) = try message(bytes, step: "SRP proof")
            else { break }
            try check(status, step: "the SRP proof")
            guard srp.verifyServerProof(proof), let key = srp.sessionKey else { throw .deviceNotVerified(.sec2) }
            let counting = patchVersion >= 1
            guard counting ? nonce.count == 12 : !nonce.isEmpty else {
                throw .malformedMessage(
                    "SRP proof answer",
                    "its nonce is \(nonce.count) bytes"
                        + (counting ? "; security 2 patch 1 uses 12" : ""))
            }
            state = .established(.gcm(key: SecretBytes(Array(key.bytes.prefix(32))), nonce: nonce, counting: counting))
            return nil

        default:
            throw .sessionNotEstablished
        }
        throw .malformedMessage("session answer", "it is not the answer to the \(security.scheme) step that was sent")
    }

    private func message(_ bytes: [UInt8], step: String) throws(ProvisioningError) -> SessionMessage {
        let message = try SessionMessage(decoding: bytes)
        guard message.scheme == security.scheme else {
            throw .securityMismatch(requested: security.scheme, device: message.scheme)
        }
        return message
    }

    private func check(_ status: ProvisioningStatus, step: String) throws(ProvisioningError) {
        guard status == .success else { throw .deviceStatus(step: step, status) }
    }

    /// Encrypts a request for `prov-config` or `prov-scan`.
    public func encrypt(_ plaintext: [UInt8]) throws(ProvisioningError) -> [UInt8] {
        try crypt(plaintext, sealing: true)
    }

    /// Decrypts the device's answer to it.
    public func decrypt(_ ciphertext: [UInt8]) throws(ProvisioningError) -> [UInt8] {
        try crypt(ciphertext, sealing: false)
    }

    private func crypt(_ data: [UInt8], sealing: Bool) throws(ProvisioningError) -> [UInt8] {
        guard case .established(let cipher) = state else { throw .sessionNotEstablished }
        switch cipher {
        case .plain:
            return data
        case .ctr(let stream):
            return try stream.apply(data)
        case .gcm(let key, let nonce, let counting):
            let result: [UInt8]
            do {
                result =
                    sealing
                    ? try crypto.aes256GCMSeal(key: key, nonce: nonce, plaintext: data)
                    : try crypto.aes256GCMOpen(key: key, nonce: nonce, sealed: data)
            } catch {
                state = .failed
                throw error
            }
            if counting {
                var next = nonce
                var carry = true
                for index in (8..<12).reversed() where carry {
                    next[index] &+= 1
                    carry = next[index] == 0
                }
                state = .established(.gcm(key: key, nonce: next, counting: true))
            }
            return result
        }
    }
}
