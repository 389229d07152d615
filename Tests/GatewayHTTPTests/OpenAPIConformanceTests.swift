import ApplePayModel
import Foundation
import Gateway
import GatewayAssembly
import GatewayHTTP
import GatewayTestSupport
import OrchardHTTP
import Testing

/// Walks every endpoint over loopback HTTP (successes and the errors each documents) and checks every JSON
/// answer against `openapi.yaml`: the status is documented for the operation, and the body has the schema's
/// required fields with the right types and no fields the schema does not name.
@Suite("Answers conform to openapi.yaml", .serialized)
struct OpenAPIConformanceTests {
    @Test("the YAML subset parser reads the document's schemas and responses")
    func parser() throws {
        let checker = try OpenAPIChecker.load()
        let payment = try #require(checker.resolve("#/components/schemas/Payment"))
        #expect(payment["required"]?.strings.contains("transitions") == true)
        #expect(payment["properties"]?["order_number"]?["type"]?.strings == ["string", "null"])
        #expect(checker.template(for: "/v1/payments/pay_1/refunds") == "/v1/payments/{id}/refunds")
        #expect(
            checker.responseSchema(method: "POST", path: "/v1/payments", status: 402)?["$ref"]?.string
                == "#/components/schemas/Error")
        #expect(checker.problems(["id": "x"], payment).contains { $0.contains("required status is missing") })
        let refund = try #require(checker.resolve("#/components/schemas/Refund"))
        let good: [String: Any] = [
            "id": "re_1", "payment_id": "pay_1", "amount": "1.00", "currency": "TWD", "status": "succeeded",
            "reason": NSNull(), "created_at": "2027-01-15T08:00:00Z",
        ]
        #expect(checker.problems(good, refund) == [])
        #expect(
            checker.problems(good.merging(["refund_id": "x"]) { $1 }, refund) == ["$: refund_id is not in the schema"])
        #expect(checker.problems(good.merging(["amount": 100]) { $1 }, refund).count == 1)
        #expect(checker.problems(good.merging(["status": "done"]) { $1 }, refund).count == 1)
        #expect(
            checker.problems(
                ["error": ["type": "api_error"]], try #require(checker.resolve("#/components/schemas/Error"))
            ).count >= 4)
    }

    @Test("every answer of the end-to-end flows matches its documented status and schema")
    func flows() throws {
        let h = try APIHarness(transport: .loopback)
        // Prime flow.
        _ = try h.client("POST", "/v1/tokens", json: ["token": try h.token("100.00")])
        let captured = try h.pay("100.00")
        let paymentID = try #require(captured.json["id"] as? String)
        _ = try h.merchantServer("GET", "/v1/payments/\(paymentID)")
        _ = try h.merchantServer("GET", "/v1/payments?limit=2&currency=TWD&status=captured")
        _ = try h.merchantServer("POST", "/v1/payments/\(paymentID)/refunds", json: ["amount": "10.00", "reason": "x"])
        _ = try h.merchantServer("POST", "/v1/payments/\(paymentID)/refunds", json: ["amount": "1000.00"])
        _ = try h.merchantServer("POST", "/v1/payments/\(paymentID)/capture", json: [:])
        let manual = try h.pay("30.00", capture: ["mode": "manual"])
        let manualID = try #require(manual.json["id"] as? String)
        _ = try h.merchantServer("POST", "/v1/payments/\(manualID)/capture", json: ["amount": "20.00"])
        let toVoid = try h.pay("40.00", capture: ["mode": "delay", "delay_days": 3])
        let voidID = try #require(toVoid.json["id"] as? String)
        _ = try h.merchantServer("GET", "/v1/payments/\(voidID)")
        _ = try h.merchantServer("POST", "/v1/payments/\(voidID)/void")
        _ = try h.pay("100.05")  // declined: 402
        let prime = try h.prime("12.00")
        _ = try h.merchantServer("POST", "/v1/payments", json: ["prime": prime, "amount": "12.00", "currency": "TWD"])
        _ = try h.merchantServer("POST", "/v1/payments", json: ["prime": prime, "amount": "12.00", "currency": "TWD"])
        _ = try h.merchantServer(
            "POST", "/v1/payments", json: ["prime": "prm_nope", "amount": "12.00", "currency": "TWD"])
        _ = try h.merchantServer("GET", "/v1/payments/pay_nope")
        // Session flow.
        let session = try h.merchantServer(
            "POST", "/v1/sessions",
            json: [
                "out_trade_no": "C-1", "amount": "250", "currency": "TWD", "country": "TW", "subject": "tea",
                "user_id": "u1",
            ])
        let orderToken = try #require(session.json["order_token"] as? String, "\(session.text)")
        _ = try h.client("GET", "/v1/sessions/\(orderToken)")
        _ = try h.client("POST", "/v1/sessions/\(orderToken)/pay", json: ["token": try h.token("250")])
        _ = try h.client("POST", "/v1/sessions/\(orderToken)/pay", json: ["token": try h.token("250")])
        _ = try h.client("GET", "/v1/sessions/ot_nope")
        // Events and webhooks.
        _ = try h.merchantServer("PUT", "/v1/webhook-endpoint", json: ["url": "http://127.0.0.1:9/hooks"])
        _ = try h.merchantServer("GET", "/v1/webhook-endpoint")
        let events = try h.merchantServer("GET", "/v1/events?limit=100")
        let eventID = try #require((events.json["data"] as? [[String: Any]])?.first?["id"] as? String)
        _ = try h.merchantServer("GET", "/v1/events?type=session.completed")
        _ = try h.merchantServer("POST", "/v1/events/\(eventID)/redeliver")
        _ = try h.merchantServer("POST", "/v1/events/evt_nope/redeliver")
        // Merchant keys and the BIN table.
        let csr = try h.merchantServer("POST", "/v1/merchant-keys/csr", json: ["type": "ec", "purpose": "processing"])
        let keyID = try #require(csr.json["id"] as? String)
        let pki = try SandboxPKIIssuer.pki(serialized: try #require(h.runtime.sandbox).pki)
        let certificate = try pki.issueMerchantCertificate(
            publicKeyPEM: try #require(csr.json["csr_pem"] as? String),
            merchantIdentifier: "merchant.invalid.orchard.sandbox", notBefore: h.clock.now() - 60,
            notAfter: h.clock.now() + 86_400)
        _ = try h.merchantServer(
            "POST", "/v1/merchant-keys/\(keyID)/certificate", json: ["certificate_pem": certificate])
        _ = try h.merchantServer("POST", "/v1/merchant-keys/\(keyID)/certificate", json: ["certificate_pem": "junk"])
        _ = try h.call(
            "PUT", "/v1/bin-table", headers: h.serverHeaders.merging(["Content-Type": "text/csv"]) { $1 },
            body: Data("bin_prefix,issuer,bank_id,funding,level,country,country_code\n411111,B,1,credit,C,T,TW\n".utf8))
        // Errors the transport answers.
        _ = try h.call("POST", "/v1/payments", headers: h.serverHeaders, json: ["prime": 1])
        _ = try h.call(
            "POST", "/v1/payments", headers: h.serverHeaders.merging(["Content-Type": "application/json"]) { $1 },
            body: Data("{".utf8))
        _ = try h.call("POST", "/v1/payments", headers: h.serverHeaders, body: Data("x".utf8))
        _ = try h.call("GET", "/v1/payments")
        _ = try h.call("GET", "/v1/payments", headers: h.appHeaders)
        _ = try h.call("GET", "/v1/payments", headers: ["Authorization": "Bearer sk_test_nope"])
        _ = try h.merchantServer("POST", "/v1/payments", json: ["amount": "1.00"], headers: ["Idempotency-Key": "k1"])
        _ = try h.merchantServer("POST", "/v1/payments", json: ["amount": "2.00"], headers: ["Idempotency-Key": "k1"])
        _ = try h.merchantServer("POST", "/v1/payments/\(voidID)/void", headers: ["Idempotency-Key": "bad key"])
        _ = try h.merchantServer("POST", "/v1/events/\(eventID)/redeliver", headers: ["Idempotency-Key": "bad key"])
        _ = try h.merchantServer(
            "POST", "/v1/merchant-keys/csr", json: ["type": "rsa", "purpose": "processing"],
            headers: ["Idempotency-Key": "csr-key"])
        _ = try h.merchantServer(
            "POST", "/v1/merchant-keys/csr", json: ["type": "ec", "purpose": "processing"],
            headers: ["Idempotency-Key": "csr-key"])
        _ = try h.merchantServer(
            "POST", "/v1/payments", json: ["prime": String(repeating: "p", count: 70_000), "amount": "1.00"])
        // Operations.
        _ = try h.call("GET", "/healthz")
        _ = try h.call("GET", "/readyz")

        let checker = try OpenAPIChecker.load()
        let exchanges = h.exchanges.withLock { $0 }
        #expect(exchanges.count >= 45)
        var statuses: Set<Int> = []
        var checked = 0
        for exchange in exchanges {
            statuses.insert(exchange.response.status)
            if checker.check(exchange) { checked += 1 }
        }
        #expect(checked >= exchanges.count - 2, "JSON answers checked: \(checked) of \(exchanges.count)")
        // The webhook bodies as the outbox stores (and delivers) them: the spec's WebhookPayload.
        let payload = try #require(checker.resolve("#/components/schemas/WebhookPayload"))
        let stored = try h.runtime.gateway.webhooks.events(merchant: h.merchant, limit: 100)
        #expect(
            Set(stored.map(\.type)).isSuperset(of: [
                "payment.succeeded", "payment.failed", "payment.captured",
                "payment.refunded", "payment.voided", "session.completed",
            ]))
        for event in stored {
            let body = try JSONSerialization.jsonObject(with: event.payload)
            #expect(checker.problems(body, payload).isEmpty, "\(event.type): \(checker.problems(body, payload))")
        }
        #expect(statuses.isSuperset(of: [200, 400, 401, 402, 403, 404, 409, 415, 422]), "\(statuses.sorted())")
    }
}
