import Foundation

/// What happens to a payment after it was created: the processor's answer to its authorization, and the outcome
/// of a capture, void or refund the processor was asked for.
package enum PaymentEvent: Sendable, Hashable {
    /// The processor approved the authorization (`cause`, the transition's).
    case authorizationApproved(ProcessorApproval, cause: TransitionCause)
    /// The processor (or the gateway, `not_sent` …) declined the authorization with `code` (Orchard's), and
    /// `processorCode`, the processor's own code, when it gave one.
    case authorizationDeclined(code: String, processorCode: String? = nil, cause: TransitionCause)
    /// The processor did not answer (timeout, or still pending at it).
    case authorizationUnanswered(cause: TransitionCause)
    /// The processor captured `amount` minor units (at once, or as the outcome of a pending capture).
    case captureSucceeded(amount: Int64)
    /// The processor accepted the pending capture and answers its outcome later: `capture_pending`.
    case captureAccepted
    /// The processor voided the authorization (at once, or as the outcome of a pending void).
    case voidSucceeded
    /// The processor accepted the pending void and answers its outcome later: `void_pending`.
    case voidAccepted
    /// The processor refused the pending capture or void: the payment stays (or, from `capture_pending` or
    /// `void_pending`, is again) `authorized`, without it.
    case operationDeclined(PendingOperation.Kind)
    /// A capture the processor had reported done failed later (Adyen's `CAPTURE_FAILED`): the payment is authorized
    /// again, nothing captured.
    case captureFailed
    /// The processor refunded the pending `refund`.
    case refundSucceeded(Refund)
    /// The processor accepted the pending `refund` (its reference for it: `reference`) and answers its outcome later:
    /// the payment is `refund_pending` until every refund it accepted is answered.
    case refundAccepted(Refund, reference: String?)
    /// The processor declined the pending `refund` with `code`: the refund fails, the payment stays as it was (or
    /// leaves `refund_pending` once no accepted refund is left).
    case refundDeclined(Refund, code: String)
    /// A refund that had succeeded failed or was reversed later (`REFUND_FAILED`, `REFUNDED_REVERSED`): it is failed
    /// with `code` and its amount no longer counts as refunded.
    case refundReversed(Refund, code: String)
    /// The cardholder's bank took the payment back (a chargeback).
    case chargeback
    /// The card data is handed to the processor: the payment is marked as sent and its card data dropped first,
    /// so a crash after it is settled by querying the processor, never by authorizing again. (For a processor whose
    /// recovery is ``AuthorizationRecovery/resend`` the service keeps the sealed card data until the outcome is
    /// recorded, for a resend with the same idempotency key.)
    case authorizationSent
    /// The merchant (or the automatic capture) asks for a capture of `amount` (nil: the authorized amount) or a
    /// void: it is recorded as the payment's pending operation before the processor is called, with `operationID`
    /// (nil: the payment's first one, `capture_<id>` or `void_<id>`). Each request gets its own id, so a capture
    /// asked again after one was refused is not answered with the refused one's outcome.
    case operationRequested(PendingOperation.Kind, amount: Int64?, operationID: String? = nil)
    /// The merchant asks for refund `id` of `amount` (nil: the rest of the captured amount), stored `pending`
    /// before the processor is called. The payment's ``Payment/refunds`` must be the ones stored.
    case refundRequested(id: String, amount: Int64?, reason: String?)
    /// The merchant cancels the capture scheduled for an authorized payment (it stays authorized, to be captured
    /// or voided by hand).
    case captureUnscheduled
}

/// What a step of the state machine asks the service to do, in the transaction that stores the new record.
package struct PaymentEffects: Sendable, Hashable {
    /// What happens to the payment's order session.
    package enum SessionChange: Sendable, Hashable {
        /// Paid: completed, with its `session.completed` event.
        case complete
        /// The payment failed: the session is open again for another payment.
        case reopen
        /// A new payment pays the session: it is `processing`, with this payment.
        case attach
    }

    /// Whether the record is new (inserted before anything else, with its first transition).
    package var insertsPayment = false
    /// Refund rows to add (`pending`, before the processor is called).
    package var newRefunds: [Refund] = []
    /// Refund rows to store as they now are (before the payment, so its events carry them).
    package var refunds: [Refund] = []
    /// Transition rows to add, in order.
    package var transitions: [PaymentTransition] = []
    /// Whether the sealed card data is dropped (the payment will never be authorized again, or its
    /// authorization is on its way with the card held only in memory).
    package var dropsCardData = false
    /// Sealed card data to keep for the payment's authorization (a new payment whose authorization is not sent
    /// in the transaction that creates it).
    package var storesCardData: Data?
    /// Whether the new record is stored (false when the event changes nothing).
    package var storesPayment = false
    /// Webhook events about the payment, in order, written after the record (outbox rows).
    package var events: [WebhookEventType] = []
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
    /// A new payment (made by `Payment.created`) and what storing it takes: the record inserted with its first transition (from no state to `processing`,
    /// for `cause`), the sealed `cardData` kept for its authorization when given, and its order session attached.
    package static func begin(
        _ payment: Payment, cause: TransitionCause, cardData: Data? = nil
    ) throws(GatewayError) -> (payment: Payment, effects: PaymentEffects) {
        guard payment.status == .processing, payment.refunds.isEmpty, payment.pendingOperation == nil else {
            throw GatewayError(.internalError, "a new payment starts processing", paymentID: payment.id)
        }
        var effects = PaymentEffects()
        effects.insertsPayment = true
        effects.transitions = [
            PaymentTransition(
                paymentID: payment.id, from: nil, to: .processing, at: payment.createdAt, cause: cause.text)
        ]
        effects.storesCardData = cardData
        if payment.sessionID != nil { effects.session = .attach }
        return (payment, effects)
    }

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
        case .authorizationDeclined(let code, let processorCode, let cause):
            guard payment.status == .processing || payment.status == .unknown else { return (payment, .none) }
            let wasUnknown = payment.status == .unknown
            try move(&payment, to: .failed, cause: cause, at: now, effects: &effects)
            payment.failureCode = code
            payment.processorCode = processorCode
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
            guard payment.status == .authorized || payment.status == .capturePending else {
                throw GatewayError(
                    .invalidStateTransition, "a \(payment.status.rawValue) payment cannot be captured",
                    paymentID: payment.id)
            }
            payment.pendingOperation = nil
            try move(&payment, to: .captured, cause: .capture(amount: amount), at: now, effects: &effects)
            payment.capturedAmount = amount
            payment.capturedAt = now
            effects.storesPayment = true
            effects.events = [WebhookEventType.paymentCaptured]
        case .captureAccepted, .voidAccepted:
            let kind: PendingOperation.Kind = event == .captureAccepted ? .capture : .void
            guard let pending = payment.pendingOperation, pending.kind == kind else {
                throw GatewayError(
                    .invalidStateTransition, "no \(kind.rawValue) of this payment is in progress",
                    paymentID: payment.id)
            }
            let next: PaymentStatus = kind == .capture ? .capturePending : .voidPending
            let cause: TransitionCause = kind == .capture ? .captureAccepted(amount: pending.amount) : .voidAccepted
            try move(&payment, to: next, cause: cause, at: now, effects: &effects)
            effects.storesPayment = true
        case .voidSucceeded:
            payment.pendingOperation = nil
            try move(&payment, to: .voided, cause: .void, at: now, effects: &effects)
            payment.voidedAt = now
            payment.captureAt = nil
            effects.storesPayment = true
            effects.events = [WebhookEventType.paymentVoided]
        case .operationDeclined(let kind):
            payment.pendingOperation = nil
            if kind == .capture { payment.captureAt = nil }
            payment.updatedAt = now
            if payment.status == .capturePending || payment.status == .voidPending {
                // An accepted operation refused later: the payment is authorized again, and the merchant is told.
                try move(&payment, to: .authorized, cause: .refused(kind), at: now, effects: &effects)
                effects.events = [
                    kind == .capture ? WebhookEventType.paymentCaptureFailed : WebhookEventType.paymentVoidFailed
                ]
            }
            effects.storesPayment = true
        case .captureFailed:
            guard payment.status == .captured, payment.refunds.allSatisfy({ $0.status == .failed }) else {
                throw GatewayError(
                    .invalidStateTransition, "only a captured payment without refunds can lose its capture",
                    paymentID: payment.id)
            }
            try move(&payment, to: .authorized, cause: .captureFailed, at: now, effects: &effects)
            payment.capturedAmount = 0
            payment.capturedAt = nil
            payment.captureAt = nil
            effects.storesPayment = true
            effects.events = [WebhookEventType.paymentCaptureFailed]
        case .refundSucceeded(var refund):
            guard refund.paymentID == payment.id, refund.status == .pending else {
                throw GatewayError(.internalError, "not a pending refund of this payment", paymentID: payment.id)
            }
            refund.status = .succeeded
            refund.updatedAt = now
            effects.refunds = [refund]
            payment.refundedAmount += refund.amount
            let next = refundStatus(of: payment, changing: refund)
            replace(refund, in: &payment)
            try move(
                &payment, to: next, cause: .refund(id: refund.id, amount: refund.amount), at: now,
                effects: &effects)
            effects.storesPayment = true
            effects.events = [WebhookEventType.paymentRefunded]
        case .refundAccepted(var refund, let reference):
            guard refund.paymentID == payment.id, refund.status == .pending else {
                throw GatewayError(.internalError, "not a pending refund of this payment", paymentID: payment.id)
            }
            refund.processorReference = reference ?? refund.processorReference ?? refund.id
            refund.updatedAt = now
            effects.refunds = [refund]
            replace(refund, in: &payment)
            if payment.status != .refundPending {
                try move(
                    &payment, to: .refundPending, cause: .refundAccepted(id: refund.id, amount: refund.amount), at: now,
                    effects: &effects)
                effects.storesPayment = true
            }
        case .refundDeclined(var refund, let code):
            guard refund.paymentID == payment.id, refund.status == .pending else {
                throw GatewayError(.internalError, "not a pending refund of this payment", paymentID: payment.id)
            }
            let wasAccepted = refund.processorReference != nil
            refund.status = .failed
            refund.declineCode = code
            refund.updatedAt = now
            effects.refunds = [refund]
            let next = refundStatus(of: payment, changing: refund)
            replace(refund, in: &payment)
            if payment.status == .refundPending {
                if next != .refundPending {
                    try move(&payment, to: next, cause: .refundRefused(id: refund.id), at: now, effects: &effects)
                    effects.storesPayment = true
                }
            }
            // A refund refused after the processor accepted it is news for the merchant (a synchronous refusal is
            // the API call's own answer).
            if wasAccepted { effects.events = [WebhookEventType.refundFailed] }
        case .refundReversed(var refund, let code):
            guard refund.paymentID == payment.id, refund.status == .succeeded, payment.refundedAmount >= refund.amount
            else {
                throw GatewayError(
                    .invalidStateTransition, "only a succeeded refund of this payment can be reversed",
                    paymentID: payment.id)
            }
            refund.status = .failed
            refund.declineCode = code
            refund.updatedAt = now
            effects.refunds = [refund]
            payment.refundedAmount -= refund.amount
            let next = refundStatus(of: payment, changing: refund)
            replace(refund, in: &payment)
            try move(
                &payment, to: next, cause: .refundReversed(id: refund.id), at: now,
                effects: &effects)
            effects.storesPayment = true
            effects.events = [WebhookEventType.refundFailed]
        case .chargeback:
            try move(&payment, to: .chargedBack, cause: .chargeback, at: now, effects: &effects)
            effects.storesPayment = true
            effects.events = [WebhookEventType.paymentChargedBack]
        case .authorizationSent:
            guard payment.status == .processing, payment.authorizationSentAt == nil else {
                throw GatewayError(
                    .invalidStateTransition, "the authorization of this payment was sent already",
                    paymentID: payment.id)
            }
            payment.authorizationSentAt = now
            payment.updatedAt = now
            effects.dropsCardData = true
            effects.storesPayment = true
        case .captureUnscheduled:
            if let pending = payment.pendingOperation {
                throw GatewayError(
                    .invalidStateTransition, "a \(pending.kind.rawValue) of this payment is in progress",
                    paymentID: payment.id)
            }
            guard payment.status == .authorized, payment.captureAt != nil else {
                throw GatewayError(
                    .invalidStateTransition,
                    "only an authorized payment with a scheduled capture can have it cancelled", paymentID: payment.id)
            }
            payment.captureAt = nil
            payment.updatedAt = now
            effects.storesPayment = true
        case .operationRequested(let kind, let amount, let requestedID):
            if let pending = payment.pendingOperation {
                throw GatewayError(
                    .invalidStateTransition, "a \(pending.kind.rawValue) of this payment is in progress",
                    paymentID: payment.id)
            }
            let target: PaymentStatus = kind == .capture ? .captured : .voided
            guard payment.status == .authorized, payment.status.canTransition(to: target) else {
                throw GatewayError(
                    .invalidStateTransition, "a \(payment.status.rawValue) payment cannot be \(target.rawValue)",
                    paymentID: payment.id)
            }
            let value = kind == .capture ? (amount ?? payment.amount) : 0
            if kind == .capture, value > payment.amount {
                throw GatewayError(
                    .captureExceedsAuthorization, "the capture exceeds the authorized amount", param: "amount",
                    paymentID: payment.id)
            }
            let operationID =
                requestedID ?? (kind == .capture ? GatewayService.captureOperationID(payment.id) : "void_\(payment.id)")
            payment.pendingOperation = PendingOperation(kind: kind, operationID: operationID, amount: value)
            payment.updatedAt = now
            effects.storesPayment = true
        case .refundRequested(let id, let amount, let reason):
            guard [.captured, .partiallyRefunded, .refundPending].contains(payment.status) else {
                throw GatewayError(
                    .invalidStateTransition, "a \(payment.status.rawValue) payment cannot be refunded",
                    paymentID: payment.id)
            }
            let committed = payment.refunds.filter { $0.status != .failed }.reduce(Int64(0)) { $0 + $1.amount }
            let value = amount ?? (payment.capturedAmount - committed)
            guard value > 0, committed + value <= payment.capturedAmount else {
                throw GatewayError(
                    .refundExceedsCapture, "refunds would exceed the captured amount", param: "amount",
                    paymentID: payment.id)
            }
            let refund = Refund(
                id: id, paymentID: payment.id, amount: value, currency: payment.currency, status: .pending,
                reason: reason, declineCode: nil, createdAt: now, updatedAt: now)
            payment.refunds.append(refund)
            effects.newRefunds = [refund]
        }
        return (payment, effects)
    }

    /// The status a captured payment's refunds give it once `changed` is as given: `refund_pending` while the
    /// processor has a refund it accepted and not answered, else by the amount refunded (`captured`,
    /// `partially_refunded`, `refunded`). The payment's ``Payment/refunds`` are the ones stored.
    static func refundStatus(of payment: Payment, changing changed: Refund) -> PaymentStatus {
        let refunds = payment.refunds.filter { $0.id != changed.id } + [changed]
        if refunds.contains(where: { $0.status == .pending && $0.processorReference != nil }) { return .refundPending }
        if payment.refundedAmount <= 0 { return .captured }
        return payment.refundedAmount >= payment.capturedAmount ? .refunded : .partiallyRefunded
    }

    /// Puts `refund` in place of the payment's refund with its id, when the payment holds it.
    private static func replace(_ refund: Refund, in payment: inout Payment) {
        if let index = payment.refunds.firstIndex(where: { $0.id == refund.id }) { payment.refunds[index] = refund }
    }

    /// Moves `payment` to `next` when ``PaymentStatus/canTransition(to:)`` allows it, adding the transition row.
    private static func move(
        _ payment: inout Payment, to next: PaymentStatus, cause: TransitionCause, at now: Date,
        effects: inout PaymentEffects
    ) throws(GatewayError) {
        guard payment.status.canTransition(to: next) else {
            throw GatewayError(
                .invalidStateTransition, "a \(payment.status.rawValue) payment cannot become \(next.rawValue)",
                paymentID: payment.id)
        }
        effects.transitions.append(
            PaymentTransition(paymentID: payment.id, from: payment.status, to: next, at: now, cause: cause.text))
        payment.status = next
        payment.updatedAt = now
    }
}

extension GatewayService {
    /// Applies a step of ``PaymentStateMachine`` in `tx`: a new record, refund rows, transition rows, the card
    /// data kept or dropped, the changed record, its events (outbox rows), then the session's change. Returns the
    /// new record.
    @discardableResult
    /// With `rendered`, the step's events were rendered before the transaction (``PreparedOutcome``): their rows
    /// are inserted as they are.
    func apply(
        _ step: (payment: Payment, effects: PaymentEffects), in tx: any StoreTransaction, at now: Date,
        rendered: [PreparedEvent]? = nil
    ) throws -> Payment {
        let (payment, effects) = step
        if effects.insertsPayment { try tx.insertPayment(payment) }
        for refund in effects.newRefunds { try tx.insertRefund(refund) }
        for refund in effects.refunds { try tx.updateRefund(refund) }
        for transition in effects.transitions { try tx.insertTransition(transition) }
        if let sealed = effects.storesCardData { try tx.setCardData(paymentID: payment.id, sealed: sealed) }
        if effects.dropsCardData { try tx.setCardData(paymentID: payment.id, sealed: nil) }
        if effects.storesPayment { try tx.updatePayment(payment) }
        if let rendered {
            for event in rendered { try insert(event, in: tx) }
        } else {
            for type in effects.events { try emit(type, payment: payment, in: tx, at: now) }
        }
        switch effects.session {
        case .complete: try completeSession(of: payment, in: tx, at: now)
        case .reopen: try reopenSession(of: payment, in: tx)
        case .attach: try attachSession(of: payment, in: tx)
        case nil: break
        }
        return payment
    }

    /// Marks a new payment's session as paid by it (`processing`).
    func attachSession(of payment: Payment, in tx: any StoreTransaction) throws {
        guard let sessionID = payment.sessionID, var session = try tx.session(id: sessionID) else {
            throw GatewayError(.sessionNotFound, "no such session")
        }
        session.status = .processing
        session.paymentID = payment.id
        try tx.updateSession(session)
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
        authorizationSentAt: Date?, bankTransactionID: String? = nil, at now: Date
    ) -> Payment {
        Payment(
            id: id, merchantID: merchantID, environment: environment, status: .processing, amount: amount,
            currency: currency, capturedAmount: 0, refundedAmount: 0, orderNumber: orderNumber, outTradeNo: outTradeNo,
            sessionID: sessionID, details: details, cardholder: cardholder, metadata: metadata, cardInfo: cardInfo,
            captureMode: captureMode, captureAt: nil, authCode: nil, acquirer: acquirer, acquirerReference: nil,
            failureCode: nil, createdAt: now, updatedAt: now, authorizedAt: nil, capturedAt: nil, voidedAt: nil,
            refunds: [], authorizationSentAt: authorizationSentAt, pendingOperation: nil,
            bankTransactionID: bankTransactionID)
    }
}
