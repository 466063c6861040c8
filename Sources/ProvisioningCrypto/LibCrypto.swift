import AccessoryCore
internal import COpenSSL

// The one file of libcrypto calls: pointers, lengths and frees stay here; the other files
// speak Swift arrays and `BigNumber`.

/// The reason of libcrypto's most recent error, and the error queue cleared.
private func openSSLFailure(_ what: String) -> ProvisioningError {
    let code = libcrypto.ERR_get_error!()
    libcrypto.ERR_clear_error!()
    guard code != 0 else { return .crypto("\(what) failed") }
    var buffer = [CChar](repeating: 0, count: 256)
    libcrypto.ERR_error_string_n!(code, &buffer, buffer.count)
    let reason = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return .crypto("\(what) failed: \(reason)")
}

/// libcrypto's functions. Reached only once `OpenSSLProvisioningCrypto.init` found them loaded.
private var libcrypto: copenssl_functions {
    guard case .success(let functions) = LibCrypto.loaded else {
        preconditionFailure("libcrypto used before it was loaded")
    }
    return functions
}

enum LibCrypto {
    /// libcrypto, loaded on first use, or why it could not be.
    static let loaded: Result<copenssl_functions, ProvisioningError> = {
        var error: UnsafePointer<CChar>?
        guard let functions = copenssl_load(&error) else {
            let reason = error.map { String(cString: $0) } ?? "no reason given"
            return .failure(.crypto("\(COPENSSL_LIBRARY) cannot be loaded (\(reason)); install libssl3"))
        }
        return .success(functions.pointee)
    }()

    static func randomBytes(_ count: Int) throws(ProvisioningError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard libcrypto.RAND_bytes!(&bytes, Int32(count)) == 1 else { throw openSSLFailure("RAND_bytes") }
        return bytes
    }

    static func sha256(_ data: [UInt8]) -> [UInt8] { digest(data, libcrypto.EVP_sha256!(), size: 32) }
    static func sha512(_ data: [UInt8]) -> [UInt8] { digest(data, libcrypto.EVP_sha512!(), size: 64) }

    private static func digest(_ data: [UInt8], _ type: OpaquePointer?, size: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: size)
        var length: UInt32 = 0
        // EVP_Digest fails only when out of memory; a process in that state cannot go on.
        precondition(
            libcrypto.EVP_Digest!(data, data.count, &output, &length, type, nil) == 1 && Int(length) == size,
            "EVP_Digest failed")
        return output
    }

    // MARK: X25519

    static func x25519KeyPair() throws(ProvisioningError) -> (privateKey: [UInt8], publicKey: [UInt8]) {
        guard let context = libcrypto.EVP_PKEY_CTX_new_id!(EVP_PKEY_X25519, nil) else {
            throw openSSLFailure("X25519 context")
        }
        defer { libcrypto.EVP_PKEY_CTX_free!(context) }
        var key: OpaquePointer?
        guard libcrypto.EVP_PKEY_keygen_init!(context) == 1, libcrypto.EVP_PKEY_keygen!(context, &key) == 1, let key
        else {
            throw openSSLFailure("X25519 key generation")
        }
        defer { libcrypto.EVP_PKEY_free!(key) }
        return (
            try rawKey(key, libcrypto.EVP_PKEY_get_raw_private_key!),
            try rawKey(key, libcrypto.EVP_PKEY_get_raw_public_key!)
        )
    }

    /// The public key of a raw private key.
    static func x25519PublicKey(privateKey: [UInt8]) throws(ProvisioningError) -> [UInt8] {
        let key = try x25519Key(privateKey, isPrivate: true)
        defer { libcrypto.EVP_PKEY_free!(key) }
        return try rawKey(key, libcrypto.EVP_PKEY_get_raw_public_key!)
    }

    static func x25519(privateKey: [UInt8], peerPublicKey: [UInt8]) throws(ProvisioningError) -> [UInt8] {
        let own = try x25519Key(privateKey, isPrivate: true)
        defer { libcrypto.EVP_PKEY_free!(own) }
        let peer = try x25519Key(peerPublicKey, isPrivate: false)
        defer { libcrypto.EVP_PKEY_free!(peer) }
        guard let context = libcrypto.EVP_PKEY_CTX_new!(own, nil) else { throw openSSLFailure("X25519 context") }
        defer { libcrypto.EVP_PKEY_CTX_free!(context) }
        var secret = [UInt8](repeating: 0, count: 32)
        var length = secret.count
        guard libcrypto.EVP_PKEY_derive_init!(context) == 1, libcrypto.EVP_PKEY_derive_set_peer!(context, peer) == 1,
            libcrypto.EVP_PKEY_derive!(context, &secret, &length) == 1, length == 32
        else {
            throw openSSLFailure("X25519 key agreement")
        }
        return secret
    }

    private static func x25519Key(_ bytes: [UInt8], isPrivate: Bool) throws(ProvisioningError) -> OpaquePointer {
        guard bytes.count == 32 else { throw .crypto("an X25519 key is 32 bytes, not \(bytes.count)") }
        let key =
            isPrivate
            ? libcrypto.EVP_PKEY_new_raw_private_key!(EVP_PKEY_X25519, nil, bytes, 32)
            : libcrypto.EVP_PKEY_new_raw_public_key!(EVP_PKEY_X25519, nil, bytes, 32)
        guard let key else { throw openSSLFailure("reading an X25519 key") }
        return key
    }

    private static func rawKey(
        _ key: OpaquePointer, _ get: (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int>?) -> Int32
    ) throws(ProvisioningError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 32)
        var length = bytes.count
        guard get(key, &bytes, &length) == 1, length == 32 else { throw openSSLFailure("reading a raw X25519 key") }
        return bytes
    }

    // MARK: AES

    /// An AES-256-CTR stream: libcrypto keeps the position within a block between updates.
    final class CTRStream: KeystreamCipher {
        private let context: OpaquePointer

        init(key: [UInt8], counter: [UInt8]) throws(ProvisioningError) {
            guard key.count == 32, counter.count == 16 else {
                throw .crypto(
                    "AES-256-CTR takes a 32-byte key and a 16-byte counter, not \(key.count) and "
                        + "\(counter.count)")
            }
            guard let context = libcrypto.EVP_CIPHER_CTX_new!() else { throw openSSLFailure("AES-256-CTR context") }
            self.context = context
            guard libcrypto.EVP_EncryptInit_ex!(context, libcrypto.EVP_aes_256_ctr!(), nil, key, counter) == 1 else {
                throw openSSLFailure("AES-256-CTR set-up")
            }
        }

        func apply(_ data: [UInt8]) throws(ProvisioningError) -> [UInt8] {
            guard !data.isEmpty else { return [] }
            var output = [UInt8](repeating: 0, count: data.count)
            var length: Int32 = 0
            guard libcrypto.EVP_EncryptUpdate!(context, &output, &length, data, Int32(data.count)) == 1,
                Int(length) == data.count
            else { throw openSSLFailure("AES-256-CTR") }
            return output
        }

        deinit { libcrypto.EVP_CIPHER_CTX_free!(context) }
    }

    static let gcmTagLength = 16

    static func aes256GCM(key: [UInt8], nonce: [UInt8], input: [UInt8], sealing: Bool) throws(ProvisioningError)
        -> [UInt8]
    {
        guard key.count == 32, !nonce.isEmpty else { throw .crypto("AES-256-GCM takes a 32-byte key and a nonce") }
        guard sealing || input.count >= gcmTagLength else { throw .decryptionFailed }
        guard let context = libcrypto.EVP_CIPHER_CTX_new!() else { throw openSSLFailure("AES-256-GCM context") }
        defer { libcrypto.EVP_CIPHER_CTX_free!(context) }
        let initialize = sealing ? libcrypto.EVP_EncryptInit_ex! : libcrypto.EVP_DecryptInit_ex!
        guard initialize(context, libcrypto.EVP_aes_256_gcm!(), nil, nil, nil) == 1,
            libcrypto.EVP_CIPHER_CTX_ctrl!(context, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonce.count), nil) == 1,
            initialize(context, nil, nil, key, nonce) == 1
        else {
            throw openSSLFailure("AES-256-GCM set-up")
        }
        let body = sealing ? input : Array(input.dropLast(gcmTagLength))
        var output = [UInt8](repeating: 0, count: body.count + 16)
        var length: Int32 = 0
        var final: Int32 = 0
        if sealing {
            guard libcrypto.EVP_EncryptUpdate!(context, &output, &length, body, Int32(body.count)) == 1,
                libcrypto.EVP_EncryptFinal_ex!(context, &output[Int(length)], &final) == 1
            else {
                throw openSSLFailure("AES-256-GCM encryption")
            }
            var tag = [UInt8](repeating: 0, count: gcmTagLength)
            guard libcrypto.EVP_CIPHER_CTX_ctrl!(context, EVP_CTRL_AEAD_GET_TAG, Int32(gcmTagLength), &tag) == 1 else {
                throw openSSLFailure("AES-256-GCM tag")
            }
            return Array(output.prefix(Int(length + final))) + tag
        }
        var tag = Array(input.suffix(gcmTagLength))
        guard libcrypto.EVP_DecryptUpdate!(context, &output, &length, body, Int32(body.count)) == 1,
            libcrypto.EVP_CIPHER_CTX_ctrl!(context, EVP_CTRL_AEAD_SET_TAG, Int32(gcmTagLength), &tag) == 1
        else {
            throw openSSLFailure("AES-256-GCM decryption")
        }
        guard libcrypto.EVP_DecryptFinal_ex!(context, &output[Int(length)], &final) == 1 else {
            libcrypto.ERR_clear_error!()
            throw .decryptionFailed
        }
        return Array(output.prefix(Int(length + final)))
    }
}

/// A libcrypto `BIGNUM`, freed (and cleared) with its owner. Values are non-negative.
final class BigNumber {
    fileprivate let pointer: OpaquePointer

    private init(_ pointer: OpaquePointer) { self.pointer = pointer }

    private static func make() -> BigNumber {
        guard let pointer = libcrypto.BN_new!() else { fatalError("BN_new: out of memory") }
        return BigNumber(pointer)
    }

    /// A big-endian unsigned number.
    convenience init(bytes: [UInt8]) {
        guard let pointer = libcrypto.BN_bin2bn!(bytes, Int32(bytes.count), nil) else {
            fatalError("BN_bin2bn: out of memory")
        }
        self.init(pointer)
    }

    /// Marks the value secret: exponentiation with it takes the constant-time path.
    func markSecret() { libcrypto.BN_set_flags!(pointer, BN_FLG_CONSTTIME) }

    /// Big-endian, without leading zero bytes (Python's long_to_bytes, except that zero is empty).
    var bytes: [UInt8] {
        var output = [UInt8](repeating: 0, count: Int((libcrypto.BN_num_bits!(pointer) + 7) / 8))
        let written = libcrypto.BN_bn2bin!(pointer, &output)
        return Array(output.prefix(Int(written)))
    }

    /// Big-endian, left-padded with zeros to `length` bytes.
    func padded(to length: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: length)
        let written = libcrypto.BN_bn2binpad!(pointer, &output, Int32(length))
        precondition(written == Int32(length), "number wider than \(length) bytes")
        return output
    }

    var isZero: Bool { libcrypto.BN_is_zero!(pointer) == 1 }

    /// self^exponent mod modulus.
    func power(_ exponent: BigNumber, modulo modulus: BigNumber) -> BigNumber {
        Self.compute { result, context in
            libcrypto.BN_mod_exp!(result, pointer, exponent.pointer, modulus.pointer, context)
        }
    }

    /// (self × other) mod modulus.
    func times(_ other: BigNumber, modulo modulus: BigNumber) -> BigNumber {
        Self.compute { result, context in
            libcrypto.BN_mod_mul!(result, pointer, other.pointer, modulus.pointer, context)
        }
    }

    /// (self − other) mod modulus, in [0, modulus).
    func minus(_ other: BigNumber, modulo modulus: BigNumber) -> BigNumber {
        Self.compute { result, context in
            libcrypto.BN_mod_sub!(result, pointer, other.pointer, modulus.pointer, context)
        }
    }

    /// self mod modulus, in [0, modulus).
    func modulo(_ modulus: BigNumber) -> BigNumber {
        Self.compute { result, context in libcrypto.BN_nnmod!(result, pointer, modulus.pointer, context) }
    }

    /// self × other + addend, exactly.
    func times(_ other: BigNumber, plus addend: BigNumber) -> BigNumber {
        let product = Self.compute { result, context in libcrypto.BN_mul!(result, pointer, other.pointer, context) }
        return Self.compute { result, _ in libcrypto.BN_add!(result, product.pointer, addend.pointer) }
    }

    private static func compute(_ operation: (OpaquePointer, OpaquePointer) -> Int32) -> BigNumber {
        guard let context = libcrypto.BN_CTX_new!() else { fatalError("BN_CTX_new: out of memory") }
        defer { libcrypto.BN_CTX_free!(context) }
        let result = make()
        // The operations above fail only when out of memory or on a zero modulus, which the
        // SRP code never passes.
        precondition(operation(result.pointer, context) == 1, "BIGNUM arithmetic failed")
        return result
    }

    deinit { libcrypto.BN_clear_free!(pointer) }
}
