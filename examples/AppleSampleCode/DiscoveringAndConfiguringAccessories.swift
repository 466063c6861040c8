// Apple's "Discovering and configuring accessories"
// (../shared/seeds/discovering-and-configuring-accessories.txt), its listings in the order the
// article gives them. Lines changed from Apple's text:
// - UIKit: `class … : UIViewController` is a plain class, `override func viewDidLoad()` a
//   method of it, `super.viewDidLoad()` gone; `UIImage(named:)` is `productImage(named:)`, the
//   path of an image (Samples.swift).
// - Apple's placeholders, comment-only `case` bodies and `// Handle …` lines, are filled with a
//   `report(…)` line each, since Swift needs a statement in every case; the custom filtering
//   listing's `switch` gets the `default: break` Swift needs.
// - The accessoryAdded/pickerDidDismiss cases are the article's rewritten ones; the filtering
//   listing's other events go to `handle(_:)`, which the test reads.
// - Layout only: `swift format`'s, with the end-of-line comment on the descriptor's UUID above it.
// Everything else, `CBUUID(string:)` and `ASDiscoveryDescriptor` included, is Apple's as written.

import AccessorySetupKit
import CoreBluetooth
import Foundation

final class DiscoveringViewController {
    var pickedAccessory: ASAccessory?

    let session = ASAccessorySession()
    func viewDidLoad() {
        session.activate(on: DispatchQueue.main) { [weak self] event in
            guard let self else { return }

            switch event.eventType {
            case .activated:
                report("activated: \(self.session.accessories.count) accessories")
            case .accessoryAdded:
                self.pickedAccessory = event.accessory
            case .accessoryRemoved, .accessoryChanged:
                report("\(event.eventType.name)")
            case .invalidated:
                report("invalidated")
            case .migrationComplete:
                report("migrationComplete")
            case .pickerDidPresent:
                report("pickerDidPresent")
            case .pickerDidDismiss:
                guard let accessory = self.pickedAccessory else { return }
                self.pickedAccessory = nil
                self.handleAccessoryAdded(accessory)
            case .unknown:
                report("unknown")
            @unknown default:
                report("an event of a later release")
            }
        }
    }

    func showMyPicker() {
        var descriptor = ASDiscoveryDescriptor()
        // If using Wi-Fi, set descriptor.ssid instead.
        descriptor.bluetoothServiceUUID = CBUUID(string: MY_ACCESSORY_UUID_STRING)

        let displayName = "My Accessory"
        guard let productImage = productImage(named: MY_ACCESSORY_IMAGE_NAME) else { return }

        var items: [ASPickerDisplayItem] = []
        items.append(
            ASPickerDisplayItem(
                name: displayName,
                productImage: productImage,
                descriptor: descriptor))

        // Create additional picker items if you support multiple accessories
        // with different Wi-Fi SSIDs or Bluetooth service UUIDs.

        session.showPicker(for: items) { error in
            if let error {
                report("showPicker failed: \(error)")
            } else {
                report("showPicker done")
            }
        }
    }

    private func handleAccessoryAdded(_ accessory: ASAccessory) {
        if let btIdentifier = accessory.bluetoothIdentifier {
            report("added \(accessory.displayName): Bluetooth \(btIdentifier)")
        } else if let ssid = accessory.ssid {
            report("added \(accessory.displayName): Wi-Fi \(ssid)")
        }
        finish()
    }
}

/// The article's custom filtering, on a session of its own.
final class FilteringViewController {
    let session = ASAccessorySession()

    func viewDidLoad() {
        let settings = ASPickerDisplaySettings.default
        settings.discoveryTimeout = .unbounded
        settings.options.insert(.filterDiscoveryResults)
        session.pickerDisplaySettings = settings

        let session = self.session
        session.activate(on: .main) { [weak self] event in
            guard let strongSelf = self else { return }
            switch event.eventType {
            case .accessoryDiscovered:
                if let accessory = event.accessory as? ASDiscoveredAccessory {
                    if myShouldDisplayAccessory(
                        advertisement: accessory.bluetoothAdvertisementData,
                        rssi: accessory.bluetoothRSSI)
                    {
                        let item = ASDiscoveredDisplayItem(
                            name: "More Specific Product Name",
                            productImage: productImage(named: "AssetPreparedJustInTime")!,
                            accessory: accessory)
                        session.updatePicker(showing: [item]) { error in
                            print(error)
                        }
                    }
                }
            default: strongSelf.handle(event)
            }
        }
    }

    func handle(_ event: ASAccessoryEvent) {
        switch event.eventType {
        case .accessoryAdded:
            report("added \(event.accessory?.displayName ?? "?")")
            finish()
        case .pickerDidDismiss: finish()
        default: break
        }
    }
}
