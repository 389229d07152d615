import Foundation

/// The JSON body of a webhook delivery (``WebhookEvent/payload``):
///
/// ```json
/// {"created":1800000000,"data":{…},"environment":"sandbox","id":"evt_…","merchant_id":"mer_…","type":"payment.succeeded"}
/// ```
///
/// Keys are sorted and `created` is whole Unix seconds, so the same event always encodes to the same bytes.
/// `data` is the object the event reports (a payment, a session) as the API shows it.
public struct WebhookEventEnvelope<Object: Encodable & Sendable>: Encodable, Sendable {
    /// The event id (`evt_…`): the same on every delivery of the event, for deduplication.
    public var id: String
    /// The event type, e.g. `payment.succeeded` (see ``WebhookEventType``).
    public var type: String
    /// When the reported change happened.
    public var created: Date
    /// `sandbox` or `production`.
    public var environment: String
    /// The merchant the event belongs to.
    public var merchantID: String
    /// The object the event reports.
    public var data: Object

    public init(id: String, type: String, created: Date, environment: String, merchantID: String, data: Object) {
        self.id = id
        self.type = type
        self.created = created
        self.environment = environment
        self.merchantID = merchantID
        self.data = data
    }

    enum CodingKeys: String, CodingKey {
        case id, type, created, environment, data
        case merchantID = "merchant_id"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(type, forKey: .type)
        try container.encode(Int64(created.timeIntervalSince1970.rounded(.down)), forKey: .created)
        try container.encode(environment, forKey: .environment)
        try container.encode(merchantID, forKey: .merchantID)
        try container.encode(data, forKey: .data)
    }

    /// The body bytes: compact JSON with sorted keys and unescaped slashes.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// The outbox row for this envelope: its id, merchant, type and creation time, and the encoded body.
    public func event() throws -> WebhookEvent {
        WebhookEvent(id: id, merchantID: merchantID, type: type, payload: try encoded(), createdAt: created)
    }
}
