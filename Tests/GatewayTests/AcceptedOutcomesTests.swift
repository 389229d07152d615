import Foundation
import Gateway
import GatewayAssembly
import OrchardCrypto
import Testing

/// A processor over the sandbox acquirer whose captures, voids and refunds are answered "accepted, outcome to
/// follow" (as Adyen and Checkout.com answer them) and whose authorizations can be made to lose their answer, with
/// the recovery it is given. Every call is recorded; an operation id is processed once (a repeat gets the first
/// answer), as the real processors' idempotency keys do.
final class AcceptingProcessor: Processor, @unchecked Sendable {
    let inner: SandboxAcquirer
    let authorizationRecovery: AuthorizationRecovery
    private let lock = NSLock()
    /// How many authorizations reached the processor, by payment.
    private(set) var authorizations: [String: Int] = [:]
    /// Every call by kind and operation id, in order.
    private(set) var calls: [(kind: String, operationID: String)] = []
    /// The answers kept per operation id.
    private var answers: [String: AuthorizationOutcome] = [:]
    /// Whether the next authorization's answer is lost (the processor does it, the caller hears `timeout`).
    var losesNextAnswer = false
    /// What `operationStatus` answers, per operation id, else per kind (`capture`, `void`, `refund`; default: still
    /// accepted).
    var statuses: [String: ProcessorOperationOutcome] = [:]
    /// Whether `query` can look payments up (else `unsupported`).
    var canQuery = false
    /// Whether `check` refuses authorizations without a cryptogram.
    var refusesWithoutCryptogram = true

    var name: String { "accepting" }

    init(_ inner: SandboxAcquirer, recovery: AuthorizationRecovery = .resend) {
        self.inner = inner
        authorizationRecovery = recovery
    }

    func check(_ request: AuthorizationRequest) throws(GatewayError) {
        if refusesWithoutCryptogram, request.cryptogram == nil {
            throw GatewayError(GatewayError.Code(rawValue: "payment_data_type_unsupported"), "no cryptogram")
        }
    }

    func authorize(_ request: AuthorizationRequest) -> AuthorizationOutcome {
        let (previous, loses): (AuthorizationOutcome?, Bool) = lock.withLock {
            calls.append(("authorize", request.operationID))
            defer { losesNextAnswer = false }
            return (answers[request.operationID], losesNextAnswer)
        }
        if let previous { return previous }
        let outcome = inner.authorize(request)
        lock.withLock {
            answers[request.operationID] = outcome
            authorizations[request.merchantReference, default: 0] += 1
        }
        return loses ? .timeout : outcome
    }

    /// What captures are answered (default: accepted).
    var captureAnswer: ProcessorOperationOutcome?

    func capture(reference: String, amount: Int64, currency: String, operationID: String) -> ProcessorOperationOutcome {
        record("capture", operationID)
        return lock.withLock { captureAnswer } ?? .accepted(reference: "cap_" + operationID)
    }

    func void(reference: String, operationID: String) -> ProcessorOperationOutcome {
        record("void", operationID)
        return .accepted(reference: "void_" + operationID)
    }

    func refund(reference: String, amount: Int64, currency: String, operationID: String) -> ProcessorOperationOutcome {
        record("refund", operationID)
        return .accepted(reference: "psp_" + operationID)
    }

    func query(merchantReference: String) -> ProcessorQueryResult {
        record("query", merchantReference)
        return canQuery ? inner.query(merchantReference: merchantReference) : .unsupported
    }

    func operationStatus(
        _ kind: ProcessorOperationKind, reference: String, operationID: String, amount: Int64
    ) -> ProcessorOperationOutcome {
        record("status", operationID)
        return lock.withLock { statuses[operationID] ?? statuses[kind.rawValue] } ?? .accepted(reference: nil)
    }

    private func record(_ kind: String, _ operationID: String) {
        lock.withLock { calls.append((kind, operationID)) }
    }

    func count(_ kind: String) -> Int { lock.withLock { calls.filter { $0.kind == kind }.count } }
}

@Suite("Accepted outcomes: pending states, queries instead of resends, and authorizations sent again")
struct AcceptedOutcomesTests {
    static func harness(
        _ backend: StoreBackend, recovery: AuthorizationRecovery = .resend
    ) throws -> (
        Harness, AcceptingProcessor
    ) {
        var made: AcceptingProcessor?
        let h = try Harness(
            backend,
            processor: { acquirer in
                let processor = AcceptingProcessor(acquirer, recovery: recovery)
                made = processor
                return processor
            })
        return (h, try #require(made))
    }

    @Test(
        "capture now accepted: capture_pending; a reconciliation asks, never captures again, and ends it",
        arguments: StoreBackend.all)
    func acceptedCapture(_ backend: StoreBackend) throws {
        let (h, processor) = try Self.harness(backend)
        let payment = try h.pay(captureMode: .now)
        #expect(payment.status == .capturePending && payment.capturedAmount == 0)
        #expect(processor.count("capture") == 1)
        h.clock.advance(by: 600)
        try h.gateway.payments.reconcile()
        #expect(processor.count("capture") == 1 && processor.count("status") == 1)
        #expect(try h.gateway.payments.payment(merchant: h.merchant, id: payment.id).status == .capturePending)
        processor.statuses[GatewayService.captureOperationID(payment.id)] = .succeeded
        h.clock.advance(by: 600)
        let report = try h.gateway.payments.reconcile()
        #expect(report.capturedPayments == [payment.id])
        let captured = try h.gateway.payments.payment(merchant: h.merchant, id: payment.id)
        #expect(captured.status == .captured && captured.capturedAmount == payment.amount)
        #expect(processor.count("capture") == 1)
        #expect(try h.eventTypes() == ["payment.succeeded", "payment.captured"])
        let transitions = try h.gateway.payments.transitions(merchant: h.merchant, paymentID: payment.id).map(\.to)
        #expect(transitions == [.processing, .authorized, .capturePending, .captured])
    }

    @Test(
        "a void accepted then refused: void_pending, then authorized again with payment.void_failed",
        arguments: StoreBackend.all)
    func acceptedVoid(_ backend: StoreBackend) throws {
        let (h, processor) = try Self.harness(backend)
        let payment = try h.pay(captureMode: .manual)
        let pending = try h.gateway.payments.void(merchant: h.merchant, paymentID: payment.id, idempotencyKey: "void-1")
        #expect(pending.status == .voidPending)
        // The merchant's retry is answered from the stored result; nothing is sent again.
        #expect(
            try h.gateway.payments.void(merchant: h.merchant, paymentID: payment.id, idempotencyKey: "void-1").status
                == .voidPending)
        expectGatewayError(.invalidStateTransition) {
            try h.gateway.payments.capture(merchant: h.merchant, paymentID: payment.id)
        }
        #expect(processor.count("void") == 1)
        processor.statuses["void"] = .declined(code: "void_refused")
        h.clock.advance(by: 600)
        try h.gateway.payments.reconcile()
        #expect(try h.gateway.payments.payment(merchant: h.merchant, id: payment.id).status == .authorized)
        #expect(try h.eventTypes() == ["payment.succeeded", "payment.void_failed"])
    }

    @Test("refunds accepted: refund_pending until each is answered; none sent twice", arguments: StoreBackend.all)
    func acceptedRefunds(_ backend: StoreBackend) throws {
        let (h, processor) = try Self.harness(backend)
        var payment = try h.pay(captureMode: .manual)
        processor.statuses["capture"] = .succeeded
        payment = try h.gateway.payments.capture(merchant: h.merchant, paymentID: payment.id)
        #expect(payment.status == .capturePending)
        h.clock.advance(by: 600)
        try h.gateway.payments.reconcile()
        let first = try h.gateway.refunds.refund(merchant: h.merchant, paymentID: payment.id, amount: 3_000)
        #expect(first.refund.status == .pending && first.payment.status == .refundPending)
        let second = try h.gateway.refunds.refund(
            merchant: h.merchant, paymentID: payment.id, amount: 2_000, idempotencyKey: "r2")
        #expect(second.payment.status == .refundPending)
        _ = try h.gateway.refunds.refund(merchant: h.merchant, paymentID: payment.id, amount: 2_000, idempotencyKey: "r2")
        #expect(processor.count("refund") == 2)
        processor.statuses[first.refund.id] = .succeeded
        h.clock.advance(by: 600)
        try h.gateway.payments.reconcile()
        var now = try h.gateway.payments.payment(merchant: h.merchant, id: payment.id)
        #expect(now.status == .refundPending && now.refundedAmount == 3_000)
        processor.statuses[second.refund.id] = .declined(code: "refund_declined")
        h.clock.advance(by: 600)
        try h.gateway.payments.reconcile()
        now = try h.gateway.payments.payment(merchant: h.merchant, id: payment.id)
        #expect(now.status == .partiallyRefunded && now.refundedAmount == 3_000)
        #expect(now.refunds.map(\.status) == [.succeeded, .failed])
        #expect(processor.count("refund") == 2)
        #expect(try h.eventTypes() == ["payment.succeeded", "payment.captured", "payment.refunded", "refund.failed"])
    }

    @Test(
        "an authorization whose answer was lost is sent again with its idempotency key: one authorization",
        arguments: StoreBackend.all)
    func resentAuthorization(_ backend: StoreBackend) throws {
        let (h, processor) = try Self.harness(backend)
        processor.losesNextAnswer = true
        let payment = try h.pay(captureMode: .manual)
        #expect(payment.status == .unknown)
        #expect(try h.store.read { try $0.cardData(paymentID: payment.id) } != nil, "kept sealed for the resend")
        h.clock.advance(by: 600)
        let report = try h.gateway.payments.reconcile()
        #expect(report.settledPayments == [payment.id])
        let settled = try h.gateway.payments.payment(merchant: h.merchant, id: payment.id)
        #expect(settled.status == .authorized)
        #expect(processor.authorizations[payment.id] == 1)
        let key = GatewayService.authorizationOperationID(payment.id)
        #expect(processor.calls.filter { $0.kind == "authorize" }.map(\.operationID) == [key, key])
        #expect(try h.store.read { try $0.cardData(paymentID: payment.id) } == nil, "dropped once settled")
        #expect(try h.eventTypes() == ["payment.unknown_resolved"])
    }

    @Test("a processor that refuses the card refuses it before the prime is claimed", arguments: StoreBackend.all)
    func refusedBeforeClaim(_ backend: StoreBackend) throws {
        let (h, processor) = try Self.harness(backend)
        let emv = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(emvData: "9F2608AABBCCDDEEFF0011"))
        let error = expectGatewayError(GatewayError.Code(rawValue: "payment_data_type_unsupported")) {
            try h.payByPrime(emv.prime, amount: 10_000, currency: "TWD")
        }
        #expect(error?.paymentID == nil)
        #expect(processor.count("authorize") == 0)
        let stored = try h.store.read { try $0.prime(hash: Identifiers.sha256Hex(emv.prime)) }
        #expect(stored?.claimedAt == nil && stored?.cardDataSealed != nil, "the prime is still unclaimed")
        processor.refusesWithoutCryptogram = false
        // Now the processor takes it (and the sandbox acquirer declines it for its missing cryptogram).
        let declined = expectGatewayError(.cardDeclined) {
            try h.payByPrime(emv.prime, amount: 10_000, currency: "TWD")
        }
        #expect(declined?.declineCode == "invalid_cryptogram")
    }

    @Test(
        "a capture refused at once: processor_declined, the pending capture cleared, nothing sent again",
        arguments: StoreBackend.all)
    func refusedCapture(_ backend: StoreBackend) throws {
        let (h, processor) = try Self.harness(backend)
        processor.captureAnswer = .declined(code: "capture_refused")
        let payment = try h.pay(captureMode: .manual)
        let error = expectGatewayError(.processorDeclined) {
            try h.gateway.payments.capture(merchant: h.merchant, paymentID: payment.id)
        }
        #expect(error?.declineCode == "capture_refused")
        let after = try h.gateway.payments.payment(merchant: h.merchant, id: payment.id)
        #expect(after.status == .authorized && after.pendingOperation == nil)
        h.clock.advance(by: 600)
        try h.gateway.payments.reconcile()
        #expect(processor.count("capture") == 1, "a refused capture is not sent again")
        // The merchant asks again: a new request, a new operation id (the refused one's would be answered refused).
        processor.captureAnswer = nil
        #expect(try h.gateway.payments.capture(merchant: h.merchant, paymentID: payment.id).status == .capturePending)
        let ids = processor.calls.filter { $0.kind == "capture" }.map(\.operationID)
        #expect(ids.count == 2 && Set(ids).count == 2 && ids.allSatisfy { $0.hasPrefix("capture_\(payment.id)_") })
    }
}
