#!/usr/bin/python3
"""Writes protobuf-vectors.json: provisioning messages serialized by Python's protobuf from
lab/accessories/esp_prov/esp_provisioning.proto, for the Swift codec's tests.

Run from anywhere with /usr/bin/python3 (Debian python3-protobuf, protobuf-compiler):
    Tests/AccessoryCoreTests/Fixtures/provisioning/make_protobuf_vectors.py
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.normpath(os.path.join(HERE, "../../../../lab/accessories/esp_prov"))


def load_messages():
    out = tempfile.mkdtemp(prefix="esp-prov-pb2-")
    subprocess.run(["protoc", f"-I{PROTO_DIR}", f"--python_out={out}", "esp_provisioning.proto"],
                   cwd=PROTO_DIR, check=True)
    sys.path.insert(0, out)
    import esp_provisioning_pb2
    return esp_provisioning_pb2


def main():
    pb = load_messages()
    vectors = []

    def add(name, message):
        vectors.append({"name": name, "hex": message.SerializeToString().hex()})

    key32 = bytes(range(1, 33))
    random16 = bytes(range(0xA0, 0xB0))
    big384 = bytes([0x80]) + bytes(range(256)) + bytes(range(127))

    s = pb.SessionData(sec_ver=pb.SecScheme0)
    s.sec0.msg = pb.S0_Session_Command
    s.sec0.sc.SetInParent()
    add("sec0Command", s)
    s = pb.SessionData(sec_ver=pb.SecScheme0)
    s.sec0.msg = pb.S0_Session_Response
    s.sec0.sr.status = pb.Success
    add("sec0Response", s)

    s = pb.SessionData(sec_ver=pb.SecScheme1)
    s.sec1.msg = pb.Session_Command0
    s.sec1.sc0.client_pubkey = key32
    add("sec1Command0", s)
    s = pb.SessionData(sec_ver=pb.SecScheme1)
    s.sec1.msg = pb.Session_Response0
    s.sec1.sr0.status = pb.Success
    s.sec1.sr0.device_pubkey = key32[::-1]
    s.sec1.sr0.device_random = random16
    add("sec1Response0", s)
    s = pb.SessionData(sec_ver=pb.SecScheme1)
    s.sec1.msg = pb.Session_Command1
    s.sec1.sc1.client_verify_data = key32
    add("sec1Command1", s)
    s = pb.SessionData(sec_ver=pb.SecScheme1)
    s.sec1.msg = pb.Session_Response1
    s.sec1.sr1.status = pb.CryptoError
    s.sec1.sr1.device_verify_data = key32
    add("sec1Response1CryptoError", s)

    s = pb.SessionData(sec_ver=pb.SecScheme2)
    s.sec2.msg = pb.S2Session_Command0
    s.sec2.sc0.client_username = b"wifiprov"
    s.sec2.sc0.client_pubkey = big384
    add("sec2Command0", s)
    s = pb.SessionData(sec_ver=pb.SecScheme2)
    s.sec2.msg = pb.S2Session_Response0
    s.sec2.sr0.device_pubkey = big384[::-1]
    s.sec2.sr0.device_salt = random16
    add("sec2Response0", s)
    s = pb.SessionData(sec_ver=pb.SecScheme2)
    s.sec2.msg = pb.S2Session_Command1
    s.sec2.sc1.client_proof = bytes(64)
    add("sec2Command1", s)
    s = pb.SessionData(sec_ver=pb.SecScheme2)
    s.sec2.msg = pb.S2Session_Response1
    s.sec2.sr1.device_proof = bytes(range(64))
    s.sec2.sr1.device_nonce = bytes(range(12))
    add("sec2Response1", s)

    c = pb.WiFiConfigPayload(msg=pb.TypeCmdGetStatus)
    c.cmd_get_status.SetInParent()
    add("getStatusCommand", c)
    c = pb.WiFiConfigPayload(msg=pb.TypeRespGetStatus)
    c.resp_get_status.status = pb.Success
    c.resp_get_status.sta_state = pb.Connected
    c.resp_get_status.connected.ip4_addr = "192.168.1.23"
    c.resp_get_status.connected.auth_mode = pb.WPA2_PSK
    c.resp_get_status.connected.ssid = b"HomeNet"
    c.resp_get_status.connected.bssid = bytes([0x02, 0, 0, 0, 0, 0x01])
    c.resp_get_status.connected.channel = 6
    add("statusConnected", c)
    c = pb.WiFiConfigPayload(msg=pb.TypeRespGetStatus)
    c.resp_get_status.sta_state = pb.Connecting
    add("statusConnecting", c)
    c = pb.WiFiConfigPayload(msg=pb.TypeRespGetStatus)
    c.resp_get_status.sta_state = pb.Connecting
    c.resp_get_status.attempt_failed.attempts_remaining = 3
    add("statusConnectingAttemptsLeft", c)
    c = pb.WiFiConfigPayload(msg=pb.TypeRespGetStatus)
    c.resp_get_status.sta_state = pb.Connecting
    c.resp_get_status.connected.SetInParent()
    add("decodeOnly.statusConnectingEmptyConnected", c)
    c = pb.WiFiConfigPayload(msg=pb.TypeRespGetStatus)
    c.resp_get_status.sta_state = pb.ConnectionFailed
    c.resp_get_status.fail_reason = pb.AuthError
    add("statusFailedAuthError", c)
    c = pb.WiFiConfigPayload(msg=pb.TypeRespGetStatus)
    c.resp_get_status.sta_state = pb.ConnectionFailed
    c.resp_get_status.fail_reason = pb.NetworkNotFound
    add("statusFailedNetworkNotFound", c)
    c = pb.WiFiConfigPayload(msg=pb.TypeRespGetStatus)
    c.resp_get_status.sta_state = pb.Disconnected
    add("statusDisconnected", c)
    c = pb.WiFiConfigPayload(msg=pb.TypeCmdSetConfig)
    c.cmd_set_config.ssid = b"HomeNet"
    c.cmd_set_config.passphrase = b"correct horse"
    add("setConfigCommand", c)
    c = pb.WiFiConfigPayload(msg=pb.TypeCmdSetConfig)
    c.cmd_set_config.ssid = "Café ☕".encode()
    c.cmd_set_config.passphrase = b"p" * 63
    c.cmd_set_config.bssid = bytes([0xA4, 0xCF, 0x12, 0x6B, 0, 1])
    c.cmd_set_config.channel = 11
    add("setConfigCommandFull", c)
    c = pb.WiFiConfigPayload(msg=pb.TypeRespSetConfig)
    c.resp_set_config.status = pb.InvalidArgument
    add("setConfigResponseInvalidArgument", c)
    c = pb.WiFiConfigPayload(msg=pb.TypeCmdApplyConfig)
    c.cmd_apply_config.SetInParent()
    add("applyCommand", c)
    c = pb.WiFiConfigPayload(msg=pb.TypeRespApplyConfig)
    c.resp_apply_config.SetInParent()
    add("applyResponse", c)

    w = pb.WiFiScanPayload(msg=pb.TypeCmdScanStart)
    w.cmd_scan_start.blocking = True
    w.cmd_scan_start.group_channels = 5
    w.cmd_scan_start.period_ms = 120
    add("scanStartCommand", w)
    w = pb.WiFiScanPayload(msg=pb.TypeRespScanStart)
    w.resp_scan_start.SetInParent()
    add("scanStartResponse", w)
    w = pb.WiFiScanPayload(msg=pb.TypeCmdScanStatus)
    w.cmd_scan_status.SetInParent()
    add("scanStatusCommand", w)
    w = pb.WiFiScanPayload(msg=pb.TypeRespScanStatus)
    w.resp_scan_status.scan_finished = True
    w.resp_scan_status.result_count = 300
    add("scanStatusResponse", w)
    w = pb.WiFiScanPayload(msg=pb.TypeCmdScanResult)
    w.cmd_scan_result.start_index = 4
    w.cmd_scan_result.count = 4
    add("scanResultCommand", w)
    w = pb.WiFiScanPayload(msg=pb.TypeRespScanResult)
    for ssid, channel, rssi, auth in [(b"HomeNet", 6, -42, pb.WPA2_PSK), (b"Cafe", 1, -90, pb.Open),
                                      (b"Lab\x00Net", 13, 5, pb.WPA2_WPA3_PSK)]:
        e = w.resp_scan_result.entries.add()
        e.ssid = ssid
        e.channel = channel
        e.rssi = rssi
        e.bssid = bytes([0x02, 0, 0, 0, 0, channel])
        e.auth = auth
    add("scanResultResponse", w)
    w = pb.WiFiScanPayload(msg=pb.TypeRespScanStatus, status=pb.InvalidSession)
    w.resp_scan_status.SetInParent()
    add("scanStatusInvalidSession", w)

    # Encoders may leave an empty oneof member out and set only `msg` (esp-protocomm does);
    # protocomm dispatches on `msg`, and so must the client.
    s = pb.SessionData(sec_ver=pb.SecScheme0)
    s.sec0.SetInParent()
    add("decodeOnly.sec0CommandWithoutMember", s)
    add("decodeOnly.applyCommandWithoutMember", pb.WiFiConfigPayload(msg=pb.TypeCmdApplyConfig))
    add("decodeOnly.scanStartResponseWithoutMember", pb.WiFiScanPayload(msg=pb.TypeRespScanStart))

    path = os.path.join(HERE, "protobuf-vectors.json")
    with open(path, "w") as f:
        json.dump({"generator": "make_protobuf_vectors.py, Python protobuf " + __import__("google.protobuf").protobuf.__version__,
                   "vectors": vectors}, f, indent=1)
        f.write("\n")
    print(f"wrote {len(vectors)} vectors to {path}")


if __name__ == "__main__":
    main()
