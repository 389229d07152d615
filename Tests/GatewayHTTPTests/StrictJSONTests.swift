import Foundation
import GatewayHTTP
import GatewayTestSupport
import OrchardHTTP
import OrchardJSON
import Testing

@Suite("Strict JSON request bodies")
struct StrictJSONTests {
    static func error(_ response: ClientResponse) -> [String: Any] { response.json["error"] as? [String: Any] ?? [:] }

    @Test("the parse keeps JSON's own types: integers, doubles, booleans, null")
    func types() throws {
        let body = try JSONLimits().parse(
            Data(#"{"i": 1, "z": 0, "d": 2.5, "t": true, "f": false, "n": null, "a": [1]}"#.utf8))
        let object = try #require(body.json.foundationValue as? [String: Any])
        #expect(type(of: object["i"]!) == Int64.self)
        #expect(type(of: object["z"]!) == Int64.self)
        #expect(type(of: object["d"]!) == Double.self)
        #expect(type(of: object["t"]!) == Bool.self)
        #expect(type(of: object["f"]!) == Bool.self)
        #expect(object["n"] is NSNull)
        #expect((object["a"] as? [Any])?.count == 1)
    }

    @Test(
        "a duplicate key anywhere, or a number out of range, is invalid_json saying so",
        arguments: [
            (#"{"a": 1, "a": 2}"#, "duplicate key"),
            (#"{"x": {"b": true, "b": false}}"#, "duplicate key"),
            (#"[{"k": 1, "k": 1}]"#, "duplicate key"),
            (#"{"n": 1e400}"#, "out of range"),
            (#"{"n": -1e400}"#, "out of range"),
            ("{\"n\": \(String(repeating: "9", count: 310))}", "out of range"),
            (#"{"s": "\ud800"}"#, "surrogate"),
        ])
    func refusals(body: String, message: String) throws {
        #expect {
            _ = try JSONLimits().parse(Data(body.utf8))
        } throws: { error in
            guard let error = error as? HTTPAPIError else { return false }
            return error.code == .invalidJSON && error.message.contains(message)
        }
    }

    @Test("escapes and surrogate pairs decode; a big integer that fits a double stays a number")
    func decoding() throws {
        let body = try JSONLimits().parse(
            Data(#"{"s": "a\"\\\/\n\u00e9\ud83c\udf75", "big": 123456789012345678901234}"#.utf8))
        let object = try #require(body.json.foundationValue as? [String: Any])
        #expect(object["s"] as? String == "a\"\\/\né🍵")
        #expect(type(of: object["big"]!) == Double.self)
    }

    @Test("0 and 1 are not booleans: enabled and deferred must be true or false")
    func numbersAreNotBooleans() throws {
        let h = try APIHarness()
        for value in ["0", "1"] {
            let webhook = try h.call(
                "PUT", "/v1/webhook-endpoint",
                headers: h.serverHeaders.merging(["Content-Type": "application/json"]) { $1 },
                body: Data(#"{"url": "https://shop.example.com/hooks", "enabled": \#(value)}"#.utf8))
            #expect(webhook.status == 400, "\(webhook.text)")
            #expect(Self.error(webhook)["code"] as? String == "parameter_invalid")
            #expect(Self.error(webhook)["param"] as? String == "enabled")

            let prime = try h.prime("100")
            let pay = try h.call(
                "POST", "/v1/payments",
                headers: h.serverHeaders.merging(["Content-Type": "application/json"]) { $1 },
                body: Data(#"{"prime": "\#(prime)", "amount": "100", "currency": "TWD", "deferred": \#(value)}"#.utf8))
            #expect(pay.status == 400, "\(pay.text)")
            #expect(Self.error(pay)["code"] as? String == "parameter_invalid")
            #expect(Self.error(pay)["param"] as? String == "deferred")
        }
        let endpoint = try h.merchantServer("GET", "/v1/webhook-endpoint")
        #expect(
            endpoint.json["url"] is NSNull || endpoint.json["url"] == nil, "nothing was configured: \(endpoint.text)")
    }

    @Test("a repeated amount is refused as invalid_json, and the prime stays unused")
    func duplicateAmount() throws {
        let h = try APIHarness()
        let prime = try h.prime("1.00")
        let refused = try h.call(
            "POST", "/v1/payments",
            headers: h.serverHeaders.merging(["Content-Type": "application/json"]) { $1 },
            body: Data(#"{"prime": "\#(prime)", "amount": "1.00", "amount": "100.00", "currency": "TWD"}"#.utf8))
        #expect(refused.status == 400, "\(refused.text)")
        #expect(Self.error(refused)["code"] as? String == "invalid_json")
        #expect((Self.error(refused)["message"] as? String)?.contains("duplicate key") == true)
        let paid = try h.merchantServer(
            "POST", "/v1/payments", json: ["prime": prime, "amount": "1.00", "currency": "TWD"])
        #expect(paid.status == 200, "\(paid.text)")
        #expect(paid.json["amount"] as? String == "1.00")
    }

    @Test("a number out of range in a body names the problem")
    func numberOutOfRange() throws {
        let h = try APIHarness()
        for number in ["1e400", String(repeating: "7", count: 310)] {
            let refused = try h.call(
                "POST", "/v1/sessions",
                headers: h.serverHeaders.merging(["Content-Type": "application/json"]) { $1 },
                body: Data(
                    #"{"out_trade_no": "T-1", "amount": "1", "currency": "TWD", "expires_in_seconds": \#(number)}"#.utf8
                ))
            #expect(refused.status == 400, "\(refused.text)")
            #expect(Self.error(refused)["code"] as? String == "invalid_json")
            #expect(
                (Self.error(refused)["message"] as? String)?.contains("number out of range") == true, "\(refused.text)")
        }
    }

    @Test("a whole number 1 is a number, not a boolean: delay_days 1 is accepted")
    func integerOne() throws {
        let h = try APIHarness()
        let paid = try h.pay("100", capture: ["mode": "delay", "delay_days": 1])
        #expect(paid.status == 200, "\(paid.text)")
    }
}

@Suite("Request bodies as the spec types them")
struct SpecTypedBodyTests {
    static func error(_ response: ClientResponse) -> [String: Any] { response.json["error"] as? [String: Any] ?? [:] }

    @Test("null where the spec says a string or an object is refused, naming the field; leaving it out is the default")
    func nullIsNotAbsent() throws {
        let h = try APIHarness()
        let validate = try h.client(
            "POST", "/v1/payment-requests/validate",
            json: [
                "payment_request": ["total": ["label": "Tea", "amount": ["currency": "TWD", "value": "100"]]],
                "format": "tappay-web", "country_code": NSNull(),
            ])
        #expect(validate.status == 400, "\(validate.text)")
        #expect(Self.error(validate)["code"] as? String == "parameter_invalid")
        #expect(Self.error(validate)["param"] as? String == "country_code")
        let wallet = try h.client(
            "POST", "/v1/sandbox/wallet/tokens", json: ["amount": "100", "currency": "TWD", "card": NSNull()])
        #expect(wallet.status == 400, "\(wallet.text)")
        #expect(Self.error(wallet)["param"] as? String == "card")
        #expect(try h.client("POST", "/v1/sandbox/wallet/tokens", json: ["amount": "100", "currency": "TWD"]).status == 200)
        let prime = try h.prime("100")
        for (field, value) in [("order_number", NSNull()), ("cardholder", NSNull()), ("metadata", NSNull())] as [(String, Any)] {
            let payment = try h.merchantServer(
                "POST", "/v1/payments", json: ["prime": prime, "amount": "100", "currency": "TWD", field: value])
            #expect(payment.status == 400, "\(field): \(payment.text)")
            #expect(Self.error(payment)["param"] as? String == field)
        }
        let paid = try h.merchantServer("POST", "/v1/payments", json: ["prime": prime, "amount": "100", "currency": "TWD"])
        #expect(paid.status == 200, "\(paid.text)")
    }

    @Test("the console's secret_key is bounded in characters, as the spec counts maxLength")
    func secretKeyInCharacters() throws {
        let h = try APIHarness()
        // 60 characters of two bytes each: within the spec's 100 characters, so it is a wrong key, not a bad field.
        let wide = try h.call("POST", "/console/session", json: ["secret_key": String(repeating: "é", count: 60)])
        #expect(wide.status == 401, "\(wide.text)")
        #expect(Self.error(wide)["code"] as? String == "invalid_credentials")
        let long = try h.call("POST", "/console/session", json: ["secret_key": String(repeating: "é", count: 101)])
        #expect(long.status == 400, "\(long.text)")
        #expect(Self.error(long)["param"] as? String == "secret_key")
    }
}
