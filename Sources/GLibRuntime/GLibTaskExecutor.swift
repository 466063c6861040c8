@_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency

/// A default executor for Swift tasks that runs them, and wakes their sleeps, on one GLib thread.
///
/// On Linux the standard default executor is libdispatch's worker pool, whose monitor wakes
/// the process once a second for as long as it lives, work or none (`_dispatch_workq_init_once`
/// in libdispatch has no switch for it). A service that waits on the bus for hours should cost
/// nothing while it waits: on this executor a process with nothing to do sleeps in `poll`
/// until a job or a timer is due. One thread suits a process whose work is waiting on others
/// (D-Bus peers, NetworkManager, BlueZ); it does not suit CPU-bound work.
///
/// Swift 6.3 has no public way to replace the default executor; this uses the experimental
/// `ExecutorFactory` interface (`_createExecutors`), and so is tied to the toolchain it builds
/// with. The runtime's older `swift_task_enqueueGlobal_hook` would not do: sleeps bypass it.
public enum GLibTaskExecutor {
    /// Makes one the process's default executor, keeping the platform's main executor. Call it
    /// first in `main.swift`, before any task starts.
    public static func makeDefault() {
        _createExecutors(factory: Factory.self)
    }

    /// A new one with a thread of its own, for `withTaskExecutorPreference`. Its thread ends
    /// when it is released, and the jobs still waiting then never run: keep it while tasks use it.
    public static func make(name: String) -> any TaskExecutor {
        GLibThreadTaskExecutor(name: name)
    }

    private enum Factory: ExecutorFactory {
        static var mainExecutor: any MainExecutor { PlatformExecutorFactory.mainExecutor }
        static let defaultExecutor: any TaskExecutor = GLibThreadTaskExecutor(name: "tasks")
    }
}

/// Runs jobs, at once or when a delay has passed, on the thread of a GLib main context.
final class GLibThreadTaskExecutor: TaskExecutor, SchedulingExecutor, @unchecked Sendable {
    // Used as a thread only: jobs run on it with no serial executor (the generic one).
    private let thread: GLibMainContextExecutor

    /// Starts the thread. Its context is not the thread's default one: a GLib object a task
    /// makes on it delivers its callbacks as on any other thread without a loop of its own.
    init(name: String) {
        thread = GLibMainContextExecutor(name: name, threadDefault: false)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        thread.invoke { job.runSynchronously(on: executor) }
    }

    func enqueue<C: Clock>(_ job: consuming ExecutorJob, after delay: C.Duration, tolerance: C.Duration?, clock: C) {
        guard let delay = delay as? Duration else {
            // A clock counting in a unit of its own: the platform's executor knows how to wait for it.
            Self.platform.enqueue(job, after: delay, tolerance: tolerance, clock: clock)
            return
        }
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        thread.invoke(after: delay) { job.runSynchronously(on: executor) }
    }

    func enqueue<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C) {
        enqueue(job, after: clock.now.duration(to: instant), tolerance: tolerance, clock: clock)
    }

    private static var platform: any SchedulingExecutor {
        PlatformExecutorFactory.defaultExecutor as! any SchedulingExecutor
    }
}
