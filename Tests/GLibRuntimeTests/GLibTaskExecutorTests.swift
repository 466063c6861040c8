import Foundation
import GLibRuntime
import Synchronization
import Testing

/// The name of the calling thread, as `ps -L` shows it.
private func threadName() -> String {
    ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
        .trimmingCharacters(in: .newlines)
}

/// One for the whole run: an executor drops the jobs still waiting when it goes, and the
/// cancelled hour-long sleep below leaves one (its wake-up, which would free it).
private let executor = GLibTaskExecutor.make(name: "test-tasks")

@Suite struct GLibTaskExecutorTests {
    @Test func aTaskPreferringItRunsOnItsThread() async {
        let names = await withTaskExecutorPreference(executor) {
            await withTaskGroup(of: String.self) { group in
                for _ in 0..<4 { group.addTask { threadName() } }
                return await group.reduce(into: [threadName()]) { $0.append($1) }
            }
        }
        #expect(names == Array(repeating: "test-tasks", count: 5), "the body and its child tasks")
    }

    @Test func aSleepEndsNoSoonerThanAskedAndBackOnItsThread() async throws {
        try await withTaskExecutorPreference(executor) {
            let start = ContinuousClock.now
            try await Task.sleep(for: .milliseconds(50))
            #expect(ContinuousClock.now - start >= .milliseconds(50))
            try await Task.sleep(until: .now + .milliseconds(30), clock: .suspending)
            #expect(ContinuousClock.now - start >= .milliseconds(80))
            #expect(threadName() == "test-tasks")
        }
    }

    @Test func sleepsEndInTheOrderOfTheirDeadlines() async {
        let order = await withTaskExecutorPreference(executor) {
            await withTaskGroup(of: Int.self) { group in
                // Asked for longest first, so an executor that ignored the delays would end them so.
                for milliseconds in [900, 300, 10] {
                    group.addTask {
                        try? await Task.sleep(for: .milliseconds(milliseconds))
                        return milliseconds
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(order == [10, 300, 900])
    }

    @Test func cancellingASleepEndsIt() async {
        let sleeper = Task(executorPreference: executor) {
            try await Task.sleep(for: .seconds(3600))
        }
        try? await Task.sleep(for: .milliseconds(50))
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }
}

@Suite struct InvokeAfterTests {
    @Test func aDelayedBodyRunsNoSoonerThanAskedOnTheContextThread() async {
        let executor = GLibMainContextExecutor(name: "test-glib")
        let start = ContinuousClock.now
        let onThread = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            executor.invoke(after: .milliseconds(40)) { continuation.resume(returning: executor.isOnContextThread) }
        }
        #expect(onThread)
        #expect(ContinuousClock.now - start >= .milliseconds(40))
        executor.shutdown()
    }

    /// Past any limit of GLib's millisecond timeouts or of microseconds in `Int64`: the body
    /// waits (and nothing traps on overflow), while one due at once or overdue runs.
    @Test func aHugeDelayWaitsAndANegativeOneRunsAtOnce() async {
        let executor = GLibMainContextExecutor(name: "test-glib")
        let ran = Atomic(0)
        for delay in [
            Duration.seconds(Int64.max), .seconds(Int64(UInt32.max) / 1000 + 1), .seconds(Int64.max / 1_000_000 + 1),
        ] {
            executor.invoke(after: delay) { ran.add(1, ordering: .relaxed) }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            executor.invoke(after: .seconds(-5)) {
                executor.invoke(after: .milliseconds(100)) { continuation.resume() }
            }
        }
        #expect(ran.load(ordering: .relaxed) == 0)
        executor.shutdown()
    }
}
