import Foundation
import Testing

@testable import AccessoryCore

private typealias Fixture = SessionFixture
private let discoveryTimer = AccessorySession.Timer(kind: .discovery, picker: 1)

@Suite("The session: event order, picker, discovery")
struct AccessorySessionPickerTests {
    @Test func aPickAddsTheAccessoryThenDismissesInApplesOrder() throws {
        let earlier = Fixture.record(
            "Old plug", state: .authorized, descriptor: Fixture.plugItem.descriptor, ssid: "plug-0001")
        var run = SessionRun(accessories: [earlier])
        #expect(run.events == [.activated([earlier])])

        let presented = run.showPicker([Fixture.plugItem])
        #expect(
            presented == [
                .presentPicker([Fixture.plugItem]),
                .startDiscovery([Fixture.plugItem.descriptor]),
                .startTimer(discoveryTimer, after: .seconds(30)),
                .emit(.pickerDidPresent),
            ])
        #expect(run.session.phase == .picking)

        let heard = run.send(
            .wifiScanned([
                Fixture.accessPoint("HomeNet", "00:11:22:33:44:55", strength: 90),
                Fixture.accessPoint("plug-4F2A", "24:0A:C4:00:00:01"),
            ]))
        let entry = PickerEntry(
            id: 1, itemIndex: 0, name: "Example plug", wifi: Fixture.accessPoint("plug-4F2A", "24:0A:C4:00:00:01"))
        #expect(heard == [.updatePicker(shown: [entry], removed: [])])

        let picked = run.send(.picked(PickerChoice(entryID: 1)))
        let record = try #require(run.session.accessories.last)
        #expect(
            picked == [
                .stopDiscovery, .cancelTimer(discoveryTimer),
                .save(record), .emit(.accessoryAdded(record)), .dismissPicker, .emit(.pickerDidDismiss(nil)),
            ])
        #expect(record.displayName == "Example plug")
        #expect(record.ssid == (try SSID("plug-4F2A")))
        #expect(record.state == .authorized)
        #expect(record.owner == Fixture.owner)
        #expect(record.descriptor == Fixture.plugItem.descriptor)
        #expect(run.eventTypes == [.activated, .pickerDidPresent, .accessoryAdded, .pickerDidDismiss])
        #expect(run.session.phase == .active)
    }

    @Test func anAccessoryAlreadyAddedIsNotOfferedAgain() throws {
        let plug = Fixture.plugItem.descriptor
        var sensor = Fixture.record(
            "Old sensor", state: .awaitingAuthorization, descriptor: Fixture.sensorItem.descriptor)
        sensor.bluetoothIdentifier = try MACAddress("C0:FF:EE:00:00:01")
        var renamed = Fixture.record("Renamed plug", state: .authorized, descriptor: plug, ssid: "my-plug")
        renamed.foundSSID = try SSID("plug-0003")
        let owned = [
            Fixture.record("Old plug", state: .authorized, descriptor: plug, ssid: "plug-0001"), sensor, renamed,
            Fixture.record("Revoked plug", state: .unauthorized, descriptor: plug, ssid: "plug-0004"),
        ]
        var run = SessionRun(accessories: owned)
        run.showPicker([Fixture.plugItem, Fixture.sensorItem])
        run.send(
            .wifiScanned(
                ["plug-0001", "plug-0002", "plug-0003", "plug-0004"].enumerated().map { index, ssid in
                    Fixture.accessPoint(ssid, "24:0A:C4:00:00:1\(index)")
                }))
        run.send(.bluetoothHeard([Fixture.sensor("C0:FF:EE:00:00:01"), Fixture.sensor("C0:FF:EE:00:00:02")]))
        let offered = run.session.pickerEntries.map { entry in
            entry.wifi?.ssid?.description ?? entry.bluetooth?.address.description
        }
        #expect(offered == ["plug-0002", "plug-0004", "C0:FF:EE:00:00:02"])
    }

    @Test func onlyAccessoriesAlreadyAddedInRangeEndWithDiscoveryTimeout() {
        let earlier = Fixture.record(
            "Old plug", state: .authorized, descriptor: Fixture.plugItem.descriptor, ssid: "plug-0001")
        var run = SessionRun(accessories: [earlier])
        run.showPicker([Fixture.plugItem])
        #expect(run.send(.wifiScanned([Fixture.accessPoint("plug-0001", "24:0A:C4:00:00:01")])).isEmpty)
        #expect(run.refusal(.picked(PickerChoice(entryID: 1))) != nil, "what is not shown cannot be picked")
        let ended = run.send(.timerFired(discoveryTimer))
        #expect(ended == [.stopDiscovery, .dismissPicker, .emit(.pickerDidDismiss(.discoveryTimeout))])
        #expect(run.session.accessories == [earlier])
    }

    /// A pick of what the picker showed a moment ago stands: a hidden hotspot answers one probe
    /// and not the next, and the person chose what they saw. Past the grace it is refused.
    @Test func aPickOfAnEntryJustGoneStandsForAWhile() throws {
        var run = SessionRun()
        run.showPicker([Fixture.plugItem])
        run.send(.wifiScanned(Fixture.twoPlugs))
        let gone = run.send(.wifiScanned([Fixture.twoPlugs[1]]))
        #expect(gone == [.updatePicker(shown: [], removed: [1])])
        let picked = run.send(.picked(PickerChoice(entryID: 1)), at: Fixture.now + 5)
        #expect(picked.contains(.emit(.pickerDidDismiss(nil))))
        #expect(run.session.accessories.last?.ssid == (try SSID("plug-0001")))

        var late = SessionRun()
        late.showPicker([Fixture.plugItem])
        late.send(.wifiScanned(Fixture.twoPlugs))
        late.send(.wifiScanned([Fixture.twoPlugs[1]]))
        #expect(throws: AccessorySessionError.self) {
            try late.session.handle(
                .picked(PickerChoice(entryID: 1)), at: Fixture.now + AccessorySession.vanishedGrace + 1)
        }
    }

    @Test func aDeviceTheOwnerAddsElsewhereLeavesThePickerShownNow() {
        var run = SessionRun()
        run.showPicker([Fixture.plugItem])
        run.send(.wifiScanned(Fixture.twoPlugs))
        let elsewhere = Fixture.record(
            "Plug", state: .authorized, descriptor: Fixture.plugItem.descriptor, ssid: "plug-0001")
        let changed = run.send(.recordChanged(elsewhere))
        #expect(changed == [.emit(.accessoryAdded(elsewhere)), .updatePicker(shown: [], removed: [1])])
        #expect(run.refusal(.picked(PickerChoice(entryID: 1)))?.field == "entry")
    }

    @Test func aFilteringClientIsNotToldOfAnAccessoryItAlreadyAdded() {
        let earlier = Fixture.record(
            "Old plug", state: .authorized, descriptor: Fixture.plugItem.descriptor, ssid: "plug-0001")
        var run = SessionRun(accessories: [earlier])
        run.showPicker(
            [Fixture.plugItem], settings: .init(discoveryTimeout: .unbounded, options: .filterDiscoveryResults))
        let heard = run.send(.wifiScanned(Fixture.twoPlugs))
        let discovered = heard.compactMap { if case .emit(.accessoryDiscovered(let entry)) = $0 { entry } else { nil } }
        #expect(discovered.map { $0.wifi?.ssid } == [try? SSID("plug-0002")])
    }

    @Test func aSecondPickerIsRefusedWhileOneIsShown() {
        var run = SessionRun()
        run.showPicker([Fixture.plugItem])
        #expect(run.refusal(.showPicker([.display(Fixture.sensorItem)], .init(), .agent)) == .pickerAlreadyActive)
        #expect(run.session.phase == .picking)

        run.send(.pickerDismissed(.userCancelled))
        #expect(run.showPicker([Fixture.sensorItem]).contains(.emit(.pickerDidPresent)))
    }

    @Test func discoveryThatFindsNothingEndsWithDiscoveryTimeout() {
        var run = SessionRun()
        run.showPicker([Fixture.plugItem])
        run.send(.wifiScanned([Fixture.accessPoint("HomeNet", "00:11:22:33:44:55")]))
        let ended = run.send(.timerFired(discoveryTimer))
        #expect(ended == [.stopDiscovery, .dismissPicker, .emit(.pickerDidDismiss(.discoveryTimeout))])
        #expect(run.session.phase == .active)
        #expect(run.send(.timerFired(discoveryTimer)).isEmpty, "a timer fires once")
    }

    @Test func aTimeoutWithAccessoriesShownStopsDiscoveryButLeavesTheChoiceOpen() {
        var run = SessionRun()
        run.showPicker([Fixture.plugItem])
        run.send(.wifiScanned([Fixture.accessPoint("plug-0001", "24:0A:C4:00:00:01")]))
        #expect(run.send(.timerFired(discoveryTimer)) == [.stopDiscovery])
        #expect(run.session.phase == .picking)
        #expect(
            run.send(.wifiScanned([Fixture.accessPoint("plug-0002", "24:0A:C4:00:00:11")])).isEmpty,
            "nothing new is shown once discovery has stopped")
        #expect(run.session.pickerEntries.map(\.id) == [1])
        #expect(run.send(.picked(PickerChoice(entryID: 1))).contains(.emit(.pickerDidDismiss(nil))))
    }

    @Test func theTimeoutIsConfigurableOrUnbounded() {
        var run = SessionRun()
        let short = run.showPicker([Fixture.plugItem], settings: .init(discoveryTimeout: .duration(.seconds(5))))
        #expect(short.contains(.startTimer(discoveryTimer, after: .seconds(5))))
        run.send(.pickerDismissed(.userCancelled))

        let unbounded = run.showPicker([Fixture.plugItem], settings: .init(discoveryTimeout: .unbounded))
        #expect(!unbounded.contains { if case .startTimer = $0 { true } else { false } })
        let stale = run.send(.timerFired(discoveryTimer))
        #expect(stale.isEmpty, "the first picker's timer does not end the second")

        run.send(.pickerDismissed(.userCancelled))
        for timeout in [Duration.zero, .seconds(-1), .seconds(3601)] {
            let refused = run.refusal(
                .showPicker([.display(Fixture.plugItem)], .init(discoveryTimeout: .duration(timeout)), .agent))
            #expect(refused?.field == "settings.discoveryTimeout")
        }
    }

    @Test func cancellingEndsThePickerWithUserCancelledAndRecordsNothing() {
        var run = SessionRun()
        run.showPicker([Fixture.plugItem])
        run.send(.wifiScanned([Fixture.accessPoint("plug-0001", "24:0A:C4:00:00:01")]))
        let cancelled = run.send(.pickerDismissed(.userCancelled))
        #expect(cancelled == [.stopDiscovery, .cancelTimer(discoveryTimer), .emit(.pickerDidDismiss(.userCancelled))])
        #expect(run.session.accessories.isEmpty)
        #expect(run.eventTypes == [.activated, .pickerDidPresent, .pickerDidDismiss])
        #expect(run.refusal(.picked(PickerChoice(entryID: 1)))?.field == "session", "a late pick is refused")
    }

    @Test func customFilteringSendsDiscoveriesToTheClientAndShowsOnlyWhatItPasses() throws {
        var run = SessionRun()
        let settings = PickerDisplaySettings(discoveryTimeout: .unbounded, options: .filterDiscoveryResults)
        run.showPicker([Fixture.plugItem, Fixture.sensorItem], settings: settings)

        let heard = run.send(.wifiScanned(Fixture.twoPlugs))
        let discovered = heard.compactMap { if case .emit(.accessoryDiscovered(let entry)) = $0 { entry } else { nil } }
        #expect(discovered.map(\.id) == [1, 2])
        #expect(heard.count == 2, "nothing reaches the picker before updatePicker")
        #expect(
            run.send(.wifiScanned([Fixture.accessPoint("plug-0001", "24:0A:C4:00:00:01")])).isEmpty,
            "an accessory is announced once")

        let shown = run.send(.updatePicker([DiscoveredDisplayItem(entryID: 1, name: "Kitchen plug")]))
        guard case .updatePicker(let entries, let removed)? = shown.first else {
            Issue.record("expected a picker update, got \(shown)")
            return
        }
        #expect(entries.map(\.name) == ["Kitchen plug"])
        #expect(removed.isEmpty)
        #expect(
            run.refusal(.updatePicker([DiscoveredDisplayItem(entryID: 2, name: "Gone")]))?.field == "items[0].entry",
            "plug-0002 is no longer heard")
        #expect(run.refusal(.updatePicker([DiscoveredDisplayItem(entryID: 1, name: " ")]))?.field == "items[0].name")

        #expect(run.send(.finishPickerDiscovery) == [.stopDiscovery])
        #expect(run.session.phase == .picking)
        run.send(.picked(PickerChoice(entryID: 1)))
        #expect(run.session.accessories.map(\.displayName) == ["Kitchen plug"])
        #expect(
            run.eventTypes == [
                .activated, .pickerDidPresent, .accessoryDiscovered, .accessoryDiscovered, .accessoryAdded,
                .pickerDidDismiss,
            ])
    }

    @Test func finishingFilteredDiscoveryWithNothingShownIsADiscoveryTimeout() {
        var run = SessionRun()
        run.showPicker(
            [Fixture.plugItem], settings: .init(discoveryTimeout: .unbounded, options: .filterDiscoveryResults))
        run.send(.wifiScanned([Fixture.accessPoint("plug-0001", "24:0A:C4:00:00:01")]))
        #expect(
            run.send(.finishPickerDiscovery) == [
                .stopDiscovery, .dismissPicker, .emit(.pickerDidDismiss(.discoveryTimeout)),
            ])
    }

    @Test func updatePickerNeedsAFilteringPicker() {
        var run = SessionRun()
        #expect(run.refusal(.updatePicker([]))?.field == "session")
        run.showPicker([Fixture.plugItem])
        #expect(run.refusal(.updatePicker([]))?.field == "settings.options")
    }

    @Test func oneEntryPerDeviceAcrossRadiosAndDescriptors() throws {
        var run = SessionRun()
        let exact = PickerDisplayItem(
            name: "Plug 0001", descriptor: Fixture.descriptor { $0.ssid = try! SSID("plug-0001") })
        run.showPicker([Fixture.sensorItem, exact, Fixture.plugItem])

        // Heard over Bluetooth first: BlueZ's address is the Wi-Fi base + 2, the SoftAP's + 1.
        run.send(.bluetoothHeard([Fixture.sensor("24:0A:C4:00:00:02"), Fixture.sensor("AC:67:B2:00:00:09")]))
        run.send(.wifiScanned([Fixture.accessPoint("plug-0001", "24:0A:C4:00:00:01")]))
        let entries = run.session.pickerEntries
        #expect(entries.count == 2)
        let plug = try #require(entries.first { $0.wifi != nil })
        #expect(plug.bluetooth?.address == (try MACAddress("24:0A:C4:00:00:02")))
        #expect(plug.id == 1, "the entry keeps the id it had when only its advertisement was heard")
        #expect(plug.itemIndex == 0)

        run.send(.picked(PickerChoice(entryID: plug.id)))
        let record = try #require(run.session.accessories.first)
        #expect(record.ssid == (try SSID("plug-0001")))
        #expect(record.bluetoothIdentifier == (try MACAddress("24:0A:C4:00:00:02")))
    }

    @Test func entriesComeAndGoWithWhatIsHeard() {
        var run = SessionRun()
        run.showPicker([Fixture.plugItem])
        run.send(.wifiScanned(Fixture.twoPlugs))
        let weaker = Fixture.accessPoint("plug-0001", "24:0A:C4:00:00:01", strength: 20)
        let changed = run.send(.wifiScanned([weaker]))
        #expect(
            changed == [
                .updatePicker(
                    shown: [PickerEntry(id: 1, itemIndex: 0, name: "Example plug", wifi: weaker)], removed: [2])
            ])
    }

    @Test func invalidateEndsThePickerThenTheSession() {
        var run = SessionRun()
        run.showPicker([Fixture.plugItem])
        let ended = run.send(.invalidate(nil))
        #expect(
            ended == [
                .stopDiscovery, .cancelTimer(discoveryTimer), .dismissPicker,
                .emit(.pickerDidDismiss(.invalidated)), .emit(.invalidated(nil)),
            ])
        #expect(run.session.phase == .invalidated)
        #expect(run.refusal(.showPicker([.display(Fixture.plugItem)], .init(), .agent)) == .invalidated)
        #expect(run.send(.invalidate(nil)).isEmpty)
    }

    @Test func nothingButActivateComesFirst() {
        var run = SessionRun(activate: false)
        #expect(run.session.phase == .inactive)
        #expect(run.refusal(.showPicker([.display(Fixture.plugItem)], .init(), .agent))?.field == "session")
        #expect(run.send(.activate) == [.emit(.activated([]))])
        #expect(run.refusal(.activate)?.field == "session")
    }
}

@Suite("The session: requests checked against the profile")
struct AccessorySessionValidationTests {
    private func field(refusing item: PickerDisplayItem, profile: AccessoryProfile = Fixture.profile) -> String? {
        var run = SessionRun(profile: profile)
        return run.refusal(.showPicker([.display(Fixture.plugItem), .display(item)], .init(), .agent))?.field
    }

    @Test func descriptorsOutsideTheProfileAreRefusedNamingTheField() throws {
        let undeclaredService = PickerDisplayItem(
            name: "Other", descriptor: Fixture.descriptor { $0.bluetoothServiceUUID = BluetoothUUID(assigned: 0x181A) })
        #expect(field(refusing: undeclaredService) == "items[1].descriptor.bluetoothServiceUUID")

        let undeclaredCompany = PickerDisplayItem(
            name: "Other",
            descriptor: Fixture.descriptor { $0.bluetoothCompanyIdentifier = BluetoothCompanyIdentifier(rawValue: 76) })
        #expect(field(refusing: undeclaredCompany) == "items[1].descriptor.bluetoothCompanyIdentifier")

        let undeclaredName = PickerDisplayItem(
            name: "Other",
            descriptor: Fixture.descriptor {
                $0.bluetoothServiceUUID = Fixture.sensorService
                $0.bluetoothNameSubstring = "Sensor"
            })
        #expect(field(refusing: undeclaredName) == "items[1].descriptor.bluetoothNameSubstring")

        let homeNetwork = PickerDisplayItem(
            name: "Home", descriptor: Fixture.descriptor { $0.ssidPrefix = try! SSID("Home") })
        #expect(field(refusing: homeNetwork) == "items[1].descriptor.ssidPrefix")

        let widerPrefix = PickerDisplayItem(
            name: "Any p", descriptor: Fixture.descriptor { $0.ssidPrefix = try! SSID("p") })
        #expect(field(refusing: widerPrefix) == "items[1].descriptor.ssidPrefix")

        let bssidOnly = PickerDisplayItem(
            name: "By BSSID", descriptor: Fixture.descriptor { $0.bssid = try! MACAddress("24:0A:C4:00:00:01") })
        #expect(field(refusing: bssidOnly) == "items[1].descriptor.bssid")

        var wifiOnly = Fixture.profile
        wifiOnly.supports = [.wifi]
        #expect(field(refusing: Fixture.sensorItem, profile: wifiOnly) == "items[1].descriptor.bluetoothServiceUUID")
    }

    @Test func brokenDescriptorRulesAreRefusedNamingTheField() {
        let both = PickerDisplayItem(
            name: "Both",
            descriptor: Fixture.descriptor {
                $0.ssid = try! SSID("plug-0001")
                $0.ssidPrefix = try! SSID("plug-")
            })
        #expect(field(refusing: both) == "items[1].descriptor.ssidPrefix")
        #expect(
            field(refusing: PickerDisplayItem(name: "Empty", descriptor: DiscoveryDescriptor()))
                == "items[1].descriptor")
        #expect(
            field(refusing: PickerDisplayItem(name: "", descriptor: Fixture.plugItem.descriptor)) == "items[1].name")
        #expect(
            field(refusing: PickerDisplayItem(name: "Tab\there", descriptor: Fixture.plugItem.descriptor))
                == "items[1].name")
    }

    @Test func narrowerDescriptorsThanTheProfilesAreAccepted() {
        var run = SessionRun()
        let kitchen = PickerDisplayItem(
            name: "Kitchen",
            descriptor: Fixture.descriptor {
                $0.ssidPrefix = try! SSID("plug-kitchen")
                $0.bssid = try! MACAddress("24:0A:C4:00:00:00")
                $0.bssidMask = try! MACAddress("FF:FF:FF:00:00:00")
            })
        let exact = PickerDisplayItem(
            name: "Exact", descriptor: Fixture.descriptor { $0.ssid = try! SSID("plug-0001") })
        #expect(run.showPicker([kitchen, exact, Fixture.sensorItem]).contains(.emit(.pickerDidPresent)))
    }

    @Test func emptyAndOversizedRequestsAreRefused() {
        var run = SessionRun()
        #expect(run.refusal(.showPicker([], .init(), .agent))?.field == "items")
        let many = Array(
            repeating: PickerRequestItem.display(Fixture.plugItem), count: AccessorySession.maximumItems + 1)
        #expect(run.refusal(.showPicker(many, .init(), .agent))?.field == "items")
    }
}

@Suite("The session: setup steps, authorization, records")
struct AccessorySessionAuthorizationTests {
    private static var pairingItem: PickerDisplayItem {
        PickerDisplayItem(
            name: "Example sensor",
            descriptor: Fixture.descriptor {
                $0.bluetoothServiceUUID = Fixture.sensorService
                $0.supportedOptions = [.bluetoothPairingLE, .bluetoothTransportBridging]
            },
            setupOptions: [.rename])
    }

    @Test func pairingAndBridgingRunBeforeTheAccessoryIsAdded() throws {
        var run = SessionRun()
        run.showPicker([Self.pairingItem])
        run.send(.bluetoothHeard([Fixture.sensor("AC:67:B2:00:00:09")]))
        let entry = try #require(run.session.pickerEntries.first)
        #expect(
            run.send(.picked(PickerChoice(entryID: entry.id, name: "Bedroom"))) == [
                .stopDiscovery, .cancelTimer(discoveryTimer), .emit(.pickerSetupRename),
                .emit(.pickerSetupPairing), .setUp(.pairing, entry),
            ])
        #expect(run.session.phase == .settingUp)
        #expect(run.refusal(.setupFinished(.bridging, nil))?.field == "step")
        #expect(run.send(.setupFinished(.pairing, nil)) == [.emit(.pickerSetupBridging), .setUp(.bridging, entry)])
        run.send(.setupFinished(.bridging, nil))
        #expect(
            run.eventTypes == [
                .activated, .pickerDidPresent, .pickerSetupRename, .pickerSetupPairing, .pickerSetupBridging,
                .accessoryAdded, .pickerDidDismiss,
            ])
        #expect(run.session.accessories.map(\.displayName) == ["Bedroom"])
    }

    @Test func aFailedSetupStepEndsThePickerWithoutARecord() throws {
        var run = SessionRun()
        run.showPicker([Self.pairingItem])
        run.send(.bluetoothHeard([Fixture.sensor("AC:67:B2:00:00:09")]))
        run.send(.picked(PickerChoice(entryID: 1)))
        let failure = AccessorySessionError.connectionFailed(reason: "BlueZ: authentication failed")
        #expect(
            run.send(.setupFinished(.pairing, failure)) == [
                .emit(.pickerSetupFailed(failure)), .dismissPicker, .emit(.pickerDidDismiss(failure)),
            ])
        #expect(run.session.accessories.isEmpty)
    }

    /// A `bluetoothToWiFi` profile: the camera is picked over Bluetooth, then hands its hotspot over.
    private static var handoffProfile: AccessoryProfile {
        var profile = Fixture.profile
        profile.handoff = .bluetoothToWiFi
        profile.hotspot = HotspotPolicy(security: .wpa2Personal, passphrase: .handoff)
        profile.bluetoothHandoff = BluetoothHandoff(
            service: Fixture.sensorService, pairing: .required, ssid: BluetoothUUID(assigned: 0x2A00),
            passphrase: BluetoothUUID(assigned: 0x2A01))
        return profile
    }

    @Test func theHotspotHandoffRunsAsBridgingAndTheRecordKeepsTheRevealedHotspot() throws {
        var run = SessionRun(profile: Self.handoffProfile)
        run.showPicker([Fixture.sensorItem])
        run.send(.bluetoothHeard([Fixture.sensor("D4:D9:19:AA:BB:CC")]))
        let entry = try #require(run.session.pickerEntries.first)
        #expect(
            run.send(.picked(PickerChoice(entryID: entry.id))) == [
                .stopDiscovery, .cancelTimer(discoveryTimer), .emit(.pickerSetupBridging),
                .setUp(.hotspotHandoff, entry),
            ])
        #expect(run.refusal(.setupFinished(.hotspotHandoff, nil))?.field == "step", "finished without a hotspot")
        let revealed = RevealedHotspot(
            ssid: try SSID("GP24501234"), passphrase: Secret("camera-pass-1234"), security: .wpa3Personal)
        #expect(run.send(.hotspotRevealed(revealed)).isEmpty)
        run.send(.setupFinished(.hotspotHandoff, nil))
        #expect(
            run.eventTypes == [.activated, .pickerDidPresent, .pickerSetupBridging, .accessoryAdded, .pickerDidDismiss])
        let record = try #require(run.session.accessories.first)
        #expect(record.ssid == revealed.ssid && record.bluetoothIdentifier == entry.bluetooth?.address)
        #expect(run.session.suppliedPassphrase(for: record.id) == .secret(Secret("camera-pass-1234")))
        // The agent joins with the passphrase the session supplies, as for one typed in the picker.
        let configuration = try run.session.hotspotConfiguration(for: record.id, passphrase: Secret("camera-pass-1234"))
        #expect(configuration.security == .wpa3Personal(Secret("camera-pass-1234")), "the accessory's own security")
        #expect(run.refusal(.hotspotRevealed(revealed))?.field == "step", "no handoff runs any more")
    }

    @Test func aPassphraseTheOwnerDidNotGiveIsOfferedOnlyToTheHotspotFoundAndNeverToARenamedOne() throws {
        var profile = Fixture.profile
        profile.hotspot = HotspotPolicy(security: .wpa2Personal, passphrase: .prompt(hint: nil))
        var run = SessionRun(profile: profile)
        run.showPicker([Fixture.plugItem])
        run.send(.wifiScanned([Fixture.accessPoint("plug-0001", "02:00:00:00:00:01")]))
        run.send(.picked(PickerChoice(entryID: 1, passphrase: .secret(Secret("typed-in-picker")))))
        let record = try #require(run.session.accessories.first)
        #expect(run.session.suppliedPassphrase(for: record.id) == .secret(Secret("typed-in-picker")))

        // Renamed within the profile's prefix: the picker's passphrase stays with plug-0001.
        run.send(.renameAccessory(record.id, name: "plug-elsewhere", options: .ssid))
        #expect(run.session.suppliedPassphrase(for: record.id) == nil)
        let refused = run.session.joinRefusal(record.id, passphrase: nil)
        #expect(
            refused?.field == "passphrase" && "\(String(describing: refused))".contains("renamed"),
            "\(String(describing: refused))")
        let own = try run.session.hotspotConfiguration(for: record.id, passphrase: Secret("given-with-the-join"))
        #expect(own.target == .ssid(try SSID("plug-elsewhere")))
        #expect(own.security == .wpa2Personal(Secret("given-with-the-join")))

        // Renamed back, it is the hotspot found again.
        run.send(.renameAccessory(record.id, name: "plug-0001", options: .ssid))
        #expect(run.session.suppliedPassphrase(for: record.id) == .secret(Secret("typed-in-picker")))
    }

    @Test func aProfilesFixedPassphraseIsNotOfferedToARenamedHotspot() throws {
        var profile = Fixture.profile
        profile.hotspot = HotspotPolicy(security: .wpa2Personal, passphrase: .fixed(Secret("factory-pass")))
        let record = Fixture.record(
            "Plug", state: .authorized, descriptor: Fixture.plugItem.descriptor, ssid: "plug-0001")
        var run = SessionRun(profile: profile, accessories: [record])
        #expect(
            try run.session.hotspotConfiguration(for: record.id, passphrase: nil).security
                == .wpa2Personal(Secret("factory-pass")))
        run.send(.renameAccessory(record.id, name: "plug-attacker", options: .ssid))
        #expect(run.session.joinRefusal(record.id, passphrase: nil)?.field == "passphrase")
    }

    @Test func aFailedHotspotHandoffIsPickerSetupFailed() throws {
        var run = SessionRun(profile: Self.handoffProfile)
        run.showPicker([Fixture.sensorItem])
        run.send(.bluetoothHeard([Fixture.sensor("D4:D9:19:AA:BB:CC")]))
        run.send(.picked(PickerChoice(entryID: 1)))
        let failure = AccessorySessionError.connectionFailed(reason: "the hotspot handoff of D4:D9:19:AA:BB:CC failed")
        #expect(
            run.send(.setupFinished(.hotspotHandoff, failure)) == [
                .emit(.pickerSetupFailed(failure)), .dismissPicker, .emit(.pickerDidDismiss(failure)),
            ])
        #expect(run.session.accessories.isEmpty)
    }

    @Test func cancellingDuringSetupAbandonsTheStep() throws {
        var run = SessionRun()
        run.showPicker([Self.pairingItem])
        run.send(.bluetoothHeard([Fixture.sensor("AC:67:B2:00:00:09")]))
        let entry = try #require(run.session.pickerEntries.first)
        run.send(.picked(PickerChoice(entryID: entry.id)))
        #expect(
            run.send(.pickerDismissed(.userCancelled)) == [
                .cancelSetUp(.pairing, entry), .emit(.pickerDidDismiss(.userCancelled)),
            ])
        #expect(run.session.accessories.isEmpty)
        #expect(run.refusal(.setupFinished(.pairing, nil))?.field == "step", "a late result is refused")
    }

    @Test func aNameIsTakenOnlyWhereTheItemOffersRenaming() {
        var run = SessionRun()
        run.showPicker([Fixture.plugItem])
        run.send(.wifiScanned([Fixture.accessPoint("plug-0001", "24:0A:C4:00:00:01")]))
        #expect(run.refusal(.picked(PickerChoice(entryID: 1, name: "Mine")))?.field == "name")
        #expect(run.refusal(.picked(PickerChoice(entryID: 7)))?.field == "entry")
    }

    /// A session whose client picked a `finishInApp` plug, now awaiting authorization.
    private func awaiting() throws -> (SessionRun, AccessoryRecord) {
        var run = SessionRun()
        var item = Fixture.plugItem
        item.setupOptions = [.finishInApp]
        run.showPicker([item])
        run.send(.wifiScanned([Fixture.accessPoint("plug-0001", "24:0A:C4:00:00:01")]))
        run.send(.picked(PickerChoice(entryID: 1, passphrase: .secret(Secret("from the label")))))
        let record = try #require(run.session.accessories.first)
        #expect(record.state == .awaitingAuthorization)
        #expect(run.session.suppliedPassphrase(for: record.id) == .secret(Secret("from the label")))
        return (run, record)
    }

    @Test func finishAuthorizationAuthorizesWithTheSettings() throws {
        var (run, record) = try awaiting()
        let later = Fixture.now.addingTimeInterval(60)
        let settings = AccessorySettings(ssid: try SSID("plug-0001-setup"))
        let effects = run.send(.finishAuthorization(record.id, settings), at: later)
        let finished = try #require(run.session.accessories.first)
        #expect(effects == [.save(finished), .emit(.accessoryChanged(finished))])
        #expect(finished.state == .authorized)
        #expect(finished.ssid == settings.ssid)
        #expect(finished.changed == later)
        #expect(run.refusal(.finishAuthorization(record.id, .init()))?.field == "accessory", "it is authorized already")
    }

    @Test func finishAuthorizationRefusesAHotspotOutsideTheProfile() throws {
        var (run, record) = try awaiting()
        let refused = run.refusal(.finishAuthorization(record.id, AccessorySettings(ssid: try SSID("HomeNet"))))
        #expect(refused?.field == "settings.ssid")
        #expect(run.session.accessories.first?.state == .awaitingAuthorization)
    }

    @Test func failAuthorizationRemovesTheAccessory() throws {
        var (run, record) = try awaiting()
        var removed = record
        removed.state = .unauthorized
        #expect(run.send(.failAuthorization(record.id)) == [.delete(removed), .emit(.accessoryRemoved(removed))])
        #expect(run.session.accessories.isEmpty)
        #expect(run.session.suppliedPassphrase(for: record.id) == nil)
        #expect(run.refusal(.failAuthorization(record.id))?.field == "accessory")
    }

    /// A session whose client picked a `confirmAuthorization` plug: added, the picker waiting.
    private func confirming(
        settings: PickerDisplaySettings = .init()
    ) throws -> (SessionRun, AccessoryRecord, PickerEntry) {
        var run = SessionRun()
        var item = Fixture.plugItem
        item.setupOptions = [.confirmAuthorization]
        run.showPicker([item], settings: settings)
        run.send(.wifiScanned([Fixture.accessPoint("plug-0001", "24:0A:C4:00:00:01")]))
        let entry = try #require(run.session.pickerEntries.first)
        let effects = run.send(.picked(PickerChoice(entryID: entry.id)))
        let record = try #require(run.session.accessories.first)
        #expect(record.state == .awaitingAuthorization)
        #expect(
            effects == [
                .stopDiscovery, .cancelTimer(AccessorySession.Timer(kind: .discovery, picker: 1)),
                .save(record), .emit(.accessoryAdded(record)), .awaitAuthorization(entry),
                .startTimer(
                    AccessorySession.Timer(kind: .authorization, picker: 1), after: settings.authorizationTimeout),
            ], "added, and the picker stays in its setting-up state")
        #expect(run.session.phase == .settingUp)
        return (run, record, entry)
    }

    private static let authorizationTimer = AccessorySession.Timer(kind: .authorization, picker: 1)

    @Test func confirmAuthorizationKeepsThePickerUntilTheClientFinishes() throws {
        var (run, record, _) = try confirming()
        #expect(run.refusal(.showPicker([.display(Fixture.plugItem)], .init(), .agent)) == .pickerAlreadyActive)
        let effects = run.send(.finishAuthorization(record.id, .init()))
        let finished = try #require(run.session.accessories.first)
        #expect(finished.state == .authorized)
        #expect(
            effects == [
                .save(finished), .emit(.accessoryChanged(finished)), .cancelTimer(Self.authorizationTimer),
                .dismissPicker, .emit(.pickerDidDismiss(nil)),
            ])
        #expect(run.session.phase == .active)
        #expect(run.send(.timerFired(Self.authorizationTimer)).isEmpty, "a late timer is ignored")
    }

    @Test func confirmAuthorizationFailedByTheClientRemovesTheAccessoryAndFailsThePicker() throws {
        var (run, record, _) = try confirming()
        var removed = record
        removed.state = .unauthorized
        let failure = AccessorySessionError.applicationFailedAuthorization
        #expect(
            run.send(.failAuthorization(record.id)) == [
                .delete(removed), .emit(.accessoryRemoved(removed)), .cancelTimer(Self.authorizationTimer),
                .emit(.pickerSetupFailed(failure)), .dismissPicker, .emit(.pickerDidDismiss(failure)),
            ])
        #expect(run.session.accessories.isEmpty)
        #expect(run.session.phase == .active)
    }

    @Test func confirmAuthorizationTimesOutWithItsTimeoutNamed() throws {
        let settings = PickerDisplaySettings(authorizationTimeout: .seconds(45))
        var (run, record, _) = try confirming(settings: settings)
        var removed = record
        removed.state = .unauthorized
        let failure = AccessorySessionError.authorizationTimedOut(.seconds(45))
        #expect("\(failure)".contains("45 s"))
        #expect("\(failure)".contains("authorizationTimeout"))
        #expect(
            run.send(.timerFired(Self.authorizationTimer)) == [
                .delete(removed), .emit(.accessoryRemoved(removed)), .emit(.pickerSetupFailed(failure)),
                .dismissPicker, .emit(.pickerDidDismiss(failure)),
            ])
        #expect(run.session.accessories.isEmpty)
        #expect(run.refusal(.finishAuthorization(record.id, .init()))?.field == "accessory", "too late")
    }

    @Test func confirmAuthorizationFinishedElsewhereEndsThePicker() throws {
        var (run, record, _) = try confirming()
        var authorized = record
        authorized.state = .authorized
        #expect(
            run.send(.recordChanged(authorized)) == [
                .emit(.accessoryChanged(authorized)), .cancelTimer(Self.authorizationTimer), .dismissPicker,
                .emit(.pickerDidDismiss(nil)),
            ])
        #expect(run.session.phase == .active)
    }

    @Test func aConfirmationPickerEndedOtherwiseLeavesNoRecord() throws {
        var (cancelled, record, _) = try confirming()
        var removed = record
        removed.state = .unauthorized
        #expect(
            cancelled.send(.pickerDismissed(.userCancelled)) == [
                .cancelTimer(Self.authorizationTimer), .delete(removed), .emit(.accessoryRemoved(removed)),
                .emit(.pickerDidDismiss(.userCancelled)),
            ], "the person left the picker")
        var (invalidated, invalidatedRecord, _) = try confirming()
        let effects = invalidated.send(.invalidate(nil))
        #expect(
            effects.contains { if case .delete(let gone) = $0 { gone.id == invalidatedRecord.id } else { false } },
            "the client invalidated the session")
        #expect(invalidated.session.accessories.isEmpty)
        var (removedElsewhere, removedRecord, _) = try confirming()
        #expect(
            Array(removedElsewhere.send(.recordRemoved(removedRecord.id)).suffix(2)) == [
                .dismissPicker, .emit(.pickerDidDismiss(.removedBeforeAuthorization)),
            ])
    }

    @Test func finishInAppDismissesAtOnceLeavingTheRecordAwaiting() throws {
        var run = SessionRun()
        var item = Fixture.plugItem
        item.setupOptions = [.finishInApp, .confirmAuthorization]
        run.showPicker([item])
        run.send(.wifiScanned([Fixture.accessPoint("plug-0001", "24:0A:C4:00:00:01")]))
        let effects = run.send(.picked(PickerChoice(entryID: 1)))
        #expect(Array(effects.suffix(2)) == [.dismissPicker, .emit(.pickerDidDismiss(nil))])
        #expect(run.session.accessories.first?.state == .awaitingAuthorization)
        #expect(run.session.phase == .active)
    }

    @Test func theAuthorizationTimeoutIsBounded() {
        var run = SessionRun()
        for seconds in [0, 3601] {
            let settings = PickerDisplaySettings(authorizationTimeout: .seconds(seconds))
            #expect(
                run.refusal(.showPicker([.display(Fixture.plugItem)], settings, .agent))?.field
                    == "settings.authorizationTimeout")
        }
    }

    /// `shareNetwork` is read as the network the client will give the picked accessory (empty:
    /// the one this computer is on), and refused for a profile that gives its accessories none.
    @Test func aPickerSaysWhichNetworkFollowsOnlyWhereTheProfileGivesOne() throws {
        let parsed = try AccessorySession.pickerDisplaySettings(
            try JSONValue.parse(Data(#"{"shareNetwork": "HomeNet"}"#.utf8)), at: "settings")
        #expect(parsed.sharedNetwork == .ssid(try SSID("HomeNet")))
        let current = try AccessorySession.pickerDisplaySettings(
            try JSONValue.parse(Data(#"{"shareNetwork": ""}"#.utf8)), at: "settings")
        #expect(current.sharedNetwork == .current)

        var run = SessionRun()
        #expect(SessionFixture.profile.provisioningExposure == nil)
        #expect(
            run.refusal(.showPicker([.display(Fixture.plugItem)], parsed, .agent))?.field == "settings.shareNetwork")
        var provisioned = SessionFixture.profile
        provisioned.provisioning = ProvisioningSetup(transport: .softAP, address: "192.168.4.1")
        var sharing = SessionRun(profile: provisioned)
        sharing.showPicker([Fixture.plugItem], settings: parsed)
        #expect(sharing.session.pickerSharedNetwork == .ssid(try SSID("HomeNet")))
        #expect(provisioned.provisioningExposure == .encrypted)
    }

    @Test func updateRenameAndRemove() throws {
        let record = Fixture.record(
            "Plug", state: .authorized, descriptor: Fixture.plugItem.descriptor, ssid: "plug-0001")
        var run = SessionRun(accessories: [record])

        let withBluetooth = Fixture.descriptor {
            $0.ssidPrefix = try! SSID("plug-")
            $0.bluetoothServiceUUID = Fixture.sensorService
        }
        run.send(.updateAuthorization(record.id, withBluetooth))
        #expect(run.session.accessories.first?.descriptor == withBluetooth)
        let outside = Fixture.descriptor { $0.bluetoothServiceUUID = BluetoothUUID(assigned: 0x181A) }
        #expect(run.refusal(.updateAuthorization(record.id, outside))?.field == "descriptor.bluetoothServiceUUID")

        run.send(.renameAccessory(record.id, name: "Desk lamp", options: []))
        #expect(run.session.accessories.first?.displayName == "Desk lamp")
        #expect(run.session.accessories.first?.ssid == (try SSID("plug-0001")))
        run.send(.renameAccessory(record.id, name: "plug-desk", options: .ssid))
        #expect(run.session.accessories.first?.ssid == (try SSID("plug-desk")))
        #expect(run.session.accessories.first?.foundSSID == (try SSID("plug-0001")))
        #expect(
            run.refusal(.renameAccessory(record.id, name: "HomeNet", options: .ssid))?.field == "name",
            "an SSID the profile's descriptors do not accept")
        #expect(
            run.refusal(.renameAccessory(record.id, name: String(repeating: "x", count: 33), options: .ssid))?.field
                == "name")
        #expect(run.refusal(.renameAccessory(record.id, name: "", options: []))?.field == "name")
        #expect(run.send(.renameAccessory(record.id, name: "plug-desk", options: .ssid)).isEmpty, "no change, no event")

        let current = try #require(run.session.accessories.first)
        #expect(run.send(.removeAccessory(record.id)) == [.delete(current), .emit(.accessoryRemoved(current))])
        #expect(run.refusal(.removeAccessory(record.id))?.field == "accessory")
        #expect(
            run.eventTypes == [.activated, .accessoryChanged, .accessoryChanged, .accessoryChanged, .accessoryRemoved])
    }

    @Test func changesMadeElsewhereReachTheClientForItsOwnRecordsOnly() {
        var run = SessionRun()
        let mine = Fixture.record("Plug", state: .authorized, descriptor: Fixture.plugItem.descriptor)
        var theirs = mine
        theirs.id = UUID()
        theirs.owner = AccessoryOwner(uid: 1001, profileID: "org.example.plug")
        #expect(run.send(.recordChanged(theirs)).isEmpty)
        #expect(run.send(.recordChanged(mine)) == [.emit(.accessoryAdded(mine))])
        var renamed = mine
        renamed.displayName = "Renamed"
        #expect(run.send(.recordChanged(renamed)) == [.emit(.accessoryChanged(renamed))])
        #expect(run.send(.recordRemoved(mine.id)) == [.emit(.accessoryRemoved(renamed))])
        #expect(run.send(.recordRemoved(mine.id)).isEmpty)
    }

    @Test func aSessionStartsWithItsOwnersRecordsOnly() {
        let mine = Fixture.record("Plug", state: .authorized, descriptor: Fixture.plugItem.descriptor)
        var theirs = Fixture.record("Theirs", state: .authorized, descriptor: Fixture.plugItem.descriptor)
        theirs.owner = AccessoryOwner(uid: 1001, profileID: "org.example.plug")
        let run = SessionRun(accessories: [mine, theirs])
        #expect(run.events == [.activated([mine])])
    }
}

@Suite("The session: migration")
struct AccessorySessionMigrationTests {
    @Test func migrationAdoptsWhatIsFoundAndMatchesTheDescriptor() throws {
        var run = SessionRun()
        let hotspot = MigrationDisplayItem(item: Fixture.plugItem, hotspotSSID: try SSID("plug-0042"))
        let sensor = MigrationDisplayItem(
            item: Fixture.sensorItem, peripheralAddress: try MACAddress("AC:67:B2:00:00:09"))
        let keyboard = MigrationDisplayItem(
            item: Fixture.sensorItem, peripheralAddress: try MACAddress("AC:67:B2:00:00:0A"))
        let effects = run.send(
            .showPicker([.migration(hotspot), .migration(sensor), .migration(keyboard)], .init(), .agent))
        #expect(effects == [.lookUpMigrations([hotspot, sensor, keyboard])], "migration alone shows no picker")
        #expect(run.refusal(.showPicker([.display(Fixture.plugItem)], .init(), .agent)) == .pickerAlreadyActive)

        let notASensor = BLEAdvertisement(address: try MACAddress("AC:67:B2:00:00:0A"), name: "Keyboard")
        run.send(
            .migrationsLookedUp([
                MigrationLookup(hasHotspotProfile: true),
                MigrationLookup(hasHotspotProfile: false, peripheral: Fixture.sensor("AC:67:B2:00:00:09")),
                MigrationLookup(hasHotspotProfile: false, peripheral: notASensor),
            ]))
        let adopted = run.session.accessories
        #expect(adopted.map(\.ssid) == [try SSID("plug-0042"), nil])
        #expect(adopted.map(\.bluetoothIdentifier) == [nil, try MACAddress("AC:67:B2:00:00:09")])
        #expect(adopted.allSatisfy { $0.state == .authorized })
        #expect(run.events.last == .migrationComplete(adopted))
    }

    @Test func aMigrationItemMustBeOneTheDescriptorMatches() throws {
        var run = SessionRun()
        let home = MigrationDisplayItem(item: Fixture.plugItem, hotspotSSID: try SSID("HomeNet"))
        #expect(run.refusal(.showPicker([.migration(home)], .init(), .agent))?.field == "items[0].hotspotSSID")
        let neither = MigrationDisplayItem(item: Fixture.plugItem)
        #expect(
            run.refusal(.showPicker([.display(Fixture.plugItem), .migration(neither)], .init(), .agent))?.field
                == "items[1]")
        #expect(run.refusal(.migrationsLookedUp([]))?.field == "migrations")
    }
}

@Suite("The session: the kiosk front end")
struct AccessorySessionKioskTests {
    @Test func firstMatchPicksAsSoonAsSomethingIsHeard() throws {
        var run = SessionRun()
        let policy = KioskPolicy.Policy(
            profiles: ["org.example.plug"], users: [.uid(1000)], rule: .firstMatch,
            passphraseFile: "/etc/accessory-setup/plug.pass")
        let shown = run.showPicker([Fixture.plugItem], frontEnd: .kiosk(policy))
        #expect(!shown.contains(.presentPicker([Fixture.plugItem])), "no picker agent is asked")
        run.send(.wifiScanned([Fixture.accessPoint("plug-0001", "24:0A:C4:00:00:01")]))
        let record = try #require(run.session.accessories.first)
        #expect(run.session.suppliedPassphrase(for: record.id) == .file(path: "/etc/accessory-setup/plug.pass"))
        #expect(run.eventTypes == [.activated, .pickerDidPresent, .accessoryAdded, .pickerDidDismiss])
        #expect(!run.effects.contains(.dismissPicker))
    }

    @Test func strongestSignalWaitsToSettleThenPicksTheStrongest() throws {
        var run = SessionRun()
        let policy = KioskPolicy.Policy(
            profiles: ["org.example.plug"], users: [.uid(1000)], rule: .strongestSignal(settle: .seconds(5)))
        run.showPicker([Fixture.plugItem], frontEnd: .kiosk(policy))
        let settle = AccessorySession.Timer(kind: .kioskSettle, picker: 1)
        #expect(
            run.send(.wifiScanned([Fixture.accessPoint("plug-0001", "24:0A:C4:00:00:01", strength: 40)])) == [
                .startTimer(settle, after: .seconds(5))
            ])
        run.send(
            .wifiScanned([
                Fixture.accessPoint("plug-0001", "24:0A:C4:00:00:01", strength: 40),
                Fixture.accessPoint("plug-0002", "30:AE:A4:00:00:01", strength: 80),
            ]))
        #expect(run.session.accessories.isEmpty)
        let picked = run.send(.timerFired(settle))
        #expect(picked.first == .stopDiscovery)
        #expect(run.session.accessories.map(\.ssid) == [try SSID("plug-0002")])
    }
}

extension AccessorySession {
    /// Why `hotspotConfiguration` refuses to join `id`; `nil` when it would join.
    func joinRefusal(_ id: UUID, passphrase: Secret?) -> AccessorySessionError? {
        do {
            _ = try hotspotConfiguration(for: id, passphrase: passphrase)
            return nil
        } catch {
            return error
        }
    }
}
