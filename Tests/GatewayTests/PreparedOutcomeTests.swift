import Foundation
import Testing

@testable import Gateway

/// A payment's outcome is rendered on the request's thread before its write joins a group commit
/// (``PreparedOutcome``): the bytes bound there must be the ones rendering inside the transaction gives.
@Suite("Outcomes prepared before their transaction")
struct PreparedOutcomeTests {
    @Test(
        "pay with a key at a time between milliseconds: the stored result and the webhook bodies are the payment as stored",
        arguments: StoreBackend.all)
    func preparedMatchesStored(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        // Not a whole millisecond: the store keeps milliseconds, the result prepared ahead must too.
        h.clock.advance(by: 0.123_456_7)
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token())
        let request = PayByPrimeRequest(prime: prime.prime, amount: 10_000, currency: "TWD", captureMode: .now)
        let paid = try h.gateway.payments.payByPrime(merchant: h.merchant, request, idempotencyKey: "prepared-1")
        #expect(paid.status == .captured)
        let stored = try h.gateway.payments.payment(merchant: h.merchant, id: paid.id)
        let replayed = try h.gateway.payments.payByPrime(merchant: h.merchant, request, idempotencyKey: "prepared-1")
        #expect(replayed == stored)
        let transitions = try h.store.read { try $0.transitions(paymentID: paid.id) }
        #expect(transitions.map(\.to) == [.processing, .authorized, .captured])
        let events = try h.gateway.webhooks.events(merchant: h.merchant).filter { $0.type.hasPrefix("payment.") }
        #expect(events.map(\.type).sorted() == ["payment.captured", "payment.succeeded"])
        let captured = try #require(events.first { $0.type == "payment.captured" })
        let capturedBody = try #require(WebhookEventEnvelope(payload: captured.payload))
        #expect(capturedBody.data == (try WireFormat.json(WireFormat.payment(stored, transitions: transitions))))
        // The approval's event shows the payment as it was between the two steps.
        let succeeded = try #require(events.first { $0.type == "payment.succeeded" })
        let succeededBody = try #require(WebhookEventEnvelope(payload: succeeded.payload))
        var authorized = stored
        authorized.status = .authorized
        authorized.capturedAmount = 0
        authorized.capturedAt = nil
        authorized.pendingOperation = PendingOperation(
            kind: .capture, operationID: GatewayService.captureOperationID(paid.id), amount: paid.amount)
        #expect(
            succeededBody.data
                == (try WireFormat.json(WireFormat.payment(authorized, transitions: Array(transitions.prefix(2))))))
    }

    @Test("nothing is prepared for a settled or missing payment: the transaction decides", arguments: StoreBackend.all)
    func notPrepared(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let paid = try h.pay()
        let approval = ProcessorApproval(reference: "ref-late", authCode: "123456")
        let event = PaymentEvent.authorizationApproved(approval, cause: .authorization(.authorization, .approved))
        #expect(
            h.gateway.prepareOutcome(
                paymentID: paid.id, event: event, then: .captureSucceeded(amount: paid.amount), completing: nil,
                at: h.clock.now()) == nil)
        #expect(
            h.gateway.prepareOutcome(
                paymentID: "pay_missing", event: event, then: nil, completing: nil, at: h.clock.now()) == nil)
    }
}
