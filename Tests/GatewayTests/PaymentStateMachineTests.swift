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

    @Test("a new payment: inserted processing with its first transition, card data kept, its session attached")
    func begin() throws {
        var fresh = Self.payment(.processing, sessionID: "ses_1")
        fresh.authorizationSentAt = nil
        let sealed = Data([1, 2, 3])
        let (created, effects) = try PaymentStateMachine.begin(fresh, cause: "session paid", cardData: sealed)
        #expect(created == fresh && effects.insertsPayment && !effects.storesPayment && effects.events.isEmpty)
        #expect(
            effects.transitions == [
                PaymentTransition(paymentID: "pay_1", from: nil, to: .processing, at: Self.now, cause: "session paid")
            ])
        #expect(effects.storesCardData == sealed && !effects.dropsCardData && effects.session == .attach)
        let (_, byPrime) = try PaymentStateMachine.begin(Self.payment(.processing), cause: "paid by prime")
        #expect(byPrime.insertsPayment && byPrime.storesCardData == nil && byPrime.session == nil)
        #expect(byPrime.transitions.first?.cause == "paid by prime")
        for status in PaymentStatus.allCases where status != .processing {
            #expect(throws: GatewayError.self) { try PaymentStateMachine.begin(Self.payment(status), cause: "x") }
        }
    }

    @Test("authorization sent: marked sent, card data dropped, status unchanged; only once, only processing")
    func authorizationSent() throws {
        var fresh = Self.payment(.processing)
        fresh.authorizationSentAt = nil
        let (sent, effects) = try PaymentStateMachine.apply(.authorizationSent, to: fresh, at: Self.later)
        #expect(sent.status == .processing && sent.authorizationSentAt == Self.later && sent.updatedAt == Self.later)
        #expect(effects.dropsCardData && effects.storesPayment && effects.transitions.isEmpty && effects.events.isEmpty)
        #expect(throws: GatewayError.self) {
            try PaymentStateMachine.apply(.authorizationSent, to: sent, at: Self.later)
        }
        for status in PaymentStatus.allCases where status != .processing {
            var other = Self.payment(status)
            other.authorizationSentAt = nil
            #expect(throws: GatewayError.self) {
                try PaymentStateMachine.apply(.authorizationSent, to: other, at: Self.later)
            }
        }
    }

    @Test("capture or void requested: pending with its stable id and amount, only from authorized, one at a time")
    func operationRequested() throws {
        let authorized = Self.payment(.authorized)
        let (full, effects) = try PaymentStateMachine.apply(
            .operationRequested(.capture, amount: nil), to: authorized, at: Self.later)
        #expect(full.status == .authorized && full.updatedAt == Self.later)
        #expect(full.pendingOperation == PendingOperation(kind: .capture, operationID: "capture_pay_1", amount: 10_000))
        #expect(effects.storesPayment && effects.transitions.isEmpty && effects.events.isEmpty)
        let (part, _) = try PaymentStateMachine.apply(
            .operationRequested(.capture, amount: 2_500), to: authorized, at: Self.later)
        #expect(part.pendingOperation?.amount == 2_500)
        let (void, _) = try PaymentStateMachine.apply(
            .operationRequested(.void, amount: nil), to: authorized, at: Self.later)
        #expect(void.pendingOperation == PendingOperation(kind: .void, operationID: "void_pay_1", amount: 0))
        func refusal(_ event: PaymentEvent, _ payment: Payment) -> GatewayError? {
            do {
                _ = try PaymentStateMachine.apply(event, to: payment, at: Self.later)
                return nil
            } catch { return error }
        }
        let over = refusal(.operationRequested(.capture, amount: 10_001), authorized)
        #expect(over?.code == .captureExceedsAuthorization && over?.param == "amount")
        let busy = refusal(.operationRequested(.void, amount: nil), full)
        #expect(busy?.code == .invalidStateTransition && busy?.reason == "a capture of this payment is in progress")
        for status in PaymentStatus.allCases where status != .authorized {
            let refused = refusal(.operationRequested(.capture, amount: nil), Self.payment(status))
            #expect(refused?.reason == "a \(status.rawValue) payment cannot be captured")
            #expect(
                refusal(.operationRequested(.void, amount: nil), Self.payment(status))?.code == .invalidStateTransition)
        }
    }

    @Test("refund requested: a pending row of the rest or the amount asked, never past the captured amount")
    func refundRequested() throws {
        var captured = Self.payment(.captured)
        let (first, effects) = try PaymentStateMachine.apply(
            .refundRequested(id: "re_1", amount: 4_000, reason: "damaged"), to: captured, at: Self.later)
        #expect(effects.newRefunds.count == 1 && !effects.storesPayment && effects.transitions.isEmpty)
        let row = try #require(effects.newRefunds.first)
        #expect(row.id == "re_1" && row.amount == 4_000 && row.status == .pending && row.reason == "damaged")
        #expect(row.currency == "TWD" && row.createdAt == Self.later && first.status == .captured)
        captured.refunds = first.refunds
        var failed = Self.refund(3_000)
        failed.id = "re_0"
        failed.status = .failed
        captured.refunds.append(failed)
        let (_, rest) = try PaymentStateMachine.apply(
            .refundRequested(id: "re_2", amount: nil, reason: nil), to: captured, at: Self.later)
        #expect(rest.newRefunds.first?.amount == 6_000, "a failed refund commits nothing")
        #expect(throws: GatewayError.self) {
            try PaymentStateMachine.apply(
                .refundRequested(id: "re_2", amount: 6_001, reason: nil), to: captured, at: Self.later)
        }
        var all = Self.payment(.captured)
        all.refunds = [Self.refund(10_000)]
        do {
            _ = try PaymentStateMachine.apply(
                .refundRequested(id: "re_2", amount: nil, reason: nil), to: all, at: Self.later)
            Issue.record("nothing is left to refund")
        } catch { #expect(error.code == .refundExceedsCapture) }
        for status in PaymentStatus.allCases where status != .captured && status != .partiallyRefunded {
            do {
                _ = try PaymentStateMachine.apply(
                    .refundRequested(id: "re_2", amount: 1, reason: nil), to: Self.payment(status), at: Self.later)
                Issue.record("a \(status.rawValue) payment was refunded")
            } catch { #expect(error.reason == "a \(status.rawValue) payment cannot be refunded") }
        }
    }

    @Test("refund declined: the row fails with its code, the payment and its status stay, no event")
    func refundDeclined() throws {
        let captured = Self.payment(.captured)
        let (same, effects) = try PaymentStateMachine.apply(
            .refundDeclined(Self.refund(4_000), code: "do_not_honor"), to: captured, at: Self.later)
        #expect(same == captured && !effects.storesPayment && effects.transitions.isEmpty && effects.events.isEmpty)
        #expect(effects.refunds.map(\.status) == [.failed] && effects.refunds.first?.declineCode == "do_not_honor")
        #expect(effects.refunds.first?.updatedAt == Self.later)
        var settled = Self.refund(1_000)
        settled.status = .failed
        #expect(throws: GatewayError.self) {
            try PaymentStateMachine.apply(.refundDeclined(settled, code: "x"), to: captured, at: Self.later)
        }
    }
}
