import Foundation
import GatewayTestSupport
import Testing

/// Control characters and bidirectional overrides in the API's text fields: refused the same clean way on both
/// stores (`400 parameter_invalid` with the field), never stored, and refused again the same way on a retry.
@Suite("Control characters in text fields over HTTP")
struct ControlCharacterTests {
    /// What a field may not hold, by name: NUL, another C0 control, DEL, a bidi override and a bidi isolate.
    static let refused: [(String, String)] = [
        ("NUL", "\u{0}"), ("BEL", "\u{7}"), ("ESC", "\u{1B}"), ("DEL", "\u{7F}"), ("RLO", "\u{202E}"),
        ("LRE", "\u{202A}"), ("RLI", "\u{2067}"), ("PDI", "\u{2069}"),
    ]

    static func expectRefused(
        _ response: ClientResponse, param: String, _ note: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(response.status == 400, "\(note): \(response.text)", sourceLocation: sourceLocation)
        let error = response.json["error"] as? [String: Any]
        #expect(error?["code"] as? String == "parameter_invalid", "\(note)", sourceLocation: sourceLocation)
        #expect(error?["param"] as? String == param, "\(note): \(response.text)", sourceLocation: sourceLocation)
    }

    @Test("payment text fields refuse C0 controls, DEL and bidi overrides; line breaks only where text may have lines",
        arguments: APIDatabase.allCases)
    func paymentFields(_ database: APIDatabase) throws {
        let h = try APIHarness(database: database)
        let prime = try h.prime("100")
        let base: [String: Any] = ["prime": prime, "amount": "100", "currency": "TWD"]
        for (name, character) in Self.refused {
            let fields: [(String, [String: Any])] = [
                ("order_number", ["order_number": "A\(character)1"]),
                ("details", ["details": "tea\(character)"]),
                ("cardholder.name", ["cardholder": ["name": "Chen\(character)"]]),
                ("cardholder.address", ["cardholder": ["address": "No. 1\(character)"]]),
                ("cardholder.phone_number", ["cardholder": ["phone_number": "+886\(character)"]]),
                ("metadata", ["metadata": ["note": "x\(character)"]]),
                ("metadata", ["metadata": ["k\(character)": "x"]]),
            ]
            for (param, extra) in fields {
                let refused = try h.merchantServer("POST", "/v1/payments", json: base.merging(extra) { $1 })
                Self.expectRefused(refused, param: param, "\(name) in \(param)")
            }
        }
        // A tab in a one-line field is refused; a line break where the text may have lines is kept.
        Self.expectRefused(
            try h.merchantServer("POST", "/v1/payments", json: base.merging(["order_number": "A\t1"]) { $1 }),
            param: "order_number", "tab in order_number")
        let kept = try h.merchantServer(
            "POST", "/v1/payments",
            json: base.merging([
                "details": "green tea\r\nx 2\tboxes", "cardholder": ["address": "No. 1\nTaipei"],
                "metadata": ["note": "line 1\nline 2"], "order_number": "A-1 (台北)",
            ]) { $1 })
        #expect(kept.status == 200, "\(kept.text)")
        #expect(kept.json["details"] as? String == "green tea\r\nx 2\tboxes")
        let payment = try #require(kept.json["id"] as? String)
        // Refund reasons.
        for (name, character) in Self.refused {
            let refused = try h.merchantServer(
                "POST", "/v1/payments/\(payment)/refunds", json: ["amount": "1", "reason": "damaged\(character)"])
            Self.expectRefused(refused, param: "reason", "\(name) in reason")
        }
        let refunded = try h.merchantServer(
            "POST", "/v1/payments/\(payment)/refunds", json: ["amount": "1", "reason": "box 1:\ndamaged"])
        #expect(refunded.status == 200, "\(refunded.text)")
        // A listing filter with a NUL is refused too (it never reaches the database).
        Self.expectRefused(
            try h.merchantServer("GET", "/v1/payments?order_number=A%001"), param: "order_number", "listing filter")
    }

    @Test("a refused NUL is refused again the same way on a retry with the same Idempotency-Key",
        arguments: APIDatabase.allCases)
    func retryFailsTheSameWay(_ database: APIDatabase) throws {
        let h = try APIHarness(database: database)
        let json: [String: Any] = [
            "prime": try h.prime("100"), "amount": "100", "currency": "TWD", "order_number": "order\u{0}1",
        ]
        for attempt in 1...3 {
            let refused = try h.merchantServer("POST", "/v1/payments", json: json, headers: ["Idempotency-Key": "nul-1"])
            Self.expectRefused(refused, param: "order_number", "attempt \(attempt)")
        }
        // The prime was not used up: the corrected request pays with it.
        var fixed = json
        fixed["order_number"] = "order-1"
        let paid = try h.merchantServer("POST", "/v1/payments", json: fixed, headers: ["Idempotency-Key": "nul-2"])
        #expect(paid.status == 200, "\(paid.text)")
    }

    @Test("session subject and user_id refuse control characters and bidi overrides", arguments: APIDatabase.allCases)
    func sessionFields(_ database: APIDatabase) throws {
        let h = try APIHarness(database: database)
        let base: [String: Any] = [
            "out_trade_no": "T-1", "amount": "250", "currency": "TWD", "country": "TW", "subject": "Tea",
            "user_id": "u-1",
        ]
        for (name, character) in Self.refused {
            for param in ["subject", "user_id", "out_trade_no"] {
                let refused = try h.merchantServer(
                    "POST", "/v1/sessions", json: base.merging([param: "a\(character)b"]) { $1 },
                    headers: ["Idempotency-Key": "s-\(name)-\(param)"])
                Self.expectRefused(refused, param: param, "\(name) in \(param)")
                let again = try h.merchantServer(
                    "POST", "/v1/sessions", json: base.merging([param: "a\(character)b"]) { $1 },
                    headers: ["Idempotency-Key": "s-\(name)-\(param)"])
                Self.expectRefused(again, param: param, "\(name) in \(param), again")
            }
        }
        // Both are one line: no tab or line break either.
        Self.expectRefused(
            try h.merchantServer("POST", "/v1/sessions", json: base.merging(["user_id": "u\t1"]) { $1 }),
            param: "user_id", "tab in user_id")
        Self.expectRefused(
            try h.merchantServer("POST", "/v1/sessions", json: base.merging(["subject": "Green tea\nx 2"]) { $1 }),
            param: "subject", "line break in subject")
        let created = try h.merchantServer(
            "POST", "/v1/sessions", json: base.merging(["subject": "Green tea × 2 (綠茶)"]) { $1 })
        #expect(created.status == 200, "\(created.text)")
    }

    @Test("ids, filters, URLs and uploaded tables with a NUL are refused cleanly, never a database error",
        arguments: APIDatabase.allCases)
    func otherFields(_ database: APIDatabase) throws {
        let h = try APIHarness(database: database)
        // A path id with a control character names nothing.
        for path in ["/v1/payments/pay_%00x", "/v1/payments/pay_%0Ax/refunds", "/v1/sessions/ot_%00"] {
            let response =
                path.hasSuffix("refunds")
                ? try h.merchantServer("POST", path, json: ["amount": "1"])
                : path.hasPrefix("/v1/sessions") ? try h.client("GET", path) : try h.merchantServer("GET", path)
            #expect(response.status == 404, "\(path): \(response.text)")
            #expect(response.errorCode == "not_found", "\(path)")
        }
        Self.expectRefused(
            try h.merchantServer("GET", "/v1/events?object_id=pay%00x"), param: "object_id", "events filter")
        Self.expectRefused(
            try h.merchantServer("GET", "/v1/payments?out_trade_no=T%E2%80%AE1"), param: "out_trade_no", "RLO filter")
        let webhook = try h.merchantServer("PUT", "/v1/webhook-endpoint", json: ["url": "https://hooks.example/a\u{0}b"])
        #expect(webhook.status == 400 && webhook.error["param"] as? String == "url", "\(webhook.text)")
        let table = try h.call(
            "PUT", "/v1/bin-table", headers: h.serverHeaders.merging(["Content-Type": "text/csv"]) { $1 },
            body: Data(
                "bin_prefix,issuer,bank_id,funding,level,country,country_code\n411111,Bank\u{0}One,1,credit,,,TW\n".utf8))
        #expect(table.status == 422, "\(table.text)")
        #expect(table.errorCode == "bin_table_invalid")
        #expect(table.text.contains("U+0000"), "\(table.text)")
        let notify = try h.merchantServer(
            "POST", "/v1/sessions",
            json: [
                "out_trade_no": "T-9", "amount": "250", "currency": "TWD", "country": "TW", "subject": "Tea",
                "user_id": "u-1", "notify_url": "https://shop.example/n\u{7F}",
            ])
        Self.expectRefused(notify, param: "notify_url", "DEL in notify_url")
    }
}
