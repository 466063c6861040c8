// apple-sample-code: Apple's AccessorySetupKit and NetworkExtension sample code, built here with
// only the lines Linux must change (each file's header lists them), run against the agent.
//
//     apple-sample-code session|session-kept|picker|dice|filter|wifi|migration
//
// The session finds its profile from the application's identity: run it with
// GIO_LAUNCHED_DESKTOP_FILE naming org.example.AppleSamples.desktop. Each line it reports
// starts with "sample: "; it exits 0 once the sample's last step ran, 1 after 180 seconds:
// longer than any wait of the tests that run it, even under a sanitizer.

import Dispatch
import Foundation

switch CommandLine.arguments.dropFirst().first {
case "session", "picker":
    let controller = DiscoveringViewController()
    controller.viewDidLoad()
    if CommandLine.arguments[1] == "picker" {
        controller.showMyPicker()
    } else {
        finishOn = ["activated", "invalidated"]
    }
    keep(controller)
case "session-kept":
    // The session as the article's controller keeps it, until something ends it.
    let controller = DiscoveringViewController()
    controller.viewDidLoad()
    finishOn = ["invalidated"]
    keep(controller)
case "dice":
    activateDiceSession()
    showDicePicker()
case "filter":
    let controller = FilteringViewController()
    controller.viewDidLoad()
    controller.session.showPicker(for: [diceItem()]) { error in if let error { report("showPicker failed: \(error)") } }
    keep(controller)
case "wifi":
    let controller = WiFiSetup()
    controller.start()
    keep(controller)
case "migration":
    activateDiceSession()
    migrateExistingAccessories()
case "pink-migration":
    activateDiceSession()
    migratePinkDice()
default:
    FileHandle.standardError.write(
        Data("usage: apple-sample-code session|session-kept|picker|dice|filter|wifi|migration|pink-migration\n".utf8))
    exit(64)
}
DispatchQueue.main.asyncAfter(deadline: .now() + 180) {
    report("timed out")
    exit(1)
}
dispatchMain()
