import Foundation

/// A webhook event's outbox row with its body rendered, ready to insert.
struct PreparedEvent {
    let event: WebhookEvent
    let objectID: String
    let deliveryURL: String?
}

/// An outcome's writes worked out on the request's thread, from a snapshot of the payment, before its transaction
/// joins a group commit: the steps of ``PaymentStateMachine`` with their webhook events rendered, and the request's
/// result encoded, sealed and rendered as the transport's answer. The transaction only binds these bytes, and
/// only when it reads the payment as it was in the snapshot (each change of a payment's status, transitions or
/// pending operation changes its row); otherwise it works the outcome out again from what it reads.
struct PreparedOutcome {
    /// The payment as the snapshot read it.
    let base: Payment
    /// Each step with its events rendered, in order.
    let steps: [(step: (payment: Payment, effects: PaymentEffects), events: [PreparedEvent])]
    /// The request's result (the payment after the steps, with its refunds), when a scope completes with it.
    let completion: IdempotencyScope.PreparedCompletion?
}

extension GatewayService {
    /// Works out ``PreparedOutcome`` for applying `event` to the payment as a read finds it now; with `then` (the
    /// capture's outcome, done or accepted) and capture mode now, it follows and `scope` completes with the payment
    /// after it (``record(outcome:paymentID:attempt:then:completing:)``). Nil when it is not prepared ahead (the
    /// transaction then does it all): the payment is missing or settled, it belongs to an order session (whose
    /// change the transaction renders), a step changes refunds, or a step is refused.
    func prepareOutcome(
        paymentID: String, event: PaymentEvent, then capture: PaymentEvent?, completing scope: IdempotencyScope?,
        at now: Date
    ) -> PreparedOutcome? {
        guard
            let (base, refunds, transitions) = try? store.read({ tx in
                (
                    try tx.payment(id: paymentID), try tx.refunds(paymentID: paymentID),
                    try tx.transitions(paymentID: paymentID)
                )
            }),
            let base, base.sessionID == nil, base.status == .processing || base.status == .unknown
        else { return nil }
        do {
            var payment = base
            var allTransitions = transitions
            var steps: [(step: (payment: Payment, effects: PaymentEffects), events: [PreparedEvent])] = []
            var events = [event]
            let captures = capture != nil && base.captureMode == .now
            if let capture, captures { events.append(capture) }
            for event in events {
                let step = try PaymentStateMachine.apply(event, to: payment, at: now)
                guard step.effects.refunds.isEmpty else { return nil }
                payment = step.payment
                allTransitions += step.effects.transitions
                let rendered = try step.effects.events.map {
                    try paymentEvent(
                        $0, payment: payment, refunds: refunds, transitions: allTransitions, deliveryURL: nil, at: now)
                }
                steps.append((step, rendered))
            }
            var result = payment
            result.refunds = refunds
            let completion = try (captures ? scope : nil).map {
                try $0.prepare(result, records: PreparedRecords(transitions: [paymentID: allTransitions]))
            }
            return PreparedOutcome(base: base, steps: steps, completion: completion)
        } catch {
            return nil
        }
    }
}
