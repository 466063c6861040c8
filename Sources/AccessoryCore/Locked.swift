import Glibc

/// A value that several threads share, reached only while its lock is held.
///
/// The standard library's `Mutex` waits on a futex on Linux, which ThreadSanitizer does not
/// follow: it reports every access under such a lock as a race, and a real race would hide
/// among those reports. A `pthread_mutex_t` is what the sanitizer does follow (and what
/// Foundation's `NSLock` wraps, which would link all of Foundation into the binaries).
public final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: sending Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` on the value with the lock held. `body` must not take this lock again.
    public func withLock<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
