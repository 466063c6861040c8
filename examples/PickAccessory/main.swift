// pick-accessory: an application of the agent in Swift, through the AccessorySetupKit library,
// written as an iOS app using Apple's AccessorySetupKit would be.
//
//     pick-accessory PROFILE [--join]
//
// Opens a session over the installed profile PROFILE, shows the picker for the profile's items,
// prints each event, and prints the accessory the person added; with --join, joins its hotspot
// next (NEHotspotConfigurationManager). The person chooses in the desktop's picker (or the kiosk
// policy does); the application never sees what the radios hear. Exit status: 0 when an
// accessory was added (and joined, with --join), 1 when not, 64 for bad usage.

import AccessorySetupKit
import Glibc

/// An accessory in one line, as the events print it.
func describe(_ accessory: ASAccessory) -> String {
    "\(accessory.displayName), \(accessory.state), id \(accessory.id)"
}

func fail(_ message: String, status: Int32 = 1) -> Never {
    let line = "pick-accessory: \(message)\n"
    _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
    exit(status)
}

var arguments = CommandLine.arguments.dropFirst()
let join = arguments.contains("--join")
arguments.removeAll { $0 == "--join" }
guard arguments.count == 1, let profile = arguments.first, !profile.hasPrefix("-") else {
    fail("usage: pick-accessory PROFILE [--join]", status: 64)
}

let session = ASAccessorySession(profile: profile)
let (events, eventContinuation) = AsyncStream.makeStream(of: ASAccessoryEvent.self)
// What the person had authorized before this picker: read before it is shown, as the picker
// may add to it before the `activated` event is handled below.
var known = 0
do {
    try await session.activate { event in eventContinuation.yield(event) }
    known = try await session.accessories.count
    try await session.showPicker()
} catch {
    // A sandboxed application opens only the profiles that name it (accessory-profile(5)).
    let hint =
        error.isNoSuchProfile && access("/.flatpak-info", F_OK) == 0
        ? " (in a Flatpak sandbox, a profile must name this application in its \"applications\")" : ""
    fail("\(error.name ?? "error"): \(error.message)\(hint)")
}

var added: ASAccessory?
var dismissal: ASError?
for await event in events {
    switch event.eventType {
    case .activated:
        print("activated: \(known) accessories already authorized")
    case .accessoryAdded:
        added = event.accessory
        print("accessoryAdded: \(event.accessory.map(describe) ?? "?")")
    case .pickerDidDismiss:
        dismissal = event.error
        print("pickerDidDismiss" + (event.error.map { ": \($0.name)" } ?? ""))
    default:
        print(event.eventType.name)
    }
    if event.eventType == .pickerDidDismiss || event.eventType == .invalidated { break }
}
await session.invalidate()

guard let accessory = added else {
    fail("nothing was added" + (dismissal.map { ": \($0.message)" } ?? ""))
}
print("added: \(describe(accessory))")
if join {
    do {
        let joined = try await NEHotspotConfigurationManager.shared.joinAccessoryHotspot(accessory)
        print("joined: \(joined.ssid ?? "?") on \(joined.device ?? "?")")
    } catch {
        fail("cannot join \(accessory.displayName): \(error.message)")
    }
}
