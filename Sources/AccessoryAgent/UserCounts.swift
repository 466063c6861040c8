import AccessoryCore

/// How many of something each user has the agent hold at once (polkit checks outstanding,
/// calls in flight), with the limit checked as one is added.
struct UserCounts {
    private var counts: [UInt32: Int] = [:]
    private(set) var total = 0

    func count(of uid: UInt32) -> Int { counts[uid] ?? 0 }

    /// Adds one of `uid`'s, or refuses with `LimitsExceeded` naming `what` when `uid` holds
    /// `limit` already (or all users together `totalLimit`).
    mutating func add(
        _ uid: UInt32, limit: Int, totalLimit: Int = .max, what: String, advice: String
    ) throws(CallFailure) {
        guard count(of: uid) < limit else {
            throw CallFailure(AgentError.limitExceeded(what: what + " of this user", limit: limit, advice: advice))
        }
        guard total < totalLimit else {
            throw CallFailure(AgentError.limitExceeded(what: what + " of all users", limit: totalLimit, advice: advice))
        }
        add(uid)
    }

    /// Adds one of `uid`'s, whatever the count.
    mutating func add(_ uid: UInt32) {
        counts[uid, default: 0] += 1
        total += 1
    }

    mutating func remove(_ uid: UInt32) {
        guard let count = counts[uid] else { return }
        counts[uid] = count > 1 ? count - 1 : nil
        total -= 1
    }
}
