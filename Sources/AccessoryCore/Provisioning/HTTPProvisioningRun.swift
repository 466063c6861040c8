import FoundationEssentials

/// A step of a vendor's HTTP setup, as it happens.
public enum HTTPProvisioningProgress: Sendable, Equatable {
    /// A request of the profile's, by its step's name.
    case request(String)
    /// The request that carries the network's passphrase.
    case sendingCredentials(String)
    /// Asking the device whether it is on the home network.
    case confirming
    /// The device left its hotspot (it restarts onto the home network) before confirming.
    case deviceLeft
}

/// What a vendor's HTTP setup ended with.
public struct HTTPProvisioningOutcome: Sendable, Equatable {
    /// The device's address on the home network, if it said.
    public var ipv4Address: String?
    /// What the steps captured (`mac`, …), as text.
    public var captured: [String: String]
    /// Whether the device itself said it is on the home network.
    public var confirmed: Bool
}

extension HTTPProvisioning {
    /// Sends the network with `send`, step by step, and confirms it as the profile says. The
    /// device's named failures are thrown as they come; a device that answers but is not on
    /// the network within the confirmation's time is `notOnHomeNetwork`, never success. With
    /// `limit`, the whole run (every request and the confirmation) ends within it, `timedOut`.
    public func run(
        _ credentials: WiFiCredentials, within limit: Duration? = nil, requestTimeout: Duration = .seconds(10),
        send: (RenderedHTTPRequest, Duration) async throws(HTTPSetupFailure) -> HTTPAnswer,
        pause: (Duration) async throws(ProvisioningError) -> Void = Self.sleep,
        now: () -> ContinuousClock.Instant = { .now },
        progress: (HTTPProvisioningProgress) -> Void
    ) async throws(ProvisioningError) -> HTTPProvisioningOutcome {
        var values: [String: [UInt8]] = [
            Placeholder.ssid.name: credentials.ssid,
            Placeholder.passphrase.name: Array(credentials.passphrase.reveal().utf8),
        ]
        var captured: [String: String] = [:]
        let end = limit.map { now() + $0 }
        let overrun = ProvisioningError.timedOut(
            "provisioning the device", seconds: Int(limit?.components.seconds ?? 0))
        /// `wanted`, cut to what is left of `limit`.
        func bounded(_ wanted: Duration) throws(ProvisioningError) -> Duration {
            guard let end else { return wanted }
            let left = end - now()
            guard left > .zero else { throw overrun }
            return min(wanted, left)
        }
        let sender = networkStep ?? steps.count - 1
        for (index, step) in steps.enumerated() {
            let request = try step.request.render(values)
            progress(index == sender ? .sendingCredentials(step.name) : .request(step.name))
            let answer: HTTPAnswer
            let timeout = try bounded(requestTimeout)
            do {
                answer = try await send(request, timeout)
            } catch {
                // A device that restarts once it has the network may be gone for what follows.
                if index > sender && reboots, error != .cancelled {
                    progress(.deviceLeft)
                    return HTTPProvisioningOutcome(captured: captured, confirmed: false)
                }
                if error == .timedOut, let end, now() >= end { throw overrun }
                throw error.provisioningError(step: step.name, timeout: timeout)
            }
            let json = answer.json
            if let failure = step.failures.first(where: { $0.when.allSatisfy { $0.holds(for: answer, json: json) } }) {
                throw failure.error(step: step.name, credentials: credentials, json: json)
            }
            let succeeded =
                step.success.isEmpty
                ? (200...299).contains(answer.status) : step.success.allSatisfy { $0.holds(for: answer, json: json) }
            guard succeeded else {
                throw .deviceRefused(
                    step: step.name, "it answered HTTP \(answer.status), which its profile does not take as success")
            }
            for (name, pointer) in step.captures.sorted(by: { $0.key < $1.key }) {
                guard let text = json?.at(pointer: pointer)?.scalarText else {
                    throw .malformedMessage("answer to \(step.name)", "it has no value at \(pointer)")
                }
                values[name] = Array(text.utf8)
                captured[name] = text
            }
        }
        guard let confirm else { return HTTPProvisioningOutcome(captured: captured, confirmed: false) }
        progress(.confirming)
        let request = try confirm.request.render(values)
        var deadline = now() + confirm.within
        let cut = end.map { $0 < deadline } ?? false
        if cut, let end { deadline = end }
        while now() < deadline {
            let answer: HTTPAnswer
            do {
                answer = try await send(request, min(requestTimeout, deadline - now()))
            } catch .cancelled {
                throw .cancelled
            } catch {
                if reboots {
                    progress(.deviceLeft)
                    return HTTPProvisioningOutcome(captured: captured, confirmed: false)
                }
                try await pause(.seconds(1))
                continue
            }
            let json = answer.json
            if let failure = confirm.failures.first(where: { $0.when.allSatisfy { $0.holds(for: answer, json: json) } })
            {
                throw failure.error(step: "confirm", credentials: credentials, json: json)
            }
            if confirm.connected.allSatisfy({ $0.holds(for: answer, json: json) }) {
                let address =
                    confirm.address.flatMap { json?.at(pointer: $0)?.scalarText }.flatMap(Self.ipv4Address)
                    ?? confirm.addressAfter.flatMap { Self.ipv4Address(after: $0, in: answer.body) }
                return HTTPProvisioningOutcome(ipv4Address: address, captured: captured, confirmed: true)
            }
            try await pause(.seconds(1))
        }
        if cut { throw overrun }
        throw .notOnHomeNetwork(ssid: credentials.ssid, seconds: Int(confirm.within.components.seconds))
    }

    public static func sleep(_ duration: Duration) async throws(ProvisioningError) {
        do { try await Task.sleep(for: duration) } catch { throw .cancelled }
    }

    /// The dotted-decimal IPv4 address right after the first `marker` in `body`, if one is there.
    static func ipv4Address(after marker: String, in body: [UInt8]) -> String? {
        guard let found = body.firstRange(of: Array(marker.utf8)) else { return nil }
        let address = body[found.upperBound...].prefix {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: ".")
        }
        return ipv4Address(String(decoding: address, as: UTF8.self))
    }

    /// `text` if it is a dotted-decimal IPv4 address (and not 0.0.0.0), else `nil`: an answer's
    /// address is shown and matched, so nothing else is taken.
    static func ipv4Address(_ text: String) -> String? {
        guard let address = IPv4Address(text), address.value != 0 else { return nil }
        return address.description
    }
}

/// Why a request of a vendor's setup got no answer (`HTTPSetupClient`'s failures, in the core).
public enum HTTPSetupFailure: Error, Sendable, Equatable {
    case unreachable(String)
    case timedOut
    case malformed(String)
    case cancelled

    func provisioningError(step: String, timeout: Duration) -> ProvisioningError {
        switch self {
        case .unreachable(let reason): .transport(endpoint: step, reason)
        case .timedOut: .timedOut("the device's answer to \(step)", seconds: Int(timeout.components.seconds))
        case .malformed(let reason): .transport(endpoint: step, reason)
        case .cancelled: .cancelled
        }
    }
}
