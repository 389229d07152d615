import Foundation
import Gateway

// MARK: - Events, deliveries and counts (read in the domain's transactions)

extension SQLiteTransaction {
    func eventPage(
        merchantID: String, type: String?, objectID: String?, after cursor: EventCursor?, limit: Int
    ) throws
        -> [EventRecord]
    {
        var sql = "SELECT \(EventRecord.storeColumns) FROM webhook_events e WHERE e.merchant_id = ?"
        var values: [SQLValue] = [.text(merchantID)]
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
            values += [SQLValue(cursor.createdAt), SQLValue(cursor.createdAt), .text(cursor.id)]
        }
        sql += " ORDER BY e.created_at DESC, e.id DESC LIMIT ?"
        values.append(SQLValue(limit))
        return try db.query(sql, values) { EventRecord(row: $0) }
    }

    func eventRecord(id: String) throws -> EventRecord? {
        try db.query("SELECT \(EventRecord.storeColumns) FROM webhook_events e WHERE e.id = ?", [.text(id)]) {
            EventRecord(row: $0)
        }.first
    }

    func webhookAttempts(eventID: String) throws -> [WebhookAttempt] {
        try db.query(
            "SELECT \(WebhookAttempt.storeColumns) FROM webhook_attempts WHERE event_id = ? ORDER BY seq",
            [.text(eventID)]
        ) { WebhookAttempt(row: $0, eventID: eventID) }
    }

    func webhookState(eventID: String) throws -> (state: WebhookDeliveryState, attempts: Int)? {
        try db.query("SELECT state, attempts FROM webhook_events WHERE id = ?", [.text(eventID)]) {
            (WebhookDeliveryState(rawValue: $0.text(0)) ?? .pending, Int($0.int(1)))
        }.first
    }

    func pendingWebhookCount() throws -> Int {
        try db.query("SELECT COUNT(*) FROM webhook_events WHERE state = 'pending'") { Int($0.int(0)) }.first ?? 0
    }

    func paymentCountsByStatus() throws -> [PaymentStatus: Int] {
        let rows = try db.query("SELECT status, COUNT(*) FROM payments GROUP BY status") {
            ($0.text(0), Int($0.int(1)))
        }
        return PaymentStatus.counts(rows)
    }

    func eventDeliveryURL(eventID: String) throws -> String? {
        try db.query(
            """
            SELECT COALESCE(e.delivery_url, m.webhook_url) FROM webhook_events e
            JOIN merchants m ON m.id = e.merchant_id WHERE e.id = ?
            """, [.text(eventID)]
        ) { $0.optionalText(0) }.first ?? nil
    }

    func rescheduleEvent(id: String, at now: Date) throws -> Bool {
        try db.run(
            "UPDATE webhook_events SET state = 'pending', next_attempt_at = ? WHERE id = ?", [SQLValue(now), .text(id)])
            == 1
    }
}
