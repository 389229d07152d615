import COpenSSL
import Foundation
import OrchardCrypto

/// Object identifiers of Apple's certificate extensions.
package enum AppleOID {
    /// Marks the leaf that signs payment tokens.
    package static let leafMarker = "1.2.840.113635.100.6.29"
    /// Marks the Apple Application Integration intermediate CA.
    package static let intermediateMarker = "1.2.840.113635.100.6.2.14"
    /// Carries the merchant identifier hash in a Payment Processing certificate.
    package static let merchantIdentifier = "1.2.840.113635.100.6.32"

    package static let leaf = ASN1ObjectID(leafMarker)
    package static let intermediate = ASN1ObjectID(intermediateMarker)
    package static let merchant = ASN1ObjectID(merchantIdentifier)
}

/// A Payment Processing key (EC P-256 for EC_v1, RSA-2048 for RSA_v1) with the merchant identity it
/// decrypts for. Parsed once; safe to share between threads.
public final class MerchantKey: Sendable {
    /// The private key.
    public let privateKey: EVPKey
    /// The Payment Processing certificate, when the key was loaded with one.
    public let certificate: X509Certificate?
    /// base64(SHA-256(DER SubjectPublicKeyInfo)), as tokens carry it in `header.publicKeyHash`.
    public let publicKeyHash: String
    /// SHA-256 of the merchant identifier (the KDF's partyV), uppercase hex.
    public let merchantIdentifierHash: String

    package let publicKeyHashBytes: [UInt8]
    package let partyV: [UInt8]
    /// For EC keys on a named curve: the SubjectPublicKeyInfo bytes before the 65-byte uncompressed point.
    package let ecPublicKeyHeader: [UInt8]?
    /// For EC keys: reusable ECDH contexts.
    let ecdhPool: ECDHPool?

    /// A key and its Payment Processing certificate (PEM); the merchant identifier hash comes from the
    /// certificate's extension 1.2.840.113635.100.6.32, and the certificate must match the key.
    public convenience init(privateKeyPEM: SecureBytes, certificatePEM: String) throws {
        let key: EVPKey
        let certificate: X509Certificate
        do {
            key = try EVPKey(privateKeyPEM: privateKeyPEM)
            certificate = try X509Certificate(pem: certificatePEM)
        } catch {
            throw PaymentTokenError(.invalidMerchantKey, "\(error)")
        }
        try self.init(privateKey: key, certificate: certificate)
    }

    /// A key and its certificate, parsed.
    public init(privateKey: EVPKey, certificate: X509Certificate) throws(PaymentTokenError) {
        guard certificate.matches(privateKey: privateKey) else {
            throw PaymentTokenError(.invalidMerchantKey, "the certificate does not belong to the private key")
        }
        guard let hash = Self.merchantIdentifierHash(of: certificate) else {
            throw PaymentTokenError(
                .invalidMerchantKey, "the certificate has no merchant identifier extension (1.2.840.113635.100.6.32)")
        }
        try Self.checkKind(privateKey)
        self.privateKey = privateKey
        self.certificate = certificate
        self.partyV = hash
        self.merchantIdentifierHash = Hex.encode(hash).uppercased()
        self.publicKeyHashBytes = SHA256.hash(privateKey.publicKeyDER)
        self.publicKeyHash = Data(publicKeyHashBytes).base64EncodedString()
        self.ecPublicKeyHeader = Self.header(of: privateKey)
        self.ecdhPool = privateKey.kind == .ec ? ECDHPool(privateKey: privateKey) : nil
    }

    /// A key and the merchant identifier it was issued for (e.g. "merchant.com.example"), without a certificate.
    public convenience init(privateKeyPEM: SecureBytes, merchantIdentifier: String) throws {
        let key: EVPKey
        do {
            key = try EVPKey(privateKeyPEM: privateKeyPEM)
        } catch {
            throw PaymentTokenError(.invalidMerchantKey, "\(error)")
        }
        try self.init(privateKey: key, merchantIdentifier: merchantIdentifier)
    }

    /// A parsed key and the merchant identifier it was issued for.
    public init(privateKey: EVPKey, merchantIdentifier: String) throws(PaymentTokenError) {
        try Self.checkKind(privateKey)
        self.privateKey = privateKey
        self.certificate = nil
        self.partyV = SHA256.hash(Array(merchantIdentifier.utf8))
        self.merchantIdentifierHash = Hex.encode(partyV).uppercased()
        self.publicKeyHashBytes = SHA256.hash(privateKey.publicKeyDER)
        self.publicKeyHash = Data(publicKeyHashBytes).base64EncodedString()
        self.ecPublicKeyHeader = Self.header(of: privateKey)
        self.ecdhPool = privateKey.kind == .ec ? ECDHPool(privateKey: privateKey) : nil
    }

    /// The SubjectPublicKeyInfo bytes before the point, for a key on a named curve only: an ephemeral key
    /// starting with them is then on the named curve too, and takes the pooled ECDH path.
    private static func header(of key: EVPKey) -> [UInt8]? {
        guard key.kind == .ec, PaymentTokenDecryptor.hasNamedCurve(key) else { return nil }
        let spki = key.publicKeyDER
        guard spki.count > 65, spki[spki.count - 65] == 0x04 else { return nil }
        return Array(spki.prefix(spki.count - 65))
    }

    /// The token version this key decrypts.
    public var version: PaymentTokenVersion { privateKey.kind == .rsa ? .rsaV1 : .ecV1 }

    private static func checkKind(_ key: EVPKey) throws(PaymentTokenError) {
        switch key.kind {
        case .ec:
            guard key.curveName == "prime256v1" || key.curveName == "P-256" else {
                throw PaymentTokenError(.invalidMerchantKey, "EC merchant keys must be on P-256")
            }
        case .rsa:
            guard key.bits >= 2048 else {
                throw PaymentTokenError(.invalidMerchantKey, "RSA merchant keys must have 2048 bits or more")
            }
        case .other:
            throw PaymentTokenError(.invalidMerchantKey, "merchant keys are EC P-256 or RSA")
        }
    }

    /// The 32-byte merchant identifier hash in a certificate's extension 1.2.840.113635.100.6.32
    /// (a UTF8String of 64 hex digits; a bare string or OCTET STRING is accepted too).
    package static func merchantIdentifierHash(of certificate: X509Certificate) -> [UInt8]? {
        guard let value = certificate.extensionValue(AppleOID.merchant) else { return nil }
        var text: [UInt8] = value
        // Unwrap one ASN.1 string (UTF8String 0x0C, IA5String 0x16, PrintableString 0x13, OCTET STRING 0x04).
        if value.count >= 2, [0x0C, 0x16, 0x13, 0x04].contains(value[0]) {
            let decoded = value.withUnsafeBufferPointer { buffer -> [UInt8]? in
                var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
                var tag: Int32 = 0
                var xclass: Int32 = 0
                var length = 0
                let result = ASN1_get_object(&cursor, &length, &tag, &xclass, buffer.count)
                guard result & 0x80 == 0, result & 0x20 == 0, let cursor, length <= buffer.count else { return nil }
                return Array(UnsafeBufferPointer(start: cursor, count: length))
            }
            guard let decoded else { return nil }
            text = decoded
        }
        guard let bytes = Hex.decode(String(decoding: text, as: UTF8.self)), bytes.count == 32 else { return nil }
        return bytes
    }
}

extension X509Certificate {
    /// The merchant identifier hash (uppercase hex SHA-256 of the merchant identifier) that Apple puts in
    /// a Payment Processing certificate's extension 1.2.840.113635.100.6.32, or nil when absent.
    public var applePayMerchantIdentifierHash: String? {
        MerchantKey.merchantIdentifierHash(of: self).map { Hex.encode($0).uppercased() }
    }
}
