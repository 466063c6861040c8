#!/usr/bin/python3
"""Writes crypto-vectors.json: known answers from Python's `cryptography` (X25519, AES-256-CTR,
AES-256-GCM, SHA-2) and pysrp (`srp`, SRP-6a with ESP-IDF's parameters: RFC 5054's 3072-bit
group, g = 5, SHA-512) for the tests of the ProvisioningCrypto module.

Run with /usr/bin/python3 (Debian python3-cryptography, python3-srp):
    Tests/ProvisioningCryptoTests/Fixtures/make_crypto_vectors.py
The inputs are fixed, so the file only changes if a library's answers do.
"""
import hashlib
import json
import os

import srp._pysrp as pysrp
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

HERE = os.path.dirname(os.path.abspath(__file__))

# RFC 5054 appendix A, 3072-bit group (the one ESP-IDF's security 2 uses, with g = 5).
N_3072 = (
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
    "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
    "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F"
    "83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B"
    "E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA0510"
    "15728E5A8AAAC42DAD33170D04507A33A85521ABDF1CBA64ECFB850458DBEF0A8AEA71575D060C7DB3970F85A6E1E4C7"
    "ABF5AE8CDB0933D71E8C94E04A25619DCEE3D2261AD2EE6BF12FFA06D98A0864D87602733EC86A64521F2B18177B200C"
    "BBE117577A615D6C770988C0BAD946E208E24FA074E5AB3143DB5BFCE0FD108E4B82D120A93AD2CAFFFFFFFFFFFFFFFF"
)


def seeded(label, count):
    """Deterministic bytes, so the vectors do not change between runs."""
    out = b""
    counter = 0
    while len(out) < count:
        out += hashlib.sha256(f"{label}/{counter}".encode()).digest()
        counter += 1
    return out[:count]


def digest(algorithm, data):
    h = hashes.Hash(algorithm)
    h.update(data)
    return h.finalize()


def main():
    pysrp.rfc5054_enable()
    out = {"generator": "make_crypto_vectors.py", "sha": [], "x25519": [], "ctr": [], "gcm": [], "srp": []}

    for data in [b"", b"abc", seeded("sha", 200)]:
        out["sha"].append({"input": data.hex(), "sha256": digest(hashes.SHA256(), data).hex(),
                           "sha512": digest(hashes.SHA512(), data).hex()})

    for index in range(3):
        a = X25519PrivateKey.from_private_bytes(seeded(f"x25519-a{index}", 32))
        b = X25519PrivateKey.from_private_bytes(seeded(f"x25519-b{index}", 32))
        raw = lambda key: key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        out["x25519"].append({"private": seeded(f"x25519-a{index}", 32).hex(), "public": raw(a).hex(),
                              "peerPublic": raw(b).hex(), "shared": a.exchange(b.public_key()).hex()})

    # One stream over several messages of odd sizes; the second counter wraps the 128-bit block.
    for counter in [seeded("ctr-iv", 16), bytes.fromhex("ffffffffffffffffffffffffffffffff")]:
        key = seeded("ctr-key", 32)
        chunks = [seeded("ctr-1", 5), seeded("ctr-2", 32), seeded("ctr-3", 17), seeded("ctr-4", 40)]
        encryptor = Cipher(algorithms.AES(key), modes.CTR(counter)).encryptor()
        out["ctr"].append({"key": key.hex(), "counter": counter.hex(), "chunks": [c.hex() for c in chunks],
                           "output": [encryptor.update(c).hex() for c in chunks]})

    for nonce_length, plaintext in [(12, seeded("gcm-1", 45)), (16, seeded("gcm-2", 3)), (12, b"")]:
        key = seeded("gcm-key", 32)
        nonce = seeded(f"gcm-nonce-{nonce_length}", nonce_length)
        out["gcm"].append({"key": key.hex(), "nonce": nonce.hex(), "plaintext": plaintext.hex(),
                           "sealed": AESGCM(key).encrypt(nonce, plaintext, None).hex()})

    for index, (username, password) in enumerate([(b"wifiprov", b"abcd1234"), (b"admin", b"correct horse battery")]):
        salt = b"\x5a" + seeded(f"srp-salt{index}", 15)
        a = b"\x80" + seeded(f"srp-a{index}", 31)
        b = seeded(f"srp-b{index}", 32)
        x = pysrp.gen_x(hashlib.sha512, salt, username, password)
        n = int(N_3072, 16)
        verifier = pysrp.long_to_bytes(pow(5, x, n))
        user = pysrp.User(username, password, hash_alg=pysrp.SHA512, ng_type=pysrp.NG_CUSTOM, n_hex=N_3072,
                          g_hex="5", bytes_a=a)
        _, big_a = user.start_authentication()
        device = pysrp.Verifier(username, salt, verifier, big_a, hash_alg=pysrp.SHA512, ng_type=pysrp.NG_CUSTOM,
                                n_hex=N_3072, g_hex="5", bytes_b=b)
        s, big_b = device.get_challenge()
        m1 = user.process_challenge(s, big_b)
        m2 = device.verify_session(m1)
        user.verify_session(m2)
        assert user.authenticated() and device.authenticated()
        out["srp"].append({"username": username.hex(), "password": password.decode(), "salt": salt.hex(),
                           "a": a.hex(), "b": b.hex(), "verifier": verifier.hex(), "A": big_a.hex(),
                           "B": big_b.hex(), "M1": m1.hex(), "M2": m2.hex(),
                           "K": user.get_session_key().hex()})

    path = os.path.join(HERE, "crypto-vectors.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
