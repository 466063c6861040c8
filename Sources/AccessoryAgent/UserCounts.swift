import AccessoryCore

/// How many of something each user, and each sandboxed application of a user, has the agent
/// hold at once (polkit checks outstanding, pickers being shown), with the limits checked as
/// one is added.
final class UserCounts {
    private var counts: [UInt32: Int] = [:]
    private var applications: [ApplicationShare.Holder: Int] = [:]
    private(set) var total = 0

    func count(of uid: UInt32) -> Int { counts[uid] ?? 0 }

    func count(of uid: UInt32, application: String?) -> Int {
        application.map { applications[ApplicationShare.Holder(uid: uid, application: $0)] ?? 0 } ?? count(of: uid)
    }

    /// Adds one of `uid`'s (and of its `application`'s), or refuses with `LimitsExceeded` naming
    /// `what` when `uid` holds `limit` already, the application its share of it
    /// (`ApplicationShare`), or all users together `totalLimit`.
    func add(
        _ uid: UInt32, application: String? = nil, limit: Int, totalLimit: Int = .max, what: String, advice: String
    ) throws(CallFailure) {
        guard count(of: uid) < limit else {
            throw CallFailure(AgentError.limitExceeded(what: what + " of this user", limit: limit, advice: advice))
        }
        if application != nil {
            try ApplicationShare.check(
                count(of: uid, application: application), of: limit, what: what, advice: advice)
        }
        guard total < totalLimit else {
            throw CallFailure(AgentError.limitExceeded(what: what + " of all users", limit: totalLimit, advice: advice))
        }
        add(uid, application: application)
    }

    /// Adds one of `uid`'s, whatever the count.
    func add(_ uid: UInt32, application: String? = nil) {
        counts[uid, default: 0] += 1
        if let application {
            applications[ApplicationShare.Holder(uid: uid, application: application), default: 0] += 1
        }
        total += 1
    }

    func remove(_ uid: UInt32, application: String? = nil) {
        guard let count = counts[uid] else { return }
        counts[uid] = count > 1 ? count - 1 : nil
        if let application {
            let holder = ApplicationShare.Holder(uid: uid, application: application)
            if let held = applications[holder] { applications[holder] = held > 1 ? held - 1 : nil }
        }
        total -= 1
    }
}

/// The share of a user's limit one sandboxed application of that user may hold: half of it, so
/// that one application cannot use up what the user's other applications and programs need.
/// A host process (the person's own program) is held to the user's limit alone.
enum ApplicationShare {
    struct Holder: Hashable {
        var uid: UInt32
        var application: String
    }

    static func of(_ limit: Int) -> Int { max(1, limit / 2) }

    /// Refuses with `LimitsExceeded` when an application holding `held` has its share of `limit`.
    static func check(_ held: Int, of limit: Int, what: String, advice: String) throws(CallFailure) {
        guard held < of(limit) else {
            throw CallFailure(
                AgentError.limitExceeded(
                    what: what + " of this application (half of its user's)", limit: of(limit), advice: advice))
        }
    }
}
