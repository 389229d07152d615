import Foundation
import Gateway

/// The rows of one open PostgreSQL transaction. Only valid inside the `write`/`read` call that made it.
struct PostgresTransaction: StoreTransaction {
    let store: PostgresStore
    let db: PGConnection

    /// `$first, $first+1, …` for `count` values.
    static func placeholders(_ count: Int, from first: Int) -> String {
        (first..<(first + count)).map { "$\($0)" }.joined(separator: ", ")
    }

    // MARK: Settings

    func setting(_ name: String) throws -> Data? {
        try db.query("SELECT value FROM settings WHERE name = $1", [.text(name)]) { $0.bytea(0) }.first ?? nil
    }

    func settingNames(prefix: String) throws -> [String] {
        try db.query("SELECT name FROM settings WHERE starts_with(name, $1) ORDER BY name", [.text(prefix)]) {
            $0.text(0)
        }
    }

    func setSetting(_ name: String, value: Data) throws {
        try db.run(
            "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            [.text(name), .bytea(value)])
    }

    func insertSetting(_ name: String, value: Data) throws -> Bool {
        // In a SERIALIZABLE transaction a row another transaction inserted and has not shown this one is a
        // serialization failure here (run again by the store), not a silent "exists".
        try db.change(
            "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
            [.text(name), .bytea(value)]) == 1
    }

    // MARK: Merchants

    /// The merchant's document without its sealed secrets, which go in their own `bytea` columns.
    private func merchantBody(_ m: MerchantRecord) throws -> PGValue {
        var body = m
        body.webhookSecretsSealed = nil
        body.credentialsSealed = nil
        body.identityKeySealed = nil
        return .jsonb(try store.json(body))
    }

    func insertMerchant(_ m: MerchantRecord) throws {
        try merchantWrite(
            """
            INSERT INTO merchants (id, environment, app_id, secret_key_id, previous_secret_key_id, webhook_url,
                webhook_enabled, webhook_secrets, credentials, identity_key, tappay_app_id, created_at, body)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
            """,
            [
                .text(m.id), .text(m.environment.rawValue), .text(m.appID), .text(m.secretKeyID),
                PGValue(m.previousSecretKeyID), PGValue(m.webhookURL), .bool(m.webhookEnabled),
                PGValue(m.webhookSecretsSealed), PGValue(m.credentialsSealed), PGValue(m.identityKeySealed),
                PGValue(m.tappayAppID.map(Int64.init)), .timestamptz(m.createdAt), try merchantBody(m),
            ])
    }

    func updateMerchant(_ m: MerchantRecord) throws {
        try merchantWrite(
            """
            UPDATE merchants SET app_id = $1, secret_key_id = $2, previous_secret_key_id = $3, webhook_url = $4,
                webhook_enabled = $5, webhook_secrets = $6, credentials = $7, identity_key = $8,
                tappay_app_id = $9, body = $10
            WHERE id = $11
            """,
            [
                .text(m.appID), .text(m.secretKeyID), PGValue(m.previousSecretKeyID), PGValue(m.webhookURL),
                .bool(m.webhookEnabled), PGValue(m.webhookSecretsSealed), PGValue(m.credentialsSealed),
                PGValue(m.identityKeySealed), PGValue(m.tappayAppID.map(Int64.init)), try merchantBody(m),
                .text(m.id),
            ])
    }

    /// Runs a merchant's insert or update: a TapPay app id another merchant has is a ``StoreConflict`` (the
    /// transaction is aborted then; the store's retry loop passes it on to the caller).
    private func merchantWrite(_ sql: String, _ values: [PGValue]) throws {
        do { try db.run(sql, values) } catch let error as PostgresError
            where error.violatesUnique(StoreConflict.Constraint.merchantTapPayAppID.rawValue)
        {
            throw StoreConflict(.merchantTapPayAppID)
        }
    }

    /// The columns ``merchantRecord(_:)`` reads, in order.
    static let merchantColumns = "body, webhook_secrets, credentials, identity_key"

    func merchantRecord(_ row: PGRow) throws -> MerchantRecord {
        var record = try store.decode(MerchantRecord.self, row.text(0))
        record.webhookSecretsSealed = row.bytea(1)
        record.credentialsSealed = row.bytea(2)
        record.identityKeySealed = row.bytea(3)
        return record
    }

    private func merchants(where clause: String, _ values: [PGValue]) throws -> [MerchantRecord] {
        try db.query(
            "SELECT \(Self.merchantColumns) FROM merchants WHERE \(clause) ORDER BY created_at, id", values,
            merchantRecord)
    }

    func merchant(id: String) throws -> MerchantRecord? { try merchants(where: "id = $1", [.text(id)]).first }
    func merchant(appID: String) throws -> MerchantRecord? {
        try merchants(where: "app_id = $1", [.text(appID)]).first
    }
    func merchant(tappayAppID: Int) throws -> MerchantRecord? {
        try merchants(where: "tappay_app_id = $1", [PGValue(tappayAppID)]).first
    }
    func merchant(secretKeyID: String) throws -> MerchantRecord? {
        try merchants(where: "secret_key_id = $1 OR previous_secret_key_id = $1", [.text(secretKeyID)]).first
    }
    func merchants(environment: GatewayEnvironment) throws -> [MerchantRecord] {
        try merchants(where: "environment = $1", [.text(environment.rawValue)])
    }

    func insertProcessingKey(_ k: ProcessingKeyRecord) throws {
        try db.run(
            """
            INSERT INTO processing_keys (id, merchant_id, active, private_key, certificate_pem, created_at)
            VALUES ($1, $2, $3, $4, $5, $6)
            """,
            [
                .text(k.id), .text(k.merchantID), .bool(k.active), .bytea(k.privateKeySealed),
                .text(k.certificatePEM), .timestamptz(k.createdAt),
            ])
    }

    func updateProcessingKey(_ k: ProcessingKeyRecord) throws {
        try db.run("UPDATE processing_keys SET active = $1 WHERE id = $2", [.bool(k.active), .text(k.id)])
    }

    func processingKeys(merchantID: String) throws -> [ProcessingKeyRecord] {
        try db.query(
            """
            SELECT id, merchant_id, private_key, certificate_pem, active, created_at FROM processing_keys
            WHERE merchant_id = $1 ORDER BY created_at, seq
            """, [.text(merchantID)]
        ) { row in
            ProcessingKeyRecord(
                id: row.text(0), merchantID: row.text(1), privateKeySealed: row.bytea(2) ?? Data(),
                certificatePEM: row.text(3), active: row.bool(4), createdAt: row.date(5))
        }
    }

    func replaceBINTable(merchantID: String, entries: [BINEntry]) throws {
        try db.run("DELETE FROM bin_entries WHERE merchant_id = $1", [.text(merchantID)])
        for e in entries {
            try db.run(
                """
                INSERT INTO bin_entries (merchant_id, prefix, issuer, bank_id, level, country, country_code, funding,
                    issuer_zh_tw)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8::int8::integer, $9)
                ON CONFLICT (merchant_id, prefix) DO UPDATE SET issuer = excluded.issuer, bank_id = excluded.bank_id,
                    level = excluded.level, country = excluded.country, country_code = excluded.country_code,
                    funding = excluded.funding, issuer_zh_tw = excluded.issuer_zh_tw
                """,
                [
                    .text(merchantID), .text(e.prefix), PGValue(e.issuer), PGValue(e.bankID), PGValue(e.level),
                    PGValue(e.country), PGValue(e.countryCode), PGValue(e.funding.map(Int64.init)),
                    PGValue(e.issuerZhTW),
                ])
        }
    }

    func binEntries(merchantID: String, prefixes: [String]) throws -> [BINEntry] {
        guard !prefixes.isEmpty else { return [] }
        return try db.query(
            """
            SELECT prefix, issuer, bank_id, level, country, country_code, funding, issuer_zh_tw FROM bin_entries
            WHERE merchant_id = $1 AND prefix IN (\(Self.placeholders(prefixes.count, from: 2)))
            """, [.text(merchantID)] + prefixes.map { .text($0) }
        ) { row in
            BINEntry(
                prefix: row.text(0), issuer: row.optionalText(1), bankID: row.optionalText(2),
                level: row.optionalText(3), country: row.optionalText(4), countryCode: row.optionalText(5),
                funding: row.optionalInt(6).map(Int.init), issuerZhTW: row.optionalText(7))
        }
    }

    func replaceCoBrandTable(merchantID: String, ranges: [CoBrandRange]) throws {
        try db.run("DELETE FROM cobrand_ranges WHERE merchant_id = $1", [.text(merchantID)])
        for r in ranges {
            try db.run(
                "INSERT INTO cobrand_ranges (merchant_id, low, high, code) VALUES ($1, $2, $3, $4)",
                [.text(merchantID), .int8(r.low), .int8(r.high), .text(r.code)])
        }
    }

    func coBrandCodes(merchantID: String, bin: Int64) throws -> [String] {
        try db.query(
            "SELECT DISTINCT code FROM cobrand_ranges WHERE merchant_id = $1 AND low <= $2 AND high >= $2 ORDER BY code",
            [.text(merchantID), .int8(bin)]
        ) { $0.text(0) }
    }

    func coBrandRanges(merchantID: String) throws -> [CoBrandRange] {
        try db.query(
            "SELECT low, high, code FROM cobrand_ranges WHERE merchant_id = $1 ORDER BY low, high, code",
            [.text(merchantID)]
        ) { CoBrandRange(low: $0.int(0), high: $0.int(1), code: $0.text(2)) }
    }

    // MARK: Replay

    func recordTransactionID(
        merchantID: String, environment: GatewayEnvironment, transactionID: String, at: Date
    ) throws -> Bool {
        try db.change(
            """
            INSERT INTO seen_transactions (merchant_id, environment, transaction_id, seen_at) VALUES ($1, $2, $3, $4)
            ON CONFLICT (merchant_id, environment, transaction_id) DO NOTHING
            """, [.text(merchantID), .text(environment.rawValue), .text(transactionID), .timestamptz(at)]) == 1
    }

    // MARK: Primes

    func insertPrime(_ p: PrimeRecord) throws {
        try db.run(
            """
            INSERT INTO primes (hash, merchant_id, environment, amount, currency, deferred, card_info, card_data,
                created_at, expires_at, claimed_at, payment_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
            """,
            [
                .text(p.hash), .text(p.merchantID), .text(p.environment.rawValue), .int8(p.amount), .text(p.currency),
                .bool(p.isDeferred), .jsonb(try store.json(p.cardInfo)), PGValue(p.cardDataSealed),
                .timestamptz(p.createdAt), .timestamptz(p.expiresAt), PGValue(p.claimedAt), PGValue(p.paymentID),
            ])
    }

    func prime(hash: String) throws -> PrimeRecord? {
        try db.query(
            """
            SELECT hash, merchant_id, environment, amount, currency, deferred, card_info, card_data, created_at,
                expires_at, claimed_at, payment_id FROM primes WHERE hash = $1
            """, [.text(hash)]
        ) { row in
            PrimeRecord(
                hash: row.text(0), merchantID: row.text(1),
                environment: GatewayEnvironment(rawValue: row.text(2)) ?? .sandbox, amount: row.int(3),
                currency: row.text(4), isDeferred: row.bool(5), cardInfo: try store.decode(CardInfo.self, row.text(6)),
                cardDataSealed: row.bytea(7), createdAt: row.date(8), expiresAt: row.date(9),
                claimedAt: row.optionalDate(10), paymentID: row.optionalText(11))
        }.first
    }

    func claimPrime(hash: String, paymentID: String, at: Date) throws -> Bool {
        try db.change(
            """
            UPDATE primes SET claimed_at = $1, payment_id = $2, card_data = NULL WHERE hash = $3 AND claimed_at IS NULL
            """, [.timestamptz(at), .text(paymentID), .text(hash)]) == 1
    }

    func purgeExpiredPrimes(now: Date) throws -> Int {
        try db.change(
            "UPDATE primes SET card_data = NULL WHERE card_data IS NOT NULL AND expires_at <= $1", [.timestamptz(now)])
    }

    // MARK: Sessions

    func insertSession(_ s: OrderSession) throws -> Bool {
        try db.change(
            """
            INSERT INTO order_sessions (id, order_token, merchant_id, environment, out_trade_no, status, payment_id,
                created_at, expires_at, body)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            ON CONFLICT (merchant_id, environment, out_trade_no) DO NOTHING
            """,
            [
                .text(s.id), .text(s.orderToken), .text(s.merchantID), .text(s.environment.rawValue),
                .text(s.outTradeNo), .text(s.status.rawValue), PGValue(s.paymentID), .timestamptz(s.createdAt),
                .timestamptz(s.expiresAt), .jsonb(try store.json(s)),
            ]) == 1
    }

    func session(orderToken: String) throws -> OrderSession? {
        try db.query("SELECT body FROM order_sessions WHERE order_token = $1", [.text(orderToken)]) {
            try store.decode(OrderSession.self, $0.text(0))
        }.first
    }

    func session(id: String) throws -> OrderSession? {
        try db.query("SELECT body FROM order_sessions WHERE id = $1", [.text(id)]) {
            try store.decode(OrderSession.self, $0.text(0))
        }.first
    }

    func updateSession(_ s: OrderSession) throws {
        try db.run(
            "UPDATE order_sessions SET status = $1, payment_id = $2, body = $3 WHERE id = $4",
            [.text(s.status.rawValue), PGValue(s.paymentID), .jsonb(try store.json(s)), .text(s.id)])
    }

    // MARK: Payments

    /// A payment's row, every field in its own column (``Payment/storeColumns``).
    private static let paymentColumns = Payment.storeColumns.joined(separator: ", ")
    private static let insertPaymentSQL =
        "INSERT INTO payments (\(Payment.storeWriteColumns.joined(separator: ", "))) VALUES ("
        + placeholders(Payment.storeWriteColumns.count, from: 1) + ")"
    /// `id` (`$1`, for the WHERE clause), then the columns a payment's change writes
    /// (``Payment/storeUpdateColumns``).
    private static let updatePaymentSQL =
        "UPDATE payments SET "
        + Payment.storeUpdateColumns.enumerated().map { "\($1) = $\($0 + 2)" }.joined(separator: ", ")
        + " WHERE id = $1"

    func insertPayment(_ p: Payment) throws {
        do {
            try db.run(Self.insertPaymentSQL, p.storeValues.map(PGValue.init))
        } catch let error as PostgresError where error.violatesUnique(StoreConflict.Constraint.paymentBankTransactionID.rawValue) {
            // The transaction is aborted now; the store's retry loop passes this on to the caller.
            throw StoreConflict(.paymentBankTransactionID)
        }
    }

    func updatePayment(_ p: Payment) throws {
        try db.run(Self.updatePaymentSQL, [.text(p.id)] + p.storeUpdateValues.map(PGValue.init))
    }

    func payment(id: String) throws -> Payment? {
        try db.query("SELECT \(Self.paymentColumns) FROM payments WHERE id = $1", [.text(id)]) { Payment(row: $0) }
            .first
    }

    func payments(
        merchantID: String, environment: GatewayEnvironment, query: PaymentQuery, after: PaymentCursor?
    ) throws -> [Payment] {
        var clauses = ["merchant_id = $1", "environment = $2"]
        var values: [PGValue] = [.text(merchantID), .text(environment.rawValue)]
        func add(_ clause: String, _ value: PGValue) {
            values.append(value)
            clauses.append(clause.replacingOccurrences(of: "?", with: "$\(values.count)"))
        }
        if let from = query.createdFrom { add("created_at >= ?", .timestamptz(from)) }
        if let to = query.createdTo { add("created_at < ?", .timestamptz(to)) }
        if let currency = query.currency { add("currency = ?", .text(currency)) }
        if let min = query.minAmount { add("amount >= ?", .int8(min)) }
        if let max = query.maxAmount { add("amount <= ?", .int8(max)) }
        if !query.statuses.isEmpty {
            clauses.append("status IN (\(Self.placeholders(query.statuses.count, from: values.count + 1)))")
            values += query.statuses.map { .text($0.rawValue) }
        }
        if let number = query.orderNumber { add("order_number = ?", .text(number)) }
        if let outTradeNo = query.outTradeNo { add("out_trade_no = ?", .text(outTradeNo)) }
        if let lastFour = query.lastFour { add("card_last_four = ?", .text(lastFour)) }
        if let bankTransactionID = query.bankTransactionID {
            add("bank_transaction_id = ?", .text(bankTransactionID))
        }
        if let after {
            values += [.timestamptz(after.createdAt), .text(after.id)]
            let at = values.count - 1
            clauses.append("(created_at < $\(at) OR (created_at = $\(at) AND id < $\(at + 1)))")
        }
        values.append(.int8(Int64(query.limit)))
        return try db.query(
            """
            SELECT \(Self.paymentColumns) FROM payments WHERE \(clauses.joined(separator: " AND "))
            ORDER BY created_at DESC, id DESC LIMIT $\(values.count)
            """, values
        ) { Payment(row: $0) }
    }

    func paymentIDs(statuses: [PaymentStatus], updatedBefore: Date, limit: Int) throws -> [String] {
        guard !statuses.isEmpty else { return [] }
        let count = statuses.count
        return try db.query(
            """
            SELECT id FROM payments WHERE status IN (\(Self.placeholders(count, from: 1))) AND updated_at <= $\(count + 1)
            ORDER BY updated_at LIMIT $\(count + 2)
            """, statuses.map { .text($0.rawValue) } + [.timestamptz(updatedBefore), PGValue(limit)]
        ) { $0.text(0) }
    }

    func paymentIDsNeedingCapture(due: Date, limit: Int) throws -> [String] {
        try db.query(
            """
            SELECT id FROM payments WHERE pending_operation OR (status = 'authorized' AND capture_at <= $1)
            ORDER BY updated_at LIMIT $2
            """, [.timestamptz(due), PGValue(limit)]
        ) { $0.text(0) }
    }

    func insertTransition(_ t: PaymentTransition) throws {
        try db.run(
            "INSERT INTO payment_transitions (payment_id, from_status, to_status, at, cause) VALUES ($1, $2, $3, $4, $5)",
            [.text(t.paymentID), PGValue(t.from?.rawValue), .text(t.to.rawValue), .timestamptz(t.at), .text(t.cause)])
    }

    func transitions(paymentID: String) throws -> [PaymentTransition] {
        try db.query(
            "SELECT from_status, to_status, at, cause FROM payment_transitions WHERE payment_id = $1 ORDER BY seq",
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
                INSERT INTO payment_card_data (payment_id, sealed) VALUES ($1, $2)
                ON CONFLICT (payment_id) DO UPDATE SET sealed = excluded.sealed
                """, [.text(paymentID), .bytea(sealed)])
        } else {
            try db.run("DELETE FROM payment_card_data WHERE payment_id = $1", [.text(paymentID)])
        }
    }

    func cardData(paymentID: String) throws -> Data? {
        try db.query("SELECT sealed FROM payment_card_data WHERE payment_id = $1", [.text(paymentID)]) {
            $0.bytea(0)
        }.first ?? nil
    }

    func paymentTally(
        merchantID: String, environment: GatewayEnvironment, from: Date, to: Date, bucketSeconds: Int
    ) throws -> [PaymentTallyRow] {
        try db.query(
            """
            SELECT floor(EXTRACT(EPOCH FROM (created_at - $1)) / $2)::int8, currency, status, failure_code,
                COUNT(*)::int8, SUM(amount)::int8
            FROM payments WHERE merchant_id = $3 AND environment = $4 AND created_at >= $1 AND created_at < $5
            GROUP BY 1, 2, 3, 4
            """,
            [
                .timestamptz(from), .int8(Int64(bucketSeconds)), .text(merchantID), .text(environment.rawValue),
                .timestamptz(to),
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
            "INSERT INTO refunds (\(Refund.storeColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            r.storeValues.map(PGValue.init))
    }

    func updateRefund(_ r: Refund) throws {
        try db.run(
            "UPDATE refunds SET status = $1, decline_code = $2, updated_at = $3, processor_reference = $4 WHERE id = $5",
            [
                .text(r.status.rawValue), PGValue(r.declineCode), .timestamptz(r.updatedAt),
                PGValue(r.processorReference), .text(r.id),
            ])
    }

    func refunds(paymentID: String) throws -> [Refund] {
        try db.query(
            "SELECT \(Refund.storeColumns) FROM refunds WHERE payment_id = $1 ORDER BY created_at, seq",
            [.text(paymentID)]
        ) { Refund(row: $0) }
    }

    func paymentIDsWithPendingRefunds(limit: Int) throws -> [String] {
        try db.query(
            "SELECT DISTINCT payment_id FROM refunds WHERE status = 'pending' LIMIT $1", [PGValue(limit)]
        ) { $0.text(0) }
    }

    // MARK: Outbox

    func insertEvent(_ e: WebhookEvent, objectID: String, deliveryURL: String?) throws {
        try db.run(
            """
            INSERT INTO webhook_events (id, merchant_id, object_id, type, payload, created_at, delivery_url, state,
                attempts, next_attempt_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', 0, $6)
            """,
            [
                .text(e.id), .text(e.merchantID), .text(objectID), .text(e.type), .bytea(e.payload),
                .timestamptz(e.createdAt), PGValue(deliveryURL),
            ])
    }

    func events(merchantID: String, limit: Int) throws -> [WebhookEvent] {
        try db.query(
            """
            SELECT id, merchant_id, type, payload, created_at FROM webhook_events WHERE merchant_id = $1
            ORDER BY created_at DESC, seq DESC LIMIT $2
            """, [.text(merchantID), PGValue(limit)]
        ) { WebhookEvent(row: $0) }
    }

    // MARK: Idempotency

    func claimIdempotencyKey(_ r: IdempotencyRecord) throws -> Bool {
        try db.change(
            """
            INSERT INTO idempotency_keys (merchant_id, environment, idempotency_key, operation, fingerprint,
                recovery_point, locked_at, response, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            ON CONFLICT (merchant_id, environment, idempotency_key) DO NOTHING
            """,
            [
                .text(r.merchantID), .text(r.environment.rawValue), .text(r.key), .text(r.operation),
                .text(r.fingerprint), .text(r.recoveryPoint), PGValue(r.lockedAt), PGValue(r.responseSealed),
                .timestamptz(r.createdAt),
            ]) == 1
    }

    func idempotencyRecord(
        merchantID: String, environment: GatewayEnvironment, key: String
    ) throws -> IdempotencyRecord? {
        try db.query(
            """
            SELECT operation, fingerprint, recovery_point, locked_at, response, created_at FROM idempotency_keys
            WHERE merchant_id = $1 AND environment = $2 AND idempotency_key = $3
            """, [.text(merchantID), .text(environment.rawValue), .text(key)]
        ) { row in
            IdempotencyRecord(
                merchantID: merchantID, environment: environment, key: key, operation: row.text(0),
                fingerprint: row.text(1), recoveryPoint: row.text(2), lockedAt: row.optionalDate(3),
                responseSealed: row.bytea(4), createdAt: row.date(5))
        }.first
    }

    func updateIdempotencyRecord(_ r: IdempotencyRecord) throws {
        try db.run(
            """
            UPDATE idempotency_keys SET recovery_point = $1, locked_at = $2, response = $3
            WHERE merchant_id = $4 AND environment = $5 AND idempotency_key = $6
            """,
            [
                .text(r.recoveryPoint), PGValue(r.lockedAt), PGValue(r.responseSealed), .text(r.merchantID),
                .text(r.environment.rawValue), .text(r.key),
            ])
    }

    func deleteIdempotencyRecord(merchantID: String, environment: GatewayEnvironment, key: String) throws {
        try db.run(
            "DELETE FROM idempotency_keys WHERE merchant_id = $1 AND environment = $2 AND idempotency_key = $3",
            [.text(merchantID), .text(environment.rawValue), .text(key)])
    }

    func purgeIdempotencyRecords(before: Date) throws -> Int {
        try db.change(
            "DELETE FROM idempotency_keys WHERE response IS NOT NULL AND created_at < $1", [.timestamptz(before)])
    }

    func storedResponse(_ name: String) throws -> Data? {
        try db.query("SELECT value FROM stored_responses WHERE name = $1", [.text(name)]) { $0.bytea(0) }.first
            ?? nil
    }

    func setStoredResponse(_ name: String, value: Data, createdAt: Date) throws {
        try db.run(
            """
            INSERT INTO stored_responses (name, created_at, value) VALUES ($1, $2, $3)
            ON CONFLICT (name) DO UPDATE SET created_at = excluded.created_at, value = excluded.value
            """, [.text(name), .timestamptz(createdAt), .bytea(value)])
    }

    func purgeStoredResponses(before: Date) throws -> Int {
        try db.change("DELETE FROM stored_responses WHERE created_at < $1", [.timestamptz(before)])
    }

    // MARK: Audit log

    func insertAuditEntry(_ e: AuditEntry) throws {
        try db.run(
            "INSERT INTO audit_log (\(AuditEntry.storeColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            [
                .text(e.id), .text(e.merchantID), .text(e.actor.kind), .text(e.actor.name), .text(e.action),
                PGValue(e.target), .jsonb(e.detailJSON), .timestamptz(e.createdAt),
            ])
    }

    func auditEntries(merchantID: String, after: AuditCursor?, limit: Int) throws -> [AuditEntry] {
        var clause = "merchant_id = $1"
        var values: [PGValue] = [.text(merchantID)]
        if let after {
            clause += " AND (created_at < $2 OR (created_at = $2 AND id < $3))"
            values += [.timestamptz(after.createdAt), .text(after.id)]
        }
        values.append(PGValue(limit))
        return try db.query(
            """
            SELECT \(AuditEntry.storeColumns) FROM audit_log WHERE \(clause)
            ORDER BY created_at DESC, id DESC LIMIT $\(values.count)
            """, values, AuditEntry.init(row:))
    }
}

extension PGValue {
    /// A domain value as PostgreSQL takes it.
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
