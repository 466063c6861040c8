import CGLib
import CGLibShim

/// A connected GObject signal handler; `disconnect()` removes it (GLib then releases the
/// Swift closure through the destroy notify).
public final class SignalConnection {
    private let object: GObjectRef
    private var handlerID: gulong

    init(object: GObjectRef, handlerID: gulong) {
        self.object = object
        self.handlerID = handlerID
    }

    public func disconnect() {
        guard handlerID != 0 else { return }
        g_signal_handler_disconnect(object.raw, handlerID)
        handlerID = 0
    }

    deinit { disconnect() }
}

private final class HandlerBox<Handler> {
    let handler: Handler
    init(_ handler: Handler) { self.handler = handler }
}

private let releaseBox: GClosureNotify = { data, _ in
    Unmanaged<AnyObject>.fromOpaque(data!).release()
}

extension GObjectRef {
    /// Connects a signal whose one argument is a pointer (`access-point-added`, `notify::…`).
    public func connect(_ signal: String, _ handler: @escaping (OpaquePointer?) -> Void) -> SignalConnection {
        let box = Unmanaged.passRetained(HandlerBox(handler) as AnyObject).toOpaque()
        let id = cglib_signal_connect_pointer(
            raw, signal,
            { _, argument, data in
                (Unmanaged<AnyObject>.fromOpaque(data!).takeUnretainedValue() as! HandlerBox<(OpaquePointer?) -> Void>)
                    .handler(argument.map(OpaquePointer.init))
            }, box, releaseBox)
        return SignalConnection(object: self, handlerID: id)
    }

    /// Connects a signal with two `guint` arguments (`NMActiveConnection::state-changed`).
    public func connect(_ signal: String, _ handler: @escaping (UInt32, UInt32) -> Void) -> SignalConnection {
        let box = Unmanaged.passRetained(HandlerBox(handler) as AnyObject).toOpaque()
        let id = cglib_signal_connect_uint2(
            raw, signal,
            { _, first, second, data in
                (Unmanaged<AnyObject>.fromOpaque(data!).takeUnretainedValue() as! HandlerBox<(UInt32, UInt32) -> Void>)
                    .handler(first, second)
            }, box, releaseBox)
        return SignalConnection(object: self, handlerID: id)
    }

    /// Connects a signal with three `guint` arguments (`NMDevice::state-changed`).
    public func connect(_ signal: String, _ handler: @escaping (UInt32, UInt32, UInt32) -> Void) -> SignalConnection {
        let box = Unmanaged.passRetained(HandlerBox(handler) as AnyObject).toOpaque()
        let id = cglib_signal_connect_uint3(
            raw, signal,
            { _, first, second, third, data in
                (Unmanaged<AnyObject>.fromOpaque(data!).takeUnretainedValue()
                    as! HandlerBox<(UInt32, UInt32, UInt32) -> Void>)
                    .handler(first, second, third)
            }, box, releaseBox)
        return SignalConnection(object: self, handlerID: id)
    }
}
