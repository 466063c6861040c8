import AgentInterface
import GLibRuntime

extension PickerAgentRequest {
    /// The sandboxed application that asks, named as the desktop names it (its `.desktop`
    /// file, see `DesktopApplication.lookUp`); `nil` for a client on the host. It reads files:
    /// call it off a thread that draws.
    public func requestingApplication(
        exportDirectories: [String] = DesktopApplication.flatpakExportDirectories
    ) -> DesktopApplication? {
        guard let application, !application.isEmpty else { return nil }
        return DesktopApplication.lookUp(application, exportDirectories: exportDirectories)
    }
}

extension DesktopApplication {
    /// What both pickers say above the choice: who asks, as on iOS.
    public var pickerHeading: String { "\(name) wants to set up an accessory" }
}
