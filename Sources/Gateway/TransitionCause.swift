import Foundation

/// Why a payment moved: each transition's cause as a value, and ``text``, the `cause` a transition row stores and the
/// API shows. A new cause is a case here, so every cause the gateway writes is one of a known set.
package enum TransitionCause: Sendable, Hashable {
    /// A payment made from a prime (`POST /v1/payments`).
    case paidByPrime
    /// A payment made for an order session.
    case sessionPaid
    /// The outcome of an authorization sent or looked up the way `attempt` says.
    case authorization(AuthorizationAttempt, AuthorizationResult)
    /// A processor's notification (its event code) reported the authorization approved.
    case notificationApproved(eventCode: String)
    /// A processor's notification (its event code) reported the authorization declined with `code`.
    case notificationDeclined(eventCode: String, code: String)
    /// The payment's card data was gone before its authorization could be sent.
    case noCardData
    /// Reconciliation found the authorization not at the processor yet.
    case notAtProcessorYet
    /// Reconciliation found the processor never received the authorization.
    case neverReceived
    /// Reconciliation found the authorization interrupted before it was sent.
    case interruptedBeforeSending
    /// The processor captured `amount` minor units.
    case capture(amount: Int64)
    /// The processor accepted a capture of `amount` minor units, its outcome to follow.
    case captureAccepted(amount: Int64)
    /// The processor voided the authorization.
    case void
    /// The processor accepted a void, its outcome to follow.
    case voidAccepted
    /// An accepted capture or void was refused later.
    case refused(PendingOperation.Kind)
    /// A capture the processor reported failed after it was done.
    case captureFailed
    /// A refund of `amount` minor units succeeded.
    case refund(id: String, amount: Int64)
    /// The processor accepted a refund of `amount` minor units, its outcome to follow.
    case refundAccepted(id: String, amount: Int64)
    /// A refund was refused.
    case refundRefused(id: String)
    /// A succeeded refund was reversed.
    case refundReversed(id: String)
    /// The cardholder's bank took the payment back.
    case chargeback

    /// How an authorization's outcome was learnt.
    package enum AuthorizationAttempt: String, Sendable, Hashable {
        /// The authorization sent when the payment was made.
        case authorization
        /// Looked up at the processor by reconciliation.
        case reconciled
        /// Sent again by reconciliation (the processor resends with the same key).
        case sentAgain = "reconciled: sent again"
    }

    /// An authorization's outcome.
    package enum AuthorizationResult: Sendable, Hashable {
        case approved
        case declined(code: String)
        case unanswered
    }

    /// The transition row's `cause`, as the API shows it.
    package var text: String {
        switch self {
        case .paidByPrime: "paid by prime"
        case .sessionPaid: "session paid"
        case .authorization(let attempt, .approved): "\(attempt.rawValue): approved"
        case .authorization(let attempt, .declined(let code)): "\(attempt.rawValue): declined \(code)"
        case .authorization(let attempt, .unanswered): "\(attempt.rawValue): no answer from the processor"
        case .notificationApproved(let eventCode): "notification: \(eventCode) approved"
        case .notificationDeclined(let eventCode, let code): "notification: \(eventCode) declined \(code)"
        case .noCardData: "no card data to authorize with"
        case .notAtProcessorYet: "reconciled: not at the processor yet"
        case .neverReceived: "reconciled: the processor never received the authorization"
        case .interruptedBeforeSending: "reconciled: interrupted before authorization was sent"
        case .capture(let amount): "capture of \(amount)"
        case .captureAccepted(let amount): "capture of \(amount) accepted"
        case .void: "void"
        case .voidAccepted: "void accepted"
        case .refused(let kind): "\(kind.rawValue) refused"
        case .captureFailed: "capture failed"
        case .refund(let id, let amount): "refund \(id) of \(amount)"
        case .refundAccepted(let id, let amount): "refund \(id) of \(amount) accepted"
        case .refundRefused(let id): "refund \(id) refused"
        case .refundReversed(let id): "refund \(id) reversed"
        case .chargeback: "chargeback"
        }
    }
}
