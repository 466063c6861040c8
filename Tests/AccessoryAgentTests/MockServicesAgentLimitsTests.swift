import AccessoryAgent
import BusService
import Foundation
import GLibRuntime
import ServiceHarness
import Testing

/// The agent under a client that asks for more and more: each limit of `AgentLimits` refuses it
/// with `LimitsExceeded`, a descriptor that never ends costs only its own call, and another
/// user's calls are answered throughout (the built agent on a private bus with
/// python-dbusmock's NetworkManager, BlueZ and polkitd; the other user through `setpriv`).
@Suite("Agent limits under load (private bus: mock NetworkManager, BlueZ, polkitd; setpriv)")
struct MockServicesAgentLimitsTests {
    static let limits = AgentLimits()

    @Test func aClientOpeningSessionsUntilRefusedGetsTheLimitWhileAnotherUserIsAnswered() async throws {
        let services = try AgentServices()
        let other = try systemUser("nobody")
        let watch = Task { try await services.runClient(uid: other, ["latency", "10"], timeout: 60) }

        // A profile through a pipe whose writer never closes it: refused after its time, and
        // meanwhile everything else below is answered.
        let stalled = try await services.client()
        var ends: [Int32] = [0, 0]
        #expect(Glibc.pipe(&ends) == 0)
        let (reader, writer) = (ends[0], ends[1])
        defer { close(writer) }
        let profile = Array(plugProfile.utf8.prefix(40))
        _ = profile.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
        let started = ContinuousClock.now
        async let stalledReply = {
            let reply = await outcome { () async throws(BusError) in
                try await stalled.bus.call(
                    destination: AgentProcess.busName, path: AgentClient.manager,
                    interface: "io.accessorysetup.Manager1",
                    method: "OpenSessionWithProfile", [.handle(0), .vardict([])], timeout: .seconds(30),
                    fileDescriptors: [reader])
            }
            return (reply, ContinuousClock.now - started)
        }()

        var opened = 0
        var refusals: [BusError] = []
        var clients: [AgentClient] = []
        while opened < Self.limits.sessionsPerUser && clients.count <= Self.limits.sessionsPerUser {
            let client = try await services.client()
            clients.append(client)
            while true {
                do {
                    try await client.manager("OpenSession", [.string("org.example.plug"), .vardict([])])
                    opened += 1
                } catch {
                    refusals.append(error)
                    break
                }
            }
        }
        #expect(opened == Self.limits.sessionsPerUser, "\(refusals)")
        #expect(refusals.allSatisfy { $0.name == "io.accessorysetup.Error.LimitsExceeded" }, "\(refusals)")
        #expect(
            refusals.first?.message.contains("\(Self.limits.sessionsPerConnection) open sessions on this connection")
                == true)
        let pastUser = await expectBusError("io.accessorysetup.Error.LimitsExceeded") {
            try await services.client().manager("OpenSession", [.string("org.example.plug"), .vardict([])])
        }
        #expect(
            pastUser?.contains("\(Self.limits.sessionsPerUser) open sessions as this user") == true, "\(pastUser ?? "")"
        )

        // Arguments too large to read, and too many items, each refused with the limit.
        let sessionPath = "/io/accessorysetup/session/1"
        let huge = pickerItem(String(repeating: "x", count: Self.limits.argumentBytes), [("ssidPrefix", "Acme-Setup-")])
        await expectBusError("org.freedesktop.DBus.Error.LimitsExceeded") {
            try await clients[0].bus.call(
                destination: AgentProcess.busName, path: sessionPath, interface: "io.accessorysetup.Session1",
                method: "ShowPicker", [.array([huge], elementType: "a{sv}"), .vardict([])], timeout: .seconds(30))
        }
        let many = Array(repeating: plugItem, count: Self.limits.itemsPerCall + 1)
        let tooMany = await expectBusError("io.accessorysetup.Error.LimitsExceeded") {
            try await clients[0].bus.call(
                destination: AgentProcess.busName, path: sessionPath, interface: "io.accessorysetup.Session1",
                method: "ShowPicker", [.array(many, elementType: "a{sv}"), .vardict([])], timeout: .seconds(30))
        }
        #expect(tooMany?.contains("items in one call") == true, "\(tooMany ?? "")")

        let (reply, waited) = await stalledReply
        switch reply {
        case .success(let reply): Issue.record("a profile that never ended opened a session: \(reply)")
        case .failure(let error): #expect(error.name == "io.accessorysetup.Error.TimedOut", "\(error)")
        }
        // Not before its time; how long after depends on the machine (a sanitizer run is slow),
        // and that it held up no one else is what the other user's timings show.
        #expect(waited >= Self.limits.clientProfileTime, "\(waited)")

        // The agent stayed well within its unit's memory limit, and the other user was
        // answered within a second all along.
        let pid = try #require(services.agent.processIdentifier)
        let resident = try #require(Self.residentBytes(of: pid))
        let limit = try #require(try Self.unitMemoryMax())
        #expect(resident < limit / 2, "the agent holds \(resident) bytes; the unit allows \(limit)")
        let watched = try await watch.value
        let report = try #require(watched.objects.first, "\(watched)")
        #expect(report["failed"] as? Int == 0, "\(watched)")
        #expect((report["calls"] as? Int ?? 0) > 10, "\(watched)")
        #expect((report["slowest"] as? Double ?? 99) < 1.0, "\(watched)")
        for client in clients { await client.close() }
        await stalled.close()
    }

    /// VmRSS of a process, in bytes.
    static func residentBytes(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kibibytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kibibytes * 1024
    }

    /// The unit's `MemoryMax=`, in bytes.
    static func unitMemoryMax() throws -> Int? {
        let unit = try String(
            contentsOf: AgentPaths.packageRoot.appendingPathComponent("packaging/systemd/accessory-setup.service"),
            encoding: .utf8)
        guard let line = unit.split(separator: "\n").first(where: { $0.hasPrefix("MemoryMax=") }) else { return nil }
        let value = line.dropFirst("MemoryMax=".count)
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        guard let last = value.last, let scale = units[last], let number = Int(value.dropLast()) else {
            return Int(value)
        }
        return number * scale
    }
}

@Suite("Agent discovery for many pickers (private bus: mock NetworkManager, BlueZ, polkitd)")
struct MockServicesAgentScanScheduleTests {
    @Test func openPickersShareOneScanSchedule() async throws {
        let services = try AgentServices()
        var held: [(AgentClient, TestPicker, ClientSession)] = []
        let nowhere = pickerItem("Acme plug", [("ssidPrefix", "Acme-Setup-ZZ")])
        for _ in 0..<4 {
            let client = try await services.client()
            let picker = try await TestPicker(on: client.bus, behaviour: .wait)
            try await client.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
            let session = try await client.openSession("org.example.plug")
            _ = try await session.activate()
            try await session.showPicker([nowhere], settings: .vardict([("discoveryTimeout", .uint32(60))]))
            held.append((client, picker, session))
        }
        let before = try services.networkManager.scanRequests().count
        let started = ContinuousClock.now
        try await Task.sleep(for: .seconds(4))
        let requested = try services.networkManager.scanRequests().count - before
        // The window as it was, not as asked: under a sanitizer's load the sleep and the reads
        // of the mock's log overrun it.
        let window = ContinuousClock.now - started
        // One a second for all four pickers (each would ask once a second on its own).
        let seconds = Int(window.components.seconds) + 1
        #expect(
            requested >= 1 && requested <= seconds + 1,
            "\(requested) scan requests in \(window) for \(held.count) pickers")
        for (client, _, session) in held {
            try await session.call("Invalidate")
            await client.close()
        }
    }
}

@Suite("Agent pickers of one picker agent (private bus: mock NetworkManager, BlueZ, polkitd)")
struct MockServicesAgentPickerLimitTests {
    @Test func onePickerAgentShowsAtMostItsLimitOfPickersAtOnce() async throws {
        let services = try AgentServices()
        let client = try await services.client()
        let picker = try await TestPicker(on: client.bus, behaviour: .wait)
        try await client.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
        let nowhere = pickerItem("Acme plug", [("ssidPrefix", "Acme-Setup-ZZ")])
        let limit = AgentLimits().pickersPerPickerAgent
        var sessions: [ClientSession] = []
        for _ in 0...limit {
            let session = try await client.openSession("org.example.plug")
            _ = try await session.activate()
            sessions.append(session)
        }
        for session in sessions.prefix(limit) {
            try await session.showPicker([nowhere], settings: .vardict([("discoveryTimeout", .uint32(60))]))
        }
        try await picker.wait(for: "RequestChoice")
        let refused = await expectBusError("io.accessorysetup.Error.LimitsExceeded") {
            try await sessions[limit].showPicker([nowhere])
        }
        #expect(refused?.contains("\(limit) pickers open at once") == true, "\(refused ?? "")")
        // Once the person answered one (here: it ended), another may open.
        try await sessions[0].call("Invalidate")
        try await sessions[limit].showPicker([nowhere], settings: .vardict([("discoveryTimeout", .uint32(60))]))
        for session in sessions.dropFirst() { try await session.call("Invalidate") }
        await client.close()
    }
}
