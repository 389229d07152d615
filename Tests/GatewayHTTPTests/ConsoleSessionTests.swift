import Foundation
import Gateway
import GatewayHTTP
import GatewayTestSupport
import OrchardHTTP
import Testing

/// The console's session over loopback HTTP: cookie flags, CSRF, idle expiry on the manual clock, the sign-in
/// rate limit and sign-out.
@Suite("Console session")
struct ConsoleSessionTests {
    @Test("sign-in answers the session and an HttpOnly, SameSite=Strict cookie (not Secure over plain HTTP)")
    func cookieFlags() throws {
        let h = try APIHarness()
        let (cookie, csrf, response) = try h.signInToConsole()
        let setCookie = try #require(response.headers["Set-Cookie"])
        let attributes = setCookie.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(cookie.hasPrefix("orchard_console=cst_"))
        #expect(
            attributes.contains("HttpOnly") && attributes.contains("SameSite=Strict") && attributes.contains("Path=/"))
        #expect(!attributes.contains("Secure"))
        #expect(!attributes.contains { $0.hasPrefix("Max-Age") || $0.hasPrefix("Expires") })
        #expect(response.json["merchant_id"] as? String == h.merchant.id)
        #expect(response.json["expires_at"] as? String == "2027-01-15T16:00:00Z")
        #expect(response.headers["Cache-Control"] == "no-store")
        #expect(!response.text.contains(h.credentials.secretKey) && !response.text.contains(cookie.dropFirst(16)))
        // A reload asks for the session again with the cookie alone: the same CSRF token.
        let again = try h.call("GET", "/console/session", headers: ["Cookie": cookie])
        #expect(again.status == 200 && again.json["csrf_token"] as? String == csrf)
        #expect(try h.call("GET", "/console/session").status == 401)
        // The log names no secret.
        let log = h.logs.lines.joined(separator: "\n")
        #expect(!log.contains(h.credentials.secretKey) && !log.contains(csrf) && !log.contains(cookie.dropFirst(16)))
    }

    @Test("over TLS the cookie is also Secure")
    func secureOverTLS() throws {
        let files = try TLSFixture.write()
        let h = try APIHarness(
            transport: .loopback,
            configure: {
                $0.tlsCertificatePath = files.certificate
                $0.tlsKeyPath = files.key
            })
        let client = CurlClient()
        client.caFile = files.certificate
        let response = try client.call(
            "POST", "https://127.0.0.1:\(h.server.port)", "/console/session", headers: [:],
            json: ["secret_key": h.credentials.secretKey], body: nil)
        #expect(response.status == 200)
        let attributes = try #require(response.headers["Set-Cookie"]).split(separator: ";").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        #expect(
            attributes.contains("Secure") && attributes.contains("HttpOnly") && attributes.contains("SameSite=Strict"))
    }

    @Test("the cookie authenticates server routes; a state-changing request needs X-CSRF-Token")
    func csrf() throws {
        let h = try APIHarness()
        let payment = try h.pay("100.00", capture: ["mode": "manual"]).json
        let id = try #require(payment["id"] as? String)
        let (cookie, csrf, _) = try h.signInToConsole()
        let read = try h.call("GET", "/v1/payments/\(id)", headers: ["Cookie": cookie])
        #expect(read.status == 200 && read.json["status"] as? String == "authorized")
        for headers in [
            ["Cookie": cookie], ["Cookie": cookie, "X-CSRF-Token": String(csrf.reversed())],
            ["Cookie": cookie, "X-CSRF-Token": ""],
        ] {
            let forged = try h.call("POST", "/v1/payments/\(id)/void", headers: headers)
            #expect(forged.status == 403 && forged.errorCode == "csrf_token_invalid")
            let put = try h.call("PUT", "/v1/webhook-endpoint", headers: headers, json: ["url": "https://a.example/h"])
            #expect(put.status == 403 && put.errorCode == "csrf_token_invalid")
        }
        #expect(
            try h.call("GET", "/v1/payments/\(id)", headers: ["Cookie": cookie]).json["status"] as? String
                == "authorized")
        // Another session's token is not this one's.
        let (_, otherCSRF, _) = try h.signInToConsole()
        let crossed = try h.call(
            "POST", "/v1/payments/\(id)/void", headers: ["Cookie": cookie, "X-CSRF-Token": otherCSRF])
        #expect(crossed.status == 403)
        let voided = try h.call(
            "POST", "/v1/payments/\(id)/void",
            headers: ["Cookie": cookie, "X-CSRF-Token": csrf, "Idempotency-Key": "v1"])
        #expect(voided.status == 200 && voided.json["status"] as? String == "voided")
        // The cookie does not open client routes, and the secret key still works alone.
        #expect(try h.call("GET", "/v1/sandbox/wallet/cards", headers: ["Cookie": cookie]).status == 401)
        #expect(try h.merchantServer("GET", "/v1/payments/\(id)").status == 200)
    }

    @Test("a session idle for 8 hours on the gateway's clock is refused; using it keeps it alive")
    func idleExpiry() throws {
        let h = try APIHarness()
        let (cookie, _, _) = try h.signInToConsole()
        h.clock.advance(by: 7 * 3600)
        let used = try h.call("GET", "/v1/payments", headers: ["Cookie": cookie])
        #expect(used.status == 200)
        #expect(
            try h.call("GET", "/console/session", headers: ["Cookie": cookie]).json["expires_at"] as? String
                == "2027-01-15T23:00:00Z")
        h.clock.advance(by: 8 * 3600 - 1)
        #expect(try h.call("GET", "/v1/payments", headers: ["Cookie": cookie]).status == 200)
        h.clock.advance(by: 8 * 3600)
        for path in ["/v1/payments", "/console/session"] {
            let expired = try h.call("GET", path, headers: ["Cookie": cookie])
            #expect(expired.status == 401 && expired.errorCode == "invalid_credentials")
        }
    }

    @Test("sign-out (with the CSRF token) ends the session on the server: the old cookie is refused")
    func signOut() throws {
        let h = try APIHarness()
        let (cookie, csrf, _) = try h.signInToConsole()
        let unprotected = try h.call("DELETE", "/console/session", headers: ["Cookie": cookie])
        #expect(unprotected.status == 403 && unprotected.errorCode == "csrf_token_invalid")
        let out = try h.call("DELETE", "/console/session", headers: ["Cookie": cookie, "X-CSRF-Token": csrf])
        #expect(out.status == 204)
        let cleared = try #require(out.headers["Set-Cookie"])
        #expect(cleared.hasPrefix("orchard_console=;") && cleared.contains("Max-Age=0"))
        for (method, path) in [("GET", "/v1/payments"), ("GET", "/console/session"), ("DELETE", "/console/session")] {
            let refused = try h.call(method, path, headers: ["Cookie": cookie, "X-CSRF-Token": csrf])
            #expect(refused.status == 401 && refused.errorCode == "invalid_credentials", "\(method) \(path)")
        }
        let put = try h.call(
            "PUT", "/v1/webhook-endpoint", headers: ["Cookie": cookie, "X-CSRF-Token": csrf],
            json: ["url": "https://a.example/h"])
        #expect(put.status == 401)
    }

    @Test("failed sign-ins are limited per address: past 10, even the right key waits for the bucket to refill")
    func rateLimit() throws {
        let h = try APIHarness()
        let wrong = "sk_test_" + String(repeating: "0", count: 44)
        for attempt in 1...10 {
            let refused = try h.call("POST", "/console/session", json: ["secret_key": wrong])
            #expect(refused.status == 401 && refused.errorCode == "invalid_credentials", "attempt \(attempt)")
        }
        let limited = try h.call("POST", "/console/session", json: ["secret_key": h.credentials.secretKey])
        #expect(limited.status == 429 && limited.errorCode == "rate_limited")
        #expect(limited.headers["Retry-After"] == "30")
        #expect(limited.headers["Set-Cookie"] == nil)
        h.clock.advance(by: 30)
        _ = try h.signInToConsole()
        // A success takes nothing from the bucket; the next failure does.
        _ = try h.signInToConsole()
        #expect(try h.call("POST", "/console/session", json: ["secret_key": wrong]).status == 401)
        #expect(try h.call("POST", "/console/session", json: ["secret_key": wrong]).status == 429)
        // While the address is limited, nothing else is looked at.
        #expect(try h.call("POST", "/console/session", json: ["secret_key": 5]).status == 429)
    }

    @Test("the limiter keys failures by client address")
    func perAddress() throws {
        let limiter = TokenBucketRateLimiter(ratePerSecond: 1.0 / 30, burst: 2) { 0 }
        _ = limiter.acquire("10.0.0.1")
        _ = limiter.acquire("10.0.0.1")
        #expect(limiter.peek("10.0.0.1") == .limited(retryAfter: 30))
        #expect(limiter.peek("10.0.0.2") == .allowed)
        #expect(limiter.peek("10.0.0.2") == .allowed)
    }

    @Test("bad sign-in bodies are refused with stable codes")
    func badBodies() throws {
        let h = try APIHarness()
        #expect(try h.call("POST", "/console/session", json: [String: String]()).errorCode == "parameter_missing")
        #expect(try h.call("POST", "/console/session", json: ["secret_key": 5]).errorCode == "parameter_invalid")
        let long = try h.call("POST", "/console/session", json: ["secret_key": String(repeating: "k", count: 101)])
        #expect(long.errorCode == "parameter_invalid")
        #expect(try h.call("POST", "/console/session", json: [1]).errorCode == "invalid_json")
    }

    @Test("GET /console serves the page with a strict content security policy; its files are served below it")
    func page() throws {
        let h = try APIHarness()
        let page = try h.call("GET", "/console")
        #expect(page.status == 200 && page.text.contains("id=\"sign-in-form\""))
        #expect(page.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(page.headers["Cache-Control"] == "no-store" && page.headers["X-Frame-Options"] == "DENY")
        #expect(page.headers["Content-Security-Policy"]?.contains("frame-ancestors 'none'") == true)
        // One script, an ES module; the modules it imports (every page, and the core they import) are served,
        // and none of them hands anything over through a global.
        #expect(page.text.components(separatedBy: "<script").count == 2)
        #expect(page.text.contains("<script type=\"module\" src=\"/console/main.js\"></script>"))
        let main = try h.call("GET", "/console/main.js")
        #expect(main.status == 200 && main.headers["Content-Type"] == "text/javascript; charset=utf-8")
        let imported = main.text.split(separator: "\n").filter { $0.hasPrefix("import ") }.compactMap {
            $0.split(separator: "'").dropFirst().first.map { String($0.dropFirst(2)) }
        }
        #expect(
            imported == [
                "console.js", "overview.js", "payments.js", "webhooks.js", "processor.js",
                "card-data.js", "keys.js", "audit.js",
            ])
        for name in imported {
            let module = try h.call("GET", "/console/" + name)
            #expect(module.status == 200, "\(name)")
            #expect(!module.text.contains("window.Orchard"), "\(name) uses a global")
            if name != "console.js" {
                #expect(module.text.contains("import * as C from './console.js';"), "\(name)")
            }
        }
        #expect(try h.call("GET", "/console/console.css").headers["Content-Type"] == "text/css; charset=utf-8")
        #expect(try h.call("GET", "/console/nothing.js").status == 404)
        #expect(try h.call("GET", "/console/..%2Forchard.js").status == 404)
        // No script touches browser storage or cookies, writes HTML from data, logs, or makes an amount a float.
        for name in ["console.js", "payments.js", "webhooks.js"] {
            let text = try h.call("GET", "/console/\(name)").text
            for banned in [
                "localStorage", "sessionStorage", "document.cookie", "innerHTML", "parseFloat", "Number(",
                "console.log",
            ] {
                #expect(!text.contains(banned), "\(name) uses \(banned)")
            }
        }
    }

    @Test("sign out everywhere: DELETE /console/sessions ends every session of the merchant, this one included")
    func signOutEverywhere() throws {
        let h = try APIHarness()
        let (cookie, csrf, _) = try h.signInToConsole()
        let (other, _, _) = try h.signInToConsole()
        // It changes state: the CSRF token is needed.
        let forged = try h.call("DELETE", "/console/sessions", headers: ["Cookie": cookie])
        #expect(forged.status == 403 && forged.errorCode == "csrf_token_invalid")
        let ended = try h.call("DELETE", "/console/sessions", headers: ["Cookie": cookie, "X-CSRF-Token": csrf])
        #expect(ended.status == 200, "\(ended.text)")
        #expect(ended.json["ended_sessions"] as? Int == 2)
        #expect(ended.headers["Set-Cookie"]?.contains("Max-Age=0") == true)
        for session in [cookie, other] {
            let refused = try h.call("GET", "/console/session", headers: ["Cookie": session])
            #expect(refused.status == 401 && refused.errorCode == "invalid_credentials")
            #expect(try h.call("GET", "/v1/payments", headers: ["Cookie": session]).status == 401)
        }
        let entries = try h.merchantServer("GET", "/v1/audit-log?limit=100").json["data"] as? [[String: Any]] ?? []
        let entry = try #require(entries.first { $0["action"] as? String == "console.sessions_end" })
        #expect((entry["detail"] as? [String: Any])?["reason"] as? String == "sign_out_everywhere")
        #expect((entry["detail"] as? [String: Any])?["sessions"] as? String == "2")
        #expect((entry["actor"] as? [String: Any])?["kind"] as? String == "console")
        try OpenAPIChecker.load().check(("DELETE", "/console/sessions", ended))
    }
}
