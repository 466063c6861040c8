import FoundationEssentials

/// One client's session with the agent, the `ASAccessorySession` counterpart, as a value with
/// no I/O: every request, discovery result, picker answer and timer is an `Input`, and
/// `handle(_:at:)` is the one writer of the state. It returns the `Effect`s the service carries
/// out in order (records to save come before the events that announce them), or throws the
/// error the request is refused with, leaving the state as it was.
///
/// Named after Apple's class rather than "state machine" because it is the whole session the
/// agent's `Session1` object wraps: the profile it was opened with, the client's records, the
/// picker, and the order of events.
public struct AccessorySession: Sendable {
    public enum Phase: Hashable, Sendable {
        /// Opened, waiting for `activate`.
        case inactive
        case active
        /// A picker is shown and discovery may be running.
        case picking
        /// An accessory was picked and the agent is pairing or bridging it, or waits for the
        /// client to finish its authorization (`confirmAuthorization`).
        case settingUp
        case invalidated
    }

    public enum Input: Sendable {
        case activate
        case showPicker([PickerRequestItem], PickerDisplaySettings, PickerFrontEnd)
        /// Every access point the Wi-Fi backend hears now.
        case wifiScanned([WiFiScanEntry])
        /// Every advertiser the Bluetooth backend hears now.
        case bluetoothHeard([BLEAdvertisement])
        case updatePicker([DiscoveredDisplayItem])
        case finishPickerDiscovery
        /// The picker agent's answer.
        case picked(PickerChoice)
        /// The picker ended without a pick: `userCancelled`, or `pickerRestricted` when its front
        /// end left the bus.
        case pickerDismissed(AccessorySessionError)
        case setupFinished(SetupStep, AccessorySessionError?)
        /// What the accessory revealed in the `hotspotHandoff` step, sent before its `setupFinished`.
        case hotspotRevealed(RevealedHotspot)
        /// One lookup per migration item of the pending `showPicker`, in its order.
        case migrationsLookedUp([MigrationLookup])
        case timerFired(Timer)
        case finishAuthorization(UUID, AccessorySettings)
        case failAuthorization(UUID)
        case updateAuthorization(UUID, DiscoveryDescriptor)
        case removeAccessory(UUID)
        case renameAccessory(UUID, name: String, options: RenameOptions)
        /// A record of this owner was added or changed elsewhere (another session, the CLI).
        case recordChanged(AccessoryRecord)
        /// A record of this owner was removed elsewhere.
        case recordRemoved(UUID)
        /// `nil` when the client asked; otherwise why the agent ended the session.
        case invalidate(AccessorySessionError?)
    }

    public enum Effect: Hashable, Sendable {
        /// Send the event to the client.
        case emit(AccessoryEvent)
        /// Discover over Wi-Fi and Bluetooth LE with these descriptors, and report what is heard.
        case startDiscovery([DiscoveryDescriptor])
        case stopDiscovery
        case startTimer(Timer, after: Duration)
        case cancelTimer(Timer)
        /// Ask the picker agent to present a picker for these items.
        case presentPicker([PickerDisplayItem])
        /// Tell the picker agent which entries are added or changed, and which are gone.
        case updatePicker(shown: [PickerEntry], removed: [Int])
        /// Tell the picker agent to close its picker.
        case dismissPicker
        /// Look up each migration item's NetworkManager profile and BlueZ device, then send
        /// `migrationsLookedUp`.
        case lookUpMigrations([MigrationDisplayItem])
        /// Pair, bridge or run the hotspot handoff of the picked device over BlueZ, then send
        /// `setupFinished` (after `hotspotRevealed` for a handoff that succeeded).
        case setUp(SetupStep, PickerEntry)
        /// Abandon the running step (BlueZ `CancelPairing`); no `setupFinished` is expected.
        case cancelSetUp(SetupStep, PickerEntry)
        /// Tell the picker agent that the picked accessory is added and the client is finishing
        /// its authorization (`confirmAuthorization`).
        case awaitAuthorization(PickerEntry)
        /// Store the record durably (added or changed).
        case save(AccessoryRecord)
        /// Delete the record, and the NetworkManager profiles made for it.
        case delete(AccessoryRecord)
    }

    /// A setup step the picker runs before the accessory is added.
    public enum SetupStep: String, Hashable, Sendable {
        /// `bluetoothPairingLE`: BlueZ `Pair()`.
        case pairing
        /// `bluetoothTransportBridging`: the classic profiles of the same device.
        case bridging
        /// The profile's `bluetoothToWiFi` handoff: the accessory switches its hotspot on and
        /// reveals it over GATT; the record keeps the hotspot, to be joined.
        case hotspotHandoff
    }

    /// A timer the service runs for the session. A timer of an earlier picker is ignored.
    public struct Timer: Hashable, Sendable {
        public enum Kind: Hashable, Sendable {
            case discovery
            /// The kiosk's `strongestSignal` rule chooses when this fires.
            case kioskSettle
            /// A `confirmAuthorization` pick the client neither finished nor failed in time.
            case authorization
        }

        public var kind: Kind
        public var picker: Int
    }

    public let profile: AccessoryProfile
    public let owner: AccessoryOwner
    public private(set) var accessories: [AccessoryRecord]
    private var activated = false
    private var isInvalidated = false
    private var picker: Picker?

    /// The network the open picker's client said it will give the picked accessory.
    public var pickerSharedNetwork: PickerDisplaySettings.SharedNetwork? { picker?.settings.sharedNetwork }
    private var pendingMigrations: [MigrationDisplayItem]?
    private var pickers = 0
    private var entryTable = PickerEntryTable()
    private var passphrases: [UUID: SuppliedPassphrase] = [:]
    /// The proofs of possession typed in the picker, for provisioning what was picked.
    private var proofs: [UUID: Secret] = [:]
    /// What accessories revealed in their hotspot handoff: their security wins over the profile's.
    private var revealedHotspots: [UUID: RevealedHotspot] = [:]

    /// Most items a `showPicker` may carry.
    public static let maximumItems = 256
    /// Longest display name, in UTF-8 bytes.
    public static let maximumNameLength = 128

    /// How long a pick of an entry the picker has just stopped showing still stands: the
    /// person chose what they saw, and a hidden hotspot answering one probe and not the next,
    /// or a Bluetooth advertisement missed once, must not turn their choice away.
    public static let vanishedGrace: TimeInterval = 10

    /// A session of `owner` over `profile`, holding the records the owner already has.
    public init(profile: AccessoryProfile, owner: AccessoryOwner, accessories: [AccessoryRecord]) {
        self.profile = profile
        self.owner = owner
        self.accessories = accessories.filter { $0.owner == owner }
    }

    public var phase: Phase {
        if isInvalidated { return .invalidated }
        if !activated { return .inactive }
        switch picker?.stage {
        case nil: return .active
        case .choosing?: return .picking
        case .settingUp?, .confirming?: return .settingUp
        }
    }

    /// The entries the picker shows now.
    public var pickerEntries: [PickerEntry] {
        picker.map { $0.shown.values.sorted { $0.id < $1.id } } ?? []
    }

    /// The Bluetooth address of the accessory being set up, while a setup step runs.
    public var settingUpBluetoothAddress: MACAddress? {
        guard case .settingUp(let entry, _, _)? = picker?.stage else { return nil }
        return entry.bluetooth?.address
    }

    /// The passphrase the picker, the kiosk policy or the accessory's handoff supplied for an
    /// accessory picked in this session, for joining its hotspot; `nil` once the owner renamed
    /// the hotspot to one it did not reveal itself, as the passphrase belongs to the one found.
    public func suppliedPassphrase(for id: UUID) -> SuppliedPassphrase? {
        let renamed = accessories.first { $0.id == id }?.hotspotWasRenamed ?? false
        return renamed && revealedHotspots[id] == nil ? nil : passphrases[id]
    }

    /// The proof of possession the person typed in the picker for an accessory picked in this
    /// session, where its profile says the code is printed on the device.
    public func suppliedProofOfPossession(for id: UUID) -> Secret? {
        proofs[id]
    }

    /// The hotspot an accessory picked in this session revealed in its handoff.
    public func revealedHotspot(for id: UUID) -> RevealedHotspot? {
        revealedHotspots[id]
    }

    /// Takes what an accessory revealed in a handoff run outside this session (a join after
    /// the picking session ended), as if it had been revealed here.
    public mutating func adopt(_ hotspot: RevealedHotspot, for id: UUID) {
        revealedHotspots[id] = hotspot
        passphrases[id] = hotspot.passphrase.map(SuppliedPassphrase.secret)
    }

    public mutating func handle(_ input: Input, at now: Date) throws(AccessorySessionError) -> [Effect] {
        if isInvalidated {
            if case .invalidate = input { return [] }
            throw .invalidated
        }
        switch input {
        case .activate:
            guard !activated else { throw .invalidRequest(field: "session", reason: "is already activated") }
            activated = true
            return [.emit(.activated(accessories))]
        case _ where !activated:
            throw .invalidRequest(field: "session", reason: "is not activated yet; call Activate first")
        case .showPicker(let items, let settings, let frontEnd):
            return try showPicker(items, settings: settings, frontEnd: frontEnd)
        case .wifiScanned(let entries):
            guard picker?.discovering == true else { return [] }
            picker?.wifi = entries
            return try rematch(at: now)
        case .bluetoothHeard(let advertisements):
            guard picker?.discovering == true else { return [] }
            picker?.bluetooth = advertisements
            return try rematch(at: now)
        case .updatePicker(let items):
            return try updatePicker(items, at: now)
        case .finishPickerDiscovery:
            let picker = try choosingPicker()
            return stopDiscovery(picker) + endIfNothingShown()
        case .picked(let choice):
            return try pick(choice, at: now)
        case .pickerDismissed(let error):
            guard let picker else { return [] }
            self.picker = nil
            return stopDiscovery(picker) + Self.cancelSetUp(picker) + unconfirmed(picker)
                + [.emit(.pickerDidDismiss(error))]
        case .setupFinished(let step, let error):
            return try setupFinished(step, error: error, at: now)
        case .hotspotRevealed(let hotspot):
            guard let picker, case .settingUp(_, _, let steps) = picker.stage, steps.first == .hotspotHandoff else {
                throw .invalidRequest(field: "step", reason: "no hotspotHandoff step is running")
            }
            self.picker?.revealed = hotspot
            return []
        case .migrationsLookedUp(let lookups):
            return try migrate(lookups, at: now)
        case .timerFired(let timer):
            return try timerFired(timer, at: now)
        case .finishAuthorization(let id, let settings):
            return try finishAuthorization(id, settings: settings, at: now) + endConfirmation(of: id, error: nil)
        case .failAuthorization(let id):
            let index = try recordIndex(id)
            try requireAwaiting(accessories[index])
            let removed = deleteRecord(at: index)
            return removed + endConfirmation(of: id, error: .applicationFailedAuthorization)
        case .updateAuthorization(let id, let descriptor):
            let index = try recordIndex(id)
            try validate(descriptor, at: "descriptor")
            return change(index, at: now) { $0.descriptor = descriptor }
        case .removeAccessory(let id):
            let index = try recordIndex(id)
            let removed = deleteRecord(at: index, unauthorize: false)
            return removed + endConfirmation(of: id, error: .removedBeforeAuthorization)
        case .renameAccessory(let id, let name, let options):
            return try rename(id, to: name, options: options, at: now)
        case .recordChanged(let record):
            guard record.owner == owner else { return [] }
            let event: AccessoryEvent
            if let index = accessories.firstIndex(where: { $0.id == record.id }) {
                guard accessories[index] != record else { return [] }
                accessories[index] = record
                event = .accessoryChanged(record)
            } else {
                accessories.append(record)
                event = .accessoryAdded(record)
            }
            // A device the owner added elsewhere leaves the picker shown now; an authorization
            // finished elsewhere (`Manager1.FinishAuthorization`) ends the picker waiting for it.
            let confirmed = record.state == .authorized ? endConfirmation(of: record.id, error: nil) : []
            return [.emit(event)] + confirmed + (phase == .picking ? try rematch(at: now) : [])
        case .recordRemoved(let id):
            guard let index = accessories.firstIndex(where: { $0.id == id }) else { return [] }
            passphrases[id] = nil
            proofs[id] = nil
            return [.emit(.accessoryRemoved(accessories.remove(at: index)))]
                + endConfirmation(of: id, error: .removedBeforeAuthorization)
        case .invalidate(let error):
            var effects: [Effect] = []
            if let picker {
                effects += stopDiscovery(picker) + Self.cancelSetUp(picker) + unconfirmed(picker)
                effects += dismissFrontEnd(picker)
                effects.append(.emit(.pickerDidDismiss(.invalidated)))
                self.picker = nil
            }
            pendingMigrations = nil
            isInvalidated = true
            return effects + [.emit(.invalidated(error))]
        }
    }
}

/// An item of `showPicker`: an accessory to discover, or one to adopt.
public enum PickerRequestItem: Hashable, Sendable {
    case display(PickerDisplayItem)
    case migration(MigrationDisplayItem)
}

// MARK: - The picker

extension AccessorySession {
    struct Picker: Sendable {
        enum Stage: Sendable {
            case choosing
            /// The steps still to run for the picked entry, the first one running.
            case settingUp(PickerEntry, PickerChoice, steps: [SetupStep])
            /// The entry is recorded, `awaitingAuthorization`, and the client is to finish or
            /// fail its authorization (`confirmAuthorization`).
            case confirming(PickerEntry, record: UUID)
        }

        var number: Int
        var items: [PickerDisplayItem]
        var settings: PickerDisplaySettings
        var frontEnd: PickerFrontEnd
        var matcher: AccessoryMatcher
        var stage = Stage.choosing
        var discovering = true
        /// The hotspot the picked accessory revealed in its handoff.
        var revealed: RevealedHotspot?
        var wifi: [WiFiScanEntry] = []
        var bluetooth: [BLEAdvertisement] = []
        /// Every entry discovery matches now.
        var matched: [Int: PickerEntry] = [:]
        /// What the picker shows: the matches, or with `filterDiscoveryResults` those the client
        /// passed to `updatePicker`, under its names.
        var shown: [Int: PickerEntry] = [:]
        /// Entries the picker stopped showing, and when: a pick of one still stands for
        /// `vanishedGrace`, since the person chose what the picker showed them.
        var vanished: [Int: (entry: PickerEntry, at: Date)] = [:]
        /// The client's names for entries, with `filterDiscoveryResults`.
        var clientItems: [Int: DiscoveredDisplayItem] = [:]
        /// Entries already sent to the client as `accessoryDiscovered`.
        var announced: Set<Int> = []
        var runningTimers: Set<Timer.Kind> = []

        var filters: Bool { settings.options.contains(.filterDiscoveryResults) }

        /// Shows `entries` from now on, remembering those it no longer shows.
        mutating func show(_ entries: [Int: PickerEntry], at now: Date) {
            for (id, entry) in shown where entries[id] == nil { vanished[id] = (entry, now) }
            for id in entries.keys { vanished[id] = nil }
            vanished = vanished.filter { now.timeIntervalSince($0.value.at) < AccessorySession.vanishedGrace }
            shown = entries
        }

        /// The entry `id` as the picker shows it, or showed it within `vanishedGrace` of `now`.
        func choosable(_ id: Int, at now: Date) -> PickerEntry? {
            if let entry = shown[id] { return entry }
            guard let gone = vanished[id], now.timeIntervalSince(gone.at) < AccessorySession.vanishedGrace else {
                return nil
            }
            return gone.entry
        }

        func timer(_ kind: Timer.Kind) -> Timer { Timer(kind: kind, picker: number) }

        var kioskPolicy: KioskPolicy.Policy? {
            if case .kiosk(let policy) = frontEnd { return policy }
            return nil
        }
    }

    private mutating func showPicker(
        _ items: [PickerRequestItem], settings: PickerDisplaySettings, frontEnd: PickerFrontEnd
    ) throws(AccessorySessionError) -> [Effect] {
        guard picker == nil && pendingMigrations == nil else { throw .pickerAlreadyActive }
        guard !items.isEmpty else { throw .invalidRequest(field: "items", reason: "must not be empty") }
        guard items.count <= Self.maximumItems else {
            throw .invalidRequest(
                field: "items", reason: "has \(items.count) items; at most \(Self.maximumItems) are allowed")
        }
        let longest = PickerDisplaySettings.DiscoveryTimeout.maximum
        if case .duration(let timeout) = settings.discoveryTimeout, timeout <= .zero || timeout > longest {
            throw .invalidRequest(
                field: "settings.discoveryTimeout", reason: "must be more than 0 and at most \(longest), or unbounded")
        }
        if settings.authorizationTimeout <= .zero || settings.authorizationTimeout > longest {
            throw .invalidRequest(
                field: "settings.authorizationTimeout", reason: "must be more than 0 and at most \(longest)")
        }
        if settings.sharedNetwork != nil && profile.provisioningExposure == nil {
            throw .invalidRequest(
                field: "settings.shareNetwork",
                reason: "profile \(profile.id) gives its accessories no network (no provisioning, not Improv)")
        }
        var display: [PickerDisplayItem] = []
        var migrations: [MigrationDisplayItem] = []
        for (index, item) in items.enumerated() {
            let field = "items[\(index)]"
            switch item {
            case .display(let item):
                try validate(item, at: field)
                display.append(item)
            case .migration(let migration):
                try validate(migration, at: field)
                migrations.append(migration)
            }
        }

        var effects: [Effect] = []
        if !display.isEmpty {
            pickers += 1
            var picker = Picker(
                number: pickers, items: display, settings: settings, frontEnd: frontEnd,
                matcher: AccessoryMatcher(descriptors: display.map(\.descriptor)))
            if frontEnd == .agent { effects.append(.presentPicker(display)) }
            effects.append(.startDiscovery(display.map(\.descriptor)))
            if case .duration(let timeout) = settings.discoveryTimeout {
                picker.runningTimers.insert(.discovery)
                effects.append(.startTimer(picker.timer(.discovery), after: timeout))
            }
            self.picker = picker
            effects.append(.emit(.pickerDidPresent))
        }
        if !migrations.isEmpty {
            pendingMigrations = migrations
            effects.append(.lookUpMigrations(migrations))
        }
        return effects
    }

    private func choosingPicker() throws(AccessorySessionError) -> Picker {
        guard let picker else {
            throw .invalidRequest(field: "session", reason: "no picker is shown; call ShowPicker first")
        }
        guard case .choosing = picker.stage else {
            throw .invalidRequest(field: "session", reason: "the picked accessory is being set up")
        }
        return picker
    }

    /// Matches what is heard now, updates the entries and tells the client and the picker. A
    /// device the owner already added is neither shown nor announced.
    private mutating func rematch(at now: Date) throws(AccessorySessionError) -> [Effect] {
        guard var picker else { return [] }
        let matches = picker.matcher.matches(wifi: picker.wifi, bluetooth: picker.bluetooth)
        let entries = Self.unitsToldApart(
            entryTable.entries(for: matches, items: picker.items).filter { entry in
                !accessories.contains { $0.isHeard(in: entry) }
            })
        picker.matched = Dictionary(uniqueKeysWithValues: entries.map { ($0.id, $0) })
        var effects: [Effect] = []
        var shown: [Int: PickerEntry] = [:]
        if picker.filters {
            for entry in entries.sorted(by: { $0.id < $1.id }) where !picker.announced.contains(entry.id) {
                picker.announced.insert(entry.id)
                effects.append(.emit(.accessoryDiscovered(entry)))
            }
            for (id, item) in picker.clientItems {
                if let entry = picker.matched[id] { shown[id] = Self.named(entry, item) }
            }
        } else {
            shown = picker.matched
        }
        effects += Self.pickerUpdate(from: picker.shown, to: shown, frontEnd: picker.frontEnd)
        picker.show(shown, at: now)
        self.picker = picker
        return effects + (try kioskChoice(at: now))
    }

    /// Units of one product broadcasting one setup SSID are offered each on its own, named with
    /// the last bytes of their BSSID, which a person can match with a label or the signal.
    static func unitsToldApart(_ entries: [PickerEntry]) -> [PickerEntry] {
        var sharing: [SSID: Int] = [:]
        for entry in entries { if let ssid = entry.wifi?.ssid { sharing[ssid, default: 0] += 1 } }
        return entries.map { entry in
            guard let wifi = entry.wifi, let ssid = wifi.ssid, sharing[ssid, default: 0] > 1 else { return entry }
            var entry = entry
            entry.name += " · " + wifi.bssid.description.suffix(5)
            return entry
        }
    }

    private static func named(_ entry: PickerEntry, _ item: DiscoveredDisplayItem) -> PickerEntry {
        var entry = entry
        entry.name = item.name
        entry.productImage = item.productImage ?? entry.productImage
        return entry
    }

    private static func pickerUpdate(
        from old: [Int: PickerEntry], to new: [Int: PickerEntry], frontEnd: PickerFrontEnd
    ) -> [Effect] {
        guard frontEnd == .agent else { return [] }
        let shown = new.values.filter { old[$0.id] != $0 }.sorted { $0.id < $1.id }
        let removed = old.keys.filter { new[$0] == nil }.sorted()
        return shown.isEmpty && removed.isEmpty ? [] : [.updatePicker(shown: shown, removed: removed)]
    }

    private mutating func updatePicker(
        _ items: [DiscoveredDisplayItem], at now: Date
    ) throws(AccessorySessionError) -> [Effect] {
        var picker = try choosingPicker()
        guard picker.filters else {
            throw .invalidRequest(
                field: "settings.options", reason: "updatePicker needs a picker shown with filterDiscoveryResults")
        }
        var shown = picker.shown
        for (index, item) in items.enumerated() {
            guard let entry = picker.matched[item.entryID] else {
                throw .invalidRequest(
                    field: "items[\(index)].entry", reason: "\(item.entryID) is not an accessory discovered now")
            }
            try Self.validateName(item.name, field: "items[\(index)].name")
            picker.clientItems[item.entryID] = item
            shown[item.entryID] = Self.named(entry, item)
        }
        let effects = Self.pickerUpdate(from: picker.shown, to: shown, frontEnd: picker.frontEnd)
        picker.show(shown, at: now)
        self.picker = picker
        return effects + (try kioskChoice(at: now))
    }

    /// Stops discovery and the picker's timers.
    private mutating func stopDiscovery(_ picker: Picker) -> [Effect] {
        self.picker?.discovering = false
        self.picker?.runningTimers = []
        let timers = [Timer.Kind.discovery, .kioskSettle, .authorization].filter(picker.runningTimers.contains)
        return (picker.discovering ? [.stopDiscovery] : []) + timers.map { .cancelTimer(picker.timer($0)) }
    }

    private func dismissFrontEnd(_ picker: Picker) -> [Effect] {
        picker.frontEnd == .agent ? [.dismissPicker] : []
    }

    /// Ends the picker with `discoveryTimeout` when it shows nothing; otherwise it stays for the
    /// person to choose.
    private mutating func endIfNothingShown() -> [Effect] {
        guard let picker, picker.shown.isEmpty else { return [] }
        self.picker = nil
        return dismissFrontEnd(picker) + [.emit(.pickerDidDismiss(.discoveryTimeout))]
    }

    private mutating func timerFired(_ timer: Timer, at now: Date) throws(AccessorySessionError) -> [Effect] {
        guard var picker, timer.picker == picker.number, picker.runningTimers.remove(timer.kind) != nil else {
            return []
        }
        self.picker = picker
        switch timer.kind {
        case .discovery:
            return stopDiscovery(picker) + endIfNothingShown()
        case .kioskSettle:
            guard let policy = picker.kioskPolicy, let entry = policy.choose(from: pickerEntries) else { return [] }
            return try pick(policy.choice(of: entry), at: now)
        case .authorization:
            guard case .confirming(_, let id) = picker.stage, let index = accessories.firstIndex(where: { $0.id == id })
            else { return [] }
            let timeout = picker.settings.authorizationTimeout
            return deleteRecord(at: index) + endConfirmation(of: id, error: .authorizationTimedOut(timeout))
        }
    }

    /// With the kiosk front end, picks as soon as the policy's rule can choose.
    private mutating func kioskChoice(at now: Date) throws(AccessorySessionError) -> [Effect] {
        guard let picker, let policy = picker.kioskPolicy, !picker.shown.isEmpty else { return [] }
        if case .strongestSignal(let settle) = policy.rule {
            guard !picker.runningTimers.contains(.kioskSettle) else { return [] }
            self.picker?.runningTimers.insert(.kioskSettle)
            return [.startTimer(picker.timer(.kioskSettle), after: settle)]
        }
        guard let entry = policy.choose(from: pickerEntries) else { return [] }
        return try pick(policy.choice(of: entry), at: now)
    }

    private mutating func pick(_ choice: PickerChoice, at now: Date) throws(AccessorySessionError) -> [Effect] {
        let picker = try choosingPicker()
        // One the owner has added meanwhile (elsewhere) is not offered, however recently shown.
        guard let entry = picker.choosable(choice.entryID, at: now),
            !accessories.contains(where: { $0.isHeard(in: entry) })
        else {
            throw .invalidRequest(field: "entry", reason: "\(choice.entryID) is not an entry the picker shows")
        }
        let item = picker.items[entry.itemIndex]
        if let name = choice.name {
            guard item.setupOptions.contains(.rename) else {
                throw .invalidRequest(field: "name", reason: "the item '\(item.name)' does not offer renaming")
            }
            try Self.validateName(name, field: "name")
        }
        var steps: [SetupStep] = []
        if entry.bluetooth != nil {
            if item.descriptor.supportedOptions.contains(.bluetoothPairingLE) { steps.append(.pairing) }
            if item.descriptor.supportedOptions.contains(.bluetoothTransportBridging) { steps.append(.bridging) }
            if profile.handoff == .bluetoothToWiFi { steps.append(.hotspotHandoff) }
        }
        var effects = stopDiscovery(picker)
        if choice.name != nil { effects.append(.emit(.pickerSetupRename)) }
        guard let step = steps.first else { return effects + add(entry, choice, at: now) }
        self.picker?.stage = .settingUp(entry, choice, steps: steps)
        return effects + Self.begin(step, entry)
    }

    private static func cancelSetUp(_ picker: Picker) -> [Effect] {
        guard case .settingUp(let entry, _, let steps) = picker.stage, let step = steps.first else { return [] }
        return [.cancelSetUp(step, entry)]
    }

    /// The event of a step, then the step. The hotspot handoff bridges Bluetooth to Wi-Fi.
    private static func begin(_ step: SetupStep, _ entry: PickerEntry) -> [Effect] {
        [.emit(step == .pairing ? .pickerSetupPairing : .pickerSetupBridging), .setUp(step, entry)]
    }

    private mutating func setupFinished(
        _ step: SetupStep, error: AccessorySessionError?, at now: Date
    ) throws(AccessorySessionError) -> [Effect] {
        guard let picker, case .settingUp(let entry, let choice, let steps) = picker.stage, steps.first == step else {
            throw .invalidRequest(field: "step", reason: "no \(step.rawValue) step is running")
        }
        if let error {
            self.picker = nil
            return [.emit(.pickerSetupFailed(error))] + dismissFrontEnd(picker) + [.emit(.pickerDidDismiss(error))]
        }
        if step == .hotspotHandoff && picker.revealed == nil {
            throw .invalidRequest(field: "step", reason: "the hotspotHandoff step finished without a revealed hotspot")
        }
        let rest = Array(steps.dropFirst())
        guard let next = rest.first else { return add(entry, choice, at: now) }
        self.picker?.stage = .settingUp(entry, choice, steps: rest)
        return Self.begin(next, entry)
    }

    /// Records the picked accessory and closes the picker: `accessoryAdded`, then `pickerDidDismiss`.
    private mutating func add(_ entry: PickerEntry, _ choice: PickerChoice, at now: Date) -> [Effect] {
        guard let picker else { return [] }
        let item = picker.items[entry.itemIndex]
        let awaiting = !item.setupOptions.isDisjoint(with: [.finishInApp, .confirmAuthorization])
        let record = AccessoryRecord(
            displayName: choice.name ?? entry.name, state: awaiting ? .awaitingAuthorization : .authorized,
            ssid: picker.revealed?.ssid ?? entry.wifi?.ssid, hotspotBSSID: entry.wifi?.bssid,
            bluetoothIdentifier: entry.bluetooth?.address,
            descriptor: item.descriptor, owner: owner, created: now)
        accessories.append(record)
        passphrases[record.id] = picker.revealed?.passphrase.map(SuppliedPassphrase.secret) ?? choice.passphrase
        proofs[record.id] = choice.proofOfPossession
        revealedHotspots[record.id] = picker.revealed
        let added: [Effect] = [.save(record), .emit(.accessoryAdded(record))]
        if item.setupOptions.contains(.confirmAuthorization) && !item.setupOptions.contains(.finishInApp) {
            // Apple's picker stays in its setting-up state until the app finishes or fails.
            self.picker?.stage = .confirming(entry, record: record.id)
            self.picker?.runningTimers.insert(.authorization)
            return added + [
                .awaitAuthorization(entry),
                .startTimer(picker.timer(.authorization), after: picker.settings.authorizationTimeout),
            ]
        }
        self.picker = nil
        return added + dismissFrontEnd(picker) + [.emit(.pickerDidDismiss(nil))]
    }

    /// Closes the picker that waits for the client to confirm `id`: at once after
    /// `finishAuthorization` (`error` nil), with `pickerSetupFailed` otherwise.
    private mutating func endConfirmation(of id: UUID, error: AccessorySessionError?) -> [Effect] {
        guard let picker, case .confirming(_, id) = picker.stage else { return [] }
        self.picker = nil
        let failed: [Effect] = error.map { [.emit(.pickerSetupFailed($0))] } ?? []
        return stopDiscovery(picker) + failed + dismissFrontEnd(picker) + [.emit(.pickerDidDismiss(error))]
    }

    /// What a picker that ends while waiting for the client's confirmation leaves behind: not
    /// the record, since nobody confirmed it.
    private mutating func unconfirmed(_ picker: Picker) -> [Effect] {
        guard case .confirming(_, let id) = picker.stage, let index = accessories.firstIndex(where: { $0.id == id })
        else { return [] }
        return deleteRecord(at: index)
    }

    /// Deletes a record of this session's owner: `delete`, then `accessoryRemoved`.
    private mutating func deleteRecord(at index: Int, unauthorize: Bool = true) -> [Effect] {
        var record = accessories.remove(at: index)
        if unauthorize { record.state = .unauthorized }
        passphrases[record.id] = nil
        proofs[record.id] = nil
        revealedHotspots[record.id] = nil
        return [.delete(record), .emit(.accessoryRemoved(record))]
    }
}

// MARK: - Migration

extension AccessorySession {
    private mutating func migrate(
        _ lookups: [MigrationLookup], at now: Date
    ) throws(AccessorySessionError) -> [Effect] {
        guard let pending = pendingMigrations else {
            throw .invalidRequest(field: "migrations", reason: "no migration is pending")
        }
        guard lookups.count == pending.count else {
            throw .invalidRequest(
                field: "migrations", reason: "has \(lookups.count) lookups for \(pending.count) items")
        }
        pendingMigrations = nil
        var effects: [Effect] = []
        var adopted: [AccessoryRecord] = []
        for (migration, lookup) in zip(pending, lookups) {
            let ssid = lookup.hasHotspotProfile ? migration.hotspotSSID : nil
            let peripheral = lookup.peripheral.flatMap { advertisement in
                advertisement.address == migration.peripheralAddress && migration.item.descriptor.matches(advertisement)
                    ? advertisement.address : nil
            }
            guard ssid != nil || peripheral != nil else { continue }
            let record = AccessoryRecord(
                displayName: migration.item.name, state: .authorized, ssid: ssid, bluetoothIdentifier: peripheral,
                descriptor: migration.item.descriptor, owner: owner, created: now)
            accessories.append(record)
            adopted.append(record)
            effects.append(.save(record))
        }
        return effects + [.emit(.migrationComplete(adopted))]
    }
}

// MARK: - Records

extension AccessorySession {
    func recordIndex(_ id: UUID) throws(AccessorySessionError) -> Int {
        guard let index = accessories.firstIndex(where: { $0.id == id }) else {
            throw .invalidRequest(field: "accessory", reason: "no accessory \(id) belongs to this session's client")
        }
        return index
    }

    private func requireAwaiting(_ record: AccessoryRecord) throws(AccessorySessionError) {
        guard record.state == .awaitingAuthorization else {
            throw .invalidRequest(
                field: "accessory", reason: "\(record.id) is \(record.state.name), not awaitingAuthorization")
        }
    }

    private mutating func change(_ index: Int, at now: Date, _ body: (inout AccessoryRecord) -> Void) -> [Effect] {
        var record = accessories[index]
        body(&record)
        guard record != accessories[index] else { return [] }
        record.changed = now
        accessories[index] = record
        return [.save(record), .emit(.accessoryChanged(record))]
    }

    private mutating func finishAuthorization(
        _ id: UUID, settings: AccessorySettings, at now: Date
    ) throws(AccessorySessionError) -> [Effect] {
        let index = try recordIndex(id)
        let record = accessories[index]
        try requireAwaiting(record)
        if let ssid = settings.ssid { try requireDiscoverable(ssid, for: record, field: "settings.ssid") }
        return change(index, at: now) {
            $0.state = .authorized
            $0.ssid = settings.ssid ?? $0.ssid
            $0.foundSSID = nil
            $0.bluetoothTransportBridgingIdentifier =
                settings.bluetoothTransportBridgingIdentifier
                ?? $0.bluetoothTransportBridgingIdentifier
        }
    }

    private mutating func rename(
        _ id: UUID, to name: String, options: RenameOptions, at now: Date
    ) throws(AccessorySessionError) -> [Effect] {
        let index = try recordIndex(id)
        try Self.validateName(name, field: "name")
        var ssid = accessories[index].ssid
        if options.contains(.ssid) {
            guard ssid != nil else {
                throw .invalidRequest(field: "options", reason: "renaming the SSID needs an accessory with a hotspot")
            }
            do {
                ssid = try SSID(name)
            } catch {
                throw .invalidRequest(field: "name", reason: "as an SSID it \(error)")
            }
            try requireDiscoverable(ssid!, for: accessories[index], field: "name")
        }
        return change(index, at: now) {
            if $0.ssid != ssid { $0.foundSSID = $0.foundSSID ?? $0.ssid }
            $0.displayName = name
            $0.ssid = ssid
        }
    }

    /// Refuses an SSID the accessory could not have been found under: one the record's
    /// descriptor (or, when it has no Wi-Fi identifier, one of the profile's) does not accept.
    private func requireDiscoverable(_ ssid: SSID, for record: AccessoryRecord, field: String)
        throws(AccessorySessionError)
    {
        let descriptors =
            record.descriptor.hasWiFiIdentifier
            ? [record.descriptor] : profile.items.map(\.descriptor).filter(\.hasWiFiIdentifier)
        guard descriptors.contains(where: { $0.accepts(ssid) }) else {
            throw .invalidRequest(
                field: field, reason: "'\(ssid)' is not a hotspot profile \(profile.id) lets this client discover")
        }
    }
}

// MARK: - Validation against the profile

extension AccessorySession {
    /// Checks a display name as the agent does: not blank, at most `maximumNameLength` bytes, no
    /// control characters.
    public static func validateName(_ name: String, field: String) throws(AccessorySessionError) {
        if let problem = nameProblem(name) { throw .invalidRequest(field: field, reason: problem) }
    }

    /// What `validateName` refuses in `name`, said of the field; `nil` when nothing.
    public static func nameProblem(_ name: String) -> String? {
        if name.allSatisfy(\.isWhitespace) { return "must not be empty" }
        if name.utf8.count > maximumNameLength {
            return "is \(name.utf8.count) bytes long; at most \(maximumNameLength) are allowed"
        }
        if DisplayText.hasHiddenCharacters(name) {
            return "must not contain control, format or bidirectional characters"
        }
        return nil
    }

    private func validate(_ item: PickerDisplayItem, at path: String) throws(AccessorySessionError) {
        try Self.validateName(item.name, field: "\(path).name")
        try validate(item.descriptor, at: "\(path).descriptor")
    }

    private func validate(_ migration: MigrationDisplayItem, at path: String) throws(AccessorySessionError) {
        try validate(migration.item, at: path)
        guard migration.hotspotSSID != nil || migration.peripheralAddress != nil else {
            throw .invalidRequest(field: path, reason: "a migration item needs a hotspotSSID or a peripheralAddress")
        }
        if let ssid = migration.hotspotSSID, !migration.item.descriptor.accepts(ssid) {
            throw .invalidRequest(
                field: "\(path).hotspotSSID",
                reason: "'\(ssid)' is not matched by the item's descriptor (ssid or ssidPrefix)")
        }
        if migration.peripheralAddress != nil && !migration.item.descriptor.hasBluetoothIdentifier {
            throw .invalidRequest(
                field: "\(path).peripheralAddress",
                reason: "the item's descriptor has no Bluetooth identifier to check the device with")
        }
    }

    /// Refuses a descriptor that breaks a rule between its fields or reaches outside what the
    /// profile declares: a radio it does not support, undeclared Bluetooth values, or networks
    /// wider than its own items look for.
    private func validate(_ descriptor: DiscoveryDescriptor, at path: String) throws(AccessorySessionError) {
        if let error = descriptor.validationErrors.first {
            let field = error == .noIdentifier ? path : "\(path).\(error.field)"
            throw .invalidRequest(field: field, reason: error.message)
        }
        if descriptor.hasWiFiIdentifier {
            let key = descriptor.ssid != nil ? "ssid" : descriptor.ssidPrefix != nil ? "ssidPrefix" : "bssid"
            guard profile.supports.contains(.wifi) else {
                throw .invalidRequest(field: "\(path).\(key)", reason: "profile \(profile.id) does not support Wi-Fi")
            }
            let declared = profile.items.map(\.descriptor).filter(\.hasWiFiIdentifier)
            guard declared.contains(where: descriptor.isWiFiNarrower) else {
                throw .invalidRequest(
                    field: "\(path).\(key)",
                    reason: "looks for networks outside those profile \(profile.id) declares in its items")
            }
        }
        guard descriptor.hasBluetoothIdentifier else { return }
        let declared = profile.bluetooth
        let key = descriptor.bluetoothServiceUUID != nil ? "bluetoothServiceUUID" : "bluetoothCompanyIdentifier"
        guard profile.supports.contains(.bluetooth) else {
            throw .invalidRequest(field: "\(path).\(key)", reason: "profile \(profile.id) does not support Bluetooth")
        }
        if let service = descriptor.bluetoothServiceUUID, !declared.services.contains(service) {
            throw .invalidRequest(
                field: "\(path).bluetoothServiceUUID",
                reason: "service \(service) is not declared by profile \(profile.id)")
        }
        if let company = descriptor.bluetoothCompanyIdentifier, !declared.companyIdentifiers.contains(company) {
            throw .invalidRequest(
                field: "\(path).bluetoothCompanyIdentifier",
                reason: "company \(company) is not declared by profile \(profile.id)")
        }
        if let name = descriptor.bluetoothNameSubstring, !declared.names.contains(name) {
            throw .invalidRequest(
                field: "\(path).bluetoothNameSubstring",
                reason: "name '\(name)' is not declared by profile \(profile.id)")
        }
    }
}

extension DiscoveryDescriptor {
    /// Whether the SSID fits the descriptor's `ssid` or `ssidPrefix`.
    func accepts(_ ssid: SSID) -> Bool {
        if let exact = self.ssid { return ssid == exact }
        if let prefix = ssidPrefix { return ssid.hasPrefix(prefix) }
        return false
    }

    /// Whether every access point this descriptor matches on its SSID and BSSID fields is also
    /// matched by `other`'s.
    func isWiFiNarrower(than other: DiscoveryDescriptor) -> Bool {
        if let exact = other.ssid, ssid != exact { return false }
        if let prefix = other.ssidPrefix {
            guard let mine = ssid ?? ssidPrefix, mine.hasPrefix(prefix) else { return false }
        }
        if let theirs = other.bssid {
            let all = MACAddress(rawValue: .max)
            let theirMask = other.bssidMask ?? all, myMask = bssidMask ?? all
            guard let mine = bssid, myMask & theirMask == theirMask, mine & theirMask == theirs & theirMask else {
                return false
            }
        }
        return true
    }
}
