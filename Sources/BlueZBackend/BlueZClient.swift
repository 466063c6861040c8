import AccessoryCore
import CGLib
import DBusValues
import FoundationEssentials
import GLibRuntime

/// BlueZ over GDBus: adapters, LE discovery, GATT and Improv Wi-Fi.
///
/// The actor runs on its own GLib thread, which owns the D-Bus connection and receives its
/// signals. It mirrors BlueZ's object tree (`GetManagedObjects`, then `InterfacesAdded`,
/// `InterfacesRemoved` and `PropertiesChanged`) and hands out `AccessoryCore` values only.
public actor BlueZClient {
    let executor: GLibMainContextExecutor
    let connection: GObjectRef
    /// Object path → interface → property → value.
    var objects: [String: [String: [String: DBusValue]]] = [:]
    var subscriptions: [GDBusConnection.Subscription] = []
    var observers: [UInt64: (isolated BlueZClient, ObjectChange) -> Void] = [:]
    var waiters: [UInt64: Waiter] = [:]
    var discoveries: [UInt64: Discovery] = [:]
    /// Characteristic path → its notification streams.
    var notifying: [String: [(observer: UInt64, continuation: AsyncStream<[UInt8]>.Continuation)]] = [:]
    var improvInboxes: [UInt64: ImprovExchange] = [:]
    /// The state values a hotspot handoff was notified of, by handoff.
    var handoffReports: [UInt64: [[UInt8]]] = [:]
    var nextID: UInt64 = 0
    /// How long one D-Bus call may take.
    public var callTimeout: Duration = .seconds(25)

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    static let adapterInterface = "org.bluez.Adapter1"
    static let deviceInterface = "org.bluez.Device1"
    static let serviceInterface = "org.bluez.GattService1"
    static let characteristicInterface = "org.bluez.GattCharacteristic1"
    static let descriptorInterface = "org.bluez.GattDescriptor1"
    /// Notified values of one characteristic held for a reader that has not read them yet (the
    /// newest kept), and state values one hotspot handoff keeps.
    static let notificationsBuffered = 64

    /// Whether `connection` is this client's own (made for a bus address), to close at the end.
    private let ownsConnection: Bool

    private init(executor: GLibMainContextExecutor, connection: GObjectRef, ownsConnection: Bool) {
        self.executor = executor
        self.connection = connection
        self.ownsConnection = ownsConnection
    }

    /// Connects to BlueZ on the system bus (`DBUS_SYSTEM_BUS_ADDRESS` is honoured), or on the
    /// bus at `busAddress`, and reads its objects.
    public static func connect(busAddress: String? = nil) async throws(BluetoothError) -> BlueZClient {
        let executor = GLibMainContextExecutor(name: "bluez")
        let result = await executor.run {
            Result { () throws(GLibError) in try GDBus.connect(address: busAddress) }
        }
        let connection: GObjectRef
        switch result {
        case .success(let value): connection = value
        case .failure(let error):
            executor.shutdown()
            throw .bluezUnavailable(error.message)
        }
        let client = BlueZClient(executor: executor, connection: connection, ownsConnection: busAddress != nil)
        try await client.start()
        return client
    }

    deinit {
        let state = UncheckedSendable((connection, subscriptions, ownsConnection))
        let executor = self.executor
        executor.invoke {
            let (connection, subscriptions, owned) = state.value
            subscriptions.forEach { $0.cancel() }
            if owned { GDBusConnection.close(connection) }
        }
        if !executor.isOnContextThread { executor.shutdown() }
    }

    /// Subscribes first, then reads the tree, so no change falls between the two.
    private func start() async throws(BluetoothError) {
        subscriptions = [
            GDBus.subscribe(connection, interface: "org.freedesktop.DBus.ObjectManager", member: nil) {
                [weak self] path, member, arguments in
                self?.assumeIsolated { $0.objectManagerSignal(member, arguments) }
            },
            GDBus.subscribe(connection, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged") {
                [weak self] path, _, arguments in
                self?.assumeIsolated { $0.propertiesChanged(path, arguments) }
            },
        ]
        let reply: DBusValue
        do {
            reply = try await GDBus.call(
                connection, path: "/", interface: "org.freedesktop.DBus.ObjectManager", method: "GetManagedObjects",
                timeout: .seconds(10))
        } catch {
            throw BlueZError.map(error, unavailable: true)
        }
        for entry in reply.elements.first?.entries ?? [] {
            guard let path = entry.key.string else { continue }
            objects[path] = Self.interfaces(entry.value)
        }
    }

    // MARK: The mirrored object tree

    /// A change to the tree, for observers.
    enum ObjectChange {
        case added(path: String, interfaces: [String])
        case changed(path: String, interface: String, properties: [String: DBusValue])
        case removed(path: String, interfaces: [String])
    }

    private static func interfaces(_ value: DBusValue) -> [String: [String: DBusValue]] {
        var result: [String: [String: DBusValue]] = [:]
        for interface in value.entries {
            guard let name = interface.key.string else { continue }
            result[name] = properties(interface.value)
        }
        return result
    }

    static func properties(_ value: DBusValue) -> [String: DBusValue] {
        var result: [String: DBusValue] = [:]
        for entry in value.entries {
            if let key = entry.key.string { result[key] = entry.value }
        }
        return result
    }

    private func objectManagerSignal(_ member: String, _ arguments: DBusValue) {
        let values = arguments.elements
        guard values.count == 2, let path = values[0].string else { return }
        switch member {
        case "InterfacesAdded":
            let added = Self.interfaces(values[1])
            objects[path, default: [:]].merge(added) { $1 }
            notify(.added(path: path, interfaces: Array(added.keys)))
        case "InterfacesRemoved":
            let removed = values[1].elements.compactMap(\.string)
            for interface in removed { objects[path]?[interface] = nil }
            if objects[path]?.isEmpty == true { objects[path] = nil }
            notify(.removed(path: path, interfaces: removed))
        default:
            break
        }
    }

    private func propertiesChanged(_ path: String, _ arguments: DBusValue) {
        let values = arguments.elements
        guard values.count == 3, let interface = values[0].string, objects[path] != nil else { return }
        let changed = Self.properties(values[1])
        objects[path]?[interface, default: [:]].merge(changed) { $1 }
        for name in values[2].elements.compactMap(\.string) { objects[path]?[interface]?[name] = nil }
        notify(.changed(path: path, interface: interface, properties: changed))
    }

    private func notify(_ change: ObjectChange) {
        for observer in observers.values { observer(self, change) }
        checkWaiters()
    }

    func observe(_ observer: @escaping (isolated BlueZClient, ObjectChange) -> Void) -> UInt64 {
        nextID += 1
        observers[nextID] = observer
        return nextID
    }

    func property(_ path: String, _ interface: String, _ name: String) -> DBusValue? {
        objects[path]?[interface]?[name]
    }

    /// Paths holding `interface`, sorted.
    func paths(with interface: String) -> [String] {
        objects.filter { $0.value[interface] != nil }.keys.sorted()
    }

    // MARK: Waiting for the tree to change

    struct Waiter {
        var condition: () -> Bool
        var continuation: CheckedContinuation<Bool, Never>
        var timer: Task<Void, Never>?
    }

    /// Waits until `condition` holds after some change, or `timeout` passes (`false`); a
    /// cancelled task ends the wait with `cancelled`, never taken for a timeout.
    func wait(timeout: Duration, until condition: @escaping () -> Bool) async throws(BluetoothError) -> Bool {
        if condition() { return true }
        if Task.isCancelled { throw .cancelled }
        nextID += 1
        let id = nextID
        let held = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                waiters[id] = Waiter(condition: condition, continuation: continuation)
                waiters[id]?.timer = Task { [weak self] in
                    try? await Task.sleep(for: min(timeout, .longestWait))
                    await self?.endWait(id, false)
                }
            }
        } onCancel: {
            Task { [weak self] in await self?.endWait(id, false) }
        }
        if !held && Task.isCancelled { throw .cancelled }
        return held
    }

    private func endWait(_ id: UInt64, _ result: Bool) {
        guard let waiter = waiters.removeValue(forKey: id) else { return }
        waiter.timer?.cancel()
        waiter.continuation.resume(returning: result)
    }

    private func checkWaiters() {
        for (id, waiter) in waiters where waiter.condition() { endWait(id, true) }
    }

    /// Calls a BlueZ method, mapping its errors.
    func call(
        _ path: String, _ interface: String, _ method: String, _ arguments: [DBusValue] = [], timeout: Duration? = nil
    ) async throws(BluetoothError) -> DBusValue {
        do {
            return try await GDBus.call(
                connection, path: path, interface: interface, method: method, arguments, timeout: timeout ?? callTimeout
            )
        } catch {
            throw BlueZError.map(error, operation: method, timeout: timeout ?? callTimeout)
        }
    }

    // MARK: Adapters

    public func adapters() -> [BluetoothAdapter] {
        paths(with: Self.adapterInterface).map(adapter)
    }

    private func adapter(_ path: String) -> BluetoothAdapter {
        let properties = objects[path]?[Self.adapterInterface] ?? [:]
        return BluetoothAdapter(
            name: String(path.split(separator: "/").last ?? ""), address: properties["Address"]?.string ?? "",
            powered: properties["Powered"]?.bool ?? false, powerState: properties["PowerState"]?.string,
            discovering: properties["Discovering"]?.bool ?? false)
    }

    /// The adapter's object path, checked to be usable.
    func usableAdapter(_ name: String?) throws(BluetoothError) -> String {
        let paths = paths(with: Self.adapterInterface)
        guard let path = name.map({ name in paths.first { $0.hasSuffix("/" + name) } }) ?? paths.first else {
            throw .noAdapter(name)
        }
        let adapter = adapter(path)
        if adapter.powerState == "off-blocked" { throw .adapterBlocked(adapter.name) }
        guard adapter.powered else { throw .adapterPoweredOff(adapter.name) }
        return path
    }

    // MARK: Discovery

    struct Discovery {
        var adapter: String
        var observer: UInt64
        var continuation: AsyncStream<BLEDiscoveryEvent>.Continuation
        var matcher: AccessoryMatcher?
        /// Device path → address, for the devices reported so far.
        var reported: [String: MACAddress] = [:]
    }

    private func discoveryChange(_ id: UInt64, _ change: ObjectChange) {
        switch change {
        case .added(let path, _):
            report(path, to: id)
        case .changed(let path, let interface, _) where interface == Self.deviceInterface:
            report(path, to: id)
        case .removed(let path, let interfaces) where interfaces.contains(Self.deviceInterface):
            if let address = discoveries[id]?.reported.removeValue(forKey: path) {
                discoveries[id]?.continuation.yield(.lost(address))
            }
        default:
            break
        }
    }

    private func report(_ path: String, to id: UInt64) {
        guard let discovery = discoveries[id], let advertisement = advertisement(path, adapter: discovery.adapter),
            discovery.matcher.map({ $0.firstMatch(for: advertisement) != nil }) ?? true
        else { return }
        let known = discovery.reported[path] != nil
        discoveries[id]?.reported[path] = advertisement.address
        discovery.continuation.yield(known ? .updated(advertisement) : .found(advertisement))
    }

    /// The `SetDiscoveryFilter` dictionary for `descriptors`: LE only, and an RSSI floor when
    /// every one wants `immediate`. Never their service UUIDs: BlueZ (and the kernel, for the
    /// scan it asks for) matches a UUID filter against the advertised UUID lists alone, so an
    /// advertisement that carries a descriptor's UUID only as service data (Improv's 4677, say)
    /// would never arrive; the matcher judges every advertisement instead.
    static func discoveryFilter(_ descriptors: [DiscoveryDescriptor]) -> [(String, DBusValue)] {
        var filter: [(String, DBusValue)] = []
        let bluetooth = descriptors.filter(\.hasBluetoothIdentifier)
        if !bluetooth.isEmpty && bluetooth.allSatisfy({ $0.bluetoothRange == .immediate }) {
            filter.append(("RSSI", .int16(Int16(BluetoothRange.immediateRSSIThreshold))))
        }
        filter.append(("Transport", .string("le")))
        return filter
    }

    /// Starts LE discovery for `descriptors` (every device when empty) and streams what the
    /// matcher accepts. BlueZ merges filters across clients, so each advertisement is re-checked.
    /// Ending the stream or `stopDiscovery()` stops discovery; BlueZ also stops it if this process exits.
    public func discover(_ descriptors: [DiscoveryDescriptor] = [], adapter name: String? = nil)
        async throws(BluetoothError) -> AsyncStream<BLEDiscoveryEvent>
    {
        try await startDiscovery(descriptors, adapter: name).events
    }

    /// `discover`, with the id `endDiscovery` takes to stop this discovery alone.
    func startDiscovery(
        _ descriptors: [DiscoveryDescriptor], adapter name: String?
    ) async throws(BluetoothError) -> (id: UInt64, events: AsyncStream<BLEDiscoveryEvent>) {
        let adapter = try usableAdapter(name)
        _ = try await call(
            adapter, Self.adapterInterface, "SetDiscoveryFilter", [.vardict(Self.discoveryFilter(descriptors))])
        _ = try await call(adapter, Self.adapterInterface, "StartDiscovery")

        let (stream, continuation) = AsyncStream.makeStream(of: BLEDiscoveryEvent.self)
        nextID += 1
        let id = nextID
        let observer = observe { client, change in client.discoveryChange(id, change) }
        discoveries[id] = Discovery(
            adapter: adapter, observer: observer, continuation: continuation,
            matcher: descriptors.isEmpty ? nil : AccessoryMatcher(descriptors: descriptors))
        // Devices BlueZ already holds count when they were heard (they have an RSSI).
        for path in paths(with: Self.deviceInterface) where property(path, Self.deviceInterface, "RSSI") != nil {
            report(path, to: id)
        }
        continuation.onTermination = { [weak self] _ in
            Task { await self?.endDiscovery(id) }
        }
        return (id, stream)
    }

    /// Stops every discovery this client started and ends their streams.
    public func stopDiscovery() async {
        for id in discoveries.keys.sorted() { await endDiscovery(id) }
    }

    func endDiscovery(_ id: UInt64) async {
        guard let discovery = discoveries.removeValue(forKey: id) else { return }
        observers[discovery.observer] = nil
        if !discoveries.values.contains(where: { $0.adapter == discovery.adapter }) {
            // In a task of its own, so cancelling the caller cannot cancel the stop.
            let adapter = discovery.adapter
            await Task { _ = try? await self.call(adapter, Self.adapterInterface, "StopDiscovery") }.value
        }
        // Ends the stream only once discovery is stopped.
        discovery.continuation.finish()
    }

    /// The device at `path` as an advertisement, if it is a device of `adapter`.
    func advertisement(_ path: String, adapter: String?) -> BLEAdvertisement? {
        guard let properties = objects[path]?[Self.deviceInterface],
            adapter == nil || properties["Adapter"]?.string == adapter,
            let address = try? MACAddress(properties["Address"]?.string ?? "")
        else { return nil }
        var manufacturerData: [BluetoothCompanyIdentifier: [UInt8]] = [:]
        for entry in properties["ManufacturerData"]?.entries ?? [] {
            if let id = entry.key.int, let bytes = entry.value.bytes {
                manufacturerData[BluetoothCompanyIdentifier(rawValue: UInt16(truncatingIfNeeded: id))] = bytes
            }
        }
        var serviceData: [BluetoothUUID: [UInt8]] = [:]
        for entry in properties["ServiceData"]?.entries ?? [] {
            if let uuid = try? BluetoothUUID(entry.key.string ?? ""), let bytes = entry.value.bytes {
                serviceData[uuid] = bytes
            }
        }
        // BlueZ makes up an alias from the address when a device has no name.
        let alias = properties["Alias"]?.string.flatMap {
            $0 == String(address.description.map { $0 == ":" ? "-" : $0 }) ? nil : $0
        }
        return BLEAdvertisement(
            address: address, addressType: properties["AddressType"]?.string == "random" ? .random : .public,
            name: properties["Name"]?.string ?? alias, rssi: properties["RSSI"]?.int,
            txPower: properties["TxPower"]?.int,
            serviceUUIDs: (properties["UUIDs"]?.elements ?? []).compactMap { try? BluetoothUUID($0.string ?? "") },
            manufacturerData: manufacturerData, serviceData: serviceData)
    }
}

/// BlueZ's D-Bus errors, typed.
enum BlueZError {
    static func map(_ error: GLibError, operation: String = "", timeout: Duration = .zero, unavailable: Bool = false)
        -> BluetoothError
    {
        if error.isCancelled { return .cancelled }
        let remote = error.remoteName ?? ""
        if remote == "org.freedesktop.DBus.Error.NoReply" {
            return .timedOut(operation, seconds: Int(timeout.components.seconds))
        }
        if let known = known(remote, error.message) { return known }
        if error.domain == "g-io-error-quark" && error.code == Int32(G_IO_ERROR_TIMED_OUT.rawValue) {
            return .timedOut(operation, seconds: Int(timeout.components.seconds))
        }
        if unavailable { return .bluezUnavailable(error.message) }
        return BluetoothError(bluezErrorName: remote, message: error.message)
    }

    /// The errors BlueZ (or the bus, for BlueZ) names that have a case of their own.
    static func known(_ name: String, _ message: String) -> BluetoothError? {
        switch name {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            .bluezUnavailable(message)
        case "org.bluez.Error.NotPermitted": .notPermitted(message)
        case "org.bluez.Error.NotAuthorized", "org.bluez.Error.AuthenticationFailed": .notAuthorized(message)
        case "org.bluez.Error.InProgress": .inProgress(message)
        case "org.bluez.Error.NotSupported": .notSupported(message)
        case "org.bluez.Error.InvalidValueLength": .invalidValueLength(message)
        default: nil
        }
    }
}

extension BluetoothError {
    /// The error a BlueZ reply named, for a BlueZ call made on another connection.
    public init(bluezErrorName name: String?, message: String) {
        let name = name ?? ""
        if let known = BlueZError.known(name, message) {
            self = known
        } else {
            let prefix =
                name.hasPrefix("org.bluez.Error.") ? String(name.dropFirst("org.bluez.Error.".count)) + ": " : ""
            self = .failed(prefix + message)
        }
    }
}
