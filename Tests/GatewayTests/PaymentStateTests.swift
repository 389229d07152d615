import Foundation
import Gateway
import GatewaySQLite
import Testing

@Suite("Payment states")
struct PaymentStateTests {
    @Test("the state machine: allowed and refused transitions", arguments: PaymentStatus.allCases)
    func stateMachine(from: PaymentStatus) {
        let allowed: [PaymentStatus: Set<PaymentStatus>] = [
            .processing: [.authorized, .failed, .unknown], .unknown: [.authorized, .failed],
            .authorized: [.captured, .voided, .capturePending, .voidPending],
            .capturePending: [.captured, .authorized], .voidPending: [.voided, .authorized],
            .captured: [.partiallyRefunded, .refunded, .refundPending, .authorized, .chargedBack],
            .refundPending: [.refundPending, .captured, .partiallyRefunded, .refunded, .chargedBack],
            .partiallyRefunded: [.partiallyRefunded, .refunded, .refundPending, .captured, .chargedBack],
            .refunded: [.partiallyRefunded, .captured, .chargedBack], .voided: [], .chargedBack: [], .failed: [],
        ]
        for to in PaymentStatus.allCases {
            #expect(from.canTransition(to: to) == allowed[from]!.contains(to), "\(from) → \(to)")
        }
    }

    @Test(
        "manual capture: authorized → captured (partial), then capture twice and void after capture are refused",
        arguments: StoreBackend.all)
    func manualCapture(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let payment = try h.pay(amount: 20_000, captureMode: .manual)
        #expect(payment.status == .authorized)
        #expect(payment.captureAt == nil)
        expectGatewayError(.captureExceedsAuthorization) {
            try h.gateway.payments.capture(merchant: h.merchant, paymentID: payment.id, amount: 20_001)
        }
        let captured = try h.gateway.payments.capture(merchant: h.merchant, paymentID: payment.id, amount: 15_000)
        #expect(captured.status == .captured)
        #expect(captured.capturedAmount == 15_000)
        expectGatewayError(.invalidStateTransition) {
            try h.gateway.payments.capture(merchant: h.merchant, paymentID: payment.id)
        }
        expectGatewayError(.invalidStateTransition) { try h.gateway.payments.void(merchant: h.merchant, paymentID: payment.id) }
        #expect(try h.eventTypes() == ["payment.succeeded", "payment.captured"])
    }

    @Test("void: authorized → voided; then capture and refund are refused", arguments: StoreBackend.all)
    func void(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let payment = try h.pay(captureMode: .manual)
        let voided = try h.gateway.payments.void(merchant: h.merchant, paymentID: payment.id)
        #expect(voided.status == .voided)
        #expect(voided.voidedAt != nil)
        expectGatewayError(.invalidStateTransition) {
            try h.gateway.payments.capture(merchant: h.merchant, paymentID: payment.id)
        }
        expectGatewayError(.invalidStateTransition) {
            try h.gateway.refunds.refund(merchant: h.merchant, paymentID: payment.id)
        }
        expectGatewayError(.invalidStateTransition) { try h.gateway.payments.void(merchant: h.merchant, paymentID: payment.id) }
        #expect(try h.eventTypes() == ["payment.succeeded", "payment.voided"])
        let transitions = try h.gateway.payments.transitions(merchant: h.merchant, paymentID: payment.id)
        #expect(transitions.map(\.to) == [.processing, .authorized, .voided])
        #expect(transitions.allSatisfy { !$0.cause.isEmpty })
    }

    @Test(
        "refunds: several partial ones up to the captured amount, then refunded; more is refused",
        arguments: StoreBackend.all)
    func refunds(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let authorized = try h.pay(amount: 10_000, captureMode: .manual)
        expectGatewayError(.invalidStateTransition) {
            try h.gateway.refunds.refund(merchant: h.merchant, paymentID: authorized.id, amount: 100)
        }
        _ = try h.gateway.payments.capture(merchant: h.merchant, paymentID: authorized.id, amount: 8_000)
        let first = try h.gateway.refunds.refund(
            merchant: h.merchant, paymentID: authorized.id, amount: 3_000, reason: "damaged")
        #expect(first.refund.status == .succeeded)
        #expect(first.payment.status == .partiallyRefunded)
        #expect(first.payment.refundedAmount == 3_000)
        expectGatewayError(.refundExceedsCapture) {
            try h.gateway.refunds.refund(merchant: h.merchant, paymentID: authorized.id, amount: 5_001)
        }
        let second = try h.gateway.refunds.refund(merchant: h.merchant, paymentID: authorized.id, amount: 4_000)
        #expect(second.payment.status == .partiallyRefunded)
        let rest = try h.gateway.refunds.refund(merchant: h.merchant, paymentID: authorized.id)
        #expect(rest.refund.amount == 1_000)
        #expect(rest.payment.status == .refunded)
        #expect(rest.payment.refunds.map(\.amount) == [3_000, 4_000, 1_000])
        #expect(Set(rest.payment.refunds.map(\.id)).count == 3)
        expectGatewayError(.invalidStateTransition) {
            try h.gateway.refunds.refund(merchant: h.merchant, paymentID: authorized.id, amount: 1)
        }
        #expect(
            try h.eventTypes() == [
                "payment.succeeded", "payment.captured", "payment.refunded", "payment.refunded", "payment.refunded",
            ])
        let transitions = try h.gateway.payments.transitions(merchant: h.merchant, paymentID: authorized.id).map(\.to)
        #expect(
            transitions == [.processing, .authorized, .captured, .partiallyRefunded, .partiallyRefunded, .refunded])
    }

    @Test(
        "declines by amount and by PAN fail the payment with its event",
        arguments: [
            (Int64(10_005), Harness.pan, "do_not_honor"), (Int64(10_051), Harness.pan, "insufficient_funds"),
            (Int64(10_000), "4000000000000002", "do_not_honor"),
            (Int64(10_000), "4000000000009995", "insufficient_funds"),
        ])
    func declines(amount: Int64, pan: String, code: String) throws {
        let h = try Harness()
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(amount: amount, pan: pan))
        let error = expectGatewayError(.cardDeclined) {
            try h.payByPrime(prime.prime, amount: amount, currency: "TWD")
        }
        #expect(error?.declineCode == code)
        let paymentID = try #require(error?.paymentID)
        let payment = try h.gateway.payments.payment(merchant: h.merchant, id: paymentID)
        #expect(payment.status == .failed)
        #expect(payment.failureCode == code)
        #expect(try h.eventTypes() == ["payment.failed"])
    }

    @Test("capture after N days is run by the reconciliation job when due", arguments: StoreBackend.all)
    func delayedCapture(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let payment = try h.pay(captureMode: .afterDays(3))
        #expect(payment.status == .authorized)
        #expect(payment.captureAt == h.clock.now().addingTimeInterval(3 * 86_400))
        h.clock.advance(by: 2 * 86_400)
        #expect(try h.gateway.payments.reconcile().capturedPayments.isEmpty)
        h.clock.advance(by: 86_400)
        #expect(try h.gateway.payments.reconcile().capturedPayments == [payment.id])
        #expect(try h.gateway.payments.payment(merchant: h.merchant, id: payment.id).status == .captured)
    }

    @Test("record query: filters and cursor pagination", arguments: StoreBackend.all)
    func recordQuery(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        var ids: [String] = []
        for index in 0..<7 {
            ids.append(try h.pay(amount: Int64(1_000 * (index + 1)), orderNumber: "order-\(index)").id)
            h.clock.advance(by: 1)
        }
        var seen: [String] = []
        var cursor: String?
        repeat {
            let page = try h.gateway.payments.list(merchant: h.merchant, query: PaymentQuery(limit: 3, cursor: cursor))
            seen += page.payments.map(\.id)
            cursor = page.nextCursor
        } while cursor != nil
        #expect(seen == ids.reversed())
        let ranged = try h.gateway.payments.list(
            merchant: h.merchant, query: PaymentQuery(minAmount: 2_000, maxAmount: 4_000, statuses: [.captured]))
        #expect(ranged.payments.map(\.amount) == [4_000, 3_000, 2_000])
        let byOrder = try h.gateway.payments.list(merchant: h.merchant, query: PaymentQuery(orderNumber: "order-5"))
        #expect(byOrder.payments.map(\.id) == [ids[5]])
        let start = Date(timeIntervalSince1970: 1_800_000_002)
        let timed = try h.gateway.payments.list(
            merchant: h.merchant, query: PaymentQuery(createdFrom: start, createdTo: start.addingTimeInterval(2)))
        #expect(timed.payments.map(\.id) == [ids[3], ids[2]])
        expectGatewayError(.invalidCursor) {
            try h.gateway.payments.list(merchant: h.merchant, query: PaymentQuery(cursor: "%%%"))
        }
    }
}
