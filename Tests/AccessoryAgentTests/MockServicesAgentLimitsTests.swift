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

    /// The must-show of the limits: one user (`daemon`) holds 200 pickers open on picker agents
    /// of its own that never answer, and 200 interactive polkit checks that polkit holds (as
    /// while a person looks at an authentication dialog), all at once. Each past its per-user
    /// limit is refused with `LimitsExceeded`, the agent stays inside its unit's memory and
    /// tasks, and another user (`nobody`) is answered throughout: calls that need no polkit, and
    /// `OpenSession`, which asks polkit (the agent's own calls to polkit are what a flood of
    /// pending replies would have starved).
    @Test func oneUsersNeverAnsweredPickersAndPolkitChecksLeaveAnotherUserAnswered() async throws {
        let services = try AgentServices()
        try services.polkit.allow(["io.accessorysetup.open-session"])
        try services.polkit.hold(["io.accessorysetup.manage-others"])
        let flooder = try systemUser("daemon")
        let other = try systemUser("nobody")
        let items = #"[{"name": "Acme plug", "descriptor": {"ssidPrefix": "Acme-Setup-ZZ"}}]"#

        // The other user's calls on the idle agent: what this machine and build take anyway.
        let unloaded = try await services.runClient(uid: other, ["latency", "3", "org.example.plug"], timeout: 60)
        let baseline = try #require(unloaded.objects.first, "\(unloaded)")
        #expect(baseline["failed"] as? Int == 0, "\(unloaded)")
        let pid = try #require(services.agent.processIdentifier)
        let idle = try #require(Self.residentBytes(of: pid))

        let flood = Task {
            try await services.runClient(uid: flooder, ["flood", "30", "200", "org.example.plug", items], timeout: 120)
        }
        // The flood shows its pickers first, then asks polkit; once polkit holds a check, both
        // are outstanding, and stay so for the flood's 30 s.
        let holding = try await poll(timeout: .seconds(60), every: .milliseconds(200)) {
            try services.polkit.holdsChecks() ? true : nil
        }
        #expect(holding == true, "the flood's polkit checks never reached polkit")
        let loaded = try await services.runClient(uid: other, ["latency", "10", "org.example.plug"], timeout: 60)
        let resident = try #require(Self.residentBytes(of: pid))
        let threads = try #require(Self.threads(of: pid))
        let flooded = try await flood.value
        try services.polkit.releaseHeldChecks()

        let report = try #require(flooded.objects.first, "\(flooded)")
        let pickers = try #require(report["pickers"] as? [String: Any], "\(flooded)")
        let checks = try #require(report["polkit"] as? [String: Any], "\(flooded)")
        // At most the limit of each outstanding at once; every other one refused with the limit.
        #expect((pickers["held"] as? Int ?? 99) <= Self.limits.pickerRequestsPerUser, "\(flooded)")
        #expect((pickers["held"] as? Int ?? 0) > 0, "\(flooded)")
        #expect(
            (pickers["errors"] as? [String: Int] ?? [:]).keys.allSatisfy {
                $0 == "io.accessorysetup.Error.LimitsExceeded"
            },
            "\(flooded)")
        #expect((checks["held"] as? Int ?? 99) <= Self.limits.polkitChecksPerUser, "\(flooded)")
        #expect((checks["held"] as? Int ?? 0) > 0, "\(flooded)")
        #expect(
            (checks["errors"] as? [String: Int] ?? [:]).keys.allSatisfy {
                $0 == "io.accessorysetup.Error.LimitsExceeded"
            },
            "\(flooded)")

        // Inside the unit's limits, and what the flood added (held pickers and checks, their
        // callers' names) at most half of them. A sanitizer build's idle agent is larger, so
        // the flood's cost is measured as the growth.
        let memoryMax = try #require(try Self.unitMemoryMax())
        #expect(resident < memoryMax, "the agent holds \(resident) bytes; the unit allows \(memoryMax)")
        #expect(
            resident - idle < memoryMax / 2,
            "the flood grew the agent from \(idle) to \(resident) bytes; the unit allows \(memoryMax)")
        let tasksMax = try #require(try Self.unitSetting("TasksMax").flatMap { Int($0) })
        #expect(threads < tasksMax / 2, "the agent runs \(threads) threads; the unit allows \(tasksMax)")

        // The other user was answered throughout, every call within a second. A sanitizer build
        // on a shared two-core machine can take most of that unloaded; there the bound is twice
        // the slowest unloaded call instead, so that what is measured is the flood's cost, not
        // the build's.
        let watched = try #require(loaded.objects.first, "\(loaded)")
        let bound = max(1.0, 2 * (baseline["slowest"] as? Double ?? 0))
        #expect(watched["failed"] as? Int == 0, "\(loaded)")
        #expect((watched["calls"] as? Int ?? 0) > 10, "\(loaded)")
        #expect((watched["slowest"] as? Double ?? 99) < bound, "\(loaded); unloaded: \(unloaded)")
    }

    /// Calls one user has the agent answer at once are bounded: profiles through pipes whose
    /// writers never close them each hold their call for its 5 s; past the limit the rest are
    /// refused at once.
    @Test func callsInFlightOfOneUserAreBounded() async throws {
        let services = try AgentServices()
        try services.polkit.allow(["io.accessorysetup.use-client-profile", "io.accessorysetup.open-session"])
        let limit = Self.limits.callsPerUser
        let run = try await services.runClient(
            uid: try systemUser("nobody"), ["stall-profiles", "\(limit + 8)"], timeout: 90)
        let errors = try #require(run.objects.first?["errors"] as? [String: Int], "\(run)")
        #expect(errors["io.accessorysetup.Error.TimedOut"] ?? 0 <= limit, "\(run)")
        #expect(errors["io.accessorysetup.Error.LimitsExceeded"] ?? 0 >= 8, "\(run)")
        let messages = run.objects.first?["messages"] as? [String] ?? []
        #expect(messages.contains { $0.contains("\(limit) calls in flight of this user") }, "\(run)")
    }

    /// A string argument longer than any the agent takes is refused before polkit is asked, so
    /// that no call holds a megabyte through an authentication dialog's minutes.
    @Test func aLongStringIsRefusedBeforePolkitIsAsked() async throws {
        let services = try AgentServices()
        try services.polkit.hold(["io.accessorysetup.manage-others"])
        let run = try await services.runClient(
            uid: try systemUser("nobody"), ["list-long", "\(Self.limits.stringBytes + 1)"], timeout: 60)
        let reply = try #require(run.objects.first, "\(run)")
        #expect(reply["error"] as? String == "io.accessorysetup.Error.LimitsExceeded", "\(run)")
        #expect((reply["message"] as? String)?.contains("\(Self.limits.stringBytes) bytes") == true, "\(run)")
        #expect(try !services.polkit.holdsChecks(), "polkit was asked")
    }

    /// A descriptor passed to a method that takes none is refused, and the agent keeps no copy:
    /// once the test closes its own, the pipe has no reader left.
    @Test func descriptorsAreRefusedOnMethodsThatTakeNone() async throws {
        let services = try AgentServices()
        let client = try await services.client()
        var ends: [Int32] = [0, 0]
        #expect(Glibc.pipe(&ends) == 0)
        let (reader, writer) = (ends[0], ends[1])
        defer { close(writer) }
        let refused = await expectBusError("io.accessorysetup.Error.InvalidArguments") {
            try await client.bus.call(
                destination: AgentProcess.busName, path: AgentClient.manager, interface: "io.accessorysetup.Manager1",
                method: "ListAccessories", [.vardict([])], timeout: .seconds(30), fileDescriptors: [reader])
        }
        #expect(refused?.contains("takes no file descriptor") == true, "\(refused ?? "")")
        close(reader)
        let readerless = try await poll(timeout: .seconds(10)) { () -> Bool? in
            var event = pollfd(fd: writer, events: 0, revents: 0)
            return Glibc.poll(&event, 1, 0) == 1 && event.revents & Int16(POLLERR) != 0 ? true : nil
        }
        #expect(readerless == true, "the agent kept a copy of the descriptor")
        await client.close()
    }

    /// A picker agent's `RequestChoice` waits on a person, unbounded in time but for its own
    /// timeout: the agent makes such calls on a connection of their own, so that pickers left
    /// open cannot use up the pending replies the bus daemon allows the connection that asks
    /// polkit and logind.
    @Test func pickerAgentsAreCalledOffTheAgentsOwnConnection() async throws {
        let services = try AgentServices()
        let client = try await services.client()
        let picker = try await TestPicker(on: client.bus, behaviour: .wait)
        try await client.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
        let session = try await client.openSession("org.example.plug")
        _ = try await session.activate()
        try await session.showPicker([plugItem])
        let request = try await poll(timeout: .seconds(20)) { picker.calls.first { $0.member == "RequestChoice" } }
        let owner = try await client.bus.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            method: "GetNameOwner", [.string(AgentProcess.busName)], timeout: .seconds(10)
        ).first?.string
        #expect(request != nil)
        #expect(owner != nil)
        #expect(request?.sender != owner, "RequestChoice came from the connection that owns the agent's name")
        // Every call to the picker agent comes from that one connection, so they keep their order.
        #expect(Set(picker.calls.map(\.sender)).count == 1, "\(picker.calls.map(\.sender))")
        await client.close()
    }

    /// A setting of the agent's systemd unit.
    static func unitSetting(_ name: String) throws -> String? {
        let unit = try String(
            contentsOf: AgentPaths.packageRoot.appendingPathComponent("packaging/systemd/accessory-setup.service"),
            encoding: .utf8)
        return unit.split(separator: "\n").first { $0.hasPrefix(name + "=") }.map {
            String($0.dropFirst(name.count + 1))
        }
    }

    /// Threads of a process.
    static func threads(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") })
        else { return nil }
        return Int(line.split(separator: "\t").last ?? "")
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
