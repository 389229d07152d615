import Foundation
import Gateway

// MARK: - Webhook outbox

extension PostgresStore {
    /// Claims the due events for `lease`'s owner: rows locked `FOR UPDATE SKIP LOCKED` (so instances polling at
    /// once take different events) are leased to it until `now + lease.seconds`. The attempt recorded after
    /// delivery sets their real state; if this instance dies first, they are due again when the lease ends.
    public func dueWebhookRows(now: Date, limit: Int, lease: WebhookLease) throws -> [DueWebhookRow] {
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
                UPDATE webhook_events e SET next_attempt_at = $3, lease_owner = $4 FROM due, merchants m
                WHERE e.id = due.id AND m.id = e.merchant_id
                RETURNING e.id, e.merchant_id, e.type, e.payload, e.created_at, e.attempts,
                    COALESCE(e.delivery_url, m.webhook_url), m.webhook_secrets, due.next_attempt_at, due.seq
                """,
                [
                    .timestamptz(now), PGValue(limit), .timestamptz(now.addingTimeInterval(lease.seconds)),
                    .text(lease.owner),
                ]
            ) { row in
                (
                    event: WebhookEvent(row: row), attempts: Int(row.int(5)), url: row.text(6),
                    sealed: row.bytea(7), due: row.date(8), seq: row.int(9)
                )
            }
        }
        return rows.sorted { ($0.due, $0.seq) < ($1.due, $1.seq) }.map { row in
            DueWebhookRow(event: row.event, url: row.url, sealedSecrets: row.sealed, attempts: row.attempts)
        }
    }

    public func beginWebhookAttempt(eventID: String, now: Date, lease: WebhookLease) throws -> Int? {
        try transaction(.readCommitted) { tx in try tx.beginWebhookAttempt(eventID: eventID, now: now, lease: lease) }
    }

    public func recordWebhookAttempt(_ attempt: WebhookAttempt, lease: WebhookLease) throws {
        try transaction(.serializable) { tx in try tx.recordWebhookAttempt(attempt, lease: lease) }
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

    // The books' changes run READ COMMITTED: each is one conditional UPDATE, which PostgreSQL evaluates again on
    // the row a concurrent transaction just committed (no serialization failure to retry), and an operation id
    // is claimed by its primary key (a second claim waits for the first, then changes nothing).
    public func approvePendingAcquirerAuthorization(reference: String) throws -> Bool {
        try transaction(.readCommitted) { try $0.approvePendingAcquirerAuthorization(reference: reference) }
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
        try transaction(.readOnly) { try $0.acquirerOperationRow(id: id) }
    }

    public func bookAcquirerOperation(
        _ operation: SandboxOperation, entry: SandboxBookEntry?, declineCode: String
    ) throws -> SandboxOperation {
        try transaction(.readCommitted) {
            try $0.bookAcquirerOperation(operation, entry: entry, declineCode: declineCode)
        }
    }
}

// MARK: - The statements shared with the SQLite store (Gateway/StoreQueries.swift)

extension PostgresTransaction: StoreStatements {
    func query<T>(shared sql: String, _ values: [StoreValue], _ map: (any StoreRow) throws -> T) throws -> [T] {
        try db.query(numberedParameters(sql), values.map(PGValue.init)) { try map($0) }
    }

    func change(shared sql: String, _ values: [StoreValue]) throws -> Int {
        try db.change(numberedParameters(sql), values.map(PGValue.init))
    }
}
