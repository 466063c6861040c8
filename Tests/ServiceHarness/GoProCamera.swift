/// A GoPro-style camera on python-dbusmock's BlueZ, laid out as Open GoPro documents it: its
/// hotspot's SSID and passphrase in encrypted characteristics, and Set AP Control answered on
/// the response characteristic. Shared by the agent's and the graphical picker's tests.
public enum GoProCamera {
    public static let address = "D4:D9:19:AA:BB:CC"
    public static let service = "0000fea6-0000-1000-8000-00805f9b34fb"
    public static let command = "b5f90072-aa8d-11e3-9046-0002a5d5c51b"
    public static let response = "b5f90073-aa8d-11e3-9046-0002a5d5c51b"
    public static let ssid = "GP24501234"

    /// Adds the camera; it answers Set AP Control (on) with `answer` after `delayMs`. Returns
    /// its device path.
    public static func add(to bluez: BlueZMock, answer: [UInt8] = [0x02, 0x17, 0x00], delayMs: Int = 100) throws
        -> String
    {
        let wifiService = "b5f90001-aa8d-11e3-9046-0002a5d5c51b"
        return try bluez.addGATTDevice(
            address, name: "GoPro 1234",
            spec: .init(
                service: wifiService, advertised: [service],
                characteristics: [
                    .init("b5f90002-aa8d-11e3-9046-0002a5d5c51b", flags: ["encrypt-read"], value: Array(ssid.utf8)),
                    .init(
                        "b5f90003-aa8d-11e3-9046-0002a5d5c51b", flags: ["encrypt-read"],
                        value: Array("camera-pass-1234".utf8)),
                    .init(command, flags: ["encrypt-write"], service: service),
                    .init(response, flags: ["encrypt-notify"], service: service),
                ],
                answers: [
                    .init(write: [0x03, 0x17, 0x01, 0x01], characteristic: response, value: answer, delayMs: delayMs),
                    .init(
                        write: [0x03, 0x17, 0x01, 0x00], characteristic: response, value: [0x02, 0x17, 0x00],
                        delayMs: 100),
                ]))
    }
}
