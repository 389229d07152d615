import COpenSSL
import Foundation
import OrchardCrypto

/// The root certificate a token's chain must lead to: Apple Root CA - G3 in production, the sandbox
/// root in tests and sandbox mode.
public struct TrustAnchor: Sendable {
    /// The SHA-256 fingerprint of Apple Root CA - G3 (uppercase hex), pinned for production.
    public static let appleRootCAG3SHA256 = "63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179"

    /// The file name Orchard looks for in its data directory.
    public static let appleRootFileName = "apple-root-ca-g3.pem"

    /// The root certificate.
    public let certificate: X509Certificate
    /// Its SHA-256 fingerprint, uppercase hex without separators.
    public let sha256Fingerprint: String

    /// A trust anchor from a PEM certificate.
    public init(pem: String) throws(PaymentTokenError) {
        do {
            self.init(certificate: try X509Certificate(pem: pem))
        } catch {
            throw PaymentTokenError(.certificateUntrusted, "the trust anchor is not a PEM certificate")
        }
    }

    /// A trust anchor from a DER certificate.
    public init(der: [UInt8]) throws(PaymentTokenError) {
        do {
            self.init(certificate: try X509Certificate(der: der))
        } catch {
            throw PaymentTokenError(.certificateUntrusted, "the trust anchor is not a DER certificate")
        }
    }

    /// A trust anchor from a parsed certificate.
    public init(certificate: X509Certificate) {
        self.certificate = certificate
        self.sha256Fingerprint = certificate.sha256Fingerprint
    }

    /// Whether this anchor is Apple Root CA - G3.
    public var isAppleRoot: Bool { sha256Fingerprint == Self.appleRootCAG3SHA256 }

    /// Apple Root CA - G3 read from `path` (PEM or DER); refuses a file whose SHA-256 fingerprint is not
    /// ``appleRootCAG3SHA256``.
    public static func appleRoot(contentsOf path: String) throws(PaymentTokenError) -> TrustAnchor {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PaymentTokenError(.certificateUntrusted, "cannot read the Apple root certificate at \(path)")
        }
        let anchor: TrustAnchor
        do {
            anchor = TrustAnchor(certificate: try X509Certificate.load([UInt8](data)))
        } catch {
            throw PaymentTokenError(.certificateUntrusted, "\(path) is not a certificate")
        }
        guard anchor.isAppleRoot else {
            throw PaymentTokenError(
                .certificateUntrusted,
                "\(path) has SHA-256 fingerprint \(anchor.sha256Fingerprint), not Apple Root CA - G3's \(appleRootCAG3SHA256)"
            )
        }
        return anchor
    }

    /// Where Orchard expects Apple's root certificate: `$ORCHARD_APPLE_ROOT` when set, else
    /// `$ORCHARD_DATA_DIR/apple-root-ca-g3.pem`, else `~/.local/share/orchard/apple-root-ca-g3.pem`.
    public static func defaultAppleRootPath(environment: [String: String]) -> String {
        if let path = environment["ORCHARD_APPLE_ROOT"], !path.isEmpty { return path }
        return (defaultDataDirectory(environment: environment) as NSString).appendingPathComponent(appleRootFileName)
    }

    /// Orchard's data directory: `$ORCHARD_DATA_DIR` when set, else `~/.local/share/orchard`.
    public static func defaultDataDirectory(environment: [String: String]) -> String {
        if let directory = environment["ORCHARD_DATA_DIR"], !directory.isEmpty { return directory }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return (home as NSString).appendingPathComponent(".local/share/orchard")
    }
}
