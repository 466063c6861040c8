// TEMPORARY placeholder for packaging tests: the real agent comes with issue #9.
import Foundation

let arguments = CommandLine.arguments.dropFirst()
if arguments.contains("--version") {
    print("accessory-agent 0.1.0 (placeholder)")
    exit(0)
}
FileHandle.standardError.write(Data("accessory-agent: this is a placeholder; the agent comes with issue #9\n".utf8))
exit(1)
