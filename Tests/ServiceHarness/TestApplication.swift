import Foundation

/// A sandboxed application as Flatpak exports it to the desktop, for the pickers' tests.
public enum TestApplication {
    /// Writes `<id>.desktop` under `share/applications` and its icon, a 64-pixel PNG drawn with
    /// ImageMagick, under `share/icons/hicolor`, as Flatpak exports them.
    public static func install(_ id: String, name: String, in share: URL) throws {
        let applications = share.appendingPathComponent("applications")
        let icons = share.appendingPathComponent("icons/hicolor/64x64/apps")
        for directory in [applications, icons] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        let entry = """
            [Desktop Entry]
            Type=Application
            Name=\(name)
            Comment=Sets up Acme smart plugs
            Exec=/usr/bin/true
            Icon=\(id)
            """
        try Data((entry + "\n").utf8).write(to: applications.appendingPathComponent("\(id).desktop"))
        // A blue rounded square with a white plug: two prongs, a body and a cord.
        try run(
            "/usr/bin/convert",
            [
                "-size", "64x64", "xc:none", "-fill", "#3584e4", "-draw", "roundrectangle 2,2 61,61 14,14",
                "-fill", "white", "-draw", "rectangle 24,12 28,24", "-draw", "rectangle 36,12 40,24",
                "-draw", "roundrectangle 18,22 46,42 6,6", "-draw", "rectangle 30,42 34,54",
                icons.appendingPathComponent("\(id).png").path,
            ])
    }
}
