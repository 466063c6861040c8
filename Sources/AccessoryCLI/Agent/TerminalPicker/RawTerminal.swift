import AccessoryCore
import FoundationEssentials
import GLibRuntime
import Glibc
import Synchronization

/// The terminal while the picker is on it: raw mode (keys one by one, no echo, Ctrl-C a key),
/// the alternate screen, frames drawn in place. `close()` puts everything back, once, and is
/// what every way out calls: the picker ending, the command failing, or SIGINT/SIGTERM
/// cancelling the command through `Interruption`.
final class RawTerminal: Sendable {
    enum Input: Sendable {
        case bytes([UInt8])
        /// No byte came for a moment while a sequence was cut off.
        case pause
        case resize
    }

    private let input: Int32
    private let output: Int32
    private let saved: termios
    /// Whether the terminal is still ours; drawing after `close()` would land on the person's screen.
    private let isOpen = Locked(true)
    /// Written to stop the reading thread.
    private let wakeUp: (read: Int32, write: Int32)

    /// Takes the terminal on standard input and output, or `nil` when either is not one.
    static func open() -> RawTerminal? {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else { return nil }
        var saved = termios()
        guard tcgetattr(STDIN_FILENO, &saved) == 0 else { return nil }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL | INLCR | BRKINT | ISTRIP)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw)
        WindowChange.install()
        let terminal = RawTerminal(input: STDIN_FILENO, output: STDOUT_FILENO, saved: saved, wakeUp: (ends[0], ends[1]))
        // The alternate screen keeps the person's scrollback as it was; the cursor hides.
        terminal.write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J")
        return terminal
    }

    private init(input: Int32, output: Int32, saved: termios, wakeUp: (read: Int32, write: Int32)) {
        self.input = input
        self.output = output
        self.saved = saved
        self.wakeUp = wakeUp
    }

    /// Columns and rows; 80 by 24 when the terminal does not say.
    var size: (width: Int, height: Int) {
        var window = winsize()
        guard ioctl(output, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0, window.ws_row > 0 else {
            return (80, 24)
        }
        return (Int(window.ws_col), Int(window.ws_row))
    }

    /// Draws a frame from the top left, each line cleared first (a line that fills the width
    /// leaves the cursor in the last column, where clearing to the end would erase it).
    func draw(_ frame: PickerScreen.Frame) {
        var text = "\u{1B}[?25l"
        for (row, line) in frame.lines.enumerated() {
            text += "\u{1B}[\(row + 1);1H\u{1B}[2K" + line
        }
        text += "\u{1B}[\(frame.lines.count + 1);1H\u{1B}[J"
        if let cursor = frame.cursor {
            text += "\u{1B}[\(cursor.row + 1);\(cursor.column + 1)H\u{1B}[?25h"
        }
        isOpen.withLock { open in
            guard open else { return }
            write(text)
        }
    }

    /// Leaves the alternate screen, shows the cursor, restores the terminal's settings and
    /// stops the reading thread. Later calls do nothing.
    func close() {
        let wasOpen = isOpen.withLock { open in
            defer { open = false }
            return open
        }
        guard wasOpen else { return }
        write("\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l")
        var saved = self.saved
        tcsetattr(input, TCSAFLUSH, &saved)
        var byte: UInt8 = 0
        _ = Glibc.write(wakeUp.write, &byte, 1)
    }

    /// Bytes typed, pauses and window size changes, read on a thread of its own until `close()`.
    func inputs() -> AsyncStream<Input> {
        let (stream, continuation) = AsyncStream.makeStream(of: Input.self)
        let input = self.input, wakeUp = self.wakeUp
        GLibThread.detach(name: "accessoryctl.picker-keys") { [self] in
            // Holding the terminal keeps the wake-up pipe open until this thread has left.
            defer { withExtendedLifetime(self) { continuation.finish() } }
            var waiting = false
            var buffer = [UInt8](repeating: 0, count: 256)
            while true {
                var fds = [
                    pollfd(fd: input, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: wakeUp.read, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: WindowChange.reader, events: Int16(POLLIN), revents: 0),
                ]
                let ready = poll(&fds, nfds_t(fds.count), waiting ? 40 : -1)
                if ready < 0 {
                    if errno == EINTR { continue }
                    return
                }
                if ready == 0 {
                    waiting = false
                    continuation.yield(.pause)
                    continue
                }
                if fds[1].revents != 0 { return }
                if fds[2].revents != 0 {
                    _ = read(WindowChange.reader, &buffer, buffer.count)
                    continuation.yield(.resize)
                }
                if fds[0].revents & Int16(POLLIN) != 0 {
                    let count = read(input, &buffer, buffer.count)
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else { return }
                    let bytes = Array(buffer[0..<count])
                    // An escape sequence or a character may be cut at the end of a read.
                    waiting = bytes.last.map { $0 == 0x1B || $0 >= 0x80 } ?? false
                    continuation.yield(.bytes(bytes))
                } else if fds[0].revents != 0 {
                    return
                }
            }
        }
        return stream
    }

    deinit {
        Glibc.close(wakeUp.read)
        Glibc.close(wakeUp.write)
    }

    private func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(output, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}

/// SIGWINCH as a byte in a pipe, as `Interruption` takes SIGINT: the handler only writes.
private enum WindowChange {
    private static let ends: (read: Int32, write: Int32) = {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return (-1, -1) }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        return (ends[0], ends[1])
    }()
    private static let writer = Atomic<Int32>(-1)
    private static let installed = Locked(false)

    static var reader: Int32 { ends.read }

    static func install() {
        let first = installed.withLock { installed in
            defer { installed = true }
            return !installed
        }
        guard first else { return }
        writer.store(ends.write, ordering: .sequentiallyConsistent)
        var handling = sigaction()
        handling.__sigaction_handler.sa_handler = { _ in
            let savedErrno = errno
            defer { errno = savedErrno }
            var byte: UInt8 = 0
            _ = write(WindowChange.writer.load(ordering: .sequentiallyConsistent), &byte, 1)
        }
        sigemptyset(&handling.sa_mask)
        handling.sa_flags = SA_RESTART
        sigaction(SIGWINCH, &handling, nil)
    }
}
