import AccessoryCore
import FoundationEssentials

/// `accessoryctl profile validate FILE...`
enum ProfileValidateCommand {
    static let command = Command(
        path: ["profile", "validate"],
        summary: "Check accessory profiles and report every fault",
        discussion: """
            Reads each profile and checks it against the format in profiles/README.md: types,
            descriptors (ssid and ssidPrefix are exclusive, SSIDs are 1-32 bytes, blobs and
            masks have the same length, ...), and that every Bluetooth value a descriptor uses
            is declared. Each fault is printed on its own line as FILE: field: message.
            Exits 0 when every file is valid, 1 otherwise.
            """,
        options: [.flag("json", help: "Print the result as JSON")],
        positionals: PositionalSpec(name: "FILE", minimum: 1, maximum: nil, help: "Profile files to check"),
        examples: [
            "\(AccessoryCtl.name) profile validate profiles/*.json",
            "\(AccessoryCtl.name) profile validate --json my-plug.json",
        ],
        run: run)

    private struct FileResult: Encodable {
        var file: String
        var valid: Bool
        var profile: String?
        var items: Int?
        var errors: [FieldIssue]
    }

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        var results: [FileResult] = []
        for path in arguments.positionals {
            do {
                let profile = try AccessoryProfile.load(contentsOf: URL(fileURLWithPath: path))
                results.append(
                    FileResult(file: path, valid: true, profile: profile.id, items: profile.items.count, errors: []))
            } catch {
                results.append(FileResult(file: path, valid: false, errors: error.issues))
            }
        }

        if arguments.flag("json") {
            console.printJSON(["files": results])
        } else {
            for result in results {
                if result.valid {
                    console.print(
                        "\(result.file): valid (\(result.profile ?? ""), \(result.items ?? 0) item\(result.items == 1 ? "" : "s"))"
                    )
                }
                for issue in result.errors {
                    console.print("\(result.file): \(issue.field): \(issue.message)")
                }
            }
        }
        return results.allSatisfy(\.valid) ? .success : .failure
    }
}
