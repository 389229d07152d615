import ApplePayModel
import Foundation
import Gateway

/// The wire shapes of `openapi.yaml`: amounts as decimal strings with the currency's exponent, RFC 3339 times in
/// UTC with whole seconds, every required property present (`null` when absent).
enum Wire {
    /// `minorUnits` of `currency` as a decimal string with exactly the currency's minor-unit digits.
    static func amount(_ minorUnits: Int64, _ currency: String) -> String {
        guard let currency = try? Currency(code: currency) else { return String(minorUnits) }
        return Money(minorUnits: minorUnits, currency: currency).decimalString
    }

    /// RFC 3339, UTC, whole seconds (`2026-11-30T03:20:05Z`).
    static func time(_ date: Date) -> String {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)).formatted(.iso8601)
    }

    static func time(_ date: Date?) -> Any { date.map(time) ?? NSNull() }

    static func value(_ text: String?) -> Any { text ?? NSNull() }

    /// The JSON bytes of `object` (keys sorted, slashes unescaped).
    static func data(_ object: Any) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
    }

    static func response(_ object: Any, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": JSONCoding.contentType], body: data(object))
    }

    static func cardInfo(_ info: CardInfo) -> [String: Any] {
        [
            "bin_code": String(info.binCode.prefix(6)), "last_four": info.lastFour, "issuer": info.issuer ?? "",
            "funding": info.funding, "type": info.type, "level": info.level ?? "", "country": info.country ?? "",
            "country_code": info.countryCode ?? "", "bank_id": info.bankID ?? "",
        ]
    }

    static func refund(_ refund: Refund) -> [String: Any] {
        [
            "id": refund.id, "payment_id": refund.paymentID, "amount": amount(refund.amount, refund.currency),
            "currency": refund.currency, "status": refund.status.rawValue, "reason": value(refund.reason),
            "created_at": time(refund.createdAt),
        ]
    }

    /// The API's transition causes from the domain's recorded ones.
    static func cause(_ transition: PaymentTransition) -> String {
        let text = transition.cause.lowercased()
        guard transition.from != nil else { return "created" }
        if text.hasPrefix("reconciled") { return "reconciled" }
        switch transition.to {
        case .authorized: return "authorization_approved"
        case .failed: return text.contains("declined") ? "authorization_declined" : "reconciled"
        case .unknown: return "processor_timeout"
        case .captured: return "capture"
        case .voided: return "void"
        case .refunded, .partiallyRefunded: return "refund"
        case .processing: return "created"
        }
    }

    static func captureMode(_ mode: CaptureMode) -> String {
        switch mode {
        case .now: "now"
        case .afterDays: "delay"
        case .manual: "manual"
        }
    }

    static func payment(_ payment: Payment, transitions: [PaymentTransition]) -> [String: Any] {
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
            "details": value(payment.details),
            "auth_code": payment.status == .failed ? NSNull() : value(payment.authCode),
            "acquirer": payment.acquirer,
            "decline_code": payment.status == .failed ? value(payment.failureCode) : NSNull(),
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

    static func sessionStatus(_ session: OrderSession, now: Date) -> String {
        if session.status == .open, now >= session.expiresAt { return "expired" }
        return session.status.rawValue
    }

    static func session(_ session: OrderSession, merchantName: String, now: Date) -> [String: Any] {
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

    // MARK: Events (stored payloads → wire)

    private static func int64(_ any: Any?) -> Int64? { (any as? NSNumber)?.int64Value }

    private static func unixTime(_ any: Any?) -> Any {
        guard let seconds = int64(any) else { return NSNull() }
        return time(Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    private static func text(_ any: Any?) -> Any { (any as? String) ?? NSNull() }

    /// A payment object as the outbox stored it (minor units, Unix times) in the wire shape.
    static func storedPayment(_ object: [String: Any]) -> [String: Any] {
        let currency = object["currency"] as? String ?? ""
        func money(_ key: String) -> String { amount(int64(object[key]) ?? 0, currency) }
        let refunds = (object["refunds"] as? [[String: Any]] ?? []).map { refund -> [String: Any] in
            [
                "id": text(refund["id"]), "payment_id": text(refund["payment_id"]),
                "amount": amount(int64(refund["amount"]) ?? 0, currency), "currency": currency,
                "status": text(refund["status"]), "reason": text(refund["reason"]),
                "created_at": unixTime(refund["created"]),
            ]
        }
        let committed = (object["refunds"] as? [[String: Any]] ?? []).filter { ($0["status"] as? String) != "failed" }
            .reduce(Int64(0)) { $0 + (int64($1["amount"]) ?? 0) }
        let status = object["status"] as? String ?? "unknown"
        let mode = object["capture_mode"] as? String ?? "now"
        let card = object["card_info"] as? [String: Any] ?? [:]
        return [
            "id": text(object["id"]), "status": status, "amount": money("amount"),
            "captured_amount": money("captured_amount"), "refunded_amount": amount(committed, currency),
            "currency": currency, "order_number": text(object["order_number"]),
            "out_trade_no": text(object["out_trade_no"]), "details": text(object["details"]),
            "auth_code": status == "failed" ? NSNull() : text(object["auth_code"]),
            "acquirer": text(object["acquirer"]),
            "decline_code": status == "failed" ? text(object["failure_code"]) : NSNull(),
            "card_info": [
                "bin_code": String((card["bin_code"] as? String ?? "").prefix(6)),
                "last_four": card["last_four"] as? String ?? "", "issuer": card["issuer"] as? String ?? "",
                "funding": int64(card["funding"]) ?? -1, "type": int64(card["type"]) ?? -1,
                "level": card["level"] as? String ?? "", "country": card["country"] as? String ?? "",
                "country_code": card["country_code"] as? String ?? "", "bank_id": card["bank_id"] as? String ?? "",
            ] as [String: Any],
            "capture_mode": mode.hasPrefix("after_") ? "delay" : mode,
            "capture_at": mode.hasPrefix("after_") && status == "authorized"
                ? unixTime(object["capture_at"]) : NSNull(),
            "refunds": refunds, "transitions": [Any](), "metadata": object["metadata"] as? [String: String] ?? [:],
            "created_at": unixTime(object["created"]), "updated_at": unixTime(object["updated"]),
        ]
    }

    /// A session object as the outbox stored it in the wire shape.
    static func storedSession(_ object: [String: Any], merchantName: String) -> [String: Any] {
        let currency = object["currency"] as? String ?? ""
        let total = amount(int64(object["amount"]) ?? 0, currency)
        return [
            "order_token": text(object["order_token"]), "out_trade_no": text(object["out_trade_no"]), "amount": total,
            "currency": currency, "country": text(object["country"]),
            "merchant_identifier": text(object["merchant_identifier"]), "merchant_name": merchantName,
            "supported_networks": object["supported_networks"] as? [String] ?? [],
            "merchant_capabilities": object["merchant_capabilities"] as? [String] ?? [],
            "total": ["label": merchantName, "amount": total], "expires_at": unixTime(object["expires_at"]),
            "status": text(object["status"]), "payment_id": text(object["payment_id"]),
        ]
    }

    static func event(_ record: EventRecord, merchantName: String) -> [String: Any] {
        let payload = (try? JSONSerialization.jsonObject(with: record.event.payload)) as? [String: Any] ?? [:]
        let container = payload["data"] as? [String: Any] ?? [:]
        let object = container["object"] as? [String: Any] ?? container
        let data: [String: Any] =
            record.event.type.hasPrefix("session.")
            ? storedSession(object, merchantName: merchantName) : storedPayment(object)
        return [
            "id": record.event.id, "type": record.event.type, "created_at": time(record.event.createdAt), "data": data,
            "delivery": [
                "state": record.delivery.state.rawValue, "attempts": record.delivery.attempts,
                "next_attempt_at": time(record.delivery.nextAttemptAt),
                "last_status": record.delivery.lastStatus.map { $0 as Any } ?? NSNull(),
            ] as [String: Any],
        ]
    }
}
