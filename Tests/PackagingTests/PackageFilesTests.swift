import AccessoryCLI
import AccessoryCore
import Foundation
import Testing

/// The files the package installs agree with one another: the bus name, the unit, the paths.
@Suite("The package's files")
struct PackageFilesTests {
    /// `Key=value` lines of an ini-style file (systemd unit, D-Bus service file).
    static func keys(_ text: String) -> [String: [String]] {
        var keys: [String: [String]] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && line.contains("=") {
            let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            keys[String(parts[0]), default: []].append(String(parts[1]))
        }
        return keys
    }

    /// The installed binaries link `FoundationEssentials` only: one `import Foundation` in a
    /// shipped target would link all of it, ICU's data included (45 MB more per binary). The
    /// one exception is `NetworkExtension`, for applications only (Apple's `NSError`s): no
    /// other target imports it, so no installed binary links it.
    @Test func noShippedSourceImportsAllOfFoundation() throws {
        let sources = Repository.root.appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(atPath: sources.path)).compactMap { $0 as? String }
        let swift = files.filter { $0.hasSuffix(".swift") }
        #expect(swift.count > 50)
        for file in swift {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            let imports = text.split(separator: "\n").filter { $0.hasPrefix("import ") || $0.contains(" import ") }
            if file.hasPrefix("NetworkExtension/") { continue }
            #expect(!imports.contains { $0.hasSuffix("import Foundation") }, "Sources/\(file) imports Foundation")
            #expect(
                !imports.contains { $0.hasSuffix("import NetworkExtension") },
                "Sources/\(file) imports NetworkExtension, which imports all of Foundation")
        }
    }

    @Test func activationFileStartsTheUnitThatOwnsTheBusName() throws {
        let activation = Self.keys(try Repository.text("packaging/dbus/io.accessorysetup.service"))
        #expect(activation["Name"] == [Repository.busName])
        #expect(activation["User"] == ["root"])
        #expect(activation["Exec"] == ["/bin/false"])
        let unitName = try #require(activation["SystemdService"]?.first)
        let unit = Self.keys(try Repository.text("packaging/systemd/\(unitName)"))
        #expect(unit["Type"] == ["dbus"])
        #expect(unit["BusName"] == [Repository.busName])
        #expect(unit["StateDirectory"] == ["accessory-setup"])
        #expect(unit["StateDirectoryMode"] == ["0700"])
    }

    @Test func unitHasNoInstallSectionSoInstallingStartsNothing() throws {
        let lines = try Repository.text("packaging/systemd/accessory-setup.service").split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("[") } == ["[Unit]", "[Service]"])
        #expect(!lines.contains { $0.hasPrefix("WantedBy=") || $0.hasPrefix("Alias=") })
    }

    @Test func unitRunsTheAgentWhereThePackageInstallsIt() throws {
        let unit = Self.keys(try Repository.text("packaging/systemd/accessory-setup.service"))
        let execStart = try #require(unit["ExecStart"]?.first)
        #expect(execStart.hasPrefix("/usr/libexec/accessory-setup/accessory-agent "))
        let rules = try Repository.text("debian/rules")
        #expect(rules.contains("$(DESTDIR)/usr/libexec/$(PACKAGE)/accessory-agent"))
    }

    @Test func busPolicyLetsOnlyRootOwnTheNameAndEveryoneCallIt() throws {
        let policy = try Repository.text("packaging/dbus/io.accessorysetup.conf")
        let root = try #require(
            policy.components(separatedBy: "<policy user=\"root\">").dropFirst().first?
                .components(separatedBy: "</policy>").first)
        #expect(root.contains("<allow own=\"\(Repository.busName)\"/>"))
        #expect(policy.components(separatedBy: "allow own=").count == 2, "someone besides root may own a name")
        #expect(!policy.contains("at_console"), "access is polkit's to decide, not the policy's")
    }

    @Test func packageVersionIsTheToolsVersion() throws {
        let changelog = try Repository.text("debian/changelog")
        #expect(changelog.hasPrefix("accessory-setup (\(Release.version)) "))
        #expect(AccessoryCtl.version == Release.version)
    }

    @Test func dispatcherHookIsExecutableAndNotWritableByOthers() throws {
        let hook = Repository.path("packaging/dispatcher/90-accessory-setup")
        let attributes = try FileManager.default.attributesOfItem(atPath: hook)
        let mode = try #require(attributes[.posixPermissions] as? Int)
        #expect(mode & 0o111 == 0o111)
        #expect(mode & 0o022 == 0, "NetworkManager skips a hook that group or others can write")
    }
}
