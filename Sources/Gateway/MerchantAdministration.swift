import Foundation
import OrchardCrypto

/// A merchant's API keys replaced by a rotation: the new key, shown once.
public struct RotatedKey: Sendable, Hashable {
    public var merchantID: String
    /// The new app key (`ak_…`) or secret key (`sk_…`).
    public var key: String
    /// When the replaced key stops working (a secret key's overlap); nil when it stopped at once.
    public var previousKeyExpiresAt: Date?
}

extension MerchantRegistry {
    /// The longest overlap a secret-key rotation may give the old key (30 days).
    public static let maximumSecretKeyOverlap: TimeInterval = 30 * 86_400

    /// `sk_test_` (sandbox) or `sk_live_` (production).
    static func secretKeyPrefix(_ environment: GatewayEnvironment) -> String {
        environment == .sandbox ? "sk_test_" : "sk_live_"
    }

    /// A new secret key and its key id (the 12 characters after the prefix).
    static func newSecretKey(_ environment: GatewayEnvironment) throws(GatewayError) -> (id: String, key: String) {
        let id = try Identifiers.make("", 12)
        return (id, secretKeyPrefix(environment) + id + (try Identifiers.make("", 32)))
    }

    /// A new app key.
    static func newAppKey() throws(GatewayError) -> String { try Identifiers.make("ak_", 40) }

    /// Replaces the merchant's secret key. The old key keeps working for `overlap` seconds (0 to
    /// ``maximumSecretKeyOverlap``), then it is refused (`invalid_credentials`); a key replaced by an earlier
    /// rotation stops at once. Console sessions opened with a key end when it stops working (derived from the
    /// key ids and the overlap's end; nothing else is stored). The new key is returned once; in production only
    /// its hash is kept.
    public func rotateSecretKey(
        merchantID: String, overlap: TimeInterval, scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> RotatedKey {
        guard overlap >= 0, overlap <= Self.maximumSecretKeyOverlap else {
            throw .invalid("overlap", "0 to \(Int(Self.maximumSecretKeyOverlap / 3600)) hours")
        }
        let now = clock.now()
        let until = now.addingTimeInterval(overlap)
        return try changeKeys(merchantID: merchantID, by: requestScope) { record throws(GatewayError) in
            let (id, key) = try Self.newSecretKey(record.environment)
            let previous = Self.secretKeyPrefix(record.environment) + record.secretKeyID
            if overlap > 0 {
                record.previousSecretKeyID = record.secretKeyID
                record.previousSecretKeyHash = record.secretKeyHash
                record.previousSecretKeyExpiresAt = until
            } else {
                record.previousSecretKeyID = nil
                record.previousSecretKeyHash = nil
                record.previousSecretKeyExpiresAt = nil
            }
            record.secretKeyID = id
            record.secretKeyHash = Identifiers.sha256Hex(key)
            let detail = [
                "previous_key": previous, "key": Self.secretKeyPrefix(record.environment) + id,
                "overlap_seconds": String(Int(overlap)),
            ]
            return (
                RotatedKey(merchantID: merchantID, key: key, previousKeyExpiresAt: overlap > 0 ? until : nil),
                AuditLog.Action.secretKeyRotate, detail, { $0.secretKey = key }
            )
        }
    }

    /// Replaces the merchant's app key (its app id stays); the old key stops working at once, and every console
    /// session of the merchant ends with it. Returned once.
    public func rotateAppKey(
        merchantID: String, scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> RotatedKey {
        try changeKeys(merchantID: merchantID, endingConsoleSessions: .appKeyRotated, by: requestScope) {
            record throws(GatewayError) in
            let key = try Self.newAppKey()
            record.appKeyHash = Identifiers.sha256Hex(key)
            return (
                RotatedKey(merchantID: merchantID, key: key, previousKeyExpiresAt: nil), AuditLog.Action.appKeyRotate,
                ["app_id": record.appID], { $0.appKey = key }
            )
        }
    }

    /// Applies `change` to the merchant's record and, in sandbox, to its sealed credentials, and records the
    /// audit entry it names by the request's actor, in one transaction (which also ends the merchant's console
    /// sessions when `endingConsoleSessions` gives the reason).
    private func changeKeys(
        merchantID: String, endingConsoleSessions reason: ConsoleSessionRules.EndReason? = nil,
        by requestScope: RequestScope, _ change: (inout MerchantRecord) throws(GatewayError) -> (
            RotatedKey, String, [String: String], (inout MerchantCredentials) -> Void
        )
    ) throws(GatewayError) -> RotatedKey {
        let now = clock.now()
        return try gatewayThrowing {
            try store.write { tx in
                guard var record = try tx.merchant(id: merchantID) else {
                    throw GatewayError(.merchantNotFound, "no merchant \(merchantID)")
                }
                let (rotated, action, detail, updateCredentials) = try change(&record)
                if let sealed = record.credentialsSealed {
                    let context = SealingContext.credentials(merchantID: merchantID)
                    let bytes = try cipher.open(sealed, context: context)
                    // Stored format (sealed credentials), as the registry writes and reads it: Codable.
                    var credentials = try JSONDecoder().decode(
                        MerchantCredentials.self, from: Data(bytes.copyBytes()))
                    updateCredentials(&credentials)
                    record.credentialsSealed = try cipher.seal(
                        Array(try JSONEncoder().encode(credentials)), context: context)
                }
                try tx.updateMerchant(record)
                let actor = requestScope.actor
                try AuditLog.record(in: tx, merchantID: merchantID, action: action, detail: detail, at: now, actor: actor)
                if let reason {
                    _ = try Self.endConsoleSessions(in: tx, merchantID: merchantID, reason: reason, at: now, by: actor)
                }
                return rotated
            }
        }
    }

    /// Changes the merchant's TapPay settings, each left as it is when not given (`.none`), removed with
    /// `.some(nil)`: the alias TapPay-style calls may send as `merchant_id` (1 to 50 printable ASCII characters
    /// without spaces, TapPay's `String(50)`), and TapPay's numeric app id (``FieldLimits/tappayAppIDRange``,
    /// unique among merchants: `tappay_app_id_taken` when another has it). Recorded in the audit log.
    @discardableResult
    public func setTapPayCompat(
        merchantID: String, merchantAlias: String?? = .none, appID: Int?? = .none,
        scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> Merchant {
        if case .some(.some(let alias)) = merchantAlias {
            guard FieldLimits.fits(alias, FieldLimits.merchantAlias),
                FieldLimits.isPrintableASCII(alias)
            else {
                throw .invalid(
                    "merchant_alias",
                    "\(FieldLimits.text(FieldLimits.merchantAlias)) printable ASCII characters without spaces")
            }
        }
        if case .some(.some(let number)) = appID, !FieldLimits.tappayAppIDRange.contains(number) {
            throw .invalid("app_id", "an integer from \(FieldLimits.text(FieldLimits.tappayAppIDRange))")
        }
        let now = clock.now()
        return try gatewayThrowing {
            try store.write { tx in
                guard var record = try tx.merchant(id: merchantID) else {
                    throw GatewayError(.merchantNotFound, "no merchant \(merchantID)")
                }
                if case .some(let alias) = merchantAlias { record.tappayMerchantAlias = alias }
                if case .some(let number) = appID {
                    if let number, let holder = try tx.merchant(tappayAppID: number), holder.id != merchantID {
                        throw StoreConflict(.merchantTapPayAppID).gatewayError
                    }
                    record.tappayAppID = number
                }
                try tx.updateMerchant(record)
                try AuditLog.record(
                    in: tx, merchantID: merchantID, action: AuditLog.Action.tappayCompat,
                    detail: [
                        "merchant_alias": record.tappayMerchantAlias ?? "",
                        "app_id": record.tappayAppID.map(String.init) ?? "",
                    ], at: now, actor: requestScope.actor)
                return Merchant(record)
            }
        }
    }

    /// Disables (or enables again) the merchant: while disabled, every route answers its credentials with
    /// `merchant_disabled`; its data stays. Disabling ends its console sessions (enabling does not bring them
    /// back). Setting the state it already has changes nothing.
    @discardableResult
    public func setDisabled(
        merchantID: String, _ disabled: Bool, scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> Merchant {
        let now = clock.now()
        return try gatewayThrowing {
            try store.write { tx in
                guard var record = try tx.merchant(id: merchantID) else {
                    throw GatewayError(.merchantNotFound, "no merchant \(merchantID)")
                }
                guard (record.disabledAt != nil) != disabled else { return Merchant(record) }
                record.disabledAt = disabled ? now : nil
                try tx.updateMerchant(record)
                try AuditLog.record(
                    in: tx, merchantID: merchantID,
                    action: disabled ? AuditLog.Action.merchantDisable : AuditLog.Action.merchantEnable, at: now,
                    actor: requestScope.actor)
                if disabled {
                    _ = try Self.endConsoleSessions(
                        in: tx, merchantID: merchantID, reason: .merchantDisabled, at: now, by: requestScope.actor)
                }
                return Merchant(record)
            }
        }
    }
}
