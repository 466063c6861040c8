import AccessoryCore
import Foundation

// Fuzz target: recorded scans, read the way `accessoryctl match --scan` reads them. A refused
// scan must name at least one field; an accepted one is matched against the shipped profiles
// (indexed and linear matchers must agree) and its entries encoded as `match --json` does.

private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

private let descriptors: [DiscoveryDescriptor] = {
    let directory = repository.appendingPathComponent("profiles")
    let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    let profiles = files.filter { $0.hasSuffix(".json") }.sorted().map { name in
        do {
            return try AccessoryProfile.load(contentsOf: directory.appendingPathComponent(name))
        } catch {
            fatalError("fuzz setup: \(error)")
        }
    }
    precondition(!profiles.isEmpty, "fuzz setup: no profile in \(directory.path)")
    return profiles.flatMap { $0.items.map(\.descriptor) }
}()

private let matcher = AccessoryMatcher(descriptors: descriptors)
private let linearMatcher = LinearAccessoryMatcher(descriptors: descriptors)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecordedScanReader(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    let scan: RecordedScan
    do {
        scan = try RecordedScan.parse(data, path: "fuzz.json")
    } catch {
        precondition(!error.issues.isEmpty, "a scan was refused without naming a fault")
        precondition(!error.description.isEmpty)
        return 0
    }
    let indexed = matcher.matches(wifi: scan.wifi, bluetooth: scan.bluetooth)
    precondition(
        indexed == linearMatcher.matches(wifi: scan.wifi, bluetooth: scan.bluetooth),
        "the indexed matcher and the linear one disagree")
    do {
        _ = try JSONEncoder().encode(scan.wifi)
        _ = try JSONEncoder().encode(scan.bluetooth)
    } catch {
        preconditionFailure("a scan that was read cannot be written: \(error)")
    }
    for entry in scan.wifi { _ = entry.ssid?.escaped }
    return 0
}
