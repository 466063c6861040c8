import Foundation
import ServiceHarness
import Testing

/// The built `accessory-picker` under Xvfb, registered for a logind session (python-dbusmock's
/// `logind`) with the agent, which stands on python-dbusmock's NetworkManager, BlueZ and polkit
/// on a private system bus. A client (`examples/pick.py`) in that session shows the picker; the
/// test drives the dialog over AT-SPI (`drive_picker.py`) and reads what the client received.
final class PickerServices: @unchecked Sendable {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let vendor = "Acme Devices"
    static let item = """
        [{"name": "Acme plug", "productImage": "images/smart-plug.svg", "setupOptions": ["rename"],
          "descriptor": {"ssidPrefix": "Acme-Setup-"}}]
        """
    static let profile = """
        {"schemaVersion": 1, "id": "com.example.acme", "vendor": "\(vendor)", "supports": ["wifi"],
         "hotspot": {"security": "open", "passphrase": {"source": "none"}}, "handoff": "none",
         "items": \(item)}
        """

    /// A profile whose hotspot passphrase the person types in the picker.
    static let secureVendor = "Secure Devices"
    static let secureItem = """
        [{"name": "Secure sensor", "descriptor": {"ssidPrefix": "Secure-Setup-"}}]
        """
    static let secureProfile = """
        {"schemaVersion": 1, "id": "com.example.secure", "vendor": "\(secureVendor)", "supports": ["wifi"],
         "hotspot": {"security": "wpa2Personal", "passphrase": {"source": "prompt", "hint": "on the label"}},
         "handoff": "none", "items": \(secureItem)}
        """

    let bus: PrivateSystemBus
    let device: String
    /// The access point of `Acme-Setup-4F2A`.
    let firstPlug: String
    let networkManager: NetworkManagerMock
    let bluez: BlueZMock
    let polkit: PolkitMock
    let logind: LogindMock
    let agent: AgentProcess
    let display: HeadlessDisplay
    let picker: ServiceProcess
    let scratch: ScratchDirectory

    /// A profile whose accessory is provisioned (ESP-IDF over its open hotspot, at `port` on
    /// 127.0.0.1) with the proof of possession printed on it, which the picker asks for.
    static let provisionedVendor = "Provisioned Devices"
    static let provisionedItem = """
        [{"name": "Provisioned plug", "descriptor": {"ssidPrefix": "Prov-Setup-"}}]
        """
    static func provisionedProfile(address: String) -> String {
        """
        {"schemaVersion": 1, "id": "com.example.provisioned", "vendor": "\(provisionedVendor)", "supports": ["wifi"],
         "hotspot": {"security": "open", "passphrase": {"source": "none"}}, "handoff": "joinHotspot",
         "provisioning": {"protocol": "espIDF", "transport": "softAP", "address": "\(address)",
                          "proofOfPossession": {"source": "prompt", "hint": "The code on the plug's back."}},
         "items": \(provisionedItem)}
        """
    }

    /// `provisioning`: the ESP device simulator of the provisioned profile, the agent on its
    /// setup hotspots.
    init(provisioning: ESPProvisioningDevice? = nil) throws {
        bus = try PrivateSystemBus()
        networkManager = try NetworkManagerMock(on: bus)
        bluez = try BlueZMock(on: bus)
        polkit = try PolkitMock(on: bus)
        try polkit.allow(["io.accessorysetup.open-session", "io.accessorysetup.authorize"])
        logind = try LogindMock(on: bus, session: "c1", uid: 0, user: "root")
        try bluez.addAdapter()
        device = try networkManager.addWiFiDeviceOnHomeNet()
        firstPlug = try networkManager.addAccessPoint(
            device, name: "plug1", ssid: "Acme-Setup-4F2A", bssid: "02:00:00:00:00:31", strength: 50)
        try networkManager.addAccessPoint(
            device, name: "plug2", ssid: "Acme-Setup-9B1C", bssid: "02:00:00:00:00:32", strength: 80)
        try networkManager.addAccessPoint(
            device, name: "secure", ssid: "Secure-Setup-1A2B", bssid: "02:00:00:00:00:51", strength: 70,
            security: .wpa2)
        try networkManager.addAccessPoint(
            device, name: "other", ssid: "Other-Net", bssid: "02:00:00:00:00:40", strength: 95, security: .wpa2)
        agent = try AgentProcess(bus: bus, on: provisioning?.hotspots)
        if let provisioning {
            try networkManager.addAccessPoint(
                device, name: "prov", ssid: "Prov-Setup-7C1D", bssid: "02:00:00:00:00:61", strength: 75)
            try networkManager.giveIPv4(to: "Prov-Setup-7C1D")
            try agent.installProfile(
                Self.provisionedProfile(address: provisioning.address), name: "com.example.provisioned")
        }
        try agent.installProfile(Self.profile, name: "com.example.acme")
        try agent.installProfile(Self.secureProfile, name: "com.example.secure")
        try FileManager.default.copyItem(
            at: Self.packageRoot.appendingPathComponent("profiles/images"),
            to: agent.profileDirectory.appendingPathComponent("images"))
        try agent.installShippedProfile("gopro.json")
        try agent.start()
        display = try HeadlessDisplay()
        scratch = try ScratchDirectory("accessory-picker")
        let executable = agent.executable.deletingLastPathComponent().appendingPathComponent("accessory-picker").path
        picker = try ServiceProcess(
            name: "accessory-picker", executable: executable,
            arguments: ["--bus", bus.address, "--session", "c1", "--profiles", agent.profileDirectory.path],
            environment: display.environment, logFile: scratch.url.appendingPathComponent("picker.log"))
        let picker = self.picker
        try picker.wait(for: "the picker's registration", timeout: 90) {
            picker.log.contains("registered as the picker of logind session c1") || !picker.isRunning
        }
        guard picker.isRunning else { throw HarnessError("accessory-picker exited:\n\(picker.log)") }
    }

    deinit {
        picker.stop()
        display.stop()
        agent.stop()
        logind.stop()
        polkit.stop()
        bluez.stop()
        networkManager.stop()
        bus.stop()
    }

    /// Starts the example client showing the picker for `items` (the Acme plug item).
    func startClient(
        profile: String = "com.example.acme", items: String = item, discoveryTimeout: Int? = nil,
        arguments extra: [String] = []
    ) throws -> (process: ChildProcess, output: URL) {
        let output = scratch.url.appendingPathComponent("client-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        defer { try? handle.close() }
        let process = try ChildProcess(
            "/usr/bin/python3",
            [
                Self.packageRoot.appendingPathComponent("examples/pick.py").path, profile,
                "--items", items, "--timeout", "40",
            ] + (discoveryTimeout.map { ["--discovery-timeout", String($0)] } ?? []) + extra,
            environment: ProcessInfo.processInfo.environment.merging(bus.environment) { $1 },
            standardOutput: .file(handle), standardError: .file(handle))
        return (process, output)
    }

    /// Runs the AT-SPI driver against the picker; returns its JSON lines and whether it passed.
    func drive(
        _ arguments: [String], title: String = vendor
    ) throws -> (lines: [[String: Any]], passed: Bool, text: String) {
        let process = try ChildProcess(
            "/usr/bin/python3",
            [
                Self.testsDirectory.appendingPathComponent("drive_picker.py").path, String(picker.processIdentifier),
            ] + arguments + ["--title", title, "--shots", scratch.url.path],
            environment: ProcessInfo.processInfo.environment.merging(display.environment) { $1 }
                .merging(["PYTHONDONTWRITEBYTECODE": "1"]) { $1 },
            standardOutput: .pipe, standardError: .output)
        let data = process.readOutput().output
        let ended = process.wait(within: 60)
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        return (lines, ended == .exited(0), text)
    }

    /// Waits for the client to end; returns its exit status and output.
    func finish(
        _ client: (process: ChildProcess, output: URL), timeout: TimeInterval = 30
    ) -> (status: Int32, output: String) {
        var ended = client.process.wait(within: timeout)
        if ended == nil {
            client.process.terminate()
            ended = client.process.wait(within: 10)
        }
        return (ended?.status ?? -1, (try? String(contentsOf: client.output, encoding: .utf8)) ?? "")
    }

    /// Compares a screenshot the driver took with its reference within a tolerance (ImageMagick's
    /// normalised RMSE); with UPDATE_SCREENSHOTS=1 makes it the reference (and the README's copy).
    func checkScreenshot(_ name: String) throws {
        try Self.checkScreenshot(name, in: scratch)
    }

    /// `checkScreenshot` for a screenshot the driver took into `scratch`; the README's copy is
    /// `docs/images/<docsPrefix><name>.png`.
    static func checkScreenshot(_ name: String, in scratch: ScratchDirectory, docsPrefix: String = "picker-") throws {
        let shot = scratch.url.appendingPathComponent("\(name).png")
        let reference = testsDirectory.appendingPathComponent("Reference/\(name).png")
        if ProcessInfo.processInfo.environment["UPDATE_SCREENSHOTS"] == "1" {
            for target in [reference, packageRoot.appendingPathComponent("docs/images/\(docsPrefix)\(name).png")] {
                try? FileManager.default.createDirectory(
                    at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                try? FileManager.default.removeItem(at: target)
                try FileManager.default.copyItem(at: shot, to: target)
            }
            return
        }
        guard FileManager.default.fileExists(atPath: reference.path) else {
            throw HarnessError(
                "no reference image \(reference.path); look at \(shot.path) and run with UPDATE_SCREENSHOTS=1")
        }
        let process = try ChildProcess(
            "/usr/bin/compare", ["-metric", "RMSE", shot.path, reference.path, "null:"], standardError: .pipe)
        let text = String(decoding: process.readOutput().error, as: UTF8.self)
        process.wait(within: 60)
        // "1234.5 (0.0188)": the normalised difference is in parentheses.
        let normalised = text.split(separator: "(").last.flatMap { Double($0.prefix { $0 != ")" }) }
        guard let normalised, normalised <= 0.03 else {
            throw HarnessError("\(name): the screenshot \(shot.path) differs from \(reference.path): \(text)")
        }
    }
}

extension GraphicalPickerTests {
    @Suite("The graphical picker under Xvfb, with the agent and mock services", .serialized)
    struct MockServicesPickerTests {
        @Test("the picker shows both plugs with their image; choosing one by AT-SPI and renaming it reaches the client")
        func chooseAndRename() throws {
            let services = try PickerServices()
            let client = try services.startClient()
            let run = try services.drive([
                "choose", "--rows", "2", "--choose", "Acme-Setup-9B1C", "--rename", "Kitchen plug",
            ])
            let result = services.finish(client)
            #expect(run.passed, "driver:\n\(run.text)\npicker:\n\(services.picker.log)\nagent:\n\(services.agent.log)")
            let rows = run.lines.compactMap { $0["rows"] as? [[String: String]] }.first ?? []
            #expect(
                Set(rows.compactMap { $0["description"] }) == [
                    "Wi-Fi · Acme-Setup-4F2A, Signal 50 percent", "Wi-Fi · Acme-Setup-9B1C, Signal 80 percent",
                ])
            #expect(rows.allSatisfy { $0["name"] == "Acme plug" })
            let images = run.lines.compactMap { $0["images"] as? [String] }.first ?? []
            #expect(images == ["Picture of Acme plug", "Picture of Acme plug"])
            #expect(
                run.lines.compactMap { $0["unnamed"] as? [String] }.first == [], "controls without an accessible name")
            #expect(result.status == 0, "client:\n\(result.output)")
            #expect(result.output.contains("AccessoryAdded: Kitchen plug ("), "client:\n\(result.output)")
            #expect(result.output.contains("ssid Acme-Setup-9B1C"), "client:\n\(result.output)")
            let labels = run.lines.compactMap { $0["labels"] as? [String] }.first ?? []
            #expect(labels.contains("“Kitchen plug” is set up."), "labels: \(labels)")
            for name in ["choose-list", "choose-chosen", "choose-done"] {
                #expect(throws: Never.self) { try services.checkScreenshot(name) }
            }
        }

        @Test(
            "a number the camera shows while pairing is put to the person, and the pairing follows the answer",
            arguments: ["matches", "differs"])
        func numericComparison(_ answer: String) throws {
            let services = try PickerServices()
            try services.networkManager.addAccessPoint(
                services.device, name: "gopro", ssid: GoProCamera.ssid, bssid: "02:00:00:00:00:50", strength: 70,
                security: .wpa2)
            let camera = try GoProCamera.add(to: services.bluez)
            try services.bluez.setPairing(camera, agentName: AgentProcess.busName, confirm: 271_828)
            let items =
                #"[{"name": "GoPro camera", "descriptor": {"bluetoothServiceUUID": "\#(GoProCamera.service)"}}]"#
            let client = try services.startClient(profile: "com.gopro.camera", items: items)
            let run = try services.drive(
                ["choose", "--rows", "1", "--choose", "GoPro", "--compare", answer], title: "GoPro (Open GoPro BLE API)"
            )
            let result = services.finish(client)
            #expect(run.passed, "driver:\n\(run.text)\npicker:\n\(services.picker.log)\nagent:\n\(services.agent.log)")
            let comparing = run.lines.compactMap { $0["comparing"] as? [String] }.first ?? []
            #expect(comparing.contains { $0.contains("show 271828?") }, "labels: \(comparing)")
            let asked = try services.bluez.gattLog(camera).agentCalls
            if answer == "matches" {
                #expect(asked == [["RequestConfirmation", "accepted"]])
                #expect(result.output.contains("AccessoryAdded: GoPro camera"), "client:\n\(result.output)")
            } else {
                #expect(asked == [["RequestConfirmation", "org.bluez.Error.Rejected"]])
                #expect(!result.output.contains("AccessoryAdded"), "client:\n\(result.output)")
            }
        }

        @Test("keys alone choose an accessory: Down to its row, Return sets it up, Escape closes")
        func keyboardChoice() throws {
            let services = try PickerServices()
            let client = try services.startClient()
            let run = try services.drive(["keyboard", "--rows", "2", "--choose", "Acme-Setup-4F2A"])
            let result = services.finish(client)
            #expect(run.passed, "driver:\n\(run.text)\npicker:\n\(services.picker.log)\nagent:\n\(services.agent.log)")
            let focused = run.lines.compactMap { $0["focused"] as? [String] }.first
            #expect(focused == ["Wi-Fi · Acme-Setup-4F2A, Signal 50 percent"])
            #expect(result.status == 0, "client:\n\(result.output)")
            #expect(result.output.contains("AccessoryAdded: Acme plug ("), "client:\n\(result.output)")
            #expect(result.output.contains("ssid Acme-Setup-4F2A"), "client:\n\(result.output)")
        }

        @Test("when the agent stops and comes back, the picker registers again and serves the next client")
        func registersAgainWhenTheAgentComesBack() throws {
            let services = try PickerServices()
            let picker = services.picker
            #expect(try services.agent.terminate() == .exited(0))
            try picker.wait(for: "the picker to hear the release", timeout: 90) {
                picker.log.contains("the agent released the picker") || !picker.isRunning
            }
            #expect(picker.isRunning, "the picker exited with the agent:\n\(picker.log)")
            try services.agent.start()
            try picker.wait(for: "the picker to register again", timeout: 90) {
                picker.log.components(separatedBy: "registered as the picker of logind session c1").count == 3
            }
            let client = try services.startClient()
            let run = try services.drive(["keyboard", "--rows", "2", "--choose", "Acme-Setup-4F2A"])
            let result = services.finish(client)
            #expect(run.passed, "driver:\n\(run.text)\npicker:\n\(picker.log)\nagent:\n\(services.agent.log)")
            #expect(result.status == 0, "client:\n\(result.output)")
            #expect(result.output.contains("ssid Acme-Setup-4F2A"), "client:\n\(result.output)")
        }

        @Test("Escape cancels the picker; the client receives UserCancelled")
        func escape() throws {
            let services = try PickerServices()
            let client = try services.startClient()
            let run = try services.drive(["keyboard", "--rows", "2"])
            let result = services.finish(client)
            #expect(run.passed, "driver:\n\(run.text)\npicker:\n\(services.picker.log)\nagent:\n\(services.agent.log)")
            #expect(result.status == 1)
            let cancelled = "PickerDidDismiss: io.accessorysetup.Error.UserCancelled"
            #expect(result.output.contains(cancelled), "client:\n\(result.output)")
        }

        @Test("when nothing is found in time the dialog says what to do, and the client gets DiscoveryTimeout")
        func discoveryTimeout() throws {
            let services = try PickerServices()
            let nothing = #"[{"name": "Acme plug", "descriptor": {"ssidPrefix": "Acme-Setup-ZZ"}}]"#
            let client = try services.startClient(items: nothing, discoveryTimeout: 2)
            let run = try services.drive(["timeout"])
            let result = services.finish(client)
            #expect(run.passed, "driver:\n\(run.text)\npicker:\n\(services.picker.log)\nagent:\n\(services.agent.log)")
            let labels = run.lines.compactMap { $0["labels"] as? [String] }.first ?? []
            #expect(
                labels.contains("No accessory was found in time. Make sure it is in setup mode."), "labels: \(labels)")
            let timedOut = "PickerDidDismiss: io.accessorysetup.Error.DiscoveryTimeout"
            #expect(result.output.contains(timedOut), "client:\n\(result.output)")
            #expect(throws: Never.self) { try services.checkScreenshot("timeout-error") }
        }

        @Test("where the profile asks, Set Up waits for the passphrase the person types; the pick reaches the client")
        func passphrase() throws {
            let services = try PickerServices()
            let client = try services.startClient(profile: "com.example.secure", items: PickerServices.secureItem)
            let secret = "label-code-8841"
            let run = try services.drive(
                ["choose", "--choose", "Secure-Setup-1A2B", "--passphrase", secret], title: PickerServices.secureVendor)
            let result = services.finish(client)
            #expect(run.passed, "driver:\n\(run.text)\npicker:\n\(services.picker.log)\nagent:\n\(services.agent.log)")
            let sensitivity = run.lines.compactMap { $0["setUpSensitive"] as? [Bool] }.first
            #expect(sensitivity == [false, true], "Set Up before and after the passphrase")
            #expect(result.output.contains("AccessoryAdded: Secure sensor ("), "client:\n\(result.output)")
            #expect(!services.picker.log.contains(secret) && !services.agent.log.contains(secret))
        }

        @Test("the proof of possession printed on the device is typed in the picker; the app's provisioning uses it")
        func proofOfPossession() throws {
            let device = try ESPProvisioningDevice(
                security: 1, proofOfPossession: "back-code-3318", on: SetupHotspots())
            defer { device.stop() }
            let services = try PickerServices(provisioning: device)
            try services.polkit.allow([
                "io.accessorysetup.open-session", "io.accessorysetup.authorize", "io.accessorysetup.join",
                "io.accessorysetup.provision",
            ])
            let client = try services.startClient(
                profile: "com.example.provisioned", items: PickerServices.provisionedItem,
                arguments: [
                    "--provision", "--ssid", "HomeNet", "--passphrase-file",
                    try device.writeFile("home.pass", "home-passphrase"),
                ])
            let run = try services.drive(
                ["choose", "--choose", "Prov-Setup-7C1D", "--pop", "back-code-3318"],
                title: PickerServices.provisionedVendor)
            let result = services.finish(client, timeout: 60)
            #expect(run.passed, "driver:\n\(run.text)\npicker:\n\(services.picker.log)\nagent:\n\(services.agent.log)")
            let sensitivity = run.lines.compactMap { $0["proofSetUpSensitive"] as? [Bool] }.first
            #expect(sensitivity == [false, true], "Set Up before and after the proof of possession")
            // Before Set Up the dialog says what the pick will ask: the network, to which accessory.
            let labels = run.lines.compactMap { $0["labelsChosen"] as? [String] }.first ?? []
            #expect(
                labels.contains {
                    $0.hasPrefix("A program of yours asks to give the accessory “")
                        && $0.hasSuffix("the passphrase of the Wi-Fi network “HomeNet”. It is sent encrypted.")
                }, "\(labels)")
            #expect(result.status == 0, "client:\n\(result.output)\nagent:\n\(services.agent.log)")
            #expect(result.output.contains("ProvisioningProgress: sessionEstablished"), "client:\n\(result.output)")
            #expect(
                result.output.contains("provisioned: the accessory joined HomeNet at 192.168.1.42"),
                "client:\n\(result.output)")
            for log in [services.picker.log, services.agent.log, result.output] {
                #expect(!log.contains("back-code-3318"))
            }
            // The dialog with the code typed (hidden), before Set Up.
            try? FileManager.default.copyItem(
                at: services.scratch.url.appendingPathComponent("choose-chosen.png"),
                to: services.scratch.url.appendingPathComponent("proof-of-possession.png"))
            #expect(throws: Never.self) { try services.checkScreenshot("proof-of-possession") }
        }

        @Test("a row vanishes while the picker is open when its accessory goes out of range")
        func rowsLive() throws {
            let services = try PickerServices()
            let client = try services.startClient()
            let remove = [
                "/usr/bin/gdbus", "call", "--address", services.bus.address, "--dest", "org.freedesktop.NetworkManager",
                "--object-path", "/org/freedesktop", "--method", "org.freedesktop.DBus.Mock.RemoveAccessPoint",
                services.device, services.firstPlug,
            ]
            let run = try services.drive(["live", "--rows", "2", "--run", remove.joined(separator: "\u{1F}")])
            let result = services.finish(client)
            #expect(run.passed, "driver:\n\(run.text)\npicker:\n\(services.picker.log)\nagent:\n\(services.agent.log)")
            let seen = run.lines.compactMap { $0["rows"] as? [[String: String]] }
                .map { $0.compactMap { $0["description"] } }
            #expect(seen.count == 2)
            #expect(seen.first?.count == 2)
            #expect(seen.last == ["Wi-Fi · Acme-Setup-9B1C, Signal 80 percent"])
            #expect(result.output.contains("PickerDidDismiss: io.accessorysetup.Error.UserCancelled"))
        }

        @Test("Cancel in the picker reaches the client as UserCancelled")
        func cancel() throws {
            let services = try PickerServices()
            let client = try services.startClient()
            let run = try services.drive(["cancel", "--rows", "2"])
            let result = services.finish(client)
            #expect(run.passed, "driver:\n\(run.text)\npicker:\n\(services.picker.log)\nagent:\n\(services.agent.log)")
            #expect(result.status == 1)
            let cancelled = "PickerDidDismiss: io.accessorysetup.Error.UserCancelled"
            #expect(result.output.contains(cancelled), "client:\n\(result.output)")
            #expect(services.picker.isRunning, "the picker serves the next request:\n\(services.picker.log)")
        }
    }
}
