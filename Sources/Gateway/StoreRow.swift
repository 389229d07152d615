import Foundation

/// A result row of a store, read by column position in the domain's types. Each backend converts its own
/// encodings (SQLite's integer milliseconds, PostgreSQL's binary `timestamptz`), so the mappings of rows to
/// records below are written once for both stores.
package protocol StoreRow {
    func text(_ column: Int) -> String
    func optionalText(_ column: Int) -> String?
    func int(_ column: Int) -> Int64
    func optionalInt(_ column: Int) -> Int64?
    func bool(_ column: Int) -> Bool
    func date(_ column: Int) -> Date
    func optionalDate(_ column: Int) -> Date?
    /// A blob (`bytea`) column; nil when NULL.
    func bytes(_ column: Int) -> Data?
}

extension WebhookEvent {
    /// An event from columns `id, merchant_id, type, payload, created_at` starting at `first`.
    package init(row: some StoreRow, from first: Int = 0) {
        self.init(
            id: row.text(first), merchantID: row.text(first + 1), type: row.text(first + 2),
            payload: row.bytes(first + 3) ?? Data(), createdAt: row.date(first + 4))
    }
}

extension EventRecord {
    /// An event and its delivery from the event's five columns, then `state, attempts, next_attempt_at,
    /// last_status` (the stores' `eventColumns`).
    package init(row: some StoreRow) {
        let state = WebhookDeliveryState(rawValue: row.text(5)) ?? .pending
        self.init(
            event: WebhookEvent(row: row),
            delivery: EventDelivery(
                state: state, attempts: Int(row.int(6)), nextAttemptAt: state == .pending ? row.optionalDate(7) : nil,
                lastStatus: row.optionalInt(8).map(Int.init)))
    }
}

extension WebhookAttempt {
    /// The columns of the attempt table, in the order ``init(row:eventID:)`` reads them.
    package static let storeColumns = "attempted_at, http_status, error, state, latency_ms"

    /// A recorded attempt of event `eventID` from the ``storeColumns``.
    package init(row: some StoreRow, eventID: String) {
        self.init(
            eventID: eventID, attemptedAt: row.date(0), httpStatus: row.optionalInt(1).map(Int.init),
            error: row.optionalText(2), state: WebhookDeliveryState(rawValue: row.text(3)) ?? .pending,
            nextAttemptAt: nil, latencyMilliseconds: row.optionalInt(4).map(Int.init))
    }
}

extension SandboxAuthorization {
    /// The columns of the sandbox acquirer's authorization table, in the order ``init(row:)`` reads them.
    package static let storeColumns = """
        reference, merchant_reference, merchant_id, amount, currency, last_four, status, decline_code, auth_code,
        captured_amount, refunded_amount, voided, created_at, resolves_at
        """

    /// An authorization from the ``storeColumns``.
    package init(row: some StoreRow) {
        self.init(
            reference: row.text(0), merchantReference: row.text(1), merchantID: row.text(2), amount: row.int(3),
            currency: row.text(4), lastFour: row.text(5),
            status: SandboxAuthorization.Status(rawValue: row.text(6)) ?? .declined, declineCode: row.optionalText(7),
            authCode: row.text(8), capturedAmount: row.int(9), refundedAmount: row.int(10), voided: row.bool(11),
            createdAt: row.date(12), resolvesAt: row.optionalDate(13))
    }
}

extension AuditEntry {
    /// The columns of the audit log table, in the order ``init(row:)`` reads them.
    package static let storeColumns = "id, merchant_id, actor_kind, actor_name, action, target, detail, created_at"

    /// The detail as the stores keep it: a JSON object of strings, keys sorted.
    package var detailJSON: String {
        let data = (try? JSONSerialization.data(withJSONObject: detail, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// An entry from the ``storeColumns``.
    package init(row: some StoreRow) {
        let detail = (try? JSONSerialization.jsonObject(with: Data(row.text(6).utf8))) as? [String: String]
        self.init(
            id: row.text(0), merchantID: row.text(1), actor: AuditActor(kind: row.text(2), name: row.text(3)),
            action: row.text(4), target: row.optionalText(5), detail: detail ?? [:], createdAt: row.date(7))
    }
}
