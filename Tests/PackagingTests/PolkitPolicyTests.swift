import Foundation
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// `packaging/polkit/io.accessorysetup.policy` against the table of actions in
/// `docs/dbus-api.md` and the actions the interfaces in `dbus/` name.
@Suite("The polkit actions")
struct PolkitPolicyTests {
    struct Action: Equatable {
        var id: String
        var description = ""
        var message = ""
        var defaults: [String: String] = [:]
    }

    final class PolicyReader: NSObject, XMLParserDelegate {
        var actions: [Action] = []
        private var text = ""

        func parser(
            _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            if element == "action" { actions.append(Action(id: attributes["id"] ?? "")) }
            text = ""
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
            guard !actions.isEmpty else { return }
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            switch element {
            case "description": actions[actions.count - 1].description = value
            case "message": actions[actions.count - 1].message = value
            case "allow_any", "allow_inactive", "allow_active": actions[actions.count - 1].defaults[element] = value
            default: break
            }
        }
    }

    static func policy() throws -> [Action] {
        let file = URL(fileURLWithPath: Repository.path("packaging/polkit/io.accessorysetup.policy"))
        let parser = try #require(XMLParser(contentsOf: file))
        let reader = PolicyReader()
        parser.delegate = reader
        #expect(parser.parse(), "the policy file is not well-formed XML: \(String(describing: parser.parserError))")
        return reader.actions
    }

    /// The rows of the "polkit actions" table: action, allow_any, allow_inactive, allow_active.
    static func documented() throws -> [String: [String: String]] {
        let doc = try Repository.text("docs/dbus-api.md")
        let table = try #require(doc.components(separatedBy: "### polkit actions").dropFirst().first)
        var rows: [String: [String: String]] = [:]
        for line in table.split(separator: "\n") where line.hasPrefix("| `io.accessorysetup.") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            rows[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] =
                ["allow_any": cells[1], "allow_inactive": cells[2], "allow_active": cells[3]]
        }
        return rows
    }

    @Test func actionsAndDefaultsAreExactlyThoseOfTheDocumentation() throws {
        let actions = try Self.policy()
        let documented = try Self.documented()
        #expect(documented.count == 10)
        #expect(Dictionary(uniqueKeysWithValues: actions.map { ($0.id, $0.defaults) }) == documented)
        #expect(Set(actions.map(\.id)).count == actions.count, "an action is declared twice")
    }

    @Test func everyActionSaysWhatItAllowsInWordsAPersonUnderstands() throws {
        for action in try Self.policy() {
            #expect(action.description.count >= 10, "\(action.id) has no description")
            #expect(action.message.hasPrefix("Authentication is required"), "\(action.id): \(action.message)")
            #expect(!action.message.contains("io.accessorysetup"), "\(action.id)'s message shows an id to the person")
        }
    }

    @Test func everyActionTheInterfacesNameIsDeclared() throws {
        let declared = Set(try Self.policy().map(\.id))
        let directory = Repository.path("dbus")
        for file in try FileManager.default.contentsOfDirectory(atPath: directory) where file.hasSuffix(".xml") {
            let xml = try String(contentsOfFile: "\(directory)/\(file)", encoding: .utf8)
            for line in xml.split(separator: "\n") where line.contains("name=\"io.accessorysetup.PolkitAction\"") {
                let value = try #require(
                    line.components(separatedBy: "value=\"").dropFirst().first?.split(separator: "\"").first)
                for action in value.split(separator: " ") {
                    #expect(declared.contains(String(action)), "\(file) names \(action), which the policy lacks")
                }
            }
        }
    }
}
