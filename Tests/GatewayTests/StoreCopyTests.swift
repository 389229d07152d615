import Foundation
import Gateway
import GatewayAssembly
import GatewayPostgres
import GatewaySQLite
import Testing

/// `orchard migrate`'s copy: a SQLite gateway database with history, moved into PostgreSQL whole.
@Suite("Moving up from SQLite")
struct StoreCopyTests {
    /// A SQLite harness with history: payments captured, refunded, captured later, paid by session, an
    /// idempotent request, an unclaimed prime, a BIN table, a webhook endpoint with events delivered, retried and
    /// pending. Returns the idempotent request and its answer.
    private func history(_ h: Harness) throws -> (request: PayByPrimeRequest, answer: Payment) {
        let loaded = try h.gateway.merchants.loadBINTable(
            merchantID: h.merchant.id, csv: "bin_prefix,issuer,country_code\n411111,Orchard Bank,TW\n")
        #expect(loaded == 1)
        try h.gateway.merchants.setCoBrandTable(
            merchantID: h.merchant.id, ranges: [CoBrandRange(low: 41_111_100, high: 41_111_199, code: "ORCHARD")])
        _ = try h.gateway.merchants.setWebhookEndpoint(merchantID: h.merchant.id, url: "https://shop.example/hook")
        _ = try h.pay()
        let refunded = try h.pay(amount: 20_000)
        _ = try h.gateway.refunds.refund(merchant: h.merchant, paymentID: refunded.id, amount: 5_000)
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(amount: 12_000))
        let request = PayByPrimeRequest(prime: prime.prime, amount: 12_000, currency: "TWD", captureMode: .manual)
        let answer = try h.gateway.payments.payByPrime(merchant: h.merchant, request, idempotencyKey: "order-1")
        _ = try h.gateway.payments.capture(merchant: h.merchant, paymentID: answer.id, amount: 6_000)
        let session = try h.gateway.sessions.create(
            merchant: h.merchant,
            CreateSessionRequest(outTradeNo: "S-1", amount: 10_000, currency: "TWD", country: "TW"))
        _ = try h.gateway.sessions.pay(merchant: h.merchant, orderToken: session.orderToken, token: h.token())
        _ = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(amount: 500))
        let outbox = h.gateway.webhooks.webhookOutbox
        let due = try outbox.dueWebhooks(now: h.clock.now(), limit: 2)
        try #require(due.count == 2)
        for item in due { #expect(try outbox.beginWebhookAttempt(eventID: item.event.id, now: h.clock.now()) == 1) }
        try outbox.recordWebhookAttempt(
            WebhookAttempt(
                eventID: due[0].event.id, attemptedAt: h.clock.now(), httpStatus: 200, error: nil, state: .delivered,
                nextAttemptAt: nil))
        try outbox.recordWebhookAttempt(
            WebhookAttempt(
                eventID: due[1].event.id, attemptedAt: h.clock.now(), httpStatus: 503, error: "HTTP 503",
                state: .pending, nextAttemptAt: h.clock.now().addingTimeInterval(60)))
        _ = try h.gateway.signInToConsole(secretKey: h.credentials.secretKey)
        // What the HTTP layer and a payment between its authorization and capture write.
        // The merchant's processor settings, their secret sealed (after the payments, which keep the sandbox).
        try h.gateway.setProcessorSettings(
            merchantID: h.merchant.id,
            body: ["type": "testpsp", "environment": "test", "merchant_account": "Shop", "api_key": "copied-key"])
        try h.store.write { tx in
            _ = try tx.insertProcessorNotification(
                ProcessorNotificationRecord(
                    id: "pn_copied", merchantID: h.merchant.id, processor: "testpsp", eventKey: "CAPTURE:X:Y:true",
                    eventCode: "CAPTURE", success: true, paymentID: answer.id, amount: 6_000, currency: "TWD",
                    outcome: "applied", receivedAt: h.clock.now()))
            try tx.setStoredResponse("response:order-1", value: Data("{\"status\":0}".utf8), createdAt: h.clock.now())
            try tx.setCardData(paymentID: answer.id, sealed: try h.cipher.seal(string: "card", context: "test"))
        }
        return (request, answer)
    }

    @Test("a database with history copies whole: every count, the payments, the outbox, sealed secrets, audit")
    func copiesEverything() throws {
        try StoreBackend.postgres.requireServer()
        let h = try Harness(.sqlite, connectors: { [RecordingConnector($0)] })
        let (request, answer) = try history(h)
        let source = try #require(h.store as? SQLiteStore)
        let counts = try source.rowCounts()
        #expect(Set(counts.keys) == Set(StoreCopy.tables))
        for table in StoreCopy.tables {
            #expect((counts[table] ?? 0) > 0, "the history leaves \(table) empty")
        }

        let database = try PostgresTestDatabase()
        let target = try database.store()
        let report = try StoreCopy.copy(from: source, to: target)
        #expect(try target.rowCounts() == counts)
        #expect(report.rows.map(\.table) == StoreCopy.tables)
        #expect(Dictionary(uniqueKeysWithValues: report.rows.map { ($0.table, $0.count) }) == counts)
        #expect(report.audit.holds && report.audit.paymentsChecked == counts["payments"])
        #expect(try LedgerAudit.run(store: target).holds)

        // The rows read back as they were.
        let payments = try h.gateway.payments.list(merchant: h.merchant, query: PaymentQuery()).payments
        try #require(payments.count == 4)
        for payment in payments {
            #expect(
                try target.read { try $0.payment(id: payment.id) }
                    == (try source.read { try $0.payment(id: payment.id) }))
            #expect(try target.read { try $0.refunds(paymentID: payment.id) } == payment.refunds)
            #expect(
                try target.read { try $0.transitions(paymentID: payment.id) }
                    == (try source.read { try $0.transitions(paymentID: payment.id) }))
            #expect(
                try target.acquirerAuthorizations(merchantReference: payment.id)
                    == (try source.acquirerAuthorizations(merchantReference: payment.id)))
        }
        #expect(
            try target.read { try $0.events(merchantID: h.merchant.id, limit: 100) }
                == (try source.read { try $0.events(merchantID: h.merchant.id, limit: 100) }))
        for event in try source.read({ try $0.events(merchantID: h.merchant.id, limit: 100) }) {
            #expect(
                try target.read { try $0.webhookState(eventID: event.id) }!
                    == (try source.read { try $0.webhookState(eventID: event.id) })!)
            #expect(
                try target.read { try $0.webhookAttempts(eventID: event.id) }
                    == (try source.read { try $0.webhookAttempts(eventID: event.id) }))
        }

        // Sealed secrets open under the same master key.
        let registry = MerchantRegistry(store: target, cipher: h.cipher, clock: h.clock)
        #expect(try registry.authenticateServer(secretKey: h.credentials.secretKey).id == h.merchant.id)
        #expect(try registry.credentials(merchantID: h.merchant.id) == h.credentials)
        let secrets = try h.gateway.merchants.webhookSecrets(merchantID: h.merchant.id)
        #expect(try registry.webhookSecrets(merchantID: h.merchant.id) == secrets)
        #expect(try registry.activeProcessingKeys(merchantID: h.merchant.id).map(\.id) == [h.keyID])
        #expect(
            try target.read { try $0.processorNotifications(merchantID: h.merchant.id, limit: 10) }
                == (try source.read { try $0.processorNotifications(merchantID: h.merchant.id, limit: 10) }))
        let settings = try #require(
            try target.read { try $0.processorSettings(merchantID: h.merchant.id, version: nil) })
        #expect(settings == (try source.read { try $0.processorSettings(merchantID: h.merchant.id, version: nil) }))
        let copied = GatewayService(
            store: target, processor: h.acquirer, connectors: [RecordingConnector(h.acquirer)],
            tokenOpener: h.tokenOpener,
            currencies: ISO4217Currencies(), paymentRequests: nil, cipher: h.cipher, clock: h.clock)
        #expect(try copied.processorSettings(merchantID: h.merchant.id).secretHints == ["api_key": "-key"])
        let card = try #require(try target.read { try $0.cardData(paymentID: answer.id) })
        #expect(try h.cipher.openString(card, context: "test") == "card")
        let due = try StoreWebhookOutbox(store: target, cipher: h.cipher).dueWebhooks(now: h.clock.now(), limit: 100)
        #expect(!due.isEmpty && due.allSatisfy { $0.secrets == secrets })

        // A gateway on the copy answers the idempotent request as before and keeps paying.
        let acquirer = SandboxAcquirer(ledger: target, clock: h.clock)
        let gateway = GatewayService(
            configuration: GatewayConfiguration(), store: target, processor: acquirer,
            connectors: [RecordingConnector(acquirer)], tokenOpener: h.tokenOpener,
            currencies: ISO4217Currencies(), paymentRequests: ApplePayRequestEvaluator(), cipher: h.cipher,
            clock: h.clock)
        #expect(try gateway.payments.payByPrime(merchant: h.merchant, request, idempotencyKey: "order-1") == answer)
        let prime = try gateway.payments.tokenize(merchant: h.merchant, token: h.token(amount: 700))
        #expect(prime.cardInfo.issuer == "Orchard Bank")
        #expect(prime.affiliateCodes == ["ORCHARD"])
        let paid = try gateway.payments.payByPrime(
            merchant: h.merchant, PayByPrimeRequest(prime: prime.prime, amount: 700, currency: "TWD"),
            idempotencyKey: nil)
        #expect(paid.status == .captured)

        // A second copy into the now non-empty target is refused, and changes nothing.
        let before = try target.rowCounts()
        #expect {
            try StoreCopy.copy(from: source, to: target)
        } throws: { ($0 as? StoreCopyError)?.code == .targetNotEmpty }
        #expect(try target.rowCounts() == before)
    }

    @Test("a copy that fails on a row leaves the target empty, and runs again once the row is mended")
    func failedCopyRunsAgain() throws {
        try StoreBackend.postgres.requireServer()
        let h = try Harness(.sqlite)
        let payment = try h.pay()
        // A claimed prime that names no payment: PostgreSQL's schema refuses it.
        try SQLiteScript.run("UPDATE primes SET payment_id = NULL", databasePath: h.databasePath)
        let source = try #require(h.store as? SQLiteStore)
        let database = try PostgresTestDatabase()
        let target = try database.store()
        #expect {
            try StoreCopy.copy(from: source, to: target)
        } throws: { ($0 as? StoreCopyError)?.code == .copyFailed }
        #expect(try target.rowCounts().values.allSatisfy { $0 == 0 })

        try SQLiteScript.run(
            "UPDATE primes SET payment_id = '\(payment.id)' WHERE claimed_at IS NOT NULL", databasePath: h.databasePath)
        let report = try StoreCopy.copy(from: source, to: target)
        #expect(try target.rowCounts() == (try source.rowCounts()))
        #expect(report.rows.first { $0.table == "primes" }?.count == 1)
        #expect(try target.read { try $0.payment(id: payment.id) } == payment)
    }

    @Test("a copy whose audit fails is rolled back: a captured payment without its event")
    func auditFailureRollsBack() throws {
        try StoreBackend.postgres.requireServer()
        let h = try Harness(.sqlite)
        _ = try h.pay()
        try SQLiteScript.run("DELETE FROM webhook_attempts; DELETE FROM webhook_events", databasePath: h.databasePath)
        let source = try #require(h.store as? SQLiteStore)
        let database = try PostgresTestDatabase()
        let target = try database.store()
        let failure = #expect(throws: StoreCopyError.self) { try StoreCopy.copy(from: source, to: target) }
        #expect(failure?.code == .auditFailed)
        #expect(failure?.reason.contains("missing_event") == true)
        #expect(try target.rowCounts().values.allSatisfy { $0 == 0 })
    }
}
