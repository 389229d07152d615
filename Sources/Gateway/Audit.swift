import Foundation

/// Who made a change the audit log records: a command line, a console session or an API credential.
///
/// The caller in charge names it in the ``RequestScope`` it passes to each operation, and the domain records it
/// with every change that operation makes:
///
/// ```swift
/// try registry.setDisabled(merchantID: id, true, scope: RequestScope(actor: .cli("orchard merchant disable")))
/// ```
public struct AuditActor: Sendable, Hashable, Codable {
    /// `cli`, `console` or `api`.
    public var kind: String
    /// Which one, never a secret: the command (`orchard merchant rotate-secret-key`), the console session's id
    /// prefix (`cs_ab12…`), or the secret key's public part (`sk_live_<key id>`).
    public var name: String

    /// An actor of `kind` named `name`.
    public init(kind: String, name: String) {
        self.kind = kind
        self.name = name
    }

    /// Recorded when no caller is named (``RequestScope/unattributed``: a change made outside a command or a
    /// request).
    public static let unknown = AuditActor(kind: "api", name: "unknown")

    /// The actor of a command line: `orchard` and its command words (`orchard merchant disable`).
    public static func cli(_ command: String) -> AuditActor { AuditActor(kind: "cli", name: command) }

    /// The actor of a request made with a secret key: its public part (`sk_live_` and the key id), never the key.
    public static func api(secretKey: String) -> AuditActor {
        AuditActor(kind: "api", name: String(secretKey.prefix(MerchantRegistry.secretKeyPublicLength)))
    }
}

/// One entry of the audit log: who changed what, when, and on which object.
public struct AuditEntry: Sendable, Hashable {
    /// `aud_…`
    public var id: String
    public var merchantID: String
    public var actor: AuditActor
    /// What changed: one of ``AuditLog/Action`` (`merchant.disable`, `payment.refund` …).
    public var action: String
    /// The object changed (a payment id, a key id), or nil when it is the merchant itself.
    public var target: String?
    /// Non-secret facts about the change (`{"amount": "10.00"}`); never a key, secret, PAN or cryptogram.
    public var detail: [String: String]
    public var createdAt: Date

    public init(
        id: String, merchantID: String, actor: AuditActor, action: String, target: String?,
        detail: [String: String], createdAt: Date
    ) {
        self.id = id
        self.merchantID = merchantID
        self.actor = actor
        self.action = action
        self.target = target
        self.detail = detail
        self.createdAt = createdAt
    }
}

/// A position in the newest-first audit log listing (creation time, then id).
public struct AuditCursor: Sendable, Hashable, ListingCursor {
    public var createdAt: Date
    public var id: String

    public init(createdAt: Date, id: String) {
        self.createdAt = createdAt
        self.id = id
    }
}

/// One page of the audit log.
public struct AuditPage: Sendable, Hashable {
    /// Newest first.
    public var entries: [AuditEntry]
    /// Whether older entries follow.
    public var hasMore: Bool
    /// Pass as `starting_after` for the next page; nil on the last page.
    public var nextCursor: String?
}

/// The audit log: each change to a merchant's configuration, keys or payments, written in the same store
/// transaction as the change, so an entry exists exactly when its change committed.
public enum AuditLog {
    /// The recorded actions.
    public enum Action {
        public static let merchantCreate = "merchant.create"
        public static let merchantDisable = "merchant.disable"
        public static let merchantEnable = "merchant.enable"
        public static let secretKeyRotate = "secret_key.rotate"
        public static let appKeyRotate = "app_key.rotate"
        public static let webhookEndpointUpdate = "webhook_endpoint.update"
        public static let webhookSecretRotate = "webhook_secret.rotate"
        public static let processingKeyCSR = "processing_key.csr"
        public static let processingKeyCertificate = "processing_key.certificate"
        public static let processingKeyRetire = "processing_key.retire"
        public static let identityCSR = "identity.csr"
        public static let identityCertificate = "identity.certificate"
        public static let applePayDomainsUpdate = "apple_pay_domains.update"
        /// The operator released a domain from the merchant that held it (`orchard merchant release-domain`).
        public static let applePayDomainRelease = "apple_pay_domain.release"
        public static let binTableReplace = "bin_table.replace"
        public static let coBrandTableReplace = "co_brand_table.replace"
        public static let processorSettingsUpdate = "processor_settings.update"
        public static let paymentCapture = "payment.capture"
        public static let paymentVoid = "payment.void"
        public static let paymentRefund = "payment.refund"
        public static let paymentCaptureCancel = "payment.capture_cancel"
        public static let consoleSignIn = "console.sign_in"
        public static let consoleSignOut = "console.sign_out"
        /// Every console session of the merchant ended at once (`reason`: sign out everywhere, an app key rotation
        /// or a disable; `sessions`: how many).
        public static let consoleSessionsEnd = "console.sessions_end"
        public static let tappayCompat = "compat.tappay.update"
        public static let payerMaxRegistration = "compat.payermax.update"
    }

    /// The most keys a detail holds.
    public static let maximumDetailKeys = 20
    /// The longest action, target, detail key or value (characters).
    public static let maximumFieldLength = 200

    /// Records `action` on `merchantID` in `tx`, the transaction that makes the change, by `actor` (the
    /// request's, ``RequestScope/actor``); returns the entry written.
    ///
    /// A detail value longer than ``maximumFieldLength`` is cut to it (a long host name must not refuse its
    /// change). Refuses (`internal_error`, rolling the change back) an empty action, an action, target or key
    /// over the bound, more than ``maximumDetailKeys`` keys, or a value that looks like a secret (a secret or
    /// app key, a webhook secret, a PEM block), so no secret can reach the log.
    @discardableResult
    public static func record(
        in tx: any StoreTransaction, merchantID: String, action: String, target: String? = nil,
        detail: [String: String] = [:], at: Date, actor: AuditActor
    ) throws -> AuditEntry {
        let names = [action, target ?? ""] + Array(detail.keys)
        guard !action.isEmpty, detail.count <= maximumDetailKeys, names.allSatisfy({ $0.count <= maximumFieldLength })
        else { throw GatewayError(.internalError, "an audit entry over its bounds (\(action))") }
        guard !(names + Array(detail.values)).contains(where: looksSecret) else {
            throw GatewayError(.internalError, "an audit entry with a secret-looking value (\(action))")
        }
        let entry = AuditEntry(
            id: try Identifiers.make("aud_", 24), merchantID: merchantID,
            actor: actor, action: action, target: target,
            detail: detail.mapValues { String($0.prefix(maximumFieldLength)) },
            createdAt: Date(unixMilliseconds: at.unixMilliseconds))
        try tx.insertAuditEntry(entry)
        return entry
    }

    /// Whether `value` looks like a secret Orchard issues or keeps.
    static func looksSecret(_ value: String) -> Bool {
        let isKeyID = value.hasPrefix("sk_") && value.count <= MerchantRegistry.secretKeyPublicLength
        return value.hasPrefix("ak_")
            || (!isKeyID && ["sk_test_", "sk_live_", "whsec_", "-----BEGIN"].contains { value.contains($0) })
    }
}

extension GatewayService {
    /// One page of the merchant's audit log, newest first (creation time, then id), strictly after the
    /// `startingAfter` cursor (a ``ListingCursor`` text), at most `limit` (1 to 100) entries.
    public func auditLog(merchant: Merchant, limit: Int, startingAfter: String?) throws(GatewayError) -> AuditPage {
        guard FieldLimits.pageSize.contains(limit) else {
            throw .invalid("limit", FieldLimits.text(FieldLimits.pageSize))
        }
        let after = try AuditCursor.parse(startingAfter, param: "starting_after")
        let rows = try read { try $0.auditEntries(merchantID: merchant.id, after: after, limit: limit + 1) }
        let page = AuditCursor.page(rows, limit: limit) { ($0.createdAt, $0.id) }
        return AuditPage(entries: page.rows, hasMore: page.next != nil, nextCursor: page.next)
    }
}
