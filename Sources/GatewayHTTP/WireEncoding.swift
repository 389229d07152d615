import ApplePayModel
import Foundation
import Gateway
import OrchardJSON
import OrchardHTTP

/// HTTP responses in the wire shapes of `openapi.yaml`; the shapes themselves are the domain's ``WireFormat``,
/// the same encoder that writes the webhook bodies.
enum Wire {
    static func amount(_ minorUnits: Int64, _ currency: String) -> String { WireFormat.amount(minorUnits, currency) }
    static func time(_ date: Date) -> String { WireFormat.time(date) }
    static func time(_ date: Date?) -> Any { WireFormat.time(date) }
    static func value(_ text: String?) -> Any { WireFormat.value(text) }
    static func data(_ object: Any) -> Data { WireFormat.data(object) }
    static func cardInfo(_ info: CardInfo) -> [String: Any] { WireFormat.cardInfo(info) }
    static func refund(_ refund: Refund) -> [String: Any] { WireFormat.refund(refund) }

    static func payment(_ payment: Payment, transitions: [PaymentTransition]) -> [String: Any] {
        WireFormat.payment(payment, transitions: transitions)
    }

    static func session(_ session: OrderSession, merchantName: String, now: Date) -> [String: Any] {
        WireFormat.session(session, merchantName: merchantName, now: now)
    }

    static func response(_ object: Any, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": JSONCoding.contentType], body: data(object))
    }

    /// An event as `GET /v1/events` shows it: the stored webhook body, unchanged, plus its delivery state.
    static func event(_ record: EventRecord) -> [String: Any] {
        var object = (try? JSONValue.parse(record.event.payload))?.objectForWriting ?? [:]
        object["delivery"] =
            [
                "state": record.delivery.state.rawValue, "attempts": record.delivery.attempts,
                "next_attempt_at": time(record.delivery.nextAttemptAt),
                "last_status": record.delivery.lastStatus.map { $0 as Any } ?? NSNull(),
            ] as [String: Any]
        return object
    }
}
