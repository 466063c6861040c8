"""What the radio lab's GATT peripherals share over BlueZ (dbus-python, a GLib main loop).

An Application (org.freedesktop.DBus.ObjectManager) holds Services, which hold
Characteristics, which hold descriptors (UserDescription); each object's path follows its
parent's: <application>/service<N>/char<N>/desc<N>, numbered in the order they are made.
LEAdvertisement is an org.bluez.LEAdvertisement1. Peripheral powers the adapter and
registers the application and then the advertisements, one after another, reporting the
outcome through callbacks; on SIGUSR1 it advertises again.

Advertising again is what lets a scenario be sure a scanner hears the peripheral. A real
device advertises every interval; btvirt's emulated controllers (BlueZ 5.66, `btvirt -L`:
legacy advertising) send one advertising report, and only when advertising or scanning is
switched on (emulator/btdev.c, le_set_adv_enable_complete and cmd_set_scan_enable_complete),
and the kernel drops a report that arrives while its discovery is still starting (mgmt.c,
mgmt_device_found: not yet FINDING), which a loaded VM makes likely. A report made by
advertising again once the scanner's adapter says Discovering reaches it
(`advertise_until_heard` in lab/guest/lib.sh).

Used by lab/guest/improv_peripheral.py, lab/guest/gopro_peripheral.py and
lab/accessories/esp_prov_ble_device.py; it runs with /usr/bin/python3 (python3-dbus,
python3-gi).
"""

import signal

import dbus
import dbus.exceptions
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

BLUEZ = "org.bluez"
PROPS = "org.freedesktop.DBus.Properties"
ADAPTER = "org.bluez.Adapter1"
GATT_SERVICE = "org.bluez.GattService1"
GATT_CHARACTERISTIC = "org.bluez.GattCharacteristic1"
GATT_DESCRIPTOR = "org.bluez.GattDescriptor1"
LE_ADVERTISEMENT = "org.bluez.LEAdvertisement1"
USER_DESCRIPTION = "00002901-0000-1000-8000-00805f9b34fb"


class Failed(dbus.exceptions.DBusException):
    _dbus_error_name = "org.bluez.Error.Failed"


class InvalidOffset(dbus.exceptions.DBusException):
    _dbus_error_name = "org.bluez.Error.InvalidOffset"


class NotSupported(dbus.exceptions.DBusException):
    _dbus_error_name = "org.bluez.Error.NotSupported"


class Rejected(dbus.exceptions.DBusException):
    _dbus_error_name = "org.bluez.Error.Rejected"


def system_bus(threads=False):
    """The system bus with the GLib main loop as default (threads: dbus-python's thread
    support first, for programs that post from worker threads)."""
    if threads:
        dbus.mainloop.glib.threads_init()
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    return dbus.SystemBus()


def bytes_array(value):
    return dbus.Array(value, signature="y")


def slice_at(value, options):
    """`value` from the read's `offset` option on (InvalidOffset past its end)."""
    offset = int(options.get("offset", 0))
    if offset > len(value):
        raise InvalidOffset("offset %d beyond a value of %d bytes" % (offset, len(value)))
    return bytes_array(value[offset:])


class _PropertiesObject(dbus.service.Object):
    """An object whose Get and GetAll serve properties(), {interface: {name: value}}."""

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.properties()[interface][name]

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()[interface]


class Application(dbus.service.Object):
    """The GATT application at `path`: GetManagedObjects lists every service, then its
    characteristics, each followed by its descriptors."""

    def __init__(self, bus, path):
        self.bus, self.path = bus, path
        self.services = []
        dbus.service.Object.__init__(self, bus, path)

    def objects(self):
        for service in self.services:
            yield service
            for characteristic in service.characteristics:
                yield characteristic
                yield from characteristic.descriptors

    @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        return {dbus.ObjectPath(o.path): o.properties() for o in self.objects()}


class Service(dbus.service.Object):
    """A primary service, <application>/service<N>."""

    def __init__(self, application, uuid):
        self.bus, self.uuid = application.bus, uuid
        self.path = "%s/service%d" % (application.path, len(application.services))
        self.characteristics = []
        application.services.append(self)
        dbus.service.Object.__init__(self, self.bus, self.path)

    def properties(self):
        return {GATT_SERVICE: {"UUID": self.uuid, "Primary": True}}


class Characteristic(_PropertiesObject):
    """A characteristic, <service>/char<N>.

    value: when given (bytes), published as the Value property and what a read returns
      unless on_read is given; set() replaces it. Without it there is no Value property.
    on_read(options): the value a read returns (the whole of it: the read's offset is applied
      here). No on_read and no value: reads fail with NotSupported.
    on_write(value, options): takes a write of the whole value. Without it writes fail with
      NotSupported. A write with the prepare-authorize option is accepted without calling it
      (the value comes whole with the execute); one at a nonzero offset fails with
      InvalidOffset(partial_write_error).
    on_notify(notifying): told of StartNotify (True) and StopNotify (False).
    offsets=False keeps improv_peripheral.py's original handling: reads return the whole
      value whatever the offset, every write goes to on_write as it comes (a characteristic
      without on_write drops it).
    set(value) notifies subscribers with a PropertiesChanged of Value."""

    def __init__(self, service, uuid, flags, value=None, on_read=None, on_write=None, on_notify=None,
                 offsets=True, partial_write_error="a value must be written whole"):
        self.bus, self.service, self.uuid, self.flags = service.bus, service, uuid, flags
        self.path = "%s/char%d" % (service.path, len(service.characteristics))
        self.value = None if value is None else bytes(value)
        self.on_read, self.on_write, self.on_notify = on_read, on_write, on_notify
        self.offsets, self.partial_write_error = offsets, partial_write_error
        self.notifying = False
        self.descriptors = []
        service.characteristics.append(self)
        dbus.service.Object.__init__(self, self.bus, self.path)

    def properties(self):
        properties = {"Service": dbus.ObjectPath(self.service.path), "UUID": self.uuid,
                      "Flags": dbus.Array(self.flags, signature="s")}
        if self.value is not None:
            properties["Value"] = bytes_array(self.value)
        if self.descriptors:
            properties["Descriptors"] = dbus.Array([dbus.ObjectPath(d.path) for d in self.descriptors], signature="o")
        return {GATT_CHARACTERISTIC: properties}

    def set(self, value):
        """A new value (kept if the characteristic publishes one), notified if subscribed."""
        value = bytes(value)
        if self.value is not None:
            self.value = value
        if self.notifying:
            self.PropertiesChanged(GATT_CHARACTERISTIC, {"Value": bytes_array(value)}, [])

    @dbus.service.method(GATT_CHARACTERISTIC, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        if self.on_read is not None:
            value = self.on_read(options)
        elif self.value is not None:
            value = self.value
        else:
            raise NotSupported("not readable")
        return slice_at(value, options) if self.offsets else bytes_array(value)

    @dbus.service.method(GATT_CHARACTERISTIC, in_signature="aya{sv}")
    def WriteValue(self, value, options):
        if not self.offsets:
            if self.on_write is not None:
                self.on_write(bytes(value), options)
            return
        if self.on_write is None:
            raise NotSupported("not writable")
        if options.get("prepare-authorize"):
            return  # a prepared write being authorized: the value comes whole with the execute
        if int(options.get("offset", 0)) != 0:
            # BlueZ joins a long write's contiguous prepared writes into one write at offset 0.
            raise InvalidOffset(self.partial_write_error)
        self.on_write(bytes(value), options)

    @dbus.service.method(GATT_CHARACTERISTIC)
    def StartNotify(self):
        self.notifying = True
        if self.on_notify is not None:
            self.on_notify(True)

    @dbus.service.method(GATT_CHARACTERISTIC)
    def StopNotify(self):
        self.notifying = False
        if self.on_notify is not None:
            self.on_notify(False)

    @dbus.service.signal(PROPS, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass


class UserDescription(_PropertiesObject):
    """A read-only Characteristic User Description (0x2901) holding `text`, <characteristic>/desc<N>."""

    def __init__(self, characteristic, text):
        self.characteristic = characteristic
        self.path = "%s/desc%d" % (characteristic.path, len(characteristic.descriptors))
        self.value = text.encode()
        characteristic.descriptors.append(self)
        dbus.service.Object.__init__(self, characteristic.bus, self.path)

    def properties(self):
        return {GATT_DESCRIPTOR: {
            "Characteristic": dbus.ObjectPath(self.characteristic.path), "UUID": USER_DESCRIPTION,
            "Flags": dbus.Array(["read"], signature="s"), "Value": bytes_array(self.value)}}

    @dbus.service.method(GATT_DESCRIPTOR, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        return slice_at(self.value, options)


class LEAdvertisement(dbus.service.Object):
    """An org.bluez.LEAdvertisement1 at `path`: its properties are `properties` (a dict of
    LEAdvertisement1 properties) or what a subclass's properties() gives. Subclasses that
    change them announce it with PropertiesChanged."""

    def __init__(self, bus, path, properties=None):
        self.path = path
        self._properties = properties
        dbus.service.Object.__init__(self, bus, path)

    def properties(self):
        return self._properties

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()

    @dbus.service.signal(PROPS, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    @dbus.service.method(LE_ADVERTISEMENT)
    def Release(self):
        pass


class Peripheral:
    """The adapter /org/bluez/<adapter>: made, it is powered and given `alias`; register()
    then registers the application and the advertisements."""

    def __init__(self, bus, adapter, alias):
        self.bus = bus
        self.adapter_path = "/org/bluez/" + adapter
        properties = dbus.Interface(bus.get_object(BLUEZ, self.adapter_path), PROPS)
        properties.Set(ADAPTER, "Powered", dbus.Boolean(True))
        properties.Set(ADAPTER, "Alias", alias)

    def register(self, application, advertisements, ready, failed):
        """Registers `application`, then each of `advertisements` in turn, without blocking:
        calls ready() once all are registered, failed(error) at the first error (and
        registers nothing after it)."""
        gatt = dbus.Interface(self.bus.get_object(BLUEZ, self.adapter_path), "org.bluez.GattManager1")
        advertising = dbus.Interface(self.bus.get_object(BLUEZ, self.adapter_path), "org.bluez.LEAdvertisingManager1")
        remaining = list(advertisements)

        def next_advertisement(*_):
            if not remaining:
                ready()
                return
            advertising.RegisterAdvertisement(remaining.pop(0).path, {}, reply_handler=next_advertisement,
                                              error_handler=failed)

        gatt.RegisterApplication(application.path, {}, reply_handler=next_advertisement, error_handler=failed)

        def advertising_again_failed(error):
            print(f"ADVERTISING AGAIN FAILED {error}", flush=True)

        def advertise_again():
            for advertisement in advertisements:
                advertising.UnregisterAdvertisement(
                    advertisement.path, reply_handler=lambda a=advertisement: advertising.RegisterAdvertisement(
                        a.path, {}, reply_handler=lambda: print("ADVERTISED AGAIN", flush=True),
                        error_handler=advertising_again_failed),
                    error_handler=advertising_again_failed)
            return GLib.SOURCE_CONTINUE

        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, advertise_again)
