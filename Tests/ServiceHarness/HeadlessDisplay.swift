import Foundation

/// A graphical session with no screen, for the graphical picker's tests: an Xvfb server of its
/// own, a private session bus, and the accessibility (AT-SPI) bus on it, so a test drives the
/// picker as a screen reader would. Stopped by PID, in reverse order; nothing is left behind.
public final class HeadlessDisplay: @unchecked Sendable {
    public let display: String
    public let sessionBusAddress: String
    let directory: ScratchDirectory
    private let xvfb: ServiceProcess
    private let sessionBus: ServiceProcess
    private let accessibility: ServiceProcess

    public init() throws {
        let tools = ["/usr/bin/Xvfb", "/usr/libexec/at-spi-bus-launcher", "/usr/bin/import"]
        for tool in tools where !FileManager.default.isExecutableFile(atPath: tool) {
            throw HarnessError("\(tool) is missing; run scripts/setup.sh (it installs xvfb, at-spi2-core, imagemagick)")
        }
        directory = try ScratchDirectory("accessory-display")
        // A display number no other server holds; -noreset keeps Xvfb from resetting (and
        // refusing clients meanwhile) when its last client leaves.
        let taken = { (number: Int) in
            FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)")
                || FileManager.default.fileExists(atPath: "/tmp/.X\(number)-lock")
        }
        let number = (90..<190).first { !taken($0) } ?? 190
        display = ":\(number)"
        xvfb = try ServiceProcess(
            name: "Xvfb", executable: "/usr/bin/Xvfb",
            arguments: [display, "-noreset", "-nolisten", "tcp", "-screen", "0", "1024x768x24"],
            logFile: directory.url.appendingPathComponent("xvfb.log"))
        try xvfb.wait(for: "display \(display)") {
            FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)")
        }
        let socket = directory.path("session_bus_socket")
        sessionBusAddress = "unix:path=\(socket)"
        sessionBus = try ServiceProcess(
            name: "dbus-daemon (session)", executable: "/usr/bin/dbus-daemon",
            arguments: [
                "--config-file=/usr/share/dbus-1/session.conf", "--address=\(sessionBusAddress)",
                "--nofork", "--nopidfile",
            ],
            environment: ["DISPLAY": display], logFile: directory.url.appendingPathComponent("session-bus.log"))
        try sessionBus.wait(for: "the session bus") { FileManager.default.fileExists(atPath: socket) }
        accessibility = try ServiceProcess(
            name: "at-spi-bus-launcher", executable: "/usr/libexec/at-spi-bus-launcher",
            arguments: ["--launch-immediately"],
            environment: ["DISPLAY": display, "DBUS_SESSION_BUS_ADDRESS": sessionBusAddress],
            logFile: directory.url.appendingPathComponent("at-spi.log"))
        let address = sessionBusAddress
        try accessibility.wait(for: "org.a11y.Bus") {
            let reply = try? run(
                "/usr/bin/gdbus",
                [
                    "call", "--address", address, "--dest", "org.freedesktop.DBus",
                    "--object-path", "/org/freedesktop/DBus",
                    "--method", "org.freedesktop.DBus.NameHasOwner", "org.a11y.Bus",
                ], timeout: 5)
            return reply?.contains("true") == true
        }
    }

    /// What a GTK program and an AT-SPI client need to find this display and its buses. GTK
    /// renders with cairo and the memory settings backend, so screenshots do not depend on
    /// the GL driver or the machine's settings; with GL disabled it never loads Mesa, whose
    /// software driver GDK would otherwise load, unload when EGL fails on Xvfb, and load again
    /// for GLX (the address sanitizer then reports the unloaded driver's allocations as leaks
    /// of an unknown module).
    public var environment: [String: String] {
        [
            "DISPLAY": display, "DBUS_SESSION_BUS_ADDRESS": sessionBusAddress, "GDK_BACKEND": "x11",
            "GDK_DEBUG": "gl-disable", "GSK_RENDERER": "cairo", "GSETTINGS_BACKEND": "memory",
            "NO_AT_BRIDGE": "0", "LANG": "C.UTF-8", "XDG_RUNTIME_DIR": directory.url.path,
        ]
    }

    public func stop() {
        accessibility.stop()
        sessionBus.stop()
        xvfb.stop()
    }

    deinit { stop() }
}
