import AccessoryCore
import AccessorySetupKit
import AgentInterface
import FoundationEssentials
import GLibRuntime

/// What the person asks of the Accessories window, confirmed where it removes something.
struct AccessoriesActions {
    var rename: (AccessoryDetails, String) -> Void
    var remove: (AccessoryDetails) -> Void
    var removeAccess: (AccessoryGroup) -> Void
    var removeConfiguration: (String) -> Void
    var setUp: () -> Void
    var open: (URL) -> Void
    /// Try again after the agent was missing or refused.
    var retry: () -> Void
    var closed: () -> Void
}

/// The Accessories window: the person's accessories grouped by application, the Wi-Fi
/// configurations applications applied, and a status page where there is nothing to list. It
/// lives on the GTK thread only (see `AccessoriesController`).
final class AccessoriesWindow {
    static let title = "Accessories"

    private let window = Window(title: title)
    private let images: ProductImages
    private let actions: AccessoriesActions
    private let content = Box(.vertical, spacing: 0)
    private var page: Widget?
    private let errorLabel = Label("")
    private let setUp = Button(mnemonic: "_Set Up Accessory…")
    private var isClosed = false

    init(images: ProductImages, actions: AccessoriesActions) {
        self.images = images
        self.actions = actions
        window.setDefaultSize(width: 640, height: 600)
        let header = HeaderBar(title: WindowTitle(title: Self.title, subtitle: ""))
        setUp.addStyleClass("suggested-action")
        header.packStart(setUp)
        content.append(header)
        errorLabel.addStyleClass("error")
        errorLabel.wraps = true
        errorLabel.setMargins(12)
        errorLabel.isVisible = false
        content.append(errorLabel)
        window.setContent(content)
        setUp.onClicked { [weak self] in self?.actions.setUp() }
        window.onCloseRequest { [weak self] in
            self?.finish()
            return false
        }
        window.onShortcut("<Control>w") { [weak self] in self?.close() }
        show(.loading)
        window.present()
    }

    // MARK: Content

    /// Replaces what the window shows.
    func show(_ state: AccessoriesContent) {
        if let page { content.remove(page) }
        let next: Widget
        switch state {
        case .loading:
            next = StatusPage(iconName: "content-loading-symbolic", title: "Loading…", description: "")
        case .list(let groups, let configurations):
            next = makeList(groups, configurations: configurations)
        case .empty:
            let status = StatusPage(
                iconName: "preferences-other-symbolic", title: "No Accessories",
                description: "Accessories that applications set up appear here. Set one up to begin.")
            let button = Button(mnemonic: "_Set Up Accessory…")
            button.addStyleClass("pill")
            button.addStyleClass("suggested-action")
            button.horizontalAlignment = .center
            button.onClicked { [weak self] in self?.actions.setUp() }
            status.setChild(button)
            next = status
        case .noAgent:
            next = retryPage(
                icon: "dialog-warning-symbolic", title: "The Accessory Service Is Not Running",
                description: "Install the accessory-setup package, or ask your administrator to start it.")
        case .notAllowed:
            next = retryPage(
                icon: "action-unavailable-symbolic", title: "Not Allowed",
                description: "An administrator’s password is needed to see another person’s accessories.")
        case .failed(let message):
            next = retryPage(icon: "dialog-error-symbolic", title: "Accessories Cannot Be Shown", description: message)
        }
        next.expands = true
        content.append(next)
        page = next
        // The empty page offers it itself; a problem page offers Try Again instead.
        setUp.isVisible = state.isList
    }

    /// Says what went wrong with the last action, until the next one succeeds.
    func showError(_ message: String?) {
        errorLabel.text = message ?? ""
        errorLabel.isVisible = message != nil
    }

    func close() {
        guard !isClosed else { return }
        window.destroy()
        finish()
    }

    private func finish() {
        guard !isClosed else { return }
        isClosed = true
        actions.closed()
    }

    private func retryPage(icon: String, title: String, description: String) -> StatusPage {
        let status = StatusPage(iconName: icon, title: title, description: description)
        let button = Button(mnemonic: "_Try Again")
        button.addStyleClass("pill")
        button.horizontalAlignment = .center
        button.onClicked { [weak self] in self?.actions.retry() }
        status.setChild(button)
        return status
    }

    /// The groups, then the configurations, in a scrolling column.
    private func makeList(_ groups: [AccessoryGroup], configurations: [String]) -> ScrollingColumn {
        let column = Box(.vertical, spacing: 24)
        column.setMargins(24)
        for group in groups { column.append(makeGroup(group)) }
        if !configurations.isEmpty { column.append(makeConfigurations(configurations)) }
        return ScrollingColumn(column, maximumWidth: 640)
    }

    /// The application's icon, name and count of accessories over its rows, with Remove Access
    /// for a sandboxed application.
    private func makeGroup(_ group: AccessoryGroup) -> Box {
        let icon: Image
        if group.application == nil {
            icon = Image(iconName: "computer-symbolic")
        } else {
            icon = group.icon.flatMap { Image(serializedIcon: $0) } ?? Image(iconName: "application-x-executable")
        }
        icon.setAccessibleLabel(group.title)
        let count = group.accessories.count == 1 ? "1 accessory" : "\(group.accessories.count) accessories"
        let header = makeHeader(icon: icon, title: group.title, subtitle: count)
        if group.application != nil {
            let removeAccess = Button(mnemonic: "Remove _Access")
            removeAccess.setOnlyAccessibleLabel("Remove Access of \(group.title)")
            removeAccess.verticallyCentered()
            removeAccess.onClicked { [weak self] in self?.confirmRemoveAccess(group) }
            header.append(removeAccess)
        }
        let list = ListBox(selection: .none)
        list.addStyleClass("boxed-list")
        list.setAccessibleLabel("Accessories of \(group.title)")
        for accessory in group.accessories { list.append(makeRow(accessory)) }
        let section = Box(.vertical, spacing: 12)
        section.append(header)
        section.append(list)
        return section
    }

    private func makeConfigurations(_ configurations: [String]) -> Box {
        let icon = Image(iconName: "network-wireless-symbolic")
        icon.setAccessibleLabel("Wi-Fi")
        let header = makeHeader(
            icon: icon, title: "Wi-Fi Networks", subtitle: "Networks that applications configured on this computer")
        let list = ListBox(selection: .none)
        list.addStyleClass("boxed-list")
        list.setAccessibleLabel("Wi-Fi Networks")
        for ssid in configurations {
            let row = ActionRow(title: ssid, subtitle: "Wi-Fi configuration")
            let remove = Button(iconName: "user-trash-symbolic", label: "Remove the network \(ssid)")
            remove.makeFlat()
            remove.onClicked { [weak self] in self?.confirmRemoveConfiguration(ssid) }
            row.addSuffix(remove)
            row.setAccessibleDescription("Wi-Fi configuration")
            list.append(row)
        }
        let section = Box(.vertical, spacing: 12)
        section.append(header)
        section.append(list)
        return section
    }

    /// A section's heading: its icon, then its title over a dimmed line.
    private func makeHeader(icon: Image, title: String, subtitle: String) -> Box {
        let header = Box(.horizontal, spacing: 12)
        icon.pixelSize = 32
        header.append(icon)
        let titles = Box(.vertical, spacing: 2)
        titles.expandsHorizontally = true
        let heading = Label(heading: title)
        heading.addStyleClass("heading")
        heading.xAlign = 0
        titles.append(heading)
        let line = Label(subtitle)
        line.addStyleClass("dim-label")
        line.xAlign = 0
        line.wraps = true
        titles.append(line)
        header.append(titles)
        return header
    }

    private func makeRow(_ accessory: AccessoryDetails) -> ActionRow {
        let row = ActionRow(title: accessory.displayName, subtitle: accessory.summary)
        let image: Image
        if let file = images.file(for: accessory) {
            image = Image(file: file.path)
        } else {
            image = Image(
                iconName: accessory.isBluetoothOnly ? "bluetooth-active-symbolic" : "network-wireless-symbolic")
        }
        image.pixelSize = 48
        image.setAccessibleLabel("Picture of \(accessory.displayName)")
        row.addPrefix(image)
        if let page = accessory.webPage {
            let open = Button(mnemonic: "_Open")
            open.setOnlyAccessibleLabel("Open the web page of \(accessory.displayName)")
            open.makeFlat()
            open.onClicked { [weak self] in self?.actions.open(page) }
            row.addSuffix(open)
        }
        let rename = Button(iconName: "document-edit-symbolic", label: "Rename \(accessory.displayName)")
        rename.makeFlat()
        rename.onClicked { [weak self] in self?.askNewName(accessory) }
        row.addSuffix(rename)
        let remove = Button(iconName: "user-trash-symbolic", label: "Remove \(accessory.displayName)")
        remove.makeFlat()
        remove.onClicked { [weak self] in self?.confirmRemove(accessory) }
        row.addSuffix(remove)
        row.setAccessibleDescription(accessory.summary)
        return row
    }

    func open(_ page: URL) {
        window.showURI(page.absoluteString)
    }

    /// Asks which installed profile to set an accessory up with; `chosen` gets the answer.
    func chooseProfile(_ profiles: [InstalledProfile], _ chosen: @escaping (InstalledProfile) -> Void) {
        guard !profiles.isEmpty else {
            showError("No accessory profiles are installed. Install the package of your accessory's vendor.")
            return
        }
        let dialog = MessageDialog(
            over: window, heading: "Set Up Accessory", body: "Which kind of accessory do you want to set up?")
        dialog.addResponse("cancel", "_Cancel")
        for profile in profiles {
            dialog.addResponse(profile.id, String(profile.vendor.flatMap { $0 == "_" ? ["_", "_"] : [$0] }))
        }
        dialog.setResponses(default: "cancel", close: "cancel")
        dialog.onResponse { response in
            if let profile = profiles.first(where: { $0.id == response }) { chosen(profile) }
        }
        dialog.present()
    }

    // MARK: Confirmations

    private func askNewName(_ accessory: AccessoryDetails) {
        let dialog = MessageDialog(
            over: window, heading: "Rename Accessory", body: "The name “\(accessory.displayName)” shows everywhere.")
        let entry = Entry(text: accessory.displayName, label: "Name")
        dialog.setExtraChild(entry)
        dialog.addResponse("cancel", "_Cancel")
        dialog.addResponse("rename", "_Rename", appearance: .suggested)
        dialog.setResponses(default: "rename", close: "cancel")
        dialog.onResponse { [weak self] response in
            let name = entry.text.trimmingWhitespace()
            guard response == "rename", !name.isEmpty, name != accessory.displayName else { return }
            self?.actions.rename(accessory, name)
        }
        dialog.present()
        entry.grabFocus()
    }

    private func confirmRemove(_ accessory: AccessoryDetails) {
        confirm(
            heading: "Remove “\(accessory.displayName)”?",
            body: "Its application can no longer use it, and its Wi-Fi networks are removed from this computer. "
                + "To use it again, set it up again.",
            action: "_Remove"
        ) { [weak self] in self?.actions.remove(accessory) }
    }

    private func confirmRemoveAccess(_ group: AccessoryGroup) {
        confirm(heading: "Remove Access of \(group.title)?", body: group.removeAccessBody, action: "Remove _Access") {
            [weak self] in self?.actions.removeAccess(group)
        }
    }

    private func confirmRemoveConfiguration(_ ssid: String) {
        confirm(
            heading: "Remove the Network “\(ssid)”?",
            body: "This computer forgets the network an application configured, and leaves it if connected.",
            action: "_Remove"
        ) { [weak self] in self?.actions.removeConfiguration(ssid) }
    }

    /// A destructive confirmation: Cancel is the default, so Return alone removes nothing.
    private func confirm(heading: String, body: String, action: String, _ confirmed: @escaping () -> Void) {
        let dialog = MessageDialog(over: window, heading: heading, body: body)
        dialog.addResponse("cancel", "_Cancel")
        dialog.addResponse("confirm", action, appearance: .destructive)
        dialog.setResponses(default: "cancel", close: "cancel")
        dialog.onResponse { response in
            if response == "confirm" { confirmed() }
        }
        dialog.present()
    }
}

extension AccessoriesContent {
    fileprivate var isList: Bool {
        if case .list = self { return true }
        return false
    }
}

extension ProductImages {
    /// The image of the item the record was set up from, found in its profile (`<profile>.json`
    /// in one of the directories): the item whose descriptor the record matched, else the
    /// profile's only item.
    func file(for accessory: AccessoryDetails) -> URL? {
        for directory in directories {
            let url = directory.appendingPathComponent("\(accessory.profile).json")
            guard let profile = try? AccessoryProfile.load(contentsOf: url) else { continue }
            let items = profile.items
            let descriptor = try? AccessorySession.discoveryDescriptor(accessory.descriptor, at: "descriptor")
            let matched = items.first { $0.descriptor == descriptor } ?? (items.count == 1 ? items.first : nil)
            return file(for: matched?.productImage)
        }
        return nil
    }
}
