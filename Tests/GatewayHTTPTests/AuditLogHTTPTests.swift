import Foundation
import Gateway
import GatewayHTTP
import GatewayTestSupport
import Testing

@Suite("GET /v1/audit-log over loopback HTTP", .serialized)
struct AuditLogHTTPTests {
    @Test("changes made with the secret key are listed under its public part, newest first, without secrets")
    func listsAPIChanges() throws {
        let h = try APIHarness()
        h.clock.advance(by: 1)
        let put = try h.merchantServer(
            "PUT", "/v1/webhook-endpoint", json: ["url": "https://hooks.example/orchard?token=merchant-own"])
        #expect(put.status == 200)
        let secret = try #require(put.json["secret"] as? String)
        let paid = try h.pay("100.00")
        let paymentID = try #require(paid.json["id"] as? String)
        h.clock.advance(by: 1)
        let refunded = try h.merchantServer("POST", "/v1/payments/\(paymentID)/refunds", json: ["amount": "10.00"])
        #expect(refunded.status == 200)

        let response = try h.merchantServer("GET", "/v1/audit-log?limit=100")
        #expect(response.status == 200)
        #expect(response.json["object"] as? String == "list")
        #expect(response.json["has_more"] as? Bool == false)
        #expect(response.json["next_cursor"] is NSNull)
        let data = try #require(response.json["data"] as? [[String: Any]])
        let actions = data.compactMap { $0["action"] as? String }
        #expect(actions.first == "payment.refund", "\(actions)")
        #expect(
            Set(actions.dropFirst().prefix(2)) == ["webhook_endpoint.update", "webhook_secret.rotate"], "\(actions)")
        let refund = try #require(data.first)
        #expect(refund["target"] as? String == paymentID)
        #expect((refund["id"] as? String)?.hasPrefix("aud_") == true)
        let actor = try #require(refund["actor"] as? [String: Any])
        #expect(actor["kind"] as? String == "api")
        #expect(actor["name"] as? String == String(h.credentials.secretKey.prefix(20)))
        let detail = try #require(refund["detail"] as? [String: Any])
        #expect(detail["amount"] as? String == "10.00")
        #expect(detail["currency"] as? String == "TWD")
        let endpoint = try #require(data.first { $0["action"] as? String == "webhook_endpoint.update" })
        #expect((endpoint["detail"] as? [String: Any])?["host"] as? String == "hooks.example")
        for needle in [h.credentials.secretKey, h.credentials.appKey, secret, "merchant-own"] {
            #expect(!response.text.contains(needle), "the audit log shows a secret")
        }
    }

    @Test("cursor paging with starting_after; a foreign cursor is 400 invalid_cursor; app keys are refused")
    func paging() throws {
        let h = try APIHarness()
        for index in 0..<5 {
            h.clock.advance(by: 1)
            #expect(
                try h.merchantServer("PUT", "/v1/apple-pay/domains", json: ["domains": ["shop\(index).example"]])
                    .status == 200)
        }
        var ids: [String] = []
        var cursor: String?
        for _ in 0..<10 {
            let path = "/v1/audit-log?limit=2" + (cursor.map { "&starting_after=\($0)" } ?? "")
            let page = try h.merchantServer("GET", path)
            #expect(page.status == 200)
            ids += (page.json["data"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect((page.json["has_more"] as? Bool) == !(page.json["next_cursor"] is NSNull))
            cursor = page.json["next_cursor"] as? String
            if cursor == nil { break }
        }
        let all = try h.merchantServer("GET", "/v1/audit-log?limit=100")
        let expected = (all.json["data"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(ids == expected)
        #expect(expected.count >= 5)
        let foreign = try h.merchantServer("GET", "/v1/audit-log?starting_after=cur_x")
        #expect(foreign.status == 400)
        #expect((foreign.json["error"] as? [String: Any])?["code"] as? String == "invalid_cursor")
        #expect(try h.merchantServer("GET", "/v1/audit-log?limit=0").status == 400)
        #expect(try h.client("GET", "/v1/audit-log").status == 403)
        #expect(try h.call("GET", "/v1/audit-log").status == 401)
        // A webhook host longer than an audit value still changes the endpoint (its entry holds the host cut).
        let host = (0..<20).map { _ in String(repeating: "a", count: 60) }.joined(separator: ".")
        #expect(try h.merchantServer("PUT", "/v1/webhook-endpoint", json: ["url": "https://\(host)/x"]).status == 200)
        let newest = try h.merchantServer("GET", "/v1/audit-log?limit=5").json["data"] as? [[String: Any]] ?? []
        let update = try #require(newest.first { $0["action"] as? String == "webhook_endpoint.update" })
        #expect((update["detail"] as? [String: String])?["host"] == String(host.prefix(AuditLog.maximumFieldLength)))
    }
}
