import AccessoryCore
import BusService
import Foundation
import Testing

/// The reader pool the agent reads clients' files and descriptors with, its reads standing in
/// for one on a filesystem that never answers: a read blocked on a semaphore.
@Suite struct BoundedReadersTests {
    @Test func aReadAnswersWithWhatItRead() async {
        let readers = BoundedReaders(name: "test-readers", maximumThreads: 2, maximumWaiting: 4)
        guard case .read(let value) = await readers.run(within: .seconds(5), { 42 }) else {
            Issue.record("the read did not answer")
            return
        }
        #expect(value == 42)
    }

    /// Reads stuck for good keep their threads, never more than the pool's; each call still
    /// ends, timed out (those past the waiting bound at once, busy) while its read is stuck, and
    /// each read never started has its `skipped` run instead; once the stuck reads return, the
    /// threads end and the pool serves again.
    @Test func stuckReadsCostTheirTimeAndAtMostThePoolsThreads() async {
        let readers = BoundedReaders(name: "test-readers", maximumThreads: 2, maximumWaiting: 2)
        let stuck = DispatchSemaphore(value: 0)
        let skipped = Locked(0)
        let outcomes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    let outcome = await readers.run(
                        within: .milliseconds(500), skipped: { skipped.withLock { $0 += 1 } }, { stuck.wait() })
                    return switch outcome {
                    case .read: "read"
                    case .timedOut: "timedOut"
                    case .busy: "busy"
                    }
                }
            }
            var outcomes: [String] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        #expect(outcomes.filter { $0 == "timedOut" }.count == 4, "\(outcomes)")
        #expect(outcomes.filter { $0 == "busy" }.count == 2, "\(outcomes)")
        #expect(readers.runningThreads == 2)

        for _ in 0..<2 { stuck.signal() }
        var running = readers.runningThreads
        for _ in 0..<100 where running > 0 {
            try? await Task.sleep(for: .milliseconds(20))
            running = readers.runningThreads
        }
        #expect(running == 0, "the threads end once their reads returned and the waiting ones were given up")
        #expect(skipped.withLock { $0 } == 4, "the two that waited and the two the full pool turned away")
        guard case .read = await readers.run(within: .seconds(5), { () }) else {
            Issue.record("the pool did not serve again")
            return
        }
    }
}
