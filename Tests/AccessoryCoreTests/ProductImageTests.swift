import Foundation
import Testing

@testable import AccessoryCore

/// A profile file in a directory of its own, with `images` written beside it.
private struct ProfileOnDisk {
    let directory: URL
    let url: URL

    init(image: String?, files: [String: Data] = [:]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("product-image-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("images"), withIntermediateDirectories: true)
        for (name, data) in files { try data.write(to: directory.appendingPathComponent(name)) }
        let imageMember = image.map { #""productImage": "\#($0)", "# } ?? ""
        let json = """
            {"schemaVersion": 1, "id": "org.example.plug", "vendor": "Example", "supports": ["wifi"],
             "hotspot": {"security": "open", "passphrase": {"source": "none"}}, "handoff": "joinHotspot",
             "items": [{"name": "Plug", \(imageMember)"descriptor": {"ssidPrefix": "plug-"}}]}
            """
        url = directory.appendingPathComponent("plug.json")
        try Data(json.utf8).write(to: url)
    }

    func load() throws(ProfileError) -> AccessoryProfile { try AccessoryProfile.load(contentsOf: url) }

    /// The faults loading reports, as `field: message`.
    func faults() -> [String] {
        do {
            _ = try load()
            return []
        } catch {
            return error.issues.map { "\($0.field): \($0.message)" }
        }
    }
}

// Computed, not stored: LeakSanitizer reports the heap storage of a global `Data` that Swift
// Testing copied into a test's arguments as leaked.
private var png: Data { Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + Data(repeating: 0, count: 32) }
private var svg: Data {
    Data(#"<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"/>"#.utf8)
}

@Suite("Product images of profile items")
struct ProductImageTests {
    @Test(
        "a PNG or an SVG next to the profile is accepted",
        arguments: [("images/plug.png", png), ("images/plug.svg", svg)])
    func accepted(name: String, data: Data) throws {
        let profile = try ProfileOnDisk(image: name, files: [name: data])
        #expect(profile.faults() == [])
        #expect(try profile.load().items[0].productImage == name)
    }

    @Test("an SVG without the XML declaration, after a comment and a BOM, is accepted")
    func svgWithoutDeclaration() throws {
        let text = "<!-- drawn for the project -->\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>"
        let data = Data([0xEF, 0xBB, 0xBF]) + Data(text.utf8)
        #expect(try ProfileOnDisk(image: "images/a.svg", files: ["images/a.svg": data]).faults() == [])
    }

    @Test("a missing image is named with its field and path")
    func missing() throws {
        let profile = try ProfileOnDisk(image: "images/none.png")
        let faults = profile.faults()
        #expect(faults.count == 1)
        #expect(faults.first?.hasPrefix("items[0].productImage: ") == true)
        #expect(faults.first?.contains(profile.directory.appendingPathComponent("images/none.png").path) == true)
    }

    @Test("an image that is neither PNG nor SVG is refused by its content, not its name")
    func wrongKind() throws {
        let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data(repeating: 0, count: 16)
        let profile = try ProfileOnDisk(image: "images/plug.png", files: ["images/plug.png": jpeg])
        #expect(profile.faults() == ["items[0].productImage: images/plug.png is neither a PNG nor an SVG image"])
    }

    @Test("an image over 1 MiB is refused")
    func huge() throws {
        let big = png + Data(repeating: 0, count: 1 << 20)
        let profile = try ProfileOnDisk(image: "images/big.png", files: ["images/big.png": big])
        #expect(profile.faults() == ["items[0].productImage: images/big.png is larger than 1 MiB; make it smaller"])
    }

    @Test(
        "a path outside the profile's directory is refused",
        arguments: ["/etc/passwd", "../plug.png", "images/../../x.png"])
    func outside(name: String) throws {
        let profile = try ProfileOnDisk(image: name)
        #expect(
            profile.faults() == [
                "items[0].productImage: '\(name)' must be a path inside the profile's directory, like images/plug.svg"
            ])
    }

    @Test("a directory is not an image")
    func directory() throws {
        let profile = try ProfileOnDisk(image: "images")
        #expect(profile.faults() == ["items[0].productImage: images is not a regular file"])
    }

    @Test("a profile parsed from data alone keeps the image unchecked, for want of a directory")
    func parsedFromData() throws {
        let profile = try ProfileOnDisk(image: "images/none.png")
        let data = try Data(contentsOf: profile.url)
        #expect(try AccessoryProfile.parse(data, path: "client").items[0].productImage == "images/none.png")
    }

    @Test(
        "every shipped profile's items have an image, and each is a checked file",
        arguments: AccessoryProfileTests.shippedProfiles())
    func shippedImages(name: String) throws {
        let directory = AccessoryProfileTests.profilesDirectory
        let profile = try AccessoryProfile.load(contentsOf: directory.appendingPathComponent(name))
        for item in profile.items {
            let image = try #require(item.productImage, "\(name): \(item.name) has no productImage")
            #expect(ProductImage.problem(image, in: AccessoryProfileTests.profilesDirectory) == nil)
        }
    }
}
