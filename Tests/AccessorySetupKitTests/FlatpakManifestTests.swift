import AgentInterface
import Foundation
import Testing

/// The example application's Flatpak manifest grants what a sandboxed client of the agent needs
/// (examples/PickAccessory/README.md), and its desktop file is the one the picker names it by.
@Suite("The example application's Flatpak manifest")
struct FlatpakManifestTests {
    static let example = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("examples/PickAccessory")

    static func manifest() throws -> [String: Any] {
        let data = try Data(contentsOf: example.appendingPathComponent("org.example.PickAccessory.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func grantsTheAgentsNameOnTheSystemBusAndNothingElse() throws {
        let manifest = try Self.manifest()
        let finishArguments = try #require(manifest["finish-args"] as? [String])
        #expect(finishArguments == ["--system-talk-name=\(AgentBus.name)"])
    }

    @Test func installsTheDesktopFileNamedForItsApplicationID() throws {
        let manifest = try Self.manifest()
        let id = try #require(manifest["app-id"] as? String)
        #expect(manifest["command"] as? String == "pick-accessory")
        let modules = try #require(manifest["modules"] as? [[String: Any]])
        let commands = modules.flatMap { $0["build-commands"] as? [String] ?? [] }
        #expect(commands.contains { $0.hasSuffix("/app/share/applications/\(id).desktop") })
        let desktop = try String(
            contentsOf: Self.example.appendingPathComponent("\(id).desktop"), encoding: .utf8)
        #expect(desktop.split(separator: "\n").contains("Exec=pick-accessory"))
        #expect(desktop.split(separator: "\n").contains { $0.hasPrefix("Name=") })
    }
}
