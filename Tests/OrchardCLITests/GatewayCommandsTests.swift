import ApplePayModel
import Foundation
import Gateway
import GatewayAssembly
import GatewayHTTP
import GatewayTestSupport
import OrchardBase
import OrchardCLI
import OrchardHTTP
import Testing

@Suite("orchard serve, merchant show, sandbox mint", .serialized)
struct GatewayCommandsTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-cli-\(UUID().uuidString)")
    var database: String { "sqlite:" + directory.appendingPathComponent("orchard.db").path }

    @Test("serve --help lists every setting")
    func help() {
        let captured = CapturedOutput()
        #expect(CLI.run(["serve", "--help"], output: captured.output) == 0)
        for name in [
            "--host", "--port", "--database", "--master-key", "--environment", "--apple-root", "--signing-time-max-age",
            "--max-body-bytes", "--webhook-retry-schedule", "--log-level", "ORCHARD_DATABASE", "sqlite:./orchard.db",
        ] {
            #expect(captured.stdout.contains(name), "missing \(name)")
        }
    }

    @Test("production refuses to start without a master key")
    func productionNeedsMasterKey() {
        let captured = CapturedOutput()
        let status = CLI.run(
            ["serve", "--environment", "production", "--database", database, "--port", "0"], output: captured.output)
        #expect(status == 2)
        #expect(captured.stderr.contains("master key"))
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    @Test("serve provisions the sandbox merchant once; merchant show and sandbox mint use the same database")
    func serveShowMint() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = CapturedOutput()
        let settings = try ServeCommand.registry().resolve(
            arguments: ["--database", database, "--port", "0", "--reconcile-interval", "0"], environment: [:])
        let running = try ServeCommand.start(settings: settings, io: first.output)
        #expect(first.stdout.contains("app_id"))
        #expect(first.stdout.contains("orchard merchant show --database \(database)"))
        let base = running.server.baseURL
        #expect(try CurlClient().request("GET", base + "/healthz").status == 200)
        #expect(try CurlClient().request("GET", base + "/readyz").status == 200)

        let shown = CapturedOutput()
        #expect(CLI.run(["merchant", "show", "--database", database, "--json"], output: shown.output) == 0)
        let merchant = try #require(
            try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
        for field in ["merchant_id", "app_id", "app_key", "secret_key", "merchant_identifier"] {
            #expect((merchant[field] as? String)?.isEmpty == false, "\(field)")
        }
        #expect((merchant["processing_certificate_pem"] as? String)?.contains("BEGIN CERTIFICATE") == true)
        let appID = try #require(merchant["app_id"] as? String)
        #expect(first.stdout.contains(appID))
        // Standard output here is not a terminal (as make run's log file is not): the keys are masked there.
        for field in ["app_key", "secret_key"] {
            let key = try #require(merchant[field] as? String)
            #expect(!first.stdout.contains(key), "\(field) in full on a non-terminal")
            #expect(first.stdout.contains("…" + key.suffix(4)), "\(field) masked to its last four")
        }

        let minted = CapturedOutput()
        #expect(
            CLI.run(
                ["sandbox", "mint", "--database", database, "--amount", "12.34", "--currency", "TWD"],
                output: minted.output) == 0, "\(minted.stderr)")
        let token = try JSONSerialization.jsonObject(with: Data(minted.stdout.utf8))
        let body = try JSONSerialization.data(withJSONObject: ["token": token])
        let tokenized = try CurlClient().request(
            "POST", base + "/v1/tokens",
            headers: [
                "Content-Type": "application/json", "X-Orchard-App-Id": appID,
                "X-Orchard-App-Key": try #require(merchant["app_key"] as? String),
            ], body: body)
        #expect(tokenized.status == 200, "\(tokenized.text)")
        #expect(tokenized.json["total_amount"] as? String == "12.34")
        running.stop()
        #expect(throws: (any Error).self) { try CurlClient().request("GET", base + "/healthz") }

        let second = CapturedOutput()
        let again = try ServeCommand.start(settings: settings, io: second.output)
        #expect(!second.stdout.contains("app_key"))
        again.stop()
        #expect(
            CLI.run(["sandbox", "mint", "--database", database, "--amount", "1.001"], output: CapturedOutput().output)
                != 0)

        // Without its master key file, the existing database is not given a new key (which could not open its
        // secrets): merchant show refuses and creates nothing; with the key passed, it answers.
        let keyFile = directory.appendingPathComponent("orchard.db.master-key")
        let keyHex = try String(contentsOf: keyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        try FileManager.default.removeItem(at: keyFile)
        let refused = CapturedOutput()
        #expect(CLI.run(["merchant", "show", "--database", database], output: refused.output) == 1)
        #expect(refused.stderr.contains("master_key_missing"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: keyFile.path))
        let withKey = CapturedOutput()
        #expect(
            CLI.run(
                ["merchant", "show", "--database", database, "--master-key", keyHex, "--json"], output: withKey.output)
                == 0, "\(withKey.stderr)")
        #expect(withKey.stdout.contains(appID))
    }

    @Test("serve runs the webhook dispatcher: a payment's event reaches a local receiver, signed")
    func webhookDelivery() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let received = Locked<[(body: Data, signature: String)]>([])
        var router = Router()
        router.post("/hooks") { request, _ in
            received.withLock { $0.append((request.body, request.headers["Orchard-Signature"] ?? "")) }
            return .text("ok")
        }
        let receiver = try TestServer(responder: HTTPApplication(router: router))
        defer { receiver.server.stop(timeoutSeconds: 1) }

        let settings = try ServeCommand.registry().resolve(
            arguments: ["--database", database, "--port", "0", "--log-level", "off"], environment: [:])
        let running = try ServeCommand.start(settings: settings, io: CapturedOutput().output)
        defer { running.stop() }
        let runtime = running.runtime
        let merchant = try #require(runtime.sandboxMerchant)
        let credentials = try runtime.gateway.merchants.credentials(merchantID: merchant.id)
        let base = running.server.baseURL
        let serverHeaders = ["Authorization": "Bearer \(credentials.secretKey)", "Content-Type": "application/json"]
        let endpoint = try CurlClient().request(
            "PUT", base + "/v1/webhook-endpoint", headers: serverHeaders,
            body: try JSONSerialization.data(withJSONObject: ["url": "http://127.0.0.1:\(receiver.port)/hooks"]))
        let secret = try #require(endpoint.json["secret"] as? String)
        let token = try JSONSerialization.jsonObject(
            with: try runtime.mintSandboxToken(amount: 4200, currency: .twd))
        let tokenized = try CurlClient().request(
            "POST", base + "/v1/tokens",
            headers: [
                "Content-Type": "application/json", "X-Orchard-App-Id": credentials.appID,
                "X-Orchard-App-Key": credentials.appKey,
            ], body: try JSONSerialization.data(withJSONObject: ["token": token]))
        let prime = try #require(tokenized.json["prime"] as? String)
        let paid = try CurlClient().request(
            "POST", base + "/v1/payments", headers: serverHeaders,
            body: try JSONSerialization.data(withJSONObject: ["prime": prime, "amount": "42.00", "currency": "TWD"]))
        #expect(paid.status == 200)
        var waited = 0.0
        while received.withLock({ $0.count }) < 2 && waited < 30 {
            Thread.sleep(forTimeInterval: 0.1)
            waited += 0.1
        }
        let deliveries = received.withLock { $0 }
        #expect(deliveries.count >= 2)
        for delivery in deliveries {
            #expect(throws: Never.self) {
                try WebhookSignature.verify(header: delivery.signature, body: delivery.body, secret: secret)
            }
        }
        let types = deliveries.compactMap {
            ((try? JSONSerialization.jsonObject(with: $0.body)) as? [String: Any])?["type"] as? String
        }
        #expect(types.contains("payment.succeeded"))
        let events = try CurlClient().request("GET", base + "/v1/events", headers: serverHeaders)
        let states = (events.json["data"] as? [[String: Any]] ?? []).compactMap {
            ($0["delivery"] as? [String: Any])?["state"] as? String
        }
        #expect(states.contains("delivered"))
    }

    @Test(
        "serve's auth-failure settings: --auth-failure-burst sets the wrong keys allowed, a refill of 0 seconds none",
        arguments: [(["--auth-failure-burst", "2"], 2), (["--auth-failure-refill-seconds", "0"], nil)] as [([String], Int?)])
    func authenticationFailureSettings(_ flags: [String], burst: Int?) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let settings = try ServeCommand.registry().resolve(
            arguments: ["--database", database, "--port", "0", "--log-level", "off", "--rate-limit-per-second", "0"]
                + flags, environment: [:])
        let running = try ServeCommand.start(settings: settings, io: CapturedOutput().output)
        defer { running.stop() }
        let wrong = ["Authorization": "Bearer sk_test_" + String(repeating: "x", count: 40)]
        var statuses: [Int] = []
        for _ in 0..<30 {
            statuses.append(try CurlClient().request("GET", running.server.baseURL + "/v1/payments", headers: wrong).status)
        }
        if let burst {
            #expect(statuses == Array(repeating: 401, count: burst) + Array(repeating: 429, count: 30 - burst))
        } else {
            #expect(statuses == Array(repeating: 401, count: 30))
        }
    }
}

@Suite("orchard audit against the sandbox acquirer's books")
struct AuditCommandBooksTests {
    @Test("orchard audit compares the gateway's totals with the acquirer's books: exit 0 when equal, 1 with the difference")
    func booksCompared() throws {
        let h = try APIHarness()
        let paid = try h.pay("100.00")
        let id = try #require(paid.json["id"] as? String)
        #expect(try h.merchantServer("POST", "/v1/payments/\(id)/refunds", json: ["amount": "30.00"]).status == 200)
        let database = "sqlite:" + h.directory.appendingPathComponent("gateway.db").path
        let clean = CapturedOutput()
        #expect(CLI.run(["audit", "--database", database], output: clean.output) == 0, "\(clean.stdout)")
        #expect(clean.stdout.contains("ok   the gateway's captures and refunds match the sandbox acquirer's books"))
        // The acquirer books a refund of 10.00 the gateway never made.
        let reference = try #require(try h.runtime.gateway.payments.payment(merchant: h.merchant, id: id).acquirerReference)
        let acquirer = SandboxAcquirer(ledger: h.runtime.store, clock: h.clock)
        #expect(acquirer.refund(reference: reference, amount: 1_000, currency: "TWD", operationID: "op_x") == .succeeded)
        let differs = CapturedOutput()
        #expect(CLI.run(["audit", "--database", database], output: differs.output) == 1, "\(differs.stdout)")
        #expect(
            differs.stdout.contains("FAIL the gateway's captures and refunds match the sandbox acquirer's books (1)"),
            "\(differs.stdout)")
        #expect(differs.stdout.contains("finding: acquirer_books_differ \(id): "), "\(differs.stdout)")
    }
}
