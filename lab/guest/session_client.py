#!/usr/bin/python3
"""A client of the agent for the radio lab's scenarios that run as other users: it holds what a
scenario then ends by killing it. Prints one JSON object a line.

    session_client.py picker PROFILE ITEMS   registers a picker agent on its own connection that
        never answers, opens a session over PROFILE, shows a picker for ITEMS (a JSON array)
        and prints {"requestChoice": SESSION} when the agent asks it to choose; then waits.
    session_client.py join PROFILE ID        opens a session, activates it and calls
        JoinAccessoryHotspot for ID; prints {"reply": ...} or {"error": NAME, "message": ...}.
"""

import json
import sys

from gi.repository import Gio, GLib

AGENT = "io.accessorysetup"
MANAGER_PATH = "/io/accessorysetup"
MANAGER = "io.accessorysetup.Manager1"
SESSION = "io.accessorysetup.Session1"
PICKER_PATH = "/io/accessorysetup/lab/picker"
# The interface as the package installs it.
PICKER_XML_FILE = "/usr/share/dbus-1/interfaces/io.accessorysetup.PickerAgent1.xml"

bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)


def emit(record):
    print(json.dumps(record, default=str), flush=True)


def call(path, interface, method, signature, values, timeout=30000):
    parameters = GLib.Variant(signature, values) if signature else None
    return bus.call_sync(AGENT, path, interface, method, parameters, None, Gio.DBusCallFlags.NONE, timeout, None)


def open_session(profile):
    path = call(MANAGER_PATH, MANAGER, "OpenSession", "(sa{sv})", (profile, {})).unpack()[0]
    call(path, SESSION, "Activate", None, None)
    emit({"session": path})
    return path


def picker(profile, items):
    held = []

    def on_call(_connection, _sender, _path, _interface, method, parameters, invocation):
        if method == "RequestChoice":
            held.append(invocation)  # never answered
            emit({"requestChoice": parameters.unpack()[0]})
        else:
            invocation.return_value(None)

    with open(PICKER_XML_FILE, encoding="utf-8") as xml:
        node = Gio.DBusNodeInfo.new_for_xml(xml.read())
    bus.register_object(PICKER_PATH, node.interfaces[0], on_call, None, None)
    call(MANAGER_PATH, MANAGER, "RegisterPickerAgent", "(oa{sv})", (PICKER_PATH, {}))
    path = open_session(profile)
    variants = [{key: GLib.Variant("s", value) if isinstance(value, str) else
                 GLib.Variant("a{sv}", {k: GLib.Variant("s", v) for k, v in value.items()})
                 for key, value in item.items()} for item in items]
    bus.call(AGENT, path, SESSION, "ShowPicker", GLib.Variant("(aa{sv}a{sv})", (variants, {})),
             None, Gio.DBusCallFlags.NONE, 30000, None, None, None)
    GLib.MainLoop().run()


def join(profile, accessory):
    path = open_session(profile)
    try:
        reply = call(path, SESSION, "JoinAccessoryHotspot", "(sa{sv})", (accessory, {}), timeout=180000)
        emit({"reply": reply.unpack()[0]})
        return 0
    except GLib.Error as error:
        emit({"error": Gio.DBusError.get_remote_error(error), "message": error.message})
        return 1


def main(arguments):
    if arguments[:1] == ["picker"] and len(arguments) == 3:
        return picker(arguments[1], json.loads(arguments[2]))
    if arguments[:1] == ["join"] and len(arguments) == 3:
        return join(arguments[1], arguments[2])
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
