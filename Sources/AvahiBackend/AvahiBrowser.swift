import AccessoryCore
import BusService
import FoundationEssentials
import GLibRuntime

/// DNS-SD through Avahi's D-Bus API (`org.freedesktop.Avahi`), as GNOME's and KDE's tools
/// browse: a `ServiceBrowser` per service type, each `ItemNew` resolved with `ResolveService`
/// to its host, IPv4 address, port and TXT record.
public final class AvahiBrowser: HomeServiceBrowsing {
    private let bus: BusConnection

    static let name = "org.freedesktop.Avahi"
    static let server = "org.freedesktop.Avahi.Server"
    static let serviceBrowser = "org.freedesktop.Avahi.ServiceBrowser"
    /// `AVAHI_IF_UNSPEC` and `AVAHI_PROTO_INET` (avahi-common/address.h).
    static let anyInterface: Int32 = -1
    static let ipv4: Int32 = 0
    /// How long one Avahi call may take; a resolve answers within its own 5 s timeout.
    static let callTimeout = Duration.seconds(10)

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
        // Subscribed before the browsers exist, so that no ItemNew of theirs is missed; only
        // Avahi's, from the paths it gives this connection.
        let signals = await bus.signals(sender: Self.name, interface: Self.serviceBrowser)
        var browsers: [String] = []
        for type in types.sorted() {
            do {
                let reply = try await bus.call(
                    destination: Self.name, path: "/", interface: Self.server, method: "ServiceBrowserNew",
                    [.int32(Self.anyInterface), .int32(Self.ipv4), .string(type), .string(""), .uint32(0)],
                    timeout: Self.callTimeout)
                if let path = reply.first?.string { browsers.append(path) }
            } catch {
                await free(browsers)
                throw .unavailable(error.description)
            }
        }
        let (stream, continuation) = AsyncStream.makeStream(of: ResolvedService.self)
        let paths = browsers
        let watch = Task { [self] in
            var resolved = Set<[String]>()
            for await signal in signals where paths.contains(signal.path) {
                // ItemNew and ItemRemove: (interface, protocol, name, type, domain, flags)
                let item = signal.arguments
                guard item.count >= 5, let name = item[2].string, let type = item[3].string,
                    let domain = item[4].string
                else { continue }
                if signal.member == "ItemRemove" {
                    // Announced again later (a restart, a new address), it is resolved again.
                    resolved.remove([name, type, domain])
                    continue
                }
                guard signal.member == "ItemNew", resolved.insert([name, type, domain]).inserted else { continue }
                if let service = await resolve(interface: item[0], protocol: item[1], name, type, domain) {
                    continuation.yield(service)
                } else {
                    // Not resolved now: the next announcement may be.
                    resolved.remove([name, type, domain])
                }
            }
        }
        let deadline = Task {
            try? await Task.sleep(for: duration)
            continuation.finish()
        }
        continuation.onTermination = { [self] _ in
            watch.cancel()
            deadline.cancel()
            Task { await self.free(paths) }
        }
        return stream
    }

    /// `ResolveService` for an IPv4 address; `nil` when Avahi could not resolve it.
    private func resolve(
        interface: DBusValue, protocol: DBusValue, _ name: String, _ type: String, _ domain: String
    ) async -> ResolvedService? {
        let reply: [DBusValue]
        do {
            reply = try await bus.call(
                destination: Self.name, path: "/", interface: Self.server, method: "ResolveService",
                [interface, `protocol`, .string(name), .string(type), .string(domain), .int32(Self.ipv4), .uint32(0)],
                timeout: Self.callTimeout)
        } catch {
            return nil
        }
        // (interface, protocol, name, type, domain, host, aprotocol, address, port, txt, flags)
        guard reply.count >= 10, let host = reply[5].string, let address = reply[7].string,
            let port = reply[8].int.flatMap(UInt16.init(exactly:))
        else { return nil }
        let txt = reply[9].elements.compactMap(\.bytes)
        return ResolvedService(
            name: name, type: type, domain: domain, hostname: host, addresses: [address], port: port,
            txt: ResolvedService.txtRecord(txt))
    }

    private func free(_ browsers: [String]) async {
        for path in browsers {
            _ = try? await bus.call(
                destination: Self.name, path: path, interface: Self.serviceBrowser, method: "Free",
                timeout: Self.callTimeout)
        }
    }
}
