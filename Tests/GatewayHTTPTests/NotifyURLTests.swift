import Foundation
import Testing

@Suite("Session notify_url over HTTP")
struct NotifyURLTests {
    @Test(
        "notify_url follows the webhook endpoint's rules: https, or http only to the loopback in the sandbox",
        arguments: [
            ("http://shop.example.com/notify", false), ("http://10.0.0.8/notify", false),
            ("ftp://shop.example.com/notify", false), ("https:///notify", false),
            ("https://shop.example.com/notify", true), ("http://127.0.0.1:9/notify", true),
        ])
    func notifyURLRules(url: String, accepted: Bool) throws {
        let h = try APIHarness()
        let created = try h.merchantServer(
            "POST", "/v1/sessions",
            json: [
                "out_trade_no": "N-1", "amount": "250", "currency": "TWD", "country": "TW", "subject": "tea",
                "user_id": "u1", "notify_url": url,
            ])
        if accepted {
            #expect(created.status == 200, "\(created.text)")
        } else {
            #expect(created.status == 400, "\(created.text)")
            let error = created.json["error"] as? [String: Any]
            #expect(error?["code"] as? String == "parameter_invalid")
            #expect(error?["param"] as? String == "notify_url")
        }
    }
}
