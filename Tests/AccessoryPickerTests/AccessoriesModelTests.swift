import AccessorySetupKit
import AgentInterface
import DBusValues
import Foundation
import GLibRuntime
import Testing

@testable import AccessoryPicker

private func accessory(
    _ name: String, id: String? = nil, application: String? = nil, ssid: String? = "Acme-Setup-1",
    bluetooth: String? = nil, state: String = "authorized", location: [(String, DBusValue)]? = nil,
    network: [(String, DBusValue)]? = nil
) -> AccessoryDetails {
    var fields: [(String, DBusValue)] = [
        ("id", .string(id ?? name)), ("displayName", .string(name)), ("state", .string(state)),
        ("profile", .string("com.example.acme")),
    ]
    if let application { fields.append(("application", .string(application))) }
    if let ssid { fields.append(("ssid", .string(ssid))) }
    if let bluetooth { fields.append(("bluetoothIdentifier", .string(bluetooth))) }
    if let location { fields.append(("location", dictionary(location))) }
    if let network { fields.append(("network", dictionary(network))) }
    return AccessoryDetails(dictionary(fields))!
}

/// An `a{sv}` as it comes off the bus, the variants unwrapped.
private func dictionary(_ fields: [(String, DBusValue)]) -> DBusValue {
    .dictionary(fields.map { DBusValue.Entry(key: .string($0.0), value: $0.1) }, entryType: "{sv}")
}

private func location(service: String = "_http._tcp", addresses: [String], port: UInt16 = 80) -> [(String, DBusValue)] {
    [
        ("service", .string(service)), ("instance", .string("plug")), ("hostname", .string("plug.local")),
        ("addresses", .array(addresses.map(DBusValue.string), elementType: "s")), ("port", .uint16(port)),
    ]
}

@Suite("The Accessories window's model")
struct AccessoriesModelTests {
    @Test("accessories group by application, named by their desktop files, by title; host programs last")
    func grouping() {
        let records = [
            accessory("Zeta plug", application: "org.example.Zeta"),
            accessory("Lamp"),
            accessory("Kitchen plug", application: "org.example.AcmePlug"),
            accessory("bedroom plug", application: "org.example.AcmePlug"),
            accessory("Unnamed app's plug", application: "org.example.NoDesktop"),
        ]
        let applications = [
            "org.example.AcmePlug": DesktopApplication(id: "org.example.AcmePlug", name: "Acme Plug", icon: "acme"),
            "org.example.Zeta": DesktopApplication(id: "org.example.Zeta", name: "Beta Tool"),
        ]
        let groups = AccessoryGroup.grouping(records, applications: applications)
        #expect(
            groups.map(\.title) == ["Acme Plug", "Beta Tool", "org.example.NoDesktop", "Programs on this computer"])
        #expect(
            groups.map(\.application) == ["org.example.AcmePlug", "org.example.Zeta", "org.example.NoDesktop", nil])
        #expect(groups[0].icon == "acme")
        #expect(groups[0].accessories.map(\.displayName) == ["bedroom plug", "Kitchen plug"])
        #expect(groups[3].accessories.map(\.displayName) == ["Lamp"])
        #expect(AccessoryGroup.grouping([], applications: [:]).isEmpty)
    }

    @Test("Remove Access says how many accessories go")
    func removeAccessBody() {
        let one = AccessoryGroup(application: "a.b.C", title: "Acme Plug", accessories: [accessory("Plug")])
        #expect(one.removeAccessBody.hasPrefix("Acme Plug forgets its accessory,"))
        var two = one
        two.accessories.append(accessory("Other"))
        #expect(two.removeAccessBody.hasPrefix("Acme Plug forgets its 2 accessories,"))
    }

    @Test("a row says the transport, the state and where the accessory is on the home network")
    func labels() {
        let plug = accessory("Plug", location: location(addresses: ["192.168.1.42"]))
        #expect(plug.summary == "Wi-Fi · Set up · at 192.168.1.42 (plug.local)")
        #expect(plug.webPage == URL(string: "http://192.168.1.42"))
        let waiting = accessory("Lamp", ssid: nil, bluetooth: "AA:BB:CC:DD:EE:FF", state: "awaitingAuthorization")
        #expect(waiting.summary == "Bluetooth · Waiting for its application")
        #expect(waiting.isBluetoothOnly)
        #expect(waiting.webPage == nil)
        let both = accessory("Camera", bluetooth: "AA:BB:CC:DD:EE:FF", state: "unauthorized")
        #expect(both.summary == "Wi-Fi and Bluetooth · Not authorized")
        let joined = accessory("Sensor", network: [("ssid", .string("HomeNet")), ("ipv4Address", .string("10.0.0.7"))])
        #expect(joined.locationText == "10.0.0.7")
        let other = accessory("Bulb", location: location(service: "_hap._tcp", addresses: ["fe80::1"], port: 8080))
        #expect(other.webPage == nil)
        let web = accessory("Bulb", location: location(addresses: ["fe80::1"], port: 8080))
        #expect(web.webPage == URL(string: "http://[fe80::1]:8080"))
    }

    @Test("what the window shows: the list, the empty page, or the agent's refusal")
    func content() {
        let group = AccessoryGroup(application: nil, title: "Programs on this computer", accessories: [accessory("P")])
        #expect(AccessoriesContent([], configurations: []) == .empty)
        #expect(AccessoriesContent([], configurations: ["App-Net"]) == .list([], configurations: ["App-Net"]))
        #expect(AccessoriesContent([group], configurations: []) == .list([group], configurations: []))
        let missing = AgentCallError(name: "org.freedesktop.DBus.Error.ServiceUnknown", message: "not running")
        #expect(AccessoriesContent(missing) == .noAgent("not running"))
        let refused = AgentCallError(name: "io.accessorysetup.Error.NotAuthorized", message: "refused")
        #expect(AccessoriesContent(refused) == .notAllowed("refused"))
        #expect(AccessoriesContent(AgentCallError(name: nil, message: "odd")) == .failed("odd"))
    }
}
