import AccessoryCore

/// The client's calls conform as they are; the agent's short forms come from the protocol.
extension BlueZClient: BluetoothManaging {}
