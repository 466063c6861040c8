import Foundation
import Testing

@testable import AccessoryCore

/// A vendor's HTTP setup API as a profile declares it: validation naming the field, requests
/// encoded as each place needs, answers judged, and the run against a scripted device.
@Suite struct HTTPProvisioningTests {
    static let profilesDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("profiles")

    /// A profile around `provisioning`, over an open hotspot unless `hotspot` says otherwise.
    static func profile(_ provisioning: String, hotspot: String? = nil, unencrypted: Bool = true) -> String {
        """
        {"schemaVersion": 1, "id": "org.example.plug", "vendor": "Example", "supports": ["wifi"],
         "hotspot": \(hotspot ?? #"{"security": "open", "passphrase": {"source": "none"}}"#),
         "handoff": "joinHotspot", "provisioning": \(provisioning), "unencryptedProvisioning": \(unencrypted),
         "items": [{"name": "Plug", "descriptor": {"ssidPrefix": "plug-"}}]}
        """
    }

    static let minimal = """
        {"protocol": "http", "address": "192.168.4.1:80", "steps": [
          {"name": "setNetwork", "method": "GET", "path": "/wifisave", "query": {"ssid": "{ssid}", "psk": "{passphrase}"}}]}
        """

    static func issues(_ text: String) -> [String] {
        do {
            _ = try AccessoryProfile.parse(Data(text.utf8), path: "plug.json")
            return []
        } catch {
            return error.issues.map(\.description)
        }
    }

    @Test func everyShippedVendorProfileDeclaresItsSetupAPI() throws {
        for (file, steps) in [
            ("shelly.json", 2), ("shelly-gen2.json", 2), ("tasmota.json", 1), ("wled.json", 2), ("esphome.json", 2),
        ] {
            let profile = try AccessoryProfile.load(contentsOf: Self.profilesDirectory.appendingPathComponent(file))
            let setup = try #require(profile.httpProvisioning, "\(file)")
            #expect(setup.steps.count == steps, "\(file)")
            #expect(setup.networkStep != nil, "\(file)")
            #expect(profile.sources.count >= 3, "\(file): each fact has its source")
        }
    }

    @Test func aPlainHTTPSetupOverAnOpenOrPublishedKeyHotspotMustSaySo() {
        #expect(
            Self.issues(Self.profile(Self.minimal, unencrypted: false)).contains {
                $0.contains("provisioning.protocol: http over a hotspot that is open")
            })
        let published = #"{"security": "wpa2Personal", "passphrase": {"source": "fixed", "value": "wled1234"}}"#
        #expect(!Self.issues(Self.profile(Self.minimal, hotspot: published, unencrypted: false)).isEmpty)
        let labelled = #"{"security": "wpa2Personal", "passphrase": {"source": "prompt"}}"#
        #expect(Self.issues(Self.profile(Self.minimal, hotspot: labelled, unencrypted: false)) == [])
        let profile = try? AccessoryProfile.parse(
            Data(Self.profile(Self.minimal, hotspot: labelled, unencrypted: false).utf8), path: "p.json")
        #expect(profile?.provisioningExposure == .encrypted)
        #expect(
            (try? AccessoryProfile.parse(Data(Self.profile(Self.minimal).utf8), path: "p.json"))?.provisioningExposure
                == .unencrypted)
    }

    @Test(
        "each fault names its field",
        arguments: [
            (
                #"{"protocol": "http", "address": "plug.local:80", "steps": []}"#,
                "provisioning.address: 'plug.local:80'"
            ),
            (
                #"{"protocol": "http", "address": "192.168.4.1:80", "steps": []}"#,
                "provisioning.steps: must not be empty"
            ),
            (
                #"{"protocol": "http", "address": "192.168.4.1:80", "steps": [{"name": "a", "method": "PUT", "path": "/x", "query": {"s": "{ssid}", "p": "{passphrase}"}}]}"#,
                "provisioning.steps[0].method: \"PUT\" is not one of"
            ),
            (
                #"{"protocol": "http", "address": "192.168.4.1:80", "steps": [{"name": "a", "method": "GET", "path": "x y", "query": {"s": "{ssid}", "p": "{passphrase}"}}]}"#,
                "provisioning.steps[0].path: 'x y' is not an absolute path"
            ),
            (
                #"{"protocol": "http", "address": "192.168.4.1:80", "steps": [{"name": "a", "method": "GET", "path": "/x", "query": {"s": "{ssid}", "p": "{password}"}}]}"#,
                "provisioning.steps[0].query.p: {password} is not a placeholder here"
            ),
            (
                #"{"protocol": "http", "address": "192.168.4.1:80", "steps": [{"name": "a", "method": "GET", "path": "/x", "form": {"s": "{ssid}", "p": "{passphrase}"}}]}"#,
                "provisioning.steps[0].method: GET sends no body"
            ),
            (
                #"{"protocol": "http", "address": "192.168.4.1:80", "steps": [{"name": "a", "method": "GET", "path": "/x", "query": {"s": "{ssid}"}}]}"#,
                "provisioning.steps: no step sends {passphrase}"
            ),
            (
                #"{"protocol": "http", "address": "192.168.4.1:80", "steps": [{"name": "a", "method": "POST", "path": "/x", "json": {"s": "{ssid}", "p": "{passphrase}"}, "success": [{"status": 200, "pointer": "/ok"}]}]}"#,
                "provisioning.steps[0].success[0].(condition): names exactly one of"
            ),
            (
                #"{"protocol": "http", "address": "192.168.4.1:80", "steps": [{"name": "a", "method": "POST", "path": "/x", "json": {"s": "{ssid}", "p": "{passphrase}"}, "failures": [{"when": [{"status": 401}], "error": "gone"}]}]}"#,
                "provisioning.steps[0].failures[0].error: \"gone\" is not one of"
            ),
            (
                #"{"protocol": "http", "address": "192.168.4.1:80", "steps": [{"name": "a", "method": "GET", "path": "/x", "query": {"s": "{ssid}", "p": "{passphrase}"}}], "confirm": {"method": "GET", "path": "/s", "query": {"p": "{passphrase}"}, "connected": [{"status": 200}]}}"#,
                "a confirmation never sends {passphrase} again"
            ),
            (
                #"{"protocol": "http", "address": "192.168.4.1:80", "steps": [{"name": "a", "method": "GET", "path": "/x", "query": {"s": "{ssid}", "p": "{passphrase}", "m": "{mac}"}, "capture": {"mac": "/mac"}}]}"#,
                "provisioning.steps[0].query.m: {mac} is not a placeholder here"
            ),
            (
                #"{"protocol": "http", "address": "192.168.4.1:80", "steps": [{"name": "a", "method": "GET", "path": "/x", "query": {"s": "{ssid}", "p": "{passphrase}"}}], "confirm": {"method": "GET", "path": "/s", "connected": [{"status": 200}], "address": "/ip", "addressAfter": "http://"}}"#,
                "provisioning.confirm.addressAfter: name the address by a JSON pointer (address) or by the text it follows, not both"
            ),
        ])
    func eachFaultNamesItsField(provisioning: String, expected: String) {
        let found = Self.issues(Self.profile(provisioning))
        #expect(found.contains { $0.contains(expected) }, "\(found)")
    }

    @Test func placeholdersAreEncodedAsTheirPlaceNeeds() throws {
        let request = HTTPProvisioning.Request(
            method: .POST, path: "/settings", query: [("ssid", "{ssid}")], body: .form([("key", "{passphrase}")]))
        let values = ["ssid": Array("Home Net&x".utf8), "passphrase": Array("p@ss wörd+=;".utf8)]
        let rendered = try request.render(values)
        #expect(rendered.target == "/settings?ssid=Home+Net%26x")
        #expect(String(decoding: rendered.body, as: UTF8.self) == "key=p%40ss+w%C3%B6rd%2B%3D%3B")
        #expect(rendered.contentType == "application/x-www-form-urlencoded")

        let json = HTTPProvisioning.Request(
            method: .POST, path: "/rpc", body: .json(.object(["pass": .string("{passphrase}"), "id": .number(2)])))
        let body = String(decoding: try json.render(["passphrase": Array(#"a"b\c"#.utf8)]).body, as: UTF8.self)
        #expect(body == #"{"id":2,"pass":"a\"b\\c"}"#)
        // An SSID that is not UTF-8 cannot be JSON text: named, never mangled.
        #expect(throws: ProvisioningError.self) {
            _ = try json.render(["passphrase": [0xFF, 0xFE]])
        }
        // In a query its bytes are sent as they are.
        let raw = try HTTPProvisioning.Request(method: .GET, path: "/wi", query: [("s1", "{ssid}")])
            .render(["ssid": [0xFF, 0x41]])
        #expect(raw.target == "/wi?s1=%FFA")
    }

    /// A device scripted answer by answer, recording what it was sent.
    final class ScriptedDevice: @unchecked Sendable {
        var answers: [Result<HTTPAnswer, HTTPSetupFailure>]
        var sent: [RenderedHTTPRequest] = []

        init(_ answers: [Result<HTTPAnswer, HTTPSetupFailure>]) { self.answers = answers }

        func send(_ request: RenderedHTTPRequest, _ timeout: Duration) throws(HTTPSetupFailure) -> HTTPAnswer {
            sent.append(request)
            guard !answers.isEmpty else { throw .unreachable("no more answers") }
            return try answers.removeFirst().get()
        }
    }

    static func json(_ text: String, status: Int = 200) -> Result<HTTPAnswer, HTTPSetupFailure> {
        .success(HTTPAnswer(status: status, body: Array(text.utf8)))
    }

    static func shellyGen2() throws -> HTTPProvisioning {
        try #require(
            try AccessoryProfile.load(contentsOf: profilesDirectory.appendingPathComponent("shelly-gen2.json"))
                .httpProvisioning)
    }

    static let home = WiFiCredentials(ssid: Array("HomeNet".utf8), passphrase: Secret("home-passphrase"))

    func run(_ setup: HTTPProvisioning, _ device: ScriptedDevice) async throws(ProvisioningError)
        -> (HTTPProvisioningOutcome, [HTTPProvisioningProgress])
    {
        var steps: [HTTPProvisioningProgress] = []
        let outcome = try await setup.run(
            Self.home, send: { request, timeout throws(HTTPSetupFailure) in try device.send(request, timeout) },
            pause: { _ in }, progress: { steps.append($0) })
        return (outcome, steps)
    }

    @Test func aShellyGen2IsAskedItsInfoGivenTheNetworkAndConfirmedWithItsAddress() async throws {
        let device = ScriptedDevice([
            Self.json(
                #"{"id":1,"result":{"id":"shellyplus1-a8032ab12345","mac":"A8032AB12345","gen":2,"auth_en":false}}"#),
            Self.json(#"{"id":2,"result":{"restart_required":false}}"#),
            Self.json(#"{"id":3,"result":{"status":"connecting","sta_ip":null}}"#),
            Self.json(#"{"id":3,"result":{"status":"got ip","sta_ip":"192.168.1.43"}}"#),
        ])
        let (outcome, steps) = try await run(try Self.shellyGen2(), device)
        #expect(
            outcome
                == HTTPProvisioningOutcome(
                    ipv4Address: "192.168.1.43",
                    captured: ["mac": "A8032AB12345", "deviceID": "shellyplus1-a8032ab12345"], confirmed: true))
        #expect(steps == [.request("deviceInfo"), .sendingCredentials("setNetwork"), .confirming])
        let sent = String(decoding: device.sent[1].body, as: UTF8.self)
        #expect(sent.contains(#""pass":"home-passphrase""#) && sent.contains(#""ssid":"HomeNet""#), "\(sent)")
        #expect(device.sent.count == 4)
    }

    @Test func aShellyWithAuthenticationOnIsRefusedBeforeTheNetworkIsSent() async throws {
        let device = ScriptedDevice([
            Self.json(
                #"{"id":1,"result":{"id":"shellyplus1-a8032ab12345","mac":"A8032AB12345","gen":2,"auth_en":true}}"#)
        ])
        await #expect(throws: ProvisioningError.deviceAuthenticationRequired(step: "deviceInfo")) {
            _ = try await run(try Self.shellyGen2(), device)
        }
        #expect(device.sent.count == 1)
    }

    @Test func theDevicesOwnWordsAreShownSanitizedAndCut() async throws {
        let device = ScriptedDevice([
            Self.json(#"{"id":1,"result":{"id":"x","mac":"A8032AB12345","gen":2,"auth_en":false}}"#),
            Self.json(#"{"id":2,"error":{"code":-103,"message":"Invalid argument 'ssid'!\u001b[2J"}}"#),
        ])
        let setup = try Self.shellyGen2()
        do throws(ProvisioningError) {
            _ = try await run(setup, device)
            Issue.record("a refusal was taken for success")
        } catch {
            #expect(error.errorName == "ProvisioningDeviceRefused")
            #expect(error.description.hasPrefix("the device refused setNetwork: it says: Invalid argument 'ssid'!"))
            #expect(!error.description.contains("\u{1b}"))
        }
    }

    @Test func aDeviceEchoingThePassphraseInItsRefusalDoesNotPutItOnScreen() async throws {
        let device = ScriptedDevice([
            Self.json(#"{"id":1,"result":{"id":"x","mac":"A8032AB12345","gen":2,"auth_en":false}}"#),
            Self.json(#"{"id":2,"error":{"code":-103,"message":"bad pass home-passphrase"}}"#),
        ])
        let setup = try Self.shellyGen2()
        do throws(ProvisioningError) {
            _ = try await run(setup, device)
            Issue.record("a refusal was taken for success")
        } catch {
            #expect(error.description == "the device refused setNetwork: it says: bad pass <passphrase>")
        }
    }

    @Test func aDeviceThatNeverSaysItJoinedIsNotOnTheHomeNetworkNeverASuccess() async throws {
        var setup = try Self.shellyGen2()
        setup.confirm?.within = .milliseconds(200)
        let device = ScriptedDevice(
            [
                Self.json(#"{"id":1,"result":{"id":"x","mac":"A8032AB12345","gen":2,"auth_en":false}}"#),
                Self.json(#"{"id":2,"result":{}}"#),
            ] + Array(repeating: Self.json(#"{"id":3,"result":{"status":"disconnected"}}"#), count: 1000))
        var steps: [HTTPProvisioningProgress] = []
        await #expect(throws: ProvisioningError.notOnHomeNetwork(ssid: Self.home.ssid, seconds: 0)) {
            _ = try await setup.run(
                Self.home, send: { request, timeout throws(HTTPSetupFailure) in try device.send(request, timeout) },
                pause: { _ throws(ProvisioningError) in try await HTTPProvisioning.sleep(.milliseconds(20)) },
                progress: { steps.append($0) })
        }
    }

    /// The caller's bound ends the whole run, the confirmation included, however long the
    /// profile would wait; no request is given more time than is left of it.
    @Test func theCallersTimeoutBoundsTheWholeRunItsConfirmationIncluded() async throws {
        let setup = try Self.shellyGen2()
        #expect(try #require(setup.confirm).within == .seconds(45))
        let device = ScriptedDevice(
            [
                Self.json(#"{"id":1,"result":{"id":"x","mac":"A8032AB12345","gen":2,"auth_en":false}}"#),
                Self.json(#"{"id":2,"result":{}}"#),
            ] + Array(repeating: Self.json(#"{"id":3,"result":{"status":"disconnected"}}"#), count: 100))
        let start = ContinuousClock.now
        var clock = start
        var timeouts: [Duration] = []
        await #expect(throws: ProvisioningError.timedOut("provisioning the device", seconds: 5)) {
            _ = try await setup.run(
                Self.home, within: .seconds(5),
                send: { request, timeout throws(HTTPSetupFailure) in
                    timeouts.append(timeout)
                    clock += .milliseconds(500)
                    return try device.send(request, timeout)
                },
                pause: { clock += $0 }, now: { clock }, progress: { _ in })
        }
        #expect(clock - start < .seconds(7), "it went on past the bound: \(clock - start)")
        #expect(timeouts.first == .seconds(5) && timeouts.allSatisfy { $0 <= .seconds(5) }, "\(timeouts)")
    }

    /// Tasmota's page after a successful test links the new address: it is recorded; a link
    /// that is no address (a name, or nothing) records none.
    @Test(
        arguments: [
            ("<b>Successful WiFi Connection</b><a href='http://10.9.0.43'>10.9.0.43</a>", "10.9.0.43"),
            ("<b>Successful WiFi Connection</b><a href='http://tasmota.local'>tasmota</a>", nil),
            ("<b>Successful WiFi Connection</b><a href='http://10.9.0.043'>x</a>", nil),
            ("<b>Successful WiFi Connection</b>", nil),
        ] as [(String, String?)])
    func tasmotasSuccessPageGivesItsAddress(page: String, address: String?) async throws {
        let setup = try #require(
            try AccessoryProfile.load(contentsOf: Self.profilesDirectory.appendingPathComponent("tasmota.json"))
                .httpProvisioning)
        let device = ScriptedDevice([
            .success(HTTPAnswer(status: 200, body: Array("Trying to connect device to network".utf8))),
            .success(HTTPAnswer(status: 200, body: Array(page.utf8))),
        ])
        let (outcome, _) = try await run(setup, device)
        #expect(outcome.confirmed && outcome.ipv4Address == address)
    }

    @Test func aDeviceThatRestartsAfterTheNetworkLeavesWithoutConfirming() async throws {
        var setup = try Self.shellyGen2()
        setup.reboots = true
        let device = ScriptedDevice([
            Self.json(#"{"id":1,"result":{"id":"x","mac":"A8032AB12345","gen":2,"auth_en":false}}"#),
            Self.json(#"{"id":2,"result":{}}"#),
            .failure(.unreachable("gone")),
        ])
        let (outcome, steps) = try await run(setup, device)
        #expect(!outcome.confirmed && outcome.ipv4Address == nil && outcome.captured["mac"] == "A8032AB12345")
        #expect(steps.last == .deviceLeft)
    }

    @Test func aDeviceThatAnswersNothingToTheNetworkIsATransportFailure() async throws {
        let device = ScriptedDevice([
            Self.json(#"{"id":1,"result":{"id":"x","mac":"A8032AB12345","gen":2,"auth_en":false}}"#),
            .failure(.unreachable("the device closed the connection without answering")),
        ])
        await #expect(
            throws: ProvisioningError.transport(
                endpoint: "setNetwork", "the device closed the connection without answering")
        ) {
            _ = try await run(try Self.shellyGen2(), device)
        }
    }

    @Test func jsonPointersFollowRFC6901() throws {
        let value = try JSONValue.parse(Data(#"{"a/b":{"m~n":[1,{"x":"y"}]}}"#.utf8))
        #expect(value.at(pointer: "/a~1b/m~0n/1/x") == .string("y"))
        #expect(value.at(pointer: "/a~1b/m~0n/2") == nil)
        #expect(value.at(pointer: "") == value)
        #expect(value.at(pointer: "a") == nil)
    }

    @Test func aDevicesLooselyWrittenMACAddressIsRead() {
        #expect(MACAddress(looseText: "A8032AB12345")?.description == "A8:03:2A:B1:23:45")
        #expect(MACAddress(looseText: "a8:03:2a:b1:23:45")?.description == "A8:03:2A:B1:23:45")
        #expect(MACAddress(looseText: "A8032AB1234") == nil)
        #expect(MACAddress(looseText: "shellyplus1") == nil)
    }
}
