import CGLib
import Foundation
import GLibRuntime
import Testing

/// A directory laid out as Flatpak's export directories are (`share/applications`), removed
/// when released.
private final class ExportDirectory {
    let root: URL
    var share: String { root.appendingPathComponent("share").path }

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("desktop-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("share/applications"), withIntermediateDirectories: true)
    }

    /// Writes `share/applications/<id>.desktop`, or `relativePath` under the root.
    @discardableResult
    func write(_ id: String, _ fields: [String], at relativePath: String? = nil) throws -> String {
        let file = root.appendingPathComponent(relativePath ?? "share/applications/\(id).desktop")
        let text = (["[Desktop Entry]", "Type=Application", "Exec=/usr/bin/true"] + fields).joined(separator: "\n")
        try Data((text + "\n").utf8).write(to: file)
        return file.path
    }

    deinit { try? FileManager.default.removeItem(at: root) }
}

@Suite struct DesktopApplicationTests {
    @Test func theNameAndIconComeFromTheDesktopFileInAFlatpakExportDirectory() throws {
        let exports = try ExportDirectory()
        let file = try exports.write("org.example.AcmePlug", ["Name=Acme Plug", "Icon=org.example.AcmePlug"])
        let found = DesktopApplication.lookUp("org.example.AcmePlug", exportDirectories: [exports.share])
        #expect(found.name == "Acme Plug")
        #expect(found.icon == "org.example.AcmePlug")
        #expect(found.desktopFile == file)
    }

    @Test func anIconGivenAsAFileIsItsPath() throws {
        let exports = try ExportDirectory()
        let icon = exports.root.appendingPathComponent("acme.png").path
        try exports.write("org.example.AcmeFile", ["Name=Acme File", "Icon=\(icon)"])
        let found = DesktopApplication.lookUp("org.example.AcmeFile", exportDirectories: [exports.share])
        #expect(found.icon == icon)
    }

    @Test func withoutADesktopFileTheIdIsTheName() throws {
        let exports = try ExportDirectory()
        let found = DesktopApplication.lookUp("org.example.NotInstalled", exportDirectories: [exports.share])
        #expect(found == DesktopApplication(id: "org.example.NotInstalled", name: "org.example.NotInstalled"))
    }

    /// Entries the desktop would not show either: deleted (`Hidden`), nameless, or whose
    /// program is not installed (GLib checks `TryExec` and `Exec`).
    @Test func aHiddenNamelessOrUninstalledEntryNamesNothing() throws {
        let exports = try ExportDirectory()
        try exports.write("org.example.Hidden", ["Name=Hidden", "Hidden=true"])
        try exports.write("org.example.Blank", ["Name=  "])
        let missing = exports.root.appendingPathComponent("not-installed").path
        try exports.write("org.example.Gone", ["Name=Gone", "TryExec=\(missing)"])
        #expect(
            DesktopApplication.lookUp("org.example.Gone", exportDirectories: [exports.share]).name
                == "org.example.Gone")
        #expect(
            DesktopApplication.lookUp("org.example.Hidden", exportDirectories: [exports.share]).name
                == "org.example.Hidden")
        #expect(
            DesktopApplication.lookUp("org.example.Blank", exportDirectories: [exports.share]).name
                == "org.example.Blank")
    }

    @Test func theFirstExportDirectoryHoldingItWins() throws {
        let user = try ExportDirectory()
        let system = try ExportDirectory()
        try user.write("org.example.Both", ["Name=The user's"])
        try system.write("org.example.Both", ["Name=The system's"])
        try system.write("org.example.SystemOnly", ["Name=Only the system's"])
        let directories = [user.share, system.share]
        #expect(DesktopApplication.lookUp("org.example.Both", exportDirectories: directories).name == "The user's")
        #expect(
            DesktopApplication.lookUp("org.example.SystemOnly", exportDirectories: directories).name
                == "Only the system's")
    }

    /// An id is never made a path of its own: one that is not a valid application id is shown
    /// as it is, even where a file it would name as a path exists (`../../evil` names
    /// `share/applications/../../evil.desktop`, a file there).
    @Test(arguments: ["../../evil", "org.example/../../../evil", "org..example", ".org.example", "plain", ""])
    func anInvalidIdIsNotLookedUp(id: String) throws {
        let exports = try ExportDirectory()
        try exports.write("evil", ["Name=Evil"], at: "evil.desktop")
        let found = DesktopApplication.lookUp(id, exportDirectories: [exports.share])
        #expect(found.name == id)
        #expect(found.desktopFile == nil)
    }

    @Test func flatpaksExportDirectoriesAreTheUsersThenTheSystems() {
        let userData = String(cString: g_get_user_data_dir())
        #expect(
            DesktopApplication.flatpakExportDirectories == [
                "\(userData)/flatpak/exports/share", "/var/lib/flatpak/exports/share",
            ])
    }
}
