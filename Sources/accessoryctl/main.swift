import AccessoryCLI
import Foundation

let code = await AccessoryCtl.main(Array(CommandLine.arguments.dropFirst()), console: .standard)
exit(code.rawValue)
