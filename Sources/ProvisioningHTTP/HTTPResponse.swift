import AccessoryCore
import FoundationEssentials

/// An HTTP/1.x answer read from a connection within bounds: headers of at most 16 KiB, a
/// body of at most `bodyLimit`, no chunked encoding (the devices spoken to never send it).
struct HTTPResponse {
    static let headerLimit = 16 * 1024

    var status: Int
    /// Names lowercased; a repeated header keeps its last value.
    var headers: [String: String]
    var body: [UInt8]
    /// Whether the connection may carry another request.
    var keepAlive: Bool

    /// Why an answer could not be read.
    enum Fault: Error {
        case socket(SocketError)
        /// The peer closed the connection before anything was read.
        case closedBeforeAnswer
        case cutOff
        case malformed(String)
    }

    /// Reads one answer from `link` before `deadline`.
    static func read(_ link: TCPConnection, until deadline: Double, bodyLimit: Int) throws(Fault) -> HTTPResponse {
        var data: [UInt8] = []
        var headerEnd: Int?
        while headerEnd == nil {
            let chunk = try next(link, limit: 4096, until: deadline)
            guard !chunk.isEmpty else { throw data.isEmpty ? .closedBeforeAnswer : .cutOff }
            data += chunk
            headerEnd = find([13, 10, 13, 10], in: data)
            if headerEnd == nil && data.count > headerLimit { throw .malformed("the answer's headers exceed 16 KiB") }
        }
        let end = headerEnd!
        let lines = String(decoding: data[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = lines[0].split(separator: " ")
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let code = Int(statusLine[1]),
            (100...599).contains(code)
        else {
            throw .malformed("the answer is not HTTP/1.x")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingWhitespace()
        }
        var body = Array(data[(end + 4)...])
        if let encoding = headers["transfer-encoding"] {
            guard encoding.lowercased() == "chunked" else {
                throw .malformed("the answer's transfer encoding '\(encoding)' is not read here")
            }
            body = try dechunk(body, link, until: deadline, bodyLimit: bodyLimit)
            return HTTPResponse(status: code, headers: headers, body: body, keepAlive: false)
        }
        let closes = headers["connection"]?.lowercased() == "close" || statusLine[0] == "HTTP/1.0"
        let length: Int?
        if let text = headers["content-length"] {
            guard let value = Int(text), value >= 0, value <= bodyLimit else {
                throw .malformed("the answer's length '\(text)' is not usable (at most \(bodyLimit / 1024) KiB)")
            }
            length = value
        } else {
            length = nil
        }
        while body.count < (length ?? bodyLimit + 1) {
            let chunk = try next(link, limit: (length ?? bodyLimit + 1) - body.count, until: deadline)
            if chunk.isEmpty {
                guard length == nil else { throw .cutOff }
                break
            }
            body += chunk
        }
        guard body.count <= bodyLimit else { throw .malformed("the answer exceeds \(bodyLimit / 1024) KiB") }
        return HTTPResponse(status: code, headers: headers, body: body, keepAlive: !closes && length != nil)
    }

    /// The body of a chunked answer (`buffered` is what came with the headers): each chunk's
    /// hex size line, its bytes, up to the empty last chunk; trailers are not read.
    private static func dechunk(_ buffered: [UInt8], _ link: TCPConnection, until deadline: Double, bodyLimit: Int)
        throws(Fault) -> [UInt8]
    {
        var data = buffered
        var body: [UInt8] = []
        var position = 0
        while true {
            var lineEnd = find([13, 10], in: Array(data[position...])).map { $0 + position }
            while lineEnd == nil {
                guard data.count - position <= 1024 else { throw .malformed("a chunk's size line exceeds 1 KiB") }
                let chunk = try next(link, limit: 4096, until: deadline)
                guard !chunk.isEmpty else { throw .cutOff }
                data += chunk
                lineEnd = find([13, 10], in: Array(data[position...])).map { $0 + position }
            }
            let line = String(decoding: data[position..<lineEnd!], as: UTF8.self)
            let sizeText = line.split(separator: ";").first.map(String.init) ?? ""
            guard let size = Int(sizeText.trimmingWhitespace(), radix: 16), size >= 0 else {
                throw .malformed("a chunk's size '\(DisplayText.sanitized(line, maximumLength: 40))' is not hex")
            }
            position = lineEnd! + 2
            if size == 0 { return body }
            guard body.count + size <= bodyLimit else { throw .malformed("the answer exceeds \(bodyLimit / 1024) KiB") }
            while data.count < position + size + 2 {
                let chunk = try next(link, limit: position + size + 2 - data.count, until: deadline)
                guard !chunk.isEmpty else { throw .cutOff }
                data += chunk
            }
            body += data[position..<position + size]
            position += size + 2
            // What is consumed is dropped, so that a long answer is not searched again and again.
            data.removeFirst(position)
            position = 0
        }
    }

    private static func next(_ link: TCPConnection, limit: Int, until deadline: Double) throws(Fault) -> [UInt8] {
        do {
            return try link.read(limit: limit, until: deadline)
        } catch {
            throw .socket(error)
        }
    }

    private static func find(_ needle: [UInt8], in data: [UInt8]) -> Int? {
        guard data.count >= needle.count else { return nil }
        return (0...(data.count - needle.count)).first { data[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}
