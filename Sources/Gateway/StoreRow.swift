import Foundation
import OrchardJSON

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

extension StoreRow {
    /// The column's text as a stored JSON object of strings (an audit entry's detail, a payment's metadata), read
    /// by the one parser; nil when the column is null or not such an object.
    func stringFields(_ column: Int) -> [String: String]? {
        guard let text = optionalText(column), let fields = (try? JSONValue.parse(Data(text.utf8)))?.fields else {
            return nil
        }
        var strings: [String: String] = [:]
        for (key, value) in fields {
            guard let string = value.string else { return nil }
            strings[key] = string
        }
        return strings
    }
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
    /// The columns of an event with its delivery (`e`, the event table; the last attempt's status from the
    /// attempt table), in the order ``init(row:)`` reads them.
    package static let storeColumns = """
        e.id, e.merchant_id, e.type, e.payload, e.created_at, e.state, e.attempts, e.next_attempt_at,
        (SELECT a.http_status FROM webhook_attempts a WHERE a.event_id = e.id ORDER BY a.seq DESC LIMIT 1)
        """

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

extension ConsoleSessionRecord {
    /// The columns of the console session table, in the order ``init(row:)`` reads them.
    package static let storeColumns = "id, token_hash, merchant_id, created_at, last_seen_at, ended_at, secret_key_id"

    /// A session from the ``storeColumns``.
    package init(row: some StoreRow) {
        self.init(
            id: row.text(0), tokenHash: row.text(1), merchantID: row.text(2), secretKeyID: row.text(6),
            createdAt: row.date(3), lastSeenAt: row.date(4), endedAt: row.optionalDate(5))
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
        String(decoding: (try? WireFormat.json(detail)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// An entry from the ``storeColumns``.
    package init(row: some StoreRow) {
        let detail = row.stringFields(6)
        self.init(
            id: row.text(0), merchantID: row.text(1), actor: AuditActor(kind: row.text(2), name: row.text(3)),
            action: row.text(4), target: row.optionalText(5), detail: detail ?? [:], createdAt: row.date(7))
    }
}

/// A value a store binds to a parameter, in the domain's types; each backend converts it to its own encoding
/// (SQLite: integer milliseconds and 0/1; PostgreSQL: `timestamptz` and `boolean`).
package enum StoreValue {
    case text(String?)
    case integer(Int64?)
    case bool(Bool)
    case date(Date?)
    /// Bytes (sealed secrets): a BLOB, a `bytea`.
    case blob(Data?)
}

extension Payment {
    /// The columns a payment is read from, in the order ``init(row:)`` reads them: every field in its own
    /// column (no document decoded per read; `metadata`, a free-form map, is JSON text and NULL when empty).
    package static let storeColumns = [
        "id", "merchant_id", "environment", "status", "amount", "currency", "captured_amount", "refunded_amount",
        "order_number", "out_trade_no", "session_id", "details", "cardholder", "cardholder_name", "cardholder_email",
        "cardholder_phone_number", "cardholder_zip_code", "cardholder_address", "cardholder_national_id", "metadata",
        "card_bin_code", "card_last_four", "card_type", "card_funding", "card_network", "card_issuer", "card_bank_id",
        "card_level", "card_country", "card_country_code", "card_issuer_zh_tw", "capture_mode",
        "capture_delay_days", "scheduled_capture_at", "auth_code", "acquirer", "acquirer_reference", "failure_code",
        "created_at", "updated_at", "authorized_at", "captured_at", "voided_at", "authorization_sent_at",
        "pending_kind", "pending_operation_id", "pending_amount", "processor_code", "processor_settings_version",
        "bank_transaction_id",
    ]

    /// The columns a store writes: ``storeColumns`` and the two the store's queries use (`pending_operation`,
    /// and `capture_at`, set only while the payment is authorized), with the values of ``storeValues``.
    package static let storeWriteColumns = storeColumns + ["pending_operation", "capture_at"]

    /// The columns fixed when a payment is made: its identity, order, cardholder, card and capture mode. An
    /// update writes only the others (``storeUpdateColumns``), so it leaves the listing index and the foreign
    /// keys, which read only fixed columns, untouched.
    package static let storeCreationColumns: Set<String> = [
        "id", "merchant_id", "environment", "amount", "currency", "order_number", "out_trade_no", "session_id",
        "details", "cardholder", "cardholder_name", "cardholder_email", "cardholder_phone_number",
        "cardholder_zip_code", "cardholder_address", "cardholder_national_id", "metadata", "card_bin_code",
        "card_last_four", "card_type", "card_funding", "card_network", "card_issuer", "card_bank_id", "card_level",
        "card_country", "card_country_code", "card_issuer_zh_tw", "capture_mode", "capture_delay_days",
        "created_at", "processor_settings_version", "bank_transaction_id",
    ]

    /// The positions in ``storeWriteColumns`` of the columns an update writes: every column but the
    /// ``storeCreationColumns``.
    private static let storeUpdatePositions = storeWriteColumns.indices.filter {
        !storeCreationColumns.contains(storeWriteColumns[$0])
    }

    /// The columns an update writes, in the order of ``storeUpdateValues``.
    package static let storeUpdateColumns = storeUpdatePositions.map { storeWriteColumns[$0] }

    /// The values of ``storeUpdateColumns``, in order.
    package var storeUpdateValues: [StoreValue] {
        let values = storeValues
        return Self.storeUpdatePositions.map { values[$0] }
    }

    /// The values of ``storeWriteColumns``, in order.
    package var storeValues: [StoreValue] {
        let card = cardInfo
        let mode: (String, Int64?) =
            switch captureMode {
            case .now: ("now", nil)
            case .manual: ("manual", nil)
            case .afterDays(let days): ("after_days", Int64(days))
            }
        let metadataText =
            metadata.isEmpty ? nil : (try? WireFormat.json(metadata)).map { String(decoding: $0, as: UTF8.self) }
        return [
            .text(id), .text(merchantID), .text(environment.rawValue), .text(status.rawValue), .integer(amount),
            .text(currency), .integer(capturedAmount), .integer(refundedAmount), .text(orderNumber), .text(outTradeNo),
            .text(sessionID), .text(details), .bool(cardholder != nil), .text(cardholder?.name),
            .text(cardholder?.email), .text(cardholder?.phoneNumber), .text(cardholder?.zipCode),
            .text(cardholder?.address), .text(cardholder?.nationalID), .text(metadataText), .text(card.binCode),
            .text(card.lastFour), .integer(Int64(card.type)), .integer(Int64(card.funding)), .text(card.network),
            .text(card.issuer), .text(card.bankID), .text(card.level), .text(card.country), .text(card.countryCode),
            .text(card.issuerZhTW), .text(mode.0), .integer(mode.1), .date(captureAt), .text(authCode),
            .text(acquirer), .text(acquirerReference), .text(failureCode), .date(createdAt), .date(updatedAt),
            .date(authorizedAt), .date(capturedAt), .date(voidedAt), .date(authorizationSentAt),
            .text(pendingOperation?.kind.rawValue), .text(pendingOperation?.operationID),
            .integer(pendingOperation?.amount), .text(processorCode),
            .integer(processorSettingsVersion.map(Int64.init)), .text(bankTransactionID),
            .bool(pendingOperation != nil), .date(status == .authorized ? captureAt : nil),
        ]
    }

    /// A payment from the ``storeColumns`` (its refunds empty: they are rows of their own).
    package init(row: some StoreRow) {
        let cardholder =
            row.bool(12)
            ? Cardholder(
                name: row.optionalText(13), email: row.optionalText(14), phoneNumber: row.optionalText(15),
                zipCode: row.optionalText(16), address: row.optionalText(17), nationalID: row.optionalText(18))
            : nil
        let metadata = row.stringFields(19) ?? [:]
        let captureMode: CaptureMode =
            switch row.text(31) {
            case "manual": .manual
            case "after_days": .afterDays(Int(row.optionalInt(32) ?? 0))
            default: .now
            }
        let pending = row.optionalText(44).flatMap(PendingOperation.Kind.init(rawValue:)).map {
            PendingOperation(kind: $0, operationID: row.optionalText(45) ?? "", amount: row.optionalInt(46) ?? 0)
        }
        self.init(
            id: row.text(0), merchantID: row.text(1),
            environment: GatewayEnvironment(rawValue: row.text(2)) ?? .sandbox,
            status: PaymentStatus(rawValue: row.text(3)) ?? .unknown, amount: row.int(4), currency: row.text(5),
            capturedAmount: row.int(6), refundedAmount: row.int(7), orderNumber: row.optionalText(8),
            outTradeNo: row.optionalText(9), sessionID: row.optionalText(10), details: row.optionalText(11),
            cardholder: cardholder, metadata: metadata,
            cardInfo: CardInfo(
                binCode: row.text(20), lastFour: row.text(21), type: Int(row.int(22)), funding: Int(row.int(23)),
                network: row.optionalText(24), issuer: row.optionalText(25), bankID: row.optionalText(26),
                level: row.optionalText(27), country: row.optionalText(28), countryCode: row.optionalText(29),
                issuerZhTW: row.optionalText(30)),
            captureMode: captureMode, captureAt: row.optionalDate(33), authCode: row.optionalText(34),
            acquirer: row.text(35), acquirerReference: row.optionalText(36), failureCode: row.optionalText(37),
            processorCode: row.optionalText(47),
            createdAt: row.date(38), updatedAt: row.date(39), authorizedAt: row.optionalDate(40),
            capturedAt: row.optionalDate(41), voidedAt: row.optionalDate(42), refunds: [],
            authorizationSentAt: row.optionalDate(43), pendingOperation: pending,
            processorSettingsVersion: row.optionalInt(48).map(Int.init), bankTransactionID: row.optionalText(49))
    }
}

extension Refund {
    /// The columns of the refund table, in the order ``init(row:)`` reads them and ``storeValues`` gives them.
    package static let storeColumns =
        "id, payment_id, amount, currency, status, reason, decline_code, created_at, updated_at, processor_reference"

    /// The values of ``storeColumns``, in order.
    package var storeValues: [StoreValue] {
        [
            .text(id), .text(paymentID), .integer(amount), .text(currency), .text(status.rawValue), .text(reason),
            .text(declineCode), .date(createdAt), .date(updatedAt), .text(processorReference),
        ]
    }

    /// A refund from the ``storeColumns``.
    package init(row: some StoreRow) {
        self.init(
            id: row.text(0), paymentID: row.text(1), amount: row.int(2), currency: row.text(3),
            status: Refund.Status(rawValue: row.text(4)) ?? .pending, reason: row.optionalText(5),
            declineCode: row.optionalText(6), createdAt: row.date(7), updatedAt: row.date(8))
        processorReference = row.optionalText(9)
    }
}

extension ProcessorSettingsRecord {
    /// The columns of the processor settings table, in the order ``init(row:)`` reads them and ``storeValues`` gives
    /// them (`fields`: a JSON object of strings).
    package static let storeColumns = "merchant_id, version, type, environment, fields, secrets, created_at"

    /// The values of ``storeColumns``, in order.
    package var storeValues: [StoreValue] {
        let fieldsText = (try? WireFormat.json(fields)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return [
            .text(merchantID), .integer(Int64(version)), .text(type), .text(environment), .text(fieldsText),
            .blob(secretsSealed), .date(createdAt),
        ]
    }

    /// A version of the settings from the ``storeColumns``.
    package init(row: some StoreRow) {
        self.init(
            merchantID: row.text(0), version: Int(row.int(1)), type: row.text(2), environment: row.optionalText(3),
            fields: row.stringFields(4) ?? [:], secretsSealed: row.bytes(5), createdAt: row.date(6))
    }
}

extension ProcessorNotificationRecord {
    /// The columns of the processor notification table, in the order ``init(row:)`` reads them and ``storeValues``
    /// gives them.
    package static let storeColumns = """
        id, merchant_id, processor, event_key, event_code, success, payment_id, amount, currency, outcome, received_at
        """

    /// The values of ``storeColumns``, in order.
    package var storeValues: [StoreValue] {
        [
            .text(id), .text(merchantID), .text(processor), .text(eventKey), .text(eventCode), .bool(success),
            .text(paymentID), .integer(amount), .text(currency), .text(outcome), .date(receivedAt),
        ]
    }

    /// A recorded item from the ``storeColumns``.
    package init(row: some StoreRow) {
        self.init(
            id: row.text(0), merchantID: row.text(1), processor: row.text(2), eventKey: row.text(3),
            eventCode: row.text(4), success: row.bool(5), paymentID: row.optionalText(6), amount: row.optionalInt(7),
            currency: row.optionalText(8), outcome: row.text(9), receivedAt: row.date(10))
    }
}

extension PaymentStatus {
    /// The payments in each status from `status, COUNT(*)` rows (a status this version does not know is left out).
    package static func counts(_ rows: [(status: String, count: Int)]) -> [PaymentStatus: Int] {
        var counts: [PaymentStatus: Int] = [:]
        for row in rows { if let status = PaymentStatus(rawValue: row.status) { counts[status] = row.count } }
        return counts
    }
}
