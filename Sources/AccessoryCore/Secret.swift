import Glibc

/// A passphrase or password. It prints as `<redacted>` wherever it is interpolated, logged or
/// dumped; only `reveal()` gives the text, for the one place that hands it to NetworkManager.
///
/// Its bytes live in memory of its own, overwritten (`explicit_bzero`) when the last copy of
/// the secret is dropped, so a secret the agent held for a join is not left in freed memory.
public struct Secret: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let storage: Storage

    public init(_ value: String) { storage = Storage(value) }

    public func reveal() -> String { String(decoding: UnsafeRawBufferPointer(storage.bytes), as: UTF8.self) }

    public var isEmpty: Bool { storage.bytes.isEmpty }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: []) }

    public static func == (lhs: Secret, rhs: Secret) -> Bool {
        lhs.storage.bytes.elementsEqual(rhs.storage.bytes)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes: UnsafeRawBufferPointer(storage.bytes))
    }

    /// The secret's UTF-8 bytes, never copied out but by `reveal()`, zeroed on release.
    private final class Storage: @unchecked Sendable {
        let bytes: UnsafeMutableRawBufferPointer

        init(_ text: String) {
            var text = text
            bytes = text.withUTF8 { source in
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: source.count, alignment: 1)
                buffer.copyMemory(from: UnsafeRawBufferPointer(source))
                return buffer
            }
        }

        deinit {
            if let base = bytes.baseAddress { explicit_bzero(base, bytes.count) }
            bytes.deallocate()
        }
    }
}
