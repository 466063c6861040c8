import FoundationEssentials

/// What a device says on `proto-ver`: `{"prov":{"ver":…,"sec_ver":…,"sec_patch_ver":…,"cap":[…]}}`,
/// or a bare version string from older firmware.
public struct ProvisioningVersion: Hashable, Sendable {
    /// `ver`, e.g. `v1.1`.
    public var version: String
    /// `sec_ver`; `nil` when the device does not say (older firmware).
    public var securityScheme: Int?
    /// `sec_patch_ver`: 1 and above count the security 2 nonce up; 0 keeps it fixed.
    public var securityPatchVersion: Int
    public var capabilities: [String]

    public init(version: String, securityScheme: Int?, securityPatchVersion: Int = 0, capabilities: [String] = []) {
        self.version = version
        self.securityScheme = securityScheme
        self.securityPatchVersion = securityPatchVersion
        self.capabilities = capabilities
    }

    public init(parsing data: [UInt8]) throws(ProvisioningError) {
        let text = String(decoding: data, as: UTF8.self).trimmingWhitespace()
        guard text.hasPrefix("{") else {
            guard !text.isEmpty, text.count <= 64, text.allSatisfy({ $0.isASCII && !$0.isNewline }) else {
                throw .malformedVersion("it is neither JSON nor a short version string")
            }
            self.init(version: text, securityScheme: nil)
            return
        }
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: Data(data))
        } catch let DecodingError.keyNotFound(key, context) {
            throw .malformedVersion("\(Self.path(context.codingPath + [key])) is missing")
        } catch let DecodingError.typeMismatch(_, context) {
            throw .malformedVersion("\(Self.path(context.codingPath)) has the wrong type")
        } catch {
            throw .malformedVersion("it is not valid JSON")
        }
        let prov = document.prov
        for (key, value) in [("sec_ver", prov.sec_ver), ("sec_patch_ver", prov.sec_patch_ver)] where (value ?? 0) < 0 {
            throw .malformedVersion("prov.\(key) is negative")
        }
        self.init(
            version: prov.ver, securityScheme: prov.sec_ver, securityPatchVersion: prov.sec_patch_ver ?? 0,
            capabilities: prov.cap ?? [])
    }

    private struct Document: Decodable {
        struct Prov: Decodable {
            var ver: String
            var sec_ver: Int?
            var sec_patch_ver: Int?
            var cap: [String]?
        }
        var prov: Prov
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }

    /// The scheme the device runs: `sec_ver` if given, else esp_prov's reading of `cap`
    /// (`no_sec` means 0, anything else 1).
    public var impliedScheme: Int {
        securityScheme ?? (capabilities.contains("no_sec") ? 0 : 1)
    }

    /// Security 1 without a proof of possession (`no_pop`).
    public var acceptsNoProofOfPossession: Bool { capabilities.contains("no_pop") }
}
