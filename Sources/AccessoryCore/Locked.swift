import Foundation

/// A value that several threads share, reached only while its lock is held.
///
/// The standard library's `Mutex` waits on a futex on Linux, which ThreadSanitizer does not
/// follow: it reports every access under such a lock as a race, and a real race would hide
/// among those reports. `NSLock` is a `pthread_mutex_t`, which the sanitizer does follow.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    public init(_ value: sending Value) {
        self.value = value
    }

    /// Runs `body` on the value with the lock held. `body` must not take this lock again.
    public func withLock<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
