import ApplePayModel
import ApplePaySandbox
import Foundation
import Gateway
import GatewayHTTP
import GatewayTestSupport
import OrchardCrypto
import OrchardHTTP
import OrchardTestSupport
import Testing

@Suite("Browser routes: orchard.js, the payment request validator, the demo store", .serialized)
struct WebRoutesTests {
    @Test("orchard.js is plain JavaScript with an ETag, cacheable, 304 on If-None-Match, and logs nothing")
    func script() throws {
        let h = try APIHarness()
        let first = try h.call("GET", "/sdk/v1/orchard.js")
        #expect(first.status == 200)
        #expect(first.headers["Content-Type"] == "text/javascript; charset=utf-8")
        #expect(first.headers["Cache-Control"] == "public, max-age=300")
        let etag = try #require(first.headers["ETag"])
        #expect(etag.count == 34 && etag.hasPrefix("\"") && etag.hasSuffix("\""))
        let source = first.text
        let wallet = try h.call("GET", "/sdk/v1/orchard-sandbox-wallet.js")
        let walletPath = "/sdk/v1/orchard-sandbox-wallet.\(Self.digest(wallet.body)).js"
        #expect(
            source
                == (try Self.onDisk("orchard.js")).replacingOccurrences(
                    of: "{{ORCHARD_SANDBOX_WALLET_SRC}}", with: walletPath
                ).replacingOccurrences(of: "{{ORCHARD_SANDBOX_WALLET_INTEGRITY}}", with: Self.integrity(wallet.body)))
        #expect(source.contains("window.Orchard = {"))
        #expect(!source.contains("console."), "the SDK logs nothing (no token, PAN or cryptogram can leak)")
        let again = try h.call("GET", "/sdk/v1/orchard.js", headers: ["If-None-Match": etag])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        #expect(again.headers["ETag"] == etag)
        let changed = try h.call("GET", "/sdk/v1/orchard.js", headers: ["If-None-Match": "\"other\""])
        #expect(changed.status == 200)
    }

    static func onDisk(_ name: String) throws -> String {
        try String(
            contentsOf: TestPaths.packageRoot.appendingPathComponent("Sources/GatewayHTTP/Web/" + name), encoding: .utf8
        )
    }

    /// The 32 hex digits of SHA-256 that name a versioned file.
    static func digest(_ body: Data) -> String { Hex.encode(Array(SHA256.hash(Array(body)).prefix(16))) }

    /// A Subresource Integrity value of `body`.
    static func integrity(_ body: Data) -> String { "sha384-" + Data(SHA384.hash(Array(body))).base64EncodedString() }

    @Test(
        "the SDK's files by versioned name: immutable, their integrity published, any origin may load them; the sandbox wallet is its own file, named in orchard.js by versioned path and integrity"
    )
    func versionedFiles() throws {
        let h = try APIHarness()
        let manifest = try h.call("GET", "/sdk/v1/integrity.json")
        #expect(manifest.status == 200 && manifest.headers["Access-Control-Allow-Origin"] == "*")
        let files = try #require(manifest.json["files"] as? [[String: Any]])
        #expect(files.compactMap { $0["name"] as? String } == ["orchard.js", "orchard-sandbox-wallet.js"])
        var bodies: [String: String] = [:]
        for file in files {
            let name = try #require(file["name"] as? String)
            let plain = try h.call("GET", "/sdk/v1/" + name)
            #expect(plain.status == 200 && plain.headers["Cache-Control"] == "public, max-age=300")
            #expect(plain.headers["Access-Control-Allow-Origin"] == "*")
            #expect(file["path"] as? String == "/sdk/v1/" + name)
            let stem = name.dropLast(3)
            #expect(file["versioned_path"] as? String == "/sdk/v1/\(stem).\(Self.digest(plain.body)).js")
            #expect(file["integrity"] as? String == Self.integrity(plain.body))
            let versioned = try h.call("GET", try #require(file["versioned_path"] as? String))
            #expect(versioned.status == 200 && versioned.body == plain.body)
            #expect(versioned.headers["Cache-Control"] == "public, max-age=31536000, immutable")
            #expect(versioned.headers["Access-Control-Allow-Origin"] == "*")
            #expect(versioned.headers["Content-Type"] == "text/javascript; charset=utf-8")
            #expect(versioned.headers["ETag"] == plain.headers["ETag"])
            #expect(!plain.text.contains("{{"), "\(name) has a placeholder left")
            // No inline style: no style attribute given (`style: 'margin:…'`), set, or written through CSSOM.
            for inline in [#"style: '[a-z-]+:"#, #"\.style(\.|\s*=)"#, #"setAttribute\('style'"#, "cssText"] {
                #expect(plain.text.range(of: inline, options: .regularExpression) == nil, "\(name): \(inline)")
            }
            bodies[name] = plain.text
        }
        let core = try #require(bodies["orchard.js"])
        let wallet = try #require(bodies["orchard-sandbox-wallet.js"])
        #expect(wallet == (try Self.onDisk("orchard-sandbox-wallet.js")))
        #expect(wallet.contains("data-orchard-sheet") && !core.contains("data-orchard-sheet"))
        #expect(core.contains(try #require(files.last?["versioned_path"] as? String)))
        #expect(core.contains(try #require(files.last?["integrity"] as? String)))
        // Another digest, another file or a name outside the SDK is no file of it.
        for missing in ["orchard.0123456789abcdef0123456789abcdef.js", "demo.js", "console.js", "integrity", "orchard"]
        {
            #expect(try h.call("GET", "/sdk/v1/" + missing).status == 404, "\(missing)")
        }
    }

    @Test("a page of the gateway's own origin may call client routes without being listed; others may not")
    func sameOrigin() throws {
        let h = try APIHarness(transport: .loopback)
        let body: [String: Any] = ["amount": "1.00", "currency": "TWD"]
        let own = try h.client(
            "POST", "/v1/sandbox/wallet/tokens", json: body, headers: ["Origin": "http://127.0.0.1:\(h.server.port)"])
        #expect(own.status == 200)
        let other = try h.client(
            "POST", "/v1/sandbox/wallet/tokens", json: body, headers: ["Origin": "http://127.0.0.1:1"])
        #expect(other.status == 403)
        #expect(other.error["code"] as? String == "origin_not_allowed")
    }

    @Test("the demo store's page carries the sandbox keys; its pay route pays by prime and lists the events")
    func demoStore() throws {
        let h = try APIHarness()
        let page = try h.call("GET", "/demo")
        #expect(page.status == 200)
        #expect(page.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(page.text.contains("data-app-id=\"\(h.credentials.appID)\""))
        #expect(page.text.contains("merchant.invalid.orchard.sandbox"))
        #expect(!page.text.contains("{{"))
        #expect(!page.text.contains(h.credentials.secretKey))
        let prime = try h.prime("950.00")
        let paid = try h.call(
            "POST", "/demo/api/pay", json: ["prime": prime, "amount": "950.00", "currency": "TWD"])
        #expect(paid.status == 200, "\(paid.text)")
        let payment = try #require(paid.json["payment"] as? [String: Any])
        #expect(payment["status"] as? String == "captured")
        #expect(payment["amount"] as? String == "950.00")
        let events = try #require(paid.json["events"] as? [[String: Any]])
        #expect(events.map { $0["type"] as? String }.contains("payment.succeeded"))
        #expect(events.allSatisfy { ($0["data"] as? [String: Any])?["id"] as? String == payment["id"] as? String })
        let again = try h.call(
            "POST", "/demo/api/pay", json: ["prime": prime, "amount": "950.00", "currency": "TWD"])
        #expect(again.status == 409)
        #expect(again.error["code"] as? String == "prime_already_used")
        let cards = try h.client("GET", "/v1/sandbox/wallet/cards")
        #expect(
            (cards.json["data"] as? [[String: Any]])?.compactMap { $0["card"] as? String }
                == SandboxTestCard.all.map(\.id))
        #expect(!cards.text.contains(SandboxTestCard.visaCredit.pan))
        try h.expectDocumented(paths: ["/demo/api/pay", "/v1/sandbox/wallet/cards"])
    }
}
