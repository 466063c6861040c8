#!/usr/bin/python3
"""Drives accessory-settings (the Accessories window) through the accessibility tree (AT-SPI).

    drive_accessories.py PID SCENARIO [--rows N] [--target NAME] [--to NAME] [--run CMD] [--shots DIR]

SCENARIO is `list` (wait for N accessory rows, report them, take a screenshot), `keyboard`
(press Tab 30 times, reporting each widget that had the focus), `rename`
(the row named TARGET: Rename, type --to, confirm; wait for the new name), `remove` (the row
named TARGET: Remove, screenshot the confirmation, confirm; wait for the row to go),
`remove-network` (the same for the Wi-Fi configuration of SSID TARGET),
`remove-access` (the application titled TARGET: Remove Access, confirm; wait for its rows to
go), `live` (run CMD, arguments separated by U+001F, and wait for a row named --to), `setup`
(Set Up Accessory…, choose the profile of vendor TARGET, wait for a row named --to) or
`status` (wait for the status page titled TARGET and report its labels and buttons).
Every scenario ends by closing the window (its Close button). Prints one JSON object per line;
exits 1 with the reason and the accessibility tree on a failure.
Run with /usr/bin/python3 (Debian's python3-pyatspi) on the session bus the window uses.
"""

import argparse
import os
import subprocess
import sys
import time

import pyatspi

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from atspi_driver import ROOT, application, descendants, fail, say, wait_for  # noqa: E402

TITLE = "Accessories"
def visible(node):
    return node.getState().contains(pyatspi.STATE_VISIBLE)


def clean(name):
    """A button's name without mnemonic underscores, once: GTK 4.8 names a button of
    AdwMessageDialog by its label property and its label ("_Cancel Cancel")."""
    name = name.replace("_", "")
    half = len(name) // 2
    return name[:half] if len(name) % 2 == 1 and name[:half] == name[half + 1:] and name[half] == " " else name


def find(node, role, name):
    for child in descendants(node):
        if child.getRole() == role and clean(child.name) == name and visible(child):
            return child
    return None


def press(root, label):
    button = wait_for(f"the button '{label}'", lambda: find(root, pyatspi.ROLE_PUSH_BUTTON, label))
    action = button.queryAction()
    names = [action.getName(index) for index in range(action.nActions)]
    action.doAction(names.index("click"))
    say(pressed=label)


def rows(window):
    return [{"name": node.name, "description": node.description} for node in descendants(window)
            if node.getRole() == pyatspi.ROLE_LIST_ITEM and visible(node) and node.description]


def labels(node):
    found = []
    for child in descendants(node):
        if child.getRole() in (pyatspi.ROLE_LABEL, pyatspi.ROLE_HEADING) and visible(child):
            text = child.queryText()
            found.append(child.name or text.getText(0, text.characterCount))
    return [label for label in found if label]


def buttons(node):
    found = [clean(child.name) for child in descendants(node)
             if child.getRole() == pyatspi.ROLE_PUSH_BUTTON and visible(child)]
    return list(dict.fromkeys(found))


def screenshot(args, name, window=TITLE):
    if not args.shots:
        return
    time.sleep(0.5)  # a frame after the last change
    path = f"{args.shots}/{name}.png"
    subprocess.run(["import", "-window", window, path], check=True)
    say(screenshot=path)


def dialog(app):
    """The message dialog open over the window (a second top-level without the window's title)."""
    for index in range(app.childCount):
        child = app.getChildAtIndex(index)
        if child is not None and child.name != TITLE and visible(child):
            return child
    return None


def confirm(app, args, button, shot, behind):
    box = wait_for("the confirmation", lambda: dialog(app))
    say(dialog=labels(box), buttons=buttons(box))
    if args.shots:
        # Without a window manager the dialog sits at the top left of the screen: it is taken
        # alone and laid centred over the window as it was before (`behind`), dimmed, as a
        # desktop shows a modal dialog.
        time.sleep(0.5)
        # X names the dialog's window by its heading; the window has a resize border around
        # what AT-SPI reports as the dialog, cut off here.
        size = box.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
        windows = subprocess.run(["xwininfo", "-root", "-children"], capture_output=True, text=True).stdout
        ids = [line.split()[0] for line in windows.splitlines() if f'"{labels(box)[0]}"' in line]
        if not ids:
            fail(f"no X window named {labels(box)[0]!r}:\n{windows}")
        cut = f"{args.shots}/{shot}-dialog.png"
        subprocess.run(["import", "-window", ids[0], cut], check=True, timeout=20)
        subprocess.run(["convert", cut, "-gravity", "center", "-crop", f"{size.width}x{size.height}+0+0", "+repage",
                        cut], check=True)
        subprocess.run(["convert", f"{args.shots}/{behind}.png", "-fill", "black", "-colorize", "35%", cut,
                        "-gravity", "center", "-composite", f"{args.shots}/{shot}.png"], check=True)
        say(screenshot=shot)
    press(box, button)
    wait_for("the confirmation to close", lambda: dialog(app) is None)


def close(window):
    """Closes the window with its title bar's Close button, as a person would."""
    press(window, "Close")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("pid", type=int)
    parser.add_argument("scenario", choices=["list", "keyboard", "rename", "remove", "remove-network", "remove-access", "live", "setup", "status"])
    parser.add_argument("--rows", type=int, default=1)
    parser.add_argument("--target")
    parser.add_argument("--to")
    parser.add_argument("--run")
    parser.add_argument("--shots")
    args = parser.parse_args()

    app = wait_for("the window on the AT-SPI registry", lambda: application(args.pid), timeout=30)
    ROOT.append(app)
    window = wait_for(f"the window '{TITLE}'", lambda: find(app, pyatspi.ROLE_FRAME, TITLE), timeout=30)
    if args.scenario == "status":
        wait_for(f"the status page '{args.target}'", lambda: args.target in labels(window))
        say(labels=labels(window), buttons=buttons(window))
        screenshot(args, "status")
        close(window)
        return
    shown = wait_for(f"{args.rows} rows", lambda: rows(window) if len(rows(window)) >= args.rows else None)
    say(rows=shown, labels=labels(window))
    unnamed = [child.getRoleName() for child in descendants(window)
               if child.getRole() in (pyatspi.ROLE_PUSH_BUTTON, pyatspi.ROLE_LIST_ITEM, pyatspi.ROLE_IMAGE)
               and visible(child) and not child.name]
    say(unnamed=unnamed, buttons=buttons(window))
    images = [child.name for child in descendants(window) if child.getRole() == pyatspi.ROLE_IMAGE and visible(child)]
    say(images=images)
    names = {"list": "accessories-list", "remove-access": "remove-access-before"}
    screenshot(args, names.get(args.scenario, f"{args.scenario}-before"))
    if args.scenario == "remove-access" and args.shots:
        # The application's part of the window: the title bar, its heading and its accessories.
        group = find(window, pyatspi.ROLE_LIST, f"Accessories of {args.target}")
        if group is None:
            fail(f"no list 'Accessories of {args.target}'")
        bottom = group.queryComponent().getExtents(pyatspi.WINDOW_COORDS)
        height = bottom.y + bottom.height + 24
        subprocess.run(["convert", f"{args.shots}/remove-access-before.png", "-crop", f"640x{height}+0+0", "+repage",
                        f"{args.shots}/accessories-application.png"], check=True)
        say(screenshot="accessories-application")

    if args.scenario == "rename":
        press(window, f"Rename {args.target}")
        box = wait_for("the rename dialog", lambda: dialog(app))
        entry = wait_for("the Name entry", lambda: find(box, pyatspi.ROLE_TEXT, "Name"))
        entry.queryEditableText().setTextContents(args.to)
        say(dialog=labels(box), buttons=buttons(box))
        press(box, "Rename")
        wait_for(f"the row '{args.to}'", lambda: any(row["name"] == args.to for row in rows(window)))
    elif args.scenario == "remove":
        press(window, f"Remove {args.target}")
        confirm(app, args, "Remove", "accessories-confirm-remove", "remove-before")
        wait_for(f"the row '{args.target}' to go", lambda: all(row["name"] != args.target for row in rows(window)))
    elif args.scenario == "keyboard":
        # Without a window manager X gives the keyboard to the window under the pointer.
        extents = window.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
        pyatspi.Registry.generateMouseEvent(extents.x + extents.width // 2, extents.y + 10, "abs")
        time.sleep(0.3)
        reached = []
        for _ in range(30):
            pyatspi.Registry.generateKeyboardEvent(0xFF09, None, pyatspi.KEY_SYM)  # Tab
            time.sleep(0.15)
            focused = [node for node in descendants(window) if node.getState().contains(pyatspi.STATE_FOCUSED)]
            if focused:
                reached.append(f"{focused[-1].getRoleName()}: {clean(focused[-1].name)}")
        say(reached=list(dict.fromkeys(reached)))
    elif args.scenario == "remove-network":
        press(window, f"Remove the network {args.target}")
        confirm(app, args, "Remove", "accessories-confirm-remove-network", "remove-network-before")
        wait_for(f"the row '{args.target}' to go", lambda: all(row["name"] != args.target for row in rows(window)))
    elif args.scenario == "remove-access":
        press(window, f"Remove Access of {args.target}")
        confirm(app, args, "Remove Access", "accessories-confirm-remove-access", "remove-access-before")
        wait_for(f"the group '{args.target}' to go", lambda: args.target not in labels(window), timeout=30)
    elif args.scenario == "setup":
        press(window, "Set Up Accessory…")
        box = wait_for("the choice of profile", lambda: dialog(app))
        say(dialog=labels(box), buttons=buttons(box))
        press(box, args.target)
        wait_for(f"the row '{args.to}'", lambda: any(row["name"] == args.to for row in rows(window)), timeout=40)
    elif args.scenario == "live":
        subprocess.run(args.run.split("\x1f"), check=True, stdout=subprocess.DEVNULL)
        say(ran=True)
        wait_for(f"the row '{args.to}'", lambda: any(row["name"] == args.to for row in rows(window)), timeout=40)
    say(rows=rows(window), labels=labels(window))
    screenshot(args, f"{args.scenario}-after")
    close(window)


if __name__ == "__main__":
    main()
