import AccessoryPicker
import FoundationEssentials
import Glibc

exit(await AccessorySettings.main(Array(CommandLine.arguments.dropFirst())))
