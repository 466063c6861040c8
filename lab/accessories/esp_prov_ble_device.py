#!/usr/bin/python3
"""An ESP32-style Wi-Fi provisioning device over BlueZ GATT: ESP-IDF's protocomm over BLE.

It serves the protocol core of esp_prov_device.py (security 0, 1 or 2, the same checks of the
credentials against the home network) the way protocomm's BLE transport (protocomm_nimble) does.

GATT: the primary service 021a9004-0382-4aea-bff4-6b3f1c5adfb4 with one characteristic per
endpoint the device implements, its UUID the service UUID with characters 5-8 replaced by the
endpoint id (prov-scan ff50, prov-session ff51, prov-config ff52, proto-ver ff53; no prov-ctrl,
which the device does not implement), flags read and write, each with a Characteristic User
Description descriptor (0x2901) that holds the endpoint name, by which clients find them.

A request is a write with response to the endpoint's characteristic; the next read of that
characteristic returns the answer (long reads through the read offset). One protocomm session
per connected device, restarted when prov-session receives the first handshake message again;
a refused request (a wrong proof of possession, a request that does not decrypt) fails the
write with org.bluez.Error.Failed and drops the session. Advertised like protocomm_nimble: the
complete 128-bit service UUID in the advertisement, the name in the scan response.

Runs as root with /usr/bin/python3 (python3-dbus, python3-gi and what esp_prov_device.py
needs). Secrets are never logged. Prints READY once the application and the advertisement
are registered.

    esp_prov_ble_device.py --adapter hci0 --name PROV_4F2B --security 1 --pop-file prov.pop \\
        --home-ssid HomeNet --home-passphrase-file home.pass --connecting-polls 2
"""

import argparse
import os
import sys

import dbus
from gi.repository import GLib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import esp_prov_device as core  # noqa: E402

# bluez_gatt.py is in lab/guest: ../guest from here, in the repository as in the VM (/lab/guest).
for _guest in (os.path.normpath(os.path.join(HERE, os.pardir, "guest")), "/lab/guest"):
    if os.path.isfile(os.path.join(_guest, "bluez_gatt.py")):
        sys.path.insert(0, _guest)
        break
import bluez_gatt as gatt  # noqa: E402
from bluez_gatt import BLUEZ, PROPS, Failed  # noqa: E402

SERVICE = "021a9004-0382-4aea-bff4-6b3f1c5adfb4"
# protocomm's endpoint ids (wifi_provisioning manager.c); prov-ctrl 0xff4f is not implemented.
ENDPOINT_IDS = {"prov-ctrl": 0xFF4F, "prov-scan": 0xFF50, "prov-session": 0xFF51, "prov-config": 0xFF52,
                "proto-ver": 0xFF53}
APP_PATH = "/io/accessorysetup/espprov"


def endpoint_uuid(endpoint):
    return "%s%04x%s" % (SERVICE[:4], ENDPOINT_IDS[endpoint], SERVICE[8:])


def device_key(options):
    """Who is asking: the org.bluez.Device1 path BlueZ passes as the `device` option."""
    return str(options.get("device", ""))


def starts_session(body):
    """Whether a prov-session request is the first message of a handshake (msg 0 of its scheme)."""
    try:
        request = core.pb.SessionData()
        request.ParseFromString(body)
    except Exception:
        return False
    if request.sec_ver == 0:
        return request.sec0.msg == core.pb.S0_Session_Command
    if request.sec_ver == 1:
        return request.sec1.msg == core.pb.Session_Command0
    if request.sec_ver == 2:
        return request.sec2.msg == core.pb.S2Session_Command0
    return False


class Transport:
    """protocomm's sessions, one per connected device, and the answers waiting to be read."""

    def __init__(self, device):
        self.device = device
        self.sessions = {}
        self.characteristics = []

    def new_session(self, key):
        self.device.sessions += 1
        session = core.Session(self.device, self.device.sessions)
        self.sessions[key] = session
        core.log(f"session {session.number}: new, for {key or 'an unknown device'}")
        return session

    def drop(self, key):
        self.sessions.pop(key, None)
        for characteristic in self.characteristics:
            characteristic.answers.pop(key, None)

    def request(self, endpoint, key, body):
        session = self.sessions.get(key)
        if session is None or (endpoint == "prov-session" and session.state != "new" and starts_session(body)):
            session = self.new_session(key)
        try:
            return session.handle(endpoint, body)
        except (core.Refused, core.UnknownEndpoint):
            core.log(f"session {session.number}: {endpoint} refused, dropping the session")
            self.drop(key)
            raise Failed("the request was refused")

    def disconnected(self, key):
        session = self.sessions.get(key)
        if session is not None:
            core.log(f"session {session.number}: the device disconnected")
        self.drop(key)


class Endpoint(gatt.Characteristic):
    """One endpoint, named by its user description: a write with response runs its handler,
    the next read by the same device returns the answer."""

    def __init__(self, service, endpoint, transport):
        gatt.Characteristic.__init__(self, service, endpoint_uuid(endpoint), ["read", "write"],
                                     on_read=self.answer, on_write=self.request,
                                     partial_write_error="a request must be written whole")
        self.endpoint, self.transport = endpoint, transport
        self.answers = {}
        transport.characteristics.append(self)
        gatt.UserDescription(self, endpoint)

    def answer(self, options):
        return self.answers.get(device_key(options), b"")

    def request(self, value, options):
        key = device_key(options)
        self.answers.pop(key, None)
        self.answers[key] = self.transport.request(self.endpoint, key, value)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--adapter", default="hci0")
    parser.add_argument("--name", default="PROV_4F2B", help="the advertised name")
    core.add_device_options(parser)
    args = parser.parse_args()
    device = core.Device(args)
    transport = Transport(device)

    bus = gatt.system_bus()
    peripheral = gatt.Peripheral(bus, args.adapter, args.name)

    app = gatt.Application(bus, APP_PATH)
    service = gatt.Service(app, SERVICE)
    for endpoint in ENDPOINT_IDS:
        if endpoint in core.ENDPOINTS:
            Endpoint(service, endpoint, transport)
    # protocomm_nimble's advertisement: flags (general discoverable) and the complete 128-bit
    # service UUID; BlueZ puts LocalName in the scan response, as protocomm_nimble does.
    advertisement = gatt.LEAdvertisement(bus, APP_PATH + "/advertisement", {
        "Type": "peripheral", "ServiceUUIDs": dbus.Array([SERVICE], signature="s"),
        "LocalName": args.name, "Includes": dbus.Array([], signature="s"), "Discoverable": dbus.Boolean(True)})

    def properties_changed(interface, changed, invalidated, path=None):
        if interface == "org.bluez.Device1" and "Connected" in changed and not changed["Connected"]:
            transport.disconnected(str(path))

    bus.add_signal_receiver(properties_changed, signal_name="PropertiesChanged", dbus_interface=PROPS,
                            bus_name=BLUEZ, arg0="org.bluez.Device1", path_keyword="path")

    def registered():
        endpoints = ",".join(c.endpoint for c in transport.characteristics)
        core.log(f"READY adapter={args.adapter} name={args.name} security={args.security} endpoints={endpoints}")

    def failed(error):
        core.log(f"FAILED {error}")
        status.append(1)
        loop.quit()

    peripheral.register(app, [advertisement], registered, failed)
    status = []
    loop = GLib.MainLoop()
    loop.run()
    sys.exit(status[0] if status else 0)


if __name__ == "__main__":
    main()
