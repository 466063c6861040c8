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
    static let headerLimit = 16 * 1024
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

    /// The next bytes of the answer; none at its end.
    private func read(_ link: TCPConnection, limit: Int, until deadline: Double, endpoint: String)
        throws(ProvisioningError) -> [UInt8]
    {
        do {
            return try link.read(limit: limit, until: deadline)
        } catch {
            throw failure(error, endpoint: endpoint)
        }
    }

    private func readAnswer(_ link: TCPConnection, until deadline: Double, endpoint: String)
        throws(ProvisioningError) -> (body: [UInt8], keepAlive: Bool)
    {
        var data: [UInt8] = []
        var headerEnd: Int?
        while headerEnd == nil {
            let chunk = try read(link, limit: 4096, until: deadline, endpoint: endpoint)
            guard !chunk.isEmpty else {
                // How protocomm refuses: the handler failed and the server closed the socket.
                throw data.isEmpty ? .connectionClosed(endpoint: endpoint) : cutOff(endpoint)
            }
            data += chunk
            headerEnd = Self.find([13, 10, 13, 10], in: data)
            if headerEnd == nil && data.count > Self.headerLimit {
                throw .transport(endpoint: endpoint, "the answer's headers exceed 16 KiB")
            }
        }
        let end = headerEnd!
        let lines = String(decoding: data[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let status = lines[0].split(separator: " ")
        guard status.count >= 2, status[0].hasPrefix("HTTP/1."), let code = Int(status[1]) else {
            throw .transport(endpoint: endpoint, "the answer is not HTTP/1.x")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].trimmingWhitespace()
            headers[line[..<colon].lowercased()] = value
        }
        if headers["transfer-encoding"] != nil {
            throw .transport(endpoint: endpoint, "the answer is chunked, which ESP-IDF devices never send")
        }
        var body = Array(data[(end + 4)...])
        let closes = headers["connection"]?.lowercased() == "close" || status[0] == "HTTP/1.0"
        let length: Int?
        if let text = headers["content-length"] {
            guard let value = Int(text), value >= 0, value <= Self.bodyLimit else {
                throw .transport(endpoint: endpoint, "the answer's length '\(text)' is not usable")
            }
            length = value
        } else {
            length = nil
        }
        while body.count < (length ?? Self.bodyLimit + 1) {
            let chunk = try read(
                link, limit: (length ?? Self.bodyLimit + 1) - body.count, until: deadline,
                endpoint: endpoint)
            if chunk.isEmpty {
                guard length == nil else { throw cutOff(endpoint) }
                break
            }
            body += chunk
        }
        guard body.count <= Self.bodyLimit else { throw .transport(endpoint: endpoint, "the answer exceeds 64 KiB") }
        guard code == 200 else {
            throw .transport(
                endpoint: endpoint,
                "the device answered HTTP \(code)"
                    + (code == 404 ? "; it may not be an ESP-IDF provisioning device" : ""))
        }
        if let setCookie = headers["set-cookie"], let pair = setCookie.split(separator: ";").first,
            pair.hasPrefix("session=")
        {
            cookie = String(pair)
        }
        return (body, !closes && length != nil)
    }

    private func cutOff(_ endpoint: String) -> ProvisioningError {
        .transport(endpoint: endpoint, "the device closed the connection in the middle of its answer")
    }

    private static func find(_ needle: [UInt8], in data: [UInt8]) -> Int? {
        guard data.count >= needle.count else { return nil }
        return (0...(data.count - needle.count)).first { data[$0..<$0 + needle.count].elementsEqual(needle) }
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
private final class CancellationFlag: Sendable {
    private let value = Atomic(false)

    func set() { value.store(true, ordering: .releasing) }
    func isSet() -> Bool { value.load(ordering: .acquiring) }
}
