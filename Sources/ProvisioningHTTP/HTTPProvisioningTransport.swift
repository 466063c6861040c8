import AccessoryCore
import Dispatch
import FoundationEssentials
import Synchronization

/// Protocomm over HTTP, as an ESP-IDF device serves it on its SoftAP: `POST /<endpoint>` with
/// the raw protobuf as body, the `session` cookie of the first answer sent back with every later
/// request, one request at a time over one kept-alive connection (the device takes a single
/// client).
///
/// A small HTTP/1.1 client of its own rather than URLSession: a device that refuses a handshake
/// step closes the connection without answering, and URLSession (libcurl) then sends the
/// request again on a new connection, which opens a new session on the device, and hangs.
/// Here a request is sent once, and a close before the answer is `connectionClosed`.
public final class HTTPProvisioningTransport: ProvisioningTransport, @unchecked Sendable {
    /// The SoftAP address ESP-IDF devices use, and esp_prov's default.
    public static let defaultHost = "192.168.4.1"
    public static let defaultPort = 80
    static let bodyLimit = 64 * 1024

    public let host: String
    public let port: Int
    /// The network interface every connection goes out through: the one joined to the
    /// device's hotspot, so that another network with the same addresses never receives the
    /// credentials.
    public let interface: String?
    private let timeout: Double
    /// Every request runs on this queue, one after the other; `connection` and `cookie` are
    /// touched only there.
    private let queue = DispatchQueue(label: "accessory-setup.provisioning-http")
    private var connection: TCPConnection?
    private var cookie: String?

    /// `timeout` bounds connecting and each request; security 2's first step takes a device
    /// a few seconds. With `interface`, connections leave through that interface alone.
    public init(host: String, port: Int, interface: String? = nil, timeout: Duration = .seconds(20)) {
        self.host = host
        self.port = port
        self.interface = interface
        self.timeout = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
    }

    /// Parses `HOST[:PORT]` (an IPv6 address in brackets), the port defaulting to 80.
    public static func parseAddress(_ text: String) -> (host: String, port: Int)? {
        var host = Substring(text)
        var port = defaultPort
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let number = Int(rest.dropFirst()) else { return nil }
                port = number
            }
        } else if let colon = text.lastIndex(of: ":") {
            guard text.firstIndex(of: ":") == colon, let number = Int(text[text.index(after: colon)...]) else {
                return nil
            }
            host = text[..<colon]
            port = number
        }
        let allowed = host.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || ".-:".contains($0)) }
        guard !host.isEmpty, allowed, (1...65535).contains(port) else { return nil }
        return (String(host), port)
    }

    private var address: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    public func send(endpoint: ProvisioningEndpoint, _ body: [UInt8]) async throws(ProvisioningError) -> [UInt8] {
        let cancelled = CancellationFlag()
        let result: Result<[UInt8], ProvisioningError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                queue.async {
                    do throws(ProvisioningError) {
                        continuation.resume(
                            returning: .success(
                                try self.exchange(
                                    endpoint, body,
                                    isCancelled: cancelled.isSet)))
                    } catch {
                        continuation.resume(returning: .failure(error))
                    }
                }
            }
        } onCancel: {
            cancelled.set()
        }
        return try result.get()
    }

    /// One request and its answer; runs on `queue`.
    private func exchange(_ endpoint: ProvisioningEndpoint, _ body: [UInt8], isCancelled: @escaping () -> Bool)
        throws(ProvisioningError) -> [UInt8]
    {
        let name = endpoint.rawValue
        let deadline = TCPConnection.now() + timeout
        if let open = connection, open.isClosedByPeer { connection = nil }
        let link: TCPConnection
        if let open = connection {
            link = open
        } else {
            do {
                link = try TCPConnection(
                    host: host, port: port, interface: interface, timeout: timeout, isCancelled: isCancelled)
            } catch {
                throw failure(error, endpoint: name)
            }
        }
        connection = nil
        var head = "POST /\(name) HTTP/1.1\r\nHost: \(address)\r\n"
        // What esp_prov sends; the device ignores the type and reads the raw body.
        head += "Content-Type: application/x-www-form-urlencoded\r\nAccept: text/plain\r\n"
        head += "Content-Length: \(body.count)\r\n"
        if let cookie { head += "Cookie: \(cookie)\r\n" }
        do {
            try link.write(Array((head + "\r\n").utf8) + body, until: deadline)
        } catch {
            throw failure(error, endpoint: name)
        }
        let answer = try readAnswer(link, until: deadline, endpoint: name)
        if answer.keepAlive { connection = link }
        return answer.body
    }

    private func readAnswer(_ link: TCPConnection, until deadline: Double, endpoint: String)
        throws(ProvisioningError) -> (body: [UInt8], keepAlive: Bool)
    {
        let answer: HTTPResponse
        do {
            answer = try HTTPResponse.read(link, until: deadline, bodyLimit: Self.bodyLimit)
        } catch {
            switch error {
            case .socket(let failure): throw self.failure(failure, endpoint: endpoint)
            // How protocomm refuses: the handler failed and the server closed the socket.
            case .closedBeforeAnswer: throw .connectionClosed(endpoint: endpoint)
            case .cutOff: throw cutOff(endpoint)
            case .malformed(let reason): throw .transport(endpoint: endpoint, reason)
            }
        }
        guard answer.status == 200 else {
            throw .transport(
                endpoint: endpoint,
                "the device answered HTTP \(answer.status)"
                    + (answer.status == 404 ? "; it may not be an ESP-IDF provisioning device" : ""))
        }
        if let setCookie = answer.headers["set-cookie"], let pair = setCookie.split(separator: ";").first,
            pair.hasPrefix("session=")
        {
            cookie = String(pair)
        }
        return (answer.body, answer.keepAlive)
    }

    private func cutOff(_ endpoint: String) -> ProvisioningError {
        .transport(endpoint: endpoint, "the device closed the connection in the middle of its answer")
    }

    private func failure(_ error: SocketError, endpoint: String) -> ProvisioningError {
        switch error {
        case .closed: .connectionClosed(endpoint: endpoint)
        case .timedOut: .transport(endpoint: endpoint, "the device at \(address) did not answer in time")
        case .cancelled: .cancelled
        case .failed(let reason):
            .transport(
                endpoint: endpoint,
                "cannot reach \(address)\(interface.map { " through \($0)" } ?? "") (\(reason)); "
                    + "is this machine on the device's hotspot?")
        }
    }
}

/// Set once by a task's cancellation handler, read by the request on the queue.
final class CancellationFlag: Sendable {
    private let value = Atomic(false)

    func set() { value.store(true, ordering: .releasing) }
    func isSet() -> Bool { value.load(ordering: .acquiring) }
}
