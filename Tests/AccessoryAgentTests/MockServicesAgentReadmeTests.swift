import Foundation
import ServiceHarness
import Testing

/// What the README shows works, so that it cannot drift from the program. Each `console` block
/// of README.md is marked with the comment before it:
///
/// - `<!-- runnable: mock-services [kiosk=PROFILE] -->`: every `$ ` line is run by `/bin/sh` in
///   the repository, with the built `accessoryctl` first on `PATH`, against the agent on
///   python-dbusmock's NetworkManager, BlueZ and polkitd (polkit allowing; with a kiosk policy
///   that picks for root under PROFILE when named), fresh for each block; it must exit 0 and
///   print exactly the lines after it (blank lines aside). A UUID in the printed lines stands for whatever UUID the
///   program prints there, and the same UUID later in the block for that one.
/// - `<!-- excerpt: PATH -->`: the block's lines appear in that file, in that order.
///
/// The README's indented commands (the demo, the test command, the package's build and
/// install, a kiosk batch) are what the test command itself and the radio lab run (scenarios
/// 80, 60, 66 and 99); the files they name are checked here to exist, as are the README's and
/// docs/'s relative links.
@Suite("README (private bus: mock NetworkManager, BlueZ, polkitd)", .serialized)
struct MockServicesAgentReadmeTests {
    static let readme = AgentPaths.packageRoot.appendingPathComponent("README.md")

    /// Every action the package declares, as polkit answers a person who may do everything.
    static func polkitActions() throws -> [String] {
        let directory = AgentPaths.packageRoot.appendingPathComponent("packaging/polkit")
        var actions: [String] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".policy")
        {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            actions += text.matches(of: /action id="([^"]+)"/).map { String($0.output.1) }
        }
        return actions
    }

    @Test func everyCommandBlockIsMarkedAndTheReadmeStaysShort() throws {
        let text = try String(contentsOf: Self.readme, encoding: .utf8)
        let blocks = try ReadmeBlock.parse(text)
        #expect(blocks.filter { if case .runnable = $0.kind { true } else { false } }.count >= 3)
        #expect(blocks.contains { if case .excerpt = $0.kind { true } else { false } })
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines < 200, "the README has \(lines) lines; the details belong in docs/")
    }

    @Test(arguments: try ReadmeBlock.parse(String(contentsOf: readme, encoding: .utf8)).filter(\.isRunnable))
    func runnableBlockPrintsWhatTheReadmeShows(_ block: ReadmeBlock) async throws {
        guard case .runnable(let kiosk) = block.kind else { return }
        let services = try AgentServices(kiosk: kiosk.map { kioskPolicy(profiles: [$0], users: [0]) })
        try services.polkit.allow(try Self.polkitActions())
        let binaries = try AgentProcess.builtProduct("accessoryctl").deletingLastPathComponent().path
        var bound: [String: String] = [:]
        for step in block.steps {
            let command = bound.reduce(step.command) { $0.replacingOccurrences(of: $1.key, with: $1.value) }
            let run = try await services.runProgram(
                "/bin/sh", ["-c", "cd '\(AgentPaths.packageRoot.path)' && PATH='\(binaries)':\"$PATH\" && \(command)"],
                timeout: 60)
            #expect(run.status == 0, "README line \(block.line): \(command)\n\(run)\n\(services.agent.log)")
            let printed = run.out.split(separator: "\n").map(String.init)
            #expect(
                printed.count == step.output.count,
                """
                README line \(block.line): \(command) printed
                \(run.out)where the README shows
                \(step.output.joined(separator: "\n"))
                """
            )
            for (shown, actual) in zip(step.output, printed) {
                let matched = ReadmeBlock.match(shown, actual, bound: &bound)
                #expect(matched, "README line \(block.line): \(command)\nshows:   \(shown)\nprinted: \(actual)")
            }
        }
    }

    @Test(arguments: try ReadmeBlock.parse(String(contentsOf: readme, encoding: .utf8)).filter { !$0.isRunnable })
    func excerptBlockIsInItsFile(_ block: ReadmeBlock) throws {
        guard case .excerpt(let path) = block.kind else { return }
        let file = try String(contentsOf: AgentPaths.packageRoot.appendingPathComponent(path), encoding: .utf8)
        var rest = file.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }[...]
        for line in block.text.map({ $0.trimmingCharacters(in: .whitespaces) }) where !line.isEmpty {
            let found = rest.firstIndex { $0 == line || $0 == line + "," }
            #expect(found != nil, "README line \(block.line): '\(line)' is not in \(path) (or not in that order)")
            if let found { rest = rest[(found + 1)...] }
        }
    }

    @Test func theFilesAndLinksTheDocumentsNameExist() throws {
        let root = AgentPaths.packageRoot
        let documents =
            ["README.md"]
            + (try FileManager.default.contentsOfDirectory(atPath: root.path + "/docs"))
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        let link = try Regex(#"\]\(([^)#\s]+)(#[^)]*)?\)"#)
        for document in documents {
            let url = root.appendingPathComponent(document)
            let text = try String(contentsOf: url, encoding: .utf8)
            for found in text.matches(of: link) {
                let target = String(found.output[1].substring ?? "")
                if target.contains("://") || target.hasPrefix("mailto:") { continue }
                let path = url.deletingLastPathComponent().appendingPathComponent(target).standardizedFileURL.path
                #expect(
                    FileManager.default.fileExists(atPath: path), "\(document) links to \(target), which is not there")
            }
        }
        let readme = try String(contentsOf: Self.readme, encoding: .utf8)
        for found in readme.matches(of: try Regex(#"\./(scripts/[\w.-]+)"#)) {
            let path = root.appendingPathComponent(String(found.output[1].substring ?? "")).path
            #expect(
                FileManager.default.isExecutableFile(atPath: path), "the README runs \(path), which is not executable")
        }
    }
}

/// A fenced block of the README and what its marker says to do with it.
struct ReadmeBlock: CustomTestStringConvertible, Sendable {
    enum Kind: Sendable {
        /// Run against the mock services, with a kiosk policy for this profile when given.
        case runnable(kiosk: String?)
        /// Lines of this file.
        case excerpt(String)
    }

    /// A command and the lines it prints.
    struct Step: Sendable {
        var command: String
        /// The lines it prints, blank ones left out.
        var output: [String]
    }

    var kind: Kind
    /// The README's line of the block's opening fence.
    var line: Int
    var text: [String]

    var isRunnable: Bool { if case .runnable = kind { true } else { false } }
    var testDescription: String { "README line \(line)" }

    var steps: [Step] {
        var steps: [Step] = []
        var continued: String?
        for line in text {
            if let partial = continued {
                let whole = partial + " " + line.trimmingCharacters(in: .whitespaces)
                continued = whole.hasSuffix("\\") ? String(whole.dropLast()) : nil
                if continued == nil { steps[steps.count - 1].command = whole }
            } else if line.hasPrefix("$ ") {
                let command = String(line.dropFirst(2))
                steps.append(Step(command: command, output: []))
                if command.hasSuffix("\\") { continued = String(command.dropLast()) }
            } else if !steps.isEmpty, !line.isEmpty {
                steps[steps.count - 1].output.append(line)
            }
        }
        return steps
    }

    struct Unmarked: Error, CustomStringConvertible {
        var line: Int
        var description: String {
            """
            README line \(line): a console block without a '<!-- runnable: ... -->' or \
            '<!-- excerpt: PATH -->' before it
            """
        }
    }

    /// The marked blocks of `markdown`; a `console` block without a marker is an error.
    static func parse(_ markdown: String) throws -> [ReadmeBlock] {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var blocks: [ReadmeBlock] = []
        var index = 0
        while index < lines.count {
            let fence = lines[index]
            guard fence.hasPrefix("```"), fence.count > 3 else {
                index += 1
                continue
            }
            let body = lines[(index + 1)...].prefix { $0 != "```" }
            let marker = index > 0 ? lines[index - 1] : ""
            if let kind = kind(marker) {
                blocks.append(ReadmeBlock(kind: kind, line: index + 1, text: Array(body)))
            } else if fence == "```console" {
                throw Unmarked(line: index + 1)
            }
            index += body.count + 2
        }
        return blocks
    }

    private static func kind(_ marker: String) -> Kind? {
        guard marker.hasPrefix("<!-- "), marker.hasSuffix(" -->") else { return nil }
        let words = marker.dropFirst(5).dropLast(4).split(separator: " ").map(String.init)
        switch words.first {
        case "runnable:":
            let kiosk = words.first { $0.hasPrefix("kiosk=") }.map { String($0.dropFirst(6)) }
            return .runnable(kiosk: kiosk)
        case "excerpt:": return words.count == 2 ? .excerpt(words[1]) : nil
        default: return nil
        }
    }

    /// Whether `actual` is the line `shown`, each UUID in `shown` standing for the UUID it was
    /// bound to, or binding it to the one printed there.
    static func match(_ shown: String, _ actual: String, bound: inout [String: String]) -> Bool {
        let uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/
        var pattern = ""
        var names: [String] = []
        var rest = shown[...]
        while let found = rest.firstMatch(of: uuid) {
            pattern += NSRegularExpression.escapedPattern(for: String(rest[..<found.range.lowerBound]))
            let name = String(found.output)
            if let value = bound[name] {
                pattern += NSRegularExpression.escapedPattern(for: value)
            } else if let earlier = names.firstIndex(of: name) {
                pattern += "\\\(earlier + 1)"
            } else {
                pattern += "([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
                names.append(name)
            }
            rest = rest[found.range.upperBound...]
        }
        pattern += NSRegularExpression.escapedPattern(for: String(rest))
        guard let expression = try? NSRegularExpression(pattern: "^" + pattern + "$"),
            let result = expression.firstMatch(in: actual, range: NSRange(actual.startIndex..., in: actual))
        else { return false }
        for (offset, name) in names.enumerated() {
            guard let range = Range(result.range(at: offset + 1), in: actual) else { return false }
            bound[name] = String(actual[range])
        }
        return true
    }
}
