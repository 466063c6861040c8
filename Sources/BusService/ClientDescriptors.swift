import Glibc

/// Closes descriptors clients passed, on a few threads of their own: a last `close` can block
/// (a TCP socket with `SO_LINGER` and data its peer never reads, a file on a FUSE filesystem
/// that never answers its flush), and no thread of the agent's may wait on a client.
public enum ClientDescriptors {
    /// Threads that close, at most; closes waiting for one, at most. Past that a descriptor
    /// is left open rather than have the caller wait: only a client that already holds every
    /// closing thread stuck gets there.
    static let closers = BoundedReaders(name: "client-close", maximumThreads: 2, maximumWaiting: 1024)

    public static func close(_ descriptors: [Int32]) {
        guard !descriptors.isEmpty else { return }
        _ = closers.start { descriptors.forEach { _ = Glibc.close($0) } }
    }
}
