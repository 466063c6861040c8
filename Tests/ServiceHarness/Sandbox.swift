import Foundation

/// A Flatpak-like sandbox made with bubblewrap, unprivileged (a user namespace of its own), as
/// flatpak makes one: a `/.flatpak-info` in flatpak's format, written as flatpak writes it (a
/// mode 0600 file with the same data bind-mounted read-only over it), no further user
/// namespaces, its own pid namespace; the host's `/usr`, the private bus's socket and the test
/// client (`Tests/AccessoryAgentTests/Clients/agent_client.py`) bound in. The agent
/// establishes the application from that file, as it does for a Flatpak application.
public struct Sandbox: Sendable {
    public let application: String
    private let directory: ScratchDirectory
    private let info: String

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let clients = packageRoot.appendingPathComponent("Tests/AccessoryAgentTests/Clients").path
    /// The GIO client of the agent that the tests run in a sandbox or as another user.
    public static let testClient = "\(clients)/agent_client.py"

    public init(application: String) throws {
        self.application = application
        directory = try ScratchDirectory("flatpak-\(application)")
        info = directory.path("flatpak-info")
        let text = """
            [Application]
            name=\(application)
            runtime=runtime/org.freedesktop.Platform/x86_64/23.08

            [Instance]
            instance-id=\(UInt32.random(in: 1...UInt32.max))
            branch=stable
            arch=x86_64
            flatpak-version=1.14.4

            [Context]
            shared=network;ipc;

            """
        try text.write(toFile: info, atomically: true, encoding: .utf8)
        // The user runs bwrap and hands it the file, as flatpak does.
        chmod(directory.url.path, 0o755)
        chmod(info, 0o644)
    }

    /// What runs `program` in the sandbox: arguments of `/bin/sh`, for the user that runs it
    /// (through `setpriv`, `Sandbox.asUser`).
    public func command(
        bus: PrivateSystemBus, _ program: String, _ arguments: [String], binding paths: [String] = []
    ) -> [String] {
        let socket = String(bus.address.dropFirst("unix:path=".count))
        let packageRoot = Self.packageRoot.path
        let bwrap = [
            "/usr/bin/bwrap", "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--disable-userns", "--die-with-parent",
            "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
            "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
            "--bind", socket, socket,
            "--ro-bind", Self.clients, Self.clients,
            "--ro-bind", "\(packageRoot)/dbus", "\(packageRoot)/dbus",
            "--perms", "0600", "--file", "3", "/.flatpak-info", "--ro-bind-data", "4", "/.flatpak-info",
        ]
        let binds = paths.flatMap { ["--ro-bind", $0, $0] } + Self.sanitizerFiles
        return ["-c", #"info=$1; shift; exec "$@" 3<"$info" 4<"$info""#, "sh", info] + bwrap + binds
            + ["--", program] + arguments
    }

    /// The files the sanitizers' options name (`scripts/test.sh` sets them): a program built
    /// with a sanitizer reads its suppressions and writes its reports there from inside the
    /// sandbox too. Without them LeakSanitizer ends it with status 1 at exit, before its
    /// standard output is flushed.
    static var sanitizerFiles: [String] {
        let environment = ProcessInfo.processInfo.environment
        var binds: [String] = []
        for key in ["ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"] {
            for option in environment[key]?.split(whereSeparator: { $0 == ":" || $0 == " " }) ?? [] {
                let parts = option.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, parts[1].hasPrefix("/") else { continue }
                switch parts[0] {
                case "suppressions": binds += ["--ro-bind-try", parts[1], parts[1]]
                case "log_path":
                    let directory = URL(fileURLWithPath: parts[1]).deletingLastPathComponent().path
                    binds += ["--bind-try", directory, directory]
                default: break
                }
            }
        }
        return binds
    }

    /// The arguments of `/usr/bin/setpriv` that run `program` as `uid` with no groups.
    public static func asUser(_ uid: UInt32, _ program: String, _ arguments: [String]) -> [String] {
        ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", program] + arguments
    }

    /// Starts the test client in the sandbox as `uid` against `bus` (its system bus), its
    /// standard output and error into `log`; the caller waits for it.
    public func startClient(_ arguments: [String], as uid: UInt32, bus: PrivateSystemBus, log: URL) throws
        -> ChildProcess
    {
        try Self.launch(
            "/bin/sh", command(bus: bus, "/usr/bin/python3", [Self.testClient] + arguments), as: uid, bus: bus, log: log
        )
    }

    /// Starts the test client on the host, outside any sandbox, as `startClient` does in one.
    public static func startHostClient(_ arguments: [String], as uid: UInt32, bus: PrivateSystemBus, log: URL)
        throws -> ChildProcess
    {
        try launch("/usr/bin/python3", [testClient] + arguments, as: uid, bus: bus, log: log)
    }

    /// Runs `program` as `uid` with `bus` as its system bus, its output into `log`.
    private static func launch(
        _ program: String, _ arguments: [String], as uid: UInt32, bus: PrivateSystemBus, log: URL
    ) throws -> ChildProcess {
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
            throw HarnessError("cannot create the client's log \(log.path)")
        }
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        return try ChildProcess(
            "/usr/bin/setpriv", asUser(uid, program, arguments),
            environment: ProcessInfo.processInfo.environment.merging(bus.environment) { $1 }
                .merging(["PYTHONDONTWRITEBYTECODE": "1"]) { $1 },
            standardOutput: .file(handle), standardError: .file(handle))
    }

    /// Fails with bwrap's own words when it cannot make a sandbox here as `uid` (no user
    /// namespaces, bubblewrap missing): the tests that need one fail, never skip.
    public static func check(as uid: UInt32, bus: PrivateSystemBus) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/bwrap") else {
            throw HarnessError("bubblewrap is not installed (/usr/bin/bwrap); scripts/setup.sh installs it")
        }
        let probe = try Sandbox(application: "org.example.Probe")
        let output: String
        do {
            output = try run(
                "/usr/bin/setpriv", asUser(uid, "/bin/sh", probe.command(bus: bus, "/bin/cat", ["/.flatpak-info"])),
                environment: bus.environment, timeout: 30)
        } catch {
            throw HarnessError("bwrap cannot make an unprivileged sandbox as uid \(uid) here: \(error)")
        }
        guard output.contains("name=org.example.Probe") else {
            throw HarnessError("bwrap's sandbox as uid \(uid) has no /.flatpak-info of ours: \(output)")
        }
    }

    /// The uid of the system user `name` (`nobody`, for a client that is not root).
    public static func systemUser(_ name: String) throws -> UInt32 {
        guard let entry = getpwnam(name) else { throw HarnessError("no user '\(name)' on this system") }
        return entry.pointee.pw_uid
    }
}
