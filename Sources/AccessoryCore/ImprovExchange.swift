/// What an Improv device notifies while the client waits on it (its state, its error state,
/// its RPC result in pieces), and what that settles an RPC to. Everything is untrusted and
/// bounded: a value larger than GATT allows, or more notifications in one wait than
/// `notificationLimit`, fails the RPC with `ImprovError.malformedResponse`.
public struct ImprovExchange: Sendable {
    public enum Characteristic: Sendable { case state, error, result }

    /// GATT's largest attribute value (Bluetooth Core, Vol 3, Part F, 3.2.9).
    public static let valueBytes = 512
    /// Notifications one wait takes in: a real device sends a handful (its states, an error
    /// state, a result in a few packets).
    public static let notificationLimit = 256

    /// The RPC waited on; `nil` before the first.
    public private(set) var command: ImprovCommand?
    public private(set) var outcome: Result<ImprovRPCResult, ImprovError>?
    /// The device reported `provisioned`.
    public private(set) var provisioned = false
    /// The device reported a state other than `authorizationRequired`.
    public private(set) var authorized = false
    /// The device notified an error state, "no error" too.
    public private(set) var errorNotified = false
    private var states: [ImprovState] = []
    private var errors: [ImprovErrorState] = []
    private var results: [[UInt8]] = []
    private var received = 0
    private var assembler = ImprovResultAssembler()

    public init() {}

    /// Waits on `command`'s RPC from now: what came before is forgotten.
    public mutating func start(_ command: ImprovCommand) {
        self = ImprovExchange()
        self.command = command
    }

    /// Takes in one notified value.
    public mutating func receive(_ value: [UInt8], from characteristic: Characteristic) {
        guard outcome == nil else { return }
        received += 1
        guard received <= Self.notificationLimit else {
            outcome = .failure(
                .malformedResponse("the device sent more than \(Self.notificationLimit) notifications in one wait"))
            return
        }
        guard value.count <= Self.valueBytes else {
            outcome = .failure(
                .malformedResponse("a notified value of \(value.count) bytes is over GATT's \(Self.valueBytes)"))
            return
        }
        switch characteristic {
        case .state:
            guard let byte = value.first else { return }
            let state = ImprovState(rawValue: byte)
            states.append(state)
            if state == .provisioned { provisioned = true }
            if state != .authorizationRequired { authorized = true }
        case .error:
            guard let byte = value.first else { return }
            errors.append(ImprovErrorState(rawValue: byte))
            errorNotified = true
        case .result:
            results.append(value)
        }
    }

    /// Takes in what came since the last call; true once the RPC has a result or an error.
    /// Each new `provisioning` state is reported to `progress`.
    public mutating func settle(_ progress: ((ImprovProgress) -> Void)?) -> Bool {
        if outcome != nil { return true }
        for state in states where state == .provisioning { progress?(.provisioning) }
        states.removeAll()
        guard let command else { return false }
        if let error = errors.lazy.compactMap({ $0.error(for: command) }).first {
            outcome = .failure(error)
            return true
        }
        errors.removeAll()
        while !results.isEmpty {
            do throws(ImprovError) {
                if let result = try assembler.append(results.removeFirst()) {
                    outcome =
                        result.command == command
                        ? .success(result)
                        : .failure(.unexpectedResponse("a result for \(result.command) while waiting for \(command)"))
                    return true
                }
            } catch {
                outcome = .failure(error)
                return true
            }
        }
        return false
    }
}
