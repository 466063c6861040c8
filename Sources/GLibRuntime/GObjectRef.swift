import CGLib
import CGLibShim

/// An owned reference to a GObject, released when the last Swift copy goes away.
///
/// Sendable only so a freshly returned reference can cross a continuation to the actor that
/// will use it; GObjects are used on their main context's thread only.
public final class GObjectRef: @unchecked Sendable {
    public let pointer: OpaquePointer

    /// Takes over a reference the caller owns (a `_finish` or `_new` result).
    public init(adopting pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Adds a reference to an object the caller borrows (a getter result).
    public init(retaining pointer: OpaquePointer) {
        g_object_ref(gpointer(pointer))
        self.pointer = pointer
    }

    deinit {
        g_object_unref(gpointer(pointer))
    }

    public var raw: gpointer { gpointer(pointer) }
}

extension OpaquePointer {
    /// Whether the GObject is an instance of `type` (the `G_TYPE_CHECK_INSTANCE_TYPE` macro).
    public func isA(_ type: GType) -> Bool {
        g_type_check_instance_is_a(UnsafeMutablePointer<GTypeInstance>(self), type) != 0
    }
}

/// The pointers of a `GPtrArray` as `OpaquePointer`s, borrowed.
public func elements(of array: UnsafePointer<GPtrArray>?) -> [OpaquePointer] {
    guard let array, let data = array.pointee.pdata else { return [] }
    return (0..<Int(array.pointee.len)).compactMap { data[$0].map(OpaquePointer.init) }
}

/// The bytes of a `GBytes`, copied.
public func bytes(of value: OpaquePointer?) -> [UInt8] {
    guard let value else { return [] }
    var size: gsize = 0
    guard let data = g_bytes_get_data(value, &size) else { return [] }
    return Array(UnsafeRawBufferPointer(start: data, count: Int(size)))
}

/// A C string borrowed from GLib, copied; `nil` stays `nil`.
public func string(_ pointer: UnsafePointer<CChar>?) -> String? {
    pointer.map { String(cString: $0) }
}

/// `g_object_set` for one property, on a GObject given as an opaque pointer.
public enum GObjectProperty {
    public static func set(_ object: OpaquePointer, _ property: String, _ value: String) {
        cglib_object_set_string(gpointer(object), property, value)
    }

    public static func set(_ object: OpaquePointer, _ property: String, _ value: Bool) {
        cglib_object_set_boolean(gpointer(object), property, value ? 1 : 0)
    }

    public static func set(_ object: OpaquePointer, _ property: String, _ value: UInt32) {
        cglib_object_set_uint(gpointer(object), property, value)
    }

    /// A boxed value such as a `GBytes`; the object takes its own reference.
    public static func set(_ object: OpaquePointer, _ property: String, boxed value: OpaquePointer) {
        cglib_object_set_boxed(gpointer(object), property, UnsafeRawPointer(value))
    }
}

/// Tells whether a GObject has been finalized, without keeping it alive (`g_object_weak_ref`).
public final class WeakReference {
    public private(set) var isGone = false

    public init(_ object: GObjectRef) {
        g_object_weak_ref(
            UnsafeMutablePointer<GObject>(object.pointer),
            { data, _ in
                Unmanaged<WeakReference>.fromOpaque(data!).takeRetainedValue().isGone = true
            }, Unmanaged.passRetained(self).toOpaque())
    }
}

/// Iterates the calling thread's default main context, blocking for events, until `done`
/// holds or `limit` passes. For teardown on a GLib thread, where an object finishes
/// releasing itself through callbacks on its context.
public func iterateThreadDefaultContext(for limit: Duration, until done: () -> Bool) {
    let context = g_main_context_ref_thread_default()
    defer { g_main_context_unref(context) }
    // A timeout source wakes the blocking iteration, so the limit holds without events.
    let tick = g_timeout_source_new(50)
    g_source_set_callback(tick, { _ in 1 }, nil, nil)  // G_SOURCE_CONTINUE
    g_source_attach(tick, context)
    defer {
        g_source_destroy(tick)
        g_source_unref(tick)
    }
    let deadline = ContinuousClock.now + limit
    while !done() && ContinuousClock.now < deadline {
        g_main_context_iteration(context, 1)
    }
}
