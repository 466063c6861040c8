#!/usr/bin/python3
"""A GoPro camera's Wi-Fi access point handoff over real BlueZ, for the radio lab.

Written to the public Open GoPro BLE API (github.com/gopro/OpenGoPro, docs/ble): what
profiles/gopro.json declares, nothing the documentation leaves undefined.

GATT (GP-XXXX is b5f9XXXX-aa8d-11e3-9046-0002a5d5c51b), two primary services as on a camera:
  GP-0001 GoPro Wifi Access Point
    GP-0002 WiFi AP SSID      encrypt-read   the SSID bytes
    GP-0003 WiFi AP Password  encrypt-read   the passphrase, UTF-8
  FEA6 (0000fea6-0000-1000-8000-00805f9b34fb) Control & Query
    GP-0072 Command           encrypt-write
    GP-0073 Command Response  encrypt-notify
Every characteristic needs an encrypted link, so BlueZ itself refuses an unpaired client
(and the CCC write that subscribes to GP-0073). GP-0004 WiFi AP Power and GP-0005 WiFi AP
State are not served: the documentation gives no values for them.

Commands are GoPro packets: a start packet with the General (5-bit) or Extended (13-bit)
header, continuation packets (bit 7 set, 4-bit counter) for longer messages. The message
is a TLV command: the command ID, then length-value parameters. Set AP Control (0x17, one
uint8 mode: 0 disable, 1 enable, 2 bounce) runs --off-command / --on-command with
`bash -c` in a worker thread, one at a time in the order received, and answers on GP-0073
when the command has finished: 02 17 00 (success) when it exited 0, 02 17 01 (Error)
otherwise. Enabling an access point that is on, or disabling one that is off, runs nothing
and answers success. A malformed Set AP Control answers 02 17 02 (Invalid Parameter); any
other command ID answers 02 <id> 01 (Error). A packet whose header cannot be read is
dropped without an answer (there is no command ID to answer).

Advertising data: the 16-bit service UUID FEA6 and manufacturer data of GoPro, Inc.
(company 0x02F2) in the documented schema version 2 layout (camera status, model ID 62
HERO12 Black, capabilities: command and control); BlueZ puts the local name (--name, for
example "GoPro 1234") in the scan response. The camera status byte's WiFi AP bit follows
the access point. (The scan response's FEA6 service data is left out: BlueZ 5.66 cannot
place service data in the scan response, and it does not fit in the advertisement.)

The --report file gets one line per event, appended: `paired=true|false` for each write to
GP-0072 (Device1.Paired of the device BlueZ names in the write's `device` option;
`paired=unknown` if that cannot be read), `hotspot=on` / `hotspot=off` after each switch,
`hotspot=on-failed` / `hotspot=off-failed` when a command fails, `ssid-read` /
`passphrase-read` for each read (a long read's continuations at an offset are not counted).
The passphrase is read from --passphrase-file (a trailing newline dropped) and appears only
in GP-0003's read replies: never in the report, the output or D-Bus properties. The commands
get GOPRO_SSID and GOPRO_PASSPHRASE_FILE in their environment.

With --pairing-agent the program registers a NoInputNoOutput agent as bluetoothd's default
agent that accepts every pairing, as a camera in pairing mode does.

Runs as root with /usr/bin/python3 (python3-dbus, python3-gi). Prints READY once the
application and the advertisement are registered.

    gopro_peripheral.py --adapter hci0 --name "GoPro 1234" --ssid GP24501234 \\
        --passphrase-file /run/lab/gopro.pass --on-command "start-ap ..." \\
        --off-command "stop-ap ..." --report /lab/out/gopro-report.txt
"""

import argparse
import os
import queue
import subprocess
import sys
import threading

import dbus
import dbus.exceptions
import dbus.service
from gi.repository import GLib

import bluez_gatt as gatt
from bluez_gatt import BLUEZ, PROPS, Rejected

APP_PATH = "/io/accessorysetup/gopro"


def gp(short):
    """GoPro's 128-bit UUID for GP-<short>."""
    return "b5f9%s-aa8d-11e3-9046-0002a5d5c51b" % short


WIFI_AP_SERVICE = gp("0001")
WIFI_AP_SSID = gp("0002")
WIFI_AP_PASSWORD = gp("0003")
CONTROL_QUERY_SERVICE = "0000fea6-0000-1000-8000-00805f9b34fb"
COMMAND = gp("0072")
COMMAND_RESPONSE = gp("0073")

GOPRO_COMPANY = 0x02F2
SCHEMA_VERSION = 2
MODEL_ID = 62  # HERO12 Black
CAPABILITY_COMMAND_AND_CONTROL = 0x01
STATUS_PROCESSOR_AWAKE, STATUS_WIFI_AP_ON, STATUS_PAIRING = 0x01, 0x02, 0x04

SET_AP_CONTROL = 0x17
AP_DISABLE, AP_ENABLE, AP_BOUNCE = 0, 1, 2
SUCCESS, ERROR, INVALID_PARAMETER = 0, 1, 2


# ---------------------------------------------------------------------- the GoPro protocol


class PacketError(ValueError):
    """A packet that cannot be put into a message."""


class Depacketizer:
    """Puts GoPro packets back together into messages (docs/ble/protocol/data_protocol)."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.length = None
        self.buffer = bytearray()
        self.counter = 0

    def feed(self, packet):
        """The message `packet` completes, or None while more packets are due. Raises
        PacketError (and forgets the message in progress) for a packet it cannot take."""
        packet = bytes(packet)
        try:
            return self._feed(packet)
        except PacketError:
            self.reset()
            raise

    def _feed(self, packet):
        if not packet:
            raise PacketError("an empty packet")
        first = packet[0]
        if first & 0x80:
            if self.length is None:
                raise PacketError("a continuation packet without a start packet")
            if first & 0x0F != self.counter:
                raise PacketError("continuation counter %d, expected %d" % (first & 0x0F, self.counter))
            self.counter = (self.counter + 1) & 0x0F
            self.buffer += packet[1:]
        else:
            kind = (first >> 5) & 0x03
            if kind == 0:  # General: 5-bit length
                length, payload = first & 0x1F, packet[1:]
            elif kind == 1:  # Extended: 13-bit length
                if len(packet) < 2:
                    raise PacketError("an extended (13-bit) header cut short")
                length, payload = ((first & 0x1F) << 8) | packet[1], packet[2:]
            elif kind == 2:
                raise PacketError("the extended (16-bit) header is only for messages from the camera")
            else:
                raise PacketError("a reserved header type")
            self.reset()
            self.length = length
            self.buffer += payload
        if len(self.buffer) > self.length:
            raise PacketError("%d bytes for a message of %d" % (len(self.buffer), self.length))
        if len(self.buffer) < self.length:
            return None
        message = bytes(self.buffer)
        self.reset()
        return message


def general_packet(message):
    """`message` in one packet with the General (5-bit) header."""
    if len(message) > 0x1F:
        raise ValueError("a general packet holds at most 31 bytes")
    return bytes([len(message)]) + bytes(message)


def command_response(command_id, status):
    """The packet answering a TLV command: its ID and a status (02 17 00 for AP Control)."""
    return general_packet(bytes([command_id, status]))


def tlv_parameters(body):
    """The length-value parameters of a command; ValueError if a length overruns."""
    parameters = []
    index = 0
    while index < len(body):
        length = body[index]
        value = body[index + 1:index + 1 + length]
        if len(value) != length:
            raise ValueError("a parameter of %d bytes with %d left" % (length, len(value)))
        parameters.append(bytes(value))
        index += 1 + length
    return parameters


def decide(message):
    """What a command message asks: (command ID, AP mode to switch to) for a valid Set AP
    Control, (command ID, status to answer at once) otherwise, None for an empty message."""
    if not message:
        return None
    command_id, body = message[0], message[1:]
    if command_id != SET_AP_CONTROL:
        return command_id, ERROR
    try:
        parameters = tlv_parameters(body)
    except ValueError:
        return command_id, INVALID_PARAMETER
    if len(parameters) != 1 or len(parameters[0]) != 1 or parameters[0][0] not in (AP_DISABLE, AP_ENABLE, AP_BOUNCE):
        return command_id, INVALID_PARAMETER
    return command_id, ("mode", parameters[0][0])


def manufacturer_data(ap_on):
    """Schema version 2 manufacturer data after the company ID (advertisement bytes 11-22)."""
    status = STATUS_PROCESSOR_AWAKE | STATUS_PAIRING | (STATUS_WIFI_AP_ON if ap_on else 0)
    return bytes([SCHEMA_VERSION, status, MODEL_ID, CAPABILITY_COMMAND_AND_CONTROL]) + bytes(7) + bytes([0])


def read_passphrase(path):
    with open(path, "rb") as source:
        data = source.read()
    if data.endswith(b"\r\n"):
        data = data[:-2]
    elif data.endswith(b"\n"):
        data = data[:-1]
    return data


# ------------------------------------------------------------------------------- the camera


class Camera:
    """The access point and the commands that switch it. `run(command)` runs a shell command
    and says whether it exited 0; `post(function)` calls a function on the main loop;
    `answer(packet)` notifies on GP-0073; `report(line)` appends to the report."""

    def __init__(self, on_command, off_command, run, post, answer, report, ap_changed=lambda on: None):
        self.on_command, self.off_command = on_command, off_command
        self.run, self.post, self.answer, self.report = run, post, answer, report
        self.ap_changed = ap_changed
        self.ap_on = False
        self.depacketizer = Depacketizer()
        self.jobs = queue.Queue()

    def start(self):
        threading.Thread(target=self._work, daemon=True).start()

    def command_packet(self, packet):
        """A packet written to GP-0072 (on the main loop)."""
        try:
            message = self.depacketizer.feed(packet)
        except PacketError as error:
            log("COMMAND dropped: %s (%s)" % (error, bytes(packet).hex()))
            return
        if message is None:
            return
        log("COMMAND %s" % message.hex())
        decision = decide(message)
        if decision is None:
            log("COMMAND dropped: an empty message")
            return
        command_id, action = decision
        if isinstance(action, tuple):
            self.jobs.put((command_id, action[1]))
        else:
            # After the write's own response: a camera answers asynchronously.
            self.post(lambda: self.answer(command_response(command_id, action)))

    def _work(self):
        while True:
            command_id, mode = self.jobs.get()
            steps = {AP_DISABLE: [False], AP_ENABLE: [True], AP_BOUNCE: [False, True]}[mode]
            ok = True
            for on in steps:
                if on == self.ap_on:
                    continue
                ok = self.run(self.on_command if on else self.off_command)
                self.post(lambda on=on, ok=ok: self._switched(on, ok))
                if not ok:
                    break
                self.ap_on = on
            status = SUCCESS if ok else ERROR
            self.post(lambda status=status, command_id=command_id: self.answer(command_response(command_id, status)))

    def _switched(self, on, ok):
        self.report("hotspot=%s%s" % ("on" if on else "off", "" if ok else "-failed"))
        if ok:
            self.ap_changed(on)


def log(text):
    print(text, flush=True)


# ------------------------------------------------------------------------------ over BlueZ


class Advertisement(gatt.LEAdvertisement):
    """The camera's advertisement: FEA6 and GoPro's manufacturer data; the name goes to the
    scan response."""

    def __init__(self, bus, name):
        gatt.LEAdvertisement.__init__(self, bus, APP_PATH + "/advertisement")
        self.name = name
        self.ap_on = False

    def manufacturer(self):
        return dbus.Dictionary({dbus.UInt16(GOPRO_COMPANY): dbus.Array(manufacturer_data(self.ap_on), signature="y")},
                               signature="qv")

    def properties(self):
        return {"Type": "peripheral", "ServiceUUIDs": dbus.Array(["fea6"], signature="s"),
                "ManufacturerData": self.manufacturer(), "LocalName": self.name,
                "Includes": dbus.Array([], signature="s"), "Discoverable": dbus.Boolean(True)}

    def set_ap(self, on):
        self.ap_on = on
        self.PropertiesChanged(gatt.LE_ADVERTISEMENT, {"ManufacturerData": self.manufacturer()}, [])


class Agent(dbus.service.Object):
    """A NoInputNoOutput agent that accepts every pairing (Just Works)."""

    def __init__(self, bus):
        self.path = APP_PATH + "/agent"
        dbus.service.Object.__init__(self, bus, self.path)

    @dbus.service.method("org.bluez.Agent1")
    def Release(self):
        pass

    @dbus.service.method("org.bluez.Agent1", in_signature="os")
    def AuthorizeService(self, device, uuid):
        pass

    @dbus.service.method("org.bluez.Agent1", in_signature="o")
    def RequestAuthorization(self, device):
        pass

    @dbus.service.method("org.bluez.Agent1", in_signature="ou")
    def RequestConfirmation(self, device, passkey):
        pass

    @dbus.service.method("org.bluez.Agent1", in_signature="o", out_signature="s")
    def RequestPinCode(self, device):
        raise Rejected("no input")

    @dbus.service.method("org.bluez.Agent1", in_signature="o", out_signature="u")
    def RequestPasskey(self, device):
        raise Rejected("no input")

    @dbus.service.method("org.bluez.Agent1", in_signature="ouq")
    def DisplayPasskey(self, device, passkey, entered):
        pass

    @dbus.service.method("org.bluez.Agent1", in_signature="os")
    def DisplayPinCode(self, device, pincode):
        pass

    @dbus.service.method("org.bluez.Agent1")
    def Cancel(self):
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--adapter", default="hci0")
    parser.add_argument("--name", default="GoPro 1234", help="the advertised name")
    parser.add_argument("--ssid", required=True, help="the access point's SSID, served by GP-0002")
    parser.add_argument("--passphrase-file", required=True, help="holds the passphrase served by GP-0003")
    parser.add_argument("--on-command", required=True, help="bash command that starts the access point")
    parser.add_argument("--off-command", required=True, help="bash command that stops the access point")
    parser.add_argument("--report", required=True, help="file the events are appended to")
    parser.add_argument("--pairing-agent", action="store_true", help="accept every pairing (default agent)")
    args = parser.parse_args()
    ssid = args.ssid.encode()
    passphrase = read_passphrase(args.passphrase_file)
    environment = dict(os.environ, GOPRO_SSID=args.ssid, GOPRO_PASSPHRASE_FILE=os.path.abspath(args.passphrase_file))

    def report(line):
        with open(args.report, "a") as out:
            out.write(line + "\n")

    def run(command):
        log("RUN %s" % ("on-command" if command == args.on_command else "off-command"))
        code = subprocess.run(["bash", "-c", command], env=environment).returncode
        log("RUN exited %d" % code)
        return code == 0

    def post(function):
        def call():
            function()
            return False
        GLib.idle_add(call)

    bus = gatt.system_bus(threads=True)
    peripheral = gatt.Peripheral(bus, args.adapter, args.name)

    def paired(options):
        device = options.get("device")
        if device is None:
            return "unknown"
        try:
            value = dbus.Interface(bus.get_object(BLUEZ, device, introspect=False), PROPS).Get(
                "org.bluez.Device1", "Paired", timeout=5)
        except dbus.exceptions.DBusException as error:
            log("paired: %s" % error.get_dbus_name())
            return "unknown"
        return "true" if value else "false"

    app = gatt.Application(bus, APP_PATH)
    wifi = gatt.Service(app, WIFI_AP_SERVICE)
    control = gatt.Service(app, CONTROL_QUERY_SERVICE)
    advertisement = Advertisement(bus, args.name)

    def read(line, value):
        def on_read(options):
            if int(options.get("offset", 0)) == 0:
                report(line)
            return value
        return on_read

    # No Value properties: the values are served by ReadValue alone.
    gatt.Characteristic(wifi, WIFI_AP_SSID, ["encrypt-read"], on_read=read("ssid-read", ssid))
    gatt.Characteristic(wifi, WIFI_AP_PASSWORD, ["encrypt-read"], on_read=read("passphrase-read", passphrase))
    command = gatt.Characteristic(control, COMMAND, ["encrypt-write"], partial_write_error="a packet must be written whole")
    response = gatt.Characteristic(control, COMMAND_RESPONSE, ["encrypt-notify"])
    camera = Camera(args.on_command, args.off_command, run, post, response.set, report, advertisement.set_ap)

    def on_command_write(value, options):
        report("paired=%s" % paired(options))
        camera.command_packet(value)

    command.on_write = on_command_write
    camera.start()

    status = []
    loop = GLib.MainLoop()

    def registered():
        log("READY adapter=%s name=%s ssid=%s" % (args.adapter, args.name, args.ssid))

    def failed(error):
        log("FAILED %s" % error)
        status.append(1)
        loop.quit()

    if args.pairing_agent:
        agent = Agent(bus)
        agents = dbus.Interface(bus.get_object(BLUEZ, "/org/bluez"), "org.bluez.AgentManager1")
        agents.RegisterAgent(agent.path, "NoInputNoOutput")
        agents.RequestDefaultAgent(agent.path)

    peripheral.register(app, [advertisement], registered, failed)
    loop.run()
    sys.exit(status[0] if status else 0)


if __name__ == "__main__":
    main()
