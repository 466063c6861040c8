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
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

BLUEZ = "org.bluez"
SERVICE = "00467768-6228-2272-4663-277478268000"
STATE, ERROR, RPC_COMMAND, RPC_RESULT, CAPABILITIES = (
    "00467768-6228-2272-4663-27747826800%d" % n for n in range(1, 6))
AUTHORIZATION_REQUIRED, AUTHORIZED, PROVISIONING, PROVISIONED = 1, 2, 3, 4
NO_ERROR, INVALID_RPC, UNKNOWN_RPC = 0, 1, 2
REDIRECT = "http://192.168.4.1/setup"
PROPS = "org.freedesktop.DBus.Properties"


def checksum(data):
    return sum(data) & 0xFF


def frame(command, strings):
    payload = b"".join(bytes([len(s)]) + s for s in strings)
    packet = bytes([command, len(payload)]) + payload
    return packet + bytes([checksum(packet)])


class Characteristic(dbus.service.Object):
    def __init__(self, bus, service, index, uuid, flags, value=b""):
        self.path = "%s/char%d" % (service.path, index)
        self.service, self.uuid, self.flags = service, uuid, flags
        self.value = bytes(value)
        self.notifying = False
        self.on_write = None
        dbus.service.Object.__init__(self, bus, self.path)

    def properties(self):
        return {"org.bluez.GattCharacteristic1": {
            "Service": dbus.ObjectPath(self.service.path), "UUID": self.uuid,
            "Flags": dbus.Array(self.flags, signature="s"),
            "Value": dbus.Array(self.value, signature="y")}}

    def set(self, value):
        self.value = bytes(value)
        if self.notifying:
            self.PropertiesChanged("org.bluez.GattCharacteristic1",
                                   {"Value": dbus.Array(self.value, signature="y")}, [])

    @dbus.service.method("org.bluez.GattCharacteristic1", in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        return dbus.Array(self.value, signature="y")

    @dbus.service.method("org.bluez.GattCharacteristic1", in_signature="aya{sv}")
    def WriteValue(self, value, options):
        if self.on_write:
            self.on_write(bytes(value))

    @dbus.service.method("org.bluez.GattCharacteristic1")
    def StartNotify(self):
        self.notifying = True

    @dbus.service.method("org.bluez.GattCharacteristic1")
    def StopNotify(self):
        self.notifying = False

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.properties()[interface][name]

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()[interface]

    @dbus.service.signal(PROPS, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass


class Service(dbus.service.Object):
    def __init__(self, bus, path):
        self.path = path
        dbus.service.Object.__init__(self, bus, path)

    def properties(self):
        return {"org.bluez.GattService1": {"UUID": SERVICE, "Primary": True}}


class Application(dbus.service.Object):
    def __init__(self, bus, objects):
        self.path = "/io/accessorysetup/lab"
        self.objects = objects
        dbus.service.Object.__init__(self, bus, self.path)

    @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        return {dbus.ObjectPath(o.path): o.properties() for o in self.objects}


class LEAdvertisement(dbus.service.Object):
    """An org.bluez.LEAdvertisement1 whose properties() subclasses give."""

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()

    @dbus.service.method("org.bluez.LEAdvertisement1")
    def Release(self):
        pass


class Advertisement(LEAdvertisement):
    """Improv's advertisement: the service UUID and the 4677 service data, which fill it."""

    def __init__(self, bus, name):
        self.path = "/io/accessorysetup/lab/advertisement"
        self.name = name
        self.service_data = bytes([AUTHORIZATION_REQUIRED, 0x01, 0, 0, 0, 0])
        dbus.service.Object.__init__(self, bus, self.path)

    def properties(self):
        return {"Type": "peripheral", "ServiceUUIDs": dbus.Array([SERVICE], signature="s"),
                "ServiceData": dbus.Dictionary({"4677": dbus.Array(self.service_data, signature="y")}, signature="sv"),
                "LocalName": self.name, "Includes": dbus.Array([], signature="s")}


class VendorAdvertisement(LEAdvertisement):
    """A second advertising instance with the vendor's manufacturer data (test company
    0xFFFF: a model and a version byte); the controller takes turns with the first."""

    def __init__(self, bus):
        self.path = "/io/accessorysetup/lab/advertisement1"
        dbus.service.Object.__init__(self, bus, self.path)

    def properties(self):
        return {"Type": "peripheral", "Includes": dbus.Array([], signature="s"),
                "ManufacturerData": dbus.Dictionary({dbus.UInt16(0xFFFF): dbus.Array([0x4C, 0x01], signature="y")},
                                                    signature="qv")}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--adapter", default="hci0")
    parser.add_argument("--report", required=True)
    parser.add_argument("--authorize-after", type=float, default=3.0)
    args = parser.parse_args()

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    adapter_path = "/org/bluez/" + args.adapter
    adapter = dbus.Interface(bus.get_object(BLUEZ, adapter_path), PROPS)
    adapter.Set("org.bluez.Adapter1", "Powered", dbus.Boolean(True))
    adapter.Set("org.bluez.Adapter1", "Alias", "improv-lab-light")

    service = Service(bus, "/io/accessorysetup/lab/service0")
    state = Characteristic(bus, service, 0, STATE, ["read", "notify"], [AUTHORIZATION_REQUIRED])
    error = Characteristic(bus, service, 1, ERROR, ["read", "notify"], [NO_ERROR])
    command = Characteristic(bus, service, 2, RPC_COMMAND, ["write"])
    result = Characteristic(bus, service, 3, RPC_RESULT, ["read", "notify"])
    capabilities = Characteristic(bus, service, 4, CAPABILITIES, ["read"], [0x01])
    app = Application(bus, [service, state, error, command, result, capabilities])
    advertisement = Advertisement(bus, "improv-lab-light")
    vendor_advertisement = VendorAdvertisement(bus)

    incoming = bytearray()

    def on_write(data):
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
                result.set(frame(0x01, [REDIRECT.encode()]))
                return False
            GLib.timeout_add(500, done)
        else:
            error.set([UNKNOWN_RPC])

    command.on_write = on_write

    def authorize():
        state.set([AUTHORIZED])
        print("AUTHORIZED", flush=True)
        return False

    def registered(*_):
        print("READY", flush=True)
        GLib.timeout_add(int(args.authorize_after * 1000), authorize)

    def failed(error_value):
        print("FAILED", error_value, flush=True)
        sys.exit(1)

    gatt = dbus.Interface(bus.get_object(BLUEZ, adapter_path), "org.bluez.GattManager1")
    advertising = dbus.Interface(bus.get_object(BLUEZ, adapter_path), "org.bluez.LEAdvertisingManager1")
    def register_vendor_advertisement():
        advertising.RegisterAdvertisement(vendor_advertisement.path, {}, reply_handler=registered, error_handler=failed)

    gatt.RegisterApplication(app.path, {}, reply_handler=lambda: advertising.RegisterAdvertisement(
        advertisement.path, {}, reply_handler=register_vendor_advertisement, error_handler=failed), error_handler=failed)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
