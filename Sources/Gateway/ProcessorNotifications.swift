import Foundation
import OrchardBase

/// A processor's notification request as it came in: the raw body (signatures are over its bytes) and the headers.
public struct ProcessorNotificationRequest: Sendable {
    public var body: Data
    /// Header `(name, value)` pairs in order.
    public var headers: [(String, String)]

    public init(body: Data, headers: [(String, String)]) {
        self.body = body
        self.headers = headers
    }

    /// The first header `name` (case-insensitive).
    public func header(_ name: String) -> String? { headers.first { $0.0.equalsIgnoringASCIICase(name) }?.1 }
}

/// One item of a processor's notification, in the domain's words (a connector reads it from the processor's).
public struct ProcessorNotification: Sendable, Hashable {
    /// What the item reports.
    public enum Event: String, Sendable, Hashable {
        /// The outcome of an authorization: approved (`success`) or declined.
        case authorization
        /// The outcome of a capture: done, or refused.
        case capture
        /// A capture reported done failed later.
        case captureFailed = "capture_failed"
        /// The outcome of a void (a cancel): done, or refused.
        case void
        /// The outcome of a refund: done, or refused.
        case refund
        /// A refund reported done failed later, or its money came back.
        case refundReversed = "refund_reversed"
        /// A chargeback.
        case chargeback
        /// Anything else: recorded, and the payment left as it is.
        case other
    }

    /// What makes the item unique at the processor (a repeated key is a duplicate: applied once).
    public var key: String
    /// The processor's name for the event (`CAPTURE`, `payment_captured`).
    public var eventCode: String
    public var event: Event
    /// Whether the event says the operation succeeded.
    public var success: Bool
    /// The processor's reference of the payment (Adyen's `pspReference` of the authorization, Checkout.com's `pay_…`).
    public var paymentReference: String?
    /// The reference Orchard sent, as the processor gives it back: the payment id for an authorization, the
    /// operation's id (a refund's `re_…`) for an operation when the processor returns it.
    public var merchantReference: String?
    /// The processor's reference of the operation (Adyen's modification `pspReference`, Checkout.com's `act_…`).
    public var operationReference: String?
    /// In ISO 4217 minor units of ``currency``, when the item says.
    public var amount: Int64?
    public var currency: String?
    /// For a refused authorization: Orchard's decline code, and the processor's own.
    public var declineCode: String?
    public var processorCode: String?
    public var authCode: String?

    public init(
        key: String, eventCode: String, event: Event, success: Bool, paymentReference: String? = nil,
        merchantReference: String? = nil, operationReference: String? = nil, amount: Int64? = nil,
        currency: String? = nil, declineCode: String? = nil, processorCode: String? = nil, authCode: String? = nil
    ) {
        self.key = key
        self.eventCode = eventCode
        self.event = event
        self.success = success
        self.paymentReference = paymentReference
        self.merchantReference = merchantReference
        self.operationReference = operationReference
        self.amount = amount
        self.currency = currency
        self.declineCode = declineCode
        self.processorCode = processorCode
        self.authCode = authCode
    }
}

/// A notification request read and verified by its connector: its items, and what the processor is answered.
public struct ProcessorNotificationBatch: Sendable {
    public var notifications: [ProcessorNotification]
    /// The answer's body (Adyen's `[accepted]`) and its content type.
    public var acknowledgement: String
    public var contentType: String

    public init(notifications: [ProcessorNotification], acknowledgement: String, contentType: String) {
        self.notifications = notifications
        self.acknowledgement = acknowledgement
        self.contentType = contentType
    }
}

/// A notification item as recorded: every one is kept (the unknown payments' and the other events' too), once.
public struct ProcessorNotificationRecord: Sendable, Hashable {
    /// `pn_…`
    public var id: String
    public var merchantID: String
    /// The connector's type.
    public var processor: String
    /// ``ProcessorNotification/key``: unique per merchant and processor.
    public var eventKey: String
    public var eventCode: String
    public var success: Bool
    public var paymentID: String?
    public var amount: Int64?
    public var currency: String?
    /// What the gateway made of it: `applied`, `no_change`, `unknown_payment`, `unknown_refund`, `recorded`.
    public var outcome: String
    public var receivedAt: Date

    public init(
        id: String, merchantID: String, processor: String, eventKey: String, eventCode: String, success: Bool,
        paymentID: String?, amount: Int64?, currency: String?, outcome: String, receivedAt: Date
    ) {
        self.id = id
        self.merchantID = merchantID
        self.processor = processor
        self.eventKey = eventKey
        self.eventCode = eventCode
        self.success = success
        self.paymentID = paymentID
        self.amount = amount
        self.currency = currency
        self.outcome = outcome
        self.receivedAt = receivedAt
    }
}

extension ProcessorConnector {
    /// No notification route by default.
    public var notificationPath: String? { nil }

    /// No notifications by default.
    public func notifications(
        _ request: ProcessorNotificationRequest, account: ProcessorAccount
    ) throws(GatewayError) -> ProcessorNotificationBatch {
        throw GatewayError(.notFound, "the \(type) processor sends no notifications")
    }
}

extension GatewayService {
    /// The notification paths of the connectors (`adyen/notifications` …), by connector type.
    public var processorNotificationPaths: [(type: String, path: String)] {
        connectors.values.compactMap { connector in connector.notificationPath.map { (connector.type, $0) } }
            .sorted { $0.path < $1.path }
    }

    /// Receives a processor's notification request for merchant `merchantID` on the connector's `path`: verified
    /// with the merchant's newest settings of that processor (`processor_signature_invalid` when any part is not
    /// authentic, and nothing is applied), then each item applied once (a duplicate changes nothing), in one
    /// transaction each with its record, its transition and its webhook events. An item about a payment the
    /// gateway does not know is recorded and acknowledged, so the processor stops retrying. Returns the
    /// acknowledgement.
    public func receiveProcessorNotifications(
        path: String, merchantID: String, request: ProcessorNotificationRequest
    ) throws(GatewayError) -> ProcessorNotificationBatch {
        guard let connector = connectors.values.first(where: { $0.notificationPath == path }) else {
            throw GatewayError(.notFound, "no such notification route")
        }
        guard (try? merchants.merchant(id: merchantID)) != nil else {
            throw GatewayError(.notFound, "no such merchant", param: "merchant_id")
        }
        guard let record = try read({ try $0.processorSettings(merchantID: merchantID, type: connector.type) }) else {
            throw GatewayError(
                .processorNotConfigured, "the merchant has no \(connector.type) settings to verify notifications with")
        }
        let batch = try connector.notifications(request, account: try account(of: record))
        for notification in batch.notifications {
            try apply(notification, processor: connector.type, merchantID: merchantID)
        }
        return batch
    }

    /// Applies one notification item in one transaction: its record (once: a repeated key is a duplicate), then the
    /// transition it reports, when the payment's state allows it. An approval for a payment failed meanwhile is
    /// voided afterwards, as a late answer to the API is.
    func apply(_ notification: ProcessorNotification, processor type: String, merchantID: String) throws(GatewayError) {
        let now = Date(unixMilliseconds: clock.now().unixMilliseconds)
        let recordID = try Identifiers.ordered("pn_", at: now)
        var lateApproval: (reference: String, paymentID: String, processor: any Processor)?
        try write { tx in
            var record = ProcessorNotificationRecord(
                id: recordID, merchantID: merchantID, processor: type, eventKey: notification.key,
                eventCode: notification.eventCode, success: notification.success, paymentID: nil,
                amount: notification.amount, currency: notification.currency, outcome: "recorded", receivedAt: now)
            guard try tx.insertProcessorNotification(record) else { return }  // a duplicate: applied already
            guard notification.event != .other else { return }
            guard var payment = try self.payment(for: notification, processor: type, merchantID: merchantID, in: tx)
            else {
                record.outcome = "unknown_payment"
                try tx.updateProcessorNotification(record)
                return
            }
            record.paymentID = payment.id
            payment.refunds = try tx.refunds(paymentID: payment.id)
            let events = Self.events(for: notification, payment: payment)
            if events == nil, notification.event == .authorization, notification.success, payment.status == .failed,
                let reference = notification.paymentReference, payment.acquirerReference != reference
            {
                lateApproval = (reference, payment.id, try processor(for: payment))
            }
            guard let events else {
                record.outcome =
                    notification.event == .refund || notification.event == .refundReversed
                    ? (Self.refund(for: notification, in: payment) == nil ? "unknown_refund" : "no_change")
                    : "no_change"
                try tx.updateProcessorNotification(record)
                return
            }
            let dropsCard = try processor(for: payment).authorizationRecovery == .resend
            for event in events {
                var step = try PaymentStateMachine.apply(event, to: payment, at: now)
                if dropsCard, step.payment.status.isSettled { step.effects.dropsCardData = true }
                payment = try apply(step, in: tx, at: now)
            }
            record.outcome = "applied"
            try tx.updateProcessorNotification(record)
        }
        if let late = lateApproval {
            // Release the hold the processor made for a payment the gateway had given up: a repeated id is
            // answered with the first outcome.
            _ = late.processor.void(reference: late.reference, operationID: "void_late_\(late.paymentID)")
        }
    }

    /// The payment a notification is about: by the processor's reference, else by the reference Orchard sent (a
    /// payment id), among the merchant's payments with that processor.
    func payment(
        for notification: ProcessorNotification, processor type: String, merchantID: String,
        in tx: any StoreTransaction
    ) throws -> Payment? {
        if let reference = notification.paymentReference,
            let payment = try tx.payment(merchantID: merchantID, acquirer: type, acquirerReference: reference)
        {
            return payment
        }
        guard let id = notification.merchantReference, id.hasPrefix("pay_"), let payment = try tx.payment(id: id),
            payment.merchantID == merchantID, payment.acquirer == type
        else { return nil }
        // A payment found by its id whose processor reference differs is not this notification's.
        if let known = payment.acquirerReference, let given = notification.paymentReference, known != given {
            return nil
        }
        return payment
    }

    /// The refund a refund notification is about: by the processor's reference of it, by the refund id the
    /// processor gives back, else the oldest pending refund of that amount.
    static func refund(for notification: ProcessorNotification, in payment: Payment) -> Refund? {
        if let reference = notification.operationReference,
            let refund = payment.refunds.first(where: { $0.processorReference == reference })
        {
            return refund
        }
        if let id = notification.merchantReference, let refund = payment.refunds.first(where: { $0.id == id }) {
            return refund
        }
        let state: Refund.Status = notification.event == .refundReversed ? .succeeded : .pending
        return payment.refunds.filter {
            $0.status == state && (notification.amount == nil || $0.amount == notification.amount)
        }
        .min { $0.createdAt < $1.createdAt }
    }

    /// The state machine's events a notification means for `payment` as it is now; nil when it changes nothing (a
    /// duplicate outcome, a late one for a payment settled another way, an operation the gateway does not know).
    static func events(for notification: ProcessorNotification, payment: Payment) -> [PaymentEvent]? {
        let awaiting = payment.status == .processing || payment.status == .unknown
        let approved = TransitionCause.notificationApproved(eventCode: notification.eventCode)
        let approval = ProcessorApproval(
            reference: notification.paymentReference ?? payment.acquirerReference ?? "",
            authCode: notification.authCode ?? payment.authCode ?? "")
        switch (notification.event, notification.success) {
        case (.authorization, true):
            return awaiting ? [.authorizationApproved(approval, cause: approved)] : nil
        case (.authorization, false):
            let code = notification.declineCode ?? "do_not_honor"
            return awaiting
                ? [
                    .authorizationDeclined(
                        code: code, processorCode: notification.processorCode,
                        cause: .notificationDeclined(eventCode: notification.eventCode, code: code))
                ] : nil
        case (.capture, true):
            let amount =
                payment.pendingOperation.flatMap { $0.kind == .capture ? $0.amount : nil }
                ?? notification.amount ?? payment.amount
            if awaiting {
                // Out of order: the capture's report came before the authorization's.
                return [
                    .authorizationApproved(approval, cause: approved), .captureSucceeded(amount: amount),
                ]
            }
            return payment.status == .authorized || payment.status == .capturePending
                ? [.captureSucceeded(amount: amount)] : nil
        case (.capture, false):
            return payment.pendingOperation?.kind == .capture ? [.operationDeclined(.capture)] : nil
        case (.captureFailed, _):
            if payment.status == .capturePending { return [.operationDeclined(.capture)] }
            return payment.status == .captured && payment.refunds.allSatisfy({ $0.status == .failed })
                ? [.captureFailed] : nil
        case (.void, true):
            return payment.status == .authorized || payment.status == .voidPending ? [.voidSucceeded] : nil
        case (.void, false):
            return payment.pendingOperation?.kind == .void ? [.operationDeclined(.void)] : nil
        case (.refund, let success):
            guard let refund = refund(for: notification, in: payment), refund.status == .pending else { return nil }
            return success
                ? [.refundSucceeded(refund)]
                : [.refundDeclined(refund, code: notification.declineCode ?? "refund_refused")]
        case (.refundReversed, _):
            guard let refund = refund(for: notification, in: payment) else { return nil }
            switch refund.status {
            case .succeeded: return [.refundReversed(refund, code: "refund_reversed")]
            case .pending: return [.refundDeclined(refund, code: "refund_failed")]
            case .failed: return nil
            }
        case (.chargeback, true):
            return [.captured, .refundPending, .partiallyRefunded, .refunded].contains(payment.status)
                ? [.chargeback] : nil
        case (.chargeback, false), (.other, _):
            return nil
        }
    }

    /// The merchant's recorded processor notifications, newest first.
    public func processorNotifications(
        merchantID: String, limit: Int = 100
    ) throws(GatewayError)
        -> [ProcessorNotificationRecord]
    {
        try read { try $0.processorNotifications(merchantID: merchantID, limit: limit) }
    }
}
