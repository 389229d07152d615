import ApplePayToken
import Foundation
import OrchardCrypto

/// Helpers that the tests of several modules share (not part of any product): package paths, a seeded generator,
/// the shared conformance vectors (the tests' and the token fuzz campaign's).
public enum TestPaths {
    /// The package root, found from this file's path (`<root>/Sources/OrchardTestSupport/…`).
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// `<checkout>/../shared/vectors`, where the conformance vectors sit next to a checkout (may be absent). For a
    /// git worktree of the checkout, beside the main checkout when there are none beside the worktree.
    public static var sharedVectors: URL {
        let beside = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/vectors")
        guard !FileManager.default.fileExists(atPath: beside.path), let main = mainCheckout else { return beside }
        return main.deletingLastPathComponent().appendingPathComponent("shared/vectors")
    }

    /// The conformance vectors in use: `$ORCHARD_VECTORS_DIR`, else ``sharedVectors``; nil when that directory has no
    /// `manifest.json` (the tests that read them then skip with a message).
    public static let vectors: URL? = {
        let path = ProcessInfo.processInfo.environment["ORCHARD_VECTORS_DIR"] ?? ""
        let url = path.isEmpty ? sharedVectors : URL(fileURLWithPath: path)
        return FileManager.default.fileExists(atPath: url.appendingPathComponent("manifest.json").path) ? url : nil
    }()

    /// The main checkout when the package root is a git worktree: its `.git` file names the worktree's git
    /// directory, whose `commondir` is the main checkout's `.git`.
    static var mainCheckout: URL? {
        let dotGit = packageRoot.appendingPathComponent(".git")
        guard let link = try? String(contentsOf: dotGit, encoding: .utf8), link.hasPrefix("gitdir: ") else {
            return nil
        }
        let gitDirectory = URL(
            fileURLWithPath: String(link.dropFirst(8)).trimmingCharacters(in: .whitespacesAndNewlines),
            relativeTo: packageRoot)
        guard
            let common = try? String(
                contentsOf: gitDirectory.appendingPathComponent("commondir"), encoding: .utf8)
        else { return nil }
        let commonDirectory = URL(
            fileURLWithPath: common.trimmingCharacters(in: .whitespacesAndNewlines), relativeTo: gitDirectory)
        return commonDirectory.standardizedFileURL.deletingLastPathComponent()
    }
}

/// One real Apple Pay token of the shared conformance vectors (`manifest.json`'s `vectors`): its files, the time
/// it was valid at and, when known, its merchant key and expected plaintext.
public struct ConformanceVector: Sendable, CustomStringConvertible {
    public var id: String
    /// The vector's own folder.
    public var directory: URL
    /// `EC_v1` or `RSA_v1`.
    public var version: String
    /// The token's file, relative to ``directory``.
    public var token: String
    public var privateKey: String?
    public var certificate: String?
    public var merchantID: String?
    /// When the token verified (its signing time lies in the window then).
    public var verifyAt: Date
    /// The expected payment data's file, when the key is known.
    public var expected: String?
    public var description: String { id }

    /// `relative` in the vector's folder.
    public func url(_ relative: String) -> URL { directory.appendingPathComponent(relative) }
    /// The text of `relative` in the vector's folder.
    public func text(_ relative: String) throws -> String { try String(contentsOf: url(relative), encoding: .utf8) }
    /// The token's JSON.
    public func tokenData() throws -> Data { try Data(contentsOf: url(token)) }

    /// The merchant key: the private key with its certificate, else with its merchant identifier; nil without
    /// a private key (a signature-only vector).
    public func merchantKey() throws -> MerchantKey? {
        guard let privateKey else { return nil }
        let pem = try SecureBytes(contentsOf: url(privateKey))
        if let certificate { return try MerchantKey(privateKeyPEM: pem, certificatePEM: try text(certificate)) }
        guard let merchantID else { return nil }
        return try MerchantKey(privateKeyPEM: pem, merchantIdentifier: merchantID)
    }

    /// Apple's root certificate beside the manifest in `directory`.
    public static func appleRoot(in directory: URL) throws -> TrustAnchor {
        try TrustAnchor.appleRoot(contentsOf: directory.appendingPathComponent("apple-root-ca-g3.pem").path)
    }

    /// The vectors `directory/manifest.json` lists, in its order (entries missing a field are left out); none
    /// when there is no readable manifest.
    public static func all(in directory: URL) -> [ConformanceVector] {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("manifest.json")),
            let manifest = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let vectors = manifest["vectors"] as? [[String: Any]]
        else { return [] }
        return vectors.compactMap { entry in
            guard let id = entry["id"] as? String, let dir = entry["dir"] as? String,
                let token = entry["token"] as? String, let version = entry["version"] as? String,
                let at = entry["verify_at"] as? String, let date = try? Date(at, strategy: .iso8601)
            else { return nil }
            return ConformanceVector(
                id: id, directory: directory.appendingPathComponent(dir), version: version, token: token,
                privateKey: entry["private_key"] as? String, certificate: entry["certificate"] as? String,
                merchantID: entry["merchant_id"] as? String, verifyAt: date, expected: entry["expected"] as? String)
        }
    }
}

/// A small deterministic generator (SplitMix64), so every run of a seeded test draws the same values.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    /// The generator's state; the seed before the first draw.
    public var state: UInt64

    /// A generator starting from `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The PostgreSQL server the tests create their databases on: `ORCHARD_TEST_POSTGRES_URL`, nil when unset or empty
/// (the PostgreSQL cases then skip with a message; CI sets it).
public enum TestPostgres {
    public static var serverURL: String? {
        let value = ProcessInfo.processInfo.environment["ORCHARD_TEST_POSTGRES_URL"] ?? ""
        return value.isEmpty ? nil : value
    }
}
