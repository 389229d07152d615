import ApplePayToken
import Foundation
import OrchardCrypto
import OrchardTestSupport

/// The shared conformance vectors: `$ORCHARD_VECTORS_DIR`, else `<package root>/../shared/vectors`.
enum Vectors {
    static let directory = TestPaths.vectors

    static var available: Bool { directory != nil }

    struct Vector: Sendable, CustomStringConvertible {
        var id: String
        var directory: URL
        var version: String
        var token: String
        var privateKey: String?
        var certificate: String?
        var merchantID: String?
        var verifyAt: Date
        var expected: String?
        var description: String { id }

        func url(_ relative: String) -> URL { directory.appendingPathComponent(relative) }
        func text(_ relative: String) throws -> String { try String(contentsOf: url(relative), encoding: .utf8) }
        func tokenData() throws -> Data { try Data(contentsOf: url(token)) }

        func merchantKey() throws -> MerchantKey? {
            guard let privateKey else { return nil }
            if let certificate {
                return try MerchantKey(
                    privateKeyPEM: try SecureBytes(contentsOf: url(privateKey)), certificatePEM: try text(certificate))
            }
            guard let merchantID else { return nil }
            return try MerchantKey(
                privateKeyPEM: try SecureBytes(contentsOf: url(privateKey)), merchantIdentifier: merchantID)
        }
    }

    static let all: [Vector] = {
        guard let directory,
            let data = try? Data(contentsOf: directory.appendingPathComponent("manifest.json")),
            let manifest = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let vectors = manifest["vectors"] as? [[String: Any]]
        else { return [] }
        return vectors.compactMap { entry in
            guard let id = entry["id"] as? String, let dir = entry["dir"] as? String,
                let token = entry["token"] as? String, let version = entry["version"] as? String,
                let at = entry["verify_at"] as? String, let date = try? Date(at, strategy: .iso8601)
            else { return nil }
            return Vector(
                id: id, directory: directory.appendingPathComponent(dir), version: version, token: token,
                privateKey: entry["private_key"] as? String, certificate: entry["certificate"] as? String,
                merchantID: entry["merchant_id"] as? String, verifyAt: date, expected: entry["expected"] as? String)
        }
    }()

    static func appleRoot() throws -> TrustAnchor {
        try TrustAnchor.appleRoot(contentsOf: directory!.appendingPathComponent("apple-root-ca-g3.pem").path)
    }
}
