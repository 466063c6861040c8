import AccessoryCore
import DBusValues

/// What the agent asks a picker agent to show (`PickerAgent1.RequestChoice`'s request).
public struct PickerAgentRequest: Sendable, Hashable {
    /// One profile item the client's picker offers.
    public struct Item: Sendable, Hashable {
        public var name: String
        public var productImage: String?
        /// Whether the person may rename what they pick.
        public var rename: Bool

        public init(name: String, productImage: String? = nil, rename: Bool = false) {
            self.name = name
            self.productImage = productImage
            self.rename = rename
        }
    }

    /// The network the client will ask to give the picked accessory (`ShowPicker`'s
    /// `shareNetwork`): the picker says so before the person confirms, in the words polkit's
    /// dialog will use then.
    public struct Share: Sendable, Hashable {
        /// `nil`: the network this computer is on.
        public var network: SSID?
        public var exposure: NetworkShareConsent.Exposure

        public init(network: SSID?, exposure: NetworkShareConsent.Exposure) {
            self.network = network
            self.exposure = exposure
        }

        /// What picking `accessory` will ask, for `application` (as the desktop names it; `nil`:
        /// a program of the person's own).
        public func consent(for accessory: String, application: String?) -> NetworkShareConsent {
            NetworkShareConsent(
                recordID: nil, accessory: accessory, network: network, application: application, exposure: exposure)
        }
    }

    /// The id of the profile the client opened its session with.
    public var profile: String
    /// The profile's vendor: the picker's title.
    public var vendor: String
    /// The uid of the client's user.
    public var user: UInt32?
    /// The Flatpak application id of a sandboxed client, as the agent established it from the
    /// client's connection (never as the client said); `nil` for a client on the host. The
    /// picker names the application from its `.desktop` file.
    public var application: String?
    public var items: [Item]
    /// Whether the person is asked for the accessory's passphrase.
    public var asksPassphrase: Bool
    /// Whether the person is asked for the proof of possession printed on the device (for
    /// giving it the home network afterwards), and where the profile says it is found.
    public var asksProofOfPossession: Bool
    public var proofOfPossessionHint: String?
    public var share: Share?

    public init(
        profile: String, vendor: String, user: UInt32? = nil, application: String? = nil, items: [Item],
        asksPassphrase: Bool, asksProofOfPossession: Bool = false, proofOfPossessionHint: String? = nil,
        share: Share? = nil
    ) {
        self.profile = profile
        self.vendor = vendor
        self.user = user
        self.application = application
        self.items = items
        self.asksPassphrase = asksPassphrase
        self.asksProofOfPossession = asksProofOfPossession
        self.proofOfPossessionHint = proofOfPossessionHint
        self.share = share
    }

    /// Reads a request off the bus; a missing vendor reads as the profile id.
    public init(_ value: DBusValue) {
        let profile = value.field("profile")?.string ?? ""
        self.init(
            profile: profile, vendor: value.field("vendor")?.string ?? profile,
            user: value.field("user")?.int.flatMap(UInt32.init(exactly:)),
            application: value.field("application")?.string,
            items: (value.field("items")?.elements ?? []).map { item in
                Item(
                    name: item.field("name")?.string ?? "", productImage: item.field("productImage")?.string,
                    rename: item.field("rename")?.bool ?? false)
            },
            asksPassphrase: value.field("passphrase")?.bool ?? false,
            asksProofOfPossession: value.field("proofOfPossession")?.bool ?? false,
            proofOfPossessionHint: value.field("proofOfPossessionHint")?.string,
            share: value.field("share").flatMap { share in
                share.field("exposure")?.string.flatMap(NetworkShareConsent.Exposure.init(rawValue:)).map {
                    Share(network: share.field("network")?.string.flatMap { try? SSID(notation: $0) }, exposure: $0)
                }
            })
    }

    /// The `a{sv}` the agent sends.
    public var dbusValue: DBusValue {
        var fields: [(String, DBusValue)] = [("profile", .string(profile)), ("vendor", .string(vendor))]
        if let user { fields.append(("user", .uint32(user))) }
        if let application { fields.append(("application", .string(application))) }
        fields.append(
            (
                "items",
                .array(
                    items.map { item in
                        var entries: [(String, DBusValue)] = [
                            ("name", .string(item.name)), ("rename", .boolean(item.rename)),
                        ]
                        if let image = item.productImage { entries.append(("productImage", .string(image))) }
                        return .vardict(entries)
                    }, elementType: "a{sv}")
            ))
        fields.append(("passphrase", .boolean(asksPassphrase)))
        fields.append(("proofOfPossession", .boolean(asksProofOfPossession)))
        if let proofOfPossessionHint { fields.append(("proofOfPossessionHint", .string(proofOfPossessionHint))) }
        if let share {
            var entries: [(String, DBusValue)] = [("exposure", .string(share.exposure.rawValue))]
            if let network = share.network { entries.append(("network", .string(network.notation))) }
            fields.append(("share", .vardict(entries)))
        }
        return .vardict(fields)
    }

    /// Whether the item at `index` offers renaming.
    public func renames(_ index: Int) -> Bool { items.indices.contains(index) && items[index].rename }
}

/// A picker agent's answer to `RequestChoice`: the entry the person chose, and what they typed
/// for it. Written by the picker (`PickerAgentService`), read by the agent.
public struct PickerAgentChoice: Sendable {
    public var entry: UInt32
    /// A new name for the accessory, where its item offers renaming.
    public var name: String?
    /// The accessory's hotspot passphrase, where the picker asked for it.
    public var passphrase: Secret?
    /// The proof of possession printed on the device, where the picker asked for it.
    public var proofOfPossession: Secret?

    public init(entry: UInt32, name: String? = nil, passphrase: Secret? = nil, proofOfPossession: Secret? = nil) {
        self.entry = entry
        self.name = name
        self.passphrase = passphrase
        self.proofOfPossession = proofOfPossession
    }

    /// Reads the reply (`ua{sv}`); `nil` when it names no entry.
    public init?(_ values: [DBusValue]) {
        guard let entry = values.first?.uint32 else { return nil }
        let answer = values.count > 1 ? values[1] : .vardict([])
        self.init(
            entry: entry, name: answer.field("name")?.string,
            passphrase: answer.field("passphrase")?.string.map(Secret.init),
            proofOfPossession: answer.field("proofOfPossession")?.string.map(Secret.init))
    }

    /// The reply's values.
    public var dbusValues: [DBusValue] {
        var answer: [(String, DBusValue)] = []
        if let name { answer.append(("name", .string(name))) }
        if let passphrase { answer.append(("passphrase", .string(passphrase.reveal()))) }
        if let proofOfPossession { answer.append(("proofOfPossession", .string(proofOfPossession.reveal()))) }
        return [.uint32(entry), .vardict(answer)]
    }
}
