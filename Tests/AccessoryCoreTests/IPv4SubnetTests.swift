import AccessoryCore
import Testing

@Suite struct IPv4SubnetTests {
    private func address(_ text: String) throws -> IPv4Address {
        try #require(IPv4Address(text))
    }

    private func subnet(_ text: String, _ prefixLength: Int) throws -> IPv4Subnet {
        try #require(IPv4Subnet(address: address(text), prefixLength: prefixLength))
    }

    @Test(arguments: ["192.168.4.1", "0.0.0.0", "255.255.255.255", "10.0.0.10"])
    func dottedQuadsAreRead(_ text: String) throws {
        #expect(try address(text).description == text)
    }

    /// Only the four decimal parts: what `inet_aton` would also take (a shortened form, octal,
    /// hexadecimal) and names are not addresses here.
    @Test(arguments: [
        "", "localhost", "192.168.4", "127.1", "192.168.4.1.5", "192.168.4.256", "192.168.04.1", "0x7f.0.0.1",
        "192.168.4.-1", "192.168.4. 1", "192..4.1", "१९२.168.4.1",
    ])
    func otherTextIsNotAnAddress(_ text: String) {
        #expect(IPv4Address(text) == nil)
    }

    @Test func aSubnetHoldsTheAddressesOfItsPrefix() throws {
        let network = try subnet("192.168.4.2", 24)
        #expect(network.description == "192.168.4.0/24")
        #expect(network.contains(try address("192.168.4.1")))
        #expect(network.contains(try address("192.168.4.255")))
        #expect(!network.contains(try address("192.168.5.1")))
        #expect(!network.contains(try address("127.0.0.1")))
    }

    @Test func prefixLengthsAtTheEnds() throws {
        let host = try subnet("10.1.2.3", 32)
        #expect(host.contains(try address("10.1.2.3")))
        #expect(!host.contains(try address("10.1.2.4")))
        #expect(try subnet("10.1.2.3", 0).contains(try address("8.8.8.8")))
        #expect(IPv4Subnet(address: try address("10.1.2.3"), prefixLength: 33) == nil)
        #expect(IPv4Subnet(address: try address("10.1.2.3"), prefixLength: -1) == nil)
    }
}
