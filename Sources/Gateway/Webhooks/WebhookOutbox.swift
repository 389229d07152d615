import Foundation
import OrchardCrypto

/// An event the gateway reports to a merchant's webhook endpoint. It is written to the outbox in the
/// same database transaction as the state change it reports, then delivered at least once.
public struct WebhookEvent: Sendable, Hashable, Codable {
    /// The event id (`evt_…`), sent in the body for deduplication.
    public var id: String
    /// The merchant the event belongs to.
    public var merchantID: String
    /// The event type, e.g. `payment.succeeded`.
    public var type: String
    /// The JSON body delivered, exactly as signed.
    public var payload: Data
    /// When the event was created (the state change's time).
    public var createdAt: Date

    public init(id: String, merchantID: String, type: String, payload: Data, createdAt: Date) {
        self.id = id
        self.merchantID = merchantID
        self.type = type
        self.payload = payload
        self.createdAt = createdAt
    }
}

/// Event types the gateway emits; the raw value is the `type` an event carries on the wire and in the store.
public enum WebhookEventType: String, Sendable, Hashable, CaseIterable {
    case paymentSucceeded = "payment.succeeded"
    case paymentFailed = "payment.failed"
    case paymentCaptured = "payment.captured"
    case paymentRefunded = "payment.refunded"
    case paymentVoided = "payment.voided"
    case paymentUnknownResolved = "payment.unknown_resolved"
    /// A capture the processor had accepted (or reported done) was refused or failed: the payment is authorized
    /// again.
    case paymentCaptureFailed = "payment.capture_failed"
    /// A void the processor had accepted was refused: the payment is authorized again.
    case paymentVoidFailed = "payment.void_failed"
    /// A refund the processor had accepted was refused, or one it had made failed or was reversed.
    case refundFailed = "refund.failed"
    /// The cardholder's bank took the payment back.
    case paymentChargedBack = "payment.charged_back"
    case sessionCompleted = "session.completed"
    // Declared in the order the documentation lists them: `allCases` is that order.
}

/// Where an event's delivery stands.
public enum WebhookDeliveryState: String, Sendable, Codable, CaseIterable {
    /// Waiting for its next attempt.
    case pending
    /// A 2xx answer ended delivery.
    case delivered
    /// Every attempt of the retry schedule failed; only a manual redelivery sends it again.
    case dead
}

/// How an event is signed and acknowledged.
public enum WebhookForm: Sendable, Hashable {
    /// Orchard's event: `Orchard-Signature` with the merchant's secrets; a 2xx answer delivers it.
    case orchard
    /// PayerMax's result notification: this `sign` header (the gateway's SHA256withRSA over the body); a 2xx
    /// answer whose body is `{"code":"SUCCESS",…}` delivers it.
    case payerMax(sign: String)

    /// Whether an answer with `status` and `body` ends delivery.
    public func acknowledges(status: Int, body: Data) -> Bool {
        switch self {
        case .orchard: (200...299).contains(status)
        case .payerMax: PayerMaxNotification.isAcknowledged(status: status, body: body)
        }
    }
}

/// One event due for delivery, with what is needed to send it.
public struct DueWebhook: Sendable {
    public var event: WebhookEvent
    /// The merchant's endpoint URL at the time of delivery.
    public var url: String
    /// The signing secrets in force (several during a rotation; each gives a `v1=` signature).
    public var secrets: [String]
    /// Attempts already made when the event was claimed (the attempt's own number comes from
    /// ``WebhookOutbox/beginWebhookAttempt(eventID:now:)``, which counts any made since).
    public var attempts: Int
    /// How it is signed and acknowledged.
    public var form: WebhookForm

    public init(event: WebhookEvent, url: String, secrets: [String], attempts: Int, form: WebhookForm = .orchard) {
        self.event = event
        self.url = url
        self.secrets = secrets
        self.attempts = attempts
        self.form = form
    }
}

/// One event due for delivery as a store hands it out: the merchant's signing secrets still sealed (a store
/// persists and never decrypts; ``StoreWebhookOutbox`` opens them).
public struct DueWebhookRow: Sendable {
    public var event: WebhookEvent
    /// The endpoint URL (the event's own notify_url, else the merchant's endpoint) at the time of delivery.
    public var url: String
    /// The merchant's ``MerchantRecord/webhookSecretsSealed``.
    public var sealedSecrets: Data?
    /// Attempts already made.
    public var attempts: Int

    public init(event: WebhookEvent, url: String, sealedSecrets: Data?, attempts: Int) {
        self.event = event
        self.url = url
        self.sealedSecrets = sealedSecrets
        self.attempts = attempts
    }
}

/// The outcome of one delivery attempt, as the dispatcher records it.
public struct WebhookAttempt: Sendable, Hashable, Codable {
    public var eventID: String
    public var attemptedAt: Date
    /// The HTTP status answered, if the request got an answer.
    public var httpStatus: Int?
    /// A short transport error (no secrets, no body), if the request failed.
    public var error: String?
    /// The state after this attempt.
    public var state: WebhookDeliveryState
    /// When to try again, for `pending`.
    public var nextAttemptAt: Date?
    /// How long the request took, in milliseconds (nil for attempts recorded before it was kept).
    public var latencyMilliseconds: Int?

    public init(
        eventID: String, attemptedAt: Date, httpStatus: Int?, error: String?, state: WebhookDeliveryState,
        nextAttemptAt: Date?, latencyMilliseconds: Int? = nil
    ) {
        self.eventID = eventID
        self.attemptedAt = attemptedAt
        self.httpStatus = httpStatus
        self.error = error
        self.state = state
        self.nextAttemptAt = nextAttemptAt
        self.latencyMilliseconds = latencyMilliseconds
    }
}

/// A hold on claimed events: who holds them and for how long. An event claimed under a lease is due for no one
/// else until the lease ends; before each send the holder renews it, and sends nothing whose lease another
/// holder has taken over meanwhile.
public struct WebhookLease: Sendable, Hashable {
    /// The holder: one value per outbox (instance), random, never shown.
    public var owner: String
    /// How long a claim or a renewal holds the event, in seconds; longer than one send's timeout.
    public var seconds: TimeInterval

    /// A lease held by `owner` for `seconds` at a time.
    public init(owner: String, seconds: TimeInterval) {
        self.owner = owner
        self.seconds = seconds
    }

    /// A lease with a fresh random owner.
    public static func random(seconds: TimeInterval = defaultSeconds) -> WebhookLease {
        WebhookLease(owner: "lease_" + UUID().uuidString.lowercased(), seconds: seconds)
    }

    /// The default hold, 60 seconds: six times the default send timeout, and renewed before every send.
    public static let defaultSeconds: TimeInterval = 60
}

/// The storage side of webhook delivery, as the dispatcher sees it. The gateway's is ``StoreWebhookOutbox``.
public protocol WebhookOutbox: Sendable {
    /// Claims the pending events whose next attempt is due at `now` and whose merchant has an endpoint, oldest
    /// first, under this outbox's lease: until it ends (or the events are attempted) they are due for no other
    /// outbox.
    func dueWebhooks(now: Date, limit: Int) throws -> [DueWebhook]
    /// Renews this outbox's lease on a claimed event and counts the attempt about to be made, atomically;
    /// returns the attempt's number (1 for the first, counting attempts whose sender died before recording
    /// them), or `nil` when the event must not be sent: another outbox has taken it over after the lease
    /// ended, or it is no longer pending.
    func beginWebhookAttempt(eventID: String, now: Date) throws -> Int?
    /// Records an attempt begun with ``beginWebhookAttempt(eventID:now:)`` and moves the event to the
    /// attempt's state, atomically; the state is left to the new holder when the lease was taken over
    /// meanwhile (the attempt itself is recorded either way).
    func recordWebhookAttempt(_ attempt: WebhookAttempt) throws
}

/// The gateway's outbox: due events from the ``Store``, with each merchant's secret ring opened here, in the
/// domain (the store hands it out sealed), and attempts recorded in the store.
public struct StoreWebhookOutbox: WebhookOutbox {
    let store: any Store
    let cipher: EnvelopeCipher
    /// The lease this outbox claims events under.
    public let lease: WebhookLease

    /// An outbox over `store` whose merchants' secret rings `cipher` opens, claiming under `lease` (by default
    /// a fresh owner, ``WebhookLease/defaultSeconds``).
    public init(store: any Store, cipher: EnvelopeCipher, lease: WebhookLease = .random()) {
        self.store = store
        self.cipher = cipher
        self.lease = lease
    }

    public func dueWebhooks(now: Date, limit: Int) throws -> [DueWebhook] {
        var secretsByMerchant: [String: [String]] = [:]
        var payerMaxKey: EVPKey?
        return try store.dueWebhookRows(now: now, limit: limit, lease: lease).map { row in
            if row.event.type == PayerMaxNotification.eventType {
                let key = try payerMaxKey ?? PayerMaxSigningKey.load(store: store, cipher: cipher)
                payerMaxKey = key
                return DueWebhook(
                    event: row.event, url: row.url, secrets: [], attempts: row.attempts,
                    form: .payerMax(sign: try PayerMaxNotification.sign(row.event.payload, key: key)))
            }
            let merchantID = row.event.merchantID
            if secretsByMerchant[merchantID] == nil {
                secretsByMerchant[merchantID] =
                    try row.sealedSecrets.map {
                        try WebhookSecretRing.secrets(sealed: $0, merchantID: merchantID, cipher: cipher, at: now)
                    } ?? []
            }
            return DueWebhook(
                event: row.event, url: row.url, secrets: secretsByMerchant[merchantID] ?? [], attempts: row.attempts)
        }
    }

    public func beginWebhookAttempt(eventID: String, now: Date) throws -> Int? {
        try store.beginWebhookAttempt(eventID: eventID, now: now, lease: lease)
    }

    public func recordWebhookAttempt(_ attempt: WebhookAttempt) throws {
        try store.recordWebhookAttempt(attempt, lease: lease)
    }
}
