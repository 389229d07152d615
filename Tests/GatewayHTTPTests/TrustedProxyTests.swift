import Foundation
import GatewayHTTP
import GatewayTestSupport
import OrchardHTTP
import Testing

/// `--trusted-proxy`: behind a reverse proxy the client is the address the proxy forwarded, and only then.
@Suite("HTTP: the client behind a trusted proxy")
struct TrustedProxyTests {
    static func proxies(_ list: String...) throws -> TrustedProxies {
        try #require(TrustedProxies(parsing: list))
    }

    @Test("addresses and CIDRs parse, IPv4 and IPv6; anything else is refused")
    func parsing() throws {
        let proxies = try Self.proxies("10.0.0.0/8", "192.0.2.1", "fd00::/8", "::1")
        #expect(proxies.trusts("10.200.3.4") && proxies.trusts("192.0.2.1") && proxies.trusts("::1"))
        #expect(proxies.trusts("fdab::7") && proxies.trusts("::ffff:10.0.0.9"))
        #expect(!proxies.trusts("11.0.0.1") && !proxies.trusts("192.0.2.2") && !proxies.trusts("fe80::1"))
        #expect(!proxies.trusts("not an address") && !proxies.trusts(""))
        #expect(proxies.description == "10.0.0.0/8,192.0.2.1/32,fd00::/8,::1/128")
        #expect(try Self.proxies("10.1.2.3/16").description == "10.1.0.0/16")
        #expect(try Self.proxies("0.0.0.0/0").trusts("203.0.113.5"))
        for bad in ["10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/x", "proxy.example", "10.0.0", "1.2.3.4/-1"] {
            #expect(TrustedProxies(parsing: [bad]) == nil, "\(bad)")
        }
    }

    @Test("X-Forwarded-For: the right-most address past the trusted ones; what a client writes on the left is ignored")
    func forwardedFor() throws {
        let proxies = try Self.proxies("10.0.0.0/8", "127.0.0.1")
        func client(_ peer: String?, _ headers: HTTPHeaders) -> String? { proxies.client(peer: peer, headers: headers).address }
        #expect(client("127.0.0.1", ["X-Forwarded-For": "203.0.113.7"]) == "203.0.113.7")
        #expect(client("127.0.0.1", ["X-Forwarded-For": "203.0.113.7, 10.0.0.2"]) == "203.0.113.7")
        // A client sending its own X-Forwarded-For: the proxy appends the real address on the right.
        #expect(client("127.0.0.1", ["X-Forwarded-For": "198.51.100.1, 203.0.113.7"]) == "203.0.113.7")
        // Several header lines are one list, in order.
        #expect(client("127.0.0.1", HTTPHeaders([("X-Forwarded-For", "198.51.100.1"), ("X-Forwarded-For", "203.0.113.8")])) == "203.0.113.8")
        // Every hop trusted: the left-most.
        #expect(client("127.0.0.1", ["X-Forwarded-For": "10.0.0.5, 10.0.0.6"]) == "10.0.0.5")
        // Not an address: the walk stops at the hop that reported it.
        #expect(client("127.0.0.1", ["X-Forwarded-For": "203.0.113.7, unknown, 10.0.0.3"]) == "10.0.0.3")
        // Ports and brackets go; the address is written canonically.
        #expect(client("127.0.0.1", ["X-Forwarded-For": "[2001:DB8::0:1]:4711"]) == "2001:db8::1")
        #expect(client("127.0.0.1", ["X-Forwarded-For": "203.0.113.9:50000"]) == "203.0.113.9")
        // From a peer that is not trusted, or with no trusted proxies, the headers are ignored.
        #expect(client("198.51.100.20", ["X-Forwarded-For": "203.0.113.7"]) == "198.51.100.20")
        #expect(TrustedProxies().client(peer: "127.0.0.1", headers: ["X-Forwarded-For": "203.0.113.7"]).address == "127.0.0.1")
        #expect(client(nil, ["X-Forwarded-For": "203.0.113.7"]) == nil)
        #expect(client("127.0.0.1", [:]) == "127.0.0.1")
    }

    @Test("Forwarded (RFC 7239) comes before X-Forwarded-For, with quoted and IPv6 values and its proto")
    func forwarded() throws {
        let proxies = try Self.proxies("127.0.0.1")
        let headers: HTTPHeaders = [
            "Forwarded": "for=198.51.100.1;proto=http, for=\"[2001:db8:cafe::17]:4711\";proto=https;by=127.0.0.1",
            "X-Forwarded-For": "192.0.2.99", "X-Forwarded-Proto": "http",
        ]
        let seen = proxies.client(peer: "127.0.0.1", headers: headers)
        #expect(seen.address == "2001:db8:cafe::17" && seen.forwardedHTTPS)
        #expect(proxies.client(peer: "127.0.0.1", headers: ["Forwarded": "For=192.0.2.43"]).address == "192.0.2.43")
        #expect(proxies.client(peer: "127.0.0.1", headers: ["Forwarded": "for=_hidden"]).address == "127.0.0.1")
    }

    @Test("X-Forwarded-Proto: https only from a trusted peer, the nearest proxy's value")
    func forwardedProto() throws {
        let proxies = try Self.proxies("127.0.0.1")
        #expect(proxies.client(peer: "127.0.0.1", headers: ["X-Forwarded-Proto": "https"]).forwardedHTTPS)
        #expect(proxies.client(peer: "127.0.0.1", headers: ["X-Forwarded-Proto": "HTTPS"]).forwardedHTTPS)
        #expect(!proxies.client(peer: "127.0.0.1", headers: ["X-Forwarded-Proto": "https, http"]).forwardedHTTPS)
        #expect(!proxies.client(peer: "127.0.0.1", headers: ["X-Forwarded-Proto": "http"]).forwardedHTTPS)
        #expect(!proxies.client(peer: "192.0.2.1", headers: ["X-Forwarded-Proto": "https"]).forwardedHTTPS)
    }

    @Test("on a real server behind a trusted proxy: the access log, client_ip, the sign-in limit and the Secure cookie see the client")
    func behindTrustedProxy() throws {
        let h = try APIHarness(transport: .loopback) {
            $0.trustedProxies = TrustedProxies(parsing: ["127.0.0.1"])!
        }
        let first = ["X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https"]
        let validated = try h.client(
            "POST", "/v1/payment-requests/validate", json: ["payment_request": Self.request, "format": "tappay-web"],
            headers: first)
        #expect(validated.status == 200, "\(validated.text)")
        #expect(validated.json["client_ip"] as? String == "203.0.113.7")
        #expect(h.logs.lines.contains { $0.contains("\"remote\":\"203.0.113.7\"") })

        // The browser spoke HTTPS to the proxy: the console cookie is Secure, though the gateway speaks HTTP.
        let signedIn = try h.call(
            "POST", "/console/session", headers: first, json: ["secret_key": h.credentials.secretKey])
        #expect(signedIn.status == 201 || signedIn.status == 200, "\(signedIn.text)")
        #expect(signedIn.headers["Set-Cookie"]?.contains("; Secure") == true)
        let plain = try h.call(
            "POST", "/console/session", headers: ["X-Forwarded-For": "203.0.113.7"],
            json: ["secret_key": h.credentials.secretKey])
        #expect(plain.headers["Set-Cookie"]?.contains("Secure") == false)

        // Failed sign-ins count per forwarded client: one client throttled, another behind the same proxy not.
        let limit = ConsoleSignInLimit()
        let wrong = ["secret_key": "sk_test_" + String(repeating: "w", count: 40)]
        for _ in 0..<limit.burst {
            #expect(try h.call("POST", "/console/session", headers: first, json: wrong).status == 401)
        }
        #expect(try h.call("POST", "/console/session", headers: first, json: wrong).status == 429)
        #expect(
            try h.call("POST", "/console/session", headers: ["X-Forwarded-For": "198.51.100.3"], json: wrong).status
                == 401)
    }

    @Test("without --trusted-proxy the forwarding headers change nothing")
    func notTrusted() throws {
        let h = try APIHarness(transport: .loopback)
        let spoofed = ["X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https", "Forwarded": "for=203.0.113.8"]
        let validated = try h.client(
            "POST", "/v1/payment-requests/validate", json: ["payment_request": Self.request, "format": "tappay-web"],
            headers: spoofed)
        #expect(validated.json["client_ip"] as? String == "127.0.0.1")
        #expect(!h.logs.lines.contains { $0.contains("203.0.113.") })
        let signedIn = try h.call(
            "POST", "/console/session", headers: spoofed, json: ["secret_key": h.credentials.secretKey])
        #expect(signedIn.headers["Set-Cookie"]?.contains("Secure") == false)
        // A client cannot escape the sign-in limit by naming other addresses.
        let wrong = ["secret_key": "sk_test_" + String(repeating: "w", count: 40)]
        for index in 0..<ConsoleSignInLimit().burst {
            let headers = ["X-Forwarded-For": "198.51.100.\(index)"]
            #expect(try h.call("POST", "/console/session", headers: headers, json: wrong).status == 401)
        }
        #expect(
            try h.call("POST", "/console/session", headers: ["X-Forwarded-For": "192.0.2.200"], json: wrong).status
                == 429)
    }

    /// A TapPay-web payment request the validation route accepts.
    static var request: [String: Any] { [
        "supportedNetworks": ["VISA"], "supportedMethods": ["apple_pay"],
        "displayItems": [["label": "Tea", "amount": ["currency": "TWD", "value": "100.00"]]],
        "total": ["label": "Orchard", "amount": ["currency": "TWD", "value": "100.00"]],
    ] }
}
