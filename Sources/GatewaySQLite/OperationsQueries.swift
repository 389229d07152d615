import Foundation
import Gateway

extension SQLiteStore: OperationsQueries {
    private static let eventColumns = """
        e.id, e.merchant_id, e.type, e.payload, e.created_at, e.state, e.attempts, e.next_attempt_at,
        (SELECT a.http_status FROM webhook_attempts a WHERE a.event_id = e.id ORDER BY a.seq DESC LIMIT 1)
        """

    public func eventPage(
        merchantID: String, type: String?, objectID: String?, after cursor: EventCursor?, limit: Int
    ) throws
        -> [EventRecord]
    {
        var sql = "SELECT \(Self.eventColumns) FROM webhook_events e WHERE e.merchant_id = ?"
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
        return try transaction("BEGIN") { tx in try tx.db.query(sql, values) { EventRecord(row: $0) } }
    }

    public func eventRecord(id: String) throws -> EventRecord? {
        try transaction("BEGIN") { tx in
            try tx.db.query("SELECT \(Self.eventColumns) FROM webhook_events e WHERE e.id = ?", [.text(id)]) {
                EventRecord(row: $0)
            }.first
        }
    }

    public func paymentCountsByStatus() throws -> [PaymentStatus: Int] {
        let rows = try transaction("BEGIN") { tx in
            try tx.db.query("SELECT status, COUNT(*) FROM payments GROUP BY status") {
                ($0.text(0), Int($0.int(1)))
            }
        }
        var counts: [PaymentStatus: Int] = [:]
        for (status, count) in rows { if let status = PaymentStatus(rawValue: status) { counts[status] = count } }
        return counts
    }
}
