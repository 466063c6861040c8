// The Wi-Fi and migration listings of the AccessorySetupKit guide in
// ../shared/seeds/accessorysetupkit-skill-zh.txt. Lines changed from its text:
// - UIKit: `UIImage(named:)` is `productImage(named:)` (Samples.swift).
// - The Wi-Fi listing's `if let error` gets an `else` with a `report(…)` line, so that the
//   test sees the join succeed; the migration's commented-out `hotspotSSID` line is used, as
//   its comment says for a Wi-Fi accessory, in place of the CoreBluetooth identifier.
// `session` is the WWDC listing's (MeetAccessorySetupKit.swift).

import AccessorySetupKit
import CoreBluetooth
import Foundation
import NetworkExtension

func handleWiFiAccessoryAdded(_ accessory: ASAccessory) {
    guard let ssid = accessory.ssid else { return }

    let configuration = NEHotspotConfiguration(ssid: ssid)
    NEHotspotConfigurationManager.shared.apply(configuration) { error in
        if let error {
            print("Wi-Fi join failed: \(error.localizedDescription)")
        } else {
            report("joined \(ssid)")
        }
        finish()
    }
}

func migrateExistingAccessories() {
    guard let image = productImage(named: "my-accessory") else { return }

    var descriptor = ASDiscoveryDescriptor()
    descriptor.ssidPrefix = "Acme-Setup-"

    let migrationItem = ASMigrationDisplayItem(
        name: "My Accessory",
        productImage: image,
        descriptor: descriptor
    )

    // For Wi-Fi accessories:
    migrationItem.hotspotSSID = "Acme-Setup-4F2A"

    session.showPicker(for: [migrationItem]) { error in
        if let error {
            print("Migration failed: \(error.localizedDescription)")
        }
    }
}
