import AccessoryCore
import BusService
import FoundationEssentials
import GLibRuntime
import Glibc

/// What a client hands the agent through a file descriptor, read off the agent's thread with a
/// size and a time bound: a pipe its writer never closes costs one call its time limit, and
/// blocks nobody else. A regular file on a filesystem that never answers (FUSE) blocks its
/// read past any deadline; the call still ends at its time, and the stuck read keeps one of
/// `readers`' few threads, never more.
enum ClientInput {
    enum Failure: Error {
        case input(BoundedInputError)
        case timedOut
    }

    /// The reader threads, at most; the reads waiting for one, at most.
    static let maximumReaders = 4
    static let maximumWaiting = 64
    static let readers = BoundedReaders(
        name: "client-input", maximumThreads: maximumReaders, maximumWaiting: maximumWaiting)

    /// `name` says what is read, in errors (`the client's profile`).
    static func read(
        _ descriptor: Int32, limit: Int, within time: Duration, name: String = "the client's profile"
    ) async -> Result<Data, Failure> {
        let copy = dup(descriptor)
        guard copy >= 0 else {
            return .failure(.input(.unreadable(name: "the descriptor", reason: SystemErrorText.reason(errno))))
        }
        let deadline = ContinuousClock.now + time
        let outcome = await readers.run(within: time, skipped: { close(copy) }) {
            defer { close(copy) }
            return readBounded(copy, limit: limit, until: deadline, name: name)
        }
        switch outcome {
        case .read(let result): return result
        case .timedOut: return .failure(.timedOut)
        case .busy:
            return .failure(.input(.unreadable(name: name, reason: "too many reads of clients' descriptors wait")))
        }
    }

    private static func readBounded(
        _ descriptor: Int32, limit: Int, until deadline: ContinuousClock.Instant, name: String
    ) -> Result<Data, Failure> {
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return .failure(.timedOut) }
            var wait = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&wait, 1, (left + .milliseconds(1)).saturatingMilliseconds(as: Int32.self))
            if ready < 0 && errno == EINTR { continue }
            guard ready >= 0 else {
                return .failure(
                    .input(.unreadable(name: name, reason: SystemErrorText.reason(errno))))
            }
            if ready == 0 { continue }
            let got = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if got < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            guard got >= 0 else {
                return .failure(
                    .input(.unreadable(name: name, reason: SystemErrorText.reason(errno))))
            }
            if got == 0 { return .success(data) }
            data.append(contentsOf: chunk[..<got])
            if data.count > limit { return .failure(.input(.tooLarge(name: name, limit: limit))) }
        }
    }
}
