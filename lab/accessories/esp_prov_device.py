#!/usr/bin/python3
"""An ESP32-style Wi-Fi provisioning device: ESP-IDF's protocomm over HTTP, as its SoftAP
transport serves it (POST /proto-ver, /prov-session, /prov-scan, /prov-config; a session
cookie; a refused handshake closes the connection without an answer), with security 0, 1
(X25519, AES-256-CTR, proof of possession) or 2 (SRP-6a 3072/SHA-512, AES-256-GCM, nonce
counting from sec_patch_ver 1). The messages come from esp_prov/esp_provisioning.proto,
compiled with protoc at start.

It checks the credentials it is sent against the home network it is told about and reports,
after some polls in "connecting", connected or the failure ESP-IDF would: network not found
for another SSID, authentication error for another passphrase. Secrets are never logged.

Needs /usr/bin/python3 with Debian python3-protobuf, python3-cryptography, python3-srp and
protobuf-compiler. Prints "READY port=N" once it listens.

The protocol core (Session, Device, Session.handle, add_device_options) imports without
starting the server; esp_prov_ble_device.py serves it over BlueZ GATT.
"""
import argparse
import hmac
import hashlib
import http.server
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

import srp._pysrp as pysrp
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

HERE = os.path.dirname(os.path.abspath(__file__))
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
MAX_BODY = 4096
# The endpoints this device implements (no prov-ctrl, no custom endpoints).
ENDPOINTS = ("proto-ver", "prov-session", "prov-scan", "prov-config")


def load_proto():
    out = tempfile.mkdtemp(prefix="esp-prov-device-")
    subprocess.run(["protoc", f"-I{HERE}/esp_prov", f"--python_out={out}", "esp_provisioning.proto"], check=True)
    sys.path.insert(0, out)
    import esp_provisioning_pb2
    return esp_provisioning_pb2


pb = load_proto()


def log(message):
    print(message, flush=True)


class Refused(Exception):
    """The handler fails: protocomm's HTTP server closes the socket without an answer."""


class UnknownEndpoint(Exception):
    """No handler is registered for the endpoint (HTTP answers 404)."""


class Session:
    def __init__(self, device, number):
        self.device = device
        self.number = number
        self.state = "new"
        self.ctr = None
        self.gcm = None
        self.nonce = None
        self.srp = None
        self.device_pubkey = None

    # -- any transport ---------------------------------------------------------------------
    def handle(self, endpoint, body):
        """Runs `endpoint`'s handler on a request body and returns the answer. Raises Refused
        when the handler fails (the transport then drops the session without an answer) and
        UnknownEndpoint for an endpoint the device does not have."""
        device = self.device
        try:
            if endpoint == "proto-ver":
                log(f"session {self.number}: version asked")
                return device.version()
            if endpoint == "prov-session":
                return self.handshake(body)
            if endpoint in ("prov-scan", "prov-config"):
                plain = self.decrypt(body)
                handler = device.scan if endpoint == "prov-scan" else device.config_endpoint
                return self.encrypt(handler(plain))
        except Refused:
            raise
        except Exception as error:  # a message that does not parse, like protocomm's handler failing
            log(f"{endpoint}: {type(error).__name__}, closing the connection")
            raise Refused() from error
        raise UnknownEndpoint(endpoint)

    # -- prov-session ----------------------------------------------------------------------
    # Like protocomm's handlers, every dispatch goes by the message type (`msg`), not by which
    # oneof member is present: encoders leave an empty member out (esp-protocomm does).
    def handshake(self, body):
        request = pb.SessionData()
        request.ParseFromString(body)
        security = self.device.security
        if request.sec_ver != security:
            log(f"session {self.number}: security {request.sec_ver} asked, this device runs {security}")
            raise Refused()
        reply = pb.SessionData(sec_ver=security)
        if security == 0:
            if request.sec0.msg != pb.S0_Session_Command:
                raise Refused()
            reply.sec0.msg = pb.S0_Session_Response
            reply.sec0.sr.status = pb.Success
            self.state = "established"
            log(f"session {self.number}: security 0 session established")
        elif security == 1:
            self.sec1(request.sec1, reply)
        else:
            self.sec2(request.sec2, reply)
        return reply.SerializeToString()

    def sec1(self, message, reply):
        if message.msg == pb.Session_Command0 and self.state == "new":
            client_pubkey = message.sc0.client_pubkey
            private = X25519PrivateKey.generate()
            self.device_pubkey = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
            shared = private.exchange(X25519PublicKey.from_public_bytes(client_pubkey))
            if self.device.pop is not None:
                digest = hashlib.sha256(self.device.pop).digest()
                shared = bytes(a ^ b for a, b in zip(shared, digest))
            device_random = os.urandom(16)
            self.ctr = Cipher(algorithms.AES(shared), modes.CTR(device_random)).encryptor()
            self.client_pubkey = client_pubkey
            reply.sec1.msg = pb.Session_Response0
            reply.sec1.sr0.status = pb.Success
            reply.sec1.sr0.device_pubkey = self.device_pubkey
            reply.sec1.sr0.device_random = device_random
            self.state = "sec1-verify"
        elif message.msg == pb.Session_Command1 and self.state == "sec1-verify":
            check = self.ctr.update(message.sc1.client_verify_data)
            if not hmac.compare_digest(check, self.device_pubkey):
                log(f"session {self.number}: key mismatch (wrong proof of possession), closing the connection")
                raise Refused()
            reply.sec1.msg = pb.Session_Response1
            reply.sec1.sr1.status = pb.Success
            reply.sec1.sr1.device_verify_data = self.ctr.update(self.client_pubkey)
            self.state = "established"
            log(f"session {self.number}: security 1 session established")
        else:
            raise Refused()

    def sec2(self, message, reply):
        device = self.device
        if message.msg == pb.S2Session_Command0 and self.state == "new":
            self.srp = pysrp.Verifier(message.sc0.client_username, device.salt, device.verifier,
                                      message.sc0.client_pubkey, hash_alg=pysrp.SHA512, ng_type=pysrp.NG_CUSTOM,
                                      n_hex=N_3072, g_hex="5")
            _, device_pubkey = self.srp.get_challenge()
            if device_pubkey is None:
                raise Refused()
            reply.sec2.msg = pb.S2Session_Response0
            reply.sec2.sr0.status = pb.Success
            reply.sec2.sr0.device_pubkey = device_pubkey
            reply.sec2.sr0.device_salt = device.salt
            self.state = "sec2-verify"
        elif message.msg == pb.S2Session_Command1 and self.state == "sec2-verify":
            proof = self.srp.verify_session(message.sc1.client_proof)
            if proof is None:
                log(f"session {self.number}: received incorrect username and/or proof of possession, "
                    "closing the connection")
                raise Refused()
            if device.patch_version >= 1:
                self.nonce = bytearray(os.urandom(8) + (1).to_bytes(4, "big"))
            else:
                self.nonce = bytearray(os.urandom(16))
            self.gcm = AESGCM(self.srp.get_session_key()[:32])
            reply.sec2.msg = pb.S2Session_Response1
            reply.sec2.sr1.status = pb.Success
            reply.sec2.sr1.device_proof = proof
            reply.sec2.sr1.device_nonce = bytes(self.nonce)
            self.state = "established"
            log(f"session {self.number}: security 2 session established (patch {device.patch_version})")
        else:
            raise Refused()

    # -- encryption of the other endpoints --------------------------------------------------
    def _gcm(self, operation, data):
        result = operation(bytes(self.nonce), data, None)
        if self.device.patch_version >= 1:
            counter = int.from_bytes(self.nonce[8:], "big") + 1
            self.nonce[8:] = (counter & 0xFFFFFFFF).to_bytes(4, "big")
        return result

    def decrypt(self, data):
        if self.state != "established":
            log(f"session {self.number}: request before the session is established")
            raise Refused()
        if self.device.security == 1:
            return self.ctr.update(data)
        if self.device.security == 2:
            try:
                return self._gcm(self.gcm.decrypt, data)
            except Exception:
                log(f"session {self.number}: a request did not decrypt")
                raise Refused()
        return data

    def encrypt(self, data):
        if self.device.security == 1:
            return self.ctr.update(data)
        if self.device.security == 2:
            return self._gcm(self.gcm.encrypt, data)
        return data


class Device:
    def __init__(self, args):
        pysrp.rfc5054_enable()
        self.security = args.security
        self.patch_version = args.patch_version
        self.version_format = args.version_format
        self.pop = None
        if args.pop_file:
            with open(args.pop_file, "rb") as f:
                self.pop = f.read().rstrip(b"\n")
        if self.security == 2:
            if self.pop is None:
                sys.exit("security 2 needs --pop-file (the SRP password)")
            self.salt = b"\x5a" + os.urandom(15)
            x = pysrp.gen_x(hashlib.sha512, self.salt, args.username.encode(), self.pop)
            self.verifier = pysrp.long_to_bytes(pow(5, x, int(N_3072, 16)))
        with open(args.home_passphrase_file, "rb") as f:
            self.home_passphrase = f.read().rstrip(b"\n")
        self.home_ssid = args.home_ssid.encode()
        self.connecting_polls = args.connecting_polls
        self.connecting_seconds = args.connecting_seconds
        self.joining_since = None
        self.ip4_address = args.ip4_address
        self.on_join = args.on_join
        self.joined = False
        self.networks = [(self.home_ssid, 6, -48, pb.WPA2_PSK)] + [
            (f"Neighbour-{index}".encode(), 1 + index % 11, -60 - index, pb.WPA2_PSK) for index in range(args.neighbours)]
        self.lock = threading.Lock()
        self.session = None
        self.sessions = 0
        self.config = None
        self.applied = False
        self.polls = 0

    def version(self):
        if self.version_format == "bare":
            return b"v1.0"
        capabilities = ["wifi_scan"]
        if self.security == 0:
            capabilities.append("no_sec")
        if self.security == 1 and self.pop is None:
            capabilities.append("no_pop")
        prov = {"ver": "v1.1", "sec_ver": self.security, "sec_patch_ver": self.patch_version, "cap": capabilities}
        if self.version_format == "no-sec-ver":
            # Firmware from before security 2: no sec_ver, the scheme told only by no_sec.
            prov = {"ver": "v1.1", "cap": capabilities}
        return json.dumps({"prov": prov}).encode()

    def scan(self, body):
        request = pb.WiFiScanPayload()
        request.ParseFromString(body)
        reply = pb.WiFiScanPayload(status=pb.Success)
        if request.msg == pb.TypeCmdScanStart:
            reply.msg = pb.TypeRespScanStart
            reply.resp_scan_start.SetInParent()
        elif request.msg == pb.TypeCmdScanStatus:
            reply.msg = pb.TypeRespScanStatus
            reply.resp_scan_status.scan_finished = True
            reply.resp_scan_status.result_count = len(self.networks)
        elif request.msg == pb.TypeCmdScanResult:
            reply.msg = pb.TypeRespScanResult
            start, count = request.cmd_scan_result.start_index, request.cmd_scan_result.count
            for ssid, channel, rssi, auth in self.networks[start:start + count]:
                entry = reply.resp_scan_result.entries.add()
                entry.ssid, entry.channel, entry.rssi, entry.auth = ssid, channel, rssi, auth
                entry.bssid = bytes([0x02, 0, 0, 0, 0, channel])
        else:
            raise Refused()
        return reply.SerializeToString()

    def config_endpoint(self, body):
        request = pb.WiFiConfigPayload()
        request.ParseFromString(body)
        reply = pb.WiFiConfigPayload()
        if request.msg == pb.TypeCmdSetConfig:
            command = request.cmd_set_config
            reply.msg = pb.TypeRespSetConfig
            if len(command.ssid) >= 32 or len(command.passphrase) >= 64 or len(command.bssid) not in (0, 6):
                reply.resp_set_config.status = pb.InvalidArgument
            else:
                self.config = (command.ssid, command.passphrase)
                self.applied = False
                reply.resp_set_config.status = pb.Success
                log(f"received credentials for SSID {command.ssid!r}")
        elif request.msg == pb.TypeCmdApplyConfig:
            reply.msg = pb.TypeRespApplyConfig
            if self.config is None:
                reply.resp_apply_config.status = pb.InvalidArgument
            else:
                self.applied = True
                self.polls = 0
                if self.joining_since is None:
                    self.joining_since = time.monotonic()
                reply.resp_apply_config.status = pb.Success
                log("applying the configuration: joining the network")
        elif request.msg == pb.TypeCmdGetStatus:
            reply.msg = pb.TypeRespGetStatus
            status = reply.resp_get_status
            status.status = pb.Success
            if not self.applied:
                status.sta_state = pb.Disconnected
            elif self.polls < self.connecting_polls or time.monotonic() < self.joining_since + self.connecting_seconds:
                self.polls += 1
                status.sta_state = pb.Connecting
            else:
                ssid, passphrase = self.config
                if ssid != self.home_ssid:
                    status.sta_state = pb.ConnectionFailed
                    status.fail_reason = pb.NetworkNotFound
                    log("verdict: network not found")
                elif not hmac.compare_digest(passphrase, self.home_passphrase):
                    status.sta_state = pb.ConnectionFailed
                    status.fail_reason = pb.AuthError
                    log("verdict: authentication error")
                else:
                    status.sta_state = pb.Connected
                    status.connected.ip4_addr = self.ip4_address
                    status.connected.auth_mode = pb.WPA2_PSK
                    status.connected.ssid = ssid
                    status.connected.bssid = bytes([0x02, 0, 0, 0, 0, 6])
                    status.connected.channel = 6
                    log("verdict: connected")
                    if self.on_join and not self.joined:
                        # What the device does once on the network: the lab announces it there.
                        self.joined = True
                        subprocess.Popen(["/bin/sh", "-c", self.on_join])
        else:
            raise Refused()
        return reply.SerializeToString()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    device: Device = None

    def log_message(self, format, *args):
        pass

    def refuse(self):
        self.close_connection = True

    def do_POST(self):
        device = self.device
        length = int(self.headers.get("Content-Length") or 0)
        if length <= 0 or length > MAX_BODY:
            log(f"{self.path}: body of {length} bytes refused")
            return self.refuse()
        body = self.rfile.read(length)
        endpoint = self.path.lstrip("/")
        with device.lock:
            cookie = self.headers.get("Cookie", "")
            number = None
            for part in cookie.split(";"):
                name, _, value = part.strip().partition("=")
                if name == "session" and value.isdigit():
                    number = int(value)
            set_cookie = None
            if device.session is None or device.session.number != number:
                device.sessions += 1
                device.session = Session(device, random.randint(1, 2**31))
                set_cookie = f"session={device.session.number}"
            session = device.session
            try:
                answer = session.handle(endpoint, body)
            except UnknownEndpoint:
                self.send_error(404)
                return
            except Refused:
                device.session = None
                return self.refuse()
        self.send_response(200)
        if set_cookie:
            self.send_header("Set-Cookie", set_cookie)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


def add_device_options(parser):
    """The options of the device itself, whichever transport serves it."""
    parser.add_argument("--security", type=int, choices=[0, 1, 2], default=1)
    parser.add_argument("--patch-version", type=int, choices=[0, 1], default=1)
    parser.add_argument("--pop-file", help="the proof of possession (security 1, optional; security 2 password)")
    parser.add_argument("--username", default="wifiprov")
    parser.add_argument("--home-ssid", required=True)
    parser.add_argument("--home-passphrase-file", required=True)
    parser.add_argument("--connecting-polls", type=int, default=1)
    parser.add_argument("--connecting-seconds", type=float, default=0,
                        help="how long it takes to join the network, from the first time it was told to: "
                             "a configuration applied again meanwhile does not start it over")
    parser.add_argument("--ip4-address", default="192.168.1.42", help="the address it reports once connected")
    parser.add_argument("--on-join", help="a shell command run once, when it reports that it joined")
    parser.add_argument("--neighbours", type=int, default=5)
    parser.add_argument("--version-format", choices=["json", "no-sec-ver", "bare"], default="json",
                        help="how proto-ver answers: current JSON, JSON without sec_ver, or a bare string")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--address", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    add_device_options(parser)
    args = parser.parse_args()
    Handler.device = Device(args)
    server = http.server.ThreadingHTTPServer((args.address, args.port), Handler)
    server.daemon_threads = True
    log(f"READY port={server.server_address[1]} security={args.security}")
    server.serve_forever()


if __name__ == "__main__":
    main()
