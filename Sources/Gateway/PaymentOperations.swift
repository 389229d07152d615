import Foundation
import OrchardBase
import OrchardCrypto

extension GatewayService {
    // MARK: - Authorization

    /// Failure codes the gateway itself records when an authorization never reached the processor (no money
    /// moved, nobody declined): they answer `processor_unavailable`, not `card_declined`.
    static let undeliveredFailureCodes: Set<String> = [
        "not_sent", "interrupted", "card_data_missing", "card_data_unreadable", processorRefusedCode,
    ]

    /// The failure code of a request the processor refused as such (its credentials, a field), before any issuer
    /// saw it: nothing was charged (a connector's `.declined` with the processor's own error as `processor_code`).
    public static let processorRefusedCode = "processor_refused"

    /// The error a `failed` payment answers: `card_declined` when the processor declined it (the issuer's or
    /// acquirer's code), `processor_unavailable` when its authorization never reached the processor or the
    /// processor refused the request itself.
    static func failure(of payment: Payment) -> GatewayError {
        if let code = payment.failureCode, undeliveredFailureCodes.contains(code) {
            return GatewayError(
                .processorUnavailable,
                code == processorRefusedCode
                    ? "the processor refused the request (its settings or a field); nothing was charged"
                    : "the authorization did not reach the processor; nothing was charged",
                declineCode: code, paymentID: payment.id)
        }
        return GatewayError(
            .cardDeclined, "the payment was declined", declineCode: payment.failureCode, paymentID: payment.id)
    }

    /// Authorizes a created payment (or settles it when resumed), captures it when its mode says now, and
    /// throws ``failure(of:)`` when it failed. With `scope`, a successful capture stores the request's result
    /// in the capture's own transaction (one commit fewer than finishing the key afterwards).
    /// With `sending`, the payment was created already marked as sent (its card data never stored for it):
    /// the authorization goes to the processor with that card at once.
    func drive(
        paymentID: String, scope: IdempotencyScope? = nil, sending: (payment: Payment, card: SecureBytes)? = nil
    ) throws(GatewayError) -> Payment {
        var payment: Payment
        if let sending {
            payment = try sendAuthorization(sending.payment, card: .success(sending.card), completing: scope)
        } else {
            payment = try authorize(paymentID: paymentID)
        }
        if payment.status == .failed { throw Self.failure(of: payment) }
        if payment.status == .authorized, payment.captureMode == .now {
            do {
                payment = try operate(.capture, paymentID: paymentID, amount: nil, resume: true, completing: scope)
            } catch
                where error.code
                == .processorUnavailable
            {
                // The pending capture is finished by reconciliation; the payment stays authorized for now.
            }
        }
        return try read { tx in
            var payment = try tx.payment(id: paymentID) ?? payment
            payment.refunds = try tx.refunds(paymentID: paymentID)
            return payment
        }
    }

    /// Phase 2 and 3 of a payment: hand the card data to the processor (marking it sent and dropping it from
    /// the database first, in one transaction), then record the outcome and its event atomically.
    func authorize(paymentID: String) throws(GatewayError) -> Payment {
        let now = clock.now()
        enum Next {
            case done(Payment)
            case query
            case send(Payment, Data)
        }
        let next: Next = try write { tx in
            guard var payment = try tx.payment(id: paymentID) else { throw GatewayError(.notFound) }
            guard payment.status == .processing else { return .done(payment) }
            if payment.authorizationSentAt != nil { return .query }
            guard let sealed = try tx.cardData(paymentID: paymentID) else {
                try fail(&payment, code: "card_data_missing", cause: .noCardData, at: now, in: tx)
                return .done(payment)
            }
            var step = try PaymentStateMachine.apply(.authorizationSent, to: payment, at: now)
            // A processor that resends a lost authorization gets it with the card data kept sealed until the outcome.
            if try processor(for: payment).authorizationRecovery == .resend { step.effects.dropsCardData = false }
            payment = try apply(step, in: tx, at: now)
            return .send(payment, sealed)
        }
        switch next {
        case .done(let payment): return payment
        case .query: return try settleFromQuery(paymentID: paymentID)
        case .send(let payment, let sealed):
            let card: Result<SecureBytes, GatewayError> = Result { () throws(GatewayError) in
                try cipher.open(sealed, context: SealingContext.paymentCardData(paymentID: paymentID))
            }
            return try sendAuthorization(payment, card: card)
        }
    }

    /// Phase 2 and 3 of a payment already marked as sent (its card data out of the database, or kept sealed for a
    /// processor that resends): call the processor with the card held only in memory, then record the outcome. An
    /// unreadable card is declined `card_data_unreadable` without calling the processor.
    ///
    /// With capture mode now, a processor that captures with the authorization is asked to (its approval says
    /// whether it captured or accepted to), and the capture is recorded with the approval. Otherwise, with `scope`
    /// (a new payment driven by its request), an approval is captured at the processor at once and the
    /// authorization, the capture, both events and the request's result are recorded in one transaction. The
    /// capture's operation id is the one a pending capture gets, so after a crash between the processor calls and
    /// that commit, reconciliation (or a retry) captures with the same id and the processor answers with its first
    /// outcome: nothing is captured twice. It is done only when the approval came back within
    /// ``GatewayConfiguration/authorizationTimeout`` of the send: before that no query can have settled the payment
    /// as never sent.
    func sendAuthorization(
        _ payment: Payment, card bytes: Result<SecureBytes, GatewayError>, completing scope: IdempotencyScope? = nil,
        attempt: TransitionCause.AuthorizationAttempt = .authorization
    ) throws(GatewayError) -> Payment {
        let paymentID = payment.id
        let processor = try processor(for: payment)
        let outcome: AuthorizationOutcome
        do {
            var card = try CardSecret.unpack(try bytes.get())
            defer {
                card.accountNumber.erase()
                card.cryptogram?.erase()
            }
            outcome = processor.authorize(
                Self.authorizationRequest(payment, card: card))
        } catch {
            outcome = .declined(code: "card_data_unreadable")
        }
        var capture: ProcessorOperationOutcome?
        if case .approved(let approval) = outcome, payment.captureMode == .now {
            switch approval.capture {
            case .captured?: capture = .succeeded
            case .accepted?: capture = .accepted(reference: nil)
            case nil:
                if scope != nil, let sent = payment.authorizationSentAt,
                    clock.now() < sent.addingTimeInterval(configuration.authorizationTimeout)
                {
                    capture = processor.capture(
                        reference: approval.reference, amount: payment.amount, currency: payment.currency,
                        operationID: Self.captureOperationID(paymentID))
                }
            }
        }
        let recorded = Self.captureEvent(capture, amount: payment.amount)
        return try record(
            outcome: outcome, paymentID: paymentID, attempt: attempt, then: recorded,
            completing: recorded != nil ? scope : nil)
    }

    /// What a processor is sent for `payment`'s authorization with `card`.
    static func authorizationRequest(_ payment: Payment, card: CardSecret) -> AuthorizationRequest {
        AuthorizationRequest(
            accountNumber: card.accountNumber, expirationDate: card.expirationDate, cryptogram: card.cryptogram,
            eci: card.eci, amount: payment.amount, currency: payment.currency, merchantReference: payment.id,
            merchantID: payment.merchantID, operationID: authorizationOperationID(payment.id),
            captureNow: payment.captureMode == .now)
    }

    /// The event of a capture's outcome that is recorded with the approval before it: done or accepted; nil for
    /// one that failed or was not answered (the pending capture stays, for ``operate(_:paymentID:amount:resume:completing:auditedAs:)``
    /// or reconciliation).
    static func captureEvent(_ outcome: ProcessorOperationOutcome?, amount: Int64) -> PaymentEvent? {
        switch outcome {
        case .succeeded?: .captureSucceeded(amount: amount)
        case .accepted?: .captureAccepted
        default: nil
        }
    }

    /// The operation id of a payment's authorization: the idempotency key of every send of it.
    public static func authorizationOperationID(_ paymentID: String) -> String { "authorize_\(paymentID)" }

    /// The operation id of a payment's (full) capture, the same whether it runs at once or as a pending one.
    public static func captureOperationID(_ paymentID: String) -> String { "capture_\(paymentID)" }

    /// Moves an authorized payment to `captured` for `amount`, with its transition and event.
    func applyCapture(
        _ payment: inout Payment, amount: Int64, at now: Date, in tx: any StoreTransaction
    ) throws {
        payment = try apply(
            PaymentStateMachine.apply(.captureSucceeded(amount: amount), to: payment, at: now), in: tx, at: now)
    }

    /// Stores `payment` (with its refunds) as the request's result in `tx`.
    func complete(_ scope: IdempotencyScope, payment: Payment, in tx: any StoreTransaction) throws {
        var result = try tx.payment(id: payment.id) ?? payment
        result.refunds = try tx.refunds(paymentID: payment.id)
        try scope.complete(result, in: tx)
    }

    /// Records an authorization outcome unless the payment was settled meanwhile. With `then` (capture mode now),
    /// the capture's outcome follows the approval in the same transaction (`captured`, or `capture_pending` when the
    /// processor accepted it), which stores `scope`'s result too. A processor that resends has its sealed card data
    /// dropped once the outcome is recorded.
    func record(
        outcome: AuthorizationOutcome, paymentID: String, attempt: TransitionCause.AuthorizationAttempt,
        then capture: PaymentEvent? = nil,
        completing scope: IdempotencyScope? = nil
    ) throws(GatewayError) -> Payment {
        // In whole milliseconds, as the store keeps times: the result prepared ahead is the payment as stored.
        let now = Date(unixMilliseconds: clock.now().unixMilliseconds)
        var lateApproval: (ProcessorApproval, any Processor)?
        let event: PaymentEvent
        switch outcome {
        case .approved(let approval): event = .authorizationApproved(approval, cause: .authorization(attempt, .approved))
        case .declined(let code, let processorCode):
            event = .authorizationDeclined(
                code: code, processorCode: processorCode, cause: .authorization(attempt, .declined(code: code)))
        case .timeout, .unknown: event = .authorizationUnanswered(cause: .authorization(attempt, .unanswered))
        }
        var approved = false
        if case .approved = outcome { approved = true }
        let then = approved ? capture : nil
        // Rendered and sealed here, on the request's thread, so the group commit's leader only binds bytes.
        let prepared = prepareOutcome(paymentID: paymentID, event: event, then: then, completing: scope, at: now)
        var completed = false
        let payment: Payment = try write { tx in
            guard var payment = try tx.payment(id: paymentID) else { throw GatewayError(.notFound) }
            let processor = try processor(for: payment)
            let dropsCard = processor.authorizationRecovery == .resend
            if let prepared, payment == prepared.base {
                for (prepared, events) in prepared.steps {
                    var step = prepared
                    if dropsCard, step.payment.status != .unknown { step.effects.dropsCardData = true }
                    payment = try apply(step, in: tx, at: now, rendered: events)
                }
                if let scope, let completion = prepared.completion {
                    try scope.complete(completion, in: tx)
                    completed = true
                }
                return payment
            }
            guard payment.status == .processing || payment.status == .unknown else {
                // Settled meanwhile (failed as never sent): an approval arriving now must not stay authorized.
                if case .approved(let approval) = outcome, payment.status == .failed,
                    payment.acquirerReference != approval.reference
                {
                    lateApproval = (approval, processor)
                }
                // Approved meanwhile by the processor's notification: the capture made with this answer is recorded.
                if let then, payment.status == .authorized, payment.captureMode == .now,
                    payment.pendingOperation?.kind == .capture
                {
                    payment = try apply(PaymentStateMachine.apply(then, to: payment, at: now), in: tx, at: now)
                    if let scope {
                        try complete(scope, payment: payment, in: tx)
                        completed = true
                    }
                }
                return payment
            }
            var step = try PaymentStateMachine.apply(event, to: payment, at: now)
            if dropsCard, step.payment.status != .unknown { step.effects.dropsCardData = true }
            payment = try apply(step, in: tx, at: now)
            if let then, payment.captureMode == .now {
                payment = try apply(PaymentStateMachine.apply(then, to: payment, at: now), in: tx, at: now)
                if let scope {
                    try complete(scope, payment: payment, in: tx)
                    completed = true
                }
            }
            return payment
        }
        if completed { scope?.completionCommitted() }
        if let (approval, processor) = lateApproval {
            // Release the hold; the processor answers a repeated id with its first outcome.
            _ = processor.void(reference: approval.reference, operationID: "void_late_\(paymentID)")
        }
        return payment
    }

    /// Moves a `processing` or `unknown` payment to `failed` with its event (and `payment.unknown_resolved` when it
    /// was `unknown`), dropping its card data and reopening its session.
    func fail(
        _ payment: inout Payment, code: String, cause: TransitionCause, at now: Date, in tx: any StoreTransaction
    ) throws {
        let event = PaymentEvent.authorizationDeclined(code: code, cause: cause)
        payment = try apply(PaymentStateMachine.apply(event, to: payment, at: now), in: tx, at: now)
    }

    func completeSession(of payment: Payment, in tx: any StoreTransaction, at now: Date) throws {
        guard let sessionID = payment.sessionID, var session = try tx.session(id: sessionID),
            session.paymentID == payment.id, session.status != .completed
        else { return }
        session.status = .completed
        try tx.updateSession(session)
        try emit(WebhookEventType.sessionCompleted, session: session, in: tx, at: now)
    }

    /// Asks the processor what happened to a payment whose authorization was sent, and records the answer.
    /// Never authorizes again, except through a processor that resends (``AuthorizationRecovery/resend``): when
    /// it cannot look the payment up, or finds nothing, the authorization is sent again with its idempotency key
    /// and the card data kept sealed for it, and the processor answers with its first outcome (or processes it now,
    /// exactly once, when it never arrived).
    func settleFromQuery(paymentID: String) throws(GatewayError) -> Payment {
        guard let current = try read({ try $0.payment(id: paymentID) }) else { throw GatewayError(.notFound) }
        let processor = try processor(for: current)
        let answer = processor.query(merchantReference: paymentID)
        let attempt = TransitionCause.AuthorizationAttempt.reconciled
        switch answer {
        case .approved(let approval):
            return try record(outcome: .approved(approval), paymentID: paymentID, attempt: attempt)
        case .declined(let code, let processorCode):
            return try record(
                outcome: .declined(code: code, processorCode: processorCode), paymentID: paymentID, attempt: attempt)
        case .pending: return try record(outcome: .unknown, paymentID: paymentID, attempt: attempt)
        case .notFound, .unsupported:
            if processor.authorizationRecovery == .resend, let resent = try resendAuthorization(current) {
                return resent
            }
            guard answer == .notFound else {
                return try record(outcome: .unknown, paymentID: paymentID, attempt: attempt)
            }
            let now = clock.now()
            return try write { tx in
                guard var payment = try tx.payment(id: paymentID) else { throw GatewayError(.notFound) }
                guard payment.status == .processing || payment.status == .unknown else { return payment }
                // Within the processor timeout the authorization may still be on its way: not proof yet.
                if let sent = payment.authorizationSentAt,
                    now < sent.addingTimeInterval(configuration.authorizationTimeout)
                {
                    let event = PaymentEvent.authorizationUnanswered(cause: .notAtProcessorYet)
                    return try apply(PaymentStateMachine.apply(event, to: payment, at: now), in: tx, at: now)
                }
                try fail(&payment, code: "not_sent", cause: .neverReceived, at: now, in: tx)
                return payment
            }
        }
    }

    /// Sends a `processing` or `unknown` payment's authorization again, with the same idempotency key and the card
    /// data kept sealed for it (``AuthorizationRecovery/resend``); nil when there is no card data left to send.
    func resendAuthorization(_ payment: Payment) throws(GatewayError) -> Payment? {
        guard payment.status == .processing || payment.status == .unknown,
            let sealed = try read({ try $0.cardData(paymentID: payment.id) })
        else { return nil }
        let card: Result<SecureBytes, GatewayError> = Result { () throws(GatewayError) in
            try cipher.open(sealed, context: SealingContext.paymentCardData(paymentID: payment.id))
        }
        return try sendAuthorization(payment, card: card, attempt: .sentAgain)
    }

    // MARK: - Capture and void

    /// A capture or void in three phases: record the pending operation, call the processor with its stable
    /// id, record the outcome and its event. A pending operation found later is finished with the same id, unless
    /// the processor accepted it already (`capture_pending`, `void_pending`): that one is never sent again, and
    /// the payment is answered as it is. With `scope`, a success (or an acceptance) also stores the payment (with
    /// its refunds, as read back) as the scope's finished result, in the transaction that records the outcome.
    /// `auditedAs` (a merchant's own capture or void, not the gateway's automatic one) records the request in the
    /// audit log with the pending operation, by that actor.
    func operate(
        _ kind: PendingOperation.Kind, paymentID: String, amount: Int64?, resume: Bool,
        completing scope: IdempotencyScope? = nil, auditedAs actor: AuditActor? = nil
    ) throws(GatewayError)
        -> Payment
    {
        let now = clock.now()
        // A merchant's own request gets an id of its own; the automatic capture keeps the payment's first one.
        let requestedID = actor != nil ? try Identifiers.make("\(kind.rawValue)_\(paymentID)_", 8) : nil
        let (payment, operation): (Payment, PendingOperation?) = try write { tx in
            guard var payment = try tx.payment(id: paymentID) else { throw GatewayError(.notFound) }
            if resume, let pending = payment.pendingOperation, pending.kind == kind {
                let accepted = payment.status == .capturePending || payment.status == .voidPending
                return (payment, accepted ? nil : pending)
            }
            let event = PaymentEvent.operationRequested(kind, amount: amount, operationID: requestedID)
            payment = try apply(PaymentStateMachine.apply(event, to: payment, at: now), in: tx, at: now)
            guard let operation = payment.pendingOperation else {
                throw GatewayError(.internalError, "no pending operation", paymentID: paymentID)
            }
            let value = operation.amount
            if let actor {
                try AuditLog.record(
                    in: tx, merchantID: payment.merchantID,
                    action: kind == .capture ? AuditLog.Action.paymentCapture : AuditLog.Action.paymentVoid,
                    target: paymentID,
                    detail: kind == .capture
                        ? ["amount": WireFormat.amount(value, payment.currency), "currency": payment.currency] : [:],
                    at: now, actor: actor)
            }
            return (payment, operation)
        }
        guard let operation else { return payment }
        guard let reference = payment.acquirerReference else {
            throw GatewayError(.internalError, "no acquirer reference")
        }
        let processor = try processor(for: payment)
        let outcome =
            kind == .capture
            ? processor.capture(
                reference: reference, amount: operation.amount, currency: payment.currency,
                operationID: operation.operationID)
            : processor.void(reference: reference, operationID: operation.operationID)
        return try settle(kind, of: paymentID, operation: operation, outcome: outcome, completing: scope)
    }

    /// Records the processor's `outcome` of the pending capture or void `operation` of a payment (unless it was
    /// settled meanwhile): done, accepted (`capture_pending`, `void_pending`), declined (`processor_declined`), or
    /// unanswered (`processor_unavailable`; it stays pending for reconciliation).
    func settle(
        _ kind: PendingOperation.Kind, of paymentID: String, operation: PendingOperation,
        outcome: ProcessorOperationOutcome, completing scope: IdempotencyScope? = nil
    ) throws(GatewayError) -> Payment {
        let settled = clock.now()
        let payment: Payment = try write { tx in
            guard var payment = try tx.payment(id: paymentID) else { throw GatewayError(.notFound) }
            guard payment.pendingOperation == operation else { return payment }
            let event: PaymentEvent
            switch outcome {
            case .succeeded: event = kind == .capture ? .captureSucceeded(amount: operation.amount) : .voidSucceeded
            case .accepted:
                if payment.status == .capturePending || payment.status == .voidPending { return payment }
                event = kind == .capture ? .captureAccepted : .voidAccepted
            // The refusal is recorded (the pending operation cleared) before the error is thrown, outside the
            // transaction: a throw inside it would roll the refusal back and leave the operation pending.
            case .declined: event = .operationDeclined(kind)
            case .timeout, .unknown: return payment
            }
            payment = try apply(PaymentStateMachine.apply(event, to: payment, at: settled), in: tx, at: settled)
            if let scope, event != .operationDeclined(kind) { try complete(scope, payment: payment, in: tx) }
            return payment
        }
        switch outcome {
        case .declined(let code):
            throw GatewayError(
                .processorDeclined, "the processor refused the \(kind.rawValue)", declineCode: code,
                paymentID: paymentID)
        case .timeout, .unknown:
            throw GatewayError(
                .processorUnavailable, "no answer from the processor; the \(kind.rawValue) will be retried",
                paymentID: paymentID)
        case .succeeded, .accepted: return payment
        }
    }

    /// Asks the processor what became of the capture or void it accepted for a `capture_pending` or
    /// `void_pending` payment, and records the answer when it has one (``Processor/operationStatus(_:reference:operationID:amount:)``).
    func settleAcceptedOperation(paymentID: String) throws(GatewayError) -> Payment {
        guard let payment = try read({ try $0.payment(id: paymentID) }) else { throw GatewayError(.notFound) }
        guard payment.status == .capturePending || payment.status == .voidPending,
            let operation = payment.pendingOperation, let reference = payment.acquirerReference
        else { return payment }
        let outcome = try processor(for: payment).operationStatus(
            operation.kind == .capture ? .capture : .void, reference: reference, operationID: operation.operationID,
            amount: operation.amount)
        if case .accepted = outcome { return payment }
        return try settle(operation.kind, of: paymentID, operation: operation, outcome: outcome)
    }

    // MARK: - Refunds

    /// Sends a pending refund to the processor (its id is the operation id) and records the outcome. A refund the
    /// processor accepted already is never sent again: with `querying` (reconciliation) the processor is asked what
    /// became of it (``Processor/operationStatus(_:reference:operationID:amount:)``), otherwise it is answered as it
    /// is, `pending` on a `refund_pending` payment, until its notification comes.
    func finishRefund(
        paymentID: String, refundID: String, querying: Bool = false
    ) throws(GatewayError)
        -> RefundResult
    {
        let (payment, pending) = try read { tx -> (Payment, Refund) in
            guard let payment = try tx.payment(id: paymentID),
                let refund = try tx.refunds(paymentID: paymentID).first(where: { $0.id == refundID })
            else { throw GatewayError(.notFound) }
            return (payment, refund)
        }
        if pending.status == .pending, let reference = payment.acquirerReference,
            pending.processorReference == nil || querying
        {
            let processor = try processor(for: payment)
            let outcome =
                pending.processorReference == nil
                ? processor.refund(
                    reference: reference, amount: pending.amount, currency: pending.currency, operationID: refundID)
                : processor.operationStatus(
                    .refund, reference: reference, operationID: refundID, amount: pending.amount)
            try recordRefund(outcome, paymentID: paymentID, refundID: refundID)
        }
        return try read { tx in
            guard var payment = try tx.payment(id: paymentID) else { throw GatewayError(.notFound) }
            payment.refunds = try tx.refunds(paymentID: paymentID)
            guard let refund = payment.refunds.first(where: { $0.id == refundID }) else {
                throw GatewayError(.internalError, "refund vanished")
            }
            return RefundResult(refund: refund, payment: payment)
        }
    }

    /// Records the processor's `outcome` of pending refund `refundID` (unless it was settled meanwhile): succeeded,
    /// accepted (the payment `refund_pending`), declined; an unanswered one stays pending for reconciliation.
    func recordRefund(_ outcome: ProcessorOperationOutcome, paymentID: String, refundID: String) throws(GatewayError) {
        let now = clock.now()
        try write { tx in
            guard var payment = try tx.payment(id: paymentID) else { return }
            payment.refunds = try tx.refunds(paymentID: paymentID)
            guard let refund = payment.refunds.first(where: { $0.id == refundID }), refund.status == .pending else {
                return
            }
            let event: PaymentEvent
            switch outcome {
            case .succeeded: event = .refundSucceeded(refund)
            case .accepted(let reference):
                if refund.processorReference != nil { return }
                event = .refundAccepted(refund, reference: reference)
            case .declined(let code): event = .refundDeclined(refund, code: code)
            case .timeout, .unknown: return
            }
            try apply(PaymentStateMachine.apply(event, to: payment, at: now), in: tx, at: now)
        }
    }

    // MARK: - Reconciliation

}

extension Payments {
    /// Captures an authorized payment, fully or partially (`amount` minor units), once.
    public func capture(
        merchant: Merchant, paymentID: String, amount: Int64? = nil, idempotencyKey: String? = nil,
        scope requestScope: RequestScope = .unattributed
    )
        throws(GatewayError) -> Payment
    {
        if let amount, amount <= 0 { throw .invalid("amount", "a positive number of minor units") }
        _ = try read { try gateway.ownedPayment(merchant, paymentID, in: $0) }
        return try idempotent(
            merchant, key: idempotencyKey, operation: "capture",
            fingerprint: [paymentID, amount.map(String.init) ?? "full"], requestScope: requestScope
        ) { scope throws(GatewayError) in
            var payment = try gateway.operate(
                .capture, paymentID: paymentID, amount: amount, resume: scope.resumePoint != nil,
                auditedAs: requestScope.actor)
            payment.refunds = try read { try $0.refunds(paymentID: paymentID) }
            return payment
        }
    }

    /// Voids an authorized, uncaptured payment.
    public func void(
        merchant: Merchant, paymentID: String, idempotencyKey: String? = nil,
        scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> Payment {
        _ = try read { try gateway.ownedPayment(merchant, paymentID, in: $0) }
        return try idempotent(
            merchant, key: idempotencyKey, operation: "void", fingerprint: [paymentID], requestScope: requestScope
        ) { scope throws(GatewayError) in
            try gateway.operate(
                .void, paymentID: paymentID, amount: nil, resume: scope.resumePoint != nil,
                auditedAs: requestScope.actor)
        }
    }

    /// Cancels the capture scheduled for an authorized payment (TapPay's Cap Cancel): it stays authorized until
    /// captured or voided by hand. Refused (`invalid_state_transition`) once captured, while a capture or void is
    /// in progress, or when no capture is scheduled.
    public func cancelScheduledCapture(
        merchant: Merchant, paymentID: String, scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> Payment {
        let now = clock.now()
        return try write { tx in
            let payment = try gateway.ownedPayment(merchant, paymentID, in: tx)
            let unscheduled = try gateway.apply(
                PaymentStateMachine.apply(.captureUnscheduled, to: payment, at: now), in: tx, at: now)
            try AuditLog.record(
                in: tx, merchantID: payment.merchantID, action: AuditLog.Action.paymentCaptureCancel,
                target: paymentID, at: now, actor: requestScope.actor)
            return unscheduled
        }
    }

    /// The background job: settles `processing`/`unknown` payments older than the reconciliation delay by
    /// querying the processor (never authorizing again; a payment whose authorization was never sent fails),
    /// finishes pending captures, voids and refunds with their original ids, runs due automatic captures,
    /// and drops expired primes' card data and old idempotency records.
    @discardableResult
    public func reconcile(delay: TimeInterval? = nil) throws(GatewayError) -> ReconciliationReport {
        let now = clock.now()
        let cutoff = now.addingTimeInterval(-(delay ?? configuration.reconciliationDelay))
        var report = ReconciliationReport()
        let stuck = try read {
            try $0.paymentIDs(statuses: [.processing, .unknown], updatedBefore: cutoff, limit: 500)
        }
        for id in stuck {
            let payment = try read { try $0.payment(id: id) }
            guard let payment else { continue }
            let settled: Payment
            if payment.status == .processing, payment.authorizationSentAt == nil {
                settled = try write { tx in
                    guard var current = try tx.payment(id: id), current.status == .processing,
                        current.authorizationSentAt == nil
                    else { return try tx.payment(id: id) ?? payment }
                    try gateway.fail(&current, code: "interrupted", cause: .interruptedBeforeSending, at: now, in: tx)
                    return current
                }
            } else {
                settled = try gateway.settleFromQuery(paymentID: id)
            }
            if settled.status == .unknown { report.stillUnknown.append(id) } else { report.settledPayments.append(id) }
        }
        let captures = try read { try $0.paymentIDsNeedingCapture(due: now, limit: 500) }
        for id in captures {
            guard let payment = try read({ try $0.payment(id: id) }) else { continue }
            if payment.pendingOperation != nil, payment.updatedAt > cutoff, !report.settledPayments.contains(id) {
                continue
            }
            if payment.status == .capturePending || payment.status == .voidPending {
                // Accepted by the processor: asked about, never sent again.
                let result = try? gateway.settleAcceptedOperation(paymentID: id)
                if result?.status == .captured { report.capturedPayments.append(id) }
                continue
            }
            let kind = payment.pendingOperation?.kind ?? .capture
            do {
                let result = try gateway.operate(kind, paymentID: id, amount: payment.pendingOperation?.amount, resume: true)
                if result.status == .captured { report.capturedPayments.append(id) }
            } catch {
                continue
            }
        }
        let refundPayments = try read { try $0.paymentIDsWithPendingRefunds(limit: 500) }
        for id in refundPayments {
            let pending = try read { try $0.refunds(paymentID: id) }.filter {
                $0.status == .pending && $0.updatedAt <= cutoff
            }
            for refund in pending {
                let result = try gateway.finishRefund(paymentID: id, refundID: refund.id, querying: true)
                if result.refund.status != .pending { report.finishedRefunds.append(refund.id) }
            }
        }
        report.purgedPrimes = try write { try $0.purgeExpiredPrimes(now: now) }
        // Idempotent results past the retention period are deleted, not just ignored. An unfinished record
        // (a request that stopped mid-way) stays: its recovery point is what prevents a second charge.
        let retained = now.addingTimeInterval(-configuration.idempotencyRetention)
        report.purgedIdempotencyRecords = try write { try $0.purgeIdempotencyRecords(before: retained) }
        report.purgedStoredResponses = try write { try $0.purgeStoredResponses(before: retained) }
        let idleSince = now.addingTimeInterval(-ConsoleSessionRules.idleTimeout - ConsoleSessionRules.retention)
        report.purgedConsoleSessions = try write { try $0.purgeConsoleSessions(lastSeenBefore: idleSince) }
        return report
    }
}

extension Refunds {
    /// Refunds part (`amount`) or the rest of a captured payment. Several refunds may be made; their total
    /// never exceeds the captured amount. A refund the processor did not answer stays `pending` and is
    /// finished by reconciliation.
    public func refund(
        merchant: Merchant, paymentID: String, amount: Int64? = nil, reason: String? = nil,
        idempotencyKey: String? = nil, scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> RefundResult {
        if let amount, amount <= 0 { throw .invalid("amount", "a positive number of minor units") }
        try FieldLimits.checkText(reason, atMost: FieldLimits.refundReason, param: "reason")
        _ = try read { try gateway.ownedPayment(merchant, paymentID, in: $0) }
        return try idempotent(
            merchant, key: idempotencyKey, operation: "refund",
            fingerprint: [paymentID, amount.map(String.init) ?? "rest", reason ?? ""], requestScope: requestScope
        ) { scope throws(GatewayError) in
            let refundID: String
            if let resumed = scope.resumed("refund") {
                refundID = resumed
            } else {
                let now = clock.now()
                refundID = try Identifiers.ordered("re_", at: now)
                try write { tx in
                    guard var payment = try tx.payment(id: paymentID) else { throw GatewayError(.notFound) }
                    payment.refunds = try tx.refunds(paymentID: paymentID)
                    let event = PaymentEvent.refundRequested(id: refundID, amount: amount, reason: reason)
                    let step = try PaymentStateMachine.apply(event, to: payment, at: now)
                    try gateway.apply(step, in: tx, at: now)
                    guard let value = step.effects.newRefunds.first?.amount else {
                        throw GatewayError(.internalError, "no refund to record", paymentID: paymentID)
                    }
                    try AuditLog.record(
                        in: tx, merchantID: payment.merchantID, action: AuditLog.Action.paymentRefund,
                        target: paymentID,
                        detail: [
                            "amount": WireFormat.amount(value, payment.currency), "currency": payment.currency,
                            "refund_id": refundID,
                        ], at: now, actor: requestScope.actor)
                    try scope.checkpoint("refund:\(refundID)", in: tx)
                }
            }
            return try gateway.finishRefund(paymentID: paymentID, refundID: refundID)
        }
    }
}
