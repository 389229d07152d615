import Foundation
import Gateway
import GatewayProcessors
import GatewayTestSupport
import OrchardTestSupport
import Testing

/// Payments through Adyen's and Checkout.com's stand-ins end to end: the gateway on loopback with a real SQLite file,
/// the connectors over HTTP, and the processors' signed notifications posted back to the gateway.
@Suite("Processors end to end: payments, declines, captures, voids, refunds and their notifications", .serialized)
struct ProcessorEndToEndTests {
    static let apis: [ProcessorStandIn.API] = [.adyen, .checkoutCom]

    @Test("approvals and declines with several codes; the raw code kept as processor_code", arguments: apis)
    func approveAndDecline(_ api: ProcessorStandIn.API) throws {
        let p = try ProcessorHarness(api)
        let declines: [(answer: [String: Any], code: String, raw: String)] =
            api == .adyen
            ? [
                (["result": "Refused", "code": "12", "reason": "Not enough balance"], "insufficient_funds", "12"),
                (["result": "Refused", "code": "6", "reason": "Expired Card"], "expired_card", "6"),
                (["result": "Refused", "code": "31", "reason": "Issuer Suspected Fraud"], "fraud_suspected", "31"),
                (["result": "Refused", "code": "99", "reason": "Brand new"], "do_not_honor", "99"),
            ]
            : [
                (["approved": false, "response_code": "20051"], "insufficient_funds", "20051"),
                (["approved": false, "response_code": "20054"], "expired_card", "20054"),
                (["approved": false, "response_code": "20059"], "fraud_suspected", "20059"),
                (["approved": false, "response_code": "20999"], "do_not_honor", "20999"),
            ]
        try p.standIn.script("authorize", declines.map(\.answer))
        for decline in declines {
            let response = try p.pay(capture: "manual")
            #expect(response.status == 402 && response.errorCode == "card_declined", "\(response.text)")
            #expect(response.error["decline_code"] as? String == decline.code)
            let id = try #require(response.error["payment_id"] as? String)
            let payment = try p.payment(id)
            #expect(payment["status"] as? String == "failed" && payment["processor"] as? String == api.rawValue)
            #expect(
                payment["decline_code"] as? String == decline.code
                    && payment["processor_code"] as? String == decline.raw)
        }
        let approved = try p.pay(capture: "manual")
        #expect(approved.status == 200 && approved.json["status"] as? String == "authorized", "\(approved.text)")
        #expect(approved.json["processor"] as? String == api.rawValue)
        let reference = try #require(approved.json["processor_reference"] as? String)
        #expect(try p.standIn.ledger().contains { ($0["pspReference"] ?? $0["id"]) as? String == reference })
        #expect(approved.json["processor_code"] is NSNull)
    }

    @Test(
        "capture now: pending until the processor's notification says captured; duplicates change nothing",
        arguments: apis)
    func captureNow(_ api: ProcessorStandIn.API) throws {
        let p = try ProcessorHarness(api)
        let paid = try p.pay(capture: "now")
        #expect(paid.status == 200, "\(paid.text)")
        let id = try #require(paid.json["id"] as? String)
        #expect(paid.json["status"] as? String == "capture_pending")
        if api == .checkoutCom {
            // Captured with the authorization (`capture: true`): no capture call of its own.
            #expect(try p.standIn.requests().filter { ($0["path"] as? String)?.hasSuffix("/captures") == true }.isEmpty)
        }
        let answers = try p.standIn.deliver(["duplicate": true])
        #expect(answers.allSatisfy { $0.status == 200 }, "\(answers)")
        #expect(answers.first?.body == (api == .adyen ? "[accepted]" : #"{"received":true}"#))
        #expect(try p.status(id) == "captured")
        #expect(try p.events(id) == ["payment.succeeded", "payment.captured"])
        let transitions = try p.payment(id)["transitions"] as? [[String: Any]] ?? []
        #expect(transitions.map { $0["to"] as? String } == ["processing", "authorized", "capture_pending", "captured"])
        let recorded = try p.h.runtime.gateway.processorNotifications(merchantID: p.h.merchant.id)
        #expect(
            Set(recorded.map(\.outcome)).isSubset(of: ["applied", "no_change"]) && recorded.count == answers.count / 2)
    }

    @Test("capture later, a partial refund and a void, each ended by its signed notification", arguments: apis)
    func laterOperations(_ api: ProcessorStandIn.API) throws {
        let p = try ProcessorHarness(api)
        let id = try #require(try p.pay("100.00", capture: "manual").json["id"] as? String)
        let capture = try p.h.merchantServer("POST", "/v1/payments/\(id)/capture", json: ["amount": "80.00"])
        #expect(capture.status == 200 && capture.json["status"] as? String == "capture_pending", "\(capture.text)")
        try p.standIn.deliver()
        let captured = try p.payment(id)
        #expect(captured["status"] as? String == "captured" && captured["captured_amount"] as? String == "80.00")
        let refund = try p.h.merchantServer("POST", "/v1/payments/\(id)/refunds", json: ["amount": "30.00"])
        #expect(refund.status == 200 && refund.json["status"] as? String == "pending", "\(refund.text)")
        #expect(try p.status(id) == "refund_pending")
        try p.standIn.deliver()
        let refunded = try p.payment(id)
        #expect(
            refunded["status"] as? String == "partially_refunded" && refunded["refunded_amount"] as? String == "30.00")
        #expect((refunded["refunds"] as? [[String: Any]])?.first?["status"] as? String == "succeeded")

        let other = try #require(try p.pay("50.00", capture: "manual").json["id"] as? String)
        try p.standIn.deliver()
        let void = try p.h.merchantServer("POST", "/v1/payments/\(other)/void")
        #expect(void.status == 200 && void.json["status"] as? String == "void_pending", "\(void.text)")
        try p.standIn.deliver()
        #expect(try p.status(other) == "voided")
        #expect(try p.events(other) == ["payment.succeeded", "payment.voided"])
        #expect(try p.events(id) == ["payment.succeeded", "payment.captured", "payment.refunded"])
    }

    @Test("refusals by notification: the capture or refund refused later, the merchant told", arguments: apis)
    func refusedLater(_ api: ProcessorStandIn.API) throws {
        let p = try ProcessorHarness(api)
        let id = try #require(try p.pay(capture: "manual").json["id"] as? String)
        try p.standIn.script("capture", [["success": false, "reason": "Capture refused"]])
        _ = try p.h.merchantServer("POST", "/v1/payments/\(id)/capture")
        try p.standIn.deliver()
        #expect(try p.status(id) == "authorized")
        _ = try p.h.merchantServer("POST", "/v1/payments/\(id)/capture")
        try p.standIn.deliver()
        #expect(try p.status(id) == "captured")
        try p.standIn.script("refund", [["success": false, "reason": "Refund refused"]])
        let refund = try p.h.merchantServer("POST", "/v1/payments/\(id)/refunds", json: ["amount": "10.00"])
        #expect(refund.status == 200)
        try p.standIn.deliver()
        let payment = try p.payment(id)
        #expect(payment["status"] as? String == "captured" && payment["refunded_amount"] as? String == "0.00")
        #expect(
            try p.events(id) == ["payment.succeeded", "payment.capture_failed", "payment.captured", "refund.failed"])
    }

    @Test("a bad signature is 401 and changes nothing; the good one then applies", arguments: apis)
    func badSignature(_ api: ProcessorStandIn.API) throws {
        let p = try ProcessorHarness(api)
        let id = try #require(try p.pay(capture: "now").json["id"] as? String)
        let tampered = try p.standIn.deliver(["tamper": true, "keep": true])
        #expect(!tampered.isEmpty && tampered.allSatisfy { $0.status == 401 }, "\(tampered)")
        #expect(tampered.first?.body.contains("processor_signature_invalid") == true)
        #expect(try p.status(id) == "capture_pending")
        #expect(try p.h.runtime.gateway.processorNotifications(merchantID: p.h.merchant.id).isEmpty)
        try p.standIn.deliver()
        #expect(try p.status(id) == "captured")
    }

    @Test(
        "out of order: the capture's notification before the authorization's; the right state either way",
        arguments: apis)
    func outOfOrder(_ api: ProcessorStandIn.API) throws {
        let p = try ProcessorHarness(api)
        let id = try #require(try p.pay(capture: "now").json["id"] as? String)
        try p.standIn.deliver(["order": "reversed"])
        #expect(try p.status(id) == "captured")
        #expect(try p.events(id) == ["payment.succeeded", "payment.captured"])
        let refundID = try #require(
            try p.h.merchantServer("POST", "/v1/payments/\(id)/refunds", json: ["amount": "40.00"]).json["id"]
                as? String)
        let second = try p.h.merchantServer("POST", "/v1/payments/\(id)/refunds", json: ["amount": "60.00"])
        #expect(second.status == 200)
        // The two refunds' notifications in reverse order: each finds its own refund.
        try p.standIn.deliver(["order": "reversed"])
        let payment = try p.payment(id)
        #expect(payment["status"] as? String == "refunded" && payment["refunded_amount"] as? String == "100.00")
        #expect(
            (payment["refunds"] as? [[String: Any]])?.map { $0["status"] as? String } == ["succeeded", "succeeded"])
        _ = refundID
    }

    @Test(
        "a notification before the API's answer: the authorization it reports is recorded once, the answer agrees",
        arguments: apis)
    func beforeTheAnswer(_ api: ProcessorStandIn.API) throws {
        let p = try ProcessorHarness(api, timeout: 10)
        try p.standIn.script("authorize", [["fail": "timeout", "seconds": 3]])
        let paying = Thread.detachNewResult { try p.pay(capture: "manual") }
        // The processor made the payment and queued its notification while its answer is held back.
        var queued: [[String: Any]] = []
        for _ in 0..<100 where queued.isEmpty {
            queued = try p.standIn.queued()
            if queued.isEmpty { Thread.sleep(forTimeInterval: 0.05) }
        }
        try #require(!queued.isEmpty, "the stand-in queued no notification")
        let delivered = try p.standIn.deliver()
        #expect(delivered.first?.status == 200)
        let answer = try paying.value()
        #expect(answer.status == 200 && answer.json["status"] as? String == "authorized", "\(answer.text)")
        let id = try #require(answer.json["id"] as? String)
        #expect(try p.events(id) == ["payment.succeeded"])
        #expect(try p.authorizations(id) == 1)
    }

    @Test("a notification about a payment Orchard does not know is recorded and acknowledged", arguments: apis)
    func unknownPayment(_ api: ProcessorStandIn.API) throws {
        let p = try ProcessorHarness(api)
        let answers: [(status: Int, body: String)]
        switch api {
        case .adyen:
            answers = try p.standIn.notify([
                "items": [
                    [
                        "pspReference": "ZZZZ000000000001", "merchantAccountCode": "OrchardShopECOM",
                        "merchantReference": "order-from-elsewhere", "amount": ["currency": "EUR", "value": 500],
                        "eventCode": "AUTHORISATION", "success": "true", "reason": "",
                    ],
                    [
                        "pspReference": "ZZZZ000000000002", "merchantAccountCode": "OrchardShopECOM",
                        "merchantReference": "report", "amount": ["currency": "EUR", "value": 0],
                        "eventCode": "REPORT_AVAILABLE", "success": "true", "reason": "https://example/report.csv",
                    ],
                ]
            ])
        case .checkoutCom:
            answers = try p.standIn.notify([
                "events": [
                    [
                        "id": "evt_unknown1", "type": "payment_approved",
                        "data": ["id": "pay_notours", "reference": "x", "amount": 500, "currency": "EUR"],
                    ],
                    ["id": "evt_dispute1", "type": "dispute_won", "data": ["id": "dsp_1"]],
                ]
            ])
        }
        #expect(answers.count == 2 && answers.allSatisfy { $0.status == 200 }, "\(answers)")
        let recorded = try p.h.runtime.gateway.processorNotifications(merchantID: p.h.merchant.id)
        #expect(Set(recorded.map(\.outcome)) == ["unknown_payment", "recorded"])
        #expect(try p.h.runtime.gateway.webhooks.events(merchant: p.h.merchant, limit: 10).isEmpty)
    }

    @Test("the routes: an unknown merchant is 404; a merchant without that processor is 409")
    func routes() throws {
        let p = try ProcessorHarness(.adyen)
        let body = #"{"live":"false","notificationItems":[]}"#
        let unknown = try CurlClient().call(
            "POST", p.h.base, "/v1/processors/adyen/notifications/mch_nobody",
            headers: ["Content-Type": "application/json"],
            json: nil, body: Data(body.utf8))
        #expect(unknown.status == 404)
        let checkout = try CurlClient().call(
            "POST", p.h.base, "/v1/processors/checkout-com/webhooks/\(p.h.merchant.id)",
            headers: ["Content-Type": "application/json", "Cko-Signature": "00"], json: nil,
            body: Data(#"{"id":"evt_1","type":"payment_approved","data":{}}"#.utf8))
        #expect(checkout.status == 409 && checkout.errorCode == "processor_not_configured")
        let unauthenticated = try CurlClient().call(
            "POST", p.h.base, "/v1/processors/adyen/notifications/\(p.h.merchant.id)",
            headers: ["Content-Type": "application/json"], json: nil, body: Data(body.utf8))
        #expect(unauthenticated.status == 401 && unauthenticated.errorCode == "processor_signature_invalid")
    }
}

extension Thread {
    /// Runs `body` on a new thread; ``Pending/value()`` waits for its result.
    static func detachNewResult<T>(_ body: @escaping @Sendable () throws -> T) -> Pending<T> {
        let pending = Pending<T>()
        Thread.detachNewThread { pending.finish(Result { try body() }) }
        return pending
    }

    /// A result another thread delivers.
    final class Pending<T>: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var result: Result<T, any Error>?

        func finish(_ result: Result<T, any Error>) {
            self.result = result
            done.signal()
        }

        func value() throws -> T {
            done.wait()
            return try result!.get()
        }
    }
}
