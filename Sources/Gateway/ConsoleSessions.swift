import Foundation
import OrchardCrypto

/// A merchant console sign-in as stored: the cookie's token only as its SHA-256, so a copy of the database
/// cannot be used to sign in; the CSRF token is not stored at all (it is derived from the token).
public struct ConsoleSessionRecord: Sendable, Hashable, Codable {
    /// The session's public id (`cs_…`): logs and the audit log name a session by it.
    public var id: String
    /// Lowercase hex SHA-256 of the session token (the `orchard_console` cookie).
    public var tokenHash: String
    public var merchantID: String
    /// The key id of the secret key the session was opened with: the session works only while that key does
    /// (the merchant's current key, or the replaced one during its overlap). Empty for sessions stored before
    /// sessions were bound to keys, which no longer work.
    public var secretKeyID: String
    public var createdAt: Date
    /// The last request made with the session (updated at most once a minute).
    public var lastSeenAt: Date
    /// When it was signed out (or ended with the others of its merchant); nil while it may be used.
    public var endedAt: Date?

    public init(
        id: String, tokenHash: String, merchantID: String, secretKeyID: String, createdAt: Date, lastSeenAt: Date,
        endedAt: Date?
    ) {
        self.id = id
        self.tokenHash = tokenHash
        self.merchantID = merchantID
        self.secretKeyID = secretKeyID
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.endedAt = endedAt
    }
}

/// A console session in use: who it signs in, its CSRF token and when it expires if left idle.
public struct ConsoleSession: Sendable, Hashable {
    /// The session's public id (`cs_…`).
    public var id: String
    /// The merchant signed in.
    public var merchant: Merchant
    /// The value every state-changing request made with the session must send in `X-CSRF-Token`.
    public var csrfToken: String
    /// When the session ends unless it is used before: its idle timeout, or earlier its absolute lifetime or
    /// the end of its secret key's overlap, whichever comes first (using it moves only the first).
    public var expiresAt: Date
}

/// The rules of console sessions.
public enum ConsoleSessionRules {
    /// A session not used for this long (8 hours) is refused.
    public static let idleTimeout: TimeInterval = 8 * 3600
    /// A session ends this long (24 hours) after its sign-in however it is used, unless
    /// ``GatewayConfiguration/consoleSessionLifetime`` says otherwise.
    public static let defaultLifetime: TimeInterval = 24 * 3600
    /// The bounds of ``GatewayConfiguration/consoleSessionLifetime``: 5 minutes to 30 days.
    public static let lifetimeRange: ClosedRange<TimeInterval> = 300...(30 * 86_400)

    /// Why a merchant's sessions were all ended (the `reason` of the `console.sessions_end` audit entry).
    public enum EndReason: String, Sendable {
        /// "Sign out everywhere": the console's button, or `orchard merchant end-console-sessions`.
        case signOutEverywhere = "sign_out_everywhere"
        /// `orchard merchant rotate-app-key`.
        case appKeyRotated = "app_key.rotate"
        /// `orchard merchant disable` (they stay ended after `enable`).
        case merchantDisabled = "merchant.disable"
    }

    /// When `session` of `merchant` ends unless used before, or nil when it no longer works: ended, its secret
    /// key no longer working, idle for ``idleTimeout`` or older than `lifetime`. Derived from the session's and
    /// the merchant's rows, so every instance agrees.
    static func expiry(
        of session: ConsoleSessionRecord, merchant: MerchantRecord, lifetime: TimeInterval, at now: Date
    ) -> Date? {
        guard session.endedAt == nil, let key = merchant.workingSecretKey(session.secretKeyID, at: now) else {
            return nil
        }
        let end = min(session.lastSeenAt + idleTimeout, session.createdAt + lifetime, key.until ?? .distantFuture)
        return now < end ? end : nil
    }
    /// How often a session's last use is written (once a minute at most), so reads stay reads.
    public static let touchInterval: TimeInterval = 60
    /// Ended or expired sessions are deleted this long (1 day) after their last use.
    public static let retention: TimeInterval = 24 * 3600

    /// The CSRF token of a session: an HMAC-SHA256 of a fixed label under the session token, in hex. Only a
    /// holder of the token (the browser's HttpOnly cookie, which scripts cannot read) gets it from the gateway.
    public static func csrfToken(sessionToken: String) -> String {
        Hex.encode(
            HMACSHA256.authenticationCode(key: Array(sessionToken.utf8), message: Array("orchard-console-csrf".utf8)))
    }

    /// Whether `candidate` is the session's CSRF token, compared in constant time.
    public static func isValidCSRFToken(_ candidate: String, sessionToken: String) -> Bool {
        let expected = Array(csrfToken(sessionToken: sessionToken).utf8)
        let given = Array(candidate.utf8)
        return given.count == expected.count && ConstantTime.equals(given, expected)
    }

    /// The audit log's actor for a session: `console` and the session id's first characters (`cs_ab12cd…`).
    public static func auditActor(sessionID: String) -> AuditActor {
        AuditActor(kind: "console", name: String(sessionID.prefix(9)) + "…")
    }

    /// Whether `token` has the form the gateway issues (`cst_` and 43 letters or digits), before any lookup.
    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 47 && token.hasPrefix("cst_")
            && token.utf8.dropFirst(4).allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
            }
    }
}

extension GatewayService {
    /// Signs in to the console with a merchant's secret key: a new session bound to that key and its token (the
    /// cookie's value, returned once; only its hash is stored), recorded in the audit log as `console.sign_in`
    /// (with the client's address, when given). A wrong key is `invalid_credentials`, a disabled merchant's
    /// `merchant_disabled`.
    public func signInToConsole(
        secretKey: String, clientAddress: String? = nil
    ) throws(GatewayError) -> (session: ConsoleSession, token: String) {
        let (merchant, keyID) = try merchants.authenticatedSecretKey(secretKey)
        let token = try Identifiers.make("cst_", 43)
        let now = clock.now()
        let record = ConsoleSessionRecord(
            id: try Identifiers.make("cs_", 20), tokenHash: Identifiers.sha256Hex(token), merchantID: merchant.id,
            secretKeyID: keyID, createdAt: now, lastSeenAt: now, endedAt: nil)
        guard let expiresAt = consoleSessionExpiry(record, merchant: merchant, at: now) else {
            throw GatewayError(.invalidCredentials, "the secret key stopped working")
        }
        try write { tx in
            try tx.insertConsoleSession(record)
            try AuditLog.record(
                in: tx, merchantID: merchant.id, action: AuditLog.Action.consoleSignIn, target: record.id,
                detail: clientAddress.map { ["client_address": $0] } ?? [:], at: now,
                actor: ConsoleSessionRules.auditActor(sessionID: record.id))
        }
        return (consoleSession(record, merchant: Merchant(merchant), token: token, expiresAt: expiresAt), token)
    }

    /// The session whose token this is, marked as used now; `invalid_credentials` when it is unknown, signed
    /// out, ended with its merchant's other sessions, bound to a secret key that no longer works, idle for longer
    /// than ``ConsoleSessionRules/idleTimeout`` or older than ``GatewayConfiguration/consoleSessionLifetime``;
    /// `merchant_disabled` while its merchant is.
    public func consoleSession(token: String) throws(GatewayError) -> ConsoleSession {
        let refused = GatewayError(.invalidCredentials, "the console session is unknown, signed out or expired")
        guard ConsoleSessionRules.isWellFormed(token) else { throw refused }
        let now = clock.now()
        let hash = Identifiers.sha256Hex(token)
        guard var record = try read({ try $0.consoleSession(tokenHash: hash) }), record.endedAt == nil else {
            throw refused
        }
        let merchantRecord = try merchants.record(record.merchantID)
        let merchant = try MerchantRegistry.enabled(merchantRecord)
        guard consoleSessionExpiry(record, merchant: merchantRecord, at: now) != nil else { throw refused }
        if now.timeIntervalSince(record.lastSeenAt) >= ConsoleSessionRules.touchInterval {
            record.lastSeenAt = now
            try write { try $0.updateConsoleSession(record) }
        }
        let expiresAt = consoleSessionExpiry(record, merchant: merchantRecord, at: now) ?? now
        return consoleSession(record, merchant: merchant, token: token, expiresAt: expiresAt)
    }

    /// Ends the session on the server: its cookie is refused from now on, on every instance; recorded in the
    /// audit log as `console.sign_out`.
    public func signOutOfConsole(token: String) throws(GatewayError) {
        _ = try consoleSession(token: token)
        let hash = Identifiers.sha256Hex(token)
        let now = clock.now()
        try write { tx in
            guard var record = try tx.consoleSession(tokenHash: hash), record.endedAt == nil else { return }
            record.endedAt = now
            try tx.updateConsoleSession(record)
            try AuditLog.record(
                in: tx, merchantID: record.merchantID, action: AuditLog.Action.consoleSignOut, target: record.id,
                at: now, actor: ConsoleSessionRules.auditActor(sessionID: record.id))
        }
    }

    /// "Sign out everywhere" from the console: ends every session of the merchant of the session whose token
    /// this is, that one included; returns how many (``MerchantRegistry/endConsoleSessions(merchantID:reason:scope:)``).
    public func signOutOfConsoleEverywhere(token: String) throws(GatewayError) -> Int {
        let session = try consoleSession(token: token)
        return try merchants.endConsoleSessions(
            merchantID: session.merchant.id, reason: .signOutEverywhere,
            scope: RequestScope(actor: ConsoleSessionRules.auditActor(sessionID: session.id)))
    }

    private func consoleSessionExpiry(_ record: ConsoleSessionRecord, merchant: MerchantRecord, at now: Date) -> Date? {
        ConsoleSessionRules.expiry(
            of: record, merchant: merchant, lifetime: configuration.consoleSessionLifetime, at: now)
    }

    private func consoleSession(
        _ record: ConsoleSessionRecord, merchant: Merchant, token: String, expiresAt: Date
    ) -> ConsoleSession {
        ConsoleSession(
            id: record.id, merchant: merchant, csrfToken: ConsoleSessionRules.csrfToken(sessionToken: token),
            expiresAt: expiresAt)
    }
}

extension MerchantRegistry {
    /// Ends every console session of the merchant, in one transaction with the audit entry
    /// `console.sessions_end` (`reason`, `sessions`); returns how many. `merchant_not_found` for an unknown id.
    @discardableResult
    public func endConsoleSessions(
        merchantID: String, reason: ConsoleSessionRules.EndReason, scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> Int {
        let now = clock.now()
        return try gatewayThrowing {
            try store.write { tx in
                guard try tx.merchant(id: merchantID) != nil else {
                    throw GatewayError(.merchantNotFound, "no merchant \(merchantID)")
                }
                return try Self.endConsoleSessions(
                    in: tx, merchantID: merchantID, reason: reason, at: now, by: requestScope.actor, always: true)
            }
        }
    }

    /// Ends the merchant's console sessions in `tx` and records it by `actor` (when any ended, or `always`);
    /// returns how many.
    static func endConsoleSessions(
        in tx: any StoreTransaction, merchantID: String, reason: ConsoleSessionRules.EndReason, at now: Date,
        by actor: AuditActor, always: Bool = false
    ) throws -> Int {
        let ended = try tx.endConsoleSessions(merchantID: merchantID, at: now)
        if ended > 0 || always {
            try AuditLog.record(
                in: tx, merchantID: merchantID, action: AuditLog.Action.consoleSessionsEnd,
                detail: ["reason": reason.rawValue, "sessions": String(ended)], at: now, actor: actor)
        }
        return ended
    }
}
