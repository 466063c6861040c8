import AccessoryCLI
import AccessoryCore
import Foundation
import ServiceHarness
import Testing

/// The man pages in `packaging/man/` (scdoc) against the command table and the package.
@Suite("The man pages")
struct ManPageTests {
    static let pages = ["accessoryctl.1", "accessory-agent.8", "accessory-profile.5", "accessory-kiosk.5"]

    /// The text of one command's section (`## profile validate` up to the next heading).
    static func section(_ name: String, in page: String) -> String? {
        guard let start = page.range(of: "\n## \(name)\n") else { return nil }
        let rest = page[start.upperBound...]
        let end = rest.range(of: "\n#")?.lowerBound ?? rest.endIndex
        return String(rest[..<end])
    }

    @Test func accessoryctlPageHasEveryCommandWithEveryOption() throws {
        let page = try Repository.text("packaging/man/accessoryctl.1.scd")
        for command in AccessoryCtl.commands {
            let name = command.name
            let section = try #require(Self.section(name, in: page), "accessoryctl(1) lacks '## \(name)'")
            #expect(section.contains("*accessoryctl \(name)*"), "the section of \(name) has no synopsis")
            for option in command.options {
                #expect(section.contains("*--\(option.name)*"), "accessoryctl(1) lacks --\(option.name) of \(name)")
            }
        }
    }

    @Test func accessoryctlPageHasNoCommandTheToolLacks() throws {
        let page = try Repository.text("packaging/man/accessoryctl.1.scd")
        let names = Set(AccessoryCtl.commands.map(\.name))
        let documented = page.split(separator: "\n").filter { $0.hasPrefix("## ") }.map { String($0.dropFirst(3)) }
        #expect(Set(documented).subtracting(names).isEmpty, "accessoryctl(1) documents commands the tool does not have")
    }

    @Test func everyPageRendersAndIsInstalled() throws {
        let installed = try Repository.text("debian/accessory-setup.manpages")
        for name in Self.pages {
            let source = Repository.path("packaging/man/\(name).scd")
            let rendered = try runProcess(
                "/bin/sh", ["-c", "exec /usr/bin/scdoc < \"$0\"", source], environment: ["PATH": "/usr/bin:/bin"])
            #expect(rendered.status == 0, "scdoc refused \(name): \(rendered.err)")
            let parts = name.split(separator: ".")
            #expect(rendered.out.contains(".TH \"\(parts[0])\" \"\(parts[1])\""), "\(name) renders without its title")
            #expect(installed.contains("debian/.generated/\(name)\n"), "debian/accessory-setup.manpages lacks \(name)")
        }
    }

    @Test func agentPagePointsToTheDBusDocumentationThePackageShips() throws {
        let page = try Repository.text("packaging/man/accessory-agent.8.scd")
        #expect(page.contains("/usr/share/doc/accessory-setup/dbus-api.md"))
        #expect(try Repository.text("debian/accessory-setup.docs").contains("docs/dbus-api.md\n"))
        let rules = try Repository.text("debian/rules")
        #expect(rules.contains("dh_compress -X.md"), "dbus-api.md would be installed gzipped")
    }

    @Test func profilePageExampleIsAValidProfile() async throws {
        let page = try Repository.text("packaging/man/accessory-profile.5.scd")
        let example = try #require(page.components(separatedBy: "```\n").dropFirst().first { $0.hasPrefix("{") })
        let scratch = try ScratchDirectory("man-example")
        let file = scratch.path("example.json")
        try example.write(toFile: file, atomically: true, encoding: .utf8)
        let errors = Locked("")
        let console = Console(
            isTerminal: false, writeOut: { _ in }, writeError: { text in errors.withLock { $0 += text } })
        let code = await AccessoryCtl.run(["profile", "validate", file], console: console)
        #expect(code == .success, "the example in accessory-profile(5) is refused: \(errors.withLock { $0 })")
    }
}
