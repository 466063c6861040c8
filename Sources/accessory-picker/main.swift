import AccessoryPicker
import FoundationEssentials
import Glibc

exit(await AccessoryPicker.main(Array(CommandLine.arguments.dropFirst())))
