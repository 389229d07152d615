import ApplePayModel
import ApplePaySandbox
import Foundation
import Gateway
import GatewayHTTP
import OrchardCLI
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

    /// TapPay's deferred-payment rows that refuse, with their codes.
    static let refusedRows: [(String, String)] = [
        (
            #"{"label":"T","amount":{"currency":"TWD","value":"10.00"},"isAmountPending":false,"isShowTotalAmount":false}"#,
            "88013"
        ),
        (
            #"{"label":"T","amount":{"currency":"TWD","value":"0.00"},"isAmountPending":true,"isShowTotalAmount":true}"#,
            "88014"
        ),
        (
            #"{"label":"T","amount":{"currency":"TWD","value":"0.00"},"isAmountPending":false,"isShowTotalAmount":true}"#,
            "88015"
        ),
    ]

    @Test("the validate route reports exactly what `orchard request validate --format tappay-web` prints")
    func validateMatchesCLI() throws {
        let h = try APIHarness()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-validate-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let requests = [
            // All pending items, each refusing row.
            (#"[{"label":"Fare","isAmountPending":true}]"#, Self.refusedRows[0].0),
            (#"[{"label":"Fare","amount":{"currency":"TWD"},"isAmountPending":true}]"#, Self.refusedRows[1].0),
            (#"[{"label":"Fare","isAmountPending":true}]"#, Self.refusedRows[2].0),
            // A valid deferred cart: a shown flag fall, a pending fare, a hidden total without a value.
            (
                #"[{"label":"Flag","amount":{"currency":"TWD","value":"85.00"}},{"label":"Fare","isAmountPending":true}]"#,
                #"{"label":"T","isAmountPending":true,"isShowTotalAmount":false}"#
            ),
            // A shown total of 0.
            (
                #"[{"label":"Flag","amount":{"currency":"TWD","value":"85.00"}}]"#,
                #"{"label":"T","amount":{"currency":"TWD","value":"0.00"}}"#
            ),
        ]
        var codes: [[String]] = []
        for (index, (items, total)) in requests.enumerated() {
            let json =
                #"{"supportedNetworks":["VISA"],"supportedMethods":["apple_pay"],"displayItems":\#(items),"total":\#(total)}"#
            let file = directory.appendingPathComponent("\(index).json")
            try Data(json.utf8).write(to: file)
            let captured = CapturedOutput()
            _ = CLI.run(
                [
                    "request", "validate", "--format", "tappay-web", "--merchant-identifier",
                    "merchant.invalid.orchard.sandbox", "--country-code", "TW", file.path,
                ], output: captured.output)
            let printed = try #require(
                try JSONSerialization.jsonObject(with: Data(captured.stdout.utf8)) as? [String: Any])
            let answer = try h.client(
                "POST", "/v1/payment-requests/validate",
                json: [
                    "payment_request": try JSONSerialization.jsonObject(with: Data(json.utf8)), "format": "tappay-web",
                ])
            #expect(answer.status == 200, "\(answer.text)")
            for key in ["valid", "errors", "total", "primeLifetimeSeconds"] {
                #expect(
                    try WireFormat.json(answer.json[key] ?? NSNull()) == WireFormat.json(printed[key] ?? NSNull()),
                    "\(index) \(key): \(answer.json[key] ?? "nil") vs \(printed[key] ?? "nil")")
            }
            codes.append(((answer.json["errors"] as? [[String: Any]]) ?? []).compactMap { $0["code"] as? String })
            if answer.json["valid"] as? Bool == true {
                #expect(answer.json["primeLifetimeSeconds"] as? Int == 2_592_000)
                let apple = try #require(answer.json["apple_pay_request"] as? [String: Any])
                #expect(apple["merchantCapabilities"] as? [String] == ["supports3DS"])
                #expect((apple["total"] as? [String: Any])?["type"] as? String == "pending")
                #expect(answer.json["w3c_request"] is [String: Any])
                #expect(answer.json["currency_exponent"] as? Int == 2)
                #expect(answer.json["client_ip"] as? String == "127.0.0.1")
            }
        }
        #expect(codes == [["88013"], ["88014"], ["88015"], [], ["88016"]])

        let badFormat = try h.client(
            "POST", "/v1/payment-requests/validate", json: ["payment_request": [:] as [String: Any], "format": "x"])
        #expect(badFormat.status == 400)
        let notRequest = try h.client(
            "POST", "/v1/payment-requests/validate", json: ["payment_request": ["hello": 1]])
        #expect(notRequest.status == 422)
        #expect(notRequest.error["code"] as? String == "payment_request_invalid")
        let missing = try h.client("POST", "/v1/payment-requests/validate", json: ["format": "tappay-web"])
        #expect(missing.status == 400)
        try Self.expectDocumented(h, paths: ["/v1/payment-requests/validate"])
    }

    /// Every answer `h` got on `paths` has its status and schema in openapi.yaml.
    static func expectDocumented(_ h: APIHarness, paths: Set<String>) throws {
        let checker = try OpenAPIChecker.load()
        let exchanges = h.exchanges.withLock { $0 }.filter { paths.contains($0.path) }
        #expect(!exchanges.isEmpty)
        for exchange in exchanges {
            let label = "\(exchange.method) \(exchange.path) → \(exchange.response.status)"
            let schema = try #require(
                checker.responseSchema(method: exchange.method, path: exchange.path, status: exchange.response.status),
                "\(label) is not documented")
            let body = try JSONSerialization.jsonObject(with: exchange.response.body)
            #expect(checker.problems(body, schema).isEmpty, "\(label): \(checker.problems(body, schema))")
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
        try Self.expectDocumented(h, paths: ["/demo/api/pay", "/v1/sandbox/wallet/cards"])
    }
}
