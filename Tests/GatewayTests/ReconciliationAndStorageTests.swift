import Foundation
import Gateway
import GatewayAssembly
import GatewaySQLite
import OrchardCrypto
import Testing

@Suite("Reconciliation")
struct ReconciliationTests {
    @Test(
        "an issuer timeout leaves the payment unknown; reconciliation settles it from a query, never charging again",
        arguments: StoreBackend.all)
    func unknownResolved(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let payment = try h.pay(amount: 10_091)
        #expect(payment.status == .unknown)
        #expect(try h.eventTypes().isEmpty)
        h.clock.advance(by: 30)
        #expect(try h.gateway.payments.reconcile(delay: 0).stillUnknown == [payment.id])
        h.clock.advance(by: 31)
        let report = try h.gateway.payments.reconcile(delay: 0)
        #expect(report.settledPayments == [payment.id])
        #expect(report.capturedPayments == [payment.id])
        let settled = try h.gateway.payments.payment(merchant: h.merchant, id: payment.id)
        #expect(settled.status == .captured)
        #expect(try h.authorizations(payment.id) == 1)
        #expect(try h.eventTypes() == ["payment.unknown_resolved", "payment.captured"])
        let transitions = try h.gateway.payments.transitions(merchant: h.merchant, paymentID: payment.id).map(\.to)
        #expect(transitions == [.processing, .unknown, .authorized, .captured])
        #expect(try LedgerAudit.run(store: h.store).holds)
    }

    @Test("reconciliation waits for the delay so it never races a live request", arguments: StoreBackend.all)
    func respectsDelay(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let payment = try h.pay(amount: 10_091)
        h.clock.advance(by: 120)
        #expect(try h.gateway.payments.reconcile().stillUnknown.isEmpty)
        #expect(try h.gateway.payments.payment(merchant: h.merchant, id: payment.id).status == .unknown)
        h.clock.advance(by: 300)
        #expect(try h.gateway.payments.reconcile().settledPayments == [payment.id])
    }

    @Test("reconciliation drops the card data of expired primes", arguments: StoreBackend.all)
    func purgesPrimes(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        _ = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token())
        h.clock.advance(by: 91)
        #expect(try h.gateway.payments.reconcile().purgedPrimes == 1)
    }
}

@Suite("Storage and secrets")
struct StorageTests {
    @Test(
        "card data is dropped once the authorization is sent and when a prime is claimed", arguments: StoreBackend.all)
    func cardDataLifetime(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token())
        let hash = Identifiers.sha256Hex(prime.prime)
        #expect(try h.store.read { try $0.prime(hash: hash) }?.cardDataSealed != nil)
        let payment = try h.payByPrime(prime.prime, amount: 10_000, currency: "TWD")
        #expect(try h.store.read { try $0.prime(hash: hash) }?.cardDataSealed == nil)
        #expect(try h.store.read { try $0.cardData(paymentID: payment.id) } == nil)
        let declined = expectGatewayError(.cardDeclined) { try h.pay(amount: 10_005) }
        #expect(try h.store.read { try $0.cardData(paymentID: declined!.paymentID!) } == nil)
    }

    @Test("the database file holds neither the PAN nor the cryptogram in plaintext", arguments: StoreBackend.all)
    func noPlaintextSecrets(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        _ = try h.pay()
        _ = try h.pay(captureMode: .manual, key: "abc")
        _ = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token())
        let session = try h.gateway.sessions.create(
            merchant: h.merchant, CreateSessionRequest(outTradeNo: "S", amount: 10_000, currency: "TWD", country: "TW"))
        _ = try h.gateway.sessions.pay(merchant: h.merchant, orderToken: session.orderToken, token: h.token())
        let cryptogram = Data(base64Encoded: Harness.cryptogram)!
        let needles = [
            Data(Harness.pan.utf8), Data(Harness.cryptogram.utf8), cryptogram, Data(h.credentials.appKey.utf8),
            Data(h.credentials.secretKey.utf8), Data("BEGIN PRIVATE KEY".utf8), Data("BEGIN EC PRIVATE KEY".utf8),
        ]
        var scanned = 0
        for (name, bytes) in try h.storedContents() {
            scanned += bytes.count
            for needle in h.storedForms(needles) {
                #expect(bytes.range(of: needle) == nil, "found a secret in \(name)")
            }
        }
        #expect(scanned > 0)
    }

    @Test("migrations are versioned and applied once; reopening keeps the data", arguments: StoreBackend.all)
    func migrations(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let payment = try h.pay()
        let expected = backend == .sqlite ? Array(1...17) : Array(1...16)
        #expect(try h.store.appliedMigrations() == expected)
        let reopened = try h.reopenedStore()
        #expect(try reopened.appliedMigrations() == expected)
        #expect(try reopened.read { try $0.payment(id: payment.id) }?.status == .captured)
    }

    @Test("a session's notify_url receives its events, signed with the merchant's secret", arguments: StoreBackend.all)
    func notifyURL(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let plain = try h.pay()
        let session = try h.gateway.sessions.create(
            merchant: h.merchant,
            CreateSessionRequest(
                outTradeNo: "N-1", amount: 10_000, currency: "TWD", country: "TW",
                notifyURL: "https://shop.example/notify"))
        _ = try h.gateway.sessions.pay(merchant: h.merchant, orderToken: session.orderToken, token: h.token())
        let due = try h.gateway.webhooks.webhookOutbox.dueWebhooks(now: h.clock.now(), limit: 10)
        #expect(due.map(\.event.type) == ["payment.succeeded", "session.completed", "payment.captured"])
        #expect(due.allSatisfy { $0.url == "https://shop.example/notify" && $0.secrets.count == 1 })
        #expect(due.first?.secrets == (try h.gateway.merchants.webhookSecrets(merchantID: h.merchant.id)))
        let unroutable = try #require(
            try h.gateway.webhooks.events(merchant: h.merchant, limit: 100).first {
                (try? JSONSerialization.jsonObject(with: $0.payload) as? [String: Any])
                    .flatMap { $0["data"] as? [String: Any] }?["id"] as? String
                    == plain.id
            })
        expectGatewayError(.webhookEndpointNotConfigured) {
            try h.gateway.webhooks.redeliverEvent(merchant: h.merchant, eventID: unroutable.id)
        }
        expectGatewayError(.notFound) { try h.gateway.webhooks.redeliverEvent(merchant: h.merchant, eventID: "evt_nope") }
    }

    @Test(
        "the outbox: due events carry the endpoint and secrets; attempts move them; redelivery reschedules",
        arguments: StoreBackend.all)
    func outbox(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        _ = try h.pay()
        #expect(try h.gateway.webhooks.webhookOutbox.dueWebhooks(now: h.clock.now(), limit: 10).isEmpty)
        let (url, secret) = try h.gateway.merchants.setWebhookEndpoint(
            merchantID: h.merchant.id, url: "https://shop.example/hook")
        #expect(url == "https://shop.example/hook")
        let outbox = h.gateway.webhooks.webhookOutbox
        let due = try outbox.dueWebhooks(now: h.clock.now(), limit: 10)
        #expect(due.map(\.event.type) == ["payment.succeeded", "payment.captured"])
        #expect(due.allSatisfy { $0.secrets.first == secret && $0.url == url && $0.attempts == 0 })
        #expect(try h.store.read { try $0.pendingWebhookCount() } == 2)
        let event = due[0].event
        let body = try JSONSerialization.jsonObject(with: event.payload) as! [String: Any]
        #expect(body["id"] as? String == event.id)
        #expect(body["type"] as? String == "payment.succeeded")
        #expect(try outbox.beginWebhookAttempt(eventID: event.id, now: h.clock.now()) == 1)
        try outbox.recordWebhookAttempt(
            WebhookAttempt(
                eventID: event.id, attemptedAt: h.clock.now(), httpStatus: 500, error: nil, state: .pending,
                nextAttemptAt: h.clock.now().addingTimeInterval(60)))
        // The retried event is no longer due (the other one stays leased to this outbox).
        #expect(try !outbox.dueWebhooks(now: h.clock.now(), limit: 10).map(\.event.id).contains(event.id))
        // The retry, due a minute later, is claimed again (with the other one, whose lease ended) and numbered 2.
        h.clock.advance(by: 60)
        #expect(try outbox.dueWebhooks(now: h.clock.now(), limit: 10).map(\.event.id).contains(event.id))
        #expect(try outbox.beginWebhookAttempt(eventID: event.id, now: h.clock.now()) == 2)
        try outbox.recordWebhookAttempt(
            WebhookAttempt(
                eventID: event.id, attemptedAt: h.clock.now(), httpStatus: 200, error: nil, state: .delivered,
                nextAttemptAt: nil))
        // A delivered event is no longer the outbox's to send.
        #expect(try outbox.beginWebhookAttempt(eventID: event.id, now: h.clock.now()) == nil)
        #expect(try h.store.read { try $0.webhookState(eventID: event.id) }?.state == .delivered)
        #expect(try h.store.read { try $0.webhookAttempts(eventID: event.id) }.map(\.httpStatus) == [500, 200])
        try h.gateway.webhooks.redeliverEvent(merchant: h.merchant, eventID: event.id)
        #expect(
            try h.gateway.webhooks.webhookOutbox.dueWebhooks(now: h.clock.now(), limit: 10).map(\.event.id).contains(event.id))
        let (_, rotated) = try h.gateway.merchants.setWebhookEndpoint(merchantID: h.merchant.id, url: url)
        #expect(try h.gateway.merchants.webhookSecrets(merchantID: h.merchant.id) == [rotated, secret])
    }
}

@Suite("Merchants and keys")
struct MerchantTests {
    @Test("credentials: random, stored hashed, checked; sandbox keeps them retrievable", arguments: StoreBackend.all)
    func credentials(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let c = h.credentials
        #expect(c.secretKey.hasPrefix("sk_test_"))
        #expect(try h.gateway.merchants.authenticateServer(secretKey: c.secretKey).id == h.merchant.id)
        #expect(try h.gateway.merchants.authenticateClient(appID: c.appID, appKey: c.appKey).id == h.merchant.id)
        // The key with its last character changed (a random key may already end in "x").
        var wrong = c.secretKey
        let last = wrong.removeLast()
        wrong += last == "x" ? "y" : "x"
        #expect(wrong != c.secretKey)
        expectGatewayError(.invalidCredentials) { try h.gateway.merchants.authenticateServer(secretKey: wrong) }
        expectGatewayError(.invalidCredentials) {
            try h.gateway.merchants.authenticateClient(appID: c.appID, appKey: c.secretKey)
        }
        #expect(try h.gateway.merchants.credentials(merchantID: h.merchant.id) == c)
        let (live, liveCredentials) = try h.gateway.merchants.create(
            MerchantSpec(name: "Live", environment: .production, merchantIdentifiers: ["merchant.live"]))
        #expect(liveCredentials.secretKey.hasPrefix("sk_live_"))
        expectGatewayError(.forbidden) { try h.gateway.merchants.credentials(merchantID: live.id) }
    }

    @Test("sandbox and production never mix", arguments: StoreBackend.all)
    func environments(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token())
        var production = h.merchant
        production.environment = .production
        expectGatewayError(.primeNotFound) {
            try h.gateway.payments.payByPrime(
                merchant: production, PayByPrimeRequest(prime: prime.prime, amount: 10_000, currency: "TWD"))
        }
        let payment = try h.pay()
        expectGatewayError(.notFound) { try h.gateway.payments.payment(merchant: production, id: payment.id) }
    }

    @Test("key ring: rotation keeps several keys active; a retired key opens nothing", arguments: StoreBackend.all)
    func keyRing(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let issuer = SandboxPKIIssuer()
        let pki = try #require(try h.store.read { try $0.setting(MerchantRegistry.sandboxPKISetting) })
        let material = try issuer.issueProcessingKey(
            pki: try h.cipher.open(pki, context: SealingContext.setting(MerchantRegistry.sandboxPKISetting)),
            merchantIdentifier: h.merchant.merchantIdentifiers[0], id: "pk_second", now: h.clock.now())
        try h.gateway.keys.addProcessingKey(
            merchantID: h.merchant.id, privateKeyPEM: try material.privateKeyPEM(),
            certificatePEM: material.certificatePEM,
            id: "pk_second")
        #expect(
            try h.gateway.merchants.activeProcessingKeys(merchantID: h.merchant.id).map(\.id) == ["pk_second", h.keyID])
        _ = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token())
        _ = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(certificatePEM: material.certificatePEM))
        try h.gateway.keys.setProcessingKey(merchantID: h.merchant.id, keyID: h.keyID, active: false)
        expectGatewayError(GatewayError.Code(rawValue: "unknown_merchant_key")) {
            try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token())
        }
        _ = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(certificatePEM: material.certificatePEM))
    }

    @Test(
        "sandbox provisioning runs once: the PKI and the merchant persist across restarts", arguments: StoreBackend.all)
    func provisioningOnce(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let again = try MerchantRegistry(store: h.store, cipher: h.cipher, clock: h.clock).ensureSandbox(
            issuer: SandboxPKIIssuer())
        #expect(again.merchant.id == h.merchant.id)
        #expect(again.newCredentials == nil)
        #expect(try h.gateway.merchants.merchants(environment: .sandbox).count == 1)
    }

    @Test("envelope encryption binds the record; the master key file is 0600 in sandbox, required in production")
    func envelopeAndMasterKey() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-mk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("master.key")
        expectGatewayError(.masterKeyMissing) { try MasterKey.load(file: file, environment: .production) }
        let key = try MasterKey.load(file: file, environment: .sandbox)
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try MasterKey.load(file: file, environment: .production).keyID == key.keyID)
        let cipher = EnvelopeCipher(masterKey: key)
        let sealed = try cipher.seal(string: "whsec_secret", context: "record:1")
        #expect(try cipher.openString(sealed, context: "record:1") == "whsec_secret")
        expectGatewayError(.masterKeyInvalid) { try cipher.open(sealed, context: "record:2") }
        let other = EnvelopeCipher(masterKey: try MasterKey.generate())
        expectGatewayError(.masterKeyInvalid) { try other.open(sealed, context: "record:1") }
        expectGatewayError(.masterKeyInvalid) { try MasterKey(hex: "abcd") }
    }
}

@Suite("Ledger audit")
struct LedgerAuditTests {
    @Test(
        "a clean ledger holds; a double authorization, an excess refund and a missing event are found",
        arguments: StoreBackend.all)
    func findings(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let payment = try h.pay()
        #expect(try LedgerAudit.run(store: h.store).holds)
        try h.store.insertAcquirerAuthorization(
            SandboxAuthorization(
                reference: "acq_extra", merchantReference: payment.id, merchantID: h.merchant.id, amount: 10_000,
                currency: "TWD", lastFour: "1111", status: .approved, declineCode: nil, authCode: "000000",
                capturedAmount: 0, refundedAmount: 0, voided: false, createdAt: h.clock.now(), resolvesAt: nil))
        try h.store.write { tx in
            var voided = try tx.payment(id: payment.id)!
            voided.status = .voided
            try tx.updatePayment(voided)
        }
        let report = try LedgerAudit.run(store: h.store)
        #expect(Set(report.findings.map(\.rule)) == ["double_authorization", "missing_event"])
    }

    @Test(
        "the gateway's captures and refunds are compared with the sandbox acquirer's books: equal holds, a difference is found",
        arguments: StoreBackend.all)
    func acquirerBooks(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let payment = try h.pay(amount: 10_000)
        _ = try h.gateway.refunds.refund(merchant: h.merchant, paymentID: payment.id, amount: 3_000)
        let manual = try h.pay(amount: 5_000, captureMode: .manual)
        let clean = try LedgerAudit.run(store: h.store)
        #expect(clean.holds, "\(clean.findings)")
        // A refund the acquirer booked that the gateway does not know of (as a lost update would leave them apart).
        let reference = try #require(try h.gateway.payments.payment(merchant: h.merchant, id: payment.id).acquirerReference)
        #expect(h.acquirer.refund(reference: reference, amount: 1_000, currency: "TWD", operationID: "op_outside") == .succeeded)
        // And a capture the gateway does not know of.
        let manualReference = try #require(try h.gateway.payments.payment(merchant: h.merchant, id: manual.id).acquirerReference)
        #expect(
            h.acquirer.capture(reference: manualReference, amount: 5_000, currency: "TWD", operationID: "op_capture")
                == .succeeded)
        let report = try LedgerAudit.run(store: h.store)
        #expect(!report.holds)
        let differences = report.findings.filter { $0.rule == "acquirer_books_differ" }
        #expect(Set(differences.map(\.paymentID)) == [payment.id, manual.id], "\(report.findings)")
        let refundFinding = try #require(differences.first { $0.paymentID == payment.id })
        #expect(refundFinding.detail.contains("refunded 3000") && refundFinding.detail.contains("4000"), "\(refundFinding)")
        let captureFinding = try #require(differences.first { $0.paymentID == manual.id })
        #expect(captureFinding.detail.contains("captured 0") && captureFinding.detail.contains("5000"), "\(captureFinding)")
    }

}
