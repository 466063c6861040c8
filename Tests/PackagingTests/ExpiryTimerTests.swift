import AccessoryCLI
import Foundation
import Testing

/// The expiry timer and its service: what they run, that the package installs and enables them,
/// and that systemd accepts them.
@Suite("The expiry timer")
struct ExpiryTimerTests {
    static let service = "packaging/systemd/accessory-setup-expire.service"
    static let timer = "packaging/systemd/accessory-setup-expire.timer"

    @Test func timerRunsHourlyCatchesUpAndIsInstalledForTimersTarget() throws {
        let timer = PackageFilesTests.keys(try Repository.text(Self.timer))
        #expect(timer["OnCalendar"] == ["hourly"])
        #expect(timer["Persistent"] == ["true"])
        #expect(timer["WantedBy"] == ["timers.target"])
        #expect(timer["Unit"] == nil, "it starts the service of its own name")
    }

    @Test func serviceRunsTheExpireCommandAsAOneshotWithNoCapability() throws {
        let unit = PackageFilesTests.keys(try Repository.text(Self.service))
        #expect(unit["Type"] == ["oneshot"])
        #expect(unit["ExecStart"] == ["/usr/bin/accessoryctl expire"])
        #expect(AccessoryCtl.commands.contains { $0.path == ["expire"] })
        #expect(unit["CapabilityBoundingSet"] == [""])
        #expect(unit["PrivateNetwork"] == ["yes"])
        #expect(unit["RestrictAddressFamilies"] == ["AF_UNIX"])
        #expect(unit["WantedBy"] == nil, "only the timer starts it")
    }

    @Test func packageInstallsBothAndEnablesTheTimerAlone() throws {
        let rules = try Repository.text("debian/rules")
        #expect(rules.contains("packaging/systemd/$(PACKAGE)-expire.service packaging/systemd/$(PACKAGE)-expire.timer"))
        #expect(rules.contains("\tdh_installsystemd -p$(PACKAGE) $(PACKAGE)-expire.timer\n"))
        #expect(
            rules.contains("\tdh_installsystemd -p$(PACKAGE) --no-start $(PACKAGE).service\n"),
            "the agent stays unstarted")
    }

    /// `systemd-analyze verify` in a root holding the units, an executable where the service
    /// runs one, and the host's targets; a unit with a fault must fail the same check.
    @Test func systemdAcceptsTheUnits() throws {
        let analyze = "/usr/bin/systemd-analyze"
        try #require(FileManager.default.isExecutableFile(atPath: analyze), "systemd-analyze is not installed")
        #expect(try verify(timer: try Repository.text(Self.timer), analyze: analyze).status == 0)
        let broken = try Repository.text(Self.timer).replacingOccurrences(
            of: "OnCalendar=hourly", with: "OnCalendar=hourlyy")
        let refused = try verify(timer: broken, analyze: analyze)
        #expect(refused.status != 0)
        #expect(refused.err.contains("hourlyy"), "\(refused.err)")
    }

    private func verify(timer: String, analyze: String) throws -> ProcessResult {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("expiry-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let units = root.appendingPathComponent("lib/systemd/system")
        let bin = root.appendingPathComponent("usr/bin")
        try FileManager.default.createDirectory(at: units, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        for target in try FileManager.default.contentsOfDirectory(atPath: "/lib/systemd/system")
        where target.hasSuffix(".target") {
            try? FileManager.default.copyItem(
                atPath: "/lib/systemd/system/\(target)", toPath: units.appendingPathComponent(target).path)
        }
        try Data(timer.utf8).write(to: units.appendingPathComponent("accessory-setup-expire.timer"))
        try FileManager.default.copyItem(
            atPath: Repository.path(Self.service),
            toPath: units.appendingPathComponent("accessory-setup-expire.service").path)
        try Data("#!/bin/sh\n".utf8).write(to: bin.appendingPathComponent("accessoryctl"))
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o755], ofItemAtPath: bin.appendingPathComponent("accessoryctl").path)
        return try runProcess(
            analyze,
            [
                "verify", "--man=no", "--root=\(root.path)", "/lib/systemd/system/accessory-setup-expire.timer",
                "/lib/systemd/system/accessory-setup-expire.service",
            ], environment: ["PATH": "/usr/bin:/bin"])
    }
}
