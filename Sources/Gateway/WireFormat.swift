import ApplePayModel
import Foundation
import OrchardBase
import OrchardJSON

/// The wire shapes of `openapi.yaml`, shared by the HTTP responses and the webhook bodies the outbox stores:
/// amounts as decimal strings with the currency's exponent, RFC 3339 times in UTC with whole seconds, every
/// required property present (`null` when absent).
public enum WireFormat {
    /// `minorUnits` of `currency` as a decimal string with exactly the currency's minor-unit digits
    /// (`"100.00"`, `"1.234"` for KWD, `"100"` for JPY).
    public static func amount(_ minorUnits: Int64, _ currency: String) -> String {
        guard let currency = try? Currency(code: currency) else { return String(minorUnits) }
        return Money(minorUnits: minorUnits, currency: currency).decimalString
    }

    /// RFC 3339, UTC, whole seconds (`2026-11-30T03:20:05Z`).
    public static func time(_ date: Date) -> String {
        RFC3339.string(Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)))
    }

    /// ``time(_:)`` of a date, or `NSNull` for nil.
    public static func time(_ date: Date?) -> Any { date.map(time) ?? NSNull() }

    /// The text, or `NSNull` for nil.
    public static func value(_ text: String?) -> Any { text ?? NSNull() }

    /// The JSON bytes of `object` (see ``json(_:)``); empty when it has no JSON form.
    public static func data(_ object: Any) -> Data { (try? json(object)) ?? Data() }

    /// JSON text already encoded, written as it is (a stored body inside a larger one).
    public typealias RawJSON = OrchardJSON.RawJSON

    /// A value with no JSON form: a non-finite number, or a type JSON cannot carry.
    public typealias NotJSON = OrchardJSON.NotJSON

    /// The compact JSON bytes of a Foundation-style value, keys sorted (``JSONWriter/json(_:)``). The responses,
    /// the webhook bodies and the idempotency fingerprints are all written by it.
    public static func json(_ object: Any) throws(NotJSON) -> Data { try JSONWriter.json(object) }

    /// The `CardInfo` schema.
    public static func cardInfo(_ info: CardInfo) -> [String: Any] {
        [
            "bin_code": String(info.binCode.prefix(6)), "last_four": info.lastFour, "issuer": info.issuer ?? "",
            "funding": info.funding, "type": info.type, "level": info.level ?? "", "country": info.country ?? "",
            "country_code": info.countryCode ?? "", "bank_id": info.bankID ?? "",
            "issuer_zh_tw": info.issuerZhTW ?? "",
        ]
    }

    /// The `Refund` schema.
    public static func refund(_ refund: Refund) -> [String: Any] {
        [
            "id": refund.id, "payment_id": refund.paymentID, "amount": amount(refund.amount, refund.currency),
            "currency": refund.currency, "status": refund.status.rawValue, "reason": value(refund.reason),
            "created_at": time(refund.createdAt),
        ]
    }

    /// The API's transition cause (`TransitionCause`) of a recorded transition.
    public static func cause(_ transition: PaymentTransition) -> String {
        let text = transition.cause.lowercased()
        guard let from = transition.from else { return "created" }
        if text.hasPrefix("reconciled") { return "reconciled" }
        switch transition.to {
        case .authorized:
            switch from {
            case .capturePending, .captured: return "capture"
            case .voidPending: return "void"
            default: return "authorization_approved"
            }
        case .failed: return text.contains("declined") ? "authorization_declined" : "reconciled"
        case .unknown: return "processor_timeout"
        case .captured where from == .refundPending || from == .partiallyRefunded || from == .refunded: return "refund"
        case .captured, .capturePending: return "capture"
        case .voided, .voidPending: return "void"
        case .refunded, .partiallyRefunded, .refundPending: return "refund"
        case .chargedBack: return "chargeback"
        case .processing: return "created"
        }
    }

    /// The API's `capture_mode` (`now`, `delay`, `manual`).
    public static func captureMode(_ mode: CaptureMode) -> String {
        switch mode {
        case .now: "now"
        case .afterDays: "delay"
        case .manual: "manual"
        }
    }

    /// The `Payment` schema: `payment` with its refunds (as ``Payment/refunds`` holds them) and `transitions`.
    public static func payment(_ payment: Payment, transitions: [PaymentTransition]) -> [String: Any] {
        let committedRefunds = payment.refunds.filter { $0.status != .failed }.reduce(Int64(0)) { $0 + $1.amount }
        var captureAt: Any = NSNull()
        if case .afterDays = payment.captureMode, payment.status == .authorized, let due = payment.captureAt {
            captureAt = time(due)
        }
        return [
            "id": payment.id, "status": payment.status.rawValue, "amount": amount(payment.amount, payment.currency),
            "captured_amount": amount(payment.capturedAmount, payment.currency),
            "refunded_amount": amount(committedRefunds, payment.currency), "currency": payment.currency,
            "order_number": value(payment.orderNumber), "out_trade_no": value(payment.outTradeNo),
            "details": value(payment.details), "bank_transaction_id": value(payment.bankTransactionID),
            "auth_code": payment.status == .failed ? NSNull() : value(payment.authCode),
            "acquirer": payment.acquirer, "processor": payment.acquirer,
            "processor_reference": value(payment.acquirerReference),
            "decline_code": payment.status == .failed ? value(payment.failureCode) : NSNull(),
            "processor_code": payment.status == .failed ? value(payment.processorCode) : NSNull(),
            "card_info": cardInfo(payment.cardInfo), "capture_mode": captureMode(payment.captureMode),
            "capture_at": captureAt, "refunds": payment.refunds.sorted { $0.createdAt < $1.createdAt }.map(refund),
            "transitions": transitions.map { transition -> [String: Any] in
                [
                    "from": transition.from.map { $0.rawValue as Any } ?? NSNull(), "to": transition.to.rawValue,
                    "cause": cause(transition), "at": time(transition.at),
                ]
            },
            "metadata": payment.metadata, "created_at": time(payment.createdAt), "updated_at": time(payment.updatedAt),
        ]
    }

    /// The session's status as the API shows it: an open session past its expiry is `expired`.
    public static func sessionStatus(_ session: OrderSession, now: Date) -> String {
        if session.status == .open, now >= session.expiresAt { return "expired" }
        return session.status.rawValue
    }

    /// The `Session` schema.
    public static func session(_ session: OrderSession, merchantName: String, now: Date) -> [String: Any] {
        let total = amount(session.amount, session.currency)
        return [
            "order_token": session.orderToken, "out_trade_no": session.outTradeNo, "amount": total,
            "currency": session.currency, "country": session.country, "merchant_identifier": session.merchantIdentifier,
            "merchant_name": merchantName, "supported_networks": session.supportedNetworks,
            "merchant_capabilities": session.merchantCapabilities, "total": ["label": merchantName, "amount": total],
            "expires_at": time(session.expiresAt), "status": sessionStatus(session, now: now),
            "payment_id": value(session.paymentID),
        ]
    }
}
