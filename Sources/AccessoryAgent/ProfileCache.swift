import AccessoryCore
import FoundationEssentials
import Glibc

/// The installed profiles read so far, by file path, with the version of the file each was
/// read from: a file read before and not changed since is not read again, nor are its product
/// images checked again.
struct ProfileCache {
    private var read: [String: (version: FileVersion, profile: AccessoryProfile)] = [:]

    /// Profile `id`, from `<id>.json` in the first of `directories` that has it, else from any
    /// other file there that holds it (a directory is listed only then).
    mutating func profile(_ id: String, in directories: [URL]) throws(CallFailure) -> AccessoryProfile {
        guard AccessoryProfile.isReverseDNS(id) else {
            throw .invalidArguments("profile", "'\(id)' is not a profile id (a reverse-DNS name like ge.wled.softap)")
        }
        let name = "\(id).json"
        for directory in directories {
            if let profile = try profile(id, in: directory.appendingPathComponent(name), named: true) { return profile }
            let others = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
                .filter { $0.hasSuffix(".json") && $0 != name }
                .sorted()
            for file in others {
                if let profile = try profile(id, in: directory.appendingPathComponent(file), named: false) {
                    return profile
                }
            }
        }
        throw CallFailure(AgentError.noSuchProfile(id))
    }

    /// The one installed profile whose `applications` name `application`: how
    /// `ASAccessorySession()` finds its profile from the application's identity. A profile id
    /// installed in several directories counts once, from the first.
    mutating func profile(naming application: String, in directories: [URL]) throws(CallFailure) -> AccessoryProfile {
        var found: [String: AccessoryProfile] = [:]
        for directory in directories {
            let files = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
                .filter { $0.hasSuffix(".json") }
                .sorted()
            for file in files {
                guard let profile = try? profile(nil, in: directory.appendingPathComponent(file), named: false),
                    found[profile.id] == nil, profile.admits(application: application)
                else { continue }
                found[profile.id] = profile
            }
        }
        switch found.count {
        case 0:
            throw CallFailure(
                name: AgentError.noSuchProfile("").dbusName,
                message: "no installed profile names the application \(application) in its applications")
        case 1:
            return found.values.first!
        default:
            throw .invalidArguments(
                "profile",
                "the installed profiles \(found.keys.sorted().joined(separator: ", ")) all name the application "
                    + "\(application): name the one to open")
        }
    }

    /// Forgets every profile read, so that unchanged files are read, and their product images
    /// checked, again.
    mutating func forgetAll() {
        read.removeAll()
    }

    /// Profile `id` (with `nil`, any) if the file at `url` holds it; `nil` if there is no such
    /// file, it holds another profile, or it is refused and is not `<id>.json` (whose refusal
    /// is the answer).
    private mutating func profile(_ id: String?, in url: URL, named: Bool) throws(CallFailure) -> AccessoryProfile? {
        // Taken before the read: a change during it makes the next look read the file again.
        guard let version = FileVersion(path: url.path) else {
            read[url.path] = nil
            return nil
        }
        if let cached = read[url.path], cached.version == version {
            return id == nil || cached.profile.id == id ? cached.profile : nil
        }
        let profile: AccessoryProfile
        do {
            profile = try AccessoryProfile.load(contentsOf: url)
        } catch {
            read[url.path] = nil
            Journal.error("profile \(url.path) is installed but refused: \(error)")
            if named { throw CallFailure(AgentError.invalidProfile(error)) }
            return nil
        }
        read[url.path] = (version, profile)
        return id == nil || profile.id == id ? profile : nil
    }
}

/// Which version of a file a path names: another file put in its place, or the file written
/// to, changes it. (The change time moves with every write, even one whose writer sets the
/// modification time back.)
struct FileVersion: Equatable, Sendable {
    private let device: UInt64, inode: UInt64, size: Int64
    private let changed: Duration, modified: Duration

    /// `nil` when there is nothing at `path`.
    init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        changed = .seconds(status.st_ctim.tv_sec) + .nanoseconds(status.st_ctim.tv_nsec)
        modified = .seconds(status.st_mtim.tv_sec) + .nanoseconds(status.st_mtim.tv_nsec)
    }
}
