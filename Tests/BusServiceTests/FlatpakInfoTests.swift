import BusService
import Foundation
import Testing

/// A directory standing for a process's root (`/proc/PID/root`), opened as the agent opens it.
private final class FakeRoot {
    let url: URL
    let descriptor: Int32

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("flatpak-root-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        descriptor = open(url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw CocoaError(.fileReadUnknown) }
    }

    var info: URL { url.appendingPathComponent(".flatpak-info") }

    func write(_ text: String) throws {
        try Data(text.utf8).write(to: info)
    }

    var identity: ApplicationIdentity { ApplicationIdentity.readFlatpakInfo(underRoot: descriptor) }

    deinit {
        close(descriptor)
        try? FileManager.default.removeItem(at: url)
    }
}

/// What flatpak writes (`flatpak-run.c`), abridged.
private let acmePlugInfo = """
    [Application]
    name=org.example.AcmePlug
    runtime=runtime/org.freedesktop.Platform/x86_64/23.08

    [Instance]
    instance-id=1234567890
    app-path=/var/lib/flatpak/app/org.example.AcmePlug/x86_64/stable/active/files
    branch=stable
    arch=x86_64
    flatpak-version=1.14.4

    [Context]
    shared=network;ipc;
    sockets=x11;wayland;
    """

/// How `/.flatpak-info` is read under a process's root: as xdg-desktop-portal reads it, with
/// GLib's key file parser, refusing whatever cannot be established.
@Suite("ApplicationIdentity: reading /.flatpak-info")
struct FlatpakInfoTests {
    @Test func aValidFileNamesTheSandboxedApplication() throws {
        let root = try FakeRoot()
        try root.write(acmePlugInfo)
        #expect(root.identity == .sandboxed("org.example.AcmePlug"))
    }

    @Test func noFileIsAProcessOfTheHost() throws {
        #expect(try FakeRoot().identity == .host)
    }

    @Test func aRuntimeRunOnItsOwnIsNamedByItsRuntimeGroup() throws {
        let root = try FakeRoot()
        try root.write("[Runtime]\nname=org.freedesktop.Sdk\n\n[Instance]\ninstance-id=7\n")
        #expect(root.identity == .sandboxed("org.freedesktop.Sdk"))
    }

    @Test(
        "what cannot be established is unidentified, with the reason",
        arguments: [
            ("[Application]\nruntime=runtime/x\n\n[Instance]\ninstance-id=1\n", "has no name in [Application]"),
            ("[Application]\nname=org.example\n\n[Instance]\ninstance-id=1\n", "not a Flatpak application id"),
            ("[Application]\nname=org.example.1Plug\n\n[Instance]\ninstance-id=1\n", "an element starts with '1'"),
            (
                "[Application]\nname=org.example.Acme Plug\n\n[Instance]\ninstance-id=1\n",
                "not a Flatpak application id"
            ),
            ("[Application]\nname=org.example.AcmePlug\n", "has no instance-id in [Instance]"),
            ("name=org.example.AcmePlug\n", "is not a key file"),
            ("", "has no name in [Application]"),
        ])
    func invalidFiles(text: String, reason: String) throws {
        let root = try FakeRoot()
        try root.write(text)
        guard case .unidentified(let why) = root.identity else {
            Issue.record("\(text.debugDescription) was accepted as \(root.identity)")
            return
        }
        #expect(why.contains(reason), "\(why)")
    }

    @Test func aSymbolicLinkIsNotFollowed() throws {
        let root = try FakeRoot()
        let real = root.url.appendingPathComponent("elsewhere")
        try Data(acmePlugInfo.utf8).write(to: real)
        try FileManager.default.createSymbolicLink(atPath: root.info.path, withDestinationPath: real.path)
        #expect(root.identity == .unidentified(reason: "its /.flatpak-info is a symbolic link"))
        // Relative, dangling, to the host's root: the same.
        try FileManager.default.removeItem(at: root.info)
        try FileManager.default.createSymbolicLink(atPath: root.info.path, withDestinationPath: "/nonexistent")
        #expect(root.identity == .unidentified(reason: "its /.flatpak-info is a symbolic link"))
    }

    @Test func aDirectoryOrAFIFOIsRefusedWithoutBlocking() throws {
        let directory = try FakeRoot()
        try FileManager.default.createDirectory(at: directory.info, withIntermediateDirectories: false)
        #expect(directory.identity == .unidentified(reason: "its /.flatpak-info is not a regular file"))

        let fifo = try FakeRoot()
        #expect(mkfifo(fifo.info.path, 0o600) == 0)
        #expect(fifo.identity == .unidentified(reason: "its /.flatpak-info is not a regular file"))
    }

    @Test func aFileLargerThanTheLimitIsRefused() throws {
        let root = try FakeRoot()
        let padding = String(repeating: "# padding\n", count: ApplicationIdentity.flatpakInfoLimit / 10 + 1)
        try root.write(acmePlugInfo + "\n" + padding)
        #expect(
            root.identity
                == .unidentified(
                    reason: "its /.flatpak-info is larger than \(ApplicationIdentity.flatpakInfoLimit) bytes"))
    }

    @Test func anyFailureButNoFileIsUnidentifiedNeverHost() throws {
        // A root that cannot be searched fails with ENOTDIR here (EACCES, EIO elsewhere):
        // only ENOENT means a host process.
        let root = try FakeRoot()
        try root.write(acmePlugInfo)
        let notADirectory = open(root.info.path, O_RDONLY | O_CLOEXEC)
        defer { close(notADirectory) }
        guard case .unidentified(let why) = ApplicationIdentity.readFlatpakInfo(underRoot: notADirectory) else {
            Issue.record("a root that cannot be searched counted as established")
            return
        }
        #expect(why.contains("cannot be opened"), "\(why)")
    }
}
