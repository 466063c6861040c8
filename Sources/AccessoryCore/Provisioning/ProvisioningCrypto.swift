/// The cryptography ESP-IDF provisioning needs, implemented below the core (the
/// `ProvisioningCrypto` module, over OpenSSL's libcrypto) so the core imports no C.
public protocol ProvisioningCrypto: Sendable {
    func randomBytes(_ count: Int) throws(ProvisioningError) -> [UInt8]
    func sha256(_ data: [UInt8]) -> [UInt8]
    func sha512(_ data: [UInt8]) -> [UInt8]
    /// A fresh X25519 key pair.
    func x25519KeyPair() throws(ProvisioningError) -> X25519KeyPair
    /// X25519(privateKey, peerPublicKey), 32 bytes.
    func x25519(privateKey: SecretBytes, peerPublicKey: [UInt8]) throws(ProvisioningError) -> SecretBytes
    /// One AES-256-CTR keystream from the 16-byte initial counter block, used for both
    /// directions in turn.
    func aes256CTR(key: SecretBytes, initialCounter: [UInt8]) throws(ProvisioningError) -> any KeystreamCipher
    /// AES-256-GCM without associated data: the ciphertext followed by the 16-byte tag.
    func aes256GCMSeal(key: SecretBytes, nonce: [UInt8], plaintext: [UInt8]) throws(ProvisioningError) -> [UInt8]
    /// Opens what `aes256GCMSeal` made; throws `decryptionFailed` when the tag does not match.
    func aes256GCMOpen(key: SecretBytes, nonce: [UInt8], sealed: [UInt8]) throws(ProvisioningError) -> [UInt8]
    /// The client side of SRP-6a with ESP-IDF's parameters: RFC 5054's 3072-bit group, g = 5,
    /// SHA-512, and a fresh 256-bit private value.
    func srp6aClient(username: [UInt8], password: Secret) throws(ProvisioningError) -> any SRP6aClient
}

/// Key material: never printed, like `Secret`.
public struct SecretBytes: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    public let bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var description: String { "<redacted \(bytes.count) bytes>" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: []) }
}

public struct X25519KeyPair: Sendable {
    public var privateKey: SecretBytes
    public var publicKey: [UInt8]

    public init(privateKey: SecretBytes, publicKey: [UInt8]) {
        self.privateKey = privateKey
        self.publicKey = publicKey
    }
}

/// A stream cipher whose position carries over from one call to the next.
public protocol KeystreamCipher: AnyObject {
    func apply(_ data: [UInt8]) throws(ProvisioningError) -> [UInt8]
}

/// One SRP-6a login as the client.
public protocol SRP6aClient: AnyObject {
    /// A, as sent to the device.
    var publicKey: [UInt8] { get }
    /// M1 for the device's salt and B; throws if B is not acceptable (zero modulo N).
    func proof(salt: [UInt8], serverPublicKey: [UInt8]) throws(ProvisioningError) -> [UInt8]
    /// Whether M2 is H(A | M1 | K).
    func verifyServerProof(_ proof: [UInt8]) -> Bool
    /// K = H(S), 64 bytes, once `proof` has run.
    var sessionKey: SecretBytes? { get }
}
