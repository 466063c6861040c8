// Apple's WWDC24 session "Meet AccessorySetupKit" (../shared/seeds/meet-accessorysetupkit-wwdc24.txt):
// its session, picker, event and migration listings. Lines changed from Apple's text:
// - SwiftUI and UIKit: `Button { … } label: { Text("Add Dice") }` is the function
//   `addDiceButtonPressed()`, and `UIImage(named:)!` is `productImage(named:)!` (Samples.swift).
// - Only main.swift may hold statements at the top level: the descriptors, items and the picker
//   call are inside `showDicePicker()`, the migration in `migratePinkDice()`.
// - The placeholders `// Handle error` are filled with a `report(…)` line; the two
//   `handleSessionEvent` listings are one function.
// - CoreBluetooth's connection listing (`CBCentralManager`) is left out: it is CoreBluetooth's,
//   not AccessorySetupKit's. `pinkPeripheral`, a `CBPeripheral` there, is a stand-in with its
//   `identifier` (Samples.swift).

import AccessorySetupKit
import Foundation

// Create a session
var session = ASAccessorySession()

func activateDiceSession() {
    // Activate session with event handler
    session.activate(on: DispatchQueue.main, eventHandler: handleSessionEvent(event:))
}

// Handle event
func handleSessionEvent(event: ASAccessoryEvent) {
    switch event.eventType {
    case .activated:
        print("Session is activated and ready to use")
        print(session.accessories)
    case .accessoryAdded:
        let newDice: ASAccessory = event.accessory!
        report("added \(newDice.displayName)")
    case .accessoryChanged:
        print("Accessory properties changed")
    case .accessoryRemoved:
        print("Accessory removed from system")
    case .migrationComplete:
        report("migrationComplete: \(session.accessories.map(\.displayName))")
        finish()
    case .pickerDidDismiss:
        report("pickerDidDismiss")
        finish()
    default:
        print("Received event with type: \(event.eventType)")
    }
}

// Create descriptor for pink dice
let pinkDescriptor = ASDiscoveryDescriptor()
// Create descriptor for blue dice
let blueDescriptor = ASDiscoveryDescriptor()

func showDicePicker() {
    pinkDescriptor.bluetoothServiceUUID = pinkUUID
    blueDescriptor.bluetoothServiceUUID = blueUUID
    // Create picker display items
    let pinkDisplayItem = ASPickerDisplayItem(
        name: "Pink Dice",
        productImage: productImage(named: "pink")!,
        descriptor: pinkDescriptor
    )
    let blueDisplayItem = ASPickerDisplayItem(
        name: "Blue Dice",
        productImage: productImage(named: "blue")!,
        descriptor: blueDescriptor
    )

    // Invoke accessory picker
    func addDiceButtonPressed() {
        session.showPicker(for: [pinkDisplayItem, blueDisplayItem]) { error in
            if let error {
                report("showPicker failed: \(error)")
            }
        }
    }
    addDiceButtonPressed()
}

func migratePinkDice() {
    pinkDescriptor.bluetoothServiceUUID = pinkUUID
    // Create migration items
    let pinkMigration = ASMigrationDisplayItem(
        name: "Pink Dice", productImage: productImage(named: "pink")!, descriptor: pinkDescriptor)
    pinkMigration.peripheralIdentifier = pinkPeripheral.identifier
    // Present picker with migration items
    session.showPicker(for: [pinkMigration]) { error in
        if let error {
            report("migration failed: \(error)")
        }
    }
}
