import Foundation
import Gateway
import GatewaySQLite
import OrchardTestSupport
import Testing

/// A database made by an earlier schema, with rows as that version wrote them, opened by the current code:
/// the migrations convert it in place and every row reads back the same.
@Suite("Schema upgrades")
struct SchemaUpgradeTests {
    static func sqlLiteral(_ text: String?) -> String {
        text.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" } ?? "NULL"
    }

    @Test("a version-3 database: its primes' JSON card information moves into columns, every row intact")
    func primesFromVersion3() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-up-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("v3.db").path
        let fixture = TestPaths.packageRoot.appendingPathComponent("Tests/GatewayTests/Fixtures/schema-v3.sql")
        try SQLiteScript.run(try String(contentsOf: fixture, encoding: .utf8), databasePath: path)
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

        let store = try SQLiteStore(path: path, cipher: nil)
        #expect(try store.appliedMigrations() == [1, 2, 3, 4, 5, 6, 7, 8, 9])
        for p in primes {
            #expect(try store.read { try $0.prime(hash: p.hash) } == p)
        }
        // The converted table takes new rows in the new shape.
        var fresh = primes[0]
        fresh.hash = String(repeating: "c", count: 64)
        try store.write { try $0.insertPrime(fresh) }
        #expect(try store.read { try $0.prime(hash: fresh.hash) } == fresh)
    }
}
