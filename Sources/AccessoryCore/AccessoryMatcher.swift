/// One discovered device that a picker display item's descriptor matched.
public struct AccessoryMatch: Hashable, Sendable {
    public enum Device: Hashable, Sendable {
        case wifi(WiFiScanEntry)
        case bluetooth(BLEAdvertisement)
    }

    /// The index of the first item, in the matcher's order, whose descriptor matched.
    public var itemIndex: Int
    public var device: Device

    public init(itemIndex: Int, device: Device) {
        self.itemIndex = itemIndex
        self.device = device
    }
}

/// Finds, for a scan entry or advertisement, the first descriptor that matches it.
public protocol AccessoryMatching: Sendable {
    func firstMatch(for entry: WiFiScanEntry) -> Int?
    func firstMatch(for advertisement: BLEAdvertisement) -> Int?
}

extension AccessoryMatching {
    /// The matches in a scan, one per device: access points are one device only when they
    /// share a BSSID, advertisements when they share an address. A device matched by several
    /// items is reported for the first of them. Wi-Fi devices come first, each kind strongest first.
    public func matches(wifi: [WiFiScanEntry], bluetooth: [BLEAdvertisement]) -> [AccessoryMatch] {
        var accessPoints: [MACAddress: (item: Int, entry: WiFiScanEntry)] = [:]
        for entry in wifi {
            guard let item = firstMatch(for: entry) else { continue }
            if let kept = accessPoints[entry.bssid],
                kept.item < item || (kept.item == item && kept.entry.strength >= entry.strength)
            {
                continue
            }
            accessPoints[entry.bssid] = (item, entry)
        }

        var devices: [BluetoothDeviceKey: (item: Int, advertisement: BLEAdvertisement)] = [:]
        for advertisement in bluetooth {
            guard let item = firstMatch(for: advertisement) else { continue }
            let key = BluetoothDeviceKey(address: advertisement.address, type: advertisement.addressType)
            if let kept = devices[key],
                kept.item < item
                    || (kept.item == item && (kept.advertisement.rssi ?? .min) >= (advertisement.rssi ?? .min))
            {
                continue
            }
            devices[key] = (item, advertisement)
        }

        let wifiMatches = accessPoints.values
            .sorted { ($0.entry.strength, $1.entry.bssid) > ($1.entry.strength, $0.entry.bssid) }
            .map { AccessoryMatch(itemIndex: $0.item, device: .wifi($0.entry)) }
        let bluetoothMatches = devices.values
            .sorted {
                ($0.advertisement.rssi ?? .min, $1.advertisement.address) > (
                    $1.advertisement.rssi ?? .min, $0.advertisement.address
                )
            }
            .map { AccessoryMatch(itemIndex: $0.item, device: .bluetooth($0.advertisement)) }
        return wifiMatches + bluetoothMatches
    }
}

private struct BluetoothDeviceKey: Hashable {
    var address: MACAddress
    var type: BluetoothAddressType
}

/// The reference matcher: tries every descriptor in order. Use `AccessoryMatcher`; this one
/// exists to check it against and to measure it by.
public struct LinearAccessoryMatcher: AccessoryMatching {
    public let descriptors: [DiscoveryDescriptor]

    public init(descriptors: [DiscoveryDescriptor]) {
        self.descriptors = descriptors
    }

    public func firstMatch(for entry: WiFiScanEntry) -> Int? {
        descriptors.firstIndex { $0.matches(entry) }
    }

    public func firstMatch(for advertisement: BLEAdvertisement) -> Int? {
        descriptors.firstIndex { $0.matches(advertisement) }
    }
}

/// Matches scans against many descriptors through indexes: exact SSIDs in a hash table, SSID
/// prefixes in a byte trie walked along the heard SSID, BSSID-only descriptors by masked
/// BSSID, Bluetooth descriptors by service UUID or company. Only the few candidates an index
/// yields are checked with the full `DiscoveryDescriptor.matches`, so the result is always
/// the same as `LinearAccessoryMatcher`'s.
public struct AccessoryMatcher: AccessoryMatching {
    public let descriptors: [DiscoveryDescriptor]

    // Every candidate list is in ascending descriptor order.
    private var bySSID: [SSID: [Int]] = [:]
    private var bySSIDPrefix = ByteTrie()
    private var byMaskedBSSID: [UInt64: [UInt64: [Int]]] = [:]
    private var byService: [BluetoothUUID: [Int]] = [:]
    private var byCompany: [BluetoothCompanyIdentifier: [Int]] = [:]

    public init(descriptors: [DiscoveryDescriptor]) {
        self.descriptors = descriptors
        for (index, descriptor) in descriptors.enumerated() {
            if let ssid = descriptor.ssid {
                bySSID[ssid, default: []].append(index)
            } else if let prefix = descriptor.ssidPrefix {
                bySSIDPrefix.insert(prefix.bytes, index)
            } else if let bssid = descriptor.bssid {
                let mask = descriptor.bssidMask?.rawValue ?? MACAddress(rawValue: .max).rawValue
                byMaskedBSSID[mask, default: [:]][bssid.rawValue & mask, default: []].append(index)
            }
            if let service = descriptor.bluetoothServiceUUID {
                byService[service, default: []].append(index)
            } else if let company = descriptor.bluetoothCompanyIdentifier {
                byCompany[company, default: []].append(index)
            }
        }
    }

    public func firstMatch(for entry: WiFiScanEntry) -> Int? {
        var first: Int?
        if let ssid = entry.ssid {
            if let candidates = bySSID[ssid] { first = firstMatching(candidates, before: first) { $0.matches(entry) } }
            bySSIDPrefix.forEachList(alongPrefixesOf: ssid.bytes) { candidates in
                first = firstMatching(candidates, before: first) { $0.matches(entry) }
            }
        }
        for (mask, table) in byMaskedBSSID {
            if let candidates = table[entry.bssid.rawValue & mask] {
                first = firstMatching(candidates, before: first) { $0.matches(entry) }
            }
        }
        return first
    }

    public func firstMatch(for advertisement: BLEAdvertisement) -> Int? {
        var first: Int?
        for service in advertisement.serviceUUIDs {
            if let candidates = byService[service] {
                first = firstMatching(candidates, before: first) { $0.matches(advertisement) }
            }
        }
        for service in advertisement.serviceData.keys {
            if let candidates = byService[service] {
                first = firstMatching(candidates, before: first) { $0.matches(advertisement) }
            }
        }
        for company in advertisement.manufacturerData.keys {
            if let candidates = byCompany[company] {
                first = firstMatching(candidates, before: first) { $0.matches(advertisement) }
            }
        }
        return first
    }

    /// The first candidate below `bound` that `predicate` accepts, else `bound`.
    private func firstMatching(_ candidates: [Int], before bound: Int?, _ predicate: (DiscoveryDescriptor) -> Bool)
        -> Int?
    {
        for index in candidates {
            if let bound, index >= bound { break }
            if predicate(descriptors[index]) { return index }
        }
        return bound
    }
}

/// A trie over bytes whose nodes hold the descriptors whose prefix ends there.
struct ByteTrie: Sendable {
    private var children: [[UInt8: Int]] = [[:]]
    private var lists: [[Int]] = [[]]

    mutating func insert(_ key: [UInt8], _ value: Int) {
        var node = 0
        for byte in key {
            if let next = children[node][byte] {
                node = next
            } else {
                children.append([:])
                lists.append([])
                children[node][byte] = children.count - 1
                node = children.count - 1
            }
        }
        lists[node].append(value)
    }

    /// Calls `body` with the list of every key that is a prefix of `bytes`.
    func forEachList(alongPrefixesOf bytes: [UInt8], _ body: ([Int]) -> Void) {
        var node = 0
        for byte in bytes {
            guard let next = children[node][byte] else { return }
            node = next
            if !lists[node].isEmpty { body(lists[node]) }
        }
    }
}
