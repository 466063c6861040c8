#!/usr/bin/python3
"""A stand-in for the accessory-setup agent, for the pickers' tests: it owns io.accessorysetup on
the system bus (DBUS_SYSTEM_BUS_ADDRESS) and asks the picker agents that register with it to show
REQUEST, a PickerAgent1.RequestChoice request as JSON, with ENTRIES (UpdateEntries' entries as a
JSON array). The real agent establishes the request's `application` from a sandboxed client's
connection; the stand-in sends whatever REQUEST says, so a test can show a picker as a Flatpak
application would have it shown.

    stand_in_agent.py REQUEST ENTRIES

A picker agent registered for a logind session (`session` in RegisterPickerAgent's options, the
graphical picker) is asked at once, for the session /io/accessorysetup/session/1. One registered
for its own connection (`accessoryctl pick`'s terminal picker) is asked when that connection
opens a session (OpenSession), activates it and calls ShowPicker; the session's Items are
REQUEST's items, and the picker's answer ends it with PickerDidDismiss. Prints one JSON object a
line: what it was asked and what the picker answered.
"""

import json
import os
import sys

from gi.repository import Gio, GLib

NAME = "io.accessorysetup"
MANAGER_PATH = "/io/accessorysetup"
SESSION_PREFIX = "/io/accessorysetup/session/"
DBUS_DIRECTORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "dbus")
# D-Bus types of the fields that are not strings or booleans.
FIELD_TYPES = {"entry": "u", "item": "u", "signal": "u", "user": "u", "rssi": "i"}


def say(**fields):
    print(json.dumps(fields), flush=True)


def interface(name):
    with open(os.path.join(DBUS_DIRECTORY, f"{name}.xml"), encoding="utf-8") as file:
        return Gio.DBusNodeInfo.new_for_xml(file.read()).lookup_interface(name)


def vardict(fields):
    """A JSON object as an a{sv} of the types PickerAgent1 carries."""
    members = {}
    for key, value in fields.items():
        if isinstance(value, bool):
            members[key] = GLib.Variant("b", value)
        elif isinstance(value, int):
            members[key] = GLib.Variant(FIELD_TYPES.get(key, "u"), value)
        elif isinstance(value, list):
            members[key] = GLib.Variant("aa{sv}", [vardict(element) for element in value])
        else:
            members[key] = GLib.Variant("s", str(value))
    return members


class StandInAgent:
    def __init__(self, request, entries):
        self.request = request
        self.entries = entries
        self.bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
        self.manager = interface("io.accessorysetup.Manager1")
        self.session = interface("io.accessorysetup.Session1")
        self.pickers = {}  # the sender's unique name -> the path of its picker agent
        self.sessions = {}  # the session's path -> the unique name of the client that opened it
        self.bus.register_object(MANAGER_PATH, self.manager, self.manager_call, None, None)

    def manager_call(self, connection, sender, path, interface_name, method, parameters, invocation):
        arguments = parameters.unpack()
        say(call=method, sender=sender, arguments=[str(argument) for argument in arguments])
        if method == "RegisterPickerAgent":
            picker, options = arguments
            self.pickers[sender] = picker
            invocation.return_value(None)
            if "session" in options:
                GLib.idle_add(self.show, sender, SESSION_PREFIX + "1", None)
        elif method == "UnregisterPickerAgent":
            self.pickers.pop(sender, None)
            invocation.return_value(None)
        elif method == "OpenSession":
            session = SESSION_PREFIX + str(len(self.sessions) + 1)
            self.sessions[session] = sender
            self.bus.register_object(session, self.session, self.session_call, self.session_property, None)
            invocation.return_value(GLib.Variant("(o)", (session,)))
        else:
            invocation.return_dbus_error("org.freedesktop.DBus.Error.NotSupported", f"the stand-in has no {method}")

    def session_call(self, connection, sender, path, interface_name, method, parameters, invocation):
        say(call=method, session=path)
        if self.sessions.get(path) != sender:
            invocation.return_dbus_error("io.accessorysetup.Error.NotAuthorized", "not this caller's session")
            return
        invocation.return_value(None)
        if method == "Activate":
            self.emit(path, "Activated", GLib.Variant("(aa{sv})", ([],)))
        elif method == "ShowPicker":
            self.emit(path, "PickerDidPresent", None)
            self.show(sender, path, sender)

    def session_property(self, connection, sender, path, interface_name, name):
        if name == "Items":
            return GLib.Variant("aa{sv}", [vardict(item) for item in self.request.get("items", [])])
        if name == "Accessories":
            return GLib.Variant("aa{sv}", [])
        return GLib.Variant("s", {"Profile": self.request.get("profile", ""), "State": "activated"}.get(name, ""))

    def emit(self, session, signal, parameters):
        self.bus.emit_signal(self.sessions[session], session, "io.accessorysetup.Session1", signal, parameters)

    def show(self, owner, session, client):
        """Sends the entries and asks the picker agent of `owner` for a choice in `session`."""
        picker = self.pickers.get(owner)
        if picker is None:
            say(failure=f"{owner} registered no picker agent")
            return False
        entries = GLib.Variant("(oaa{sv}au)", (session, [vardict(entry) for entry in self.entries], []))
        self.bus.call(owner, picker, "io.accessorysetup.PickerAgent1", "UpdateEntries", entries, None,
                      Gio.DBusCallFlags.NO_AUTO_START, -1, None, None)
        request = GLib.Variant("(oa{sv})", (session, vardict(self.request)))
        say(requested=session, application=self.request.get("application"))

        def answered(bus, result):
            try:
                entry, answer = bus.call_finish(result).unpack()
                say(chose=entry, answer=answer)
                dismissal = {}
            except GLib.Error as error:
                name = Gio.DBusError.get_remote_error(error) or ""
                Gio.DBusError.strip_remote_error(error)
                say(cancelled=name, message=error.message)
                dismissal = {"name": GLib.Variant("s", name), "message": GLib.Variant("s", error.message)}
            if client is not None:
                self.emit(session, "PickerDidDismiss", GLib.Variant("(a{sv})", (dismissal,)))

        self.bus.call(owner, picker, "io.accessorysetup.PickerAgent1", "RequestChoice", request,
                      GLib.VariantType.new("(ua{sv})"), Gio.DBusCallFlags.NO_AUTO_START, 600_000, None, answered)
        return False


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    agent = StandInAgent(json.loads(sys.argv[1]), json.loads(sys.argv[2]))
    reply = agent.bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                "RequestName", GLib.Variant("(su)", (NAME, 4)), GLib.VariantType.new("(u)"),
                                Gio.DBusCallFlags.NONE, -1, None)
    if reply.unpack()[0] != 1:
        sys.exit(f"cannot own {NAME}: RequestName answered {reply.unpack()[0]}")
    say(owned=NAME)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
