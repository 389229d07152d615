import Foundation
import OrchardTestSupport
import Testing

@testable import Gateway
@testable import GatewaySQLite

/// A database made by an earlier schema, with rows as that version wrote them, opened by the current code:
/// the migrations convert it in place and every row reads back the same.
@Suite("Schema upgrades")
struct SchemaUpgradeTests {
    /// A database at schema version 3 in a new `directory`, made by migrations 1 to 3 as they shipped (SQL only, so
    /// the old database is what those versions wrote); returns its path.
    static func version3Database(in directory: URL) throws -> String {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("old.db").path
        let shipped = Migrations.all.filter { $0.version <= 3 }
        try #require(shipped.map(\.version) == [1, 2, 3] && shipped.allSatisfy { $0.convert == nil })
        var script = """
            CREATE TABLE schema_migrations (
                version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL);

            """
        for migration in shipped {
            script += migration.sql + ";\n"
            script += "INSERT INTO schema_migrations (version, name, applied_at) VALUES "
            script += "(\(migration.version), '\(migration.name)', 1800000000000);\n"
        }
        try SQLiteScript.run(script, databasePath: path)
        return path
    }

    static func sqlLiteral(_ text: String?) -> String {
        text.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" } ?? "NULL"
    }

    @Test("a version-3 database: its primes' JSON card information moves into columns, every row intact")
    func primesFromVersion3() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-up-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.version3Database(in: directory)
        // Rows as version 3 wrote them: card information as sorted-key JSON of `CardInfo`.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let created = Date(timeIntervalSince1970: 1_800_000_000)
        let primes = [
            PrimeRecord(
                hash: String(repeating: "a", count: 64), merchantID: "mch_1", environment: .sandbox, amount: 15_000,
                currency: "TWD", isDeferred: false,
                cardInfo: CardInfo(
                    binCode: "411111", lastFour: "1111", type: 1, funding: 0, network: "Visa", issuer: "O'Bank",
                    bankID: "012", level: "Platinum", country: "TAIWAN", countryCode: "TW"),
                cardDataSealed: Data([1, 2, 3]), createdAt: created, expiresAt: created.addingTimeInterval(60),
                claimedAt: nil, paymentID: nil),
            PrimeRecord(
                hash: String(repeating: "b", count: 64), merchantID: "mch_1", environment: .sandbox, amount: 1,
                currency: "USD", isDeferred: true,
                cardInfo: CardInfo(binCode: "52000000", lastFour: "0007", type: 2, funding: -1),
                cardDataSealed: nil, createdAt: created, expiresAt: created.addingTimeInterval(60),
                claimedAt: created.addingTimeInterval(5), paymentID: "pay_1"),
        ]
        var rows = [
            """
            INSERT INTO merchants (id, environment, app_id, secret_key_id, webhook_url, created_at, body)
            VALUES ('mch_1', 'sandbox', 'app_1', 'sk_1', NULL, 1800000000000, '{}');
            """
        ]
        for p in primes {
            let card = String(decoding: try encoder.encode(p.cardInfo), as: UTF8.self)
            let sealed = p.cardDataSealed.map { "X'" + $0.map { String(format: "%02X", $0) }.joined() + "'" } ?? "NULL"
            rows.append(
                """
                INSERT INTO primes (hash, merchant_id, environment, amount, currency, deferred, card_info, card_data,
                    created_at, expires_at, claimed_at, payment_id)
                VALUES ('\(p.hash)', '\(p.merchantID)', 'sandbox', \(p.amount), '\(p.currency)', \(p.isDeferred ? 1 : 0),
                    \(Self.sqlLiteral(card)), \(sealed), \(p.createdAt.unixMilliseconds), \(p.expiresAt.unixMilliseconds),
                    \(p.claimedAt.map { String($0.unixMilliseconds) } ?? "NULL"), \(Self.sqlLiteral(p.paymentID)));
                """)
        }
        try SQLiteScript.run(rows.joined(separator: "\n"), databasePath: path)

        let store = try SQLiteStore(path: path)
        #expect(try store.appliedMigrations() == Array(1...17))
        for p in primes {
            #expect(try store.read { try $0.prime(hash: p.hash) } == p)
        }
        // The converted table takes new rows in the new shape.
        var fresh = primes[0]
        fresh.hash = String(repeating: "c", count: 64)
        try store.write { try $0.insertPrime(fresh) }
        #expect(try store.read { try $0.prime(hash: fresh.hash) } == fresh)
    }

    @Test("a database of today's payments (JSON rows): migration 10 moves every field into columns, every row intact")
    func paymentsFromJSONRows() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-up-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.version3Database(in: directory)
        // Payments as the store wrote them up to version 5: the whole record as JSON (sorted keys, times as Unix
        // milliseconds, refunds empty) next to the queried columns.
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        let created = Date(unixMilliseconds: 1_800_000_000_123)
        let card = CardInfo(
            binCode: "411111", lastFour: "1111", type: 1, funding: 0, network: "Visa", issuer: "O'Bank", bankID: "012",
            level: "Platinum", country: "TAIWAN", countryCode: "TW", issuerZhTW: "歐銀")
        let bare = Payment(
            id: "pay_1", merchantID: "mch_1", environment: .sandbox, status: .processing, amount: 15_000,
            currency: "TWD", capturedAmount: 0, refundedAmount: 0, orderNumber: nil, outTradeNo: nil, sessionID: nil,
            details: nil, cardholder: nil, metadata: [:],
            cardInfo: CardInfo(binCode: "", lastFour: "0007", type: -1, funding: -1),
            captureMode: .now, captureAt: nil, authCode: nil, acquirer: "sandbox", acquirerReference: nil,
            failureCode: nil, createdAt: created, updatedAt: created, authorizedAt: nil, capturedAt: nil, voidedAt: nil,
            refunds: [], authorizationSentAt: nil, pendingOperation: nil)
        var full = bare
        full.id = "pay_2"
        full.status = .authorized
        full.orderNumber = "order-2"
        full.details = "two 'items'"
        full.cardholder = Cardholder(
            name: "王小明", email: "a@example.com", phoneNumber: "+886912345678", zipCode: "100", address: nil,
            nationalID: "A123456789")
        full.metadata = ["campaign": "spring", "note": "a \"quoted\" value"]
        full.cardInfo = card
        full.captureMode = .afterDays(3)
        full.captureAt = created.addingTimeInterval(3 * 86_400)
        full.authCode = "123456"
        full.acquirerReference = "acq_2"
        full.authorizedAt = created.addingTimeInterval(1)
        full.authorizationSentAt = created.addingTimeInterval(0.5)
        full.pendingOperation = PendingOperation(kind: .capture, operationID: "capture_pay_2", amount: 15_000)
        var manual = bare
        manual.id = "pay_3"
        manual.status = .voided
        manual.captureMode = .manual
        manual.cardholder = Cardholder()
        manual.failureCode = nil
        manual.voidedAt = created.addingTimeInterval(9)
        manual.capturedAt = created.addingTimeInterval(8)
        let payments = [bare, full, manual]
        var rows = [
            """
            INSERT INTO merchants (id, environment, app_id, secret_key_id, webhook_url, created_at, body)
            VALUES ('mch_1', 'sandbox', 'app_1', 'sk_1', NULL, 1800000000000, '{}');
            """
        ]
        func millis(_ date: Date?) -> String { date.map { String($0.unixMilliseconds) } ?? "NULL" }
        for p in payments {
            let body = String(decoding: try encoder.encode(p), as: UTF8.self)
            rows.append(
                """
                INSERT INTO payments (id, merchant_id, environment, status, amount, currency, captured_amount,
                    refunded_amount, order_number, out_trade_no, session_id, pending_operation, capture_at, created_at,
                    updated_at, body)
                VALUES ('\(p.id)', 'mch_1', 'sandbox', '\(p.status.rawValue)', \(p.amount), '\(p.currency)', 0, 0,
                    \(Self.sqlLiteral(p.orderNumber)), NULL, NULL, \(p.pendingOperation == nil ? 0 : 1),
                    \(millis(p.status == .authorized ? p.captureAt : nil)), \(millis(p.createdAt)), \(millis(p.updatedAt)),
                    \(Self.sqlLiteral(body)));
                """)
        }
        try SQLiteScript.run(rows.joined(separator: "\n"), databasePath: path)

        let store = try SQLiteStore(path: path)
        #expect(try store.appliedMigrations() == Array(1...17))
        for p in payments {
            #expect(try store.read { try $0.payment(id: p.id) } == Self.toTheMillisecond(p))
        }
        // The queries of the reconciliation job still find them by the kept columns.
        #expect(
            try store.read { try $0.paymentIDs(statuses: [.processing], updatedBefore: .distantFuture, limit: 10) } == [
                "pay_1"
            ])
        #expect(try store.read { try $0.paymentIDsNeedingCapture(due: .distantFuture, limit: 10) } == ["pay_2"])
        // The converted table takes new rows in the new shape, and updates them.
        var fresh = full
        fresh.id = "pay_4"
        fresh.createdAt = created
        fresh.updatedAt = created
        fresh.captureAt = nil
        fresh.authorizedAt = nil
        fresh.authorizationSentAt = nil
        try store.write { try $0.insertPayment(fresh) }
        #expect(try store.read { try $0.payment(id: "pay_4") } == Self.toTheMillisecond(fresh))
        fresh.status = .captured
        fresh.capturedAmount = 15_000
        fresh.pendingOperation = nil
        try store.write { try $0.updatePayment(fresh) }
        #expect(try store.read { try $0.payment(id: "pay_4") } == Self.toTheMillisecond(fresh))
    }

    /// `p` with its times as the store keeps them (Unix milliseconds).
    static func toTheMillisecond(_ p: Payment) -> Payment {
        func ms(_ date: Date?) -> Date? { date.map { Date(unixMilliseconds: $0.unixMilliseconds) } }
        var p = p
        p.createdAt = ms(p.createdAt)!
        p.updatedAt = ms(p.updatedAt)!
        p.captureAt = ms(p.captureAt)
        p.authorizedAt = ms(p.authorizedAt)
        p.authorizationSentAt = ms(p.authorizationSentAt)
        p.capturedAt = ms(p.capturedAt)
        p.voidedAt = ms(p.voidedAt)
        return p
    }
}
