import AccessoryCore
import Foundation

// Fuzz target: profile files, read the way `accessoryctl profile validate` and `match` read them.
// A refused profile must name at least one field; an accepted one is matched against the
// shipped recorded scan, where the indexed matcher must agree with the linear reference.

private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

private let scan: RecordedScan = {
    let url = repository.appendingPathComponent("examples/scans/demo.json")
    do { return try RecordedScan.load(contentsOf: url) } catch { fatalError("fuzz setup: \(error)") }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProfileReader(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    let profile: AccessoryProfile
    do {
        profile = try AccessoryProfile.parse(data, path: "fuzz.json")
    } catch {
        precondition(!error.issues.isEmpty, "a profile was refused without naming a fault")
        precondition(!error.description.isEmpty)
        return 0
    }
    let descriptors = profile.items.map(\.descriptor)
    let indexed = AccessoryMatcher(descriptors: descriptors).matches(wifi: scan.wifi, bluetooth: scan.bluetooth)
    let linear = LinearAccessoryMatcher(descriptors: descriptors).matches(wifi: scan.wifi, bluetooth: scan.bluetooth)
    precondition(indexed == linear, "the indexed matcher and the linear one disagree")
    return 0
}
