#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The one file of socket calls: a TCP connection with a deadline on every wait, and nothing
// above it sees a file descriptor.

/// Why a socket operation failed.
enum SocketError: Error {
    /// The peer closed the connection before anything was read.
    case closed
    case timedOut
    case cancelled
    case failed(String)
}

/// One TCP connection, blocking calls bounded by a deadline, polled in short slices so that
/// `isCancelled` is seen within a tenth of a second.
final class TCPConnection {
    private let descriptor: Int32
    private let isCancelled: () -> Bool

    /// Connects to `host` (an address or a name) on `port`, within `timeout` seconds; through
    /// `interface` alone when one is named (`SO_BINDTODEVICE`), whatever the routing table says.
    init(
        host: String, port: Int, interface: String?, timeout: Double, isCancelled: @escaping () -> Bool
    ) throws(SocketError) {
        self.isCancelled = isCancelled
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw .failed("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        let deadline = Self.now() + timeout
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(
                info.pointee.ai_family,
                info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue)
                    | Int32(SOCK_NONBLOCK.rawValue), info.pointee.ai_protocol)
            guard fd >= 0 else { lastError = Self.errorText(); continue }
            if let interface, !Self.bind(fd, to: interface) {
                let reason = Self.errorText()
                close(fd)
                throw .failed("cannot bind to the interface \(interface): \(reason)")
            }
            if connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 || errno == EINPROGRESS {
                do {
                    try Self.wait(fd, for: Int16(POLLOUT), until: deadline, isCancelled: isCancelled)
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
                    if error == 0 {
                        descriptor = fd
                        return
                    }
                    lastError = String(cString: strerror(error))
                } catch {
                    close(fd)
                    throw error
                }
            } else {
                lastError = Self.errorText()
            }
            close(fd)
        }
        throw .failed(lastError)
    }

    deinit { close(descriptor) }

    private static func bind(_ fd: Int32, to interface: String) -> Bool {
        var name = Array(interface.utf8CString)
        guard name.count <= Int(IFNAMSIZ) else {
            errno = ENODEV
            return false
        }
        return setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, &name, socklen_t(name.count)) == 0
    }

    /// Whether the peer has closed the connection while it sat idle (a keep-alive timeout).
    var isClosedByPeer: Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, 0) == 1 else { return false }
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)) <= 0
    }

    func write(_ bytes: [UInt8], until deadline: Double) throws(SocketError) {
        var offset = 0
        while offset < bytes.count {
            try Self.wait(descriptor, for: Int16(POLLOUT), until: deadline, isCancelled: isCancelled)
            let sent = bytes[offset...].withUnsafeBytes {
                send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                if errno == EPIPE || errno == ECONNRESET { throw .closed }
                throw .failed(Self.errorText())
            }
            offset += sent
        }
    }

    /// Some bytes, at most `limit`; none at the end of the stream.
    func read(limit: Int, until deadline: Double) throws(SocketError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: limit)
        while true {
            try Self.wait(descriptor, for: Int16(POLLIN), until: deadline, isCancelled: isCancelled)
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, limit, 0) }
            if count >= 0 { return Array(buffer.prefix(count)) }
            if errno == EAGAIN || errno == EINTR { continue }
            if errno == ECONNRESET { return [] }
            throw .failed(Self.errorText())
        }
    }

    private static func wait(
        _ fd: Int32, for events: Int16, until deadline: Double, isCancelled: () -> Bool
    ) throws(SocketError) {
        while true {
            if isCancelled() { throw .cancelled }
            let left = deadline - now()
            guard left > 0 else { throw .timedOut }
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&entry, 1, Int32(min(left, 0.1) * 1000) + 1)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw .failed(errorText()) }
        }
    }

    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    private static func errorText() -> String { String(cString: strerror(errno)) }
}
