import AccessoryCore
import BusService
import DBusValues
import FoundationEssentials

/// DNS-SD through Avahi's D-Bus API (`org.freedesktop.Avahi`), as GNOME's and KDE's tools
/// browse: a `ServiceBrowser` per service type, and for each service it finds a
/// `ServiceResolver` that stays for as long as the service is announced, so that a service whose
/// host moves to another address (a new address record with cache-flush, the old one flushed) is
/// reported again within seconds, resolved to its host, IPv4 address, port and TXT record.
public final class AvahiBrowser: HomeServiceBrowsing {
    private let bus: BusConnection

    static let name = "org.freedesktop.Avahi"
    static let server = "org.freedesktop.Avahi.Server"
    static let serviceBrowser = "org.freedesktop.Avahi.ServiceBrowser"
    static let serviceResolver = "org.freedesktop.Avahi.ServiceResolver"
    /// `AVAHI_IF_UNSPEC` and `AVAHI_PROTO_INET` (avahi-common/address.h).
    static let anyInterface: Int32 = -1
    static let ipv4: Int32 = 0
    /// How long one Avahi call may take.
    static let callTimeout = Duration.seconds(10)
    /// At most this many services resolved at once per browse: each resolver is an object in
    /// avahi-daemon, which limits a client to 256 of them (`OBJECTS_PER_CLIENT_MAX`).
    static let resolverLimit = 128

    private init(bus: BusConnection) {
        self.bus = bus
    }

    /// Connects to the system bus, or the bus at `busAddress`, and checks that Avahi answers.
    public static func connect(busAddress: String? = nil) async throws(HomeServiceError) -> AvahiBrowser {
        let bus: BusConnection
        do {
            bus = try await BusConnection.connect(busAddress.map(BusAddress.address) ?? .system, threadName: "avahi")
            try await bus.call(
                destination: name, path: "/", interface: server, method: "GetVersionString", timeout: callTimeout)
        } catch {
            throw .unavailable(error.description)
        }
        return AvahiBrowser(bus: bus)
    }

    deinit { Task { [bus] in await bus.close() } }

    public func browse(_ types: Set<String>, for duration: Duration) async throws(HomeServiceError)
        -> AsyncStream<ResolvedService>
    {
        // Subscribed before the browsers exist, so that no ItemNew of theirs (nor a Found of a
        // resolver made later) is missed; only Avahi's, and only from the paths it gives this
        // connection.
        let signals = await bus.signals(sender: Self.name, interface: nil)
        var browsers: [String] = []
        for type in types.sorted() {
            do {
                let reply = try await bus.call(
                    destination: Self.name, path: "/", interface: Self.server, method: "ServiceBrowserNew",
                    [.int32(Self.anyInterface), .int32(Self.ipv4), .string(type), .string(""), .uint32(0)],
                    timeout: Self.callTimeout)
                if let path = reply.first?.string { browsers.append(path) }
            } catch {
                await free(browsers, Self.serviceBrowser)
                throw .unavailable(error.description)
            }
        }
        let (stream, continuation) = AsyncStream.makeStream(of: ResolvedService.self)
        let paths = browsers
        let watch = Task { [self] in
            // Each service announced, by (name, type, domain), to its resolver's path, and back.
            var resolvers: [[String]: String] = [:]
            var services: [String: [String]] = [:]
            for await signal in signals {
                switch signal.interface {
                case Self.serviceBrowser where paths.contains(signal.path):
                    // ItemNew and ItemRemove: (interface, protocol, name, type, domain, flags)
                    let item = signal.arguments
                    guard item.count >= 5, let name = item[2].string, let type = item[3].string,
                        let domain = item[4].string
                    else { continue }
                    let key = [name, type, domain]
                    if signal.member == "ItemRemove" {
                        // Announced again later (a restart), it is resolved again.
                        if let path = resolvers.removeValue(forKey: key) {
                            services[path] = nil
                            await free([path], Self.serviceResolver)
                        }
                        continue
                    }
                    guard signal.member == "ItemNew", resolvers[key] == nil, resolvers.count < Self.resolverLimit,
                        let path = await resolver(interface: item[0], protocol: item[1], name, type, domain)
                    else { continue }
                    resolvers[key] = path
                    services[path] = key
                case Self.serviceResolver where services[signal.path] != nil:
                    if signal.member == "Found", let service = Self.service(signal.arguments) {
                        continuation.yield(service)
                    } else if signal.member == "Failure", let key = services.removeValue(forKey: signal.path) {
                        // Not resolved now: the next announcement may be.
                        resolvers[key] = nil
                        await free([signal.path], Self.serviceResolver)
                    }
                default:
                    continue
                }
            }
            // Cancelled with the stream: the resolvers are freed outside this task.
            let left = Array(services.keys)
            Task { await self.free(left, Self.serviceResolver) }
        }
        let deadline = Task {
            try? await Task.sleep(for: duration)
            continuation.finish()
        }
        continuation.onTermination = { [self] _ in
            watch.cancel()
            deadline.cancel()
            Task { await self.free(paths, Self.serviceBrowser) }
        }
        return stream
    }

    /// A `ServiceResolver` for an IPv4 address of the service; `nil` when Avahi refuses one.
    private func resolver(
        interface: DBusValue, protocol: DBusValue, _ name: String, _ type: String, _ domain: String
    ) async -> String? {
        let reply = try? await bus.call(
            destination: Self.name, path: "/", interface: Self.server, method: "ServiceResolverNew",
            [interface, `protocol`, .string(name), .string(type), .string(domain), .int32(Self.ipv4), .uint32(0)],
            timeout: Self.callTimeout)
        return reply?.first?.string
    }

    /// A resolver's `Found`: (interface, protocol, name, type, domain, host, aprotocol, address,
    /// port, txt, flags).
    static func service(_ found: [DBusValue]) -> ResolvedService? {
        guard found.count >= 10, let name = found[2].string, let type = found[3].string,
            let domain = found[4].string, let host = found[5].string, let address = found[7].string,
            let port = found[8].int.flatMap(UInt16.init(exactly:))
        else { return nil }
        let txt = found[9].elements.compactMap(\.bytes)
        return ResolvedService(
            name: name, type: type, domain: domain, hostname: host, addresses: [address], port: port,
            txt: ResolvedService.txtRecord(txt))
    }

    /// Frees Avahi's objects at `paths`, of `interface`.
    private func free(_ paths: [String], _ interface: String) async {
        for path in paths {
            _ = try? await bus.call(
                destination: Self.name, path: path, interface: interface, method: "Free", timeout: Self.callTimeout)
        }
    }
}
