import AccessoryCore
import AgentInterface
import DBusValues
import Testing

@Suite("The replies and dictionaries the agent writes and its clients read")
struct RepliesTests {
    @Test func aJoinReplyIsWrittenInItsWireOrderAndReadBack() {
        let reply = JoinReply(
            device: "wlan0", ssid: "Acme-Setup", connection: "Accessory Acme-Setup", connectionUUID: "u-1",
            bssid: "02:00:00:00:00:10", ipv4Address: "192.168.4.2", previousConnection: "HomeNet",
            restoreDeadline: 1_796_620_000, alreadyJoined: true)
        let wire = reply.dbusValue
        #expect(
            wire.entries.map(\.key)
                == [
                    "device", "ssid", "connection", "connectionUUID", "bssid", "ipv4Address", "previousConnection",
                    "restoreDeadline", "alreadyJoined",
                ].map(DBusValue.string))
        #expect(wire["restoreDeadline"] == .variant(.init(.uint64(1_796_620_000))))
        #expect(JoinReply(wire) == reply)
    }

    /// What a client reads of an agent that sends less, or a value of another type.
    @Test func aJoinReplyReadsWhatIsMissingAsNothing() {
        let sparse = JoinReply(.vardict([("device", .string("wlan0")), ("ssid", .uint32(7))]))
        #expect(sparse.device == "wlan0")
        #expect(sparse.ssid == nil)
        #expect(sparse.restoreDeadline == nil && !sparse.alreadyJoined)
        #expect(JoinReply(nil) == JoinReply(device: nil, ssid: nil, connection: nil, connectionUUID: nil))
        #expect(JoinReply(nil).dbusValue == .vardict([]))
    }

    @Test func aProvisioningReplyOfEachProtocolIsWrittenWithItsFieldsAloneAndReadBack() {
        let espIDF = ProvisioningReply(
            ssid: "HomeNet", provisioningProtocol: "espIDF", version: "v1.1", security: 2, ipv4Address: "10.0.0.7",
            channel: 6, seekSeconds: 120)
        let wire = espIDF.dbusValue
        #expect(
            wire.entries.map(\.key)
                == ["ssid", "protocol", "version", "security", "ipv4Address", "channel", "seekSeconds"]
                .map(DBusValue.string))
        #expect(wire["security"] == .variant(.init(.uint32(2))) && wire["channel"] == .variant(.init(.int32(6))))
        #expect(ProvisioningReply(wire) == espIDF)
        let http = ProvisioningReply(
            ssid: "HomeNet", provisioningProtocol: "http", confirmed: false, macAddress: "AA:BB:CC:DD:EE:01")
        #expect(
            http.dbusValue.entries.map(\.key) == ["ssid", "protocol", "confirmed", "macAddress"].map(DBusValue.string))
        #expect(ProvisioningReply(http.dbusValue) == http)
        #expect(ProvisioningReply(http.dbusValue).confirmed == false, "an unconfirmed join is said, not left out")
        let improv = ProvisioningReply(provisioningProtocol: "improvWiFi", url: "http://10.0.0.9/")
        #expect(ProvisioningReply(improv.dbusValue) == improv)
        #expect(ProvisioningReply(nil).provisioningProtocol == nil && ProvisioningReply(nil).confirmed == nil)
    }

    @Test func aLeaveReplyAlwaysSaysWhetherItDeletedAndWhetherTheJoinHadEnded() {
        let reply = LeaveReply(
            device: "wlan0", ssid: nil, deleted: true, alreadyEnded: false, restored: "HomeNet", notRestored: nil)
        let wire = reply.dbusValue
        #expect(wire.entries.map(\.key) == ["device", "deleted", "alreadyEnded", "restored"].map(DBusValue.string))
        #expect(LeaveReply(wire) == reply)
        #expect(LeaveReply(.vardict([])).deleted == false)
    }

    @Test func anErrorIsWrittenWithItsNameCodeMessageAndFieldAndReadBack() {
        let error = AccessorySessionError.discoveryTimeout
        let reply = ErrorReply(error)
        #expect(reply.name == error.dbusName && reply.code == Int32(error.code.rawValue))
        #expect(
            reply.dbusValue.entries.map(\.key)
                == (error.field == nil ? ["name", "code", "message"] : ["name", "code", "message", "field"]).map(
                    DBusValue.string))
        #expect(ErrorReply(reply.dbusValue) == reply)
        #expect(ErrorReply(BusCoding.error(nil)) == nil, "the empty dictionary is no error")
        #expect(ErrorReply(.vardict([("name", .string("x.Y"))])) == ErrorReply(name: "x.Y", code: nil, message: "x.Y"))
    }
}
