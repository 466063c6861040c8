import AccessoryCore

// Fuzz target: the Improv Wi-Fi codec on what a device sends back. The bytes are one RPC
// result frame, then the same bytes fed to the reassembler in chunks whose sizes come from the
// input, as BLE notifications may split them; every result is read as device info, as a
// scan's networks and as service data. A frame the codec builds must parse back to its data.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImprovCodec(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    if let result = try? Improv.parseResult(bytes) { read(result) }

    var assembler = ImprovResultAssembler()
    var rest = bytes[...]
    while let size = rest.first {
        let chunk = Array(rest.dropFirst().prefix(Int(size % 24)))
        rest = rest.dropFirst(1 + chunk.count)
        do {
            if let result = try assembler.append(chunk) { read(result) }
        } catch {
            _ = (error.code, error.errorName, error.description)
        }
    }

    if let command = bytes.first {
        let data = Array(bytes.dropFirst().prefix(255))
        do {
            let frame = try Improv.frame(ImprovCommand(rawValue: command), data: data)
            precondition(Improv.packets(frame).flatMap { $0 } == frame, "packets do not rebuild the frame")
            precondition(frame.count == data.count + 3 && Array(frame[2..<frame.count - 1]) == data)
        } catch {
            preconditionFailure("a frame of \(data.count) data bytes was refused: \(error)")
        }
    }

    let advertisement = BLEAdvertisement(address: MACAddress(rawValue: 1), serviceData: [Improv.serviceDataUUID: bytes])
    if let improv = ImprovAdvertisement(advertisement) { _ = improv.state.description }
    return 0
}

private func read(_ result: ImprovRPCResult) {
    _ = result.command.description
    _ = result.texts
    if let info = try? ImprovDeviceInfo(result) { _ = info.name }
    do {
        for network in try ImprovNetwork.list(result) { _ = network.ssid.escaped }
    } catch {
        _ = error.description
    }
}
