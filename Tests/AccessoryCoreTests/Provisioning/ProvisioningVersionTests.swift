import AccessoryCore
import Testing

/// `proto-ver` answers as ESP-IDF's wifi_prov_get_info_json writes them, and older bare strings.
@Suite struct ProvisioningVersionTests {
    @Test func readsTheJSONOfCurrentFirmware() throws {
        let text = #"{"prov":{"ver":"v1.1","sec_ver":2,"sec_patch_ver":1,"cap":["wifi_scan"]},"my_app":{"ver":"1.0"}}"#
        let version = try ProvisioningVersion(parsing: Array(text.utf8))
        #expect(
            version
                == ProvisioningVersion(
                    version: "v1.1", securityScheme: 2, securityPatchVersion: 1,
                    capabilities: ["wifi_scan"]))
        #expect(version.impliedScheme == 2)
    }

    @Test func infersTheSchemeFromCapabilitiesWithoutSecVer() throws {
        let noSec = try ProvisioningVersion(parsing: Array(#"{"prov":{"ver":"v1.0","cap":["no_sec"]}}"#.utf8))
        #expect(noSec.impliedScheme == 0)
        let text = #"{"prov":{"ver":"v1.0","cap":["no_pop","wifi_scan"]}}"#
        let noPop = try ProvisioningVersion(parsing: Array(text.utf8))
        #expect(noPop.impliedScheme == 1)
        #expect(noPop.acceptsNoProofOfPossession)
        #expect(noPop.securityPatchVersion == 0)
    }

    @Test func acceptsABareVersionString() throws {
        let version = try ProvisioningVersion(parsing: Array("V0.1".utf8))
        #expect(version.version == "V0.1")
        #expect(version.securityScheme == nil)
    }

    @Test(arguments: [
        (#"{"prov":{"sec_ver":1}}"#, "prov.ver is missing"),
        (#"{"prov":{"ver":"v1.1","sec_ver":"1"}}"#, "prov.sec_ver has the wrong type"),
        (#"{"prov":{"ver":"v1.1","sec_ver":-1}}"#, "prov.sec_ver is negative"),
        (#"{"prov":{"ver":"v1.1","cap":"wifi_scan"}}"#, "prov.cap has the wrong type"),
        (#"{"other":{}}"#, "prov is missing"),
        (#"{"prov":"#, "not valid JSON"),
        ("", "neither JSON nor"),
    ])
    func faultsAreNamed(text: String, expected: String) throws {
        let error = try #require(throws: ProvisioningError.self) {
            _ = try ProvisioningVersion(parsing: Array(text.utf8))
        }
        #expect(error.description.contains(expected), "\(error)")
    }
}
