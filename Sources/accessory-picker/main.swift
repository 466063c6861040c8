import AccessoryPicker
import Foundation

exit(await AccessoryPicker.main(Array(CommandLine.arguments.dropFirst())))
