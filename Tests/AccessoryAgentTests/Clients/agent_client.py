#!/usr/bin/python3
"""A client of the accessory-setup agent for the tests that need another user id (run with
setpriv). Each command prints one JSON object a line: {"call": ..., "reply": ...} or
{"call": ..., "error": NAME, "message": ...}, and events as {"event": MEMBER, "args": [...]}.

    agent_client.py list [USER]             Manager1.ListAccessories (of USER with a uid)
    agent_client.py show ID                 Manager1.GetAccessory
    agent_client.py join ID                 Manager1.JoinAccessory
    agent_client.py provision ID OPTIONS    Manager1.ProvisionAccessory with OPTIONS (a JSON object);
        prints each ProvisioningProgress as {"event": ..., "args": [...]} before the reply
    agent_client.py remove ID               Manager1.RemoveAccessory
    agent_client.py rename ID NAME          Manager1.RenameAccessory
    agent_client.py report ACTION UUID      Manager1.ReportConnection
    agent_client.py leave [USER]            Manager1.Leave (of USER with a uid)
    agent_client.py open PROFILE            Manager1.OpenSession, and nothing more
    agent_client.py activate PROFILE        Manager1.OpenSession and Session1.Activate; prints Activated
    agent_client.py open-fd JSON            Manager1.OpenSessionWithProfile, the profile JSON through a pipe
    agent_client.py register-picker         Manager1.RegisterPickerAgent for the connection's own sessions
    agent_client.py monitor SECONDS [TYPE]  Manager1.Subscribe, then every Event for SECONDS (or until
        one of TYPE arrives) as {"event": "Event", "session": PATH, "type": N, "accessory": {...}}
    agent_client.py latency SECONDS [PROFILE]
        Manager1.ListAccessories again and again for SECONDS (with PROFILE also OpenSession of it,
        which polkit decides, and Session1.Invalidate); prints {"calls": N, "slowest": SECONDS,
        "failed": N, "errors": [...]}
    agent_client.py list-long BYTES         Manager1.ListAccessories of root's records (polkit's
        manage-others, interactive) with a `profile` option BYTES long; gives up after 10 s
    agent_client.py stall-profiles COUNT    COUNT Manager1.OpenSessionWithProfile calls, one every 50 ms
        over 4 connections, each through a pipe whose writer never closes it; prints
        {"errors": {NAME: N}, "messages": [...]}
    agent_client.py flood SECONDS COUNT PROFILE ITEMS
        COUNT pickers shown (ITEMS, a JSON array) to picker agents of its own that never answer,
        and COUNT interactive polkit checks (ListAccessories of root's records), all at once;
        after SECONDS prints {"pickers": {...}, "polkit": {...}}, each {"held": N, "errors": {NAME: N}}
    agent_client.py open-sessions COUNT PROFILE SECONDS
        COUNT Manager1.OpenSession calls at once (interactive authorization allowed); after
        SECONDS prints {"answered": N, "held": N, "errors": {NAME: N}, "messages": [...]}
    agent_client.py pick PROFILE ITEMS [--picker SSID|ADDRESS] [--join]
        opens a session, activates, shows a picker for ITEMS (a JSON array) and prints the
        events until PickerDidDismiss; with --picker it registers a picker agent on its own
        connection that chooses the entry with that SSID; with --join it then joins the
        accessory's hotspot in that session (Session1.JoinAccessoryHotspot).

Exit status 0 when every call succeeded, 1 when one was refused, 2 on a timeout.
"""

import json
import os
import sys
import time

from gi.repository import Gio, GLib

AGENT = "io.accessorysetup"
MANAGER_PATH = "/io/accessorysetup"
MANAGER = "io.accessorysetup.Manager1"
SESSION = "io.accessorysetup.Session1"
PICKER_PATH = "/io/accessorysetup/test/gio_picker"
# The interface as the repository defines it (dbus/).
PICKER_XML_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "dbus",
                               "io.accessorysetup.PickerAgent1.xml")

bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)


def emit(record):
    print(json.dumps(record, default=str), flush=True)


def variant(value):
    if isinstance(value, bool):
        return GLib.Variant("b", value)
    if isinstance(value, int):
        return GLib.Variant("x", value)
    if isinstance(value, str):
        return GLib.Variant("s", value)
    if isinstance(value, dict):
        return GLib.Variant("a{sv}", {key: variant(member) for key, member in value.items()})
    if isinstance(value, list):
        if all(isinstance(element, str) for element in value):
            return GLib.Variant("as", value)
        return GLib.Variant("av", [variant(element) for element in value])
    raise ValueError(repr(value))


def remote_error(error):
    """The D-Bus error name and the message without GDBus's "GDBus.Error:NAME: " prefix."""
    name = Gio.DBusError.get_remote_error(error)
    prefix = f"GDBus.Error:{name}: "
    message = error.message[len(prefix):] if name and error.message.startswith(prefix) else error.message
    return name, message


def call(method, signature=None, values=None, path=MANAGER_PATH, interface=MANAGER):
    """Calls the agent; prints the reply or the error and returns (ok, reply)."""
    parameters = GLib.Variant(signature, values) if signature else None
    try:
        reply = bus.call_sync(AGENT, path, interface, method, parameters, None, Gio.DBusCallFlags.NONE, 30000, None)
    except GLib.Error as error:
        name, message = remote_error(error)
        emit({"call": method, "error": name, "message": message})
        return False, None
    values = reply.unpack() if reply is not None else ()
    emit({"call": method, "reply": list(values)})
    return True, values


def pick(profile, items, choose_ssid, join=False):
    loop = GLib.MainLoop()
    state = {"pending": None, "entries": {}, "status": 0, "added": None}

    def answer_if_possible():
        invocation = state["pending"]
        if invocation is None:
            return
        for entry_id, entry in sorted(state["entries"].items()):
            if choose_ssid in (entry.get("ssid"), entry.get("bluetoothAddress")):
                state["pending"] = None
                invocation.return_value(GLib.Variant("(ua{sv})", (entry_id, {})))
                return

    def on_picker_call(_connection, _sender, _path, _interface, method, parameters, invocation):
        values = parameters.unpack()
        emit({"picker": method, "args": list(values)})
        if method == "RequestChoice":
            state["pending"] = invocation
        else:
            if method == "UpdateEntries":
                for entry in values[1]:
                    state["entries"][entry["entry"]] = entry
                for removed in values[2]:
                    state["entries"].pop(removed, None)
            invocation.return_value(None)
        answer_if_possible()

    if choose_ssid is not None:
        with open(PICKER_XML_FILE, encoding="utf-8") as xml:
            node = Gio.DBusNodeInfo.new_for_xml(xml.read())
        bus.register_object(PICKER_PATH, node.interfaces[0], on_picker_call, None, None)
        ok, _ = call("RegisterPickerAgent", "(oa{sv})", (PICKER_PATH, {}))
        if not ok:
            return 1

    ok, reply = call("OpenSession", "(sa{sv})", (profile, {}))
    if not ok:
        return 1
    session = reply[0]

    # Migration items alone show no picker: their MigrationComplete is the end.
    migration_only = all("hotspotSSID" in item or "peripheralAddress" in item for item in items)

    def on_signal(_connection, _sender, _path, _interface, member, parameters):
        emit({"event": member, "args": list(parameters.unpack())})
        if member == "AccessoryAdded":
            state["added"] = parameters.unpack()[0]["id"]
        if member == "PickerDidDismiss" or (member == "MigrationComplete" and migration_only):
            loop.quit()

    bus.signal_subscribe(None, SESSION, None, session, None, Gio.DBusSignalFlags.NONE, on_signal)
    ok, _ = call("Activate", path=session, interface=SESSION)
    if not ok:
        return 1

    def shown(connection, result):
        try:
            connection.call_finish(result)
            emit({"call": "ShowPicker", "reply": []})
        except GLib.Error as error:
            name, message = remote_error(error)
            emit({"call": "ShowPicker", "error": name, "message": message})
            state["status"] = 1
            loop.quit()

    def timed_out():
        emit({"timeout": True})
        state["status"] = 2
        loop.quit()
        return GLib.SOURCE_REMOVE

    picker_items = [{key: variant(member) for key, member in item.items()} for item in items]
    bus.call(AGENT, session, SESSION, "ShowPicker", GLib.Variant("(aa{sv}a{sv})", (picker_items, {})),
             None, Gio.DBusCallFlags.NONE, 30000, None, shown)
    GLib.timeout_add_seconds(30, timed_out)
    loop.run()
    if join and state["status"] == 0:
        # In the picking session, which holds what the picker or the kiosk policy supplied.
        ok, _ = call("JoinAccessoryHotspot", "(sa{sv})", (state["added"] or "", {}), path=session, interface=SESSION)
        return 0 if ok else 1
    return state["status"]


def open_with_profile(text):
    """OpenSessionWithProfile with `text` written into a pipe whose read end is passed."""
    read_end, write_end = os.pipe()
    os.write(write_end, text.encode())
    os.close(write_end)
    descriptors = Gio.UnixFDList.new()
    index = descriptors.append(read_end)
    os.close(read_end)
    try:
        reply, _ = bus.call_with_unix_fd_list_sync(
            AGENT, MANAGER_PATH, MANAGER, "OpenSessionWithProfile", GLib.Variant("(ha{sv})", (index, {})),
            None, Gio.DBusCallFlags.NONE, 30000, descriptors, None)
    except GLib.Error as error:
        name, message = remote_error(error)
        emit({"call": "OpenSessionWithProfile", "error": name, "message": message})
        return 1
    emit({"call": "OpenSessionWithProfile", "reply": list(reply.unpack())})
    return 0


def activate(profile):
    """Opens a session, activates it and prints its Activated signal."""
    loop = GLib.MainLoop()
    ok, reply = call("OpenSession", "(sa{sv})", (profile, {}))
    if not ok:
        return 1

    def on_signal(_connection, _sender, _path, _interface, member, parameters):
        emit({"event": member, "args": list(parameters.unpack())})
        if member == "Activated":
            loop.quit()

    bus.signal_subscribe(None, SESSION, None, reply[0], None, Gio.DBusSignalFlags.NONE, on_signal)
    ok, _ = call("Activate", path=reply[0], interface=SESSION)
    if not ok:
        return 1
    GLib.timeout_add_seconds(30, loop.quit)
    loop.run()
    return 0


def monitor(seconds, until_type):
    """Prints the Manager1.Event signals this connection hears for `seconds` after Subscribe, or
    until one of `until_type` arrives."""
    loop = GLib.MainLoop()

    def on_event(_connection, _sender, _path, _interface, _member, parameters):
        session, event_type, accessory, _error = parameters.unpack()
        emit({"event": "Event", "session": session, "type": event_type, "accessory": accessory})
        if event_type == until_type:
            loop.quit()

    bus.signal_subscribe(AGENT, MANAGER, "Event", MANAGER_PATH, None, Gio.DBusSignalFlags.NONE, on_event)
    ok, _ = call("Subscribe")
    if not ok:
        return 1
    GLib.timeout_add(int(seconds * 1000), loop.quit)
    loop.run()
    return 0


def latency(seconds, profile=None):
    """Times ListAccessories calls, one after another, while something else loads the agent; with
    `profile`, also an OpenSession of it (which asks polkit) and the session's Invalidate."""
    calls, failed, slowest, errors = 0, 0, 0.0, []

    def timed(path, interface, method, parameters):
        nonlocal calls, failed, slowest
        start = time.monotonic()
        reply = None
        try:
            reply = bus.call_sync(AGENT, path, interface, method, parameters, None, Gio.DBusCallFlags.NONE, 30000,
                                  None)
        except GLib.Error as error:
            failed += 1
            if len(errors) < 5:
                errors.append(list(remote_error(error)))
        slowest = max(slowest, time.monotonic() - start)
        calls += 1
        return reply

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        timed(MANAGER_PATH, MANAGER, "ListAccessories", GLib.Variant("(a{sv})", ({},)))
        if profile is not None:
            reply = timed(MANAGER_PATH, MANAGER, "OpenSession", GLib.Variant("(sa{sv})", (profile, {})))
            if reply is not None:
                timed(reply.unpack()[0], SESSION, "Invalidate", None)
        time.sleep(0.05)
    emit({"calls": calls, "slowest": slowest, "failed": failed, "errors": errors})
    return 0 if failed == 0 else 1


def stall_profiles(count):
    """`count` OpenSessionWithProfile calls at once, each through a pipe never closed."""
    loop = GLib.MainLoop()
    address = os.environ["DBUS_SYSTEM_BUS_ADDRESS"]
    flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
    connections = [Gio.DBusConnection.new_for_address_sync(address, flags, None, None) for _ in range(4)]
    errors = {}
    writers = []
    state = {"left": count}

    def done(connection, result):
        try:
            connection.call_with_unix_fd_list_finish(result)
            errors["answered"] = errors.get("answered", 0) + 1
        except GLib.Error as error:
            name, message = remote_error(error)
            errors[name] = errors.get(name, 0) + 1
            messages.append(message)
        state["left"] -= 1
        if state["left"] == 0:
            loop.quit()

    messages = []

    def send_next():
        index = count - state["sent"]
        state["sent"] -= 1
        read_end, write_end = os.pipe()
        writers.append(write_end)
        descriptors = Gio.UnixFDList.new()
        descriptors.append(read_end)
        os.close(read_end)
        connections[index % len(connections)].call_with_unix_fd_list(
            AGENT, MANAGER_PATH, MANAGER, "OpenSessionWithProfile", GLib.Variant("(ha{sv})", (0, {})), None,
            Gio.DBusCallFlags.NONE, 60000, descriptors, None, done)
        return GLib.SOURCE_CONTINUE if state["sent"] > 0 else GLib.SOURCE_REMOVE

    # One every 50 ms: each passes polkit before the next comes, and stays in flight for the
    # 5 s the agent waits on its pipe, so they pile up in the agent, not at polkit.
    state["sent"] = count
    GLib.timeout_add(50, send_next)
    GLib.timeout_add_seconds(60, loop.quit)
    loop.run()
    emit({"errors": errors, "messages": sorted(set(messages))})
    return 0


def flood(seconds, count, profile, items):
    """One user's `count` pickers on picker agents that never answer, and `count` interactive
    polkit checks, all outstanding at once; what became of them after `seconds`."""
    loop = GLib.MainLoop()
    address = os.environ["DBUS_SYSTEM_BUS_ADDRESS"]
    flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
    with open(PICKER_XML_FILE, encoding="utf-8") as xml:
        interface = Gio.DBusNodeInfo.new_for_xml(xml.read()).interfaces[0]
    report = {"pickers": {"held": 0, "errors": {}}, "polkit": {"held": 0, "errors": {}}}
    held = []  # the RequestChoice invocations, never answered
    connections = []

    def on_picker_call(_connection, _sender, _path, _interface, method, _parameters, invocation):
        if method == "RequestChoice":
            held.append(invocation)
        else:
            invocation.return_value(None)

    def count_error(kind, error):
        name, _ = remote_error(error)
        report[kind]["errors"][name] = report[kind]["errors"].get(name, 0) + 1

    def connect():
        connection = Gio.DBusConnection.new_for_address_sync(address, flags, None, None)
        connections.append(connection)
        return connection

    def sync(connection, path, interface_name, method, signature, values):
        return connection.call_sync(AGENT, path, interface_name, method,
                                    GLib.Variant(signature, values) if signature else None, None,
                                    Gio.DBusCallFlags.NONE, 30000, None)

    def shown(connection, result):
        try:
            connection.call_finish(result)
        except GLib.Error as error:
            count_error("pickers", error)

    picker_items = [{key: variant(member) for key, member in item.items()} for item in items]
    attempts = 0
    # Four pickers a picker agent (its limit), each agent on a connection of its own.
    while attempts < count:
        connection = connect()
        connection.register_object(PICKER_PATH, interface, on_picker_call, None, None)
        try:
            sync(connection, MANAGER_PATH, MANAGER, "RegisterPickerAgent", "(oa{sv})", (PICKER_PATH, {}))
        except GLib.Error as error:
            count_error("pickers", error)
            attempts += 4
            continue
        for _ in range(4):
            attempts += 1
            try:
                session = sync(connection, MANAGER_PATH, MANAGER, "OpenSession", "(sa{sv})", (profile, {})).unpack()[0]
                sync(connection, session, SESSION, "Activate", None, None)
            except GLib.Error as error:
                count_error("pickers", error)
                continue
            connection.call(AGENT, session, SESSION, "ShowPicker", GLib.Variant("(aa{sv}a{sv})", (picker_items, {})),
                            None, Gio.DBusCallFlags.NONE, 30000, None, shown)

    def checked(connection, result):
        try:
            connection.call_finish(result)
            report["polkit"]["errors"]["answered"] = report["polkit"]["errors"].get("answered", 0) + 1
        except GLib.Error as error:
            count_error("polkit", error)

    # Spread over connections, each under the bus daemon's own limit of pending calls.
    checkers = [connect() for _ in range(4)]
    for index in range(count):
        checkers[index % len(checkers)].call(
            AGENT, MANAGER_PATH, MANAGER, "ListAccessories", GLib.Variant("(a{sv})", ({"user": GLib.Variant("u", 0)},)),
            None, Gio.DBusCallFlags.ALLOW_INTERACTIVE_AUTHORIZATION, int(seconds * 2000), None, checked)

    GLib.timeout_add(int(seconds * 1000), loop.quit)
    loop.run()
    report["pickers"]["held"] = len(held)
    report["polkit"]["held"] = count - sum(report["polkit"]["errors"].values())
    emit(report)
    return 0


def open_sessions(count, profile, seconds):
    """`count` Manager1.OpenSession calls at once, allowing interactive authorization, each
    answered or not within `seconds`."""
    loop = GLib.MainLoop()
    report = {"answered": 0, "errors": {}, "messages": []}

    def opened(connection, result):
        try:
            connection.call_finish(result)
            report["answered"] += 1
        except GLib.Error as error:
            name, message = remote_error(error)
            report["errors"][name] = report["errors"].get(name, 0) + 1
            report["messages"].append(message)

    for _ in range(count):
        bus.call(AGENT, MANAGER_PATH, MANAGER, "OpenSession", GLib.Variant("(sa{sv})", (profile, {})), None,
                 Gio.DBusCallFlags.ALLOW_INTERACTIVE_AUTHORIZATION, int(seconds * 2000), None, opened)
    GLib.timeout_add(int(seconds * 1000), loop.quit)
    loop.run()
    report["held"] = count - report["answered"] - sum(report["errors"].values())
    emit(report)
    return 0


def provision(accessory, options):
    """ProvisionAccessory, printing its ProvisioningProgress signals as they come."""
    loop = GLib.MainLoop()
    state = {"status": 0}

    def on_signal(_connection, _sender, _path, _interface, member, parameters):
        emit({"event": member, "args": list(parameters.unpack())})

    bus.signal_subscribe(None, MANAGER, "ProvisioningProgress", MANAGER_PATH, None, Gio.DBusSignalFlags.NONE,
                         on_signal)

    def done(connection, result):
        try:
            reply = connection.call_finish(result)
            emit({"call": "ProvisionAccessory", "reply": list(reply.unpack())})
        except GLib.Error as error:
            name, message = remote_error(error)
            emit({"call": "ProvisionAccessory", "error": name, "message": message})
            state["status"] = 1
        loop.quit()

    values = {key: variant(value) for key, value in options.items()}
    bus.call(AGENT, MANAGER_PATH, MANAGER, "ProvisionAccessory", GLib.Variant("(sa{sv})", (accessory, values)),
             None, Gio.DBusCallFlags.ALLOW_INTERACTIVE_AUTHORIZATION, 120000, None, done)
    loop.run()
    return state["status"]


def main(arguments):
    command, rest = arguments[0], arguments[1:]
    if command == "list":
        options = {"user": GLib.Variant("u", int(rest[0]))} if rest else {}
        ok, _ = call("ListAccessories", "(a{sv})", (options,))
    elif command == "show":
        ok, _ = call("GetAccessory", "(s)", (rest[0],))
    elif command == "join":
        ok, _ = call("JoinAccessory", "(sa{sv})", (rest[0], {}))
    elif command == "provision":
        return provision(rest[0], json.loads(rest[1]))
    elif command == "remove":
        ok, _ = call("RemoveAccessory", "(s)", (rest[0],))
    elif command == "rename":
        ok, _ = call("RenameAccessory", "(ssa{sv})", (rest[0], rest[1], {}))
    elif command == "report":
        ok, _ = call("ReportConnection", "(sa{sv})", (rest[0], {"uuid": GLib.Variant("s", rest[1])}))
    elif command == "leave":
        options = {"user": GLib.Variant("u", int(rest[0]))} if rest else {}
        ok, _ = call("Leave", "(a{sv})", (options,))
    elif command == "apply":
        configuration = {key: variant(value) for key, value in json.loads(rest[0]).items()}
        ok, _ = call("ApplyConfiguration", "(a{sv}a{sv})", (configuration, {}))
    elif command == "configured":
        ok, _ = call("GetConfiguredSSIDs")
    elif command == "forget":
        ok, _ = call("RemoveConfiguration", "(s)", (rest[0],))
    elif command == "open":
        ok, _ = call("OpenSession", "(sa{sv})", (rest[0], {}))
    elif command == "activate":
        return activate(rest[0])
    elif command == "open-fd":
        return open_with_profile(rest[0])
    elif command == "register-picker":
        ok, _ = call("RegisterPickerAgent", "(oa{sv})", (PICKER_PATH, {}))
    elif command == "monitor":
        return monitor(float(rest[0]), int(rest[1]) if len(rest) > 1 else None)
    elif command == "latency":
        return latency(float(rest[0]), rest[1] if len(rest) > 1 else None)
    elif command == "list-long":
        options = {"user": GLib.Variant("u", 0), "profile": GLib.Variant("s", "x" * int(rest[0]))}
        try:
            reply = bus.call_sync(AGENT, MANAGER_PATH, MANAGER, "ListAccessories", GLib.Variant("(a{sv})", (options,)),
                                  None, Gio.DBusCallFlags.ALLOW_INTERACTIVE_AUTHORIZATION, 10000, None)
            emit({"call": "ListAccessories", "reply": list(reply.unpack())})
            ok = True
        except GLib.Error as error:
            name, message = remote_error(error)
            emit({"call": "ListAccessories", "error": name or str(error), "message": message})
            ok = False
    elif command == "stall-profiles":
        return stall_profiles(int(rest[0]))
    elif command == "open-sessions":
        return open_sessions(int(rest[0]), rest[1], float(rest[2]))
    elif command == "flood":
        return flood(float(rest[0]), int(rest[1]), rest[2], json.loads(rest[3]))
    elif command == "pick":
        choose = rest[rest.index("--picker") + 1] if "--picker" in rest else None
        return pick(rest[0], json.loads(rest[1]), choose, join="--join" in rest)
    else:
        print(__doc__, file=sys.stderr)
        return 64
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
