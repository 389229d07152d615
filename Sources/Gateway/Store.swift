import Foundation

/// The gateway's storage. The domain opens explicit transactions and states the rules; a store only
/// reads and writes rows. Implementations: `SQLiteStore` (GatewaySQLite), `PostgresStore` (GatewayPostgres).
///
/// Every mutation the domain makes inside one ``write(_:)`` call commits atomically, including the
/// webhook event rows that report it (the transactional outbox) and the idempotency recovery point.
public protocol Store: Sendable, SandboxAcquirerLedger {
    /// Runs `body` in a write transaction (serialized with other writers); commits when it returns,
    /// rolls back when it throws.
    func write<T>(_ body: (any StoreTransaction) throws -> T) throws -> T
    /// Runs `body` in a read transaction (a consistent snapshot).
    func read<T>(_ body: (any StoreTransaction) throws -> T) throws -> T
    /// Whether the database answers now (one attempt, no waiting for it to come back): `/readyz`.
    func isReachable() -> Bool

    // MARK: Webhook delivery (the dispatcher's, through ``StoreWebhookOutbox``)
    /// Claims the pending events whose next attempt is due at `now` and whose merchant has an endpoint, oldest
    /// first, with the merchant's secret ring as sealed: each is leased to `lease`'s owner until
    /// `now + lease.seconds` (its `next_attempt_at`), so that no other caller claims it meanwhile.
    func dueWebhookRows(now: Date, limit: Int, lease: WebhookLease) throws -> [DueWebhookRow]
    /// If the event is pending and still leased to `lease`'s owner (the lease may have ended, as long as nobody
    /// claimed the event since), renews the lease from `now` and counts one more attempt, atomically: the
    /// attempt's number; else `nil`, and nothing changes.
    func beginWebhookAttempt(eventID: String, now: Date, lease: WebhookLease) throws -> Int?
    /// Records an attempt and, while the event is leased to `lease`'s owner, moves it to the attempt's state
    /// and releases the lease, atomically. The attempt was counted by ``beginWebhookAttempt(eventID:now:lease:)``.
    func recordWebhookAttempt(_ attempt: WebhookAttempt, lease: WebhookLease) throws
}

extension Store {
    /// Whether an empty read transaction succeeds.
    public func isReachable() -> Bool { (try? read { _ in true }) ?? false }
}

/// The rows the domain reads and writes inside a transaction. Amounts are integer minor units, times UTC.
public protocol StoreTransaction {
    // MARK: Settings (the sealed sandbox PKI …)
    func setting(_ name: String) throws -> Data?
    func setSetting(_ name: String, value: Data) throws
    /// Adds the setting unless one of that name exists (names are unique); false when it existed.
    func insertSetting(_ name: String, value: Data) throws -> Bool
    /// The names of the settings that start with `prefix`, in order.
    func settingNames(prefix: String) throws -> [String]

    // MARK: Merchants and keys
    func insertMerchant(_ merchant: MerchantRecord) throws
    func updateMerchant(_ merchant: MerchantRecord) throws
    func merchant(id: String) throws -> MerchantRecord?
    func merchant(appID: String) throws -> MerchantRecord?
    /// The merchant whose TapPay numeric app id (``MerchantRecord/tappayAppID``) this is.
    func merchant(tappayAppID: Int) throws -> MerchantRecord?
    func merchant(secretKeyID: String) throws -> MerchantRecord?
    func merchants(environment: GatewayEnvironment) throws -> [MerchantRecord]
    func insertProcessingKey(_ key: ProcessingKeyRecord) throws
    func updateProcessingKey(_ key: ProcessingKeyRecord) throws
    func processingKeys(merchantID: String) throws -> [ProcessingKeyRecord]
    /// Replaces the merchant's BIN table.
    func replaceBINTable(merchantID: String, entries: [BINEntry]) throws
    /// Entries whose prefix is one of `prefixes`.
    func binEntries(merchantID: String, prefixes: [String]) throws -> [BINEntry]
    /// Replaces the merchant's co-brand table.
    func replaceCoBrandTable(merchantID: String, ranges: [CoBrandRange]) throws
    /// Codes of the ranges containing `bin` (an 8-digit number).
    func coBrandCodes(merchantID: String, bin: Int64) throws -> [String]
    /// The merchant's co-brand table, ordered by low BIN, high BIN, then code.
    func coBrandRanges(merchantID: String) throws -> [CoBrandRange]

    // MARK: Token replay
    /// Records a token transactionId; false when it was already recorded for this merchant and environment.
    func recordTransactionID(
        merchantID: String, environment: GatewayEnvironment, transactionID: String, at: Date
    )
        throws -> Bool

    // MARK: Primes
    func insertPrime(_ prime: PrimeRecord) throws
    func prime(hash: String) throws -> PrimeRecord?
    /// Marks the prime used by `paymentID` and drops its sealed card data; false when it was already used.
    func claimPrime(hash: String, paymentID: String, at: Date) throws -> Bool
    /// Drops the sealed card data of unclaimed primes that expired before `now`; returns how many.
    func purgeExpiredPrimes(now: Date) throws -> Int

    // MARK: Order sessions
    /// Inserts the session; false when the merchant already has a session with its out_trade_no.
    func insertSession(_ session: OrderSession) throws -> Bool
    func session(orderToken: String) throws -> OrderSession?
    func session(id: String) throws -> OrderSession?
    func updateSession(_ session: OrderSession) throws

    // MARK: Payments
    func insertPayment(_ payment: Payment) throws
    func updatePayment(_ payment: Payment) throws
    /// The payment without its refunds.
    func payment(id: String) throws -> Payment?
    /// Newest first, `limit` rows at most, after `cursor`.
    func payments(
        merchantID: String, environment: GatewayEnvironment, query: PaymentQuery, after: PaymentCursor?
    )
        throws -> [Payment]
    /// Ids of payments in one of `statuses` last updated before `updatedBefore`.
    func paymentIDs(statuses: [PaymentStatus], updatedBefore: Date, limit: Int) throws -> [String]
    /// Ids of payments with a pending capture/void or whose automatic capture is due.
    func paymentIDsNeedingCapture(due: Date, limit: Int) throws -> [String]
    func insertTransition(_ transition: PaymentTransition) throws
    func transitions(paymentID: String) throws -> [PaymentTransition]
    /// Stores (or with nil, deletes) the payment's sealed card data.
    func setCardData(paymentID: String, sealed: Data?) throws
    func cardData(paymentID: String) throws -> Data?
    /// The merchant's payments created in `[from, to)`, counted by time bucket (`bucketSeconds` wide, numbered
    /// from 0 at `from`), currency, status and failure code, with the sum of their amounts.
    func paymentTally(
        merchantID: String, environment: GatewayEnvironment, from: Date, to: Date, bucketSeconds: Int
    ) throws -> [PaymentTallyRow]

    // MARK: Refunds
    func insertRefund(_ refund: Refund) throws
    func updateRefund(_ refund: Refund) throws
    func refunds(paymentID: String) throws -> [Refund]
    /// Ids of payments with a pending refund.
    func paymentIDsWithPendingRefunds(limit: Int) throws -> [String]

    // MARK: Outbox
    /// Adds an event about `objectID` (a payment or session id) to the outbox, pending and due at its
    /// creation time. `deliveryURL` (a session's notify_url) replaces the merchant's endpoint for it.
    func insertEvent(_ event: WebhookEvent, objectID: String, deliveryURL: String?) throws
    /// The merchant's events, newest first.
    func events(merchantID: String, limit: Int) throws -> [WebhookEvent]
    func event(id: String) throws -> WebhookEvent?
    /// The merchant's events with their delivery state, newest first (creation time, then id, descending),
    /// optionally of one type and about one object (a payment or session id), strictly after `cursor`, at
    /// most `limit`.
    func eventPage(
        merchantID: String, type: String?, objectID: String?, after cursor: EventCursor?, limit: Int
    ) throws -> [EventRecord]
    /// One event with its delivery state.
    func eventRecord(id: String) throws -> EventRecord?
    /// The recorded delivery attempts of an event, oldest first.
    func webhookAttempts(eventID: String) throws -> [WebhookAttempt]
    /// An event's delivery state and attempt count.
    func webhookState(eventID: String) throws -> (state: WebhookDeliveryState, attempts: Int)?
    /// The number of pending events (the webhook backlog metric).
    func pendingWebhookCount() throws -> Int
    /// Where the event is delivered: its own URL (a session's notify_url) or else its merchant's endpoint;
    /// nil when it has neither (or there is no such event).
    func eventDeliveryURL(eventID: String) throws -> String?
    /// Makes the event pending again, due at `now`; false when there is no such event.
    func rescheduleEvent(id: String, at now: Date) throws -> Bool

    // MARK: Idempotency
    /// Inserts the key's row unless one exists (`INSERT … ON CONFLICT DO NOTHING`); true when inserted.
    func claimIdempotencyKey(_ record: IdempotencyRecord) throws -> Bool
    func idempotencyRecord(
        merchantID: String, environment: GatewayEnvironment, key: String
    ) throws
        -> IdempotencyRecord?
    func updateIdempotencyRecord(_ record: IdempotencyRecord) throws
    func deleteIdempotencyRecord(merchantID: String, environment: GatewayEnvironment, key: String) throws
    /// Deletes finished records created before `before`; returns how many.
    func purgeIdempotencyRecords(before: Date) throws -> Int
    /// A transport's answer kept for an idempotency key (sealed), stored under `name`.
    func storedResponse(_ name: String) throws -> Data?
    /// Keeps a transport's answer (sealed) under `name`, replacing any; `createdAt` lets it be purged.
    func setStoredResponse(_ name: String, value: Data, createdAt: Date) throws
    /// Deletes kept answers created before `before`; returns how many.
    func purgeStoredResponses(before: Date) throws -> Int

    // MARK: Processor settings
    /// Stores a new version of a merchant's processor settings (a version is never changed).
    func insertProcessorSettings(_ settings: ProcessorSettingsRecord) throws
    /// The merchant's processor settings of `version`, or with nil the latest version.
    func processorSettings(merchantID: String, version: Int?) throws -> ProcessorSettingsRecord?
    /// The merchant's latest processor settings of connector `type`.
    func processorSettings(merchantID: String, type: String) throws -> ProcessorSettingsRecord?

    // MARK: Processor notifications
    /// Records a notification item; false when the merchant already has one with its processor and event key (a
    /// duplicate, `INSERT … ON CONFLICT DO NOTHING`).
    func insertProcessorNotification(_ notification: ProcessorNotificationRecord) throws -> Bool
    /// Writes a recorded item's payment and outcome.
    func updateProcessorNotification(_ notification: ProcessorNotificationRecord) throws
    /// The merchant's recorded items, newest first.
    func processorNotifications(merchantID: String, limit: Int) throws -> [ProcessorNotificationRecord]
    /// The merchant's payment that processor `acquirer` knows by `acquirerReference`.
    func payment(merchantID: String, acquirer: String, acquirerReference: String) throws -> Payment?

    // MARK: Audit log
    /// Adds an entry to the audit log (``AuditLog/record(in:merchantID:action:target:detail:at:actor:)``).
    func insertAuditEntry(_ entry: AuditEntry) throws
    /// The merchant's audit entries, newest first (creation time, then id, descending), strictly after
    /// `after`, at most `limit`.
    func auditEntries(merchantID: String, after: AuditCursor?, limit: Int) throws -> [AuditEntry]

    // MARK: Audit
    /// Per-payment facts the ledger audit checks.
    func auditRows() throws -> [AuditRow]
    /// How many payments are in each status (all merchants and environments).
    func paymentCountsByStatus() throws -> [PaymentStatus: Int]

    // MARK: Console sessions
    func insertConsoleSession(_ session: ConsoleSessionRecord) throws
    func consoleSession(tokenHash: String) throws -> ConsoleSessionRecord?
    /// Writes the session's last use and end.
    func updateConsoleSession(_ session: ConsoleSessionRecord) throws
    /// Ends every session of the merchant not ended yet, at `at`; returns how many.
    func endConsoleSessions(merchantID: String, at: Date) throws -> Int
    /// Deletes the sessions last used before `lastSeenBefore` (ended or expired by then); returns how many.
    func purgeConsoleSessions(lastSeenBefore: Date) throws -> Int
}

/// A merchant as stored: public fields plus hashes and sealed secrets.
public struct MerchantRecord: Sendable, Hashable, Codable {
    public var id: String
    public var environment: GatewayEnvironment
    public var name: String
    /// ISO 3166 alpha-2 of the merchant.
    public var countryCode: String
    /// Apple merchant identifiers (`merchant.com.example`).
    public var merchantIdentifiers: [String]
    /// ISO 4217 alphabetic codes; empty means any.
    public var allowedCurrencies: [String]
    /// Apple Pay network names; empty means any.
    public var allowedNetworks: [String]
    /// Origins allowed by CORS for the client routes.
    public var webOrigins: [String]
    public var webhookURL: String?
    /// Whether deliveries to ``webhookURL`` go out (`PUT /v1/webhook-endpoint` `enabled`); held events stay
    /// pending.
    public var webhookEnabled: Bool {
        get { webhookHeld != true }
        set { webhookHeld = newValue ? nil : true }
    }
    /// Stored form of ``webhookEnabled`` (absent in records written before the flag existed).
    var webhookHeld: Bool?
    /// The webhook signing secrets (newest first, with their retirement times), sealed (``WebhookSecretRing``).
    public var webhookSecretsSealed: Data?
    public var appID: String
    /// Lowercase hex SHA-256 of the app key.
    public var appKeyHash: String
    /// Public part of the secret key, used to find the merchant.
    public var secretKeyID: String
    /// Lowercase hex SHA-256 of the secret key.
    public var secretKeyHash: String
    /// The secret key replaced by the last rotation, while its overlap lasts: its key id (a column, so the
    /// merchant is found by either key), its hash and the end of its overlap.
    public var previousSecretKeyID: String?
    public var previousSecretKeyHash: String?
    public var previousSecretKeyExpiresAt: Date?
    /// When the merchant was disabled (`orchard merchant disable`); nil while it is enabled. A disabled merchant's
    /// requests are refused with `merchant_disabled`; its data stays.
    public var disabledAt: Date?
    /// Sandbox only: the app key and secret key sealed, so `orchard merchant show` can print them.
    public var credentialsSealed: Data?
    /// Merchant Identity certificate (PEM) and its sealed private key, for Apple Pay on the Web.
    public var identityCertificatePEM: String?
    public var identityKeySealed: Data?
    /// The domains registered for Apple Pay on the Web (lower-case host names); absent in records written before
    /// they existed.
    public var applePayDomains: [String]?
    /// The alias TapPay-style calls may send as `merchant_id` (`PUT /v1/compat/tappay`); nil when none is set.
    public var tappayMerchantAlias: String?
    /// TapPay's numeric app id for this merchant (`PUT /v1/compat/tappay {"app_id": 12345}`): orchard.js's
    /// `setupSDK(12345, …)` sends it as the app id. Unique among merchants; nil when none is set.
    public var tappayAppID: Int?
    /// The merchant's PayerMax registration (`PUT /v1/compat/payermax`): its `merchantNo` and the RSA public key
    /// (PEM) that verifies its signed envelopes; nil when none is set.
    public var payerMax: PayerMaxRegistration?
    public var createdAt: Date

    public init(
        id: String, environment: GatewayEnvironment, name: String, countryCode: String, merchantIdentifiers: [String],
        allowedCurrencies: [String], allowedNetworks: [String], webOrigins: [String], webhookURL: String?,
        webhookSecretsSealed: Data?, appID: String, appKeyHash: String, secretKeyID: String, secretKeyHash: String,
        credentialsSealed: Data?, identityCertificatePEM: String?, identityKeySealed: Data?, createdAt: Date
    ) {
        self.id = id
        self.environment = environment
        self.name = name
        self.countryCode = countryCode
        self.merchantIdentifiers = merchantIdentifiers
        self.allowedCurrencies = allowedCurrencies
        self.allowedNetworks = allowedNetworks
        self.webOrigins = webOrigins
        self.webhookURL = webhookURL
        self.webhookSecretsSealed = webhookSecretsSealed
        self.appID = appID
        self.appKeyHash = appKeyHash
        self.secretKeyID = secretKeyID
        self.secretKeyHash = secretKeyHash
        self.credentialsSealed = credentialsSealed
        self.identityCertificatePEM = identityCertificatePEM
        self.identityKeySealed = identityKeySealed
        self.createdAt = createdAt
    }
}

extension MerchantRecord {
    /// The secret key named by `keyID` when it works at `now` — the current key (no end), or the key the last
    /// rotation replaced, until its overlap ends — with its hash and that end; nil for any other key. Everything
    /// bound to a key (an API request, a console session) ends with it, derived from these fields alone.
    func workingSecretKey(_ keyID: String, at now: Date) -> (hash: String, until: Date?)? {
        if keyID == secretKeyID { return (secretKeyHash, nil) }
        guard keyID == previousSecretKeyID, let until = previousSecretKeyExpiresAt, now < until,
            let hash = previousSecretKeyHash
        else { return nil }
        return (hash, until)
    }
}

/// A Payment Processing key in a merchant's key ring.
public struct ProcessingKeyRecord: Sendable, Hashable, Codable {
    public var id: String
    public var merchantID: String
    /// The sealed private key PEM.
    public var privateKeySealed: Data
    public var certificatePEM: String
    /// Active keys open tokens; several may be active during a rotation.
    public var active: Bool
    public var createdAt: Date

    public init(
        id: String, merchantID: String, privateKeySealed: Data, certificatePEM: String, active: Bool, createdAt: Date
    ) {
        self.id = id
        self.merchantID = merchantID
        self.privateKeySealed = privateKeySealed
        self.certificatePEM = certificatePEM
        self.active = active
        self.createdAt = createdAt
    }
}

/// One row of a merchant's BIN table.
public struct BINEntry: Sendable, Hashable, Codable {
    /// 4 to 11 digits.
    public var prefix: String
    public var issuer: String?
    public var bankID: String?
    public var level: String?
    public var country: String?
    public var countryCode: String?
    /// 0 credit, 1 debit, 2 prepaid, -1 unknown (overrides the token's).
    public var funding: Int?
    /// The issuer's name in Traditional Chinese.
    public var issuerZhTW: String?

    public init(
        prefix: String, issuer: String? = nil, bankID: String? = nil, level: String? = nil, country: String? = nil,
        countryCode: String? = nil, funding: Int? = nil, issuerZhTW: String? = nil
    ) {
        self.prefix = prefix
        self.issuer = issuer
        self.bankID = bankID
        self.level = level
        self.country = country
        self.countryCode = countryCode
        self.funding = funding
        self.issuerZhTW = issuerZhTW
    }
}

/// A co-brand range: BINs from `low` to `high` (8-digit numbers, inclusive) carry `code`.
public struct CoBrandRange: Sendable, Hashable, Codable {
    public var low: Int64
    public var high: Int64
    /// At most 20 ASCII letters or digits.
    public var code: String

    public init(low: Int64, high: Int64, code: String) {
        self.low = low
        self.high = high
        self.code = code
    }
}

/// One group of ``StoreTransaction/paymentTally(merchantID:environment:from:to:bucketSeconds:)``.
public struct PaymentTallyRow: Sendable, Hashable {
    /// The bucket's number: 0 for the one starting at the tally's `from`.
    public var bucket: Int
    /// ISO 4217 alphabetic code.
    public var currency: String
    public var status: PaymentStatus
    /// The payments' failure code (the processor's decline code or a short cause), when they have one.
    public var failureCode: String?
    /// How many payments the group has.
    public var count: Int
    /// The sum of their authorized amounts, in minor units.
    public var amount: Int64

    public init(
        bucket: Int, currency: String, status: PaymentStatus, failureCode: String?, count: Int, amount: Int64
    ) {
        self.bucket = bucket
        self.currency = currency
        self.status = status
        self.failureCode = failureCode
        self.count = count
        self.amount = amount
    }
}

/// A prime as stored (the prime itself only as its SHA-256).
public struct PrimeRecord: Sendable, Hashable, Codable {
    public var hash: String
    public var merchantID: String
    public var environment: GatewayEnvironment
    /// The token's amount (minor units) and currency (alphabetic).
    public var amount: Int64
    public var currency: String
    public var isDeferred: Bool
    public var cardInfo: CardInfo
    /// The sealed card data (account number, expiry, cryptogram, ECI); nil once claimed or expired.
    public var cardDataSealed: Data?
    public var createdAt: Date
    public var expiresAt: Date
    public var claimedAt: Date?
    public var paymentID: String?

    public init(
        hash: String, merchantID: String, environment: GatewayEnvironment, amount: Int64, currency: String,
        isDeferred: Bool, cardInfo: CardInfo, cardDataSealed: Data?, createdAt: Date, expiresAt: Date, claimedAt: Date?,
        paymentID: String?
    ) {
        self.hash = hash
        self.merchantID = merchantID
        self.environment = environment
        self.amount = amount
        self.currency = currency
        self.isDeferred = isDeferred
        self.cardInfo = cardInfo
        self.cardDataSealed = cardDataSealed
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.claimedAt = claimedAt
        self.paymentID = paymentID
    }
}

/// An idempotency key's row: the request's fingerprint, its recovery point and, once finished, its result.
public struct IdempotencyRecord: Sendable, Hashable, Codable {
    public var merchantID: String
    public var environment: GatewayEnvironment
    public var key: String
    /// The operation (`pay_by_prime`, `refund` …).
    public var operation: String
    /// SHA-256 of the request's parameters.
    public var fingerprint: String
    /// `started`, or the last atomic phase reached (e.g. `payment:pay_…`).
    public var recoveryPoint: String
    /// Set while a request holds the key; a stale lock may be taken over to resume.
    public var lockedAt: Date?
    /// The sealed stored result (success or error), once finished.
    public var responseSealed: Data?
    public var createdAt: Date

    public init(
        merchantID: String, environment: GatewayEnvironment, key: String, operation: String, fingerprint: String,
        recoveryPoint: String, lockedAt: Date?, responseSealed: Data?, createdAt: Date
    ) {
        self.merchantID = merchantID
        self.environment = environment
        self.key = key
        self.operation = operation
        self.fingerprint = fingerprint
        self.recoveryPoint = recoveryPoint
        self.lockedAt = lockedAt
        self.responseSealed = responseSealed
        self.createdAt = createdAt
    }
}

/// What the ledger audit reads per payment.
public struct AuditRow: Sendable, Hashable {
    public var paymentID: String
    public var status: PaymentStatus
    public var capturedAmount: Int64
    /// Sum of succeeded refunds, from the refund rows.
    public var refundedAmount: Int64
    /// Event types recorded for the payment.
    public var eventTypes: Set<String>
    /// How many authorizations the (sandbox) processor recorded for it.
    public var processorAuthorizations: Int
    /// How many captures the processor recorded as succeeded for it.
    public var processorCaptures: Int
    /// What the sandbox acquirer's books hold as captured and as refunded for it (0 without an authorization
    /// there: another processor's payment).
    public var processorCapturedAmount: Int64
    public var processorRefundedAmount: Int64
    /// Whether a capture, void or refund of it is still in flight (its outcome left to reconciliation), so the
    /// books may be ahead of the gateway for now.
    public var hasPendingOperation: Bool

    public init(
        paymentID: String, status: PaymentStatus, capturedAmount: Int64, refundedAmount: Int64,
        eventTypes: Set<String>, processorAuthorizations: Int, processorCaptures: Int,
        processorCapturedAmount: Int64 = 0, processorRefundedAmount: Int64 = 0, hasPendingOperation: Bool = false
    ) {
        self.paymentID = paymentID
        self.status = status
        self.capturedAmount = capturedAmount
        self.refundedAmount = refundedAmount
        self.eventTypes = eventTypes
        self.processorAuthorizations = processorAuthorizations
        self.processorCaptures = processorCaptures
        self.processorCapturedAmount = processorCapturedAmount
        self.processorRefundedAmount = processorRefundedAmount
        self.hasPendingOperation = hasPendingOperation
    }
}

/// A write a unique constraint refused, named by the constraint. Stores throw it instead of their own database
/// error where the domain has an answer for the conflict (``GatewayError/wrap(_:)`` turns it into that answer).
public struct StoreConflict: Error, Equatable, Sendable, CustomStringConvertible {
    /// A unique constraint the stores name: the same index name in both schemas.
    public struct Constraint: RawRepresentable, Hashable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// One payment per merchant and `bank_transaction_id` (index `payments_bank_transaction_id`).
        public static let paymentBankTransactionID = Constraint(rawValue: "payments_bank_transaction_id")
        /// One merchant per TapPay numeric app id (index `merchants_tappay_app_id`).
        public static let merchantTapPayAppID = Constraint(rawValue: "merchants_tappay_app_id")
    }

    /// The constraint the write violated.
    public var constraint: Constraint

    /// A conflict on `constraint`.
    public init(_ constraint: Constraint) { self.constraint = constraint }

    public var description: String { "unique constraint \(constraint.rawValue) violated" }

    /// The domain's answer to the conflict.
    package var gatewayError: GatewayError {
        switch constraint {
        case .paymentBankTransactionID:
            GatewayError(
                .duplicateBankTransactionID, "another payment has this bank_transaction_id",
                param: "bank_transaction_id")
        case .merchantTapPayAppID:
            GatewayError(.tappayAppIDTaken, "another merchant has this TapPay app id", param: "app_id")
        default: GatewayError(.storageFailure, description)
        }
    }
}
