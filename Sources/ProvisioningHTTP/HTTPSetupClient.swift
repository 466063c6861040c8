import AccessoryCore
import Dispatch
import FoundationEssentials

/// Sends a vendor's setup requests (`HTTPProvisioning`) to a device on its hotspot: one
/// request per connection, leaving through the hotspot's interface alone, bounded in time and
/// answer size, and never following a redirect (a 3xx is an answer like any other, for the
/// profile to judge). Nothing sent or received is logged: a request may carry a passphrase.
public final class HTTPSetupClient: Sendable {
    /// An answer larger than this is refused: setup answers are a few hundred bytes, a
    /// settings page a few kilobytes.
    public static let bodyLimit = 64 * 1024

    public let host: String
    public let port: Int
    public let interface: String?

    public init(host: String, port: Int, interface: String?) {
        self.host = host
        self.port = port
        self.interface = interface
    }

    /// Sends `request` and reads its answer within `timeout`.
    public func send(_ request: RenderedHTTPRequest, timeout: Duration) async throws(HTTPSetupFailure) -> HTTPAnswer {
        let cancelled = CancellationFlag()
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let result: Result<HTTPAnswer, HTTPSetupFailure> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    continuation.resume(
                        returning: Result { () throws(HTTPSetupFailure) in
                            try self.exchange(request, seconds: seconds, isCancelled: cancelled.isSet)
                        })
                }
            }
        } onCancel: {
            cancelled.set()
        }
        return try result.get()
    }

    private func exchange(_ request: RenderedHTTPRequest, seconds: Double, isCancelled: @escaping () -> Bool)
        throws(HTTPSetupFailure) -> HTTPAnswer
    {
        let deadline = TCPConnection.now() + seconds
        let link: TCPConnection
        do {
            link = try TCPConnection(
                host: host, port: port, interface: interface, timeout: seconds, isCancelled: isCancelled)
        } catch {
            throw failure(error)
        }
        var head = "\(request.method) \(request.target) HTTP/1.1\r\nHost: \(host)\r\n"
        head += "Accept: application/json, text/html;q=0.5, */*;q=0.1\r\nConnection: close\r\n"
        if let type = request.contentType { head += "Content-Type: \(type)\r\n" }
        if request.method != "GET" || !request.body.isEmpty { head += "Content-Length: \(request.body.count)\r\n" }
        do {
            try link.write(Array((head + "\r\n").utf8) + request.body, until: deadline)
        } catch {
            throw failure(error)
        }
        do {
            let answer = try HTTPResponse.read(link, until: deadline, bodyLimit: Self.bodyLimit)
            return HTTPAnswer(status: answer.status, body: answer.body)
        } catch {
            switch error {
            case .socket(let socket): throw failure(socket)
            case .closedBeforeAnswer: throw .unreachable("the device closed the connection without answering")
            case .cutOff: throw .malformed("the device closed the connection in the middle of its answer")
            case .malformed(let reason): throw .malformed(reason)
            }
        }
    }

    private func failure(_ error: SocketError) -> HTTPSetupFailure {
        switch error {
        case .closed: .unreachable("the device closed the connection without answering")
        case .timedOut: .timedOut
        case .cancelled: .cancelled
        case .failed(let reason):
            .unreachable("cannot reach \(host):\(port)\(interface.map { " through \($0)" } ?? ""): \(reason)")
        }
    }
}
