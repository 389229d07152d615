import Foundation

/// One broken ledger invariant.
public struct AuditFinding: Sendable, Hashable, CustomStringConvertible {
    /// The invariant (`double_authorization`, `double_capture`, `refunds_exceed_capture`, `missing_event`,
    /// `acquirer_books_differ`).
    public var rule: String
    public var paymentID: String
    public var detail: String

    public var description: String { "\(rule) \(paymentID): \(detail)" }
}

/// The ledger's invariants, checked over a store: no payment authorized (or captured) twice at the processor,
/// refunds never above captures, every settled payment with the event that reports its state, and the gateway's
/// captured and refunded totals equal to the sandbox acquirer's books for each payment it authorized.
public enum LedgerAudit {
    /// The summary of one audit.
    public struct Report: Sendable {
        public var paymentsChecked: Int
        public var findings: [AuditFinding]
        /// Payments still `processing` or `unknown` (not a violation; reconciliation settles them).
        public var unsettled: Int
        public var holds: Bool { findings.isEmpty }
    }

    /// The event types that can report a payment's current state.
    static func acceptableEvents(for status: PaymentStatus) -> [[WebhookEventType]] {
        let resolved = WebhookEventType.paymentUnknownResolved
        switch status {
        case .processing, .unknown: return []
        case .authorized, .capturePending, .voidPending: return [[WebhookEventType.paymentSucceeded, resolved]]
        case .failed: return [[WebhookEventType.paymentFailed, resolved]]
        case .captured, .refundPending: return [[WebhookEventType.paymentCaptured]]
        case .voided: return [[WebhookEventType.paymentVoided]]
        case .partiallyRefunded, .refunded: return [[WebhookEventType.paymentRefunded]]
        case .chargedBack: return [[WebhookEventType.paymentChargedBack]]
        }
    }

    /// Audits every payment in `store`.
    public static func run(store: any Store) throws(GatewayError) -> Report {
        let rows = try gatewayThrowing { try store.read { try $0.auditRows() } }
        return check(rows)
    }

    /// Audits `rows` (read with ``StoreTransaction/auditRows()``, e.g. inside a transaction that is still open).
    public static func check(_ rows: [AuditRow]) -> Report {
        var findings: [AuditFinding] = []
        var unsettled = 0
        for row in rows {
            if row.processorAuthorizations > 1 {
                findings.append(
                    AuditFinding(
                        rule: "double_authorization", paymentID: row.paymentID,
                        detail: "the processor recorded \(row.processorAuthorizations) authorizations"))
            }
            if row.processorCaptures > 1 {
                findings.append(
                    AuditFinding(
                        rule: "double_capture", paymentID: row.paymentID,
                        detail: "the processor recorded \(row.processorCaptures) captures"))
            }
            if row.refundedAmount > row.capturedAmount {
                findings.append(
                    AuditFinding(
                        rule: "refunds_exceed_capture", paymentID: row.paymentID,
                        detail: "refunded \(row.refundedAmount) of \(row.capturedAmount) captured"))
            }
            // The books can be ahead only while an outcome is unknown (an unsettled payment, a pending capture,
            // void or refund); reconciliation brings the gateway level with them.
            if row.processorAuthorizations > 0, row.status.isSettled, !row.hasPendingOperation,
                row.capturedAmount != row.processorCapturedAmount || row.refundedAmount != row.processorRefundedAmount
            {
                findings.append(
                    AuditFinding(
                        rule: "acquirer_books_differ", paymentID: row.paymentID,
                        detail: "the gateway captured \(row.capturedAmount) and refunded \(row.refundedAmount); "
                            + "the sandbox acquirer's books captured \(row.processorCapturedAmount) and refunded "
                            + "\(row.processorRefundedAmount) (minor units)"))
            }
            if !row.status.isSettled { unsettled += 1 }
            for alternatives in acceptableEvents(for: row.status)
            where !alternatives.contains(where: { row.eventTypes.contains($0.rawValue) }) {
                findings.append(
                    AuditFinding(
                        rule: "missing_event", paymentID: row.paymentID,
                        detail: "\(row.status.rawValue) without a \(alternatives.map(\.rawValue).joined(separator: " or ")) event"))
            }
        }
        return Report(paymentsChecked: rows.count, findings: findings, unsettled: unsettled)
    }
}
