import AccessoryCore
import Foundation
import ServiceHarness
import Testing

@testable import ProvisioningCrypto

/// libcrypto through `OpenSSLProvisioningCrypto`, against known answers from Python's
/// `cryptography` and pysrp (`Fixtures/make_crypto_vectors.py`).
@Suite struct OpenSSLProvisioningCryptoTests {
    struct Vectors: Decodable {
        struct SHA: Decodable { var input, sha256, sha512: String }
        struct X25519: Decodable { var `private`, `public`, peerPublic, shared: String }
        struct CTR: Decodable { var key, counter: String; var chunks, output: [String] }
        struct GCM: Decodable { var key, nonce, plaintext, sealed: String }
        struct SRP: Decodable {
            var username, password, salt, a, b, verifier, A, B, M1, M2, K: String
        }
        var sha: [SHA]
        var x25519: [X25519]
        var ctr: [CTR]
        var gcm: [GCM]
        var srp: [SRP]
    }

    static let vectors: Vectors = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/crypto-vectors.json")
        return try! JSONDecoder().decode(Vectors.self, from: Data(contentsOf: url))
    }()

    let crypto: OpenSSLProvisioningCrypto

    init() throws {
        crypto = try OpenSSLProvisioningCrypto()
    }

    /// libcrypto is loaded when provisioning first needs it, not linked: the binary that holds
    /// the provisioning code does not name it among the libraries the loader must load.
    @Test func libcryptoIsLoadedOnDemandNotLinked() throws {
        let loaded = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_NOLOAD)
        #expect(loaded != nil, "loaded once OpenSSLProvisioningCrypto was made")
        if let loaded { dlclose(loaded) }
        let executable = try #require(Bundle.main.executableURL?.resolvingSymlinksInPath().path)
        let dynamic = try run("/usr/bin/readelf", "-d", executable)
        #expect(dynamic.contains("NEEDED"), "readelf read \(executable)")
        #expect(!dynamic.contains("libcrypto"), "\(executable) links libcrypto: \(dynamic)")
    }

    private func run(_ path: String, _ arguments: String...) throws -> String {
        let process = try ChildProcess(path, arguments, standardOutput: .pipe)
        let output = process.readOutput().output
        process.wait()
        return String(decoding: output, as: UTF8.self)
    }

    func bytes(_ hex: String) -> [UInt8] { try! Hex.bytes(hex) }

    @Test func sha2() {
        #expect(Self.vectors.sha.count == 3)
        for vector in Self.vectors.sha {
            #expect(crypto.sha256(bytes(vector.input)) == bytes(vector.sha256))
            #expect(crypto.sha512(bytes(vector.input)) == bytes(vector.sha512))
        }
    }

    @Test func x25519() throws {
        #expect(Self.vectors.x25519.count == 3)
        for vector in Self.vectors.x25519 {
            let pair = try crypto.x25519KeyPair(privateKey: SecretBytes(bytes(vector.private)))
            #expect(pair.publicKey == bytes(vector.public))
            let shared = try crypto.x25519(privateKey: pair.privateKey, peerPublicKey: bytes(vector.peerPublic))
            #expect(shared.bytes == bytes(vector.shared))
        }
        let fresh = try crypto.x25519KeyPair()
        #expect(fresh.publicKey.count == 32)
        #expect(fresh.privateKey.bytes != (try crypto.x25519KeyPair()).privateKey.bytes)
        #expect("\(fresh.privateKey)" == "<redacted 32 bytes>")
        #expect(throws: ProvisioningError.self) {
            _ = try crypto.x25519(privateKey: fresh.privateKey, peerPublicKey: [1, 2, 3])
        }
    }

    @Test func aes256CTRIsOneStreamAcrossMessages() throws {
        #expect(Self.vectors.ctr.count == 2)
        for vector in Self.vectors.ctr {
            let key = SecretBytes(bytes(vector.key))
            let stream = try crypto.aes256CTR(key: key, initialCounter: bytes(vector.counter))
            for (chunk, output) in zip(vector.chunks, vector.output) {
                #expect(try stream.apply(bytes(chunk)) == bytes(output))
            }
        }
        #expect(throws: ProvisioningError.self) {
            _ = try crypto.aes256CTR(key: SecretBytes([1]), initialCounter: [UInt8](repeating: 0, count: 16))
        }
    }

    @Test func aes256GCM() throws {
        #expect(Self.vectors.gcm.count == 3)
        for vector in Self.vectors.gcm {
            let key = SecretBytes(bytes(vector.key))
            #expect(
                try crypto.aes256GCMSeal(key: key, nonce: bytes(vector.nonce), plaintext: bytes(vector.plaintext))
                    == bytes(vector.sealed))
            #expect(
                try crypto.aes256GCMOpen(key: key, nonce: bytes(vector.nonce), sealed: bytes(vector.sealed))
                    == bytes(vector.plaintext))
            var tampered = bytes(vector.sealed)
            tampered[tampered.count - 1] ^= 1
            #expect(throws: ProvisioningError.decryptionFailed) {
                _ = try crypto.aes256GCMOpen(key: key, nonce: bytes(vector.nonce), sealed: tampered)
            }
        }
        #expect(throws: ProvisioningError.decryptionFailed) {
            _ = try crypto.aes256GCMOpen(
                key: SecretBytes([UInt8](repeating: 0, count: 32)), nonce: [1], sealed: [1, 2])
        }
    }

    @Test func srp6aClientAgreesWithPysrp() throws {
        #expect(Self.vectors.srp.count == 2)
        for vector in Self.vectors.srp {
            let client = SRP6a.Client(
                username: bytes(vector.username), password: Secret(vector.password),
                privateValue: bytes(vector.a))
            #expect(client.publicKey == bytes(vector.A))
            #expect(client.sessionKey == nil)
            let proof = try client.proof(salt: bytes(vector.salt), serverPublicKey: bytes(vector.B))
            #expect(proof == bytes(vector.M1))
            #expect(client.sessionKey?.bytes == bytes(vector.K))
            #expect(client.verifyServerProof(bytes(vector.M2)))
            var wrong = bytes(vector.M2)
            wrong[0] ^= 0x80
            #expect(!client.verifyServerProof(wrong))
        }
    }

    @Test func srp6aClientWithAWrongPasswordMakesAnotherProof() throws {
        let vector = try #require(Self.vectors.srp.first)
        let client = SRP6a.Client(
            username: bytes(vector.username), password: Secret(vector.password + "x"),
            privateValue: bytes(vector.a))
        #expect(try client.proof(salt: bytes(vector.salt), serverPublicKey: bytes(vector.B)) != bytes(vector.M1))
        #expect(!client.verifyServerProof(bytes(vector.M2)))
    }

    @Test func srp6aRefusesABThatIsZeroModuloN() throws {
        let client = try crypto.srp6aClient(username: Array("wifiprov".utf8), password: Secret("abcd1234"))
        #expect(client.publicKey.count == 384)
        let modulus = SRP6a.modulus.bytes
        for value in [[UInt8](repeating: 0, count: 384), modulus] {
            #expect(throws: ProvisioningError.self) { _ = try client.proof(salt: [1, 2, 3], serverPublicKey: value) }
        }
    }
}
