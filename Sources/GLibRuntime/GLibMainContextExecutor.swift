import CGLib
import Dispatch
import Synchronization

/// A serial executor that runs jobs on one dedicated thread iterating a private `GMainContext`.
///
/// libnm and GDBus deliver every callback and signal on the main context that was the
/// thread default when an object was created. A backend actor whose `unownedExecutor` is this
/// executor therefore runs its methods, its GLib callbacks and its signal handlers on the
/// same thread, and GObject pointers never cross threads.
public final class GLibMainContextExecutor: SerialExecutor, @unchecked Sendable {
    // Immutable after init; the only calls made on them from other threads
    // (g_source_attach, g_main_context_wakeup, g_main_loop_quit) are thread-safe in GLib.
    private let context: OpaquePointer
    private let loop: OpaquePointer
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the thread; `name` shows in debuggers and `ps -L`. With `threadDefault`, as the
    /// backends need, the context is the thread's default one, where GLib objects made on the
    /// thread deliver their callbacks.
    public init(name: String, threadDefault: Bool = true) {
        context = g_main_context_new()
        loop = g_main_loop_new(context, 0)
        let started = DispatchSemaphore(value: 0)
        // The thread holds references of its own: the executor may be released (even from a
        // job on this very thread) while the loop still runs.
        let pointers = UncheckedSendable((g_main_context_ref(context)!, g_main_loop_ref(loop)!))
        let finished = self.finished
        GLibThread.detach(name: name) {
            let (context, loop) = pointers.value
            if threadDefault { g_main_context_push_thread_default(context) }
            started.signal()
            g_main_loop_run(loop)
            // Run what was queued before the quit, so no continuation is left hanging.
            while g_main_context_iteration(context, 0) != 0 {}
            if threadDefault { g_main_context_pop_thread_default(context) }
            g_main_loop_unref(loop)
            g_main_context_unref(context)
            finished.signal()
        }
        started.wait()
    }

    /// Ends the thread, if `shutdown()` has not, without waiting for it: the last reference
    /// may be dropped on that thread.
    deinit {
        let loop = UncheckedSendable(self.loop)
        invoke { g_main_loop_quit(loop.value) }
        g_main_loop_unref(loop.value)
        g_main_context_unref(context)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        invoke { job.runSynchronously(on: executor) }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func checkIsolated() {
        precondition(isOnContextThread, "not on the GLib main context thread of this executor")
    }

    /// Whether the calling thread is the one iterating this executor's main context.
    public var isOnContextThread: Bool {
        g_main_context_is_owner(context) != 0
    }

    /// Runs `body` on the context thread, after what is already queued. Never inline,
    /// even when called on that thread, so it cannot re-enter a running job.
    public func invoke(_ body: @escaping @Sendable () -> Void) {
        let source = g_idle_source_new()
        g_source_set_priority(source, G_PRIORITY_DEFAULT)
        SourceCallback(body).install(on: source)
        g_source_attach(source, context)
        g_source_unref(source)
    }

    /// Runs `body` on the context thread once `delay` has passed on the monotonic clock, to the
    /// microsecond and with no upper limit; a delay of zero or less runs it as `invoke` does.
    public func invoke(after delay: Duration, _ body: @escaping @Sendable () -> Void) {
        let source = g_source_new(readyTimeSourceFunctions, guint(MemoryLayout<GSource>.size))
        let readyTime = Int64(g_get_monotonic_time()).addingSaturating(max(delay, .zero).saturatingMicroseconds)
        g_source_set_ready_time(source, gint64(readyTime))
        g_source_set_priority(source, G_PRIORITY_DEFAULT)
        SourceCallback(body).install(on: source)
        g_source_attach(source, context)
        g_source_unref(source)
    }

    /// Runs `body` on the context thread and hands its result back to the awaiting caller.
    ///
    /// The result crosses threads through `Handoff`'s release/acquire pair rather than the
    /// continuation alone: when the thread resumes the continuation before the caller has
    /// suspended, the runtime's own ordering is one ThreadSanitizer does not see.
    public func run<Value>(_ body: @escaping @Sendable () -> Value) async -> Value {
        let handoff = Handoff<Value>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            invoke {
                handoff.put(body())
                continuation.resume()
            }
        }
        return handoff.take()
    }

    /// Stops the loop after the queued jobs have run and waits for the thread to end.
    public func shutdown() {
        let loop = UncheckedSendable(self.loop)
        invoke { g_main_loop_quit(loop.value) }
        finished.wait()
    }
}

/// A closure a GLib source runs once on its context's thread, made on any thread.
///
/// GLib orders the handoff (attaching and dispatching a source take the context's lock), but
/// its futex-based `GMutex` is invisible to ThreadSanitizer, which then reports the closure's
/// creation and its call as a race. The release store and acquire load on `published` state
/// the same order in terms the sanitizer sees.
final class SourceCallback {
    private let body: () -> Void
    private let published = Atomic(false)

    init(_ body: @escaping () -> Void) {
        self.body = body
        published.store(true, ordering: .releasing)
    }

    /// Makes this the source's callback (returning `G_SOURCE_REMOVE`), held until GLib drops it.
    func install(on source: UnsafeMutablePointer<GSource>?) {
        g_source_set_callback(
            source,
            { data in
                let callback = Unmanaged<SourceCallback>.fromOpaque(data!).takeUnretainedValue()
                _ = callback.published.load(ordering: .acquiring)
                callback.body()
                return 0  // G_SOURCE_REMOVE
            }, Unmanaged.passRetained(self).toOpaque(),
            { data in
                Unmanaged<SourceCallback>.fromOpaque(data!).release()
            })
    }
}

/// A source with no test of its own: GLib dispatches it once its ready time
/// (`g_source_set_ready_time`) has come, and `dispatch` calls the callback it was given.
/// `g_source_new` keeps the pointer, so the table lives as long as the process.
private nonisolated(unsafe) let readyTimeSourceFunctions: UnsafeMutablePointer<GSourceFuncs> = {
    let functions = UnsafeMutablePointer<GSourceFuncs>.allocate(capacity: 1)
    functions.initialize(
        to: GSourceFuncs(
            prepare: nil, check: nil,
            dispatch: { _, callback, data in callback?(data) ?? 0 },
            finalize: nil, closure_callback: nil, closure_marshal: nil))
    return functions
}()

extension Duration {
    /// Whole microseconds, rounded up so that a wait never ends early, saturating at `Int64`'s
    /// limits; what `g_get_monotonic_time` counts in.
    var saturatingMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let fraction = attoseconds / 1_000_000_000_000 + (attoseconds % 1_000_000_000_000 > 0 ? 1 : 0)
        return whole.addingSaturating(fraction)
    }
}

extension Int64 {
    func addingSaturating(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other < 0 ? .min : .max) : sum
    }
}

/// Threads made by GLib (`g_thread_new`), which names them for debuggers and `ps -L`.
public enum GLibThread {
    /// Runs `body` on a new thread that nothing joins; `body` says itself when it is done.
    public static func detach(name: String, _ body: @escaping @Sendable () -> Void) {
        g_thread_unref(
            g_thread_new(
                name,
                { data in
                    Unmanaged<Body>.fromOpaque(data!).takeRetainedValue().run()
                    return nil
                }, Unmanaged.passRetained(Body(body)).toOpaque()))
    }

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}

/// One value written on one thread and then read on another, ordered by `ready`.
private final class Handoff<Value>: @unchecked Sendable {
    private var value: Value?
    private let ready = Atomic(false)

    func put(_ value: Value) {
        self.value = value
        ready.store(true, ordering: .releasing)
    }

    func take() -> Value {
        precondition(ready.load(ordering: .acquiring), "the value was taken before it was put")
        return value!
    }
}

/// Carries a value the compiler cannot prove Sendable across a boundary where it is safe:
/// a pointer handed to the thread that alone will use it.
public struct UncheckedSendable<Value>: @unchecked Sendable {
    public let value: Value
    public init(_ value: Value) { self.value = value }
}
