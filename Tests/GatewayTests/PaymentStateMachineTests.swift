import Foundation
import Testing

@testable import Gateway

@Suite("Payment state machine: every allowed and refused transition")
struct PaymentStateMachineTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let later = now.addingTimeInterval(60)
    static let approval = ProcessorApproval(reference: "acq_1", authCode: "123456")

    static func payment(
        _ status: PaymentStatus, captureMode: CaptureMode = .manual, sessionID: String? = nil
    ) -> Payment {
        var payment = Payment.created(
            id: "pay_1", merchantID: "mch_1", environment: .sandbox, amount: 10_000, currency: "TWD",
            orderNumber: "o-1", sessionID: sessionID, details: nil, cardholder: nil, metadata: [:],
            cardInfo: CardInfo(binCode: "411111", lastFour: "1111", type: 1, funding: 0), captureMode: captureMode,
            acquirer: "sandbox", authorizationSentAt: now, at: now)
        payment.status = status
        if status == .captured || status == .partiallyRefunded || status == .refunded {
            payment.capturedAmount = 10_000
        }
        if status == .partiallyRefunded { payment.refundedAmount = 4_000 }
        return payment
    }

    static func refund(_ amount: Int64) -> Refund {
        Refund(
            id: "re_1", paymentID: "pay_1", amount: amount, currency: "TWD", status: .pending, reason: nil,
            declineCode: nil, createdAt: now, updatedAt: now)
    }

    static let events: [(String, PaymentEvent)] = [
        ("approved", .authorizationApproved(approval, cause: "authorization: approved")),
        ("declined", .authorizationDeclined(code: "do_not_honor", cause: "authorization: declined do_not_honor")),
        ("unanswered", .authorizationUnanswered(cause: "authorization: no answer from the processor")),
        ("captured", .captureSucceeded(amount: 10_000)),
        ("voided", .voidSucceeded),
        ("refunded in part", .refundSucceeded(refund(4_000))),
    ]

    /// The status each event leads to from each status: nil where the event is refused (an error), the same
    /// status where it is ignored (a late answer for a settled payment).
    static let expected: [PaymentStatus: [String: PaymentStatus?]] = [
        .processing: [
            "approved": .authorized, "declined": .failed, "unanswered": .unknown, "captured": nil, "voided": nil,
            "refunded in part": nil,
        ],
        .unknown: [
            "approved": .authorized, "declined": .failed, "unanswered": .unknown, "captured": nil, "voided": nil,
            "refunded in part": nil,
        ],
        .authorized: [
            "approved": .authorized, "declined": .authorized, "unanswered": .authorized, "captured": .captured,
            "voided": .voided, "refunded in part": nil,
        ],
        .captured: [
            "approved": .captured, "declined": .captured, "unanswered": .captured, "captured": nil, "voided": nil,
            "refunded in part": .partiallyRefunded,
        ],
        .partiallyRefunded: [
            "approved": .partiallyRefunded, "declined": .partiallyRefunded, "unanswered": .partiallyRefunded,
            "captured": nil, "voided": nil, "refunded in part": .partiallyRefunded,
        ],
        .refunded: [
            "approved": .refunded, "declined": .refunded, "unanswered": .refunded, "captured": nil, "voided": nil,
            "refunded in part": nil,
        ],
        .voided: [
            "approved": .voided, "declined": .voided, "unanswered": .voided, "captured": nil, "voided": nil,
            "refunded in part": nil,
        ],
        .failed: [
            "approved": .failed, "declined": .failed, "unanswered": .failed, "captured": nil, "voided": nil,
            "refunded in part": nil,
        ],
    ]

    @Test("each status and event: the next status, a refusal, or no change", arguments: Array(expected.keys))
    func table(_ status: PaymentStatus) throws {
        let row = try #require(Self.expected[status])
        for (name, event) in Self.events {
            let wanted = try #require(row[name])
            let current = Self.payment(status)
            do {
                let (next, effects) = try PaymentStateMachine.apply(event, to: current, at: Self.later)
                #expect(next.status == wanted, "\(status.rawValue) + \(name)")
                if next.status != status || (status == .partiallyRefunded && name == "refunded in part") {
                    #expect(effects.transitions.count == 1, "\(status.rawValue) + \(name)")
                    #expect(effects.transitions.first?.from == status && effects.transitions.first?.to == next.status)
                    #expect(effects.storesPayment && next.updatedAt == Self.later)
                } else if name != "unanswered" || status != .unknown {
                    #expect(effects == .none && next == current, "\(status.rawValue) + \(name): no change")
                }
            } catch {
                #expect(wanted == nil, "\(status.rawValue) + \(name) was refused: \(error)")
                #expect(error.code == .invalidStateTransition)
            }
        }
    }

    @Test("approval: authorized with its reference; capture mode now makes the capture pending; the session completes")
    func approval() throws {
        let (manual, manualEffects) = try PaymentStateMachine.apply(
            .authorizationApproved(Self.approval, cause: "authorization: approved"), to: Self.payment(.processing),
            at: Self.later)
        #expect(manual.acquirerReference == "acq_1" && manual.authCode == "123456" && manual.authorizedAt == Self.later)
        #expect(manual.captureAt == nil && manual.pendingOperation == nil)
        #expect(manualEffects.events == [WebhookEventType.paymentSucceeded] && manualEffects.session == .complete)
        #expect(manualEffects.transitions.first?.cause == "authorization: approved")
        let (now, _) = try PaymentStateMachine.apply(
            .authorizationApproved(Self.approval, cause: "a"), to: Self.payment(.processing, captureMode: .now),
            at: Self.later)
        #expect(now.captureAt == Self.later)
        #expect(now.pendingOperation == PendingOperation(kind: .capture, operationID: "capture_pay_1", amount: 10_000))
        let (later, _) = try PaymentStateMachine.apply(
            .authorizationApproved(Self.approval, cause: "a"),
            to: Self.payment(.processing, captureMode: .afterDays(2)),
            at: Self.later)
        #expect(later.captureAt == Self.later.addingTimeInterval(2 * 86_400))
        let (resolved, resolvedEffects) = try PaymentStateMachine.apply(
            .authorizationApproved(Self.approval, cause: "reconciled: approved"), to: Self.payment(.unknown),
            at: Self.later)
        #expect(resolved.status == .authorized && resolvedEffects.events == [WebhookEventType.paymentUnknownResolved])
    }

    @Test("decline: failed with its code, card data dropped, session reopened; from unknown also unknown_resolved")
    func decline() throws {
        let event = PaymentEvent.authorizationDeclined(code: "do_not_honor", cause: "authorization: declined")
        let (failed, effects) = try PaymentStateMachine.apply(event, to: Self.payment(.processing), at: Self.later)
        #expect(failed.status == .failed && failed.failureCode == "do_not_honor")
        #expect(
            effects.dropsCardData && effects.session == .reopen && effects.events == [WebhookEventType.paymentFailed])
        let (_, fromUnknown) = try PaymentStateMachine.apply(event, to: Self.payment(.unknown), at: Self.later)
        #expect(fromUnknown.events == [WebhookEventType.paymentFailed, WebhookEventType.paymentUnknownResolved])
    }

    @Test("no answer: processing becomes unknown without an event; unknown stays as it is, nothing stored")
    func noAnswer() throws {
        let event = PaymentEvent.authorizationUnanswered(cause: "authorization: no answer from the processor")
        let (unknown, effects) = try PaymentStateMachine.apply(event, to: Self.payment(.processing), at: Self.later)
        #expect(unknown.status == .unknown && effects.events.isEmpty && effects.storesPayment)
        let (same, none) = try PaymentStateMachine.apply(event, to: Self.payment(.unknown), at: Self.later)
        #expect(same.status == .unknown && none == .none)
    }

    @Test("capture, void and a refused operation: amounts, dates, the pending operation cleared, their events")
    func operations() throws {
        var authorized = Self.payment(.authorized)
        authorized.pendingOperation = PendingOperation(kind: .capture, operationID: "capture_pay_1", amount: 6_000)
        authorized.captureAt = Self.now
        let (captured, captureEffects) = try PaymentStateMachine.apply(
            .captureSucceeded(amount: 6_000), to: authorized, at: Self.later)
        #expect(
            captured.capturedAmount == 6_000 && captured.capturedAt == Self.later && captured.pendingOperation == nil)
        #expect(captureEffects.events == [WebhookEventType.paymentCaptured])
        #expect(captureEffects.transitions.first?.cause == "capture of 6000")
        let (voided, voidEffects) = try PaymentStateMachine.apply(.voidSucceeded, to: authorized, at: Self.later)
        #expect(voided.voidedAt == Self.later && voided.captureAt == nil && voided.pendingOperation == nil)
        #expect(voidEffects.events == [WebhookEventType.paymentVoided])
        let (refused, refusedEffects) = try PaymentStateMachine.apply(
            .operationDeclined(.capture), to: authorized, at: Self.later)
        #expect(refused.status == .authorized && refused.pendingOperation == nil && refused.captureAt == nil)
        #expect(refusedEffects.transitions.isEmpty && refusedEffects.events.isEmpty && refusedEffects.storesPayment)
        var voiding = Self.payment(.authorized)
        voiding.captureAt = Self.now
        voiding.pendingOperation = PendingOperation(kind: .void, operationID: "void_pay_1", amount: 0)
        let (kept, _) = try PaymentStateMachine.apply(.operationDeclined(.void), to: voiding, at: Self.later)
        #expect(kept.captureAt == Self.now && kept.pendingOperation == nil)
    }

    @Test("refunds: partly, then the rest; the refund row is stored succeeded; a settled refund is refused")
    func refunds() throws {
        let (partly, effects) = try PaymentStateMachine.apply(
            .refundSucceeded(Self.refund(4_000)), to: Self.payment(.captured), at: Self.later)
        #expect(partly.status == .partiallyRefunded && partly.refundedAmount == 4_000)
        #expect(effects.refunds.map(\.status) == [.succeeded] && effects.refunds.first?.updatedAt == Self.later)
        #expect(effects.events == [WebhookEventType.paymentRefunded])
        #expect(effects.transitions.first?.cause == "refund re_1 of 4000")
        let (rest, _) = try PaymentStateMachine.apply(.refundSucceeded(Self.refund(6_000)), to: partly, at: Self.later)
        #expect(rest.status == .refunded && rest.refundedAmount == 10_000)
        var settled = Self.refund(1_000)
        settled.status = .succeeded
        #expect(throws: GatewayError.self) {
            try PaymentStateMachine.apply(.refundSucceeded(settled), to: Self.payment(.captured), at: Self.later)
        }
    }
}
