import Foundation
import Gateway
import GatewaySQLite
import Testing

@Suite("Order sessions")
struct SessionTests {
    @Test(
        "create → pay with a token → completed; a retry of the same token answers the first result",
        arguments: StoreBackend.all)
    func endToEnd(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let session = try h.gateway.sessions.create(
            merchant: h.merchant,
            CreateSessionRequest(outTradeNo: "T-1", amount: 25_000, currency: "TWD", country: "tw", subject: "Tea set"))
        #expect(session.status == .open)
        #expect(session.merchantIdentifier == "merchant.dev.orchard.sandbox")
        #expect(session.expiresAt == h.clock.now().addingTimeInterval(30 * 60))
        #expect(try h.gateway.sessions.session(merchant: h.merchant, orderToken: session.orderToken).country == "TW")
        let token = h.token(amount: 25_000, transactionIdentifier: "ABC123")
        let payment = try h.gateway.sessions.pay(merchant: h.merchant, orderToken: session.orderToken, token: token)
        #expect(payment.status == .captured)
        #expect(payment.outTradeNo == "T-1")
        let retry = try h.gateway.sessions.pay(merchant: h.merchant, orderToken: session.orderToken, token: token)
        #expect(retry.id == payment.id)
        #expect(try h.authorizations(payment.id) == 1)
        #expect(try h.gateway.sessions.session(merchant: h.merchant, orderToken: session.orderToken).status == .completed)
        #expect(try h.eventTypes() == ["payment.succeeded", "session.completed", "payment.captured"])
        expectGatewayError(.sessionAlreadyPaid) {
            try h.gateway.sessions.pay(
                merchant: h.merchant, orderToken: session.orderToken, token: h.token(amount: 25_000))
        }
        let found = try h.gateway.payments.list(merchant: h.merchant, query: PaymentQuery(outTradeNo: "T-1"))
        #expect(found.payments.map(\.id) == [payment.id])
    }

    @Test("out_trade_no is unique per merchant", arguments: StoreBackend.all)
    func duplicateOutTradeNo(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let request = CreateSessionRequest(outTradeNo: "T-1", amount: 100, currency: "TWD", country: "TW")
        _ = try h.gateway.sessions.create(merchant: h.merchant, request)
        expectGatewayError(.duplicateOutTradeNo) { try h.gateway.sessions.create(merchant: h.merchant, request) }
    }

    @Test(
        "the token must match the session's amount and currency; a decline reopens the session",
        arguments: StoreBackend.all)
    func mismatchAndDecline(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let session = try h.gateway.sessions.create(
            merchant: h.merchant,
            CreateSessionRequest(outTradeNo: "T-2", amount: 10_005, currency: "TWD", country: "TW"))
        expectGatewayError(.amountMismatch) {
            try h.gateway.sessions.pay(
                merchant: h.merchant, orderToken: session.orderToken, token: h.token(amount: 10_000))
        }
        expectGatewayError(.currencyMismatch) {
            try h.gateway.sessions.pay(
                merchant: h.merchant, orderToken: session.orderToken, token: h.token(amount: 10_005, currency: "840"))
        }
        expectGatewayError(.cardDeclined) {
            try h.gateway.sessions.pay(
                merchant: h.merchant, orderToken: session.orderToken, token: h.token(amount: 10_005))
        }
        #expect(try h.gateway.sessions.session(merchant: h.merchant, orderToken: session.orderToken).status == .open)
    }

    @Test("an expired or unknown session cannot be paid", arguments: StoreBackend.all)
    func expiredAndUnknown(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let session = try h.gateway.sessions.create(
            merchant: h.merchant, CreateSessionRequest(outTradeNo: "T-3", amount: 100, currency: "TWD", country: "TW"))
        h.clock.advance(by: 30 * 60)
        expectGatewayError(.sessionExpired) {
            try h.gateway.sessions.pay(merchant: h.merchant, orderToken: session.orderToken, token: h.token(amount: 100))
        }
        expectGatewayError(.sessionNotFound) {
            try h.gateway.sessions.pay(merchant: h.merchant, orderToken: "ot_nope", token: h.token(amount: 100))
        }
    }
}

@Suite("Idempotency")
struct IdempotencyTests {
    @Test("a finished request is replayed for 24 hours, without a second charge", arguments: StoreBackend.all)
    func replay(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token())
        let request = PayByPrimeRequest(prime: prime.prime, amount: 10_000, currency: "TWD")
        let first = try h.gateway.payments.payByPrime(merchant: h.merchant, request, idempotencyKey: "k1")
        h.clock.advance(by: 23 * 3600)
        let again = try h.gateway.payments.payByPrime(merchant: h.merchant, request, idempotencyKey: "k1")
        #expect(again == first)
        #expect(try h.authorizations(first.id) == 1)
        h.clock.advance(by: 2 * 3600)
        expectGatewayError(.primeAlreadyUsed) {
            try h.gateway.payments.payByPrime(merchant: h.merchant, request, idempotencyKey: "k1")
        }
    }

    @Test("failures are stored and replayed too", arguments: StoreBackend.all)
    func failureReplay(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(amount: 10_005))
        let request = PayByPrimeRequest(prime: prime.prime, amount: 10_005, currency: "TWD")
        let first = expectGatewayError(.cardDeclined) {
            try h.gateway.payments.payByPrime(merchant: h.merchant, request, idempotencyKey: "k2")
        }
        let second = expectGatewayError(.cardDeclined) {
            try h.gateway.payments.payByPrime(merchant: h.merchant, request, idempotencyKey: "k2")
        }
        #expect(first?.paymentID == second?.paymentID)
        #expect(second?.declineCode == "do_not_honor")
        #expect(try h.authorizations(first!.paymentID!) == 1)
    }

    @Test("the same key with other parameters or another operation is a conflict", arguments: StoreBackend.all)
    func conflict(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let payment = try h.pay(amount: 10_000, captureMode: .manual)
        _ = try h.gateway.payments.capture(merchant: h.merchant, paymentID: payment.id, amount: 5_000, idempotencyKey: "cap")
        expectGatewayError(.idempotencyConflict) {
            try h.gateway.payments.capture(merchant: h.merchant, paymentID: payment.id, amount: 6_000, idempotencyKey: "cap")
        }
        expectGatewayError(.idempotencyConflict) {
            try h.gateway.payments.void(merchant: h.merchant, paymentID: payment.id, idempotencyKey: "cap")
        }
        let replayed = try h.gateway.payments.capture(
            merchant: h.merchant, paymentID: payment.id, amount: 5_000, idempotencyKey: "cap")
        #expect(replayed.capturedAmount == 5_000)
        expectGatewayError(.idempotencyKeyInvalid) {
            try h.gateway.payments.void(merchant: h.merchant, paymentID: payment.id, idempotencyKey: "")
        }
    }

    @Test("keys are scoped per merchant", arguments: StoreBackend.all)
    func scopedPerMerchant(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let (other, _) = try h.gateway.merchants.create(
            MerchantSpec(name: "Other", environment: .sandbox, merchantIdentifiers: ["merchant.other"]))
        _ = try h.gateway.sessions.create(
            merchant: h.merchant, CreateSessionRequest(outTradeNo: "A", amount: 100, currency: "TWD", country: "TW"),
            idempotencyKey: "same")
        let theirs = try h.gateway.sessions.create(
            merchant: other, CreateSessionRequest(outTradeNo: "B", amount: 200, currency: "TWD", country: "TW"),
            idempotencyKey: "same")
        #expect(theirs.outTradeNo == "B")
    }

    @Test(
        "a request in flight on another thread makes the same key answer idempotency_in_flight",
        arguments: StoreBackend.all)
    func inFlightAcrossThreads(_ backend: StoreBackend) throws {
        let h = try Harness(backend, gate: true)
        let gate = h.gateway.processor as! GatedProcessor
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token())
        let request = PayByPrimeRequest(prime: prime.prime, amount: 10_000, currency: "TWD")
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var firstResult: Result<Payment, GatewayError>?
        Thread.detachNewThread {
            do {
                firstResult = .success(try h.gateway.payments.payByPrime(merchant: h.merchant, request, idempotencyKey: "fly"))
            } catch {
                firstResult = .failure(error as! GatewayError)
            }
            done.signal()
        }
        gate.entered.wait()
        // The card data left the database before the authorization was handed to the processor.
        let inFlight = try #require(try h.gateway.payments.list(merchant: h.merchant, query: PaymentQuery()).payments.first)
        #expect(inFlight.status == .processing)
        #expect(try h.store.read { try $0.cardData(paymentID: inFlight.id) } == nil)
        expectGatewayError(.idempotencyInFlight) {
            try h.gateway.payments.payByPrime(merchant: h.merchant, request, idempotencyKey: "fly")
        }
        gate.release.signal()
        done.wait()
        let first = try #require(try firstResult?.get())
        #expect(first.status == .captured)
        #expect(try h.gateway.payments.payByPrime(merchant: h.merchant, request, idempotencyKey: "fly") == first)
        #expect(try h.authorizations(first.id) == 1)
    }

    /// Starts `payByPrime` with `key` on another thread; it blocks at the processor until released.
    private func startBlocked(_ h: Harness, prime: String, key: String) -> (DispatchSemaphore, () -> GatewayError?) {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: GatewayError?
        Thread.detachNewThread {
            do {
                _ = try h.gateway.payments.payByPrime(
                    merchant: h.merchant, PayByPrimeRequest(prime: prime, amount: 10_000, currency: "TWD"),
                    idempotencyKey: key)
            } catch { failure = error as? GatewayError }
            done.signal()
        }
        return (done, { failure })
    }

    @Test(
        "a holder presumed dead: the retry takes the key over, settles by query, and a late approval is voided",
        arguments: StoreBackend.all)
    func takeoverAfterLockTimeout(_ backend: StoreBackend) throws {
        let h = try Harness(backend, gate: true)
        let gate = h.gateway.processor as! GatedProcessor
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token())
        let (done, _) = startBlocked(h, prime: prime.prime, key: "dead")
        gate.entered.wait()
        h.clock.advance(by: 61)
        // Nobody declined: the authorization never reached the processor, so no money moved.
        let retry = expectGatewayError(.processorUnavailable) {
            try h.gateway.payments.payByPrime(
                merchant: h.merchant, PayByPrimeRequest(prime: prime.prime, amount: 10_000, currency: "TWD"),
                idempotencyKey: "dead")
        }
        #expect(retry?.declineCode == "not_sent")
        gate.release.signal()
        done.wait()
        let paymentID = try #require(retry?.paymentID)
        #expect(try h.gateway.payments.payment(merchant: h.merchant, id: paymentID).status == .failed)
        let authorizations = try h.store.acquirerAuthorizations(merchantReference: paymentID)
        #expect(authorizations.count == 1)
        #expect(authorizations.first?.voided == true)
        #expect(try LedgerAudit.run(store: h.store).holds)
    }

    @Test(
        "within the processor timeout a missing authorization is not proof: the payment waits in unknown",
        arguments: StoreBackend.all)
    func takeoverWithinAuthorizationTimeout(_ backend: StoreBackend) throws {
        let h = try Harness(backend, gate: true) { $0.authorizationTimeout = 120 }
        let gate = h.gateway.processor as! GatedProcessor
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token())
        let (done, firstError) = startBlocked(h, prime: prime.prime, key: "slow")
        gate.entered.wait()
        h.clock.advance(by: 61)
        let resumed = try h.gateway.payments.payByPrime(
            merchant: h.merchant, PayByPrimeRequest(prime: prime.prime, amount: 10_000, currency: "TWD"),
            idempotencyKey: "slow")
        #expect(resumed.status == .unknown)
        gate.release.signal()
        done.wait()
        #expect(firstError() == nil)
        let settled = try h.gateway.payments.payment(merchant: h.merchant, id: resumed.id)
        #expect(settled.status == .captured)
        #expect(try h.authorizations(resumed.id) == 1)
        #expect(try h.eventTypes() == ["payment.unknown_resolved", "payment.captured"])
    }
}
