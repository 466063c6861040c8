import AccessoryCore
import AgentInterface
import DBusValues
import FoundationEssentials

/// A method call's arguments by position, as the agent's methods read them: one the caller left
/// out reads as an empty dictionary, and one of the wrong type is refused naming its field.
struct CallArguments {
    private let values: [DBusValue]

    init(_ values: [DBusValue]) {
        self.values = values
    }

    subscript(index: Int) -> DBusValue {
        values.indices.contains(index) ? values[index] : BusCoding.emptyDictionary
    }

    /// The string at `index`; refused as `name` when it is missing or not a string.
    func string(_ index: Int, _ name: String) throws(CallFailure) -> String {
        guard values.indices.contains(index), let value = values[index].string else {
            throw .invalidArguments(name, "expected a string")
        }
        return value
    }

    /// The `a{sv}` options at `index`; none when it is missing or not a dictionary.
    func options(_ index: Int) -> [String: DBusValue] {
        values.indices.contains(index) ? values[index].members ?? [:] : [:]
    }

    /// The accessory id (a UUID) at `index`.
    func accessory(_ index: Int) throws(CallFailure) -> UUID {
        guard let text = self[index].string, let id = UUID(uuidString: text) else {
            throw CallFailure(
                AccessorySessionError.invalidRequest(field: "accessory", reason: "expected an accessory id (a UUID)"))
        }
        return id
    }
}
