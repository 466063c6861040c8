import AccessoryCore
import Foundation
import ServiceHarness
import Testing

@testable import BlueZBackend

/// Adapters and LE discovery against python-dbusmock's BlueZ on a private bus.
@Suite(.serialized) final class MockBlueZDiscoveryTests {
    let mock: BlueZMock

    init() throws {
        mock = try BlueZMock()
    }

    deinit { mock.stop() }

    static let improvService = "00467768-6228-2272-4663-277478268000"

    @Test func noAdapter() async throws {
        let client = try await BlueZClient.connect(busAddress: mock.bus.address)
        #expect(await client.adapters().isEmpty)
        await #expect(throws: BluetoothError.noAdapter(nil)) { _ = try await client.discover() }
    }

    @Test func adapterPoweredOffOrBlocked() async throws {
        try mock.addAdapter()
        try mock.setAdapterPower(powered: false, powerState: "off")
        let client = try await BlueZClient.connect(busAddress: mock.bus.address)
        #expect(await client.adapters().map(\.powered) == [false])
        await #expect(throws: BluetoothError.adapterPoweredOff("hci0")) { _ = try await client.discover() }
        try mock.setAdapterPower(powered: false, powerState: "off-blocked")
        try await Task.sleep(for: .milliseconds(200))
        await #expect(throws: BluetoothError.adapterBlocked("hci0")) { _ = try await client.discover() }
        await #expect(throws: BluetoothError.noAdapter("hci7")) { _ = try await client.discover(adapter: "hci7") }
        #expect(try mock.adapterLog().calls.isEmpty, "nothing was started on an adapter that is off")
    }

    @Test func noBlueZOnTheBus() async throws {
        let bus = try PrivateSystemBus()
        await #expect {
            _ = try await BlueZClient.connect(busAddress: bus.address)
        } throws: { error in
            guard case BluetoothError.bluezUnavailable = error else { return false }
            return true
        }
    }

    @Test func discoveryFilterIsBuiltFromTheDescriptorsAndDiscoveryStops() async throws {
        try mock.addAdapter()
        let client = try await BlueZClient.connect(busAddress: mock.bus.address)
        var improv = DiscoveryDescriptor()
        improv.bluetoothServiceUUID = try BluetoothUUID(Self.improvService)
        improv.bluetoothRange = .immediate
        var heart = DiscoveryDescriptor()
        heart.bluetoothServiceUUID = BluetoothUUID(assigned: 0x180D)
        heart.bluetoothRange = .immediate
        let stream = try await client.discover([improv, heart])
        #expect(await client.adapters().first?.discovering == true)
        await client.stopDiscovery()
        var ended = stream.makeAsyncIterator()
        #expect(await ended.next() == nil, "stopping ends the stream")

        var company = DiscoveryDescriptor()
        company.bluetoothCompanyIdentifier = BluetoothCompanyIdentifier(rawValue: 0x0BA9)
        _ = try await client.discover([improv, company])
        await client.stopDiscovery()

        let log = try mock.adapterLog()
        #expect(
            log.calls == [
                "SetDiscoveryFilter", "StartDiscovery", "StopDiscovery", "SetDiscoveryFilter", "StartDiscovery",
                "StopDiscovery",
            ])
        #expect(
            log.filters == [
                // No UUID filter: BlueZ would drop an advertisement carrying the UUID as service
                // data alone. An RSSI floor when every descriptor wants immediate range.
                .init(UUIDs: nil, Transport: "le", RSSI: BluetoothRange.immediateRSSIThreshold),
                .init(UUIDs: nil, Transport: "le", RSSI: nil),
            ])
    }

    @Test func endingTheStreamStopsDiscovery() async throws {
        try mock.addAdapter()
        let client = try await BlueZClient.connect(busAddress: mock.bus.address)
        do {
            let stream = try await client.discover()
            _ = stream
        }
        // The stream is gone; its termination stops discovery.
        _ = try await poll(timeout: .seconds(1)) { try mock.adapterLog().calls.last == "StopDiscovery" ? true : nil }
        #expect(try mock.adapterLog().calls == ["SetDiscoveryFilter", "StartDiscovery", "StopDiscovery"])
    }

    @Test func advertisementsWithTheirDataReachTheStream() async throws {
        try mock.addAdapter()
        let client = try await BlueZClient.connect(busAddress: mock.bus.address)
        let iterator = EventCollector(try await client.discover())
        let path = try mock.addDevice(
            "A4:C1:38:00:11:22", addressType: "random", name: "Shelly BLU", rssi: -48, uuids: ["fcd2"],
            manufacturerData: [0x0BA9: [0x01, 0x02, 0x03]],
            serviceData: ["0000fcd2-0000-1000-8000-00805f9b34fb": [0x40, 0x00, 0x2A]])
        let found = await iterator.next()
        let expected = BLEAdvertisement(
            address: try MACAddress("A4:C1:38:00:11:22"), addressType: .random, name: "Shelly BLU", rssi: -48,
            txPower: 4,
            serviceUUIDs: [BluetoothUUID(assigned: 0xFCD2)],
            manufacturerData: [BluetoothCompanyIdentifier(rawValue: 0x0BA9): [1, 2, 3]],
            serviceData: [BluetoothUUID(assigned: 0xFCD2): [0x40, 0x00, 0x2A]])
        #expect(found == .found(expected))

        try mock.updateAdvertisement(path, rssi: -70, manufacturerData: [0x0BA9: [9]])
        var updated = expected
        updated.rssi = -70
        updated.manufacturerData = [BluetoothCompanyIdentifier(rawValue: 0x0BA9): [9]]
        updated.serviceData = [:]
        #expect(await iterator.next() == .updated(updated))

        try mock.removeDevice(path)
        #expect(await iterator.next() == .lost(try MACAddress("A4:C1:38:00:11:22")))
        await client.stopDiscovery()
    }

    @Test func everyAdvertisementIsRecheckedAgainstTheDescriptors() async throws {
        try mock.addAdapter()
        // Heard before the discovery started: BlueZ already holds it.
        try mock.addImprovDevice("24:0A:C4:00:00:01", name: "Plug")
        let client = try await BlueZClient.connect(busAddress: mock.bus.address)
        var descriptor = DiscoveryDescriptor()
        descriptor.bluetoothServiceUUID = try BluetoothUUID(Self.improvService)
        descriptor.bluetoothNameSubstring = "Plug"
        let iterator = EventCollector(try await client.discover([descriptor]))
        guard case .found(let first)? = await iterator.next() else {
            Issue.record("the Improv device already known was not reported")
            return
        }
        #expect(first.name == "Plug")
        #expect(ImprovAdvertisement(first)?.state == .authorized)
        #expect(ImprovAdvertisement(first)?.capabilities == [.identify, .deviceInfo, .scanWiFi])
        // Another client's filter lets these through BlueZ; the matcher drops them.
        try mock.addDevice("02:00:00:00:00:01", name: "Plug", uuids: ["180d"])
        try mock.addImprovDevice("24:0A:C4:00:00:02", name: "Lamp")
        try mock.addImprovDevice("24:0A:C4:00:00:03", name: "Plug 2")
        guard case .found(let second)? = await iterator.next() else {
            Issue.record("the second matching device was not reported")
            return
        }
        #expect(second.address == (try MACAddress("24:0A:C4:00:00:03")))
        #expect(await iterator.next(timeout: .milliseconds(300)) == nil)
        await client.stopDiscovery()
    }
}

/// Collects a stream's elements in the background; `next` waits for the following one.
final class EventCollector<Element: Sendable>: Sendable {
    private final class Store: Sendable {
        let events = Locked<[Element]>([])
    }
    private let store = Store()
    private let consumed = Locked(0)
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<Element>) {
        let store = self.store
        task = Task { for await event in stream { store.events.withLock { $0.append(event) } } }
    }

    deinit { task.cancel() }

    /// The next element, or `nil` when none comes within `timeout`.
    func next(timeout: Duration = .seconds(30)) async -> Element? {
        let next = try? await poll(timeout: timeout, every: .milliseconds(10)) {
            let index = consumed.withLock { $0 }
            return store.events.withLock { index < $0.count ? $0[index] : nil }
        }
        guard let event = next else { return nil }
        consumed.withLock { $0 += 1 }
        return event
    }
}

/// A client made for a bus address closes its connection and ends its thread when released.
@Suite(.serialized) struct BlueZClientLifetimeTests {
    @Test func releasingClientsLeaksNoFileDescriptors() async throws {
        let mock = try BlueZMock()
        try mock.addAdapter()
        func openDescriptors() -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
        }
        _ = try await BlueZClient.connect(busAddress: mock.bus.address).adapters()
        let before = openDescriptors()
        for _ in 0..<60 {
            let client = try await BlueZClient.connect(busAddress: mock.bus.address)
            #expect(await client.adapters().count == 1)
        }
        // Other tests run alongside and hold descriptors of their own for a while; one leaked per
        // client would be 60.
        #expect(openDescriptors() <= before + 20, "before: \(before), after: \(openDescriptors())")
    }
}
