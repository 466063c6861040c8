import AccessoryCLI
import Foundation
import Testing

@Suite struct ProfileValidateCommandTests {
    @Test func shippedProfilesAreValid() async {
        let profiles = Paths.shippedProfiles
        #expect(profiles.count >= 6)
        let run = await accessoryctl(["profile", "validate"] + profiles)
        #expect(run.code == .success, "\(run.out)")
        #expect(run.outLines.count == profiles.count)
        for (line, path) in zip(run.outLines, profiles) {
            #expect(line.hasPrefix("\(path): valid ("))
        }
    }

    /// Every fault of a file with many, each on its own line as `FILE: field: message`.
    @Test func reportsEveryFaultWithItsField() async {
        let path = Paths.fixture("many-faults.json")
        let run = await accessoryctl("profile", "validate", path)
        #expect(run.code == .failure)
        let lines = run.outLines
        #expect(lines.allSatisfy { $0.hasPrefix("\(path): ") }, "\(lines)")
        let fields = lines.map { line in
            String(line.dropFirst(path.count + 2).prefix { $0 != ":" })
        }
        #expect(
            fields == [
                "colour",
                "id",
                "vendor",
                "items[0].descriptor.ssidPrefix",
                "items[1].descriptor.ssid",
                "items[2].descriptor.bluetoothServiceDataMask",
                "items[2].descriptor.bluetoothServiceUUID",
                "items[3].descriptor.bluetoothNameSubstring",
                "items[3].descriptor.bluetoothManufacturerDataBlob",
                "items[3].descriptor",
                "items[3].descriptor.bluetoothNameSubstring",
                "items[4].name",
                "items[4].descriptor.setupOptions",
                "items[4].descriptor.bssid",
                "hotspot",
            ])
        #expect(
            lines.contains(
                "\(path): items[0].descriptor.ssidPrefix: ssid and ssidPrefix are mutually exclusive; keep the exact ssid or the prefix, not both"
            ))
        #expect(lines.contains { $0.contains("items[1].descriptor.ssid: is 36 bytes long") })
        #expect(
            lines.contains {
                $0.contains(
                    "items[2].descriptor.bluetoothServiceUUID: service 0000feaa-0000-1000-8000-00805f9b34fb is not declared in bluetooth.services"
                )
            })
        #expect(
            lines.contains {
                $0.contains(
                    "items[3].descriptor.bluetoothNameSubstring: name 'Acme' is not declared in bluetooth.names")
            })
        #expect(lines.contains { $0.contains("hotspot: is required by handoff joinHotspot") })
    }

    @Test func validAndInvalidFilesTogetherExit1() async {
        let run = await accessoryctl(
            "profile", "validate", Paths.profile("wled.json"), Paths.fixture("many-faults.json"))
        #expect(run.code == .failure)
        #expect(run.outLines.first?.hasSuffix("wled.json: valid (ge.wled.softap, 1 item)") == true)
    }

    @Test func unreadableAndMalformedFiles() async throws {
        let malformed = try TemporaryFile("{ \"schemaVersion\": 1, ")
        let run = await accessoryctl("profile", "validate", "/nonexistent/profile.json", malformed.path)
        #expect(run.code == .failure)
        #expect(run.outLines.count == 2)
        #expect(run.outLines[0].hasPrefix("/nonexistent/profile.json: (file): cannot be read"))
        #expect(run.outLines[1].hasPrefix("\(malformed.path): (document): is not valid JSON"))
    }

    @Test func fixedPassphraseIsNeverEchoed() async throws {
        let profile = try TemporaryFile(
            """
            {"schemaVersion": 1, "id": "org.example.plug", "vendor": "Example", "supports": ["wifi"],
             "hotspot": {"security": "wpa2Personal", "passphrase": {"source": "fixed", "value": "s3cr\\u0007t"}},
             "handoff": "joinHotspot", "items": [{"name": "Plug", "descriptor": {"ssidPrefix": "Plug-"}}]}
            """)
        let run = await accessoryctl("profile", "validate", profile.path)
        #expect(run.code == .failure)
        #expect(run.out.contains("hotspot.passphrase.value: "))
        #expect(!run.out.contains("s3cr"))
    }

    @Test func jsonOutput() async throws {
        let run = await accessoryctl(
            "profile", "validate", "--json", Paths.profile("wled.json"), Paths.fixture("many-faults.json"))
        #expect(run.code == .failure)
        struct Output: Decodable {
            struct File: Decodable {
                var file: String
                var valid: Bool
                var profile: String?
                var errors: [Issue]
            }
            struct Issue: Decodable { var field: String; var message: String }
            var files: [File]
        }
        let output = try JSONDecoder().decode(Output.self, from: Data(run.out.utf8))
        #expect(output.files.map(\.valid) == [true, false])
        #expect(output.files[0].profile == "ge.wled.softap")
        #expect(output.files[1].errors.count == 15)
        #expect(output.files[1].errors.first?.field == "colour")
    }
}
