import AccessoryCore
import GLibRuntime

/// Blocking reads of what a client controls (another process's files, a descriptor it passed),
/// each on one of a few threads of their own, and each answered by its deadline whether or not
/// the read returns. A read stuck on a filesystem that never answers (a FUSE filesystem the
/// client mounted) keeps its thread: the threads are bounded, not the reads, so a stuck one
/// costs a thread of the pool and its caller its time, and nobody else anything until the pool
/// is full, when reads wait their time for a thread and then fail.
///
/// GLib threads, not libdispatch's pool (which grows a thread for every one that blocks): the
/// bus's thread and the Swift pool's never wait on a client's filesystem.
public final class BoundedReaders: Sendable {
    /// How a read ended.
    public enum Outcome<Value: Sendable>: Sendable {
        case read(Value)
        /// Not read within its time: stuck, or waiting for a thread.
        case timedOut
        /// Too many reads wait for a thread already.
        case busy
    }

    private struct Queue {
        var running = 0
        var waiting: [@Sendable () -> Void] = []
    }

    private let name: String
    private let maximumThreads: Int
    private let maximumWaiting: Int
    private let queue = Locked(Queue())

    /// At most `maximumThreads` threads, named `name`, and `maximumWaiting` reads waiting.
    public init(name: String, maximumThreads: Int, maximumWaiting: Int) {
        self.name = name
        self.maximumThreads = maximumThreads
        self.maximumWaiting = maximumWaiting
    }

    /// Runs `read` on a reader thread, now or when one is free, and returns what it returned;
    /// `timedOut` once `time` has passed first. A read whose time passed while it waited, or
    /// that found the pool full, is not started: `skipped` runs instead, so that what the read
    /// would have released (a descriptor, say) is released. Exactly one of the two runs.
    public func run<Value: Sendable>(
        within time: Duration, skipped: @escaping @Sendable () -> Void = {},
        _ read: @escaping @Sendable () -> Value
    ) async -> Outcome<Value> {
        let answer = Answer<Value>()
        return await withCheckedContinuation { continuation in
            answer.start(continuation)
            let queued = submit {
                guard !answer.isGiven else { return skipped() }
                answer.give(.read(read()))
            }
            guard queued else {
                skipped()
                answer.give(.busy)
                return
            }
            answer.timeOut(
                after: Task {
                    try? await Task.sleep(for: time)
                    guard !Task.isCancelled else { return }
                    answer.give(.timedOut)
                })
        }
    }

    /// Runs `job` on a thread of the pool without waiting for it; `false` (and `job` not run)
    /// when too many wait already.
    public func start(_ job: @escaping @Sendable () -> Void) -> Bool {
        submit(job)
    }

    /// The reader threads running now, for tests.
    public var runningThreads: Int { queue.withLock { $0.running } }

    /// Runs `job` on a reader thread, now or when one is free; `false` when too many wait. A
    /// thread takes the next waiting job when it is done with its own, and ends when none waits.
    private func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        let (maximumThreads, maximumWaiting) = (self.maximumThreads, self.maximumWaiting)
        let start: Bool? = queue.withLock { queue in
            if queue.running < maximumThreads {
                queue.running += 1
                return true
            }
            guard queue.waiting.count < maximumWaiting else { return nil }
            queue.waiting.append(job)
            return false
        }
        guard let start else { return false }
        if start {
            let queue = self.queue
            GLibThread.detach(name: name) {
                var next: (@Sendable () -> Void)? = job
                while let current = next {
                    current()
                    next = queue.withLock { queue in
                        guard !queue.waiting.isEmpty else {
                            queue.running -= 1
                            return nil
                        }
                        return queue.waiting.removeFirst()
                    }
                }
            }
        }
        return true
    }

    /// One read's outcome, given once: by its reader or by its timeout, whichever comes first.
    private final class Answer<Value: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Outcome<Value>, Never>?
            var timeout: Task<Void, Never>?
            var given = false
        }
        private let state = Locked(State())

        func start(_ continuation: CheckedContinuation<Outcome<Value>, Never>) {
            state.withLock { $0.continuation = continuation }
        }

        var isGiven: Bool { state.withLock { $0.given } }

        func timeOut(after task: Task<Void, Never>) {
            let given = state.withLock { state in
                state.timeout = task
                return state.given
            }
            if given { task.cancel() }
        }

        func give(_ outcome: Outcome<Value>) {
            let pending = state.withLock { state -> State? in
                guard !state.given else { return nil }
                defer { state = State(given: true) }
                return state
            }
            pending?.timeout?.cancel()
            pending?.continuation?.resume(returning: outcome)
        }
    }
}
