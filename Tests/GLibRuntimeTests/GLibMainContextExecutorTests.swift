import CGLib
import Foundation
import GLibRuntime
import Testing

/// An actor pinned to the GLib thread, as the backends are.
private actor Pinned {
    let executor: GLibMainContextExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    init(_ executor: GLibMainContextExecutor) { self.executor = executor }

    func onContextThread() -> Bool { executor.isOnContextThread }

    /// A GLib timeout on this thread's default context, awaited through `waitForSignal`'s machinery.
    func sleepThroughGLib(milliseconds: UInt32) async -> SignalWait<Bool> {
        await sleepThroughGLib(for: .milliseconds(Int(milliseconds)))
    }

    func sleepThroughGLib(for duration: Duration) async -> SignalWait<Bool> {
        await waitForSignal(timeout: duration) { (_: @escaping (Bool) -> Void) in [] }
    }

    func threadDefaultContextIsOurs() -> Bool {
        guard let context = g_main_context_ref_thread_default() else { return false }
        defer { g_main_context_unref(context) }
        return g_main_context_is_owner(context) != 0
    }
}

@Suite struct GLibMainContextExecutorTests {
    @Test func actorMethodsRunOnTheContextThread() async {
        let executor = GLibMainContextExecutor(name: "test-glib")
        let actor = Pinned(executor)
        #expect(await actor.onContextThread())
        #expect(await actor.threadDefaultContextIsOurs())
        #expect(!executor.isOnContextThread)
        executor.shutdown()
    }

    @Test func waitTimesOutThroughAGLibTimeout() async {
        let executor = GLibMainContextExecutor(name: "test-glib")
        let actor = Pinned(executor)
        let start = ContinuousClock.now
        #expect(await actor.sleepThroughGLib(milliseconds: 50) == .timedOut)
        #expect(ContinuousClock.now - start >= .milliseconds(50))
        #expect(await actor.onContextThread(), "the actor resumes on its thread")
        executor.shutdown()
    }

    @Test func cancellingAWaitEndsIt() async {
        let executor = GLibMainContextExecutor(name: "test-glib")
        let actor = Pinned(executor)
        let task = Task { await actor.sleepThroughGLib(milliseconds: 60_000) }
        try? await Task.sleep(for: .milliseconds(50))
        task.cancel()
        #expect(await task.value == .cancelled, "a cancelled wait is not a timeout")
        executor.shutdown()
    }

    @Test func waitInAnAlreadyCancelledTaskEndsAtOnce() async {
        let executor = GLibMainContextExecutor(name: "test-glib")
        let actor = Pinned(executor)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await actor.sleepThroughGLib(milliseconds: 60_000)
        }
        #expect(await task.value == .cancelled)
        executor.shutdown()
    }

    @Test func runToCompletionFinishesInACancelledTask() async {
        let finished = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await runToCompletion {
                try? await Task.sleep(for: .milliseconds(20))
                return !Task.isCancelled
            }
        }.value
        #expect(finished, "the body ran in a task of its own, which nobody cancelled")
    }

    @Test func invokeRunsInOrder() async {
        let executor = GLibMainContextExecutor(name: "test-glib")
        let order = await withCheckedContinuation { (continuation: CheckedContinuation<[Int], Never>) in
            let box = UncheckedSendable(NSMutableArray())
            for index in 0..<5 {
                executor.invoke {
                    box.value.add(index)
                    if index == 4 { continuation.resume(returning: box.value.compactMap { $0 as? Int }) }
                }
            }
        }
        #expect(order == [0, 1, 2, 3, 4])
        executor.shutdown()
    }

    /// Many short rounds, so some resume before the caller suspends: under ThreadSanitizer a
    /// handoff the sanitizer cannot see is reported as a race on the object's fields.
    @Test func runReturnsWhatTheBodyMadeOnTheContextThread() async {
        final class Made: @unchecked Sendable {
            var thread = false
            var round = 0
        }
        let executor = GLibMainContextExecutor(name: "test-glib")
        for round in 0..<200 {
            let made = await executor.run {
                let made = Made()
                made.thread = executor.isOnContextThread
                made.round = round
                return made
            }
            #expect(made.thread && made.round == round)
        }
        executor.shutdown()
    }
}

@Suite struct WaitForSignalBoundsTests {
    private actor Waiter {
        let executor: GLibMainContextExecutor
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        init(_ executor: GLibMainContextExecutor) { self.executor = executor }

        func wait(_ timeout: Duration) async -> SignalWait<Bool> {
            await waitForSignal(timeout: timeout) { (_: @escaping (Bool) -> Void) in [] }
        }
    }

    /// A library caller may pass any `Duration`; the wait saturates at GLib's longest instead of trapping.
    @Test(arguments: [Duration.seconds(Int64.max), .seconds(Int64.max / 1000 + 1), .seconds(UInt32.max)])
    func aHugeTimeoutWaitsUntilCancelled(timeout: Duration) async {
        let executor = GLibMainContextExecutor(name: "test-glib")
        let waiter = Waiter(executor)
        let task = Task { await waiter.wait(timeout) }
        try? await Task.sleep(for: .milliseconds(100))
        task.cancel()
        #expect(await task.value == .cancelled)
        executor.shutdown()
    }
}
