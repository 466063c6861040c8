import CGLib
import CGLibShim

/// Runs a GIO `_async` function and awaits its `_finish`, on the caller's actor.
///
/// `start` receives a `GCancellable`, the C callback and its user data, and must pass all three
/// to the `_async` function. `finish` calls the `_finish` function with the source object, the
/// result and a `GError **`, returning `nil` on failure. The callback takes the retained call
/// back exactly once; task cancellation cancels the `GCancellable`, and GIO then finishes the
/// call with `G_IO_ERROR_CANCELLED`.
///
/// Call it from an actor running on the GLib main context that owns the objects involved: the
/// `_async` function records the calling thread's default main context for its callback.
public func gAsync<T: Sendable>(
    isolation: isolated (any Actor)? = #isolation,
    _ operation: String,
    start: (_ cancellable: UnsafeMutablePointer<GCancellable>, _ callback: GAsyncReadyCallback, _ userData: gpointer) ->
        Void,
    finish:
        @escaping (
            _ source: UnsafeMutablePointer<GObject>?, _ result: OpaquePointer?,
            _ error: UnsafeMutablePointer<UnsafeMutablePointer<GError>?>
        ) -> T?
) async throws(GLibError) -> T {
    let cancellable = UncheckedSendable(g_cancellable_new()!)
    defer { g_object_unref(gpointer(cancellable.value)) }
    do {
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation(isolation: isolation) { continuation in
                let call = AsyncCall(operation: operation, finish: finish, continuation: continuation)
                start(
                    cancellable.value,
                    { source, result, userData in
                        let call =
                            Unmanaged<AnyObject>.fromOpaque(userData!).takeRetainedValue() as! any AsyncCompleting
                        call.complete(source: source, result: result)
                    }, Unmanaged.passRetained(call as AnyObject).toOpaque())
            }
        } onCancel: {
            g_cancellable_cancel(cancellable.value)
        }
    } catch let error as GLibError {
        throw error
    } catch {
        throw GLibError(domain: "accessory-setup", code: 0, message: "\(operation): \(error)")
    }
}

private protocol AsyncCompleting: AnyObject {
    func complete(source: UnsafeMutablePointer<GObject>?, result: OpaquePointer?)
}

private final class AsyncCall<T: Sendable>: AsyncCompleting {
    let operation: String
    let finish:
        (UnsafeMutablePointer<GObject>?, OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<GError>?>) -> T?
    let continuation: CheckedContinuation<T, any Error>

    init(
        operation: String,
        finish:
            @escaping (
                UnsafeMutablePointer<GObject>?, OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<GError>?>
            ) -> T?,
        continuation: CheckedContinuation<T, any Error>
    ) {
        self.operation = operation
        self.finish = finish
        self.continuation = continuation
    }

    func complete(source: UnsafeMutablePointer<GObject>?, result: OpaquePointer?) {
        var error: UnsafeMutablePointer<GError>?
        if let value = finish(source, result, &error), error == nil {
            continuation.resume(returning: value)
        } else {
            continuation.resume(throwing: GLibError(consuming: error, operation: operation))
        }
    }
}

/// How a `waitForSignal` ended.
public enum SignalWait<T: Sendable>: Sendable {
    case fired(T)
    case timedOut
    /// The waiting task was cancelled.
    case cancelled

    /// The value the handlers fired with; `nil` when the wait timed out or was cancelled.
    public var value: T? {
        if case .fired(let value) = self { value } else { nil }
    }
}

/// Waits on the caller's GLib thread until `install`'s handlers call `fire` or `timeout` passes.
///
/// `install` connects the signals to watch and returns their connections; they are
/// disconnected as soon as the wait ends. A task cancelled before or during the wait ends it
/// with `.cancelled`, which is never mistaken for a timeout.
public func waitForSignal<T: Sendable>(
    isolation: isolated (any Actor)? = #isolation,
    timeout: Duration,
    install: (_ fire: @escaping (T) -> Void) -> [SignalConnection]
) async -> SignalWait<T> {
    let context = UncheckedSendable(g_main_context_ref_thread_default()!)
    defer { g_main_context_unref(context.value) }
    let box = UncheckedSendable(WaitBox<T>())
    return await withTaskCancellationHandler {
        await withCheckedContinuation(isolation: isolation) {
            (continuation: CheckedContinuation<SignalWait<T>, Never>) in
            let wait = box.value
            wait.continuation = continuation
            guard !Task.isCancelled else {
                wait.finish(.cancelled)
                return
            }
            wait.connections = install { wait.finish(.fired($0)) }
            let milliseconds = timeout.saturatingMilliseconds(as: UInt32.self)
            wait.timeout = attachSource(g_timeout_source_new(milliseconds), to: context.value) {
                wait.finish(.timedOut)
            }
        }
    } onCancel: {
        // Hop to the GLib thread, where the wait lives.
        g_source_unref(attachSource(g_idle_source_new(), to: context.value) { box.value.finish(.cancelled) })
    }
}

extension SignalWait: Equatable where T: Equatable {}

/// Runs `body` in a task of its own and waits for it to end, so that cancelling the caller
/// cannot cut it short: for cleanup that must finish (undoing a failed join, stopping
/// notifications, disconnecting) even in a task that is being cancelled.
public func runToCompletion<T: Sendable>(_ body: @escaping @Sendable () async -> T) async -> T {
    await Task { await body() }.value
}

extension Duration {
    /// The longest wait a GLib timeout source can express, `G_MAXUINT` milliseconds (about 49.7
    /// days). Longer waits are cut to it, since `Task.sleep` traps when its deadline passes `Int64` seconds.
    public static let longestWait = Duration.milliseconds(UInt32.max)

    /// Whole milliseconds as the integer type a GLib call takes (`guint`, `gint`), saturating:
    /// a timeout too long for it waits as long as GLib can instead of trapping on overflow, and a
    /// negative one is 0.
    public func saturatingMilliseconds<T: FixedWidthInteger>(as _: T.Type) -> T {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return T.max }
        let (total, carry) = whole.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return carry ? T.max : T(clamping: total)
    }
}

private final class WaitBox<T: Sendable> {
    var continuation: CheckedContinuation<SignalWait<T>, Never>?
    var connections: [SignalConnection] = []
    var timeout: UnsafeMutablePointer<GSource>?

    func finish(_ value: SignalWait<T>) {
        guard let continuation else { return }
        self.continuation = nil
        connections.forEach { $0.disconnect() }
        connections = []
        if let timeout {
            g_source_destroy(timeout)
            g_source_unref(timeout)
            self.timeout = nil
        }
        continuation.resume(returning: value)
    }
}

/// Attaches a one-shot source running `body` on `context`; returns the source, still referenced.
private func attachSource(
    _ source: UnsafeMutablePointer<GSource>?, to context: OpaquePointer, _ body: @escaping () -> Void
) -> UnsafeMutablePointer<GSource>? {
    SourceCallback(body).install(on: source)
    g_source_attach(source, context)
    return source
}
