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

    package func rescheduleEvent(id: String, at now: Date) throws -> Bool {
        try change(
            shared: "UPDATE webhook_events SET state = 'pending', next_attempt_at = ? WHERE id = ?",
            [.date(now), .text(id)]) == 1
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
