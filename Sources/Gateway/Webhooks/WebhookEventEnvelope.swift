import Foundation
import OrchardJSON

/// The JSON body of a webhook delivery (``WebhookEvent/payload``), `openapi.yaml`'s `WebhookPayload`:
///
/// ```json
/// {"created_at":"2026-11-30T03:20:05Z","data":{…},"id":"evt_…","type":"payment.succeeded"}
/// ```
///
/// `data` is the reported object in the API's wire shape (``WireFormat/payment(_:transitions:)`` or
/// ``WireFormat/session(_:merchantName:now:)``) as it was right after the change. Keys are sorted and
/// `created_at` has whole seconds, so the same event always encodes to the same bytes. The outbox stores these
/// bytes in the state change's transaction; deliveries send them and `GET /v1/events` shows them unchanged.
public struct WebhookEventEnvelope: Sendable, Hashable {
    /// The event id (`evt_…`): the same on every delivery of the event, for deduplication.
    public var id: String
    /// The event type, e.g. `payment.succeeded` (see ``WebhookEventType``).
    public var type: String
    /// When the reported change happened.
    public var createdAt: Date
    /// The JSON bytes of the reported object.
    public var data: Data

    /// An envelope around `data`, a JSON object (see ``WireFormat/json(_:)``).
    public init(id: String, type: String, createdAt: Date, data: [String: Any]) throws {
        self.id = id
        self.type = type
        self.createdAt = createdAt
        self.data = try WireFormat.json(data)
    }

    /// The envelope of a stored body; nil when `payload` is not one.
    public init?(payload: Data) {
        guard let object = try? JSONValue.parse(payload), object.members != nil,
            let id = object["id"]?.string, let type = object["type"]?.string,
            let created = object["created_at"]?.string, let createdAt = try? Date(created, strategy: .iso8601),
            let data = object["data"], data.members != nil
        else { return nil }
        let bytes = JSONWriter.canonical(data)
        self.id = id
        self.type = type
        self.createdAt = createdAt
        self.data = bytes
    }

    /// The body bytes: compact JSON with sorted keys and unescaped slashes; `data` goes in as it is stored.
    public func encoded() -> Data {
        WireFormat.data([
            "id": id, "type": type, "created_at": WireFormat.time(createdAt), "data": WireFormat.RawJSON(data),
        ])
    }

    /// The outbox row for this envelope: its id, the merchant, type and creation time, and the encoded body.
    public func event(merchantID: String) -> WebhookEvent {
        WebhookEvent(id: id, merchantID: merchantID, type: type, payload: encoded(), createdAt: createdAt)
    }
}
