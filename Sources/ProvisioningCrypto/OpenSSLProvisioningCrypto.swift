import AccessoryCore

/// `ProvisioningCrypto` over OpenSSL's libcrypto: X25519, AES-256-CTR and -GCM, SHA-2, and
/// SRP-6a on libcrypto's BIGNUM.
public struct OpenSSLProvisioningCrypto: AccessoryCore.ProvisioningCrypto {
    /// Loads libcrypto (once for the process); throws when it cannot be loaded.
    public init() throws(ProvisioningError) {
        _ = try LibCrypto.loaded.get()
    }

    public func randomBytes(_ count: Int) throws(ProvisioningError) -> [UInt8] { try LibCrypto.randomBytes(count) }
    public func sha256(_ data: [UInt8]) -> [UInt8] { LibCrypto.sha256(data) }
    public func sha512(_ data: [UInt8]) -> [UInt8] { LibCrypto.sha512(data) }

    public func x25519KeyPair() throws(ProvisioningError) -> X25519KeyPair {
        let pair = try LibCrypto.x25519KeyPair()
        return X25519KeyPair(privateKey: SecretBytes(pair.privateKey), publicKey: pair.publicKey)
    }

    /// The key pair of a given private key, for known-answer tests.
    public func x25519KeyPair(privateKey: SecretBytes) throws(ProvisioningError) -> X25519KeyPair {
        X25519KeyPair(privateKey: privateKey, publicKey: try LibCrypto.x25519PublicKey(privateKey: privateKey.bytes))
    }

    public func x25519(privateKey: SecretBytes, peerPublicKey: [UInt8]) throws(ProvisioningError) -> SecretBytes {
        SecretBytes(try LibCrypto.x25519(privateKey: privateKey.bytes, peerPublicKey: peerPublicKey))
    }

    public func aes256CTR(key: SecretBytes, initialCounter: [UInt8]) throws(ProvisioningError) -> any KeystreamCipher {
        try LibCrypto.CTRStream(key: key.bytes, counter: initialCounter)
    }

    public func aes256GCMSeal(key: SecretBytes, nonce: [UInt8], plaintext: [UInt8]) throws(ProvisioningError)
        -> [UInt8]
    {
        try LibCrypto.aes256GCM(key: key.bytes, nonce: nonce, input: plaintext, sealing: true)
    }

    public func aes256GCMOpen(key: SecretBytes, nonce: [UInt8], sealed: [UInt8]) throws(ProvisioningError) -> [UInt8] {
        try LibCrypto.aes256GCM(key: key.bytes, nonce: nonce, input: sealed, sealing: false)
    }

    public func srp6aClient(username: [UInt8], password: Secret) throws(ProvisioningError) -> any SRP6aClient {
        while true {
            // A 256-bit a with its top bit set, as ESP-IDF's esp_prov draws it; drawn again in
            // the rare case that A is shorter than N, since the device hashes A as received.
            var value = try LibCrypto.randomBytes(32)
            value[0] |= 0x80
            let client = SRP6a.Client(username: username, password: password, privateValue: value)
            if client.publicKey.count == SRP6a.length { return client }
        }
    }
}
