/// Polls `probe` every `interval` until it gives a value, looking `timeout / interval` times
/// and once more at the end.
///
/// The wait is counted in looks, not read off the clock, so that it measures the tests' own
/// progress. Under a sanitizer, with every suite running at once, the two-thread cooperative
/// pool can be held for tens of seconds by the blocking calls that start the suites' services;
/// a wall-clock deadline then passed while neither the waiter nor the task it waited on (a test
/// picker consuming its calls) had run, and the wait failed with the event queued but unread.
/// In a healthy run each look takes `interval`, so the wait lasts about `timeout`.
public func poll<Value>(
    timeout: Duration, every interval: Duration = .milliseconds(20), _ probe: () throws -> Value?
) async throws -> Value? {
    let looks = max(1, Int((timeout / interval).rounded(.up)))
    for _ in 0..<looks {
        if let value = try probe() { return value }
        try await Task.sleep(for: interval)
    }
    return try probe()
}
