import ApplePayToken
import COpenSSL
import Foundation
import OrchardCrypto

/// A test Apple PKI: a root (P-384, like Apple Root CA - G3), an intermediate carrying
/// 1.2.840.113635.100.6.2.14 (like Apple Application Integration CA - G3) and a signing leaf carrying
/// 1.2.840.113635.100.6.29. The intermediate also issues merchant Payment Processing certificates.
///
/// Tokens minted with it verify only against ``trustAnchor``, never against Apple's root.
public struct SandboxPKI: Sendable {
    /// The root CA's key (P-384).
    public let rootKey: EVPKey
    /// The self-signed root certificate.
    public let root: X509Certificate
    /// The intermediate CA's key (P-256).
    public let intermediateKey: EVPKey
    /// The intermediate certificate.
    public let intermediate: X509Certificate
    /// The token-signing leaf's key (P-256).
    public let leafKey: EVPKey
    /// The token-signing leaf certificate.
    public let leaf: X509Certificate

    /// Variations for rejection tests.
    public struct Options: Sendable {
        /// Whether the leaf carries 1.2.840.113635.100.6.29.
        public var leafMarker = true
        /// Whether the intermediate carries 1.2.840.113635.100.6.2.14.
        public var intermediateMarker = true
        /// The leaf's validity, when it should differ from the PKI's.
        public var leafValidity: ClosedRange<Date>?
        /// The leaf's keyUsage bits in OpenSSL's configuration syntax. Apple's leaf has `digitalSignature`;
        /// anything else (e.g. `"keyAgreement"`) makes a test-only leaf that may not sign.
        public var leafKeyUsage = "digitalSignature"
        /// The defaults: a PKI like Apple's.
        public init() {}
    }

    /// File names used by ``write(to:)`` and ``init(directory:)``.
    public enum FileName {
        /// The root certificate.
        public static let rootCertificate = "sandbox-root-ca.pem"
        /// The root key.
        public static let rootKey = "sandbox-root-ca.key"
        /// The intermediate certificate.
        public static let intermediateCertificate = "sandbox-intermediate-ca.pem"
        /// The intermediate key.
        public static let intermediateKey = "sandbox-intermediate-ca.key"
        /// The signing leaf certificate.
        public static let leafCertificate = "sandbox-signer.pem"
        /// The signing leaf key.
        public static let leafKey = "sandbox-signer.key"
    }

    /// A PKI from its parts.
    public init(
        rootKey: EVPKey, root: X509Certificate, intermediateKey: EVPKey, intermediate: X509Certificate, leafKey: EVPKey,
        leaf: X509Certificate
    ) {
        self.rootKey = rootKey
        self.root = root
        self.intermediateKey = intermediateKey
        self.intermediate = intermediate
        self.leafKey = leafKey
        self.leaf = leaf
    }

    /// A new PKI whose three certificates are valid from `notBefore` to `notAfter`.
    public static func generate(notBefore: Date, notAfter: Date) throws -> SandboxPKI {
        try generate(notBefore: notBefore, notAfter: notAfter, options: Options())
    }

    /// A new PKI with variations for tests.
    public static func generate(notBefore: Date, notAfter: Date, options: Options) throws -> SandboxPKI {
        let rootKey = try EVPKey.generateEC(curve: "P-384")
        let root = try CertificateIssuer.issue(
            subject: [("CN", "Orchard Sandbox Root CA"), ("OU", "Orchard Sandbox"), ("O", "Orchard"), ("C", "US")],
            publicKey: rootKey, issuer: nil, issuerKey: rootKey, notBefore: notBefore, notAfter: notAfter, isCA: true,
            keyUsage: "keyCertSign,cRLSign", digest: EVP_sha384())
        let intermediateKey = try EVPKey.generateEC(curve: "P-256")
        let intermediate = try CertificateIssuer.issue(
            subject: [
                ("CN", "Orchard Sandbox Application Integration CA"), ("OU", "Orchard Sandbox"), ("O", "Orchard"),
                ("C", "US"),
            ],
            publicKey: intermediateKey, issuer: root, issuerKey: rootKey, notBefore: notBefore, notAfter: notAfter,
            isCA: true, pathLength: 0, keyUsage: "keyCertSign,cRLSign",
            extensions: options.intermediateMarker
                ? [.init(oid: "1.2.840.113635.100.6.2.14", value: CertificateIssuer.asn1Null)] : [],
            digest: EVP_sha384())
        let leafKey = try EVPKey.generateEC(curve: "P-256")
        let leaf = try CertificateIssuer.issue(
            subject: [
                ("CN", "orchard-sandbox-smp-broker-sign"), ("OU", "Orchard Sandbox"), ("O", "Orchard"), ("C", "US"),
            ],
            publicKey: leafKey, issuer: intermediate, issuerKey: intermediateKey,
            notBefore: options.leafValidity?.lowerBound ?? notBefore,
            notAfter: options.leafValidity?.upperBound ?? notAfter,
            isCA: false, keyUsage: options.leafKeyUsage,
            extensions: options.leafMarker
                ? [.init(oid: "1.2.840.113635.100.6.29", value: CertificateIssuer.asn1Null)] : [])
        return SandboxPKI(
            rootKey: rootKey, root: root, intermediateKey: intermediateKey, intermediate: intermediate,
            leafKey: leafKey,
            leaf: leaf)
    }

    /// Reads a PKI written by ``write(to:)``.
    public init(directory: URL) throws {
        func read(_ name: String) throws -> String {
            try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
        func key(_ name: String) throws -> EVPKey {
            try EVPKey(privateKeyPEM: try SecureBytes(contentsOf: directory.appendingPathComponent(name)))
        }
        self.init(
            rootKey: try key(FileName.rootKey),
            root: try X509Certificate(pem: try read(FileName.rootCertificate)),
            intermediateKey: try key(FileName.intermediateKey),
            intermediate: try X509Certificate(pem: try read(FileName.intermediateCertificate)),
            leafKey: try key(FileName.leafKey),
            leaf: try X509Certificate(pem: try read(FileName.leafCertificate)))
    }

    /// Writes the certificates and (unencrypted, mode 0600) keys as PEM files into `directory`, creating it.
    public func write(to directory: URL) throws {
        let manager = FileManager.default
        try manager.createDirectory(at: directory, withIntermediateDirectories: true)
        let files: [(String, SecureBytes, Bool)] = [
            (FileName.rootCertificate, SecureBytes(root.pem.utf8), false),
            (FileName.rootKey, try rootKey.privateKeyPEM(), true),
            (FileName.intermediateCertificate, SecureBytes(intermediate.pem.utf8), false),
            (FileName.intermediateKey, try intermediateKey.privateKeyPEM(), true),
            (FileName.leafCertificate, SecureBytes(leaf.pem.utf8), false),
            (FileName.leafKey, try leafKey.privateKeyPEM(), true),
        ]
        for (name, bytes, secret) in files {
            let path = directory.appendingPathComponent(name).path
            let created = bytes.withBorrowedData { data in
                manager.createFile(
                    atPath: path, contents: data, attributes: [.posixPermissions: secret ? 0o600 : 0o644])
            }
            guard created else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
        }
    }

    /// The root certificate as PEM.
    public var rootCertificatePEM: String { root.pem }

    /// The root as a trust anchor for ``PaymentTokenDecryptor``.
    public var trustAnchor: TrustAnchor { TrustAnchor(certificate: root) }

    /// A Payment Processing certificate for a public key (PEM "PUBLIC KEY") or a CSR (PEM "CERTIFICATE
    /// REQUEST", whose signature must verify), carrying extension 1.2.840.113635.100.6.32 with the uppercase hex
    /// SHA-256 of `merchantIdentifier`, signed by the intermediate. Returns PEM.
    public func issueMerchantCertificate(
        publicKeyPEM: String, merchantIdentifier: String, notBefore: Date, notAfter: Date
    ) throws -> String {
        let key: EVPKey
        if publicKeyPEM.contains("CERTIFICATE REQUEST") {
            key = try CertificateSigningRequest.publicKey(csrPEM: publicKeyPEM).key
        } else {
            key = try EVPKey(publicKeyPEM: publicKeyPEM)
        }
        return try issueMerchantCertificate(
            publicKey: key, merchantIdentifier: merchantIdentifier, notBefore: notBefore, notAfter: notAfter
        ).pem
    }

    /// A Payment Processing certificate for `publicKey`; see ``issueMerchantCertificate(publicKeyPEM:merchantIdentifier:notBefore:notAfter:)``.
    public func issueMerchantCertificate(
        publicKey: EVPKey, merchantIdentifier: String, notBefore: Date, notAfter: Date,
        includeMerchantExtension: Bool = true
    ) throws -> X509Certificate {
        let hash = Hex.encode(OrchardCrypto.SHA256.hash(Array(merchantIdentifier.utf8))).uppercased()
        return try CertificateIssuer.issue(
            subject: [
                ("UID", merchantIdentifier), ("CN", "Apple Pay Payment Processing:\(merchantIdentifier)"),
                ("OU", "ORCHARDSBX"), ("O", "Orchard Sandbox Merchant"), ("C", "US"),
            ],
            publicKey: publicKey, issuer: intermediate, issuerKey: intermediateKey, notBefore: notBefore,
            notAfter: notAfter, isCA: false, keyUsage: publicKey.kind == .rsa ? "keyEncipherment" : "keyAgreement",
            extensions: includeMerchantExtension
                ? [.init(oid: "1.2.840.113635.100.6.32", value: try CertificateIssuer.utf8String(hash))] : [])
    }
}
