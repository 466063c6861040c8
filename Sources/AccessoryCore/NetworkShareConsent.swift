import FoundationEssentials

/// What a person is told before the passphrase of a network this machine stores goes to an
/// accessory: which application asks, which accessory receives it, which network it is, and
/// whether it crosses the air unencrypted. polkit's dialog shows it (the share actions'
/// messages and details) and the pickers show the same sentence before the person confirms.
/// Every name in it is `DisplayText.sanitized`.
public struct NetworkShareConsent: Hashable, Sendable {
    /// Whether the passphrase is encrypted on its way to the accessory.
    public enum Exposure: String, Hashable, Sendable {
        /// A secure session (ESP-IDF security 1 or 2 with a proof of possession).
        case encrypted
        /// Encrypted unless the accessory offers no better (a profile accepting security 0).
        case unencryptedIfOffered
        /// In the clear (Improv Wi-Fi, a plain HTTP setup page on an open hotspot).
        case unencrypted
    }

    /// The record whose accessory is given the network; `nil` before the pick makes it.
    public var recordID: UUID?
    public var accessory: String
    /// The network's SSID as shown; `nil`: the network this computer is on.
    public var network: String?
    /// The sandboxed application that asks, as the desktop names it; `nil`: a program on the
    /// host, the person's own.
    public var application: String?
    public var exposure: Exposure

    public init(recordID: UUID?, accessory: String, network: SSID?, application: String?, exposure: Exposure) {
        self.recordID = recordID
        self.accessory = DisplayText.sanitized(accessory)
        self.network = network.map { DisplayText.sanitized($0.escaped) }
        self.application = application.map { DisplayText.sanitized($0) }
        self.exposure = exposure
    }

    /// Who asks, as polkit's message names it: the application, else "a program of yours".
    public var asker: String { application ?? "a program of yours" }

    /// What happens to the passphrase on its way, in words.
    public var exposureSentence: String {
        switch exposure {
        case .encrypted: "It is sent encrypted."
        case .unencryptedIfOffered:
            "It is sent without encryption if the accessory offers no better: anyone nearby could read it."
        case .unencrypted: "It is sent without encryption: anyone nearby can read it."
        }
    }

    /// The whole consent in one paragraph.
    public var sentence: String {
        "\(application ?? "A program of yours") asks to give the accessory “\(accessory)” the passphrase of the Wi-Fi network "
            + "“\(network ?? "this computer is on")”. \(exposureSentence)"
    }

    /// polkit's details: each `$(key)` the share actions' messages name, plus the record.
    public var details: [String: String] {
        var details = [
            "application": asker, "accessory": accessory, "ssid": network ?? "this computer is on",
            "exposure": exposureSentence,
        ]
        if let recordID { details["record"] = recordID.uuidString.lowercased() }
        return details
    }
}
