import Foundation

/// What happens to a payment after it was created: the processor's answer to its authorization, and the outcome
/// of a capture, void or refund the processor was asked for.
package enum PaymentEvent: Sendable, Hashable {
    /// The processor approved the authorization (`cause`, the transition's: `authorization: approved` …).
    case authorizationApproved(ProcessorApproval, cause: String)
    /// The processor (or the gateway, `not_sent` …) declined the authorization with `code`.
    case authorizationDeclined(code: String, cause: String)
    /// The processor did not answer (timeout, or still pending at it).
    case authorizationUnanswered(cause: String)
    /// The processor captured `amount` minor units.
    case captureSucceeded(amount: Int64)
    /// The processor voided the authorization.
    case voidSucceeded
    /// The processor refused the pending capture or void: the payment stays as it was, without it.
    case operationDeclined(PendingOperation.Kind)
    /// The processor refunded the pending `refund`.
    case refundSucceeded(Refund)
}

/// What a step of the state machine asks the service to do, in the transaction that stores the new record.
package struct PaymentEffects: Sendable, Hashable {
    /// What happens to the payment's order session.
    package enum SessionChange: Sendable, Hashable {
        /// Paid: completed, with its `session.completed` event.
        case complete
        /// The payment failed: the session is open again for another payment.
        case reopen
    }

    /// Refund rows to store as they now are (before the payment, so its events carry them).
    package var refunds: [Refund] = []
    /// Transition rows to add, in order.
    package var transitions: [PaymentTransition] = []
    /// Whether the sealed card data is dropped (the payment will never be authorized again).
    package var dropsCardData = false
    /// Whether the new record is stored (false when the event changes nothing).
    package var storesPayment = false
    /// Webhook events about the payment, in order, written after the record (outbox rows).
    package var events: [String] = []
    /// The change to the payment's session, after the events.
    package var session: SessionChange?

    /// No effect at all.
    package static let none = PaymentEffects()
}

/// The payment lifecycle as a pure function: the current record and an event give the new record and the
/// effects to apply, or the error that refuses the event. Nothing here reads or writes a store or calls the
/// processor; ``GatewayService`` applies the effects in one transaction (``GatewayService/apply(_:in:at:)``).
///
/// A new payment state goes into ``PaymentStatus/canTransition(to:)`` and an event here.
package enum PaymentStateMachine {
    /// The record after `event` and what storing it takes.
    package static func apply(
        _ event: PaymentEvent, to current: Payment, at now: Date
    ) throws(GatewayError) -> (payment: Payment, effects: PaymentEffects) {
        var payment = current
        var effects = PaymentEffects()
        switch event {
        case .authorizationApproved(let approval, let cause):
            guard payment.status == .processing || payment.status == .unknown else { return (payment, .none) }
            let wasUnknown = payment.status == .unknown
            try move(&payment, to: .authorized, cause: cause, at: now, effects: &effects)
            payment.authCode = approval.authCode
            payment.acquirerReference = approval.reference
            payment.authorizedAt = now
            switch payment.captureMode {
            case .now:
                payment.captureAt = now
                // The capture is recorded as pending with the authorization: one commit fewer, and a crash
                // before it runs leaves it to reconciliation.
                payment.pendingOperation = PendingOperation(
                    kind: .capture, operationID: GatewayService.captureOperationID(payment.id), amount: payment.amount)
            case .afterDays(let days): payment.captureAt = now.addingTimeInterval(Double(days) * 86_400)
            case .manual: payment.captureAt = nil
            }
            effects.storesPayment = true
            effects.events = [wasUnknown ? WebhookEventType.paymentUnknownResolved : WebhookEventType.paymentSucceeded]
            effects.session = .complete
        case .authorizationDeclined(let code, let cause):
            guard payment.status == .processing || payment.status == .unknown else { return (payment, .none) }
            let wasUnknown = payment.status == .unknown
            try move(&payment, to: .failed, cause: cause, at: now, effects: &effects)
            payment.failureCode = code
            effects.dropsCardData = true
            effects.storesPayment = true
            effects.events = [WebhookEventType.paymentFailed]
            if wasUnknown { effects.events.append(WebhookEventType.paymentUnknownResolved) }
            effects.session = .reopen
        case .authorizationUnanswered(let cause):
            guard payment.status == .processing else { return (payment, .none) }
            try move(&payment, to: .unknown, cause: cause, at: now, effects: &effects)
            effects.storesPayment = true
        case .captureSucceeded(let amount):
            payment.pendingOperation = nil
            try move(&payment, to: .captured, cause: "capture of \(amount)", at: now, effects: &effects)
            payment.capturedAmount = amount
            payment.capturedAt = now
            effects.storesPayment = true
            effects.events = [WebhookEventType.paymentCaptured]
        case .voidSucceeded:
            payment.pendingOperation = nil
            try move(&payment, to: .voided, cause: "void", at: now, effects: &effects)
            payment.voidedAt = now
            payment.captureAt = nil
            effects.storesPayment = true
            effects.events = [WebhookEventType.paymentVoided]
        case .operationDeclined(let kind):
            payment.pendingOperation = nil
            if kind == .capture { payment.captureAt = nil }
            payment.updatedAt = now
            effects.storesPayment = true
        case .refundSucceeded(var refund):
            guard refund.paymentID == payment.id, refund.status == .pending else {
                throw GatewayError(.internalError, "not a pending refund of this payment", paymentID: payment.id)
            }
            refund.status = .succeeded
            refund.updatedAt = now
            effects.refunds = [refund]
            payment.refundedAmount += refund.amount
            let next: PaymentStatus = payment.refundedAmount >= payment.capturedAmount ? .refunded : .partiallyRefunded
            try move(&payment, to: next, cause: "refund \(refund.id) of \(refund.amount)", at: now, effects: &effects)
            effects.storesPayment = true
            effects.events = [WebhookEventType.paymentRefunded]
        }
        return (payment, effects)
    }

    /// Moves `payment` to `next` when ``PaymentStatus/canTransition(to:)`` allows it, adding the transition row.
    private static func move(
        _ payment: inout Payment, to next: PaymentStatus, cause: String, at now: Date, effects: inout PaymentEffects
    ) throws(GatewayError) {
        guard payment.status.canTransition(to: next) else {
            throw GatewayError(
                .invalidStateTransition, "a \(payment.status.rawValue) payment cannot become \(next.rawValue)",
                paymentID: payment.id)
        }
        effects.transitions.append(
            PaymentTransition(paymentID: payment.id, from: payment.status, to: next, at: now, cause: cause))
        payment.status = next
        payment.updatedAt = now
    }
}

extension GatewayService {
    /// Applies a step of ``PaymentStateMachine`` in `tx`: refund rows, transition rows, the card data dropped, the
    /// new record, its events (outbox rows), then the session's change. Returns the new record.
    @discardableResult
    func apply(
        _ step: (payment: Payment, effects: PaymentEffects), in tx: any StoreTransaction, at now: Date
    ) throws -> Payment {
        let (payment, effects) = step
        for refund in effects.refunds { try tx.updateRefund(refund) }
        for transition in effects.transitions { try tx.insertTransition(transition) }
        if effects.dropsCardData { try tx.setCardData(paymentID: payment.id, sealed: nil) }
        if effects.storesPayment { try tx.updatePayment(payment) }
        for type in effects.events { try emit(type, payment: payment, in: tx, at: now) }
        switch effects.session {
        case .complete: try completeSession(of: payment, in: tx, at: now)
        case .reopen: try reopenSession(of: payment, in: tx)
        case nil: break
        }
        return payment
    }

    /// Opens the session of a failed payment again, when it was this payment's.
    func reopenSession(of payment: Payment, in tx: any StoreTransaction) throws {
        guard let sessionID = payment.sessionID, var session = try tx.session(id: sessionID),
            session.paymentID == payment.id
        else { return }
        session.status = .open
        session.paymentID = nil
        try tx.updateSession(session)
    }
}

extension Payment {
    /// A new payment in `processing`, as the gateway creates it before its authorization: nothing authorized,
    /// captured or refunded yet. The one way a payment record is made (stores decode the ones they keep).
    package static func created(
        id: String, merchantID: String, environment: GatewayEnvironment, amount: Int64, currency: String,
        orderNumber: String?,
        outTradeNo: String? = nil, sessionID: String? = nil, details: String?, cardholder: Cardholder?,
        metadata: [String: String], cardInfo: CardInfo, captureMode: CaptureMode, acquirer: String,
        authorizationSentAt: Date?, at now: Date
    ) -> Payment {
        Payment(
            id: id, merchantID: merchantID, environment: environment, status: .processing, amount: amount,
            currency: currency, capturedAmount: 0, refundedAmount: 0, orderNumber: orderNumber, outTradeNo: outTradeNo,
            sessionID: sessionID, details: details, cardholder: cardholder, metadata: metadata, cardInfo: cardInfo,
            captureMode: captureMode, captureAt: nil, authCode: nil, acquirer: acquirer, acquirerReference: nil,
            failureCode: nil, createdAt: now, updatedAt: now, authorizedAt: nil, capturedAt: nil, voidedAt: nil,
            refunds: [], authorizationSentAt: authorizationSentAt, pendingOperation: nil)
    }
}
