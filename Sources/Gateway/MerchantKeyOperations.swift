import Foundation
import OrchardCrypto

/// A generated merchant key's certificate signing request (`POST /v1/merchant-keys/csr`).
public struct MerchantKeyCSR: Sendable, Hashable, Codable {
    /// `mk_…`
    public var id: String
    /// `ec` or `rsa`.
    public var type: String
    /// `processing` or `identity`.
    public var purpose: String
    /// PKCS #10 in PEM.
    public var csrPEM: String
    /// Base64 SHA-256 of the public key's SubjectPublicKeyInfo DER.
    public var publicKeyHash: String
}

/// A merchant key with its certificate.
public struct MerchantKeyStatus: Sendable, Hashable, Codable {
    public var id: String
    public var type: String
    public var purpose: String
    public var publicKeyHash: String
    /// Lowercase hex SHA-256 of the merchant identifier (certificate extension 1.2.840.113635.100.6.32).
    public var merchantIdentifierHash: String?
    public var notBefore: Date
    public var notAfter: Date
    /// Whether the certificate is valid now.
    public var active: Bool
}

/// A generated key waiting for (or holding) its certificate, kept sealed in the settings.
private struct PendingMerchantKey: Codable {
    var id: String
    var merchantID: String
    var type: String
    var purpose: String
    var privateKeyPEM: String
    var createdAt: Date
}

extension GatewayError.Code {
    /// The uploaded certificate is not a PEM X.509 certificate.
    public static let certificateInvalid = GatewayError.Code(rawValue: "certificate_invalid")
    /// The certificate's public key is not the merchant key's.
    public static let certificateKeyMismatch = GatewayError.Code(rawValue: "certificate_key_mismatch")
}

extension MerchantRegistry {
    private static func settingName(_ id: String) -> String { "merchant_key:\(id)" }

    /// Generates a private key (sealed under the master key) and its CSR: a processing key (`ec` P-256 or `rsa`
    /// 2048) or an identity key (`rsa` only). The key is not used until its certificate is uploaded.
    public func createKeyCSR(merchant: Merchant, type: String, purpose: String) throws(GatewayError) -> MerchantKeyCSR {
        try createKeyCSR(merchant: merchant, type: type, purpose: purpose, scope: nil)
    }

    /// ``createKeyCSR(merchant:type:purpose:)`` whose result is stored for `scope`'s idempotency key in the
    /// transaction that keeps the key, so a retry never makes a second key.
    package func createKeyCSR(
        merchant: Merchant, type: String, purpose: String, scope: IdempotencyScope?
    ) throws(GatewayError) -> MerchantKeyCSR {
        guard type == "ec" || type == "rsa" else { throw .invalid("type", "ec or rsa") }
        guard purpose == "processing" || purpose == "identity" else {
            throw .invalid("purpose", "processing or identity")
        }
        if purpose == "identity", type != "rsa" { throw .invalid("type", "an identity key is rsa") }
        let id = try Identifiers.make("mk_", 24)
        let (csr, hash, pem): (String, String, String) = try gatewayThrowing {
            let key = type == "ec" ? try EVPKey.generateEC() : try EVPKey.generateRSA(bits: 2048)
            let subject = [("CN", merchant.merchantIdentifiers.first ?? merchant.name), ("C", merchant.countryCode)]
            let csr = try CertificateSigningRequest.pem(key: key, subject: subject)
            return (csr, Data(SHA256.hash(key.publicKeyDER)).base64EncodedString(), try key.privateKeyPEM())
        }
        let pending = PendingMerchantKey(
            id: id, merchantID: merchant.id, type: type, purpose: purpose, privateKeyPEM: pem, createdAt: clock.now())
        let name = Self.settingName(id)
        let sealed = try cipher.seal(
            Array(try gatewayThrowing { try JSONEncoder().encode(pending) }), context: SealingContext.setting(name))
        let result = MerchantKeyCSR(id: id, type: type, purpose: purpose, csrPEM: csr, publicKeyHash: hash)
        try gatewayThrowing {
            try store.write { tx in
                try tx.setSetting(name, value: sealed)
                // The newest identity key is the one POST /v1/merchant-identity/certificate attaches to.
                if purpose == "identity" {
                    try tx.setSetting(Self.identityKeySetting(merchant.id), value: Data(id.utf8))
                }
                try scope?.complete(result, in: tx)
            }
        }
        return result
    }

    /// Attaches the certificate issued for a generated key: a processing key joins the key ring (a renewed
    /// certificate replaces the previous one), an identity key becomes the merchant's identity.
    public func attachCertificate(
        merchant: Merchant, keyID: String, certificatePEM: String
    ) throws(GatewayError)
        -> MerchantKeyStatus
    {
        let name = Self.settingName(keyID)
        guard keyID.hasPrefix("mk_"), let sealed = try gatewayThrowing({ try store.read { try $0.setting(name) } })
        else {
            throw GatewayError(.notFound, "no such merchant key", param: "id")
        }
        let bytes = try cipher.open(sealed, context: SealingContext.setting(name))
        let pending = try gatewayThrowing {
            try JSONDecoder().decode(PendingMerchantKey.self, from: Data(bytes.copyBytes()))
        }
        guard pending.merchantID == merchant.id else {
            throw GatewayError(.notFound, "no such merchant key", param: "id")
        }
        guard let certificate = try? X509Certificate(pem: certificatePEM) else {
            throw GatewayError(.certificateInvalid, "not a PEM X.509 certificate", param: "certificate_pem")
        }
        let key = try gatewayThrowing { try EVPKey(privateKeyPEM: pending.privateKeyPEM) }
        guard certificate.matches(privateKey: key) else {
            throw GatewayError(
                .certificateKeyMismatch, "the certificate is not for this merchant key", param: "certificate_pem")
        }
        let now = clock.now()
        let pem = SecureBytes(Array(pending.privateKeyPEM.utf8))
        if pending.purpose == "processing" {
            try gatewayThrowing {
                try store.write { tx in
                    if var existing = try tx.processingKeys(merchantID: merchant.id).first(where: { $0.id == keyID }) {
                        existing.certificatePEM = certificate.pem
                        existing.active = true
                        try tx.updateProcessingKey(existing)
                    } else {
                        let sealedKey = try cipher.seal(pem, context: SealingContext.processingKey(id: keyID))
                        try tx.insertProcessingKey(
                            ProcessingKeyRecord(
                                id: keyID, merchantID: merchant.id, privateKeySealed: sealedKey,
                                certificatePEM: certificate.pem, active: true, createdAt: now))
                    }
                }
            }
        } else {
            try setIdentity(merchantID: merchant.id, certificatePEM: certificate.pem, privateKeyPEM: pem)
        }
        var identifierHash: String?
        if var value = certificate.extensionValue(oid: "1.2.840.113635.100.6.32") {
            // A DER UTF8String or OCTET STRING wrapper around the hex text, when present.
            if value.count >= 2, value[0] == 0x0C || value[0] == 0x04, Int(value[1]) == value.count - 2 {
                value = Array(value.dropFirst(2))
            }
            let text = String(decoding: value, as: UTF8.self).lowercased()
            if text.count == 64, text.allSatisfy(\.isHexDigit) { identifierHash = text }
        }
        return MerchantKeyStatus(
            id: keyID, type: pending.type, purpose: pending.purpose,
            publicKeyHash: Data(SHA256.hash(key.publicKeyDER)).base64EncodedString(),
            merchantIdentifierHash: identifierHash, notBefore: certificate.notBefore, notAfter: certificate.notAfter,
            active: certificate.notBefore <= now && now <= certificate.notAfter)
    }
}

extension MerchantRegistry {
    /// Replaces the web origins (`https://shop.example`) allowed by CORS on the merchant's client routes.
    public func setWebOrigins(merchantID: String, origins: [String]) throws(GatewayError) {
        for origin in origins {
            guard let url = URL(string: origin), let scheme = url.scheme, ["http", "https"].contains(scheme),
                url.host != nil, url.path.isEmpty, origin.count <= 255
            else { throw .invalid("web_origins", "origins like https://shop.example (scheme, host, optional port)") }
        }
        try gatewayThrowing {
            try store.write { tx in
                guard var record = try tx.merchant(id: merchantID) else { throw GatewayError(.merchantNotFound) }
                record.webOrigins = origins
                try tx.updateMerchant(record)
            }
        }
    }
}

extension GatewayService {
    /// ``MerchantRegistry/createKeyCSR(merchant:type:purpose:)`` under an idempotency key: a retry gets the
    /// same key and CSR, a request holding the key makes the same key answer `idempotency_in_flight`.
    public func createKeyCSR(
        merchant: Merchant, type: String, purpose: String, idempotencyKey: String?
    ) throws(GatewayError) -> MerchantKeyCSR {
        try idempotent(merchant, key: idempotencyKey, operation: "merchant_key_csr", fingerprint: [type, purpose]) {
            scope throws(GatewayError) in
            try merchants.createKeyCSR(merchant: merchant, type: type, purpose: purpose, scope: scope)
        }
    }

    /// ``MerchantRegistry/attachCertificate(merchant:keyID:certificatePEM:)`` under an idempotency key
    /// (attaching is repeatable, so a request resumed after a crash simply attaches again).
    public func attachCertificate(
        merchant: Merchant, keyID: String, certificatePEM: String, idempotencyKey: String?
    ) throws(GatewayError) -> MerchantKeyStatus {
        try idempotent(
            merchant, key: idempotencyKey, operation: "merchant_key_certificate",
            fingerprint: [keyID, Identifiers.sha256Hex(certificatePEM)]
        ) { _ throws(GatewayError) in
            try merchants.attachCertificate(merchant: merchant, keyID: keyID, certificatePEM: certificatePEM)
        }
    }
}
