import GLibRuntime
import Testing

@Suite struct DurationMillisecondsTests {
    @Test func saturatesAtTheTargetType() {
        #expect(Duration.milliseconds(1500).saturatingMilliseconds(as: UInt32.self) == 1500)
        #expect(Duration.seconds(Int64.max).saturatingMilliseconds(as: UInt32.self) == .max)
        #expect(Duration.seconds(Int64.max).saturatingMilliseconds(as: Int32.self) == .max)
        #expect(Duration.seconds(Int64.max / 1000).saturatingMilliseconds(as: Int64.self) == Int64.max / 1000 * 1000)
        #expect(Duration.seconds(5_000_000).saturatingMilliseconds(as: UInt32.self) == .max)
        #expect(Duration.seconds(-1).saturatingMilliseconds(as: UInt32.self) == 0)
        #expect(Duration.milliseconds(-1).saturatingMilliseconds(as: Int32.self) == 0)
    }
}
