// Matching benchmark: 10,000 picker descriptors against 2,000 scan entries, the indexed
// AccessoryMatcher against the LinearAccessoryMatcher baseline, in one process.
//
//     swift run -c release accessory-bench [--descriptors N] [--entries N] [--rounds N]
import AccessoryCore
import Foundation

struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func option(_ name: String, default value: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: "--\(name)"), index + 1 < arguments.count,
        let number = Int(arguments[index + 1]), number > 0
    else {
        return value
    }
    return number
}

let descriptorCount = option("descriptors", default: 10_000)
let entryCount = option("entries", default: 2_000)
let rounds = option("rounds", default: 5)
var random = SplitMix64(state: 0x5EED)

func ssid(_ text: String) -> SSID { try! SSID(text) }
func hexWord(_ value: UInt64, digits: Int) -> String {
    String(String(value, radix: 16, uppercase: true).suffix(digits)).leftPadded(to: digits)
}
extension String {
    func leftPadded(to length: Int) -> String { String(repeating: "0", count: max(0, length - count)) + self }
}

// The descriptors of a large kiosk deployment: exact setup SSIDs, vendor prefixes, OUI filters,
// Bluetooth services with service data, companies with manufacturer data and names.
let brands = (0..<400).map { "Brand\($0)" }
let services = (0..<300).map { _ in
    BluetoothUUID(
        UUID(
            uuid: withUnsafeBytes(of: (random.next(), random.next())) { bytes in
                let b = Array(bytes)
                return (
                    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]
                )
            }))
}
var descriptors: [DiscoveryDescriptor] = []
for index in 0..<descriptorCount {
    var descriptor = DiscoveryDescriptor()
    switch index % 10 {
    case 0...3:
        descriptor.ssid = ssid("\(brands[index % brands.count])-Setup-\(hexWord(UInt64(index), digits: 4))")
    case 4...6:
        descriptor.ssidPrefix = ssid("\(brands[Int.random(in: 0..<brands.count, using: &random)])-\(index % 7)")
        descriptor.minimumSignalStrength = Int.random(in: 0...40, using: &random)
    case 7:
        descriptor.bssid = MACAddress(rawValue: random.next())
        descriptor.bssidMask = MACAddress(rawValue: 0xFFFF_FF00_0000)
    case 8:
        descriptor.bluetoothServiceUUID = services[index % services.count]
        descriptor.bluetoothServiceData = try! MaskedData(blob: [UInt8(index % 4), 0x10], mask: [0xFF, 0xF0])
    default:
        descriptor.bluetoothCompanyIdentifier = BluetoothCompanyIdentifier(rawValue: UInt16(index % 500))
        descriptor.bluetoothManufacturerData = try! MaskedData(blob: [0x01, UInt8(index % 16)], mask: [0xFF, 0x0F])
        if index % 3 == 0 { descriptor.bluetoothNameSubstring = "Sensor" }
    }
    descriptors.append(descriptor)
}

// A busy scan: most entries are noise, a share hit exact SSIDs, prefixes, OUIs and companies.
var wifi: [WiFiScanEntry] = []
var bluetooth: [BLEAdvertisement] = []
for index in 0..<entryCount {
    if index % 4 != 3 {
        let name: String =
            switch index % 3 {
            case 0:
                {
                    let target = index * 10 % descriptorCount
                    return "\(brands[target % brands.count])-Setup-\(hexWord(UInt64(target), digits: 4))"
                }()
            case 1:
                "\(brands[Int.random(in: 0..<brands.count, using: &random)])-\(index % 7)\(hexWord(random.next(), digits: 6))"
            default: "HomeNetwork-\(hexWord(random.next(), digits: 8))"
            }
        wifi.append(
            WiFiScanEntry(
                ssid: ssid(name), bssid: MACAddress(rawValue: random.next()),
                strength: Int.random(in: 0...100, using: &random), frequency: 2412))
    } else {
        var advertisement = BLEAdvertisement(
            address: MACAddress(rawValue: random.next()), name: index % 2 == 0 ? "Sensor \(index)" : nil,
            rssi: Int.random(in: -100 ... -30, using: &random))
        if index % 2 == 0 {
            advertisement.serviceData[services[index % services.count]] = [UInt8(index % 4), 0x1A]
        } else {
            advertisement.manufacturerData[BluetoothCompanyIdentifier(rawValue: UInt16(index % 500))] = [
                0x01, UInt8(index % 16), 0x77,
            ]
        }
        bluetooth.append(advertisement)
    }
}

func measure(_ body: () -> [AccessoryMatch]) -> (milliseconds: Double, result: [AccessoryMatch]) {
    var times: [Duration] = []
    var result: [AccessoryMatch] = []
    for _ in 0..<rounds {
        let clock = ContinuousClock()
        let start = clock.now
        result = body()
        times.append(clock.now - start)
    }
    let median = times.sorted()[times.count / 2]
    let (seconds, attoseconds) = median.components
    return (Double(seconds) * 1000 + Double(attoseconds) / 1e15, result)
}

func format(_ milliseconds: Double) -> String {
    let hundredths = (milliseconds * 100).rounded()
    return "\(hundredths / 100)"
}

print(
    "matching \(descriptorCount) descriptors against \(wifi.count) access points and \(bluetooth.count) advertisements, median of \(rounds) rounds"
)
let indexed = measure { AccessoryMatcher(descriptors: descriptors).matches(wifi: wifi, bluetooth: bluetooth) }
let linear = measure { LinearAccessoryMatcher(descriptors: descriptors).matches(wifi: wifi, bluetooth: bluetooth) }
guard indexed.result == linear.result else {
    print(
        "FAIL: the indexed matcher and the linear baseline disagree (\(indexed.result.count) vs \(linear.result.count) matches)"
    )
    exit(1)
}
print("matches:                   \(indexed.result.count)")
print("indexed (build + match):   \(format(indexed.milliseconds)) ms")
print("linear baseline:           \(format(linear.milliseconds)) ms")
print("speed-up over linear:      \(format(linear.milliseconds / indexed.milliseconds))x")
