import ApplePaySandbox
import Foundation
import GatewayTestSupport
import Testing

@Suite("Log lines keep secrets out")
struct LogSecrecyTests {
    @Test("no access-log line carries the PAN, the cryptogram, a prime or a credential, in success or failure")
    func noSecretsInLogs() throws {
        let h = try APIHarness()
        let pan = "4000056655665556"
        let token = try h.token("100.00", pan: pan)
        let tokenized = try h.client("POST", "/v1/tokens", json: ["token": token])
        #expect(tokenized.status == 200)
        let prime = try #require(tokenized.json["prime"] as? String)
        #expect(
            try h.merchantServer(
                "POST", "/v1/payments", json: ["prime": prime, "amount": "100.00", "currency": "TWD"]
            ).status == 200)
        // Failures: the same token again, a reused prime, a declined amount, wrong credentials.
        #expect(try h.client("POST", "/v1/tokens", json: ["token": token]).status == 409)
        #expect(
            try h.merchantServer(
                "POST", "/v1/payments", json: ["prime": prime, "amount": "100.00", "currency": "TWD"]
            ).status != 200)
        #expect(try h.pay("10.05").status == 402)
        #expect(
            try h.call("POST", "/v1/payments", headers: ["Authorization": "Bearer sk_test_wrong"], json: [:])
                .status == 401)

        let lines = h.logs.lines
        #expect(lines.count >= 6)
        let secrets = [
            pan, MintRequest(merchantCertificatePEM: "", signingTime: Date()).cryptogram, prime,
            h.credentials.appKey, h.credentials.secretKey, "sk_test_wrong",
        ]
        for line in lines {
            for secret in secrets {
                #expect(!line.contains(secret), "a log line carries a secret: \(line)")
            }
        }
    }
}
