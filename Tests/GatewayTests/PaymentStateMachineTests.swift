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
        if [.captured, .refundPending, .partiallyRefunded, .refunded, .chargedBack].contains(status) {
            payment.capturedAmount = 10_000
        }
        if status == .partiallyRefunded { payment.refundedAmount = 4_000 }
        if status == .refunded { payment.refundedAmount = 10_000 }
        return payment
    }

    static func refund(_ amount: Int64) -> Refund {
        Refund(
            id: "re_1", paymentID: "pay_1", amount: amount, currency: "TWD", status: .pending, reason: nil,
            declineCode: nil, createdAt: now, updatedAt: now)
    }

    /// A refund of `amount` that succeeded.
    static func succeededRefund(_ amount: Int64) -> Refund {
        var refund = refund(amount)
        refund.status = .succeeded
        return refund
    }

    static let events: [(String, PaymentEvent)] = [
        ("approved", .authorizationApproved(approval, cause: .authorization(.authorization, .approved))),
        ("declined", .authorizationDeclined(code: "do_not_honor", cause: .authorization(.authorization, .declined(code: "do_not_honor")))),
        ("unanswered", .authorizationUnanswered(cause: .authorization(.authorization, .unanswered))),
        ("captured", .captureSucceeded(amount: 10_000)),
        ("voided", .voidSucceeded),
        ("refunded in part", .refundSucceeded(refund(4_000))),
        ("refund accepted", .refundAccepted(refund(4_000), reference: "ref_1")),
        ("refund reversed", .refundReversed(succeededRefund(4_000), code: "refund_reversed")),
        ("capture failed", .captureFailed),
        ("chargeback", .chargeback),
    ]

    /// The status each event leads to from each status: nil where the event is refused (an error), the same
    /// status where it is ignored (a late answer for a settled payment).
    static let expected: [PaymentStatus: [String: PaymentStatus?]] = [
        .processing: [
            "approved": .authorized, "declined": .failed, "unanswered": .unknown, "captured": nil, "voided": nil,
            "refunded in part": nil, "refund accepted": nil, "refund reversed": nil, "capture failed": nil,
            "chargeback": nil,
        ],
        .unknown: [
            "approved": .authorized, "declined": .failed, "unanswered": .unknown, "captured": nil, "voided": nil,
            "refunded in part": nil, "refund accepted": nil, "refund reversed": nil, "capture failed": nil,
            "chargeback": nil,
        ],
        .authorized: [
            "approved": .authorized, "declined": .authorized, "unanswered": .authorized, "captured": .captured,
            "voided": .voided, "refunded in part": nil, "refund accepted": nil, "refund reversed": nil,
            "capture failed": nil, "chargeback": nil,
        ],
        .capturePending: [
            "approved": .capturePending, "declined": .capturePending, "unanswered": .capturePending,
            "captured": .captured, "voided": nil, "refunded in part": nil, "refund accepted": nil,
            "refund reversed": nil, "capture failed": nil, "chargeback": nil,
        ],
        .voidPending: [
            "approved": .voidPending, "declined": .voidPending, "unanswered": .voidPending, "captured": nil,
            "voided": .voided, "refunded in part": nil, "refund accepted": nil, "refund reversed": nil,
            "capture failed": nil, "chargeback": nil,
        ],
        .captured: [
            "approved": .captured, "declined": .captured, "unanswered": .captured, "captured": nil, "voided": nil,
            "refunded in part": .partiallyRefunded, "refund accepted": .refundPending, "refund reversed": nil,
            "capture failed": .authorized, "chargeback": .chargedBack,
        ],
        .refundPending: [
            "approved": .refundPending, "declined": .refundPending, "unanswered": .refundPending, "captured": nil,
            "voided": nil, "refunded in part": .partiallyRefunded, "refund accepted": .refundPending,
            "refund reversed": nil, "capture failed": nil, "chargeback": .chargedBack,
        ],
        .partiallyRefunded: [
            "approved": .partiallyRefunded, "declined": .partiallyRefunded, "unanswered": .partiallyRefunded,
            "captured": nil, "voided": nil, "refunded in part": .partiallyRefunded, "refund accepted": .refundPending,
            "refund reversed": .captured, "capture failed": nil, "chargeback": .chargedBack,
        ],
        .refunded: [
            "approved": .refunded, "declined": .refunded, "unanswered": .refunded, "captured": nil, "voided": nil,
            "refunded in part": nil, "refund accepted": nil, "refund reversed": .partiallyRefunded,
            "capture failed": nil, "chargeback": .chargedBack,
        ],
        .voided: [
            "approved": .voided, "declined": .voided, "unanswered": .voided, "captured": nil, "voided": nil,
            "refunded in part": nil, "refund accepted": nil, "refund reversed": nil, "capture failed": nil,
            "chargeback": nil,
        ],
        .chargedBack: [
            "approved": .chargedBack, "declined": .chargedBack, "unanswered": .chargedBack, "captured": nil,
            "voided": nil, "refunded in part": nil, "refund accepted": nil, "refund reversed": nil,
            "capture failed": nil, "chargeback": nil,
        ],
        .failed: [
            "approved": .failed, "declined": .failed, "unanswered": .failed, "captured": nil, "voided": nil,
            "refunded in part": nil, "refund accepted": nil, "refund reversed": nil, "capture failed": nil,
            "chargeback": nil,
        ],
    ]

    @Test("the table covers every status and every event")
    func tableIsComplete() {
        #expect(Set(Self.expected.keys) == Set(PaymentStatus.allCases))
        for (status, row) in Self.expected { #expect(Set(row.keys) == Set(Self.events.map(\.0)), "\(status)") }
    }

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
                } else if status == .refundPending && name == "refund accepted" {
                    // Another refund accepted while one is: its row is stored, the payment stays as it is.
                    #expect(effects.transitions.isEmpty && !effects.storesPayment && effects.refunds.count == 1)
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
            .authorizationApproved(Self.approval, cause: .authorization(.authorization, .approved)), to: Self.payment(.processing),
            at: Self.later)
        #expect(manual.acquirerReference == "acq_1" && manual.authCode == "123456" && manual.authorizedAt == Self.later)
        #expect(manual.captureAt == nil && manual.pendingOperation == nil)
        #expect(manualEffects.events == [WebhookEventType.paymentSucceeded] && manualEffects.session == .complete)
        #expect(manualEffects.transitions.first?.cause == "authorization: approved")
        let (now, _) = try PaymentStateMachine.apply(
            .authorizationApproved(Self.approval, cause: .authorization(.authorization, .approved)), to: Self.payment(.processing, captureMode: .now),
            at: Self.later)
        #expect(now.captureAt == Self.later)
        #expect(now.pendingOperation == PendingOperation(kind: .capture, operationID: "capture_pay_1", amount: 10_000))
        let (later, _) = try PaymentStateMachine.apply(
            .authorizationApproved(Self.approval, cause: .authorization(.authorization, .approved)),
            to: Self.payment(.processing, captureMode: .afterDays(2)),
            at: Self.later)
        #expect(later.captureAt == Self.later.addingTimeInterval(2 * 86_400))
        let (resolved, resolvedEffects) = try PaymentStateMachine.apply(
            .authorizationApproved(Self.approval, cause: .authorization(.reconciled, .approved)), to: Self.payment(.unknown),
            at: Self.later)
        #expect(resolved.status == .authorized && resolvedEffects.events == [WebhookEventType.paymentUnknownResolved])
    }

    @Test("decline: failed with its code, card data dropped, session reopened; from unknown also unknown_resolved")
    func decline() throws {
        let event = PaymentEvent.authorizationDeclined(
            code: "do_not_honor", cause: .authorization(.authorization, .declined(code: "do_not_honor")))
        let (failed, effects) = try PaymentStateMachine.apply(event, to: Self.payment(.processing), at: Self.later)
        #expect(failed.status == .failed && failed.failureCode == "do_not_honor")
        #expect(
            effects.dropsCardData && effects.session == .reopen && effects.events == [WebhookEventType.paymentFailed])
        let (_, fromUnknown) = try PaymentStateMachine.apply(event, to: Self.payment(.unknown), at: Self.later)
        #expect(fromUnknown.events == [WebhookEventType.paymentFailed, WebhookEventType.paymentUnknownResolved])
    }

    @Test("no answer: processing becomes unknown without an event; unknown stays as it is, nothing stored")
    func noAnswer() throws {
        let event = PaymentEvent.authorizationUnanswered(cause: .authorization(.authorization, .unanswered))
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
        let (created, effects) = try PaymentStateMachine.begin(fresh, cause: .sessionPaid, cardData: sealed)
        #expect(created == fresh && effects.insertsPayment && !effects.storesPayment && effects.events.isEmpty)
        #expect(
            effects.transitions == [
                PaymentTransition(paymentID: "pay_1", from: nil, to: .processing, at: Self.now, cause: "session paid")
            ])
        #expect(effects.storesCardData == sealed && !effects.dropsCardData && effects.session == .attach)
        let (_, byPrime) = try PaymentStateMachine.begin(Self.payment(.processing), cause: .paidByPrime)
        #expect(byPrime.insertsPayment && byPrime.storesCardData == nil && byPrime.session == nil)
        #expect(byPrime.transitions.first?.cause == "paid by prime")
        for status in PaymentStatus.allCases where status != .processing {
            #expect(throws: GatewayError.self) { try PaymentStateMachine.begin(Self.payment(status), cause: .paidByPrime) }
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
        for status in PaymentStatus.allCases where ![.captured, .partiallyRefunded, .refundPending].contains(status) {
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

    @Test(
        "accepted capture and void: capture_pending and void_pending with the pending operation kept; a second one is refused"
    )
    func acceptedOperations() throws {
        var capturing = Self.payment(.authorized)
        capturing.pendingOperation = PendingOperation(kind: .capture, operationID: "capture_pay_1", amount: 6_000)
        let (pending, effects) = try PaymentStateMachine.apply(.captureAccepted, to: capturing, at: Self.later)
        #expect(pending.status == .capturePending && pending.pendingOperation == capturing.pendingOperation)
        #expect(effects.transitions.first?.cause == "capture of 6000 accepted" && effects.events.isEmpty)
        #expect(throws: GatewayError.self) {
            try PaymentStateMachine.apply(.voidAccepted, to: capturing, at: Self.later)
        }
        #expect(throws: GatewayError.self) {
            try PaymentStateMachine.apply(.captureAccepted, to: Self.payment(.authorized), at: Self.later)
        }
        #expect(throws: GatewayError.self) {
            try PaymentStateMachine.apply(.operationRequested(.capture, amount: nil), to: pending, at: Self.later)
        }
        #expect(throws: GatewayError.self) {
            try PaymentStateMachine.apply(.operationRequested(.void, amount: nil), to: pending, at: Self.later)
        }
        let (captured, capturedEffects) = try PaymentStateMachine.apply(
            .captureSucceeded(amount: 6_000), to: pending, at: Self.later)
        #expect(captured.status == .captured && captured.capturedAmount == 6_000 && captured.pendingOperation == nil)
        #expect(capturedEffects.events == [WebhookEventType.paymentCaptured])
        let (refused, refusedEffects) = try PaymentStateMachine.apply(
            .operationDeclined(.capture), to: pending, at: Self.later)
        #expect(refused.status == .authorized && refused.pendingOperation == nil && refused.captureAt == nil)
        #expect(refusedEffects.transitions.map(\.to) == [.authorized])
        #expect(refusedEffects.events == [WebhookEventType.paymentCaptureFailed])

        var voiding = Self.payment(.authorized)
        voiding.pendingOperation = PendingOperation(kind: .void, operationID: "void_pay_1", amount: 0)
        let (voidPending, _) = try PaymentStateMachine.apply(.voidAccepted, to: voiding, at: Self.later)
        #expect(voidPending.status == .voidPending && voidPending.pendingOperation?.kind == .void)
        let (voided, voidedEffects) = try PaymentStateMachine.apply(.voidSucceeded, to: voidPending, at: Self.later)
        #expect(voided.status == .voided && voidedEffects.events == [WebhookEventType.paymentVoided])
        let (kept, keptEffects) = try PaymentStateMachine.apply(
            .operationDeclined(.void), to: voidPending, at: Self.later)
        #expect(kept.status == .authorized && keptEffects.events == [WebhookEventType.paymentVoidFailed])
    }

    @Test("a capture that failed after it was reported: authorized again with nothing captured, its event")
    func captureFailedLater() throws {
        var captured = Self.payment(.captured)
        captured.capturedAt = Self.now
        let (authorized, effects) = try PaymentStateMachine.apply(.captureFailed, to: captured, at: Self.later)
        #expect(authorized.status == .authorized && authorized.capturedAmount == 0 && authorized.capturedAt == nil)
        #expect(authorized.captureAt == nil, "no automatic capture follows")
        #expect(effects.events == [WebhookEventType.paymentCaptureFailed])
        var refunded = captured
        refunded.refunds = [Self.succeededRefund(1_000)]
        #expect(throws: GatewayError.self) {
            try PaymentStateMachine.apply(.captureFailed, to: refunded, at: Self.later)
        }
    }

    @Test(
        "refund_pending lasts while an accepted refund is unanswered; each answer moves the amount; refused ones fail")
    func acceptedRefunds() throws {
        var captured = Self.payment(.captured)
        let first = Self.refund(3_000)
        var second = Self.refund(2_000)
        second.id = "re_2"
        captured.refunds = [first, second]
        let (one, oneEffects) = try PaymentStateMachine.apply(
            .refundAccepted(first, reference: "psp_1"), to: captured, at: Self.later)
        #expect(one.status == .refundPending && oneEffects.refunds.first?.processorReference == "psp_1")
        #expect(oneEffects.events.isEmpty && oneEffects.transitions.map(\.to) == [.refundPending])
        let acceptedFirst = try #require(oneEffects.refunds.first)
        let (two, twoEffects) = try PaymentStateMachine.apply(
            .refundAccepted(second, reference: "psp_2"), to: one, at: Self.later)
        #expect(two.status == .refundPending && twoEffects.transitions.isEmpty)
        let acceptedSecond = try #require(twoEffects.refunds.first)
        // The first succeeds while the second is still accepted: the amount moves, the payment stays pending.
        let (still, stillEffects) = try PaymentStateMachine.apply(
            .refundSucceeded(acceptedFirst), to: two, at: Self.later)
        #expect(still.status == .refundPending && still.refundedAmount == 3_000)
        #expect(stillEffects.transitions.map(\.to) == [.refundPending])
        #expect(stillEffects.events == [WebhookEventType.paymentRefunded])
        // The second is refused: no accepted refund is left, the payment is partially refunded; the merchant is told.
        let (done, doneEffects) = try PaymentStateMachine.apply(
            .refundDeclined(acceptedSecond, code: "do_not_honor"), to: still, at: Self.later)
        #expect(done.status == .partiallyRefunded && done.refundedAmount == 3_000)
        #expect(doneEffects.refunds.first?.status == .failed && doneEffects.events == [WebhookEventType.refundFailed])
        // A refused refund that was never accepted (a synchronous answer) sends no event.
        let (_, syncEffects) = try PaymentStateMachine.apply(
            .refundDeclined(Self.refund(1_000), code: "do_not_honor"), to: Self.payment(.captured), at: Self.later)
        #expect(syncEffects.events.isEmpty)
        // A lone accepted refund refused: back to captured.
        let (alone, _) = try PaymentStateMachine.apply(
            .refundAccepted(first, reference: nil), to: Self.payment(.captured), at: Self.later)
        var aloneRefund = first
        aloneRefund.processorReference = "re_1"
        let (back, backEffects) = try PaymentStateMachine.apply(
            .refundDeclined(aloneRefund, code: "refund_declined"), to: alone, at: Self.later)
        #expect(back.status == .captured && backEffects.transitions.map(\.to) == [.captured])
    }

    @Test("a refund reversed after it succeeded: failed, its amount no longer refunded, the status follows")
    func refundReversed() throws {
        let (partly, effects) = try PaymentStateMachine.apply(
            .refundReversed(Self.succeededRefund(4_000), code: "refund_failed"), to: Self.payment(.partiallyRefunded),
            at: Self.later)
        #expect(partly.status == .captured && partly.refundedAmount == 0)
        #expect(effects.refunds.first?.status == .failed && effects.refunds.first?.declineCode == "refund_failed")
        #expect(effects.events == [WebhookEventType.refundFailed])
        #expect(throws: GatewayError.self) {
            try PaymentStateMachine.apply(
                .refundReversed(Self.refund(4_000), code: "x"), to: Self.payment(.partiallyRefunded), at: Self.later)
        }
    }

    @Test("a decline keeps the processor's own code beside Orchard's")
    func processorCode() throws {
        let (failed, _) = try PaymentStateMachine.apply(
            .authorizationDeclined(
                code: "insufficient_funds", processorCode: "12",
                cause: .authorization(.authorization, .declined(code: "insufficient_funds"))),
            to: Self.payment(.processing), at: Self.later)
        #expect(failed.failureCode == "insufficient_funds" && failed.processorCode == "12")
    }

    @Test("every transition cause keeps the text transition rows and the API have always shown")
    func causeTexts() {
        let expected: [(TransitionCause, String)] = [
            (.paidByPrime, "paid by prime"), (.sessionPaid, "session paid"),
            (.authorization(.authorization, .approved), "authorization: approved"),
            (.authorization(.authorization, .declined(code: "do_not_honor")), "authorization: declined do_not_honor"),
            (.authorization(.authorization, .unanswered), "authorization: no answer from the processor"),
            (.authorization(.reconciled, .approved), "reconciled: approved"),
            (.authorization(.reconciled, .declined(code: "expired_card")), "reconciled: declined expired_card"),
            (.authorization(.sentAgain, .unanswered), "reconciled: sent again: no answer from the processor"),
            (.notificationApproved(eventCode: "AUTHORISATION"), "notification: AUTHORISATION approved"),
            (
                .notificationDeclined(eventCode: "payment_declined", code: "do_not_honor"),
                "notification: payment_declined declined do_not_honor"
            ),
            (.noCardData, "no card data to authorize with"),
            (.notAtProcessorYet, "reconciled: not at the processor yet"),
            (.neverReceived, "reconciled: the processor never received the authorization"),
            (.interruptedBeforeSending, "reconciled: interrupted before authorization was sent"),
            (.capture(amount: 6000), "capture of 6000"), (.captureAccepted(amount: 6000), "capture of 6000 accepted"),
            (.void, "void"), (.voidAccepted, "void accepted"), (.refused(.capture), "capture refused"),
            (.refused(.void), "void refused"), (.captureFailed, "capture failed"),
            (.refund(id: "re_1", amount: 4000), "refund re_1 of 4000"),
            (.refundAccepted(id: "re_1", amount: 4000), "refund re_1 of 4000 accepted"),
            (.refundRefused(id: "re_1"), "refund re_1 refused"), (.refundReversed(id: "re_1"), "refund re_1 reversed"),
            (.chargeback, "chargeback"),
        ]
        for (cause, text) in expected { #expect(cause.text == text) }
    }
}
