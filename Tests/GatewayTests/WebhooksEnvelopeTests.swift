import Foundation
import Testing

@testable import Gateway

@Suite("Webhook event envelope")
struct WebhooksEnvelopeTests {
    @Test("the body is the spec's WebhookPayload: sorted keys, RFC 3339 created_at, data as given")
    func envelope() throws {
        let envelope = try WebhookEventEnvelope(
            id: "evt_1", type: WebhookEventType.paymentCaptured.rawValue,
            createdAt: Date(timeIntervalSince1970: 1_800_000_000.75),
            data: ["id": "pay_1", "status": "captured", "amount": "12.75", "url": "https://a.example/x"])
        let expected =
            #"{"created_at":"2027-01-15T08:00:00Z","data":{"amount":"12.75","id":"pay_1","status":"captured","#
            + #""url":"https://a.example/x"},"id":"evt_1","type":"payment.captured"}"#
        #expect(String(decoding: envelope.encoded(), as: UTF8.self) == expected)
        let event = envelope.event(merchantID: "mer_1")
        #expect(event.id == "evt_1")
        #expect(event.merchantID == "mer_1")
        #expect(event.type == "payment.captured")
        #expect(event.payload == Data(expected.utf8))
        let parsed = try #require(WebhookEventEnvelope(payload: event.payload))
        #expect(parsed.encoded() == envelope.encoded())
        #expect(WebhookEventEnvelope(payload: Data(#"{"id":"evt_1","created":1}"#.utf8)) == nil)
    }

    /// The JSON object of `data` with keys sorted, for comparing shapes.
    static func canonical(_ object: Any) throws -> String {
        String(decoding: WireFormat.data(object), as: UTF8.self)
    }

    @Test(
        "every outbox body is {id, type, created_at, data} with data the payment exactly as the API shows it",
        arguments: StoreBackend.all)
    func outboxBodiesAreWireShaped(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let payment = try h.pay(amount: 12_345, orderNumber: "ORD-1")
        _ = try h.gateway.refunds.refund(merchant: h.merchant, paymentID: payment.id, amount: 2_345)
        let events = try h.gateway.webhooks.events(merchant: h.merchant, limit: 100).reversed()
        #expect(events.map(\.type) == ["payment.succeeded", "payment.captured", "payment.refunded"])
        for event in events {
            let body = try #require(try JSONSerialization.jsonObject(with: event.payload) as? [String: Any])
            #expect(Set(body.keys) == ["id", "type", "created_at", "data"])
            #expect(body["id"] as? String == event.id)
            #expect(body["created_at"] as? String == WireFormat.time(event.createdAt))
            let data = try #require(body["data"] as? [String: Any])
            #expect(data["id"] as? String == payment.id)
            #expect(data["amount"] as? String == "123.45")
            #expect(data["currency"] as? String == "TWD")
            #expect(data["created_at"] as? String == WireFormat.time(payment.createdAt))
            #expect(data.keys.contains("out_trade_no") && data["out_trade_no"] is NSNull)
            #expect((data["transitions"] as? [Any])?.isEmpty == false)
        }
        // The last event shows the payment as GET /v1/payments/{id} does now.
        let last = try #require(events.last)
        let now = try h.gateway.payments.payment(merchant: h.merchant, id: payment.id)
        let wire = WireFormat.payment(
            now, transitions: try h.gateway.payments.transitions(merchant: h.merchant, paymentID: now.id))
        let body = try #require(try JSONSerialization.jsonObject(with: last.payload) as? [String: Any])
        #expect(try Self.canonical(body["data"] as Any) == Self.canonical(wire))
        #expect((body["data"] as? [String: Any])?["refunded_amount"] as? String == "23.45")
    }

    @Test("session.completed carries the session in its wire shape", arguments: StoreBackend.all)
    func sessionEvent(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let session = try h.gateway.sessions.create(
            merchant: h.merchant,
            CreateSessionRequest(outTradeNo: "S-1", amount: 10_000, currency: "TWD", country: "TW"))
        _ = try h.gateway.sessions.pay(merchant: h.merchant, orderToken: session.orderToken, token: h.token())
        let event = try #require(
            try h.gateway.webhooks.events(merchant: h.merchant, limit: 100).first { $0.type == "session.completed" })
        let body = try #require(try JSONSerialization.jsonObject(with: event.payload) as? [String: Any])
        let data = try #require(body["data"] as? [String: Any])
        #expect(data["order_token"] as? String == session.orderToken)
        #expect(data["amount"] as? String == "100.00")
        #expect(data["status"] as? String == "completed")
        #expect(data["merchant_name"] as? String == h.merchant.name)
        #expect(data["expires_at"] as? String == WireFormat.time(session.expiresAt))
    }
}
