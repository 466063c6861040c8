import AccessoryCore

/// SRP-6a as ESP-IDF's protocomm security 2 and its esp_prov client compute it: RFC 5054's
/// 3072-bit group with g = 5 and SHA-512; k and u over padded values, the rest over values
/// without leading zeros.
enum SRP6a {
    static let length = 384
    private static let modulusBytes = try! Hex.bytes(
        "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
            + "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
            + "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F"
            + "83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B"
            + "E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA0510"
            + "15728E5A8AAAC42DAD33170D04507A33A85521ABDF1CBA64ECFB850458DBEF0A8AEA71575D060C7DB3970F85A6E1E4C7"
            + "ABF5AE8CDB0933D71E8C94E04A25619DCEE3D2261AD2EE6BF12FFA06D98A0864D87602733EC86A64521F2B18177B200C"
            + "BBE117577A615D6C770988C0BAD946E208E24FA074E5AB3143DB5BFCE0FD108E4B82D120A93AD2CAFFFFFFFFFFFFFFFF")
    static var modulus: BigNumber { BigNumber(bytes: modulusBytes) }
    static var generator: BigNumber { BigNumber(bytes: [5]) }

    static func hash(_ parts: [UInt8]...) -> [UInt8] { LibCrypto.sha512(parts.flatMap { $0 }) }

    final class Client: SRP6aClient {
        let publicKey: [UInt8]
        private(set) var sessionKey: SecretBytes?
        private let username: [UInt8]
        private let password: Secret
        private let privateValue: BigNumber
        private var expectedServerProof: [UInt8]?

        /// `privateValue` is a; tests pass a known one.
        init(username: [UInt8], password: Secret, privateValue: [UInt8]) {
            self.username = username
            self.password = password
            self.privateValue = BigNumber(bytes: privateValue)
            self.privateValue.markSecret()
            publicKey = generator.power(self.privateValue, modulo: SRP6a.modulus).bytes
        }

        func proof(salt: [UInt8], serverPublicKey: [UInt8]) throws(ProvisioningError) -> [UInt8] {
            let serverValue = BigNumber(bytes: serverPublicKey)
            guard serverPublicKey.count <= length, !serverValue.modulo(modulus).isZero else {
                throw .malformedMessage("SRP start answer", "the device's public value B is not acceptable")
            }
            let modulus = SRP6a.modulus, generator = SRP6a.generator
            let k = BigNumber(bytes: hash(modulus.padded(to: length), generator.padded(to: length)))
            let u = BigNumber(
                bytes: hash(
                    BigNumber(bytes: publicKey).padded(to: length),
                    serverValue.padded(to: length)))
            guard !u.isZero else { throw .malformedMessage("SRP start answer", "u is zero") }
            let saltBytes = BigNumber(bytes: salt).bytes
            let inner = BigNumber(bytes: hash(username, Array(":".utf8), Array(password.reveal().utf8))).bytes
            let x = BigNumber(bytes: hash(saltBytes, inner))
            x.markSecret()
            let verifier = generator.power(x, modulo: modulus)
            let base = serverValue.minus(k.times(verifier, modulo: modulus), modulo: modulus)
            let exponent = u.times(x, plus: privateValue)
            exponent.markSecret()
            let key = hash(base.power(exponent, modulo: modulus).bytes)
            let hashN = hash(modulus.bytes)
            let hashG = hash(generator.padded(to: length))
            let m1 = hash(
                zip(hashN, hashG).map { $0 ^ $1 }, hash(username), saltBytes, publicKey,
                serverValue.bytes, key)
            expectedServerProof = hash(publicKey, m1, key)
            sessionKey = SecretBytes(key)
            return m1
        }

        func verifyServerProof(_ proof: [UInt8]) -> Bool {
            guard let expected = expectedServerProof, expected.count == proof.count else { return false }
            return zip(expected, proof).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
        }
    }
}
