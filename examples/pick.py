#!/usr/bin/python3
"""Pick an accessory through the accessory-setup agent, as an application would.

    pick.py PROFILE [--items JSON] [--profiles DIR] [--timeout SECONDS] [--discovery-timeout SECONDS]
            [--admit RULE]... [--finish-discovery SECONDS]
            [--provision [--ssid SSID (--passphrase-file FILE | --open)] [--pop-file FILE]]

Opens a session on the agent (io.accessorysetup on the system bus) over the installed profile
PROFILE, activates it, shows the picker for the profile's first item (or for the items given
as a JSON array with --items), prints each event of the session, and prints the accessory the
picker added. The choice is made by the picker front end the agent uses for this client (the
kiosk policy, or a registered picker agent); the client never sees what the radios hear.

With --admit, the client filters discovery itself (filterDiscoveryResults, Apple's custom
filtering): the agent sends it each matching device as AccessoryDiscovered, with the access
point's fields and the Bluetooth advertisement's raw data, and the picker shows only what the
client passes back with UpdatePicker. A device is admitted when any RULE holds:

    ssid=TEXT, bssid=AA:BB:..., bluetoothAddress=AA:BB:..., bluetoothName=TEXT, security=wpa-psk|sae|...
    manufacturerData:COMPANY=HEX   (the company's data starts with these bytes; COMPANY 0x0BA9)
    serviceData:UUID=HEX           (the service's data starts with these bytes)

--finish-discovery SECONDS calls FinishPickerDiscovery that long after the picker is shown.

With --provision, the accessory added is then given a Wi-Fi network through the agent
(ProvisionAccessory), each step printed as the agent reports it: its setup hotspot is joined
first where it has one (JoinAccessoryHotspot) and left afterwards. The network is the one
--ssid names with the passphrase in --passphrase-file (or --open); without them, one this
computer stores, which polkit confirms with the person first (io.accessorysetup.share-network).
The proof of possession is the one typed in the picker where the profile asks for it, or the
one in --pop-file.

Exit status: 0 when an accessory was added, 1 when the picker ended without one or the agent
refused, 64 for bad usage. Only GIO's D-Bus bindings are used (Debian: python3-gi).
"""

import argparse
import json
import os
import sys

from gi.repository import Gio, GLib

AGENT = "io.accessorysetup"
MANAGER_PATH = "/io/accessorysetup"
MANAGER = "io.accessorysetup.Manager1"
SESSION = "io.accessorysetup.Session1"
PROFILE_DIRECTORIES = ["/etc/accessory-setup/profiles", "/usr/share/accessory-setup/profiles"]


def variant(value):
    """A JSON value as a GLib.Variant, as the agent reads picker items (a{sv} for objects)."""
    if isinstance(value, bool):
        return GLib.Variant("b", value)
    if isinstance(value, int):
        return GLib.Variant("x", value)
    if isinstance(value, float):
        return GLib.Variant("d", value)
    if isinstance(value, str):
        return GLib.Variant("s", value)
    if isinstance(value, dict):
        return GLib.Variant("a{sv}", {key: variant(member) for key, member in value.items()})
    if isinstance(value, list):
        if all(isinstance(element, str) for element in value):
            return GLib.Variant("as", value)
        return GLib.Variant("av", [variant(element) for element in value])
    raise ValueError(f"cannot send {value!r} over D-Bus")


def first_item(profile, directories):
    """The first display item of the installed profile with this id: `<id>.json`, else the
    file whose `id` it is, in the first directory that has one (as the agent looks it up)."""
    for directory in directories:
        try:
            names = sorted(name for name in os.listdir(directory) if name.endswith(".json"))
        except OSError:
            continue
        named = profile + ".json"
        for name in ([named] if named in names else []) + [name for name in names if name != named]:
            try:
                with open(os.path.join(directory, name), encoding="utf-8") as file:
                    document = json.load(file)
            except (OSError, ValueError):
                continue
            if isinstance(document, dict) and document.get("id") == profile and document.get("items"):
                item = document["items"][0]
                return {key: item[key] for key in ("name", "setupOptions", "descriptor") if key in item}
    raise ValueError(f"no profile {profile} in {', '.join(directories)}; give the items with --items")


def describe(accessory):
    text = f"{accessory.get('displayName', '?')} ({accessory.get('id', '?')}, {accessory.get('state', '?')})"
    if "ssid" in accessory:
        text += f" ssid {accessory['ssid']}"
    if "bluetoothIdentifier" in accessory:
        text += f" bluetooth {accessory['bluetoothIdentifier']}"
    return text


def describe_error(error):
    return f"{error.get('name', '?')}: {error.get('message', '')}"


def hex_bytes(data):
    return bytes(data).hex()


def describe_discovered(entry):
    """An AccessoryDiscovered entry on one line: its radios' fields and raw data."""
    parts = [f"entry {entry['entry']} (item {entry.get('item', 0)})"]
    for key in ("ssid", "bssid", "signal", "frequency", "bluetoothAddress", "bluetoothName", "rssi"):
        if key in entry:
            parts.append(f"{key} {entry[key]}")
    if "security" in entry:
        parts.append("security " + (" ".join(entry["security"]) or "open"))
    for company, data in sorted(entry.get("manufacturerData", {}).items()):
        parts.append(f"manufacturerData 0x{company:04X}={hex_bytes(data)}")
    for uuid, data in sorted(entry.get("serviceData", {}).items()):
        parts.append(f"serviceData {uuid}={hex_bytes(data)}")
    return ", ".join(parts)


def parse_rule(text):
    """An --admit rule as (field, key, value); ValueError naming the rule when malformed."""
    field, separator, value = text.partition("=")
    if not separator or not value:
        raise ValueError(f"--admit {text}: expected FIELD=VALUE")
    if field.startswith("manufacturerData:"):
        company = int(field.split(":", 1)[1], 0)
        if not 0 <= company <= 0xFFFF:
            raise ValueError(f"--admit {text}: the company identifier is 16 bits")
        return ("manufacturerData", company, bytes.fromhex(value))
    if field.startswith("serviceData:"):
        return ("serviceData", field.split(":", 1)[1].lower(), bytes.fromhex(value))
    if field in ("ssid", "bssid", "bluetoothAddress", "bluetoothName", "security"):
        return (field, None, value)
    raise ValueError(f"--admit {text}: unknown field {field}")


def admits(rule, entry):
    field, key, value = rule
    if field in ("manufacturerData", "serviceData"):
        data = {k.lower() if isinstance(k, str) else k: v for k, v in entry.get(field, {}).items()}
        return key in data and bytes(data[key]).startswith(value)
    if field == "security":
        return value in entry.get("security", [])
    if field in ("bssid", "bluetoothAddress"):
        return entry.get(field, "").upper() == value.upper()
    return entry.get(field) == value


def remote_error(error):
    """The D-Bus error as NAME: MESSAGE, without GDBus's own "GDBus.Error:NAME: " prefix."""
    name = Gio.DBusError.get_remote_error(error)
    prefix = f"GDBus.Error:{name}: "
    message = error.message[len(prefix):] if name and error.message.startswith(prefix) else error.message
    return f"{name or 'error'}: {message}"


def main():
    parser = argparse.ArgumentParser(description="Pick an accessory through the accessory-setup agent.")
    parser.add_argument("profile", help="the id of an installed profile, such as ge.wled.softap")
    parser.add_argument("--items", help="the picker items as a JSON array (default: the profile's first item)")
    parser.add_argument("--profiles", action="append", help="where to read the profile's items from")
    parser.add_argument("--timeout", type=int, default=60, help="give up after this many seconds (default 60)")
    parser.add_argument("--discovery-timeout",
                        help="let the agent search this many seconds, or 'unbounded' (default: the agent's, 30)")
    parser.add_argument("--admit", action="append", default=[], metavar="RULE",
                        help="filter discovery here: show a device only when a RULE holds (see above)")
    parser.add_argument("--finish-discovery", type=int, metavar="SECONDS",
                        help="call FinishPickerDiscovery this many seconds after the picker is shown")
    parser.add_argument("--provision", action="store_true",
                        help="then give the accessory a Wi-Fi network through the agent")
    parser.add_argument("--ssid", help="with --provision: the network to give")
    parser.add_argument("--passphrase-file", help="with --provision: the network's passphrase, in this file")
    parser.add_argument("--open", action="store_true", help="with --provision: the network named is open")
    parser.add_argument("--pop-file", help="with --provision: the proof of possession, in this file")
    arguments = parser.parse_args()

    try:
        items = json.loads(arguments.items) if arguments.items else [
            first_item(arguments.profile, arguments.profiles or PROFILE_DIRECTORIES)]
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise ValueError("--items must be a JSON array of objects")
        picker_items = [{key: variant(member) for key, member in item.items()} for item in items]
        rules = [parse_rule(rule) for rule in arguments.admit]
        timeout = arguments.discovery_timeout
        if timeout is not None and timeout != "unbounded" and not timeout.isdigit():
            raise ValueError("--discovery-timeout takes seconds or 'unbounded'")
        network = provisioning_options(arguments)
    except (ValueError, OSError) as error:
        print(f"pick.py: {error}", file=sys.stderr)
        return 64

    bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
    loop = GLib.MainLoop()
    outcome = {"added": None, "error": None}

    def call(path, interface, method, signature, values):
        parameters = GLib.Variant(signature, values) if signature else None
        return bus.call_sync(AGENT, path, interface, method, parameters, None,
                             Gio.DBusCallFlags.ALLOW_INTERACTIVE_AUTHORIZATION, 30000, None)

    try:
        session = call(MANAGER_PATH, MANAGER, "OpenSession", "(sa{sv})", (arguments.profile, {})).unpack()[0]
    except GLib.Error as error:
        print(f"pick.py: cannot open a session: {remote_error(error)}", file=sys.stderr)
        return 1
    print(f"session {session} over {arguments.profile}")

    def on_signal(_connection, _sender, _path, _interface, member, parameters):
        values = parameters.unpack()
        if member == "Activated":
            print(f"Activated: {len(values[0])} accessories already authorized")
        elif member in ("AccessoryAdded", "AccessoryChanged", "AccessoryRemoved"):
            print(f"{member}: {describe(values[0])}")
            if member == "AccessoryAdded":
                outcome["added"] = values[0]
        elif member in ("PickerDidDismiss", "PickerSetupFailed", "Invalidated"):
            error = values[0]
            print(f"{member}" + (f": {describe_error(error)}" if error else ""))
            if error:
                outcome["error"] = describe_error(error)
            if member != "PickerSetupFailed":
                loop.quit()
        elif member == "ProvisioningProgress":
            details = ", ".join(f"{key} {value}" for key, value in sorted(values[2].items()))
            print(f"ProvisioningProgress: {values[1]}" + (f" ({details})" if details else ""))
        elif member == "AccessoryDiscovered":
            entry = values[0]
            admitted = any(admits(rule, entry) for rule in rules)
            print(f"AccessoryDiscovered: {describe_discovered(entry)}: {'admitted' if admitted else 'not admitted'}")
            if admitted:
                shown = GLib.Variant("(aa{sv})", ([{"entry": GLib.Variant("u", entry["entry"]),
                                                    "name": GLib.Variant("s", entry["name"])}],))
                try:
                    bus.call_sync(AGENT, session, SESSION, "UpdatePicker", shown, None,
                                  Gio.DBusCallFlags.NONE, 30000, None)
                except GLib.Error as error:
                    print(f"UpdatePicker: {remote_error(error)}")
        else:
            print(member)

    # Subscribe before activating, so that no event is missed.
    bus.signal_subscribe(None, SESSION, None, session, None, Gio.DBusSignalFlags.NONE, on_signal)

    def give_up():
        outcome["error"] = f"no answer within {arguments.timeout} s"
        loop.quit()
        return GLib.SOURCE_REMOVE

    def shown(connection, result):
        try:
            connection.call_finish(result)
        except GLib.Error as error:
            outcome["error"] = remote_error(error)
            loop.quit()

    try:
        call(session, SESSION, "Activate", None, None)
    except GLib.Error as error:
        print(f"pick.py: cannot activate the session: {remote_error(error)}", file=sys.stderr)
        return 1
    settings = {}
    if timeout is not None:
        settings["discoveryTimeout"] = GLib.Variant("s", timeout) if timeout == "unbounded" else GLib.Variant(
            "u", int(timeout))
    if rules:
        settings["options"] = GLib.Variant("as", ["filterDiscoveryResults"])
    if arguments.provision:
        # The picker then says, before the person confirms, which network the accessory is given.
        settings["shareNetwork"] = GLib.Variant("s", arguments.ssid or "")
    bus.call(AGENT, session, SESSION, "ShowPicker", GLib.Variant("(aa{sv}a{sv})", (picker_items, settings)),
             None, Gio.DBusCallFlags.ALLOW_INTERACTIVE_AUTHORIZATION, 30000, None, shown)

    def finish_discovery():
        try:
            call(session, SESSION, "FinishPickerDiscovery", None, None)
            print("FinishPickerDiscovery")
        except GLib.Error as error:
            print(f"FinishPickerDiscovery: {remote_error(error)}")
        return GLib.SOURCE_REMOVE

    if arguments.finish_discovery is not None:
        GLib.timeout_add_seconds(arguments.finish_discovery, finish_discovery)
    GLib.timeout_add_seconds(arguments.timeout, give_up)
    loop.run()

    status = 0
    if outcome["added"] is not None and arguments.provision:
        status = provision(bus, session, outcome["added"], network)
    try:
        call(session, SESSION, "Invalidate", None, None)
    except GLib.Error:
        pass
    if outcome["added"] is not None:
        print(f"added: {describe(outcome['added'])}")
        return status
    print(f"pick.py: no accessory was added: {outcome['error'] or 'the picker ended'}", file=sys.stderr)
    return 1


def provisioning_options(arguments):
    """ProvisionAccessory's options from the command line; the secrets are read from files."""
    given = [name for name in ("ssid", "passphrase_file", "pop_file") if getattr(arguments, name)]
    if not arguments.provision:
        if given or arguments.open:
            raise ValueError("--ssid, --passphrase-file, --open and --pop-file go with --provision")
        return None
    options = {}
    if arguments.ssid:
        options["ssid"] = GLib.Variant("s", arguments.ssid)
    if arguments.passphrase_file or arguments.open:
        if not arguments.ssid:
            raise ValueError("name the network with --ssid")
        if arguments.open:
            options["open"] = GLib.Variant("b", True)
        else:
            options["passphrase"] = GLib.Variant("s", read_secret(arguments.passphrase_file))
    if arguments.pop_file:
        options["proofOfPossession"] = GLib.Variant("s", read_secret(arguments.pop_file))
    return options


def read_secret(path):
    with open(path, encoding="utf-8") as file:
        return file.readline().rstrip("\n")


def provision(bus, session, accessory, options):
    """Joins the accessory's hotspot where it has one, gives it the network, leaves the hotspot."""
    loop = GLib.MainLoop()
    result = {"status": 1}
    joined = False
    if accessory.get("ssid"):
        try:
            reply = bus.call_sync(AGENT, session, SESSION, "JoinAccessoryHotspot",
                                  GLib.Variant("(sa{sv})", (accessory["id"], {})), None,
                                  Gio.DBusCallFlags.ALLOW_INTERACTIVE_AUTHORIZATION, 120000, None).unpack()[0]
            print(f"joined {reply.get('ssid')} on {reply.get('device')}")
            joined = True
        except GLib.Error as error:
            print(f"pick.py: cannot join the accessory's hotspot: {remote_error(error)}", file=sys.stderr)
            return 1

    def finished(connection, answer):
        try:
            reply = connection.call_finish(answer).unpack()[0]
            where = f" at {reply['ipv4Address']}" if "ipv4Address" in reply else ""
            url = f"; it goes on at {reply['url']}" if "url" in reply else ""
            print(f"provisioned: the accessory joined {reply.get('ssid')}{where}{url}")
            result["status"] = 0
        except GLib.Error as error:
            print(f"pick.py: the accessory was not given the network: {remote_error(error)}", file=sys.stderr)
        loop.quit()

    bus.call(AGENT, session, SESSION, "ProvisionAccessory", GLib.Variant("(sa{sv})", (accessory["id"], options)),
             None, Gio.DBusCallFlags.ALLOW_INTERACTIVE_AUTHORIZATION, 900000, None, finished)
    loop.run()
    if joined:
        try:
            reply = bus.call_sync(AGENT, session, SESSION, "Leave", None, None, Gio.DBusCallFlags.NONE, 60000,
                                  None).unpack()[0]
            print(f"left {reply.get('ssid')}" + (f", back on {reply['restored']}" if "restored" in reply else ""))
        except GLib.Error as error:
            print(f"pick.py: cannot leave the accessory's hotspot: {remote_error(error)}", file=sys.stderr)
    return result["status"]


if __name__ == "__main__":
    sys.exit(main())
