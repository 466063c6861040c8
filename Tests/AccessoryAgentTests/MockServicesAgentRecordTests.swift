import AccessoryCore
import BusService
import DBusValues
import Foundation
import ServiceHarness
import Synchronization
import Testing

/// The agent's records across restarts and crashes, and many sessions at once: the built agent
/// on a private bus with python-dbusmock's NetworkManager (the project's template), BlueZ and
/// polkitd.
@Suite("Agent records and load (private bus: mock NetworkManager, BlueZ, polkitd)")
struct MockServicesAgentRecordTests {
    @Test func recordsSurviveARestartAfterSIGTERM() async throws {
        let services = try AgentServices(kiosk: kioskPolicy(profiles: ["ge.wled.softap"], users: [0]))
        let client = try await services.client()
        let session = try await client.openSession("ge.wled.softap")
        _ = try await session.activate()
        try await session.showPicker([wledItem])
        let signals = try await session.waitForDismiss()
        let added = try #require(signals.first { $0.member == "AccessoryAdded" }?.arguments.first)
        let id = try #require(added["id"]?.string)

        let termination = try services.agent.terminate()
        #expect(termination == .exited(0), "the agent stops cleanly on SIGTERM: \(services.agent.log)")
        #expect(services.agent.log.contains("stopping: SIGTERM"))
        // The log is for journald: every line has its <N> priority prefix.
        let lines = services.agent.log.split(separator: "\n")
        #expect(!lines.isEmpty && lines.allSatisfy { $0.wholeMatch(of: /<[3-7]>.+/) != nil }, "\(services.agent.log)")
        // Its sessions ended with it, each told why.
        let ended = try await session.signals.wait(for: "Invalidated") { $0.contains { $0.member == "Invalidated" } }
        #expect(ended.last?.arguments.first?["name"]?.string == "io.accessorysetup.Error.Invalidated")

        try services.agent.start()
        #expect(services.agent.log.contains("with 1 records"))
        let again = try await services.client()
        let reopened = try await again.openSession("ge.wled.softap")
        let activated = try await reopened.activate()
        #expect(activated.compactMap { $0["id"]?.string } == [id])
        #expect(activated.first?["displayName"]?.string == "WLED controller (WLED-AP)")
        #expect(activated.first?["state"]?.string == "authorized")
        #expect(try await again.listAccessories().compactMap { $0["id"]?.string } == [id])
        await again.close()
        await client.close()
    }

    /// A rename or removal through Manager1 while none of the owner's sessions is open still
    /// reaches the subscribers, as an event of the manager's path (the Accessories window and
    /// `accessoryctl monitor` follow them); with a session open, its own event is the one.
    @Test func changesMadeOutsideSessionsReachTheSubscribers() async throws {
        let services = try AgentServices(startAgent: false)
        let id = try Self.prefill(services, count: 1)[0].id.uuidString.lowercased()
        try services.agent.start()
        let client = try await services.client()
        let events = try await client.subscribe()
        try await client.manager("RenameAccessory", [.string(id), .string("Hall plug"), .vardict([])])
        let renamed = try await events.wait(for: "accessoryChanged") { !$0.isEmpty }
        #expect(renamed.map { $0.arguments[1].uint32 } == [32], "one accessoryChanged")
        #expect(renamed.first?.arguments.first?.string == "/io/accessorysetup")
        #expect(renamed.first?.arguments[2]["displayName"]?.string == "Hall plug")
        #expect(renamed.first?.arguments[2]["id"]?.string == id)

        try await client.manager("RemoveAccessory", [.string(id)])
        let removed = try await events.wait(for: "accessoryRemoved") { $0.count == 2 }
        #expect(removed.last?.arguments[1].uint32 == 31, "accessoryRemoved")
        #expect(removed.last?.arguments.first?.string == "/io/accessorysetup")
        #expect(removed.last?.arguments[2]["id"]?.string == id)
        #expect(try await events.quiet(for: .milliseconds(500)).isEmpty, "each change once")
        await client.close()
    }

    /// `count` authorized plug records of uid 0, written with the core's store before the agent starts.
    static func prefill(_ services: AgentServices, count: Int) throws -> [AccessoryRecord] {
        var descriptor = DiscoveryDescriptor()
        descriptor.ssidPrefix = try SSID("Acme-Setup-")
        let owner = AccessoryOwner(uid: 0, profileID: "org.example.plug")
        let records = try (0..<count).map { index in
            AccessoryRecord(
                displayName: "Plug \(index)", state: .authorized, ssid: try SSID("Acme-Setup-\(index)"),
                descriptor: descriptor, owner: owner)
        }
        try AccessoryStore(url: services.agent.storeURL).save(records)
        return records
    }

    @Test func aSIGKILLWhileTheStoreIsWrittenLeavesTheOldOrTheNewRecordsWhole() async throws {
        let services = try AgentServices(startAgent: false)
        let records = try Self.prefill(services, count: 300)
        let target = records[0].id.uuidString.lowercased()
        let temporaryPrefix = ".accessories.json.tmp-"
        var names: Set<String> = ["Plug 0"]
        var killedMidWrite = 0, renamedBeforeKill = 0
        // Four rounds, and more (up to twelve) while no kill has landed in the middle of a
        // write yet: under a sanitizer and a busy machine the window is hit less often.
        var rounds = 0
        while rounds < 4 || (killedMidWrite == 0 && rounds < 12) {
            rounds += 1
            let round = rounds
            try services.agent.start()
            #expect(services.agent.log.contains("with 300 records"), "round \(round): \(services.agent.log)")
            #expect(!services.agent.log.contains("damaged"))
            let client = try await services.client()
            // Four renames in flight at a time keep the agent writing the store.
            let answered = Counter()
            let writers = (1...4).map { writer in
                Task {
                    var issued: [String] = []
                    for count in 1... {
                        let name = "Round \(round) writer \(writer) name \(count)"
                        issued.append(name)
                        do {
                            try await client.manager("RenameAccessory", [.string(target), .string(name), .vardict([])])
                        } catch {
                            return issued
                        }
                        answered.value.add(1, ordering: .relaxed)
                    }
                    return issued
                }
            }
            // After some writes went through, kill the agent as soon as a temporary file shows it
            // is in the middle of one.
            let deadline = ContinuousClock.now + .seconds(10)
            let before = Int.random(in: 3...12)
            while ContinuousClock.now < deadline, answered.value.load(ordering: .relaxed) < before {
                try await Task.sleep(for: .milliseconds(1))
            }
            while ContinuousClock.now < deadline,
                !services.stateFiles().contains(where: { $0.hasPrefix(temporaryPrefix) })
            {
                try await Task.sleep(for: .microseconds(100))
            }
            try services.agent.kill()
            for writer in writers { names.formUnion(await writer.value) }
            await client.close()

            let left = services.stateFiles()
            if left.contains(where: { $0.hasPrefix(temporaryPrefix) }) { killedMidWrite += 1 }
            #expect(left.allSatisfy { $0 == "accessories.json" || $0.hasPrefix(temporaryPrefix) }, "\(left)")
            let stored = try services.storedRecords()
            #expect(stored.count == records.count, "round \(round): every record, whole")
            let storedNames = Dictionary(uniqueKeysWithValues: stored.map { ($0.id, $0.displayName) })
            for record in records.dropFirst() where storedNames[record.id] != record.displayName {
                Issue.record("round \(round): \(record.displayName) became \(storedNames[record.id] ?? "nothing")")
            }
            let name = try #require(storedNames[records[0].id])
            #expect(names.contains(name), "round \(round): '\(name)' is a name that was given")
            if name != "Plug 0" { renamedBeforeKill += 1 }
        }
        #expect(killedMidWrite > 0, "no kill of \(rounds) landed between the temporary file and its rename")
        #expect(renamedBeforeKill > 0, "no rename of \(rounds) rounds was stored before the kill")

        // The next write removes what the killed writes left.
        try services.agent.start()
        let client = try await services.client()
        try await client.manager("RenameAccessory", [.string(target), .string("Desk plug"), .vardict([])])
        #expect(services.stateFiles() == ["accessories.json"])
        #expect(try services.storedRecords().first { $0.id == records[0].id }?.displayName == "Desk plug")
        // Its options are read as every other call's: an unknown key or a wrong type is refused.
        for (options, named) in [
            (DBusValue.vardict([("ssid", .string("true"))]), "options.ssid"),
            (.vardict([("bssid", .boolean(true))]), "options.bssid"),
        ] {
            let refused = await expectBusError("io.accessorysetup.Error.InvalidArguments") {
                try await client.manager("RenameAccessory", [.string(target), .string("Shelf plug"), options])
            }
            #expect(refused?.contains(named) == true, "\(refused ?? "")")
        }
        #expect(try services.storedRecords().first { $0.id == records[0].id }?.displayName == "Desk plug")
        await client.close()
    }

    @Test func aHundredConcurrentSessionsAreServed() async throws {
        let services = try AgentServices(startAgent: false)
        let record = try #require(try Self.prefill(services, count: 1).first).id.uuidString.lowercased()
        try services.agent.start()
        typealias Opened = (client: AgentClient, session: ClientSession, activated: [String], listed: [String])
        let opened = try await withThrowingTaskGroup(of: Opened.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    let client = try await services.client()
                    let session = try await client.openSession("org.example.plug")
                    let activated = try await session.activate().compactMap { $0["id"]?.string }
                    let listed = try await client.listAccessories().compactMap { $0["id"]?.string }
                    return (client, session, activated, listed)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(opened.count == 100)
        #expect(Set(opened.map(\.session.path)).count == 100, "each client has a session of its own")
        #expect(opened.allSatisfy { $0.activated == [record] && $0.listed == [record] })
        #expect(services.agent.log.components(separatedBy: "opened by").count - 1 == 100)

        // All open at once; each ends with Invalidated, sent to its own client only.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (client, session, _, _) in opened {
                group.addTask {
                    try await session.call("Invalidate")
                    try await session.signals.wait(for: "Invalidated") { $0.contains { $0.member == "Invalidated" } }
                    #expect(session.signals.members == ["Activated", "Invalidated"])
                    await client.close()
                }
            }
            try await group.waitForAll()
        }
        #expect(services.agent.isRunning)
    }

    @Test func everySessionHearsInvalidatedWhenTheAgentStops() async throws {
        let services = try AgentServices()
        // Five clients, each with as many sessions as one connection may open.
        var clients: [AgentClient] = []
        for _ in 0..<5 { clients.append(try await services.client()) }
        var sessions: [ClientSession] = []
        for index in 0..<40 {
            let session = try await clients[index % clients.count].openSession("org.example.plug")
            _ = try await session.activate()
            sessions.append(session)
        }
        #expect(try services.agent.terminate() == .exited(0))
        for session in sessions {
            let signals = try await session.signals.wait(for: "Invalidated", timeout: .seconds(30)) {
                $0.contains { $0.member == "Invalidated" }
            }
            #expect(signals.last?.arguments.first?["name"]?.string == "io.accessorysetup.Error.Invalidated")
        }
        let logged = services.agent.log.components(separatedBy: "invalidated io.accessorysetup.Error.Invalidated")
        #expect(logged.count - 1 == sessions.count)
        for client in clients { await client.close() }
    }
}

/// A count shared with tasks.
final class Counter: Sendable {
    let value = Atomic(0)
}
