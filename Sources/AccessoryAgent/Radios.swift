import AccessoryCore
import AvahiBackend
import BlueZBackend
import FoundationEssentials
import NetworkManagerBackend
import ProvisioningCrypto
import ProvisioningHTTP

/// NetworkManager and BlueZ as the agent uses them: connected on first use and kept, so a
/// join or a picker does not pay for a new client; reconnected after a failure. The only part
/// of the agent that knows the backends: the rest sees `HotspotManaging` and `BluetoothManaging`.
actor Radios {
    private let busAddress: String?
    private var networkManager: NetworkManagerClient?
    private var bluez: BlueZClient?
    private var avahi: AvahiBrowser?
    /// The rescans while pickers discover over Wi-Fi: the hidden SSIDs each picker probes for
    /// (by a number of its discovery's own), and the one task that scans for all of them.
    private var rescanning: (probes: [Int: [SSID]], task: Task<Void, Never>)?
    /// The Wi-Fi discoveries started so far, numbering each.
    private var discoveries = 0
    /// How many scans probed for hidden SSIDs: each takes the next window of them.
    private var probeRounds = 0

    init(busAddress: String?) {
        self.busAddress = busAddress
    }

    func hotspots() async throws(HotspotError) -> any HotspotManaging {
        try await networkManagerClient()
    }

    /// The client itself, whose access-point watch (for discovery) has no core counterpart.
    private func networkManagerClient() async throws(HotspotError) -> NetworkManagerClient {
        if let networkManager { return networkManager }
        let client = try await NetworkManagerClient.connect(busAddress: busAddress)
        networkManager = client
        return client
    }

    func bluetooth() async throws(BluetoothError) -> any BluetoothManaging {
        try await bluezClient()
    }

    private func bluezClient() async throws(BluetoothError) -> BlueZClient {
        if let bluez { return bluez }
        let client = try await BlueZClient.connect(busAddress: busAddress)
        bluez = client
        return client
    }

    /// DNS-SD on the home network: Avahi, on the radios' bus.
    func homeServices() async throws(HomeServiceError) -> any HomeServiceBrowsing {
        if let avahi { return avahi }
        let browser = try await AvahiBrowser.connect(busAddress: busAddress)
        avahi = browser
        return browser
    }

    /// The IPv4 address of a profile's `HOST[:PORT]` SoftAP address; `nil` for a name or an
    /// IPv6 address.
    static func provisioningHost(_ address: String) -> IPv4Address? {
        HTTPProvisioningTransport.parseAddress(address).flatMap { IPv4Address($0.host) }
    }

    /// An ESP-IDF provisioning client for an accessory: over HTTP at `setup.address` on its
    /// hotspot, through `hotspotInterface` (the interface joined to it) alone, or over GATT at
    /// `bluetooth`; `close` ends the Bluetooth connection.
    func provisioningClient(
        _ setup: ProvisioningSetup, hotspotInterface: String?, bluetooth: MACAddress?
    ) async throws(ProvisioningError) -> (client: ProvisioningClient, close: @Sendable () async -> Void) {
        let crypto = try OpenSSLProvisioningCrypto()
        switch setup.transport {
        case .softAP:
            guard let (host, port) = HTTPProvisioningTransport.parseAddress(setup.address) else {
                throw .transport(endpoint: "connect", "the profile's address '\(setup.address)' is not HOST:PORT")
            }
            return (
                ProvisioningClient(
                    transport: HTTPProvisioningTransport(host: host, port: port, interface: hotspotInterface),
                    crypto: crypto), {}
            )
        case .bluetooth:
            guard let bluetooth else {
                throw .transport(endpoint: "connect", "the accessory has no Bluetooth address to provision it over")
            }
            let client: BlueZClient
            do {
                client = try await bluezClient()
            } catch {
                throw .transport(endpoint: "connect", error.description)
            }
            let transport = try await BlueZProvisioningTransport.open(bluetooth, client: client)
            return (ProvisioningClient(transport: transport, crypto: crypto), { await transport.close() })
        }
    }

    /// Forgets a client that failed, so the next use connects again.
    func reset(networkManager: Bool = false, bluetooth: Bool = false, homeServices: Bool = false) {
        if networkManager { self.networkManager = nil }
        if bluetooth { bluez = nil }
        if homeServices { avahi = nil }
    }

    /// Discovery for one picker: what Wi-Fi and Bluetooth LE hear, each time it changes, as the
    /// whole current picture; the Wi-Fi scans probe for the hidden networks `probing` names.
    /// Runs until the task is cancelled.
    func discover(
        _ descriptors: [DiscoveryDescriptor], probing: [SSID] = [],
        report: @escaping @Sendable (AccessorySession.Input) async -> Void
    ) async {
        let wifi = descriptors.contains(where: \.hasWiFiIdentifier)
        let bluetooth = descriptors.contains(where: \.hasBluetoothIdentifier)
        await withTaskGroup(of: Void.self) { group in
            if wifi { group.addTask { await self.discoverWiFi(probing: probing, report: report) } }
            if bluetooth {
                let bluetoothDescriptors = descriptors.filter(\.hasBluetoothIdentifier)
                group.addTask { await self.discoverBluetooth(bluetoothDescriptors, report: report) }
            }
        }
    }

    /// The pause between the end of one scan and the next request while a picker is open: a
    /// person is waiting for an accessory that has just been switched into setup mode, so the
    /// station scans nearly back to back, as `nmcli device wifi list --rescan yes` in a loop
    /// would, and only for as long as the picker is shown. (At 10 s, the lab's benchmark saw an
    /// access point reach the picker 20 s after it came up, 2.9 times nmcli's loop.)
    static let rescanInterval = Duration.seconds(1)

    private func discoverWiFi(
        probing: [SSID], report: @escaping @Sendable (AccessorySession.Input) async -> Void
    ) async {
        let client: NetworkManagerClient
        let watch: AccessPointWatch
        do {
            client = try await networkManagerClient()
            watch = try await client.watchAccessPoints(device: nil)
        } catch {
            Journal.warning("discovery: Wi-Fi is not available: \(error)")
            return
        }
        // An accessory back in setup mode under a new SSID keeps its BSSID, and NetworkManager
        // lists both names until the old one ages out (a minute or more). So what was heard is
        // kept by NetworkManager's id, and each radio is reported under the name it appeared
        // with last: its current one, which the old name's going must not take away.
        var heard: [String: (order: Int, entry: WiFiScanEntry)] = [:]
        var appearances = 0
        for (id, entry) in watch.listed.sorted(by: { Self.listingOrder($0.key) < Self.listingOrder($1.key) }) {
            appearances += 1
            heard[id] = (appearances, entry)
        }
        func snapshot() -> [WiFiScanEntry] {
            var latest: [MACAddress: (order: Int, entry: WiFiScanEntry)] = [:]
            for seen in heard.values where (latest[seen.entry.bssid]?.order ?? .min) < seen.order {
                latest[seen.entry.bssid] = seen
            }
            return latest.values.map(\.entry).sorted { $0.bssid < $1.bssid }
        }
        await report(.wifiScanned(snapshot()))
        discoveries += 1
        let discovery = discoveries
        startRescanning(client, discovery: discovery, probing: probing)
        defer { stopRescanning(discovery: discovery) }
        for await event in watch.events {
            switch event {
            case .appeared(let entry, let id):
                appearances += 1
                heard[id] = (appearances, entry)
                Journal.log(.debug, "discovery trace: \(entry.ssid.map { "\($0)" } ?? "a hidden network") heard")
            case .vanished(let id): heard[id] = nil
            }
            await report(.wifiScanned(snapshot()))
        }
    }

    /// Starts the rescans for one more picker: one schedule serves every open picker, so any
    /// number of them costs NetworkManager one scan request per interval, probing for the
    /// hidden SSIDs of all of them (in turns of `ScanProbe.limit` when they are more).
    private func startRescanning(_ client: any HotspotManaging, discovery: Int, probing: [SSID]) {
        if var current = rescanning {
            current.probes[discovery] = probing
            rescanning = current
            return
        }
        let task = Task {
            while !Task.isCancelled {
                let probe = self.nextProbe()
                _ = try? await client.accessPoints(device: nil, rescan: true, probing: probe)
                try? await Task.sleep(for: Self.rescanInterval)
            }
        }
        rescanning = ([discovery: probing], task)
    }

    /// The hidden SSIDs the next scan probes for: the open pickers', a window of them at a time.
    private func nextProbe() -> [SSID] {
        let all = ScanProbe.unique((rescanning?.probes ?? [:]).sorted { $0.key < $1.key }.flatMap(\.value))
        guard !all.isEmpty else { return [] }
        defer { probeRounds += 1 }
        return ScanProbe.window(of: all, round: probeRounds)
    }

    /// One picker fewer; the rescans stop with the last.
    private func stopRescanning(discovery: Int) {
        guard var current = rescanning else { return }
        current.probes[discovery] = nil
        if current.probes.isEmpty {
            current.task.cancel()
            rescanning = nil
        } else {
            rescanning = current
        }
    }

    /// NetworkManager numbers its access points' object paths in the order it made them.
    static func listingOrder(_ id: String) -> (Int, String) {
        (id.split(separator: "/").last.flatMap { Int($0) } ?? 0, id)
    }

    private func discoverBluetooth(
        _ descriptors: [DiscoveryDescriptor], report: @escaping @Sendable (AccessorySession.Input) async -> Void
    ) async {
        let events: AsyncStream<BLEDiscoveryEvent>
        do {
            events = try await bluetooth().discover(descriptors)
        } catch {
            Journal.warning("discovery: Bluetooth LE is not available: \(error)")
            return
        }
        var heard: [MACAddress: BLEAdvertisement] = [:]
        for await event in events {
            switch event {
            case .found(let advertisement), .updated(let advertisement): heard[advertisement.address] = advertisement
            case .lost(let address): heard[address] = nil
            }
            let snapshot = heard.values.sorted { $0.address < $1.address }
            await report(.bluetoothHeard(snapshot))
        }
    }
}
