/// An error with a stable name (`WrongPassphrase`): what a client matches on, and what the
/// agent's D-Bus error name ends with (`AgentInterface` adds the bus's prefix).
public protocol NamedError: Error {
    var errorName: String { get }
}

extension HotspotError: NamedError {}
extension ImprovError: NamedError {}
extension BluetoothError: NamedError {}
extension ProvisioningError: NamedError {}
extension AgentError: NamedError {}
extension AccessorySessionError: NamedError {}
