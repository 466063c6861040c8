import AccessoryCore
import Foundation
import ServiceHarness
import Testing

/// The built `accessory-settings` under Xvfb, on the agent over python-dbusmock's
/// NetworkManager, BlueZ and polkit on a private bus, with root's records written into the
/// agent's store before it starts: two of a sandboxed application (Acme Plug, exported as
/// Flatpak does) and one of a program on the host. The test drives the window over AT-SPI
/// (`drive_accessories.py`) and reads the agent's store.
final class AccessoriesWindowServices: @unchecked Sendable {
    static let application = "org.example.AcmePlug"
    static let profileID = "com.example.acme"

    let bus: PrivateSystemBus
    let networkManager: NetworkManagerMock
    let bluez: BlueZMock
    let polkit: PolkitMock
    let agent: AgentProcess
    let display: HeadlessDisplay
    let scratch: ScratchDirectory
    let window: ServiceProcess

    /// With `kiosk`, the agent picks for root's clients of the Acme profile by itself (as a
    /// kiosk policy says), so another client adds a record without a picker.
    /// `records`: whether the store holds `records()`. `configuration`: root applied a Wi-Fi
    /// configuration for `Other-Net` first (as an application does with
    /// `NEHotspotConfiguration`). `arguments`: the window's own, besides the bus and the profiles.
    init(
        kiosk: Bool = false, agentRunning: Bool = true, records: Bool = true, configuration: Bool = false,
        arguments: [String] = []
    ) throws {
        bus = try PrivateSystemBus()
        networkManager = try NetworkManagerMock(on: bus)
        bluez = try BlueZMock(on: bus)
        polkit = try PolkitMock(on: bus)
        try polkit.allow(["io.accessorysetup.open-session", "io.accessorysetup.authorize"])
        try bluez.addAdapter()
        let device = try networkManager.addWiFiDeviceOnHomeNet()
        try networkManager.addAccessPoint(
            device, name: "plug1", ssid: "Acme-Setup-4F2A", bssid: "02:00:00:00:00:31", strength: 50)
        try networkManager.addAccessPoint(
            device, name: "other", ssid: "Other-Net", bssid: "02:00:00:00:00:40", strength: 95, security: .wpa2)
        agent = try AgentProcess(bus: bus)
        try agent.installProfile(PickerServices.profile, name: Self.profileID)
        try FileManager.default.copyItem(
            at: PickerServices.packageRoot.appendingPathComponent("profiles/images"),
            to: agent.profileDirectory.appendingPathComponent("images"))
        if kiosk {
            try agent.writeKioskPolicy(
                """
                {"schemaVersion": 1, "policies": [{"profiles": ["\(Self.profileID)"], "users": [0], "choose": "firstMatch"}]}
                """)
        }
        try AccessoryStore(url: agent.storeURL).save(records ? try Self.records() : [])
        if agentRunning { try agent.start() }
        if configuration {
            _ = try Self.managerCall(
                bus, "ApplyConfiguration", ["{'ssid': <'Other-Net'>, 'passphrase': <'other-pass-1'>}", "@a{sv} {}"])
        }
        display = try HeadlessDisplay()
        scratch = try ScratchDirectory("accessory-settings")
        let share = scratch.url.appendingPathComponent("share")
        try TestApplication.install(Self.application, name: "Acme Plug", in: share)
        let executable = agent.executable.deletingLastPathComponent().appendingPathComponent("accessory-settings").path
        window = try ServiceProcess(
            name: "accessory-settings", executable: executable,
            arguments: ["--bus", bus.address, "--profiles", agent.profileDirectory.path] + arguments,
            environment: display.environment.merging([
                "XDG_DATA_DIRS": "\(share.path):/usr/local/share:/usr/share",
                "XDG_DATA_HOME": scratch.url.appendingPathComponent("home").path, "GSETTINGS_BACKEND": "memory",
            ]) { $1 }, logFile: scratch.url.appendingPathComponent("window.log"))
    }

    /// Root's records: Acme Plug's kitchen and desk plugs, and the hall plug of a host program,
    /// found on the home network with a web page; and a record of `nobody`.
    static func records() throws -> [AccessoryRecord] {
        var descriptor = DiscoveryDescriptor()
        descriptor.ssidPrefix = try SSID("Acme-Setup-")
        let app = AccessoryOwner(uid: 0, profileID: profileID, application: application)
        let host = AccessoryOwner(uid: 0, profileID: profileID)
        var hall = AccessoryRecord(
            displayName: "Hall plug", state: .authorized, ssid: try SSID("Acme-Setup-3333"), descriptor: descriptor,
            owner: host)
        hall.location = AccessoryLocation(
            ResolvedService(
                name: "Hall plug", type: "_http._tcp", hostname: "hall-plug.local", addresses: ["192.168.1.50"],
                port: 80),
            seen: Date())
        return [
            AccessoryRecord(
                displayName: "Kitchen plug", state: .authorized, ssid: try SSID("Acme-Setup-1111"),
                descriptor: descriptor, owner: app),
            AccessoryRecord(
                displayName: "Desk plug", state: .authorized, ssid: try SSID("Acme-Setup-2222"),
                descriptor: descriptor, owner: app),
            hall,
            // Another user's: the window shows the caller's own only.
            AccessoryRecord(
                displayName: "Neighbour plug", state: .authorized, ssid: try SSID("Acme-Setup-4444"),
                descriptor: descriptor, owner: AccessoryOwner(uid: 65534, profileID: profileID)),
        ]
    }

    deinit {
        window.stop()
        display.stop()
        agent.stop()
        polkit.stop()
        bluez.stop()
        networkManager.stop()
        bus.stop()
    }

    /// Calls the agent's `Manager1.method` with gdbus (GVariant text arguments); returns the reply.
    func managerCall(_ method: String, _ arguments: String...) throws -> String {
        try Self.managerCall(bus, method, arguments)
    }

    static func managerCall(_ bus: PrivateSystemBus, _ method: String, _ arguments: [String]) throws -> String {
        let process = try ChildProcess(
            "/usr/bin/gdbus",
            [
                "call", "--address", bus.address, "--dest", AgentProcess.busName, "--object-path", "/io/accessorysetup",
                "--method", "io.accessorysetup.Manager1.\(method)",
            ] + arguments, standardOutput: .pipe, standardError: .output)
        let output = String(decoding: process.readOutput().output, as: UTF8.self)
        guard process.wait(within: 60) == .exited(0) else { throw HarnessError("\(method): \(output)") }
        return output
    }

    /// The records in the agent's store now.
    var stored: [String] {
        get throws {
            try AccessoryStore(url: agent.storeURL).load().filter { $0.owner.uid == 0 }.map(\.displayName).sorted()
        }
    }

    /// Runs the AT-SPI driver against the window; returns its JSON lines and whether it passed.
    func drive(_ arguments: [String]) throws -> (lines: [[String: Any]], passed: Bool, text: String) {
        let process = try ChildProcess(
            "/usr/bin/python3",
            [
                PickerServices.testsDirectory.appendingPathComponent("drive_accessories.py").path,
                String(window.processIdentifier),
            ] + arguments + ["--shots", scratch.url.path],
            environment: ProcessInfo.processInfo.environment.merging(display.environment) { $1 }
                .merging(["PYTHONDONTWRITEBYTECODE": "1"]) { $1 },
            standardOutput: .pipe, standardError: .output)
        let data = process.readOutput().output
        let ended = process.wait(within: 90)
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        return (lines, ended == .exited(0), text)
    }

    /// What failed, for an expectation's message.
    func logs(_ run: (lines: [[String: Any]], passed: Bool, text: String)) -> Comment {
        "driver:\n\(run.text)\nwindow:\n\(window.log)\nagent:\n\(agent.log)"
    }

    func checkScreenshot(_ name: String) throws {
        try PickerServices.checkScreenshot(name, in: scratch, docsPrefix: "")
    }

    /// Waits for the window to exit after the driver closed it.
    func windowExits() throws -> Bool {
        let window = self.window
        try window.wait(for: "the window to close", timeout: 20) { !window.isRunning }
        return window.log.contains("accessory-settings: closed")
    }
}

extension GraphicalPickerTests {
    @Suite("The Accessories window under Xvfb, with the agent and mock services", .serialized)
    struct MockServicesAccessoriesWindowTests {
        @Test(
            "the person's own accessories show grouped by application, each control named; closing ends the program")
        func listShown() throws {
            let services = try AccessoriesWindowServices()
            let run = try services.drive(["list", "--rows", "3"])
            #expect(run.passed, services.logs(run))
            let rows = run.lines.compactMap { $0["rows"] as? [[String: String]] }.first ?? []
            #expect(rows.map { $0["name"] } == ["Desk plug", "Kitchen plug", "Hall plug"])
            #expect(
                rows.map { $0["description"] } == [
                    "Wi-Fi · Set up", "Wi-Fi · Set up", "Wi-Fi · Set up · at 192.168.1.50 (hall-plug.local)",
                ])
            let labels = run.lines.compactMap { $0["labels"] as? [String] }.first ?? []
            let acme = labels.firstIndex(of: "Acme Plug"), host = labels.firstIndex(of: "Programs on this computer")
            #expect(acme != nil && host != nil && acme! < host!, "\(labels)")
            let buttons = run.lines.compactMap { $0["buttons"] as? [String] }.first ?? []
            #expect(buttons.contains("Remove Access of Acme Plug"))
            #expect(!buttons.contains { $0.hasPrefix("Remove Access of Programs") })
            #expect(buttons.contains("Rename Hall plug") && buttons.contains("Remove Hall plug"))
            #expect(buttons.contains("Open the web page of Hall plug"))
            #expect(!buttons.contains("Open the web page of Desk plug"), "only an accessory found with a web page")
            let images = run.lines.compactMap { $0["images"] as? [String] }.first ?? []
            #expect(images.contains("Picture of Kitchen plug") && images.contains("Acme Plug"), "\(images)")
            #expect(run.lines.compactMap { $0["unnamed"] as? [String] }.first == [], "controls without a name")
            #expect(try services.windowExits(), services.logs(run))
            #expect(throws: Never.self) { try services.checkScreenshot("accessories-list") }
        }

        @Test("--user shows another user's accessories instead (root may; another caller needs manage-others)")
        func anotherUser() throws {
            let services = try AccessoriesWindowServices(arguments: ["--user", "65534"])
            let run = try services.drive(["list", "--rows", "1"])
            #expect(run.passed, services.logs(run))
            let rows = run.lines.compactMap { $0["rows"] as? [[String: String]] }.first ?? []
            #expect(rows.map { $0["name"] } == ["Neighbour plug"])
        }

        @Test("Tab alone reaches every control of the window")
        func keyboard() throws {
            let services = try AccessoriesWindowServices()
            let run = try services.drive(["keyboard", "--rows", "3"])
            #expect(run.passed, services.logs(run))
            let reached = Set(run.lines.compactMap { $0["reached"] as? [String] }.first ?? [])
            let buttons = (run.lines.compactMap { $0["buttons"] as? [String] }.first ?? [])
                .filter { !["Minimize", "Maximize", "Close"].contains($0) }
            #expect(buttons.count == 9, "\(buttons)")
            for button in buttons {
                #expect(reached.contains("push button: \(button)"), "\(button) is not reached by Tab: \(reached)")
            }
        }

        @Test("Rename gives the accessory the name typed; the agent keeps it")
        func rename() throws {
            let services = try AccessoriesWindowServices()
            let run = try services.drive(["rename", "--rows", "3", "--target", "Hall plug", "--to", "Porch plug"])
            #expect(run.passed, services.logs(run))
            #expect(try services.stored == ["Desk plug", "Kitchen plug", "Porch plug"])
        }

        @Test("Remove asks first, then the agent forgets the accessory")
        func remove() throws {
            let services = try AccessoriesWindowServices()
            let run = try services.drive(["remove", "--rows", "3", "--target", "Kitchen plug"])
            #expect(run.passed, services.logs(run))
            let dialog = run.lines.compactMap { $0["dialog"] as? [String] }.first ?? []
            #expect(dialog.contains("Remove “Kitchen plug”?"), "\(dialog)")
            let buttons = run.lines.compactMap { $0["buttons"] as? [String] }.last ?? []
            #expect(buttons == ["Cancel", "Remove"], "\(buttons)")
            #expect(try services.stored == ["Desk plug", "Hall plug"])
            #expect(throws: Never.self) { try services.checkScreenshot("accessories-confirm-remove") }
        }

        @Test("the Wi-Fi configurations applications applied are listed; Remove asks, then the agent forgets it")
        func removeConfiguration() throws {
            let services = try AccessoriesWindowServices(configuration: true)
            let run = try services.drive(["remove-network", "--rows", "4", "--target", "Other-Net"])
            #expect(run.passed, services.logs(run))
            let rows = run.lines.compactMap { $0["rows"] as? [[String: String]] }.first ?? []
            #expect(rows.last == ["name": "Other-Net", "description": "Wi-Fi configuration"], "\(rows)")
            let dialog = run.lines.compactMap { $0["dialog"] as? [String] }.first ?? []
            #expect(dialog.contains("Remove the Network “Other-Net”?"), "\(dialog)")
            #expect(try services.managerCall("GetConfiguredSSIDs").contains("@as []"))
            #expect(!services.window.log.contains("other-pass-1"))
        }

        @Test("Remove Access of an application removes all its accessories, and only its")
        func removeAccess() throws {
            let services = try AccessoriesWindowServices()
            let run = try services.drive(["remove-access", "--rows", "3", "--target", "Acme Plug"])
            #expect(run.passed, services.logs(run))
            let dialog = run.lines.compactMap { $0["dialog"] as? [String] }.first ?? []
            #expect(dialog.contains("Remove Access of Acme Plug?"), "\(dialog)")
            #expect(dialog.contains { $0.hasPrefix("Acme Plug forgets its 2 accessories") }, "\(dialog)")
            let after = run.lines.compactMap { $0["rows"] as? [[String: String]] }.last ?? []
            #expect(after.map { $0["name"] } == ["Hall plug"])
            #expect(try services.stored == ["Hall plug"])
            #expect(throws: Never.self) { try services.checkScreenshot("accessories-confirm-remove-access") }
            #expect(throws: Never.self) { try services.checkScreenshot("accessories-application") }
        }

        @Test(
            "an accessory another client adds appears without a refresh, also after the agent restarted",
            arguments: [false, true])
        func live(restart: Bool) throws {
            let services = try AccessoriesWindowServices(kiosk: true)
            if restart {
                let window = services.window
                try window.wait(for: "the first listing", timeout: 30) { window.log.contains("3 accessories") }
                #expect(try services.agent.terminate() == .exited(0))
                try services.agent.start()
                try window.wait(for: "the window to see the agent back", timeout: 30) {
                    window.log.contains("the agent is back")
                }
            }
            let pick = [
                "/usr/bin/env", "DBUS_SYSTEM_BUS_ADDRESS=\(services.bus.address)", "/usr/bin/python3",
                PickerServices.packageRoot.appendingPathComponent("examples/pick.py").path,
                AccessoriesWindowServices.profileID, "--items", PickerServices.item, "--timeout", "40",
            ]
            let run = try services.drive(
                ["live", "--rows", "3", "--run", pick.joined(separator: "\u{1F}"), "--to", "Acme plug"])
            #expect(run.passed, services.logs(run))
            let after = run.lines.compactMap { $0["rows"] as? [[String: String]] }.last ?? []
            #expect(after.map { $0["name"] } == ["Desk plug", "Kitchen plug", "Acme plug", "Hall plug"])
        }

        @Test("Set Up Accessory… offers the installed profiles and shows the chosen one's picker; its pick appears")
        func setUpAccessory() throws {
            // The kiosk policy picks in place of a person, for the window's session as for any.
            let services = try AccessoriesWindowServices(kiosk: true)
            let run = try services.drive([
                "setup", "--rows", "3", "--target", PickerServices.vendor, "--to", "Acme plug",
            ])
            #expect(run.passed, services.logs(run))
            let buttons = run.lines.compactMap { $0["buttons"] as? [String] }.last ?? []
            #expect(buttons == ["Cancel", PickerServices.vendor], "\(buttons)")
            #expect(try services.stored == ["Acme plug", "Desk plug", "Hall plug", "Kitchen plug"])
            #expect(services.window.log.contains("showing the picker of \(AccessoriesWindowServices.profileID)"))
        }

        @Test("with no accessory the window says where they come from and offers Set Up Accessory…")
        func empty() throws {
            let services = try AccessoriesWindowServices(records: false)
            let run = try services.drive(["status", "--target", "No Accessories"])
            #expect(run.passed, services.logs(run))
            let buttons = run.lines.compactMap { $0["buttons"] as? [String] }.first ?? []
            #expect(buttons.contains("Set Up Accessory…"), "\(buttons)")
        }

        @Test("without the agent the window says so and offers Try Again")
        func noAgent() throws {
            let services = try AccessoriesWindowServices(agentRunning: false)
            let run = try services.drive(["status", "--target", "The Accessory Service Is Not Running"])
            #expect(run.passed, services.logs(run))
            let buttons = run.lines.compactMap { $0["buttons"] as? [String] }.first ?? []
            #expect(buttons.contains("Try Again"), "\(buttons)")
        }

        @Test("without the bus the window stays, says why and offers Try Again; closing it ends the program")
        func noBus() throws {
            let services = try AccessoriesWindowServices(
                agentRunning: false, arguments: ["--bus", "unix:path=/nonexistent/accessory-test-bus"])
            let run = try services.drive(["status", "--target", "Accessories Cannot Be Shown"])
            #expect(run.passed, services.logs(run))
            let labels = run.lines.compactMap { $0["labels"] as? [String] }.first ?? []
            #expect(labels.contains { $0.contains("/nonexistent/accessory-test-bus") }, "\(labels)")
            let buttons = run.lines.compactMap { $0["buttons"] as? [String] }.first ?? []
            #expect(buttons.contains("Try Again"), "\(buttons)")
            #expect(try services.windowExits(), "\(services.window.log)")
        }
    }
}
