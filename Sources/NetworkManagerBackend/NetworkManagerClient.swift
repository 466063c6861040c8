import AccessoryCore
import FoundationEssentials
import GLibRuntime

/// NetworkManager through libnm: Wi-Fi devices, access points, and joining, leaving and
/// forgetting accessory hotspots.
///
/// The actor runs on its own GLib thread, which owns the `NMClient` and every libnm object;
/// callers get value snapshots from `AccessoryCore` only.
public actor NetworkManagerClient: HotspotManaging {
    let executor: GLibMainContextExecutor
    /// The libnm objects, held apart so the deinit can hand them to the GLib thread whole.
    private let resources: Resources

    var client: GObjectRef { resources.client! }
    /// The profiles (by UUID) whose join is being ended: the clean-up of stale profiles leaves
    /// them alone, since their leave destroys the checkpoint only once the previous network is back.
    var ending: Set<String> = []
    /// Why the connections of the devices this client joined on last ended.
    var connectionEnds: ConnectionEnds { resources.connectionEnds! }

    /// Sendable only so the deinit can hand it over; it is used on the GLib thread alone.
    private final class Resources: @unchecked Sendable {
        var client: GObjectRef?
        var connectionEnds: ConnectionEnds? = ConnectionEnds()
        /// The connection to a bus given by address, which must be closed: a GDBus connection
        /// of its own is never freed (nor its socket closed) until it is.
        let privateBus: GObjectRef?

        init(client: GObjectRef, privateBus: GObjectRef?) {
            self.client = client
            self.privateBus = privateBus
        }
    }

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private init(executor: GLibMainContextExecutor, client: GObjectRef, privateBus: GObjectRef?) {
        self.executor = executor
        self.resources = Resources(client: client, privateBus: privateBus)
    }

    /// Connects to NetworkManager on the system bus (`DBUS_SYSTEM_BUS_ADDRESS` is honoured),
    /// or on the bus at `busAddress`.
    public static func connect(busAddress: String? = nil) async throws(HotspotError) -> NetworkManagerClient {
        let executor = GLibMainContextExecutor(name: "libnm")
        let result = await executor.run {
            Result { () throws(HotspotError) in try makeClient(busAddress: busAddress) }
        }
        switch result {
        case .success(let (client, bus)):
            return NetworkManagerClient(executor: executor, client: client, privateBus: bus)
        case .failure(let error):
            executor.shutdown()
            throw error
        }
    }

    /// Runs on the GLib thread, so the `NMClient` binds to its main context.
    private static func makeClient(busAddress: String?) throws(HotspotError) -> (GObjectRef, GObjectRef?) {
        var bus: GObjectRef?
        do throws(GLibError) {
            if let busAddress { bus = try GDBusConnection.open(address: busAddress) }
            let client = try LibNM.newClient(bus: bus)
            guard LibNM.isRunning(client.pointer) else {
                throw GLibError(
                    domain: "accessory-setup", code: 0, message: "org.freedesktop.NetworkManager is not on the bus")
            }
            return (client, bus)
        } catch {
            bus.map(GDBusConnection.close)
            throw .networkManagerUnavailable(error.message)
        }
    }

    deinit {
        // The libnm objects are released on their own thread, and their context iterated
        // until libnm has finished with it (its busy watcher is gone; stopping earlier leaks
        // the context and what hangs on it). Then the private bus is closed and the thread ends.
        let held = self.resources
        let executor = self.executor
        executor.invoke {
            let released = WeakReference(LibNM.contextBusyWatcher(of: held.client!.pointer))
            held.connectionEnds = nil
            held.client = nil
            iterateThreadDefaultContext(for: .seconds(2)) { released.isGone }
            held.privateBus.map(GDBusConnection.close)
        }
        if !executor.isOnContextThread { executor.shutdown() }
    }

    // MARK: Devices and access points

    public func wifiDevices() throws(HotspotError) -> [WiFiDevice] {
        wifiDevicePointers().map(LibNM.wifiDevice)
    }

    public func ipv4Subnets(device name: String) throws(HotspotError) -> [IPv4Subnet] {
        LibNM.ipv4Subnets(of: try wifiDevice(named: name).pointer)
    }

    public func disconnectReason(device name: String) -> String? {
        connectionEnds.reasons[name]?.name
    }

    public func accessPoints(device name: String?, rescan: Bool, probing: [SSID]) async throws(HotspotError)
        -> [WiFiScanEntry]
    {
        let device = try wifiDevice(named: name)
        if rescan { try await scan(device, ssids: Array(ScanProbe.unique(probing).prefix(ScanProbe.limit))) }
        return LibNM.accessPoints(of: device.pointer).compactMap(LibNM.scanEntry)
    }

    /// The access points NetworkManager lists on a device now, and those appearing and vanishing
    /// from then on, as it reports them.
    public func watchAccessPoints(device name: String?) throws(HotspotError) -> AccessPointWatch {
        let device = try wifiDevice(named: name)
        let (stream, continuation) = AsyncStream.makeStream(of: AccessPointEvent.self)
        let added = device.connect("access-point-added") { ap in
            if let ap, let entry = LibNM.scanEntry(ap) { continuation.yield(.appeared(entry, id: LibNM.path(ap))) }
        }
        let removed = device.connect("access-point-removed") { ap in
            if let ap { continuation.yield(.vanished(id: LibNM.path(ap))) }
        }
        let connections = UncheckedSendable([added, removed])
        let executor = self.executor
        continuation.onTermination = { _ in executor.invoke { connections.value.forEach { $0.disconnect() } } }
        // Listed after connecting, on this thread: no access point is missed or told twice.
        var listed: [String: WiFiScanEntry] = [:]
        for ap in LibNM.accessPoints(of: device.pointer) {
            if let entry = LibNM.scanEntry(ap) { listed[LibNM.path(ap)] = entry }
        }
        return AccessPointWatch(listed: listed, events: stream)
    }

    func wifiDevicePointers() -> [OpaquePointer] {
        LibNM.wifiDevices(of: client.pointer)
    }

    func wifiDevice(named name: String?) throws(HotspotError) -> GObjectRef {
        guard LibNM.isWirelessEnabled(client.pointer) else { throw .wifiDisabled }
        let devices = wifiDevicePointers()
        let device = name.map { name in devices.first { LibNM.interface($0) == name } } ?? devices.first
        guard let device else { throw .noWiFiDevice(name) }
        return GObjectRef(retaining: device)
    }

    /// Asks for a scan (probing for `ssids`, which finds hidden networks) and waits until
    /// NetworkManager reports it done through `LastScan`.
    func scan(_ device: GObjectRef, ssids: [SSID], timeout: Duration = .seconds(15)) async throws(HotspotError) {
        let before = LibNM.lastScan(of: device.pointer)
        var timeout = timeout
        do throws(HotspotError) {
            try await LibNM.requestScan(device, ssids: ssids)
        } catch {
            if case .notAuthorized = error { throw error }
            if case .cancelled = error { throw error }
            // NetworkManager refuses a scan while one runs (its results are as good, so wait
            // for them) and right after one (then nothing comes, so do not wait long).
            timeout = min(timeout, .seconds(5))
        }
        // The scan may have finished while the request's reply was on its way.
        guard LibNM.lastScan(of: device.pointer) == before else { return }
        _ = await waitForSignal(timeout: timeout) { fire in
            [
                device.connect("notify::last-scan") { _ in
                    if LibNM.lastScan(of: device.pointer) != before { fire(true) }
                }
            ]
        }
    }
}

/// An access point coming into or going out of range.
///
/// `id` names one access point for as long as NetworkManager lists it. A BSSID does not: a radio
/// can be listed under two SSIDs at once, as an accessory is that came back in setup mode under
/// a new name while its old one has not yet aged out of the scan results.
public enum AccessPointEvent: Hashable, Sendable {
    case appeared(WiFiScanEntry, id: String)
    case vanished(id: String)
}

/// What `watchAccessPoints` returns: the access points listed when the watch began, by id, and
/// the events that follow.
public struct AccessPointWatch: Sendable {
    public var listed: [String: WiFiScanEntry]
    public var events: AsyncStream<AccessPointEvent>
}
