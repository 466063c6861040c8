import AccessoryCore
import AccessorySetupKit
import BusService
import FoundationEssentials
import GLibRuntime

/// The Accessories window and the agent behind it, on the GTK thread: an actor whose executor
/// is `GtkThread`, so its methods and its window's handlers never run concurrently. It lists
/// the records again whenever the agent reports a change, comes back, or an action ends.
actor AccessoriesController {
    nonisolated var unownedExecutor: UnownedSerialExecutor { GtkThread.shared.asUnownedSerialExecutor() }

    private let bus: BusAddress
    /// Another user's accessories (polkit: `manage-others`); the caller's own when nil.
    private let user: UInt32?
    private let images: ProductImages
    private var connection: AgentConnection?
    private var window: AccessoriesWindow?
    private var watching: [Task<Void, Never>] = []
    private var events: Task<Void, Never>?
    /// Counts the listings asked for, so that only the last one shows.
    private var listings = 0
    private var pickers: [Task<Void, Never>] = []
    private let closedContinuation: AsyncStream<Void>.Continuation
    /// Yields once the person closed the window.
    let closed: AsyncStream<Void>

    init(bus: BusAddress, user: UInt32?, images: ProductImages) {
        self.bus = bus
        self.user = user
        self.images = images
        (closed, closedContinuation) = AsyncStream.makeStream()
    }

    /// Opens the window, connects to the agent and lists the accessories.
    func start() async {
        IconTheme.addSearchPaths(DesktopApplication.flatpakExportDirectories.map { "\($0)/icons" })
        window = AccessoriesWindow(images: images, actions: makeActions())
        await connect()
    }

    func close() {
        window?.close()
    }

    private func connect() async {
        if connection == nil {
            do {
                connection = try await AgentConnection.connect(bus)
            } catch {
                window?.show(.failed(error.message))
                return
            }
            watchAgent()
        }
        await subscribe()
        await list()
    }

    /// Lists again each time the agent comes back onto the bus.
    private func watchAgent() {
        guard let connection else { return }
        watching.append(
            Task { [weak self] in
                for await _ in await connection.agentArrivals() {
                    AccessorySettings.log("the agent is back")
                    await self?.subscribe()
                    await self?.list()
                }
            })
    }

    /// Follows the agent's events (`Subscribe`): a record added, changed or removed by any client
    /// lists again.
    private func subscribe() async {
        guard let connection else { return }
        events?.cancel()
        let stream: AsyncStream<AgentEvent>
        do {
            stream = try await connection.subscribe()
        } catch {
            AccessorySettings.log("no live updates: \(error.message)")
            return
        }
        events = Task { [weak self] in
            for await event in stream where event.accessory != nil || !event.migrated.isEmpty {
                await self?.list()
            }
        }
    }

    /// Shows the records and configurations as the agent has them now.
    func list() async {
        guard let connection else { return await connect() }
        listings += 1
        let listing = listings
        let content: AccessoriesContent
        do {
            let accessories = try await connection.accessories(user: user)
            // Another user's configurations are not the caller's to see.
            let configurations = user == nil ? try await connection.configuredSSIDs() : []
            let ids = Set(accessories.compactMap(\.application))
            // Desktop files are read off the GTK thread.
            let applications = await Task.detached {
                Dictionary(uniqueKeysWithValues: ids.map { ($0, DesktopApplication.lookUp($0)) })
            }.value
            content = AccessoriesContent(
                AccessoryGroup.grouping(accessories, applications: applications), configurations: configurations)
            AccessorySettings.log("\(accessories.count) accessories, \(configurations.count) configurations")
        } catch {
            content = AccessoriesContent(error)
            AccessorySettings.log("cannot list the accessories: \(error.message)")
        }
        guard listing == listings else { return }
        window?.show(content)
    }

    // MARK: Actions

    private func makeActions() -> AccessoriesActions {
        AccessoriesActions(
            rename: { [unowned self] accessory, name in
                self.assumeIsolated { controller in
                    controller.perform("“\(accessory.displayName)” cannot be renamed") {
                        (connection: AgentConnection) async throws(AgentCallError) in
                        try await connection.renameAccessory(id: accessory.id, to: name)
                        AccessorySettings.log("renamed \(accessory.id)")
                    }
                }
            },
            remove: { [unowned self] accessory in
                self.assumeIsolated { controller in
                    controller.perform("“\(accessory.displayName)” cannot be removed") {
                        (connection: AgentConnection) async throws(AgentCallError) in
                        try await connection.removeAccessory(id: accessory.id)
                        AccessorySettings.log("removed \(accessory.id)")
                    }
                }
            },
            removeAccess: { [unowned self] group in
                self.assumeIsolated { controller in
                    controller.perform("The access of \(group.title) cannot be removed") {
                        (connection: AgentConnection) async throws(AgentCallError) in
                        for accessory in group.accessories {
                            try await connection.removeAccessory(id: accessory.id)
                        }
                        AccessorySettings.log("removed the \(group.accessories.count) accessories of \(group.id)")
                    }
                }
            },
            removeConfiguration: { [unowned self] ssid in
                self.assumeIsolated { controller in
                    controller.perform("The network “\(ssid)” cannot be removed") {
                        (connection: AgentConnection) async throws(AgentCallError) in
                        try await connection.removeConfiguration(ssid: ssid)
                        AccessorySettings.log("removed a Wi-Fi configuration")
                    }
                }
            },
            setUp: { [unowned self] in
                self.assumeIsolated { $0.chooseProfile() }
            },
            open: { [unowned self] page in
                self.assumeIsolated { $0.window?.open(page) }
            },
            retry: { [unowned self] in
                self.assumeIsolated { controller in
                    controller.window?.show(.loading)
                    Task { await controller.connect() }
                }
            },
            closed: { [unowned self] in
                self.assumeIsolated { $0.finish() }
            })
    }

    /// Runs `body` against the agent; a failure shows as `failure`: the agent's reason. Lists again after.
    private func perform(
        _ failure: String, _ body: @escaping @Sendable (AgentConnection) async throws(AgentCallError) -> Void
    ) {
        guard let connection else { return }
        Task {
            do throws(AgentCallError) {
                try await body(connection)
                window?.showError(nil)
            } catch {
                window?.showError("\(failure): \(error.message)")
                AccessorySettings.log("\(failure): \(error.message)")
            }
            await list()
        }
    }

    /// "Set Up Accessory…": the installed profiles to choose from; the chosen one's picker opens.
    private func chooseProfile() {
        let profiles = InstalledProfiles(directories: images.directories).all
        window?.chooseProfile(profiles) { [unowned self] profile in
            self.assumeIsolated { $0.showPicker(profile) }
        }
    }

    /// Opens a session over `profile` and shows the picker for its items; the desktop's picker
    /// shows the dialog. The session ends once the picker is dismissed.
    private func showPicker(_ profile: InstalledProfile) {
        guard let connection else { return }
        pickers.append(
            Task {
                do throws(AgentCallError) {
                    let session = try await connection.openSession(profile: profile.id)
                    let events = session.events()
                    try await session.activate()
                    try await session.showPicker(items: try await session.items())
                    AccessorySettings.log("showing the picker of \(profile.id)")
                    window?.showError(nil)
                    for await event in events where event.eventType == .pickerDidDismiss { break }
                    try? await session.invalidate()
                } catch {
                    window?.showError("The picker of \(profile.vendor) cannot be shown: \(error.message)")
                    AccessorySettings.log("cannot show the picker of \(profile.id): \(error.message)")
                }
                await list()
            })
    }

    private func finish() {
        window = nil
        for task in watching + pickers { task.cancel() }
        events?.cancel()
        closedContinuation.yield()
        closedContinuation.finish()
    }
}

/// A profile installed for the agent, as "Set Up Accessory…" offers it.
struct InstalledProfile: Sendable, Hashable {
    var id: String
    var vendor: String
}

/// The profiles in the agent's profile directories, by vendor; the first directory's wins.
struct InstalledProfiles: Sendable {
    var directories: [URL]

    var all: [InstalledProfile] {
        var found: [String: InstalledProfile] = [:]
        for directory in directories.reversed() {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            for name in names where name.hasSuffix(".json") {
                guard let profile = try? AccessoryProfile.load(contentsOf: directory.appendingPathComponent(name))
                else { continue }
                found[profile.id] = InstalledProfile(id: profile.id, vendor: profile.vendor)
            }
        }
        return found.values.sorted { ($0.vendor.lowercased(), $0.id) < ($1.vendor.lowercased(), $1.id) }
    }
}
