/// The protobuf wire format, as far as the provisioning messages need it: varints,
/// length-delimited fields and nested messages. Fields are written in field-number order and
/// proto3 defaults (zero, empty) are left out, as every protobuf library does.
struct ProtobufWriter {
    private(set) var bytes: [UInt8] = []

    private mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    private mutating func tag(_ field: Int, _ wireType: UInt64) {
        varint(UInt64(field) << 3 | wireType)
    }

    /// An unsigned, enum or bool field; left out when zero.
    mutating func uint(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }
        tag(field, 0)
        varint(value)
    }

    /// A scalar member of a oneof: written even when zero, since being set is what it says.
    mutating func member(_ field: Int, _ value: UInt64) {
        tag(field, 0)
        varint(value)
    }

    /// An `int32` field: negative values take ten bytes, sign-extended, as proto3 says.
    mutating func int32(_ field: Int, _ value: Int32) {
        uint(field, UInt64(bitPattern: Int64(value)))
    }

    mutating func bool(_ field: Int, _ value: Bool) { uint(field, value ? 1 : 0) }

    /// A `bytes` or `string` field; left out when empty.
    mutating func bytes(_ field: Int, _ value: [UInt8]) {
        guard !value.isEmpty else { return }
        lengthDelimited(field, value)
    }

    /// A nested message: written even when empty, since its presence is what a oneof carries.
    mutating func message(_ field: Int, _ build: (inout ProtobufWriter) -> Void) {
        var nested = ProtobufWriter()
        build(&nested)
        lengthDelimited(field, nested.bytes)
    }

    private mutating func lengthDelimited(_ field: Int, _ value: [UInt8]) {
        tag(field, 2)
        varint(UInt64(value.count))
        bytes += value
    }
}

/// One field as read from the wire.
enum ProtobufValue {
    case varint(UInt64)
    case bytes(ArraySlice<UInt8>)
    /// A fixed32 or fixed64 field: none of ours, skipped.
    case fixed
}

/// Reads the fields of one message in order. `message` names it in errors.
struct ProtobufReader {
    private let data: [UInt8]
    private var index: Int
    private let end: Int
    let message: String

    init(_ data: some Collection<UInt8>, message: String) {
        self.data = Array(data)
        self.index = 0
        self.end = self.data.count
        self.message = message
    }

    /// The next field number and value, or `nil` at the end.
    mutating func next() throws(ProvisioningError) -> (field: Int, value: ProtobufValue)? {
        guard index < end else { return nil }
        let key = try varint()
        let field = Int(key >> 3)
        guard field > 0, field < 1 << 29 else { throw malformed("field number \(key >> 3)") }
        switch key & 7 {
        case 0:
            return (field, .varint(try varint()))
        case 1, 5:
            let size = key & 7 == 1 ? 8 : 4
            guard end - index >= size else { throw malformed("field \(field) runs past the end") }
            index += size
            return (field, .fixed)
        case 2:
            let length = try varint()
            guard length <= UInt64(end - index) else { throw malformed("field \(field) runs past the end") }
            let start = index
            index += Int(length)
            return (field, .bytes(data[start..<index]))
        default:
            throw malformed("field \(field) has wire type \(key & 7), which proto3 does not use")
        }
    }

    private mutating func varint() throws(ProvisioningError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while index < end {
            let byte = data[index]
            index += 1
            guard shift < 64 else { break }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
        throw malformed("a number is cut off or longer than ten bytes")
    }

    func malformed(_ reason: String) -> ProvisioningError {
        .malformedMessage(message, reason)
    }
}

extension ProtobufValue {
    func varint(_ reader: ProtobufReader, field: Int) throws(ProvisioningError) -> UInt64 {
        guard case .varint(let value) = self else { throw reader.malformed("field \(field) is not a number") }
        return value
    }

    func uint32(_ reader: ProtobufReader, field: Int) throws(ProvisioningError) -> UInt32 {
        UInt32(truncatingIfNeeded: try varint(reader, field: field))
    }

    func int32(_ reader: ProtobufReader, field: Int) throws(ProvisioningError) -> Int32 {
        Int32(truncatingIfNeeded: try varint(reader, field: field))
    }

    func bytes(_ reader: ProtobufReader, field: Int) throws(ProvisioningError) -> [UInt8] {
        guard case .bytes(let value) = self else { throw reader.malformed("field \(field) is not length-delimited") }
        return Array(value)
    }
}
