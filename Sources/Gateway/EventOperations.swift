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

/// Read-side queries for operations and the events API that a ``Store`` may offer (the SQLite store does).
public protocol OperationsQueries: Sendable {
    /// The merchant's events, newest first (creation time, then id, descending), optionally of one type and
    /// about one object (a payment or session id), strictly after `cursor`, at most `limit`.
    func eventPage(
        merchantID: String, type: String?, objectID: String?, after cursor: EventCursor?, limit: Int
    ) throws -> [EventRecord]
    /// The recorded delivery attempts of an event, oldest first.
    func webhookAttempts(eventID: String) throws -> [WebhookAttempt]
    /// One event with its delivery state.
    func eventRecord(id: String) throws -> EventRecord?
    /// How many payments are in each status (all merchants and environments).
    func paymentCountsByStatus() throws -> [PaymentStatus: Int]
}

extension GatewayService {
    var operationsQueries: (any OperationsQueries)? { store as? any OperationsQueries }

    /// One page of the merchant's events with their delivery state, newest first, and the cursor of the next;
    /// with `objectID`, only the events about that payment or session.
    public func eventPage(
        merchant: Merchant, type: String?, objectID: String? = nil, limit: Int, cursor: String?
    ) throws(GatewayError) -> (
        events: [EventRecord], nextCursor: String?
    ) {
        guard FieldLimits.pageSize.contains(limit) else { throw .invalid("limit", "1 to 100") }
        var after: EventCursor?
        if let cursor {
            guard let parsed = EventCursor(text: cursor) else {
                throw GatewayError(.invalidCursor, "this cursor was not issued by this server", param: "cursor")
            }
            after = parsed
        }
        guard let queries = operationsQueries else {
            throw GatewayError(.internalError, "the store cannot list events")
        }
        let rows = try gatewayThrowing {
            try queries.eventPage(
                merchantID: merchant.id, type: type, objectID: objectID, after: after, limit: limit + 1)
        }
        let page = Array(rows.prefix(limit))
        let next =
            rows.count > limit
            ? page.last.map { EventCursor(createdAt: $0.event.createdAt, id: $0.event.id).text } : nil
        return (page, next)
    }

    /// Makes an event of this merchant pending again (due now) and returns it with its delivery state;
    /// `webhook_endpoint_not_configured` when it has nowhere to go.
    /// Under an idempotency key, a request holding the key makes the same key answer `idempotency_in_flight`
    /// (rescheduling is repeatable, so a resumed request simply reschedules again).
    public func redeliver(
        merchant: Merchant, eventID: String, idempotencyKey: String? = nil
    ) throws(GatewayError) -> EventRecord {
        guard let queries = operationsQueries else {
            throw GatewayError(.internalError, "the store cannot read events")
        }
        _ = try idempotent(merchant, key: idempotencyKey, operation: "redeliver_event", fingerprint: [eventID]) {
            _ throws(GatewayError) in
            try redeliverEvent(merchant: merchant, eventID: eventID)
            return true
        }
        guard let updated = try gatewayThrowing({ try queries.eventRecord(id: eventID) }) else {
            throw GatewayError(.notFound, "no such event", param: "id")
        }
        return updated
    }

    /// The delivery attempts of one of the merchant's events, oldest first; `not_found` for another merchant's.
    public func webhookAttempts(merchant: Merchant, eventID: String) throws(GatewayError) -> [WebhookAttempt] {
        guard let queries = operationsQueries else {
            throw GatewayError(.internalError, "the store cannot read events")
        }
        guard let record = try gatewayThrowing({ try queries.eventRecord(id: eventID) }),
            record.event.merchantID == merchant.id
        else { throw GatewayError(.notFound, "no such event", param: "id") }
        return try gatewayThrowing { try queries.webhookAttempts(eventID: eventID) }
    }

    /// Payments in each status, for the metrics endpoint (empty when the store cannot count).
    public func paymentCountsByStatus() throws(GatewayError) -> [PaymentStatus: Int] {
        guard let queries = operationsQueries else { return [:] }
        return try gatewayThrowing { try queries.paymentCountsByStatus() }
    }

    /// Events waiting for delivery (the webhook backlog).
    public func webhookBacklog() throws(GatewayError) -> Int {
        try gatewayThrowing { try store.pendingWebhookCount() }
    }

    /// Whether the store answers a read.
    public func storeIsReachable() -> Bool {
        store.isReachable()
    }
}
