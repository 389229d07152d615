import Foundation

/// What a store's transaction offers to run the statements both stores share: SQL whose parameters are written
/// `?` (in order), with values in the domain's types. Each backend binds them its own way (PostgreSQL numbers
/// the `?`s `$1`, `$2`, …), so a statement the two dialects write alike is written once, here.
package protocol StoreStatements {
    /// Runs a query and maps each row.
    func query<T>(shared sql: String, _ values: [StoreValue], _ map: (any StoreRow) throws -> T) throws -> [T]
    /// Runs a change and returns the number of rows it changed.
    func change(shared sql: String, _ values: [StoreValue]) throws -> Int
}

/// PostgreSQL's numbered form of a shared statement: each `?` becomes `$1`, `$2`, … in order. (The shared
/// statements hold no `?` of their own in literals or operators.)
package func numberedParameters(_ sql: String) -> String {
    var result = ""
    result.reserveCapacity(sql.utf8.count + 8)
    var number = 0
    for character in sql {
        if character == "?" {
            number += 1
            result += "$\(number)"
        } else {
            result.append(character)
        }
    }
    return result
}

// MARK: - Events, deliveries and counts (read in the domain's transactions)

extension StoreStatements {
    package func eventPage(
        merchantID: String, type: String?, objectID: String?, after cursor: EventCursor?, limit: Int
    ) throws -> [EventRecord] {
        var sql = "SELECT \(EventRecord.storeColumns) FROM webhook_events e WHERE e.merchant_id = ?"
        var values: [StoreValue] = [.text(merchantID)]
        if let type {
            sql += " AND e.type = ?"
            values.append(.text(type))
        }
        if let objectID {
            sql += " AND e.object_id = ?"
            values.append(.text(objectID))
        }
        if let cursor {
            sql += " AND (e.created_at < ? OR (e.created_at = ? AND e.id < ?))"
            values += [.date(cursor.createdAt), .date(cursor.createdAt), .text(cursor.id)]
        }
        sql += " ORDER BY e.created_at DESC, e.id DESC LIMIT ?"
        values.append(.integer(Int64(limit)))
        return try query(shared: sql, values) { EventRecord(row: $0) }
    }

    package func event(id: String) throws -> WebhookEvent? {
        try query(
            shared: "SELECT id, merchant_id, type, payload, created_at FROM webhook_events WHERE id = ?", [.text(id)]
        ) { WebhookEvent(row: $0) }.first
    }

    package func eventRecord(id: String) throws -> EventRecord? {
        try query(shared: "SELECT \(EventRecord.storeColumns) FROM webhook_events e WHERE e.id = ?", [.text(id)]) {
            EventRecord(row: $0)
        }.first
    }

    package func webhookAttempts(eventID: String) throws -> [WebhookAttempt] {
        try query(
            shared: "SELECT \(WebhookAttempt.storeColumns) FROM webhook_attempts WHERE event_id = ? ORDER BY seq",
            [.text(eventID)]
        ) { WebhookAttempt(row: $0, eventID: eventID) }
    }

    package func webhookState(eventID: String) throws -> (state: WebhookDeliveryState, attempts: Int)? {
        try query(shared: "SELECT state, attempts FROM webhook_events WHERE id = ?", [.text(eventID)]) {
            (WebhookDeliveryState(rawValue: $0.text(0)) ?? .pending, Int($0.int(1)))
        }.first
    }

    /// ``StoreTransaction/auditRows()``: per payment, what the gateway recorded and what the sandbox acquirer's
    /// books hold for it.
    package func auditRows() throws -> [AuditRow] {
        var events: [String: Set<String>] = [:]
        for (object, type) in try query(shared: "SELECT object_id, type FROM webhook_events", [], {
            ($0.text(0), $0.text(1))
        }) {
            events[object, default: []].insert(type)
        }
        return try query(
            shared: """
                SELECT p.id, p.status, p.captured_amount,
                    (SELECT CAST(COALESCE(SUM(r.amount), 0) AS BIGINT) FROM refunds r
                        WHERE r.payment_id = p.id AND r.status = 'succeeded'),
                    (SELECT COUNT(*) FROM sandbox_acquirer_authorizations a WHERE a.merchant_reference = p.id),
                    (SELECT COUNT(*) FROM sandbox_acquirer_operations o
                        JOIN sandbox_acquirer_authorizations a ON a.reference = o.reference
                        WHERE a.merchant_reference = p.id AND o.kind = 'capture' AND o.succeeded = ?),
                    (SELECT CAST(COALESCE(SUM(a.captured_amount), 0) AS BIGINT) FROM sandbox_acquirer_authorizations a
                        WHERE a.merchant_reference = p.id),
                    (SELECT CAST(COALESCE(SUM(a.refunded_amount), 0) AS BIGINT) FROM sandbox_acquirer_authorizations a
                        WHERE a.merchant_reference = p.id),
                    p.pending_kind IS NOT NULL
                        OR EXISTS (SELECT 1 FROM refunds r WHERE r.payment_id = p.id AND r.status = 'pending')
                FROM payments p ORDER BY p.created_at, p.id
                """, [.bool(true)]
        ) { row in
            AuditRow(
                paymentID: row.text(0), status: PaymentStatus(rawValue: row.text(1)) ?? .unknown,
                capturedAmount: row.int(2), refundedAmount: row.int(3), eventTypes: events[row.text(0)] ?? [],
                processorAuthorizations: Int(row.int(4)), processorCaptures: Int(row.int(5)),
                processorCapturedAmount: row.int(6), processorRefundedAmount: row.int(7), hasPendingOperation: row.bool(8))
        }
    }

    package func pendingWebhookCount() throws -> Int {
        try query(shared: "SELECT COUNT(*) FROM webhook_events WHERE state = 'pending'", []) { Int($0.int(0)) }
            .first ?? 0
    }

    package func paymentCountsByStatus() throws -> [PaymentStatus: Int] {
        let rows = try query(shared: "SELECT status, COUNT(*) FROM payments GROUP BY status", []) {
            ($0.text(0), Int($0.int(1)))
        }
        return PaymentStatus.counts(rows)
    }

    package func eventDeliveryURL(eventID: String) throws -> String? {
        try query(
            shared: """
                SELECT COALESCE(e.delivery_url, m.webhook_url) FROM webhook_events e
                JOIN merchants m ON m.id = e.merchant_id WHERE e.id = ?
                """, [.text(eventID)]
        ) { $0.optionalText(0) }.first ?? nil
    }

    // MARK: The outbox's leases (the dispatcher's steps, in transactions of their own)

    /// ``Store/beginWebhookAttempt(eventID:now:lease:)``: renews the lease from `now` and counts the attempt,
    /// only while the event is pending and leased to `lease`'s owner.
    package func beginWebhookAttempt(eventID: String, now: Date, lease: WebhookLease) throws -> Int? {
        try query(
            shared: """
                UPDATE webhook_events SET attempts = attempts + 1, next_attempt_at = ?
                WHERE id = ? AND state = 'pending' AND lease_owner = ? RETURNING attempts
                """, [.date(now.addingTimeInterval(lease.seconds)), .text(eventID), .text(lease.owner)]
        ) { Int($0.int(0)) }.first
    }

    /// ``Store/recordWebhookAttempt(_:lease:)``: the attempt's row, and the event's new state while the lease is
    /// still `lease`'s.
    package func recordWebhookAttempt(_ attempt: WebhookAttempt, lease: WebhookLease) throws {
        _ = try change(
            shared: """
                INSERT INTO webhook_attempts (event_id, attempted_at, http_status, error, state, latency_ms)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
            [
                .text(attempt.eventID), .date(attempt.attemptedAt), .integer(attempt.httpStatus.map(Int64.init)),
                .text(attempt.error), .text(attempt.state.rawValue),
                .integer(attempt.latencyMilliseconds.map(Int64.init)),
            ])
        _ = try change(
            shared: """
                UPDATE webhook_events SET state = ?, next_attempt_at = ?, lease_owner = NULL
                WHERE id = ? AND lease_owner = ?
                """,
            [.text(attempt.state.rawValue), .date(attempt.nextAttemptAt), .text(attempt.eventID), .text(lease.owner)])
    }

    package func rescheduleEvent(id: String, at now: Date) throws -> Bool {
        try change(
            shared: "UPDATE webhook_events SET state = 'pending', next_attempt_at = ? WHERE id = ?",
            [.date(now), .text(id)]) == 1
    }
}

// MARK: - Console sessions

extension StoreStatements {
    package func insertConsoleSession(_ session: ConsoleSessionRecord) throws {
        _ = try change(
            shared: "INSERT INTO console_sessions (\(ConsoleSessionRecord.storeColumns)) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                .text(session.id), .text(session.tokenHash), .text(session.merchantID), .date(session.createdAt),
                .date(session.lastSeenAt), .date(session.endedAt), .text(session.secretKeyID),
            ])
    }

    package func consoleSession(tokenHash: String) throws -> ConsoleSessionRecord? {
        try query(
            shared: "SELECT \(ConsoleSessionRecord.storeColumns) FROM console_sessions WHERE token_hash = ?",
            [.text(tokenHash)]
        ) { ConsoleSessionRecord(row: $0) }.first
    }

    package func updateConsoleSession(_ session: ConsoleSessionRecord) throws {
        _ = try change(
            shared: "UPDATE console_sessions SET last_seen_at = ?, ended_at = ? WHERE id = ?",
            [.date(session.lastSeenAt), .date(session.endedAt), .text(session.id)])
    }

    package func endConsoleSessions(merchantID: String, at now: Date) throws -> Int {
        try change(
            shared: "UPDATE console_sessions SET ended_at = ? WHERE merchant_id = ? AND ended_at IS NULL",
            [.date(now), .text(merchantID)])
    }

    package func purgeConsoleSessions(lastSeenBefore: Date) throws -> Int {
        try change(shared: "DELETE FROM console_sessions WHERE last_seen_at < ?", [.date(lastSeenBefore)])
    }
}

// MARK: - Processor settings

extension StoreStatements {
    package func insertProcessorSettings(_ settings: ProcessorSettingsRecord) throws {
        _ = try change(
            shared:
                "INSERT INTO processor_settings (\(ProcessorSettingsRecord.storeColumns)) VALUES (?, ?, ?, ?, ?, ?, ?)",
            settings.storeValues)
    }

    package func processorSettings(merchantID: String, version: Int?) throws -> ProcessorSettingsRecord? {
        var sql = "SELECT \(ProcessorSettingsRecord.storeColumns) FROM processor_settings WHERE merchant_id = ?"
        var values: [StoreValue] = [.text(merchantID)]
        if let version {
            sql += " AND version = ?"
            values.append(.integer(Int64(version)))
        }
        sql += " ORDER BY version DESC LIMIT 1"
        return try query(shared: sql, values) { ProcessorSettingsRecord(row: $0) }.first
    }
}

extension StoreStatements {
    package func processorSettings(merchantID: String, type: String) throws -> ProcessorSettingsRecord? {
        try query(
            shared: """
                SELECT \(ProcessorSettingsRecord.storeColumns) FROM processor_settings WHERE merchant_id = ? AND type = ?
                ORDER BY version DESC LIMIT 1
                """, [.text(merchantID), .text(type)]
        ) { ProcessorSettingsRecord(row: $0) }.first
    }

    package func payment(merchantID: String, acquirer: String, acquirerReference: String) throws -> Payment? {
        try query(
            shared: """
                SELECT \(Payment.storeColumns.joined(separator: ", ")) FROM payments
                WHERE merchant_id = ? AND acquirer = ? AND acquirer_reference = ?
                """, [.text(merchantID), .text(acquirer), .text(acquirerReference)]
        ) { Payment(row: $0) }.first
    }
}

// MARK: - Processor notifications

extension StoreStatements {
    package func insertProcessorNotification(_ notification: ProcessorNotificationRecord) throws -> Bool {
        try change(
            shared: """
                INSERT INTO processor_notifications (\(ProcessorNotificationRecord.storeColumns))
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (merchant_id, processor, event_key) DO NOTHING
                """, notification.storeValues) == 1
    }

    package func updateProcessorNotification(_ notification: ProcessorNotificationRecord) throws {
        _ = try change(
            shared: "UPDATE processor_notifications SET payment_id = ?, outcome = ? WHERE id = ?",
            [.text(notification.paymentID), .text(notification.outcome), .text(notification.id)])
    }

    package func processorNotifications(merchantID: String, limit: Int) throws -> [ProcessorNotificationRecord] {
        try query(
            shared: """
                SELECT \(ProcessorNotificationRecord.storeColumns) FROM processor_notifications WHERE merchant_id = ?
                ORDER BY received_at DESC, id DESC LIMIT ?
                """, [.text(merchantID), .integer(Int64(limit))]
        ) { ProcessorNotificationRecord(row: $0) }
    }
}
