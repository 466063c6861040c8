import AccessoryCLI
import Foundation

let code = await AccessoryCtl.run(Array(CommandLine.arguments.dropFirst()), console: .standard)
exit(code.rawValue)
