internal import CGtk
import Dispatch
import GLibRuntime
import Synchronization

/// The thread GTK lives on: it owns GLib's global-default main context, which GTK and GDK
/// attach their sources to, initialises GTK and libadwaita there, and iterates it.
///
/// It is a `SerialExecutor`, so `PickerWindows`, an actor pinned to it, runs its methods and
/// its widgets' signal handlers on this one thread, as the backends' actors run on theirs.
/// Nothing else in the process touches the default context.
final class GtkThread: SerialExecutor, @unchecked Sendable {
    static let shared = GtkThread()

    /// Whether GTK could open the display: written on the thread before the semaphore the
    /// initialiser waits on is signalled, read only after.
    let hasDisplay: Bool

    private final class Outcome: @unchecked Sendable {
        var initialised = false
    }

    /// The GTK thread's main loop: made by the initialiser, run by the thread, quit by `finish()`.
    private let loop: OpaquePointer
    /// Signalled once the thread's main loop has returned.
    private let ended = DispatchSemaphore(value: 0)

    private init() {
        let started = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        nonisolated(unsafe) let loop = g_main_loop_new(g_main_context_default(), 0)!
        self.loop = loop
        let ended = self.ended
        // GLib's log goes to standard error; standard output stays free. GLib accepts this
        // only before its first thread, so it comes before the GTK thread is made.
        g_log_writer_default_set_use_stderr(1)
        GLibThread.detach(name: "gtk") {
            g_main_context_acquire(g_main_context_default())
            outcome.initialised = gtk_init_check() != 0
            if outcome.initialised { adw_init() }
            started.signal()
            g_main_loop_run(loop)
            ended.signal()
        }
        started.wait()
        hasDisplay = outcome.initialised
    }

    /// Ends the thread once GTK has done what the closed windows left queued (their surfaces'
    /// release), and waits until its loop has returned. Called last, before the process exits:
    /// the exit runs the libraries' destructors, and libX11's frees the lock GDK takes for
    /// each X call, which a GTK thread still releasing a surface then crashed on.
    func finish() {
        invoke { [self] in
            let context = g_main_context_default()
            var rounds = 0
            while g_main_context_pending(context) != 0 && rounds < 1000 {
                g_main_context_iteration(context, 0)
                rounds += 1
            }
            g_main_loop_quit(self.loop)
        }
        ended.wait()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        invoke { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func checkIsolated() {
        precondition(g_main_context_is_owner(g_main_context_default()) != 0, "not on the GTK thread")
    }

    /// Runs `body` on the GTK thread, after what is already queued.
    func invoke(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Callback(body)).toOpaque()
        g_idle_add_full(
            G_PRIORITY_DEFAULT,
            { data in
                let callback = Unmanaged<Callback>.fromOpaque(data!).takeUnretainedValue()
                _ = callback.published.load(ordering: .acquiring)
                callback.body()
                return 0  // G_SOURCE_REMOVE
            }, box,
            { data in
                Unmanaged<Callback>.fromOpaque(data!).release()
            })
    }

    /// GLib orders the handoff with its own lock, which ThreadSanitizer cannot see; the release
    /// store and acquire load on `published` state that order in terms it sees (as
    /// GLibRuntime's `SourceCallback` does).
    private final class Callback {
        let body: @Sendable () -> Void
        let published = Atomic(false)
        init(_ body: @escaping @Sendable () -> Void) {
            self.body = body
            published.store(true, ordering: .releasing)
        }
    }
}
