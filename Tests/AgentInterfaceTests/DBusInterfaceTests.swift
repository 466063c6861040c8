import AccessoryCore
import AgentInterface
import Foundation
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The introspection XML in `dbus/` against the Swift error enums and `docs/dbus-api.md`.
@Suite("The D-Bus interfaces, their errors and their documentation")
struct DBusInterfaceTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct Member: Hashable {
        enum Kind: String { case method, signal, property }
        var kind: Kind
        var name: String
        /// The annotation's actions: the one checked first, then any checked only in some cases.
        var polkitActions: [String] = []
        var errors: [String] = []
    }

    /// Collects each interface's members and their annotations.
    final class Introspection: NSObject, XMLParserDelegate {
        var interfaces: [String: [Member]] = [:]
        private var interface: String?
        private var member: Member?

        func parser(
            _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            switch element {
            case "interface":
                interface = attributes["name"]
                interfaces[interface ?? "", default: []] = []
            case "method", "signal", "property":
                member = Member(kind: Member.Kind(rawValue: element)!, name: attributes["name"] ?? "")
            case "annotation":
                switch attributes["name"] {
                case "io.accessorysetup.PolkitAction":
                    member?.polkitActions = (attributes["value"] ?? "").split(separator: " ").map(String.init)
                case "io.accessorysetup.Errors":
                    member?.errors = (attributes["value"] ?? "").split(separator: " ").map(String.init)
                default: break
                }
            default:
                break
            }
        }

        func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
            guard ["method", "signal", "property"].contains(element), let member, let interface else { return }
            interfaces[interface, default: []].append(member)
            self.member = nil
        }
    }

    static func introspect() throws -> [String: [Member]] {
        let directory = root.appendingPathComponent("dbus")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".xml") }
            .sorted()
        #expect(files == AgentBus.Interface.allCases.map { "\($0.name).xml" }.sorted())
        let collected = Introspection()
        for file in files {
            let parser = try #require(XMLParser(contentsOf: directory.appendingPathComponent(file)))
            parser.delegate = collected
            #expect(parser.parse(), "\(file): \(parser.parserError.map { "\($0)" } ?? "")")
        }
        return collected.interfaces
    }

    static let documentation = root.appendingPathComponent("docs/dbus-api.md")

    /// One sample of every `HotspotError` case. The switch does not compile when a case is
    /// added, so that the sample list is looked at again.
    static let hotspotErrors: [HotspotError] = {
        let ssid = try! SSID("x")
        let samples: [HotspotError] = [
            .invalidConfiguration(.joinOnceNotSupported), .alreadyAssociated(ssid), .pending(device: "d"),
            .notAuthorized("r"),
            .networkManagerUnavailable("r"), .noWiFiDevice(nil), .wifiDisabled, .notFound("x"), .wrongPassphrase(ssid),
            .authenticationRejected(ssid), .associationTimeout(ssid), .addressingFailed(ssid),
            .activationFailed(ssid, reason: "r"),
            .timedOut(ssid, seconds: 1), .notJoined(device: "d"), .cancelled,
            .checkpointRefused(device: "d", reason: "r"),
            .networkManagerRestarted, .notStored("x"), .internal("r"),
            .pickedAccessPointNotFound(ssid, bssid: MACAddress(rawValue: 1), others: [MACAddress(rawValue: 2)]),
            .systemConfiguration(ssid),
        ]
        let configurationErrors: [HotspotConfigurationError] = [
            .invalid(field: "f", "r"), .invalidSSID("r"), .invalidWPAPassphrase("r"), .invalidWEPPassphrase("r"),
            .invalidEAPSettings(field: "f", "r"), .joinOnceNotSupported, .invalidSSIDPrefix("r"),
        ]
        for sample in samples {
            switch sample {
            case .invalidConfiguration, .alreadyAssociated, .pending, .notAuthorized, .networkManagerUnavailable,
                .noWiFiDevice, .wifiDisabled, .notFound, .wrongPassphrase, .authenticationRejected, .associationTimeout,
                .addressingFailed, .activationFailed, .timedOut, .notJoined, .cancelled, .checkpointRefused,
                .networkManagerRestarted, .notStored, .internal, .pickedAccessPointNotFound, .systemConfiguration:
                break
            }
        }
        return samples + configurationErrors.map(HotspotError.invalidConfiguration)
    }()

    /// One sample of every `ProvisioningError` case, the device's three verdicts apart.
    static let provisioningErrors: [ProvisioningError] = [
        .wrongProofOfPossession(.sec1), .proofOfPossessionRequired, .securityMismatch(requested: .sec1, device: .sec2),
        .unsupportedSecurity(3), .deviceStatus(step: "s", .init(rawValue: 1)), .deviceNotVerified(.sec2),
        .malformedMessage("m", "r"), .malformedVersion("r"), .invalidCredentials(field: "f", "r"),
        .connectionFailed(ssid: [0x78], .authError), .connectionFailed(ssid: [0x78], .networkNotFound),
        .connectionFailed(ssid: [0x78], .init(rawValue: 9)), .disconnected, .sessionNotEstablished, .decryptionFailed,
        .crypto("r"), .transport(endpoint: "e", "r"), .connectionClosed(endpoint: "e"), .timedOut("w", seconds: 1),
        .cancelled, .securityBelowMinimum(device: 0, minimum: 1), .deviceAuthenticationRequired(step: "s"),
        .deviceRefused(step: "s", "r"), .notOnHomeNetwork(ssid: [0x78], seconds: 5),
    ]

    /// One sample of every `ImprovError` and `BluetoothError` case.
    static let improvErrors: [ImprovError] = {
        let address = try! MACAddress("02:00:00:00:00:01")
        let bluetooth: [BluetoothError] = [
            .bluezUnavailable("r"), .noAdapter(nil), .adapterPoweredOff("a"), .adapterBlocked("a"),
            .deviceNotFound(address), .serviceNotFound(BluetoothUUID(assigned: 0x180F)),
            .characteristicNotFound(BluetoothUUID(assigned: 0x2A19)), .notPermitted("r"), .notAuthorized("r"),
            .inProgress("r"), .notSupported("r"), .invalidValueLength("r"), .failed("r"), .disconnected(address),
            .timedOut("w", seconds: 1), .cancelled,
        ]
        return [
            .invalidRPC(.sendWiFiSettings), .unknownRPC(.sendWiFiSettings), .unableToConnect, .notAuthorized,
            .deviceError(9),
            .badChecksum(expected: 1, received: 2), .malformedResponse("r"), .unexpectedResponse("r"),
            .invalidRequest("r"), .notImprovDevice(address), .unsupported("r"), .timedOut("w", seconds: 1),
        ] + bluetooth.map(ImprovError.bluetooth)
    }()

    /// Every D-Bus error name the Swift enums can produce.
    static var swiftErrorNames: Set<String> {
        Set(AccessorySessionError.Code.allCases.map(\.dbusName))
            .union(AgentError.Code.allCases.map(\.dbusName))
            .union(hotspotErrors.map(\.dbusName))
            .union(provisioningErrors.map(\.dbusName))
            .union(improvErrors.map(\.dbusName))
    }

    static func errorNames(in text: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: #"io\.accessorysetup\.Error\.[A-Za-z]+"#)
        let range = NSRange(text.startIndex..., in: text)
        return Set(pattern.matches(in: text, range: range).map { String(text[Range($0.range, in: text)!]) })
    }

    /// The text under the `## <interface>` heading, up to the next interface.
    static func section(of interface: String, in documentation: String) -> String? {
        guard let start = documentation.range(of: "\n## \(interface)\n") else { return nil }
        let rest = documentation[start.upperBound...]
        return String(rest[..<(rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex)])
    }

    /// The `#### ` entries of a section, by member name: `#### \`dict Leave(dict options)\`` is `Leave`.
    static func entries(in section: String) -> [String: String] {
        var entries: [String: String] = [:]
        for chunk in section.components(separatedBy: "\n#### ").dropFirst() {
            let heading = chunk.prefix { $0 != "\n" }
            let signature = heading.split(separator: "`").first.map(String.init) ?? ""
            let beforeArguments = signature.split(separator: "(").first.map(String.init) ?? signature
            let name = beforeArguments.split(separator: " ").last { !$0.hasPrefix("[") }.map(String.init) ?? ""
            entries[name] = chunk.components(separatedBy: "\n### ").first ?? ""
        }
        return entries
    }

    @Test func everyErrorNameTheXMLMentionsIsOneTheSwiftEnumsProduce() throws {
        let interfaces = try Self.introspect()
        let mentioned = Set(interfaces.values.joined().flatMap(\.errors))
        #expect(!mentioned.isEmpty)
        #expect(
            mentioned.subtracting(Self.swiftErrorNames).isEmpty,
            "unknown: \(mentioned.subtracting(Self.swiftErrorNames).sorted())")
    }

    @Test func everyErrorNameTheDocumentationMentionsIsOneTheSwiftEnumsProduce() throws {
        let text = try String(contentsOf: Self.documentation, encoding: .utf8)
        let mentioned = Self.errorNames(in: text)
        #expect(mentioned.count > 20)
        #expect(
            mentioned.subtracting(Self.swiftErrorNames).isEmpty,
            "unknown: \(mentioned.subtracting(Self.swiftErrorNames).sorted())")
    }

    @Test func everyMemberIsDocumentedWithItsErrorsAndPolkitAction() throws {
        let interfaces = try Self.introspect()
        let text = try String(contentsOf: Self.documentation, encoding: .utf8)
        #expect(
            interfaces.keys.sorted() == [
                "io.accessorysetup.Manager1", "io.accessorysetup.PickerAgent1", "io.accessorysetup.Session1",
            ])
        for (interface, members) in interfaces {
            let section = try #require(
                Self.section(of: interface, in: text), "docs/dbus-api.md has no section \(interface)")
            let entries = Self.entries(in: section)
            for member in members {
                guard let entry = entries[member.name] else {
                    Issue.record(
                        "docs/dbus-api.md does not document the \(member.kind.rawValue) \(interface).\(member.name)")
                    continue
                }
                for error in member.errors where !entry.contains(error) {
                    Issue.record("\(interface).\(member.name): the documentation does not list \(error)")
                }
                let polkitLine = entry.split(separator: "\n").first { $0.hasPrefix("polkit: ") } ?? ""
                for action in member.polkitActions where !polkitLine.contains("`\(action)`") {
                    Issue.record(
                        "\(interface).\(member.name): the documentation does not name the polkit action \(action)")
                }
                if member.kind == .method {
                    let documented = Self.errorNames(in: entry)
                    for error in documented.subtracting(member.errors) {
                        Issue.record(
                            "\(interface).\(member.name): \(error) is documented but not in the XML's Errors annotation"
                        )
                    }
                }
            }
            let stale = Set(entries.keys).subtracting(members.map(\.name))
            #expect(stale.isEmpty, "\(interface): documented but not in the XML: \(stale.sorted())")
        }
    }

    @Test func theContractEmbedsEachInterfacesXMLAsWritten() throws {
        for interface in AgentBus.Interface.allCases {
            let file = Self.root.appendingPathComponent("dbus/\(interface.name).xml")
            let written = try String(contentsOf: file, encoding: .utf8)
            #expect(interface.introspectionXML == written, "\(interface.name): rebuild after editing dbus/")
            #expect(interface.introspectionXML.contains("<interface name=\"\(interface.name)\">"))
        }
    }

    /// The member enums embed-interfaces generates, against the XML as this test reads it.
    @Test func theGeneratedMemberNamesAreExactlyTheXMLs() throws {
        let interfaces = try Self.introspect()
        func names(_ interface: String, _ kind: Member.Kind) -> [String] {
            interfaces[interface, default: []].filter { $0.kind == kind }.map(\.name)
        }
        let manager = AgentBus.Manager1.self
        let session = AgentBus.Session1.self
        let picker = AgentBus.PickerAgent1.self
        #expect([manager.name, session.name, picker.name] == AgentBus.Interface.allCases.map(\.name))
        #expect(manager.Method.allCases.map(\.name) == names(manager.name, .method))
        #expect(manager.Signal.allCases.map(\.name) == names(manager.name, .signal))
        #expect(manager.Property.allCases.map(\.name) == names(manager.name, .property))
        #expect(session.Method.allCases.map(\.name) == names(session.name, .method))
        #expect(session.Signal.allCases.map(\.name) == names(session.name, .signal))
        #expect(session.Property.allCases.map(\.name) == names(session.name, .property))
        #expect(picker.Method.allCases.map(\.name) == names(picker.name, .method))

        #expect(manager.Method.getConfiguredSSIDs.rawValue == "GetConfiguredSSIDs")
        #expect(manager.Method.joinAccessory.inputSignature == "sa{sv}")
        #expect(manager.Method.joinAccessory.outputSignature == "a{sv}")
        #expect(manager.Method.reload.inputSignature.isEmpty && manager.Method.reload.outputSignature.isEmpty)
        #expect(manager.Property.version.signature == "s")
        // The agent emits a call's provisioning steps on either interface under one name.
        #expect(manager.Signal.provisioningProgress.name == session.Signal.provisioningProgress.name)
        #expect(manager.Signal.provisioningProgress.signature == session.Signal.provisioningProgress.signature)
    }

    @Test func everyPolkitActionIsInTheDocumentationsTable() throws {
        let interfaces = try Self.introspect()
        let text = try String(contentsOf: Self.documentation, encoding: .utf8)
        let actions = Set(interfaces.values.joined().flatMap(\.polkitActions))
        #expect(actions == Set(PolkitAction.allCases.map(\.rawValue)), "the interfaces name what the contract declares")
        for action in actions {
            #expect(text.contains("| `\(action)` |"), "the polkit table has no row for \(action)")
        }
    }

    @Test func everyEventTypeIsASessionSignal() throws {
        let signals = try Self.introspect()["io.accessorysetup.Session1", default: []].filter { $0.kind == .signal }
            .map(\.name)
        let events = AccessoryEventType.allCases.filter { $0 != .unknown }.map(\.signalName)
        // ProvisioningProgress reports a call's steps to its caller; it is no event of the session.
        #expect(signals.filter { $0 != "ProvisioningProgress" }.sorted() == events.sorted())
    }
}
