import Foundation
import Testing

@testable import AccessoryCore

private typealias JSON = [String: Any]

/// A minimal valid Wi-Fi profile.
private func wifiProfile() -> JSON {
    [
        "schemaVersion": 1,
        "id": "org.example.plug",
        "vendor": "Example",
        "supports": ["wifi"],
        "hotspot": ["security": "wpa2Personal", "passphrase": ["source": "fixed", "value": "wled1234"]] as JSON,
        "handoff": "joinHotspot",
        "items": [["name": "Example plug", "descriptor": ["ssidPrefix": "plug-"] as JSON] as JSON],
    ]
}

/// A valid Bluetooth profile using every Bluetooth declaration.
private func bluetoothProfile() -> JSON {
    [
        "schemaVersion": 1,
        "id": "cloud.shelly.blu",
        "vendor": "Shelly",
        "supports": ["bluetooth"],
        "bluetooth": ["services": ["180d"], "names": ["SBBT"], "companyIdentifiers": ["0x0BA9", 76]] as JSON,
        "handoff": "none",
        "items": [
            [
                "name": "Door sensor",
                "productImage": "images/door.png",
                "setupOptions": ["rename", "finishInApp"],
                "descriptor": ["bluetoothCompanyIdentifier": "0x0BA9", "bluetoothNameSubstring": "SBBT"] as JSON,
            ] as JSON,
            [
                "name": "Heart rate",
                "descriptor": ["bluetoothServiceUUID": "0000180D-0000-1000-8000-00805F9B34FB"] as JSON,
            ] as JSON,
        ],
        "sources": [["fact": "Shelly uses 0x0BA9", "reference": "https://example.org"] as JSON],
    ]
}

private func data(_ object: JSON) -> Data {
    try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
}

/// Returns `object` changed by `change`.
private func with(_ object: JSON, _ change: (inout JSON) -> Void) -> JSON {
    var copy = object
    change(&copy)
    return copy
}

/// Changes the member `key` (an object) of `object`.
private func edit(_ object: inout JSON, _ key: String, _ change: (inout JSON) -> Void) {
    var member = object[key] as! JSON
    change(&member)
    object[key] = member
}

/// Changes the first item of `object`.
private func editItem(_ object: inout JSON, _ change: (inout JSON) -> Void) {
    var items = object["items"] as! [JSON]
    change(&items[0])
    object["items"] = items
}

/// The faults of a profile that must not parse.
private func issues(_ object: JSON, sourceLocation: SourceLocation = #_sourceLocation) -> [FieldIssue] {
    issues(data(object), sourceLocation: sourceLocation)
}

private func issues(_ data: Data, sourceLocation: SourceLocation = #_sourceLocation) -> [FieldIssue] {
    do {
        let profile = try AccessoryProfile.parse(data, path: "test.json")
        Issue.record("expected faults, the profile parsed: \(profile)", sourceLocation: sourceLocation)
        return []
    } catch {
        #expect(error.path == "test.json", sourceLocation: sourceLocation)
        return error.issues
    }
}

/// One broken rule of the profile format.
struct ProfileRule: Sendable, CustomTestStringConvertible {
    var name: String
    var make: @Sendable () -> Data
    var expected: [FieldIssue]
    var testDescription: String { name }

    init(_ name: String, _ expected: [(String, String)], _ make: @escaping @Sendable () -> [String: Any]) {
        self.name = name
        self.make = { data(make()) }
        self.expected = expected.map { FieldIssue(field: $0.0, message: $0.1) }
    }
}

private let knownTopLevel =
    "is not a known key (known: schemaVersion, id, vendor, applications, supports, bluetooth, hotspot, handoff, bluetoothHandoff, provisioning, unencryptedProvisioning, homeNetwork, items, sources)"

/// A camera-style `bluetoothHandoff` section using every key.
private func cameraHandoff() -> JSON {
    [
        "service": "b5f90001-aa8d-11e3-9046-0002a5d5c51b",
        "pairing": "required",
        "ssid": "b5f90002-aa8d-11e3-9046-0002a5d5c51b",
        "passphrase": "b5f90003-aa8d-11e3-9046-0002a5d5c51b",
        "security": "b5f90006-aa8d-11e3-9046-0002a5d5c51b",
        "switchOn": ["characteristic": "b5f90072-aa8d-11e3-9046-0002a5d5c51b", "value": "03170101"] as JSON,
        "switchOff": ["characteristic": "b5f90072-aa8d-11e3-9046-0002a5d5c51b", "value": "03170100"] as JSON,
        "state": ["characteristic": "b5f90073-aa8d-11e3-9046-0002a5d5c51b", "ready": ["021700"], "failed": ["0217"]]
            as JSON,
        "readyTimeoutSeconds": 20,
    ]
}

/// A valid bluetoothToWiFi profile.
private func handoffProfile() -> JSON {
    with(bluetoothProfile()) {
        $0["supports"] = ["wifi", "bluetooth"]
        $0["handoff"] = "bluetoothToWiFi"
        $0["hotspot"] = ["security": "wpa2Personal", "passphrase": ["source": "handoff"]] as JSON
        $0["bluetoothHandoff"] = cameraHandoff()
    }
}
private let wpaLength = "a WPA passphrase has 8 to 63 printable ASCII characters, or is 64 hex digits"
private let handoffChoices = #""none", "joinHotspot", "bluetoothToWiFi", "improvWiFi""#
private let securityChoices = #""open", "wep", "wpa2Personal", "wpa3Personal", "owe""#

@Suite("AccessoryProfile")
struct AccessoryProfileTests {
    @Test("homeNetwork's services are read with their instance patterns")
    func homeNetwork() throws {
        let profile = try AccessoryProfile.parse(
            data(
                with(wifiProfile()) {
                    $0["homeNetwork"] = [
                        "services": [["type": "_shelly._tcp", "instance": "shelly*"] as JSON, ["type": "_http._tcp"]]
                    ]
                }), path: "plug.json")
        #expect(
            profile.homeServices == [
                PublishedService(type: "_shelly._tcp", instance: "shelly*"), PublishedService(type: "_http._tcp"),
            ])
        #expect(try AccessoryProfile.parse(data(wifiProfile()), path: "plug.json").homeServices.isEmpty)
    }

    @Test("a minimal Wi-Fi profile parses with its values")
    func wifi() throws {
        let profile = try AccessoryProfile.parse(data(wifiProfile()), path: "plug.json")
        #expect(profile.id == "org.example.plug")
        #expect(profile.vendor == "Example")
        #expect(profile.supports == [.wifi])
        #expect(profile.bluetooth == AccessoryProfile.BluetoothDeclarations())
        #expect(profile.handoff == .joinHotspot)
        #expect(
            profile.hotspot
                == HotspotPolicy(security: .wpa2Personal, passphrase: .fixed(Secret("wled1234")), joinOnce: true))
        #expect(profile.items.count == 1)
        #expect(profile.items[0].name == "Example plug")
        #expect(profile.items[0].productImage == nil)
        #expect(profile.items[0].setupOptions == [])
        var descriptor = DiscoveryDescriptor()
        descriptor.ssidPrefix = try SSID("plug-")
        #expect(profile.items[0].descriptor == descriptor)
        #expect(profile.sources == [])
    }

    @Test("applications: absent is none (host processes only); listed ids are admitted, others not")
    func applications() throws {
        let hostOnly = try AccessoryProfile.parse(data(wifiProfile()), path: "p.json")
        #expect(hostOnly.applications == [])
        #expect(!hostOnly.admits(application: "org.example.AcmePlug"))
        let listed = with(wifiProfile()) { $0["applications"] = ["org.example.AcmePlug", "io.github.some_one.Tool-2"] }
        let profile = try AccessoryProfile.parse(data(listed), path: "p.json")
        #expect(profile.applications == ["org.example.AcmePlug", "io.github.some_one.Tool-2"])
        #expect(profile.admits(application: "org.example.AcmePlug"))
        #expect(!profile.admits(application: "org.example.Other"))
        let empty = with(wifiProfile()) { $0["applications"] = [String]() }
        #expect(try AccessoryProfile.parse(data(empty), path: "p.json").applications == [])
    }

    @Test(
        "application ids are checked as flatpak_is_valid_name checks them",
        arguments: [
            ("org.example.AcmePlug", nil), ("org.example.Acme-Plug", nil), ("org.example.-Plug", nil),
            ("_a.b_.c9", nil), ("com.example.App.Sub", nil),
            ("", "it is empty"), ("org.example", "it has fewer than 3 elements"),
            (".org.example.App", "it starts with a period"), ("org.example.App.", "it ends with a period"),
            ("org..example.App", "an element is empty"), ("org.ex-ample.App", "only the last element may contain '-'"),
            ("org.-example.App", "only the last element may contain '-'"),
            ("org.example.1App", "an element starts with '1'"), ("1org.example.App", "an element starts with '1'"),
            ("org.example.App!", "it contains '!'"), ("org.exämple.App", "it contains the byte 0xc3"),
            ("org.example.App name", "it contains the byte 0x20"),
            ("org.example." + String(repeating: "a", count: 244), "it is longer than 255 bytes"),
        ] as [(String, String?)])
    func applicationIDs(id: String, problem: String?) {
        #expect(ApplicationID.problem(id) == problem)
        #expect(ApplicationID.isValid(id) == (problem == nil))
    }

    @Test("a Bluetooth profile parses with its declarations, options and sources")
    func bluetooth() throws {
        let profile = try AccessoryProfile.parse(data(bluetoothProfile()), path: "blu.json")
        #expect(profile.supports == [.bluetooth])
        #expect(profile.hotspot == nil)
        #expect(profile.handoff == AccessoryProfile.Handoff.none)
        #expect(profile.bluetooth.services == [BluetoothUUID(assigned: 0x180D)])
        #expect(profile.bluetooth.names == ["SBBT"])
        #expect(profile.bluetooth.companyIdentifiers.map(\.rawValue) == [0x0BA9, 0x004C])
        #expect(profile.items.map(\.name) == ["Door sensor", "Heart rate"])
        #expect(profile.items[0].productImage == "images/door.png")
        #expect(profile.items[0].setupOptions == [.rename, .finishInApp])
        #expect(profile.items[0].descriptor.bluetoothCompanyIdentifier?.rawValue == 0x0BA9)
        #expect(profile.items[0].descriptor.bluetoothNameSubstring == "SBBT")
        #expect(profile.items[1].descriptor.bluetoothServiceUUID == BluetoothUUID(assigned: 0x180D))
        #expect(profile.sources == [SourceReference(fact: "Shelly uses 0x0BA9", reference: "https://example.org")])
    }

    @Test("hotspot settings: a stored profile with a lifetime, hidden, and each passphrase source")
    func hotspotSettings() throws {
        let stored = with(wifiProfile()) {
            $0["hotspot"] =
                [
                    "security": "wpa3Personal", "passphrase": ["source": "prompt", "hint": "on the label"],
                    "joinOnce": false, "lifetimeInDays": 365, "hidden": true,
                ] as JSON
            editItem(&$0) { $0["descriptor"] = ["ssid": "Setup"] as JSON }
        }
        #expect(
            try AccessoryProfile.parse(data(stored), path: "p").hotspot
                == HotspotPolicy(
                    security: .wpa3Personal, passphrase: .prompt(hint: "on the label"), joinOnce: false,
                    lifetimeInDays: 365, hidden: true))

        let handoff = with(wifiProfile()) {
            $0["hotspot"] =
                ["security": "wep", "passphrase": ["source": "handoff"], "joinOnce": false, "lifetimeInDays": 1] as JSON
        }
        #expect(
            try AccessoryProfile.parse(data(handoff), path: "p").hotspot
                == HotspotPolicy(security: .wep, passphrase: .handoff, joinOnce: false, lifetimeInDays: 1))

        let open = with(wifiProfile()) {
            $0["hotspot"] = ["security": "owe", "passphrase": ["source": "none"]] as JSON
        }
        #expect(
            try AccessoryProfile.parse(data(open), path: "p").hotspot
                == HotspotPolicy(security: .owe, passphrase: .none))
    }

    @Test("bluetoothToWiFi with both transports, a hotspot, its GATT handoff and a descriptor of both kinds parses")
    func bluetoothToWiFi() throws {
        let profile = with(handoffProfile()) {
            editItem(&$0) { $0["descriptor"] = ["ssidPrefix": "PROV_", "bluetoothServiceUUID": "180d"] as JSON }
        }
        let parsed = try AccessoryProfile.parse(data(profile), path: "p")
        #expect(parsed.supports == [.wifi, .bluetooth])
        #expect(parsed.handoff == .bluetoothToWiFi)
        let uuid = { (suffix: String) in try BluetoothUUID("b5f9\(suffix)-aa8d-11e3-9046-0002a5d5c51b") }
        #expect(
            parsed.bluetoothHandoff
                == BluetoothHandoff(
                    service: try uuid("0001"), pairing: .required, ssid: try uuid("0002"), passphrase: try uuid("0003"),
                    security: try uuid("0006"),
                    switchOn: .init(characteristic: try uuid("0072"), value: [3, 0x17, 1, 1]),
                    switchOff: .init(characteristic: try uuid("0072"), value: [3, 0x17, 1, 0]),
                    state: .init(characteristic: try uuid("0073"), ready: [[2, 0x17, 0]], failed: [[2, 0x17]]),
                    readyTimeout: .seconds(20)))

        let minimal = with(handoffProfile()) {
            $0["hotspot"] = ["security": "open", "passphrase": ["source": "none"]] as JSON
            $0["bluetoothHandoff"] = ["service": "180d", "pairing": "none", "ssid": "2a00"] as JSON
        }
        let plain = try #require(try AccessoryProfile.parse(data(minimal), path: "p").bluetoothHandoff)
        #expect(plain.switchOn == nil && plain.state == nil && plain.passphrase == nil)
        #expect(plain.readyTimeout == BluetoothHandoff.defaultReadyTimeout)
    }

    @Test func theShippedESPIDFProfilesProvisionOverTheirTransports() throws {
        let softAP = try AccessoryProfile.load(
            contentsOf: Self.profilesDirectory.appendingPathComponent("esp-idf-provisioning-softap.json"))
        #expect(softAP.provisioning == ProvisioningSetup(transport: .softAP, address: "192.168.4.1:80"))
        let ble = try AccessoryProfile.load(
            contentsOf: Self.profilesDirectory.appendingPathComponent("esp-idf-provisioning-ble.json"))
        #expect(ble.provisioning == ProvisioningSetup(transport: .bluetooth))
        let minimal = with(wifiProfile()) {
            $0["provisioning"] =
                ["protocol": "espIDF", "transport": "softAP", "security": 2, "username": "admin"] as JSON
        }
        #expect(
            try AccessoryProfile.parse(data(minimal), path: "p").provisioning
                == ProvisioningSetup(transport: .softAP, address: "192.168.4.1:80", security: 2, username: "admin"))
        let prompted = with(wifiProfile()) {
            $0["provisioning"] =
                [
                    "protocol": "espIDF", "transport": "softAP",
                    "proofOfPossession": ["source": "prompt", "hint": "Under the lid"] as JSON,
                ] as JSON
        }
        #expect(
            try AccessoryProfile.parse(data(prompted), path: "p").provisioning?.proofOfPossession
                == .prompt(hint: "Under the lid"))
        let fixed = with(wifiProfile()) {
            $0["provisioning"] =
                [
                    "protocol": "espIDF", "transport": "softAP",
                    "proofOfPossession": ["source": "fixed", "value": "abcd1234"] as JSON,
                ] as JSON
        }
        #expect(
            try AccessoryProfile.parse(data(fixed), path: "p").provisioning?.proofOfPossession
                == .fixed(Secret("abcd1234")))
    }

    @Test func aStateValueIsJudgedByItsPrefix() {
        let state = BluetoothHandoff.StateReport(
            characteristic: BluetoothUUID(assigned: 0x2A00), ready: [[2, 0x17, 0]], failed: [[2, 0x17]])
        #expect(state.verdict([2, 0x17, 0]) == .ready)
        #expect(state.verdict([2, 0x17, 0, 9]) == .ready)
        #expect(state.verdict([2, 0x17, 1]) == .failed)
        #expect(state.verdict([2, 0x18, 0]) == nil)
        #expect(state.verdict([]) == nil)
    }

    @Test func aRevealedHotspotIsCheckedAndConfigured() throws {
        let revealed = try RevealedHotspot(
            ssid: Array("Cam".utf8), passphrase: Array("secret-pass".utf8) + [0, 0], security: [1])
        #expect(revealed.passphrase?.reveal() == "secret-pass")
        #expect(revealed.security == .wpa2Personal)
        let open = HotspotPolicy(security: .open, passphrase: .none)
        #expect(
            try revealed.configuration(policy: open).security == .wpa2Personal(Secret("secret-pass")),
            "the device's own word wins")
        #expect(throws: HotspotHandoffError.invalidSSID(SSIDError.empty.description)) {
            try RevealedHotspot(ssid: [], passphrase: nil, security: nil)
        }
        #expect(throws: HotspotHandoffError.invalidPassphrase("it is not UTF-8 text")) {
            try RevealedHotspot(ssid: [0x41], passphrase: [0xFF, 0xFE], security: nil)
        }
        let short = try RevealedHotspot(ssid: [0x41], passphrase: Array("short".utf8), security: nil)
        #expect(throws: HotspotHandoffError.self) {
            try short.configuration(policy: HotspotPolicy(security: .wpa2Personal, passphrase: .handoff))
        }
    }

    static let rules: [ProfileRule] = [
        ProfileRule(
            "a home network service type that is not DNS-SD's",
            [
                (
                    "homeNetwork.services[0].type",
                    "'wled' is not a DNS-SD service type: an underscore, 1 to 15 letters, digits or '-', then ._tcp or ._udp, like _wled._tcp"
                ),
                ("homeNetwork.services[1].instance", "expected a string, found a number"),
            ]
        ) {
            with(wifiProfile()) {
                $0["homeNetwork"] = [
                    "services": [["type": "wled"] as JSON, ["type": "_ok._udp", "instance": 3] as JSON]
                ]
            }
        },
        ProfileRule(
            "a home network with more than 8 services", [("homeNetwork.services", "lists 9 services; at most 8")]
        ) {
            with(wifiProfile()) {
                $0["homeNetwork"] = ["services": (1...9).map { ["type": "_s\($0)._tcp"] as JSON }] as JSON
            }
        },
        ProfileRule("a home network without services", [("homeNetwork.services", "must not be empty")]) {
            with(wifiProfile()) { $0["homeNetwork"] = ["services": [] as [Any]] as JSON }
        },
        // Required keys
        .init("schemaVersion missing", [("schemaVersion", "is required")]) {
            with(wifiProfile()) { $0["schemaVersion"] = nil }
        },
        .init("id missing", [("id", "is required")]) { with(wifiProfile()) { $0["id"] = nil } },
        .init("vendor missing", [("vendor", "is required")]) { with(wifiProfile()) { $0["vendor"] = nil } },
        .init("supports missing", [("supports", "is required")]) { with(wifiProfile()) { $0["supports"] = nil } },
        .init("handoff missing", [("handoff", "is required")]) { with(wifiProfile()) { $0["handoff"] = nil } },
        .init("items missing", [("items", "is required")]) { with(wifiProfile()) { $0["items"] = nil } },
        // schemaVersion
        .init("schemaVersion 2", [("schemaVersion", "is 2; this version reads schema 1")]) {
            with(wifiProfile()) { $0["schemaVersion"] = 2 }
        },
        .init("schemaVersion 0", [("schemaVersion", "is 0; it must be from 1 to \(Int.max)")]) {
            with(wifiProfile()) { $0["schemaVersion"] = 0 }
        },
        .init("schemaVersion as a string", [("schemaVersion", "expected a whole number, found a string")]) {
            with(wifiProfile()) { $0["schemaVersion"] = "1" }
        },
        // id, vendor
        .init(
            "id of one label",
            [
                (
                    "id",
                    "'plug' is not a reverse-DNS name (letters, digits, '-' in at least two labels separated by '.', like org.example.plug)"
                )
            ]
        ) {
            with(wifiProfile()) { $0["id"] = "plug" }
        },
        .init(
            "id with an empty label",
            [
                (
                    "id",
                    "'org..plug' is not a reverse-DNS name (letters, digits, '-' in at least two labels separated by '.', like org.example.plug)"
                )
            ]
        ) {
            with(wifiProfile()) { $0["id"] = "org..plug" }
        },
        .init(
            "id with a space",
            [
                (
                    "id",
                    "'org.my plug' is not a reverse-DNS name (letters, digits, '-' in at least two labels separated by '.', like org.example.plug)"
                )
            ]
        ) {
            with(wifiProfile()) { $0["id"] = "org.my plug" }
        },
        .init(
            "id with a non-ASCII letter",
            [
                (
                    "id",
                    "'org.exämple' is not a reverse-DNS name (letters, digits, '-' in at least two labels separated by '.', like org.example.plug)"
                )
            ]
        ) {
            with(wifiProfile()) { $0["id"] = "org.exämple" }
        },
        .init("id of another type", [("id", "expected a string, found a number")]) {
            with(wifiProfile()) { $0["id"] = 7 }
        },
        .init("empty vendor", [("vendor", "must not be empty")]) { with(wifiProfile()) { $0["vendor"] = "" } },
        // supports
        .init("supports empty", [("supports", "must not be empty")]) {
            with(wifiProfile()) { $0["supports"] = [String]() }
        },
        .init("supports unknown", [("supports[1]", #"expected one of "wifi", "bluetooth""#)]) {
            with(wifiProfile()) { $0["supports"] = ["wifi", "zigbee"] }
        },
        .init("supports repeated", [("supports[1]", #""wifi" is listed twice"#)]) {
            with(wifiProfile()) { $0["supports"] = ["wifi", "wifi"] }
        },
        .init("supports not an array", [("supports", "expected an array, found a string")]) {
            with(wifiProfile()) { $0["supports"] = "wifi" }
        },
        // Unknown keys
        .init("unknown top-level key", [("vendorName", knownTopLevel)]) {
            with(wifiProfile()) { $0["vendorName"] = "Example" }
        },
        // items
        .init("items empty", [("items", "must not be empty")]) { with(wifiProfile()) { $0["items"] = [JSON]() } },
        .init("item name missing", [("items[0].name", "is required")]) {
            with(wifiProfile()) { editItem(&$0) { $0["name"] = nil } }
        },
        .init("item name empty", [("items[0].name", "must not be empty")]) {
            with(wifiProfile()) { editItem(&$0) { $0["name"] = "" } }
        },
        // The agent's rule for the names an app shows: they become the accessories' names.
        .init("item name blank", [("items[0].name", "must not be empty")]) {
            with(wifiProfile()) { editItem(&$0) { $0["name"] = " \t" } }
        },
        .init(
            "item name with a control character",
            [("items[0].name", "must not contain control, format or bidirectional characters")]
        ) {
            with(wifiProfile()) { editItem(&$0) { $0["name"] = "Plug\u{1B}[2J" } }
        },
        .init("item name too long", [("items[0].name", "is 129 bytes long; at most 128 are allowed")]) {
            with(wifiProfile()) { editItem(&$0) { $0["name"] = String(repeating: "é", count: 64) + "x" } }
        },
        .init("item not an object", [("items[0]", "expected an object, found a string")]) {
            with(wifiProfile()) { $0["items"] = ["plug"] }
        },
        .init(
            "item unknown key",
            [("items[0].image", "is not a known key (known: name, productImage, setupOptions, descriptor)")]
        ) {
            with(wifiProfile()) { editItem(&$0) { $0["image"] = "x.png" } }
        },
        .init(
            "unknown setupOptions",
            [("items[0].setupOptions[1]", #"expected one of "rename", "confirmAuthorization", "finishInApp""#)]
        ) {
            with(wifiProfile()) { editItem(&$0) { $0["setupOptions"] = ["rename", "reboot"] } }
        },
        .init("descriptor missing", [("items[0].descriptor", "is required")]) {
            with(wifiProfile()) { editItem(&$0) { $0["descriptor"] = nil } }
        },
        .init("descriptor fault", [("items[0].descriptor.ssidPrefix", "must not be empty")]) {
            with(wifiProfile()) { editItem(&$0) { $0["descriptor"] = ["ssidPrefix": ""] as JSON } }
        },
        .init("descriptor rule", [("items[0].descriptor", DiscoveryDescriptorError.noIdentifier.message)]) {
            with(wifiProfile()) { editItem(&$0) { $0["descriptor"] = [:] as JSON } }
        },
        // Bluetooth declarations
        .init(
            "service UUID not declared",
            [
                (
                    "items[1].descriptor.bluetoothServiceUUID",
                    "service 0000180f-0000-1000-8000-00805f9b34fb is not declared in bluetooth.services"
                )
            ]
        ) {
            with(bluetoothProfile()) {
                var items = $0["items"] as! [JSON]
                items[1]["descriptor"] = ["bluetoothServiceUUID": "180f"] as JSON
                $0["items"] = items
            }
        },
        .init(
            "company identifier not declared",
            [
                (
                    "items[0].descriptor.bluetoothCompanyIdentifier",
                    "company 0x004D is not declared in bluetooth.companyIdentifiers"
                )
            ]
        ) {
            with(bluetoothProfile()) {
                editItem(&$0) {
                    $0["descriptor"] = ["bluetoothCompanyIdentifier": 77, "bluetoothNameSubstring": "SBBT"] as JSON
                }
            }
        },
        .init(
            "name not declared",
            [("items[0].descriptor.bluetoothNameSubstring", "name 'SBB' is not declared in bluetooth.names")]
        ) {
            with(bluetoothProfile()) {
                editItem(&$0) {
                    $0["descriptor"] =
                        ["bluetoothCompanyIdentifier": "0x0BA9", "bluetoothNameSubstring": "SBB"] as JSON
                }
            }
        },
        .init(
            "Bluetooth values without a bluetooth section",
            [
                (
                    "items[0].descriptor.bluetoothServiceUUID",
                    "service 0000180d-0000-1000-8000-00805f9b34fb is not declared in bluetooth.services"
                )
            ]
        ) {
            with(bluetoothProfile()) {
                $0["bluetooth"] = nil
                $0["items"] = [["name": "Heart rate", "descriptor": ["bluetoothServiceUUID": "180d"] as JSON] as JSON]
            }
        },
        .init(
            "bluetooth section with an unknown key",
            [("bluetooth.service", "is not a known key (known: services, names, companyIdentifiers)")]
        ) {
            with(bluetoothProfile()) { edit(&$0, "bluetooth") { $0["service"] = ["180d"] } }
        },
        .init(
            "bluetooth service that is not a UUID",
            [("bluetooth.services[1]", "'18' is not a 16-bit (180d), 32-bit or 128-bit Bluetooth UUID")]
        ) {
            with(bluetoothProfile()) { edit(&$0, "bluetooth") { $0["services"] = ["180d", "18"] } }
        },
        .init("bluetooth name empty", [("bluetooth.names[1]", "expected a non-empty string")]) {
            with(bluetoothProfile()) { edit(&$0, "bluetooth") { $0["names"] = ["SBBT", ""] } }
        },
        .init(
            "bluetooth company out of range",
            [("bluetooth.companyIdentifiers[2]", "is 70000; it must be from 0 to 65535")]
        ) {
            with(bluetoothProfile()) { edit(&$0, "bluetooth") { $0["companyIdentifiers"] = ["0x0BA9", 76, 70000] } }
        },
        // Transports
        .init(
            "Wi-Fi descriptor without wifi in supports",
            [("items[0].descriptor", #"uses Wi-Fi identifiers, but "wifi" is not in the profile's supports"#)]
        ) {
            with(bluetoothProfile()) { editItem(&$0) { $0["descriptor"] = ["ssid": "SBBT-setup"] as JSON } }
        },
        .init(
            "Bluetooth descriptor without bluetooth in supports",
            [("items[0].descriptor", #"uses Bluetooth identifiers, but "bluetooth" is not in the profile's supports"#)]
        ) {
            with(wifiProfile()) {
                editItem(&$0) { $0["descriptor"] = ["ssidPrefix": "plug-", "bluetoothServiceUUID": "180d"] as JSON }
            }
        },
        .init(
            "bluetooth section without bluetooth in supports",
            [("bluetooth", #"declares Bluetooth values, but "bluetooth" is not in supports"#)]
        ) {
            with(wifiProfile()) { $0["bluetooth"] = ["services": ["180d"]] as JSON }
        },
        .init("hotspot without wifi in supports", [("hotspot", #"a hotspot needs "wifi" in supports"#)]) {
            with(bluetoothProfile()) { $0["hotspot"] = ["security": "open", "passphrase": ["source": "none"]] as JSON }
        },
        // Handoff
        .init("handoff unknown", [("handoff", #""teleport" is not one of \#(handoffChoices)"#)]) {
            with(wifiProfile()) { $0["handoff"] = "teleport" }
        },
        .init(
            "joinHotspot without a hotspot",
            [("hotspot", "is required by handoff joinHotspot: say how the accessory's hotspot is secured")]
        ) {
            with(wifiProfile()) { $0["hotspot"] = nil }
        },
        .init("improvWiFi without bluetooth", [("handoff", #"improvWiFi needs "bluetooth" in supports"#)]) {
            with(wifiProfile()) { $0["handoff"] = "improvWiFi" }
        },
        .init(
            "bluetoothToWiFi without bluetooth",
            [
                ("handoff", #"bluetoothToWiFi needs "bluetooth" in supports"#),
                (
                    "bluetoothHandoff",
                    "is required by handoff bluetoothToWiFi: name the GATT service and characteristics that reveal the hotspot"
                ),
            ]
        ) {
            with(wifiProfile()) { $0["handoff"] = "bluetoothToWiFi" }
        },
        // Bluetooth handoff
        .init(
            "bluetoothHandoff with another handoff",
            [("bluetoothHandoff", "applies only to handoff bluetoothToWiFi, not joinHotspot")]
        ) {
            with(handoffProfile()) {
                $0["handoff"] = "joinHotspot"
                editItem(&$0) { $0["descriptor"] = ["ssidPrefix": "GP"] as JSON }
            }
        },
        .init(
            "bluetoothHandoff without its keys",
            [
                ("bluetoothHandoff.service", "is required"), ("bluetoothHandoff.pairing", "is required"),
                ("bluetoothHandoff.ssid", "is required"),
            ]
        ) {
            with(handoffProfile()) { $0["bluetoothHandoff"] = [:] as JSON }
        },
        .init(
            "bluetoothHandoff without the passphrase a handoff passphrase needs",
            [
                ("bluetoothHandoff.passphrase", #"is required: hotspot.passphrase.source is "handoff""#)
            ]
        ) {
            with(handoffProfile()) { edit(&$0, "bluetoothHandoff") { $0["passphrase"] = nil } }
        },
        .init(
            "bluetoothHandoff with bad values",
            [
                (
                    "bluetoothHandoff.extra",
                    "is not a known key (known: service, pairing, ssid, passphrase, security, switchOn, switchOff, state, readyTimeoutSeconds)"
                ),
                ("bluetoothHandoff.pairing", #""maybe" is not one of "required", "none""#),
                ("bluetoothHandoff.ssid", "'b5f9x' is not a 16-bit (180d), 32-bit or 128-bit Bluetooth UUID"),
                ("bluetoothHandoff.switchOn.value", "'z' at position 1 is not a hex digit"),
                ("bluetoothHandoff.switchOff.value", "must hold at least one byte"),
                ("bluetoothHandoff.state.ready[1]", #"expected the hex bytes a state value starts with, like "01""#),
                ("bluetoothHandoff.readyTimeoutSeconds", "is 0; it must be from 1 to 600"),
            ]
        ) {
            with(handoffProfile()) {
                edit(&$0, "bluetoothHandoff") {
                    $0["ssid"] = "b5f9x"
                    $0["pairing"] = "maybe"
                    $0["switchOn"] = ["characteristic": "2a00", "value": "zz"] as JSON
                    $0["switchOff"] = ["characteristic": "2a00", "value": ""] as JSON
                    $0["state"] = ["characteristic": "2a01", "ready": ["021700", 7]] as JSON
                    $0["readyTimeoutSeconds"] = 0
                    $0["extra"] = true
                }
            }
        },
        .init(
            "bluetoothHandoff state both ready and failed",
            [("bluetoothHandoff.state.failed", "021700 is also listed as ready")]
        ) {
            with(handoffProfile()) {
                edit(&$0, "bluetoothHandoff") {
                    $0["state"] = ["characteristic": "2a01", "ready": ["021700"], "failed": ["021700"]] as JSON
                }
            }
        },
        // Provisioning
        .init(
            "provisioning over the SoftAP without a hotspot to join",
            [
                (
                    "provisioning.transport",
                    "softAP needs a handoff that joins the hotspot (joinHotspot or bluetoothToWiFi), not none"
                )
            ]
        ) {
            with(bluetoothProfile()) { $0["provisioning"] = ["protocol": "espIDF", "transport": "softAP"] as JSON }
        },
        .init(
            "provisioning over Bluetooth with a hotspot handoff",
            [
                (
                    "provisioning.transport",
                    "bluetooth provisions over the accessory's own link; its handoff must be none, not bluetoothToWiFi"
                )
            ]
        ) {
            with(handoffProfile()) { $0["provisioning"] = ["protocol": "espIDF", "transport": "bluetooth"] as JSON }
        },
        .init(
            "provisioning of an unknown protocol: its other keys depend on it",
            [("provisioning.protocol", #""improv" is not one of "espIDF", "http""#)]
        ) {
            with(wifiProfile()) {
                $0["provisioning"] = ["protocol": "improv", "transport": "softAP", "address": "192.168.4.1"] as JSON
            }
        },
        .init(
            "provisioning with bad values",
            [
                ("provisioning.address", "'192.168.4.1' is not HOST:PORT, like 192.168.4.1:80"),
                ("provisioning.security", "is 3; it must be from 0 to 2"),
                ("provisioning.username", "is for security 2 only"),
            ]
        ) {
            with(wifiProfile()) {
                $0["provisioning"] =
                    [
                        "protocol": "espIDF", "transport": "softAP", "address": "192.168.4.1", "security": 3,
                        "username": "u",
                    ] as JSON
            }
        },
        .init(
            "a proof of possession for security 0",
            [("provisioning.proofOfPossession", "security 0 takes no proof of possession")]
        ) {
            with(wifiProfile()) {
                $0["unencryptedProvisioning"] = true
                $0["provisioning"] =
                    [
                        "protocol": "espIDF", "transport": "softAP", "security": 0, "minimumSecurity": 0,
                        "proofOfPossession": ["source": "prompt"] as JSON,
                    ] as JSON
            }
        },
        .init(
            "a scheme insisted on below the profile's floor",
            [("provisioning.security", "0 is below minimumSecurity 1")]
        ) {
            with(wifiProfile()) {
                $0["provisioning"] = ["protocol": "espIDF", "transport": "softAP", "security": 0] as JSON
            }
        },
        .init(
            "security 0 accepted without saying the passphrase goes unencrypted",
            [
                (
                    "provisioning.minimumSecurity",
                    #"0 sends the home network's passphrase without encryption; say so with "unencryptedProvisioning": true"#
                )
            ]
        ) {
            with(wifiProfile()) {
                $0["provisioning"] = ["protocol": "espIDF", "transport": "softAP", "minimumSecurity": 0] as JSON
            }
        },
        .init(
            "a proof of possession from nowhere known",
            [("provisioning.proofOfPossession.source", #""label" is not one of "prompt", "fixed""#)]
        ) {
            with(wifiProfile()) {
                $0["provisioning"] =
                    ["protocol": "espIDF", "transport": "softAP", "proofOfPossession": ["source": "label"] as JSON]
                    as JSON
            }
        },
        .init(
            "provisioning over Bluetooth with an address",
            [
                ("provisioning.address", "applies to softAP only; a Bluetooth device is the one handed off")
            ]
        ) {
            with(bluetoothProfile()) {
                $0["provisioning"] = ["protocol": "espIDF", "transport": "bluetooth", "address": "10.0.0.1:80"] as JSON
            }
        },
        .init(
            "bluetoothHandoff switchOff without switchOn",
            [
                (
                    "bluetoothHandoff.switchOff",
                    "needs switchOn: a hotspot that is switched off must be switched on first"
                )
            ]
        ) {
            with(handoffProfile()) { edit(&$0, "bluetoothHandoff") { $0["switchOn"] = nil } }
        },
        .init(
            "joinHotspot without wifi",
            [
                ("handoff", #"joinHotspot needs "wifi" in supports"#),
                ("hotspot", "is required by handoff joinHotspot: say how the accessory's hotspot is secured"),
            ]
        ) {
            with(bluetoothProfile()) { $0["handoff"] = "joinHotspot" }
        },
        // Hotspot
        .init("hotspot security unknown", [("hotspot.security", #""wpa9" is not one of \#(securityChoices)"#)]) {
            with(wifiProfile()) { edit(&$0, "hotspot") { $0["security"] = "wpa9" } }
        },
        .init("hotspot security missing", [("hotspot.security", "is required")]) {
            with(wifiProfile()) { edit(&$0, "hotspot") { $0["security"] = nil } }
        },
        .init("hotspot passphrase missing", [("hotspot.passphrase", "is required")]) {
            with(wifiProfile()) { edit(&$0, "hotspot") { $0["passphrase"] = nil } }
        },
        .init(
            "hidden hotspot with a prefix item",
            [
                (
                    "items[0].descriptor.ssidPrefix",
                    "the hotspot is hidden, and a hidden hotspot answers only a probe for its whole SSID; give ssid"
                )
            ]
        ) {
            with(wifiProfile()) { edit(&$0, "hotspot") { $0["hidden"] = true } }
        },
        .init(
            "hotspot unknown key",
            [("hotspot.ssid", "is not a known key (known: security, passphrase, joinOnce, lifetimeInDays, hidden)")]
        ) {
            with(wifiProfile()) { edit(&$0, "hotspot") { $0["ssid"] = "x" } }
        },
        .init(
            "passphrase source none for wpa2Personal",
            [
                (
                    "hotspot.passphrase.source",
                    #"a wpa2Personal hotspot needs a passphrase; use "fixed", "prompt" or "handoff""#
                )
            ]
        ) {
            with(wifiProfile()) { edit(&$0, "hotspot") { $0["passphrase"] = ["source": "none"] } }
        },
        .init(
            "passphrase source unknown",
            [("hotspot.passphrase.source", #""guess" is not one of "none", "fixed", "prompt", "handoff""#)]
        ) {
            with(wifiProfile()) { edit(&$0, "hotspot") { $0["passphrase"] = ["source": "guess"] } }
        },
        .init(
            "fixed passphrase too short for wpa2Personal",
            [("hotspot.passphrase.value", "has 5 characters; \(wpaLength)")]
        ) {
            with(wifiProfile()) { edit(&$0, "hotspot") { $0["passphrase"] = ["source": "fixed", "value": "s3cr7"] } }
        },
        .init(
            "fixed WEP key of the wrong length",
            [("hotspot.passphrase.value", "a WEP key is 10 hex digits (64-bit) or 26 hex digits (128-bit)")]
        ) {
            with(wifiProfile()) {
                edit(&$0, "hotspot") {
                    $0["security"] = "wep"; $0["passphrase"] = ["source": "fixed", "value": "abcde"]
                }
            }
        },
        .init("fixed passphrase without a value", [("hotspot.passphrase.value", "is required")]) {
            with(wifiProfile()) { edit(&$0, "hotspot") { $0["passphrase"] = ["source": "fixed"] } }
        },
        .init(
            "source fixed for open", [("hotspot.passphrase.source", #"a open hotspot has no passphrase; use "none""#)]
        ) {
            with(wifiProfile()) { edit(&$0, "hotspot") { $0["security"] = "open" } }
        },
        .init("source prompt for owe", [("hotspot.passphrase.source", #"a owe hotspot has no passphrase; use "none""#)])
        {
            with(wifiProfile()) {
                edit(&$0, "hotspot") {
                    $0["security"] = "owe"; $0["passphrase"] = ["source": "prompt"]
                }
            }
        },
        .init("a value with source none", [("hotspot.passphrase.value", "is not a known key (known: source)")]) {
            with(wifiProfile()) {
                edit(&$0, "hotspot") {
                    $0["security"] = "open"; $0["passphrase"] = ["source": "none", "value": "x"]
                }
            }
        },
        .init(
            "lifetimeInDays with joinOnce true",
            [("hotspot.lifetimeInDays", "applies only to a stored profile; set joinOnce to false or drop it")]
        ) {
            with(wifiProfile()) {
                edit(&$0, "hotspot") {
                    $0["joinOnce"] = true; $0["lifetimeInDays"] = 30
                }
            }
        },
        .init(
            "lifetimeInDays with joinOnce left at its default",
            [("hotspot.lifetimeInDays", "applies only to a stored profile; set joinOnce to false or drop it")]
        ) {
            with(wifiProfile()) { edit(&$0, "hotspot") { $0["lifetimeInDays"] = 30 } }
        },
        .init("lifetimeInDays 400", [("hotspot.lifetimeInDays", "is 400; it must be from 1 to 365")]) {
            with(wifiProfile()) {
                edit(&$0, "hotspot") {
                    $0["joinOnce"] = false; $0["lifetimeInDays"] = 400
                }
            }
        },
        .init("lifetimeInDays 0", [("hotspot.lifetimeInDays", "is 0; it must be from 1 to 365")]) {
            with(wifiProfile()) {
                edit(&$0, "hotspot") {
                    $0["joinOnce"] = false; $0["lifetimeInDays"] = 0
                }
            }
        },
        .init("joinOnce not a boolean", [("hotspot.joinOnce", "expected true or false, found a string")]) {
            with(wifiProfile()) { edit(&$0, "hotspot") { $0["joinOnce"] = "no" } }
        },
        // Sources
        .init("source without reference", [("sources[0].reference", "is required")]) {
            with(bluetoothProfile()) { $0["sources"] = [["fact": "f"]] }
        },
        // Applications
        .init("applications not an array", [("applications", "expected an array, found a string")]) {
            with(wifiProfile()) { $0["applications"] = "org.example.AcmePlug" }
        },
        .init(
            "applications with an id that is not flatpak's",
            [
                (
                    "applications[1]",
                    "'org.example' is not a Flatpak application id (it has fewer than 3 elements); ids are like org.example.AcmePlug"
                ),
                (
                    "applications[2]",
                    "'org.1example.App' is not a Flatpak application id (an element starts with '1'); ids are like org.example.AcmePlug"
                ),
                ("applications[3]", "expected a Flatpak application id, found a number"),
            ]
        ) {
            with(wifiProfile()) { $0["applications"] = ["org.example.AcmePlug", "org.example", "org.1example.App", 7] }
        },
        .init("an application listed twice", [("applications[1]", "'org.example.AcmePlug' is listed twice")]) {
            with(wifiProfile()) { $0["applications"] = ["org.example.AcmePlug", "org.example.AcmePlug"] }
        },
    ]

    @Test("each broken rule is reported with its field and message, and nothing else", arguments: rules)
    func brokenRule(rule: ProfileRule) {
        #expect(issues(rule.make()) == rule.expected)
    }

    @Test(
        "the fault about a fixed passphrase never contains the passphrase",
        arguments: [
            ("wpa2Personal", "s3cr7"), ("wpa2Personal", "pässwörd-geheim"), ("wep", "abcde"), ("wpa3Personal", ""),
        ])
    func faultHidesPassphrase(security: String, passphrase: String) throws {
        let profile = with(wifiProfile()) {
            edit(&$0, "hotspot") {
                $0["security"] = security; $0["passphrase"] = ["source": "fixed", "value": passphrase]
            }
        }
        do {
            _ = try AccessoryProfile.parse(data(profile), path: "p.json")
            Issue.record("a bad fixed passphrase was accepted")
        } catch {
            #expect(error.issues.map(\.field) == ["hotspot.passphrase.value"])
            if !passphrase.isEmpty {
                #expect(!error.description.contains(passphrase))
                #expect(!error.issues[0].message.contains(passphrase))
            }
        }
    }

    @Test(
        "invalid JSON is a single (document) fault",
        arguments: [
            #"{"schemaVersion": 1,"#, "", "not json", #"{"id": "a" "vendor": "b"}"#,
        ])
    func invalidJSON(text: String) {
        let found = issues(Data(text.utf8))
        #expect(found.count == 1)
        #expect(found.first?.field == "(document)")
        #expect(found.first?.message.hasPrefix("is not valid JSON") == true)
    }

    @Test("a document that is not an object is one fault")
    func notAnObject() {
        #expect(
            issues(Data("[1, 2]".utf8)) == [
                FieldIssue(field: "(document)", message: "expected an object, found an array")
            ])
    }

    @Test("every fault of a profile is reported, each with its field")
    func manyFaults() {
        let json = #"""
            {
              "schemaVersion": 2,
              "id": "plug",
              "vendor": "",
              "supports": ["wifi"],
              "handoff": "joinHotspot",
              "hotspot": { "security": "wpa2Personal", "passphrase": { "source": "none" }, "lifetimeInDays": 400 },
              "items": [
                { "descriptor": { "ssid": "x", "ssidPrefix": "y" } },
                { "name": "B", "descriptor": { "bluetoothServiceUUID": "180d" } }
              ],
              "colour": "red"
            }
            """#
        let found = issues(Data(json.utf8))
        #expect(
            found.map(\.field) == [
                "colour",
                "schemaVersion",
                "id",
                "vendor",
                "hotspot.passphrase.source",
                "hotspot.lifetimeInDays",
                "items[0].name",
                "items[0].descriptor.ssidPrefix",
                "items[1].descriptor",
            ])
    }

    @Test("ProfileError prints one FILE: field: message line per fault")
    func errorDescription() {
        let error = ProfileError.invalid(
            path: "p.json",
            issues: [
                FieldIssue(field: "id", message: "is required"),
                FieldIssue(field: "items", message: "must not be empty"),
            ])
        #expect(error.description == "p.json: id: is required\np.json: items: must not be empty")
        let unreadable = ProfileError.unreadable(path: "q.json", reason: "cannot be read: gone")
        #expect(unreadable.issues == [FieldIssue(field: "(file)", message: "cannot be read: gone")])
        #expect(unreadable.description == "q.json: (file): cannot be read: gone")
    }

    @Test("loading a file that does not exist is unreadable")
    func loadMissingFile() {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "no-such-profile-\(UUID().uuidString).json")
        do {
            _ = try AccessoryProfile.load(contentsOf: url)
            Issue.record("loaded a missing file")
        } catch {
            guard case .unreadable(let path, _) = error else {
                Issue.record("expected unreadable, got \(error)")
                return
            }
            #expect(path == url.path)
            #expect(error.issues.map(\.field) == ["(file)"])
        }
    }

    static let profilesDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("profiles")

    static func shippedProfiles() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: profilesDirectory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted()
    }

    @Test("profiles/ ships the expected profiles")
    func shippedProfilesExist() {
        #expect(Self.shippedProfiles().count >= 7, "found \(Self.shippedProfiles()) in \(Self.profilesDirectory.path)")
        #expect(Self.shippedProfiles().contains("wled.json"))
    }

    @Test("every shipped profile parses", arguments: shippedProfiles())
    func shippedProfileParses(name: String) throws {
        let profile = try AccessoryProfile.load(contentsOf: Self.profilesDirectory.appendingPathComponent(name))
        #expect(!profile.items.isEmpty)
        #expect(AccessoryProfile.isReverseDNS(profile.id))
    }

    @Test("the shipped WLED profile has its published values")
    func wledProfile() throws {
        let profile = try AccessoryProfile.load(contentsOf: Self.profilesDirectory.appendingPathComponent("wled.json"))
        #expect(profile.id == "ge.wled.softap")
        #expect(profile.hotspot?.passphrase == .fixed(Secret("wled1234")))
        #expect(profile.items.first?.descriptor.ssid == (try SSID("WLED-AP")))
    }
}
