import Foundation
import GatewayHTTP
import GatewayTestSupport
import OrchardHTTP
import Testing

/// Wrong keys on the API are limited per client address, as console sign-ins are.
@Suite("API: failed authentications are throttled per client address")
struct AuthenticationThrottleTests {
    static let limit = APIAuthenticationLimit()

    /// The lines the API logged when an address started being refused.
    static func throttleLines(_ h: APIHarness) -> [String] {
        h.logs.lines.filter { $0.contains("\"event\":\"authentication_throttled\"") }
    }

    @Test("wrong secret keys: 401 up to the burst, then 429 with Retry-After for every key, one log line per throttle")
    func wrongSecretKeys() throws {
        let h = try APIHarness(transport: .loopback)
        let wrong = ["Authorization": "Bearer sk_test_" + String(repeating: "x", count: 40)]
        for attempt in 1...Self.limit.burst {
            let response = try h.call("GET", "/v1/payments", headers: wrong)
            #expect(response.status == 401 && response.errorCode == "invalid_credentials", "attempt \(attempt)")
        }
        let refused = try h.call("GET", "/v1/payments", headers: wrong)
        #expect(refused.status == 429 && refused.errorCode == "rate_limited")
        let retryAfter = try #require(refused.headers["Retry-After"].flatMap { Int($0) })
        #expect(retryAfter >= 1 && retryAfter <= 3)
        // The right key is refused too while the address is throttled: a guess that happened to be right
        // would tell nothing.
        #expect(try h.merchantServer("GET", "/v1/payments").status == 429)
        #expect(try h.client("GET", "/v1/sandbox/wallet/cards").status == 429)
        let lines = Self.throttleLines(h)
        #expect(lines.count == 1, "\(lines)")
        #expect(lines.first?.contains("\"remote\":\"127.0.0.1\"") == true)
        #expect(lines.first?.contains("\"scope\":\"api\"") == true)
        #expect(!h.logs.lines.contains { $0.contains("sk_test_") || $0.contains(h.credentials.secretKey) })

        // Once the bucket refills by one, the right key works; a wrong one spends it and starts a new throttle.
        h.clock.advance(by: TimeInterval(retryAfter))
        #expect(try h.merchantServer("GET", "/v1/payments").status == 200)
        #expect(try h.call("GET", "/v1/payments", headers: wrong).status == 401)
        #expect(try h.call("GET", "/v1/payments", headers: wrong).status == 429)
        #expect(Self.throttleLines(h).count == 2)
        // Requests without credentials are not counted and answered as before.
        #expect(try h.call("GET", "/v1/payments").status == 401)
    }

    @Test("wrong app keys on client routes count the same way")
    func wrongAppKeys() throws {
        let h = try APIHarness(transport: .loopback)
        let wrong = ["X-Orchard-App-Id": h.credentials.appID, "X-Orchard-App-Key": "ak_wrong"]
        for _ in 1...Self.limit.burst {
            #expect(try h.call("GET", "/v1/sandbox/wallet/cards", headers: wrong).status == 401)
        }
        let refused = try h.call("GET", "/v1/sandbox/wallet/cards", headers: wrong)
        #expect(refused.status == 429 && refused.headers["Retry-After"] != nil)
        #expect(try h.merchantServer("GET", "/v1/payments").status == 429)
    }

    @Test("valid keys are never counted: many requests with the right key stay 200")
    func validKeysAreNotCounted() throws {
        let h = try APIHarness(transport: .loopback) { $0.rateLimitPerSecond = 0 }
        for _ in 0..<(Self.limit.burst * 2) { #expect(try h.merchantServer("GET", "/v1/payments").status == 200) }
        #expect(Self.throttleLines(h).isEmpty)
    }
}
