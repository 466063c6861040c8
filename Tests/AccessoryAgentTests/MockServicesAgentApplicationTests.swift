import AccessoryAgent
import AccessoryCore
import BusService
import DBusValues
import Foundation
import ServiceHarness
import Testing

/// Two sandboxed applications of one user, each profile theirs alone.
private enum Apps {
    static let acme = "org.example.AcmePlug"
    static let wled = "org.example.WledTool"
    static let acmeProfile = "org.example.acme"
    static let wledProfile = "org.example.wled"

    static func profile(id: String, vendor: String, application: String, item: String, descriptor: String)
        -> String
    {
        """
        {"schemaVersion": 1, "id": "\(id)", "vendor": "\(vendor)", "applications": ["\(application)"],
         "supports": ["wifi"], "handoff": "none",
         "items": [{"name": "\(item)", "descriptor": \(descriptor)}]}
        """
    }

    static let acmeItems = #"[{"name": "Acme plug", "descriptor": {"ssidPrefix": "Acme-Setup-"}}]"#
    static let wledItems = #"[{"name": "WLED controller", "descriptor": {"ssid": "WLED-AP"}}]"#

    /// The agent with both applications' profiles installed besides the usual ones; the kiosk
    /// policy, when given, picks for both profiles and `user`.
    static func services(user: UInt32, kiosk: Bool = true) throws -> AgentServices {
        let services = try AgentServices(
            kiosk: kiosk ? kioskPolicy(profiles: [acmeProfile, wledProfile], users: [user]) : nil,
            startAgent: false)
        try services.agent.installProfile(
            profile(
                id: acmeProfile, vendor: "Acme", application: acme, item: "Acme plug",
                descriptor: #"{"ssidPrefix": "Acme-Setup-"}"#),
            name: acmeProfile)
        try services.agent.installProfile(
            profile(
                id: wledProfile, vendor: "WLED", application: wled, item: "WLED controller",
                descriptor: #"{"ssid": "WLED-AP"}"#),
            name: wledProfile)
        try services.agent.start()
        return services
    }
}

extension Sandbox {
    /// `Sandbox.check` off the cooperative pool.
    static func check(as uid: UInt32, services: AgentServices) async throws {
        try await offThePool { try Sandbox.check(as: uid, bus: services.bus) }
    }
}

extension AgentServices {
    /// Runs the GIO test client in `sandbox` as `uid`.
    func runClient(in sandbox: Sandbox, uid: UInt32, _ arguments: [String], timeout: TimeInterval = 60)
        async throws -> ScriptRun
    {
        let command = sandbox.command(bus: bus, "/usr/bin/python3", [Sandbox.testClient] + arguments)
        return try await runProgram("/bin/sh", command, uid: uid, timeout: timeout)
    }
}

extension ScriptRun {
    /// The reply or error the client printed for `call`.
    func result(of call: String) -> [String: Any]? {
        objects.first { $0["call"] as? String == call }
    }

    /// The accessory of the `AccessoryAdded` a pick printed.
    var added: [String: Any]? {
        let event = objects.first { $0["event"] as? String == "AccessoryAdded" }
        return (event?["args"] as? [[String: Any]])?.first
    }

    /// The accessories `list` printed.
    var listed: [[String: Any]] {
        (result(of: "ListAccessories")?["reply"] as? [[[String: Any]]])?.first ?? []
    }
}

/// Applications as clients (issue #28), against the built agent on a private bus with
/// python-dbusmock's NetworkManager, BlueZ and polkitd: two applications of one user, each in a
/// bubblewrap sandbox with flatpak's `/.flatpak-info`, run as `nobody` through the GIO test
/// client. Each sees and acts on its own accessories only, opens only its own profile, and
/// cannot consent for the person; a host process of the user sees both.
@Suite("Applications as clients (private bus: mock NetworkManager, BlueZ, polkitd; bwrap sandboxes)")
struct MockServicesAgentApplicationTests {
    @Test func eachApplicationSeesAndActsOnItsOwnAccessoriesOnlyAndTheHostSeesBoth() async throws {
        let user = try systemUser("nobody")
        let services = try Apps.services(user: user)
        try await Sandbox.check(as: user, services: services)
        try services.polkit.allow(["io.accessorysetup.open-session", "io.accessorysetup.join"])
        let acme = try Sandbox(application: Apps.acme), wled = try Sandbox(application: Apps.wled)

        // Each picks through the kiosk policy over its own profile.
        let acmePick = try await services.runClient(in: acme, uid: user, ["pick", Apps.acmeProfile, Apps.acmeItems])
        #expect(acmePick.status == 0, "\(acmePick)")
        let acmeRecord = try #require(acmePick.added, "\(acmePick)")
        #expect(acmeRecord["application"] as? String == Apps.acme)
        #expect(acmeRecord["user"] as? Int == Int(user))
        let acmeID = try #require(acmeRecord["id"] as? String)
        let wledPick = try await services.runClient(in: wled, uid: user, ["pick", Apps.wledProfile, Apps.wledItems])
        #expect(wledPick.status == 0, "\(wledPick)")
        let wledID = try #require(wledPick.added?["id"] as? String, "\(wledPick)")
        #expect(wledPick.added?["application"] as? String == Apps.wled)

        // The store keeps them apart by (user, application, profile).
        let stored = try services.storedRecords()
        #expect(
            Set(stored.map(\.owner))
                == [
                    AccessoryOwner(uid: user, profileID: Apps.acmeProfile, application: Apps.acme),
                    AccessoryOwner(uid: user, profileID: Apps.wledProfile, application: Apps.wled),
                ])

        // Each lists its own only; a session over its profile is activated with its own only.
        let acmeList = try await services.runClient(in: acme, uid: user, ["list"])
        #expect(acmeList.listed.compactMap { $0["id"] as? String } == [acmeID], "\(acmeList)")
        let wledList = try await services.runClient(in: wled, uid: user, ["list"])
        #expect(wledList.listed.compactMap { $0["id"] as? String } == [wledID], "\(wledList)")
        let reopened = try await services.runClient(in: acme, uid: user, ["activate", Apps.acmeProfile])
        let activated = reopened.objects.first { $0["event"] as? String == "Activated" }
        let already = ((activated?["args"] as? [Any])?.first as? [[String: Any]]) ?? []
        #expect(already.compactMap { $0["id"] as? String } == [acmeID], "\(reopened)")

        // The other application's accessory is not there for it, exactly as one that does not exist.
        let missing = UUID().uuidString.lowercased()
        for command in [["show"], ["join"], ["remove"], ["rename", "Mine now"]] {
            let other = try await services.runClient(in: acme, uid: user, [command[0], wledID] + command.dropFirst())
            let none = try await services.runClient(in: acme, uid: user, [command[0], missing] + command.dropFirst())
            #expect(other.status == 1 && none.status == 1, "\(command): \(other)")
            let otherError = other.objects.first
            let noneError = none.objects.first
            #expect(otherError?["error"] as? String == "io.accessorysetup.Error.NoSuchAccessory", "\(other)")
            #expect(
                (otherError?["message"] as? String)?.replacingOccurrences(of: wledID, with: "ID")
                    == (noneError?["message"] as? String)?.replacingOccurrences(of: missing, with: "ID"),
                "\(command): \(other) \(none)")
        }
        #expect(try services.storedRecords().map(\.displayName).sorted() == ["Acme plug", "WLED controller"])
        #expect(try services.networkManager.activeConnectionID(on: services.device) == "HomeNet")

        // A host process of the same user sees both, each with its application.
        let host = try await services.runClient(uid: user, ["list"])
        let both = Dictionary(
            uniqueKeysWithValues: host.listed.map { ($0["id"] as? String ?? "", $0["application"] as? String ?? "") })
        #expect(both == [acmeID: Apps.acme, wledID: Apps.wled], "\(host)")
        let shown = try await services.runClient(uid: user, ["show", wledID])
        #expect(shown.status == 0, "\(shown)")

        // accessoryctl, a host process, shows each record's application.
        let accessoryctl = try AgentProcess.builtProduct("accessoryctl").path
        let table = try await services.runProgram(accessoryctl, ["list"], uid: user)
        #expect(table.status == 0, "\(table)")
        let header = table.lines.first ?? ""
        #expect(header.contains("PROFILE") && header.contains("APPLICATION"), "\(table)")
        #expect(table.lines.contains { $0.hasPrefix(acmeID) && $0.contains(Apps.acme) }, "\(table)")
        #expect(table.lines.contains { $0.hasPrefix(wledID) && $0.contains(Apps.wled) }, "\(table)")
        let json = try await services.runProgram(accessoryctl, ["list", "--json"], uid: user)
        let listedJSON = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [[String: Any]] ?? []
        #expect(Set(listedJSON.compactMap { $0["application"] as? String }) == [Apps.acme, Apps.wled], "\(json)")

        // The journal names the application with the uid.
        let log = services.agent.log
        #expect(log.contains("(uid \(user), application \(Apps.acme)) over profile \(Apps.acmeProfile)"), "\(log)")
        #expect(log.contains("of uid \(user), application \(Apps.wled) saved"), "\(log)")
        #expect(log.contains("is the sandboxed application \(Apps.acme)"), "\(log)")
    }

    @Test func anApplicationOpensOnlyItsOwnProfilesAndAnotherIsNoSuchProfileLikeAMissingOne() async throws {
        let user = try systemUser("nobody")
        let services = try Apps.services(user: user)
        try await Sandbox.check(as: user, services: services)
        try services.polkit.allow(["io.accessorysetup.open-session"])
        let acme = try Sandbox(application: Apps.acme)

        let own = try await services.runClient(in: acme, uid: user, ["open", Apps.acmeProfile])
        #expect(own.status == 0, "\(own)")
        func refusal(_ profile: String) async throws -> (name: String?, message: String?) {
            let run = try await services.runClient(in: acme, uid: user, ["open", profile])
            #expect(run.status == 1, "\(profile): \(run)")
            let result = run.result(of: "OpenSession")
            return (
                result?["error"] as? String,
                (result?["message"] as? String)?.replacingOccurrences(of: profile, with: "PROFILE")
            )
        }
        let missing = try await refusal("org.example.nothing")
        #expect(missing.name == "io.accessorysetup.Error.NoSuchProfile")
        // Another application's, and one installed for no application (host processes only).
        for profile in [Apps.wledProfile, "ge.wled.softap", "org.example.plug"] {
            let refused = try await refusal(profile)
            #expect(refused.name == missing.name && refused.message == missing.message, "\(profile): \(refused)")
        }
        // A host process of the same user opens any of them.
        for profile in [Apps.wledProfile, Apps.acmeProfile, "ge.wled.softap"] {
            let host = try await services.runClient(uid: user, ["open", profile])
            #expect(host.status == 0, "\(profile): \(host)")
        }
    }

    @Test func anApplicationCannotConsentForThePersonWhateverPolkitWouldAllow() async throws {
        let user = try systemUser("nobody")
        let services = try Apps.services(user: user)
        try await Sandbox.check(as: user, services: services)
        try services.polkit.allow([
            "io.accessorysetup.open-session", "io.accessorysetup.use-client-profile",
            "io.accessorysetup.manage-others", "io.accessorysetup.authorize",
        ])
        let acme = try Sandbox(application: Apps.acme)

        let register = try await services.runClient(in: acme, uid: user, ["register-picker"])
        #expect(register.status == 1)
        #expect(
            register.result(of: "RegisterPickerAgent")?["error"] as? String == "io.accessorysetup.Error.NotAuthorized")
        let why = register.result(of: "RegisterPickerAgent")?["message"] as? String ?? ""
        #expect(why.contains("sandboxed application \(Apps.acme)") && why.contains("cannot pick for itself"), "\(why)")

        let ownProfile = Apps.profile(
            id: "org.example.own", vendor: "Own", application: Apps.acme, item: "Anything",
            descriptor: #"{"ssidPrefix": "Acme-"}"#)
        let passed = try await services.runClient(in: acme, uid: user, ["open-fd", ownProfile])
        #expect(passed.status == 1, "\(passed)")
        let passedError = passed.result(of: "OpenSessionWithProfile")
        #expect(passedError?["error"] as? String == "io.accessorysetup.Error.NotAuthorized", "\(passed)")
        #expect((passedError?["message"] as? String)?.contains("never one it passes itself") == true, "\(passed)")

        // A migration item records without anyone picking: the application would consent itself.
        let migration =
            #"[{"name": "Acme plug", "descriptor": {"ssidPrefix": "Acme-Setup-"}, "hotspotSSID": "Acme-Setup-4F2A"}]"#
        let migrated = try await services.runClient(in: acme, uid: user, ["pick", Apps.acmeProfile, migration])
        #expect(migrated.status == 1, "\(migrated)")
        let migratedError = migrated.result(of: "ShowPicker")
        #expect(migratedError?["error"] as? String == "io.accessorysetup.Error.NotAuthorized", "\(migrated)")
        #expect((migratedError?["message"] as? String)?.contains("without the person picking") == true)

        for command in [["list", "0"], ["leave", "0"]] {
            let other = try await services.runClient(in: acme, uid: user, command)
            #expect(other.status == 1, "\(command): \(other)")
            #expect(other.objects.first?["error"] as? String == "io.accessorysetup.Error.NotAuthorized", "\(other)")
            #expect((other.objects.first?["message"] as? String)?.contains("another user") == true, "\(other)")
        }
        // Its own uid named is no other user's.
        let ownUser = try await services.runClient(in: acme, uid: user, ["list", "\(user)"])
        #expect(ownUser.status == 0, "\(ownUser)")

        // polkit would have allowed them: a host process of the same user does all three.
        let hostList = try await services.runClient(uid: user, ["list", "0"])
        #expect(hostList.status == 0, "\(hostList)")
        let hostPassed = try await services.runClient(uid: user, ["open-fd", ownProfile])
        #expect(hostPassed.status == 0, "\(hostPassed)")
        let hostRegister = try await services.runClient(uid: user, ["register-picker"])
        #expect(hostRegister.status == 0, "\(hostRegister)")
    }

    /// A sandbox whose `/.flatpak-info` names no valid application id is neither that
    /// application nor a host process: it opens nothing and sees nothing, and the journal says why.
    @Test func aCallerWhoseApplicationCannotBeEstablishedOpensNothingAndSeesNothing() async throws {
        let user = try systemUser("nobody")
        let services = try Apps.services(user: user)
        try await Sandbox.check(as: user, services: services)
        try services.polkit.allow(["io.accessorysetup.open-session", "io.accessorysetup.manage-others"])
        let host = try await services.runClient(uid: user, ["pick", Apps.acmeProfile, Apps.acmeItems])
        let id = try #require(host.added?["id"] as? String, "\(host)")
        #expect(host.added?["application"] == nil, "a host process's record names no application")

        let invalid = try Sandbox(application: "org.example")
        let opened = try await services.runClient(in: invalid, uid: user, ["open", Apps.acmeProfile])
        #expect(opened.result(of: "OpenSession")?["error"] as? String == "io.accessorysetup.Error.NotAuthorized")
        #expect(
            (opened.result(of: "OpenSession")?["message"] as? String)?.contains("could not establish which application")
                == true, "\(opened)")
        let listed = try await services.runClient(in: invalid, uid: user, ["list"])
        #expect(listed.status == 0 && listed.listed.isEmpty, "\(listed)")
        let shown = try await services.runClient(in: invalid, uid: user, ["show", id])
        #expect(shown.objects.first?["error"] as? String == "io.accessorysetup.Error.NoSuchAccessory", "\(shown)")
        let register = try await services.runClient(in: invalid, uid: user, ["register-picker"])
        #expect(register.objects.first?["error"] as? String == "io.accessorysetup.Error.NotAuthorized")
        #expect(
            services.agent.log.contains("its application cannot be established")
                && services.agent.log.contains("names 'org.example', which is not a Flatpak application id"),
            "\(services.agent.log)")
    }

    /// The person picks for a sandboxed application in the desktop session's picker, which a host
    /// process registered for the logind session; the request names the application. A session
    /// whose id logind escapes in its object path (`2`, `…/session/_32`) is found as well.
    @Test(arguments: ["c1", "2"])
    func theDesktopSessionsPickerPicksForAnApplicationAndIsToldWhichOne(session: String) async throws {
        let user = try systemUser("nobody")
        let services = try Apps.services(user: user, kiosk: false)
        try await Sandbox.check(as: user, services: services)
        try services.polkit.allow(["io.accessorysetup.open-session", "io.accessorysetup.authorize"])
        let logind = try LogindMock(on: services.bus, session: session, uid: user, user: "nobody")
        defer { logind.stop() }
        let desktop = try await services.client()
        let picker = try await TestPicker(on: desktop.bus, behaviour: .choose(ssid: "Acme-Setup-9B1C"))
        try await desktop.manager(
            "RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([("session", .string(session))])])

        let acme = try Sandbox(application: Apps.acme)
        let pick = try await services.runClient(in: acme, uid: user, ["pick", Apps.acmeProfile, Apps.acmeItems])
        #expect(pick.status == 0, "\(pick)")
        #expect(pick.added?["application"] as? String == Apps.acme, "\(pick)")
        let request = try #require(picker.calls.first { $0.member == "RequestChoice" })
        #expect(request.arguments.last?["application"]?.string == Apps.acme)
        #expect(request.arguments.last?["user"]?.uint32Value == user)
        #expect(try services.storedRecords().map(\.owner.application) == [Apps.acme])
        await desktop.close()
    }

    /// A process of another user inside the person's logind session (started with `su`, or a
    /// setuid program) is not answered by the person's picker: nobody is asked, nothing recorded.
    @Test func anotherUsersApplicationInThePersonsSessionIsNotPickedForByTheirPicker() async throws {
        let user = try systemUser("nobody"), other = try systemUser("daemon")
        let services = try Apps.services(user: other, kiosk: false)
        try await Sandbox.check(as: other, services: services)
        try services.polkit.allow(["io.accessorysetup.open-session", "io.accessorysetup.authorize"])
        let logind = try LogindMock(on: services.bus, session: "c1", uid: user, user: "nobody")
        defer { logind.stop() }
        let desktop = try await services.client()
        let picker = try await TestPicker(on: desktop.bus, behaviour: .choose(ssid: "Acme-Setup-9B1C"))
        try await desktop.manager(
            "RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([("session", .string("c1"))])])

        let acme = try Sandbox(application: Apps.acme)
        let pick = try await services.runClient(in: acme, uid: other, ["pick", Apps.acmeProfile, Apps.acmeItems])
        #expect(pick.status != 0, "\(pick)")
        #expect(!picker.members.contains("RequestChoice"), "\(picker.members)")
        #expect(services.agent.log.contains("of another user; its picker is not asked"), "\(services.agent.log)")
        #expect(try services.storedRecords().isEmpty)
        await desktop.close()
    }

    /// A join's reply names the user's other connections (the network the machine was on) to a
    /// host process of that user only, never to a sandboxed application.
    @Test func aJoinReplyNamesTheUsersOtherConnectionsToHostProcessesOnly() async throws {
        let user = try systemUser("nobody")
        let services = try Apps.services(user: user)
        try await Sandbox.check(as: user, services: services)
        try services.polkit.allow(["io.accessorysetup.open-session", "io.accessorysetup.join"])
        let acme = try Sandbox(application: Apps.acme)
        let pick = try await services.runClient(in: acme, uid: user, ["pick", Apps.acmeProfile, Apps.acmeItems])
        let id = try #require(pick.added?["id"] as? String, "\(pick)")

        let sandboxed = try await services.runClient(in: acme, uid: user, ["join", id])
        let toApplication = try #require(
            (sandboxed.result(of: "JoinAccessory")?["reply"] as? [[String: Any]])?.first, "\(sandboxed)")
        #expect(toApplication["connection"] != nil && toApplication["previousConnection"] == nil, "\(toApplication)")
        #expect(try await services.runClient(in: acme, uid: user, ["leave"]).status == 0)

        let host = try await services.runClient(uid: user, ["join", id])
        let toHost = try #require((host.result(of: "JoinAccessory")?["reply"] as? [[String: Any]])?.first, "\(host)")
        #expect(toHost["previousConnection"] as? String == "HomeNet", "\(toHost)")
        #expect(try await services.runClient(uid: user, ["leave"]).status == 0)
    }

    /// One application holds at most half of its user's polkit checks: past it, it is refused
    /// with LimitsExceeded naming the application, and another application of the same user
    /// still gets its checks asked.
    @Test func oneApplicationCannotHoldAllOfItsUsersPolkitChecks() async throws {
        let user = try systemUser("nobody")
        let services = try Apps.services(user: user, kiosk: false)
        try await Sandbox.check(as: user, services: services)
        try services.polkit.hold(["io.accessorysetup.open-session"])
        let acme = try Sandbox(application: Apps.acme), wled = try Sandbox(application: Apps.wled)
        let share = AgentLimits().polkitChecksPerUser / 2

        async let flooding = services.runClient(
            in: acme, uid: user, ["open-sessions", "\(share * 2)", Apps.acmeProfile, "8"])
        try await Task.sleep(for: .seconds(2))
        let other = try await services.runClient(in: wled, uid: user, ["open-sessions", "1", Apps.wledProfile, "3"])
        #expect(other.objects.first?["held"] as? Int == 1, "another application's check is asked: \(other)")
        let flood = try await flooding
        let report = try #require(flood.objects.first, "\(flood)")
        #expect(report["held"] as? Int == share, "\(flood)")
        #expect((report["errors"] as? [String: Int])?["io.accessorysetup.Error.LimitsExceeded"] == share, "\(flood)")
        #expect(
            (report["messages"] as? [String])?.allSatisfy { $0.contains("of this application") } == true, "\(flood)")
        try services.polkit.releaseHeldChecks()
    }

    /// `Manager1.Event` reaches a sandboxed subscriber for its own application's sessions only;
    /// root's host subscriber hears both.
    @Test func eventsReachAnApplicationForItsOwnSessionsOnly() async throws {
        let user = try systemUser("nobody")
        let services = try Apps.services(user: user)
        try await Sandbox.check(as: user, services: services)
        try services.polkit.allow(["io.accessorysetup.open-session"])
        let acme = try Sandbox(application: Apps.acme), wled = try Sandbox(application: Apps.wled)
        let root = try await services.client()
        let rootEvents = try await root.subscribe()

        // The monitor ends with the first AccessoryAdded it hears (30): the WLED tool's, picked
        // after the Acme plug's, so that every event of the Acme plug's pick came before it.
        let watching = Task {
            try await services.runClient(in: wled, uid: user, ["monitor", "120", "30"], timeout: 150)
        }
        let subscribed = try await poll(timeout: .seconds(60)) {
            services.agent.log.components(separatedBy: "events: ").count - 1 >= 2 ? true : nil
        }
        #expect(subscribed == true, "the sandboxed monitor never subscribed: \(services.agent.log)")
        let acmePick = try await services.runClient(in: acme, uid: user, ["pick", Apps.acmeProfile, Apps.acmeItems])
        let wledPick = try await services.runClient(in: wled, uid: user, ["pick", Apps.wledProfile, Apps.wledItems])
        let acmeSession = try #require(acmePick.result(of: "OpenSession")?["reply"] as? [String], "\(acmePick)")
        let wledSession = try #require(wledPick.result(of: "OpenSession")?["reply"] as? [String], "\(wledPick)")

        let monitored = try await watching.value
        #expect(monitored.status == 0, "\(monitored)")
        let heard = monitored.objects.filter { $0["event"] as? String == "Event" }
        #expect(Set(heard.compactMap { $0["session"] as? String }) == Set(wledSession), "\(monitored)")
        #expect(heard.contains { ($0["accessory"] as? [String: Any])?["application"] as? String == Apps.wled })
        let rootHeard = try await rootEvents.wait(for: "both sessions' events") { signals in
            let sessions = Set(signals.compactMap { $0.arguments.first?.string })
            return sessions.isSuperset(of: acmeSession + wledSession)
        }
        #expect(!rootHeard.isEmpty)
        await root.close()
    }
}

extension DBusValue {
    fileprivate var uint32Value: UInt32? {
        if case .uint32(let value) = self { return value }
        return nil
    }
}

@Suite("Applications' Wi-Fi configurations (private bus: mock NetworkManager, BlueZ, polkitd; bwrap sandboxes)")
struct MockServicesAgentApplicationConfigurationTests {
    /// An application moving the machine onto a network it names asks the person each time,
    /// naming itself and the network (configure-hotspot, auth_self); a refusal is Apple's
    /// userDenied and leaves no profile. A network of the system's (HomeNet), or another
    /// user's, cannot be configured beside it: `SystemConfiguration`, said only after polkit.
    @Test func aSandboxedApplicationsConfigurationAsksAndNeverTwinsTheSystemsNetworks() async throws {
        let user = try systemUser("nobody")
        let services = try Apps.services(user: user, kiosk: false)
        try await Sandbox.check(as: user, services: services)
        let acme = try Sandbox(application: Apps.acme)
        let profiles = try services.networkManager.connectionPaths().count

        try services.polkit.allow([])
        let denied = try await services.runClient(
            in: acme, uid: user, ["apply", #"{"ssid": "Other-Net", "passphrase": "other-pass-1"}"#])
        #expect(denied.objects.first?["error"] as? String == "io.accessorysetup.Error.NotAuthorized", "\(denied)")
        #expect(try services.networkManager.connectionPaths().count == profiles, "no profile is left")
        let checks = {
            services.polkit.log.split(separator: "\n").filter {
                $0.contains("CheckAuthorization") && $0.contains("configure-hotspot")
            }
        }
        let asked = checks()
        #expect(asked.count == 1, "\(services.polkit.log)")
        let check = String(asked.first ?? "")
        #expect(check.contains("Other-Net") && check.contains(Apps.acme), "named app and network: \(check)")

        try services.polkit.allow(["io.accessorysetup.configure-hotspot"])
        let twin = try await services.runClient(
            in: acme, uid: user, ["apply", #"{"ssid": "HomeNet", "passphrase": "evil-twin-1"}"#])
        #expect(twin.objects.first?["error"] as? String == "io.accessorysetup.Error.SystemConfiguration", "\(twin)")
        #expect(try services.networkManager.connectionPaths().count == profiles)
        #expect(try services.networkManager.activeConnectionID(on: services.device) == "HomeNet")
        let twinPrefix = try await services.runClient(
            in: acme, uid: user, ["apply", #"{"ssidPrefix": "Home", "passphrase": "evil-twin-1"}"#])
        #expect(
            twinPrefix.objects.first?["error"] as? String == "io.accessorysetup.Error.SystemConfiguration",
            "\(twinPrefix)")
        #expect(checks().count == 3, "each configuration asks: \(services.polkit.log)")
    }
}
