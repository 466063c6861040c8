import AccessoryCore
import BlueZBackend
import Foundation
import ServiceHarness
import Testing

/// Timeouts of any size from a library caller, against the project's BlueZ template.
@Suite(.serialized) final class MockBlueZTimeoutTests {
    let mock: BlueZMock

    init() throws {
        mock = try BlueZMock()
        try mock.addAdapter()
    }

    deinit { mock.stop() }

    /// Looking for a device BlueZ does not know waits through `BlueZClient.wait`; a huge
    /// timeout waits until cancelled instead of trapping.
    @Test func aHugeTimeoutWaitsUntilCancelled() async throws {
        let client = try await BlueZClient.connect(busAddress: mock.bus.address)
        let absent = try MACAddress("02:00:00:00:00:99")
        let task = Task { try await client.connect(absent, timeout: .seconds(Int64.max)) }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        await #expect(throws: BluetoothError.cancelled, "cancelled, and not taken for a device that was not found") {
            try await task.value
        }
    }
}
