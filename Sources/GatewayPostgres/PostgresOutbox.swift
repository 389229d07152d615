import Foundation
import Gateway

// MARK: - Webhook outbox

extension PostgresStore {
    /// Claims the due events for this instance: rows locked `FOR UPDATE SKIP LOCKED` (so instances polling at once
    /// take different events) are leased until `now +` ``Configuration/webhookLease``. The attempt recorded after
    /// delivery sets their real state; if this instance dies first, they are due again when the lease ends.
    public func dueWebhooks(now: Date, limit: Int) throws -> [DueWebhook] {
        let rows = try transaction(.readCommitted) { tx in
            try tx.db.query(
                """
                WITH due AS (
                    SELECT e.id, e.next_attempt_at, e.seq FROM webhook_events e
                    JOIN merchants m ON m.id = e.merchant_id
                    WHERE e.state = 'pending' AND e.next_attempt_at <= $1
                        AND (e.delivery_url IS NOT NULL OR (m.webhook_url IS NOT NULL AND m.webhook_enabled))
                    ORDER BY e.next_attempt_at, e.created_at, e.seq LIMIT $2
                    FOR UPDATE OF e SKIP LOCKED
                )
                UPDATE webhook_events e SET next_attempt_at = $3 FROM due, merchants m
                WHERE e.id = due.id AND m.id = e.merchant_id
                RETURNING e.id, e.merchant_id, e.type, e.payload, e.created_at, e.attempts,
                    COALESCE(e.delivery_url, m.webhook_url), m.webhook_secrets, due.next_attempt_at, due.seq
                """,
                [.timestamptz(now), PGValue(limit), .timestamptz(now.addingTimeInterval(configuration.webhookLease))]
            ) { row in
                (
                    event: WebhookEvent(row: row), attempts: Int(row.int(5)), url: row.text(6),
                    sealed: row.bytea(7), due: row.date(8), seq: row.int(9)
                )
            }
        }
        var secretsByMerchant: [String: [String]] = [:]
        return try rows.sorted { ($0.due, $0.seq) < ($1.due, $1.seq) }.map { row in
            if secretsByMerchant[row.event.merchantID] == nil {
                var secrets: [String] = []
                if let sealed = row.sealed, let cipher {
                    secrets = try WebhookSecretRing.secrets(
                        sealed: sealed, merchantID: row.event.merchantID, cipher: cipher, at: now)
                }
                secretsByMerchant[row.event.merchantID] = secrets
            }
            return DueWebhook(
                event: row.event, url: row.url, secrets: secretsByMerchant[row.event.merchantID] ?? [],
                attempts: row.attempts)
        }
    }

    public func recordWebhookAttempt(_ attempt: WebhookAttempt) throws {
        try transaction(.serializable) { tx in
            try tx.db.run(
                """
                INSERT INTO webhook_attempts (event_id, attempted_at, http_status, error, state, latency_ms)
                VALUES ($1, $2, $3::int8::integer, $4, $5, $6::int8::integer)
                """,
                [
                    .text(attempt.eventID), .timestamptz(attempt.attemptedAt),
                    PGValue(attempt.httpStatus.map(Int64.init)), PGValue(attempt.error), .text(attempt.state.rawValue),
                    PGValue(attempt.latencyMilliseconds.map(Int64.init)),
                ])
            try tx.db.run(
                "UPDATE webhook_events SET state = $1, attempts = attempts + 1, next_attempt_at = $2 WHERE id = $3",
                [.text(attempt.state.rawValue), PGValue(attempt.nextAttemptAt), .text(attempt.eventID)])
        }
    }

    public func scheduleRedelivery(eventID: String, merchantID: String, now: Date) throws {
        let changed = try transaction(.serializable) { tx in
            let url = try tx.db.query(
                """
                SELECT COALESCE(e.delivery_url, m.webhook_url) FROM webhook_events e
                JOIN merchants m ON m.id = e.merchant_id WHERE e.id = $1 AND e.merchant_id = $2
                """, [.text(eventID), .text(merchantID)]
            ) { $0.optionalText(0) }
            guard let found = url.first else { return 0 }
            guard found != nil else {
                throw GatewayError(.webhookEndpointNotConfigured, "no webhook endpoint nor notify_url for this event")
            }
            return try tx.db.change(
                "UPDATE webhook_events SET state = 'pending', next_attempt_at = $1 WHERE id = $2 AND merchant_id = $3",
                [.timestamptz(now), .text(eventID), .text(merchantID)])
        }
        guard changed == 1 else { throw GatewayError(.notFound, "no such event", param: "event_id") }
    }

    public func pendingWebhookCount() throws -> Int {
        try transaction(.readOnly) { tx in
            try tx.db.query("SELECT COUNT(*) FROM webhook_events WHERE state = 'pending'") { Int($0.int(0)) }.first
                ?? 0
        }
    }

    /// The recorded delivery attempts of an event, oldest first.
    public func webhookAttempts(eventID: String) throws -> [WebhookAttempt] {
        try transaction(.readOnly) { tx in
            try tx.db.query(
                "SELECT \(WebhookAttempt.storeColumns) FROM webhook_attempts WHERE event_id = $1 ORDER BY seq",
                [.text(eventID)]
            ) { WebhookAttempt(row: $0, eventID: eventID) }
        }
    }

    /// An event's delivery state and attempt count.
    public func webhookState(eventID: String) throws -> (state: WebhookDeliveryState, attempts: Int)? {
        try transaction(.readOnly) { tx in
            try tx.db.query("SELECT state, attempts FROM webhook_events WHERE id = $1", [.text(eventID)]) {
                (WebhookDeliveryState(rawValue: $0.text(0)) ?? .pending, Int($0.int(1)))
            }.first
        }
    }
}

// MARK: - Sandbox acquirer ledger

extension PostgresStore {
    public func insertAcquirerAuthorization(_ a: SandboxAuthorization) throws {
        try transaction(.serializable) { tx in
            try tx.db.run(
                """
                INSERT INTO sandbox_acquirer_authorizations (\(SandboxAuthorization.storeColumns))
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
                """,
                [
                    .text(a.reference), .text(a.merchantReference), .text(a.merchantID), .int8(a.amount),
                    .text(a.currency), .text(a.lastFour), .text(a.status.rawValue), PGValue(a.declineCode),
                    .text(a.authCode), .int8(a.capturedAmount), .int8(a.refundedAmount), .bool(a.voided),
                    .timestamptz(a.createdAt), PGValue(a.resolvesAt),
                ])
        }
    }

    public func updateAcquirerAuthorization(_ a: SandboxAuthorization) throws {
        try transaction(.serializable) { tx in try updateAuthorizationRow(a, in: tx) }
    }

    private func updateAuthorizationRow(_ a: SandboxAuthorization, in tx: PostgresTransaction) throws {
        try tx.db.run(
            """
            UPDATE sandbox_acquirer_authorizations SET status = $1, decline_code = $2, captured_amount = $3,
                refunded_amount = $4, voided = $5 WHERE reference = $6
            """,
            [
                .text(a.status.rawValue), PGValue(a.declineCode), .int8(a.capturedAmount), .int8(a.refundedAmount),
                .bool(a.voided), .text(a.reference),
            ])
    }

    public func acquirerAuthorizations(merchantReference: String) throws -> [SandboxAuthorization] {
        try transaction(.readOnly) { tx in
            try tx.db.query(
                """
                SELECT \(SandboxAuthorization.storeColumns) FROM sandbox_acquirer_authorizations WHERE merchant_reference = $1
                ORDER BY created_at, seq
                """, [.text(merchantReference)]
            ) { SandboxAuthorization(row: $0) }
        }
    }

    public func acquirerAuthorization(reference: String) throws -> SandboxAuthorization? {
        try transaction(.readOnly) { tx in
            try tx.db.query(
                "SELECT \(SandboxAuthorization.storeColumns) FROM sandbox_acquirer_authorizations WHERE reference = $1",
                [.text(reference)]
            ) { SandboxAuthorization(row: $0) }.first
        }
    }

    public func acquirerOperation(id: String) throws -> SandboxOperation? {
        try transaction(.readOnly) { tx in
            try tx.db.query(
                """
                SELECT id, reference, kind, amount, succeeded, decline_code, created_at FROM sandbox_acquirer_operations
                WHERE id = $1
                """, [.text(id)]
            ) { row in
                SandboxOperation(
                    id: row.text(0), reference: row.text(1), kind: row.text(2), amount: row.int(3),
                    succeeded: row.bool(4), declineCode: row.optionalText(5), createdAt: row.date(6))
            }.first
        }
    }

    public func applyAcquirerOperation(_ operation: SandboxOperation, authorization: SandboxAuthorization?) throws {
        try transaction(.serializable) { tx in
            try tx.db.run(
                """
                INSERT INTO sandbox_acquirer_operations (id, reference, kind, amount, succeeded, decline_code, created_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7)
                """,
                [
                    .text(operation.id), .text(operation.reference), .text(operation.kind), .int8(operation.amount),
                    .bool(operation.succeeded), PGValue(operation.declineCode), .timestamptz(operation.createdAt),
                ])
            if let authorization { try updateAuthorizationRow(authorization, in: tx) }
        }
    }
}

// MARK: - Operations queries

extension PostgresStore: OperationsQueries {
    private static let eventColumns = """
        e.id, e.merchant_id, e.type, e.payload, e.created_at, e.state, e.attempts, e.next_attempt_at,
        (SELECT a.http_status FROM webhook_attempts a WHERE a.event_id = e.id ORDER BY a.seq DESC LIMIT 1)
        """

    public func eventPage(
        merchantID: String, type: String?, objectID: String?, after cursor: EventCursor?, limit: Int
    ) throws
        -> [EventRecord]
    {
        var sql = "SELECT \(Self.eventColumns) FROM webhook_events e WHERE e.merchant_id = $1"
        var values: [PGValue] = [.text(merchantID)]
        if let type {
            values.append(.text(type))
            sql += " AND e.type = $\(values.count)"
        }
        if let objectID {
            values.append(.text(objectID))
            sql += " AND e.object_id = $\(values.count)"
        }
        if let cursor {
            values += [.timestamptz(cursor.createdAt), .text(cursor.id)]
            let at = values.count - 1
            sql += " AND (e.created_at < $\(at) OR (e.created_at = $\(at) AND e.id < $\(at + 1)))"
        }
        values.append(PGValue(limit))
        sql += " ORDER BY e.created_at DESC, e.id DESC LIMIT $\(values.count)"
        return try transaction(.readOnly) { tx in try tx.db.query(sql, values) { EventRecord(row: $0) } }
    }

    public func eventRecord(id: String) throws -> EventRecord? {
        try transaction(.readOnly) { tx in
            try tx.db.query("SELECT \(Self.eventColumns) FROM webhook_events e WHERE e.id = $1", [.text(id)]) {
                EventRecord(row: $0)
            }.first
        }
    }

    public func paymentCountsByStatus() throws -> [PaymentStatus: Int] {
        let rows = try transaction(.readOnly) { tx in
            try tx.db.query("SELECT status, COUNT(*) FROM payments GROUP BY status") { ($0.text(0), Int($0.int(1))) }
        }
        var counts: [PaymentStatus: Int] = [:]
        for (status, count) in rows { if let status = PaymentStatus(rawValue: status) { counts[status] = count } }
        return counts
    }
}
