import AccessoryCore

/// Where the method calls of the exported objects given to it arrive, each with the route its
/// exporter gave the object, in the order the bus delivered them: a service of many objects
/// answers them in one order, and knows each call's object without reading its names. Ends
/// when the connection closes.
public final class CallQueue<Route: Sendable>: Sendable {
    public let calls: AsyncStream<(route: Route, call: MethodCall)>
    private let continuation: AsyncStream<(route: Route, call: MethodCall)>.Continuation

    /// A queue of `bus`, which ends it when it closes.
    public init(of bus: BusConnection) async {
        (calls, continuation) = AsyncStream.makeStream()
        let continuation = continuation
        await bus.onClose { continuation.finish() }
    }

    /// Takes `call` for `route`; false once the queue has ended.
    func take(_ call: MethodCall, for route: Route) -> Bool {
        if case .terminated = continuation.yield((route, call)) { return false }
        return true
    }
}

extension BusConnection {
    /// Exports `object`; its calls arrive in `queue` under `route`.
    public func export<Route: Sendable>(_ object: ExportedObject, to queue: CallQueue<Route>, as route: Route)
        throws(BusError)
    {
        try export(object) { call in queue.take(call, for: route) }
    }

    /// Exports `object` alone; its calls, and no other object's, arrive in the returned stream.
    public func export(_ object: ExportedObject) throws(BusError) -> AsyncStream<MethodCall> {
        let (calls, continuation) = AsyncStream.makeStream(of: MethodCall.self)
        onClose { continuation.finish() }
        try export(object) { call in
            if case .terminated = continuation.yield(call) { return false }
            return true
        }
        return calls
    }
}
