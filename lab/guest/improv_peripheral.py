#!/usr/bin/python3
"""An Improv Wi-Fi accessory over real BlueZ, for the radio lab.

It follows the Improv BLE specification: service 00467768-6228-2272-4663-277478268000 with
the current state, error state, RPC command, RPC result and capabilities characteristics,
advertised with service data 4677 (state, capabilities), and with manufacturer data in a
second advertising instance: the flags, the 128-bit service UUID and the service data fill a
31-byte legacy advertisement. It starts in "authorization
required" and becomes "authorized" a few seconds later, as if its button were pressed.
When it receives Wi-Fi settings it writes them to the file given as --report, moves to
"provisioned" and answers with a redirect URL.

    improv_peripheral.py --adapter hci0 --report /lab/out/improv-received.txt
"""

import argparse
import sys

import dbus
from gi.repository import GLib

import bluez_gatt as gatt

SERVICE = "00467768-6228-2272-4663-277478268000"
STATE, ERROR, RPC_COMMAND, RPC_RESULT, CAPABILITIES = (
    "00467768-6228-2272-4663-27747826800%d" % n for n in range(1, 6))
AUTHORIZATION_REQUIRED, AUTHORIZED, PROVISIONING, PROVISIONED = 1, 2, 3, 4
NO_ERROR, INVALID_RPC, UNKNOWN_RPC = 0, 1, 2
REDIRECT = "http://192.168.4.1/setup"
APP_PATH = "/io/accessorysetup/lab"


def checksum(data):
    return sum(data) & 0xFF


def frame(command, strings):
    payload = b"".join(bytes([len(s)]) + s for s in strings)
    packet = bytes([command, len(payload)]) + payload
    return packet + bytes([checksum(packet)])


def advertisement(bus, name):
    """Improv's advertisement: the service UUID and the 4677 service data, which fill it."""
    service_data = bytes([AUTHORIZATION_REQUIRED, 0x01, 0, 0, 0, 0])
    return gatt.LEAdvertisement(bus, APP_PATH + "/advertisement", {
        "Type": "peripheral", "ServiceUUIDs": dbus.Array([SERVICE], signature="s"),
        "ServiceData": dbus.Dictionary({"4677": dbus.Array(service_data, signature="y")}, signature="sv"),
        "LocalName": name, "Includes": dbus.Array([], signature="s")})


def vendor_advertisement(bus):
    """A second advertising instance with the vendor's manufacturer data (test company
    0xFFFF: a model and a version byte); the controller takes turns with the first."""
    return gatt.LEAdvertisement(bus, APP_PATH + "/advertisement1", {
        "Type": "peripheral", "Includes": dbus.Array([], signature="s"),
        "ManufacturerData": dbus.Dictionary({dbus.UInt16(0xFFFF): dbus.Array([0x4C, 0x01], signature="y")},
                                            signature="qv")})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--adapter", default="hci0")
    parser.add_argument("--report", required=True)
    parser.add_argument("--authorize-after", type=float, default=3.0)
    parser.add_argument("--redirect", default=REDIRECT, help="the URL reported once provisioned")
    args = parser.parse_args()

    bus = gatt.system_bus()
    peripheral = gatt.Peripheral(bus, args.adapter, "improv-lab-light")

    # Improv's characteristics publish their Value and, as they always have, ignore offsets.
    app = gatt.Application(bus, APP_PATH)
    service = gatt.Service(app, SERVICE)
    state = gatt.Characteristic(service, STATE, ["read", "notify"], [AUTHORIZATION_REQUIRED], offsets=False)
    error = gatt.Characteristic(service, ERROR, ["read", "notify"], [NO_ERROR], offsets=False)
    command = gatt.Characteristic(service, RPC_COMMAND, ["write"], b"", offsets=False)
    result = gatt.Characteristic(service, RPC_RESULT, ["read", "notify"], b"", offsets=False)
    gatt.Characteristic(service, CAPABILITIES, ["read"], [0x01], offsets=False)
    advertisements = [advertisement(bus, "improv-lab-light"), vendor_advertisement(bus)]

    incoming = bytearray()

    def on_write(data, options):
        # The client splits frames longer than 20 bytes into several writes; the spec has the
        # device put them back together from the length byte.
        incoming.extend(data)
        if len(incoming) >= 2 and len(incoming) >= incoming[1] + 3:
            packet = bytes(incoming)
            incoming.clear()
            on_command(packet)

    def on_command(packet):
        print("RPC", packet.hex(), flush=True)
        if len(packet) < 3 or packet[1] != len(packet) - 3 or packet[-1] != checksum(packet[:-1]):
            error.set([INVALID_RPC])
            return
        cmd, data = packet[0], packet[2:-1]
        if state.value[0] == AUTHORIZATION_REQUIRED:
            error.set([4])
            return
        error.set([NO_ERROR])
        if cmd == 0x02:
            result.set(frame(0x02, []))
        elif cmd == 0x01:
            ssid_len = data[0]
            ssid = data[1:1 + ssid_len]
            password = data[2 + ssid_len:2 + ssid_len + data[1 + ssid_len]]
            state.set([PROVISIONING])
            with open(args.report, "w") as report:
                report.write("ssid=%s\npassphrase=%s\n" % (ssid.decode(), password.decode()))

            def done():
                state.set([PROVISIONED])
                result.set(frame(0x01, [args.redirect.encode()]))
                return False
            GLib.timeout_add(500, done)
        else:
            error.set([UNKNOWN_RPC])

    command.on_write = on_write

    def authorize():
        state.set([AUTHORIZED])
        print("AUTHORIZED", flush=True)
        return False

    def registered():
        print("READY", flush=True)
        GLib.timeout_add(int(args.authorize_after * 1000), authorize)

    def failed(error_value):
        print("FAILED", error_value, flush=True)
        sys.exit(1)

    peripheral.register(app, advertisements, registered, failed)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
