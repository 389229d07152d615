import Foundation

/// Where an event's delivery stands, as `GET /v1/events` shows it.
public struct EventDelivery: Sendable, Hashable {
    public var state: WebhookDeliveryState
    /// Attempts made so far.
    public var attempts: Int
    /// When the next attempt is due; nil unless pending.
    public var nextAttemptAt: Date?
    /// The HTTP status of the last attempt; nil before the first or when it got no answer.
    public var lastStatus: Int?

    public init(state: WebhookDeliveryState, attempts: Int, nextAttemptAt: Date?, lastStatus: Int?) {
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastStatus = lastStatus
    }
}

/// An outbox event with its delivery state.
public struct EventRecord: Sendable, Hashable {
    public var event: WebhookEvent
    public var delivery: EventDelivery

    public init(event: WebhookEvent, delivery: EventDelivery) {
        self.event = event
        self.delivery = delivery
    }
}

/// A position in the newest-first event listing (creation time, then id).
public struct EventCursor: Sendable, Hashable, ListingCursor {
    public var createdAt: Date
    public var id: String

    public init(createdAt: Date, id: String) {
        self.createdAt = createdAt
        self.id = id
    }
}

extension GatewayService {

    /// Payments in each status, for the metrics endpoint.
    public func paymentCountsByStatus() throws(GatewayError) -> [PaymentStatus: Int] {
        try read { try $0.paymentCountsByStatus() }
    }

    /// Whether the store answers a read.
    public func storeIsReachable() -> Bool {
        store.isReachable()
    }
}

extension Webhooks {
    /// One page of the merchant's events with their delivery state, newest first, and the cursor of the next;
    /// with `objectID`, only the events about that payment or session.
    public func eventPage(
        merchant: Merchant, type: String?, objectID: String? = nil, limit: Int, cursor: String?
    ) throws(GatewayError) -> (
        events: [EventRecord], nextCursor: String?
    ) {
        guard FieldLimits.pageSize.contains(limit) else {
            throw .invalid("limit", FieldLimits.text(FieldLimits.pageSize))
        }
        let after = try EventCursor.parse(cursor, param: "cursor")
        let rows = try read { tx in
            try tx.eventPage(merchantID: merchant.id, type: type, objectID: objectID, after: after, limit: limit + 1)
        }
        let page = EventCursor.page(rows, limit: limit) { ($0.event.createdAt, $0.event.id) }
        return (page.rows, page.next)
    }

    /// Makes an event of this merchant pending again (due now) and returns it with its delivery state;
    /// `webhook_endpoint_not_configured` when it has nowhere to go.
    /// Under an idempotency key, a request holding the key makes the same key answer `idempotency_in_flight`
    /// (rescheduling is repeatable, so a resumed request simply reschedules again).
    public func redeliver(
        merchant: Merchant, eventID: String, idempotencyKey: String? = nil,
        scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> EventRecord {
        _ = try idempotent(
            merchant, key: idempotencyKey, operation: "redeliver_event", fingerprint: [eventID],
            requestScope: requestScope
        ) { _ throws(GatewayError) in
            try redeliverEvent(merchant: merchant, eventID: eventID)
            return true
        }
        guard let updated = try read({ try $0.eventRecord(id: eventID) }) else {
            throw GatewayError(.notFound, "no such event", param: "id")
        }
        return updated
    }

    /// The delivery attempts of one of the merchant's events, oldest first; `not_found` for another merchant's.
    public func webhookAttempts(merchant: Merchant, eventID: String) throws(GatewayError) -> [WebhookAttempt] {
        try read { tx in
            guard let event = try tx.event(id: eventID), event.merchantID == merchant.id else {
                throw GatewayError(.notFound, "no such event", param: "id")
            }
            return try tx.webhookAttempts(eventID: eventID)
        }
    }

    /// Events waiting for delivery (the webhook backlog).
    public func webhookBacklog() throws(GatewayError) -> Int {
        try read { try $0.pendingWebhookCount() }
    }

    /// The outbox the webhook dispatcher delivers from: this gateway's store, its secret rings opened with its
    /// cipher.
    public var webhookOutbox: StoreWebhookOutbox { StoreWebhookOutbox(store: store, cipher: cipher) }
}
