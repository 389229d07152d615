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

/// A generated key waiting for (or holding) its certificate, kept sealed in the settings: a JSON object of these
/// fields and `privateKeyPEM`, the key, which goes in and out of the JSON in zeroing buffers (never a `String`).
private struct PendingMerchantKey: Codable {
    var id: String
    var merchantID: String
    var type: String
    var purpose: String
    var createdAt: Date

    static let privateKeyMember = "privateKeyPEM"

    /// The JSON of the fields and `privateKeyPEM`.
    func serialized(privateKeyPEM: SecureBytes) throws -> SecureBytes {
        // Stored format (the sealed pending key's fields), read back by Codable in ``parse(_:)``.
        var bytes = Array(try JSONEncoder().encode(self))
        defer { SecureBytes.zero(&bytes) }
        guard bytes.last == UInt8(ascii: "}") else { throw GatewayError(.internalError, "a pending key's JSON") }
        bytes.removeLast()
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        SecureJSON.appendMember(Self.privateKeyMember, privateKeyPEM, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return SecureBytes(bytes)
    }

    /// The fields and the private key of ``serialized(privateKeyPEM:)``'s JSON.
    static func parse(_ json: SecureBytes) throws -> (PendingMerchantKey, privateKeyPEM: SecureBytes) {
        // Stored format (the sealed pending key's fields), written by Codable.
        let pending = try json.withBorrowedData { try JSONDecoder().decode(PendingMerchantKey.self, from: $0) }
        guard let key = SecureJSON.string(at: [privateKeyMember], in: json) else {
            throw GatewayError(.internalError, "a pending key without its private key")
        }
        return (pending, key)
    }
}

extension GatewayError.Code {
    /// The uploaded certificate is not a PEM X.509 certificate.
    public static let certificateInvalid = GatewayError.Code(rawValue: "certificate_invalid")
    /// The certificate's public key is not the merchant key's.
    public static let certificateKeyMismatch = GatewayError.Code(rawValue: "certificate_key_mismatch")
}

extension MerchantRegistry {
    static func settingName(_ id: String) -> String { "merchant_key:\(id)" }

    /// Generates a private key (sealed under the master key) and its CSR: a processing key (`ec` P-256 or `rsa`
    /// 2048) or an identity key (`rsa` only). The key is not used until its certificate is uploaded. With
    /// `idempotency`, the result is stored for its key in the transaction that keeps the key, so a retry never
    /// makes a second key (``MerchantKeys/createKeyCSR(merchant:type:purpose:idempotencyKey:scope:)``).
    package func createKeyCSR(
        merchant: Merchant, type: String, purpose: String, requestScope: RequestScope, idempotency: IdempotencyScope?
    ) throws(GatewayError) -> MerchantKeyCSR {
        guard type == "ec" || type == "rsa" else { throw .invalid("type", "ec or rsa") }
        guard purpose == "processing" || purpose == "identity" else {
            throw .invalid("purpose", "processing or identity")
        }
        if purpose == "identity", type != "rsa" { throw .invalid("type", "an identity key is rsa") }
        let id = try Identifiers.make("mk_", 24)
        let (csr, hash, pem): (String, String, SecureBytes) = try gatewayThrowing {
            let key = type == "ec" ? try EVPKey.generateEC() : try EVPKey.generateRSA(bits: 2048)
            let subject = [("CN", merchant.merchantIdentifiers.first ?? merchant.name), ("C", merchant.countryCode)]
            let csr = try CertificateSigningRequest.pem(key: key, subject: subject)
            return (csr, Data(SHA256.hash(key.publicKeyDER)).base64EncodedString(), try key.privateKeyPEM())
        }
        let pending = PendingMerchantKey(
            id: id, merchantID: merchant.id, type: type, purpose: purpose, createdAt: clock.now())
        let name = Self.settingName(id)
        let sealed = try cipher.seal(
            try gatewayThrowing { try pending.serialized(privateKeyPEM: pem) }, context: SealingContext.setting(name))
        let result = MerchantKeyCSR(id: id, type: type, purpose: purpose, csrPEM: csr, publicKeyHash: hash)
        try gatewayThrowing {
            try store.write { tx in
                try tx.setSetting(name, value: sealed)
                // The newest identity key is the one POST /v1/merchant-identity/certificate attaches to.
                if purpose == "identity" {
                    try tx.setSetting(Self.identityKeySetting(merchant.id), value: Data(id.utf8))
                }
                try AuditLog.record(
                    in: tx, merchantID: merchant.id,
                    action: purpose == "identity" ? AuditLog.Action.identityCSR : AuditLog.Action.processingKeyCSR,
                    target: id, detail: ["type": type], at: pending.createdAt, actor: requestScope.actor)
                try idempotency?.complete(result, in: tx)
            }
        }
        return result
    }

    /// Attaches the certificate issued for a generated key: a processing key joins the key ring (a renewed
    /// certificate replaces the previous one), an identity key becomes the merchant's identity.
    package func attachCertificate(
        merchant: Merchant, keyID: String, certificatePEM: String, scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError)
        -> MerchantKeyStatus
    {
        guard FieldLimits.fits(certificatePEM, FieldLimits.certificatePEM) else {
            throw .invalid("certificate_pem", "1 to \(FieldLimits.certificatePEM.upperBound) characters of PEM")
        }
        let name = Self.settingName(keyID)
        guard keyID.hasPrefix("mk_"), let sealed = try gatewayThrowing({ try store.read { try $0.setting(name) } })
        else {
            throw GatewayError(.notFound, "no such merchant key", param: "id")
        }
        let bytes = try cipher.open(sealed, context: SealingContext.setting(name))
        let (pending, pem) = try gatewayThrowing { try PendingMerchantKey.parse(bytes) }
        guard pending.merchantID == merchant.id else {
            throw GatewayError(.notFound, "no such merchant key", param: "id")
        }
        guard let certificate = try? X509Certificate(pem: certificatePEM) else {
            throw GatewayError(.certificateInvalid, "not a PEM X.509 certificate", param: "certificate_pem")
        }
        let key = try gatewayThrowing { try EVPKey(privateKeyPEM: pem) }
        guard certificate.matches(privateKey: key) else {
            throw GatewayError(
                .certificateKeyMismatch, "the certificate is not for this merchant key", param: "certificate_pem")
        }
        let now = clock.now()
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
                    try AuditLog.record(
                        in: tx, merchantID: merchant.id, action: AuditLog.Action.processingKeyCertificate,
                        target: keyID, detail: ["not_after": WireFormat.time(certificate.notAfter)], at: now,
                        actor: requestScope.actor)
                }
            }
        } else {
            try setIdentity(
                merchantID: merchant.id, certificatePEM: certificate.pem, privateKeyPEM: pem, keyID: keyID,
                scope: requestScope)
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
    /// Refuses origins that are not `scheme://host[:port]` (http or https, at most 255 characters).
    static func checkWebOrigins(_ origins: [String]) throws(GatewayError) {
        for origin in origins {
            guard let url = URL(string: origin), let scheme = url.scheme, ["http", "https"].contains(scheme),
                url.host != nil, url.path.isEmpty, origin.count <= 255
            else { throw .invalid("web_origins", "origins like https://shop.example (scheme, host, optional port)") }
        }
    }

    /// Replaces the web origins (`https://shop.example`) allowed by CORS on the merchant's client routes.
    public func setWebOrigins(merchantID: String, origins: [String]) throws(GatewayError) {
        try Self.checkWebOrigins(origins)
        try gatewayThrowing {
            try store.write { tx in
                guard var record = try tx.merchant(id: merchantID) else { throw GatewayError(.merchantNotFound) }
                record.webOrigins = origins
                try tx.updateMerchant(record)
            }
        }
    }
}

extension MerchantKeys {
    /// Generates a private key (sealed under the master key) and its CSR: a processing key (`ec` P-256 or `rsa`
    /// 2048) or an identity key (`rsa` only). The key is not used until its certificate is uploaded. Under an
    /// idempotency key, a retry gets the same key and CSR, a request holding the key makes the same key answer
    /// `idempotency_in_flight`.
    public func createKeyCSR(
        merchant: Merchant, type: String, purpose: String, idempotencyKey: String? = nil,
        scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> MerchantKeyCSR {
        try idempotent(
            merchant, key: idempotencyKey, operation: "merchant_key_csr", fingerprint: [type, purpose],
            requestScope: requestScope
        ) { scope throws(GatewayError) in
            try merchants.createKeyCSR(
                merchant: merchant, type: type, purpose: purpose, requestScope: requestScope, idempotency: scope)
        }
    }

    /// Attaches the certificate issued for a generated key: a processing key joins the key ring (a renewed
    /// certificate replaces the previous one), an identity key becomes the merchant's identity. Under an
    /// idempotency key (attaching is repeatable, so a request resumed after a crash simply attaches again).
    public func attachCertificate(
        merchant: Merchant, keyID: String, certificatePEM: String, idempotencyKey: String? = nil,
        scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> MerchantKeyStatus {
        try idempotent(
            merchant, key: idempotencyKey, operation: "merchant_key_certificate",
            fingerprint: [keyID, Identifiers.sha256Hex(certificatePEM)], requestScope: requestScope
        ) { _ throws(GatewayError) in
            try merchants.attachCertificate(
                merchant: merchant, keyID: keyID, certificatePEM: certificatePEM, scope: requestScope)
        }
    }
}

/// One merchant key as the console's Keys page lists it (`GET /v1/merchant-keys`).
public struct MerchantKeyEntry: Sendable, Hashable {
    /// Where a key stands.
    public enum State: String, Sendable {
        /// Its certificate is attached and it is in use (a processing key opens tokens; the identity is the one
        /// merchant validation presents).
        case active
        /// A processing key taken out of the ring (``MerchantKeys/retireProcessingKey(merchantID:keyID:scope:)``).
        case retired
        /// A CSR was made; its certificate has not been uploaded yet.
        case pending
    }

    /// `mk_…` (made by `POST /v1/merchant-keys/csr` or `/v1/merchant-identity/csr`), or `pk_…` for a key the
    /// gateway was given directly (the sandbox's, `orchard keys`).
    public var id: String
    /// `processing` or `identity`.
    public var purpose: String
    /// `ec` or `rsa`.
    public var type: String
    public var state: State
    /// Base64 SHA-256 of the public key's SubjectPublicKeyInfo DER (the token header's `publicKeyHash`).
    public var publicKeyHash: String
    /// The certificate's validity; nil while pending.
    public var notBefore: Date?
    public var notAfter: Date?
    /// When the key was made (or, for a key given directly, added).
    public var createdAt: Date?
}

/// A certificate that expires within ``MerchantKeyInventory/warningPeriod`` (or has expired).
public struct CertificateWarning: Sendable, Hashable {
    public var keyID: String
    public var purpose: String
    public var notAfter: Date
    /// Whole days left (rounded down); negative once expired.
    public var daysLeft: Int
    public var expired: Bool

    public init(keyID: String, purpose: String, notAfter: Date, daysLeft: Int, expired: Bool) {
        self.keyID = keyID
        self.purpose = purpose
        self.notAfter = notAfter
        self.daysLeft = daysLeft
        self.expired = expired
    }
}

/// A merchant's processing keys and identity with their certificates' expiry warnings.
public struct MerchantKeyInventory: Sendable, Hashable {
    /// How long before a certificate's expiry it is warned about: 30 days.
    public static let warningPeriod: TimeInterval = 30 * 86_400

    /// Processing keys (oldest first), then the identity, then pending CSRs (oldest first).
    public var keys: [MerchantKeyEntry]
    /// The active certificates that expire within ``warningPeriod`` of the gateway clock's time, soonest first.
    public var warnings: [CertificateWarning]
}

extension GatewayError.Code {
    /// Retiring this processing key would leave the merchant without any to open tokens with.
    public static let lastActiveKey = GatewayError.Code(rawValue: "last_active_key")
}

extension MerchantKeys {
    /// The merchant's keys, their states and certificate validity, and warnings for certificates expiring within
    /// 30 days of the clock's time. No private key leaves its seal except to be matched against a certificate.
    public func keyInventory(merchantID: String) throws(GatewayError) -> MerchantKeyInventory {
        let record = try merchants.record(merchantID)
        let (ring, pendingSealed, identityKeyID) = try gatewayThrowing {
            try store.read { tx in
                let names = try tx.settingNames(prefix: MerchantRegistry.settingName(""))
                var sealed: [(String, Data)] = []
                for name in names { if let value = try tx.setting(name) { sealed.append((name, value)) } }
                return (
                    try tx.processingKeys(merchantID: merchantID), sealed,
                    try tx.setting(MerchantRegistry.identityKeySetting(merchantID)).map { String(decoding: $0, as: UTF8.self) }
                )
            }
        }
        var generated: [(key: PendingMerchantKey, privateKeyPEM: SecureBytes)] = []
        for (name, sealed) in pendingSealed {
            let bytes = try cipher.open(sealed, context: SealingContext.setting(name))
            let (key, pem) = try gatewayThrowing { try PendingMerchantKey.parse(bytes) }
            if key.merchantID == merchantID { generated.append((key, pem)) }
        }
        generated.sort { $0.key.createdAt < $1.key.createdAt }
        func entry(
            id: String, purpose: String, certificatePEM: String, state: MerchantKeyEntry.State, createdAt: Date?
        ) -> MerchantKeyEntry? {
            guard let certificate = try? X509Certificate(pem: certificatePEM), let key = try? certificate.publicKey()
            else { return nil }
            return MerchantKeyEntry(
                id: id, purpose: purpose, type: key.kind == .ec ? "ec" : "rsa", state: state,
                publicKeyHash: Data(SHA256.hash(key.publicKeyDER)).base64EncodedString(),
                notBefore: certificate.notBefore, notAfter: certificate.notAfter, createdAt: createdAt)
        }
        var keys: [MerchantKeyEntry] = ring.compactMap {
            entry(
                id: $0.id, purpose: "processing", certificatePEM: $0.certificatePEM,
                state: $0.active ? .active : .retired, createdAt: $0.createdAt)
        }
        // The identity certificate belongs to the generated identity key whose private key it matches.
        var identityHolder: String?
        if let pem = record.identityCertificatePEM, let certificate = try? X509Certificate(pem: pem) {
            identityHolder =
                generated.last {
                    $0.key.purpose == "identity"
                        && (try? EVPKey(privateKeyPEM: $0.privateKeyPEM)).map(certificate.matches(privateKey:)) == true
                }?.key.id
            let created = generated.first { $0.key.id == identityHolder }?.key.createdAt
            if let identity = entry(
                id: identityHolder ?? "identity", purpose: "identity", certificatePEM: pem, state: .active,
                createdAt: created)
            {
                keys.append(identity)
            }
        }
        // Pending: processing CSRs with no key in the ring, and the newest identity CSR when it is not the identity.
        let inRing = Set(ring.map(\.id))
        for (key, privateKeyPEM) in generated {
            let waiting =
                key.purpose == "processing"
                ? !inRing.contains(key.id) : key.id == identityKeyID && key.id != identityHolder
            guard waiting, let privateKey = try? EVPKey(privateKeyPEM: privateKeyPEM) else { continue }
            keys.append(
                MerchantKeyEntry(
                    id: key.id, purpose: key.purpose, type: key.type, state: .pending,
                    publicKeyHash: Data(SHA256.hash(privateKey.publicKeyDER)).base64EncodedString(), notBefore: nil,
                    notAfter: nil, createdAt: key.createdAt))
        }
        let now = clock.now()
        let warnings = keys.compactMap { key -> CertificateWarning? in
            guard key.state == .active, let notAfter = key.notAfter,
                notAfter.timeIntervalSince(now) <= MerchantKeyInventory.warningPeriod
            else { return nil }
            let days = Int((notAfter.timeIntervalSince(now) / 86_400).rounded(.down))
            return CertificateWarning(
                keyID: key.id, purpose: key.purpose, notAfter: notAfter, daysLeft: days, expired: notAfter < now)
        }
        return MerchantKeyInventory(keys: keys, warnings: warnings.sorted { $0.notAfter < $1.notAfter })
    }

    /// Takes a processing key out of the ring (the last step of a rotation, once the new key is active): its
    /// tokens are no longer opened. Refused (`last_active_key`) for the merchant's only active processing key.
    public func retireProcessingKey(
        merchantID: String, keyID: String, scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) {
        try gatewayThrowing {
            try store.write { tx in
                let ring = try tx.processingKeys(merchantID: merchantID)
                guard var key = ring.first(where: { $0.id == keyID }) else {
                    throw GatewayError(.notFound, "no such processing key", param: "id")
                }
                guard key.active else { return }
                guard ring.contains(where: { $0.active && $0.id != keyID }) else {
                    throw GatewayError(
                        .lastActiveKey, "the merchant's only active processing key cannot be retired", param: "id")
                }
                key.active = false
                try tx.updateProcessingKey(key)
                try AuditLog.record(
                    in: tx, merchantID: merchantID, action: AuditLog.Action.processingKeyRetire, target: keyID,
                    at: clock.now(), actor: requestScope.actor)
            }
        }
    }
}

extension MerchantKeys {
    /// Adds a processing key to the ring (active); returns its id.
    @discardableResult
    public func addProcessingKey(
        merchantID: String, privateKeyPEM: SecureBytes, certificatePEM: String, id: String? = nil,
        scope requestScope: RequestScope = .unattributed
    )
        throws(GatewayError) -> String
    {
        _ = try merchants.record(merchantID)
        var keyID = id ?? ""
        if id == nil { keyID = try Identifiers.make("pk_", 16) }
        let key = try merchants.processingKey(
            merchantID: merchantID, privateKeyPEM: privateKeyPEM, certificatePEM: certificatePEM, id: keyID)
        try merchants.auditedWrite(merchantID, AuditLog.Action.processingKeyCertificate, target: key.id, by: requestScope) {
            try $0.insertProcessingKey(key)
        }
        return key.id
    }

    /// Activates or retires a processing key (rotation: add the new key, then retire the old one).
    public func setProcessingKey(merchantID: String, keyID: String, active: Bool) throws(GatewayError) {
        try gatewayThrowing {
            try store.write { tx in
                guard var key = try tx.processingKeys(merchantID: merchantID).first(where: { $0.id == keyID }) else {
                    throw GatewayError.invalid("key_id", "no such processing key")
                }
                key.active = active
                try tx.updateProcessingKey(key)
            }
        }
    }
}
