// What the samples take as given on iOS (their constants, an image catalogue, a peripheral),
// and how the test sees them run.

import AccessorySetupKit
import CoreBluetooth
import Foundation
import NetworkExtension

let MY_ACCESSORY_UUID_STRING = "0000FEED-0000-1000-8000-00805F9B34FB"
let MY_ACCESSORY_IMAGE_NAME = "my-accessory"
let pinkUUID = CBUUID(string: "0000FEED-0000-1000-8000-00805F9B34FB")
let blueUUID = CBUUID(string: "0000BEEF-0000-1000-8000-00805F9B34FB")

/// `UIImage(named:)`: here no image at all, which the picker shows as the item's name alone.
func productImage(named name: String) -> String?? { .some(nil) }

/// CoreBluetooth's peripheral of the pink dice, as far as the migration listing reads it: the
/// identifier `ASAccessory.bluetoothIdentifier` gives the device (`PINK_DICE_IDENTIFIER`).
struct Peripheral {
    let identifier: UUID
}
let pinkPeripheral = Peripheral(
    identifier: UUID(uuidString: ProcessInfo.processInfo.environment["PINK_DICE_IDENTIFIER"] ?? "") ?? UUID())

/// The article's own filter: an advertisement that carries data, heard closer than -80 dBm.
func myShouldDisplayAccessory(advertisement: [String: Any]?, rssi: Int?) -> Bool {
    report("discovered: \(advertisement?.keys.sorted() ?? []), RSSI \(rssi.map(String.init) ?? "none")")
    return (rssi ?? -100) > -80
}

/// The reports that end the sample, where its listing has no end of its own.
var finishOn: [String] = []

/// A line the test reads.
func report(_ line: String) {
    print("sample: \(line)")
    fflush(stdout)
    if finishOn.contains(where: line.hasPrefix) { finish() }
}

func finish() {
    DispatchQueue.main.async { exit(0) }
}

private var kept: [AnyObject] = []
/// Keeps a controller alive, as a window would.
func keep(_ object: AnyObject) { kept.append(object) }

/// An item for the open `Acme-Setup-` hotspots.
func wifiItem() -> ASPickerDisplayItem {
    let descriptor = ASDiscoveryDescriptor()
    descriptor.ssidPrefix = "Acme-Setup-"
    return ASPickerDisplayItem(name: "Acme plug", productImage: nil, descriptor: descriptor)
}

/// An item for the dice, whose advertisement the filtering listing reads.
func diceItem() -> ASPickerDisplayItem {
    let descriptor = ASDiscoveryDescriptor()
    descriptor.bluetoothServiceUUID = pinkUUID
    return ASPickerDisplayItem(name: "Dice", productImage: nil, descriptor: descriptor)
}

/// The Wi-Fi listing's caller: picks an `Acme-Setup-` plug, then joins it as the listing does.
final class WiFiSetup {
    let session = ASAccessorySession()

    func start() {
        session.activate(on: .main) { event in
            if event.eventType == .accessoryAdded, let accessory = event.accessory {
                handleWiFiAccessoryAdded(accessory)
            }
        }
        session.showPicker(for: [wifiItem()]) { error in if let error { report("showPicker failed: \(error)") } }
    }
}
