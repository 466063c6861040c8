import AccessoryCore
import CGLib
import CGLibShim
import DBusValues
import GLibRuntime
import Glibc

/// Which application a peer on the bus is, established from its connection as xdg-desktop-portal
/// establishes it (`xdp_connection_get_pidfd` and `xdp_app_info_flatpak_new`), never from
/// anything the peer says.
///
/// The facts relied on, from xdg-desktop-portal's and flatpak's sources:
/// - The bus daemon knows the process behind a connection (`GetConnectionCredentials`:
///   `ProcessID`, and `ProcessFD`, a pidfd of it, from daemons that take it from the kernel's
///   `SO_PEERPIDFD`: dbus-broker, dbus-daemon 1.15 and later; else `pidfd_open` of the pid).
/// - Every Flatpak sandbox has `/.flatpak-info`, a GLib key file flatpak writes when it starts
///   the sandbox (`flatpak-run.c`): `[Application]` (`[Runtime]` for a runtime run on its own)
///   `name=` the application id, and `[Instance]` `instance-id=`. It is a real file in the
///   sandbox's root with the same data bind-mounted read-only over it, so that it can be read
///   through `/proc/PID/root` even while the sandbox is torn down; the sandbox cannot change
///   it, and flatpak forbids user namespaces inside the sandbox so that it cannot build a root
///   of its own with another one.
/// - A process whose root has no `/.flatpak-info` (`ENOENT`) is not a Flatpak sandbox; any other
///   failure to read it is a failure, never a host process.
/// - A sandboxed app reaches the bus directly or through flatpak's `xdg-dbus-proxy`, which
///   flatpak runs under bubblewrap with the same `/.flatpak-info` (`flatpak-run-dbus.c`);
///   either way the connection's process has it.
/// - A valid id is one `flatpak_is_valid_name` accepts (`ApplicationID`).
///
/// A process on the host can build a sandbox of its own (bubblewrap, a container) with any
/// `/.flatpak-info` and so claim any application id. That gains it nothing: a host process of a
/// user already sees and acts on all of that user's records, while as a "sandboxed"
/// application it sees only those of the id it claims, and may neither register a picker nor
/// pass its own profile. Snaps and other containers without `/.flatpak-info` count as host
/// processes, as they do for xdg-desktop-portal before its snap support.
public enum ApplicationIdentity: Sendable, Hashable, CustomStringConvertible {
    /// A process outside any Flatpak sandbox.
    case host
    /// A Flatpak sandbox's application, by its id (`org.example.AcmePlug`).
    case sandboxed(String)
    /// Nothing could be established (no process id, the process gone, its `/.flatpak-info`
    /// unreadable or invalid); `reason` says why, for the log. Callers treat it as the most
    /// restricted kind.
    case unidentified(reason: String)

    public var description: String {
        switch self {
        case .host: "a host process"
        case .sandboxed(let id): "the sandboxed application \(id)"
        case .unidentified(let reason): "unidentified (\(reason))"
        }
    }

    /// The most of a `/.flatpak-info` that is read; flatpak's are a few KiB.
    public static let flatpakInfoLimit = 64 << 10
    /// How long reading a process's `/.flatpak-info` may take: a root on a filesystem that
    /// never answers (FUSE) costs one lookup this long, and a thread, never the bus's own.
    public static let readingTime: Duration = .seconds(5)

    /// What `.flatpak-info` in the directory `root` (a process's `/proc/PID/root`, opened) says:
    /// `host` when there is none; `unidentified` when it is a symbolic link (not followed), not
    /// a regular file, larger than `flatpakInfoLimit`, unreadable, or invalid.
    public static func readFlatpakInfo(underRoot root: Int32) -> ApplicationIdentity {
        let file = openat(root, ".flatpak-info", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard file >= 0 else {
            let error = errno
            switch error {
            case ENOENT: return .host
            case ELOOP: return .unidentified(reason: "its /.flatpak-info is a symbolic link")
            default: return .unidentified(reason: "its /.flatpak-info cannot be opened: \(describe(error))")
            }
        }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            return .unidentified(reason: "its /.flatpak-info is not a regular file")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while bytes.count <= flatpakInfoLimit {
            let got = chunk.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else {
                return .unidentified(reason: "its /.flatpak-info cannot be read: \(describe(errno))")
            }
            if got == 0 { return parseFlatpakInfo(bytes) }
            bytes += chunk[..<got]
        }
        return .unidentified(reason: "its /.flatpak-info is larger than \(flatpakInfoLimit) bytes")
    }

    /// What a `.flatpak-info`'s bytes say, parsed as flatpak and xdg-desktop-portal parse it,
    /// with GLib's `GKeyFile`: the `name` of `[Runtime]` if there is that group, else of
    /// `[Application]`, valid as `flatpak_is_valid_name` says, and an `[Instance]` with an
    /// `instance-id` (xdg-desktop-portal refuses a file without one).
    public static func parseFlatpakInfo(_ bytes: [UInt8]) -> ApplicationIdentity {
        let keyFile = g_key_file_new()!
        defer { g_key_file_free(keyFile) }
        var error: UnsafeMutablePointer<GError>?
        let loaded = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(buffer.count, 1)) {
                g_key_file_load_from_data(keyFile, $0, gsize(buffer.count), G_KEY_FILE_NONE, &error)
            }
        }
        guard loaded != 0 else {
            let failure = GLibError(consuming: error, operation: "read /.flatpak-info")
            return .unidentified(reason: "its /.flatpak-info is not a key file: \(failure.message)")
        }
        let group = g_key_file_has_group(keyFile, "Runtime") != 0 ? "Runtime" : "Application"
        guard let name = string(keyFile, group, "name") else {
            return .unidentified(reason: "its /.flatpak-info has no name in [\(group)]")
        }
        if let problem = ApplicationID.problem(name) {
            let shown = name.utf8.count > 80 ? "\(name.prefix(80))…" : name
            return .unidentified(
                reason: "its /.flatpak-info names '\(shown)', which is not a Flatpak application id (\(problem))")
        }
        guard string(keyFile, "Instance", "instance-id") != nil else {
            return .unidentified(reason: "its /.flatpak-info has no instance-id in [Instance]")
        }
        return .sandboxed(name)
    }

    /// What the root of process `pid` holds, read off the caller's thread within `readingTime`;
    /// with `uid`, `unidentified` when the process is not that user's. Read by `readers`: a
    /// root that never answers (a FUSE filesystem mounted `allow_other`) costs a lookup its
    /// time and a reader thread, never the bus's own.
    static func readFlatpakInfo(ofProcess pid: UInt32, uid: UInt32?) async -> ApplicationIdentity {
        switch await readers.run(within: readingTime, { readFlatpakInfoBlocking(ofProcess: pid, uid: uid) }) {
        case .read(let identity):
            return identity
        case .timedOut:
            return .unidentified(reason: "its /.flatpak-info was not read within \(readingTime.components.seconds) s")
        case .busy:
            return .unidentified(reason: "too many lookups of /.flatpak-info are waiting")
        }
    }

    /// The reader threads running at once, at most.
    public static let maximumReaders = 4
    /// The lookups waiting for a reader, at most.
    public static let maximumWaiting = 256
    static let readers = BoundedReaders(
        name: "flatpak-info", maximumThreads: maximumReaders, maximumWaiting: maximumWaiting)

    /// `/proc/PID` is opened first and, with `uid`, its owner (the process's effective user;
    /// root for a process that made itself not dumpable) checked: a pid given to another
    /// user's process since the bus daemon named it is not looked at. `root` under it then
    /// belongs to the same process, or, if it ended meanwhile, to none.
    private static func readFlatpakInfoBlocking(ofProcess pid: UInt32, uid: UInt32?) -> ApplicationIdentity {
        let path = "/proc/\(pid)"
        let process = open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard process >= 0 else {
            return .unidentified(reason: "\(path) cannot be opened: \(describe(errno))")
        }
        defer { close(process) }
        var status = stat()
        if let uid, fstat(process, &status) != 0 || status.st_uid != uid {
            return .unidentified(reason: "process \(pid) is not of uid \(uid), the connection's user")
        }
        let root = openat(process, "root", O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard root >= 0 else {
            return .unidentified(reason: "\(path)/root cannot be opened: \(describe(errno))")
        }
        defer { close(root) }
        return readFlatpakInfo(underRoot: root)
    }

    private static func string(_ keyFile: OpaquePointer, _ group: String, _ key: String) -> String? {
        guard let value = g_key_file_get_string(keyFile, group, key, nil) else { return nil }
        defer { g_free(value) }
        return String(cString: value)
    }

    static func describe(_ error: Int32) -> String {
        String(cString: strerror(error))
    }
}

extension BusConnection {
    /// The application behind `peer`'s connection (see `ApplicationIdentity`): its process, from
    /// the bus daemon, pinned by a pidfd; the `/.flatpak-info` under that process's root; then
    /// the process checked to be still alive (so that its pid was not given to another process
    /// while the file was read) and `peer` to be still on the bus. Anything that cannot be
    /// established is `unidentified`.
    ///
    /// Without `ProcessFD` the pid is pinned only once `pidfd_open` opened it, after the bus
    /// daemon named it: if the connecting process ended and its pid was reused in between, the
    /// new process would be looked at instead, as xdg-desktop-portal would on such daemons.
    /// The checks narrow that to a connection that outlived its process (a descriptor passed
    /// to a child) whose pid went to another process of the same user.
    public func applicationIdentity(of peer: String) async -> ApplicationIdentity {
        let process: PinnedProcess
        switch await pinnedProcess(of: peer) {
        case .success(let pinned): process = pinned
        case .failure(let failure): return .unidentified(reason: failure.reason)
        }
        defer { process.close() }
        let identity = await ApplicationIdentity.readFlatpakInfo(
            ofProcess: process.pid, uid: process.pinnedByBus ? nil : process.uid)
        if let gone = await process.check(peer, on: self, while: "its /.flatpak-info was read") {
            return .unidentified(reason: gone)
        }
        return identity
    }

    /// The object path of the logind session `peer`'s process is in, as logind names it
    /// (`GetSessionByPID`, its id escaped: session `2` is `…/session/_32`), for that process
    /// pinned as `applicationIdentity` pins it; `nil` when it has none or cannot be
    /// established.
    public func logindSessionPath(of peer: String) async -> String? {
        guard case .success(let process) = await pinnedProcess(of: peer) else { return nil }
        defer { process.close() }
        let reply = try? await call(
            destination: "org.freedesktop.login1", path: "/org/freedesktop/login1",
            interface: "org.freedesktop.login1.Manager", method: "GetSessionByPID", [.uint32(process.pid)],
            timeout: .seconds(5))
        guard case .objectPath(let path)? = reply?.first else { return nil }
        return await process.check(peer, on: self, while: "logind was asked") == nil ? path : nil
    }

    /// `peer`'s process as the bus daemon names it, pinned by a pidfd: the daemon's
    /// (`ProcessFD`), else one opened of the pid it gave.
    private func pinnedProcess(of peer: String) async -> Result<PinnedProcess, PinFailure> {
        let credentials: DBusValue
        let descriptors: [Int32]
        do throws(GLibError) {
            let reply = try await GDBusConnection.callReceivingDescriptors(
                connection, destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus", method: "GetConnectionCredentials", [.string(peer)],
                timeout: .seconds(25))
            credentials = reply.reply.elements.first ?? .vardict([])
            descriptors = reply.descriptors
        } catch {
            return .failure(PinFailure(reason: "the bus gave no credentials of \(peer): \(BusError(error))"))
        }
        var pidfd: Int32 = -1
        var pidfdIndex: Int?
        if case .handle(let index)? = credentials["ProcessFD"], descriptors.indices.contains(Int(index)) {
            pidfdIndex = Int(index)
            pidfd = descriptors[Int(index)]
        }
        for (index, descriptor) in descriptors.enumerated() where index != pidfdIndex { Glibc.close(descriptor) }
        guard case .uint32(let pid)? = credentials["ProcessID"], pid > 0 else {
            if pidfd >= 0 { Glibc.close(pidfd) }
            return .failure(PinFailure(reason: "the bus knows no process of \(peer)"))
        }
        guard case .uint32(let uid)? = credentials["UnixUserID"] else {
            if pidfd >= 0 { Glibc.close(pidfd) }
            return .failure(PinFailure(reason: "the bus knows no user of \(peer)"))
        }
        // Pinned by the bus daemon, the process is the one that connected; pinned here, after
        // the daemon named its pid, it is checked to be at least of the connection's user.
        let pinnedByBus = pidfd >= 0
        if pidfd < 0 {
            pidfd = cglib_pidfd_open(Int32(bitPattern: pid))
            guard pidfd >= 0 else {
                return .failure(
                    PinFailure(
                        reason: "process \(pid) of \(peer) cannot be pinned: \(ApplicationIdentity.describe(errno))"))
            }
        }
        return .success(PinnedProcess(pid: pid, uid: uid, pidfd: pidfd, pinnedByBus: pinnedByBus))
    }
}

private struct PinFailure: Error {
    var reason: String
}

/// A connection's process, held by a pidfd while something is looked up by its pid.
private struct PinnedProcess {
    let pid: UInt32
    let uid: UInt32
    let pidfd: Int32
    /// Whether the bus daemon gave the pidfd (`ProcessFD`), rather than `pidfd_open` of its pid.
    let pinnedByBus: Bool

    /// Why what was looked up by the pid no longer stands, if it does not: the process ended
    /// (its pid may have been reused), or `peer` left the bus.
    func check(_ peer: String, on bus: BusConnection, while what: String) async -> String? {
        // Signal 0 sends nothing; EPERM (an agent without CAP_KILL) still says the process is there.
        guard cglib_pidfd_send_signal(pidfd, 0) == 0 || errno == EPERM else {
            return "process \(pid) of \(peer) ended while \(what)"
        }
        guard await bus.hasOwner(peer) else { return "\(peer) left the bus while \(what)" }
        return nil
    }

    func close() { Glibc.close(pidfd) }
}
