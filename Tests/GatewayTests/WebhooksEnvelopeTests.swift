import Foundation
import Testing

@testable import Gateway

@Suite("Webhook event envelope")
struct WebhooksEnvelopeTests {
    struct Payment: Encodable, Sendable {
        var id: String
        var status: String
        var amount: Int
        var currency: String
        var url: String
    }

    @Test("the body has sorted keys, whole-second created and snake_case merchant_id, and becomes an outbox event")
    func envelope() throws {
        let envelope = WebhookEventEnvelope(
            id: "evt_1", type: WebhookEventType.paymentCaptured, created: Date(timeIntervalSince1970: 1_800_000_000.75),
            environment: "sandbox", merchantID: "mer_1",
            data: Payment(id: "pay_1", status: "captured", amount: 1275, currency: "TWD", url: "https://a.example/x"))
        let expected =
            #"{"created":1800000000,"data":{"amount":1275,"currency":"TWD","id":"pay_1","status":"captured","url":"https://a.example/x"},"#
            + #""environment":"sandbox","id":"evt_1","merchant_id":"mer_1","type":"payment.captured"}"#
        #expect(String(decoding: try envelope.encoded(), as: UTF8.self) == expected)
        #expect(try envelope.encoded() == envelope.encoded())
        let event = try envelope.event()
        #expect(event.id == "evt_1")
        #expect(event.merchantID == "mer_1")
        #expect(event.type == "payment.captured")
        #expect(event.payload == Data(expected.utf8))
        #expect(event.createdAt == Date(timeIntervalSince1970: 1_800_000_000.75))
    }
}
