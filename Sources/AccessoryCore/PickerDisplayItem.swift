/// One kind of accessory the picker may show: the counterpart of `ASPickerDisplayItem`.
public struct PickerDisplayItem: Hashable, Sendable {
    public var name: String
    /// A product image, relative to the profile file that declares the item.
    public var productImage: String?
    public var descriptor: DiscoveryDescriptor
    public var setupOptions: SetupOptions

    public init(
        name: String, productImage: String? = nil, descriptor: DiscoveryDescriptor, setupOptions: SetupOptions = []
    ) {
        self.name = name
        self.productImage = productImage
        self.descriptor = descriptor
        self.setupOptions = setupOptions
    }

    /// `ASPickerDisplayItem.SetupOptions`, with Apple's raw values.
    public struct SetupOptions: OptionSet, Hashable, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// Offer to rename the accessory during setup.
        public static let rename = SetupOptions(rawValue: 1)
        /// The client finishes authorization before setup is shown as done.
        public static let confirmAuthorization = SetupOptions(rawValue: 2)
        /// The client completes setup itself.
        public static let finishInApp = SetupOptions(rawValue: 4)

        public static let names: KeyValuePairs<String, SetupOptions> = [
            "rename": .rename, "confirmAuthorization": .confirmAuthorization, "finishInApp": .finishInApp,
        ]
    }
}
