import Foundation
import Gateway

/// The rows of one open SQLite transaction. Only valid inside the `write`/`read` call that made it.
struct SQLiteTransaction: StoreTransaction {
    let store: SQLiteStore
    let db: SQLiteConnection

    // MARK: Settings

    func setting(_ name: String) throws -> Data? {
        try db.query("SELECT value FROM settings WHERE name = ?", [.text(name)]) { $0.blob(0) }.first ?? nil
    }

    func settingNames(prefix: String) throws -> [String] {
        try db.query(
            "SELECT name FROM settings WHERE substr(name, 1, ?) = ? ORDER BY name",
            [SQLValue(prefix.count), .text(prefix)]
        ) { $0.text(0) }
    }

    func setSetting(_ name: String, value: Data) throws {
        try db.run(
            "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            [.text(name), .blob(value)])
    }

    func insertSetting(_ name: String, value: Data) throws -> Bool {
        try db.run(
            "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING", [.text(name), .blob(value)])
            == 1
    }

    // MARK: Merchants

    func insertMerchant(_ m: MerchantRecord) throws {
        try merchantWrite(
            """
            INSERT INTO merchants (id, environment, app_id, secret_key_id, previous_secret_key_id, webhook_url,
                webhook_enabled, tappay_app_id, created_at, body)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(m.id), .text(m.environment.rawValue), .text(m.appID), .text(m.secretKeyID),
                SQLValue(m.previousSecretKeyID), SQLValue(m.webhookURL), .integer(m.webhookEnabled ? 1 : 0),
                SQLValue(m.tappayAppID.map(Int64.init)), SQLValue(m.createdAt), .text(try store.json(m)),
            ])
    }

    func updateMerchant(_ m: MerchantRecord) throws {
        try merchantWrite(
            """
            UPDATE merchants SET app_id = ?, secret_key_id = ?, previous_secret_key_id = ?, webhook_url = ?,
                webhook_enabled = ?, tappay_app_id = ?, body = ? WHERE id = ?
            """,
            [
                .text(m.appID), .text(m.secretKeyID), SQLValue(m.previousSecretKeyID), SQLValue(m.webhookURL),
                .integer(m.webhookEnabled ? 1 : 0), SQLValue(m.tappayAppID.map(Int64.init)),
                .text(try store.json(m)), .text(m.id),
            ])
    }

    /// Runs a merchant's insert or update: a TapPay app id another merchant has is a ``StoreConflict``.
    private func merchantWrite(_ sql: String, _ values: [SQLValue]) throws {
        do { try db.run(sql, values) } catch let error as SQLiteError
            where error.violatesUnique(on: "merchants", "tappay_app_id")
        {
            throw StoreConflict(.merchantTapPayAppID)
        }
    }

    private func merchants(where clause: String, _ values: [SQLValue]) throws -> [MerchantRecord] {
        try db.query("SELECT body FROM merchants WHERE \(clause) ORDER BY created_at, id", values) {
            try store.merchantRecord($0.text(0))
        }
    }

    func merchant(id: String) throws -> MerchantRecord? { try merchants(where: "id = ?", [.text(id)]).first }
    func merchant(appID: String) throws -> MerchantRecord? { try merchants(where: "app_id = ?", [.text(appID)]).first }
    func merchant(tappayAppID: Int) throws -> MerchantRecord? {
        try merchants(where: "tappay_app_id = ?", [SQLValue(tappayAppID)]).first
    }
    func merchant(secretKeyID: String) throws -> MerchantRecord? {
        try merchants(
            where: "secret_key_id = ? OR previous_secret_key_id = ?", [.text(secretKeyID), .text(secretKeyID)]
        ).first
    }
    func merchants(environment: GatewayEnvironment) throws -> [MerchantRecord] {
        try merchants(where: "environment = ?", [.text(environment.rawValue)])
    }

    func insertProcessingKey(_ k: ProcessingKeyRecord) throws {
        try db.run(
            """
            INSERT INTO processing_keys (id, merchant_id, active, private_key, certificate_pem, created_at)
            VALUES (?, ?, ?, ?, ?, ?)
            """,
            [
                .text(k.id), .text(k.merchantID), SQLValue(k.active), .blob(k.privateKeySealed),
                .text(k.certificatePEM),
                SQLValue(k.createdAt),
            ])
    }

    func updateProcessingKey(_ k: ProcessingKeyRecord) throws {
        try db.run("UPDATE processing_keys SET active = ? WHERE id = ?", [SQLValue(k.active), .text(k.id)])
    }

    func processingKeys(merchantID: String) throws -> [ProcessingKeyRecord] {
        try db.query(
            """
            SELECT id, merchant_id, private_key, certificate_pem, active, created_at FROM processing_keys
            WHERE merchant_id = ? ORDER BY created_at, rowid
            """, [.text(merchantID)]
        ) { row in
            ProcessingKeyRecord(
                id: row.text(0), merchantID: row.text(1), privateKeySealed: row.blob(2) ?? Data(),
                certificatePEM: row.text(3), active: row.bool(4), createdAt: row.date(5))
        }
    }

    func replaceBINTable(merchantID: String, entries: [BINEntry]) throws {
        try db.run("DELETE FROM bin_entries WHERE merchant_id = ?", [.text(merchantID)])
        for e in entries {
            try db.run(
                """
                INSERT INTO bin_entries (merchant_id, prefix, issuer, bank_id, level, country, country_code, funding,
                    issuer_zh_tw)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (merchant_id, prefix) DO UPDATE SET issuer = excluded.issuer, bank_id = excluded.bank_id,
                    level = excluded.level, country = excluded.country, country_code = excluded.country_code,
                    funding = excluded.funding, issuer_zh_tw = excluded.issuer_zh_tw
                """,
                [
                    .text(merchantID), .text(e.prefix), SQLValue(e.issuer), SQLValue(e.bankID), SQLValue(e.level),
                    SQLValue(e.country), SQLValue(e.countryCode), SQLValue(e.funding.map(Int64.init)),
                    SQLValue(e.issuerZhTW),
                ])
        }
    }

    func binEntries(merchantID: String, prefixes: [String]) throws -> [BINEntry] {
        guard !prefixes.isEmpty else { return [] }
        let marks = Array(repeating: "?", count: prefixes.count).joined(separator: ", ")
        return try db.query(
            """
            SELECT prefix, issuer, bank_id, level, country, country_code, funding, issuer_zh_tw FROM bin_entries
            WHERE merchant_id = ? AND prefix IN (\(marks))
            """, [.text(merchantID)] + prefixes.map { .text($0) }
        ) { row in
            BINEntry(
                prefix: row.text(0), issuer: row.optionalText(1), bankID: row.optionalText(2),
                level: row.optionalText(3),
                country: row.optionalText(4), countryCode: row.optionalText(5),
                funding: row.optionalInt(6).map(Int.init), issuerZhTW: row.optionalText(7))
        }
    }

    func replaceCoBrandTable(merchantID: String, ranges: [CoBrandRange]) throws {
        try db.run("DELETE FROM cobrand_ranges WHERE merchant_id = ?", [.text(merchantID)])
        for r in ranges {
            try db.run(
                "INSERT INTO cobrand_ranges (merchant_id, low, high, code) VALUES (?, ?, ?, ?)",
                [.text(merchantID), .integer(r.low), .integer(r.high), .text(r.code)])
        }
    }

    func coBrandCodes(merchantID: String, bin: Int64) throws -> [String] {
        try db.query(
            "SELECT DISTINCT code FROM cobrand_ranges WHERE merchant_id = ? AND low <= ? AND high >= ? ORDER BY code",
            [.text(merchantID), .integer(bin), .integer(bin)]
        ) { $0.text(0) }
    }

    func coBrandRanges(merchantID: String) throws -> [CoBrandRange] {
        try db.query(
            "SELECT low, high, code FROM cobrand_ranges WHERE merchant_id = ? ORDER BY low, high, code",
            [.text(merchantID)]
        ) { CoBrandRange(low: $0.int(0), high: $0.int(1), code: $0.text(2)) }
    }

    // MARK: Replay

    func recordTransactionID(
        merchantID: String, environment: GatewayEnvironment, transactionID: String, at: Date
    ) throws
        -> Bool
    {
        try db.run(
            """
            INSERT INTO seen_transactions (merchant_id, environment, transaction_id, seen_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (merchant_id, environment, transaction_id) DO NOTHING
            """, [.text(merchantID), .text(environment.rawValue), .text(transactionID), SQLValue(at)]) == 1
    }

    // MARK: Primes

    func insertPrime(_ p: PrimeRecord) throws {
        let card = p.cardInfo
        try db.run(
            """
            INSERT INTO primes (hash, merchant_id, environment, amount, currency, deferred, card_data, created_at,
                expires_at, claimed_at, payment_id, card_bin_code, card_last_four, card_type, card_funding,
                card_network, card_issuer, card_bank_id, card_level, card_country, card_country_code,
                card_issuer_zh_tw)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(p.hash), .text(p.merchantID), .text(p.environment.rawValue), .integer(p.amount),
                .text(p.currency), SQLValue(p.isDeferred), SQLValue(p.cardDataSealed), SQLValue(p.createdAt),
                SQLValue(p.expiresAt), SQLValue(p.claimedAt), SQLValue(p.paymentID), .text(card.binCode),
                .text(card.lastFour), SQLValue(card.type), SQLValue(card.funding), SQLValue(card.network),
                SQLValue(card.issuer), SQLValue(card.bankID), SQLValue(card.level), SQLValue(card.country),
                SQLValue(card.countryCode), SQLValue(card.issuerZhTW),
            ])
    }

    func prime(hash: String) throws -> PrimeRecord? {
        try db.query(
            """
            SELECT hash, merchant_id, environment, amount, currency, deferred, card_data, created_at, expires_at,
                claimed_at, payment_id, card_bin_code, card_last_four, card_type, card_funding, card_network,
                card_issuer, card_bank_id, card_level, card_country, card_country_code, card_issuer_zh_tw
            FROM primes WHERE hash = ?
            """, [.text(hash)]
        ) { row in
            PrimeRecord(
                hash: row.text(0), merchantID: row.text(1),
                environment: GatewayEnvironment(rawValue: row.text(2)) ?? .sandbox, amount: row.int(3),
                currency: row.text(4), isDeferred: row.bool(5),
                cardInfo: CardInfo(
                    binCode: row.text(11), lastFour: row.text(12), type: Int(row.int(13)), funding: Int(row.int(14)),
                    network: row.optionalText(15), issuer: row.optionalText(16), bankID: row.optionalText(17),
                    level: row.optionalText(18), country: row.optionalText(19), countryCode: row.optionalText(20),
                    issuerZhTW: row.optionalText(21)),
                cardDataSealed: row.blob(6), createdAt: row.date(7), expiresAt: row.date(8),
                claimedAt: row.optionalDate(9), paymentID: row.optionalText(10))
        }.first
    }

    func claimPrime(hash: String, paymentID: String, at: Date) throws -> Bool {
        try db.run(
            "UPDATE primes SET claimed_at = ?, payment_id = ?, card_data = NULL WHERE hash = ? AND claimed_at IS NULL",
            [SQLValue(at), .text(paymentID), .text(hash)]) == 1
    }

    func purgeExpiredPrimes(now: Date) throws -> Int {
        try db.run(
            "UPDATE primes SET card_data = NULL WHERE card_data IS NOT NULL AND expires_at <= ?", [SQLValue(now)])
    }

    // MARK: Sessions

    func insertSession(_ s: OrderSession) throws -> Bool {
        try db.run(
            """
            INSERT INTO order_sessions (id, order_token, merchant_id, environment, out_trade_no, status, payment_id,
                created_at, expires_at, body)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (merchant_id, environment, out_trade_no) DO NOTHING
            """,
            [
                .text(s.id), .text(s.orderToken), .text(s.merchantID), .text(s.environment.rawValue),
                .text(s.outTradeNo),
                .text(s.status.rawValue), SQLValue(s.paymentID), SQLValue(s.createdAt), SQLValue(s.expiresAt),
                .text(try store.json(s)),
            ]) == 1
    }

    func session(orderToken: String) throws -> OrderSession? {
        try db.query("SELECT body FROM order_sessions WHERE order_token = ?", [.text(orderToken)]) {
            try store.decode(OrderSession.self, $0.text(0))
        }.first
    }

    func session(id: String) throws -> OrderSession? {
        try db.query("SELECT body FROM order_sessions WHERE id = ?", [.text(id)]) {
            try store.decode(OrderSession.self, $0.text(0))
        }.first
    }

    func updateSession(_ s: OrderSession) throws {
        try db.run(
            "UPDATE order_sessions SET status = ?, payment_id = ?, body = ? WHERE id = ?",
            [.text(s.status.rawValue), SQLValue(s.paymentID), .text(try store.json(s)), .text(s.id)])
    }

    // MARK: Payments

    /// A payment's row, every field in its own column (``Payment/storeColumns``).
    private static let paymentColumns = Payment.storeColumns.joined(separator: ", ")
    private static let insertPaymentSQL =
        "INSERT INTO payments (\(Payment.storeWriteColumns.joined(separator: ", "))) VALUES ("
        + Array(repeating: "?", count: Payment.storeWriteColumns.count).joined(separator: ", ") + ")"
    /// The columns a payment's change writes (``Payment/storeUpdateColumns``), then `id` for the WHERE clause.
    private static let updatePaymentSQL =
        "UPDATE payments SET " + Payment.storeUpdateColumns.map { "\($0) = ?" }.joined(separator: ", ")
        + " WHERE id = ?"

    func insertPayment(_ p: Payment) throws {
        do {
            try db.run(Self.insertPaymentSQL, p.storeValues.map(SQLValue.init))
        } catch let error as SQLiteError where error.violatesUnique(on: "payments", "bank_transaction_id") {
            throw StoreConflict(.paymentBankTransactionID)
        }
    }

    func updatePayment(_ p: Payment) throws {
        try db.run(Self.updatePaymentSQL, p.storeUpdateValues.map(SQLValue.init) + [.text(p.id)])
    }

    func payment(id: String) throws -> Payment? {
        try db.query("SELECT \(Self.paymentColumns) FROM payments WHERE id = ?", [.text(id)]) { Payment(row: $0) }
            .first
    }

    func payments(
        merchantID: String, environment: GatewayEnvironment, query: PaymentQuery, after: PaymentCursor?
    )
        throws -> [Payment]
    {
        var clauses = ["merchant_id = ?", "environment = ?"]
        var values: [SQLValue] = [.text(merchantID), .text(environment.rawValue)]
        if let from = query.createdFrom {
            clauses.append("created_at >= ?")
            values.append(SQLValue(from))
        }
        if let to = query.createdTo {
            clauses.append("created_at < ?")
            values.append(SQLValue(to))
        }
        if let currency = query.currency {
            clauses.append("currency = ?")
            values.append(.text(currency))
        }
        if let min = query.minAmount {
            clauses.append("amount >= ?")
            values.append(.integer(min))
        }
        if let max = query.maxAmount {
            clauses.append("amount <= ?")
            values.append(.integer(max))
        }
        if !query.statuses.isEmpty {
            clauses.append("status IN (\(Array(repeating: "?", count: query.statuses.count).joined(separator: ", ")))")
            values += query.statuses.map { .text($0.rawValue) }
        }
        if let number = query.orderNumber {
            clauses.append("order_number = ?")
            values.append(.text(number))
        }
        if let outTradeNo = query.outTradeNo {
            clauses.append("out_trade_no = ?")
            values.append(.text(outTradeNo))
        }
        if let bankTransactionID = query.bankTransactionID {
            clauses.append("bank_transaction_id = ?")
            values.append(.text(bankTransactionID))
        }
        if let lastFour = query.lastFour {
            clauses.append("card_last_four = ?")
            values.append(.text(lastFour))
        }
        if let after {
            clauses.append("(created_at < ? OR (created_at = ? AND id < ?))")
            values += [SQLValue(after.createdAt), SQLValue(after.createdAt), .text(after.id)]
        }
        values.append(.integer(Int64(query.limit)))
        return try db.query(
            "SELECT \(Self.paymentColumns) FROM payments WHERE \(clauses.joined(separator: " AND ")) ORDER BY created_at DESC, id DESC LIMIT ?",
            values
        ) { Payment(row: $0) }
    }

    func paymentIDs(statuses: [PaymentStatus], updatedBefore: Date, limit: Int) throws -> [String] {
        guard !statuses.isEmpty else { return [] }
        let marks = Array(repeating: "?", count: statuses.count).joined(separator: ", ")
        return try db.query(
            "SELECT id FROM payments WHERE status IN (\(marks)) AND updated_at <= ? ORDER BY updated_at LIMIT ?",
            statuses.map { .text($0.rawValue) } + [SQLValue(updatedBefore), .integer(Int64(limit))]
        ) { $0.text(0) }
    }

    func paymentIDsNeedingCapture(due: Date, limit: Int) throws -> [String] {
        try db.query(
            """
            SELECT id FROM payments WHERE pending_operation = 1 OR (status = 'authorized' AND capture_at <= ?)
            ORDER BY updated_at LIMIT ?
            """, [SQLValue(due), .integer(Int64(limit))]
        ) { $0.text(0) }
    }

    func insertTransition(_ t: PaymentTransition) throws {
        try db.run(
            "INSERT INTO payment_transitions (payment_id, from_status, to_status, at, cause) VALUES (?, ?, ?, ?, ?)",
            [.text(t.paymentID), SQLValue(t.from?.rawValue), .text(t.to.rawValue), SQLValue(t.at), .text(t.cause)])
    }

    func transitions(paymentID: String) throws -> [PaymentTransition] {
        try db.query(
            "SELECT from_status, to_status, at, cause FROM payment_transitions WHERE payment_id = ? ORDER BY seq",
            [.text(paymentID)]
        ) { row in
            PaymentTransition(
                paymentID: paymentID, from: row.optionalText(0).flatMap(PaymentStatus.init(rawValue:)),
                to: PaymentStatus(rawValue: row.text(1)) ?? .unknown, at: row.date(2), cause: row.text(3))
        }
    }

    func setCardData(paymentID: String, sealed: Data?) throws {
        if let sealed {
            try db.run(
                """
                INSERT INTO payment_card_data (payment_id, sealed) VALUES (?, ?)
                ON CONFLICT (payment_id) DO UPDATE SET sealed = excluded.sealed
                """, [.text(paymentID), .blob(sealed)])
        } else {
            try db.run("DELETE FROM payment_card_data WHERE payment_id = ?", [.text(paymentID)])
        }
    }

    func cardData(paymentID: String) throws -> Data? {
        try db.query("SELECT sealed FROM payment_card_data WHERE payment_id = ?", [.text(paymentID)]) { $0.blob(0) }
            .first ?? nil
    }

    func paymentTally(
        merchantID: String, environment: GatewayEnvironment, from: Date, to: Date, bucketSeconds: Int
    ) throws -> [PaymentTallyRow] {
        // Times are Unix milliseconds: the bucket is the whole number of bucket widths since `from`.
        try db.query(
            """
            SELECT (created_at - ?) / ?, currency, status, failure_code, COUNT(*), SUM(amount)
            FROM payments WHERE merchant_id = ? AND environment = ? AND created_at >= ? AND created_at < ?
            GROUP BY 1, 2, 3, 4
            """,
            [
                SQLValue(from), .integer(Int64(bucketSeconds) * 1000), .text(merchantID), .text(environment.rawValue),
                SQLValue(from), SQLValue(to),
            ]
        ) { row in
            PaymentTallyRow(
                bucket: Int(row.int(0)), currency: row.text(1),
                status: PaymentStatus(rawValue: row.text(2)) ?? .unknown,
                failureCode: row.optionalText(3), count: Int(row.int(4)), amount: row.int(5))
        }
    }

    // MARK: Refunds

    func insertRefund(_ r: Refund) throws {
        try db.run(
            "INSERT INTO refunds (\(Refund.storeColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            r.storeValues.map(SQLValue.init))
    }

    func updateRefund(_ r: Refund) throws {
        try db.run(
            "UPDATE refunds SET status = ?, decline_code = ?, updated_at = ?, processor_reference = ? WHERE id = ?",
            [
                .text(r.status.rawValue), SQLValue(r.declineCode), SQLValue(r.updatedAt),
                SQLValue(r.processorReference), .text(r.id),
            ])
    }

    func refunds(paymentID: String) throws -> [Refund] {
        try db.query(
            "SELECT \(Refund.storeColumns) FROM refunds WHERE payment_id = ? ORDER BY created_at, rowid",
            [.text(paymentID)]
        ) { Refund(row: $0) }
    }

    func paymentIDsWithPendingRefunds(limit: Int) throws -> [String] {
        try db.query(
            "SELECT DISTINCT payment_id FROM refunds WHERE status = 'pending' LIMIT ?", [.integer(Int64(limit))]
        ) { $0.text(0) }
    }

    // MARK: Outbox

    func insertEvent(_ e: WebhookEvent, objectID: String, deliveryURL: String?) throws {
        try db.run(
            """
            INSERT INTO webhook_events (id, merchant_id, object_id, type, payload, created_at, delivery_url, state,
                attempts, next_attempt_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?)
            """,
            [
                .text(e.id), .text(e.merchantID), .text(objectID), .text(e.type), .blob(e.payload),
                SQLValue(e.createdAt),
                SQLValue(deliveryURL), SQLValue(e.createdAt),
            ])
    }

    func events(merchantID: String, limit: Int) throws -> [WebhookEvent] {
        try db.query(
            """
            SELECT id, merchant_id, type, payload, created_at FROM webhook_events WHERE merchant_id = ?
            ORDER BY created_at DESC, rowid DESC LIMIT ?
            """, [.text(merchantID), .integer(Int64(limit))]
        ) { WebhookEvent(row: $0) }
    }

    // MARK: Idempotency

    func claimIdempotencyKey(_ r: IdempotencyRecord) throws -> Bool {
        try db.run(
            """
            INSERT INTO idempotency_keys (merchant_id, environment, idempotency_key, operation, fingerprint,
                recovery_point, locked_at, response, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (merchant_id, environment, idempotency_key) DO NOTHING
            """,
            [
                .text(r.merchantID), .text(r.environment.rawValue), .text(r.key), .text(r.operation),
                .text(r.fingerprint),
                .text(r.recoveryPoint), SQLValue(r.lockedAt), SQLValue(r.responseSealed), SQLValue(r.createdAt),
            ]) == 1
    }

    func idempotencyRecord(
        merchantID: String, environment: GatewayEnvironment, key: String
    ) throws
        -> IdempotencyRecord?
    {
        try db.query(
            """
            SELECT operation, fingerprint, recovery_point, locked_at, response, created_at FROM idempotency_keys
            WHERE merchant_id = ? AND environment = ? AND idempotency_key = ?
            """, [.text(merchantID), .text(environment.rawValue), .text(key)]
        ) { row in
            IdempotencyRecord(
                merchantID: merchantID, environment: environment, key: key, operation: row.text(0),
                fingerprint: row.text(1), recoveryPoint: row.text(2), lockedAt: row.optionalDate(3),
                responseSealed: row.blob(4), createdAt: row.date(5))
        }.first
    }

    func updateIdempotencyRecord(_ r: IdempotencyRecord) throws {
        try db.run(
            """
            UPDATE idempotency_keys SET recovery_point = ?, locked_at = ?, response = ?
            WHERE merchant_id = ? AND environment = ? AND idempotency_key = ?
            """,
            [
                .text(r.recoveryPoint), SQLValue(r.lockedAt), SQLValue(r.responseSealed), .text(r.merchantID),
                .text(r.environment.rawValue), .text(r.key),
            ])
    }

    func deleteIdempotencyRecord(merchantID: String, environment: GatewayEnvironment, key: String) throws {
        try db.run(
            "DELETE FROM idempotency_keys WHERE merchant_id = ? AND environment = ? AND idempotency_key = ?",
            [.text(merchantID), .text(environment.rawValue), .text(key)])
    }

    func purgeIdempotencyRecords(before: Date) throws -> Int {
        try db.run(
            "DELETE FROM idempotency_keys WHERE response IS NOT NULL AND created_at < ?", [SQLValue(before)])
    }

    func storedResponse(_ name: String) throws -> Data? {
        try db.query("SELECT value FROM stored_responses WHERE name = ?", [.text(name)]) { $0.blob(0) }.first ?? nil
    }

    func setStoredResponse(_ name: String, value: Data, createdAt: Date) throws {
        try db.run(
            """
            INSERT INTO stored_responses (name, created_at, value) VALUES (?, ?, ?)
            ON CONFLICT (name) DO UPDATE SET created_at = excluded.created_at, value = excluded.value
            """, [.text(name), SQLValue(createdAt), .blob(value)])
    }

    func purgeStoredResponses(before: Date) throws -> Int {
        try db.run("DELETE FROM stored_responses WHERE created_at < ?", [SQLValue(before)])
    }

    // MARK: Audit log

    func insertAuditEntry(_ e: AuditEntry) throws {
        try db.run(
            "INSERT INTO audit_log (\(AuditEntry.storeColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                .text(e.id), .text(e.merchantID), .text(e.actor.kind), .text(e.actor.name), .text(e.action),
                SQLValue(e.target), .text(e.detailJSON), SQLValue(e.createdAt),
            ])
    }

    func auditEntries(merchantID: String, after: AuditCursor?, limit: Int) throws -> [AuditEntry] {
        var clause = "merchant_id = ?"
        var values: [SQLValue] = [.text(merchantID)]
        if let after {
            clause += " AND (created_at < ? OR (created_at = ? AND id < ?))"
            values += [SQLValue(after.createdAt), SQLValue(after.createdAt), .text(after.id)]
        }
        return try db.query(
            """
            SELECT \(AuditEntry.storeColumns) FROM audit_log WHERE \(clause)
            ORDER BY created_at DESC, id DESC LIMIT ?
            """, values + [SQLValue(limit)], AuditEntry.init(row:))
    }
}

extension SQLValue {
    /// A domain value as SQLite stores it.
    init(_ value: StoreValue) {
        switch value {
        case .text(let text): self.init(text)
        case .integer(let number): self.init(number)
        case .bool(let flag): self.init(flag)
        case .date(let date): self.init(date)
        case .blob(let bytes): self.init(bytes)
        }
    }
}

// MARK: - The statements shared with the PostgreSQL store (Gateway/StoreQueries.swift)

extension SQLiteTransaction: StoreStatements {
    func query<T>(shared sql: String, _ values: [StoreValue], _ map: (any StoreRow) throws -> T) throws -> [T] {
        try db.query(sql, values.map(SQLValue.init)) { try map($0) }
    }

    func change(shared sql: String, _ values: [StoreValue]) throws -> Int {
        try db.run(sql, values.map(SQLValue.init))
    }
}
