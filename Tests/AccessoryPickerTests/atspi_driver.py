"""What the AT-SPI drivers of the graphical tests share (drive_picker.py, drive_accessories.py):
reporting as JSON lines, failing with the accessibility tree, waiting on a tree that changes
under the driver, and finding the application of a process. Run with /usr/bin/python3
(Debian's python3-pyatspi)."""

import json
import sys
import time

import pyatspi

# The window the driver works in, once found: its tree is printed on a failure.
ROOT = []


def say(**fields):
    print(json.dumps(fields), flush=True)


def tree(node, depth=0):
    """The accessibility tree under `node`, one `role 'name'` line per object, for failures."""
    lines = []
    try:
        showing = "" if node.getState().contains(pyatspi.STATE_VISIBLE) else " (hidden)"
        lines.append(f"{'  ' * depth}{node.getRoleName()} {node.name!r}{showing}")
        for index in range(node.childCount):
            lines.extend(tree(node.getChildAtIndex(index), depth + 1))
    except Exception as error:
        lines.append(f"{'  ' * depth}? {error}")
    return lines


def fail(message):
    say(failure=message, tree=tree(ROOT[0]) if ROOT else [])
    sys.exit(1)


def wait_for(what, predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except Exception:  # the tree changes under us while the window updates
            value = None
        if value:
            return value
        time.sleep(0.1)
    fail(f"timed out after {timeout:.0f}s waiting for {what}")


def descendants(node):
    try:
        children = [node.getChildAtIndex(index) for index in range(node.childCount)]
    except Exception:
        return
    for child in children:
        if child is None:
            continue
        yield child
        yield from descendants(child)


def application(pid):
    """The accessible application of process `pid`, or None while it has not registered."""
    desktop = pyatspi.Registry.getDesktop(0)
    for index in range(desktop.childCount):
        app = desktop.getChildAtIndex(index)
        if app is not None and app.get_process_id() == pid:
            return app
    return None
