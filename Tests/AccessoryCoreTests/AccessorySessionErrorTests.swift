import Testing

@testable import AccessoryCore

@Suite("Apple's codes for session errors and events")
struct AccessorySessionErrorTests {
    @Test func errorCodesAreApplesASErrorCodes() {
        let codes = Dictionary(uniqueKeysWithValues: AccessorySessionError.Code.allCases.map { ($0.name, $0.rawValue) })
        #expect(
            codes == [
                "unknown": 1, "activationFailed": 100, "connectionFailed": 150, "discoveryTimeout": 200,
                "extensionNotFound": 300, "invalidated": 400, "invalidRequest": 450, "pickerAlreadyActive": 500,
                "pickerRestricted": 550, "userCancelled": 700, "userRestricted": 750,
            ])
    }

    @Test func eachErrorHasItsCodeANameAndAMessage() {
        let errors: [AccessorySessionError] = [
            .unknown(reason: "r"), .activationFailed(reason: "r"), .connectionFailed(reason: "r"), .discoveryTimeout,
            .extensionNotFound, .invalidated, .invalidRequest(field: "items[0].name", reason: "must not be empty"),
            .pickerAlreadyActive, .pickerRestricted(reason: "r"), .userCancelled, .userRestricted(reason: "r"),
        ]
        #expect(Set(errors.map(\.code)) == Set(AccessorySessionError.Code.allCases))
        #expect(AccessorySessionError.pickerAlreadyActive.errorName == "PickerAlreadyActive")
        #expect(
            AccessorySessionError.invalidRequest(field: "f", reason: "r").errorName == "InvalidRequest")
        #expect(Set(errors.map(\.errorName)).count == errors.count)
        #expect(errors.allSatisfy { !$0.description.isEmpty })
    }

    @Test func anInvalidRequestNamesItsField() {
        let error = AccessorySessionError.invalidRequest(field: "items[1].descriptor.ssid", reason: "must not be empty")
        #expect(error.field == "items[1].descriptor.ssid")
        #expect(error.description == "items[1].descriptor.ssid: must not be empty")
        #expect(AccessorySessionError.userCancelled.field == nil)
    }

    @Test func agentErrorsHaveDistinctNames() {
        let names = AgentError.Code.allCases.map(\.errorName)
        #expect(Set(names).count == names.count)
        #expect(
            AgentError.notAuthorized(action: "io.accessorysetup.authorize").errorName
                == HotspotError.notAuthorized("x").errorName, "one NotAuthorized for the whole API")
        #expect(
            AgentError.notAuthorized(action: "io.accessorysetup.authorize").description.contains(
                "io.accessorysetup.authorize"))
    }

    @Test func eventTypesAreApplesASAccessoryEventTypes() {
        let types = Dictionary(uniqueKeysWithValues: AccessoryEventType.allCases.map { ($0.name, $0.rawValue) })
        #expect(
            types == [
                "unknown": 0, "activated": 10, "invalidated": 11, "migrationComplete": 20, "accessoryAdded": 30,
                "accessoryRemoved": 31, "accessoryChanged": 32, "accessoryDiscovered": 33, "pickerDidPresent": 40,
                "pickerDidDismiss": 50, "pickerSetupBridging": 60, "pickerSetupFailed": 70, "pickerSetupPairing": 80,
                "pickerSetupRename": 90,
            ])
        #expect(AccessoryEventType.pickerDidPresent.signalName == "PickerDidPresent")
    }

    @Test func eventsCarryTheirAccessoryOrError() {
        let record = SessionFixture.record("Plug", state: .authorized, descriptor: SessionFixture.plugItem.descriptor)
        #expect(AccessoryEvent.accessoryAdded(record).accessory == record)
        #expect(AccessoryEvent.accessoryChanged(record).type == .accessoryChanged)
        #expect(AccessoryEvent.activated([record]).accessory == nil, "only accessory… events carry one, as Apple's")
        #expect(AccessoryEvent.pickerDidDismiss(.userCancelled).error == .userCancelled)
        #expect(AccessoryEvent.pickerSetupFailed(.discoveryTimeout).error == .discoveryTimeout)
        #expect(AccessoryEvent.pickerDidDismiss(nil).error == nil)
    }
}
