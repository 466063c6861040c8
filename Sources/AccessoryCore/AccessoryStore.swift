import FoundationEssentials
import Glibc

/// Keeps the authorization records in one JSON file that is never half-written.
///
/// A save writes a temporary file beside the store (mode 0600), flushes it to disk, renames it
/// over the store and flushes the directory, so after a crash the file holds either the old
/// records or the new ones. A file that cannot be decoded is moved aside, never replaced.
/// One process writes a store; the agent is that process.
public struct AccessoryStore: Sendable {
    public static let schemaVersion = 1

    public let url: URL

    /// Runs between writing the temporary file and renaming it; tests throw here to stand
    /// for a crash at that point.
    var beforeRename: @Sendable () throws -> Void = {}

    public init(url: URL) {
        self.url = url
    }

    /// The stored records; none when the file does not exist yet.
    public func load() throws(AccessoryStoreError) -> [AccessoryRecord] {
        let path = url.path
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return [] }
        guard !isDirectory else { throw .unreadable(path: path, reason: "it is a directory") }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .unreadable(path: path, reason: Self.reason(error))
        }

        let document: JSONValue
        do {
            document = try JSONValue.parse(data)
        } catch {
            throw moveAside(reason: "\(error)")
        }
        guard case .object(let members) = document else { throw moveAside(reason: "it is not a JSON object") }
        guard case .number(let number)? = members["schemaVersion"], let version = Int(exactly: number) else {
            throw moveAside(reason: "it has no schemaVersion")
        }
        guard version <= Self.schemaVersion else {
            throw .unsupportedSchemaVersion(path: path, found: version, supported: Self.schemaVersion)
        }
        do {
            return try Self.decoder.decode(StoreFile.self, from: data).records
        } catch {
            throw moveAside(reason: Self.reason(error))
        }
    }

    /// Replaces the stored records with `records`, atomically and durably.
    public func save(_ records: [AccessoryRecord]) throws(AccessoryStoreError) {
        do {
            let data = try Self.encoder.encode(StoreFile(schemaVersion: Self.schemaVersion, records: records))
            try DurableFile.replace(url, with: data, beforeRename: beforeRename)
        } catch {
            throw .writeFailed(path: url.path, reason: Self.reason(error))
        }
    }

    private func moveAside(reason: String) -> AccessoryStoreError {
        let stamp = Int(Date().timeIntervalSince1970)
        let aside = url.path + ".corrupt-\(stamp)"
        do {
            try FileManager.default.moveItem(atPath: url.path, toPath: aside)
        } catch {
            return .corrupt(path: url.path, reason: reason, keptAt: nil)
        }
        return .corrupt(path: url.path, reason: reason, keptAt: aside)
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case let error as SystemCallError: error.description
        case let error as DecodingError: describe(error)
        default: SystemErrorText.reason(of: error)
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        let context: DecodingError.Context
        switch error {
        case .dataCorrupted(let c), .keyNotFound(_, let c), .typeMismatch(_, let c), .valueNotFound(_, let c):
            context = c
        @unknown default: return "\(error)"
        }
        let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return "\(path.isEmpty ? "" : "at \(path.dropFirst(path.hasPrefix(".") ? 1 : 0)): ")\(context.debugDescription)"
    }

    private struct StoreFile: Codable {
        var schemaVersion: Int
        var records: [AccessoryRecord]
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}

/// Why the accessory store could not be read or written.
public enum AccessoryStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    /// The file is not a valid store; it was moved to `keptAt` so nothing is lost.
    case corrupt(path: String, reason: String, keptAt: String?)
    /// Written by a newer version of the agent; left untouched.
    case unsupportedSchemaVersion(path: String, found: Int, supported: Int)
    case writeFailed(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason):
            "cannot read the accessory store \(path): \(reason)"
        case .corrupt(let path, let reason, let keptAt?):
            "the accessory store \(path) is damaged (\(reason)); it was moved to \(keptAt) for inspection and a new store will be started"
        case .corrupt(let path, let reason, nil):
            "the accessory store \(path) is damaged (\(reason)) and could not be moved aside; move it away by hand to start a new store"
        case .unsupportedSchemaVersion(let path, let found, let supported):
            "the accessory store \(path) has schema version \(found), newer than this version understands (\(supported)); upgrade the agent, the file was left untouched"
        case .writeFailed(let path, let reason):
            "cannot save the accessory store \(path): \(reason); the previous contents are unchanged"
        }
    }
}
