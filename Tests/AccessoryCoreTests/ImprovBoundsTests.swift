import AccessoryCore
import Testing

/// What an Improv device can make the client hold while it waits on it: values no larger than
/// GATT allows, and a bounded number of notifications in one wait (`ImprovExchange`).
@Suite struct ImprovBoundsTests {
    /// A valid result frame for `command` carrying `strings`.
    static func resultFrame(_ command: ImprovCommand, _ strings: [String]) -> [UInt8] {
        let data = strings.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
        let body = [command.rawValue, UInt8(data.count)] + data
        return body + [Improv.checksum(body)]
    }

    /// A frame followed by more than a GATT value holds is no value a device can send.
    @Test func aResultValueLargerThanGATTAllowsIsRefused() {
        var assembler = ImprovResultAssembler()
        let chunk = Self.resultFrame(.deviceInfo, ["a", "b", "c", "d"]) + [UInt8](repeating: 0, count: 600)
        do throws(ImprovError) {
            let result = try assembler.append(chunk)
            Issue.record("accepted: \(String(describing: result))")
        } catch {
            guard case .malformedResponse = error else {
                Issue.record("\(error)")
                return
            }
        }
    }

    @Test func aResultInPiecesSettlesTheRPC() throws {
        var exchange = ImprovExchange()
        exchange.start(.deviceInfo)
        let frame = Self.resultFrame(.deviceInfo, ["fw", "1.0", "ESP32", "plug"])
        exchange.receive(Array(frame.prefix(5)), from: .result)
        let early = exchange.settle(nil)
        #expect(!early)
        exchange.receive(Array(frame.dropFirst(5)), from: .result)
        let settled = exchange.settle(nil)
        #expect(settled)
        #expect(try exchange.outcome?.get().texts == ["fw", "1.0", "ESP32", "plug"])
    }

    @Test func anErrorStateForTheCommandFailsIt() {
        var exchange = ImprovExchange()
        exchange.start(.sendWiFiSettings)
        exchange.receive([0x03], from: .error)
        #expect(exchange.errorNotified)
        let settled = exchange.settle(nil)
        #expect(settled)
        guard case .failure = exchange.outcome else {
            Issue.record("\(String(describing: exchange.outcome))")
            return
        }
    }

    /// A device that notifies without end fails the wait instead of filling the client.
    @Test func moreNotificationsThanTheLimitFailTheRPC() {
        var exchange = ImprovExchange()
        exchange.start(.sendWiFiSettings)
        for _ in 0..<(ImprovExchange.notificationLimit * 4) {
            exchange.receive([ImprovState.provisioning.rawValue], from: .state)
        }
        let settled = exchange.settle(nil)
        #expect(settled)
        guard case .failure(.malformedResponse(let reason)) = exchange.outcome else {
            Issue.record("\(String(describing: exchange.outcome))")
            return
        }
        #expect(reason.contains("\(ImprovExchange.notificationLimit)"), "\(reason)")
    }

    @Test func aNotifiedValueLargerThanGATTAllowsFailsTheRPC() {
        var exchange = ImprovExchange()
        exchange.start(.deviceInfo)
        exchange.receive([UInt8](repeating: 1, count: ImprovExchange.valueBytes + 1), from: .state)
        let settled = exchange.settle(nil)
        #expect(settled)
        guard case .failure(.malformedResponse) = exchange.outcome else {
            Issue.record("\(String(describing: exchange.outcome))")
            return
        }
    }

    /// The authorization wait, before any RPC, sees the device leave `authorizationRequired`.
    @Test func authorizationIsSeenBeforeAnyRPC() {
        var exchange = ImprovExchange()
        exchange.receive([ImprovState.authorizationRequired.rawValue], from: .state)
        #expect(!exchange.authorized)
        exchange.receive([ImprovState.authorized.rawValue], from: .state)
        #expect(exchange.authorized)
    }
}
