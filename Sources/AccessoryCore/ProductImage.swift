import FoundationEssentials
import Glibc

/// The product image a profile item names (`productImage`): a PNG or SVG file inside the
/// profile's own directory, small enough for a picker row.
public enum ProductImage {
    /// The largest image accepted. A picker row shows it at 48 pixels; a maker's photograph
    /// scaled for that is a few KiB, so 1 MiB leaves room while refusing a print-size original.
    public static let sizeLimit = 1 << 20

    /// What the file is, by its first bytes.
    public enum Kind: String, Sendable {
        case png, svg
    }

    /// The file `path` names in `directory`; `nil` when the path is absolute or climbs out of
    /// the directory with `..`.
    public static func resolve(_ path: String, in directory: URL) -> URL? {
        guard !path.isEmpty, !path.hasPrefix("/"),
            !path.split(separator: "/").contains("..")
        else { return nil }
        return directory.appendingPathComponent(path)
    }

    /// PNG by its eight-byte signature; SVG when the first element of the text, after a byte
    /// order mark, the XML declaration, comments and a doctype, is `<svg`.
    public static func kind(of head: Data) -> Kind? {
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        var text = Substring(String(decoding: head, as: UTF8.self))
        if text.hasPrefix("\u{FEFF}") { text = text.dropFirst() }
        while true {
            text = text.drop { $0.isWhitespace }
            let skip: (opening: String, closing: String)? =
                text.hasPrefix("<?")
                ? ("<?", "?>")
                : text.hasPrefix("<!--")
                    ? ("<!--", "-->")
                    : text.hasPrefix("<!") ? ("<!", ">") : nil
            guard let skip else { break }
            guard let end = text.dropFirst(skip.opening.count).firstRange(of: skip.closing) else { return nil }
            text = text[end.upperBound...]
        }
        guard text.hasPrefix("<svg"), let next = text.dropFirst(4).first,
            next.isWhitespace || next == ">" || next == "/"
        else { return nil }
        return .svg
    }

    /// Why the image `path` of a profile in `directory` cannot be shown, or `nil` when it can.
    public static func problem(_ path: String, in directory: URL) -> String? {
        guard let url = resolve(path, in: directory) else {
            return "'\(path)' must be a path inside the profile's directory, like images/plug.svg"
        }
        let realDirectory = directory.resolvingSymlinksInPath().standardizedFileURL.path
        let realFile = url.resolvingSymlinksInPath().standardizedFileURL.path
        guard realFile.hasPrefix(realDirectory + "/") else {
            return "'\(path)' must be a path inside the profile's directory, like images/plug.svg"
        }
        var status = stat()
        guard stat(url.path, &status) == 0 else {
            return "\(path) does not exist (looked for \(url.path))"
        }
        guard status.st_mode & S_IFMT == S_IFREG else { return "\(path) is not a regular file" }
        guard status.st_size <= sizeLimit else { return "\(path) is larger than 1 MiB; make it smaller" }
        let head: Data
        do {
            head = try BoundedInput.head(path: url.path, count: 4096)
        } catch {
            return "\(path) \(error.reason)"
        }
        return kind(of: head) == nil ? "\(path) is neither a PNG nor an SVG image" : nil
    }
}
