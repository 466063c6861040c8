/// Polls `probe` until it gives a value or `timeout` has passed, and looks once more after the
/// deadline before giving up.
///
/// The last look is what makes a wait depend on what happened rather than on scheduling: under
/// a sanitizer, with every test running at once, a waiting task can go unscheduled for longer
/// than its timeout (the suites' services start with blocking calls), and a wait that gave up
/// on waking past its deadline reported events that had in fact arrived.
public func poll<Value>(
    timeout: Duration, every interval: Duration = .milliseconds(20), _ probe: () throws -> Value?
) async throws -> Value? {
    let deadline = ContinuousClock.now + timeout
    while true {
        if let value = try probe() { return value }
        guard ContinuousClock.now < deadline else { return nil }
        try await Task.sleep(for: interval)
    }
}
