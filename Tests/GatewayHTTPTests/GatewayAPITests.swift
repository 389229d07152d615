import ApplePayModel
import ApplePaySandbox
import Foundation
import Gateway
import GatewayAssembly
import GatewayHTTP
import GatewayTestSupport
import OrchardBase
import OrchardHTTP
import OrchardTestSupport
import Testing

@Suite("Gateway API with SQLite, in process (over loopback where the server itself is tested)", .serialized)
struct GatewayAPITests {
    @Test("the router mounts exactly the paths and methods of openapi.yaml")
    func routesMatchOpenAPI() throws {
        let harness = try APIHarness()
        let routes = Set(harness.api.makeRouter().routeList.map { "\($0.method.rawValue) \($0.template)" })
        let spec = try openAPIOperations()
        #expect(spec.count == 67)
        #expect(routes.subtracting(spec).isEmpty, "routes not in openapi.yaml: \(routes.subtracting(spec).sorted())")
        #expect(
            spec.subtracting(routes).isEmpty,
            "openapi.yaml operations not mounted: \(spec.subtracting(routes).sorted())")
    }

    @Test("prime flow: tokenize, pay, read, list, partial refund, events, webhook endpoint, redelivery")
    func primeFlow() throws {
        let h = try APIHarness()
        let tokenized = try h.client("POST", "/v1/tokens", json: ["token": try h.token("100.00")])
        #expect(tokenized.status == 200)
        #expect(tokenized.headers["Request-Id"]?.hasPrefix("req_") == true)
        let prime = try #require(tokenized.json["prime"] as? String)
        #expect(prime.hasPrefix("prm_"))
        #expect(tokenized.json["total_amount"] as? String == "100.00")
        #expect(tokenized.json["currency"] as? String == "TWD")
        let card = try #require(tokenized.json["card_info"] as? [String: Any])
        #expect(card["bin_code"] as? String == "476112")
        #expect(card["last_four"] as? String == "0492")
        #expect(card["type"] as? Int == 1)
        #expect(card["issuer"] as? String == "Sandbox Bank")
        let expiry = try #require(tokenized.json["prime_expiry_millis"] as? Int64)
        #expect(expiry == Int64(h.clock.now().timeIntervalSince1970 * 1000) + 90_000)

        let paid = try h.merchantServer(
            "POST", "/v1/payments",
            json: [
                "prime": prime, "amount": "100", "currency": "TWD", "order_number": "ORD-1", "details": "tea",
                "metadata": ["cart_id": "c1"],
            ])
        #expect(paid.status == 200, "\(paid.text)")
        let id = try #require(paid.json["id"] as? String)
        #expect(id.hasPrefix("pay_"))
        #expect(paid.json["status"] as? String == "captured")
        #expect(paid.json["amount"] as? String == "100.00")
        #expect(paid.json["captured_amount"] as? String == "100.00")
        #expect(paid.json["refunded_amount"] as? String == "0.00")
        #expect(paid.json["out_trade_no"] is NSNull)
        #expect(paid.json["decline_code"] is NSNull)
        #expect(paid.json["capture_at"] is NSNull)
        #expect(paid.json["created_at"] as? String == "2027-01-15T08:00:00Z")
        let transitions = try #require(paid.json["transitions"] as? [[String: Any]])
        #expect(transitions.map { $0["cause"] as? String } == ["created", "authorization_approved", "capture"])

        let read = try h.merchantServer("GET", "/v1/payments/\(id)")
        #expect(read.status == 200)
        #expect(read.json["id"] as? String == id)

        h.clock.advance(by: 1)
        let refund = try h.merchantServer(
            "POST", "/v1/payments/\(id)/refunds", json: ["amount": "30.00", "reason": "one box"])
        #expect(refund.status == 200, "\(refund.text)")
        #expect((refund.json["id"] as? String)?.hasPrefix("re_") == true)
        #expect(refund.json["amount"] as? String == "30.00")
        #expect(refund.json["status"] as? String == "succeeded")
        let after = try h.merchantServer("GET", "/v1/payments/\(id)")
        #expect(after.json["status"] as? String == "partially_refunded")
        #expect(after.json["refunded_amount"] as? String == "30.00")

        let list = try h.merchantServer("GET", "/v1/payments?status=partially_refunded&currency=TWD&amount_min=50")
        #expect(list.status == 200, "\(list.text)")
        #expect((list.json["data"] as? [[String: Any]])?.map { $0["id"] as? String } == [id])
        #expect(list.json["next_cursor"] is NSNull)

        let events = try h.merchantServer("GET", "/v1/events?limit=1")
        #expect(events.status == 200)
        let first = try #require((events.json["data"] as? [[String: Any]])?.first)
        #expect(first["type"] as? String == "payment.refunded")
        let delivery = try #require(first["delivery"] as? [String: Any])
        #expect(delivery["state"] as? String == "pending")
        #expect(delivery["last_status"] is NSNull)
        let cursor = try #require(events.json["next_cursor"] as? String)
        let next = try h.merchantServer("GET", "/v1/events?limit=100&cursor=\(cursor)")
        #expect(
            (next.json["data"] as? [[String: Any]])?.map { $0["type"] as? String }.contains("payment.succeeded") == true
        )
        let eventID = try #require(first["id"] as? String)

        let put = try h.call(
            "PUT", "/v1/webhook-endpoint", headers: h.serverHeaders, json: ["url": "http://127.0.0.1:9/hooks"])
        #expect(put.status == 200, "\(put.text)")
        let firstSecret = try #require(put.json["secret"] as? String)
        #expect(firstSecret.wholeMatch(of: /whsec_[0-9a-f]{48}/) != nil, "\(firstSecret)")
        let held = try h.call(
            "PUT", "/v1/webhook-endpoint", headers: h.serverHeaders,
            json: ["url": "http://127.0.0.1:9/hooks", "enabled": false])
        #expect(held.status == 200, "\(held.text)")
        #expect(try h.merchantServer("GET", "/v1/webhook-endpoint").json["enabled"] as? Bool == false)
        let resumed = try h.call(
            "PUT", "/v1/webhook-endpoint", headers: h.serverHeaders, json: ["url": "http://127.0.0.1:9/hooks"])
        let secret = try #require(resumed.json["secret"] as? String)
        let endpoint = try h.merchantServer("GET", "/v1/webhook-endpoint")
        #expect(endpoint.json["url"] as? String == "http://127.0.0.1:9/hooks")
        #expect(endpoint.json["enabled"] as? Bool == true)
        #expect(endpoint.json["secret_hint"] as? String == "whsec_…" + secret.suffix(4))
        let insecure = try h.call(
            "PUT", "/v1/webhook-endpoint", headers: h.serverHeaders, json: ["url": "http://shop.example/hooks"])
        #expect(insecure.status == 400)

        let redelivered = try h.merchantServer("POST", "/v1/events/\(eventID)/redeliver")
        #expect(redelivered.status == 200, "\(redelivered.text)")
        #expect((redelivered.json["delivery"] as? [String: Any])?["state"] as? String == "pending")
        #expect(try h.merchantServer("POST", "/v1/events/evt_nope/redeliver").status == 404)
    }

    @Test("session flow: create, read on the client, pay, replay without a second charge, completed")
    func sessionFlow() throws {
        let h = try APIHarness()
        let created = try h.merchantServer(
            "POST", "/v1/sessions",
            json: [
                "out_trade_no": "ORD-77", "amount": "250", "currency": "TWD", "country": "TW", "subject": "tea",
                "user_id": "u1",
            ])
        #expect(created.status == 200, "\(created.text)")
        let orderToken = try #require(created.json["order_token"] as? String)
        #expect(orderToken.hasPrefix("ot_"))
        #expect(created.json["amount"] as? String == "250.00")
        #expect((created.json["total"] as? [String: Any])?["label"] as? String == "Orchard Sandbox Store")
        #expect(created.json["status"] as? String == "open")
        #expect(created.json["expires_at"] as? String == "2027-01-15T08:30:00Z")
        #expect(created.json["payment_id"] is NSNull)
        let duplicate = try h.merchantServer(
            "POST", "/v1/sessions",
            json: [
                "out_trade_no": "ORD-77", "amount": "250", "currency": "TWD", "country": "TW", "subject": "tea",
                "user_id": "u1",
            ])
        #expect(duplicate.status == 409)
        #expect(duplicate.errorCode == "duplicate_out_trade_no")

        let fetched = try h.client("GET", "/v1/sessions/\(orderToken)")
        #expect(fetched.status == 200)
        #expect(fetched.json["merchant_identifier"] as? String == "merchant.invalid.orchard.sandbox")

        let token = try h.token("250")
        let paid = try h.client("POST", "/v1/sessions/\(orderToken)/pay", json: ["token": token])
        #expect(paid.status == 200, "\(paid.text)")
        #expect(paid.json["status"] as? String == "captured")
        #expect(paid.json["out_trade_no"] as? String == "ORD-77")
        #expect(paid.headers["Idempotent-Replayed"] == nil)
        let retry = try h.client("POST", "/v1/sessions/\(orderToken)/pay", json: ["token": token])
        #expect(retry.status == 200, "\(retry.text)")
        #expect(retry.headers["Idempotent-Replayed"] == "true")
        #expect(retry.body == paid.body)
        let payments = try h.merchantServer("GET", "/v1/payments?out_trade_no=ORD-77")
        #expect((payments.json["data"] as? [Any])?.count == 1)
        let completed = try h.client("GET", "/v1/sessions/\(orderToken)")
        #expect(completed.json["status"] as? String == "completed")
        #expect(completed.json["payment_id"] as? String == paid.json["payment_id"] as? String)
        #expect(try h.client("GET", "/v1/sessions/ot_missing").errorCode == "session_not_found")

        let short = try h.merchantServer(
            "POST", "/v1/sessions",
            json: [
                "out_trade_no": "ORD-78", "amount": "10", "currency": "TWD", "country": "TW", "subject": "tea",
                "user_id": "u1", "expires_in_seconds": 60,
            ])
        #expect(short.json["expires_at"] as? String == "2027-01-15T08:01:00Z")
        let shortToken = try #require(short.json["order_token"] as? String)
        let lateToken = try h.token("10")
        h.clock.advance(by: 61)
        #expect(try h.client("GET", "/v1/sessions/\(shortToken)").json["status"] as? String == "expired")
        let late = try h.client("POST", "/v1/sessions/\(shortToken)/pay", json: ["token": lateToken])
        #expect(late.status == 422)
        #expect(late.errorCode == "session_expired")
    }

    @Test(
        "authentication by header kind",
        arguments: [
            ("server route, nothing", "GET", "/v1/payments", [String: String](), 401, "missing_credentials"),
            (
                "server route, wrong key", "GET", "/v1/payments", ["Authorization": "Bearer sk_test_wrong"], 401,
                "invalid_credentials"
            ),
            (
                "server route, basic scheme", "GET", "/v1/payments", ["Authorization": "Basic abc"], 401,
                "invalid_credentials"
            ),
            (
                "server route, app key", "GET", "/v1/payments", ["X-Orchard-App-Id": "app", "X-Orchard-App-Key": "k"],
                403, "forbidden"
            ),
            ("client route, nothing", "GET", "/v1/sessions/ot_x", [:], 401, "missing_credentials"),
            (
                "client route, half a pair", "GET", "/v1/sessions/ot_x", ["X-Orchard-App-Id": "app"], 401,
                "invalid_credentials"
            ),
            (
                "client route, secret key", "GET", "/v1/sessions/ot_x", ["Authorization": "Bearer sk_test_x"], 403,
                "forbidden"
            ),
        ])
    func authentication(
        _ name: String, _ method: String, _ path: String, _ headers: [String: String], _ status: Int, _ code: String
    )
        throws
    {
        let h = try APIHarness()
        let response = try h.call(method, path, headers: headers)
        #expect(response.status == status, "\(name): \(response.text)")
        #expect(response.errorCode == code)
        #expect(response.error["type"] as? String == "authentication_error")
        #expect(response.error["request_id"] as? String == response.headers["Request-Id"])
        let real = try h.call(method, path, headers: path.hasPrefix("/v1/payments") ? h.serverHeaders : h.appHeaders)
        #expect(real.status != 401 && real.status != 403)
    }

    @Test("CORS: preflight, allowed and refused origins, none on server routes")
    func cors() throws {
        let h = try APIHarness()
        try h.runtime.gateway.merchants.setWebOrigins(merchantID: h.merchant.id, origins: ["https://shop.example"])
        let preflight = try h.call(
            "OPTIONS", "/v1/tokens",
            headers: ["Origin": "https://shop.example", "Access-Control-Request-Method": "POST"])
        #expect(preflight.status == 204)
        #expect(preflight.headers["Access-Control-Allow-Origin"] == "https://shop.example")
        #expect(preflight.headers["Access-Control-Allow-Methods"] == "GET, POST")
        #expect(preflight.headers["Access-Control-Max-Age"] == "600")
        #expect(preflight.headers["Access-Control-Allow-Headers"]?.contains("X-Orchard-App-Key") == true)
        let refused = try h.call(
            "OPTIONS", "/v1/tokens",
            headers: ["Origin": "https://evil.example", "Access-Control-Request-Method": "POST"])
        #expect(refused.status == 403)
        #expect(refused.errorCode == "origin_not_allowed")
        let actual = try h.client("GET", "/v1/sessions/ot_x", headers: ["Origin": "https://shop.example"])
        #expect(actual.status == 404)
        #expect(actual.headers["Access-Control-Allow-Origin"] == "https://shop.example")
        #expect(actual.headers["Access-Control-Expose-Headers"]?.contains("Idempotent-Replayed") == true)
        let other = try h.client("GET", "/v1/sessions/ot_x", headers: ["Origin": "https://evil.example"])
        #expect(other.status == 403)
        #expect(other.errorCode == "origin_not_allowed")
        let serverOptions = try h.call(
            "OPTIONS", "/v1/payments",
            headers: ["Origin": "https://shop.example", "Access-Control-Request-Method": "GET"])
        #expect(serverOptions.status == 405)
        #expect(serverOptions.headers["Allow"] != nil)
        let serverCall = try h.merchantServer("GET", "/v1/payments", headers: ["Origin": "https://shop.example"])
        #expect(serverCall.status == 200)
        #expect(serverCall.headers["Access-Control-Allow-Origin"] == nil)
    }

    @Test("each error status: 400 402 404 409 413 415 422 and the server keeps serving")
    func errorStatuses() throws {
        let h = try APIHarness(transport: .loopback)
        let prime = try h.prime("100.00")
        func pay(_ body: [String: Any]) throws -> ClientResponse {
            try h.merchantServer("POST", "/v1/payments", json: body)
        }
        let decimals = try pay(["prime": prime, "amount": "100.001", "currency": "TWD"])
        #expect(decimals.status == 400)
        #expect(decimals.errorCode == "too_many_decimals")
        #expect(decimals.error["param"] as? String == "amount")
        #expect(try pay(["prime": prime, "amount": 100, "currency": "TWD"]).errorCode == "invalid_amount")
        #expect(try pay(["prime": prime, "amount": "-1", "currency": "TWD"]).errorCode == "negative_amount")
        #expect(try pay(["prime": prime, "amount": "1", "currency": "XXQ"]).errorCode == "unknown_currency")
        #expect(try pay(["amount": "1", "currency": "TWD"]).errorCode == "parameter_missing")
        let mismatch = try pay(["prime": prime, "amount": "120.00", "currency": "TWD"])
        #expect(mismatch.status == 422)
        #expect(mismatch.errorCode == "amount_mismatch")
        let notDeferred = try pay(["prime": prime, "amount": "100.00", "currency": "TWD", "deferred": true])
        #expect(notDeferred.status == 422)
        #expect(notDeferred.errorCode == "prime_not_deferred")
        #expect(try pay(["prime": prime, "amount": "100.00", "currency": "TWD", "deferred": "yes"]).status == 400)
        let missing = try pay(["prime": "prm_missing", "amount": "100.00", "currency": "TWD"])
        #expect(missing.status == 404)
        #expect(missing.errorCode == "prime_not_found")
        #expect(try pay(["prime": prime, "amount": "100.00", "currency": "TWD"]).status == 200)
        let reused = try pay(["prime": prime, "amount": "100.00", "currency": "TWD"])
        #expect(reused.status == 409)
        #expect(reused.errorCode == "prime_already_used")
        let declined = try h.pay("100.05")
        #expect(declined.status == 402)
        #expect(declined.errorCode == "card_declined")
        #expect(declined.error["type"] as? String == "card_error")
        #expect(declined.error["decline_code"] as? String == "do_not_honor")
        let failedID = try #require(declined.error["payment_id"] as? String)
        #expect(try h.merchantServer("GET", "/v1/payments/\(failedID)").json["status"] as? String == "failed")
        let media = try h.call(
            "POST", "/v1/payments", headers: h.serverHeaders.merging(["Content-Type": "text/plain"]) { $1 },
            body: Data("hello".utf8))
        #expect(media.status == 415)
        let big = try h.call(
            "POST", "/v1/tokens", headers: h.appHeaders.merging(["Content-Type": "application/json"]) { $1 },
            body: Data(repeating: 0x20, count: 70_000))
        #expect(big.status == 413)
        #expect(big.errorCode == "body_too_large")
        #expect(try h.call("GET", "/healthz").status == 200)
        let deep = String(repeating: "[", count: 20) + String(repeating: "]", count: 20)
        let tooDeep = try h.call(
            "POST", "/v1/tokens", headers: h.appHeaders.merging(["Content-Type": "application/json"]) { $1 },
            body: Data("{\"token\":\(deep)}".utf8))
        #expect(tooDeep.errorCode == "json_too_deep")
        let replayed = try h.client("POST", "/v1/tokens", json: ["token": ["paymentData": ["version": "EC_v2"]]])
        #expect(replayed.status == 422)
        #expect(replayed.error["type"] as? String == "token_error")
        #expect(try h.call("DELETE", "/v1/payments", headers: h.serverHeaders).status == 405)
        #expect(try h.call("GET", "/v1/nothing").status == 404)
    }

    @Test("a token used twice is token_replayed")
    func tokenReplay() throws {
        let h = try APIHarness()
        let token = try h.token("10.00")
        #expect(try h.client("POST", "/v1/tokens", json: ["token": token]).status == 200)
        let again = try h.client("POST", "/v1/tokens", json: ["token": token])
        #expect(again.status == 409)
        #expect(again.errorCode == "token_replayed")
        #expect(again.error["type"] as? String == "token_error")
    }

    @Test("429 with Retry-After once the credential's bucket is empty")
    func rateLimit() throws {
        let h = try APIHarness {
            $0.rateLimitPerSecond = 0.01
            $0.rateLimitBurst = 2
        }
        #expect(try h.merchantServer("GET", "/v1/payments").status == 200)
        #expect(try h.merchantServer("GET", "/v1/payments").status == 200)
        let limited = try h.merchantServer("GET", "/v1/payments")
        #expect(limited.status == 429)
        #expect(limited.errorCode == "rate_limited")
        #expect(Int(limited.headers["Retry-After"] ?? "") ?? 0 >= 1)
        #expect(try h.client("GET", "/v1/sessions/ot_x").status == 404)
    }

    @Test("idempotency over HTTP: replay byte for byte, conflict, invalid key, stored errors")
    func idempotency() throws {
        let h = try APIHarness()
        let prime = try h.prime("100.00")
        let body: [String: Any] = ["prime": prime, "amount": "100.00", "currency": "TWD"]
        let first = try h.merchantServer("POST", "/v1/payments", json: body, headers: ["Idempotency-Key": "order-1"])
        #expect(first.status == 200)
        let second = try h.merchantServer("POST", "/v1/payments", json: body, headers: ["Idempotency-Key": "order-1"])
        #expect(second.status == 200)
        #expect(second.headers["Idempotent-Replayed"] == "true")
        #expect(second.body == first.body)
        #expect(second.headers["Request-Id"] != first.headers["Request-Id"])
        var changed = body
        changed["amount"] = "99.00"
        let conflict = try h.merchantServer(
            "POST", "/v1/payments", json: changed, headers: ["Idempotency-Key": "order-1"])
        #expect(conflict.status == 422)
        #expect(conflict.errorCode == "idempotency_conflict")
        #expect(conflict.error["type"] as? String == "idempotency_error")
        let invalid = try h.merchantServer(
            "POST", "/v1/payments", json: body, headers: ["Idempotency-Key": "has space"])
        #expect(invalid.status == 400)
        #expect(invalid.errorCode == "idempotency_key_invalid")
        let declined = try h.pay("100.05", key: "declined-1")
        #expect(declined.status == 402)
        let id = try #require(first.json["id"] as? String)
        let void1 = try h.merchantServer("POST", "/v1/payments/\(id)/void", headers: ["Idempotency-Key": "void-1"])
        #expect(void1.status == 409)
        #expect(void1.errorCode == "invalid_state_transition")
        let void2 = try h.merchantServer("POST", "/v1/payments/\(id)/void", headers: ["Idempotency-Key": "void-1"])
        #expect(void2.headers["Idempotent-Replayed"] == "true")
        #expect(void2.body == void1.body)
    }

    @Test("manual capture, over-capture, void, refund over the capture")
    func captureVoidRefund() throws {
        let h = try APIHarness()
        let manual = try h.pay("80.00", capture: ["mode": "manual"])
        #expect(manual.json["status"] as? String == "authorized")
        let id = try #require(manual.json["id"] as? String)
        let over = try h.merchantServer("POST", "/v1/payments/\(id)/capture", json: ["amount": "90.00"])
        #expect(over.status == 422)
        #expect(over.errorCode == "capture_exceeds_authorization")
        let captured = try h.merchantServer("POST", "/v1/payments/\(id)/capture", json: ["amount": "70.00"])
        #expect(captured.status == 200)
        #expect(captured.json["captured_amount"] as? String == "70.00")
        #expect(try h.merchantServer("POST", "/v1/payments/\(id)/capture").errorCode == "invalid_state_transition")
        let tooMuch = try h.merchantServer("POST", "/v1/payments/\(id)/refunds", json: ["amount": "70.01"])
        #expect(tooMuch.errorCode == "refund_exceeds_capture")
        let rest = try h.merchantServer("POST", "/v1/payments/\(id)/refunds")
        #expect(rest.json["amount"] as? String == "70.00")
        let delayed = try h.pay("60.00", capture: ["mode": "delay", "delay_days": 3])
        #expect(delayed.json["capture_mode"] as? String == "delay")
        #expect(delayed.json["capture_at"] as? String == "2027-01-18T08:00:00Z")
        let voidable = try #require(delayed.json["id"] as? String)
        let voided = try h.merchantServer("POST", "/v1/payments/\(voidable)/void")
        #expect(voided.json["status"] as? String == "voided")
        #expect(try h.pay("10.00", capture: ["mode": "later"]).status == 400)
    }

    @Test("merchant keys: CSR, certificate upload, mismatch and garbage refused")
    func merchantKeys() throws {
        let h = try APIHarness()
        let csr = try h.merchantServer("POST", "/v1/merchant-keys/csr", json: ["type": "ec", "purpose": "processing"])
        #expect(csr.status == 200, "\(csr.text)")
        let id = try #require(csr.json["id"] as? String)
        let pem = try #require(csr.json["csr_pem"] as? String)
        #expect(pem.contains("BEGIN CERTIFICATE REQUEST"))
        let pki = try SandboxPKIIssuer.pki(serialized: try #require(h.runtime.sandbox).pki)
        let now = h.clock.now()
        let certificate = try pki.issueMerchantCertificate(
            publicKeyPEM: pem, merchantIdentifier: "merchant.invalid.orchard.sandbox", notBefore: now - 60,
            notAfter: now + 86_400)
        let uploaded = try h.merchantServer(
            "POST", "/v1/merchant-keys/\(id)/certificate", json: ["certificate_pem": certificate])
        #expect(uploaded.status == 200, "\(uploaded.text)")
        #expect(uploaded.json["active"] as? Bool == true)
        #expect(uploaded.json["public_key_hash"] as? String == csr.json["public_key_hash"] as? String)
        #expect((uploaded.json["merchant_identifier_hash"] as? String)?.count == 64)
        let other = try h.merchantServer(
            "POST", "/v1/merchant-keys/csr", json: ["type": "ec", "purpose": "processing"])
        let otherID = try #require(other.json["id"] as? String)
        let mismatch = try h.merchantServer(
            "POST", "/v1/merchant-keys/\(otherID)/certificate", json: ["certificate_pem": certificate])
        #expect(mismatch.errorCode == "certificate_key_mismatch")
        let garbage = try h.merchantServer(
            "POST", "/v1/merchant-keys/\(otherID)/certificate", json: ["certificate_pem": "not a certificate"])
        #expect(garbage.errorCode == "certificate_invalid")
        #expect(
            try h.merchantServer(
                "POST", "/v1/merchant-keys/mk_nope/certificate", json: ["certificate_pem": certificate]
            ).status == 404)
        #expect(
            try h.merchantServer("POST", "/v1/merchant-keys/csr", json: ["type": "ec", "purpose": "identity"]).status
                == 400)
    }

    @Test("BIN table: CSV upload feeds card info; bad lines and media types refused")
    func binTable() throws {
        let h = try APIHarness()
        let csv =
            "bin_prefix,issuer,bank_id,funding,level,country,country_code\n476112,Sandbox Bank,999,credit,CLASSIC,TAIWAN,TW\n"
        let put = try h.call(
            "PUT", "/v1/bin-table", headers: h.serverHeaders.merging(["Content-Type": "text/csv"]) { $1 },
            body: Data(csv.utf8))
        #expect(put.status == 200, "\(put.text)")
        #expect(put.json["rows"] as? Int == 1)
        let tokenized = try h.client("POST", "/v1/tokens", json: ["token": try h.token("5.00")])
        let card = try #require(tokenized.json["card_info"] as? [String: Any])
        #expect(card["issuer"] as? String == "Sandbox Bank")
        #expect(card["country_code"] as? String == "TW")
        let bad = try h.call(
            "PUT", "/v1/bin-table", headers: h.serverHeaders.merging(["Content-Type": "text/csv"]) { $1 },
            body: Data("bin_prefix,issuer,bank_id,funding,level,country,country_code\n12,x,,,,,\n".utf8))
        #expect(bad.status == 422)
        #expect(bad.errorCode == "bin_table_invalid")
        let json = try h.call("PUT", "/v1/bin-table", headers: h.serverHeaders, json: ["rows": []])
        #expect(json.status == 415)
    }

    @Test("operations: healthz, readyz, metrics")
    func operations() throws {
        let h = try APIHarness()
        #expect(try h.pay("20.00").status == 200)
        let health = try h.call("GET", "/healthz")
        #expect(health.json["status"] as? String == "ok")
        let ready = try h.call("GET", "/readyz")
        #expect(ready.status == 200)
        #expect((ready.json["checks"] as? [String: String])?["database"] == "ok")
        let metrics = try h.call("GET", "/metrics")
        #expect(metrics.text.contains("orchard_payments{status=\"captured\"} 1"))
        #expect(metrics.text.contains("orchard_webhook_backlog"))
        #expect(
            metrics.text.contains(
                "orchard_http_requests_total{route=\"/v1/payments\",method=\"POST\",status=\"200\"} 1"))
        #expect(
            metrics.text.contains("orchard_http_request_duration_seconds_bucket{route=\"/v1/payments\",method=\"POST\"")
        )
        h.api.beginDraining()
        #expect(try h.call("GET", "/readyz").status == 503)
    }

    @Test("graceful shutdown: a payment in flight finishes, new connections are refused")
    func gracefulShutdown() throws {
        let h = try APIHarness(transport: .loopback, acquirer: { $0.slowDelay = 1.5 })
        let prime = try h.prime("100.99")
        let result = Locked<ClientResponse?>(nil)
        let done = DispatchSemaphore(value: 0)
        let base = h.base
        let headers = h.serverHeaders.merging(["Content-Type": "application/json"]) { $1 }
        let body = try JSONSerialization.data(withJSONObject: ["prime": prime, "amount": "100.99", "currency": "TWD"])
        Thread.detachNewThread {
            let response = try? CurlClient().request("POST", base + "/v1/payments", headers: headers, body: body)
            result.withLock { $0 = response }
            done.signal()
        }
        // Wait until the handler is inside the (slow) authorization: its payment exists in `processing`.
        var waited = 0
        func authorizing() -> Bool {
            let page = try? h.runtime.gateway.payments.list(
                merchant: h.merchant, query: PaymentQuery(statuses: [.processing]))
            return page?.payments.isEmpty == false
        }
        while !authorizing() && waited < 2000 {
            Thread.sleep(forTimeInterval: 0.005)
            waited += 1
        }
        #expect(h.server.requestsInFlight == 1)
        h.api.beginDraining()
        h.server.stop()
        done.wait()
        let response = try #require(result.withLock { $0 })
        #expect(response.status == 200)
        #expect(response.json["status"] as? String == "captured")
        #expect(throws: (any Error).self) { try CurlClient().request("GET", base + "/healthz") }
    }
}

@Suite("Error mapping against openapi.yaml's x-orchard-error-codes")
struct ErrorMappingTests {
    /// `code: {status: N, type: T, …}` lines of the table.
    static func documentedCodes() throws -> [String: (Int, String)] {
        let text = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("openapi.yaml"), encoding: .utf8)
        var codes: [String: (Int, String)] = [:]
        var inTable = false
        for line in text.split(separator: "\n").map(String.init) {
            if line == "x-orchard-error-codes:" {
                inTable = true
                continue
            }
            guard inTable, line.hasPrefix("  "), !line.hasPrefix("  #"), let colon = line.firstIndex(of: ":") else {
                continue
            }
            let code = line[..<colon].trimmingCharacters(in: .whitespaces)
            guard let statusRange = line.range(of: "status: "), let typeRange = line.range(of: "type: ") else {
                continue
            }
            let status = Int(line[statusRange.upperBound...].prefix { $0.isNumber }) ?? 0
            let type = String(line[typeRange.upperBound...].prefix { $0 != "," && $0 != "}" })
            codes[code] = (status, type)
        }
        return codes
    }

    /// The package root, from this file.
    static var root: URL { TestPaths.packageRoot }

    @Test("the process environment is read in Settings only; the modules below take what they need as parameters")
    func environmentReadInSettingsOnly() throws {
        // The token fuzzer and the test support are tools around the product, with their own variables.
        let tools: Set<String> = ["TokenFuzzer", "OrchardTestSupport"]
        let sources = Self.root.appendingPathComponent("Sources")
        var readers: [String] = []
        for case let file as URL in FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
        where file.pathExtension == "swift" {
            let path = file.path.replacingOccurrences(of: sources.path + "/", with: "")
            guard !tools.contains(String(path.prefix { $0 != "/" })), path != "OrchardCLI/Settings.swift" else {
                continue
            }
            let text = try String(contentsOf: file, encoding: .utf8)
            if text.contains("processInfo.environment") || text.contains("getenv(") || text.contains("environ[") {
                readers.append(path)
            }
        }
        #expect(readers == [])
        let settings = try String(
            contentsOf: sources.appendingPathComponent("OrchardCLI/Settings.swift"), encoding: .utf8)
        #expect(settings.components(separatedBy: "processInfo.environment").count == 2, "one read, in Settings")
    }

    @Test("request state reaches the domain as a RequestScope parameter: no module keeps it in a task-local")
    func noTaskLocalRequestState() throws {
        let sources = Self.root.appendingPathComponent("Sources")
        var holders: [String] = []
        for case let file as URL in FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
        where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            if text.contains("@TaskLocal") || text.contains(".withValue(") {
                holders.append(file.path.replacingOccurrences(of: sources.path + "/", with: ""))
            }
        }
        #expect(holders == [])
    }

    @Test("the HTTP tests compose the gateway with GatewayAssembly: none imports OrchardCLI, nor does the target")
    func httpTestsWithoutTheCommandLine() throws {
        let tests = Self.root.appendingPathComponent("Tests/GatewayHTTPTests")
        var importers: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: tests.path) where name.hasSuffix(".swift") {
            let text = try String(contentsOf: tests.appendingPathComponent(name), encoding: .utf8)
            if text.split(separator: "\n").contains(where: { $0.hasPrefix("import OrchardCLI") }) {
                importers.append(name)
            }
        }
        #expect(importers == [])
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        func dependencies(of target: String) throws -> Substring {
            let start = try #require(manifest.range(of: "name: \"\(target)\""))
            return manifest[start.upperBound...].prefix { $0 != ")" }
        }
        for target in ["GatewayHTTPTests", "GatewayTestSupport", "GatewayAssembly"] {
            #expect(!(try dependencies(of: target)).contains("\"OrchardCLI\""), "\(target) depends on OrchardCLI")
        }
        #expect(!(try dependencies(of: "GatewayAssembly")).contains("\"GatewayHTTP\""), "the composition root has no HTTP")
        #expect(
            FileManager.default.fileExists(
                atPath: Self.root.appendingPathComponent("Sources/GatewayAssembly/GatewayRuntime.swift").path))
    }

    /// The string literals captured by `pattern` in the Swift files under `directory` (or in that one file).
    static func literals(_ pattern: String, under directory: String) throws -> Set<String> {
        let regex = try NSRegularExpression(pattern: pattern)
        var found: Set<String> = []
        let base = root.appendingPathComponent(directory)
        let files =
            base.pathExtension == "swift"
            ? [base]
            : FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                if let range = Range(match.range(at: 1), in: text) { found.insert(String(text[range])) }
            }
        }
        return found
    }

    /// Every code of the gateway's domain errors (`GatewayError.Code` constants).
    static func domainCodes() throws -> Set<String> {
        try literals(#"(?:static let \w+ = (?:GatewayError\.)?Code)\(rawValue: "(\w+)"\)"#, under: "Sources/Gateway")
            .subtracting(try webhookCodes())
    }

    /// Codes of the webhook helpers' own errors (never on the HTTP API).
    static func webhookCodes() throws -> Set<String> {
        try literals(#"static let \w+ = Code\(rawValue: "(\w+)"\)"#, under: "Sources/Gateway/Webhooks")
    }

    /// Codes the token library can give (its `PaymentTokenError.Code` constants).
    static func tokenCodes() throws -> Set<String> {
        try literals(#"static let \w+ = Code\(rawValue: "(\w+)"\)"#, under: "Sources/ApplePayToken")
    }

    /// Codes the HTTP layer answers by itself: its transport codes and the literals it builds errors from.
    static func transportCodes() throws -> Set<String> {
        let constants = try literals(
            #"static let \w+: Code = "(\w+)""#, under: "Sources/OrchardHTTP/HTTPAPIError.swift")
        var built = Set<String>()
        var named = Set<String>()
        var declared = Set<String>()
        for module in ["Sources/OrchardHTTP", "Sources/GatewayHTTP"] {
            declared.formUnion(try literals(#"static let \w+: HTTPAPIError\.Code = "(\w+)""#, under: module))
            built.formUnion(try literals(#"make\(\s*\.\w+,\s*\.\w+,\s*"(\w+)""#, under: module))
            named.formUnion(try literals(#"code: \.init\(rawValue: "(\w+)"\)"#, under: module))
        }
        // `service_unavailable` is the HTTP library's helper for servers that are not ready; the gateway API
        // never answers it (readiness is `GET /readyz`'s 503 body, not an error).
        return constants.union(declared).union(built).union(named).subtracting(["service_unavailable"])
    }

    @Test("every mapped code answers the documented status and type, and every documented code is mapped")
    func mappedCodesMatch() throws {
        let documented = try Self.documentedCodes()
        #expect(documented.count >= 55)
        for (code, (status, type)) in documented {
            if let mapped = GatewayAPIError.wireStatus(code: code) {
                #expect(mapped.status == status, "\(code)")
                #expect(mapped.type == type, "\(code)")
            }
        }
        // Spec → implementation: each documented code has a source (the mapping table, the transport, the
        // token library).
        let sources = try Set(GatewayAPIError.table.keys.map(\.rawValue)).union(Self.transportCodes()).union(
            Self.tokenCodes())
        let unsourced = Set(documented.keys).subtracting(sources)
        #expect(unsourced.isEmpty, "documented but never answered: \(unsourced.sorted())")
        // Implementation → spec: each entry of the mapping table is documented.
        let undocumented = Set(GatewayAPIError.table.keys.map(\.rawValue)).subtracting(documented.keys)
        #expect(undocumented.isEmpty, "mapped but not in x-orchard-error-codes: \(undocumented.sorted())")
    }

    @Test("every code the server can emit is in x-orchard-error-codes with the status and type it answers")
    func emittedCodesAreDocumented() throws {
        let documented = try Self.documentedCodes()
        let domain = try Self.domainCodes()
        #expect(domain.contains("payment_request_invalid") && domain.contains("certificate_invalid"))
        for code in domain.sorted() {
            let wire = GatewayAPIError.from(GatewayError(GatewayError.Code(rawValue: code), "x"))
            let answered = wire.base.code.rawValue
            let entry = documented[answered]
            #expect(entry != nil, "\(code) answers \(answered), which is not documented")
            #expect(entry?.0 == wire.base.status.rawValue, "\(code): status")
            #expect(entry?.1 == wire.base.type.rawValue, "\(code): type")
        }
        for code in try Self.transportCodes().sorted() {
            #expect(documented[code] != nil, "the HTTP layer answers \(code), which is not documented")
        }
        for code in try Self.tokenCodes().sorted() {
            let wire = GatewayAPIError.from(GatewayError.token(code: code, reason: "x"))
            #expect(wire.base.status.rawValue == 422 && wire.base.type.rawValue == "token_error", "\(code)")
        }
    }

    @Test(
        "domain errors on the wire",
        arguments: [
            (
                GatewayError(.cardDeclined, "declined", declineCode: "do_not_honor", paymentID: "pay_1"), 402,
                "card_error"
            ),
            (GatewayError.token(code: "signature_invalid", reason: "bad"), 422, "token_error"),
            (GatewayError(.tokenReplayed, "again"), 409, "token_error"),
            (GatewayError(.noProcessingKey, "none"), 422, "token_error"),
            (GatewayError(.storageFailure, "disk said no: /secret/path"), 500, "api_error"),
            (GatewayError(.processorUnavailable, "later"), 503, "api_error"),
            (
                GatewayError(.processorDeclined, "refused", declineCode: "do_not_honor", paymentID: "pay_1"), 402,
                "card_error"
            ),
            (
                GatewayError(.processorUnavailable, "not sent", declineCode: "do_not_honor", paymentID: "pay_1"), 503,
                "api_error"
            ),
        ])
    func domainErrors(_ error: GatewayError, _ status: Int, _ type: String) {
        let wire = GatewayAPIError.from(error)
        #expect(wire.base.status.rawValue == status)
        #expect(wire.base.type.rawValue == type)
        if status == 500 { #expect(!wire.base.message.contains("secret")) }
        if error.paymentID != nil {
            #expect(wire.extra == ["decline_code": "do_not_honor", "payment_id": "pay_1"])
        }
    }
}
