/// Help text, generated from the command table.
enum Help {
    static func overview() -> String {
        var lines = [
            "\(AccessoryCtl.name) — discover, authorize and set up accessories over Wi-Fi and Bluetooth LE",
            "",
            "Usage: \(AccessoryCtl.name) COMMAND [OPTIONS] [ARGUMENTS]",
            "",
            "Commands:",
        ]
        lines += table(AccessoryCtl.commands.map { ["  " + $0.name, $0.summary] })
        lines += [
            "",
            "Options:",
            "  -h, --help  Show help for the tool or, after a command, for that command",
            "  --version   Show the version",
            "",
            "Exit status: 0 success, 1 failure, 64 bad usage, 77 not authorized.",
            "Run '\(AccessoryCtl.name) help COMMAND' for a command's options and examples.",
        ]
        return lines.joined(separator: "\n")
    }

    /// Help for a group of commands sharing leading words (`profile`), or `nil` if none does.
    static func group(_ words: [String]) -> String? {
        let members = AccessoryCtl.commands.filter { $0.path.count > words.count && $0.path.starts(with: words) }
        guard !members.isEmpty else { return nil }
        var lines = ["Usage: \(AccessoryCtl.name) \(words.joined(separator: " ")) COMMAND", "", "Commands:"]
        lines += table(members.map { ["  " + $0.name, $0.summary] })
        return lines.joined(separator: "\n")
    }

    static func command(_ command: Command) -> String {
        var lines = ["Usage: \(command.synopsis)", "", command.summary]
        if !command.discussion.isEmpty {
            lines += ["", command.discussion]
        }
        if let positional = command.positionals {
            lines += ["", "Arguments:"] + table([["  " + positional.name, positional.help]])
        }
        var rows: [[String]] = []
        for option in command.options {
            rows.append(["  --\(option.name)" + (option.valueName.map { " \($0)" } ?? ""), option.helpText])
        }
        rows.append(["  -h, --help", "Show this help"])
        lines += ["", "Options:"] + table(rows)
        if !command.examples.isEmpty {
            lines += ["", "Examples:"] + command.examples.map { "  " + $0 }
        }
        return lines.joined(separator: "\n")
    }
}
