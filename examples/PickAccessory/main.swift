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
import Dispatch
import Foundation
import NetworkExtension

/// An accessory in one line, as the events print it.
func describe(_ accessory: ASAccessory) -> String {
    "\(accessory.displayName), \(accessory.state.name), id \(accessory.id)"
}

/// An error as `NAME: message`, the agent's D-Bus error name first where it gave one.
func describe(_ error: any Error) -> String {
    if let error = error as? ASError { return "\(error.name): \(error.message)" }
    let error = error as NSError
    return "\(error.userInfo["AgentErrorName"] as? String ?? error.domain): \(error.localizedDescription)"
}

func fail(_ message: String, status: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data("pick-accessory: \(message)\n".utf8))
    exit(status)
}

/// The application, in a function rather than at the top level: what top-level async code makes
/// is still held by the main task when the process exits, which LeakSanitizer reports as leaked.
func run() async {
    var arguments = CommandLine.arguments.dropFirst()
    let join = arguments.contains("--join")
    arguments.removeAll { $0 == "--join" }
    guard arguments.count == 1, let profile = arguments.first, !profile.hasPrefix("-") else {
        fail("usage: pick-accessory PROFILE [--join]", status: 64)
    }

    let session = ASAccessorySession(profile: profile)
    let (events, eventContinuation) = AsyncStream.makeStream(of: ASAccessoryEvent.self)
    session.activate(on: DispatchQueue(label: "pick-accessory.events")) { event in eventContinuation.yield(event) }

    var added: ASAccessory?
    var dismissal: ASError?
    eventLoop: for await event in events {
        switch event.eventType {
        case .activated:
            // What the person had authorized before this picker.
            print("activated: \(session.accessories.count) accessories already authorized")
            do {
                try await session.showPicker()
            } catch {
                fail(describe(error))
            }
        case .accessoryAdded:
            added = event.accessory
            print("accessoryAdded: \(event.accessory.map(describe) ?? "?")")
        case .pickerDidDismiss:
            dismissal = event.error as? ASError
            print("pickerDidDismiss" + (dismissal.map { ": \($0.name)" } ?? ""))
            break eventLoop
        case .invalidated:
            guard let error = event.error else { break eventLoop }
            // A sandboxed application opens only the profiles that name it (accessory-profile(5)).
            let hint =
                (error as? ASError)?.name == "io.accessorysetup.Error.NoSuchProfile"
                    && FileManager.default.fileExists(atPath: "/.flatpak-info")
                ? " (in a Flatpak sandbox, a profile must name this application in its \"applications\")" : ""
            fail(describe(error) + hint)
        default:
            print(event.eventType.name)
        }
    }
    session.invalidate()
    for await event in events where event.eventType == .invalidated { break }

    guard let accessory = added else {
        fail("nothing was added" + (dismissal.map { ": \($0.message)" } ?? ""))
    }
    print("added: \(describe(accessory))")
    if join {
        do {
            let joined = try await NEHotspotConfigurationManager.shared.joinAccessoryHotspot(accessory)
            print("joined: \(joined.ssid ?? "?") on \(joined.device ?? "?")")
        } catch {
            fail("cannot join \(accessory.displayName): \(describe(error))")
        }
    }
}

await run()
