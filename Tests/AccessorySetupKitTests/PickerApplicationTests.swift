import AccessorySetupKit
import AgentInterface
import Foundation
import GLibRuntime
import Testing

@Suite("The application a picker names: the request's application id, looked up in its desktop file")
struct PickerApplicationTests {
    private func request(application: String?) -> PickerAgentRequest {
        PickerAgentRequest(
            profile: "com.example.acme", vendor: "Acme Devices", application: application,
            items: [.init(name: "Acme plug")], asksPassphrase: false)
    }

    @Test func theApplicationSurvivesTheBusAndIsNamedByItsDesktopFile() throws {
        let exports = FileManager.default.temporaryDirectory.appendingPathComponent("exports-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: exports) }
        let applications = exports.appendingPathComponent("share/applications")
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        try Data("[Desktop Entry]\nType=Application\nExec=/usr/bin/true\nName=Acme Plug\n".utf8)
            .write(to: applications.appendingPathComponent("org.example.AcmePlug.desktop"))

        let sent = request(application: "org.example.AcmePlug")
        let read = PickerAgentRequest(sent.dbusValue)
        #expect(read.application == "org.example.AcmePlug")
        let named = try #require(
            read.requestingApplication(exportDirectories: [exports.appendingPathComponent("share").path]))
        #expect(named.pickerHeading == "Acme Plug wants to set up an accessory")
        let unknown = try #require(
            request(application: "org.example.Gone").requestingApplication(exportDirectories: []))
        #expect(unknown.pickerHeading == "org.example.Gone wants to set up an accessory")
    }

    @Test func aClientOnTheHostNamesNoApplication() {
        #expect(request(application: nil).requestingApplication() == nil)
        #expect(PickerAgentRequest(request(application: nil).dbusValue).application == nil)
        #expect(request(application: "").requestingApplication() == nil)
    }
}
