import AccessoryCore
import CGLib
import DBusValues
import GLibRuntime
import Glibc

/// A method call the service received, with what it needs to answer it once.
///
/// Replying is thread-safe and happens at most once; a call dropped without a reply is
/// answered with `org.freedesktop.DBus.Error.Failed`, so no client is left waiting.
public final class MethodCall: Sendable {
    /// The caller's unique bus name (`:1.42`).
    public let sender: String
    public let path: String
    public let interface: String
    public let member: String
    /// The arguments, in order, variants unwrapped.
    public let arguments: [DBusValue]
    /// Whether the caller set `ALLOW_INTERACTIVE_AUTHORIZATION` on the message.
    public let allowsInteractiveAuthorization: Bool
    /// When the call was taken from the bus.
    public let received = ContinuousClock.now
    /// The caller's uid once asked of the bus daemon: a connection's user never changes, so
    /// one call asks once however many steps need it.
    public let senderUID = Locked<UInt32?>(nil)
    /// Descriptors that came with the message, duplicated for this call and closed when it
    /// is released unless taken with `takeFileDescriptor(at:)`.
    private let descriptors: Locked<[Int32?]>
    private let invocation: Locked<UncheckedSendable<OpaquePointer>?>

    init(
        invocation: OpaquePointer, sender: String, path: String, interface: String, member: String,
        parameters: OpaquePointer
    ) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        arguments = DBusValue(copying: parameters).elements
        let message = g_dbus_method_invocation_get_message(invocation)
        let flags = g_dbus_message_get_flags(message).rawValue
        allowsInteractiveAuthorization = flags & G_DBUS_MESSAGE_FLAGS_ALLOW_INTERACTIVE_AUTHORIZATION.rawValue != 0
        var duplicated: [Int32?] = []
        if let list = g_dbus_message_get_unix_fd_list(message) {
            for index in 0..<g_unix_fd_list_get_length(list) {
                let descriptor = g_unix_fd_list_get(list, index, nil)
                duplicated.append(descriptor >= 0 ? descriptor : nil)
            }
        }
        descriptors = Locked(duplicated)
        self.invocation = Locked(UncheckedSendable(invocation))
    }

    /// The descriptor a `h` argument refers to, now owned by the caller; `nil` when the index
    /// is out of range or was taken already.
    public func takeFileDescriptor(at index: Int) -> Int32? {
        descriptors.withLock { list in
            guard list.indices.contains(index) else { return nil }
            defer { list[index] = nil }
            return list[index]
        }
    }

    /// How many descriptors came with the message and were not taken.
    public var descriptorCount: Int { descriptors.withLock { $0.count { $0 != nil } } }

    /// Closes the descriptors not taken, off the caller's thread (`ClientDescriptors.close`).
    public func closeDescriptors() {
        let open = descriptors.withLock { list in
            defer { list = list.map { _ in nil } }
            return list.compactMap { $0 }
        }
        ClientDescriptors.close(open)
    }

    /// Answers with `values` as the reply's arguments.
    public func reply(_ values: [DBusValue] = []) {
        guard let invocation = take() else { return }
        g_dbus_method_invocation_return_value(invocation, DBusValue.tuple(values).newVariant())
    }

    /// Answers with the D-Bus error `name` and `message`.
    public func reply(errorName name: String, message: String) {
        guard let invocation = take() else { return }
        g_dbus_method_invocation_return_dbus_error(invocation, name, message)
    }

    /// Whether a reply was sent.
    public var isAnswered: Bool { invocation.withLock { $0 == nil } }

    private func take() -> OpaquePointer? {
        invocation.withLock { stored in
            defer { stored = nil }
            return stored?.value
        }
    }

    deinit {
        reply(
            errorName: "org.freedesktop.DBus.Error.Failed", message: "the service dropped the call without answering it"
        )
        closeDescriptors()
    }
}
