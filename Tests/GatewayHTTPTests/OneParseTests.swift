import ApplePayModel
import Foundation
import GatewayHTTP
import GatewayTestSupport
import OrchardHTTP
import OrchardJSON
import Testing

@Suite("One parse per request body: typed fields, the token's own bytes, a canonical fingerprint")
struct OneParseTests {
    @Test("a nested document is handed on as the bytes it came as, whitespace and member order kept")
    func nestedBytes() throws {
        let token = #"{ "version" :"EC_v1",  "data":"QUJD", "header": {"b": 2, "a": [1, 2.50]} }"#
        let body = Data(#"{"payment_request": null, "token": \#(token) , "n": 1}"#.utf8)
        let parsed = try JSONLimits().parse(body)
        let member = try #require(parsed.json.members?.first { $0.key == "token" })
        #expect(parsed.bytes(of: member) == Data(token.utf8))
        #expect(parsed.json["token"]?["header"]?["a"] == .array([.number("1"), .number("2.50")]))
    }

    /// A sandbox token minted now, written another way than the minter wrote it: members sorted by name, pretty
    /// printed.
    static func rewrittenToken(_ h: APIHarness, _ amount: String) throws -> String {
        let currency = try Currency(code: "TWD")
        let minted = try h.runtime.mintSandboxToken(
            amount: try Money(amount, currency: currency).minorUnits, currency: currency, at: h.clock.now())
        let rewritten = String(decoding: try JSONValue.parse(minted).sortedText(pretty: true), as: UTF8.self)
        #expect(rewritten != String(decoding: minted, as: UTF8.self))
        return rewritten
    }

    @Test("a token written with other whitespace and member order tokenizes, and a retry of it is a replay")
    func tokenAsSent() throws {
        let h = try APIHarness()
        let rewritten = try Self.rewrittenToken(h, "100.00")
        let headers = h.appHeaders.merging(["Content-Type": "application/json", "Idempotency-Key": "tok-1"]) { $1 }
        let first = try h.call("POST", "/v1/tokens", headers: headers, body: Data(#"{"token": \#(rewritten)}"#.utf8))
        #expect(first.status == 200, "\(first.text)")
        #expect(first.json["prime"] is String)
        let compact = rewritten.replacingOccurrences(of: "\n", with: "").replacingOccurrences(of: "  ", with: "")
        let retry = try h.call("POST", "/v1/tokens", headers: headers, body: Data(#"{ "token" : \#(compact) }"#.utf8))
        #expect(retry.status == 200, "\(retry.text)")
        #expect(retry.headers["Idempotent-Replayed"] == "true")
        #expect(retry.body == first.body)
    }

    @Test("in process and over loopback the application answers alike: status, type, code, body cap")
    func transportsAgree() throws {
        let inProcess = try APIHarness()
        let loopback = try APIHarness(transport: .loopback)
        func answers(_ h: APIHarness) throws -> [String] {
            let json = ["Content-Type": "application/json"]
            let responses = [
                try h.call("GET", "/healthz"),
                try h.merchantServer("GET", "/v1/payments?limit=2"),
                try h.call("GET", "/v1/payments"),
                try h.call("POST", "/v1/tokens", headers: h.appHeaders.merging(json) { $1 }, body: Data("{".utf8)),
                try h.call(
                    "POST", "/v1/tokens", headers: h.appHeaders.merging(json) { $1 },
                    body: Data(repeating: 0x20, count: 70_000)),
                try h.call("DELETE", "/v1/payments", headers: h.serverHeaders),
                try h.call("HEAD", "/healthz"),
            ]
            return responses.map { response in
                "\(response.status) \(response.headers["Content-Type"] ?? "-") \(response.errorCode ?? "-") "
                    + "\(response.body.count) \(response.headers["Request-Id"] == nil ? "no-id" : "id")"
            }
        }
        #expect(try answers(inProcess) == answers(loopback))
    }
}
