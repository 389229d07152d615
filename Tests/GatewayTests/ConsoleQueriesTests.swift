import Foundation
import Gateway
import Testing

/// What the console's pages read beyond the first API: payments by the card's last four, the events about one
/// payment, and each delivery attempt with its latency.
@Suite("Console queries")
struct ConsoleQueriesTests {
    @Test("payments filter by the card's last four digits", arguments: StoreBackend.all)
    func lastFour(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let first = try h.pay(orderNumber: "A-1")
        let second = try h.pay(amount: 20_000, orderNumber: "A-2")
        #expect(first.cardInfo.lastFour == String(Harness.pan.suffix(4)))
        let matching = try h.gateway.payments.list(
            merchant: h.merchant, query: PaymentQuery(lastFour: first.cardInfo.lastFour))
        #expect(Set(matching.payments.map(\.id)) == [second.id, first.id])
        let combined = try h.gateway.payments.list(
            merchant: h.merchant, query: PaymentQuery(orderNumber: "A-2", lastFour: first.cardInfo.lastFour))
        #expect(combined.payments.map(\.id) == [second.id])
        #expect(try h.gateway.payments.list(merchant: h.merchant, query: PaymentQuery(lastFour: "0000")).payments.isEmpty)
    }

    @Test("events filter by the object they are about; attempts keep their latency", arguments: StoreBackend.all)
    func eventsAndAttempts(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let first = try h.pay()
        let second = try h.pay()
        _ = try h.gateway.refunds.refund(merchant: h.merchant, paymentID: second.id, amount: 1_000)
        let about = try h.gateway.webhooks.eventPage(
            merchant: h.merchant, type: nil, objectID: second.id, limit: 100, cursor: nil)
        #expect(
            about.events.map(\.event.type).sorted() == ["payment.captured", "payment.refunded", "payment.succeeded"])
        let refunded = try h.gateway.webhooks.eventPage(
            merchant: h.merchant, type: "payment.refunded", objectID: first.id, limit: 100, cursor: nil)
        #expect(refunded.events.isEmpty)
        let event = try #require(about.events.first?.event)
        let lease = WebhookLease.random()
        try h.store.recordWebhookAttempt(
            WebhookAttempt(
                eventID: event.id, attemptedAt: h.clock.now(), httpStatus: 503, error: nil, state: .pending,
                nextAttemptAt: h.clock.now() + 60, latencyMilliseconds: 42), lease: lease)
        try h.store.recordWebhookAttempt(
            WebhookAttempt(
                eventID: event.id, attemptedAt: h.clock.now() + 60, httpStatus: nil, error: "connection refused",
                state: .pending, nextAttemptAt: h.clock.now() + 300, latencyMilliseconds: 3), lease: lease)
        let attempts = try h.gateway.webhooks.webhookAttempts(merchant: h.merchant, eventID: event.id)
        #expect(attempts.map(\.httpStatus) == [503, nil])
        #expect(attempts.map(\.latencyMilliseconds) == [42, 3])
        #expect(attempts.map(\.error) == [nil, "connection refused"])
        #expect(throws: GatewayError(.notFound)) {
            _ = try h.gateway.webhooks.webhookAttempts(merchant: h.merchant, eventID: "evt_none")
        }
    }
}
