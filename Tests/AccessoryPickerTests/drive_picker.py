#!/usr/bin/python3
"""Drives accessory-picker through the accessibility tree (AT-SPI), as a screen reader would.

    drive_picker.py PID SCENARIO [--rows N] [--choose NAME] [--rename TEXT] [--passphrase TEXT] [--pop TEXT]
                    [--shots DIR] [--shot-name NAME] [--title TITLE]

SCENARIO is `choose` (select the row named NAME or whose description holds it, optionally
fill the Name, Passphrase and Proof of possession rows, press Set Up, wait for the setup to end), `cancel` (press Cancel) or
`keyboard` (keys alone: Down to the row holding NAME and Return, or Escape without one)
`timeout` (nothing is found: read the dialog's error, press Close), `live` (run a command
that takes an accessory away, wait for its row to vanish, press Cancel) or `look` (read the
headings, labels and images above the list, take a screenshot, press Cancel).
Before acting it waits until the picker's window shows N rows. Window screenshots go to DIR
(`<scenario>-<state>.png`, or `NAME.png` with --shot-name). Prints one JSON object per line: what it saw and did; exits 1
with the reason and the accessibility tree on a failure.
Run with /usr/bin/python3 (Debian's python3-pyatspi) on the session bus the picker uses.
"""

import argparse
import os
import subprocess
import sys
import time

import pyatspi

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from atspi_driver import ROOT, application, descendants, fail, say, wait_for  # noqa: E402


def find(node, role=None, name=None, showing=True):
    for child in descendants(node):
        if role is not None and child.getRole() != role:
            continue
        if name is not None and child.name != name:
            continue
        if showing and not child.getState().contains(pyatspi.STATE_VISIBLE):
            continue
        return child
    return None


def press(root, label):
    button = wait_for(f"the button '{label}'", lambda: find(root, pyatspi.ROLE_PUSH_BUTTON, label))
    if not button.getState().contains(pyatspi.STATE_SENSITIVE):
        fail(f"the button '{label}' is not sensitive")
    action = button.queryAction()
    names = [action.getName(index) for index in range(action.nActions)]
    action.doAction(names.index("click"))
    say(pressed=label)


def rows(listbox):
    found = []
    for index in range(listbox.childCount):
        row = listbox.getChildAtIndex(index)
        if row is not None and row.getRole() == pyatspi.ROLE_LIST_ITEM:
            found.append({"name": row.name, "description": row.description, "index": index})
    return found


def screenshot(args, state):
    if not args.shots:
        return
    time.sleep(0.4)  # one frame after the last change
    path = f"{args.shots}/{args.shot_name or f'{args.scenario}-{state}'}.png"
    subprocess.run(["import", "-window", args.title, path], check=True)
    say(screenshot=path)


def label_text(label):
    if label.name:
        return label.name
    text = label.queryText()
    return text.getText(0, text.characterCount)


def visible_labels(window):
    return [label_text(child) for child in descendants(window)
            if child.getRole() == pyatspi.ROLE_LABEL and child.getState().contains(pyatspi.STATE_VISIBLE)]


def key(name):
    """Presses and releases a key through XTest, as a keyboard would."""
    pyatspi.Registry.generateKeyboardEvent(KEYSYMS[name], None, pyatspi.KEY_SYM)
    say(key=name)
    time.sleep(0.3)


KEYSYMS = {"Escape": 0xFF1B, "Return": 0xFF0D, "Down": 0xFF54, "Up": 0xFF52}


def keyboard(window, listbox, shown, args):
    """Keys alone: focus moves to the rows, Down goes to the row holding --choose, Return
    sets it up; or, without --choose, Escape cancels."""
    # Without a window manager X gives the keyboard to the window under the pointer.
    extents = window.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    pyatspi.Registry.generateMouseEvent(extents.x + extents.width // 2, extents.y + 10, "abs")
    time.sleep(0.3)
    if args.choose is None:
        key("Escape")
        return
    first = listbox.getChildAtIndex(shown[0]["index"])
    wait_for("the first row to have the focus", lambda: first.getState().contains(pyatspi.STATE_FOCUSED))
    target = next(row for row in shown if args.choose in row["description"])
    for _ in range(shown.index(target)):
        key("Down")
    focused = [row["description"] for row in shown
               if listbox.getChildAtIndex(row["index"]).getState().contains(pyatspi.STATE_FOCUSED)]
    say(focused=focused)
    key("Return")
    wait_for("the setup to end", lambda: find(window, pyatspi.ROLE_PUSH_BUTTON, "Close"), timeout=30)
    key("Escape")


def outside_lists(node):
    """The descendants of `node` that are not in a list (the accessories, the options)."""
    for child in [node.getChildAtIndex(index) for index in range(node.childCount)]:
        if child is None or child.getRole() == pyatspi.ROLE_LIST:
            continue
        yield child
        yield from outside_lists(child)


def look(window, args):
    """What the dialog shows above its list, as a screen reader finds it: the headings (with
    the text their Text interface holds), the labels and the images outside the list."""
    headings = []
    for node in descendants(window):
        if node.getRole() == pyatspi.ROLE_HEADING and node.getState().contains(pyatspi.STATE_VISIBLE):
            text = node.queryText()
            headings.append({"name": node.name, "text": text.getText(0, text.characterCount)})
    say(headings=headings)
    say(labels=visible_labels(window))
    say(imagesAbove=[node.name for node in outside_lists(window)
                if node.getRole() == pyatspi.ROLE_IMAGE and node.getState().contains(pyatspi.STATE_VISIBLE)])
    screenshot(args, "shown")
    press(window, "Cancel")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("pid", type=int)
    parser.add_argument("scenario", choices=["choose", "cancel", "keyboard", "timeout", "live", "look"])
    parser.add_argument("--run", help="for `live`: a command (arguments separated by U+001F) that removes one")
    parser.add_argument("--rows", type=int, default=1)
    parser.add_argument("--choose")
    parser.add_argument("--rename")
    parser.add_argument("--passphrase")
    parser.add_argument("--pop", help="the proof of possession to type")
    parser.add_argument("--compare", choices=["matches", "differs"],
                        help="answer the number the accessory shows while pairing")
    parser.add_argument("--shots")
    parser.add_argument("--shot-name", help="the screenshot's file name, without .png")
    parser.add_argument("--title", required=True)
    args = parser.parse_args()

    app = wait_for("the picker on the AT-SPI registry", lambda: application(args.pid), timeout=30)
    ROOT.append(app)
    window = wait_for(f"the window '{args.title}'", lambda: find(app, pyatspi.ROLE_FRAME, args.title), timeout=30)
    listbox = wait_for("the list 'Accessories'", lambda: find(window, pyatspi.ROLE_LIST, "Accessories"))
    if args.scenario == "timeout":
        # Nothing matches: the dialog searches until the agent ends the picker, then says why.
        wait_for("the button 'Close'", lambda: find(window, pyatspi.ROLE_PUSH_BUTTON, "Close"), timeout=30)
        say(labels=visible_labels(window))
        screenshot(args, "error")
        press(window, "Close")
        return
    shown = wait_for(f"{args.rows} rows",
                     lambda: rows(listbox) if len(rows(listbox)) >= args.rows else None, timeout=30)
    say(rows=[{"name": row["name"], "description": row["description"]} for row in shown])
    images = [child.name for child in descendants(listbox) if child.getRole() == pyatspi.ROLE_IMAGE]
    say(images=images)
    unnamed = [child.getRoleName() for child in descendants(window)
               if child.getRole() in (pyatspi.ROLE_PUSH_BUTTON, pyatspi.ROLE_LIST, pyatspi.ROLE_LIST_ITEM)
               and child.getState().contains(pyatspi.STATE_VISIBLE) and not child.name]
    say(unnamed=unnamed)
    screenshot(args, "list")

    if args.scenario == "cancel":
        press(window, "Cancel")
        return
    if args.scenario == "look":
        look(window, args)
        return
    if args.scenario == "live":
        subprocess.run(args.run.split("\x1f"), check=True, stdout=subprocess.DEVNULL)
        say(ran=args.run.split("\x1f")[-1])
        left = wait_for("a row to vanish", lambda: rows(listbox) if len(rows(listbox)) == len(shown) - 1 else None)
        say(rows=[{"name": row["name"], "description": row["description"]} for row in left])
        press(window, "Cancel")
        return
    if args.scenario == "keyboard":
        keyboard(window, listbox, shown, args)
        return

    target = next((row for row in shown if row["name"] == args.choose or args.choose in row["description"]), None)
    if target is None:
        fail(f"no row named {args.choose!r} among {[row['name'] for row in shown]}")
    listbox.querySelection().selectChild(target["index"])
    wait_for("the row to be selected",
             lambda: listbox.getChildAtIndex(target["index"]).getState().contains(pyatspi.STATE_SELECTED))
    say(selected=args.choose)
    options = find(window, pyatspi.ROLE_LIST, "Setup options")
    if args.rename is not None:
        if options is None:
            fail("no 'Setup options' list offers a name")
        entry = wait_for("the Name entry", lambda: find(options, pyatspi.ROLE_TEXT, "Name"))
        entry.queryEditableText().setTextContents(args.rename)
        say(renamed=args.rename)
    if args.passphrase is not None:
        if options is None:
            fail("no 'Setup options' list asks for a passphrase")
        before = find(window, pyatspi.ROLE_PUSH_BUTTON, "Set Up").getState().contains(pyatspi.STATE_SENSITIVE)
        entry = wait_for("the Passphrase entry", lambda: find(options, pyatspi.ROLE_TEXT, "Passphrase"))
        entry.queryEditableText().setTextContents(args.passphrase)
        time.sleep(0.3)
        after = find(window, pyatspi.ROLE_PUSH_BUTTON, "Set Up").getState().contains(pyatspi.STATE_SENSITIVE)
        say(setUpSensitive=[before, after])
    if args.pop is not None:
        if options is None:
            fail("no 'Setup options' list asks for a proof of possession")
        before = find(window, pyatspi.ROLE_PUSH_BUTTON, "Set Up").getState().contains(pyatspi.STATE_SENSITIVE)
        entry = wait_for("the Proof of possession entry",
                         lambda: find(options, pyatspi.ROLE_TEXT, "Proof of possession"))
        entry.queryEditableText().setTextContents(args.pop)
        time.sleep(0.3)
        after = find(window, pyatspi.ROLE_PUSH_BUTTON, "Set Up").getState().contains(pyatspi.STATE_SENSITIVE)
        say(proofSetUpSensitive=[before, after])
    say(labelsChosen=visible_labels(window))
    screenshot(args, "chosen")
    press(window, "Set Up")
    if args.compare is not None:
        answer = "It Matches" if args.compare == "matches" else "It Does Not Match"
        wait_for(f"the button '{answer}'", lambda: find(window, pyatspi.ROLE_PUSH_BUTTON, answer), timeout=30)
        say(comparing=visible_labels(window))
        screenshot(args, "compare")
        press(window, answer)
    wait_for("the setup to end", lambda: find(window, pyatspi.ROLE_PUSH_BUTTON, "Close"), timeout=30)
    say(labels=visible_labels(window))
    screenshot(args, "done")
    press(window, "Close")


if __name__ == "__main__":
    main()
