import CGLib

/// An application as the desktop names it, from its exported `.desktop` file, found as the
/// desktop finds it: GLib's `GDesktopAppInfo`, which searches `$XDG_DATA_HOME` and
/// `$XDG_DATA_DIRS`, then Flatpak's export directories, which a Flatpak system puts on
/// `XDG_DATA_DIRS` but a session may lack. No GLib type leaves this file.
public struct DesktopApplication: Sendable, Hashable {
    /// The application id (a sandboxed client's Flatpak id).
    public var id: String
    /// The name the desktop shows; the id itself when no desktop file names the application.
    public var name: String
    /// The icon, as `g_icon_to_string` writes a `GIcon` (`g_icon_new_for_string` reads it back):
    /// a themed icon's name or a file's path. `nil` when the desktop file names none.
    public var icon: String?
    /// The desktop file it was found in; `nil` when none was.
    public var desktopFile: String?

    public init(id: String, name: String, icon: String? = nil, desktopFile: String? = nil) {
        self.id = id
        self.name = name
        self.icon = icon
        self.desktopFile = desktopFile
    }

    /// Where Flatpak exports the `.desktop` files and icons of the applications it installs:
    /// the user's installation (`$XDG_DATA_HOME/flatpak`, `~/.local/share/flatpak`), then the
    /// system's (`/var/lib/flatpak`). Each is an `XDG_DATA_DIRS`-style directory
    /// (`applications/`, `icons/`).
    public static var flatpakExportDirectories: [String] {
        [string(g_get_user_data_dir()).map { "\($0)/flatpak/exports/share" }, "/var/lib/flatpak/exports/share"]
            .compactMap { $0 }
    }

    /// The application `id`: its name and icon from `<id>.desktop`, looked up by GLib in the
    /// environment's data directories first, then in `exportDirectories`. Without a desktop
    /// file the desktop would show (GLib skips one that is `Hidden` or whose program is not
    /// installed), or for an id that is not a valid application id (`g_application_id_is_valid`:
    /// no `/`, no empty element, so never a path of its own), the name is the id.
    public static func lookUp(_ id: String, exportDirectories: [String] = flatpakExportDirectories)
        -> DesktopApplication
    {
        let unnamed = DesktopApplication(id: id, name: id)
        guard g_application_id_is_valid(id) != 0 else { return unnamed }
        let desktopID = "\(id).desktop"
        var info = shown(g_desktop_app_info_new(desktopID))
        for directory in exportDirectories where info == nil && directory.hasPrefix("/") {
            info = shown(g_desktop_app_info_new_from_filename("\(directory)/applications/\(desktopID)"))
        }
        guard let info else { return unnamed }
        defer { g_object_unref(gpointer(info)) }
        // A GDesktopAppInfo is a GAppInfo: both import as opaque pointers.
        let given = string(g_app_info_get_display_name(info)) ?? string(g_app_info_get_name(info)) ?? ""
        let trimmed = given.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }
        let name = String(trimmed.reversed())
        var icon: String?
        if let gicon = g_app_info_get_icon(info), let text = g_icon_to_string(gicon) {
            icon = String(cString: text)
            g_free(text)
        }
        return DesktopApplication(
            id: id, name: name.isEmpty ? id : name, icon: icon,
            desktopFile: string(g_desktop_app_info_get_filename(info)))
    }

    /// `info`, unless its desktop file says the application is deleted (`Hidden`); GLib's own
    /// search skips those, its lookup by file name does not.
    private static func shown(_ info: OpaquePointer?) -> OpaquePointer? {
        guard let info, g_desktop_app_info_get_is_hidden(info) != 0 else { return info }
        g_object_unref(gpointer(info))
        return nil
    }
}
