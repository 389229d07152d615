import Foundation
import Gateway
import OrchardTestSupport
import Synchronization
import Testing

@testable import GatewayPostgres

/// What only PostgreSQL has: concurrent writers on several connections, lost connections, a server that
/// restarts. Each failure must stay invisible to the caller (run again) or be reported, never half-applied.
@Suite("PostgreSQL store")
struct PostgresStoreTests {
    static let serverConfigured = TestPostgres.serverURL != nil

    /// Runs `body` on `count` threads released together; returns what each threw (nil on success).
    static func together(_ count: Int, _ body: @Sendable @escaping (Int) throws -> Void) -> [String?] {
        runTogether(count, describe: { String(describing: $0) }, body)
    }

    @Test(
        "a serialization failure is retried and unseen: two read-then-write increments both count",
        .enabled(if: serverConfigured, "ORCHARD_TEST_POSTGRES_URL is not set"))
    func serializationFailureRetried() throws {
        let database = try PostgresTestDatabase()
        let store = try database.store()
        try store.write { try $0.setSetting("counter", value: Data("0".utf8)) }
        let bothRead = DispatchGroup()
        bothRead.enter()
        bothRead.enter()
        let firstAttempt = Mutex([true, true])
        let errors = Self.together(2) { index in
            try store.write { tx in
                let value = Int(String(decoding: try tx.setting("counter") ?? Data(), as: UTF8.self)) ?? -1
                if firstAttempt.withLock({ attempts in
                    defer { attempts[index] = false }; return attempts[index]
                }) {
                    // Both transactions have read the old value before either writes it.
                    bothRead.leave()
                    bothRead.wait()
                }
                try tx.setSetting("counter", value: Data(String(value + 1).utf8))
            }
        }
        #expect(errors == [nil, nil])
        #expect(try store.read { try $0.setting("counter") } == Data("2".utf8))
        #expect(store.retriedTransactionCount >= 1)
    }

    @Test(
        "a deadlock is retried and unseen: two writers taking two rows in opposite orders both commit",
        .enabled(if: serverConfigured, "ORCHARD_TEST_POSTGRES_URL is not set"))
    func deadlockRetried() throws {
        let database = try PostgresTestDatabase()
        let store = try database.store()
        try store.write { tx in
            try tx.setSetting("a", value: Data("0".utf8))
            try tx.setSetting("b", value: Data("0".utf8))
        }
        let bothLocked = DispatchGroup()
        bothLocked.enter()
        bothLocked.enter()
        let firstAttempt = Mutex([true, true])
        let errors = Self.together(2) { index in
            let order = index == 0 ? ["a", "b"] : ["b", "a"]
            try store.transaction(.readCommitted) { tx in
                try tx.setSetting(order[0], value: Data("\(index)".utf8))
                if firstAttempt.withLock({ attempts in
                    defer { attempts[index] = false }; return attempts[index]
                }) {
                    bothLocked.leave()
                    bothLocked.wait()
                }
                try tx.setSetting(order[1], value: Data("\(index)".utf8))
            }
        }
        #expect(errors == [nil, nil])
        let values = try store.read { tx in [try tx.setting("a"), try tx.setting("b")] }
        // The transaction run again after the deadlock wrote both rows last.
        #expect(values[0] == values[1])
        #expect(store.retriedTransactionCount >= 1)
    }

    @Test(
        "a connection lost in the middle of a transaction: nothing of it stays, and it runs again on a new one",
        .enabled(if: serverConfigured, "ORCHARD_TEST_POSTGRES_URL is not set"))
    func connectionLostMidTransaction() throws {
        let database = try PostgresTestDatabase()
        let store = try database.store()
        let admin = try database.store()
        let runs = Mutex(0)
        try store.write { tx in
            let run = runs.withLock { count in
                count += 1
                return count
            }
            try tx.setSetting("run-\(run)", value: Data("x".utf8))
            if run == 1 {
                let pid = try #require(
                    try (tx as! PostgresTransaction).db.query("SELECT pg_backend_pid()") { $0.int(0) }.first)
                try admin.transaction(.readCommitted) { other in
                    _ = try other.db.query("SELECT pg_terminate_backend($1::int8::integer)", [.int8(pid)]) {
                        $0.bool(0)
                    }
                }
            }
            try tx.setSetting("last", value: Data("\(run)".utf8))
        }
        #expect(runs.withLock { $0 } == 2)
        #expect(try store.read { try $0.setting("run-1") } == nil)
        #expect(try store.read { try $0.setting("run-2") } == Data("x".utf8))
        #expect(try store.read { try $0.setting("last") } == Data("2".utf8))
    }

    @Test(
        "instances starting together migrate once under the advisory lock",
        .enabled(if: serverConfigured, "ORCHARD_TEST_POSTGRES_URL is not set"))
    func concurrentMigrations() throws {
        let database = try PostgresTestDatabase()
        let errors = Self.together(4) { _ in _ = try database.store() }
        #expect(errors == [nil, nil, nil, nil])
        #expect(try database.store().appliedMigrations() == Array(1...16))
    }

    @Test(
        "the database refuses a second claim of a prime and a second use of a transaction id, whatever the code does",
        .enabled(if: serverConfigured, "ORCHARD_TEST_POSTGRES_URL is not set"))
    func constraintsAtTheDatabase() throws {
        let h = try Harness(.postgres)
        let payment = try h.pay()
        let store = try #require(h.store as? PostgresStore)
        #expect(throws: PostgresError.self) {
            try store.transaction(.readCommitted) { tx in
                try tx.db.run(
                    "UPDATE primes SET payment_id = 'pay_other', claimed_at = now() WHERE payment_id = $1",
                    [.text(payment.id)])
            }
        }
        #expect(throws: PostgresError.self) {
            try store.transaction(.readCommitted) { tx in
                try tx.db.run("INSERT INTO seen_transactions SELECT * FROM seen_transactions")
            }
        }
        #expect(throws: PostgresError.self) {
            try store.transaction(.readCommitted) { tx in
                try tx.db.run(
                    "UPDATE payments SET refunded_amount = captured_amount + 1 WHERE id = $1", [.text(payment.id)])
            }
        }
    }

    @Test(
        "a webhook event handed to one instance is not handed to another until its lease ends",
        .enabled(if: serverConfigured, "ORCHARD_TEST_POSTGRES_URL is not set"))
    func webhookLease() throws {
        let h = try Harness(.postgres)
        _ = try h.gateway.merchants.setWebhookEndpoint(merchantID: h.merchant.id, url: "https://shop.example/hook")
        _ = try h.pay()
        let other = try h.reopenedStore()
        let now = h.clock.now()
        let (one, two) = (WebhookLease.random(), WebhookLease.random())
        let first = try h.store.dueWebhookRows(now: now, limit: 1, lease: one)
        let second = try other.dueWebhookRows(now: now, limit: 10, lease: two)
        #expect(first.count == 1 && second.count == 1)
        #expect(Set(first.map(\.event.id)).isDisjoint(with: second.map(\.event.id)))
        #expect(try other.dueWebhookRows(now: now, limit: 10, lease: two).isEmpty)
        // The instance holding them died: after the lease they are due again, for anyone.
        let later = try other.dueWebhookRows(now: now.addingTimeInterval(one.seconds + 1), limit: 10, lease: two)
        #expect(Set(later.map(\.event.id)) == Set((first + second).map(\.event.id)))
    }

    @Test(
        "the server restarts under load: every acknowledged payment is kept, none is charged twice, /readyz follows",
        .enabled(if: TemporaryPostgresCluster.available, Comment(rawValue: TemporaryPostgresCluster.unavailableMessage))
    )
    func serverRestartUnderLoad() throws {
        let cluster = try TemporaryPostgresCluster()
        let database = try PostgresTestDatabase(onServer: cluster.url)
        let h = try Harness(.postgres, database: database)
        let store = try #require(h.store as? PostgresStore)
        let acknowledged = Mutex([String: PaymentStatus]())
        let failures = Mutex([String]())
        let stopped = Mutex(false)
        let workers = DispatchGroup()
        for _ in 0..<4 {
            workers.enter()
            Thread.detachNewThread {
                defer { workers.leave() }
                while !stopped.withLock({ $0 }) {
                    do {
                        let payment = try h.pay()
                        acknowledged.withLock { $0[payment.id] = payment.status }
                    } catch {
                        failures.withLock { $0.append(String(describing: error)) }
                    }
                }
            }
        }
        Thread.sleep(forTimeInterval: 1)
        try cluster.stop()
        #expect(!store.isReachable())
        Thread.sleep(forTimeInterval: 1)
        try cluster.start()
        Thread.sleep(forTimeInterval: 1.5)
        stopped.withLock { $0 = true }
        workers.wait()
        #expect(store.isReachable())
        let kept = acknowledged.withLock { $0 }
        #expect(kept.count > 4)
        // None is charged twice, acknowledged or not.
        let doubled = try store.transaction(.readOnly) { tx in
            try tx.db.query(
                """
                SELECT count(*) FROM (SELECT merchant_reference FROM sandbox_acquirer_authorizations
                GROUP BY merchant_reference HAVING count(*) > 1) AS doubled
                """
            ) { $0.int(0) }.first
        }
        #expect(doubled == 0)
        for (id, status) in kept {
            #expect(try store.read { try $0.payment(id: id) }?.status == status, "acknowledged payment \(id)")
            let authorizations = try h.authorizations(id)
            if status == .unknown {
                // The acquirer's book entry was being committed when the server went: whether it was kept is
                // unknown to the caller, and reconciliation (below) finds out.
                #expect(authorizations <= 1, "unknown payment \(id)")
            } else {
                #expect(authorizations == 1, "\(status) payment \(id)")
            }
        }
        // Reconciliation settles every unknown one by the acquirer's books: charged once, or failed uncharged.
        let configuration = h.gateway.configuration
        h.clock.advance(by: configuration.authorizationTimeout + configuration.reconciliationDelay + 1)
        try h.gateway.payments.reconcile()
        for id in kept.keys {
            let settled = try #require(try store.read { try $0.payment(id: id) })
            let authorizations = try h.authorizations(id)
            #expect(settled.status != .unknown && settled.status != .processing, "payment \(id)")
            #expect((settled.status == .failed) == (authorizations == 0), "\(settled.status) payment \(id)")
        }
        let audit = try LedgerAudit.run(store: store)
        #expect(audit.holds, "\(audit)")
        // Requests in flight during the restart either waited for the server or failed with a stable error; a
        // failure left nothing half-written (the audit above).
        for failure in failures.withLock({ $0 }) { #expect(!failure.contains("pan"), "\(failure)") }
    }
}
