import Foundation
import Gateway
import GatewayHTTP
import GatewayTestSupport
import Testing

/// The API the console's pages read, called with the session cookie: the last-four filter, the events about
/// a payment and an event's attempts, each answer checked against openapi.yaml.
@Suite("Console API")
struct ConsoleAPITests {
    @Test("last_four, object_id and /v1/events/{id}/attempts answer as documented, with the cookie or the key")
    func routes() throws {
        let h = try APIHarness(transport: .loopback)  // the sign-in records the socket's address
        let paid = try h.pay("100.00")
        let id = try #require(paid.json["id"] as? String)
        _ = try h.pay("50.00")
        let (cookie, csrf, _) = try h.signInToConsole()
        let session = ["Cookie": cookie]
        let byCard = try h.call("GET", "/v1/payments?last_four=0492", headers: session)
        #expect((byCard.json["data"] as? [[String: Any]])?.count == 2)
        #expect(
            ((try h.call("GET", "/v1/payments?last_four=1111", headers: session)).json["data"] as? [Any])?.isEmpty
                == true)
        for bad in ["12", "12345", "abcd"] {
            let refused = try h.call("GET", "/v1/payments?last_four=\(bad)", headers: session)
            #expect(refused.status == 400 && refused.error["param"] as? String == "last_four")
        }
        let refund = try h.call(
            "POST", "/v1/payments/\(id)/refunds",
            headers: session.merging(["X-CSRF-Token": csrf, "Idempotency-Key": "r"]) { $1 },
            json: ["amount": "10.00"])
        #expect(refund.status == 200)
        let events = try h.call("GET", "/v1/events?object_id=\(id)", headers: session)
        let types = (events.json["data"] as? [[String: Any]])?.compactMap { $0["type"] as? String }
        #expect(types?.sorted() == ["payment.captured", "payment.refunded", "payment.succeeded"])
        #expect(try h.call("GET", "/v1/events?object_id=", headers: session).status == 400)
        let eventID = try #require((events.json["data"] as? [[String: Any]])?.first?["id"] as? String)
        let attempts = try h.call("GET", "/v1/events/\(eventID)/attempts", headers: session)
        #expect(attempts.status == 200 && (attempts.json["data"] as? [Any])?.isEmpty == true)
        let viaKey = try h.merchantServer("GET", "/v1/events/\(eventID)/attempts")
        #expect(viaKey.status == 200)
        let missing = try h.merchantServer("GET", "/v1/events/evt_nope/attempts")
        #expect(missing.status == 404 && missing.errorCode == "not_found")
        // A redelivery made with the cookie and the CSRF token.
        _ = try h.runtime.gateway.merchants.setWebhookEndpoint(merchantID: h.merchant.id, url: "http://127.0.0.1:9/h")
        let redelivered = try h.call(
            "POST", "/v1/events/\(eventID)/redeliver",
            headers: session.merging(["X-CSRF-Token": csrf, "Idempotency-Key": "rd"]) { $1 })
        #expect(redelivered.status == 200)

        // The console's changes are in the audit log under its session, the sign-in with the client's address.
        let log = try h.merchantServer("GET", "/v1/audit-log?limit=100").json["data"] as? [[String: Any]] ?? []
        let refundEntry = try #require(log.first { $0["action"] as? String == "payment.refund" })
        let actor = try #require(refundEntry["actor"] as? [String: String])
        #expect(actor["kind"] == "console" && actor["name"]?.hasPrefix("cs_") == true)
        let signIn = try #require(log.first { $0["action"] as? String == "console.sign_in" })
        #expect((signIn["actor"] as? [String: String]) == actor)
        #expect((signIn["detail"] as? [String: String])?["client_address"] == "127.0.0.1")
        #expect(!log.description.contains(cookie.dropFirst(16)) && !log.description.contains(csrf))

        let checker = try OpenAPIChecker.load()
        for exchange in h.exchanges.withLock({ $0 }) { checker.check(exchange) }
    }
}
