/// Text that came from an application or an accessory, made fit to show a person in a
/// consent dialog, a picker or a log line: one line, no control, format or bidirectional
/// characters (which could reorder or hide what surrounds them), no double quotes (which could
/// close the quotes the text is shown in), and bounded.
public enum DisplayText {
    /// The most characters shown of one name.
    public static let maximumLength = 64

    /// `text` without what could mislead a reader, whitespace runs as one space, cut to
    /// `maximumLength` characters with "…"; "?" when nothing is left.
    public static func sanitized(_ text: String, maximumLength: Int = Self.maximumLength) -> String {
        var scalars = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            if isHidden(scalar) { continue }
            if scalar.properties.isWhitespace {
                pendingSpace = !scalars.isEmpty
                continue
            }
            if pendingSpace { scalars.append(" ") }
            pendingSpace = false
            scalars.append(quoteReplacements[scalar] ?? scalar)
        }
        let cleaned = String(scalars)
        if cleaned.isEmpty { return "?" }
        guard cleaned.count > maximumLength else { return cleaned }
        return String(cleaned.prefix(maximumLength - 1)) + "…"
    }

    /// Whether `text` holds a character `sanitized` would drop: what a name given to the agent
    /// is refused for.
    public static func hasHiddenCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: isHidden)
    }

    /// Controls, format characters (bidi embeddings, overrides and isolates, zero-width
    /// joiners, the soft hyphen), line and paragraph separators, private-use and unassigned
    /// code points.
    private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned, .surrogate:
            true
        default:
            false
        }
    }

    private static let quoteReplacements: [Unicode.Scalar: Unicode.Scalar] = [
        "\"": "'", "\u{201C}": "'", "\u{201D}": "'", "\u{201E}": "'", "\u{201F}": "'", "\u{00AB}": "'",
        "\u{00BB}": "'", "\u{2033}": "'", "\u{301D}": "'", "\u{301E}": "'", "\u{FF02}": "'",
    ]
}
