extension Unicode.Scalar {
    /// Whether this character must be shown escaped rather than printed raw on a terminal.
    ///
    /// Controls (`Cc`) act on the terminal: C0 such as ESC starts escape sequences, and C1 such
    /// as U+009B is taken as ESC [ by some terminals. Format characters (`Cf`) disguise text:
    /// a right-to-left override (U+202E) makes `gnp.exe` read as `exe.png`, zero-width ones
    /// hide characters; a ZWJ inside an emoji sequence is escaped too, a small price. Line and
    /// paragraph separators (U+2028, U+2029) break lines on some terminals.
    public var isUnsafeOnTerminal: Bool {
        switch properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }
}

/// Text safe to print on a terminal or write to a log line: every character that could act on
/// it or disguise the text (`Unicode.Scalar.isUnsafeOnTerminal`: controls, C1 included, bidi
/// overrides and other format characters, line separators) becomes `\xNN` per UTF-8 byte.
public func terminalSafe(_ text: String) -> String {
    var result = ""
    for scalar in text.unicodeScalars {
        if scalar.isUnsafeOnTerminal {
            for byte in String(scalar).utf8 { result += "\\x" + Hex.string([byte]) }
        } else {
            result.unicodeScalars.append(scalar)
        }
    }
    return result
}
