import Foundation
import GatewayTestSupport
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

@Suite("String bounds over HTTP")
struct StringBoundTests {
    /// One grapheme cluster of `marks + 1` Unicode scalars: a letter with `marks` combining acute accents.
    static func cluster(marks: Int) -> String { "e" + String(repeating: "\u{301}", count: marks) }

    @Test("details, order_number and metadata are bounded in Unicode scalars, not grapheme clusters")
    func combiningMarks() throws {
        let h = try APIHarness()
        let long = Self.cluster(marks: 400)
        #expect(long.count == 1)
        let cases: [(String, [String: Any], String)] = [
            ("details", ["details": long], "string_too_long"),
            ("order_number", ["order_number": long], "string_too_long"),
            ("metadata", ["metadata": ["note": long + long]], "parameter_invalid"),
        ]
        for (param, fields, code) in cases {
            var json: [String: Any] = ["prime": try h.prime("100"), "amount": "100", "currency": "TWD"]
            json.merge(fields) { $1 }
            let refused = try h.merchantServer("POST", "/v1/payments", json: json)
            #expect(refused.status == 400, "\(param): \(refused.text)")
            let error = refused.json["error"] as? [String: Any]
            #expect(error?["code"] as? String == code, "\(param)")
            #expect(error?["param"] as? String == param)
        }
        let accepted = try h.merchantServer(
            "POST", "/v1/payments",
            json: [
                "prime": try h.prime("100"), "amount": "100", "currency": "TWD", "details": "茶葉禮盒 🍵",
                "order_number": Self.cluster(marks: 10),
            ])
        #expect(accepted.status == 200, "\(accepted.text)")
    }
}
