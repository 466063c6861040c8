import AccessorySetupKit
import AgentInterface
import FoundationEssentials
import GLibRuntime

/// The open picker dialogs, one per agent session, on the GTK thread: an actor whose executor
/// is `GtkThread`, so its methods and its widgets' handlers never run concurrently.
actor PickerWindows {
    nonisolated var unownedExecutor: UnownedSerialExecutor { GtkThread.shared.asUnownedSerialExecutor() }

    private let images: ProductImages
    private var dialogs: [String: PickerDialog] = [:]
    private var early = EarlyEntries()
    /// Whether the icon theme looks in Flatpak's export directories yet.
    private var iconsOfFlatpakApplications = false

    init(images: ProductImages) {
        self.images = images
    }

    /// `RequestChoice`: shows a dialog naming `application`, the sandboxed application that
    /// asks (looked up off this thread); the person's choice answers `call`.
    func request(_ call: PickerAgentCall, _ request: PickerAgentRequest, application: DesktopApplication?) {
        let session = call.session
        guard !session.isEmpty else {
            call.refuse("expected a session and a request")
            return
        }
        guard dialogs[session] == nil else {
            call.refuse("a picker for \(session) is open already")
            return
        }
        let request = PickerRequest(session: session, request: request, application: application)
        let asker = application.map { " for \($0.id)" } ?? ""
        AccessoryPicker.log("\(session): showing the picker of \(request.profile)\(asker), asked by \(call.sender)")
        if application != nil, !iconsOfFlatpakApplications {
            // Flatpak exports its applications' icons beside their desktop files.
            iconsOfFlatpakApplications = true
            IconTheme.addSearchPaths(DesktopApplication.flatpakExportDirectories.map { "\($0)/icons" })
        }
        let dialog = PickerDialog(request: request, call: call, images: images) { [unowned self] in
            self.assumeIsolated { $0.dialogs[session] = nil }
        }
        dialogs[session] = dialog
        let held = early.take(session)
        if !held.isEmpty {
            AccessoryPicker.log("\(session): \(held.count) entries that came before the request")
            dialog.update(held, removed: [])
        }
    }

    func update(session: String, entries: [PickerRow], removed: [UInt32]) {
        AccessoryPicker.log("\(session): \(entries.count) entries added or changed, \(removed.count) gone")
        guard let dialog = dialogs[session] else {
            early.hold(session, entries, removed: removed)
            return
        }
        dialog.update(entries, removed: removed)
    }

    func progress(session: String, step: String, error: ASError?, passkey: String?) {
        AccessoryPicker.log("\(session): setup \(step)")
        dialogs[session]?.progress(step: step, error: error, passkey: passkey)
    }

    /// `ConfirmPasskey`: the dialog of the session asks the person; the answer replies to `call`.
    func confirmPasskey(_ call: PickerAgentCall, _ code: String) {
        guard let dialog = dialogs[call.session] else {
            call.cancel("no picker of that session is open")
            return
        }
        AccessoryPicker.log("\(call.session): the accessory shows a number to compare")
        dialog.confirmPasskey(code, call: call)
    }

    func cancel(session: String, error: ASError?) {
        AccessoryPicker.log("\(session): the agent ended the picker")
        dialogs[session]?.cancelledByAgent(error)
    }

    /// `Release`, or the picker stopping: every dialog goes, a pending choice answered cancelled.
    func closeAll() {
        for dialog in dialogs.values { dialog.close() }
        dialogs = [:]
    }

    /// The sessions with a dialog open (for logs and tests).
    var sessions: [String] { dialogs.keys.sorted() }
}
