internal import CGtk
internal import CGtkShim

/// A Swift closure connected to a GObject signal. GLib holds the box (one retain, taken in
/// `connect`) and releases it through the destroy-notify when the handler is disconnected or
/// the object finalised, so a closed window frees its handlers.
private final class SignalBox {
    let handler: (UnsafeMutableRawPointer?) -> Bool
    init(_ handler: @escaping (UnsafeMutableRawPointer?) -> Bool) { self.handler = handler }
}

private func releaseBox(_ data: UnsafeMutableRawPointer?, _ closure: UnsafeMutablePointer<GClosure>?) {
    guard let data else { return }
    Unmanaged<SignalBox>.fromOpaque(data).release()
}

private func box(_ data: UnsafeMutableRawPointer?) -> SignalBox {
    Unmanaged<SignalBox>.fromOpaque(data!).takeUnretainedValue()
}

/// Runs `handler` on `signal` of `instance` (a handler of shape `(instance, user_data)`).
/// Handlers run on the GTK thread, inside the isolation of the actor that connected them.
func connect(_ instance: UnsafeMutableRawPointer?, _ signal: String, _ handler: @escaping () -> Void) {
    let data = Unmanaged.passRetained(
        SignalBox { _ in
            handler(); return false
        }
    ).toOpaque()
    cgtk_signal_connect(instance, signal, { _, data in _ = box(data).handler(nil) }, data, releaseBox)
}

/// As `connect`, for signals of shape `(instance, pointer, user_data)`, such as `row-selected`.
func connect(
    _ instance: UnsafeMutableRawPointer?, _ signal: String, _ handler: @escaping (UnsafeMutableRawPointer?) -> Void
) {
    let data = Unmanaged.passRetained(
        SignalBox {
            handler($0); return false
        }
    ).toOpaque()
    cgtk_signal_connect_pointer(
        instance, signal, { _, argument, data in _ = box(data).handler(argument) }, data, releaseBox)
}

/// As `connect`, for signals that return a `gboolean`, such as `close-request`.
func connectReturning(_ instance: UnsafeMutableRawPointer?, _ signal: String, _ handler: @escaping () -> Bool) {
    let data = Unmanaged.passRetained(SignalBox { _ in handler() }).toOpaque()
    cgtk_signal_connect_boolean(instance, signal, { _, data in box(data).handler(nil) ? 1 : 0 }, data, releaseBox)
}

/// Runs `handler` when `accelerator` (such as `Escape`) is pressed anywhere in `window`.
func addShortcut(_ window: UnsafeMutableRawPointer?, _ accelerator: String, _ handler: @escaping () -> Void) {
    let data = Unmanaged.passRetained(
        SignalBox { _ in
            handler(); return true
        }
    ).toOpaque()
    cgtk_add_shortcut(window, accelerator, { _, data in box(data).handler(nil) ? 1 : 0 }, data) { data in
        guard let data else { return }
        Unmanaged<SignalBox>.fromOpaque(data).release()
    }
}
