import AccessoryCore
import CGLib
import DBusValues
import GLibRuntime

/// One object the service puts on the bus: a path, one interface read from introspection XML,
/// and that interface's properties, which may change while it is exported.
public final class ExportedObject: Sendable {
    public let path: String
    public let interface: String
    /// The one connection (a unique name) that may call the object and read its properties, and
    /// the only one told of their changes; any other gets `org.freedesktop.DBus.Error.AccessDenied`.
    /// `nil`: anyone may, and changes are broadcast.
    public let owner: String?
    /// The parsed XML; the interface info points into it.
    private let node: UncheckedSendable<UnsafeMutablePointer<GDBusNodeInfo>>
    let interfaceInfo: UncheckedSendable<UnsafeMutablePointer<GDBusInterfaceInfo>>
    private let state = Locked(State())

    private struct State {
        var properties: [String: DBusValue] = [:]
        var bus: BusConnection?
        var registration: guint = 0
    }

    /// Reads `interface` from the introspection document `xml` (the text of a `dbus/*.xml`).
    public init(
        path: String, interface: String, xml: String, properties: [String: DBusValue] = [:], owner: String? = nil
    ) throws(BusError) {
        let (node, info) = try Self.parse(xml, interface: interface)
        self.path = path
        self.interface = interface
        self.owner = owner
        self.node = UncheckedSendable(node)
        interfaceInfo = UncheckedSendable(info)
        state.withLock { $0.properties = properties }
    }

    private static func parse(
        _ xml: String, interface: String
    ) throws(BusError) -> (UnsafeMutablePointer<GDBusNodeInfo>, UnsafeMutablePointer<GDBusInterfaceInfo>) {
        var error: UnsafeMutablePointer<GError>?
        guard let node = g_dbus_node_info_new_for_xml(xml, &error) else {
            let reason = GLibError(consuming: error, operation: "read the introspection XML")
            throw BusError(name: nil, message: "the introspection XML of \(interface) is not valid: \(reason.message)")
        }
        guard let info = g_dbus_node_info_lookup_interface(node, interface) else {
            g_dbus_node_info_unref(node)
            throw BusError(name: nil, message: "the introspection XML does not declare \(interface)")
        }
        return (node, info)
    }

    /// A property's current value.
    public func property(_ name: String) -> DBusValue? {
        state.withLock { $0.properties[name] }
    }

    /// Every property's current value, by name.
    public var properties: [String: DBusValue] { state.withLock { $0.properties } }

    /// Whether the connection `sender` may call the object and read its properties.
    public func admits(_ sender: String) -> Bool { owner == nil || owner == sender }

    /// Changes properties and, while exported, emits `PropertiesChanged` for those that changed.
    public func setProperties(_ changes: [String: DBusValue]) {
        let (bus, changed) = state.withLock { state -> (BusConnection?, [(String, DBusValue)]) in
            var changed: [(String, DBusValue)] = []
            for (name, value) in changes.sorted(by: { $0.key < $1.key }) where state.properties[name] != value {
                state.properties[name] = value
                changed.append((name, value))
            }
            return (state.bus, changed)
        }
        if let bus, !changed.isEmpty {
            bus.emitPropertiesChanged(path: path, interface: interface, changed, destination: owner)
        }
    }

    func attach(to bus: BusConnection, registration: guint) {
        state.withLock {
            $0.bus = bus
            $0.registration = registration
        }
    }

    func detach() -> guint? {
        state.withLock { state in
            defer {
                state.bus = nil
                state.registration = 0
            }
            return state.registration == 0 ? nil : state.registration
        }
    }

    deinit {
        g_dbus_node_info_unref(node.value)
    }
}
