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
import dbus.exceptions
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import esp_prov_device as core  # noqa: E402

BLUEZ = "org.bluez"
PROPS = "org.freedesktop.DBus.Properties"
GATT_CHARACTERISTIC = "org.bluez.GattCharacteristic1"
GATT_DESCRIPTOR = "org.bluez.GattDescriptor1"
SERVICE = "021a9004-0382-4aea-bff4-6b3f1c5adfb4"
USER_DESCRIPTION = "00002901-0000-1000-8000-00805f9b34fb"
# protocomm's endpoint ids (wifi_provisioning manager.c); prov-ctrl 0xff4f is not implemented.
ENDPOINT_IDS = {"prov-ctrl": 0xFF4F, "prov-scan": 0xFF50, "prov-session": 0xFF51, "prov-config": 0xFF52,
                "proto-ver": 0xFF53}
APP_PATH = "/io/accessorysetup/espprov"


def endpoint_uuid(endpoint):
    return "%s%04x%s" % (SERVICE[:4], ENDPOINT_IDS[endpoint], SERVICE[8:])


class Failed(dbus.exceptions.DBusException):
    _dbus_error_name = "org.bluez.Error.Failed"


class InvalidOffset(dbus.exceptions.DBusException):
    _dbus_error_name = "org.bluez.Error.InvalidOffset"


def device_key(options):
    """Who is asking: the org.bluez.Device1 path BlueZ passes as the `device` option."""
    return str(options.get("device", ""))


def slice_at(value, options):
    offset = int(options.get("offset", 0))
    if offset > len(value):
        raise InvalidOffset("offset %d beyond a value of %d bytes" % (offset, len(value)))
    return dbus.Array(value[offset:], signature="y")


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


class Descriptor(dbus.service.Object):
    """The Characteristic User Description: the endpoint's name, read-only."""

    def __init__(self, bus, characteristic, text):
        self.path = characteristic.path + "/desc0"
        self.characteristic = characteristic
        self.value = text.encode()
        dbus.service.Object.__init__(self, bus, self.path)

    def properties(self):
        return {GATT_DESCRIPTOR: {
            "Characteristic": dbus.ObjectPath(self.characteristic.path), "UUID": USER_DESCRIPTION,
            "Flags": dbus.Array(["read"], signature="s"), "Value": dbus.Array(self.value, signature="y")}}

    @dbus.service.method(GATT_DESCRIPTOR, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        return slice_at(self.value, options)

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.properties()[interface][name]

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()[interface]


class Characteristic(dbus.service.Object):
    """One endpoint: a write with response runs its handler, the next read returns the answer."""

    def __init__(self, bus, service, index, endpoint, transport):
        self.path = "%s/char%d" % (service.path, index)
        self.service, self.endpoint, self.transport = service, endpoint, transport
        self.uuid = endpoint_uuid(endpoint)
        self.answers = {}
        transport.characteristics.append(self)
        dbus.service.Object.__init__(self, bus, self.path)
        self.descriptor = Descriptor(bus, self, endpoint)

    def properties(self):
        return {GATT_CHARACTERISTIC: {
            "Service": dbus.ObjectPath(self.service.path), "UUID": self.uuid,
            "Flags": dbus.Array(["read", "write"], signature="s"),
            "Descriptors": dbus.Array([dbus.ObjectPath(self.descriptor.path)], signature="o")}}

    @dbus.service.method(GATT_CHARACTERISTIC, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        return slice_at(self.answers.get(device_key(options), b""), options)

    @dbus.service.method(GATT_CHARACTERISTIC, in_signature="aya{sv}")
    def WriteValue(self, value, options):
        if options.get("prepare-authorize"):
            return  # a prepared write being authorized: the value comes whole with the execute
        if int(options.get("offset", 0)) != 0:
            # BlueZ joins a long write's contiguous prepared writes into one write at offset 0.
            raise InvalidOffset("a request must be written whole")
        key = device_key(options)
        self.answers.pop(key, None)
        self.answers[key] = self.transport.request(self.endpoint, key, bytes(value))

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.properties()[interface][name]

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()[interface]


class Service(dbus.service.Object):
    def __init__(self, bus, path):
        self.path = path
        dbus.service.Object.__init__(self, bus, path)

    def properties(self):
        return {"org.bluez.GattService1": {"UUID": SERVICE, "Primary": True}}


class Application(dbus.service.Object):
    def __init__(self, bus, objects):
        self.path = APP_PATH
        self.objects = objects
        dbus.service.Object.__init__(self, bus, self.path)

    @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        return {dbus.ObjectPath(o.path): o.properties() for o in self.objects}


class Advertisement(dbus.service.Object):
    """protocomm_nimble's advertisement: flags (general discoverable) and the complete 128-bit
    service UUID; BlueZ puts LocalName in the scan response, as protocomm_nimble does."""

    def __init__(self, bus, name):
        self.path = APP_PATH + "/advertisement"
        self.name = name
        dbus.service.Object.__init__(self, bus, self.path)

    def properties(self):
        return {"Type": "peripheral", "ServiceUUIDs": dbus.Array([SERVICE], signature="s"),
                "LocalName": self.name, "Includes": dbus.Array([], signature="s"),
                "Discoverable": dbus.Boolean(True)}

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()

    @dbus.service.method("org.bluez.LEAdvertisement1")
    def Release(self):
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--adapter", default="hci0")
    parser.add_argument("--name", default="PROV_4F2B", help="the advertised name")
    core.add_device_options(parser)
    args = parser.parse_args()
    device = core.Device(args)
    transport = Transport(device)

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    adapter_path = "/org/bluez/" + args.adapter
    adapter = dbus.Interface(bus.get_object(BLUEZ, adapter_path), PROPS)
    adapter.Set("org.bluez.Adapter1", "Powered", dbus.Boolean(True))
    adapter.Set("org.bluez.Adapter1", "Alias", args.name)

    service = Service(bus, APP_PATH + "/service0")
    objects = [service]
    for index, endpoint in enumerate(e for e in ENDPOINT_IDS if e in core.ENDPOINTS):
        characteristic = Characteristic(bus, service, index, endpoint, transport)
        objects += [characteristic, characteristic.descriptor]
    app = Application(bus, objects)
    advertisement = Advertisement(bus, args.name)

    def properties_changed(interface, changed, invalidated, path=None):
        if interface == "org.bluez.Device1" and "Connected" in changed and not changed["Connected"]:
            transport.disconnected(str(path))

    bus.add_signal_receiver(properties_changed, signal_name="PropertiesChanged", dbus_interface=PROPS,
                            bus_name=BLUEZ, arg0="org.bluez.Device1", path_keyword="path")

    def registered(*_):
        endpoints = ",".join(c.endpoint for c in transport.characteristics)
        core.log(f"READY adapter={args.adapter} name={args.name} security={args.security} endpoints={endpoints}")

    def failed(error):
        core.log(f"FAILED {error}")
        status.append(1)
        loop.quit()

    gatt = dbus.Interface(bus.get_object(BLUEZ, adapter_path), "org.bluez.GattManager1")
    advertising = dbus.Interface(bus.get_object(BLUEZ, adapter_path), "org.bluez.LEAdvertisingManager1")
    gatt.RegisterApplication(app.path, {}, reply_handler=lambda: advertising.RegisterAdvertisement(
        advertisement.path, {}, reply_handler=registered, error_handler=failed), error_handler=failed)
    status = []
    loop = GLib.MainLoop()
    loop.run()
    sys.exit(status[0] if status else 0)


if __name__ == "__main__":
    main()
