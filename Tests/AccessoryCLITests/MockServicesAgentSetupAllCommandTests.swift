import AccessoryCLI
import AccessoryCore
import Foundation
import ServiceHarness
import Testing

/// `accessoryctl setup-all`, run as a process against the built agent on a private system bus
/// with python-dbusmock's NetworkManager (HomeNet, and two Acme plugs' open setup hotspots in
/// range) and polkitd, the kiosk policy picking for root, and the ESP32-style provisioning
/// device simulator on 127.0.0.1 as each plug's SoftAP server.
@Suite(.serialized) final class MockServicesAgentSetupAllCommandTests {
    let services: ESPPlugAgent
    static let plugs = ["Acme-Setup-4F2A", "Acme-Setup-9B1C"]

    init() throws {
        services = try ESPPlugAgent(
            plugs: [Self.plugs[0]],
            kioskPolicy:
                #"{"schemaVersion": 1, "policies": [{"profiles": ["org.example.espprov"], "users": [0], "choose": "firstMatch"}]}"#
        )
    }

    func setupAll(proofOfPossession: String, json: Bool, extra: [String] = ["--timeout", "5"]) throws
        -> RunningAccessoryctl
    {
        try RunningAccessoryctl(
            ["setup-all", "org.example.espprov"] + extra + [
                "--ssid", "HomeNet", "--passphrase-file",
                try services.device.writeFile("home.pass", "home-passphrase"), "--pop-file",
                try services.device.writeFile("shelf.pop", proofOfPossession),
            ] + (json ? ["--json"] : []), environment: services.bus.environment, deadline: .seconds(300))
    }

    /// Switches on plug `index` of `plugs`: its setup hotspot comes into range.
    func addPlug(_ index: Int) throws {
        try services.addPlug(Self.plugs[index], index: index)
    }

    func records() throws -> [AccessoryRecord] { try AccessoryStore(url: services.agent.storeURL).load() }

    /// The agent is killed while the batch looks for the next plug, once the first is set up
    /// and the home network is back, and started again: the batch goes on, sets up the second
    /// plug (switched on meanwhile), and the first is not given the network again.
    @Test func everyPlugIsSetUpOnceAndTheBatchOutlivesTheAgent() async throws {
        // Discovery waits long enough for the kill to find the batch discovering under load;
        // with --maximum 2 the batch ends once both are set up.
        let batch = try setupAll(
            proofOfPossession: ESPPlugAgent.proofOfPossession, json: true,
            extra: ["--timeout", "120", "--maximum", "2"])
        let first = try await poll(timeout: .seconds(120)) {
            try self.records().first { $0.network != nil }
        }
        let done = try #require(first, "no plug was set up: \(services.agent.log)")
        let discovering = try await poll(timeout: .seconds(60)) {
            self.services.agent.log.components(separatedBy: "discovery started").count == 3 ? true : nil
        }
        #expect(discovering == true, "the batch did not look for the next plug: \(services.agent.log)")
        try services.agent.kill()
        try addPlug(1)
        try services.agent.start()
        let run = await batch.finish()
        #expect(run.code == .success, "\(run.out)\n\(run.err)\n\(services.agent.log)")
        #expect(run.err.contains("The agent went away"), "\(run.err)")
        let results = try #require(
            try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [[String: Any]], "\(run.out)")
        let ssids = results.compactMap { ($0["accessory"] as? [String: Any])?["ssid"] as? String }
        #expect(ssids.sorted() == Self.plugs, "\(run.out)")
        #expect(results.allSatisfy { $0["result"] as? String == "setUp" }, "\(run.out)")
        let stored = try records()
        #expect(Set(stored.compactMap { $0.network == nil ? nil : $0.ssid?.description }) == Set(Self.plugs))
        // The first plug's record still holds the network of its one setup.
        #expect(stored.first { $0.id == done.id }?.network == done.network)
        #expect(try services.networkManager.activeConnectionID(on: services.wifi) == "HomeNet")
    }

    /// A kiosk's batch and the agent both killed (SIGKILL) while the plug joins the home network
    /// (after "apply", before its verdict): the next run finishes it. The restarted agent holds
    /// the hotspot join its predecessor left up and hands it back to the resumed batch's join,
    /// which provisions the plug again; one record, the home network back.
    @Test func aBatchKilledBetweenApplyAndTheVerdictIsFinishedByTheNextRun() async throws {
        let services = try ESPPlugAgent(
            plugs: [Self.plugs[0]],
            kioskPolicy:
                #"{"schemaVersion": 1, "policies": [{"profiles": ["org.example.espprov"], "users": [0], "choose": "firstMatch"}]}"#,
            connectingSeconds: 20)
        let run = { () throws -> RunningAccessoryctl in
            try RunningAccessoryctl(
                [
                    "setup-all", "org.example.espprov", "--timeout", "5", "--ssid", "HomeNet", "--passphrase-file",
                    try services.device.writeFile("home.pass", "home-passphrase"), "--pop-file",
                    try services.device.writeFile("shelf.pop", ESPPlugAgent.proofOfPossession),
                ], environment: services.bus.environment, deadline: .seconds(300))
        }
        let first = try run()
        try await waitUntil("the plug applies the network", timeout: .seconds(120)) {
            services.device.log.contains("applying the configuration")
        }
        first.signal(SIGKILL)
        try services.agent.kill()
        _ = await first.finish()
        #expect(try services.networkManager.activeConnectionID(on: services.wifi) == "Accessory Acme-Setup-4F2A")
        try services.agent.start()

        let second = await (try run()).finish()
        #expect(second.code == .success, "\(second.out)\n\(second.err)\n\(services.agent.log)")
        #expect(second.out.contains("(resumed)"), "\(second.out)")
        #expect(services.agent.log.contains("handed back"), "\(services.agent.log)")
        let stored = try AccessoryStore(url: services.agent.storeURL).load()
        #expect(stored.count == 1 && stored.first?.network?.ssid.description == "HomeNet", "\(stored)")
        #expect(try services.networkManager.activeConnectionID(on: services.wifi) == "HomeNet")
    }

    /// A plug that turns the proof of possession away fails with the device's verdict, is not
    /// tried again nor kept, and the batch ends with a table saying so.
    @Test func aPlugThatFailsIsReportedOnceAndNotKept() async throws {
        try addPlug(1)
        let batch = try setupAll(proofOfPossession: "not-the-pop", json: false)
        let run = await batch.finish()
        #expect(run.code == .failure, "\(run.err)\n\(services.agent.log)")
        let failures = run.outLines.filter { $0.contains("ProvisioningWrongProofOfPossession") }
        #expect(failures.count == 2, "\(run.out)")
        for ssid in Self.plugs {
            #expect(failures.filter { $0.contains(ssid) }.count == 1, "\(run.out)")
        }
        // A line for each as it failed, then the table.
        #expect(run.outLines.filter { $0.hasPrefix("[") && $0.contains(": failed: the device refused") }.count == 2)
        let table = run.outLines.drop { !$0.hasPrefix("ACCESSORY") }
        #expect(table.count == 3 && table.dropFirst().allSatisfy { $0.contains(" failed ") }, "\(run.out)")
        #expect(try records().isEmpty)
        #expect(!(run.out + run.err + services.agent.log).contains("not-the-pop"))
    }
}
